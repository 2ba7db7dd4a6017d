/* sweep_cmd.c — the sweep subcommand; see sweep_cmd.h.  Enumeration and
 * evaluation live in sweep.c; this file parses lists, shows progress and
 * writes the ranking. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cli_job.h"
#include "cli_options.h"
#include "config.h"
#include "gpu.h"
#include "job_validate.h"
#include "names.h"
#include "numbers.h"
#include "output.h"
#include "plot_cmd.h"
#include "report.h"
#include "simulate.h"
#include "sweep.h"
#include "sweep_cmd.h"

#define GIB (1024.0 * 1024.0 * 1024.0)
#define STREAM_CHUNK 65536 /* layouts evaluated (and held) at once when streaming */

/* Numeric flags are read as text (NULL: not given) and parsed strictly in
 * parse_numbers, which fills the values below from their defaults. */
typedef struct {
  char *models, *hws, *gpus, *seqs, *gbs, *mbs, *cps, *vps, *recomputes, *schedules;
  char *tp_max_text, *pp_max_text, *top_text, *threads_text, *samples_text, *seed_text;
  char *in_memory_max_text, *jitter_text, *stragglers_text, *slowdown_text;
  gboolean allocator;
  char *device, *csv, *format, *figures;
  PtsimCliJob job; /* the job's settings (not swept): cli_job.h */
  /* parsed */
  gint64 tp_max, pp_max, top, threads, samples, seed, in_memory_max;
  double jitter, stragglers, straggler_slowdown;
} SweepOptions;

