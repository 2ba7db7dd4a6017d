/* workload.c — the ops of one step; see workload.h.
 *
 * Shapes, per GPU, for one microbatch (b = mbs, s = seq, c = cp, t = tp):
 *   T     = b s / c           tokens this CP rank holds
 *   T_sp  = T / t with SP     tokens in the sequence-parallel regions
 *   GEMM  (m, n, k) = (T, out/t, in) for column-parallel (QKV, fc1, head),
 *                     (T, out, in/t) for row-parallel (O, fc2)
 * Backward of a GEMM: dgrad (m, k, n) in B, wgrad (k, n, m) in W — the
 * same FLOPs as the forward each (Megatron's "3x").
 * Memory-bound ops move their reads + writes through HBM; their backward
 * moves about twice the forward bytes (read grad and saved input, write
 * grad).  bf16/fp16 tensors are 2 bytes, fp32 logits 4. */
#include <stddef.h>
#include "plan.h"
#include "workload.h"

#define ELEM 2.0 /* bytes of a bf16/fp16 activation */

/* Everything the op builders need, computed once. */
typedef struct {
  const PtsimPlan *plan;
  const PtsimJob *job;  /* &plan->job */
  const PtsimCostParams *params;
  const PtsimGroup *tp_group, *cp_group, *pp_group, *dp_group; /* the plan's */
  int64_t tokens;      /* T */
  double tokens_sp;    /* T_sp */
  int64_t t, c;
  PtsimPrecision precision;
} Ctx;

static PTSIM_HD void work_zero(PtsimWork *w) {
  int i;
  w->forward_s = 0.0;
  w->backward_input_s = 0.0;
  w->backward_weight_s = 0.0;
  w->recompute_s = 0.0;
  w->flops = 0.0;
  for (i = 0; i < PTSIM_COMM_KINDS; i++) {
    w->forward_comm_s[i] = 0.0;
    w->backward_comm_s[i] = 0.0;
  }
}

static PTSIM_HD void work_add(PtsimWork *acc, const PtsimWork *w, double times) {
  int i;
  acc->forward_s += times * w->forward_s;
  acc->backward_input_s += times * w->backward_input_s;
  acc->backward_weight_s += times * w->backward_weight_s;
  acc->recompute_s += times * w->recompute_s;
  acc->flops += times * w->flops;
  for (i = 0; i < PTSIM_COMM_KINDS; i++) {
    acc->forward_comm_s[i] += times * w->forward_comm_s[i];
    acc->backward_comm_s[i] += times * w->backward_comm_s[i];
  }
}

/* ---- op builders: each adds one op's forward and backward to *w ---- */

/* Whether an FP8 GEMM's input has a cast kernel of its own. */
#define INPUT_CAST 1
#define INPUT_QUANTIZED_BY_NORM 0

static PTSIM_HD int in_fp8(const Ctx *x) {
  return x->precision == PTSIM_PRECISION_FP8 && x->job->hw.peak_fp8_flops > 0.0;
}

/* A GEMM of forward shape (m, n, k) at `precision`.  In FP8 (Transformer
 * Engine's Linear, delayed scaling) a cast kernel reads the bf16 input and
 * writes it as fp8 with a transposed fp8 copy for wgrad, unless the
 * LayerNorm before it (TE LayerNormLinear: Megatron's QKV and fc1) writes
 * its output quantized already (input_cast 0); in backward the output
 * gradient comes in bf16 (from attention, the residual stream, or
 * Megatron's own activation) and is cast the same way.  Weights are cast
 * once per step and cached across microbatches: not counted. */
static PTSIM_HD void add_gemm_at(const Ctx *x, PtsimWork *w, PtsimPrecision precision, int64_t m,
                                 int64_t n, int64_t k, int input_cast) {
  const PtsimHardware *hw = &x->job->hw;
  w->forward_s += ptsim_cost_gemm_s(hw, x->params, precision, m, n, k);
  w->backward_input_s += ptsim_cost_gemm_s(hw, x->params, precision, m, k, n);
  w->backward_weight_s += ptsim_cost_gemm_s(hw, x->params, precision, k, n, m);
  w->flops += 6.0 * (double)m * (double)n * (double)k;
  if (precision == PTSIM_PRECISION_FP8 && in_fp8(x)) {
    if (input_cast)
      w->forward_s += ptsim_cost_memory_bound_s(hw, (ELEM + 2.0) * (double)m * (double)k);
    w->backward_input_s += ptsim_cost_memory_bound_s(hw, (ELEM + 2.0) * (double)m * (double)n);
  }
}

