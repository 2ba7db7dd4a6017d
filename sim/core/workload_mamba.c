/* workload_mamba.c — a hybrid model's layers (mamba.h) in the workload:
 * the Mamba-2 mixer's ops, and the attention-only, MLP-only and MoE-only
 * sub-layers of the pattern built from the transformer layer's blocks
 * (workload.c), and Megatron-LM's FLOP count of a hybrid model.
 *
 * A Mamba layer, as Megatron-LM's MambaLayer / MambaMixer run it in
 * training (megatron/core/ssm/mamba_mixer.py, d98e8a64dd), per GPU for one
 * microbatch (T tokens, t = tp, W = in_proj width, d = d_inner, each / t):
 *   pre-norm  fused into in_proj (TE LayerNormColumnParallelLinear: its
 *             own kernel, 2 T_sp h bf16 moved, the GEMM's input from it)
 *   TP enter  SP's all-gather / the identity, as a column-parallel GEMM's
 *   in_proj   GEMM (T, W/t, h) -> [z x B C dt]
 *   CP        --context-parallel-size > 1: MambaContextParallel swaps the
 *             sequence split for a head split before the conv (an
 *             all-to-all of z, x, B, C, dt: T W/t values) and back after
 *             the scan (T d/t), mirrored in backward
 *   conv+SSD  mamba_split_conv1d_scan_combined: the causal depthwise conv
 *             (memory-bound: conv_dim values read and written) and the
 *             SSD chunked scan (Dao & Gu 2024, section 6; chunk Q): its
 *             four matmul families priced as GEMMs by the GEMM rule, at
 *             the precision outside FP8 (Triton kernels, not TE's),
 *               C B^T per chunk and group      (T G/t, Q, N)
 *               scores x X per chunk and head  (T H/t, P, Q)
 *               C h_prev per chunk and head    (T H/t, P, N)
 *               B^T X, the chunk states        (N H/t T/Q, P, Q)
 *             against the scan's HBM traffic at the memory-bound rule
 *             (mamba.h: the packed input, the fp32 chunk states, the
 *             outputs, dt), the larger of the two; backward recomputes the
 *             conv and the chunk states (mamba_ssm's memory-efficient
 *             path), then each matmul's two gradients, twice the bytes
 *   gated RMSNorm  y * silu(z), normalised per group: reads y and z,
 *             writes its output (3 T d/t bf16)
 *   out_proj  GEMM (T, h, d/t), row-parallel; TP leave as a row-parallel
 *             GEMM's (all-reduce, or reduce-scatter under SP)
 *   residual  bias-dropout-add as a transformer layer's
 * then its gradient accumulation, and full recomputation (selective
 * recompute's modules are attention's and the MLP's: none is a Mamba
 * mixer's).  FLOPs as Megatron-LM's hybrid formula counts them (its
 * mamba_layer_flops: in_proj, 7 T d_in N for the scan, out_proj; d_in =
 * 2 h), so the step's FLOPs reconcile with model_flops.
 *
 * Core module: pure C, PTSIM_HD, no allocation, no I/O. */
#include "mamba.h"
#include "workload_int.h"

