/* workload_cp.c — context-parallel attention as each framework runs it:
 * the p2p ring (Transformer Engine's default: each K/V send overlaps a
 * block's attention, exposed where it outlasts it), the all-gather of K and
 * V (TE's allgather, PyTorch's context_parallel as torchtitan runs it) and
 * Ulysses' all-to-all (TE's a2a).  Sibling of workload.c
 * (ptsim_work_attention calls it when cp > 1).
 *
 * Core module: pure C, PTSIM_HD, no allocation, no I/O. */
#include "workload_int.h"

/* Ulysses context parallelism (--cp-comm-type a2a): an all-to-all over the
 * CP group turns this rank's s/cp tokens of every head into all s tokens
 * of heads/cp heads for Q, K and V, attention runs on those, and another
 * turns O back; the backward does the same for dO and for dQ, dK, dV.
 * Transformer Engine runs them on the compute stream between the kernels
 * (AttnFuncWithCPAndQKVOA2A), so they are exposed whole.  Each all-to-all
 * moves the rank's send buffer: b x s/cp x (the tensors' widths) x 2 B. */
PTSIM_HD static void cp_attention_a2a(const PtsimWorkCtx *x, PtsimWork *w,
                                      PtsimWork *recompute_into, int64_t heads, int64_t head_dim,
                                      double kv_width, double *fwd, double *bwd) {
  const PtsimHardware *hw = &x->job->hw;
  int64_t b = x->job->layout.mbs, s = x->job->layout.seq;
  int64_t h = heads / x->c > 0 ? heads / x->c : 1;
  double rows = (double)b * (double)(s / x->c), q = (double)heads * (double)head_dim;
  double qkv = ptsim_cost_collective_s(hw, x->params, PTSIM_COLL_ALL_TO_ALL,
                                       rows * (q + 2.0 * kv_width) * ELEM, x->cp_group);
  double o = ptsim_cost_collective_s(hw, x->params, PTSIM_COLL_ALL_TO_ALL, rows * q * ELEM,
                                     x->cp_group);
  *fwd = ptsim_cost_attention_kernel_s(hw, x->params, x->attention, PTSIM_PRECISION_BF16, b, h, s,
                                       s, head_dim, 1, 0);
  *bwd = ptsim_cost_attention_kernel_s(hw, x->params, x->attention, PTSIM_PRECISION_BF16, b, h, s,
                                       s, head_dim, 1, 1);
  ptsim_work_comm(w, PTSIM_COMM_CP, qkv + o, o + qkv);
  if (recompute_into) ptsim_work_comm(recompute_into, PTSIM_COMM_CP, qkv + o, 0.0);
}

PTSIM_HD void ptsim_work_cp_attention(const PtsimWorkCtx *x, PtsimWork *w,
                                      PtsimWork *recompute_into, int64_t heads, int64_t head_dim,
                                      double kv_width, double *fwd_out, double *bwd_out) {
  const PtsimHardware *hw = &x->job->hw;
  int64_t b = x->job->layout.mbs, s = x->job->layout.seq;
  double fwd, bwd;
  if (x->job->settings.cp_comm == PTSIM_CP_A2A) {
    cp_attention_a2a(x, w, recompute_into, heads, head_dim, kv_width, fwd_out, bwd_out);
    return;
  }
  {
    int64_t block = s / x->c;
    double blocks = 0.5 * (double)x->c;
    double kv_bytes = 2.0 * (double)b * (double)block * kv_width * ELEM;
    double step_f, step_b, comm_f, comm_b, exposed_f, exposed_b;
    fwd = blocks * ptsim_cost_attention_kernel_s(hw, x->params, x->attention, PTSIM_PRECISION_BF16,
                                                 b, heads, block, block, head_dim, 0, 0);
    bwd = blocks * ptsim_cost_attention_kernel_s(hw, x->params, x->attention, PTSIM_PRECISION_BF16,
                                                 b, heads, block, block, head_dim, 0, 1);
    if (x->job->settings.cp_comm == PTSIM_CP_ALLGATHER) {
      /* K and V of the whole sequence gathered before any block can run,
       * dK and dV reduce-scattered after the last: nothing to hide them
       * behind (Transformer Engine's AttnFuncWithCPAndKVAllGather, PyTorch's
       * context_parallel with the allgather rotation); the backward gathers
       * K and V again */
      double gathered = 2.0 * (double)b * (double)s * kv_width * ELEM;
      exposed_f = ptsim_cost_collective_s(hw, x->params, PTSIM_COLL_ALL_GATHER, gathered,
                                          x->cp_group);
      exposed_b = exposed_f + ptsim_cost_collective_s(hw, x->params, PTSIM_COLL_REDUCE_SCATTER,
                                                      gathered, x->cp_group);
    } else {
      /* The ring's steps overlap the blocks computed meanwhile: each step
       * is exposed only where it outlasts its share of the compute. */
      step_f = fwd / (double)(x->c - 1);
      step_b = bwd / (double)(x->c - 1);
      comm_f = ptsim_cost_collective_s(hw, x->params, PTSIM_COLL_SEND_RECV, kv_bytes, x->cp_group);
      comm_b = ptsim_cost_collective_s(hw, x->params, PTSIM_COLL_SEND_RECV, 2.0 * kv_bytes,
                                       x->cp_group);
      exposed_f = (double)(x->c - 1) * (comm_f > step_f ? comm_f - step_f : 0.0);
      exposed_b = (double)(x->c - 1) * (comm_b > step_b ? comm_b - step_b : 0.0);
    }
    ptsim_work_comm(w, PTSIM_COMM_CP, exposed_f, exposed_b);
    if (recompute_into) ptsim_work_comm(recompute_into, PTSIM_COMM_CP, exposed_f, 0.0);
  }
  *fwd_out = fwd;
  *bwd_out = bwd;
}