/* A transformer layer's GEMM at the job's precision. */
static PTSIM_HD void add_gemm(const Ctx *x, PtsimWork *w, int64_t m, int64_t n, int64_t k,
                              int input_cast) {
  add_gemm_at(x, w, x->precision, m, n, k, input_cast);
}

/* The precision of what runs outside Transformer Engine's FP8 layers
 * (attention, Megatron's LM head): bf16 under FP8, else the job's. */
static PTSIM_HD PtsimPrecision outside_fp8(const Ctx *x) {
  return x->precision == PTSIM_PRECISION_FP8 ? PTSIM_PRECISION_BF16 : x->precision;
}

/* A memory-bound op moving `bytes` forward (about twice that backward). */
static PTSIM_HD void add_elementwise(const Ctx *x, PtsimWork *w, double bytes) {
  w->forward_s += ptsim_cost_memory_bound_s(&x->job->hw, bytes);
  w->backward_input_s += ptsim_cost_memory_bound_s(&x->job->hw, 2.0 * bytes);
}

/* Blocking communication: forward time `fwd`, backward time `bwd`. */
static PTSIM_HD void add_comm(PtsimWork *w, PtsimCommKind kind, double fwd, double bwd) {
  w->forward_s += fwd;
  w->backward_input_s += bwd;
  w->forward_comm_s[kind] += fwd;
  w->backward_comm_s[kind] += bwd;
}

static PTSIM_HD double tp_coll_s(const Ctx *x, PtsimCollective kind, double bytes) {
  if (x->t <= 1) return 0.0;
  return ptsim_cost_collective_s(&x->job->hw, x->params, kind, bytes, x->tp_group);
}

/* What of a TP collective the compute stream waits for.  With
 * --tp-comm-overlap the collective is split into t chunks pipelined with
 * the neighbouring GEMM (Transformer Engine's ring exchange): the first
 * chunk is exposed, the rest hides behind the GEMM as far as it lasts. */
static PTSIM_HD double tp_exposed(const Ctx *x, double comm_s, double gemm_s) {
  double rest, hidden;
  if (!x->job->layout.tp_comm_overlap || x->t <= 1) return comm_s;
  rest = comm_s * (double)(x->t - 1) / (double)x->t;
  hidden = gemm_s * (double)(x->t - 1) / (double)x->t;
  return comm_s / (double)x->t + (rest > hidden ? rest - hidden : 0.0);
}

/* The TP collective entering a column-parallel GEMM (QKV, fc1, head):
 * SP all-gather forward / reduce-scatter backward; without SP nothing
 * forward and an all-reduce of the input gradient backward.  `quantized`:
 * a TE LayerNormLinear in FP8 gathers its norm's fp8 output (1 byte an
 * element, TE's gather_along_first_dim with the input quantizer); the
 * gradients stay bf16. */
static PTSIM_HD void add_tp_enter(const Ctx *x, PtsimWork *w, double gemm_s, int quantized) {
  double bytes = (double)x->tokens * (double)x->job->model.hidden_size * ELEM;
  double gathered = quantized && in_fp8(x) ? bytes / ELEM : bytes;
  if (x->t <= 1) return;
  if (x->job->layout.sp)
    add_comm(w, PTSIM_COMM_TP,
             tp_exposed(x, tp_coll_s(x, PTSIM_COLL_ALL_GATHER, gathered), gemm_s),
             tp_exposed(x, tp_coll_s(x, PTSIM_COLL_REDUCE_SCATTER, bytes), gemm_s));
  else
    add_comm(w, PTSIM_COMM_TP, 0.0,
             tp_exposed(x, tp_coll_s(x, PTSIM_COLL_ALL_REDUCE, bytes), gemm_s));
}

/* The TP collective leaving a row-parallel GEMM (O, fc2): SP
 * reduce-scatter forward / all-gather backward; without SP an all-reduce
 * forward and nothing backward. */
static PTSIM_HD void add_tp_leave(const Ctx *x, PtsimWork *w, double gemm_s) {
  double bytes = (double)x->tokens * (double)x->job->model.hidden_size * ELEM;
  if (x->t <= 1) return;
  if (x->job->layout.sp)
    add_comm(w, PTSIM_COMM_TP,
             tp_exposed(x, tp_coll_s(x, PTSIM_COLL_REDUCE_SCATTER, bytes), gemm_s),
             tp_exposed(x, tp_coll_s(x, PTSIM_COLL_ALL_GATHER, bytes), gemm_s));
  else
    add_comm(w, PTSIM_COMM_TP,
             tp_exposed(x, tp_coll_s(x, PTSIM_COLL_ALL_REDUCE, bytes), gemm_s), 0.0);
}

