/* moe_layers.c — --moe-layer-freq into a layer bitmap, a model file's MoE,
 * MLA and MTP keys (config_int.h), and the invariants of those fields; see
 * moe_layers.h.
 *
 * Grammar (Python's list arithmetic restricted to what the flag uses):
 *   expr := term ('+' term)*
 *   term := atom ('*' count)*
 *   atom := '[' bit (',' bit)* ']' | '(' expr ')'
 * Lists are built as byte arrays, capped at PTSIM_MAX_LAYERS + 1 entries
 * (anything longer is wrong anyway). */
#include "moe_layers.h"

#include <math.h>
#include <string.h>
#include "config.h"
#include "config_int.h"
#include "names.h"

#define CAP (PTSIM_MAX_LAYERS + 1)

typedef struct {
  const char *p;
  const char *why; /* the first error */
} Parser;

static void skip(Parser *ps) {
  while (*ps->p == ' ' || *ps->p == '\t') ps->p++;
}

static gboolean fail(Parser *ps, const char *why) {
  if (!ps->why) ps->why = why;
  return FALSE;
}

static gboolean expr(Parser *ps, GByteArray *out, int depth);

static gboolean count(Parser *ps, int64_t *n) {
  skip(ps);
  if (!g_ascii_isdigit(*ps->p)) return fail(ps, "'*' needs a count");
  *n = 0;
  while (g_ascii_isdigit(*ps->p)) {
    *n = *n * 10 + (*ps->p++ - '0');
    if (*n > CAP) *n = CAP;
  }
  return TRUE;
}

static gboolean atom(Parser *ps, GByteArray *out, int depth) {
  skip(ps);
  if (*ps->p == '(') {
    ps->p++;
    if (depth > 16) return fail(ps, "parentheses nested too deeply");
    if (!expr(ps, out, depth + 1)) return FALSE;
    skip(ps);
    if (*ps->p != ')') return fail(ps, "a '(' without its ')'");
    ps->p++;
    return TRUE;
  }
  if (*ps->p != '[') return fail(ps, "expected a list such as [0] or [1], or '('");
  ps->p++;
  for (;;) {
    guint8 bit;
    skip(ps);
    if (*ps->p != '0' && *ps->p != '1')
      return fail(ps, "list entries must be 0 (dense) or 1 (MoE)");
    bit = (guint8)(*ps->p++ - '0');
    if (out->len < CAP) g_byte_array_append(out, &bit, 1);
    skip(ps);
    if (*ps->p == ',') {
      ps->p++;
      continue;
    }
    if (*ps->p == ']') {
      ps->p++;
      return TRUE;
    }
    return fail(ps, "expected ',' or ']' in a list");
  }
}

static gboolean term(Parser *ps, GByteArray *out, int depth) {
  g_autoptr(GByteArray) a = g_byte_array_new();
  if (!atom(ps, a, depth)) return FALSE;
  for (;;) {
    int64_t n, i;
    skip(ps);
    if (*ps->p != '*') break;
    ps->p++;
    if (!count(ps, &n)) return FALSE;
    g_autoptr(GByteArray) rep = g_byte_array_new();
    for (i = 0; i < n && rep->len < CAP; i++)
      g_byte_array_append(rep, a->data, MIN(a->len, CAP - rep->len));
    g_byte_array_set_size(a, 0);
    g_byte_array_append(a, rep->data, rep->len);
  }
  g_byte_array_append(out, a->data, MIN(a->len, CAP > out->len ? CAP - out->len : 0));
  return TRUE;
}

static gboolean expr(Parser *ps, GByteArray *out, int depth) {
  if (!term(ps, out, depth)) return FALSE;
  for (;;) {
    skip(ps);
    if (*ps->p != '+') return TRUE;
    ps->p++;
    if (!term(ps, out, depth)) return FALSE;
  }
}

static void set_bits(const guint8 *layers, int64_t n, uint64_t *bits) {
  memset(bits, 0, sizeof(uint64_t) * PTSIM_LAYER_WORDS);
  for (int64_t i = 0; i < n && i < PTSIM_MAX_LAYERS; i++)
    if (layers[i]) bits[i / 64] |= (uint64_t)1 << (i % 64);
}

