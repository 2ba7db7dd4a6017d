/* hf_config.c — a Hugging Face config.json as a ptsim model; the families,
 * the defaults and the contract are in hf_config.h.
 *
 * Order: the JSON (json-glib, after a bound on its nesting), the family
 * from `architectures`, the shape every family shares, the family's own
 * keys (attention, MoE), the name, the model check; then one warning for
 * the keys nobody read.  Each getter marks its key as read and leaves the
 * caller's default when the key is absent or null. */
#include "hf_config.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "config.h"
#include "input.h"

typedef enum {
  F_LLAMA,
  F_MISTRAL,
  F_MIXTRAL,
  F_QWEN2,
  F_QWEN2_MOE,
  F_QWEN3,
  F_QWEN3_MOE,
  F_DEEPSEEK_V2,
  F_DEEPSEEK_V3,
  F_GPT_OSS,
  F_LLAMA4
} Family;

static const struct {
  const char *architecture, *model_type;
  Family family;
} families[] = {
    {"LlamaForCausalLM", "llama", F_LLAMA},
    {"MistralForCausalLM", "mistral", F_MISTRAL},
    {"MixtralForCausalLM", "mixtral", F_MIXTRAL},
    {"Qwen2ForCausalLM", "qwen2", F_QWEN2},
    {"Qwen2MoeForCausalLM", "qwen2_moe", F_QWEN2_MOE},
    {"Qwen3ForCausalLM", "qwen3", F_QWEN3},
    {"Qwen3MoeForCausalLM", "qwen3_moe", F_QWEN3_MOE},
    {"DeepseekV2ForCausalLM", "deepseek_v2", F_DEEPSEEK_V2},
    {"DeepseekV3ForCausalLM", "deepseek_v3", F_DEEPSEEK_V3},
    {"GptOssForCausalLM", "gpt_oss", F_GPT_OSS},
    {"Llama4ForCausalLM", "llama4_text", F_LLAMA4},
    {"Llama4ForConditionalGeneration", "llama4", F_LLAMA4},
};

/* Keys that change neither step time nor memory (token ids, RoPE and
 * initialisation parameters, inference switches), or whose effect is the
 * job's (dropout, precision), read silently. */
static const char *const quiet[] = {"_name_or_path",
                                    "architectures",
                                    "model_type",
                                    "transformers_version",
                                    "torch_dtype",
                                    "dtype",
                                    "bos_token_id",
                                    "eos_token_id",
                                    "pad_token_id",
                                    "initializer_range",
                                    "rms_norm_eps",
                                    "rope_theta",
                                    "rope_scaling",
                                    "rope_parameters",
                                    "rope_interleave",
                                    "use_cache",
                                    "max_position_embeddings",
                                    "attention_dropout",
                                    "hidden_act",
                                    "auto_map",
                                    "output_router_logits",
                                    "router_jitter_noise",
                                    "max_window_layers",
                                    "initial_context_length",
                                    "pretraining_tp",
                                    "norm_topk_prob",
                                    "routed_scaling_factor",
                                    "ep_size",
                                    "attn_temperature_tuning",
                                    "floor_scale",
                                    "attn_scale",
                                    "swiglu_limit",
                                    "experts_per_token",
                                    "boi_token_index",
                                    "eoi_token_index",
                                    "image_token_index",
                                    "tie_word_embeddings",
                                    "use_mla",
                                    NULL};

typedef struct {
  const char *label;
  JsonObject *o;      /* the (text) config being read */
  const char *prefix; /* "" or "text_config." in messages */
  GHashTable *used;   /* keys of o read (set) */
  GPtrArray *warnings;
  GError **error;
} Hf;

/* ---- messages ---- */

