/* torchtitan_model.c — the model of a torchtitan [model] name and flavor;
 * see torchtitan_model.h. */
#include "torchtitan_model.h"

#include <stdarg.h>
#include <string.h>

#include "config.h"
#include "hf_config.h"

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

/* torchtitan's mixture-of-experts flavors (torchtitan/models/NAME/__init__.py
 * at pytorch/torchtitan@b5bcd76): a models/ file of the same shape, or
 * (gpt_oss) the GptOssForCausalLM config.json of torchtitan's args.
 * MTP: torchtitan's deepseek_v3 flavors train without the multi-token
 * prediction block (num_mtp_layers 0) unless a config asks for it. */
static const struct {
  const char *name, *flavor, *model;
} moe_flavors[] = {
    /* _16b: dim 2048, 27 layers (1 dense, 10944), 64 experts of 1408, 2
     * shared, top 6, MLA kv_lora 512 without a q latent, vocab 102400: the
     * DeepSeek-V2-Lite shape */
    {"deepseek_v3", "16B", "deepseek-v2-lite"},
    /* _671b: dim 7168, 61 layers (3 dense, 18432), 256 experts of 2048, 1
     * shared, top 8 of 8 groups (4 used), q_lora 1536, vocab 129280 */
    {"deepseek_v3", "671B", "deepseek-v3"},
    /* _30b_a3b: dim 2048, 48 layers, 32 heads (4 kv, head_dim 128), 128
     * experts of 768, top 8 */
    {"qwen3", "30B-A3B", "qwen3-30b-a3b"},
    /* _235b_a22b: dim 4096, 94 layers, 64 heads (4 kv), 128 experts of 1536,
     * top 8 */
    {"qwen3", "235B-A22B", "qwen3-235b-a22b"},
};

/* gpt_oss's _20b and _120b: dim 2880, experts of 2880 (SwiGLU with
 * biases), 64 heads (8 kv, head_dim 64) with biases and sinks, the even
 * layers' attention a 128-token sliding window, vocab 201088, top 4. */
static const struct {
  const char *flavor;
  int64_t layers, experts;
} gpt_oss_flavors[] = {{"20b", 24, 32}, {"120b", 36, 128}};

static gboolean gpt_oss_model(const char *flavor, PtsimModel *out, const char **key,
                              GError **error) {
  for (size_t i = 0; i < G_N_ELEMENTS(gpt_oss_flavors); i++) {
    if (strcmp(gpt_oss_flavors[i].flavor, flavor) != 0) continue;
    g_autoptr(GString) types = g_string_new("");
    for (int64_t l = 0; l < gpt_oss_flavors[i].layers; l++)
      g_string_append_printf(types, "%s\"%s\"", l ? ", " : "",
                             l % 2 == 0 ? "sliding_attention" : "full_attention");
    g_autofree char *json = g_strdup_printf(
        "{\"architectures\": [\"GptOssForCausalLM\"], \"hidden_size\": 2880, "
        "\"intermediate_size\": 2880, \"num_attention_heads\": 64, \"num_key_value_heads\": 8, "
        "\"head_dim\": 64, \"num_hidden_layers\": %" G_GINT64_FORMAT
        ", \"num_local_experts\": %" G_GINT64_FORMAT
        ", \"num_experts_per_tok\": 4, \"vocab_size\": 201088, \"sliding_window\": 128, "
        "\"layer_types\": [%s], \"attention_bias\": true, \"router_aux_loss_coef\": 0.001, "
        "\"tie_word_embeddings\": false}",
        (gint64)gpt_oss_flavors[i].layers, (gint64)gpt_oss_flavors[i].experts, types->str);
    g_autofree char *label = g_strdup_printf("gpt-oss-%s.json", flavor);
    return ptsim_hf_config_parse(json, strlen(json), label, out, NULL, error);
  }
  *key = "flavor";
  return ptsim_config_fail(error, PTSIM_CONFIG_ERROR_INVALID,
                           "[model] flavor = '%s' has no ptsim model; allowed: 20b, 120b "
                           "(torchtitan's gpt_oss flavors; debug flavors have no ptsim model)",
                           flavor);
}

/* llama4's 17bx16e and 17bx128e (torchtitan/models/llama4/__init__.py at
 * 238fa99; no longer in torchtitan's models at b5bcd76): dim 5120, 48
 * layers, 40 heads (8 kv), vocab 202048, top-1 routing with one shared
 * expert; the MoE hidden size auto-scaled from the dense one (4 x 5120 x
 * 2/3 x 1.2, a multiple of 2048: 16384) over top_k + shared = 2: 8192;
 * 17bx16e MoE in every layer (interleave_moe_layer_step 1), 17bx128e in
 * every other (the default 2, the others dense 16384); no q/k norm, full
 * causal attention (the _irope flavors' chunked attention is refused).
 * Built as the Llama4ForCausalLM config.json of that shape. */
