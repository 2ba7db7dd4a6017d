/* bench_batch.c — layouts per second of the batch evaluator on one CPU
 * thread and on the GPU, and how far apart the two are.
 *
 *   bench_batch [N (10000)] [SEED (1)] [SAMPLES (0)]
 *
 * Draws N random valid layouts (tests/jobgen.h: llama3-8b/70b, gpt3-175b on
 * a100-80g/h100-80g, varied tp/pp/dp/cp/vp/mbs/schedule/recompute), runs
 * the CPU batch and, when a device is present, the GPU batch (one warm-up
 * call, then the timed one, transfers included).  Prints Markdown.  Without
 * CUDA or a device the GPU part says why it was skipped.
 *
 * Deterministic (SAMPLES 0): the GPU runs the CPU's very code, so every
 * result must be the same bytes; the exit status is 1 when a field differs
 * by more than 1e-12 + 1e-9 relative, 2 when all are that close but some
 * are not bit-identical, 0 otherwise (or 1 when the setup failed).
 * Monte-Carlo (SAMPLES > 0, sigma 0.05, 1% stragglers x2): samples per
 * second on each side, and how far the GPU's p50/p90 (cuRAND streams) are
 * from the CPU's (Philox): the same distribution, not the same draws. */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../tests/jobgen.h"
#include "batch_cpu.h"
#include "gpu.h"
#include "kernel_registry.h"

/* How many kernel tables the profiles loaded so far registered: the CPU
 * batch and ptsim_simulate price with them (kernel_registry.h). */
static int32_t kernel_table_count(void) {
  int32_t n = 0;
  ptsim_kernel_registry_tables(&n);
  return n;
}

/* The Monte-Carlo comparison; returns the exit status. */
static int compare_montecarlo(const PtsimBatchResult *cpu, const PtsimBatchResult *gpu, gsize n) {
  double p50 = 0.0, p90 = 0.0;
  for (gsize i = 0; i < n; i++) {
    if (cpu[i].status != 0 || gpu[i].status != 0) continue;
    p50 = MAX(p50, jobgen_rel_diff(gpu[i].step_p50_s, cpu[i].step_p50_s));
    p90 = MAX(p90, jobgen_rel_diff(gpu[i].step_p90_s, cpu[i].step_p90_s));
  }
  printf("- GPU vs CPU percentiles (other random streams): max relative difference p50 %.3g, "
         "p90 %.3g\n",
         p50, p90);
  return 0;
}

/* The deterministic comparison, field by field; returns the exit status. */
static int compare_exact(const PtsimBatchResult *cpu, const PtsimBatchResult *gpu, gsize n) {
  double max_rel[JOBGEN_N_FIELDS] = {0};
  gsize bad = 0, bad_int = 0, identical = 0, same_bytes = 0;
  for (gsize i = 0; i < n; i++) {
    bad_int += gpu[i].status != cpu[i].status || gpu[i].fits != cpu[i].fits ||
               gpu[i].peak_stage != cpu[i].peak_stage;
    same_bytes += memcmp(&gpu[i], &cpu[i], sizeof gpu[i]) == 0;
    for (gsize f = 0; f < JOBGEN_N_FIELDS; f++) {
      double g = jobgen_field(&gpu[i], f), c = jobgen_field(&cpu[i], f);
      max_rel[f] = MAX(max_rel[f], jobgen_rel_diff(g, c));
      bad += !jobgen_close(g, c);
      identical += memcmp(&g, &c, sizeof g) == 0;
    }
  }
  printf("| field | max relative difference GPU vs CPU |\n| --- | --- |\n");
  for (gsize f = 0; f < JOBGEN_N_FIELDS; f++)
    printf("| %s | %.3g |\n", jobgen_fields[f].name, max_rel[f]);
  printf("\n%" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT " floating-point fields bit-identical; "
         "%" G_GSIZE_FORMAT " beyond 1e-12 + 1e-9 rel; %" G_GSIZE_FORMAT
         " layouts with a different status/fits/peak_stage\n"
         "bit for bit: %" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT " results the same bytes\n",
         identical, n * JOBGEN_N_FIELDS, bad, bad_int, same_bytes, n);
  if (bad != 0 || bad_int != 0) return 1;
  return same_bytes == n ? 0 : 2;
}

