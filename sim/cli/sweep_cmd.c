/* sweep_cmd.c — the sweep subcommand; see sweep_cmd.h.  Enumeration and
 * evaluation live in sweep.c; this file parses lists, shows progress and
 * writes the ranking. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cli_options.h"
#include "config.h"
#include "gpu.h"
#include "job_build.h"
#include "job_validate.h"
#include "names.h"
#include "numbers.h"
#include "output.h"
#include "plot_cmd.h"
#include "report.h"
#include "simulate.h"
#include "sweep.h"
#include "sweep_cmd.h"
#include "sweep_shard.h"
#include "sweep_table.h"

#define STREAM_CHUNK 65536 /* layouts evaluated (and held) at once when streaming */

/* Numeric flags are read as text (NULL: not given) and parsed strictly in
 * parse_numbers, which fills the values below from their defaults. */
typedef struct {
  char *models, *hws, *gpus, *seqs, *gbs, *mbs, *cps, *vps, *recomputes, *schedules, *eps,
      *etps;
  char *shardings, *shard_sizes;
  char *tp_max_text, *pp_max_text, *top_text, *threads_text, *samples_text, *seed_text;
  char *in_memory_max_text, *jitter_text, *stragglers_text, *slowdown_text;
  gint64 tp_max, pp_max, top, threads, samples, seed, in_memory_max;
  double jitter, stragglers, straggler_slowdown;
  gboolean allocator, no_shortcut;
  char *device, *csv, *format, *figures;
  PtsimJobOptions job; /* the job's settings (not swept): job_options.h */
  /* a sweep split over machines (sweep_shard.h) */
  char *shard;            /* "K/N" */
  guint shard_k, shard_n; /* parsed; 0 when not a shard */
  gboolean merge;
  char **merge_files;     /* the positional arguments of --merge */
} SweepOptions;

static void options_clear(SweepOptions *o) {
  ptsim_job_options_clear(&o->job);
  char **texts[] = {&o->models, &o->hws, &o->gpus, &o->seqs, &o->gbs, &o->mbs, &o->cps,
                    &o->vps, &o->recomputes, &o->schedules, &o->eps, &o->etps, &o->shardings,
                    &o->shard_sizes, &o->tp_max_text, &o->pp_max_text, &o->top_text,
                    &o->threads_text, &o->samples_text, &o->seed_text, &o->in_memory_max_text,
                    &o->jitter_text, &o->stragglers_text, &o->slowdown_text, &o->device, &o->csv,
                    &o->format, &o->figures, &o->shard};
  for (size_t i = 0; i < G_N_ELEMENTS(texts); i++) g_clear_pointer(texts[i], g_free);
  g_clear_pointer(&o->merge_files, g_strfreev);
}

/* Largest useful values: a CPU pool past this many threads only costs
 * memory; a table or a held sweep past these is not something to read. */
#define THREADS_MAX 1024
#define TOP_MAX 1000000
#define IN_MEMORY_MAX 100000000

static gboolean parse_numbers(SweepOptions *o, GError **error) {
  const PtsimRange probability = {0.0, 1.0, TRUE, TRUE};
  /* sigma of a lognormal factor: 10 already spreads durations over e^30 */
  const PtsimRange sigma = {0.0, 10.0, TRUE, TRUE}, slowdown = {1.0, 1000.0, TRUE, TRUE};
  o->tp_max = o->pp_max = 0; /* 0: the NVLink domain / no limit */
  o->top = 10;
  o->threads = 0; /* all cores */
  o->samples = 0;
  o->seed = 1;
  o->in_memory_max = 250000;
  o->jitter = 0.0;
  o->stragglers = 0.0;
  o->straggler_slowdown = 2.0;
  return ptsim_cli_int64_flag("--tp-max", o->tp_max_text, 1, PTSIM_CONFIG_INT_MAX, &o->tp_max,
                              error) &&
         ptsim_cli_int64_flag("--pp-max", o->pp_max_text, 1, PTSIM_CONFIG_INT_MAX, &o->pp_max,
                              error) &&
         ptsim_cli_int64_flag("--top", o->top_text, 1, TOP_MAX, &o->top, error) &&
         ptsim_cli_int64_flag("--threads", o->threads_text, 0, THREADS_MAX, &o->threads,
                              error) &&
         ptsim_cli_int64_flag("--samples", o->samples_text, 0, PTSIM_BATCH_MAX_SAMPLES,
                              &o->samples, error) &&
         ptsim_cli_int64_flag("--seed", o->seed_text, 0, G_MAXINT64, &o->seed, error) &&
         ptsim_cli_int64_flag("--in-memory-max", o->in_memory_max_text, 0, IN_MEMORY_MAX,
                              &o->in_memory_max, error) &&
         ptsim_cli_double_flag("--jitter", o->jitter_text, sigma, &o->jitter, error) &&
         ptsim_cli_double_flag("--stragglers", o->stragglers_text, probability,
                               &o->stragglers, error) &&
         ptsim_cli_double_flag("--straggler-slowdown", o->slowdown_text, slowdown,
                               &o->straggler_slowdown, error);
}