/* The scan's seconds for one microbatch: forward, or backward (bwd 1). */
static PTSIM_HD double ssd_s(const PtsimWorkCtx *x, const PtsimMambaDims *d, int bwd) {
  const PtsimHardware *hw = &x->job->hw;
  const PtsimCostParams *p = x->params;
  PtsimPrecision prec = ptsim_work_outside_fp8(x);
  int64_t T = x->tokens, t = x->t, Q = PTSIM_MAMBA_CHUNK, N = d->d_state, P = d->headdim;
  int64_t heads = d->nheads / t, groups = d->ngroups / t > 0 ? d->ngroups / t : 1;
  int64_t chunks = (T + Q - 1) / Q;
  /* the four matmul families as (m, n, k) */
  int64_t shape[4][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
  double compute = 0.0, states_s, conv_s, bytes, states;
  int i;
  shape[0][0] = T * groups, shape[0][1] = Q, shape[0][2] = N;
  shape[1][0] = T * heads, shape[1][1] = P, shape[1][2] = Q;
  shape[2][0] = T * heads, shape[2][1] = P, shape[2][2] = N;
  shape[3][0] = N * heads * chunks, shape[3][1] = P, shape[3][2] = Q;
  states = (double)heads * (double)P * (double)N;
  /* per token: the packed input read (2 W), the outputs and out_x written
   * (4 d), the fp32 chunk states written, passed and read (16 H P N / Q),
   * dt and its cumulative sum in fp32 (12 H) */
  bytes = (double)T *
          (2.0 * (double)d->in_proj_width / (double)t + 4.0 * (double)d->d_inner / (double)t +
           16.0 * states / (double)Q + 12.0 * (double)heads);
  conv_s = ptsim_cost_memory_bound_at_s(hw, p, (double)T * 4.0 * (double)d->conv_dim / (double)t);
  states_s = ptsim_cost_gemm_s(hw, p, prec, shape[3][0], shape[3][1], shape[3][2]);
  for (i = 0; i < 4; i++) {
    if (!bwd) {
      compute += ptsim_cost_gemm_s(hw, p, prec, shape[i][0], shape[i][1], shape[i][2]);
    } else {
      compute += ptsim_cost_gemm_s(hw, p, prec, shape[i][0], shape[i][2], shape[i][1]);
      compute += ptsim_cost_gemm_s(hw, p, prec, shape[i][2], shape[i][1], shape[i][0]);
    }
  }
  if (!bwd) {
    double memory = ptsim_cost_memory_bound_at_s(hw, p, bytes);
    return conv_s + (compute > memory ? compute : memory);
  }
  /* the conv and the chunk states recomputed, then the gradients */
  {
    double memory = ptsim_cost_memory_bound_at_s(hw, p, 2.0 * bytes);
    return 2.0 * conv_s + states_s + (compute > memory ? compute : memory);
  }
}

/* Megatron-LM's mamba_layer_flops for TOKENS tokens, forward. */
static PTSIM_HD double megatron_mamba_flops(const PtsimModel *m, double tokens) {
  PtsimMambaDims d;
  double h = (double)m->hidden_size, d_in = 2.0 * h;
  ptsim_mamba_dims(m, &d);
  return 2.0 * tokens * h *
             (2.0 * d_in + 2.0 * (double)d.ngroups * (double)d.d_state + (double)d.nheads) +
         7.0 * tokens * d_in * (double)d.d_state + 2.0 * tokens * d_in * h;
}

PTSIM_HD void ptsim_work_mamba_layer(const PtsimWorkCtx *x, PtsimWork *w) {
  const PtsimModel *m = &x->job->model;
  const PtsimSettings *run = &x->job->settings;
  int64_t T = x->tokens, t = x->t, h = m->hidden_size;
  PtsimMambaDims d;
  double gemm_flops, residual_bytes, in_s, out_s;
  int64_t width, inner;
  int norm_cast = run->transformer_engine ? INPUT_QUANTIZED_BY_NORM : INPUT_CAST;
  ptsim_mamba_dims(m, &d);
  width = d.in_proj_width / t;
  inner = d.d_inner / t;
  residual_bytes = x->tokens_sp * (double)h *
                   (3.0 * ELEM + (x->job->source.hidden_dropout > 0.0 ? 1.0 : 0.0));
  in_s = ptsim_work_gemm_fwd_s(x, T, width, h);
  out_s = ptsim_work_gemm_fwd_s(x, T, h, inner);
  ptsim_work_zero(w);
  ptsim_work_elementwise(x, w, 2.0 * x->tokens_sp * (double)h * ELEM); /* pre-norm */
  ptsim_work_tp_enter(x, w, in_s, 1, (double)T * (double)h * ELEM);
  ptsim_work_gemm(x, w, T, width, h, norm_cast);
  if (x->c > 1) { /* sequence split -> head split and back */
    double pre = ptsim_cost_collective_s(&x->job->hw, x->params, PTSIM_COLL_ALL_TO_ALL,
                                         (double)T * (double)width * ELEM, x->cp_group);
    double post = ptsim_cost_collective_s(&x->job->hw, x->params, PTSIM_COLL_ALL_TO_ALL,
                                          (double)T * (double)inner * ELEM, x->cp_group);
    ptsim_work_comm(w, PTSIM_COMM_CP, pre + post, pre + post);
  }
  w->forward_s += ssd_s(x, &d, 0);
  w->backward_input_s += ssd_s(x, &d, 1);
  ptsim_work_elementwise(x, w, 3.0 * (double)T * (double)inner * ELEM); /* gated RMSNorm */
  ptsim_work_gemm(x, w, T, h, inner, INPUT_CAST);
  ptsim_work_tp_leave(x, w, out_s);
  ptsim_work_elementwise(x, w, residual_bytes);
  /* the FLOPs Megatron counts: its formula's in place of the GEMMs' */
  gemm_flops = 6.0 * (double)T * ((double)width * (double)h + (double)h * (double)inner);
  w->flops += 3.0 * megatron_mamba_flops(m, (double)T) / (double)t - gemm_flops;
  ptsim_work_grad_accumulation(x, w, ptsim_mamba_layer_parameters(m, t));
  if (run->recompute == PTSIM_RECOMPUTE_FULL) ptsim_work_full_recompute(x, w);
}

PTSIM_HD double ptsim_workload_hybrid_flops(const PtsimJob *job) {
  const PtsimModel *m = &job->model;
  double h = (double)m->hidden_size, s = (double)job->layout.seq;
  double tokens = (double)job->layout.gbs * s;
  double n = (double)m->num_attention_heads;
  double p = (double)(m->num_attention_heads * ptsim_plan_head_dim(m)) / h;
  double g = (double)m->num_query_groups;
  double gated = m->activation == PTSIM_ACTIVATION_SWIGLU ? 1.5 : 1.0;
  double mamba = (double)ptsim_hybrid_count(m, 0, m->num_layers, PTSIM_HYBRID_MAMBA);
  double attn = (double)ptsim_hybrid_count(m, 0, m->num_layers, PTSIM_HYBRID_ATTENTION);
  double mlp = (double)ptsim_hybrid_count(m, 0, m->num_layers, PTSIM_HYBRID_MLP);
  double moe = (double)ptsim_hybrid_count(m, 0, m->num_layers, PTSIM_HYBRID_MOE);
  /* megatron/training/training.py hybrid_flops (d98e8a64dd): per layer
   * kind, forward, times 3; the attention core causal (s^2 h p x 2) */
  double attn_f = 4.0 * tokens * h * p * (h + h * g / n) +
                  2.0 * (double)job->layout.gbs * s * s * h * p;
  double mlp_f = 4.0 * ((double)m->ffn_hidden_size / h) * gated * tokens * h * h;
  double moe_f =
      4.0 * tokens * h *
      ((double)(m->moe_ffn_hidden_size > 0 ? m->moe_ffn_hidden_size : m->ffn_hidden_size) *
           (double)m->moe_router_topk +
       (double)m->moe_shared_expert_size) *
      gated;
  double logits = 2.0 * tokens * h * (double)m->vocab_size * (1.0 + (double)m->mtp_num_layers);
  return 3.0 * (attn * attn_f + mlp * mlp_f + mamba * megatron_mamba_flops(m, tokens) +
                moe * moe_f + logits);
}