gboolean ptsim_moe_layers_parse(const char *text, int64_t num_layers, const char *where,
                                uint64_t *bits, GError **error) {
  int64_t freq;
  if (num_layers < 1 || num_layers > PTSIM_MAX_LAYERS) {
    g_set_error(
        error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
        "%s: a mixture-of-experts model has 1 to %d layers in ptsim (num_layers %" G_GINT64_FORMAT
        ")",
        where, PTSIM_MAX_LAYERS, (gint64)num_layers);
    return FALSE;
  }
  if (!strchr(text, '[')) {
    if (!ptsim_number_parse_int64(text, &freq) || freq < 1) {
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                  "%s '%s' is not allowed: expected a positive integer N (every N-th layer is "
                  "MoE) or a list such as \"([0]*3+[1]*58)\"",
                  where, text);
      return FALSE;
    }
    memset(bits, 0, sizeof(uint64_t) * PTSIM_LAYER_WORDS);
    for (int64_t i = 0; i < num_layers; i += freq) bits[i / 64] |= (uint64_t)1 << (i % 64);
    return TRUE;
  }
  Parser ps = {text, NULL};
  g_autoptr(GByteArray) layers = g_byte_array_new();
  gboolean ok = expr(&ps, layers, 0);
  skip(&ps);
  if (ok && *ps.p) ok = fail(&ps, "unexpected text after the expression");
  if (!ok) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE, "%s '%s': %s (at '%s')", where,
                text, ps.why, ps.p);
    return FALSE;
  }
  if ((int64_t)layers->len != num_layers) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                "%s '%s' lists %s%u layers; expected num_layers = %" G_GINT64_FORMAT
                " (Megatron-LM asserts the pattern's length)",
                where, text, layers->len >= CAP ? "more than " : "",
                layers->len >= CAP ? PTSIM_MAX_LAYERS : layers->len, (gint64)num_layers);
    return FALSE;
  }
  set_bits(layers->data, num_layers, bits);
  return TRUE;
}

/* ---- the model's .ini keys ---- */

/* An optional true|false key (absent: *out unchanged). */
static gboolean ini_bool_optional(const PtsimIniFile *ini, const char *group, const char *key,
                                  int *out, GError **error) {
  if (!g_key_file_has_key(ini->kf, group, key, NULL)) return TRUE;
  return ptsim_ini_bool(ini, group, key, out, error);
}

/* An optional word of names.h's KIND (absent: *out unchanged). */
static gboolean ini_name_word(const PtsimIniFile *ini, const char *group, const char *key,
                              PtsimNamesKind kind, int *out, GError **error) {
  if (!g_key_file_has_key(ini->kf, group, key, NULL)) return TRUE;
  return ptsim_ini_choice(ini, group, key, ptsim_names_allowed(kind), out, error);
}

#define BIG PTSIM_CONFIG_INT_MAX
#define MTP_MAX 64 /* ptsim_moe_model_check's bound */

/* An optional [model] integer in [lo, hi] (absent: *out unchanged). */
static gboolean optional_int(const PtsimIniFile *ini, const char *key, int64_t lo, int64_t hi,
                             int64_t *out, GError **error) {
  return ptsim_ini_int(ini, "model", key, lo, hi, FALSE, out, error);
}

/* The optional keys after the dense ones: head dimension, q/k norm, MoE,
 * MLA, MTP (models/README.md; Megatron-LM's defaults where absent). */