static PTSIM_HD double gemm_fwd_s(const Ctx *x, int64_t m, int64_t n, int64_t k) {
  return ptsim_cost_gemm_s(&x->job->hw, x->params, x->precision, m, n, k);
}

/* Attention without FlashAttention (Megatron before it, or
 * --no-flash-attention): the full s x s scores are materialised — batched
 * GEMMs for QK^T and softmax x V (no causal skipping), the fused
 * scale-mask-softmax and, with attention dropout, a dropout pass, each
 * moving the b x heads x s x s tensor through HBM.  Selective recompute
 * re-runs exactly this part (Korthikanti et al. 2022). */
static PTSIM_HD void add_unfused_attention(const Ctx *x, PtsimWork *w, PtsimWork *recompute_into) {
  const PtsimModel *m = &x->job->model;
  int64_t b = x->job->layout.mbs, s = x->job->layout.seq / x->c;
  int64_t heads = m->num_attention_heads / x->t;
  int64_t d = m->hidden_size / m->num_attention_heads;
  double scores = (double)b * (double)heads * (double)s * (double)s;
  PtsimWork part;
  work_zero(&part);
  add_gemm_at(x, &part, outside_fp8(x), b * heads * s, s, d, INPUT_CAST); /* Q K^T */
  add_elementwise(x, &part, 2.0 * ELEM * scores); /* softmax: read + write */
  if (x->job->layout.attention_dropout > 0.0)
    add_elementwise(x, &part, (2.0 * ELEM + 1.0) * scores); /* mask + scale */
  add_gemm_at(x, &part, outside_fp8(x), b * heads * s, d, s, INPUT_CAST); /* P V */
  work_add(w, &part, 1.0);
  if (recompute_into) {
    recompute_into->forward_s += part.forward_s;
    recompute_into->flops += part.flops / 3.0;
  }
}

/* Flash attention with the context-parallel ring.  With load-balanced CP
 * (Megatron splits the sequence into 2c chunks) each rank does 1/c of the
 * causal work as c/2 full (s/c x s/c) blocks, and the ring sends K and V
 * (c-1 steps) while it computes; backward also returns dK, dV.  Without CP
 * it is the plain causal kernel over s.  It runs in bf16 even in fp8
 * training (Transformer Engine keeps attention in bf16 by default). */
static PTSIM_HD void add_attention(const Ctx *x, PtsimWork *w, PtsimWork *recompute_into) {
  const PtsimModel *m = &x->job->model;
  const PtsimHardware *hw = &x->job->hw;
  int64_t b = x->job->layout.mbs, s = x->job->layout.seq;
  int64_t heads = m->num_attention_heads / x->t;
  int64_t head_dim = m->hidden_size / m->num_attention_heads;
  double fwd, bwd, flops;
  if (!x->job->layout.flash_attention) {
    add_unfused_attention(x, w, recompute_into);
    return;
  }
  if (x->c <= 1) {
    fwd = ptsim_cost_attention_s(hw, x->params, PTSIM_PRECISION_BF16, b, heads, s, s, head_dim, 1, 0);
    bwd = ptsim_cost_attention_s(hw, x->params, PTSIM_PRECISION_BF16, b, heads, s, s, head_dim, 1, 1);
    flops = ptsim_cost_attention_flops(x->params, b, heads, s, s, head_dim, 1, 0) +
            ptsim_cost_attention_flops(x->params, b, heads, s, s, head_dim, 1, 1);
  } else {
    int64_t block = s / x->c;
    double blocks = 0.5 * (double)x->c;
    double kv_bytes = 2.0 * (double)b * (double)block * (double)head_dim *
                      (double)(m->num_query_groups / x->t > 0 ? m->num_query_groups / x->t : 1) *
                      ELEM;
    double step_f, step_b, comm_f, comm_b, exposed_f, exposed_b;
    fwd = blocks * ptsim_cost_attention_s(hw, x->params, PTSIM_PRECISION_BF16, b, heads, block, block,
                                          head_dim, 0, 0);
    bwd = blocks * ptsim_cost_attention_s(hw, x->params, PTSIM_PRECISION_BF16, b, heads, block, block,
                                          head_dim, 0, 1);
    flops = blocks * (ptsim_cost_attention_flops(x->params, b, heads, block, block, head_dim, 0, 0) +
                      ptsim_cost_attention_flops(x->params, b, heads, block, block, head_dim, 0, 1));
    /* The ring's steps overlap the blocks computed meanwhile: each step
     * is exposed only where it outlasts its share of the compute. */
    step_f = fwd / (double)(x->c - 1);
    step_b = bwd / (double)(x->c - 1);
    comm_f = ptsim_cost_collective_s(hw, x->params, PTSIM_COLL_SEND_RECV, kv_bytes, x->cp_group);
    comm_b = ptsim_cost_collective_s(hw, x->params, PTSIM_COLL_SEND_RECV, 2.0 * kv_bytes,
                                     x->cp_group);
    exposed_f = (double)(x->c - 1) * (comm_f > step_f ? comm_f - step_f : 0.0);
    exposed_b = (double)(x->c - 1) * (comm_b > step_b ? comm_b - step_b : 0.0);
    add_comm(w, PTSIM_COMM_CP, exposed_f, exposed_b);
    if (recompute_into) add_comm(recompute_into, PTSIM_COMM_CP, exposed_f, 0.0);
  }
  w->forward_s += fwd;
  w->backward_input_s += bwd;
  w->flops += flops;
  if (recompute_into) {
    recompute_into->forward_s += fwd;
    recompute_into->flops += flops * fwd / (fwd + bwd > 0.0 ? fwd + bwd : 1.0);
  }
}

