/* test_gpu.c — the oracle test of the GPU batch: the CUDA kernel
 * (cuda/batch.cu) against the CPU batch (the same ptsim_batch_evaluate_one
 * compiled by gcc) on a few hundred random valid jobs, every field, to
 * |gpu - cpu| <= 1e-12 + 1e-9 |cpu| (llm.c's abs + rel tolerance; built
 * with --fmad=false and with no libm in the core, the two are expected to
 * agree to the bit, and the message says how many fields did).
 *
 * Skips, with the reason, when the CUDA part is not compiled in or no
 * device is present (ctest then reports the test as skipped). */
#include <glib.h>
#include <math.h>
#include <string.h>
#include "batch_cpu.h"
#include "gpu.h"
#include "jobgen.h"
#include "kernel_registry.h"

/* How many kernel tables the profiles loaded so far registered: the CPU
 * batch and ptsim_simulate price with them (kernel_registry.h). */
static int32_t kernel_table_count(void) {
  int32_t n = 0;
  ptsim_kernel_registry_tables(&n);
  return n;
}

#define N_JOBS 400

/* Device 0 into *info, or FALSE after marking the test skipped, with why. */
static gboolean gpu_usable(PtsimGpuInfo *info) {
  g_autoptr(GError) error = NULL;
  if (!ptsim_gpu_compiled_in()) {
    g_test_skip("CUDA not compiled in: this ptsim was built without the CUDA part");
    return FALSE;
  }
  if (!ptsim_gpu_query(info, &error)) {
    g_test_skip(error->message); /* "no CUDA device: <the CUDA error>" */
    return FALSE;
  }
  return TRUE;
}

static void test_gpu_matches_cpu(void) {
  g_test_summary("GPU batch == CPU batch on 400 random valid jobs, every field, "
                 "1e-9 relative");
  g_autoptr(GError) error = NULL;
  PtsimGpuInfo info;
  if (!gpu_usable(&info)) return;
  g_autoptr(GRand) rand = g_rand_new_with_seed(7);
  g_autofree PtsimJob *jobs = g_new0(PtsimJob, N_JOBS);
  g_autofree PtsimBatchResult *cpu = g_new0(PtsimBatchResult, N_JOBS);
  g_autofree PtsimBatchResult *gpu = g_new0(PtsimBatchResult, N_JOBS);
  g_assert_true(jobgen_fill(rand, jobs, N_JOBS, &error));
  g_assert_no_error(error);
  g_assert_true(ptsim_batch_evaluate_cpu(jobs, N_JOBS, cpu, &error));
  g_assert_true(ptsim_gpu_evaluate(jobs, N_JOBS, gpu, &error));
  g_assert_no_error(error);

  double max_rel[JOBGEN_N_FIELDS] = {0};
  int identical = 0, fields = 0;
  for (int i = 0; i < N_JOBS; i++) {
    g_assert_cmpint(gpu[i].status, ==, cpu[i].status);
    g_assert_cmpint(gpu[i].fits, ==, cpu[i].fits);
    g_assert_cmpint(gpu[i].peak_stage, ==, cpu[i].peak_stage);
    for (gsize f = 0; f < JOBGEN_N_FIELDS; f++) {
      double g = jobgen_field(&gpu[i], f), c = jobgen_field(&cpu[i], f);
      if (!jobgen_close(g, c))
        g_error("job %d field %s: gpu %.17g cpu %.17g (rel %.3g)", i, jobgen_fields[f].name, g, c,
                jobgen_rel_diff(g, c));
      max_rel[f] = MAX(max_rel[f], jobgen_rel_diff(g, c));
      identical += memcmp(&g, &c, sizeof g) == 0;
      fields++;
    }
  }
  for (gsize f = 0; f < JOBGEN_N_FIELDS; f++)
    g_test_message("%s: max relative difference %.3g", jobgen_fields[f].name, max_rel[f]);
  g_test_message("%d of %d floating-point fields bit-identical on %s", identical, fields,
                 info.name);
}

/* The engine's periodic shortcut on the device: the GPU batch with it and
 * without it (every event simulated) gives the same bytes, and the CPU's
 * full simulation agrees with both, on layouts with long steady states. */