gboolean ptsim_moe_model_load(const PtsimIniFile *ini, PtsimModel *m, GError **error) {
  const char *g = "model";
  const PtsimRange nonnegative = {0.0, INFINITY, TRUE, FALSE};
  int score = 0, balancing = 0;
  if (!optional_int(ini, "kv_channels", 1, BIG, &m->kv_channels, error) ||
      !ini_bool_optional(ini, g, "qk_layernorm", &m->qk_layernorm, error) ||
      !optional_int(ini, "num_experts", 1, BIG, &m->num_experts, error) ||
      !optional_int(ini, "mtp_num_layers", 0, MTP_MAX, &m->mtp_num_layers, error) ||
      !ini_bool_optional(ini, g, "multi_latent_attention", &m->multi_latent_attention, error))
    return FALSE;
  if (m->multi_latent_attention) {
    m->kv_lora_rank = 32; /* Megatron-LM's argparse defaults */
    m->qk_head_dim = 128;
    m->qk_pos_emb_head_dim = 64;
    m->v_head_dim = 128;
    if (!optional_int(ini, "q_lora_rank", 1, BIG, &m->q_lora_rank, error) ||
        !optional_int(ini, "kv_lora_rank", 1, BIG, &m->kv_lora_rank, error) ||
        !optional_int(ini, "qk_head_dim", 1, BIG, &m->qk_head_dim, error) ||
        !optional_int(ini, "qk_pos_emb_head_dim", 0, BIG, &m->qk_pos_emb_head_dim, error) ||
        !optional_int(ini, "v_head_dim", 1, BIG, &m->v_head_dim, error))
      return FALSE;
  }
  /* MoE keys need experts, MLA keys multi-latent attention */
  gsize n = 0;
  g_auto(GStrv) keys = g_key_file_get_keys(ini->kf, g, &n, NULL);
  for (gsize k = 0; k < n; k++) {
    gboolean mla = (strstr(keys[k], "_rank") || strstr(keys[k], "_head_dim")) &&
                   !g_str_has_prefix(keys[k], "mamba_"); /* hybrid_pattern.c's */
    if ((m->num_experts == 0 && g_str_has_prefix(keys[k], "moe_")) ||
        (!m->multi_latent_attention && mla)) {
      g_autofree char *where = ptsim_ini_where(ini, g, keys[k]);
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE, "%s: [model] %s needs %s",
                  where, keys[k],
                  mla ? "multi_latent_attention = true"
                      : "num_experts (a mixture-of-experts model)");
      return FALSE;
    }
  }
  if (m->num_experts == 0) return TRUE;
  m->moe_router_topk = 2; /* Megatron-LM's defaults */
  m->moe_ffn_hidden_size = m->ffn_hidden_size;
  if (!optional_int(ini, "moe_router_topk", 1, BIG, &m->moe_router_topk, error) ||
      !optional_int(ini, "moe_ffn_hidden_size", 1, BIG, &m->moe_ffn_hidden_size, error) ||
      !optional_int(ini, "moe_shared_expert_intermediate_size", 1, BIG, &m->moe_shared_expert_size,
                    error) ||
      !ini_bool_optional(ini, g, "moe_shared_expert_gate", &m->moe_shared_expert_gate, error) ||
      !ini_name_word(ini, g, "moe_router_score_function", PTSIM_NAMES_ROUTER_SCORE, &score,
                     error) ||
      !ini_name_word(ini, g, "moe_router_load_balancing_type", PTSIM_NAMES_LOAD_BALANCING,
                     &balancing, error) ||
      !ptsim_ini_double(ini, g, "moe_aux_loss_coeff", nonnegative, FALSE, NULL,
                        &m->moe_aux_loss_coeff, error) ||
      !ini_bool_optional(ini, g, "moe_router_enable_expert_bias", &m->moe_router_expert_bias,
                         error) ||
      !optional_int(ini, "moe_router_num_groups", 1, BIG, &m->moe_router_groups, error) ||
      !optional_int(ini, "moe_router_group_topk", 1, BIG, &m->moe_router_group_topk, error))
    return FALSE;
  m->moe_router_score = (PtsimRouterScore)score;
  m->moe_load_balancing = (PtsimLoadBalancing)balancing;
  g_autofree char *freq = g_key_file_get_value(ini->kf, g, "moe_layer_freq", NULL);
  g_autofree char *where = ptsim_ini_where(ini, g, freq ? "moe_layer_freq" : "num_experts");
  g_autofree char *label = g_strdup_printf("%s: [model] moe_layer_freq", where);
  return ptsim_moe_layers_parse(freq ? g_strstrip(freq) : "1", m->num_layers, label, m->moe_layers,
                                error);
}

/* ---- the MoE, MLA and MTP invariants ---- */

#define model_invalid(...) \
  (g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID, __VA_ARGS__), FALSE)

