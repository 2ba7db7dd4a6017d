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
 * grad).  bf16/fp16 tensors are 2 bytes, fp32 logits 4.
 *
 * FLOPs (PtsimWork.flops) are counted as Megatron-LM's formula counts them
 * (ptsim_workload_megatron_flops): 2mnk per GEMM pass, the attention core
 * as 4 b heads s_q s_kv d forward without causal halving and twice that
 * backward, whatever the kernel actually skips; recomputation adds its
 * forward.  So the engine's hardware FLOPs (HFU) are the model FLOPs (MFU)
 * plus the recomputed work, never fewer. */
#include <stddef.h>
#include "host_time.h"
#include "mamba.h"
#include "plan.h"
#include "workload.h"
#include "workload_int.h"

/* work_zero and work_add: the builders' own copies, inlined where the
 * engine asks for a chunk's work (ptsim_workload_chunk, per chunk and
 * layout); ptsim_work_zero / ptsim_work_add for workload_moe.c. */
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

PTSIM_HD void ptsim_work_zero(PtsimWork *w) { work_zero(w); }

PTSIM_HD void ptsim_work_add(PtsimWork *acc, const PtsimWork *w, double times) {
  work_add(acc, w, times);
}

/* ---- op builders: each adds one op's forward and backward to *w ---- */

/* A GEMM of forward shape (m, n, k) at `precision`.  In FP8 (Transformer
 * Engine's Linear) a cast kernel reads the bf16 input and writes it as fp8
 * with a transposed fp8 copy for wgrad; current scaling (tensorwise)
 * reads it once more for its amax first (TE docs, features/
 * low_precision_training/fp8_current_scaling.rst).  In backward the
 * output gradient comes in bf16 (from attention, the residual stream, or
 * Megatron's own activation) and is cast the same way.  The input of a TE
 * LayerNormLinear (Megatron's QKV and fc1; input_cast 0) comes from its
 * norm, whose kernel (TE pytorch/csrc/extensions/normalization.cpp)
 * writes fp8 itself under delayed scaling, writes bf16 and its amax under
 * current scaling (a cast without the amax pass follows), and writes bf16
 * for the block-scaled recipes (a plain cast follows); INPUT_QUANTIZED:
 * another GEMM's cast of the same input serves this one.  Weights are cast
 * once per step and cached across microbatches: not counted.  `groups`
 * GEMMs of this shape (an MoE layer's local experts: one grouped kernel
 * with --moe-grouped-gemm, else one GEMM each) cast `groups` times the
 * bytes.  te_layer: a Transformer Engine layer's GEMM, whose outputs
 * deterministic mode fills first (deterministic_fill). */
/* Under --deterministic-mode (torch.use_deterministic_algorithms(True))
 * PyTorch fills every tensor its empty() allocates before handing it out
 * (NaN; torch.utils.deterministic.fill_uninitialized_memory, on by
 * default: aten/src/ATen/native/cuda/TensorFactories.cu empty_cuda calls
 * fill_empty_deterministic_).  Transformer Engine allocates its GEMMs'
 * outputs with at::empty (pytorch/csrc: allocateTorchTensor, the
 * quantizers' create_tensor; GroupedLinear with torch.empty), so each
 * output is written once by the fill kernel and again by the GEMM: the
 * forward's m x n, the dgrad's m x k and, unless the wgrad accumulates
 * straight into main_grad (gradient-accumulation fusion), the wgrad's
 * k x n, all in the 16-bit activation dtype.  Megatron's own layers
 * (torch.matmul: outputs from ATen's structured kernels, not empty())
 * fill nothing.  One fill launch per output (per expert for the wgrads of
 * separate expert weights). */
static PTSIM_HD void deterministic_fill(const PtsimWorkCtx *x, PtsimWork *w, double g, int grouped,
                                        int64_t m, int64_t n, int64_t k) {
  const PtsimHardware *hw = &x->job->hw;
  const PtsimCostParams *p = x->params;
  double outputs = grouped ? 1.0 : g; /* one output tensor for a grouped GEMM's groups */
  double md = (double)m, nd = (double)n, kd = (double)k;
  if (!x->job->settings.deterministic || !x->job->settings.transformer_engine) return;
  w->forward_s += outputs * ptsim_cost_memory_bound_at_s(hw, p, ELEM * g / outputs * md * nd);
  w->backward_input_s += outputs *
                         ptsim_cost_memory_bound_at_s(hw, p, ELEM * g / outputs * md * kd);
  if (!x->job->settings.grad_accumulation_fusion)
    w->backward_weight_s += g * ptsim_cost_memory_bound_at_s(hw, p, ELEM * kd * nd);
}

static PTSIM_HD void gemm_groups(const PtsimWorkCtx *x, PtsimWork *w, PtsimPrecision precision,
                                 int64_t groups, int grouped, int64_t m, int64_t n, int64_t k,
                                 int input_cast, int te_layer) {
  const PtsimHardware *hw = &x->job->hw;
  const PtsimCostParams *p = x->params;
  PtsimGemmFormat f = precision == PTSIM_PRECISION_FP8 ? x->format : (PtsimGemmFormat)precision;
  double g = (double)groups;
  if (grouped) {
    w->forward_s += ptsim_cost_grouped_gemm_format_s(hw, p, f, groups, m, n, k);
    w->backward_input_s += ptsim_cost_grouped_gemm_format_s(hw, p, f, groups, m, k, n);
    w->backward_weight_s += ptsim_cost_grouped_gemm_format_s(hw, p, f, groups, k, n, m);
  } else {
    w->forward_s += g * ptsim_cost_gemm_format_s(hw, p, f, m, n, k);
    w->backward_input_s += g * ptsim_cost_gemm_format_s(hw, p, f, m, k, n);
    w->backward_weight_s += g * ptsim_cost_gemm_format_s(hw, p, f, k, n, m);
  }
  w->flops += 6.0 * g * (double)m * (double)n * (double)k;
  if (te_layer) deterministic_fill(x, w, g, grouped, m, n, k);
  if (precision == PTSIM_PRECISION_FP8 && ptsim_work_in_fp8(x)) {
    PtsimFp8Recipe recipe = x->job->settings.fp8_recipe;
    /* a cast reads the bf16 input and writes its row-wise and column-wise
     * quantized copies; current scaling (tensorwise) and NVFP4's per-tensor
     * scale read it once more for the amax first */
    double cast = ELEM + 2.0 * ptsim_fp8_element_bytes(recipe);
    double amax = recipe == PTSIM_FP8_TENSORWISE || recipe == PTSIM_FP8_NVFP4 ? ELEM : 0.0;
    if (input_cast == INPUT_CAST)
      w->forward_s += ptsim_cost_memory_bound_at_s(hw, p,
                                                   (cast + amax) * g * (double)m * (double)k);
    else if (input_cast == INPUT_QUANTIZED_BY_NORM && recipe != PTSIM_FP8_DELAYED)
      w->forward_s += ptsim_cost_memory_bound_at_s(hw, p, cast * g * (double)m * (double)k);
    w->backward_input_s += ptsim_cost_memory_bound_at_s(hw, p,
                                                        (cast + amax) * g * (double)m * (double)n);
  }
}