static void options_clear(SweepOptions *o) {
  ptsim_cli_job_clear(&o->job);
  char **texts[] = {&o->models, &o->hws, &o->gpus, &o->seqs, &o->gbs, &o->mbs, &o->cps,
                    &o->vps, &o->recomputes, &o->schedules, &o->tp_max_text, &o->pp_max_text,
                    &o->top_text, &o->threads_text, &o->samples_text, &o->seed_text,
                    &o->in_memory_max_text, &o->jitter_text,
                    &o->stragglers_text, &o->slowdown_text, &o->device, &o->csv, &o->format,
                    &o->figures};
  for (size_t i = 0; i < G_N_ELEMENTS(texts); i++) g_clear_pointer(texts[i], g_free);
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
  o->tp_max = o->pp_max = 0; /* 0: the node size / no limit */
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

static gboolean build_spec(const SweepOptions *o, PtsimSweepSpec *spec, GError **error) {
  if (!parse_name_list("--model", o->models ? o->models : "llama3-8b", spec->models, error) ||
      !parse_name_list("--hw", o->hws ? o->hws : "h100-80g", spec->hws, error) ||
      !ptsim_number_int64_list("--gpus", o->gpus ? o->gpus : "8", 1, PTSIM_JOB_GPUS_MAX,
                               spec->gpus, error) ||
      !parse_int_list("--seq", o->seqs ? o->seqs : "8192", spec->seqs, error) ||
      !parse_int_list("--gbs", o->gbs ? o->gbs : "128", spec->gbs, error) ||
      (o->mbs && !parse_int_list("--mbs", o->mbs, spec->mbs, error)) ||
      (o->cps && !parse_int_list("--cp", o->cps, spec->cps, error)) ||
      (o->vps && !parse_int_list("--vp", o->vps, spec->vps, error)) ||
      (o->recomputes &&
       !parse_enum_list("--recompute", PTSIM_NAMES_RECOMPUTE, o->recomputes, spec->recomputes,
                        error)) ||
      (o->schedules &&
       !parse_enum_list("--schedule", PTSIM_NAMES_SCHEDULE, o->schedules, spec->schedules, error)))
    return FALSE;
  spec->tp_max = o->tp_max;
  spec->pp_max = o->pp_max;
  if (!ptsim_cli_job_sweep_base(&o->job, &spec->base, error)) return FALSE;
  spec->model_settings = ptsim_cli_job_model_settings;
  spec->model_settings_data = (gpointer)&o->job;
  spec->allocator = o->allocator;
  spec->mc.samples = (int32_t)o->samples;
  spec->mc.sigma = o->jitter;
  spec->mc.straggler_rate = o->stragglers;
  spec->mc.straggler_slowdown = o->straggler_slowdown;
  spec->mc.seed = (uint64_t)o->seed;
  return TRUE;
}

/* ---- progress (stderr, only on a terminal, only past a second) ---- */

typedef struct {
  gint64 start_us;
  gboolean shown;
} Progress;

static void show_progress(guint64 done, guint64 total, gpointer user_data) {
  Progress *p = user_data;
  if (!isatty(STDERR_FILENO)) return;
  if (!p->shown && g_get_monotonic_time() - p->start_us < G_USEC_PER_SEC) return;
  p->shown = TRUE;
  if (total == 0) { /* streaming: the total is not known */
    fprintf(stderr, "\r%" G_GUINT64_FORMAT " layouts evaluated", done);
    fflush(stderr);
    return;
  }
  int width = 40, filled = (int)(width * done / total);
  fprintf(stderr, "\r[%.*s%*s] %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT " layouts",
          filled, "########################################", width - filled, "", done, total);
  if (done == total) fputc('\n', stderr);
  fflush(stderr);
}

/* ---- ranking ---- */

static const PtsimSweep *sort_sweep;

/* Fitting layouts first, by tokens/s per GPU (comparable across GPU
 * counts); then the rest by the same key. */
static gint compare_rank(gconstpointer a, gconstpointer b) {
  const PtsimBatchResult *ra = &g_array_index(sort_sweep->results, PtsimBatchResult, *(const guint *)a);
  const PtsimBatchResult *rb = &g_array_index(sort_sweep->results, PtsimBatchResult, *(const guint *)b);
  const PtsimJob *ja = &g_array_index(sort_sweep->jobs, PtsimJob, *(const guint *)a);
  const PtsimJob *jb = &g_array_index(sort_sweep->jobs, PtsimJob, *(const guint *)b);
  int fa = ra->fits && ra->status == 0, fb = rb->fits && rb->status == 0;
  if (fa != fb) return fb - fa;
  double ta = ra->tokens_per_s / (double)ja->layout.gpus, tb = rb->tokens_per_s / (double)jb->layout.gpus;
  if (ta != tb) return ta > tb ? -1 : 1;
  return (*(const guint *)a > *(const guint *)b) - (*(const guint *)a < *(const guint *)b);
}

static GArray *rank(const PtsimSweep *sweep) {
  GArray *order = g_array_sized_new(FALSE, FALSE, sizeof(guint), sweep->jobs->len);
  for (guint i = 0; i < sweep->jobs->len; i++) g_array_append_val(order, i);
  sort_sweep = sweep;
  g_array_sort(order, compare_rank);
  return order;
}

static void append_layout_words(GString *out, const PtsimJob *j) {
  const PtsimLayout *l = &j->layout;
  g_string_append_printf(out, "%2" G_GINT64_FORMAT " %2" G_GINT64_FORMAT " %2" G_GINT64_FORMAT
                         " %4" G_GINT64_FORMAT " %2" G_GINT64_FORMAT " %3" G_GINT64_FORMAT
                         " %-9s %-11s",
                         l->tp, l->pp, l->cp, l->dp, l->vp, l->mbs,
                         ptsim_names_get(PTSIM_NAMES_RECOMPUTE, (int)l->recompute),
                         ptsim_names_get(PTSIM_NAMES_SCHEDULE, (int)l->schedule));
}

/* Layouts that fit / could not be scheduled, over every evaluated layout. */
typedef struct {
  guint64 fitting, failed;
} Counts;

static void count(Counts *c, const PtsimBatchResult *results, guint n) {
  for (guint i = 0; i < n; i++) {
    if (results[i].status != 0) c->failed++;
    else if (results[i].fits) c->fitting++;
  }
}

static void write_table(GString *out, const PtsimSweep *sweep, const Counts *c, GArray *order,
                        guint top) {
  g_string_append_printf(out,
                         "%" G_GUINT64_FORMAT " combinations: %" G_GUINT64_FORMAT
                         " valid layouts evaluated on %s, %" G_GUINT64_FORMAT
                         " fit in memory, %" G_GUINT64_FORMAT " could not be scheduled\n"
                         "(mem GiB: analytical estimate, the 80%% rule decides; alloc GiB: the "
                         "caching-allocator emulation plus CUDA context and NCCL, for the rows shown)\n",
                         sweep->candidates, sweep->valid, sweep->device_used, c->fitting,
                         c->failed);
  gboolean mc = sweep->mc.samples > 0;
  g_string_append(out, "\n rank model            hw         gpus   seq tp pp cp   dp vp mbs "
                       "recompute schedule      step_s  tok/s/gpu TFLOP/s   MFU bubble  mem GiB");
  g_string_append(out, mc ? "  p50_s  p90_s  p99_s" : "");
  g_string_append(out, "  alloc GiB\n");
  for (guint k = 0; k < MIN(top, order->len); k++) {
    guint i = g_array_index(order, guint, k);
    const PtsimJob *j = &g_array_index(sweep->jobs, PtsimJob, i);
    const PtsimBatchResult *r = &g_array_index(sweep->results, PtsimBatchResult, i);
    g_string_append_printf(out, "%5u %-16.16s %-10.10s %4" G_GINT64_FORMAT " %5" G_GINT64_FORMAT " ",
                           k + 1, j->model.name, j->hw.name, j->layout.gpus, j->layout.seq);
    append_layout_words(out, j);
    g_string_append_printf(out, " %7.3f %10.0f %7.1f %4.1f%% %5.1f%% %6.1f", r->step_s,
                           r->tokens_per_s / (double)j->layout.gpus, r->tflops_per_gpu,
                           100.0 * r->mfu, 100.0 * r->bubble_fraction, r->total_bytes / GIB);
    if (mc)
      g_string_append_printf(out, " %6.3f %6.3f %6.3f", r->step_p50_s, r->step_p90_s, r->step_p99_s);
    /* The allocator emulation, for the layouts worth looking at. */
    {
      g_autofree PtsimAllocResult *alloc = g_new0(PtsimAllocResult, 1);
      g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
      g_autoptr(GError) error = NULL;
      ptsim_plan_build(j, plan);
      if (ptsim_simulate_allocator(plan, 2, NULL, NULL, 0.0, NULL, alloc, &error)) {
        const PtsimStageAlloc *p = &alloc->stages[alloc->peak_stage];
        gboolean oom = FALSE;
        for (int64_t st = 0; st < alloc->num_stages; st++) oom |= !alloc->stages[st].fits;
        g_string_append_printf(out, " %6.1f%s", p->device_peak_bytes / GIB, oom ? " OOM" : "");
      } else {
        g_string_append(out, "      ?");
      }
    }
    g_string_append_printf(out, "%s\n",
                           r->status != 0 ? " (unscheduled)" : r->fits ? "" : " (does not fit)");
  }
  if (order->len > 0) {
    guint i = g_array_index(order, guint, 0);
    const PtsimBatchResult *best = &g_array_index(sweep->results, PtsimBatchResult, i);
    const PtsimJob *j = &g_array_index(sweep->jobs, PtsimJob, i);
    if (best->fits && best->status == 0)
      g_string_append_printf(
          out,
          "\nwhy the best wins: bubble %.1f%%; exposed communication %.3f s of the %.3f s step "
          "(tp %.3f, cp %.3f, pp %.3f, dp %.3f); memory margin %.1f GiB below the %.0f%% "
          "threshold (%.0f%% of the GPU used)\n",
          100.0 * best->bubble_fraction,
          best->exposed_comm_s[0] + best->exposed_comm_s[1] + best->exposed_comm_s[2] +
              best->exposed_comm_s[3],
          best->step_s, best->exposed_comm_s[0], best->exposed_comm_s[1], best->exposed_comm_s[2],
          best->exposed_comm_s[3],
          (j->layout.memory_threshold - best->usage_fraction) * j->hw.memory_bytes / GIB,
          100.0 * j->layout.memory_threshold, 100.0 * best->usage_fraction);
  }
  if (g_hash_table_size(sweep->rejected) > 0) {
    g_string_append(out, "\nrejected combinations, by reason:\n");
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, sweep->rejected);
    while (g_hash_table_iter_next(&it, &key, &value))
      g_string_append_printf(out, "%8u  %s\n", GPOINTER_TO_UINT(value), (const char *)key);
  }
}