static void warn(const Hf *H, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void warn(const Hf *H, const char *fmt, ...) {
  if (!H->warnings) return;
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *what = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_ptr_array_add(H->warnings, g_strdup_printf("%s: %s", H->label, what));
}

static gboolean fail(const Hf *H, int code, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static gboolean fail(const Hf *H, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *what = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(H->error, PTSIM_CONFIG_ERROR, code, "%s: %s", H->label, what);
  return FALSE;
}

/* "KEY: expected WHAT, got VALUE". */
static gboolean mistyped(const Hf *H, const char *key, JsonNode *n, const char *what) {
  g_autofree char *text = json_to_string(n, FALSE);
  if (strlen(text) > 60) strcpy(text + 57, "...");
  return fail(H, PTSIM_CONFIG_ERROR_PARSE, "%s%s: expected %s, got %s", H->prefix, key, what, text);
}

/* ---- getters ---- */

/* The key's value, marked as read; NULL when absent or null. */
static JsonNode *member(Hf *H, const char *key) {
  g_hash_table_add(H->used, (gpointer)key);
  JsonNode *n = json_object_get_member(H->o, key);
  return n && !JSON_NODE_HOLDS_NULL(n) ? n : NULL;
}

static gboolean is_integer(JsonNode *n, int64_t *v) {
  if (!JSON_NODE_HOLDS_VALUE(n)) return FALSE;
  GType t = json_node_get_value_type(n);
  if (t == G_TYPE_INT64) {
    *v = json_node_get_int(n);
    return TRUE;
  }
  if (t != G_TYPE_DOUBLE) return FALSE;
  double d = json_node_get_double(n); /* 4096.0: an integer all the same */
  if (!isfinite(d) || d != floor(d) || fabs(d) > 9.0e15) return FALSE;
  *v = (int64_t)d;
  return TRUE;
}

/* An integer in [LO, HI]; absent: *out kept, an error when REQUIRED. */
static gboolean get_int(Hf *H, const char *key, int64_t lo, int64_t hi, gboolean required,
                        int64_t *out) {
  JsonNode *n = member(H, key);
  if (!n)
    return !required || fail(H, PTSIM_CONFIG_ERROR_PARSE,
                             "%s%s is missing (an integer "
                             "from %" G_GINT64_FORMAT ")",
                             H->prefix, key, (gint64)lo);
  int64_t v = 0;
  if (!is_integer(n, &v) || v < lo || v > hi) {
    g_autofree char *what = g_strdup_printf("an integer from %" G_GINT64_FORMAT
                                            " to %" G_GINT64_FORMAT,
                                            (gint64)lo, (gint64)hi);
    return mistyped(H, key, n, what);
  }
  *out = v;
  return TRUE;
}

static gboolean get_bool(Hf *H, const char *key, int *out) {
  JsonNode *n = member(H, key);
  if (!n) return TRUE;
  if (!JSON_NODE_HOLDS_VALUE(n) || json_node_get_value_type(n) != G_TYPE_BOOLEAN)
    return mistyped(H, key, n, "true or false");
  *out = json_node_get_boolean(n) ? 1 : 0;
  return TRUE;
}

static gboolean get_double(Hf *H, const char *key, double *out) {
  JsonNode *n = member(H, key);
  if (!n) return TRUE;
  GType t = JSON_NODE_HOLDS_VALUE(n) ? json_node_get_value_type(n) : G_TYPE_INVALID;
  double v = t == G_TYPE_DOUBLE  ? json_node_get_double(n)
             : t == G_TYPE_INT64 ? (double)json_node_get_int(n)
                                 : NAN;
  if (!isfinite(v) || v < 0.0) return mistyped(H, key, n, "a number >= 0");
  *out = v;
  return TRUE;
}

/* A string, or NULL when absent. */
static gboolean get_string(Hf *H, const char *key, const char **out) {
  JsonNode *n = member(H, key);
  *out = NULL;
  if (!n) return TRUE;
  if (!JSON_NODE_HOLDS_VALUE(n) || json_node_get_value_type(n) != G_TYPE_STRING)
    return mistyped(H, key, n, "a string");
  *out = json_node_get_string(n);
  return TRUE;
}

/* A list of layer indices into a bitmap of NUM_LAYERS bits; *given. */
static gboolean get_layers(Hf *H, const char *key, int64_t num_layers, uint64_t *bits,
                           gboolean *given) {
  JsonNode *n = member(H, key);
  *given = n != NULL;
  if (!n) return TRUE;
  if (!JSON_NODE_HOLDS_ARRAY(n)) return mistyped(H, key, n, "a list of layer indices");
  JsonArray *a = json_node_get_array(n);
  for (guint i = 0; i < json_array_get_length(a); i++) {
    int64_t v = 0;
    if (!is_integer(json_array_get_element(a, i), &v) || v < 0 || v >= num_layers ||
        v >= PTSIM_MAX_LAYERS) {
      g_autofree char *what = g_strdup_printf("layer indices from 0 to %" G_GINT64_FORMAT,
                                              (gint64)MIN(num_layers, PTSIM_MAX_LAYERS) - 1);
      return mistyped(H, key, n, what);
    }
    bits[v / 64] |= (uint64_t)1 << (v % 64);
  }
  return TRUE;
}

static void set_layer(PtsimModel *m, int64_t i) {
  m->moe_layers[i / 64] |= (uint64_t)1 << (i % 64);
}

/* ---- the shape every family shares ---- */

static gboolean read_common(Hf *H, Family f, PtsimModel *m) {
  const int64_t max = PTSIM_CONFIG_INT_MAX;
  m->activation = PTSIM_ACTIVATION_SWIGLU; /* every family here gates its MLP */
  m->norm = PTSIM_NORM_RMSNORM;
  m->position_embedding = PTSIM_POSITION_ROPE;
  if (!get_int(H, "num_hidden_layers", 1, max, TRUE, &m->num_layers) ||
      !get_int(H, "hidden_size", 1, max, TRUE, &m->hidden_size) ||
      !get_int(H, "num_attention_heads", 1, max, TRUE, &m->num_attention_heads) ||
      !get_int(H, "vocab_size", 1, max, TRUE, &m->vocab_size) ||
      (f != F_LLAMA4 && !get_int(H, "intermediate_size", 1, max, TRUE, &m->ffn_hidden_size)))
    return FALSE;
  m->num_query_groups = m->num_attention_heads;
  if (!get_int(H, "num_key_value_heads", 1, max, FALSE, &m->num_query_groups)) return FALSE;
  int64_t head_dim = 0;
  if (!get_int(H, "head_dim", 1, max, FALSE, &head_dim)) return FALSE;
  if (head_dim > 0 && head_dim * m->num_attention_heads != m->hidden_size)
    m->kv_channels = head_dim;
  return get_bool(H, "tie_word_embeddings", &m->tied_embeddings);
}

/* Biases of q, k, v (and o, and the MLP): ptsim's `bias` is all of them. */
static gboolean read_biases(Hf *H, Family f, PtsimModel *m) {
  int attention = f == F_GPT_OSS, mlp = 0;
  if (!get_bool(H, "attention_bias", &attention) || !get_bool(H, "mlp_bias", &mlp)) return FALSE;
  double d = (double)(m->kv_channels ? m->kv_channels : m->hidden_size / m->num_attention_heads);
  double qkv = (double)(m->num_attention_heads + 2 * m->num_query_groups) * d;
  if (f == F_QWEN2 || f == F_QWEN2_MOE) { /* q/k/v biases always, no o bias */
    warn(H,
         "the q, k and v projections carry biases (%.0f parameters), which ptsim does not "
         "count (its `bias` also means o and MLP biases)",
         qkv * (double)m->num_layers);
    return TRUE;
  }
  if (f == F_GPT_OSS || f == F_MIXTRAL || f == F_LLAMA4 || m->num_experts > 0) {
    m->bias = attention; /* ptsim's `bias` gives the experts theirs too, as GPT-OSS's have */
    return TRUE;
  }
  m->bias = attention && mlp;
  if (attention != mlp)
    warn(H,
         "%s biases only: ptsim's `bias` is both the attention's and the MLP's, so it counts "
         "none",
         attention ? "attention_bias: the attention's" : "mlp_bias: the MLP's");
  return TRUE;
}

/* Sliding-window attention: Hugging Face's sliding_window counts the keys a
 * query sees, itself included (its masks keep kv > q - sliding_window), so
 * the tokens before it are one fewer; layer_types names the windowed layers
 * (absent: all of them). */
static gboolean read_window(Hf *H, Family f, PtsimModel *m) {
  int64_t window = 0;
  int use = f == F_MISTRAL || f == F_MIXTRAL || f == F_GPT_OSS;
  if (!get_bool(H, "use_sliding_window", &use) ||
      !get_int(H, "sliding_window", 1, G_MAXINT64, FALSE, &window))
    return FALSE;
  JsonNode *types = member(H, "layer_types");
  int64_t sliding = m->num_layers;
  if (types && JSON_NODE_HOLDS_ARRAY(types)) {
    JsonArray *a = json_node_get_array(types);
    sliding = 0;
    for (guint i = 0; i < json_array_get_length(a); i++) {
      JsonNode *e = json_array_get_element(a, i);
      if (JSON_NODE_HOLDS_VALUE(e) && json_node_get_value_type(e) == G_TYPE_STRING &&
          strcmp(json_node_get_string(e), "sliding_attention") == 0)
        sliding++;
    }
  }
  if (use && window > 1 && sliding > 0) {
    m->window_size = window - 1;
    m->window_layers = MIN(sliding, m->num_layers);
  }
  return TRUE;
}

/* ---- mixtures of experts ---- */

/* Qwen2-MoE and Qwen3-MoE: layer i is MoE when (i + 1) % decoder_sparse_step
 * == 0 and i is not in mlp_only_layers. */
static gboolean qwen_moe(Hf *H, Family f, PtsimModel *m) {
  const int64_t max = PTSIM_CONFIG_INT_MAX;
  gboolean v3 = f == F_QWEN3_MOE;
  m->num_experts = v3 ? 128 : 60;
  m->moe_router_topk = v3 ? 8 : 4;
  m->moe_ffn_hidden_size = v3 ? 768 : 1408;
  m->moe_aux_loss_coeff = 0.001;
  int64_t step = 1, shared = v3 ? 0 : 5632;
  uint64_t dense[PTSIM_LAYER_WORDS] = {0};
  gboolean listed = FALSE;
  if (!get_int(H, "num_experts", 1, max, FALSE, &m->num_experts) ||
      !get_int(H, "num_experts_per_tok", 1, max, FALSE, &m->moe_router_topk) ||
      !get_int(H, "moe_intermediate_size", 1, max, FALSE, &m->moe_ffn_hidden_size) ||
      !get_int(H, "decoder_sparse_step", 1, max, FALSE, &step) ||
      !get_double(H, "router_aux_loss_coef", &m->moe_aux_loss_coeff) ||
      (!v3 && !get_int(H, "shared_expert_intermediate_size", 0, max, FALSE, &shared)) ||
      !get_layers(H, "mlp_only_layers", m->num_layers, dense, &listed))
    return FALSE;
  m->moe_shared_expert_size = shared;
  m->moe_shared_expert_gate = shared > 0; /* Qwen2-MoE's sigmoid shared_expert_gate */
  /* Qwen3's global-batch load balancing (Qwen Team 2025, arXiv 2505.09388) */
  m->moe_load_balancing = v3 ? PTSIM_BALANCE_GLOBAL_AUX_LOSS : PTSIM_BALANCE_AUX_LOSS;
  for (int64_t i = 0; i < m->num_layers && i < PTSIM_MAX_LAYERS; i++)
    if ((i + 1) % step == 0 && !((dense[i / 64] >> (i % 64)) & 1u)) set_layer(m, i);
  return TRUE;
}

/* DeepSeek-V2/V3: MLA and DeepSeekMoE (transformers' DeepseekV3Config
 * defaults where absent). */
static gboolean deepseek(Hf *H, Family f, PtsimModel *m) {
  const int64_t max = PTSIM_CONFIG_INT_MAX;
  m->multi_latent_attention = 1;
  m->qk_layernorm = 1; /* the q and kv latents' RMSNorms */
  m->num_query_groups = m->num_attention_heads;
  m->kv_channels = 0;
  m->q_lora_rank = 1536;
  m->kv_lora_rank = 512;
  m->qk_head_dim = 128;
  m->qk_pos_emb_head_dim = 64;
  m->v_head_dim = 128;
  JsonNode *q = json_object_get_member(H->o, "q_lora_rank");
  if (q && JSON_NODE_HOLDS_NULL(q)) m->q_lora_rank = 0; /* q straight from h (V2-Lite) */
  int64_t dense = 3, freq = 1, shared = 1, groups = 8, group_topk = 4, mtp = 0;
  m->num_experts = 256;
  m->moe_router_topk = 8;
  m->moe_ffn_hidden_size = 2048;
  m->moe_aux_loss_coeff = 0.001;
  int seq_aux = 1;
  const char *score = NULL, *method = NULL;
  if (!get_int(H, "q_lora_rank", 1, max, FALSE, &m->q_lora_rank) ||
      !get_int(H, "kv_lora_rank", 1, max, FALSE, &m->kv_lora_rank) ||
      !get_int(H, "qk_nope_head_dim", 1, max, FALSE, &m->qk_head_dim) ||
      !get_int(H, "qk_rope_head_dim", 0, max, FALSE, &m->qk_pos_emb_head_dim) ||
      !get_int(H, "v_head_dim", 1, max, FALSE, &m->v_head_dim) ||
      !get_int(H, "n_routed_experts", 1, max, FALSE, &m->num_experts) ||
      !get_int(H, "num_experts_per_tok", 1, max, FALSE, &m->moe_router_topk) ||
      !get_int(H, "moe_intermediate_size", 1, max, FALSE, &m->moe_ffn_hidden_size) ||
      !get_int(H, "n_shared_experts", 0, max, FALSE, &shared) ||
      !get_int(H, "first_k_dense_replace", 0, max, FALSE, &dense) ||
      !get_int(H, "moe_layer_freq", 1, max, FALSE, &freq) ||
      !get_int(H, "n_group", 1, max, FALSE, &groups) ||
      !get_int(H, "topk_group", 1, max, FALSE, &group_topk) ||
      !get_int(H, "num_nextn_predict_layers", 0, 64, FALSE, &mtp) ||
      !get_bool(H, "seq_aux", &seq_aux) ||
      !get_double(H, "aux_loss_alpha", &m->moe_aux_loss_coeff) ||
      !get_string(H, "scoring_func", &score) || !get_string(H, "topk_method", &method))
    return FALSE;
  if (score && strcmp(score, "sigmoid") != 0 && strcmp(score, "softmax") != 0)
    return mistyped(H, "scoring_func", member(H, "scoring_func"), "\"sigmoid\" or \"softmax\"");
  m->moe_router_score = (score ? strcmp(score, "sigmoid") == 0 : f == F_DEEPSEEK_V3)
                            ? PTSIM_ROUTER_SIGMOID
                            : PTSIM_ROUTER_SOFTMAX;
  /* noaux_tc: the auxiliary-loss-free bias; the group-limited methods
   * route within topk_group of n_group groups ("greedy": no groups) */
  const char *how = method ? method : f == F_DEEPSEEK_V3 ? "noaux_tc" : "greedy";
  m->moe_router_expert_bias = strcmp(how, "noaux_tc") == 0;
  if (strcmp(how, "greedy") != 0 && groups > 1) {
    m->moe_router_groups = groups;
    m->moe_router_group_topk = group_topk;
  }
  m->moe_load_balancing = seq_aux ? PTSIM_BALANCE_SEQ_AUX_LOSS : PTSIM_BALANCE_AUX_LOSS;
  m->moe_shared_expert_size = shared * m->moe_ffn_hidden_size;
  m->mtp_num_layers = mtp;
  for (int64_t i = dense; i < m->num_layers && i < PTSIM_MAX_LAYERS; i++)
    if (i % freq == 0) set_layer(m, i);
  return TRUE;
}

/* Mixtral, GPT-OSS and Llama 4. */
static gboolean experts(Hf *H, Family f, PtsimModel *m) {
  const int64_t max = PTSIM_CONFIG_INT_MAX;
  m->num_experts = f == F_GPT_OSS ? 128 : f == F_LLAMA4 ? 16 : 8;
  m->moe_router_topk = f == F_GPT_OSS ? 4 : f == F_LLAMA4 ? 1 : 2;
  m->moe_aux_loss_coeff = f == F_GPT_OSS ? 0.9 : f == F_LLAMA4 ? 0.001 : 0.02;
  if (f == F_LLAMA4) {
    m->moe_ffn_hidden_size = 8192;
    m->ffn_hidden_size = 16384;
  }
  if (!get_int(H, "num_local_experts", 1, max, FALSE, &m->num_experts) ||
      !get_int(H, "num_experts_per_tok", 1, max, FALSE, &m->moe_router_topk) ||
      !get_double(H, "router_aux_loss_coef", &m->moe_aux_loss_coeff))
    return FALSE;
  if (f != F_LLAMA4) { /* every layer MoE, the experts intermediate_size wide */
    m->moe_ffn_hidden_size = m->ffn_hidden_size;
    for (int64_t i = 0; i < m->num_layers && i < PTSIM_MAX_LAYERS; i++) set_layer(m, i);
    return TRUE;
  }
  int64_t step = 1;
  gboolean listed = FALSE;
  int qk_norm = 1;
  if (!get_int(H, "intermediate_size", 1, max, FALSE, &m->moe_ffn_hidden_size) ||
      !get_int(H, "intermediate_size_mlp", 1, max, FALSE, &m->ffn_hidden_size) ||
      !get_int(H, "interleave_moe_layer_step", 1, max, FALSE, &step) ||
      !get_layers(H, "moe_layers", m->num_layers, m->moe_layers, &listed) ||
      !get_bool(H, "use_qk_norm", &qk_norm))
    return FALSE;
  if (!listed) /* transformers: range(step - 1, layers, step) */
    for (int64_t i = step - 1; i < m->num_layers && i < PTSIM_MAX_LAYERS; i += step)
      set_layer(m, i);
  m->moe_shared_expert_size = m->moe_ffn_hidden_size; /* one shared expert per MoE layer */
  m->moe_router_score = PTSIM_ROUTER_SIGMOID;         /* top-k, then a sigmoid */
  m->qk_layernorm = qk_norm;
  if (qk_norm)
    warn(H, "use_qk_norm: an L2 norm of q and k without weights; ptsim prices it as a q/k "
            "RMSNorm and counts its 2 x head_dim weights per layer");
  return TRUE;
}

/* ---- what ptsim does not model ---- */

static gboolean read_unmodelled(Hf *H, Family f, const PtsimModel *m) {
  int64_t chunk = f == F_LLAMA4 ? 8192 : 0, interval = 4;
  if (f == F_LLAMA4 && (!get_int(H, "attention_chunk_size", 1, G_MAXINT64, FALSE, &chunk) ||
                        !get_int(H, "no_rope_layer_interval", 1, G_MAXINT64, FALSE, &interval)))
    return FALSE;
  if (f == F_LLAMA4) {
    member(H, "no_rope_layers");
    member(H, "layer_types");
    if (chunk > 0)
      warn(H,
           "attention_chunk_size %" G_GINT64_FORMAT ": the RoPE layers (%" G_GINT64_FORMAT
           " of %" G_GINT64_FORMAT ") attend within chunks of %" G_GINT64_FORMAT " tokens; "
           "ptsim prices full causal attention over the whole sequence",
           (gint64)chunk, (gint64)(m->num_layers - m->num_layers / interval), (gint64)m->num_layers,
           (gint64)chunk);
  }
  if (f == F_GPT_OSS) {
    warn(H,
         "not counted by ptsim: the router's biases (%.0f parameters; Megatron-LM's router has "
         "none); the clamped SwiGLU is priced as SwiGLU",
         (double)m->num_layers * (double)m->num_experts);
  }
  JsonNode *quant = member(H, "quantization_config");
  if (quant && JSON_NODE_HOLDS_OBJECT(quant)) {
    JsonNode *method = json_object_get_member(json_node_get_object(quant), "quant_method");
    const char *name = method && JSON_NODE_HOLDS_VALUE(method) &&
                               json_node_get_value_type(method) == G_TYPE_STRING
                           ? json_node_get_string(method)
                           : "quantized";
    warn(H,
         "quantization_config: the checkpoint's weights are stored %s; ptsim trains at the "
         "job's precision (--precision)",
         name);
  }
  return TRUE;
}

/* One warning naming the keys nobody read. */
static void unread_keys(Hf *H) {
  g_autoptr(GList) keys = json_object_get_members(H->o);
  g_autoptr(GString) list = g_string_new(NULL);
  for (GList *k = keys; k; k = k->next) {
    const char *key = k->data;
    gboolean known = g_hash_table_contains(H->used, key);
    for (const char *const *q = quiet; !known && *q; q++) known = strcmp(key, *q) == 0;
    if (!known) g_string_append_printf(list, "%s%s%s", list->len ? ", " : "", H->prefix, key);
  }
  if (list->len)
    warn(H, "not read by ptsim (their effect, if any, is not modelled): %s", list->str);
}

/* ---- the file ---- */

/* How deep [ and { nest outside strings: json-glib's parser recurses. */
static int nesting(const char *data, gsize len) {
  int depth = 0, most = 0;
  gboolean string = FALSE;
  for (gsize i = 0; i < len; i++) {
    char c = data[i];
    if (string) {
      if (c == '\\')
        i++;
      else if (c == '"')
        string = FALSE;
    } else if (c == '"') {
      string = TRUE;
    } else if (c == '[' || c == '{') {
      most = MAX(most, ++depth);
    } else if (c == ']' || c == '}') {
      depth--;
    }
  }
  return most;
}

/* The model's name: NAME of NAME/config.json, else the file's base name
 * without .json. */
static void model_name(const char *label, char *out) {
  g_autofree char *base = g_path_get_basename(label);
  g_autofree char *dir = g_path_get_dirname(label);
  g_autofree char *parent = g_path_get_basename(dir);
  const char *name = base;
  if (strcmp(base, "config.json") == 0 && strcmp(parent, ".") != 0 && strcmp(parent, "/") != 0)
    name = parent;
  else if (g_str_has_suffix(base, ".json") && strlen(base) > 5)
    base[strlen(base) - 5] = '\0';
  g_strlcpy(out, name, PTSIM_NAME_MAX);
}

static gboolean family_of(Hf *H, JsonObject *root, Family *f) {
  JsonNode *arch = json_object_get_member(root, "architectures");
  const char *name = NULL;
  if (arch && JSON_NODE_HOLDS_ARRAY(arch) && json_array_get_length(json_node_get_array(arch)) > 0) {
    JsonNode *first = json_array_get_element(json_node_get_array(arch), 0);
    if (JSON_NODE_HOLDS_VALUE(first) && json_node_get_value_type(first) == G_TYPE_STRING)
      name = json_node_get_string(first);
  }
  JsonNode *type = json_object_get_member(root, "model_type");
  const char *mt = type && JSON_NODE_HOLDS_VALUE(type) &&
                           json_node_get_value_type(type) == G_TYPE_STRING
                       ? json_node_get_string(type)
                       : NULL;
  for (size_t i = 0; i < G_N_ELEMENTS(families); i++)
    if ((name && strcmp(name, families[i].architecture) == 0) ||
        (!name && mt && strcmp(mt, families[i].model_type) == 0)) {
      *f = families[i].family;
      return TRUE;
    }
  g_autofree char *what = name ? g_strdup_printf("architectures[0] '%s'", name)
                          : mt ? g_strdup_printf("model_type '%s'", mt)
                               : g_strdup("no architectures or model_type: the model");
  return fail(H, PTSIM_CONFIG_ERROR_INVALID,
              "%s is not one ptsim reads; allowed: LlamaForCausalLM, "
              "MistralForCausalLM, MixtralForCausalLM, Qwen2ForCausalLM, Qwen2MoeForCausalLM, "
              "Qwen3ForCausalLM, Qwen3MoeForCausalLM, DeepseekV2ForCausalLM, "
              "DeepseekV3ForCausalLM, GptOssForCausalLM, Llama4ForCausalLM, "
              "Llama4ForConditionalGeneration",
              what);
}

static gboolean read_config(Hf *H, JsonObject *root, PtsimModel *m) {
  Family f = F_LLAMA;
  if (!family_of(H, root, &f)) return FALSE;
  H->o = root;
  if (f == F_LLAMA4 && json_object_has_member(root, "text_config")) {
    JsonNode *text = json_object_get_member(root, "text_config");
    if (!JSON_NODE_HOLDS_OBJECT(text)) return mistyped(H, "text_config", text, "an object");
    if (json_object_has_member(root, "vision_config"))
      warn(H, "vision_config: the vision encoder and its projector are not modelled, only the "
              "language model of text_config");
    H->o = json_node_get_object(text);
    H->prefix = "text_config.";
  }
  if (!read_common(H, f, m) || !read_window(H, f, m)) return FALSE;
  gboolean ok = TRUE;
  if (f == F_QWEN3 || f == F_QWEN3_MOE) m->qk_layernorm = 1; /* q_norm, k_norm over head_dim */
  /* GptOssAttention.sinks (transformers' modeling_gpt_oss.py): a learned
   * logit per head in each layer's softmax, Megatron's --softmax-type
   * learnable */
  if (f == F_GPT_OSS) m->softmax_type = PTSIM_SOFTMAX_LEARNABLE;
  if (f == F_QWEN2_MOE || f == F_QWEN3_MOE)
    ok = qwen_moe(H, f, m);
  else if (f == F_DEEPSEEK_V2 || f == F_DEEPSEEK_V3)
    ok = deepseek(H, f, m);
  else if (f == F_MIXTRAL || f == F_GPT_OSS || f == F_LLAMA4)
    ok = experts(H, f, m);
  if (!ok || !read_biases(H, f, m) || !read_unmodelled(H, f, m)) return FALSE;
  unread_keys(H);
  return TRUE;
}

gboolean ptsim_hf_config_parse(const char *data, gsize len, const char *label, PtsimModel *out,
                               GPtrArray *warnings, GError **error) {
  g_return_val_if_fail((data != NULL || len == 0) && label != NULL && out != NULL, FALSE);
  g_autoptr(GHashTable) used = g_hash_table_new(g_str_hash, g_str_equal);
  Hf H = {label, NULL, "", used, warnings, error};
  if (nesting(data, len) > 32)
    return fail(&H, PTSIM_CONFIG_ERROR_PARSE, "nested more than 32 deep: not a model config");
  if (len > 0 && memchr(data, '\0', len))
    return fail(&H, PTSIM_CONFIG_ERROR_PARSE, "holds NUL bytes: not JSON");
  g_autoptr(JsonParser) parser = json_parser_new();
  g_autoptr(GError) local = NULL;
  if (!json_parser_load_from_data(parser, data ? data : "", (gssize)len, &local))
    return fail(&H, PTSIM_CONFIG_ERROR_PARSE, "not JSON: %s", local->message);
  JsonNode *root = json_parser_get_root(parser);
  if (!root || !JSON_NODE_HOLDS_OBJECT(root))
    return fail(&H, PTSIM_CONFIG_ERROR_PARSE, "not a JSON object: a config.json holds one");
  PtsimModel m;
  memset(&m, 0, sizeof m);
  if (!read_config(&H, json_node_get_object(root), &m)) return FALSE;
  model_name(label, m.name);
  g_autoptr(GError) refused = NULL;
  if (!ptsim_model_check(&m, &refused))
    return fail(&H, PTSIM_CONFIG_ERROR_INVALID, "%s", refused->message);
  *out = m;
  return TRUE;
}

gboolean ptsim_hf_config_load(const char *path, PtsimModel *out, GPtrArray *warnings,
                              GError **error) {
  g_return_val_if_fail(path != NULL && out != NULL, FALSE);
  g_autofree char *text = NULL;
  gsize len = 0;
  g_autoptr(GError) local = NULL;
  if (!ptsim_input_read(path, "Hugging Face config", PTSIM_INPUT_MAX_TEXT, &text, &len, &local)) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_NOT_FOUND, "%s", local->message);
    return FALSE;
  }
  return ptsim_hf_config_parse(text, len, path, out, warnings, error);
}
