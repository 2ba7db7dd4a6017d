/* workload_torch.c — a dense transformer layer as PyTorch's own modules run
 * it (torchtitan's Llama block, PtsimSettings.torch_layers): its ops for one
 * microbatch, their backward, and what torch's per-op selective
 * checkpointing re-runs in backward.  Megatron's layer (Transformer Engine
 * or local) is workload.c's build_layer; this file is its PyTorch sibling
 * and uses the same op builders (workload_int.h).
 *
 * The block (models/llama3/model/model.py at pytorch/torchtitan@238fa99):
 *   h   = x + wo(SDPA(RoPE(wq(n)), RoPE(wk(n)), wv(n))),  n = RMSNorm(x)
 *   out = h + w2(silu(w1(m)) * w3(m)),                      m = RMSNorm(h)
 * so q, k and v are three GEMMs and the SwiGLU gate and up two, where
 * Megatron runs one each (GELU: w1, gelu, w2).  With TP the column-parallel
 * projections are entered by torchtitan's sequence-parallel all-gather and
 * the row-parallel ones left by a reduce-scatter, at Megatron's points.
 *
 * Memory-bound kernels, in bytes per element of the tensor they run over
 * (bf16 2 B, fp32 4 B; r read, w written):
 *   RMSNorm   PyTorch's fused CUDA kernel (_fused_rms_norm, 2.9 and later):
 *             one pass each way, priced as workload.c prices a norm
 *   eager (PTSIM_TORCH_LAYERS_EAGER), each its own kernel:
 *     RoPE    apply_rotary_emb, on q and on k: to fp32 (2 r + 4 w), the
 *             complex product with the table (4 r + 4 w), back to bf16
 *             (4 r + 2 w); backward the same three in reverse
 *     SwiGLU  silu (2 r + 2 w), the product (4 r + 2 w); backward the
 *             product's two gradients and silu's (4 r + 2 w each)
 *     GELU    gelu (2 r + 2 w); backward (4 r + 2 w)
 *     sums    autograd adds the input gradients of the projections that
 *             share an input, over T x h (4 r + 2 w): two for wq, wk, wv,
 *             one for w1, w3
 *   compiled (PTSIM_TORCH_LAYERS_COMPILED): torch.compile's Inductor fuses
 *             RoPE into one pass over q and k, the activation into one, and
 *             the gradient sums into the kernels that read them: the fused
 *             pricing of workload.c's local layers.
 * Residual adds are one pass (2 r + 1 w) either way.
 *
 * float8 (torchao's Float8Linear, precision fp8): each projection casts its
 * input (a sibling's cast serves wk, wv and w3 under compile, or under
 * tensorwise float8 TP), casts its bf16 input again for the weight
 * gradient, casts its weight forward and backward every micro-batch unless
 * FSDP gathers fp8 weights (torchao_casts), and the output gradient as
 * Transformer Engine does; the LM head stays bf16 (torchtitan's shipped
 * filter_fqns = ["output"]).
 *
 * Per-op selective checkpointing (PTSIM_RECOMPUTE_SELECTIVE_OP; torchtitan's
 * _op_sac_save_list and its "every other mm" policy, memory.c counts what
 * stays): the outputs of the matmuls the policy keeps
 * (ptsim_plan_torch_gemm_saved), of SDPA and of TP's reduce-scatters are
 * reused; backward re-runs everything else of the block's forward: both
 * norms, the other matmuls (wk, wo, w3 of a SwiGLU block, whose outputs
 * feed RoPE, the residual and the product), RoPE, the activation, the
 * residual adds, every fp8 cast (they are not on the list, though the
 * matmul after them is), the sequence-parallel all-gathers (funcol's
 * all_gather_into_tensor is not on the list), and under CP the K/V
 * exchange, with no attention left to hide it behind.
 *
 * Core module: pure C, PTSIM_HD, no allocation, no I/O. */
