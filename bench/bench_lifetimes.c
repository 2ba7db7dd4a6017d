/* bench_lifetimes.c — what the `runs` verdict and the table's allocator
 * column cost: the layouts a sweep emulates (the fastest that may run,
 * ptsim_sweep_settle_top), each replayed through the caching-allocator
 * emulation item by item and with the periodic shortcut; schedule items
 * replayed and CPU milliseconds per layout on one core (both steps, every
 * stage), and a check that both give the same bytes.
 *
 *   bench_lifetimes [--lists issue|default] [--top N] [sweep flags...]
 *
 * The sweep flags are those of `ptsim sweep` for the scenario (--model,
 * --hw, --gpus, --seq, --gbs; defaults: issue 13's Llama-3-70B sweep).
 * --lists issue (the default) enumerates its cp 1,2,4,8, vp 2,4 and mbs
 * 1,2,4,8 (48,216 layouts); default: the sweep's own lists.  Prints
 * Markdown.  A benchmark: it asserts nothing, except that both replays give
 * the same bytes (exit 1 otherwise). */
#include <glib.h>
#include <stdio.h>
#include <string.h>
#include "bench_sweep.h"
#include "names.h"
#include "plan.h"
#include "simulate.h"
#include "sweep.h"

/* One emulation; its items replayed (all stages) in *replayed, CPU us returned. */
static gint64 emulate(const PtsimPlan *plan, gboolean every_item, PtsimAllocResult *out,
                      int64_t *replayed) {
  g_autoptr(GError) error = NULL;
  memset(out, 0, sizeof *out);
  gint64 t0 = bench_cpu_us();
  if (!ptsim_simulate_allocator_with(plan, PTSIM_LIFETIMES_STEPS, NULL, every_item, NULL, 0.0, NULL,
                                     out, &error))
    return -1;
  gint64 t1 = bench_cpu_us();
  *replayed = 0;
  for (int64_t s = 0; s < out->num_stages; s++) {
    *replayed += out->stages[s].items_replayed;
    out->stages[s].items_replayed = 0;
  }
  return t1 - t0;
}

int main(int argc, char **argv) {
  g_autoptr(PtsimSweepSpec) spec = ptsim_sweep_spec_new();
  g_autoptr(GError) error = NULL;
  const char *lists = "issue";
  guint top = 10;
  BenchScenario sc;
  bench_scenario_init(spec, &sc);
  for (int i = 1; i + 1 < argc; i += 2) {
    if (bench_scenario_flag(spec, &sc, argv[i], argv[i + 1])) continue;
    if (strcmp(argv[i], "--lists") == 0)
      lists = argv[i + 1];
    else if (strcmp(argv[i], "--top") == 0)
      top = (guint)g_ascii_strtoull(argv[i + 1], NULL, 10);
    else {
      fprintf(stderr, "bench_lifetimes: unknown flag %s\n", argv[i]);
      return 1;
    }
  }
  if (strcmp(lists, "issue") == 0) {
    bench_parse_list("1,2,4,8", spec->cps);
    bench_parse_list("2,4", spec->vps);
    bench_parse_list("1,2,4,8", spec->mbs);
  } else if (strcmp(lists, "default") != 0) {
    fprintf(stderr, "bench_lifetimes: --lists %s: issue or default\n", lists);
    return 1;
  }
  bench_scenario_finish(spec, &sc);
  g_autoptr(PtsimSweep) sweep = ptsim_sweep_enumerate(spec, &error);
  if (!sweep || !ptsim_sweep_evaluate(sweep, PTSIM_DEVICE_CPU, 0, NULL, NULL, &error)) {
    fprintf(stderr, "bench_lifetimes: %s\n", error->message);
    return 1;
  }
  const PtsimJob *jobs = (const PtsimJob *)sweep->jobs->data;
  PtsimBatchResult *results = (PtsimBatchResult *)sweep->results->data;
  ptsim_sweep_settle_top(jobs, results, sweep->jobs->len, top, 0, FALSE);
  printf("the layouts a sweep of %u emulates for its top %u (--lists %s); per layout, both steps, "
         "every stage, one core, CPU time; the two replays give the same bytes\n\n",
         sweep->jobs->len, top, lists);
  printf("| layout | m | items | replayed, shortcut | ms every item | ms shortcut |\n"
         "|---|---|---|---|---|---|\n");
  g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
  g_autofree PtsimAllocResult *full = g_new0(PtsimAllocResult, 1);
  g_autofree PtsimAllocResult *fast = g_new0(PtsimAllocResult, 1);
  double n = 0, items = 0, replayed = 0, full_us = 0, fast_us = 0;
  for (guint i = 0; i < sweep->jobs->len; i++) {
    if (results[i].runs_from != PTSIM_RUNS_FROM_ALLOCATOR) continue;
    const PtsimLayout *l = &jobs[i].layout;
    const PtsimSettings *run = &jobs[i].settings;
    int64_t all = 0, part = 0;
    ptsim_plan_build(&jobs[i], plan);
    gint64 t_full = emulate(plan, TRUE, full, &all);
    gint64 t_fast = emulate(plan, FALSE, fast, &part);
    if (t_full < 0 || t_fast < 0 || memcmp(full, fast, sizeof *full) != 0) {
      fprintf(stderr, "bench_lifetimes: layout %u: the replays differ\n", i);
      return 1;
    }
    printf("| %s %s gpus %" G_GINT64_FORMAT " seq %" G_GINT64_FORMAT " tp %" G_GINT64_FORMAT
           " pp %" G_GINT64_FORMAT " cp %" G_GINT64_FORMAT " vp %" G_GINT64_FORMAT
           " mbs %" G_GINT64_FORMAT " %s | %" G_GINT64_FORMAT " | %" G_GINT64_FORMAT
           " | %" G_GINT64_FORMAT " | %.1f | %.1f |\n",
           jobs[i].hw.name, ptsim_names_get(PTSIM_NAMES_SCHEDULE, (int)l->schedule), l->gpus,
           l->seq, l->tp, l->pp, l->cp, l->vp, l->mbs,
           ptsim_names_get(PTSIM_NAMES_RECOMPUTE, (int)run->recompute), plan->num_microbatches, all,
           part, t_full / 1000.0, t_fast / 1000.0);
    n += 1;
    items += (double)all;
    replayed += (double)part;
    full_us += (double)t_full;
    fast_us += (double)t_fast;
  }
  printf("| all %.0f layouts | | %.0f | %.0f (%.0f%%) | %.1f | %.1f |\n", n, items, replayed,
         100.0 * replayed / (items > 0 ? items : 1), full_us / 1000.0, fast_us / 1000.0);
  return 0;
}
