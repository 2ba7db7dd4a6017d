/* sweep_cmd.c — the sweep subcommand; see sweep_cmd.h.  The flags, the
 * spec they name, enumeration, evaluation, the ranking and the CSV's rows
 * live in the library (sim/run: sweep_options.c, sweep.c, sweep_rows.c);
 * this file runs the command's flow (held, streamed, shards, merge), shows
 * progress and writes the table, the CSV file and the figures. */
#include <stdio.h>
#include <string.h>
#include "api_int.h"
#include "gpu.h"
#include "job_options.h"
#include "output.h"
#include "plot_cmd.h"
#include "progress.h"
#include "report.h"
#include "sweep.h"
#include "sweep_cmd.h"
#include "sweep_options.h"
#include "sweep_rows.h"
#include "sweep_shard.h"
#include "sweep_table.h"

/* The sweep's flags (the library's table, sweep_options.h) and what the
 * command makes of its own: a shard of a sweep split over machines, and
 * the shard files of a merge (sweep_shard.h). */
typedef struct {
  PtsimSweepOptions opts;
  guint shard_k, shard_n; /* parsed; 0 when not a shard */
  char **merge_files;     /* the positional arguments of --merge */
  char **settings;        /* the flags every layout shares (not the sweep's own), as typed */
  char **flags;           /* the command line as given (a shard's made-by) */
  char **made_by;         /* a shard's or a merge's, once the inputs are read */
} SweepOptions;

static void options_clear(SweepOptions *o) {
  ptsim_sweep_options_clear(&o->opts);
  g_clear_pointer(&o->merge_files, g_strfreev);
  g_clear_pointer(&o->settings, g_strfreev);
  g_clear_pointer(&o->flags, g_strfreev);
  g_clear_pointer(&o->made_by, g_strfreev);
}

/* The words of ARGV (after the command) that are not the sweep's own
 * flags: the settings every layout shares, for predict command lines. */
static char **settings_words(int argc, char **argv) {
  PtsimSweepOptions scratch;
  ptsim_sweep_options_init(&scratch);
  g_autofree GOptionEntry *entries = ptsim_sweep_options_entries(&scratch);
  GPtrArray *out = g_ptr_array_new();
  for (int i = 1; i < argc; i++) {
    const char *w = argv[i];
    const GOptionEntry *own = NULL;
    if (g_str_has_prefix(w, "--")) {
      const char *eq = strchr(w, '=');
      gsize len = eq ? (gsize)(eq - w - 2) : strlen(w + 2);
      for (const GOptionEntry *e = entries; e->long_name && !own; e++)
        if (strlen(e->long_name) == len && strncmp(e->long_name, w + 2, len) == 0) own = e;
      if (own) {
        if (!eq && own->arg != G_OPTION_ARG_NONE && i + 1 < argc) i++;
        continue;
      }
    }
    g_ptr_array_add(out, g_strdup(w));
  }
  ptsim_sweep_options_clear(&scratch);
  g_ptr_array_add(out, NULL);
  return (char **)g_ptr_array_free(out, FALSE);
}

/* ---- progress (progress.h: stderr, only on a terminal, only past a second) ---- */

/* Enumeration, before any layout is evaluated: scenarios done, the valid
 * layouts so far and, once a scenario is done, the total they suggest. */
typedef struct {
  PtsimProgress line;
  const char *what; /* "enumerating", "counting the layouts" */
} EnumProgress;

static void enum_progress_init(EnumProgress *p, const char *what) {
  ptsim_progress_init(&p->line, NULL, NULL, 0);
  p->what = what;
}

static void show_enumeration(guint64 done, guint64 scenarios, guint64 valid, gpointer user_data) {
  EnumProgress *p = user_data;
  if (!ptsim_progress_due(&p->line, FALSE)) return;
  double seconds = (double)(g_get_monotonic_time() - p->line.start_us) * 1e-6;
  g_autoptr(GString) line = g_string_new(NULL);
  g_string_append_printf(line,
                         "\r%s: scenario %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT
                         ", %" G_GUINT64_FORMAT " valid layouts so far",
                         p->what, MIN(done + 1, scenarios), scenarios, valid);
  if (done > 0 && done < scenarios)
    g_string_append_printf(line, ", about %.0f in all",
                           (double)valid * (double)scenarios / (double)done);
  g_string_append_printf(line, " (%.0f s)\033[K", seconds);
  fputs(line->str, stderr);
  fflush(stderr);
}