static gboolean parse_int_list(const char *flag, const char *text, GArray *out, GError **error) {
  return ptsim_number_int64_list(flag, text, 1, PTSIM_CONFIG_INT_MAX, out, error);
}

static gboolean parse_enum_list(const char *flag, PtsimNamesKind kind, const char *text,
                                GArray *out, GError **error) {
  g_auto(GStrv) parts = g_strsplit(text, ",", -1);
  g_array_set_size(out, 0);
  for (char **p = parts; *p; p++) {
    int v;
    if (!ptsim_names_parse(kind, g_strstrip(*p), &v)) {
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                  "%s '%s': each value must be one of %s", flag, *p, ptsim_names_allowed(kind));
      return FALSE;
    }
    for (guint i = 0; i < out->len; i++)
      if (g_array_index(out, int, i) == v) {
        g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                    "%s '%s': %s is given twice", flag, text, *p);
        return FALSE;
      }
    g_array_append_val(out, v);
  }
  return TRUE;
}

static gboolean parse_name_list(const char *flag, const char *text, GPtrArray *out,
                                GError **error) {
  g_auto(GStrv) parts = g_strsplit(text, ",", -1);
  for (char **p = parts; *p; p++) {
    const char *name = g_strstrip(*p);
    for (guint i = 0; i < out->len; i++)
      if (strcmp(g_ptr_array_index(out, i), name) == 0) {
        g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                    "%s '%s': %s is given twice", flag, text, name);
        return FALSE;
      }
    g_ptr_array_add(out, g_strdup(name));
  }
  return TRUE;
}

/* The model-shape settings given, on each model of the sweep (a
 * PtsimSweepSpec model_settings callback; OPTS is the PtsimJobOptions). */
static gboolean model_settings(PtsimModel *model, gpointer opts, GError **error) {
  return ptsim_job_options_apply_model_settings(opts, model, error);
}

