/* api_sweep.c — a sweep through the library, row by row; see ptsim.h.
 * The flags are `ptsim sweep`'s (sweep_options.h), the flow the command's:
 * held in memory and ranked up to --in-memory-max layouts, else streamed in
 * chunks, each chunk's fastest layouts settled by the emulation as the
 * command settles them; each row is the sweep CSV's (sweep_rows.h), split
 * into its cells.  A merge (ptsim_api_sweep_merge) is the same flow with
 * every result read from shard files (sweep_shard.h) instead of evaluated,
 * as `ptsim sweep --merge` does; the shards themselves are api_shard.c's. */
#include "api_int.h"

#include <string.h>
#include "config.h"
#include "input.h"
#include "output.h"
#include "sweep_options.h"
#include "sweep_rows.h"
#include "sweep_shard.h"

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
  /* a merge: the results from the shards (NULL: evaluated) */
  PtsimShardReader *merge;
  GArray *merged;           /* PtsimBatchResult: a streamed chunk's, from them */
  guint64 failed;           /* streamed: layouts that could not be scheduled */
  GHashTable *unscheduled;  /* streamed: "could not be scheduled: WHY" -> count */
  PtsimOutput *csv;         /* streamed: the merge's CSV (NULL: none) */
  const char *const *flags; /* as given: a merge's made-by */
} Rows;

/* Hands the row of JOB and R (RANK 0: streamed) to the callback; FALSE when
 * it says stop (the error set). */
static gboolean emit(Rows *rows, guint64 rank, const PtsimJob *job, const PtsimBatchResult *r,
                     GError **error) {
  g_string_truncate(rows->line, 0);
  ptsim_sweep_csv_row(rows->line, rank, job, r);
  if (rows->csv && !ptsim_output_append(rows->csv, rows->line->str, rows->line->len, error))
    return FALSE;
  if (!rows->fn) return TRUE;
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
  ptsim_sweep_reject_unscheduled(NULL, results, n, rows->unscheduled);
  for (guint i = 0; i < n; i++) {
    rows->failed += results[i].status != 0;
    if (!emit(rows, 0, &jobs[i], &results[i], error)) return FALSE;
  }
  return TRUE;
}

/* A streamed merge's chunk: its results from the shards, then on as above. */
static gboolean merge_chunk(const PtsimJob *jobs, const PtsimBatchResult *results, guint n,
                            guint64 first_index, gpointer user_data, GError **error) {
  Rows *rows = user_data;
  (void)results; /* not evaluated (PTSIM_DEVICE_NONE) */
  g_array_set_size(rows->merged, n);
  for (guint i = 0; i < n; i++)
    if (!ptsim_shard_reader_next(rows->merge, first_index + i, &jobs[i],
                                 &g_array_index(rows->merged, PtsimBatchResult, i), error))
      return FALSE;
  return chunk_rows(jobs, (const PtsimBatchResult *)rows->merged->data, n, first_index, rows,
                    error);
}

/* A merge's check, once the enumeration has read the sweep's models and
 * profiles (captured since ptsim_input_capture_begin): every shard was made
 * by this very sweep. */
static gboolean check_shards(const Rows *rows, GError **error) {
  g_auto(GStrv) inputs = ptsim_input_capture_end();
  g_auto(GStrv) made_by = ptsim_shard_made_by_inputs(rows->flags, (const char *const *)inputs);
  return ptsim_shard_reader_check(rows->merge, (const char *const *)made_by, error);
}

