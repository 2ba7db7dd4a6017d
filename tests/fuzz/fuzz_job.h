/* fuzz_job.h — takes a job a parser accepted as far as ptsim would: job
 * validation, the plan, the memory estimate, the workload and, when its
 * scratch is small, the step simulation and the allocator emulation.  A
 * parser that lets through a value the core cannot take (an overflow, a
 * NaN, an allocation of terabytes) shows up here as a sanitizer report or
 * a failed invariant. */
#ifndef PTSIM_FUZZ_JOB_H
#define PTSIM_FUZZ_JOB_H

#include <math.h>
#include "fuzz_common.h"
#include "config.h"
#include "job_validate.h"
#include "lifetimes.h"
#include "memory.h"
#include "simulate.h"
#include "workload.h"

/* Simulations past this much scratch, or this many (layer, microbatch)
 * pairs on a stage, are skipped: they are bounded by validation, but a
 * fuzzer wants thousands of runs a second, and the instrumented allocator
 * emulation of 64 layers x 128 microbatches takes seconds. */
#define FUZZ_SIMULATE_MAX_BYTES ((int64_t)32 << 20)
#define FUZZ_SIMULATE_MAX_WORK ((int64_t)2048)

/* Fills what the parser did not give (a zeroed model: the tiny fixture; a
 * zeroed profile: h100-80g; a zeroed layout: Megatron-LM's defaults; a zero
 * GPU count, batch or sequence: 1 GPU, gbs 8, seq 128) and runs the job. */
static inline void fuzz_job_exercise(PtsimJob *job) {
  g_autoptr(GError) error = NULL;
  if (job->model.num_layers == 0) {
    g_autofree char *tiny = g_build_filename(PTSIM_SOURCE_DIR, "tests", "data", "model_tiny.ini",
                                             NULL);
    g_assert(ptsim_model_load(tiny, &job->model, NULL));
  }
  if (job->hw.peak_bf16_flops == 0) g_assert(ptsim_hardware_load("h100-80g", &job->hw, NULL));
  if (job->layout.tp == 0) ptsim_job_init_defaults(job);
  if (job->layout.gpus == 0) job->layout.gpus = 1;
  if (job->layout.gbs == 0) job->layout.gbs = 8;
  if (job->layout.seq == 0) job->layout.seq = 128;
  if (!ptsim_job_validate(job, &error)) return;

  g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
  ptsim_plan_build(job, plan);
  g_autofree PtsimMemoryEstimate *memory = g_new0(PtsimMemoryEstimate, 1);
  ptsim_memory_estimate(plan, PTSIM_CE_LAST_STAGE, memory);
  g_assert_true(memory->total_bytes >= 0);
  g_autofree PtsimWorkload *workload = g_new0(PtsimWorkload, 1);
  ptsim_workload_build(plan, NULL, workload);

  int64_t most_layers = 0;
  for (int64_t s = 0; s < plan->num_stages; s++)
    most_layers = MAX(most_layers, plan->stage_layers[s]);
  if (most_layers * plan->num_microbatches > FUZZ_SIMULATE_MAX_WORK) return;
  int64_t engine = ptsim_engine_scratch_bytes(plan);
  if (engine > 0 && engine <= FUZZ_SIMULATE_MAX_BYTES) {
    g_autofree PtsimTimeResult *time = g_new0(PtsimTimeResult, 1);
    g_autoptr(GError) sim_error = NULL;
    if (ptsim_simulate(plan, NULL, time, &sim_error)) {
      /* an accepted job has a real step time and utilisation */
      g_assert_true(isfinite(time->step_s) && time->step_s > 0);
      g_assert_true(isfinite(time->mfu) && time->mfu >= 0);
    }
  }
  int64_t largest = 0;
  for (int64_t s = 0; s < plan->num_stages; s++)
    largest = MAX(largest, ptsim_lifetimes_scratch_bytes(plan, s));
  if (plan->schedule_items > 0 && largest <= FUZZ_SIMULATE_MAX_BYTES) {
    g_autofree PtsimAllocResult *alloc = g_new0(PtsimAllocResult, 1);
    g_autoptr(GError) alloc_error = NULL;
    ptsim_simulate_allocator(plan, 1, NULL, NULL, 0.0, NULL, alloc, &alloc_error);
  }
}

#endif /* PTSIM_FUZZ_JOB_H */