#define CSV_HEADER                                                                   \
  "rank,model,hw,gpus,seq,gbs,tp,pp,cp,dp,vp,mbs,sp,recompute,schedule,"              \
  "distributed_optimizer,status,fits,peak_stage,total_bytes,usage_fraction,"          \
  "step_s,tokens_per_s,tflops_per_gpu,mfu,bubble_fraction,"                           \
  "step_p50_s,step_p90_s,step_p99_s,exposed_tp_s,exposed_cp_s,exposed_pp_s,exposed_dp_s,"   \
  "allocator_device_peak_bytes,allocator_oom,overlap_grad_reduce,overlap_param_gather,"         \
  "tp_comm_overlap\n"

/* One CSV row; rank 0 = not ranked (a streamed sweep). */
static void csv_row(GString *out, guint64 rank, const PtsimJob *j, const PtsimBatchResult *r) {
  const PtsimLayout *l = &j->layout;
  g_string_append_printf(
      out,
      "%" G_GUINT64_FORMAT ",%s,%s,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
      ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
      ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
      ",%d,%s,%s,%d,%d,%d,%" G_GINT64_FORMAT ",%.0f,%.6f,%.9g,%.9g,%.6g,%.6f,%.6f,%.9g,%.9g,%.9g"
      ",%.6g,%.6g,%.6g,%.6g,%.0f,%d,%d,%d,%d\n",
      rank, j->model.name, j->hw.name, l->gpus, l->seq, l->gbs, l->tp, l->pp, l->cp, l->dp,
      l->vp, l->mbs, l->sp, ptsim_names_get(PTSIM_NAMES_RECOMPUTE, (int)l->recompute),
      ptsim_names_get(PTSIM_NAMES_SCHEDULE, (int)l->schedule), l->distributed_optimizer,
      r->status, r->fits, r->peak_stage, r->total_bytes, r->usage_fraction, r->step_s,
      r->tokens_per_s, r->tflops_per_gpu, r->mfu, r->bubble_fraction, r->step_p50_s,
      r->step_p90_s, r->step_p99_s, r->exposed_comm_s[0], r->exposed_comm_s[1],
      r->exposed_comm_s[2], r->exposed_comm_s[3], r->alloc_device_peak_bytes, r->alloc_oom,
      l->overlap_grad_reduce, l->overlap_param_gather, l->tp_comm_overlap);
}

