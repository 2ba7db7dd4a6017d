/* test_batch.c — the CPU batch (batch.c through batch_cpu.c) against
 * single evaluations of the same jobs (memory estimate + ptsim_simulate),
 * its per-job error reporting, and the GPU entry point's errors when no
 * device is there.  Always runs; the GPU-vs-CPU oracle is test_gpu.c (kept
 * apart so that its skip cannot hide a failure here: ctest marks a whole
 * binary skipped when "# SKIP" appears in its output). */
#include <glib.h>
#include <string.h>
#include "batch_cpu.h"
#include "config.h"
#include "job_validate.h"
#include "engine.h"
#include "gpu.h"
#include "jobgen.h"
#include "memory.h"
#include "schedule.h"
#include "simulate.h"
#include "plan_of.h"
#include "kernel_registry.h"

/* How many kernel tables the profiles loaded so far registered: the CPU
 * batch and ptsim_simulate price with them (kernel_registry.h). */
static int32_t kernel_table_count(void) {
  int32_t n = 0;
  ptsim_kernel_registry_tables(&n);
  return n;
}

#define N_JOBS 300

static void test_cpu_equals_single(void) {
  g_test_summary("every field of the CPU batch equals memory estimate + ptsim_simulate, "
                 "to the bit, on 300 random valid jobs");
  g_autoptr(GError) error = NULL;
  g_autoptr(GRand) rand = g_rand_new_with_seed(20240611);
  g_autofree PtsimJob *jobs = g_new0(PtsimJob, N_JOBS);
  g_autofree PtsimBatchResult *out = g_new0(PtsimBatchResult, N_JOBS);
  g_assert_true(jobgen_fill(rand, jobs, N_JOBS, &error));
  g_assert_no_error(error);
  g_assert_true(ptsim_batch_evaluate_cpu(jobs, N_JOBS, out, &error));
  g_assert_no_error(error);

  g_autofree PtsimMemoryEstimate *mem = g_new0(PtsimMemoryEstimate, 1);
  g_autofree PtsimTimeResult *time = g_new0(PtsimTimeResult, 1);
  int schedules[4] = {0, 0, 0, 0}, fits = 0;
  for (int i = 0; i < N_JOBS; i++) {
    const PtsimBatchResult *r = &out[i];
    estimate_of(&jobs[i], PTSIM_CE_LAST_STAGE, mem);
    g_assert_cmpint(r->status, ==, 0);
    g_assert_true(simulate_of(&jobs[i], NULL, time, &error));
    g_assert_no_error(error);
    g_assert_cmpint(r->fits, ==, mem->fits);
    g_assert_cmpint(r->peak_stage, ==, mem->peak_stage);
    g_assert_cmpfloat(r->total_bytes, ==, mem->total_bytes);
    g_assert_cmpfloat(r->usage_fraction, ==, mem->usage_fraction);
    g_assert_cmpfloat(r->step_s, ==, time->step_s);
    g_assert_cmpfloat(r->tokens_per_s, ==, time->tokens_per_s);
    g_assert_cmpfloat(r->tflops_per_gpu, ==, time->tflops_per_gpu);
    g_assert_cmpfloat(r->mfu, ==, time->mfu);
    g_assert_cmpfloat(r->bubble_fraction, ==, time->bubble_fraction);
    g_assert_cmpfloat(r->step_s, >, 0.0);
    schedules[jobs[i].layout.schedule]++;
    fits += r->fits;
  }
  /* The draw really is varied. */
  for (int k = 0; k < 4; k++) g_assert_cmpint(schedules[k], >, 10);
  g_assert_cmpint(fits, >, 10);
  g_assert_cmpint(fits, <, N_JOBS - 10);
  g_test_message("%d jobs: 1f1b %d, gpipe %d, interleaved %d, zb-h1 %d; %d fit", N_JOBS,
                 schedules[0], schedules[1], schedules[2], schedules[3], fits);
}

static PtsimJob *one_job(void) {
  g_autoptr(GError) error = NULL;
  PtsimJob *job = g_new0(PtsimJob, 1);
  g_assert_true(ptsim_model_load("llama3-8b", &job->model, &error));
  g_assert_true(ptsim_hardware_load("h100-80g", &job->hw, &error));
  ptsim_job_init_defaults(job);
  job->layout.gpus = 16;
  job->layout.tp = 2;
  job->layout.pp = 4;
  job->layout.vp = 2;
  job->layout.gbs = 16;
  job->layout.seq = 4096;
  g_assert_true(ptsim_job_validate(job, &error));
  g_assert_no_error(error);
  return job;
}

