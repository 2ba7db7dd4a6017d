/* megatron_moe.c — Megatron-LM's mixture-of-experts, multi-latent attention
 * and multi-token prediction flags, with its defaults and rules
 * (megatron/training/arguments.py _add_moe_args / _add_mla_args /
 * validate_args, megatron/core/transformer/transformer_config.py
 * __post_init__, at d98e8a64), applied to what a command line said: the
 * MoE part of megatron_args.h's model and layout.  The rest of the model
 * and layout is megatron_resolve.c's. */
#include <math.h>
#include <string.h>

#include "config.h"
#include "numbers.h"
#include "megatron_said.h"
#include "moe_layers.h"
#include "names.h"

#define parse_error(...) \
  (g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE, __VA_ARGS__), FALSE)
#define NOTE(s, ...) \
  ptsim_megatron_add((s)->diag ? (s)->diag->notes : NULL, g_strdup_printf(__VA_ARGS__))

/* The first value of a list flag (its only one, in practice). */
static const char *first_value(const Said *s, FlagId id) {
  if (s->list_at[id] < 0) return s->word[id];
  return s->list_len[id] > 0 ? s->argv[s->list_at[id]] : NULL;
}

/* A word flag holding a count >= 0 (--num-experts 0 and --mtp-num-layers 0
 * mean "none", as Megatron-LM reads them). */
static gboolean count_word(const Said *s, FlagId id, int64_t *out, GError **error) {
  *out = 0;
  if (!GIVEN(s, id)) return TRUE;
  return ptsim_number_int64(ptsim_megatron_flag_name(id), s->word[id], 0, PTSIM_CONFIG_INT_MAX, out,
                            error);
}

/* Index of WORD among names.h's KIND, or an error naming the flag. */
static gboolean name_word(const Said *s, FlagId id, const char *word, PtsimNamesKind kind, int *out,
                          GError **error) {
  (void)s;
  if (ptsim_names_parse(kind, word, out)) return TRUE;
  return parse_error("%s '%s' is not allowed: expected %s", ptsim_megatron_flag_name(id), word,
                     ptsim_names_allowed(kind));
}

static gboolean resolve_router(const Said *s, PtsimModel *m, GError **error) {
  int v = 0;
  if (GIVEN(s, F_MOE_SCORE)) {
    if (!name_word(s, F_MOE_SCORE, s->word[F_MOE_SCORE], PTSIM_NAMES_ROUTER_SCORE, &v, error))
      return FALSE;
    m->moe_router_score = (PtsimRouterScore)v;
  }
  if (GIVEN(s, F_MOE_BALANCING)) {
    int n = s->list_at[F_MOE_BALANCING] < 0 ? 1 : s->list_len[F_MOE_BALANCING];
    for (int k = 0; k < n; k++) {
      const char *w = s->list_at[F_MOE_BALANCING] < 0 ? s->word[F_MOE_BALANCING]
                                                      : s->argv[s->list_at[F_MOE_BALANCING] + k];
      if (!name_word(s, F_MOE_BALANCING, w, PTSIM_NAMES_LOAD_BALANCING, &v, error)) return FALSE;
      if (k == 0) m->moe_load_balancing = (PtsimLoadBalancing)v;
    }
    if (n > 1)
      NOTE(s,
           "--moe-router-load-balancing-type lists %d kinds; ptsim keeps the first (the "
           "balancing kind changes the router's small kernels only)",
           n);
  }
  const PtsimRange nonnegative = {0.0, INFINITY, TRUE, FALSE};
  if (GIVEN(s, F_MOE_AUX_COEFF) &&
      !ptsim_number_double("--moe-aux-loss-coeff", first_value(s, F_MOE_AUX_COEFF), nonnegative,
                           &m->moe_aux_loss_coeff, error))
    return FALSE;
  m->moe_router_expert_bias = GIVEN(s, F_MOE_EXPERT_BIAS);
  m->moe_router_groups = GIVEN(s, F_MOE_GROUPS) ? s->i[F_MOE_GROUPS] : 0;
  m->moe_router_group_topk = GIVEN(s, F_MOE_GROUP_TOPK) ? s->i[F_MOE_GROUP_TOPK] : 0;
  if (m->moe_router_groups > 0 && m->moe_router_group_topk == 0)
    return parse_error("--moe-router-num-groups needs --moe-router-group-topk (Megatron-LM "
                       "asserts it)");
  return TRUE;
}