PTSIM_HD int ptsim_work_in_fp8(const PtsimWorkCtx *x) {
  return x->precision == PTSIM_PRECISION_FP8 && x->job->hw.peak_fp8_flops > 0.0;
}

PTSIM_HD void ptsim_work_gemm_at(const PtsimWorkCtx *x, PtsimWork *w, PtsimPrecision precision,
                                 int64_t m, int64_t n, int64_t k, int input_cast) {
  gemm_groups(x, w, precision, 1, 0, m, n, k, input_cast, 0);
}

PTSIM_HD void ptsim_work_gemm(const PtsimWorkCtx *x, PtsimWork *w, int64_t m, int64_t n, int64_t k,
                              int input_cast) {
  gemm_groups(x, w, x->precision, 1, 0, m, n, k, input_cast, 1);
}

PTSIM_HD void ptsim_work_grouped_gemm(const PtsimWorkCtx *x, PtsimWork *w, int64_t groups,
                                      int64_t m, int64_t n, int64_t k) {
  gemm_groups(x, w, x->precision, groups, x->job->settings.moe_grouped_gemm, m, n, k, INPUT_CAST,
              1);
}

PTSIM_HD PtsimPrecision ptsim_work_outside_fp8(const PtsimWorkCtx *x) {
  return x->precision == PTSIM_PRECISION_FP8 ? PTSIM_PRECISION_BF16 : x->precision;
}

/* A memory-bound op moving `bytes` forward (about twice that backward). */
PTSIM_HD void ptsim_work_elementwise(const PtsimWorkCtx *x, PtsimWork *w, double bytes) {
  w->forward_s += ptsim_cost_memory_bound_at_s(&x->job->hw, x->params, bytes);
  w->backward_input_s += ptsim_cost_memory_bound_at_s(&x->job->hw, x->params, 2.0 * bytes);
}

/* Blocking communication: forward time `fwd`, backward time `bwd`. */
PTSIM_HD void ptsim_work_comm(PtsimWork *w, PtsimCommKind kind, double fwd, double bwd) {
  w->forward_s += fwd;
  w->backward_input_s += bwd;
  w->forward_comm_s[kind] += fwd;
  w->backward_comm_s[kind] += bwd;
}

/* One collective in the TP group (0 without TP). */
PTSIM_HD static double tp_coll_s(const PtsimWorkCtx *x, PtsimCollective kind, double bytes) {
  if (x->t <= 1) return 0.0;
  return ptsim_cost_collective_s(&x->job->hw, x->params, kind, bytes, x->tp_group);
}

/* How a TP collective meets the GEMM next to it (--tp-comm-overlap and its
 * parts, Transformer Engine userbuffers; only with sequence parallelism,
 * which Megatron-LM requires for it). */
typedef enum {
  TP_EXPOSED = 0, /* the compute stream waits for all of it */
  TP_PIPELINED,   /* split into t chunks pipelined with the GEMM (ring exchange,
                     split reduce-scatter): the first chunk is exposed, the rest
                     hides behind the GEMM as far as it lasts */
  TP_BULK         /* run beside an independent GEMM: exposed only where it
                     outlasts it */
} TpOverlap;

static PTSIM_HD double tp_exposed(const PtsimWorkCtx *x, TpOverlap how, double comm_s,
                                  double gemm_s) {
  double rest, hidden;
  if (!x->job->settings.tp_comm_overlap || !x->job->layout.sp || x->t <= 1 || how == TP_EXPOSED)
    return comm_s;
  if (how == TP_BULK) return comm_s > gemm_s ? comm_s - gemm_s : 0.0;
  rest = comm_s * (double)(x->t - 1) / (double)x->t;
  hidden = gemm_s * (double)(x->t - 1) / (double)x->t;
  return comm_s / (double)x->t + (rest > hidden ? rest - hidden : 0.0);
}

/* The TP collective entering a column-parallel GEMM, for `bytes` of bf16
 * activations.  `te_layer`: a Transformer Engine (LayerNorm)Linear (QKV,
 * fc1, an MoE layer's shared experts, MLA's up projections, MTP's
 * projection), which may use userbuffers and in FP8 gathers its input
 * quantized (1 byte an element, TE's gather_along_first_dim or userbuffers
 * fill with the input quantizer; the gradients stay bf16); 0: the head,
 * Megatron's own ColumnParallelLinear.
 * SP all-gather forward (pipelined with the GEMM under _ag) / reduce-
 * scatter of the input gradient backward (in bulk behind the wgrad GEMM
 * under _bulk_dgrad, pipelined with the dgrad GEMM under _rs_dgrad);
 * without SP nothing forward and an all-reduce backward.  The backward
 * re-gather of the input for the wgrad GEMM is not counted: Megatron and
 * TE run it asynchronously beside the dgrad GEMM, with userbuffers or
 * without. */
PTSIM_HD void ptsim_work_tp_enter(const PtsimWorkCtx *x, PtsimWork *w, double gemm_s, int te_layer,
                                  double bytes) {
  const PtsimLayout *l = &x->job->layout;
  const PtsimSettings *run = &x->job->settings;
  double gathered = te_layer && ptsim_work_in_fp8(x) ? bytes / ELEM : bytes;
  TpOverlap back = !te_layer                       ? TP_EXPOSED
                   : run->tp_comm_overlap_rs_dgrad ? TP_PIPELINED
                   : run->tp_comm_bulk_dgrad       ? TP_BULK
                                                   : TP_EXPOSED;
  if (x->t <= 1) return;
  if (l->sp)
    ptsim_work_comm(w, PTSIM_COMM_TP,
                    tp_exposed(x, te_layer && run->tp_comm_overlap_ag ? TP_PIPELINED : TP_EXPOSED,
                               tp_coll_s(x, PTSIM_COLL_ALL_GATHER, gathered), gemm_s),
                    tp_exposed(x, back, tp_coll_s(x, PTSIM_COLL_REDUCE_SCATTER, bytes), gemm_s));
  else
    ptsim_work_comm(w, PTSIM_COMM_TP, 0.0, tp_coll_s(x, PTSIM_COLL_ALL_REDUCE, bytes));
}

/* The TP collective leaving a row-parallel GEMM (O, fc2): SP
 * reduce-scatter forward (pipelined under _rs) / all-gather of the output
 * gradient backward (pipelined with the dgrad GEMM under _ag); without SP
 * an all-reduce forward and nothing backward. */
PTSIM_HD void ptsim_work_tp_leave(const PtsimWorkCtx *x, PtsimWork *w, double gemm_s) {
  const PtsimLayout *l = &x->job->layout;
  const PtsimSettings *run = &x->job->settings;
  double bytes = (double)x->tokens * (double)x->job->model.hidden_size * ELEM;
  if (x->t <= 1) return;
  if (l->sp)
    ptsim_work_comm(w, PTSIM_COMM_TP,
                    tp_exposed(x, run->tp_comm_overlap_rs ? TP_PIPELINED : TP_EXPOSED,
                               tp_coll_s(x, PTSIM_COLL_REDUCE_SCATTER, bytes), gemm_s),
                    tp_exposed(x, run->tp_comm_overlap_ag ? TP_PIPELINED : TP_EXPOSED,
                               tp_coll_s(x, PTSIM_COLL_ALL_GATHER, bytes), gemm_s));
  else
    ptsim_work_comm(w, PTSIM_COMM_TP, tp_coll_s(x, PTSIM_COLL_ALL_REDUCE, bytes), 0.0);
}