static void test_gpu_shortcut_exact(void) {
  g_test_summary("GPU batch with the periodic shortcut == GPU and CPU without it, 400 layouts "
                 "with m up to 300");
  g_autoptr(GError) error = NULL;
  PtsimGpuInfo info;
  if (!gpu_usable(&info)) return;
  JobgenPool pool;
  g_assert_true(jobgen_pool_load(&pool, &error));
  g_autoptr(GRand) rand = g_rand_new_with_seed(17);
  g_autofree PtsimJob *jobs = g_new0(PtsimJob, N_JOBS);
  g_autofree PtsimBatchResult *fast = g_new0(PtsimBatchResult, N_JOBS);
  g_autofree PtsimBatchResult *full = g_new0(PtsimBatchResult, N_JOBS);
  g_autofree PtsimBatchResult *cpu = g_new0(PtsimBatchResult, N_JOBS);
  for (int i = 0; i < N_JOBS;)
    if (jobgen_try_long(&pool, rand, &jobs[i], 300)) i++;
  PtsimMonteCarlo every = {0, 0.0, 0.0, 2.0, 1, 1};
  g_assert_true(ptsim_gpu_evaluate_mc(jobs, N_JOBS, NULL, 0, fast, &error));
  g_assert_true(ptsim_gpu_evaluate_mc(jobs, N_JOBS, &every, 0, full, &error));
  g_assert_no_error(error);
  int identical = 0;
  for (int i = 0; i < N_JOBS; i++) {
    int64_t bytes = ptsim_batch_scratch_bytes_mc(&jobs[i], &every);
    g_autofree void *scratch = g_malloc(bytes);
    ptsim_batch_evaluate_mc(&jobs[i], &every, ptsim_kernel_registry_tables(NULL),
                            kernel_table_count(), (uint64_t)i, scratch, bytes, &cpu[i]);
    g_assert_true(memcmp(&fast[i], &full[i], sizeof fast[i]) == 0);
    g_assert_cmpint(fast[i].status, ==, cpu[i].status);
    for (gsize f = 0; f < JOBGEN_N_FIELDS; f++)
      g_assert_true(jobgen_close(jobgen_field(&fast[i], f), jobgen_field(&cpu[i], f)));
    identical += memcmp(&fast[i], &cpu[i], sizeof fast[i]) == 0;
  }
  g_test_message("%d of %d results bit-identical to the CPU's on %s", identical, N_JOBS, info.name);
}

/* Monte-Carlo: cuRAND's Philox streams on the GPU, ptsim's Philox on the
 * CPU; the same distribution, not the same draws, so the percentiles agree
 * statistically: within 2% on 64 samples of sigma 0.05. */
static void test_gpu_montecarlo_matches_cpu(void) {
  g_test_summary("GPU (cuRAND) vs CPU (Philox) Monte-Carlo: p50/p90 within 2%");
  g_autoptr(GError) error = NULL;
  PtsimGpuInfo info;
  if (!gpu_usable(&info)) return;
  enum { N = 64 };
  g_autoptr(GRand) rand = g_rand_new_with_seed(11);
  g_autofree PtsimJob *jobs = g_new0(PtsimJob, N);
  g_autofree PtsimBatchResult *cpu = g_new0(PtsimBatchResult, N);
  g_autofree PtsimBatchResult *gpu = g_new0(PtsimBatchResult, N);
  g_assert_true(jobgen_fill(rand, jobs, N, &error));
  PtsimMonteCarlo mc = {64, 0.05, 0.0, 2.0, 3, 0};
  for (int i = 0; i < N; i++) {
    int64_t bytes = ptsim_batch_scratch_bytes_mc(&jobs[i], &mc);
    g_autofree void *scratch = g_malloc(bytes);
    ptsim_batch_evaluate_mc(&jobs[i], &mc, ptsim_kernel_registry_tables(NULL), kernel_table_count(),
                            (uint64_t)i, scratch, bytes, &cpu[i]);
  }
  g_assert_true(ptsim_gpu_evaluate_mc(jobs, N, &mc, 0, gpu, &error));
  g_assert_no_error(error);
  for (int i = 0; i < N; i++) {
    if (cpu[i].status != 0) continue;
    g_assert_cmpfloat(fabs(gpu[i].step_p50_s / cpu[i].step_p50_s - 1.0), <, 0.02);
    g_assert_cmpfloat(fabs(gpu[i].step_p90_s / cpu[i].step_p90_s - 1.0), <, 0.02);
  }
}

