/* bench_engine.c — how long one full simulation of one layout takes on one
 * core: workload build + engine run (the memory estimate too), for the
 * issue's reference case, Llama-3-70B on 512 H100s, tp 8, pp 8, 64
 * microbatches.  Prints the median of repeated batches.  A benchmark, not
 * a test: it asserts nothing. */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include "config.h"
#include "job_validate.h"
#include "engine.h"
#include "memory.h"
#include "workload.h"

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  const char *schedule = argc > 1 ? argv[1] : "1f1b";
  PtsimJob job;
  g_autoptr(GError) error = NULL;
  ptsim_job_init_defaults(&job);
  if (!ptsim_model_load("llama3-70b", &job.model, &error) ||
      !ptsim_hardware_load("h100-80g", &job.hw, &error)) {
    fprintf(stderr, "bench_engine: %s\n", error->message);
    return 1;
  }
  job.layout.gpus = 512;
  job.layout.tp = 8;
  job.layout.pp = 8;
  job.layout.mbs = 1;
  job.layout.gbs = 512; /* dp 8 -> 64 microbatches */
  job.layout.seq = 8192;
  if (g_strcmp0(schedule, "interleaved") == 0) job.layout.vp = 5;
  if (g_strcmp0(schedule, "zb-h1") == 0) job.layout.schedule = PTSIM_SCHEDULE_ZB_H1;
  if (!ptsim_job_validate(&job, &error)) {
    fprintf(stderr, "bench_engine: %s\n", error->message);
    return 1;
  }
  PtsimPlan *plan = g_new0(PtsimPlan, 1);
  ptsim_plan_build(&job, plan);
  int64_t bytes = ptsim_engine_scratch_bytes(plan);
  void *scratch = g_malloc(bytes);
  PtsimWorkload *w = g_new0(PtsimWorkload, 1);
  PtsimTimeResult *t = g_new0(PtsimTimeResult, 1);
  PtsimMemoryEstimate *m = g_new0(PtsimMemoryEstimate, 1);
  enum { BATCHES = 21, PER_BATCH = 200 };
  double per_layout_us[BATCHES];
  double sink = 0.0;
  for (int b = 0; b < BATCHES; b++) {
    gint64 start = g_get_monotonic_time();
    for (int i = 0; i < PER_BATCH; i++) {
      ptsim_plan_build(&job, plan); /* per layout, as the batch evaluator does */
      ptsim_memory_estimate(plan, PTSIM_CE_LAST_STAGE, m);
      ptsim_workload_build(plan, NULL, w);
      if (ptsim_engine_run(plan, w, scratch, bytes, NULL, t) != 0) return 1;
      sink += t->step_s + m->total_bytes;
    }
    per_layout_us[b] = (double)(g_get_monotonic_time() - start) / PER_BATCH;
  }
  qsort(per_layout_us, BATCHES, sizeof(double), compare_double);
  printf("engine: llama3-70b h100-80g gpus 512 tp 8 pp 8 vp %" G_GINT64_FORMAT
         " m 64 schedule %s: %.1f us per layout (median of %d x %d; min %.1f), "
         "%" G_GINT64_FORMAT " events (%" G_GINT64_FORMAT " simulated), step %.3f s "
         "(checksum %g)\n",
         job.layout.vp, schedule, per_layout_us[BATCHES / 2], BATCHES, PER_BATCH, per_layout_us[0],
         t->events, t->events_simulated, t->step_s, sink);
  g_free(scratch);
  g_free(plan);
  g_free(w);
  g_free(t);
  g_free(m);
  return 0;
}
