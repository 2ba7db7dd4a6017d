/* bench_events.c — what the engine's periodic shortcut saves, by
 * microbatch count: the layouts of a sweep, each simulated event by event
 * (ptsim_engine_run_full), with the shortcut (ptsim_engine_run), and as
 * the sweeps compute them (ptsim_engine_run_recurrence: no events, the
 * same shortcut); events or items per layout and microseconds per layout
 * on one core (engine only, CPU time), grouped by m.
 *
 *   bench_events [--schedule S] [sweep flags...]
 *
 * The sweep flags are those of `ptsim sweep` for the scenario (--model,
 * --hw, --gpus, --seq, --gbs; defaults: the Llama-3-70B sweep,
 * a100-80g,h100-80g x 64..1024 GPUs x seq 4096,8192, gbs 1024).  Prints
 * Markdown.  A benchmark: it asserts nothing, except that both runs give
 * the same bytes (exit 1 otherwise). */
#include <glib.h>
#include <stdio.h>
#include <string.h>
#include "bench_sweep.h"
#include "engine.h"
#include "names.h"
#include "plan.h"
#include "sweep.h"
#include "workload.h"

typedef struct {
  guint layouts;
  double events, simulated, full_us, shortcut_us, items, computed, recur_us;
} Bucket;

int main(int argc, char **argv) {
  g_autoptr(PtsimSweepSpec) spec = ptsim_sweep_spec_new();
  g_autoptr(GError) error = NULL;
  BenchScenario sc;
  bench_scenario_init(spec, &sc);
  for (int i = 1; i + 1 < argc; i += 2) {
    if (bench_scenario_flag(spec, &sc, argv[i], argv[i + 1])) continue;
    if (strcmp(argv[i], "--schedule") == 0) {
      int k;
      if (!ptsim_names_parse(PTSIM_NAMES_SCHEDULE, argv[i + 1], &k)) {
        fprintf(stderr, "bench_events: --schedule %s: unknown\n", argv[i + 1]);
        return 1;
      }
      g_array_set_size(spec->schedules, 0);
      g_array_append_val(spec->schedules, k);
    } else {
      fprintf(stderr, "bench_events: unknown flag %s\n", argv[i]);
      return 1;
    }
  }
  bench_scenario_finish(spec, &sc);
  g_autoptr(PtsimSweep) sweep = ptsim_sweep_enumerate(spec, &error);
  if (!sweep) {
    fprintf(stderr, "bench_events: %s\n", error->message);
    return 1;
  }
  enum { BUCKETS = 8 };
  static const int64_t upper[BUCKETS] = {8, 16, 32, 64, 128, 256, 512, 1 << 30};
  Bucket buckets[BUCKETS];
  memset(buckets, 0, sizeof buckets);
  g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
  g_autofree PtsimWorkload *w = g_new0(PtsimWorkload, 1);
  g_autofree PtsimTimeResult *full = g_new0(PtsimTimeResult, 1);
  g_autofree PtsimTimeResult *fast = g_new0(PtsimTimeResult, 1);
  g_autofree PtsimTimeResult *recur = g_new0(PtsimTimeResult, 1);
  gsize scratch_bytes = 0;
  void *scratch = NULL;
  for (guint i = 0; i < sweep->jobs->len; i++) {
    ptsim_plan_build(&g_array_index(sweep->jobs, PtsimJob, i), plan);
    int64_t bytes = ptsim_engine_scratch_bytes(plan);
    if (bytes < 0) continue;
    if ((gsize)bytes > scratch_bytes) {
      g_free(scratch);
      scratch = g_malloc(bytes);
      scratch_bytes = (gsize)bytes;
    }
    ptsim_workload_build(plan, NULL, w);
    gint64 t0 = bench_cpu_us();
    if (ptsim_engine_run_full(plan, w, scratch, bytes, NULL, full) != 0) continue;
    gint64 t1 = bench_cpu_us();
    if (ptsim_engine_run(plan, w, scratch, bytes, NULL, fast) != 0) return 1;
    gint64 t2 = bench_cpu_us();
    if (ptsim_engine_run_recurrence(plan, w, scratch, bytes, recur) != 0) return 1;
    gint64 t3 = bench_cpu_us();
    Bucket *b = &buckets[0];
    for (int k = 0; k < BUCKETS; k++)
      if (plan->num_microbatches <= upper[k]) {
        b = &buckets[k];
        break;
      }
    b->layouts++;
    b->events += (double)full->events;
    b->simulated += (double)fast->events_simulated;
    b->full_us += (double)(t1 - t0);
    b->shortcut_us += (double)(t2 - t1);
    b->items += (double)plan->num_stages * (double)plan->schedule_items;
    b->computed += (double)recur->events_simulated;
    b->recur_us += (double)(t3 - t2);
    full->events_simulated = fast->events_simulated = recur->events_simulated = 0;
    recur->events = full->events;
    if (memcmp(full, fast, sizeof *full) != 0 || memcmp(full, recur, sizeof *full) != 0) {
      fprintf(stderr, "bench_events: layout %u differs between the two runs\n", i);
      return 1;
    }
  }
  g_free(scratch);
  printf("per layout by microbatch count m, %u layouts (one core, CPU time, engine only; all "
         "three give the same bytes but for the recurrence's event count)\n\n",
         sweep->jobs->len);
  printf("| m | layouts | events, every event | events simulated, shortcut | items | items "
         "computed, recurrence | us every event | us shortcut | us recurrence |\n"
         "|---|---|---|---|---|---|---|---|---|\n");
  for (int k = 0; k < BUCKETS; k++) {
    const Bucket *b = &buckets[k];
    if (b->layouts == 0) continue;
    printf("| %s%" G_GINT64_FORMAT " | %u | %.0f | %.0f | %.0f | %.0f | %.1f | %.1f | %.1f |\n",
           k == BUCKETS - 1 ? "> " : "<= ", k == BUCKETS - 1 ? upper[k - 1] : upper[k], b->layouts,
           b->events / b->layouts, b->simulated / b->layouts, b->items / b->layouts,
           b->computed / b->layouts, b->full_us / b->layouts, b->shortcut_us / b->layouts,
           b->recur_us / b->layouts);
  }
  return 0;
}
