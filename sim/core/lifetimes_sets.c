/* lifetimes_sets.c — the tensors a layer keeps for its backward, in the
 * order forward allocates them: a dense layer's and, for a
 * mixture-of-experts model, an MoE layer's; and what a recomputed layer's
 * checkpoint keeps under torch's per-op policy; see lifetimes_int.h.
 *
 * Each set is the analytical estimate's items (the reference's table: norm
 * inputs, QKV input, Q, K, V, attention output, MLP input, the MLP
 * intermediates, dropout masks, s x s scores without flash attention; the
 * router's scores and the rows the local experts see), scaled so that
 * their sum is exactly ptsim_memory_layer_activation_bytes() (or its MoE
 * counterpart), plus what a release keeps beyond it (lifetimes.h,
 * "Releases": unfused attention's K and V copied to every head).
 *
 * Core module: pure C, PTSIM_HD, no allocation, no I/O.  Siblings:
 * lifetimes.c, lifetimes_period.c. */
#include "lifetimes_int.h"
#include "memory.h"

#define ELEM PTSIM_LIFETIMES_ELEM
/* Megatron-LM commit dates (YYYYMMDD, merges into main) between which
 * unfused attention copied K and V to every head (lifetimes.h, "Releases"). */
#define MEGATRON_KV_COPIES_FROM 20230721
#define MEGATRON_KV_COPIES_UNTIL 20231102

typedef PtsimLifetimesTensor Tensor;
typedef PtsimLifetimesCtx Ctx;

/* The layer's saved tensors, in the order forward allocates them. */
static PTSIM_HD void build_saved_dense(Ctx *x) {
  const PtsimModel *m = &x->job->model;
  const PtsimLayout *l = &x->job->layout;
  const PtsimSettings *run = &x->job->settings;
  const PtsimProvenance *src = &x->job->source;
  double t = (double)l->tp, T = x->tokens, Tsp = x->tokens_sp, h = (double)m->hidden_size;
  double kv = h * (double)m->num_query_groups / (double)m->num_attention_heads;
  double ffn = (double)m->ffn_hidden_size / t;
  double sum = 0.0, target, scale;
  int32_t i, n = 0;
  Tensor *s = x->saved;
  s[n].name = "norm1_input";
  s[n++].bytes = ELEM * Tsp * h;
  s[n].name = "qkv_input";
  s[n++].bytes = ELEM * Tsp * h;
  s[n].name = "q";
  s[n++].bytes = ELEM * T * h / t;
  s[n].name = "k";
  s[n++].bytes = ELEM * T * kv / t;
  s[n].name = "v";
  s[n++].bytes = ELEM * T * kv / t;
  if (!run->flash_attention && run->recompute != PTSIM_RECOMPUTE_SELECTIVE) {
    double scores = (double)l->mbs * (double)m->num_attention_heads / t *
                    (double)x->plan->local_seq * (double)x->plan->local_seq;
    s[n].name = "attention_scores";
    s[n++].bytes = ELEM * scores;
    s[n].name = "attention_probs";
    s[n++].bytes = ELEM * scores;
  }
  s[n].name = "attention_output";
  s[n++].bytes = ELEM * T * h / t;
  s[n].name = "norm2_input";
  s[n++].bytes = ELEM * Tsp * h;
  s[n].name = "mlp_input";
  s[n++].bytes = ELEM * Tsp * h;
  s[n].name = "fc1_output";
  s[n++].bytes = ELEM * T * ffn * (m->activation == PTSIM_ACTIVATION_SWIGLU ? 2.0 : 1.0);
  s[n].name = "activation_output";
  s[n++].bytes = ELEM * T * ffn;
  if (m->activation == PTSIM_ACTIVATION_SWIGLU) {
    s[n].name = "fc2_input";
    s[n++].bytes = ELEM * T * ffn;
  }
  if (src->hidden_dropout > 0.0) {
    s[n].name = "dropout_masks";
    s[n++].bytes = 2.0 * Tsp * h;
  }
  for (i = 0; i < n; i++) sum += s[i].bytes;
  target = ptsim_memory_layer_activation_bytes(x->plan,
                                               run->recompute != PTSIM_RECOMPUTE_SELECTIVE);
  scale = sum > 0.0 ? target / sum : 1.0;
  for (i = 0; i < n; i++) s[i].bytes *= scale;
  /* Unfused attention's K and V copied to every head (lifetimes.h),
   * made after V and kept with the scores. */
  if (!run->flash_attention && run->recompute != PTSIM_RECOMPUTE_SELECTIVE &&
      (m->num_query_groups < m->num_attention_heads ||
       ptsim_lifetimes_megatron_between(x->job, MEGATRON_KV_COPIES_FROM,
                                        MEGATRON_KV_COPIES_UNTIL))) {
    double heads = ELEM * T * (double)(m->num_attention_heads * x->plan->head_dim) / t;
    for (i = n - 1; i >= 5; i--) s[i + 2] = s[i];
    s[5].name = "k_repeated";
    s[5].bytes = heads;
    s[6].name = "v_repeated";
    s[6].bytes = heads;
    n += 2;
  }
  x->n_saved = n;
}

