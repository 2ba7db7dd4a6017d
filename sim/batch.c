/* batch.c — one job's memory + time summary on caller scratch; see batch.h.
 * The CPU reference of the GPU batch: cuda/batch.cu #includes this file. */
#include "batch.h"
#include "engine.h"
#include "memory.h"
#include "workload.h"

static PTSIM_HD int64_t batch_align16(int64_t n) { return (n + 15) & ~(int64_t)15; }

/* Bytes before the engine's part of the scratch. */
static PTSIM_HD int64_t batch_fixed_bytes(void) {
  return batch_align16((int64_t)sizeof(PtsimWorkload)) +
         batch_align16((int64_t)sizeof(PtsimMemoryEstimate)) +
         batch_align16((int64_t)sizeof(PtsimTimeResult));
}

PTSIM_HD int64_t ptsim_batch_scratch_bytes(const PtsimJob *job) {
  int64_t engine = ptsim_engine_scratch_bytes(job);
  return batch_fixed_bytes() + (engine > 0 ? batch_align16(engine) : 0);
}

static PTSIM_HD void batch_clear(PtsimBatchResult *out) {
  out->status = PTSIM_BATCH_OK;
  out->fits = 0;
  out->peak_stage = 0;
  out->total_bytes = 0.0;
  out->usage_fraction = 0.0;
  out->step_s = 0.0;
  out->tokens_per_s = 0.0;
  out->tflops_per_gpu = 0.0;
  out->mfu = 0.0;
  out->bubble_fraction = 0.0;
}

PTSIM_HD void ptsim_batch_evaluate_one(const PtsimJob *job, void *scratch,
                                       int64_t scratch_bytes,
                                       PtsimBatchResult *out) {
  char *base = (char *)scratch;
  PtsimWorkload *workload;
  PtsimMemoryEstimate *memory;
  PtsimTimeResult *time;
  int64_t off = 0, engine_bytes;
  int32_t rc;

  batch_clear(out);
  if (scratch_bytes < ptsim_batch_scratch_bytes(job)) {
    out->status = PTSIM_ENGINE_ERR_SCRATCH;
    return;
  }
  workload = (PtsimWorkload *)(base + off);
  off += batch_align16((int64_t)sizeof(PtsimWorkload));
  memory = (PtsimMemoryEstimate *)(base + off);
  off += batch_align16((int64_t)sizeof(PtsimMemoryEstimate));
  time = (PtsimTimeResult *)(base + off);
  off += batch_align16((int64_t)sizeof(PtsimTimeResult));

  ptsim_memory_estimate(job, PTSIM_CE_LAST_STAGE, memory);
  out->fits = memory->fits;
  out->peak_stage = memory->peak_stage;
  out->total_bytes = memory->total_bytes;
  out->usage_fraction = memory->usage_fraction;

  engine_bytes = ptsim_engine_scratch_bytes(job);
  if (engine_bytes < 0) {
    out->status = (int32_t)engine_bytes;
    return;
  }
  ptsim_workload_build(job, (const PtsimCostParams *)0, workload);
  rc = ptsim_engine_run(job, workload, base + off, scratch_bytes - off,
                        (PtsimTrace *)0, time);
  if (rc != 0) {
    out->status = rc;
    return;
  }
  out->step_s = time->step_s;
  out->tokens_per_s = time->tokens_per_s;
  out->tflops_per_gpu = time->tflops_per_gpu;
  out->mfu = time->mfu;
  out->bubble_fraction = time->bubble_fraction;
}
