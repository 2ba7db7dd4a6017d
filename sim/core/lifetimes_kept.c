/* lifetimes_kept.c — what a stage keeps besides its model states and
 * saved activations: the GEMM workspaces made by step 0's first GEMMs and
 * held all run, and under --defer-embedding-wgrad-compute the last stage's
 * deferred tensors and its flush's all-gather buffers; see lifetimes_int.h.
 *
 * Core module: pure C, PTSIM_HD, no allocation, no I/O.  Sibling of
 * lifetimes.c, which calls these. */
#include "lifetimes_int.h"
#include "memory.h"

#define ELEM PTSIM_LIFETIMES_ELEM
#define STREAM_COMPUTE PTSIM_LIFETIMES_STREAM_COMPUTE

typedef PtsimLifetimesCtx Ctx;

/* The GEMM workspaces the stage keeps all run (memory.h
 * PtsimWorkspaces), made by the first GEMMs of step 0: PyTorch's per
 * thread, then Transformer Engine's. */
PTSIM_HD void ptsim_lifetimes_workspaces(Ctx *x) {
  const PtsimSettings *run = &x->job->settings;
  PtsimWorkspaces w;
  int32_t i;
  ptsim_memory_workspaces(x->plan, x->stage, &w);
  for (i = 0; i < w.torch; i++)
    ptsim_lifetimes_take(x, "cublas_workspace", run->cublas_workspace_bytes, STREAM_COMPUTE);
  for (i = 0; i < w.te; i++)
    ptsim_lifetimes_take(x, "te_workspace", run->te_workspace_bytes, STREAM_COMPUTE);
  if (w.te_userbuffers)
    ptsim_lifetimes_take(x, "te_userbuffers_workspace",
                         PTSIM_MEMORY_TE_USERBUFFERS_SIZES * run->te_workspace_bytes,
                         STREAM_COMPUTE);
}

/* --defer-embedding-wgrad-compute (job.h): the output layer's input and
 * the logits gradient of each deferred microbatch of a step, kept on the
 * last stage until the pipeline flush; their handles' room. */
PTSIM_HD int64_t ptsim_lifetimes_deferred_cap(const PtsimPlan *plan, int64_t stage) {
  const PtsimSettings *run = &plan->job.settings;
  int64_t m = plan->num_microbatches;
  if (!run->defer_embedding_wgrad || stage != plan->vstages.last_stage) return 0;
  if (run->wgrad_deferral_limit > 0 && run->wgrad_deferral_limit < m) m = run->wgrad_deferral_limit;
  return 2 * m;
}

/* The pipeline flush of --defer-embedding-wgrad-compute (Megatron's
 * drain_embedding_wgrad_compute, megatron/core/utils.py): with sequence
 * parallelism it all-gathers the kept inputs into two buffers of Megatron's
 * global memory buffer ("mpu_0", "mpu_1": T x h each, got once and kept)
 * and frees each microbatch's pair after its wgrad GEMM.  The input is the
 * tensor the output layer's forward saved (held until here, so a stand-in
 * allocated when its backward would have freed it). */
PTSIM_HD void ptsim_lifetimes_drain_deferred(Ctx *x) {
  int32_t i;
  const PtsimLayout *l = &x->job->layout;
  if (x->n_deferred == 0) return;
  if (l->tp > 1 && l->sp && x->drain_buffers[0] < 0)
    for (i = 0; i < 2; i++)
      x->drain_buffers[i] =
          ptsim_lifetimes_take(x, "drain_allgather",
                               ELEM * x->tokens * (double)x->job->model.hidden_size,
                               STREAM_COMPUTE);
  for (i = 0; i < x->n_deferred; i++) {
    ptsim_lifetimes_give(x, x->deferred[i]);
    x->deferred[i] = -1;
  }
  x->n_deferred = 0;
}