/* An MoE layer's saved tensors (mixture-of-experts models), in forward
 * order: the attention part as a dense layer's, then the block input, the
 * router's scores, the rows the local experts see and their intermediates,
 * the shared experts' MLP; scaled to ptsim_memory_moe_layer_activation_bytes
 * like the dense set. */
static PTSIM_HD void build_saved_moe(Ctx *x) {
  const PtsimModel *m = &x->job->model;
  const PtsimLayout *l = &x->job->layout;
  const PtsimSettings *run = &x->job->settings;
  const PtsimProvenance *src = &x->job->source;
  double t = (double)l->tp, T = x->tokens, Tsp = x->tokens_sp, h = (double)m->hidden_size;
  double rows = x->plan->expert_load * Tsp * (double)m->moe_router_topk * (double)l->etp;
  double f = (double)m->moe_ffn_hidden_size / (double)l->etp;
  double sum = 0.0, target, scale;
  int32_t i, n = 0;
  Tensor *s = x->saved_moe;
  s[n].name = "norm1_input";
  s[n++].bytes = ELEM * Tsp * h;
  s[n].name = "qkv_input";
  s[n++].bytes = ELEM * Tsp * h;
  s[n].name = "qkv";
  s[n++].bytes = 3.0 * ELEM * T * h / t;
  s[n].name = "attention_output";
  s[n++].bytes = ELEM * T * h / t;
  s[n].name = "norm2_input";
  s[n++].bytes = ELEM * Tsp * h;
  s[n].name = "moe_input";
  s[n++].bytes = ELEM * Tsp * h;
  s[n].name = "router_scores";
  s[n++].bytes = 5.0 * Tsp * (double)m->num_experts;
  s[n].name = "expert_input";
  s[n++].bytes = ELEM * rows * h;
  s[n].name = "expert_fc1_output";
  s[n++].bytes = ELEM * rows * f * 2.0;
  s[n].name = "expert_fc2_input";
  s[n++].bytes = ELEM * rows * f;
  if (m->moe_shared_expert_size > 0) {
    s[n].name = "shared_mlp";
    s[n++].bytes = 4.0 * ELEM * T * (double)m->moe_shared_expert_size / t;
  }
  if (src->hidden_dropout > 0.0) {
    s[n].name = "dropout_masks";
    s[n++].bytes = 2.0 * Tsp * h;
  }
  for (i = 0; i < n; i++) sum += s[i].bytes;
  target = ptsim_memory_moe_layer_activation_bytes(x->plan,
                                                   run->recompute != PTSIM_RECOMPUTE_SELECTIVE);
  scale = sum > 0.0 ? target / sum : 1.0;
  for (i = 0; i < n; i++) s[i].bytes *= scale;
  x->n_saved_moe = n;
}

/* The saved set of layer `layer` of model chunk `chunk`. */
PTSIM_HD const Tensor *ptsim_lifetimes_saved_of(const Ctx *x, int32_t chunk, int32_t layer,
                                                int32_t *n) {
  int64_t first, count;
  if (x->n_saved_moe > 0) {
    ptsim_plan_chunk_range(x->plan, x->stage, chunk, &first, &count);
    if (ptsim_plan_is_moe_layer(&x->job->model, first + layer)) {
      *n = x->n_saved_moe;
      return x->saved_moe;
    }
  }
  *n = x->n_saved;
  return x->saved;
}

/* What torch's per-op checkpointing keeps of a layer (memory.c's
 * op_saved_bytes, in forward order: the block input, the kept matmul
 * outputs, SDPA's output and logsumexp, TP's reduce-scatter outputs),
 * scaled to ptsim_memory_layer_op_saved_bytes; the rest of the layer's
 * saved set comes and goes (rest_scale).  Nothing without per-op. */
