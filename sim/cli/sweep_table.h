/* sweep_table.h — what `ptsim sweep` prints: the table of the ranked
 * layouts with both verdicts (the 80% rule's `fits`, the allocator
 * emulation's `runs`), their counts, why the best wins or ties (within the
 * error band of error_bands.h).
 *
 * CLI module.  Not here: evaluation and the verdicts (sim/run/sweep.h),
 * the ranking and the CSV (sim/run/sweep_rows.h, the library's rows), the
 * command's flow — held, streamed, shards (sweep_cmd.c), shard files
 * (sweep_shard.h). */
#ifndef PTSIM_SWEEP_TABLE_H
#define PTSIM_SWEEP_TABLE_H

#include <glib.h>
#include "sweep.h"
#include "sweep_rows.h"

/* Verdicts over every evaluated layout. */
typedef struct {
  guint64 fitting;  /* within the 80% rule */
  guint64 running;  /* predicted to run */
  guint64 tight;    /* predicted to run, over the 80% rule */
  guint64 doubt;    /* not settled (out of contention) */
  guint64 emulated; /* settled by the allocator emulation */
  guint64 failed;   /* could not be scheduled */
} PtsimSweepCounts;

/* Adds results[0..n) to *c. */
void ptsim_sweep_count_verdicts(PtsimSweepCounts *c, const PtsimBatchResult *results, guint n);

/* The counts line, the first `top` rows of `order`, why the best wins
 * (or the layouts it ties with), and the rejected combinations by reason. */
void ptsim_sweep_write_table(GString *out, const PtsimSweep *sweep, const PtsimSweepCounts *c,
                             GArray *order, guint top);

/* When no layout of the sweep runs (c->running 0, valid layouts
 * evaluated): a headline saying so, and for the layouts closest to
 * running (ptsim_sweep_closest) what would make them run (remedies.h),
 * each with its predict command line; SETTINGS: the sweep's settings
 * flags, for those lines (NULL-terminated, may be NULL).  Nothing
 * otherwise. */
void ptsim_sweep_write_nothing_runs(GString *out, const PtsimSweep *sweep,
                                    const PtsimSweepCounts *c, const char *const *settings);

/* The best layout that runs per model, hardware and GPU count (GROUPS and
 * BEST of ptsim_sweep_best_per_group), when the sweep has more than one. */
void ptsim_sweep_write_best_per_group(GString *out, const PtsimSweep *sweep, const GArray *groups,
                                      const GArray *best);

#endif /* PTSIM_SWEEP_TABLE_H */
