/* bench_batch.c — layouts per second of the batch evaluator on one CPU
 * thread and on the GPU, and how far apart the two are, field by field.
 *
 *   bench_batch [N (10000)] [SEED (1)]
 *
 * Draws N random valid layouts (tests/jobgen.h: llama3-8b/70b, gpt3-175b on
 * a100-80g/h100-80g, varied tp/pp/dp/cp/vp/mbs/schedule/recompute), runs
 * the CPU batch (ptsim_batch_evaluate_cpu) and, when a device is present,
 * the GPU batch (ptsim_gpu_evaluate: one warm-up call, then the timed one,
 * transfers included).  Prints Markdown.  Without CUDA or a device the GPU
 * part says why it was skipped.  Exit status: 0, or 1 when a field differs
 * by more than 1e-12 + 1e-9 relative (or the setup failed). */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../tests/jobgen.h"
#include "batch_cpu.h"
#include "gpu.h"

int main(int argc, char **argv) {
  gsize n = argc > 1 ? (gsize)g_ascii_strtoull(argv[1], NULL, 10) : 10000;
  guint32 seed = argc > 2 ? (guint32)g_ascii_strtoull(argv[2], NULL, 10) : 1;
  g_autoptr(GError) error = NULL;
  if (n == 0) n = 10000;
  g_autoptr(GRand) rand = g_rand_new_with_seed(seed);
  g_autofree PtsimJob *jobs = g_new0(PtsimJob, n);
  g_autofree PtsimBatchResult *cpu = g_new0(PtsimBatchResult, n);
  g_autofree PtsimBatchResult *gpu = g_new0(PtsimBatchResult, n);
  if (!jobgen_fill(rand, jobs, n, &error)) {
    fprintf(stderr, "bench_batch: %s\n", error->message);
    return 1;
  }
  int64_t max_scratch = 0;
  for (gsize i = 0; i < n; i++) max_scratch = MAX(max_scratch, ptsim_batch_scratch_bytes(&jobs[i]));

  printf("batch of %" G_GSIZE_FORMAT " random valid layouts (seed %u; largest scratch %.1f KiB "
         "per layout)\n\n", n, seed, (double)max_scratch / 1024.0);
  gint64 start = g_get_monotonic_time();
  ptsim_batch_evaluate_cpu(jobs, n, cpu, NULL);
  double cpu_s = (double)(g_get_monotonic_time() - start) * 1e-6;
  gsize failed = 0;
  for (gsize i = 0; i < n; i++) failed += cpu[i].status != 0;
  printf("- CPU, 1 thread: %.3f s, %.0f layouts/s (%" G_GSIZE_FORMAT " with a non-zero status)\n",
         cpu_s, (double)n / cpu_s, failed);

  PtsimGpuInfo info;
  if (!ptsim_gpu_query(&info, &error)) {
    printf("- GPU: skipped (%s)\n", error->message);
    return 0;
  }
  /* Warm-up: context creation, module load, stack limit. */
  if (!ptsim_gpu_evaluate(jobs, MIN(n, (gsize)256), gpu, &error)) {
    printf("- GPU: FAILED (%s)\n", error->message);
    return 1;
  }
  start = g_get_monotonic_time();
  if (!ptsim_gpu_evaluate(jobs, n, gpu, &error)) {
    printf("- GPU: FAILED (%s)\n", error->message);
    return 1;
  }
  double gpu_s = (double)(g_get_monotonic_time() - start) * 1e-6;
  printf("- GPU, %s: %.3f s, %.0f layouts/s (transfers included), %.1fx the CPU thread\n\n",
         info.name, gpu_s, (double)n / gpu_s, cpu_s / gpu_s);

  double max_rel[JOBGEN_N_FIELDS] = {0};
  gsize bad = 0, bad_int = 0, identical = 0;
  for (gsize i = 0; i < n; i++) {
    bad_int += gpu[i].status != cpu[i].status || gpu[i].fits != cpu[i].fits ||
               gpu[i].peak_stage != cpu[i].peak_stage;
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
         " layouts with a different status/fits/peak_stage\n",
         identical, n * JOBGEN_N_FIELDS, bad, bad_int);
  return bad == 0 && bad_int == 0 ? 0 : 1;
}