/* ---- the transformer layer ---- */

static PTSIM_HD void build_layer(const Ctx *x, PtsimWork *w) {
  const PtsimModel *m = &x->job->model;
  const PtsimLayout *l = &x->job->layout;
  int64_t T = x->tokens, t = x->t, h = m->hidden_size;
  int64_t kv = h * m->num_query_groups / m->num_attention_heads;
  int64_t fc1_out = (m->activation == PTSIM_ACTIVATION_SWIGLU ? 2 : 1) * m->ffn_hidden_size;
  double norm_bytes = 2.0 * x->tokens_sp * (double)h * ELEM;
  double residual_bytes = x->tokens_sp * (double)h *
                          (3.0 * ELEM + (l->hidden_dropout > 0.0 ? 1.0 : 0.0));
  double ffn_local = (double)T * (double)m->ffn_hidden_size / (double)t;
  double qkv_s = gemm_fwd_s(x, T, (h + 2 * kv) / t, h);
  double o_s = gemm_fwd_s(x, T, h, h / t);
  double fc1_s = gemm_fwd_s(x, T, fc1_out / t, h);
  double fc2_s = gemm_fwd_s(x, T, h, m->ffn_hidden_size / t);
  PtsimWork attention_core;
  work_zero(w);
  work_zero(&attention_core);

  /* attention block (QKV: TE LayerNormLinear, O: TE Linear) */
  add_elementwise(x, w, norm_bytes);
  add_tp_enter(x, w, qkv_s, 1);
  add_gemm(x, w, T, (h + 2 * kv) / t, h, INPUT_QUANTIZED_BY_NORM);
  if (!ptsim_plan_has_learned_positions(m)) /* RoPE on q and k */
    add_elementwise(x, w, 2.0 * (double)T * (double)(h + kv) / (double)t * ELEM);
  add_attention(x, w, l->recompute == PTSIM_RECOMPUTE_SELECTIVE ? &attention_core : NULL);
  add_gemm(x, w, T, h, h / t, INPUT_CAST);
  add_tp_leave(x, w, o_s);
  add_elementwise(x, w, residual_bytes); /* bias-dropout-add */

  /* MLP block (fc1: TE LayerNormLinear; Megatron's own activation kernel,
   * bf16 out; fc2: TE Linear) */
  add_elementwise(x, w, norm_bytes);
  add_tp_enter(x, w, fc1_s, 1);
  add_gemm(x, w, T, fc1_out / t, h, INPUT_QUANTIZED_BY_NORM);
  add_elementwise(x, w, (m->activation == PTSIM_ACTIVATION_SWIGLU ? 3.0 : 2.0) * ffn_local * ELEM);
  add_gemm(x, w, T, h, m->ffn_hidden_size / t, INPUT_CAST);
  add_tp_leave(x, w, fc2_s);
  add_elementwise(x, w, residual_bytes);

  /* Recomputation re-runs forward work inside B. */
  if (l->recompute == PTSIM_RECOMPUTE_FULL) {
    double share = 1.0;
    /* Block recompute: the share of a chunk's layers that is recomputed
     * (stage 0's chunk stands for every stage: one layer cost for all). */
    int64_t chunk_layers = x->plan->chunk_layers[0];
    if (l->recompute_num_layers > 0 && l->recompute_method == PTSIM_RECOMPUTE_METHOD_BLOCK &&
        x->plan->stage_layers[0] > 0) {
      int64_t n = l->recompute_num_layers < chunk_layers ? l->recompute_num_layers : chunk_layers;
      share = chunk_layers > 0 ? (double)n / (double)chunk_layers : 1.0;
    }
    w->recompute_s = share * w->forward_s;
    w->backward_input_s += w->recompute_s;
    w->flops += share * w->flops / 3.0;
    {
      int i;
      for (i = 0; i < PTSIM_COMM_KINDS; i++) w->backward_comm_s[i] += share * w->forward_comm_s[i];
    }
  } else if (l->recompute == PTSIM_RECOMPUTE_SELECTIVE) {
    int i;
    w->recompute_s = attention_core.forward_s;
    w->backward_input_s += attention_core.forward_s;
    w->flops += attention_core.flops;
    for (i = 0; i < PTSIM_COMM_KINDS; i++) w->backward_comm_s[i] += attention_core.forward_comm_s[i];
  }
}

