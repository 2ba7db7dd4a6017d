/* workload_offload.c — the time activation offloading costs a layer: the
 * copies of its offloaded tensors (memory.c, "Activation offloading") over
 * the GPU's host link; see workload_int.h.
 *
 * Megatron-LM's offloading manager (megatron/core/pipeline_parallel/
 * fine_grained_activation_offload.py) copies each offloaded group (one
 * module's saved tensors) to pinned host memory on a stream of its own
 * once the compute stream has produced it (on_group_commit_forward:
 * d2h_stream.wait_stream(current)); the compute stream never waits for
 * these copies in forward, so the layer's forward lasts as long as its
 * compute or its copies, whichever is longer.  The copies back are not
 * hidden: a group's reload is started at the end of the backward of the
 * group after it (on_group_start_backward: h2d_stream.wait_stream(current)
 * first, "wait for compute to finish before starting reload") and the
 * group's own backward begins by waiting for it (on_group_commit_backward:
 * wait_reload_event on the compute stream); the groups of a layer adjoin,
 * so the reload runs between two backward computations, not beside one.
 * Each copy moves the copied bytes (ptsim_memory_offload_copy_bytes) at
 * the profile's host_link_gbps.  Not counted: the chunk's last group,
 * reloaded early beside the previous chunk's backward; the two directions
 * of one PCIe link sharing it, two GPUs sharing a switch's uplink, and the
 * copy engines' launch.
 *
 * Core module: pure C, PTSIM_HD, no allocation, no I/O. */
#include "memory.h"
#include "workload_int.h"

PTSIM_HD void ptsim_work_offload(const PtsimWorkCtx *x, PtsimWork *w, int moe) {
  double bytes = ptsim_memory_offload_copy_bytes(x->plan, moe);
  double link = x->job->hw.host_link_bytes_per_s, copy;
  if (bytes <= 0.0 || link <= 0.0) return;
  copy = bytes / link;
  if (copy > w->forward_s) w->forward_s = copy; /* the offload beside the forward */
  w->backward_input_s += copy;                  /* the reload between backward groups */
}
