/* workload_offload.c — the time activation offloading costs a layer: the
 * copies of its offloaded inputs (memory.c, "Activation offloading") over
 * the GPU's host link; see workload_int.h.
 *
 * Megatron-LM's offloading manager (megatron/core/pipeline_parallel/
 * fine_grained_activation_offload.py) copies a layer's offloaded inputs to
 * pinned host memory on a stream of its own while the next layer computes,
 * and copies them back for the backward one layer ahead, while the layer
 * after it (in backward order) computes.  Each copy moves the layer's
 * offloaded bytes at the profile's host_link_gbps; what a copy takes beyond
 * the compute it runs beside is waited for.  Not counted: the two
 * directions of one PCIe link sharing it, two GPUs sharing a switch's
 * uplink, and the copy engines' launch.
 *
 * Core module: pure C, PTSIM_HD, no allocation, no I/O. */
#include "memory.h"
#include "workload_int.h"

PTSIM_HD void ptsim_work_offload(const PtsimWorkCtx *x, PtsimWork *w, int moe) {
  double bytes = ptsim_memory_offload_layer_bytes(x->plan, moe);
  double link = x->job->hw.host_link_bytes_per_s, copy;
  if (bytes <= 0.0 || link <= 0.0) return;
  copy = bytes / link;
  if (copy > w->forward_s) w->forward_s = copy;          /* the offload beside the forward */
  if (copy > w->backward_input_s + w->backward_weight_s) /* the reload beside the backward */
    w->backward_input_s += copy - (w->backward_input_s + w->backward_weight_s);
}
