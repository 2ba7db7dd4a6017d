/* megatron_vocab.h — the vocabulary Megatron-LM builds: the tokenizer's size
 * and its padding.
 *
 * Shell module (GLib).  Sources: NVIDIA/Megatron-LM d98e8a64,
 * megatron/core/tokenizers/ (build_tokenizer.py, vocab_size_with_padding;
 * null_tokenizer.py; tiktoken_tokenizer.py) and the legacy
 * megatron/training/tokenizer/tokenizer.py (_vocab_size_with_padding):
 *
 *   GPT2BPETokenizer     50257 (GPT-2's vocab.json; pretrain_gpt.py's default)
 *   Llama2Tokenizer      32000 (the Llama 2 SentencePiece model)
 *   HuggingFaceTokenizer len(tokenizer): Llama 3 128256 (128000 BPE + 256
 *                        specials), Llama 2 32000, GPT-2 50257, recognised
 *                        by the --tokenizer-model name
 *   BertWordPieceLowerCase 30522, BertWordPieceCase 28996 (bert-large vocab)
 *   TikTokenizer         --vocab-size, else 131072
 *   NullTokenizer        --vocab-size (HEAD; releases before core_v0.18 add 1)
 * Padding: up to a multiple of make_vocab_size_divisible_by x tp (128 by
 * default), unless --no-pad-vocab-size. */
#ifndef PTSIM_MEGATRON_VOCAB_H
#define PTSIM_MEGATRON_VOCAB_H

#include <glib.h>
#include <stdint.h>

/* The tokenizer's vocabulary.  TYPE (NULL: GPT2BPETokenizer), MODEL (may be
 * NULL) and VOCAB_SIZE (the --vocab-size flag, 0: absent) as the command
 * line gives them; *how says where the number came from ("GPT2BPETokenizer:
 * 50257").  FALSE (PTSIM_CONFIG_ERROR_PARSE) when neither the tokenizer nor
 * --vocab-size tells; the message says what was read.  (transfer full *how) */
gboolean ptsim_megatron_vocab(const char *type, const char *model, int64_t vocab_size,
                              int64_t *vocab, char **how, GError **error);

/* Megatron's padding: VOCAB up to a multiple of DIVISIBLE x TP. */
int64_t ptsim_megatron_vocab_pad(int64_t vocab, int64_t divisible, int64_t tp);

#endif /* PTSIM_MEGATRON_VOCAB_H */