/* A streamed merge's CSV: opened with its header before the rows. */
static gboolean open_csv(Rows *rows, const char *path, GError **error) {
  if (!path) return TRUE;
  const char *header = ptsim_sweep_csv_header();
  return (rows->csv = ptsim_output_open(path, error)) != NULL &&
         ptsim_output_append(rows->csv, header, strlen(header), error);
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

/* A streamed merge's end, as the command's: the CSV in place, and none
 * schedulable is no valid layout (with the unscheduled among the reasons). */
static gboolean end_streamed_merge(Rows *rows, PtsimSweep *sweep, GError **error) {
  if (!ptsim_shard_reader_finish(rows->merge, error) ||
      (rows->csv && !ptsim_output_commit(g_steal_pointer(&rows->csv), error)))
    return FALSE;
  if (rows->failed < sweep->valid) return TRUE;
  GHashTableIter it;
  gpointer reason, count;
  g_hash_table_iter_init(&it, rows->unscheduled);
  while (g_hash_table_iter_next(&it, &reason, &count)) {
    guint was = GPOINTER_TO_UINT(g_hash_table_lookup(sweep->rejected, reason));
    g_hash_table_replace(sweep->rejected, g_strdup(reason),
                         GUINT_TO_POINTER(was + GPOINTER_TO_UINT(count)));
  }
  ptsim_sweep_no_valid_error(sweep, error);
  return FALSE;
}

/* The whole sweep (a merge when rows->merge, writing CSV when not NULL);
 * FALSE with the error set. */
static gboolean sweep_rows(const PtsimSweepOptions *o, Rows *rows, const char *csv,
                           GError **error) {
  PtsimDevice device;
  g_autoptr(PtsimSweepSpec) spec = ptsim_sweep_spec_new();
  if (!refuse_outputs(o, error) || !ptsim_sweep_options_device(o, &device, error)) return FALSE;
  /* a merge's inputs are the ones this call reads (not whatever the
   * process read before): captured through the spec and the enumeration */
  if (rows->merge) ptsim_input_capture_begin();
  g_autoptr(PtsimSweep) sweep = NULL;
  if (ptsim_sweep_options_spec(o, spec, error))
    sweep = ptsim_sweep_enumerate_at_most(spec, (guint64)o->in_memory_max, error);
  if (rows->merge && (!sweep || sweep->valid == 0)) g_strfreev(ptsim_input_capture_end());
  if (!sweep) return FALSE;
  if (rows->merge && sweep->valid > 0 && !check_shards(rows, error)) return FALSE;
  if (sweep->stopped) { /* too many to hold: streamed, as the command streams them */
    g_clear_pointer(&sweep, ptsim_sweep_free);
    if (rows->merge && !open_csv(rows, csv, error)) return FALSE;
    sweep = ptsim_sweep_stream(spec, rows->merge ? PTSIM_DEVICE_NONE : device, rows->threads,
                               PTSIM_SWEEP_STREAM_CHUNK, rows->merge ? merge_chunk : chunk_rows,
                               rows, NULL, NULL, error);
    if (!sweep) return FALSE;
    return !rows->merge || end_streamed_merge(rows, sweep, error);
  }
  if (sweep->valid == 0) {
    ptsim_sweep_no_valid_error(sweep, error);
    return FALSE;
  }
  if (rows->merge) { /* every result from the shards */
    g_array_set_size(sweep->results, sweep->jobs->len);
    for (guint i = 0; i < sweep->jobs->len; i++)
      if (!ptsim_shard_reader_next(rows->merge, sweep->first_index + i,
                                   &g_array_index(sweep->jobs, PtsimJob, i),
                                   &g_array_index(sweep->results, PtsimBatchResult, i), error))
        return FALSE;
    if (!ptsim_shard_reader_finish(rows->merge, error)) return FALSE;
  } else if (!ptsim_sweep_evaluate(sweep, device, rows->threads, NULL, NULL, error)) {
    return FALSE;
  }
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
  if (csv) { /* the merge's CSV, as the command writes it */
    g_autoptr(GString) text = g_string_new(NULL);
    ptsim_sweep_write_csv(text, sweep, order, rows->threads);
    if (!ptsim_output_write(csv, text->str, text->len, error)) return FALSE;
  }
  for (guint k = 0; k < order->len; k++) {
    guint i = g_array_index(order, guint, k);
    if (!emit(rows, k + 1, &g_array_index(sweep->jobs, PtsimJob, i),
              &g_array_index(sweep->results, PtsimBatchResult, i), error))
      return FALSE;
  }
  return TRUE;
}

/* ptsim_api_sweep and ptsim_api_sweep_merge: SHARDS NULL for a sweep. */
static int sweep_or_merge(const char *const *flags, const char *const *shards, const char *csv,
                          PtsimApiRowFn fn, void *user_data, PtsimApiError **error) {
  g_autoptr(GError) local = NULL;
  PtsimSweepOptions opts;
  ptsim_sweep_options_init(&opts);
  gboolean ok = FALSE;
  g_autoptr(PtsimShardReader) merge = NULL;
  if (!fn && !csv)
    g_set_error_literal(&local, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "no row callback given");
  else if (shards && !shards[0])
    g_set_error_literal(&local, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--merge: name the shard files (ptsim sweep FLAGS --merge part-*.csv)");
  else if (ptsim_sweep_options_parse(&opts, flags, &local) &&
           (!shards ||
            (merge = ptsim_shard_reader_open((char **)shards, g_strv_length((char **)shards),
                                             &local)) != NULL) &&
           (!csv || ptsim_output_check(csv, &local))) {
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
                 NULL,
                 merge,
                 g_array_new(FALSE, TRUE, sizeof(PtsimBatchResult)),
                 0,
                 g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
                 NULL,
                 flags};
    rows.columns = g_strv_length(rows.names);
    rows.cells = g_new0(const char *, rows.columns + 1);
    ok = sweep_rows(&opts, &rows, csv, &local);
    g_strfreev(rows.names);
    g_free(rows.cells);
    g_string_free(rows.line, TRUE);
    g_array_unref(rows.merged);
    g_hash_table_unref(rows.unscheduled);
    if (rows.csv) ptsim_output_abort(rows.csv);
  }
  ptsim_sweep_options_clear(&opts);
  if (ok) return 0;
  ptsim_api_error_set(error, local, NULL);
  return -1;
}

int ptsim_api_sweep(const char *const *flags, PtsimApiRowFn fn, void *user_data,
                    PtsimApiError **error) {
  return sweep_or_merge(flags, NULL, NULL, fn, user_data, error);
}

int ptsim_api_sweep_merge(const char *const *flags, const char *const *shards, const char *csv,
                          PtsimApiRowFn fn, void *user_data, PtsimApiError **error) {
  if (!shards) {
    g_autoptr(GError) local =
        g_error_new_literal(G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                            "--merge: name the shard files (ptsim sweep FLAGS --merge part-*.csv)");
    ptsim_api_error_set(error, local, NULL);
    return -1;
  }
  return sweep_or_merge(flags, shards, csv, fn, user_data, error);
}