PTSIM_HD double ptsim_work_gemm_fwd_s(const PtsimWorkCtx *x, int64_t m, int64_t n, int64_t k) {
  return ptsim_cost_gemm_format_s(&x->job->hw, x->params, x->format, m, n, k);
}

/* The T x h activations a transformer layer's TP collectives move. */
static PTSIM_HD double tp_activation_bytes(const PtsimWorkCtx *x) {
  return (double)x->tokens * (double)x->job->model.hidden_size * ELEM;
}

/* FLOPs of the attention core as Megatron-LM's formula counts them (the
 * header comment): QK^T and PV, 2 * 2 b heads s_q s_kv d forward, backward
 * twice the forward; no causal halving, but for the models counted with
 * Megatron's current formula (attention_flop_share 0.5). */
static PTSIM_HD double attention_formula_flops(const PtsimWorkCtx *x, int64_t b, int64_t heads,
                                               int64_t s_q, int64_t s_kv, int64_t d) {
  return 3.0 * 4.0 * (double)b * (double)heads * (double)s_q * (double)s_kv * (double)d *
         x->attention_flop_share;
}

/* Attention without FlashAttention (Megatron before it, --transformer-impl
 * local, --attention-backend unfused): the full s x s scores are
 * materialised -- batched GEMMs for QK^T and softmax x V (no causal
 * skipping), the fused scale-mask-softmax and, with attention dropout, a
 * dropout pass, each moving the b x heads x s x s tensor through HBM.
 * Selective recompute of core_attn re-runs exactly this part (Korthikanti
 * et al. 2022). */
static PTSIM_HD void add_unfused_attention(const PtsimWorkCtx *x, PtsimWork *w,
                                           PtsimWork *recompute_into, int64_t heads, int64_t d) {
  int64_t b = x->job->layout.mbs, s = x->plan->local_seq;
  double scores = (double)b * (double)heads * (double)s * (double)s;
  PtsimWork part;
  work_zero(&part);
  ptsim_work_gemm_at(x, &part, ptsim_work_outside_fp8(x), b * heads * s, s, d,
                     INPUT_CAST);                        /* Q K^T */
  ptsim_work_elementwise(x, &part, 2.0 * ELEM * scores); /* softmax: read + write */
  /* Attention sinks on Megatron's local layers: FusedScaleMaskSoftmax
   * takes PyTorch's softmax (its kernel needs softmax_offset None,
   * fusions/fused_softmax.py at d98e8a64): the causal mask filled in (read,
   * the bool mask, write) and SoftmaxOne's sink column concatenated (read,
   * write) before the softmax */
  if (!x->job->settings.transformer_engine && x->job->model.softmax_type != PTSIM_SOFTMAX_VANILLA)
    ptsim_work_elementwise(x, &part, (4.0 * ELEM + 1.0) * scores);
  if (x->job->source.attention_dropout > 0.0)
    ptsim_work_elementwise(x, &part, (2.0 * ELEM + 1.0) * scores); /* mask + scale */
  ptsim_work_gemm_at(x, &part, ptsim_work_outside_fp8(x), b * heads * s, d, s,
                     INPUT_CAST); /* P V */
  work_add(w, &part, 1.0);
  if (recompute_into) {
    recompute_into->forward_s += part.forward_s;
    recompute_into->flops += part.flops / 3.0;
  }
}

/* Sliding-window layers: a layer's attention is the mean over the model's
 * layers, window_layers of them windowed (which layers a stage holds is
 * not told apart: the pattern alternates finely in the models that use
 * it).  Context parallelism keeps the full kernel's price. */
static PTSIM_HD void window_attention(const PtsimWorkCtx *x, int64_t b, int64_t heads,
                                      int64_t head_dim, double *fwd, double *bwd) {
  const PtsimModel *m = &x->job->model;
  int64_t s = x->job->layout.seq;
  double f;
  if (m->window_size <= 0 || m->window_layers <= 0 || m->num_layers <= 0) return;
  f = (double)m->window_layers / (double)m->num_layers;
  *fwd = (1.0 - f) * *fwd + f * ptsim_cost_attention_window_s(&x->job->hw, x->params, x->attention,
                                                              b, heads, s, head_dim, m->window_size,
                                                              0);
  *bwd = (1.0 - f) * *bwd + f * ptsim_cost_attention_window_s(&x->job->hw, x->params, x->attention,
                                                              b, heads, s, head_dim, m->window_size,
                                                              1);
}

/* Flash attention with the context-parallel ring.  With load-balanced CP
 * (Megatron splits the sequence into 2c chunks) each rank does 1/c of the
 * causal work as c/2 full (s/c x s/c) blocks, and the ring sends K and V
 * (c-1 steps) while it computes; backward also returns dK, dV.  Without CP
 * it is the plain causal kernel over s.  It runs in bf16 even in fp8
 * training (Transformer Engine keeps attention in bf16 by default). */
PTSIM_HD void ptsim_work_attention(const PtsimWorkCtx *x, PtsimWork *w, PtsimWork *recompute_into,
                                   int64_t heads, int64_t head_dim, double kv_width) {
  const PtsimHardware *hw = &x->job->hw;
  int64_t b = x->job->layout.mbs, s = x->job->layout.seq;
  /* this CP rank's queries against the whole sequence, as the formula counts */
  double flops = attention_formula_flops(x, b, heads, s / x->c, s, head_dim);
  double fwd, bwd;
  if (!x->job->settings.flash_attention) {
    add_unfused_attention(x, w, recompute_into, heads, head_dim);
    return;
  }
  if (x->c <= 1) {
    fwd = ptsim_cost_attention_kernel_s(hw, x->params, x->attention, PTSIM_PRECISION_BF16, b, heads,
                                        s, s, head_dim, 1, 0);
    bwd = ptsim_cost_attention_kernel_s(hw, x->params, x->attention, PTSIM_PRECISION_BF16, b, heads,
                                        s, s, head_dim, 1, 1);
    window_attention(x, b, heads, head_dim, &fwd, &bwd);
  } else {
    ptsim_work_cp_attention(x, w, recompute_into, heads, head_dim, kv_width, &fwd, &bwd);
  }
  /* deterministic mode fills the outputs Transformer Engine's attention
   * allocates with at::empty (deterministic_fill): the output forward, the
   * query, key and value gradients backward (one tensor each) */
  if (x->job->settings.deterministic && x->job->settings.transformer_engine) {
    double rows = (double)b * (double)(s / x->c);
    fwd += ptsim_cost_memory_bound_at_s(hw, x->params, ELEM * rows * (double)(heads * head_dim));
    bwd += ptsim_cost_memory_bound_at_s(hw, x->params, ELEM * rows * (double)(heads * head_dim)) +
           2.0 * ptsim_cost_memory_bound_at_s(hw, x->params, ELEM * rows * kv_width);
  }
  w->forward_s += fwd;
  w->backward_input_s += bwd;
  w->flops += flops;
  if (recompute_into) {
    recompute_into->forward_s += fwd;
    recompute_into->flops += flops / 3.0;
  }
}