/* Mixture-of-experts layouts (workload_moe.c on the device): the GPU
 * batch agrees with the CPU's field by field, with the shortcut and
 * without it; with Monte-Carlo samples of the expert load (cuRAND's draws
 * on the device, Philox on the CPU) the percentiles agree within 2%. */
static void test_gpu_moe_matches_cpu(void) {
  g_test_summary("GPU batch == CPU batch on 300 random MoE layouts (every field, 1e-9 relative; "
                 "shortcut == every event), sampled expert loads within 2%");
  g_autoptr(GError) error = NULL;
  PtsimGpuInfo info;
  if (!gpu_usable(&info)) return;
  enum { N = 300 };
  JobgenPool pool;
  g_assert_true(jobgen_pool_load(&pool, &error));
  g_autoptr(GRand) rand = g_rand_new_with_seed(23);
  g_autofree PtsimJob *jobs = g_new0(PtsimJob, N);
  g_autofree PtsimBatchResult *cpu = g_new0(PtsimBatchResult, N);
  g_autofree PtsimBatchResult *gpu = g_new0(PtsimBatchResult, N);
  g_autofree PtsimBatchResult *full = g_new0(PtsimBatchResult, N);
  for (int i = 0; i < N;)
    if (jobgen_try_moe(&pool, rand, &jobs[i], 64)) i++;
  PtsimMonteCarlo every = {0, 0.0, 0.0, 2.0, 1, 1};
  g_assert_true(ptsim_batch_evaluate_cpu(jobs, N, cpu, &error));
  g_assert_true(ptsim_gpu_evaluate(jobs, N, gpu, &error));
  g_assert_true(ptsim_gpu_evaluate_mc(jobs, N, &every, 0, full, &error));
  g_assert_no_error(error);
  for (int i = 0; i < N; i++) {
    g_assert_cmpint(gpu[i].status, ==, cpu[i].status);
    g_assert_cmpint(gpu[i].fits, ==, cpu[i].fits);
    g_assert_true(memcmp(&gpu[i], &full[i], sizeof gpu[i]) == 0);
    for (gsize f = 0; f < JOBGEN_N_FIELDS; f++)
      if (!jobgen_close(jobgen_field(&gpu[i], f), jobgen_field(&cpu[i], f)))
        g_error("MoE job %d field %s: gpu %.17g cpu %.17g", i, jobgen_fields[f].name,
                jobgen_field(&gpu[i], f), jobgen_field(&cpu[i], f));
  }
  PtsimMonteCarlo mc = {32, 0.0, 0.0, 2.0, 5, 0};
  for (int i = 0; i < 64; i++) {
    int64_t bytes = ptsim_batch_scratch_bytes_mc(&jobs[i], &mc);
    g_autofree void *scratch = g_malloc(bytes);
    ptsim_batch_evaluate_mc(&jobs[i], &mc, ptsim_kernel_registry_tables(NULL), kernel_table_count(),
                            (uint64_t)i, scratch, bytes, &cpu[i]);
  }
  g_assert_true(ptsim_gpu_evaluate_mc(jobs, 64, &mc, 0, gpu, &error));
  g_assert_no_error(error);
  for (int i = 0; i < 64; i++) {
    if (cpu[i].status != 0) continue;
    g_assert_cmpfloat(fabs(gpu[i].step_p50_s / cpu[i].step_p50_s - 1.0), <, 0.02);
  }
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/gpu/matches-cpu", test_gpu_matches_cpu);
  g_test_add_func("/gpu/shortcut-exact", test_gpu_shortcut_exact);
  g_test_add_func("/gpu/montecarlo-matches-cpu", test_gpu_montecarlo_matches_cpu);
  g_test_add_func("/gpu/moe-matches-cpu", test_gpu_moe_matches_cpu);
  return g_test_run();
}