#include <stddef.h>
#include "plan.h"
#include "workload.h"
#include "workload_int.h"

/* One memory-bound kernel moving `bytes`. */
static PTSIM_HD double torch_pass_s(const PtsimWorkCtx *x, double bytes) {
  return ptsim_cost_memory_bound_at_s(&x->job->hw, x->params, bytes);
}

/* Torch's per-op recompute of the layer, collected as the ops are built:
 * its forward time, FLOPs and (as forward comm) the collectives it re-runs. */
typedef struct {
  PtsimWork redo;
  int on; /* recompute is PTSIM_RECOMPUTE_SELECTIVE_OP */
} TorchRedo;

/* A memory-bound op of `fwd_s` forward and `bwd_s` backward; the
 * per-op recompute re-runs its forward. */
static PTSIM_HD void torch_memory_op(PtsimWork *w, TorchRedo *r, double fwd_s, double bwd_s) {
  w->forward_s += fwd_s;
  w->backward_input_s += bwd_s;
  if (r->on) r->redo.forward_s += fwd_s;
}

/* A memory-bound op moving `bytes` forward and twice that backward (as
 * ptsim_work_elementwise), re-run by the per-op recompute. */
static PTSIM_HD void torch_elementwise(const PtsimWorkCtx *x, PtsimWork *w, TorchRedo *r,
                                       double bytes) {
  torch_memory_op(w, r, torch_pass_s(x, bytes), torch_pass_s(x, 2.0 * bytes));
}

/* Whether projections sharing an input (wq, wk, wv; w1, w3) share its fp8
 * cast: Inductor computes the identical casts once; with tensorwise float8
 * TP torchtitan casts the module's input once before gathering it in fp8
 * (PrepareFloat8ModuleInput); eager linears each cast their own. */
static PTSIM_HD int torch_shared_cast(const PtsimWorkCtx *x) {
  const PtsimSettings *run = &x->job->settings;
  return run->torch_layers == PTSIM_TORCH_LAYERS_COMPILED ||
         (x->t > 1 && run->fp8_recipe == PTSIM_FP8_TENSORWISE);
}

/* torchao's float8 linear beyond the casts ptsim_work_gemm prices (one of
 * the input forward, one of the output gradient backward): it saves the
 * bf16 input and casts it again for the weight gradient (unless a
 * sibling's cast serves it), and casts its weight forward and again
 * backward every micro-batch -- no cached fp8 copy -- unless FSDP gathers
 * the weights in fp8 already.  A cast reads 2 B and writes 1 B an
 * element, after a 2 B amax pass under tensorwise scaling. */
static PTSIM_HD void torchao_casts(const PtsimWorkCtx *x, PtsimWork *w, int shared, int64_t n,
                                   int64_t k) {
  const PtsimSettings *run = &x->job->settings;
  double cast = ELEM + 1.0 + (run->fp8_recipe == PTSIM_FP8_TENSORWISE ? ELEM : 0.0);
  double weight = cast * (double)n * (double)k;
  if (!ptsim_work_in_fp8(x)) return;
  if (!shared) w->backward_weight_s += torch_pass_s(x, cast * (double)x->tokens * (double)k);
  if (!run->fp8_param_gather) {
    w->forward_s += torch_pass_s(x, weight);
    w->backward_input_s += torch_pass_s(x, weight);
  }
}

/* A projection of forward shape (T, n, k), number `gemm` in call order;
 * shared: its input's fp8 cast is a sibling's.  The per-op policy re-runs
 * it unless it keeps its output, and re-runs its fp8 casts either way.
 * Returns its forward GEMM time. */