/* ---- the transformer layer ---- */

/* Without --gradient-accumulation-fusion the wgrad GEMMs write a bf16
 * gradient that is then added into the main-grad buffer: one more
 * memory-bound pass per microbatch over `params` (read the bf16 gradient,
 * read and write main_grad), in W (Megatron tensor_parallel/layers.py). */
PTSIM_HD void ptsim_work_grad_accumulation(const PtsimWorkCtx *x, PtsimWork *w, double params) {
  if (x->job->settings.grad_accumulation_fusion) return;
  w->backward_weight_s += ptsim_cost_memory_bound_at_s(&x->job->hw, x->params,
                                                       params * (ELEM + 2.0 * x->plan->grad_bytes));
}

/* Selective recomputation re-runs `redo`'s forward inside B. */
PTSIM_HD void ptsim_work_redo(PtsimWork *w, const PtsimWork *redo) {
  int i;
  w->recompute_s += redo->forward_s;
  w->backward_input_s += redo->forward_s;
  w->flops += redo->flops;
  for (i = 0; i < PTSIM_COMM_KINDS; i++) w->backward_comm_s[i] += redo->forward_comm_s[i];
}

/* The attention block of a layer (QKV: TE LayerNormLinear, O: TE Linear),
 * from the input norm (`norm`, its work) to the residual add, into w;
 * selective recompute of core_attn and of local norms into redo. */
static PTSIM_HD void build_attention_block(const PtsimWorkCtx *x, PtsimWork *w, PtsimWork *redo,
                                           const PtsimWork *norm) {
  const PtsimModel *m = &x->job->model;
  const PtsimSettings *run = &x->job->settings;
  const PtsimProvenance *src = &x->job->source;
  int64_t T = x->tokens, t = x->t, h = m->hidden_size, q = x->q, kv = x->kv;
  double residual_bytes = x->tokens_sp * (double)h *
                          (3.0 * ELEM + (src->hidden_dropout > 0.0 ? 1.0 : 0.0));
  double qkv_s = ptsim_work_gemm_fwd_s(x, T, (q + 2 * kv) / t, h);
  double o_s = ptsim_work_gemm_fwd_s(x, T, h, q / t);
  int selective = run->recompute == PTSIM_RECOMPUTE_SELECTIVE;
  int redo_attention = selective && (run->recompute_modules & PTSIM_RECOMPUTE_CORE_ATTN);
  /* a norm is recomputed only where it is its own module (memory.c) */
  int redo_norms = selective && (run->recompute_modules & PTSIM_RECOMPUTE_LAYERNORM) &&
                   !run->transformer_engine;
  int64_t groups = m->num_query_groups / t > 0 ? m->num_query_groups / t : 1;
  /* QKV's input comes from the norm fused into TE's LayerNormLinear;
   * Megatron's local layers run the norm on its own */
  int norm_cast = run->transformer_engine ? INPUT_QUANTIZED_BY_NORM : INPUT_CAST;
  work_add(w, norm, 1.0);
  if (redo_norms) work_add(redo, norm, 1.0);
  if (m->multi_latent_attention) {
    ptsim_work_mla(x, w, redo);
  } else {
    ptsim_work_tp_enter(x, w, qkv_s, 1, tp_activation_bytes(x));
    ptsim_work_linear(x, w, T, (q + 2 * kv) / t, h, norm_cast, PTSIM_LORA_QKV, 1);
    if (m->qk_layernorm) /* norms over the heads of q and k */
      ptsim_work_elementwise(x, w, 2.0 * (double)T * (double)(q + kv) / (double)t * ELEM);
    if (ptsim_plan_position_embedding(m) == PTSIM_POSITION_ROPE) /* RoPE on q and k */
      ptsim_work_elementwise(x, w, 2.0 * (double)T * (double)(q + kv) / (double)t * ELEM);
    ptsim_work_attention(x, w, redo_attention ? redo : NULL, m->num_attention_heads / t, x->d,
                         (double)(x->d * groups));
    ptsim_work_linear(x, w, T, h, q / t, INPUT_CAST, PTSIM_LORA_PROJ, 0);
    ptsim_work_tp_leave(x, w, o_s);
  }
  ptsim_work_elementwise(x, w, residual_bytes); /* bias-dropout-add */
}

PTSIM_HD void ptsim_work_full_recompute(const PtsimWorkCtx *x, PtsimWork *w) {
  const PtsimSettings *run = &x->job->settings;
  double share = 1.0;
  int i;
  /* Block recompute: the share of a chunk's layers that is recomputed
   * (stage 0's chunk stands for every stage: one layer cost for all). */
  int64_t chunk_layers = x->plan->chunk_layers[0];
  if (run->recompute_num_layers > 0 && run->recompute_method == PTSIM_RECOMPUTE_METHOD_BLOCK &&
      x->plan->stage_layers[0] > 0) {
    int64_t n = run->recompute_num_layers < chunk_layers ? run->recompute_num_layers : chunk_layers;
    share = chunk_layers > 0 ? (double)n / (double)chunk_layers : 1.0;
  }
  w->recompute_s = share * w->forward_s;
  w->backward_input_s += w->recompute_s;
  w->flops += share * w->flops / 3.0;
  for (i = 0; i < PTSIM_COMM_KINDS; i++) w->backward_comm_s[i] += share * w->forward_comm_s[i];
}

/* The MLP block of a layer (fc1: TE LayerNormLinear; Megatron's own
 * activation kernel, bf16 out; fc2: TE Linear), from its norm to fc2's
 * reduction, into w; under recompute_modules mlp everything from the norm
 * (fused into fc1 by Transformer Engine) to fc2's reduction re-runs (into
 * redo), and the local norms (`norm`, their work) under layernorm. */
static PTSIM_HD void build_mlp_block(const PtsimWorkCtx *x, PtsimWork *w, PtsimWork *redo,
                                     const PtsimWork *norm) {
  const PtsimModel *m = &x->job->model;
  const PtsimSettings *run = &x->job->settings;
  int64_t T = x->tokens, t = x->t, h = m->hidden_size;
  int64_t fc1_out = (m->activation == PTSIM_ACTIVATION_SWIGLU ? 2 : 1) * m->ffn_hidden_size;
  double norm_bytes = 2.0 * x->tokens_sp * (double)h * ELEM;
  double ffn_local = (double)T * (double)m->ffn_hidden_size / (double)t;
  double fc1_s = ptsim_work_gemm_fwd_s(x, T, fc1_out / t, h);
  double fc2_s = ptsim_work_gemm_fwd_s(x, T, h, m->ffn_hidden_size / t);
  int selective = run->recompute == PTSIM_RECOMPUTE_SELECTIVE;
  int redo_mlp = selective && (run->recompute_modules & PTSIM_RECOMPUTE_MLP);
  int redo_norms = selective && (run->recompute_modules & PTSIM_RECOMPUTE_LAYERNORM) &&
                   !run->transformer_engine;
  /* fc1's input comes from the norm fused into TE's LayerNormLinear;
   * Megatron's local layers run the norm on its own */
  int norm_cast = run->transformer_engine ? INPUT_QUANTIZED_BY_NORM : INPUT_CAST;
  PtsimWork mlp;
  work_zero(&mlp);
  ptsim_work_elementwise(x, &mlp, norm_bytes);
  if (redo_norms) work_add(redo, norm, 1.0);
  ptsim_work_tp_enter(x, &mlp, fc1_s, 1, tp_activation_bytes(x));
  ptsim_work_linear(x, &mlp, T, fc1_out / t, h, norm_cast, PTSIM_LORA_FC1, 1);
  ptsim_work_elementwise(x, &mlp, ptsim_plan_activation_elements(m) * ffn_local * ELEM);
  ptsim_work_linear(x, &mlp, T, h, m->ffn_hidden_size / t, INPUT_CAST, PTSIM_LORA_FC2, 0);
  ptsim_work_tp_leave(x, &mlp, fc2_s);
  work_add(w, &mlp, 1.0);
  if (redo_mlp) {
    if (!run->transformer_engine) { /* the local norm sits outside the MLP */
      mlp.forward_s -= norm->forward_s;
    }
    mlp.flops /= 3.0; /* the forward of what re-runs */
    work_add(redo, &mlp, 1.0);
  }
}

