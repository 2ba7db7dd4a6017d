/* batch.c — one job's memory + time summary on caller scratch; see batch.h.
 * The CPU reference of the GPU batch: cuda/batch.cu #includes this file. */
#include <string.h>
#include "batch.h"
#include "cost.h"
#include "scratch.h"
#include "engine.h"
#include "memory.h"
#include "plan.h"
#include "workload.h"

/* PtsimBatchResult.exposed_comm_s holds every PtsimCommKind. */
typedef char batch_comm_kinds_fit
    [sizeof(((PtsimBatchResult *)0)->exposed_comm_s) == PTSIM_COMM_KINDS * sizeof(double) ? 1 : -1];

/* Seed offset of the expert-load streams (keeps them apart from the
 * engine's jitter streams of the same sample). */
#define BATCH_LOAD_STREAM 0x6d6f652d6c6f6164ull

/* Bytes before the engine's part of the scratch. */
static PTSIM_HD int64_t batch_fixed_bytes(void) {
  return ptsim_scratch_align((int64_t)sizeof(PtsimPlan), 16) +
         ptsim_scratch_align((int64_t)sizeof(PtsimWorkload), 16) +
         ptsim_scratch_align((int64_t)sizeof(PtsimMemoryEstimate), 16) +
         ptsim_scratch_align((int64_t)sizeof(PtsimTimeResult), 16);
}

static PTSIM_HD int32_t batch_samples(const PtsimMonteCarlo *mc) {
  if (!mc || mc->samples <= 0) return 0;
  return mc->samples < PTSIM_BATCH_MAX_SAMPLES ? mc->samples : PTSIM_BATCH_MAX_SAMPLES;
}

/* The scratch a job with this plan needs (see batch.h). */
/* The engine's part: the event loop's when it runs (samples, or
 * --no-shortcut), else the recurrence's, without event slots. */
static PTSIM_HD int64_t batch_engine_bytes(const PtsimPlan *plan, const PtsimMonteCarlo *mc) {
  return batch_samples(mc) > 0 || (mc && mc->no_shortcut) ? ptsim_engine_scratch_bytes(plan)
                                                          : ptsim_engine_recurrence_bytes(plan);
}

static PTSIM_HD int64_t batch_scratch_bytes_of(const PtsimPlan *plan, const PtsimMonteCarlo *mc) {
  int64_t engine = batch_engine_bytes(plan, mc);
  return batch_fixed_bytes() +
         ptsim_scratch_align((int64_t)batch_samples(mc) * (int64_t)sizeof(double), 16) +
         (engine > 0 ? ptsim_scratch_align(engine, 16) : 0);
}

PTSIM_HD int64_t ptsim_batch_scratch_bytes_mc(const PtsimJob *job, const PtsimMonteCarlo *mc) {
  PtsimPlan plan;                /* host callers size the scratch; the device never calls this */
  ptsim_plan_counts(job, &plan); /* all the engine's size depends on */
  return batch_scratch_bytes_of(&plan, mc);
}

PTSIM_HD int64_t ptsim_batch_scratch_bytes(const PtsimJob *job) {
  return ptsim_batch_scratch_bytes_mc(job, (const PtsimMonteCarlo *)0);
}

/* The q-quantile (nearest rank) of sorted[0..n). */
static PTSIM_HD double batch_quantile(const double *sorted, int32_t n, double q) {
  int32_t rank = (int32_t)(q * (double)n + 0.999999);
  if (rank < 1) rank = 1;
  if (rank > n) rank = n;
  return sorted[rank - 1];
}

static PTSIM_HD void batch_sort(double *v, int32_t n) { /* insertion sort: n is small */
  int32_t i, j;
  for (i = 1; i < n; i++) {
    double x = v[i];
    for (j = i - 1; j >= 0 && v[j] > x; j--) v[j + 1] = v[j];
    v[j + 1] = x;
  }
}

static PTSIM_HD void batch_clear(PtsimBatchResult *out) {
  int k;
  memset(out, 0, sizeof *out); /* padding too: results compare bytewise */
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
  out->step_p50_s = out->step_p90_s = out->step_p99_s = 0.0;
  for (k = 0; k < PTSIM_COMM_KINDS; k++) out->exposed_comm_s[k] = 0.0;
  out->alloc_device_peak_bytes = 0.0;
  out->alloc_oom = -1;
  out->held_floor_bytes = 0.0;
  out->runs = -1;
  out->runs_from = PTSIM_RUNS_FROM_NONE;
}

PTSIM_HD void ptsim_batch_evaluate_one(const PtsimJob *job, const PtsimKernelTable *tables,
                                       int32_t table_count, void *scratch, int64_t scratch_bytes,
                                       PtsimBatchResult *out) {
  ptsim_batch_evaluate_mc(job, (const PtsimMonteCarlo *)0, tables, table_count, 0, scratch,
                          scratch_bytes, out);
}