static gboolean build_spec(const SweepOptions *o, PtsimSweepSpec *spec, GError **error) {
  /* ptsim's default job (job_build.h) */
  const char *model = PTSIM_JOB_DEFAULT_MODEL, *hw = PTSIM_JOB_DEFAULT_HW;
  const char *gpus = G_STRINGIFY(PTSIM_JOB_DEFAULT_GPUS);
  const char *seq = G_STRINGIFY(PTSIM_JOB_DEFAULT_SEQ), *gbs = G_STRINGIFY(PTSIM_JOB_DEFAULT_GBS);
  if (!parse_name_list("--model", o->models ? o->models : model, spec->models, error) ||
      !parse_name_list("--hw", o->hws ? o->hws : hw, spec->hws, error) ||
      !ptsim_number_int64_list("--gpus", o->gpus ? o->gpus : gpus, 1, PTSIM_JOB_GPUS_MAX,
                               spec->gpus, error) ||
      !parse_int_list("--seq", o->seqs ? o->seqs : seq, spec->seqs, error) ||
      !parse_int_list("--gbs", o->gbs ? o->gbs : gbs, spec->gbs, error) ||
      (o->mbs && !parse_int_list("--mbs", o->mbs, spec->mbs, error)) ||
      (o->cps && !parse_int_list("--cp", o->cps, spec->cps, error)) ||
      (o->vps && !parse_int_list("--vp", o->vps, spec->vps, error)) ||
      (o->eps && !parse_int_list("--ep", o->eps, spec->eps, error)) ||
      (o->etps && !parse_int_list("--etp", o->etps, spec->etps, error)) ||
      (o->recomputes &&
       !parse_enum_list("--recompute", PTSIM_NAMES_RECOMPUTE, o->recomputes, spec->recomputes,
                        error)) ||
      (o->schedules &&
       !parse_enum_list("--schedule", PTSIM_NAMES_SCHEDULE, o->schedules, spec->schedules, error)) ||
      (o->shardings &&
       !parse_enum_list("--sharding", PTSIM_NAMES_SHARDING, o->shardings, spec->shardings, error)) ||
      (o->shard_sizes && !ptsim_number_int64_list("--hsdp-shard-size", o->shard_sizes, 1,
                                                  PTSIM_JOB_GPUS_MAX, spec->shard_sizes, error)))
    return FALSE;
  gboolean hsdp = FALSE;
  for (guint k = 0; k < spec->shardings->len; k++)
    hsdp |= g_array_index(spec->shardings, int, k) == PTSIM_SHARDING_MODE_HSDP;
  if (o->shard_sizes && !hsdp) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                "--hsdp-shard-size %s: the sweep has no hsdp in --sharding", o->shard_sizes);
    return FALSE;
  }
  if (o->shardings && (o->job.distributed_optimizer || o->job.no_distributed_optimizer ||
                       o->job.optimizer_instances.given)) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                "--sharding decides the optimizer's sharding and instances: drop "
                "--(no-)distributed-optimizer and --num-distributed-optimizer-instances");
    return FALSE;
  }
  spec->tp_max = o->tp_max;
  spec->pp_max = o->pp_max;
  if (!ptsim_job_build_sweep_base(&o->job, &spec->base, error)) return FALSE;
  spec->model_settings = model_settings;
  spec->model_settings_data = (gpointer)&o->job;
  spec->allocator = o->allocator;
  spec->mc.samples = (int32_t)o->samples;
  spec->mc.sigma = o->jitter;
  spec->mc.straggler_rate = o->stragglers;
  spec->mc.straggler_slowdown = o->straggler_slowdown;
  spec->mc.seed = (uint64_t)o->seed;
  spec->mc.no_shortcut = o->no_shortcut;
  return TRUE;
}

/* ---- progress (stderr, only on a terminal, only past a second) ---- */

typedef struct {
  gint64 start_us;
  gboolean shown;
  guint64 total;  /* layouts this run evaluates (a streamed sweep's callbacks do not say) */
  guint64 offset; /* a shard's first layout: streamed callbacks count from it */
} Progress;

/* "42 s", "3 min 05 s", "2 h 07 min" */
static void append_duration(GString *out, double seconds) {
  guint64 s = (guint64)(seconds + 0.5);
  if (s < 60) g_string_append_printf(out, "%" G_GUINT64_FORMAT " s", s);
  else if (s < 3600)
    g_string_append_printf(out, "%" G_GUINT64_FORMAT " min %02" G_GUINT64_FORMAT " s", s / 60,
                           s % 60);
  else
    g_string_append_printf(out, "%" G_GUINT64_FORMAT " h %02" G_GUINT64_FORMAT " min", s / 3600,
                           s % 3600 / 60);
}