/* Ends the enumeration's line, if it showed one. */
static void end_enumeration(EnumProgress *p) { ptsim_progress_end(&p->line); }

/* The evaluation's line, shown at once when the enumeration's was. */
static void progress_init(PtsimProgress *p, gboolean shown, guint64 total, guint64 offset) {
  ptsim_progress_init(p, NULL, "layouts", total);
  p->shown = shown;
  p->offset = offset;
}

/* Whether --device auto evaluates on a GPU (ptsim_sweep_evaluate's test). */
static gboolean gpu_present(void) {
  PtsimGpuInfo info;
  g_autoptr(GError) error = NULL;
  return ptsim_gpu_query(&info, &error);
}

/* ---- streamed sweeps: bounded memory, exact top K, CSV in enumeration order ---- */

typedef struct {
  guint top;
  PtsimSweepCounts counts;
  GArray *best_jobs, *best_results; /* the best `top` so far, ranked */
  PtsimOutput *csv;                 /* NULL: no CSV; aborted unless committed */
  guint threads;                    /* to format its rows and run the emulation */
  gboolean every_item;              /* --no-shortcut: the emulation replays every item */
  gboolean shard;                   /* the CSV is a shard file */
  PtsimShardReader *merge;          /* results come from shard files */
  GHashTable *unscheduled;          /* "could not be scheduled: WHY" -> count */
  GArray *merged;                   /* PtsimBatchResult: a chunk's, from them */
} Stream;

