/* lifetimes_hybrid.c — a hybrid model's layers (mamba.h) in the allocator
 * replay: what each kind of sub-layer keeps for its backward, the Mamba
 * mixer's transients, and a hybrid stage's weights; see lifetimes_int.h.
 *
 * Each saved set holds the analytical estimate's items in forward order
 * (memory.c ptsim_memory_hybrid_layer_bytes, mamba.c's saved bytes),
 * scaled so that they sum to exactly that estimate, as the dense set is
 * (lifetimes_sets.c):
 *   Mamba     the pre-norm's input and output (in_proj's input), the packed
 *             [z x B C dt] in_proj writes, the scan's output before the
 *             gate (out_x), the gated norm's input, out_proj's input;
 *   attention its input and norm output, Q, K, V, unfused attention's
 *             s x s tensors (exact, as the dense set's), the attention
 *             output;
 *   MLP       its input and norm output, fc1's output, the activation's;
 *   MoE       its input and norm output, the router's scores, the rows the
 *             local experts see and their intermediates, the shared MLP;
 * and a dropout mask each with hidden dropout.  The transients of a Mamba
 * layer's forward and backward (mamba_mixer.py, mamba_ssm's
 * mamba_split_conv1d_scan_combined): SP's all-gather feeding in_proj,
 * with cp > 1 the all-to-all's head-split copy of [z x B C dt] and of the
 * scan output, the conv's output and the fp32 chunk states (H P N per
 * chunk of Q tokens) while the scan runs, and the row-parallel output
 * before its reduction.  Attention, MLP and MoE sub-layers take the
 * transformer layer's transients (lifetimes.c); unfused attention's
 * backward transients only the attention sub-layer.
 *
 * Core module: pure C, PTSIM_HD, no allocation, no I/O. */
#include "lifetimes_int.h"
#include "mamba.h"
#include "memory.h"

#define ELEM PTSIM_LIFETIMES_ELEM

typedef PtsimLifetimesTensor Tensor;
typedef PtsimLifetimesCtx Ctx;

static PTSIM_HD void add(Tensor *s, int32_t *n, const char *name, double bytes, int32_t role) {
  s[*n].name = name;
  s[*n].bytes = bytes;
  s[*n].role = role;
  (*n)++;
}

/* Scales the set's tensors but the exact ones (unfused attention's s x s
 * tensors) so that the set sums to target. */
static PTSIM_HD void scale_to(Tensor *s, int32_t n, double target) {
  double sum = 0.0, exact = 0.0, scale;
  int32_t i;
  for (i = 0; i < n; i++) {
    if (s[i].role & PTSIM_LIFETIMES_ROLE_EXACT)
      exact += s[i].bytes;
    else
      sum += s[i].bytes;
  }
  scale = sum > 0.0 ? (target - exact) / sum : 1.0;
  if (scale < 0.0) scale = 0.0;
  for (i = 0; i < n; i++)
    if (!(s[i].role & PTSIM_LIFETIMES_ROLE_EXACT)) s[i].bytes *= scale;
}

static PTSIM_HD int32_t kind_index(char kind) {
  if (kind == PTSIM_HYBRID_MAMBA) return 0;
  if (kind == PTSIM_HYBRID_ATTENTION) return 1;
  if (kind == PTSIM_HYBRID_MLP) return 2;
  return -1;
}