static PTSIM_HD void build_kept(Ctx *x) {
  static const char *const names[PTSIM_TORCH_GEMMS] = {"wq_output", "wk_output", "wv_output",
                                                       "wo_output", "w1_output", "w3_output",
                                                       "w2_output"};
  const PtsimModel *m = &x->job->model;
  const PtsimLayout *l = &x->job->layout;
  const PtsimSettings *run = &x->job->settings;
  double t = (double)l->tp, T = x->tokens, h = (double)m->hidden_size;
  double q = (double)(m->num_attention_heads * x->plan->head_dim);
  double kv = (double)(m->num_query_groups * x->plan->head_dim), f = (double)m->ffn_hidden_size;
  double out[PTSIM_TORCH_GEMMS], sum = 0.0, full = 0.0, target;
  int32_t i, n = 0;
  Tensor *s = x->kept;
  x->n_kept = 0;
  x->rest_scale = 1.0;
  if (run->recompute != PTSIM_RECOMPUTE_SELECTIVE_OP) return;
  out[PTSIM_TORCH_WQ] = T * q / t;
  out[PTSIM_TORCH_WK] = out[PTSIM_TORCH_WV] = T * kv / t;
  out[PTSIM_TORCH_WO] = out[PTSIM_TORCH_W2] = T * h;
  out[PTSIM_TORCH_W1] = out[PTSIM_TORCH_W3] = T * f / t;
  s[n].name = "layer_input";
  s[n++].bytes = x->layer_input_bytes;
  for (i = 0; i < PTSIM_TORCH_GEMMS; i++) {
    if (!ptsim_plan_torch_gemm_saved(m, i)) continue;
    s[n].name = names[i];
    s[n++].bytes = ELEM * out[i];
    if (i == PTSIM_TORCH_WV) {
      s[n].name = "attention_output";
      s[n++].bytes = ELEM * T * q / t;
      s[n].name = "attention_logsumexp";
      s[n++].bytes = 4.0 * (double)l->mbs * (double)(m->num_attention_heads / l->tp) *
                     (double)x->plan->local_seq;
    }
  }
  if (l->tp > 1 && l->sp) {
    s[n].name = "reduce_scatter_outputs";
    s[n++].bytes = 2.0 * ELEM * T * h / t;
  }
  for (i = 0; i < n; i++) sum += s[i].bytes;
  target = ptsim_memory_layer_op_saved_bytes(x->plan);
  for (i = 0; i < n; i++) s[i].bytes *= sum > 0.0 ? target / sum : 1.0;
  for (i = 0; i < x->n_saved; i++) full += x->saved[i].bytes;
  x->rest_scale = full > target ? (full - target) / full : 0.0;
  x->n_kept = n;
}

/* Megatron's full recompute of a chunk's layer: uniform recomputes every
 * layer and checkpoints the input of each group of n (recompute_num_layers)
 * layers; block recomputes (checkpointing each input of) the first n
 * layers and stores the rest in full.  n = 0: every layer, one each.
 * torch's per-op checkpointing recomputes every layer, keeping x->kept. */
PTSIM_HD int ptsim_lifetimes_recomputed(const Ctx *x, int32_t layer) {
  const PtsimSettings *run = &x->job->settings;
  if (run->recompute == PTSIM_RECOMPUTE_SELECTIVE_OP) return 1; /* every layer, per op */
  if (run->recompute != PTSIM_RECOMPUTE_FULL) return 0;
  if (run->recompute_method == PTSIM_RECOMPUTE_METHOD_BLOCK && run->recompute_num_layers > 0)
    return layer < run->recompute_num_layers;
  return 1;
}

PTSIM_HD int ptsim_lifetimes_keeps_input(const Ctx *x, int32_t layer) {
  const PtsimSettings *run = &x->job->settings;
  if (run->recompute_method == PTSIM_RECOMPUTE_METHOD_UNIFORM && run->recompute_num_layers > 1)
    return layer % run->recompute_num_layers == 0;
  return 1;
}

PTSIM_HD void ptsim_lifetimes_build_saved(Ctx *x) {
  build_saved_dense(x);
  x->n_saved_moe = 0;
  if (x->job->model.num_experts > 0) build_saved_moe(x);
  build_kept(x);
}
