/* host_time.h — the host's share of the step time: one process per GPU
 * issues every kernel in order from Python, so a stage's compute stream
 * cannot run ahead of its host.  A pass of a layer takes the longer of what
 * its kernels take on the GPU and what issuing them takes on the CPU (its
 * eager ops one after the other, plus the Python of each Transformer
 * Engine module), and the optimizer step adds its per-tensor host work
 * (the per-parameter loops, multi_tensor_apply launches, the norms
 * Megatron-LM logs) behind the .item() synchronisations that drain the GPU
 * between them.  CUDA graphs replace a captured part's issue cost by the
 * graph's replay cost.
 *
 * The launches are counted from the layer's structure (host_time.c says
 * where each count comes from); the per-call costs are measurements
 * (host.h, hw_profiles/software/host_overhead.ini).  All costs 0 (a
 * hand-made job): nothing changes.
 *
 * Core module: plain C, PTSIM_HD, no allocation, no I/O. */
#ifndef PTSIM_HOST_TIME_H
#define PTSIM_HOST_TIME_H

#include "hd.h"
#include "plan.h"
#include "workload.h"

/* Kernel launches of one transformer layer's passes for one microbatch,
 * split at the attention / MLP boundary (what --cuda-graph-scope attn
 * captures), and the Transformer Engine module calls of one pass. */
typedef struct {
  double forward_attention, forward_mlp;
  double backward_attention, backward_mlp;
  double te_modules; /* per pass */
  /* An MoE layer's forward: its host-device synchronisations (each waits
   * for the GPU to drain), and of them the ones that wait for the token
   * dispatch's collective to finish (the all-gather dispatcher's .cpu()) */
  double forward_syncs;
  double dispatch_waits;
} PtsimHostLaunches;

/* The launches of one dense (moe 0) or MoE (moe 1) layer of plan's job. */
PTSIM_HD void ptsim_host_layer_launches(const PtsimPlan *plan, int moe, PtsimHostLaunches *out);

/* Host seconds to issue one pass of a layer with these launches under the
 * job's CUDA-graph scope (backward 0: forward, 1: backward; moe 1: an MoE
 * layer, whose MLP part a graph captures only with graph_moe). */
PTSIM_HD double ptsim_host_layer_pass_s(const PtsimHost *host, const PtsimHostLaunches *n,
                                        int backward, int moe);

/* Host seconds of the optimizer step of stage `stage` that the GPU does not
 * hide: the per-tensor loops and launches of the gradient copy, the
 * gradient-norm clip, Adam, the copy back, and the logged norms. */
PTSIM_HD double ptsim_host_optimizer_s(const PtsimPlan *plan, int64_t stage);

/* Host seconds per step of Megatron-LM's training_log: its cost per logged
 * step over --log-interval (0 for a job not driven by Megatron-LM). */
PTSIM_HD double ptsim_host_step_log_s(const PtsimHost *host);

/* Raises each pass of the workload's layers, embedding and head to its
 * host time and adds the optimizer's host time to each stage's step end.
 * Called once where the workload is built (workload.c). */
PTSIM_HD void ptsim_host_time_apply(const PtsimPlan *plan, PtsimWorkload *w);

#endif /* PTSIM_HOST_TIME_H */