PTSIM_HD void ptsim_lifetimes_build_hybrid(Ctx *x) {
  const PtsimModel *m = &x->job->model;
  const PtsimLayout *l = &x->job->layout;
  double t = (double)l->tp, T = x->tokens, Tsp = x->tokens_sp, h = (double)m->hidden_size;
  double kv = h * (double)m->num_query_groups / (double)m->num_attention_heads;
  double ffn = (double)m->ffn_hidden_size / t;
  double mask = x->job->source.hidden_dropout > 0.0 ? Tsp * h : 0.0;
  PtsimMambaDims d;
  PtsimAttentionCore core;
  Tensor *s;
  int32_t n, k;
  for (k = 0; k < 3; k++) x->n_saved_hybrid[k] = 0;
  if (!ptsim_model_is_hybrid(m)) return;
  ptsim_mamba_dims(m, &d);
  /* Mamba */
  s = x->saved_hybrid[0];
  n = 0;
  add(s, &n, "mamba_norm_input", ELEM * Tsp * h, 0);
  add(s, &n, "in_proj_input", ELEM * Tsp * h, 0);
  add(s, &n, "zxbcdt", ELEM * T * (double)d.in_proj_width / t,
      PTSIM_LIFETIMES_ROLE_MAMBA_TRANSIENTS);
  add(s, &n, "ssd_out_x", ELEM * T * (double)d.d_inner / t, 0);
  add(s, &n, "gated_norm_input", ELEM * T * (double)d.d_inner / t, 0);
  add(s, &n, "out_proj_input", ELEM * T * (double)d.d_inner / t, 0);
  if (mask > 0.0) add(s, &n, "dropout_mask", mask, 0);
  scale_to(s, n, ptsim_memory_hybrid_layer_bytes(x->plan, PTSIM_HYBRID_MAMBA));
  x->n_saved_hybrid[0] = n;
  /* attention alone */
  s = x->saved_hybrid[1];
  n = 0;
  add(s, &n, "norm1_input", ELEM * Tsp * h, 0);
  add(s, &n, "qkv_input", ELEM * Tsp * h, 0);
  add(s, &n, "q", ELEM * T * h / t, PTSIM_LIFETIMES_ROLE_CORE);
  add(s, &n, "k", ELEM * T * kv / t, PTSIM_LIFETIMES_ROLE_CORE);
  add(s, &n, "v", ELEM * T * kv / t,
      PTSIM_LIFETIMES_ROLE_CORE | PTSIM_LIFETIMES_ROLE_LAYER_TRANSIENTS);
  ptsim_memory_attention_core(x->plan, &core); /* unfused: the kept s x s tensors */
  if (core.kept) {
    add(s, &n, "attention_probs", core.probs * core.elements,
        PTSIM_LIFETIMES_ROLE_CORE | PTSIM_LIFETIMES_ROLE_EXACT);
    if (core.mask + core.applied > 0.0)
      add(s, &n, "attention_probs_out", (core.mask + core.applied) * core.elements,
          PTSIM_LIFETIMES_ROLE_CORE | PTSIM_LIFETIMES_ROLE_EXACT);
  }
  add(s, &n, "attention_output", ELEM * T * h / t, PTSIM_LIFETIMES_ROLE_CORE_END);
  if (mask > 0.0) add(s, &n, "dropout_mask", mask, 0);
  scale_to(s, n, ptsim_memory_hybrid_layer_bytes(x->plan, PTSIM_HYBRID_ATTENTION));
  x->n_saved_hybrid[1] = n;
  /* the MLP alone */
  s = x->saved_hybrid[2];
  n = 0;
  add(s, &n, "norm2_input", ELEM * Tsp * h, 0);
  add(s, &n, "mlp_input", ELEM * Tsp * h, PTSIM_LIFETIMES_ROLE_LAYER_TRANSIENTS);
  add(s, &n, "fc1_output", ELEM * T * ffn * (m->activation == PTSIM_ACTIVATION_SWIGLU ? 2.0 : 1.0),
      0);
  add(s, &n, "activation_output", ELEM * T * ffn, 0);
  if (mask > 0.0) add(s, &n, "dropout_mask", mask, 0);
  scale_to(s, n, ptsim_memory_hybrid_layer_bytes(x->plan, PTSIM_HYBRID_MLP));
  x->n_saved_hybrid[2] = n;
  /* the MoE block alone, in x->saved_moe (whose transients it takes) */
  if (m->num_experts > 0) {
    double rows = x->plan->expert_load * Tsp * (double)m->moe_router_topk * (double)l->etp;
    double f = (double)m->moe_ffn_hidden_size / (double)l->etp;
    s = x->saved_moe;
    n = 0;
    add(s, &n, "norm2_input", ELEM * Tsp * h, PTSIM_LIFETIMES_ROLE_LAYER_TRANSIENTS);
    add(s, &n, "moe_input", ELEM * Tsp * h, 0);
    add(s, &n, "router_scores", 5.0 * Tsp * (double)m->num_experts, 0);
    add(s, &n, "expert_input", ELEM * rows * h, PTSIM_LIFETIMES_ROLE_MOE_TRANSIENTS);
    add(s, &n, "expert_fc1_output", ELEM * rows * f * 2.0, 0);
    add(s, &n, "expert_fc2_input", ELEM * rows * f, 0);
    if (m->moe_shared_expert_size > 0)
      add(s, &n, "shared_mlp", 4.0 * ELEM * T * (double)m->moe_shared_expert_size / t, 0);
    if (mask > 0.0) add(s, &n, "dropout_mask", mask, 0);
    scale_to(s, n, ptsim_memory_hybrid_layer_bytes(x->plan, PTSIM_HYBRID_MOE));
    x->n_saved_moe = n;
  }
}