static void stream_clear(Stream *st) {
  g_clear_pointer(&st->best_jobs, g_array_unref);
  g_clear_pointer(&st->best_results, g_array_unref);
  g_clear_pointer(&st->merged, g_array_unref);
  g_clear_pointer(&st->unscheduled, g_hash_table_unref);
  g_clear_pointer(&st->csv, ptsim_output_abort);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(Stream, stream_clear)

/* Ranks a (job, result) pair the way the table does (ties: the one seen
 * first stays ahead). */
static gboolean better(const PtsimJob *ja, const PtsimBatchResult *ra, const PtsimJob *jb,
                       const PtsimBatchResult *rb) {
  int ca = ptsim_sweep_rank_class(ra), cb = ptsim_sweep_rank_class(rb);
  if (ca != cb) return ca < cb;
  return ptsim_sweep_rank_key(ja, ra) > ptsim_sweep_rank_key(jb, rb);
}

typedef struct {
  const PtsimJob *jobs;
  const PtsimBatchResult *results;
  guint64 first_index;
  gboolean shard;
} ChunkRows;

/* A streamed row: unranked (rank 0), or a shard file's. */
static void chunk_row(GString *out, guint k, gconstpointer data) {
  const ChunkRows *c = data;
  if (c->shard)
    ptsim_shard_row(out, c->first_index + k, &c->jobs[k], &c->results[k]);
  else
    ptsim_sweep_csv_row(out, 0, &c->jobs[k], &c->results[k]);
}

static gboolean stream_chunk(const PtsimJob *jobs, const PtsimBatchResult *chunk_results, guint n,
                             guint64 first_index, gpointer user_data, GError **error) {
  Stream *st = user_data;
  /* The chunk's own top K are settled by the emulation: a layout of the
   * sweep's top K is among its chunk's, so the kept best equal the
   * in-memory sweep's.  A shard file keeps the results as evaluated: the
   * merge settles them as the one run would (its chunks are this run's). */
  g_autofree PtsimBatchResult *results = g_memdup2(chunk_results, (gsize)n * sizeof *results);
  ptsim_sweep_settle_top(jobs, results, n, st->top, st->threads, st->every_item);
  ptsim_sweep_count_verdicts(&st->counts, results, n);
  ptsim_sweep_reject_unscheduled(NULL, results, n, st->unscheduled);
  for (guint i = 0; i < n; i++) {
    if (results[i].status != 0) continue; /* a rejection, never ranked */
    guint len = st->best_jobs->len, at = len;
    while (at > 0 && better(&jobs[i], &results[i], &g_array_index(st->best_jobs, PtsimJob, at - 1),
                            &g_array_index(st->best_results, PtsimBatchResult, at - 1)))
      at--;
    if (at >= st->top) continue;
    g_array_insert_val(st->best_jobs, at, jobs[i]);
    g_array_insert_val(st->best_results, at, results[i]);
    if (st->best_jobs->len > st->top) {
      g_array_set_size(st->best_jobs, st->top);
      g_array_set_size(st->best_results, st->top);
    }
  }
  if (!st->csv) return TRUE;
  g_autoptr(GString) rows = g_string_new(NULL);
  ChunkRows chunk = {jobs, st->shard ? chunk_results : results, first_index, st->shard};
  ptsim_sweep_format_rows(rows, n, st->threads, chunk_row, &chunk);
  return ptsim_output_append(st->csv, rows->str, rows->len, error);
}

/* A streamed merge: the chunk's results from the shards, then on as usual. */
static gboolean merge_chunk(const PtsimJob *jobs, const PtsimBatchResult *results, guint n,
                            guint64 first_index, gpointer user_data, GError **error) {
  Stream *st = user_data;
  (void)results; /* not evaluated (PTSIM_DEVICE_NONE) */
  g_array_set_size(st->merged, n);
  for (guint i = 0; i < n; i++)
    if (!ptsim_shard_reader_next(st->merge, first_index + i, &jobs[i],
                                 &g_array_index(st->merged, PtsimBatchResult, i), error))
      return FALSE;
  return stream_chunk(jobs, (const PtsimBatchResult *)st->merged->data, n, first_index, st, error);
}

/* Prints an error; its exit code (the library's kinds: 2 bad input or an
 * unusable GPU, 1 a failed write or run). */
static int fail(const GError *error) {
  if (!error) {
    fprintf(stderr, "ptsim sweep: failed without a reason\n");
    return 1;
  }
  g_autoptr(PtsimApiError) e = ptsim_api_error_new(error, NULL);
  fprintf(stderr, "ptsim sweep: %s\n", ptsim_api_error_message(e));
  return ptsim_api_error_exit_status(e);
}

/* A sweep in which nothing was valid did not do what was asked: exit 2,
 * with the reasons, so a script never takes an empty table for an answer. */
static int no_valid_layout(const PtsimSweep *sweep) {
  g_autoptr(GError) error = NULL;
  ptsim_sweep_no_valid_error(sweep, &error);
  return fail(error);
}

/* The line after the table saying where the CSV went. */
static void csv_note(GString *out, const SweepOptions *o, const PtsimSweepSpec *spec, guint64 valid,
                     gboolean streamed) {
  if (o->shard_n > 0)
    g_string_append_printf(out,
                           "\nshard %u/%u: %" G_GUINT64_FORMAT
                           " layouts from layout %" G_GUINT64_FORMAT " on, of %" G_GUINT64_FORMAT
                           " (enumeration order, "
                           "0-based), for sweep --merge: %s\n",
                           o->shard_k, o->shard_n, spec->last - spec->first, spec->first, valid,
                           o->opts.csv);
  else if (streamed)
    g_string_append_printf(out,
                           "\nall %" G_GUINT64_FORMAT " layouts (streamed, in enumeration "
                           "order, rank 0): %s\n",
                           valid, o->opts.csv);
  else
    g_string_append_printf(out, "\nall %" G_GUINT64_FORMAT " layouts: %s\n", valid, o->opts.csv);
}

/* Sweeps too large to hold: streamed in chunks, the CSV written as it goes
 * (through the output policy: renamed into place at the end, so nothing
 * half-written is left). */
static int run_streamed(const SweepOptions *o, const PtsimSweepSpec *spec, PtsimDevice device,
                        PtsimShardReader *merge, guint64 layouts, GString *out) {
  g_autoptr(GError) error = NULL;
  g_auto(Stream) st;
  memset(&st, 0, sizeof st);
  st.shard = o->shard_n > 0;
  st.merge = merge;
  st.threads = (guint)o->opts.threads;
  st.every_item = o->opts.no_shortcut;
  st.top = (guint)o->opts.top;
  st.best_jobs = g_array_new(FALSE, FALSE, sizeof(PtsimJob));
  st.best_results = g_array_new(FALSE, FALSE, sizeof(PtsimBatchResult));
  st.merged = g_array_new(FALSE, TRUE, sizeof(PtsimBatchResult));
  st.unscheduled = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  if (o->opts.csv) {
    g_autoptr(GString) header = g_string_new(NULL);
    if (st.shard)
      ptsim_shard_header(header, (const char *const *)o->made_by);
    else
      g_string_append(header, ptsim_sweep_csv_header());
    if (!(st.csv = ptsim_output_open(o->opts.csv, &error)) ||
        !ptsim_output_append(st.csv, header->str, header->len, &error))
      return fail(error);
  }
  PtsimProgress progress;
  progress_init(&progress, TRUE, layouts, spec->first);
  g_autoptr(PtsimSweep)
      sweep = ptsim_sweep_stream(spec, merge ? PTSIM_DEVICE_NONE : device, (guint)o->opts.threads,
                                 PTSIM_SWEEP_STREAM_CHUNK, merge ? merge_chunk : stream_chunk, &st,
                                 ptsim_progress_show, &progress, &error);
  if (!sweep || (merge && !ptsim_shard_reader_finish(merge, &error))) return fail(error);
  if (st.csv && !ptsim_output_commit(g_steal_pointer(&st.csv), &error)) return fail(error);
  GHashTableIter it;
  gpointer reason, count;
  g_hash_table_iter_init(&it, st.unscheduled);
  while (g_hash_table_iter_next(&it, &reason, &count)) {
    guint was = GPOINTER_TO_UINT(g_hash_table_lookup(sweep->rejected, reason));
    g_hash_table_replace(sweep->rejected, g_strdup(reason),
                         GUINT_TO_POINTER(was + GPOINTER_TO_UINT(count)));
  }
  if (st.counts.failed == sweep->valid) return no_valid_layout(sweep);
  /* The table shows the kept best rows, in their order. */
  g_array_append_vals(sweep->jobs, st.best_jobs->data, st.best_jobs->len);
  g_array_append_vals(sweep->results, st.best_results->data, st.best_results->len);
  g_autoptr(GArray) order = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint i = 0; i < st.best_jobs->len; i++) g_array_append_val(order, i);
  if (ptsim_sweep_emulate_shown(sweep, order, st.top, st.threads)) {
    g_array_unref(order);
    order = ptsim_sweep_rank_order(sweep);
  }
  if (merge) {
    g_free(sweep->device_used);
    sweep->device_used = g_strdup_printf("%u shard files", g_strv_length(o->merge_files));
  }
  ptsim_report_text_settings(out, &spec->base, NULL,
                             ptsim_job_options_overlap_source(&o->opts.job));
  ptsim_sweep_write_nothing_runs(out, sweep, &st.counts, (const char *const *)o->settings);
  ptsim_sweep_write_table(out, sweep, &st.counts, order, st.top);
  if (o->opts.csv) csv_note(out, o, spec, sweep->valid, TRUE);
  return 0;
}

