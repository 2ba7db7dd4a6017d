/* sweep_rows.h — an evaluated sweep as rows: the ranking (which settles
 * the `runs` verdict of the layouts that matter first), the sweep CSV's
 * columns, and each row as the CSV's text or as its cells.  What
 * `ptsim sweep` writes to its CSV and what a library caller's row callback
 * gets (sim/api) are these rows.
 *
 * Shell module (GLib).  Not here: enumeration and evaluation (sweep.h), the
 * ranked table and the shard files (the command's, sim/cli). */
#ifndef PTSIM_SWEEP_ROWS_H
#define PTSIM_SWEEP_ROWS_H

#include <glib.h>
#include "batch.h"
#include "job.h"
#include "sweep.h"

/* Layouts evaluated (and held) at once when a sweep past its in-memory
 * limit is streamed. */
#define PTSIM_SWEEP_STREAM_CHUNK 65536

/* ---- ranking ---- */

/* The sweep's layout indices, best first: layouts predicted to run, by
 * tokens/s per GPU (comparable across GPU counts); then those in doubt and
 * those that do not run (ptsim_sweep_rank_class); ties by index.  Layouts
 * that could not be scheduled are not ranked (they are rejections,
 * ptsim_sweep_reject_unscheduled).  (transfer full) */
GArray *ptsim_sweep_rank_order(const PtsimSweep *sweep);

/* The first `top` rows of `order` that the emulation has not seen get it
 * too, for their alloc GiB column (the fastest that may run are settled
 * already).  Returns how many it ran; rank again when it ran any. */
guint ptsim_sweep_emulate_shown(PtsimSweep *sweep, GArray *order, guint top, guint threads);

/* An evaluated sweep held in memory, ranked: the emulation settles the
 * `top` fastest layouts that may run (ptsim_sweep_settle_top), and with
 * EMULATE_SHOWN the first `top` rows too (ptsim_sweep_emulate_shown, as the
 * table and its CSV file show them); the order.  (transfer full) */
GArray *ptsim_sweep_rank(PtsimSweep *sweep, guint top, guint threads, gboolean every_item,
                         gboolean emulate_shown);

/* Layouts that could not be scheduled (status != 0) are rejections, not
 * rankings: each counted into sweep->rejected (or REJECTED, when not NULL)
 * as "could not be scheduled: WHY"; returns how many. */
guint ptsim_sweep_reject_unscheduled(const PtsimSweep *sweep, const PtsimBatchResult *results,
                                     guint n, GHashTable *rejected);

/* The best layout that runs of each (model, hardware, GPU count) of the
 * sweep, in enumeration order: the fastest by tokens/s per GPU whose runs
 * verdict is yes, emulating in that order the ones in doubt until one
 * runs.  G_MAXUINT for a group in which nothing runs.  GROUPS receives the
 * first layout index of each group.  (transfer full: guint) */
GArray *ptsim_sweep_best_per_group(PtsimSweep *sweep, guint threads, GArray *groups);

/* The layouts closest to running (none of them runs): the `n` whose held
 * floor plus context and NCCL (memory.h) is the smallest fraction of
 * their GPU, smallest first.  (transfer full: guint) */
GArray *ptsim_sweep_closest(const PtsimSweep *sweep, guint n);

/* "no valid layout among N combinations; rejected, by reason:" and the
 * reasons, one line each (PTSIM_CONFIG_ERROR_INVALID). */
void ptsim_sweep_no_valid_error(const PtsimSweep *sweep, GError **error);

/* ---- the CSV ---- */

/* Ranks of one shard group of the states the layout shards (1: none). */
gint64 ptsim_sweep_shard_group(const PtsimLayout *l);

/* The runs verdict's source as the CSV says it: "80% rule", "floor",
 * "allocator", or "" (not settled). */
const char *ptsim_sweep_runs_from_word(int32_t from);

/* The CSV: its header line, one row (rank 0: unranked), and the whole
 * ranked sweep.  A stable interface: columns are only ever appended (the
 * expert-parallel ones, ep,etp,edp,exposed_ep_s, came last; dense layouts
 * have ep 1, etp 0 or tp, exposed_ep_s 0; pipeline_layout, the last, is
 * empty for even splits). */
const char *ptsim_sweep_csv_header(void);
/* The layout's split as Megatron-LM's --pipeline-model-parallel-layout
 * string (ptsim_pipeline_layout_format; the CSV's last column,
 * pipeline_layout), NULL for an even split.  (transfer full) */
char *ptsim_sweep_layout_string(const PtsimJob *job);
void ptsim_sweep_csv_row(GString *out, guint64 rank, const PtsimJob *job,
                         const PtsimBatchResult *r);
void ptsim_sweep_write_csv(GString *out, const PtsimSweep *sweep, GArray *order, guint threads);

/* A row ptsim_sweep_csv_row wrote for JOB, alone in LINE, split into its
 * cells in place (the commas and the newline become NULs; the model and
 * hardware names are cut by their length, so a name with a comma stays
 * one cell); CELLS receives up to MAX of them.  Returns the cell count. */
guint ptsim_sweep_csv_cells(GString *line, const PtsimJob *job, const char **cells, guint max);

/* Appends rows 0..n-1, fn(out, k, data) each, in slices on up to `threads`
 * threads (0: all cores) when there are many: the same bytes as one after
 * the other (formatting the numbers is most of a CSV's cost). */
typedef void (*PtsimSweepRowFn)(GString *out, guint k, gconstpointer data);
void ptsim_sweep_format_rows(GString *out, guint n, guint threads, PtsimSweepRowFn fn,
                             gconstpointer data);

#endif /* PTSIM_SWEEP_ROWS_H */