static gboolean llama4_model(const char *flavor, PtsimModel *out, const char **key,
                             GError **error) {
  int64_t experts = strcmp(flavor, "17bx16e") == 0 ? 16 : strcmp(flavor, "17bx128e") == 0 ? 128 : 0;
  *key = "flavor";
  if (experts == 0)
    return ptsim_config_fail(
        error, PTSIM_CONFIG_ERROR_INVALID,
        "[model] flavor = '%s' has no ptsim model; allowed: 17bx16e, 17bx128e "
        "(torchtitan's llama4 flavors; the _irope ones' chunked attention and the "
        "debug flavors are not modelled)",
        flavor);
  g_autofree char *json = g_strdup_printf(
      "{\"architectures\": [\"Llama4ForCausalLM\"], \"hidden_size\": 5120, "
      "\"intermediate_size\": 8192, \"intermediate_size_mlp\": 16384, "
      "\"num_attention_heads\": 40, \"num_key_value_heads\": 8, \"head_dim\": 128, "
      "\"num_hidden_layers\": 48, \"num_local_experts\": %" G_GINT64_FORMAT
      ", \"num_experts_per_tok\": 1, \"interleave_moe_layer_step\": %d, \"use_qk_norm\": false, "
      "\"vocab_size\": 202048, \"tie_word_embeddings\": false}",
      (gint64)experts, experts == 16 ? 1 : 2);
  g_autofree char *label = g_strdup_printf("llama4-%s.json", flavor);
  *key = NULL;
  return ptsim_hf_config_parse(json, strlen(json), label, out, NULL, error);
}

/* A models/ file for NAME's FLAVOR, if one is listed. */
static gboolean moe_model(const char *name, const char *flavor, PtsimModel *out, gboolean *found,
                          GError **error) {
  *found = FALSE;
  for (size_t i = 0; i < G_N_ELEMENTS(moe_flavors); i++) {
    if (strcmp(moe_flavors[i].name, name) != 0 || strcmp(moe_flavors[i].flavor, flavor) != 0)
      continue;
    *found = TRUE;
    if (!ptsim_model_load(moe_flavors[i].model, out, error)) return FALSE;
    g_strlcpy(out->name, moe_flavors[i].model, sizeof out->name);
    out->mtp_num_layers = 0; /* torchtitan's num_mtp_layers defaults to 0 */
    return TRUE;
  }
  return TRUE;
}

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
  gboolean found = FALSE;
  if (!moe_model("qwen3", flavor, out, &found, error) || found) return found;
  *key = "flavor";
  return ptsim_config_fail(
      error, PTSIM_CONFIG_ERROR_INVALID,
      "[model] flavor = '%s' has no ptsim model; allowed: 0.6B, 1.7B, 4B, 8B, 14B, 32B, "
      "30B-A3B, 235B-A22B (torchtitan's qwen3 flavors)",
      flavor);
}

gboolean ptsim_torchtitan_model(const char *name, const char *flavor, PtsimModel *out,
                                const char **note, const char **key, GError **error) {
  *note = NULL;
  *key = NULL;
  if (strcmp(name, "qwen3") == 0) return qwen3_model(flavor, out, key, error);
  if (strcmp(name, "gpt_oss") == 0) return gpt_oss_model(flavor, out, key, error);
  if (strcmp(name, "deepseek_v3") == 0) {
    gboolean found = FALSE;
    if (!moe_model(name, flavor, out, &found, error) || found) return found;
    *key = "flavor";
    return ptsim_config_fail(
        error, PTSIM_CONFIG_ERROR_INVALID,
        "[model] flavor = '%s' has no ptsim model; allowed: 16B, 671B (torchtitan's "
        "deepseek_v3 flavors; 236B and the debug flavors have no ptsim model)",
        flavor);
  }
  *key = "name";
  if (strcmp(name, "llama4") == 0) return llama4_model(flavor, out, key, error);
  *key = "name";
  if (strcmp(name, "llama3") != 0)
    return ptsim_config_fail(
        error, PTSIM_CONFIG_ERROR_INVALID,
        "[model] name = '%s': ptsim reads torchtitan's llama3, qwen3, deepseek_v3 and "
        "gpt_oss configs",
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
  return ptsim_config_fail(
      error, PTSIM_CONFIG_ERROR_INVALID,
      "[model] flavor = '%s' has no ptsim model; allowed: 8B, 8B_flex, 8B_varlen, "
      "70B, 405B (torchtitan's llama3 flavors; debug flavors have no models/ file)",
      flavor);
}