/* ---- embedding and output layer ---- */

/* Vocab-parallel lookup, then the TP reduction of the partial embeddings
 * (all-reduce, or reduce-scatter into the SP region); backward scatters
 * the gradient into the table. */
static PTSIM_HD void build_embedding(const Ctx *x, PtsimWork *w) {
  double bytes = (double)x->tokens * (double)x->job->model.hidden_size * ELEM;
  work_zero(w);
  add_elementwise(x, w, 2.0 * bytes);
  if (x->t > 1) {
    PtsimCollective kind = x->job->layout.sp ? PTSIM_COLL_REDUCE_SCATTER : PTSIM_COLL_ALL_REDUCE;
    add_comm(w, PTSIM_COMM_TP, tp_coll_s(x, kind, bytes),
             x->job->layout.sp ? tp_coll_s(x, PTSIM_COLL_ALL_GATHER, bytes) : 0.0);
  }
}

/* Final norm, the LM head GEMM (column-parallel over the vocabulary; a
 * tensor_parallel.ColumnParallelLinear outside Transformer Engine, so bf16
 * under FP8 too) and Megatron's vocab-parallel cross-entropy, an unfused chain of elementwise
 * passes over the (T, V/t) logits, each its own kernel through HBM
 * (bytes per logit):
 *   forward:  cast to fp32 (2 r + 4 w), row max (4 r), subtract the max
 *             (4 r + 4 w), exp (4 r + 4 w), row sum (4 r), divide into the
 *             softmax kept for backward (4 r + 4 w)          = 38
 *   backward: softmax minus one-hot (4 r + 4 w), times the loss gradient
 *             (4 r + 4 w), cast to bf16 for the GEMMs (4 r + 2 w) = 22
 * plus three small TP all-reduces of T floats (max, sum, target logit). */
static PTSIM_HD void build_head(const Ctx *x, PtsimWork *w) {
  const PtsimModel *m = &x->job->model;
  int64_t T = x->tokens, t = x->t, h = m->hidden_size;
  int64_t vocab_local = m->vocab_size / t;
  double logits = (double)T * (double)vocab_local;
  double head_s = ptsim_cost_gemm_s(&x->job->hw, x->params, outside_fp8(x), T, vocab_local, h);
  double small = 0.0;
  work_zero(w);
  add_elementwise(x, w, 2.0 * x->tokens_sp * (double)h * ELEM);
  add_tp_enter(x, w, head_s, 0);
  add_gemm_at(x, w, outside_fp8(x), T, vocab_local, h, INPUT_CAST);
  w->forward_s += ptsim_cost_memory_bound_s(&x->job->hw, logits * 38.0);
  w->backward_input_s += ptsim_cost_memory_bound_s(&x->job->hw, logits * 22.0);
  if (t > 1) small = 3.0 * tp_coll_s(x, PTSIM_COLL_ALL_REDUCE, (double)T * 4.0);
  add_comm(w, PTSIM_COMM_TP, small, 0.0);
}

/* ---- once per step ---- */