PTSIM_HD void ptsim_batch_evaluate_mc(const PtsimJob *job, const PtsimMonteCarlo *mc,
                                      const PtsimKernelTable *tables, int32_t table_count,
                                      uint64_t index, void *scratch, int64_t scratch_bytes,
                                      PtsimBatchResult *out) {
  ptsim_batch_evaluate_cached(job, mc, tables, table_count, index, scratch, scratch_bytes,
                              (void *)0, out);
}

PTSIM_HD void ptsim_batch_evaluate_cached(const PtsimJob *job, const PtsimMonteCarlo *mc,
                                          const PtsimKernelTable *tables, int32_t table_count,
                                          uint64_t index, void *scratch, int64_t scratch_bytes,
                                          void *cache, PtsimBatchResult *out) {
  PtsimCostParams params;
  double *samples;
  int32_t n_samples = batch_samples(mc), k;
  char *base = (char *)scratch;
  PtsimPlan *plan;
  PtsimWorkload *workload;
  PtsimMemoryEstimate *memory;
  PtsimTimeResult *time;
  int64_t off = 0, engine_bytes;
  int32_t rc;

  batch_clear(out);
  if (scratch_bytes < batch_fixed_bytes()) {
    out->status = PTSIM_ENGINE_ERR_SCRATCH;
    return;
  }
  plan = (PtsimPlan *)(base + off);
  off += ptsim_scratch_align((int64_t)sizeof(PtsimPlan), 16);
  ptsim_plan_build(job, plan);
  if (scratch_bytes < batch_scratch_bytes_of(plan, mc)) {
    out->status = PTSIM_ENGINE_ERR_SCRATCH;
    return;
  }
  workload = (PtsimWorkload *)(base + off);
  off += ptsim_scratch_align((int64_t)sizeof(PtsimWorkload), 16);
  memory = (PtsimMemoryEstimate *)(base + off);
  off += ptsim_scratch_align((int64_t)sizeof(PtsimMemoryEstimate), 16);
  time = (PtsimTimeResult *)(base + off);
  off += ptsim_scratch_align((int64_t)sizeof(PtsimTimeResult), 16);
  samples = (double *)(base + off);
  off += ptsim_scratch_align((int64_t)n_samples * (int64_t)sizeof(double), 16);

  ptsim_memory_estimate(plan, PTSIM_CE_LAST_STAGE, memory);
  out->fits = memory->fits;
  out->peak_stage = memory->peak_stage;
  out->total_bytes = memory->total_bytes;
  out->usage_fraction = memory->usage_fraction;
  out->held_floor_bytes = ptsim_memory_held_floor_bytes(memory);
  if (out->fits) {
    out->runs = 1;
    out->runs_from = PTSIM_RUNS_FROM_RULE;
  }

  engine_bytes = batch_engine_bytes(plan, mc);
  if (engine_bytes < 0) {
    out->status = (int32_t)engine_bytes;
    return;
  }
  ptsim_cost_params_init(&job->hw, tables, table_count, &params);
  ptsim_workload_build(plan, &params, workload);
  /* The recurrence: the event loop's times at a quarter of the cost (the
   * batch reports no event count); every event with --no-shortcut. */
  rc = mc && mc->no_shortcut ? ptsim_engine_run_full(plan, workload, base + off,
                                                     scratch_bytes - off, (PtsimTrace *)0, time)
                             : ptsim_engine_run_replayed(plan, workload, cache, base + off,
                                                         scratch_bytes - off, time);
  if (rc != 0) {
    out->status = rc;
    return;
  }
  out->step_s = time->step_s;
  out->tokens_per_s = time->tokens_per_s;
  out->tflops_per_gpu = time->tflops_per_gpu;
  out->mfu = time->mfu;
  out->bubble_fraction = time->bubble_fraction;
  for (k = 0; k < PTSIM_COMM_KINDS; k++) out->exposed_comm_s[k] = time->exposed_comm_s[k];
  if (n_samples == 0) return;
  for (k = 0; k < n_samples; k++) {
    PtsimJitter jitter;
    jitter.sigma = mc->sigma;
    jitter.straggler_rate = mc->straggler_rate;
    jitter.straggler_slowdown = mc->straggler_slowdown;
    jitter.seed = mc->seed;
    jitter.subsequence = index * (uint64_t)n_samples + (uint64_t)k;
    if (job->model.num_experts > 0 && job->layout.ep > 1) {
      /* the sample's token distribution: its own stream, beside the engine's */
      PtsimRng rng;
      ptsim_rng_init(&rng, mc->seed ^ BATCH_LOAD_STREAM, jitter.subsequence);
      ptsim_workload_build_loaded(plan, &params, ptsim_workload_sample_expert_load(plan, &rng),
                                  workload);
    }
    rc = ptsim_engine_run_jittered(plan, workload, &jitter, base + off, scratch_bytes - off,
                                   (PtsimTrace *)0, time);
    if (rc != 0) {
      out->status = rc;
      return;
    }
    samples[k] = time->step_s;
  }
  batch_sort(samples, n_samples);
  out->step_p50_s = batch_quantile(samples, n_samples, 0.50);
  out->step_p90_s = batch_quantile(samples, n_samples, 0.90);
  out->step_p99_s = batch_quantile(samples, n_samples, 0.99);
}
