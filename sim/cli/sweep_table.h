/* sweep_table.h — what `ptsim sweep` prints: the ranking of the evaluated
 * layouts, the table with both verdicts (the 80% rule's `fits`, the
 * allocator emulation's `runs`), why the best wins or ties (within the
 * error band of error_bands.h), and the CSV, formatted on every core.
 *
 * CLI module.  Not here: evaluation and the verdicts (sim/run/sweep.h),
 * the command's flow — held, streamed, shards (sweep_cmd.c), shard files
 * (sweep_shard.h). */
#ifndef PTSIM_SWEEP_TABLE_H
#define PTSIM_SWEEP_TABLE_H

#include <glib.h>
#include "sweep.h"

/* Verdicts over every evaluated layout. */
typedef struct {
  guint64 fitting;   /* within the 80% rule */
  guint64 running;   /* predicted to run */
  guint64 tight;     /* predicted to run, over the 80% rule */
  guint64 doubt;     /* not settled (out of contention) */
  guint64 emulated;  /* settled by the allocator emulation */
  guint64 failed;    /* could not be scheduled */
} PtsimSweepCounts;

/* Adds results[0..n) to *c. */
void ptsim_sweep_count_verdicts(PtsimSweepCounts *c, const PtsimBatchResult *results, guint n);

/* The sweep's layout indices, best first: layouts predicted to run, by
 * tokens/s per GPU (comparable across GPU counts); then those in doubt,
 * those that do not run, those that could not be scheduled
 * (ptsim_sweep_rank_class); ties by index.  (transfer full) */
GArray *ptsim_sweep_rank_order(const PtsimSweep *sweep);

/* The first `top` rows of `order` that the emulation has not seen get it
 * too, for their alloc GiB column (the fastest that may run are settled
 * already).  Returns how many it ran; rank again when it ran any. */
guint ptsim_sweep_emulate_shown(PtsimSweep *sweep, GArray *order, guint top, guint threads);

/* The counts line, the first `top` rows of `order`, why the best wins
 * (or the layouts it ties with), and the rejected combinations by reason. */
void ptsim_sweep_write_table(GString *out, const PtsimSweep *sweep, const PtsimSweepCounts *c,
                             GArray *order, guint top);

/* The CSV: its header line, one row (rank 0: unranked), and the whole
 * ranked sweep.  A stable interface: columns are only ever appended (the
 * expert-parallel ones, ep,etp,edp,exposed_ep_s, came last; dense layouts
 * have ep 1, etp 0 or tp, exposed_ep_s 0). */
const char *ptsim_sweep_csv_header(void);
void ptsim_sweep_csv_row(GString *out, guint64 rank, const PtsimJob *job,
                         const PtsimBatchResult *r);
void ptsim_sweep_write_csv(GString *out, const PtsimSweep *sweep, GArray *order, guint threads);

/* Appends rows 0..n-1, fn(out, k, data) each, in slices on up to `threads`
 * threads (0: all cores) when there are many: the same bytes as one after
 * the other (formatting the numbers is most of a CSV's cost). */
typedef void (*PtsimSweepRowFn)(GString *out, guint k, gconstpointer data);
void ptsim_sweep_format_rows(GString *out, guint n, guint threads, PtsimSweepRowFn fn,
                             gconstpointer data);

#endif /* PTSIM_SWEEP_TABLE_H */