/* A dense layer: attention, then the MLP. */
static PTSIM_HD void build_layer(const PtsimWorkCtx *x, PtsimWork *w) {
  const PtsimModel *m = &x->job->model;
  const PtsimSettings *run = &x->job->settings;
  const PtsimProvenance *src = &x->job->source;
  int64_t h = m->hidden_size;
  double norm_bytes = 2.0 * x->tokens_sp * (double)h * ELEM;
  double residual_bytes = x->tokens_sp * (double)h *
                          (3.0 * ELEM + (src->hidden_dropout > 0.0 ? 1.0 : 0.0));
  int selective = run->recompute == PTSIM_RECOMPUTE_SELECTIVE;
  PtsimWork redo, norm;
  work_zero(w);
  work_zero(&redo);
  work_zero(&norm);
  ptsim_work_elementwise(x, &norm, norm_bytes);
  build_attention_block(x, w, &redo, &norm);
  build_mlp_block(x, w, &redo, &norm);
  ptsim_work_elementwise(x, w, residual_bytes);
  /* the trainable parameters' (LoRA: the adapters alone) */
  ptsim_work_grad_accumulation(x, w,
                               x->job->settings.lora_rank > 0 ? x->plan->lora_layer_parameters
                                                              : x->plan->layer_parameters);
  ptsim_work_offload(x, w, 0);

  /* Recomputation re-runs forward work inside B. */
  if (run->recompute == PTSIM_RECOMPUTE_FULL)
    ptsim_work_full_recompute(x, w);
  else if (selective)
    ptsim_work_redo(w, &redo);
}

/* A hybrid pattern's sub-layer other than a Mamba mixer (workload_mamba.c):
 * attention alone ('*', its block ends with the residual), the MLP alone
 * ('-') or the MoE block alone ('E'), each with its own pre-norm and
 * residual; its parameters' gradient accumulation and recomputation as a
 * transformer layer's (offloading is not applied to hybrid layers,
 * memory.c). */
static PTSIM_HD void build_hybrid_sublayer(const PtsimWorkCtx *x, char kind, PtsimWork *w) {
  const PtsimSettings *run = &x->job->settings;
  const PtsimLayout *l = &x->job->layout;
  double h = (double)x->job->model.hidden_size;
  double residual_bytes = x->tokens_sp * h *
                          (3.0 * ELEM + (x->job->source.hidden_dropout > 0.0 ? 1.0 : 0.0));
  int64_t ep = l->ep > 0 ? l->ep : 1, etp = l->etp > 0 ? l->etp : l->tp;
  PtsimWork redo, norm;
  work_zero(w);
  work_zero(&redo);
  work_zero(&norm);
  ptsim_work_elementwise(x, &norm, 2.0 * x->tokens_sp * h * ELEM);
  if (kind == PTSIM_HYBRID_ATTENTION) {
    build_attention_block(x, w, &redo, &norm);
  } else {
    if (kind == PTSIM_HYBRID_MLP)
      build_mlp_block(x, w, &redo, &norm);
    else
      ptsim_work_moe_block(x, w, &redo);
    ptsim_work_elementwise(x, w, residual_bytes);
  }
  ptsim_work_grad_accumulation(x, w,
                               ptsim_plan_hybrid_layer_parameters(&x->job->model, kind, l->tp, ep,
                                                                  etp, NULL));
  if (run->recompute == PTSIM_RECOMPUTE_FULL)
    ptsim_work_full_recompute(x, w);
  else if (run->recompute == PTSIM_RECOMPUTE_SELECTIVE)
    ptsim_work_redo(w, &redo);
}

/* An MoE layer: attention, then the MoE block (workload_moe.c). */
static PTSIM_HD void build_moe_layer(const PtsimWorkCtx *x, PtsimWork *w) {
  const PtsimSettings *run = &x->job->settings;
  const PtsimProvenance *src = &x->job->source;
  double h = (double)x->job->model.hidden_size;
  double residual_bytes = x->tokens_sp * h * (3.0 * ELEM + (src->hidden_dropout > 0.0 ? 1.0 : 0.0));
  PtsimWork redo, norm, moe;
  work_zero(w);
  work_zero(&redo);
  work_zero(&norm);
  work_zero(&moe);
  ptsim_work_elementwise(x, &norm, 2.0 * x->tokens_sp * h * ELEM);
  build_attention_block(x, w, &redo, &norm);
  ptsim_work_moe_block(x, &moe, &redo);
  work_add(w, &moe, 1.0);
  ptsim_work_elementwise(x, w, residual_bytes);
  ptsim_work_grad_accumulation(x, w, x->plan->moe_layer_parameters);
  ptsim_work_offload(x, w, 1);
  if (run->recompute == PTSIM_RECOMPUTE_FULL)
    ptsim_work_full_recompute(x, w);
  else if (run->recompute == PTSIM_RECOMPUTE_SELECTIVE)
    ptsim_work_redo(w, &redo);
}

/* ---- embedding and output layer ---- */

/* Vocab-parallel lookup, then the TP reduction of the partial embeddings
 * (all-reduce, or reduce-scatter into the SP region); backward scatters
 * the gradient into the table. */
static PTSIM_HD void build_embedding(const PtsimWorkCtx *x, PtsimWork *w) {
  double bytes = (double)x->tokens * (double)x->job->model.hidden_size * ELEM;
  work_zero(w);
  ptsim_work_elementwise(x, w, 2.0 * bytes);
  if (x->t > 1) {
    PtsimCollective kind = x->job->layout.sp ? PTSIM_COLL_REDUCE_SCATTER : PTSIM_COLL_ALL_REDUCE;
    ptsim_work_comm(w, PTSIM_COMM_TP, tp_coll_s(x, kind, bytes),
                    x->job->layout.sp ? tp_coll_s(x, PTSIM_COLL_ALL_GATHER, bytes) : 0.0);
  }
}