static void write_csv(GString *out, const PtsimSweep *sweep, GArray *order) {
  g_string_append(out, CSV_HEADER);
  for (guint k = 0; k < order->len; k++) {
    guint i = g_array_index(order, guint, k);
    csv_row(out, k + 1, &g_array_index(sweep->jobs, PtsimJob, i),
            &g_array_index(sweep->results, PtsimBatchResult, i));
  }
}

/* ---- streamed sweeps: bounded memory, exact top K, CSV in enumeration order ---- */

typedef struct {
  guint top;
  Counts counts;
  GArray *best_jobs, *best_results; /* the best `top` so far, ranked */
  PtsimOutput *csv;                 /* NULL: no CSV; aborted unless committed */
} Stream;

static void stream_clear(Stream *st) {
  g_clear_pointer(&st->best_jobs, g_array_unref);
  g_clear_pointer(&st->best_results, g_array_unref);
  g_clear_pointer(&st->csv, ptsim_output_abort);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(Stream, stream_clear)

/* Ranks a (job, result) pair the way the table does. */
static gboolean better(const PtsimJob *ja, const PtsimBatchResult *ra, const PtsimJob *jb,
                       const PtsimBatchResult *rb) {
  int fa = ra->fits && ra->status == 0, fb = rb->fits && rb->status == 0;
  if (fa != fb) return fa > fb;
  return ra->tokens_per_s / (double)ja->layout.gpus > rb->tokens_per_s / (double)jb->layout.gpus;
}

static gboolean stream_chunk(const PtsimJob *jobs, const PtsimBatchResult *results, guint n,
                             guint64 first_index, gpointer user_data, GError **error) {
  Stream *st = user_data;
  (void)first_index;
  count(&st->counts, results, n);
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
  for (guint i = 0; i < n; i++) csv_row(rows, 0, &jobs[i], &results[i]);
  return ptsim_output_append(st->csv, rows->str, rows->len, error);
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

/* Sweeps too large to hold: streamed in chunks, the CSV written as it goes
 * (through the output policy: renamed into place at the end, so nothing
 * half-written is left). */
static int run_streamed(const SweepOptions *o, const PtsimSweepSpec *spec, PtsimDevice device,
                        GString *out) {
  g_autoptr(GError) error = NULL;
  g_auto(Stream) st;
  memset(&st, 0, sizeof st);
  st.top = (guint)o->top;
  if (o->csv && !(st.csv = ptsim_output_open(o->csv, &error))) return fail(error);
  st.best_jobs = g_array_new(FALSE, FALSE, sizeof(PtsimJob));
  st.best_results = g_array_new(FALSE, FALSE, sizeof(PtsimBatchResult));
  Progress progress = {g_get_monotonic_time(), FALSE};
  g_autoptr(PtsimSweep) sweep = NULL;
  if (!st.csv || ptsim_output_append(st.csv, CSV_HEADER, strlen(CSV_HEADER), &error))
    sweep = ptsim_sweep_stream(spec, device, (guint)o->threads, STREAM_CHUNK, stream_chunk, &st,
                               show_progress, &progress, &error);
  if (!sweep) return fail(error);
  if (st.csv) {
    PtsimOutput *csv = g_steal_pointer(&st.csv);
    if (!ptsim_output_commit(csv, &error)) return fail(error);
  }
  /* The table shows the kept best rows, in their order. */
  g_array_append_vals(sweep->jobs, st.best_jobs->data, st.best_jobs->len);
  g_array_append_vals(sweep->results, st.best_results->data, st.best_results->len);
  g_autoptr(GArray) order = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint i = 0; i < st.best_jobs->len; i++) g_array_append_val(order, i);
  ptsim_report_text_settings(out, &spec->base, NULL, ptsim_cli_job_overlap_source(&o->job));
  write_table(out, sweep, &st.counts, order, st.top);
  if (o->csv)
    g_string_append_printf(out, "\nall %" G_GUINT64_FORMAT " layouts (streamed, in enumeration "
                           "order, rank 0): %s\n", sweep->valid, o->csv);
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
  /* A path the output policy refuses costs nothing: checked before the work. */
  if (o->csv && !ptsim_output_check(o->csv, &error)) return fail(error);
  /* Past this many layouts the sweep is streamed: bounded memory, an exact
   * top K, the CSV unranked. */
  guint64 valid = ptsim_sweep_count(spec, &error);
  if (valid == G_MAXUINT64) return fail(error);
  if (valid > (guint64)o->in_memory_max && !o->figures && !csv_out) {
    g_autoptr(GString) out = g_string_new(NULL);
    int rc = run_streamed(o, spec, device, out);
    if (rc == 0 && !ptsim_output_stdout(out->str, out->len, &error)) return fail(error);
    return rc;
  }
  g_autoptr(PtsimSweep) sweep = ptsim_sweep_enumerate(spec, &error);
  if (!sweep) return fail(error);
  if (sweep->jobs->len == 0) return no_valid_layout(sweep);
  Progress progress = {g_get_monotonic_time(), FALSE};
  if (!ptsim_sweep_evaluate(sweep, device, (guint)o->threads, show_progress, &progress, &error))
    return fail(error);
  g_autoptr(GArray) order = rank(sweep);
  g_autoptr(GString) out = g_string_new(NULL);
  Counts counts = {0, 0};
  count(&counts, (const PtsimBatchResult *)sweep->results->data, sweep->results->len);
  if (csv_out) write_csv(out, sweep, order);
  else {
    ptsim_report_text_settings(out, &spec->base, NULL, ptsim_cli_job_overlap_source(&o->job));
    write_table(out, sweep, &counts, order, (guint)o->top);
  }
  if (o->csv) {
    g_autoptr(GString) csv = g_string_new(NULL);
    write_csv(csv, sweep, order);
    if (!ptsim_output_write(o->csv, csv->str, csv->len, &error)) return fail(error);
    g_string_append_printf(out, "\nall %u layouts: %s\n", sweep->jobs->len, o->csv);
  }
  gboolean figures_ok = TRUE;
  if (o->figures) figures_ok = ptsim_plot_default_figures(sweep, order, o->figures, out);
  if (!ptsim_output_stdout(out->str, out->len, &error)) return fail(error);
  return figures_ok ? 0 : 1;
}

int ptsim_sweep_main(int argc, char **argv) {
  SweepOptions o;
  memset(&o, 0, sizeof o);
  ptsim_cli_job_init(&o.job);
  const GOptionEntry entries[] = {
      {"model", 0, 0, G_OPTION_ARG_FILENAME, &o.models, "Models, comma-separated (default llama3-8b)", "M[,M...]"},
      {"hw", 0, 0, G_OPTION_ARG_FILENAME, &o.hws, "Hardware profiles (default h100-80g)", "H[,H...]"},
      {"gpus", 0, 0, G_OPTION_ARG_STRING, &o.gpus, "GPU counts (default 8)", "N[,N...]"},
      {"seq", 0, 0, G_OPTION_ARG_STRING, &o.seqs, "Sequence lengths (default 8192)", "S[,S...]"},
      {"gbs", 0, 0, G_OPTION_ARG_STRING, &o.gbs, "Global batch sizes (default 128)", "G[,G...]"},
      {"mbs", 0, 0, G_OPTION_ARG_STRING, &o.mbs, "Micro-batch sizes (default 1,2,4,8)", "B[,B...]"},
      {"cp", 0, 0, G_OPTION_ARG_STRING, &o.cps, "Context-parallel sizes (default 1,2,4,8)", "C[,C...]"},
      {"vp", 0, 0, G_OPTION_ARG_STRING, &o.vps, "Virtual stages for the interleaved schedule (default 2,4)", "V[,V...]"},
      {"recompute", 0, 0, G_OPTION_ARG_STRING, &o.recomputes, "none,selective,full (default all three)", "R[,R...]"},
      {"schedule", 0, 0, G_OPTION_ARG_STRING, &o.schedules, "1f1b,gpipe,interleaved,zb-h1 (default 1f1b,interleaved,zb-h1)", "S[,S...]"},
      {"tp-max", 0, 0, G_OPTION_ARG_STRING, &o.tp_max_text, "Largest tp (default: GPUs per node)", "N"},
      {"pp-max", 0, 0, G_OPTION_ARG_STRING, &o.pp_max_text, "Largest pp (default: no limit)", "N"},
      {"allocator", 0, 0, G_OPTION_ARG_NONE, &o.allocator,
       "Replay every layout through the caching-allocator emulation too (CPU, slower); the CSV's "
       "allocator_* columns (otherwise 0 and -1; the table runs it for the rows shown anyway)",
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
  g_autoptr(GOptionContext) context = g_option_context_new("- every valid layout, ranked");
  g_option_context_set_summary(context,
                               "Lists take comma-separated values, each at most once; every "
                               "combination is tried, invalid ones are counted by reason (none "
                               "valid: exit 2).");
  /* the job's settings, shared with predict and memory (cli_job.h): every
   * layout of the sweep has them */
  ptsim_cli_job_add_settings_to_context(context, &o.job, entries);
  g_autoptr(GError) error = NULL;
  int rc;
  if (!ptsim_cli_parse_options(context, &argc, &argv, &error))
    rc = fail(error);
  else if (argc > 1)
    rc = (fprintf(stderr, "ptsim sweep: unexpected argument '%s' (see --help)\n", argv[1]), 2);
  else if (!parse_numbers(&o, &error))
    rc = fail(error);
  else
    rc = run(&o);
  options_clear(&o);
  return rc;
}

int ptsim_sweep_default_job(void) {
  char *argv[] = {"sweep", "--top", "10", "--figures", "ptsim-out", NULL};
  printf("ptsim default job: every layout of Llama-3-8B on one 8 x H100-80GB node, seq 8192, gbs 128\n"
         "(ptsim --help for the commands; ptsim sweep --help for this one)\n\n");
  return ptsim_sweep_main(5, argv);
}
