/* workload_lora.c — a transformer layer's linear layers under LoRA (PEFT):
 * the frozen base GEMM and the adapter's two GEMMs; see workload_int.h.
 *
 * Megatron-Bridge's LoRALinear (megatron/bridge/peft/lora.py) runs the
 * base linear, then its ParallelLinearAdapter on the same input: A (in ->
 * r), B (r -> out), scaled by alpha / r and added to the base output.  The
 * base weight is frozen (requires_grad False), so the base layer's
 * backward computes the input gradient (dgrad) and no weight gradient
 * (wgrad): Transformer Engine's and Megatron's linears skip the wgrad GEMM
 * when the weight needs no gradient.  The adapter GEMMs have all three
 * passes.  Shapes on one TP rank (plan.c "LoRA"): a column-parallel base
 * (QKV, fc1) splits A over its r outputs and B over out, a row-parallel
 * one (proj, fc2) A over its in and B over out.  Not counted: the adapter's
 * small TP collectives of T x r values (A's output gathered or reduced,
 * r / h of the layer's own).
 *
 * Core module: pure C, PTSIM_HD, no allocation, no I/O. */
#include "workload_int.h"

PTSIM_HD void ptsim_work_linear(const PtsimWorkCtx *x, PtsimWork *w, int64_t m, int64_t n,
                                int64_t k, int input_cast, int target, int column_parallel) {
  const PtsimSettings *run = &x->job->settings;
  int64_t r = run->lora_rank, t = x->t;
  double wgrad_s = w->backward_weight_s, flops = w->flops, out;
  ptsim_work_gemm(x, w, m, n, k, input_cast);
  if (r <= 0) return;
  /* the frozen base: no wgrad GEMM (its third of the GEMM's FLOPs) */
  w->backward_weight_s = wgrad_s;
  w->flops = flops + 4.0 * (double)m * (double)n * (double)k;
  if (!(run->lora_targets & target)) return;
  if (column_parallel) { /* n = out / t already; A splits r */
    ptsim_work_gemm(x, w, m, r / t > 0 ? r / t : 1, k, INPUT_QUANTIZED);
    ptsim_work_gemm(x, w, m, n, r, INPUT_CAST);
  } else { /* k = in / t; B splits n = h */
    ptsim_work_gemm(x, w, m, r, k, INPUT_QUANTIZED);
    ptsim_work_gemm(x, w, m, n / t > 0 ? n / t : 1, r, INPUT_CAST);
  }
  /* forward: the adapter's output scaled by alpha / r (read, written),
   * then added to the base output (both read, the sum written), 5 passes
   * over it; backward: the add hands its gradient to both sides as is, the
   * scale's gradient is one more read and write */
  out = ELEM * (double)m * (double)(column_parallel ? n : n / t);
  w->forward_s += ptsim_cost_memory_bound_at_s(&x->job->hw, x->params, 5.0 * out);
  w->backward_input_s += ptsim_cost_memory_bound_at_s(&x->job->hw, x->params, 2.0 * out);
}