/* Final norm, the LM head GEMM (column-parallel over the vocabulary; a
 * tensor_parallel.ColumnParallelLinear outside Transformer Engine, so bf16
 * under FP8 too) and Megatron's vocab-parallel cross-entropy over the
 * (T, V/t) logits, in bytes per logit
 * (megatron/core/tensor_parallel/cross_entropy.py):
 *   unfused, each step its own kernel through HBM:
 *   forward:  cast to fp32 (2 r + 4 w), row max (4 r), subtract the max
 *             (4 r + 4 w), exp (4 r + 4 w), row sum (4 r), divide into the
 *             softmax kept for backward (4 r + 4 w)          = 38
 *   backward: softmax minus one-hot (4 r + 4 w), times the loss gradient
 *             (4 r + 4 w), cast to bf16 for the GEMMs (4 r + 2 w) = 22
 *   plus three small TP all-reduces of T floats (max, sum, target logit);
 *   fused (--cross-entropy-loss-fusion, core/fusions/fused_cross_entropy.py:
 *   three jit-fused kernels forward, one backward):
 *   forward:  cast + max (2 r + 4 w), subtract + exp + sum (4 r + 4 w),
 *             divide (4 r + 4 w)                              = 22
 *   backward: one-hot, scale and cast in one pass (4 r + 2 w)  = 6
 *   plus two all-reduces (max; target logit and sum batched).
 * Both keep the fp32 softmax for backward, so memory is the same. */
static PTSIM_HD void build_head(const PtsimWorkCtx *x, PtsimWork *w) {
  const PtsimModel *m = &x->job->model;
  int64_t T = x->tokens, t = x->t, h = m->hidden_size;
  int64_t vocab_local = m->vocab_size / t;
  int fused = x->job->settings.cross_entropy_fusion;
  int lora = x->job->settings.lora_rank > 0;
  double logits = (double)T * (double)vocab_local;
  double head_s = ptsim_cost_gemm_s(&x->job->hw, x->params, ptsim_work_outside_fp8(x), T,
                                    vocab_local, h);
  double small = 0.0;
  work_zero(w);
  ptsim_work_elementwise(x, w, 2.0 * x->tokens_sp * (double)h * ELEM);
  double wgrad_s;
  ptsim_work_tp_enter(x, w, head_s, 0, tp_activation_bytes(x));
  wgrad_s = w->backward_weight_s;
  ptsim_work_gemm_at(x, w, ptsim_work_outside_fp8(x), T, vocab_local, h, INPUT_CAST);
  if (lora) { /* LoRA: the output layer is frozen, no wgrad GEMM (workload_lora.c) */
    w->backward_weight_s = wgrad_s;
    w->flops -= 2.0 * (double)T * (double)vocab_local * (double)h;
  }
  w->forward_s += ptsim_cost_memory_bound_at_s(&x->job->hw, x->params,
                                               logits * (fused ? 22.0 : 38.0));
  w->backward_input_s += ptsim_cost_memory_bound_at_s(&x->job->hw, x->params,
                                                      logits * (fused ? 6.0 : 22.0));
  if (t > 1) small = (fused ? 2.0 : 3.0) * tp_coll_s(x, PTSIM_COLL_ALL_REDUCE, (double)T * 4.0);
  ptsim_work_comm(w, PTSIM_COMM_TP, small, 0.0);
  if (!lora) ptsim_work_grad_accumulation(x, w, (double)vocab_local * (double)h);
}

/* ---- once per step ---- */

/* The gradient reduction and parameter gather of one stage, replicated or
 * ZeRO-1 (ZeRO-2/3: workload_shard.c).  With N distributed-optimizer
 * instances (--num-distributed-optimizer-instances) the reduce-scatter and
 * the gather stay inside an instance of dp*cp/N consecutive ranks, and the
 * instances all-reduce their shards (Megatron's param_and_grad_buffer.py). */
static PTSIM_HD void stage_dp_comm(const PtsimWorkCtx *x, double params, double *sync_s,
                                   double *gather_s) {
  const PtsimJob *job = x->job;
  const PtsimSettings *run = &job->settings;
  const PtsimHardware *hw = &job->hw;
  const PtsimPlan *plan = x->plan;
  double grad = params * plan->grad_bytes;
  double weight = params *
                  (run->precision == PTSIM_PRECISION_FP8 && run->fp8_param_gather ? 1.0 : ELEM);
  const PtsimGroup *intra = &plan->shard_group, *inter = &plan->replicate_group;
  *sync_s = *gather_s = 0.0;
  if (plan->zero_stage == 0) {
    *sync_s = ptsim_cost_collective_s(hw, x->params, PTSIM_COLL_ALL_REDUCE, grad, x->dp_group);
    return;
  }
  *sync_s = ptsim_cost_collective_s(hw, x->params, PTSIM_COLL_REDUCE_SCATTER, grad, intra);
  if (inter->size > 1)
    *sync_s += ptsim_cost_collective_s(hw, x->params, PTSIM_COLL_ALL_REDUCE,
                                       grad / (double)intra->size, inter);
  *gather_s = ptsim_cost_collective_s(hw, x->params, PTSIM_COLL_ALL_GATHER, weight, intra);
}

/* An MoE model's expert parameters reduce their gradients over the expert
 * data-parallel group (and gather over it with the distributed optimizer),
 * after the dense ones (ZeRO-2/3: workload_shard.c); the weights TP ranks
 * replicate (the router, MLA's down projections and latent norms)
 * all-reduce their gradients over TP. */
static PTSIM_HD void stage_moe_comm(const PtsimWorkCtx *x, int64_t stage, double *sync_s,
                                    double *gather_s) {
  const PtsimLayout *l = &x->job->layout;
  const PtsimSettings *run = &x->job->settings;
  const PtsimModel *m = &x->job->model;
  const PtsimHardware *hw = &x->job->hw;
  const PtsimGroup *edp = &x->plan->groups[PTSIM_GROUP_EDP];
  double experts = x->plan->stage_expert_parameters[stage];
  double grad = experts * x->plan->grad_bytes;
  double weight = experts *
                  (run->precision == PTSIM_PRECISION_FP8 && run->fp8_param_gather ? 1.0 : ELEM);
  double h = (double)m->hidden_size, replicated = 0.0;
  if (x->plan->zero_stage >= 2) {
    /* the experts' share is the units' (workload_shard.c) */
  } else if (l->distributed_optimizer) {
    *sync_s += ptsim_cost_collective_s(hw, x->params, PTSIM_COLL_REDUCE_SCATTER, grad, edp);
    *gather_s += ptsim_cost_collective_s(hw, x->params, PTSIM_COLL_ALL_GATHER, weight, edp);
  } else {
    *sync_s += ptsim_cost_collective_s(hw, x->params, PTSIM_COLL_ALL_REDUCE, grad, edp);
  }
  if (x->t <= 1) return;
  replicated = (double)x->plan->stage_moe_layers[stage] * (double)m->num_experts * h;
  if (m->multi_latent_attention)
    replicated += (double)x->plan->stage_layers[stage] *
                  (h * (double)(m->q_lora_rank + m->kv_lora_rank + m->qk_pos_emb_head_dim) +
                   (m->qk_layernorm ? (double)(m->q_lora_rank + m->kv_lora_rank) : 0.0));
  *sync_s += tp_coll_s(x, PTSIM_COLL_ALL_REDUCE, replicated * x->plan->grad_bytes);
}