static void show_progress(guint64 done, guint64 total, gpointer user_data) {
  Progress *p = user_data;
  if (!isatty(STDERR_FILENO)) return;
  double seconds = (double)(g_get_monotonic_time() - p->start_us) * 1e-6;
  if (!p->shown && seconds < 1.0) return;
  p->shown = TRUE;
  if (total == 0) { /* streaming: the run's own count */
    done = done >= p->offset ? done - p->offset : 0;
    total = p->total;
  }
  g_autoptr(GString) line = g_string_new("\r");
  double rate = seconds > 0.0 ? (double)done / seconds : 0.0;
  if (total > 0 && done <= total) {
    int width = 30, filled = (int)((guint64)width * done / total);
    g_string_append_printf(line, "[%.*s%*s] %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT " layouts",
                           filled, "##############################", width - filled, "", done,
                           total);
  } else {
    g_string_append_printf(line, "%" G_GUINT64_FORMAT " layouts", done);
  }
  g_string_append_printf(line, ", %.0f/s", rate);
  if (total > 0 && done < total && rate > 0.0) {
    g_string_append(line, ", ETA ");
    append_duration(line, (double)(total - done) / rate);
  }
  g_string_append(line, "\033[K"); /* clear what a longer line left */
  if (total > 0 && done >= total) g_string_append_c(line, '\n');
  fputs(line->str, stderr);
  fflush(stderr);
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
  GArray *merged;                   /* PtsimBatchResult: a chunk's, from them */
} Stream;