int main(int argc, char **argv) {
  gsize n = argc > 1 ? (gsize)g_ascii_strtoull(argv[1], NULL, 10) : 10000;
  guint32 seed = argc > 2 ? (guint32)g_ascii_strtoull(argv[2], NULL, 10) : 1;
  int samples = argc > 3 ? atoi(argv[3]) : 0;
  g_autoptr(GError) error = NULL;
  if (n == 0) n = 10000;
  if (samples < 0 || samples > PTSIM_BATCH_MAX_SAMPLES) samples = 0;
  PtsimMonteCarlo mc = {samples, 0.05, 0.01, 2.0, 1, 0};
  g_autoptr(GRand) rand = g_rand_new_with_seed(seed);
  g_autofree PtsimJob *jobs = g_new0(PtsimJob, n);
  g_autofree PtsimBatchResult *cpu = g_new0(PtsimBatchResult, n);
  g_autofree PtsimBatchResult *gpu = g_new0(PtsimBatchResult, n);
  if (!jobgen_fill(rand, jobs, n, &error)) {
    fprintf(stderr, "bench_batch: %s\n", error->message);
    return 1;
  }
  int64_t max_scratch = 0;
  for (gsize i = 0; i < n; i++)
    max_scratch = MAX(max_scratch, ptsim_batch_scratch_bytes_mc(&jobs[i], &mc));

  printf("batch of %" G_GSIZE_FORMAT " random valid layouts (seed %u; largest scratch %.1f KiB "
         "per layout)%s\n\n",
         n, seed, (double)max_scratch / 1024.0, samples > 0 ? ", Monte-Carlo" : "");
  double units = samples > 0 ? (double)n * samples : (double)n;
  const char *unit = samples > 0 ? "samples/s" : "layouts/s";
  g_autofree void *scratch = g_malloc(max_scratch);
  gint64 start = g_get_monotonic_time();
  for (gsize i = 0; i < n; i++) /* what ptsim_batch_evaluate_cpu does, with the samples */
    ptsim_batch_evaluate_mc(&jobs[i], &mc, ptsim_kernel_registry_tables(NULL), kernel_table_count(),
                            i, scratch, max_scratch, &cpu[i]);
  double cpu_s = (double)(g_get_monotonic_time() - start) * 1e-6;
  gsize failed = 0;
  for (gsize i = 0; i < n; i++) failed += cpu[i].status != 0;
  printf("- CPU, 1 thread: %.3f s, %.0f %s (%" G_GSIZE_FORMAT " with a non-zero status)\n", cpu_s,
         units / cpu_s, unit, failed);

  PtsimGpuInfo info;
  if (!ptsim_gpu_query(&info, &error)) {
    printf("- GPU: skipped (%s)\n", error->message);
    return 0;
  }
  /* Warm-up: context creation, module load, stack limit. */
  if (!ptsim_gpu_evaluate_mc(jobs, MIN(n, (gsize)256), &mc, 0, gpu, &error)) {
    printf("- GPU: FAILED (%s)\n", error->message);
    return 1;
  }
  start = g_get_monotonic_time();
  if (!ptsim_gpu_evaluate_mc(jobs, n, &mc, 0, gpu, &error)) {
    printf("- GPU: FAILED (%s)\n", error->message);
    return 1;
  }
  double gpu_s = (double)(g_get_monotonic_time() - start) * 1e-6;
  printf("- GPU, %s: %.3f s, %.0f %s (transfers included), %.1fx the CPU thread\n\n", info.name,
         gpu_s, units / gpu_s, unit, cpu_s / gpu_s);
  return samples > 0 ? compare_montecarlo(cpu, gpu, n) : compare_exact(cpu, gpu, n);
}