gboolean ptsim_moe_model_check(const PtsimModel *m, GError **error) {
  const int64_t max = PTSIM_CONFIG_INT_MAX;
  if (m->num_experts < 0 || m->num_experts > max || m->mtp_num_layers < 0 || m->mtp_num_layers > 64)
    return model_invalid("model %s: num_experts %" G_GINT64_FORMAT
                         " or mtp_num_layers %" G_GINT64_FORMAT
                         " out of range (0 to %" G_GINT64_FORMAT "; 0 to 64)",
                         m->name, (gint64)m->num_experts, (gint64)m->mtp_num_layers, (gint64)max);
  if (m->num_experts > 0) {
    if (m->num_layers > PTSIM_MAX_LAYERS)
      return model_invalid("model %s: num_layers %" G_GINT64_FORMAT " is more than the %d layers "
                           "ptsim allows a mixture-of-experts model",
                           m->name, (gint64)m->num_layers, PTSIM_MAX_LAYERS);
    if (m->moe_router_topk < 1 || m->moe_router_topk > m->num_experts)
      return model_invalid("model %s: moe_router_topk %" G_GINT64_FORMAT " must be 1 to "
                           "num_experts %" G_GINT64_FORMAT,
                           m->name, (gint64)m->moe_router_topk, (gint64)m->num_experts);
    if (m->moe_ffn_hidden_size < 1 || m->moe_ffn_hidden_size > max ||
        m->moe_shared_expert_size < 0 || m->moe_shared_expert_size > max)
      return model_invalid("model %s: moe_ffn_hidden_size %" G_GINT64_FORMAT
                           " must be 1 to %" G_GINT64_FORMAT
                           " and moe_shared_expert_intermediate_size %" G_GINT64_FORMAT " 0 to it",
                           m->name, (gint64)m->moe_ffn_hidden_size, (gint64)max,
                           (gint64)m->moe_shared_expert_size);
    if (m->moe_router_groups < 0 || m->moe_router_group_topk < 0 ||
        (m->moe_router_groups > 0 &&
         (m->num_experts % m->moe_router_groups != 0 || m->moe_router_group_topk < 1 ||
          m->moe_router_group_topk > m->moe_router_groups)))
      return model_invalid("model %s: moe_router_num_groups %" G_GINT64_FORMAT " must divide "
                           "num_experts %" G_GINT64_FORMAT
                           " and moe_router_group_topk %" G_GINT64_FORMAT
                           " be 1 to it (Megatron-LM asserts both)",
                           m->name, (gint64)m->moe_router_groups, (gint64)m->num_experts,
                           (gint64)m->moe_router_group_topk);
    if ((unsigned)m->moe_router_score > PTSIM_ROUTER_SQRTSOFTPLUS ||
        (unsigned)m->moe_load_balancing > PTSIM_BALANCE_NONE || !(m->moe_aux_loss_coeff >= 0.0) ||
        (m->moe_shared_expert_gate != 0 && m->moe_shared_expert_gate != 1) ||
        (m->moe_router_expert_bias != 0 && m->moe_router_expert_bias != 1))
      return model_invalid("model %s: router score, load balancing, aux loss or switches out of "
                           "range",
                           m->name);
    for (int64_t i = m->num_layers; i < PTSIM_MAX_LAYERS; i++)
      if ((m->moe_layers[i / 64] >> (i % 64)) & 1u)
        return model_invalid("model %s: layer %" G_GINT64_FORMAT " is marked MoE beyond "
                             "num_layers %" G_GINT64_FORMAT,
                             m->name, (gint64)i, (gint64)m->num_layers);
  }
  if (m->multi_latent_attention &&
      (m->kv_lora_rank < 1 || m->q_lora_rank < 0 || m->qk_head_dim < 1 ||
       m->qk_pos_emb_head_dim < 0 || m->v_head_dim < 1 || m->kv_lora_rank > max ||
       m->q_lora_rank > max || m->qk_head_dim > max || m->qk_pos_emb_head_dim > max ||
       m->v_head_dim > max))
    return model_invalid("model %s: multi-latent attention needs kv_lora_rank, qk_head_dim and "
                         "v_head_dim of 1 to %" G_GINT64_FORMAT ", q_lora_rank and "
                         "qk_pos_emb_head_dim of 0 to it",
                         m->name, (gint64)max);
  return TRUE;
}