/* Megatron-LM's finalize_model_grads (distributed/finalize_model_grads.py,
 * _allreduce_word_embedding_grads) all-reduces the tied word embedding's
 * main gradient between the first and the last pipeline stage (the
 * embedding group parallel_state.py builds from each pipeline group's ends)
 * once per step, after finish_grad_sync and before the optimizer, blocking
 * on the default stream: whole (vocab / tp) x h even with the distributed
 * optimizer, the local shard with Megatron-FSDP.  Each tp x cp x dp rank of
 * the first stage pairs with its twin on the last, ranks r and
 * r + (pp-1)*tp*cp*dp: the pipeline group of a layout with two stages and
 * dp*(pp-1) replicas, whose placement on nodes the topology gives.  With
 * MTP layers the last stage's copy is the MTP block's embedding, reduced
 * the same way tied or not (_get_shared_word_embedding_weight).  The
 * position table's group is the first stage alone (default_position_
 * embedding_ranks), so its all-reduce is a no-op. */
static PTSIM_HD double embedding_grad_sync_s(const PtsimWorkCtx *x) {
  const PtsimJob *job = x->job;
  const PtsimLayout *l = &job->layout;
  const PtsimModel *m = &job->model;
  PtsimGroup group;
  double grad;
  if ((!m->tied_embeddings && m->mtp_num_layers <= 0) || l->pp <= 1 || job->settings.lora_rank > 0)
    return 0.0;
  grad = (double)m->hidden_size * (double)m->vocab_size / (double)l->tp * x->plan->grad_bytes;
  if (x->plan->zero_stage >= 2) grad /= x->plan->grad_shards;
  ptsim_topology_group_of(l->tp, l->cp, l->dp * (l->pp - 1), 2,
                          ptsim_topology_domain_size(&job->hw), PTSIM_GROUP_PP, 0, &group);
  return ptsim_cost_collective_s(&job->hw, x->params, PTSIM_COLL_ALL_REDUCE, grad, &group);
}

static PTSIM_HD void build_step_work(const PtsimWorkCtx *x, PtsimWorkload *out) {
  const PtsimJob *job = x->job;
  const PtsimLayout *l = &job->layout;
  const PtsimPlan *plan = x->plan;
  double states = plan->master_bytes + plan->exp_avg_bytes + plan->exp_avg_sq_bytes;
  int moe = job->model.num_experts > 0 || job->model.multi_latent_attention;
  int64_t s;
  for (s = 0; s < l->pp; s++) {
    /* the trainable parameters (LoRA: the adapters alone) reduce their
     * gradients, gather their updates and step */
    double params = plan->stage_trainable_parameters[s], experts = 0.0;
    double local = params / plan->optimizer_shards;
    if (moe) {
      ptsim_plan_trainable(plan, s, &params, &experts);
      local = params / plan->optimizer_shards + experts / plan->expert_optimizer_shards;
    }
    if (plan->zero_stage >= 2)
      ptsim_work_sharded_step_comm(x, out, s, params, experts, &out->grad_sync_s[s],
                                   &out->param_gather_s[s]);
    else
      stage_dp_comm(x, params, &out->grad_sync_s[s], &out->param_gather_s[s]);
    if (moe) stage_moe_comm(x, s, &out->grad_sync_s[s], &out->param_gather_s[s]);
    /* Adam: read grad, master, m, v, write master, m, v and the weight
     * copy; the gradient-norm pass reads the grads once more (fp32 states
     * and grads: 4 B each). */
    out->optimizer_s[s] =
        ptsim_cost_memory_bound_at_s(&job->hw, x->params,
                                     local * (2.0 * plan->grad_bytes + 2.0 * states + ELEM));
  }
  out->embedding_grad_sync_s = embedding_grad_sync_s(x);
}

/* ---- public ---- */

PTSIM_HD double ptsim_workload_megatron_flops(const PtsimJob *job) {
  const PtsimModel *m = &job->model;
  if (ptsim_model_is_hybrid(m)) return ptsim_workload_hybrid_flops(job);
  if (m->num_experts > 0 || m->multi_latent_attention || m->mtp_num_layers > 0)
    return ptsim_workload_moe_flops(job);
  double h = (double)m->hidden_size, s = (double)job->layout.seq;
  double L = (double)m->num_layers;
  double gated = m->activation == PTSIM_ACTIVATION_SWIGLU ? 1.5 : 1.0;
  /* query projection over h (Megatron's query_projection_to_hidden_size_
   * ratio, 1 unless --kv-channels makes the heads wider or narrower) */
  double p = (double)(m->num_attention_heads * ptsim_plan_head_dim(m)) / h;
  double attention = (1.0 + (double)m->num_query_groups / (double)m->num_attention_heads + s / h) *
                     p;
  double mlp = (double)m->ffn_hidden_size / h * gated;
  double logits = (double)m->vocab_size / (2.0 * L * h);
  return 12.0 * (double)job->layout.gbs * s * L * h * h * (attention + mlp + logits);
}

PTSIM_HD void ptsim_work_chunk_shape(const PtsimWorkload *w, int64_t stage, int64_t chunk,
                                     int64_t *layers, int64_t *moe, int *first, int *last) {
  int64_t slot = stage * w->num_chunks + chunk;
  *first = stage == w->first_stage && chunk == 0;
  *last = stage == w->last_stage && chunk == w->num_chunks - 1;
  *layers = slot < PTSIM_MAX_VSTAGES ? w->chunk_layers[slot] : 0;
  *moe = slot < PTSIM_MAX_VSTAGES ? w->chunk_moe_layers[slot] : 0;
}

PTSIM_HD void ptsim_workload_chunk(const PtsimWorkload *w, int64_t stage, int64_t chunk,
                                   PtsimWork *out) {
  int64_t layers, moe;
  int first, last;
  ptsim_work_chunk_shape(w, stage, chunk, &layers, &moe, &first, &last);
  work_zero(out);
  if (w->hybrid) {
    int64_t slot = stage * w->num_chunks + chunk;
    int64_t mamba = slot < PTSIM_MAX_VSTAGES ? w->chunk_mamba_layers[slot] : 0;
    int64_t attention = slot < PTSIM_MAX_VSTAGES ? w->chunk_attention_layers[slot] : 0;
    work_add(out, &w->mamba_layer, (double)mamba);
    work_add(out, &w->attention_layer, (double)attention);
    work_add(out, &w->mlp_layer, (double)(layers - mamba - attention - moe));
    work_add(out, &w->moe_block_layer, (double)moe);
  } else {
    work_add(out, &w->layer, (double)(layers - moe));
    if (moe > 0) work_add(out, &w->moe_layer, (double)moe);
  }
  if (first) work_add(out, &w->embedding, 1.0);
  if (last) {
    work_add(out, &w->head, 1.0);
    if (w->mtp_apart) /* the MTP layers' heads and losses alone */
      work_add(out, &w->mtp_heads, 1.0);
    else if (w->mtp.flops > 0.0) /* MTP layers: GEMMs, so FLOPs */
      work_add(out, &w->mtp, 1.0);
  }
  if (w->mtp_apart && stage == w->mtp_stage && chunk == w->mtp_chunk)
    work_add(out, &w->mtp_body, 1.0);
  /* FSDP units: what the compute waits for in each pass is exposed dp */
  if (w->gather_forward || w->gather_backward || w->reduce_backward)
    ptsim_work_unit_waits(w, stage, chunk, out);
}