gboolean ptsim_megatron_resolve_moe_model(const Said *s, PtsimModel *m, GError **error) {
  if (!count_word(s, F_NUM_EXPERTS, &m->num_experts, error) ||
      !count_word(s, F_MTP_LAYERS, &m->mtp_num_layers, error))
    return FALSE;
  if (GIVEN(s, F_MLA)) {
    if (GIVEN(s, F_GQA))
      return parse_error("--multi-latent-attention cannot be combined with "
                         "--group-query-attention (Megatron-LM asserts it)");
    m->multi_latent_attention = 1;
    m->num_query_groups = m->num_attention_heads;
    m->q_lora_rank = GIVEN(s, F_Q_LORA) ? s->i[F_Q_LORA] : 0;
    m->kv_lora_rank = GIVEN(s, F_KV_LORA) ? s->i[F_KV_LORA] : 32; /* argparse's default */
    m->qk_head_dim = GIVEN(s, F_QK_HEAD_DIM) ? s->i[F_QK_HEAD_DIM] : 128;
    m->qk_pos_emb_head_dim = GIVEN(s, F_QK_POS_DIM) ? s->i[F_QK_POS_DIM] : 64;
    m->v_head_dim = GIVEN(s, F_V_HEAD_DIM) ? s->i[F_V_HEAD_DIM] : 128;
    if (!GIVEN(s, F_KV_LORA))
      NOTE(s, "--multi-latent-attention without --kv-lora-rank: Megatron-LM's default 32");
  }
  if (m->num_experts == 0) return TRUE;
  m->moe_router_topk = GIVEN(s, F_MOE_TOPK) ? s->i[F_MOE_TOPK] : 2;
  m->moe_ffn_hidden_size = GIVEN(s, F_MOE_FFN) ? s->i[F_MOE_FFN] : m->ffn_hidden_size;
  m->moe_shared_expert_size = GIVEN(s, F_MOE_SHARED) ? s->i[F_MOE_SHARED] : 0;
  m->moe_shared_expert_gate = GIVEN(s, F_MOE_SHARED_GATE);
  if (m->moe_router_topk > m->num_experts)
    return parse_error("--moe-router-topk %" G_GINT64_FORMAT
                       " is more than --num-experts %" G_GINT64_FORMAT,
                       (gint64)m->moe_router_topk, (gint64)m->num_experts);
  if (m->num_layers > PTSIM_MAX_LAYERS)
    return parse_error("--num-layers %" G_GINT64_FORMAT ": ptsim models mixture-of-experts "
                       "models of up to %d layers",
                       (gint64)m->num_layers, PTSIM_MAX_LAYERS);
  return resolve_router(s, m, error) &&
         ptsim_moe_layers_parse(GIVEN(s, F_MOE_FREQ) ? s->word[F_MOE_FREQ] : "1", m->num_layers,
                                "--moe-layer-freq", m->moe_layers, error);
}

