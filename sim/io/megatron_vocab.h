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
 *   HuggingFaceTokenizer len(tokenizer) (huggingface_tokenizer.py vocab_size),
 *                        recognised by the --tokenizer-model name:
 *                        Llama 3 / 3.x 128256 (128000 BPE + 256 specials);
 *                        Llama 2 32000; Mistral 7B v0.1/v0.2 and Mixtral 8x7B
 *                        32000, Mistral 7B v0.3 and Mixtral 8x22B 32768 (their
 *                        model cards: "extended vocabulary to 32768"),
 *                        Mistral NeMo and Small 3 131072 (Tekken); Qwen1.5 and
 *                        Qwen2 151646 (151643 BPE + 3 specials), Qwen2.5 and
 *                        QwQ 151665 (+ 19 tool and vision specials), Qwen3
 *                        151669 (+ 4 thinking and tool-response specials);
 *                        DeepSeek LLM / MoE 100015 (deepseek-ai/DeepSeek-MoE
 *                        issue 14: 100000 BPE + 15 specials); DeepSeek-V2
 *                        102400 and DeepSeek-V3 / R1 129280, the embedding rows
 *                        of their config.json (no tokenizer length is
 *                        published; Megatron-LM's examples/megatron_fsdp DeepSeek
 *                        -V3 script pads to 129280 with
 *                        --make-vocab-size-divisible-by 3232 either way);
 *                        GPT-OSS 201088 (o200k_harmony, the gpt-oss model card
 *                        section 2.3; Megatron-LM's gpt-oss examples give
 *                        --padded-vocab-size 201088); GPT-2 50257
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