static PTSIM_HD double torch_gemm(const PtsimWorkCtx *x, PtsimWork *w, TorchRedo *r, int32_t gemm,
                                  int64_t n, int64_t k, int shared) {
  PtsimWork one;
  double gemm_s = ptsim_work_gemm_fwd_s(x, x->tokens, n, k);
  ptsim_work_zero(&one);
  ptsim_work_gemm(x, &one, x->tokens, n, k, shared ? INPUT_QUANTIZED : INPUT_CAST);
  torchao_casts(x, &one, shared, n, k);
  ptsim_work_add(w, &one, 1.0);
  if (r->on) {
    if (ptsim_plan_torch_gemm_saved(&x->job->model, gemm)) {
      r->redo.forward_s += one.forward_s - gemm_s; /* the cast alone */
    } else {
      r->redo.forward_s += one.forward_s;
      r->redo.flops += one.flops / 3.0;
    }
  }
  return gemm_s;
}

/* The TP collective entering the column-parallel projections (the
 * sequence-parallel all-gather, re-run by the per-op recompute) or
 * leaving a row-parallel one (its reduce-scatter is kept; without SP the
 * all-reduce is not, and re-runs). */
static PTSIM_HD void torch_tp(const PtsimWorkCtx *x, PtsimWork *w, TorchRedo *r, int enter,
                              double gemm_s) {
  PtsimWork one;
  ptsim_work_zero(&one);
  if (enter)
    ptsim_work_tp_enter(x, &one, gemm_s, 1,
                        (double)x->tokens * (double)x->job->model.hidden_size * ELEM);
  else
    ptsim_work_tp_leave(x, &one, gemm_s);
  ptsim_work_add(w, &one, 1.0);
  if (r->on && (enter || !x->job->layout.sp))
    ptsim_work_comm(&r->redo, PTSIM_COMM_TP, one.forward_comm_s[PTSIM_COMM_TP], 0.0);
}

/* RoPE on `elements` values of q or k (eager: three kernels each way). */
static PTSIM_HD void torch_rope(const PtsimWorkCtx *x, PtsimWork *w, TorchRedo *r,
                                double elements) {
  double s = torch_pass_s(x, 6.0 * elements) + torch_pass_s(x, 8.0 * elements) +
             torch_pass_s(x, 6.0 * elements);
  torch_memory_op(w, r, s, s);
}

/* Attention (SDPA; its outputs kept by the per-op policy), and under CP
 * the K/V exchange the per-op recompute re-runs: c - 1 steps of the K/V
 * block, nothing to overlap with. */
static PTSIM_HD void torch_attention(const PtsimWorkCtx *x, PtsimWork *w, TorchRedo *r) {
  const PtsimModel *m = &x->job->model;
  int64_t groups = m->num_query_groups / x->t > 0 ? m->num_query_groups / x->t : 1;
  double kv_width = (double)(x->d * groups);
  ptsim_work_attention(x, w, NULL, m->num_attention_heads / x->t, x->d, kv_width);
  if (r->on && x->c > 1) {
    double kv_bytes = 2.0 * (double)x->job->layout.mbs * (double)x->plan->local_seq * kv_width *
                      ELEM;
    ptsim_work_comm(&r->redo, PTSIM_COMM_CP,
                    (double)(x->c - 1) * ptsim_cost_collective_s(&x->job->hw, x->params,
                                                                 PTSIM_COLL_SEND_RECV, kv_bytes,
                                                                 x->cp_group),
                    0.0);
  }
}