/* A hybrid model's layers by kind and each chunk's count of them (the
 * plan's layer ranges over the model's pattern); zero otherwise. */
static PTSIM_HD void build_hybrid(const PtsimWorkCtx *x, PtsimWorkload *out) {
  const PtsimPlan *plan = x->plan;
  const PtsimModel *m = &x->job->model;
  int64_t s, n = plan->num_stages * plan->num_chunks, first, count;
  out->hybrid = ptsim_model_is_hybrid(m);
  work_zero(&out->mamba_layer);
  work_zero(&out->attention_layer);
  work_zero(&out->mlp_layer);
  work_zero(&out->moe_block_layer);
  for (s = 0; s < n && s < PTSIM_MAX_VSTAGES; s++) {
    out->chunk_mamba_layers[s] = 0;
    out->chunk_attention_layers[s] = 0;
    if (!out->hybrid || n > PTSIM_MAX_VSTAGES) continue;
    ptsim_plan_chunk_range(plan, s / plan->num_chunks, s % plan->num_chunks, &first, &count);
    out->chunk_mamba_layers[s] = (int16_t)ptsim_hybrid_count(m, first, count, PTSIM_HYBRID_MAMBA);
    out->chunk_attention_layers[s] = (int16_t)ptsim_hybrid_count(m, first, count,
                                                                 PTSIM_HYBRID_ATTENTION);
  }
  if (!out->hybrid) return;
  ptsim_work_mamba_layer(x, &out->mamba_layer);
  build_hybrid_sublayer(x, PTSIM_HYBRID_ATTENTION, &out->attention_layer);
  build_hybrid_sublayer(x, PTSIM_HYBRID_MLP, &out->mlp_layer);
  if (m->num_experts > 0) build_hybrid_sublayer(x, PTSIM_HYBRID_MOE, &out->moe_block_layer);
}

PTSIM_HD void ptsim_workload_build(const PtsimPlan *plan, const PtsimCostParams *params,
                                   PtsimWorkload *out) {
  ptsim_workload_build_loaded(plan, params, plan->expert_load, out);
}

PTSIM_HD void ptsim_workload_build_loaded(const PtsimPlan *plan, const PtsimCostParams *params,
                                          double expert_load, PtsimWorkload *out) {
  const PtsimJob *job = &plan->job;
  const PtsimLayout *l = &job->layout;
  const PtsimSettings *run = &job->settings;
  const PtsimModel *m = &job->model;
  PtsimCostParams defaults;
  PtsimWorkCtx x;
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
  x.precision = run->precision;
  x.format = ptsim_cost_format(run->precision, run->fp8_recipe);
  /* Transformer Engine's attention is cuDNN's fused kernel; Megatron's
   * local layers with --use-flash-attn and PyTorch's SDPA run
   * FlashAttention-2 */
  x.attention = run->transformer_engine ? PTSIM_ATTENTION_CUDNN : PTSIM_ATTENTION_FA2;
  x.tokens = plan->tokens;
  x.d = plan->head_dim;
  x.q = job->model.num_attention_heads * x.d;
  x.kv = job->model.num_query_groups * x.d;
  x.tokens_sp = plan->tokens_sp;
  x.tp_group = &plan->groups[PTSIM_GROUP_TP];
  x.cp_group = &plan->groups[PTSIM_GROUP_CP];
  x.pp_group = &plan->groups[PTSIM_GROUP_PP];
  x.dp_group = &plan->groups[PTSIM_GROUP_DP_CP];
  x.attention_flop_share =
      m->num_experts > 0 || m->multi_latent_attention || m->mtp_num_layers > 0 ? 0.5 : 1.0;
  x.expert_load = expert_load;

  out->num_stages = plan->num_stages;
  out->num_chunks = plan->num_chunks;
  out->num_microbatches = plan->num_microbatches;
  out->first_stage = plan->vstages.first_stage;
  out->last_stage = plan->vstages.last_stage;
  /* per chunk from per virtual stage: the table is filled when they fit */
  for (s = 0; s < l->pp * plan->num_chunks && s < PTSIM_MAX_VSTAGES; s++) {
    int fits = l->pp * plan->num_chunks <= PTSIM_MAX_VSTAGES;
    out->chunk_layers[s] = fits ? plan->vstage_layers[plan->vstages.vstage[s]] : 0;
    out->chunk_moe_layers[s] = fits ? plan->vstage_moe_layers[plan->vstages.vstage[s]] : 0;
  }
  out->expert_load = expert_load;
  build_hybrid(&x, out);
  if (run->torch_layers != PTSIM_TORCH_LAYERS_NONE) /* PyTorch's modules */
    ptsim_work_torch_layer(&x, &out->layer);
  else
    build_layer(&x, &out->layer);
  build_embedding(&x, &out->embedding);
  build_head(&x, &out->head);
  work_zero(&out->moe_layer);
  work_zero(&out->mtp);
  work_zero(&out->mtp_body);
  work_zero(&out->mtp_heads);
  work_zero(&out->moe_mlp);
  out->mtp_apart = m->mtp_num_layers > 0 && l->mtp_apart;
  out->mtp_stage = plan->mtp_stage;
  out->mtp_chunk = plan->mtp_chunk;
  if (m->num_experts > 0) build_moe_layer(&x, &out->moe_layer);
  if (m->num_experts > 0 && run->moe_ep_comm_overlap) ptsim_work_moe_a2a_parts(&x, &out->moe_mlp);
  if (m->mtp_num_layers > 0)
    ptsim_work_mtp(&x, plan->mtp_layer_is_moe ? &out->moe_layer : &out->layer, &out->embedding,
                   &out->head, &out->mtp, &out->mtp_body, &out->mtp_heads);
  pp_bytes = x.tokens_sp * (double)job->model.hidden_size * ELEM;
  out->pp_transfer_s = l->pp > 1 ? ptsim_cost_collective_s(&job->hw, params, PTSIM_COLL_SEND_RECV,
                                                           pp_bytes, x.pp_group)
                                 : 0.0;
  if (out->mtp_apart) { /* the MTP stage's link to the loss's */
    /* it sends on the decoder's and the D MTP layers' hidden states
     * concatenated (multi_token_prediction.py, MultiTokenPredictionBlock
     * forward), and gets their gradients back: D activations more than a
     * link's one, waited for by the sender as Megatron's blocking p2p is */
    double extra = (double)m->mtp_num_layers * out->pp_transfer_s;
    out->mtp_body.forward_s += extra;
    out->mtp_body.forward_comm_s[PTSIM_COMM_PP] += extra;
    out->mtp_heads.backward_input_s += extra;
    out->mtp_heads.backward_comm_s[PTSIM_COMM_PP] += extra;
  }
  ptsim_work_units(&x, out);
  build_step_work(&x, out);
  out->model_flops = ptsim_workload_megatron_flops(job);
  out->moe_layer_gpu_s[0] = out->moe_layer.forward_s;
  out->moe_layer_gpu_s[1] = out->moe_layer.backward_input_s + out->moe_layer.backward_weight_s;
  ptsim_host_time_apply(plan, out); /* the compute stream waits for its host */
}