static void test_scratch_too_small(void) {
  g_test_summary("scratch smaller than ptsim_batch_scratch_bytes: status "
                 "PTSIM_ENGINE_ERR_SCRATCH, nothing else computed");
  g_autofree PtsimJob *job = one_job();
  int64_t bytes = ptsim_batch_scratch_bytes(job);
  g_autofree PtsimPlan *plan = plan_of(job);
  g_assert_cmpint(bytes, >, ptsim_engine_recurrence_bytes(plan)); /* what the batch runs */
  g_assert_cmpint(bytes % 16, ==, 0);
  g_autofree void *scratch = g_malloc(bytes);
  PtsimBatchResult r;
  ptsim_batch_evaluate_one(job, ptsim_kernel_registry_tables(NULL), kernel_table_count(), scratch,
                           bytes - 16, &r);
  g_assert_cmpint(r.status, ==, PTSIM_ENGINE_ERR_SCRATCH);
  g_assert_cmpfloat(r.total_bytes, ==, 0.0);
  g_assert_cmpfloat(r.step_s, ==, 0.0);
  ptsim_batch_evaluate_one(job, ptsim_kernel_registry_tables(NULL), kernel_table_count(), scratch,
                           bytes, &r);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_cmpfloat(r.step_s, >, 0.0);
}

static void test_schedule_error_in_status(void) {
  g_test_summary("a schedule that cannot be built is the job's status; its memory "
                 "estimate is still filled in, its time fields are 0");
  g_autofree PtsimJob *job = one_job();
  job->layout.gbs = 6; /* 6 microbatches, pp 4: interleaved needs m % p == 0 */
  int64_t bytes = ptsim_batch_scratch_bytes(job);
  g_assert_cmpint(bytes, >, 0);
  g_autofree void *scratch = g_malloc(bytes);
  PtsimBatchResult r;
  ptsim_batch_evaluate_one(job, ptsim_kernel_registry_tables(NULL), kernel_table_count(), scratch,
                           bytes, &r);
  g_assert_cmpint(r.status, ==, PTSIM_SCHEDULE_ERR_DIVISIBLE);
  g_assert_cmpfloat(r.total_bytes, >, 0.0);
  g_assert_cmpfloat(r.step_s, ==, 0.0);
  g_assert_cmpfloat(r.mfu, ==, 0.0);
}

static void test_empty_batch(void) {
  g_test_summary("a batch of 0 jobs succeeds and touches nothing");
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_batch_evaluate_cpu(NULL, 0, NULL, &error));
  g_assert_no_error(error);
}

static void test_gpu_errors(void) {
  g_test_summary("ptsim_gpu_evaluate: UNAVAILABLE without CUDA, NO_DEVICE without a "
                 "device, success with one; never a crash");
  g_autofree PtsimJob *job = one_job();
  PtsimBatchResult r;
  PtsimGpuInfo info;
  g_autoptr(GError) error = NULL;
  gboolean ok = ptsim_gpu_evaluate(job, 1, &r, &error);
  if (!ptsim_gpu_compiled_in()) {
    g_assert_false(ok);
    g_assert_error(error, PTSIM_CUDA_ERROR, PTSIM_CUDA_ERROR_UNAVAILABLE);
  } else if (!ptsim_gpu_query(&info, NULL)) {
    g_assert_false(ok);
    g_assert_error(error, PTSIM_CUDA_ERROR, PTSIM_CUDA_ERROR_NO_DEVICE);
  } else {
    g_assert_no_error(error);
    g_assert_true(ok);
    g_assert_cmpint(r.status, ==, 0);
  }
  if (error) g_test_message("%s", error->message);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/batch/cpu-equals-single", test_cpu_equals_single);
  g_test_add_func("/batch/scratch-too-small", test_scratch_too_small);
  g_test_add_func("/batch/schedule-error-in-status", test_schedule_error_in_status);
  g_test_add_func("/batch/empty", test_empty_batch);
  g_test_add_func("/batch/gpu-errors", test_gpu_errors);
  return g_test_run();
}