PTSIM_HD const Tensor *ptsim_lifetimes_hybrid_saved_of(const Ctx *x, int64_t layer, int32_t *n) {
  char kind = layer >= 0 && layer < PTSIM_MAX_LAYERS ? x->job->model.hybrid_pattern[layer] : '\0';
  int32_t k = kind_index(kind);
  if (kind == PTSIM_HYBRID_MOE) {
    *n = x->n_saved_moe;
    return x->saved_moe;
  }
  if (k < 0) k = 2;
  *n = x->n_saved_hybrid[k];
  return x->saved_hybrid[k];
}

PTSIM_HD void ptsim_lifetimes_mamba_transients(Ctx *x) {
  const PtsimModel *m = &x->job->model;
  const PtsimLayout *l = &x->job->layout;
  double t = (double)l->tp, T = x->tokens, h = (double)m->hidden_size;
  double q = (double)PTSIM_MAMBA_CHUNK;
  PtsimMambaDims d;
  int32_t a = -1, b = -1, conv, states;
  ptsim_mamba_dims(m, &d);
  if (l->tp > 1 && l->sp) /* the all-gather output feeding in_proj */
    ptsim_lifetimes_take_give(x, "sp_allgather", ELEM * T * h, PTSIM_LIFETIMES_STREAM_COMPUTE);
  if (l->cp > 1) /* [z x B C dt] split by heads instead of by the sequence */
    a = ptsim_lifetimes_take(x, "cp_alltoall_zxbcdt", ELEM * T * (double)d.in_proj_width / t,
                             PTSIM_LIFETIMES_STREAM_COMM);
  conv = ptsim_lifetimes_take(x, "conv_output", ELEM * T * (double)d.conv_dim / t,
                              PTSIM_LIFETIMES_STREAM_COMPUTE);
  states = ptsim_lifetimes_take(x, "ssd_chunk_states",
                                4.0 * ((T + q - 1.0) / q) * (double)d.nheads / t *
                                    (double)d.headdim * (double)d.d_state,
                                PTSIM_LIFETIMES_STREAM_COMPUTE);
  ptsim_lifetimes_give(x, states);
  ptsim_lifetimes_give(x, conv);
  if (l->cp > 1) /* the scan output back to the sequence split */
    b = ptsim_lifetimes_take(x, "cp_alltoall_y", ELEM * T * (double)d.d_inner / t,
                             PTSIM_LIFETIMES_STREAM_COMM);
  ptsim_lifetimes_give(x, a);
  ptsim_lifetimes_give(x, b);
  if (l->tp > 1) /* out_proj's output before its reduction */
    ptsim_lifetimes_take_give(x, "rowparallel_output", ELEM * T * h,
                              PTSIM_LIFETIMES_STREAM_COMPUTE);
}

PTSIM_HD void ptsim_lifetimes_hybrid_weights(Ctx *x) {
  const PtsimPlan *plan = x->plan;
  const PtsimModel *m = &x->job->model;
  const PtsimLayout *l = &x->job->layout;
  int64_t ep = l->ep > 0 ? l->ep : 1, etp = l->etp > 0 ? l->etp : l->tp;
  double params = plan->stage_parameters[x->stage], layers = 0.0;
  double fp8_cache = plan->stage_weight_bytes[x->stage] - ELEM * params;
  int64_t c, first, count, i;
  for (c = 0; c < plan->num_chunks; c++) {
    ptsim_plan_chunk_range(plan, x->stage, c, &first, &count);
    for (i = first; i < first + count && i < PTSIM_MAX_LAYERS; i++) {
      double one = ptsim_plan_hybrid_layer_parameters(m, m->hybrid_pattern[i], l->tp, ep, etp,
                                                      NULL);
      layers += one;
      ptsim_lifetimes_take(x, "w_layer", ELEM * one, PTSIM_LIFETIMES_STREAM_COMPUTE);
    }
  }
  if (params - layers > 0.0)
    ptsim_lifetimes_take(x, "w_embedding_head", ELEM * (params - layers),
                         PTSIM_LIFETIMES_STREAM_COMPUTE);
  if (fp8_cache > 0.0)
    ptsim_lifetimes_take(x, "fp8_weights", fp8_cache, PTSIM_LIFETIMES_STREAM_COMPUTE);
}