static PTSIM_HD void build_step_work(const Ctx *x, PtsimWorkload *out) {
  const PtsimJob *job = x->job;
  const PtsimLayout *l = &job->layout;
  const PtsimHardware *hw = &job->hw;
  double grad_bytes = l->fp32_grad_accumulation ? 4.0 : 2.0;
  double shards = (double)(l->dp * l->cp);
  int64_t s;
  for (s = 0; s < l->pp; s++) {
    double params = x->plan->stage_parameters[s];
    double local = l->distributed_optimizer ? params / shards : params;
    if (l->distributed_optimizer) {
      out->grad_sync_s[s] = ptsim_cost_collective_s(hw, x->params, PTSIM_COLL_REDUCE_SCATTER,
                                                    params * grad_bytes, x->dp_group);
      out->param_gather_s[s] = ptsim_cost_collective_s(hw, x->params, PTSIM_COLL_ALL_GATHER,
                                                       params * ELEM, x->dp_group);
    } else {
      out->grad_sync_s[s] = ptsim_cost_collective_s(hw, x->params, PTSIM_COLL_ALL_REDUCE,
                                                    params * grad_bytes, x->dp_group);
      out->param_gather_s[s] = 0.0;
    }
    /* Adam: read grad, master, m, v (4 B each), write master, m, v and the
     * bf16 copy; the gradient-norm pass reads the grads once more. */
    out->optimizer_s[s] = ptsim_cost_memory_bound_s(hw, local * (4.0 * 4.0 + 3.0 * 4.0 + ELEM + 4.0));
  }
}

/* ---- public ---- */

PTSIM_HD double ptsim_workload_megatron_flops(const PtsimJob *job) {
  const PtsimModel *m = &job->model;
  double h = (double)m->hidden_size, s = (double)job->layout.seq;
  double L = (double)m->num_layers;
  double gated = m->activation == PTSIM_ACTIVATION_SWIGLU ? 1.5 : 1.0;
  double attention = 1.0 + (double)m->num_query_groups / (double)m->num_attention_heads + s / h;
  double mlp = (double)m->ffn_hidden_size / h * gated;
  double logits = (double)m->vocab_size / (2.0 * L * h);
  return 12.0 * (double)job->layout.gbs * s * L * h * h * (attention + mlp + logits);
}

PTSIM_HD void ptsim_workload_chunk(const PtsimWorkload *w, int64_t stage, int64_t chunk,
                                   PtsimWork *out) {
  work_zero(out);
  work_add(out, &w->layer, (double)w->chunk_layers[stage]);
  if (stage == 0 && chunk == 0) work_add(out, &w->embedding, 1.0);
  if (stage == w->num_stages - 1 && chunk == w->num_chunks - 1) work_add(out, &w->head, 1.0);
}

PTSIM_HD void ptsim_workload_build(const PtsimPlan *plan, const PtsimCostParams *params,
                                   PtsimWorkload *out) {
  const PtsimJob *job = &plan->job;
  const PtsimLayout *l = &job->layout;
  PtsimCostParams defaults;
  Ctx x;
  int64_t s;
  double pp_bytes;
  if (!params) {
    ptsim_cost_params_default(&job->hw, &defaults);
    params = &defaults;
  }
  x.plan = plan;
  x.job = job;
  x.params = params;
  x.t = l->tp;
  x.c = l->cp;
  x.precision = l->precision;
  x.tokens = plan->tokens;
  x.tokens_sp = plan->tokens_sp;
  x.tp_group = &plan->groups[PTSIM_GROUP_TP];
  x.cp_group = &plan->groups[PTSIM_GROUP_CP];
  x.pp_group = &plan->groups[PTSIM_GROUP_PP];
  x.dp_group = &plan->groups[PTSIM_GROUP_DP_CP];

  out->num_stages = plan->num_stages;
  out->num_chunks = plan->num_chunks;
  out->num_microbatches = plan->num_microbatches;
  for (s = 0; s < l->pp; s++) out->chunk_layers[s] = plan->chunk_layers[s];
  build_layer(&x, &out->layer);
  build_embedding(&x, &out->embedding);
  build_head(&x, &out->head);
  pp_bytes = x.tokens_sp * (double)job->model.hidden_size * ELEM;
  out->pp_transfer_s = l->pp > 1 ? ptsim_cost_collective_s(&job->hw, params, PTSIM_COLL_SEND_RECV,
                                                           pp_bytes, x.pp_group)
                                 : 0.0;
  build_step_work(&x, out);
  out->model_flops = ptsim_workload_megatron_flops(job);
}