PTSIM_HD void ptsim_work_torch_layer(const PtsimWorkCtx *x, PtsimWork *w) {
  const PtsimModel *m = &x->job->model;
  const PtsimSettings *run = &x->job->settings;
  const PtsimProvenance *src = &x->job->source;
  int64_t t = x->t, h = m->hidden_size, q = x->q, kv = x->kv, f = m->ffn_hidden_size;
  int eager = run->torch_layers == PTSIM_TORCH_LAYERS_EAGER;
  int swiglu = m->activation == PTSIM_ACTIVATION_SWIGLU, shared = torch_shared_cast(x);
  double T = (double)x->tokens, ffn = T * (double)f / (double)t;
  double norm_bytes = 2.0 * x->tokens_sp * (double)h * ELEM;
  double residual_bytes = x->tokens_sp * (double)h *
                          (3.0 * ELEM + (src->hidden_dropout > 0.0 ? 1.0 : 0.0));
  double sum_s = torch_pass_s(x, 3.0 * ELEM * T * (double)h); /* one gradient sum */
  double qkv_s, mlp_s;
  TorchRedo r;
  ptsim_work_zero(w);
  ptsim_work_zero(&r.redo);
  r.on = run->recompute == PTSIM_RECOMPUTE_SELECTIVE_OP;

  /* attention: norm, q/k/v, RoPE, SDPA, output projection, residual */
  torch_elementwise(x, w, &r, norm_bytes);
  qkv_s = ptsim_work_gemm_fwd_s(x, x->tokens, q / t, h) +
          2.0 * ptsim_work_gemm_fwd_s(x, x->tokens, kv / t, h);
  torch_tp(x, w, &r, 1, qkv_s);
  torch_gemm(x, w, &r, PTSIM_TORCH_WQ, q / t, h, 0);
  torch_gemm(x, w, &r, PTSIM_TORCH_WK, kv / t, h, shared);
  torch_gemm(x, w, &r, PTSIM_TORCH_WV, kv / t, h, shared);
  if (eager) w->backward_input_s += 2.0 * sum_s;
  if (m->qk_layernorm) /* norms over the heads of q and k */
    torch_elementwise(x, w, &r, 2.0 * T * (double)(q + kv) / (double)t * ELEM);
  if (ptsim_plan_position_embedding(m) == PTSIM_POSITION_ROPE) {
    if (eager) {
      torch_rope(x, w, &r, T * (double)q / (double)t);
      torch_rope(x, w, &r, T * (double)kv / (double)t);
    } else {
      torch_elementwise(x, w, &r, 2.0 * T * (double)(q + kv) / (double)t * ELEM);
    }
  }
  torch_attention(x, w, &r);
  torch_tp(x, w, &r, 0, torch_gemm(x, w, &r, PTSIM_TORCH_WO, h, q / t, 0));
  torch_elementwise(x, w, &r, residual_bytes);

  /* MLP: norm, w1 (and w3), the activation, w2, residual */
  torch_elementwise(x, w, &r, norm_bytes);
  mlp_s = (swiglu ? 2.0 : 1.0) * ptsim_work_gemm_fwd_s(x, x->tokens, f / t, h);
  torch_tp(x, w, &r, 1, mlp_s);
  torch_gemm(x, w, &r, PTSIM_TORCH_W1, f / t, h, 0);
  if (swiglu) {
    torch_gemm(x, w, &r, PTSIM_TORCH_W3, f / t, h, shared);
    if (eager) {
      w->backward_input_s += sum_s;
      torch_memory_op(w, &r, torch_pass_s(x, 2.0 * ELEM * ffn) + torch_pass_s(x, 3.0 * ELEM * ffn),
                      3.0 * torch_pass_s(x, 3.0 * ELEM * ffn));
    } else {
      torch_elementwise(x, w, &r, 3.0 * ELEM * ffn);
    }
  } else if (eager) {
    torch_memory_op(w, &r, torch_pass_s(x, 2.0 * ELEM * ffn), torch_pass_s(x, 3.0 * ELEM * ffn));
  } else {
    torch_elementwise(x, w, &r, 2.0 * ELEM * ffn);
  }
  torch_tp(x, w, &r, 0, torch_gemm(x, w, &r, PTSIM_TORCH_W2, h, f / t, 0));
  torch_elementwise(x, w, &r, residual_bytes);
  ptsim_work_grad_accumulation(x, w, x->plan->layer_parameters);

  if (run->recompute == PTSIM_RECOMPUTE_FULL)
    ptsim_work_full_recompute(x, w);
  else if (r.on)
    ptsim_work_redo(w, &r.redo);
}
