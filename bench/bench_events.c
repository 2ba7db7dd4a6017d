/* bench_events.c — what the engine's periodic shortcut saves, by
 * microbatch count: the layouts of a sweep, each simulated event by event
 * (ptsim_engine_run_full), with the shortcut (ptsim_engine_run), and as
 * the sweeps compute them (ptsim_engine_run_recurrence: no events, the
 * same shortcut); events or items per layout and microseconds per layout
 * on one core (engine only, CPU time), grouped by m.
 *
 *   bench_events [--schedule S] [--recurrence-only [--replay]] [sweep flags...]
 *
 * --recurrence-only times the recurrence alone (the sweep's engine): the
 * event-by-event runs of a large sweep take minutes.  A second table groups
 * the same layouts by virtual pipeline size vp: the cost per layout should
 * depend on neither m nor vp once the shortcut has the steady state.
 * --replay runs the engine as the sweep's workers do
 * (ptsim_engine_run_replayed with one cache for the whole run: a shape's
 * recorded order replayed, engine_replay.c) in place of the recurrence; its
 * "items computed" are then every item of a replayed layout.
 *
 * The sweep flags are those of `ptsim sweep` for the scenario (--model,
 * --hw, --gpus, --seq, --gbs; defaults: the Llama-3-70B sweep,
 * a100-80g,h100-80g x 64..1024 GPUs x seq 4096,8192, gbs 1024).  Prints
 * Markdown.  A benchmark: it asserts nothing, except that both runs give
 * the same bytes (exit 1 otherwise). */
#include <glib.h>
#include <stdio.h>
#include <string.h>
#include "batch_cpu.h"
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

/* The recurrence's table (--recurrence-only), one row per bucket. */
static void print_recurrence(const char *by, const Bucket *buckets, const int64_t *upper, int n,
                             guint layouts, gboolean replay) {
  printf("per layout by %s, %u layouts (one core, CPU time, the sweep's engine: %s)\n\n", by,
         layouts,
         replay ? "a shape's recorded order replayed, else the recurrence with its shortcut"
                : "the recurrence with its shortcut");
  printf("| %s | layouts | items | items computed | us per layout | ns per item computed "
         "|\n|---|---|---|---|---|---|\n",
         strchr(by, ' ') ? strrchr(by, ' ') + 1 : by);
  for (int k = 0; k < n; k++) {
    const Bucket *b = &buckets[k];
    if (b->layouts == 0) continue;
    printf("| %s%" G_GINT64_FORMAT " | %u | %.0f | %.0f | %.2f | %.1f |\n",
           k == n - 1 ? "> " : "<= ", k == n - 1 ? upper[k - 1] : upper[k], b->layouts,
           b->items / b->layouts, b->computed / b->layouts, b->recur_us / b->layouts,
           b->computed > 0 ? 1000.0 * b->recur_us / b->computed : 0.0);
  }
  printf("\n");
}

int main(int argc, char **argv) {
  g_autoptr(PtsimSweepSpec) spec = ptsim_sweep_spec_new();
  g_autoptr(GError) error = NULL;
  BenchScenario sc;
  gboolean recurrence_only = FALSE, replay = FALSE;
  bench_scenario_init(spec, &sc);
  for (int i = 1; i < argc; i += 2) {
    if (strcmp(argv[i], "--recurrence-only") == 0) {
      recurrence_only = TRUE;
      i -= 1;
      continue;
    }
    if (strcmp(argv[i], "--replay") == 0) {
      replay = TRUE;
      i -= 1;
      continue;
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "bench_events: %s needs a value\n", argv[i]);
      return 1;
    }
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
  enum { VP_BUCKETS = 6 };
  static const int64_t vp_upper[VP_BUCKETS] = {1, 2, 4, 8, 16, 1 << 30};
  Bucket by_vp[VP_BUCKETS];
  memset(by_vp, 0, sizeof by_vp);
  g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
  g_autofree PtsimWorkload *w = g_new0(PtsimWorkload, 1);
  g_autofree PtsimTimeResult *full = g_new0(PtsimTimeResult, 1);
  g_autofree PtsimTimeResult *fast = g_new0(PtsimTimeResult, 1);
  g_autofree PtsimTimeResult *recur = g_new0(PtsimTimeResult, 1);
  gsize scratch_bytes = 0;
  void *scratch = NULL;
  void *cache = ptsim_batch_cpu_thread_cache(); /* as the sweep's workers */
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
    gint64 t0 = bench_cpu_us(), t1 = t0, t2 = t0;
    if (!recurrence_only) {
      if (ptsim_engine_run_full(plan, w, scratch, bytes, NULL, full) != 0) continue;
      t1 = bench_cpu_us();
      if (ptsim_engine_run(plan, w, scratch, bytes, NULL, fast) != 0) return 1;
      t2 = bench_cpu_us();
    }
    if (replay ? ptsim_engine_run_replayed(plan, w, cache, scratch, bytes, recur) != 0
               : ptsim_engine_run_recurrence(plan, w, scratch, bytes, recur) != 0)
      return 1;
    gint64 t3 = bench_cpu_us();
    Bucket *b = &buckets[0];
    for (int k = 0; k < BUCKETS; k++)
      if (plan->num_microbatches <= upper[k]) {
        b = &buckets[k];
        break;
      }
    Bucket *bv = &by_vp[0];
    for (int k = 0; k < VP_BUCKETS; k++)
      if (plan->num_chunks <= vp_upper[k]) {
        bv = &by_vp[k];
        break;
      }
    Bucket *both[2] = {b, bv};
    for (int k = 0; k < 2; k++) {
      both[k]->layouts++;
      both[k]->events += (double)recur->events;
      both[k]->simulated += recurrence_only ? 0.0 : (double)fast->events_simulated;
      both[k]->full_us += (double)(t1 - t0);
      both[k]->shortcut_us += (double)(t2 - t1);
      both[k]->items += (double)plan->num_stages * (double)plan->schedule_items;
      both[k]->computed += (double)recur->events_simulated;
      both[k]->recur_us += (double)(t3 - t2);
    }
    if (recurrence_only) continue;
    full->events_simulated = fast->events_simulated = recur->events_simulated = 0;
    recur->events = full->events;
    if (memcmp(full, fast, sizeof *full) != 0 || memcmp(full, recur, sizeof *full) != 0) {
      fprintf(stderr, "bench_events: layout %u differs between the two runs\n", i);
      return 1;
    }
  }
  g_free(scratch);
  if (recurrence_only) {
    print_recurrence("microbatch count m", buckets, upper, BUCKETS, sweep->jobs->len, replay);
    print_recurrence("virtual pipeline size vp", by_vp, vp_upper, VP_BUCKETS, sweep->jobs->len,
                     replay);
    return 0;
  }
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