static int run(SweepOptions *o) {
  g_autoptr(GError) error = NULL;
  g_autoptr(PtsimSweepSpec) spec = ptsim_sweep_spec_new();
  PtsimDevice device;
  if (!ptsim_sweep_options_device(&o->opts, &device, &error)) return fail(error);
  gboolean csv_out = o->opts.format && strcmp(o->opts.format, "csv") == 0;
  if (o->opts.format && !csv_out && strcmp(o->opts.format, "text") != 0) {
    fprintf(stderr, "ptsim sweep: --format '%s': allowed values are text|csv\n", o->opts.format);
    return 2;
  }
  if (!ptsim_sweep_options_spec(&o->opts, spec, &error)) return fail(error);
  /* A shard wants a file to write to; a merge, shards to read. */
  if ((o->shard_n > 0 && (!o->opts.csv || csv_out || o->opts.figures || o->opts.merge)) ||
      (o->opts.merge && (!o->merge_files || !o->merge_files[0]))) {
    fprintf(stderr, "ptsim sweep: %s\n",
            o->opts.merge && o->shard_n == 0
                ? "--merge: name the shard files (ptsim sweep FLAGS --merge part-*.csv)"
                : "--shard K/N: needs --csv FILE (the shard file), and goes with neither "
                  "--format csv, --figures nor --merge");
    return 2;
  }
  g_autoptr(PtsimShardReader) merge = NULL;
  if (o->opts.merge &&
      !(merge = ptsim_shard_reader_open(o->merge_files, g_strv_length(o->merge_files), &error)))
    return fail(error);
  /* A path the output policy refuses (a shard being merged included) costs
   * nothing: checked before the work. */
  if (o->opts.csv && !ptsim_output_check(o->opts.csv, &error)) return fail(error);
  if (o->opts.csv && o->opts.figures &&
      !ptsim_plot_default_figures_check(o->opts.figures, o->opts.csv, "--csv", &error))
    return fail(error);
  /* Past --in-memory-max layouts the sweep is streamed: bounded memory, an
   * exact top K, the CSV unranked.  A sweep is enumerated at most once to
   * find out; a shard counts first, to know its slice. */
  gboolean may_stream = !o->opts.figures && !csv_out;
  guint64 valid = 0;
  g_autoptr(PtsimSweep) sweep = NULL;
  EnumProgress enumerating;
  enum_progress_init(&enumerating, "enumerating");
  spec->enumerate_progress = show_enumeration;
  spec->enumerate_progress_data = &enumerating;
  /* on the CPU, evaluation starts on the first chunks while enumeration
   * goes on (a merge evaluates nothing) */
  if (!merge && (device == PTSIM_DEVICE_CPU || (device == PTSIM_DEVICE_AUTO && !gpu_present())))
    spec->evaluate_threads = o->opts.threads > 0 ? (guint)o->opts.threads : g_get_num_processors();
  if (o->shard_n == 0) {
    sweep = ptsim_sweep_enumerate_at_most(spec,
                                          may_stream ? (guint64)o->opts.in_memory_max : G_MAXUINT64,
                                          &error);
    end_enumeration(&enumerating);
    spec->evaluate_threads = 0;
    if (!sweep) return fail(error);
    valid = sweep->valid;
    if (sweep->stopped) g_clear_pointer(&sweep, ptsim_sweep_free);
  }
  if (!sweep) { /* a shard, or too many to hold: the count (an ETA for the progress line) */
    EnumProgress counting;
    enum_progress_init(&counting, "counting the layouts");
    counting.line.shown = enumerating.line.shown;
    spec->enumerate_progress_data = &counting;
    valid = ptsim_sweep_count(spec, &error);
    end_enumeration(&counting);
    enumerating.line.shown |= counting.line.shown;
    if (valid == G_MAXUINT64) return fail(error);
  }
  /* later passes: the evaluation's progress (streamed: enumeration and
   * evaluation together) */
  spec->enumerate_progress = NULL;
  if (valid == 0) { /* the reasons come from an enumeration (of nothing valid: cheap) */
    if (!sweep && !(sweep = ptsim_sweep_enumerate(spec, &error))) return fail(error);
    return no_valid_layout(sweep);
  }
  /* every model and profile is read by now: what made the sweep */
  if (o->shard_n > 0 || merge) o->made_by = ptsim_shard_made_by((const char *const *)o->flags);
  if (merge && !ptsim_shard_reader_check(merge, (const char *const *)o->made_by, &error))
    return fail(error);
  if (o->shard_n > 0) ptsim_shard_slice(o->shard_k, o->shard_n, valid, &spec->first, &spec->last);
  if (!sweep && valid > (guint64)o->opts.in_memory_max && may_stream) {
    g_autoptr(GString) out = g_string_new(NULL);
    int rc = run_streamed(o, spec, device, merge, o->shard_n > 0 ? spec->last - spec->first : valid,
                          out);
    if (rc == 0 && !ptsim_output_stdout(out->str, out->len, &error)) return fail(error);
    return rc;
  }
  if (!sweep && !(sweep = ptsim_sweep_enumerate(spec, &error))) return fail(error);
  PtsimProgress progress;
  progress_init(&progress, enumerating.line.shown, sweep->jobs->len, 0);
  if (merge) { /* every result from the shards */
    g_array_set_size(sweep->results, sweep->jobs->len);
    for (guint i = 0; i < sweep->jobs->len; i++)
      if (!ptsim_shard_reader_next(merge, sweep->first_index + i,
                                   &g_array_index(sweep->jobs, PtsimJob, i),
                                   &g_array_index(sweep->results, PtsimBatchResult, i), &error))
        break;
    if (!error) ptsim_shard_reader_finish(merge, &error);
    if (error) return fail(error);
    sweep->device_used = g_strdup_printf("%u shard files", g_strv_length(o->merge_files));
  } else if (!ptsim_sweep_evaluate(sweep, device, (guint)o->opts.threads, ptsim_progress_show,
                                   &progress, &error)) {
    return fail(error);
  }
  /* Layouts that could not be scheduled are rejections (by reason), never
   * ranked; none schedulable is no valid layout.  (A shard keeps them: its
   * merge decides.) */
  if (o->shard_n == 0 &&
      ptsim_sweep_reject_unscheduled(sweep, (const PtsimBatchResult *)sweep->results->data,
                                     sweep->results->len, NULL) == sweep->results->len)
    return no_valid_layout(sweep);
  /* A shard file keeps every layout as evaluated, in enumeration order: the
   * merge settles the sweep's top K as the one run does. */
  g_autoptr(GString) shard_rows = NULL;
  if (o->shard_n > 0) {
    shard_rows = g_string_new(NULL);
    ptsim_shard_header(shard_rows, (const char *const *)o->made_by);
    for (guint i = 0; i < sweep->jobs->len; i++)
      ptsim_shard_row(shard_rows, sweep->first_index + i, &g_array_index(sweep->jobs, PtsimJob, i),
                      &g_array_index(sweep->results, PtsimBatchResult, i));
  }
  guint top = (guint)o->opts.top;
  /* the table's rows and the --csv file's are emulated; --format csv's only
   * as far as the ranking needs */
  g_autoptr(GArray)
      order = ptsim_sweep_rank(sweep, top, (guint)o->opts.threads, o->opts.no_shortcut, !csv_out);
  /* The best per (model, hardware, GPU count) settles what it needs
   * before the counts and the CSV, which then say the same. */
  g_autoptr(GArray) groups = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) best = NULL;
  if (!csv_out && o->shard_n == 0) {
    best = ptsim_sweep_best_per_group(sweep, (guint)o->opts.threads, groups);
    g_array_unref(order);
    order = ptsim_sweep_rank_order(sweep);
  }
  g_autoptr(GString) out = g_string_new(NULL);
  PtsimSweepCounts counts;
  memset(&counts, 0, sizeof counts);
  ptsim_sweep_count_verdicts(&counts, (const PtsimBatchResult *)sweep->results->data,
                             sweep->results->len);
  if (csv_out)
    ptsim_sweep_write_csv(out, sweep, order, (guint)o->opts.threads);
  else {
    ptsim_report_text_settings(out, &spec->base, NULL,
                               ptsim_job_options_overlap_source(&o->opts.job));
    ptsim_sweep_write_nothing_runs(out, sweep, &counts, (const char *const *)o->settings);
    ptsim_sweep_write_table(out, sweep, &counts, order, top);
    if (best) ptsim_sweep_write_best_per_group(out, sweep, groups, best);
  }
  if (o->opts.csv) {
    g_autoptr(GString) csv = shard_rows ? g_steal_pointer(&shard_rows) : g_string_new(NULL);
    if (o->shard_n == 0) ptsim_sweep_write_csv(csv, sweep, order, (guint)o->opts.threads);
    if (!ptsim_output_write(o->opts.csv, csv->str, csv->len, &error)) return fail(error);
    csv_note(out, o, spec, sweep->valid, FALSE);
  }
  gboolean figures_ok = TRUE;
  if (o->opts.figures) figures_ok = ptsim_plot_default_figures(sweep, order, o->opts.figures, out);
  if (!ptsim_output_stdout(out->str, out->len, &error)) return fail(error);
  return figures_ok ? 0 : 1;
}

