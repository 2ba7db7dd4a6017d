/* api_sweep.c — a sweep through the library, row by row; see ptsim.h.
 * The flags are `ptsim sweep`'s (sweep_options.h), the flow the command's:
 * held in memory and ranked up to --in-memory-max layouts, else streamed in
 * chunks, each chunk's fastest layouts settled by the emulation as the
 * command settles them; each row is the sweep CSV's (sweep_rows.h), split
 * into its cells. */
#include "api_int.h"

#include <string.h>
#include "config.h"
#include "sweep_options.h"
#include "sweep_rows.h"

/* What every row needs: the column names, the caller's callback, and what
 * settles a streamed chunk. */
typedef struct {
  PtsimApiRowFn fn;
  void *user_data;
  char **names; /* the CSV header's cells (NULL-terminated) */
  guint columns;
  guint top, threads;
  gboolean every_item;
  GString *line;
  const char **cells;
} Rows;

/* Hands the row of JOB and R (RANK 0: streamed) to the callback; FALSE when
 * it says stop (the error set). */
static gboolean emit(Rows *rows, guint64 rank, const PtsimJob *job, const PtsimBatchResult *r,
                     GError **error) {
  g_string_truncate(rows->line, 0);
  ptsim_sweep_csv_row(rows->line, rank, job, r);
  guint n = ptsim_sweep_csv_cells(rows->line, job, rows->cells, rows->columns);
  if (rows->fn(rows->user_data, n, (const char *const *)rows->names, rows->cells) == 0) return TRUE;
  g_set_error_literal(error, PTSIM_API_STOPPED_ERROR, 0, "the row callback stopped the sweep");
  return FALSE;
}

/* A streamed chunk (PtsimSweepChunkFn): its fastest layouts settled by the
 * emulation, then its rows, unranked. */
static gboolean chunk_rows(const PtsimJob *jobs, const PtsimBatchResult *chunk_results, guint n,
                           guint64 first_index, gpointer user_data, GError **error) {
  Rows *rows = user_data;
  (void)first_index;
  g_autofree PtsimBatchResult *results = g_memdup2(chunk_results, (gsize)n * sizeof *results);
  ptsim_sweep_settle_top(jobs, results, n, rows->top, rows->threads, rows->every_item);
  for (guint i = 0; i < n; i++)
    if (!emit(rows, 0, &jobs[i], &results[i], error)) return FALSE;
  return TRUE;
}

/* The command's outputs: a library caller has the rows instead. */
static gboolean refuse_outputs(const PtsimSweepOptions *o, GError **error) {
  const char *flag = o->csv       ? "--csv"
                     : o->format  ? "--format"
                     : o->figures ? "--figures"
                     : o->shard   ? "--shard"
                     : o->merge   ? "--merge"
                                  : NULL;
  if (!flag) return TRUE;
  g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
              "%s is an output of the ptsim command; the library hands each row to the callback",
              flag);
  return FALSE;
}

/* The whole sweep; FALSE with the error set. */
static gboolean sweep_rows(const PtsimSweepOptions *o, Rows *rows, GError **error) {
  PtsimDevice device;
  g_autoptr(PtsimSweepSpec) spec = ptsim_sweep_spec_new();
  if (!refuse_outputs(o, error) || !ptsim_sweep_options_device(o, &device, error) ||
      !ptsim_sweep_options_spec(o, spec, error))
    return FALSE;
  g_autoptr(PtsimSweep)
      sweep = ptsim_sweep_enumerate_at_most(spec, (guint64)o->in_memory_max, error);
  if (!sweep) return FALSE;
  if (sweep->stopped) { /* too many to hold: streamed, as the command streams them */
    g_clear_pointer(&sweep, ptsim_sweep_free);
    sweep = ptsim_sweep_stream(spec, device, rows->threads, PTSIM_SWEEP_STREAM_CHUNK, chunk_rows,
                               rows, NULL, NULL, error);
    return sweep != NULL;
  }
  if (sweep->valid == 0) {
    ptsim_sweep_no_valid_error(sweep, error);
    return FALSE;
  }
  if (!ptsim_sweep_evaluate(sweep, device, rows->threads, NULL, NULL, error)) return FALSE;
  /* none schedulable is no valid layout, as the command says it */
  if (ptsim_sweep_reject_unscheduled(sweep, (const PtsimBatchResult *)sweep->results->data,
                                     sweep->results->len, NULL) == sweep->results->len) {
    ptsim_sweep_no_valid_error(sweep, error);
    return FALSE;
  }
  /* ranked as for `ptsim sweep --csv FILE`: its rows shown emulated too,
   * and the best of each (model, hardware, GPU count) settled by the
   * emulation before the rows are written (in a sweep of several such
   * groups, that can settle a layout in doubt: its verdict and rank move) */
  g_autoptr(GArray)
      order = ptsim_sweep_rank(sweep, rows->top, rows->threads, rows->every_item, TRUE);
  g_autoptr(GArray) groups = g_array_new(FALSE, FALSE, sizeof(guint));
  /* wanted for what it settles, not for its table */
  g_array_unref(ptsim_sweep_best_per_group(sweep, rows->threads, groups));
  g_array_unref(order);
  order = ptsim_sweep_rank_order(sweep);
  for (guint k = 0; k < order->len; k++) {
    guint i = g_array_index(order, guint, k);
    if (!emit(rows, k + 1, &g_array_index(sweep->jobs, PtsimJob, i),
              &g_array_index(sweep->results, PtsimBatchResult, i), error))
      return FALSE;
  }
  return TRUE;
}

int ptsim_api_sweep(const char *const *flags, PtsimApiRowFn fn, void *user_data,
                    PtsimApiError **error) {
  g_autoptr(GError) local = NULL;
  PtsimSweepOptions opts;
  ptsim_sweep_options_init(&opts);
  gboolean ok = FALSE;
  if (!fn)
    g_set_error_literal(&local, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "no row callback given");
  else if (ptsim_sweep_options_parse(&opts, flags, &local)) {
    g_autofree char *header = g_strdup(ptsim_sweep_csv_header());
    g_strchomp(header);
    Rows rows = {fn,
                 user_data,
                 g_strsplit(header, ",", -1),
                 0,
                 (guint)opts.top,
                 (guint)opts.threads,
                 opts.no_shortcut,
                 g_string_new(NULL),
                 NULL};
    rows.columns = g_strv_length(rows.names);
    rows.cells = g_new0(const char *, rows.columns + 1);
    ok = sweep_rows(&opts, &rows, &local);
    g_strfreev(rows.names);
    g_free(rows.cells);
    g_string_free(rows.line, TRUE);
  }
  ptsim_sweep_options_clear(&opts);
  if (ok) return 0;
  ptsim_api_error_set(error, local, NULL);
  return -1;
}
