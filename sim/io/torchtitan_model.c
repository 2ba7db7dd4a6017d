/* torchtitan_model.c — the model of a torchtitan [model] name and flavor;
 * see torchtitan_model.h. */
#include "torchtitan_model.h"

#include <stdarg.h>
#include <string.h>

#include "config.h"
#include "hf_config.h"

static gboolean refuse(GError **error, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static gboolean refuse(GError **error, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *what = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID, "%s", what);
  return FALSE;
}

static const struct {
  const char *flavor, *model, *note;
} flavors[] = {
    {"8B", "llama3-8b", NULL},
    {"8B_flex", "llama3-8b", "flex attention with a block-causal (document) mask"},
    {"8B_varlen", "llama3-8b", "varlen attention with a block-causal (document) mask"},
    {"70B", "llama3-70b", NULL},
    {"405B", "llama3.1-405b", NULL},
};

/* torchtitan's dense qwen3 flavors (models/qwen3/__init__.py at 238fa99:
 * head_dim 128, vocab 151936, q/k norms, the three smallest with tied
 * embeddings), built as the Qwen3ForCausalLM config.json of the same shape
 * (hf_config.h). */
static const struct {
  const char *flavor;
  int64_t dim, layers, heads, kv_heads, hidden;
  gboolean tied;
} qwen3_flavors[] = {
    {"0.6B", 1024, 28, 16, 8, 3072, TRUE},  {"1.7B", 2048, 28, 16, 8, 6144, TRUE},
    {"4B", 2560, 36, 32, 8, 9728, TRUE},    {"8B", 4096, 36, 32, 8, 12288, FALSE},
    {"14B", 5120, 40, 40, 8, 17408, FALSE}, {"32B", 5120, 64, 64, 8, 25600, FALSE},
};

/* torchtitan's mixture-of-experts families: ptsim models their layers as
 * Megatron-LM runs them, not as PyTorch modules (--transformer-impl torch
 * is dense-only in the workload). */
static const char *const moe_families[] = {"deepseek_v3", "llama4", "gpt_oss"};

static gboolean qwen3_model(const char *flavor, PtsimModel *out, const char **key, GError **error) {
  for (size_t i = 0; i < G_N_ELEMENTS(qwen3_flavors); i++) {
    if (strcmp(qwen3_flavors[i].flavor, flavor) != 0) continue;
    g_autofree char *json = g_strdup_printf(
        "{\"architectures\": [\"Qwen3ForCausalLM\"], \"hidden_size\": %" G_GINT64_FORMAT
        ", \"num_hidden_layers\": %" G_GINT64_FORMAT ", \"num_attention_heads\": %" G_GINT64_FORMAT
        ", \"num_key_value_heads\": %" G_GINT64_FORMAT ", \"intermediate_size\": %" G_GINT64_FORMAT
        ", \"head_dim\": 128, \"vocab_size\": 151936, \"tie_word_embeddings\": %s}",
        (gint64)qwen3_flavors[i].dim, (gint64)qwen3_flavors[i].layers,
        (gint64)qwen3_flavors[i].heads, (gint64)qwen3_flavors[i].kv_heads,
        (gint64)qwen3_flavors[i].hidden, qwen3_flavors[i].tied ? "true" : "false");
    g_autofree char *label = g_strdup_printf("qwen3-%s.json", flavor);
    for (char *c = label; *c; c++) *c = g_ascii_tolower(*c);
    return ptsim_hf_config_parse(json, strlen(json), label, out, NULL, error);
  }
  *key = "flavor";
  if (strchr(flavor, 'A'))
    return refuse(error,
                  "[model] flavor = '%s' is a mixture of experts: ptsim prices torchtitan's "
                  "PyTorch-module layers for dense models only (give --hf-config or --model "
                  "with --megatron-args for a Megatron-LM run of it)",
                  flavor);
  return refuse(error,
                "[model] flavor = '%s' has no ptsim model; allowed: 0.6B, 1.7B, 4B, 8B, 14B, 32B "
                "(torchtitan's dense qwen3 flavors)",
                flavor);
}

gboolean ptsim_torchtitan_model(const char *name, const char *flavor, PtsimModel *out,
                                const char **note, const char **key, GError **error) {
  *note = NULL;
  *key = NULL;
  if (strcmp(name, "qwen3") == 0) return qwen3_model(flavor, out, key, error);
  *key = "name";
  for (size_t i = 0; i < G_N_ELEMENTS(moe_families); i++)
    if (strcmp(name, moe_families[i]) == 0)
      return refuse(error,
                    "[model] name = '%s': a mixture of experts; ptsim prices torchtitan's "
                    "PyTorch-module layers for dense models only (llama3, qwen3; give "
                    "--hf-config or --model with --megatron-args for a Megatron-LM run of it)",
                    name);
  if (strcmp(name, "llama3") != 0)
    return refuse(error,
                  "[model] name = '%s': ptsim reads torchtitan's llama3 configs (flavors 8B, "
                  "8B_flex, 8B_varlen, 70B, 405B) and qwen3's dense ones",
                  name);
  *key = "flavor";
  for (size_t i = 0; i < G_N_ELEMENTS(flavors); i++) {
    if (strcmp(flavors[i].flavor, flavor) != 0) continue;
    *note = flavors[i].note;
    *key = NULL; /* a models/ file that does not load is its own error */
    if (!ptsim_model_load(flavors[i].model, out, error)) return FALSE;
    g_strlcpy(out->name, flavors[i].model, sizeof out->name);
    return TRUE;
  }
  return refuse(error,
                "[model] flavor = '%s' has no ptsim model; allowed: 8B, 8B_flex, 8B_varlen, "
                "70B, 405B (torchtitan's llama3 flavors; debug flavors have no models/ file)",
                flavor);
}