int ptsim_sweep_main(int argc, char **argv) {
  SweepOptions o;
  memset(&o, 0, sizeof o);
  ptsim_sweep_options_init(&o.opts);
  g_autoptr(GOptionContext)
      context = g_option_context_new("[--merge SHARD-FILE...] - every valid layout, ranked");
  g_option_context_set_summary(context,
                               "Lists take comma-separated values, each at most once; every "
                               "combination is tried, invalid ones are counted by reason.  Exit "
                               "2 when no layout is valid; when valid layouts exist but none is "
                               "predicted to run, exit 0 with a NOTHING RUNS headline, the "
                               "closest layouts and what would make them run.");
  ptsim_sweep_options_add_to_context(context, &o.opts);
  o.settings = settings_words(argc, argv);
  g_autoptr(GError) error = NULL;
  int rc;
  o.flags = g_strdupv(argv + 1);
  if (!ptsim_options_parse(context, &argc, &argv, &error))
    rc = fail(error);
  else if (argc > 1 && !o.opts.merge)
    rc = (fprintf(stderr, "ptsim sweep: unexpected argument '%s' (see --help)\n", argv[1]), 2);
  else if (!ptsim_sweep_options_numbers(&o.opts, &error) ||
           (o.opts.shard && !ptsim_shard_parse(o.opts.shard, &o.shard_k, &o.shard_n, &error)))
    rc = fail(error);
  else {
    if (o.opts.merge) o.merge_files = g_strdupv(argv + 1);
    rc = run(&o);
  }
  options_clear(&o);
  return rc;
}

int ptsim_sweep_default_job(void) {
  char *argv[] = {"sweep", "--top", "10", "--figures", "ptsim-out", NULL};
  printf(
      "ptsim default job: every layout of Llama-3-8B on one 8 x H100-80GB node, seq 8192, gbs 128\n"
      "(ptsim --help for the commands; ptsim sweep --help for this one)\n\n");
  return ptsim_sweep_main(5, argv);
}