static gboolean resolve_dispatcher(const Said *s, PtsimSettings *run, GError **error) {
  int v = 0;
  if (GIVEN(s, F_MOE_DISPATCHER)) {
    const char *w = s->word[F_MOE_DISPATCHER];
    if (strcmp(w, "alltoall_seq") == 0) { /* releases before core_v0.13 */
      w = "alltoall";
      NOTE(s, "--moe-token-dispatcher-type alltoall_seq is taken as alltoall");
    }
    if (!name_word(s, F_MOE_DISPATCHER, w, PTSIM_NAMES_DISPATCHER, &v, error)) return FALSE;
  }
  if (GIVEN(s, F_MOE_DEEPEP)) { /* deprecated for --moe-flex-dispatcher-backend deepep */
    if (GIVEN(s, F_MOE_DISPATCHER) && v != PTSIM_DISPATCH_FLEX)
      return parse_error("--moe-enable-deepep needs --moe-token-dispatcher-type flex "
                         "(Megatron-LM refuses it otherwise)");
    v = PTSIM_DISPATCH_FLEX;
  }
  if (GIVEN(s, F_MOE_FLEX_BACKEND)) {
    const char *b = s->word[F_MOE_FLEX_BACKEND];
    if (strcmp(b, "deepep") != 0 && strcmp(b, "hybridep") != 0 && strcmp(b, "ncclep") != 0)
      return parse_error("--moe-flex-dispatcher-backend '%s' is not allowed: expected "
                         "deepep|hybridep|ncclep",
                         b);
    if (strcmp(b, "ncclep") == 0 && v != PTSIM_DISPATCH_FLEX)
      return parse_error("--moe-flex-dispatcher-backend ncclep needs --moe-token-dispatcher-type "
                         "flex (Megatron-LM refuses it otherwise)");
  }
  run->moe_dispatcher = (PtsimDispatcher)v;
  return TRUE;
}

gboolean ptsim_megatron_resolve_moe_job(const Said *s, PtsimJob *job, GError **error) {
  const PtsimModel *m = &job->model;
  PtsimLayout *l = &job->layout;
  PtsimSettings *run = &job->settings;
  l->ep = GIVEN(s, F_EP) ? s->i[F_EP] : 1;
  l->etp = GIVEN(s, F_ETP) ? s->i[F_ETP] : l->tp; /* arguments.py: ETP defaults to TP */
  if (l->ep > 1 && m->num_experts == 0)
    return parse_error("--expert-model-parallel-size %" G_GINT64_FORMAT " needs --num-experts "
                       "(Megatron-LM asserts it)",
                       (gint64)l->ep);
  /* read for dense models too: validation refuses them as Megatron-LM does */
  run->moe_ep_comm_overlap = GIVEN(s, F_MOE_EP_OVERLAP);
  run->delay_wgrad_compute = GIVEN(s, F_DELAY_WGRAD);
  if (m->num_experts == 0) return TRUE;
  if (!resolve_dispatcher(s, run, error)) return FALSE;
  run->moe_capacity_factor =
      GIVEN(s, F_MOE_CAPACITY) && s->d[F_MOE_CAPACITY] > 0.0 ? s->d[F_MOE_CAPACITY] : 0.0;
  run->moe_pad_to_capacity = GIVEN(s, F_MOE_PAD);
  run->moe_grouped_gemm = GIVEN(s, F_MOE_GROUPED_GEMM);
  run->moe_permute_fusion = GIVEN(s, F_MOE_PERMUTE_FUSION);
  run->moe_router_fusion = GIVEN(s, F_MOE_ROUTER_FUSION);
  if (GIVEN(s, F_MOE_ROUTER_DTYPE)) {
    const char *d = s->word[F_MOE_ROUTER_DTYPE];
    if (strcmp(d, "fp32") != 0 && strcmp(d, "fp64") != 0)
      return parse_error("--moe-router-dtype '%s' is not allowed: expected fp32|fp64", d);
    run->moe_router_fp32 = 1;
    if (strcmp(d, "fp64") == 0)
      ptsim_megatron_add(s->diag ? s->diag->unmodelled : NULL,
                         g_strdup("--moe-router-dtype fp64 (slower: the router in fp64, priced "
                                  "as fp32)"));
  }
  run->moe_shared_expert_overlap = GIVEN(s, F_MOE_SHARED_OVERLAP);
  if (GIVEN(s, F_MOE_LAYER_RECOMPUTE)) { /* deprecated: selective with the moe module */
    if (run->recompute == PTSIM_RECOMPUTE_FULL)
      return parse_error("--moe-layer-recompute cannot be combined with full recomputation "
                         "(Megatron-LM refuses it)");
    run->recompute = PTSIM_RECOMPUTE_SELECTIVE;
    run->recompute_modules |= PTSIM_RECOMPUTE_MOE;
  }
  return TRUE;
}
