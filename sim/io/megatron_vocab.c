/* megatron_vocab.c — tokenizer vocabularies; see megatron_vocab.h. */
#include "megatron_vocab.h"

#include <string.h>

#include "config.h"

/* Tokenizer models recognised by name (case-insensitive substrings of
 * --tokenizer-model, e.g. "meta-llama/Meta-Llama-3-8B"), the first match
 * winning: the more specific names come first.  The sizes and their
 * sources are in megatron_vocab.h. */
static const struct {
  const char *needle;
  int64_t vocab;
} known_models[] = {
    {"llama-3", 128256},
    {"llama3", 128256},
    {"llama-2", 32000},
    {"llama2", 32000},
    {"mixtral-8x22b", 32768},
    {"mistral-7b-v0.3", 32768},
    {"mistral-7b-instruct-v0.3", 32768},
    {"mistral-nemo", 131072},
    {"mistral-small-24b", 131072},
    {"mistral", 32000},
    {"mixtral", 32000},
    {"qwen3", 151669},
    {"qwen2.5", 151665},
    {"qwq", 151665},
    {"qwen2", 151646},
    {"qwen1.5", 151646},
    {"deepseek-v3", 129280},
    {"deepseek-r1", 129280},
    {"deepseek-v2", 102400},
    {"deepseek-moe", 100015},
    {"deepseek-llm", 100015},
    {"gpt-oss", 201088},
    {"gpt2", 50257},
    {"gpt-2", 50257},
};

static const struct {
  const char *type;
  int64_t vocab;
} fixed[] = {
    {"GPT2BPETokenizer", 50257},
    {"Llama2Tokenizer", 32000},
    {"BertWordPieceLowerCase", 30522},
    {"BertWordPieceCase", 28996},
};

gboolean ptsim_megatron_vocab(const char *type, const char *model, int64_t vocab_size,
                              int64_t *vocab, char **how, GError **error) {
  const char *t = type ? type : "GPT2BPETokenizer";
  for (size_t i = 0; i < G_N_ELEMENTS(fixed); i++)
    if (strcmp(t, fixed[i].type) == 0) {
      *vocab = fixed[i].vocab;
      *how = g_strdup_printf("%s%s: %" G_GINT64_FORMAT, t,
                             type ? "" : " (pretrain_gpt.py's default)", (gint64)*vocab);
      return TRUE;
    }
  if (model) {
    g_autofree char *lower = g_ascii_strdown(model, -1);
    for (size_t i = 0; i < G_N_ELEMENTS(known_models); i++)
      if (strstr(lower, known_models[i].needle)) {
        *vocab = known_models[i].vocab;
        *how = g_strdup_printf("%s '%s': %" G_GINT64_FORMAT, t, model, (gint64)*vocab);
        return TRUE;
      }
  }
  if (vocab_size > 0) {
    *vocab = vocab_size;
    *how = g_strdup_printf("%s with --vocab-size: %" G_GINT64_FORMAT, t, (gint64)vocab_size);
    return TRUE;
  }
  if (strcmp(t, "TikTokenizer") == 0) {
    *vocab = 131072;
    *how = g_strdup("TikTokenizer: 131072");
    return TRUE;
  }
  g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
              "vocab size unknown: tokenizer %s%s%s%s has no size ptsim knows; add --vocab-size N "
              "or --padded-vocab-size N to the Megatron-LM flags",
              t, model ? " with model '" : "", model ? model : "", model ? "'" : "");
  return FALSE;
}

int64_t ptsim_megatron_vocab_pad(int64_t vocab, int64_t divisible, int64_t tp) {
  int64_t multiple = divisible * tp;
  return multiple > 0 ? (vocab + multiple - 1) / multiple * multiple : vocab;
}