static void stream_clear(Stream *st) {
  g_clear_pointer(&st->best_jobs, g_array_unref);
  g_clear_pointer(&st->best_results, g_array_unref);
  g_clear_pointer(&st->merged, g_array_unref);
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
  if (c->shard) ptsim_shard_row(out, c->first_index + k, &c->jobs[k], &c->results[k]);
  else ptsim_sweep_csv_row(out, 0, &c->jobs[k], &c->results[k]);
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
  for (guint i = 0; i < n; i++) {
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

/* Prints an error; its exit code (2 bad input, 1 a failed write or run). */
static int fail(const GError *error) {
  fprintf(stderr, "ptsim sweep: %s\n", error ? error->message : "failed without a reason");
  if (!error) return 1;
  if (error->domain == PTSIM_OUTPUT_ERROR) return ptsim_output_exit_code(error);
  return error->domain == PTSIM_CONFIG_ERROR || error->domain == PTSIM_CUDA_ERROR ||
                 error->domain == G_OPTION_ERROR || error->domain == G_FILE_ERROR
             ? 2
             : 1;
}

/* A sweep in which nothing was valid did not do what was asked: exit 2,
 * with the reasons, so a script never takes an empty table for an answer. */
static int no_valid_layout(const PtsimSweep *sweep) {
  g_autoptr(GString) why = g_string_new(NULL);
  g_string_append_printf(why, "no valid layout among %" G_GUINT64_FORMAT
                         " combinations; rejected, by reason:",
                         sweep->candidates);
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init(&it, sweep->rejected);
  while (g_hash_table_iter_next(&it, &key, &value))
    g_string_append_printf(why, "\n%8u  %s", GPOINTER_TO_UINT(value), (const char *)key);
  fprintf(stderr, "ptsim sweep: %s\n", why->str);
  return 2;
}

/* The line after the table saying where the CSV went. */
static void csv_note(GString *out, const SweepOptions *o, const PtsimSweepSpec *spec,
                     guint64 valid, gboolean streamed) {
  if (o->shard_n > 0)
    g_string_append_printf(out, "\nshard %u/%u: %" G_GUINT64_FORMAT " layouts from layout %"
                           G_GUINT64_FORMAT " on, of %" G_GUINT64_FORMAT " (enumeration order, "
                           "0-based), for sweep --merge: %s\n",
                           o->shard_k, o->shard_n, spec->last - spec->first, spec->first, valid,
                           o->csv);
  else if (streamed)
    g_string_append_printf(out, "\nall %" G_GUINT64_FORMAT " layouts (streamed, in enumeration "
                           "order, rank 0): %s\n", valid, o->csv);
  else
    g_string_append_printf(out, "\nall %" G_GUINT64_FORMAT " layouts: %s\n", valid, o->csv);
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
  st.threads = (guint)o->threads;
  st.every_item = o->no_shortcut;
  st.top = (guint)o->top;
  st.best_jobs = g_array_new(FALSE, FALSE, sizeof(PtsimJob));
  st.best_results = g_array_new(FALSE, FALSE, sizeof(PtsimBatchResult));
  st.merged = g_array_new(FALSE, TRUE, sizeof(PtsimBatchResult));
  if (o->csv) {
    g_autoptr(GString) header = g_string_new(NULL);
    if (st.shard) ptsim_shard_header(header);
    else g_string_append(header, ptsim_sweep_csv_header());
    if (!(st.csv = ptsim_output_open(o->csv, &error)) ||
        !ptsim_output_append(st.csv, header->str, header->len, &error))
      return fail(error);
  }
  Progress progress = {g_get_monotonic_time(), FALSE, layouts, spec->first};
  g_autoptr(PtsimSweep) sweep = ptsim_sweep_stream(
      spec, merge ? PTSIM_DEVICE_NONE : device, (guint)o->threads, STREAM_CHUNK,
      merge ? merge_chunk : stream_chunk, &st, show_progress, &progress, &error);
  if (!sweep || (merge && !ptsim_shard_reader_finish(merge, &error))) return fail(error);
  if (st.csv && !ptsim_output_commit(g_steal_pointer(&st.csv), &error)) return fail(error);
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
  ptsim_report_text_settings(out, &spec->base, NULL, ptsim_job_options_overlap_source(&o->job));
  ptsim_sweep_write_table(out, sweep, &st.counts, order, st.top);
  if (o->csv) csv_note(out, o, spec, sweep->valid, TRUE);
  return 0;
}

static int run(const SweepOptions *o) {
  g_autoptr(GError) error = NULL;
  g_autoptr(PtsimSweepSpec) spec = ptsim_sweep_spec_new();
  PtsimDevice device = PTSIM_DEVICE_AUTO;
  if (o->device && strcmp(o->device, "cpu") == 0) device = PTSIM_DEVICE_CPU;
  else if (o->device && strcmp(o->device, "gpu") == 0) device = PTSIM_DEVICE_GPU;
  else if (o->device && strcmp(o->device, "auto") != 0) {
    fprintf(stderr, "ptsim sweep: --device '%s': allowed values are auto|cpu|gpu\n", o->device);
    return 2;
  }
  gboolean csv_out = o->format && strcmp(o->format, "csv") == 0;
  if (o->format && !csv_out && strcmp(o->format, "text") != 0) {
    fprintf(stderr, "ptsim sweep: --format '%s': allowed values are text|csv\n", o->format);
    return 2;
  }
  if (!build_spec(o, spec, &error)) return fail(error);
  /* A shard wants a file to write to; a merge, shards to read. */
  if ((o->shard_n > 0 && (!o->csv || csv_out || o->figures || o->merge)) ||
      (o->merge && (!o->merge_files || !o->merge_files[0]))) {
    fprintf(stderr, "ptsim sweep: %s\n",
            o->merge && o->shard_n == 0
                ? "--merge: name the shard files (ptsim sweep FLAGS --merge part-*.csv)"
                : "--shard K/N: needs --csv FILE (the shard file), and goes with neither "
                  "--format csv, --figures nor --merge");
    return 2;
  }
  g_autoptr(PtsimShardReader) merge = NULL;
  if (o->merge && !(merge = ptsim_shard_reader_open(o->merge_files,
                                                    g_strv_length(o->merge_files), &error)))
    return fail(error);
  /* A path the output policy refuses (a shard being merged included) costs
   * nothing: checked before the work. */
  if (o->csv && !ptsim_output_check(o->csv, &error)) return fail(error);
  /* Past --in-memory-max layouts the sweep is streamed: bounded memory, an
   * exact top K, the CSV unranked.  A sweep is enumerated at most once to
   * find out; a shard counts first, to know its slice. */
  gboolean may_stream = !o->figures && !csv_out;
  guint64 valid = 0;
  g_autoptr(PtsimSweep) sweep = NULL;
  if (o->shard_n == 0) {
    sweep = ptsim_sweep_enumerate_at_most(
        spec, may_stream ? (guint64)o->in_memory_max : G_MAXUINT64, &error);
    if (!sweep) return fail(error);
    valid = sweep->valid;
    if (sweep->stopped) g_clear_pointer(&sweep, ptsim_sweep_free);
  }
  if (!sweep) { /* a shard, or too many to hold: the count (an ETA for the progress line) */
    valid = ptsim_sweep_count(spec, &error);
    if (valid == G_MAXUINT64) return fail(error);
  }
  if (valid == 0) { /* the reasons come from an enumeration (of nothing valid: cheap) */
    if (!sweep && !(sweep = ptsim_sweep_enumerate(spec, &error))) return fail(error);
    return no_valid_layout(sweep);
  }
  if (o->shard_n > 0) ptsim_shard_slice(o->shard_k, o->shard_n, valid, &spec->first, &spec->last);
  if (!sweep && valid > (guint64)o->in_memory_max && may_stream) {
    g_autoptr(GString) out = g_string_new(NULL);
    int rc = run_streamed(o, spec, device, merge, o->shard_n > 0 ? spec->last - spec->first : valid,
                          out);
    if (rc == 0 && !ptsim_output_stdout(out->str, out->len, &error)) return fail(error);
    return rc;
  }
  if (!sweep && !(sweep = ptsim_sweep_enumerate(spec, &error))) return fail(error);
  Progress progress = {g_get_monotonic_time(), FALSE, sweep->jobs->len, 0};
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
  } else if (!ptsim_sweep_evaluate(sweep, device, (guint)o->threads, show_progress, &progress,
                                   &error)) {
    return fail(error);
  }
  /* A shard file keeps every layout as evaluated, in enumeration order: the
   * merge settles the sweep's top K as the one run does. */
  g_autoptr(GString) shard_rows = NULL;
  if (o->shard_n > 0) {
    shard_rows = g_string_new(NULL);
    ptsim_shard_header(shard_rows);
    for (guint i = 0; i < sweep->jobs->len; i++)
      ptsim_shard_row(shard_rows, sweep->first_index + i, &g_array_index(sweep->jobs, PtsimJob, i),
                      &g_array_index(sweep->results, PtsimBatchResult, i));
  }
  guint top = (guint)o->top;
  ptsim_sweep_settle_top((const PtsimJob *)sweep->jobs->data,
                         (PtsimBatchResult *)sweep->results->data, sweep->jobs->len, top,
                         (guint)o->threads, o->no_shortcut);
  g_autoptr(GArray) order = ptsim_sweep_rank_order(sweep);
  if (!csv_out && ptsim_sweep_emulate_shown(sweep, order, top, (guint)o->threads)) {
    g_array_unref(order);
    order = ptsim_sweep_rank_order(sweep);
  }
  g_autoptr(GString) out = g_string_new(NULL);
  PtsimSweepCounts counts;
  memset(&counts, 0, sizeof counts);
  ptsim_sweep_count_verdicts(&counts, (const PtsimBatchResult *)sweep->results->data, sweep->results->len);
  if (csv_out) ptsim_sweep_write_csv(out, sweep, order, (guint)o->threads);
  else {
    ptsim_report_text_settings(out, &spec->base, NULL, ptsim_job_options_overlap_source(&o->job));
    ptsim_sweep_write_table(out, sweep, &counts, order, top);
  }
  if (o->csv) {
    g_autoptr(GString) csv = shard_rows ? g_steal_pointer(&shard_rows) : g_string_new(NULL);
    if (o->shard_n == 0) ptsim_sweep_write_csv(csv, sweep, order, (guint)o->threads);
    if (!ptsim_output_write(o->csv, csv->str, csv->len, &error)) return fail(error);
    csv_note(out, o, spec, sweep->valid, FALSE);
  }
  gboolean figures_ok = TRUE;
  if (o->figures) figures_ok = ptsim_plot_default_figures(sweep, order, o->figures, out);
  if (!ptsim_output_stdout(out->str, out->len, &error)) return fail(error);
  return figures_ok ? 0 : 1;
}

int ptsim_sweep_main(int argc, char **argv) {
  SweepOptions o;
  memset(&o, 0, sizeof o);
  ptsim_job_options_init(&o.job);
  const GOptionEntry entries[] = {
      {"model", 0, 0, G_OPTION_ARG_FILENAME, &o.models, "Models, comma-separated (default llama3-8b)", "M[,M...]"},
      {"hw", 0, 0, G_OPTION_ARG_FILENAME, &o.hws, "Hardware profiles (default h100-80g)", "H[,H...]"},
      {"gpus", 0, 0, G_OPTION_ARG_STRING, &o.gpus, "GPU counts (default 8)", "N[,N...]"},
      {"seq", 0, 0, G_OPTION_ARG_STRING, &o.seqs, "Sequence lengths (default 8192)", "S[,S...]"},
      {"gbs", 0, 0, G_OPTION_ARG_STRING, &o.gbs, "Global batch sizes (default 128)", "G[,G...]"},
      {"mbs", 0, 0, G_OPTION_ARG_STRING, &o.mbs,
       "Micro-batch sizes (default: 1, 2, 4, ... while what a layout must hold fits the GPU)",
       "B[,B...]"},
      {"cp", 0, 0, G_OPTION_ARG_STRING, &o.cps,
       "Context-parallel sizes (default: every cp dividing gpus/tp whose 2 x cp chunks split the "
       "sequence)",
       "C[,C...]"},
      {"vp", 0, 0, G_OPTION_ARG_STRING, &o.vps,
       "Virtual stages for the interleaved schedule (default: every vp dividing each stage's "
       "layers, uneven first/last stages included as Megatron-LM allows)",
       "V[,V...]"},
      {"recompute", 0, 0, G_OPTION_ARG_STRING, &o.recomputes, "none,selective,full,selective-op (default: none, selective, full)", "R[,R...]"},
      {"schedule", 0, 0, G_OPTION_ARG_STRING, &o.schedules, "1f1b,gpipe,interleaved,zb-h1 (default 1f1b,interleaved,zb-h1)", "S[,S...]"},
      {"ep", 0, 0, G_OPTION_ARG_STRING, &o.eps,
       "Expert-parallel sizes of MoE models (default: every ep dividing the experts and the GPUs "
       "of a stage)", "E[,E...]"},
      {"etp", 0, 0, G_OPTION_ARG_STRING, &o.etps,
       "Expert tensor-parallel sizes of MoE models (default: tp)", "T[,T...]"},
      {"sharding", 0, 0, G_OPTION_ARG_STRING, &o.shardings,
       "Data-parallel modes to sweep: ddp,zero1,zero2,fsdp,hsdp (default: the distributed "
       "optimizer, zero1, or what the settings say)", "M[,M...]"},
      {"hsdp-shard-size", 0, 0, G_OPTION_ARG_STRING, &o.shard_sizes,
       "HSDP shard-group sizes to sweep (default: one NVLink domain / tp); a size not dividing "
       "a layout's dp x cp rejects it", "N[,N...]"},
      {"tp-max", 0, 0, G_OPTION_ARG_STRING, &o.tp_max_text, "Largest tp (default: the NVLink domain, e.g. 8 on HGX, 72 on GB200 NVL72; at most the heads)", "N"},
      {"pp-max", 0, 0, G_OPTION_ARG_STRING, &o.pp_max_text, "Largest pp (default: no limit)", "N"},
      {"allocator", 0, 0, G_OPTION_ARG_NONE, &o.allocator,
       "Replay every layout through the caching-allocator emulation (CPU, slower), so every "
       "`runs` verdict is the emulation's; without it the emulation runs on the fastest layouts "
       "that may run and the rows shown, and the CSV's allocator_* columns are 0 and -1 elsewhere",
       NULL},
      {"samples", 0, 0, G_OPTION_ARG_STRING, &o.samples_text,
       "Monte-Carlo samples per layout: p50/p90/p99 step time (default 0: deterministic)", "K"},
      {"jitter", 0, 0, G_OPTION_ARG_STRING, &o.jitter_text,
       "Lognormal sigma of every op's duration in the samples, 0 to 10 (e.g. 0.05)", "SIGMA"},
      {"stragglers", 0, 0, G_OPTION_ARG_STRING, &o.stragglers_text,
       "Probability that an op is a straggler (default 0)", "P"},
      {"straggler-slowdown", 0, 0, G_OPTION_ARG_STRING, &o.slowdown_text,
       "A straggler's duration factor, 1 to 1000 (default 2)", "F"},
      {"seed", 0, 0, G_OPTION_ARG_STRING, &o.seed_text,
       "Seed of the Philox4x32-10 streams (CPU) / cuRAND Philox (GPU) (default 1)", "N"},
      {"no-shortcut", 0, 0, G_OPTION_ARG_NONE, &o.no_shortcut,
       "Simulate every event of every layout (the event loop) instead of computing the item "
       "times as a recurrence that advances each repeating steady state in one step, and "
       "replay every schedule item through the allocator emulation (the results are the same; "
       "this checks it, and is slower)",
       NULL},
      {"shard", 0, 0, G_OPTION_ARG_STRING, &o.shard,
       "Evaluate only the K-th of N equal slices of the valid layouts (enumeration order) and "
       "write them to --csv FILE as a shard file, for --merge (a Slurm job array "
       "--array=1-N: --shard $SLURM_ARRAY_TASK_ID/N)",
       "K/N"},
      {"merge", 0, 0, G_OPTION_ARG_NONE, &o.merge,
       "The files after the options are the N shard files of this very sweep (the same flags): "
       "print, rank and write it as one run would, evaluating nothing",
       NULL},
      {"in-memory-max", 0, 0, G_OPTION_ARG_STRING, &o.in_memory_max_text,
       "Largest sweep held in memory and fully ranked (default 250000); larger ones stream: "
       "bounded memory, exact top K, CSV in enumeration order",
       "N"},
      {"device", 0, 0, G_OPTION_ARG_STRING, &o.device, "auto|cpu|gpu (default auto)", "D"},
      {"threads", 0, 0, G_OPTION_ARG_STRING, &o.threads_text, "CPU threads, 0 to 1024 (default 0: all cores)", "N"},
      {"top", 0, 0, G_OPTION_ARG_STRING, &o.top_text, "Rows of the ranked table (default 10)", "K"},
      {"csv", 0, 0, G_OPTION_ARG_FILENAME, &o.csv, "Also write every layout to FILE.csv ('-': standard output)", "FILE"},
      {"format", 0, 0, G_OPTION_ARG_STRING, &o.format, "text|csv (default text)", "F"},
      {"figures", 0, 0, G_OPTION_ARG_FILENAME, &o.figures,
       "Also write figures into DIR (created if missing): memory.png and timeline.png of the "
       "best layout, heatmap.png and pareto.png of the sweep, each with .tsv + .gp; skipped "
       "with a note when gnuplot is missing",
       "DIR"},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  g_autoptr(GOptionContext) context =
      g_option_context_new("[--merge SHARD-FILE...] - every valid layout, ranked");
  g_option_context_set_summary(context,
                               "Lists take comma-separated values, each at most once; every "
                               "combination is tried, invalid ones are counted by reason (none "
                               "valid: exit 2).");
  /* the job's settings, shared with predict and memory (job_options.h):
   * every layout of the sweep has them */
  ptsim_job_options_add_settings_to_context(context, &o.job, entries);
  g_autoptr(GError) error = NULL;
  int rc;
  if (!ptsim_options_parse(context, &argc, &argv, &error))
    rc = fail(error);
  else if (argc > 1 && !o.merge)
    rc = (fprintf(stderr, "ptsim sweep: unexpected argument '%s' (see --help)\n", argv[1]), 2);
  else if (!parse_numbers(&o, &error) ||
           (o.shard && !ptsim_shard_parse(o.shard, &o.shard_k, &o.shard_n, &error)))
    rc = fail(error);
  else {
    if (o.merge) o.merge_files = g_strdupv(argv + 1);
    rc = run(&o);
  }
  options_clear(&o);
  return rc;
}

int ptsim_sweep_default_job(void) {
  char *argv[] = {"sweep", "--top", "10", "--figures", "ptsim-out", NULL};
  printf("ptsim default job: every layout of Llama-3-8B on one 8 x H100-80GB node, seq 8192, gbs 128\n"
         "(ptsim --help for the commands; ptsim sweep --help for this one)\n\n");
  return ptsim_sweep_main(5, argv);
}
