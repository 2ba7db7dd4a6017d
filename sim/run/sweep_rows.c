/* sweep_rows.c — an evaluated sweep as rows; see sweep_rows.h.  (The
 * ranking and the CSV moved here from the command, so that a library
 * caller gets the rows the command writes.) */
#include "sweep_rows.h"

#include <string.h>
#include "config.h"
#include "job_validate.h"
#include "lifetimes.h"
#include "names.h"
#include "pipeline_layout.h"
#include "report.h"
#include "simulate.h"
#include "workload.h"

/* ---- ranking ---- */

GArray *ptsim_sweep_rank_order(const PtsimSweep *sweep) {
  GArray *order = g_array_sized_new(FALSE, FALSE, sizeof(guint), sweep->jobs->len);
  for (guint i = 0; i < sweep->jobs->len; i++)
    if (g_array_index(sweep->results, PtsimBatchResult, i).status == 0)
      g_array_append_val(order, i);
  ptsim_sweep_sort_ranked((const PtsimJob *)sweep->jobs->data,
                          (const PtsimBatchResult *)sweep->results->data, (guint *)order->data,
                          order->len, TRUE);
  return order;
}

/* The rows shown that the emulation has not seen (layouts that do not run
 * or could not be scheduled: the fastest that may run are settled
 * already) get it too, for their alloc GiB column.  Returns how many. */
guint ptsim_sweep_emulate_shown(PtsimSweep *sweep, GArray *order, guint top, guint threads) {
  g_autoptr(GArray) idx = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint k = 0; k < MIN(top, order->len); k++) {
    guint i = g_array_index(order, guint, k);
    const PtsimBatchResult *r = &g_array_index(sweep->results, PtsimBatchResult, i);
    if (r->status == 0 && r->runs_from != PTSIM_RUNS_FROM_ALLOCATOR) g_array_append_val(idx, i);
  }
  ptsim_sweep_run_allocator((const PtsimJob *)sweep->jobs->data,
                            (PtsimBatchResult *)sweep->results->data, (const guint *)idx->data,
                            idx->len, threads, sweep->mc.no_shortcut);
  return idx->len;
}

GArray *ptsim_sweep_rank(PtsimSweep *sweep, guint top, guint threads, gboolean every_item,
                         gboolean emulate_shown) {
  ptsim_sweep_settle_top((const PtsimJob *)sweep->jobs->data,
                         (PtsimBatchResult *)sweep->results->data, sweep->jobs->len, top, threads,
                         every_item);
  GArray *order = ptsim_sweep_rank_order(sweep);
  if (emulate_shown && ptsim_sweep_emulate_shown(sweep, order, top, threads)) {
    g_array_unref(order);
    order = ptsim_sweep_rank_order(sweep);
  }
  return order;
}

guint ptsim_sweep_reject_unscheduled(const PtsimSweep *sweep, const PtsimBatchResult *results,
                                     guint n, GHashTable *rejected) {
  GHashTable *into = rejected ? rejected : sweep->rejected;
  guint count = 0;
  for (guint i = 0; i < n; i++) {
    if (results[i].status == 0) continue;
    char *reason = g_strdup_printf("could not be scheduled: %s",
                                   ptsim_simulate_error_text(results[i].status));
    guint was = GPOINTER_TO_UINT(g_hash_table_lookup(into, reason));
    g_hash_table_replace(into, reason, GUINT_TO_POINTER(was + 1));
    count++;
  }
  return count;
}

/* Two layouts of one (model, hardware, GPU count). */
static gboolean same_group(const PtsimJob *a, const PtsimJob *b) {
  return a->layout.gpus == b->layout.gpus && strcmp(a->model.name, b->model.name) == 0 &&
         strcmp(a->hw.name, b->hw.name) == 0;
}

GArray *ptsim_sweep_best_per_group(PtsimSweep *sweep, guint threads, GArray *groups) {
  const PtsimJob *jobs = (const PtsimJob *)sweep->jobs->data;
  PtsimBatchResult *results = (PtsimBatchResult *)sweep->results->data;
  g_autoptr(GArray) group_of = g_array_new(FALSE, FALSE, sizeof(guint));
  g_array_set_size(groups, 0);
  /* Layouts of a group need not be adjacent (shardings and seq lengths
   * loop inside the GPU counts): each layout to its group (the last one
   * found first: they mostly are adjacent), then each group's candidates. */
  guint last = 0;
  for (guint i = 0; i < sweep->jobs->len; i++) {
    guint g = last;
    if (groups->len == 0 || !same_group(&jobs[g_array_index(groups, guint, g)], &jobs[i]))
      for (g = 0; g < groups->len && !same_group(&jobs[g_array_index(groups, guint, g)], &jobs[i]);
           g++) {
      }
    if (g == groups->len) g_array_append_val(groups, i);
    g_array_append_val(group_of, g);
    last = g;
  }
  guint n = groups->len;
  GArray *best = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autofree GArray **members = g_new0(GArray *, MAX(n, 1));
  for (guint g = 0; g < n; g++) members[g] = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint i = 0; i < sweep->jobs->len; i++)
    if (results[i].status == 0 && results[i].runs != 0)
      g_array_append_val(members[g_array_index(group_of, guint, i)], i);
  for (guint g = 0; g < n; g++)
    ptsim_sweep_sort_ranked(jobs, results, (guint *)members[g]->data, members[g]->len, FALSE);
  /* each group's fastest in doubt emulated until one runs: one stream on
   * the threads, every group's walk on its own */
  g_array_set_size(best, n);
  ptsim_sweep_settle_groups(jobs, results, members, n, (guint *)best->data, threads,
                            sweep->mc.no_shortcut);
  for (guint g = 0; g < n; g++) g_array_unref(members[g]);
  return best;
}

typedef struct {
  double fraction;
  guint index;
} Closeness;

static gint by_closeness(gconstpointer a, gconstpointer b) {
  const Closeness *x = a, *y = b;
  if (x->fraction != y->fraction) return x->fraction < y->fraction ? -1 : 1;
  return (x->index > y->index) - (x->index < y->index);
}

GArray *ptsim_sweep_closest(const PtsimSweep *sweep, guint n) {
  g_autoptr(GArray) all = g_array_new(FALSE, FALSE, sizeof(Closeness));
  for (guint i = 0; i < sweep->jobs->len; i++) {
    const PtsimJob *j = &g_array_index(sweep->jobs, PtsimJob, i);
    const PtsimBatchResult *r = &g_array_index(sweep->results, PtsimBatchResult, i);
    if (r->status != 0) continue;
    Closeness c = {(r->held_floor_bytes + ptsim_lifetimes_outside_bytes(j)) / j->hw.memory_bytes,
                   i};
    g_array_append_val(all, c);
  }
  g_array_sort(all, by_closeness);
  GArray *out = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint k = 0; k < MIN(n, all->len); k++)
    g_array_append_val(out, g_array_index(all, Closeness, k).index);
  return out;
}

void ptsim_sweep_no_valid_error(const PtsimSweep *sweep, GError **error) {
  g_autoptr(GString) why = g_string_new(NULL);
  g_string_append_printf(why,
                         "no valid layout among %" G_GUINT64_FORMAT
                         " combinations; rejected, by reason:",
                         sweep->candidates);
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init(&it, sweep->rejected);
  while (g_hash_table_iter_next(&it, &key, &value))
    g_string_append_printf(why, "\n%8u  %s", GPOINTER_TO_UINT(value), (const char *)key);
  g_set_error_literal(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID, why->str);
}

/* ---- the CSV ---- */

/* Ranks of one shard group of the states the layout shards (1: none). */
gint64 ptsim_sweep_shard_group(const PtsimLayout *l) {
  return l->distributed_optimizer
             ? l->dp * l->cp / (l->optimizer_instances > 0 ? l->optimizer_instances : 1)
             : 1;
}

const char *ptsim_sweep_runs_from_word(int32_t from) {
  static const char *const words[] = {"", "80% rule", "floor", "allocator"};
  return from >= 0 && from < 4 ? words[from] : "";
}

#define CSV_HEADER                                                                                \
  "rank,model,hw,gpus,seq,gbs,tp,pp,cp,dp,vp,mbs,sp,recompute,schedule,"                          \
  "distributed_optimizer,status,fits,peak_stage,total_bytes,usage_fraction,"                      \
  "step_s,tokens_per_s,tflops_per_gpu,mfu,bubble_fraction,"                                       \
  "step_p50_s,step_p90_s,step_p99_s,exposed_tp_s,exposed_cp_s,exposed_pp_s,exposed_dp_s,"         \
  "allocator_device_peak_bytes,allocator_oom,overlap_grad_reduce,overlap_param_gather,"           \
  "tp_comm_overlap,held_floor_bytes,runs,runs_from,ep,etp,edp,exposed_ep_s,sharding,shard_group," \
  "tokens_per_s_per_gpu,mfu_precision_peak,mfu_bf16_peak,pipeline_layout\n"

/* One CSV row; rank 0 = not ranked (a streamed sweep). */
static void csv_row(GString *out, guint64 rank, const PtsimJob *j, const PtsimBatchResult *r) {
  const PtsimLayout *l = &j->layout;
  const PtsimSettings *run = &j->settings;
  g_string_append_printf(
      out,
      "%" G_GUINT64_FORMAT ",%s,%s,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
      ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
      ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%d,%s,%s,%d,%d,%d,%" G_GINT64_FORMAT
      ",%.0f,%.6f,%.9g,%.9g,%.6g,%.6f,%.6f,%.9g,%.9g,%.9g"
      ",%.6g,%.6g,%.6g,%.6g,%.0f,%d,%d,%d,%d,%.0f,%d,%s,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
      ",%" G_GINT64_FORMAT ",%.6g,%s,%" G_GINT64_FORMAT ",%.9g,%.6f,%.6f,",
      rank, j->model.name, j->hw.name, l->gpus, l->seq, l->gbs, l->tp, l->pp, l->cp, l->dp, l->vp,
      l->mbs, l->sp, ptsim_names_get(PTSIM_NAMES_RECOMPUTE, (int)run->recompute),
      ptsim_names_get(PTSIM_NAMES_SCHEDULE, (int)l->schedule), l->distributed_optimizer, r->status,
      r->fits, r->peak_stage, r->total_bytes, r->usage_fraction, r->step_s, r->tokens_per_s,
      r->tflops_per_gpu, r->mfu, r->bubble_fraction, r->step_p50_s, r->step_p90_s, r->step_p99_s,
      r->exposed_comm_s[0], r->exposed_comm_s[1], r->exposed_comm_s[2], r->exposed_comm_s[3],
      r->alloc_device_peak_bytes, r->alloc_oom, run->overlap_grad_reduce, run->overlap_param_gather,
      run->tp_comm_overlap, r->held_floor_bytes, r->runs, ptsim_sweep_runs_from_word(r->runs_from),
      l->ep, l->etp, l->edp, r->exposed_comm_s[PTSIM_COMM_EP], ptsim_layout_sharding_word(l),
      ptsim_sweep_shard_group(l), l->gpus > 0 ? r->tokens_per_s / (double)l->gpus : 0.0,
      ptsim_report_mfu_precision(j, r->mfu), r->mfu);
  /* the split as Megatron-LM's layout string (no commas: one cell), even splits none */
  g_autofree char *split = ptsim_sweep_layout_string(j);
  if (split) g_string_append(out, split);
  g_string_append_c(out, '\n');
}

char *ptsim_sweep_layout_string(const PtsimJob *job) {
  return ptsim_pipeline_layout_format(&job->layout, job->model.num_layers,
                                      job->model.mtp_num_layers);
}

const char *ptsim_sweep_csv_header(void) { return CSV_HEADER; }

void ptsim_sweep_csv_row(GString *out, guint64 rank, const PtsimJob *job,
                         const PtsimBatchResult *r) {
  csv_row(out, rank, job, r);
}

/* ---- rows on every core (formatting the numbers is most of a CSV's cost) ---- */

typedef struct {
  PtsimSweepRowFn fn;
  gconstpointer data;
  guint first, last;
  GString *out;
} RowSlice;

static gpointer format_slice(gpointer user_data) {
  RowSlice *slice = user_data;
  for (guint k = slice->first; k < slice->last; k++) slice->fn(slice->out, k, slice->data);
  return NULL;
}

void ptsim_sweep_format_rows(GString *out, guint n, guint threads, PtsimSweepRowFn fn,
                             gconstpointer data) {
  enum { MAX_SLICES = 16 };
  RowSlice slices[MAX_SLICES];
  GThread *workers[MAX_SLICES];
  if (threads == 0) threads = g_get_num_processors();
  threads = MIN(threads, MAX_SLICES);
  if (n < 4096 || threads < 2) {
    for (guint k = 0; k < n; k++) fn(out, k, data);
    return;
  }
  for (guint t = 0; t < threads; t++) {
    RowSlice slice = {fn, data, (guint)((guint64)n * t / threads),
                      (guint)((guint64)n * (t + 1) / threads), g_string_new(NULL)};
    slices[t] = slice;
    if (t > 0) workers[t] = g_thread_new("csv", format_slice, &slices[t]);
  }
  format_slice(&slices[0]);
  for (guint t = 0; t < threads; t++) {
    if (t > 0) g_thread_join(workers[t]);
    g_string_append_len(out, slices[t].out->str, (gssize)slices[t].out->len);
    g_string_free(slices[t].out, TRUE);
  }
}

typedef struct {
  const PtsimSweep *sweep;
  GArray *order;
} RankedRows;

static void ranked_row(GString *out, guint k, gconstpointer data) {
  const RankedRows *rows = data;
  guint i = g_array_index(rows->order, guint, k);
  csv_row(out, k + 1, &g_array_index(rows->sweep->jobs, PtsimJob, i),
          &g_array_index(rows->sweep->results, PtsimBatchResult, i));
}

void ptsim_sweep_write_csv(GString *out, const PtsimSweep *sweep, GArray *order, guint threads) {
  RankedRows rows = {sweep, order};
  g_string_append(out, CSV_HEADER);
  ptsim_sweep_format_rows(out, order->len, threads, ranked_row, &rows);
}

/* Cuts the cell at *at ending in a comma or the line's end: LEN bytes when
 * LEN >= 0 (a name), else up to the next comma. */
static const char *cut(GString *line, gsize *at, gssize len) {
  gsize start = *at, end;
  if (len >= 0) {
    end = MIN(start + (gsize)len, line->len);
  } else {
    const char *comma = memchr(line->str + start, ',', line->len - start);
    end = comma ? (gsize)(comma - line->str) : line->len;
  }
  if (end < line->len) line->str[end] = '\0'; /* the comma, or the newline */
  *at = end + 1;
  return line->str + start;
}

guint ptsim_sweep_csv_cells(GString *line, const PtsimJob *job, const char **cells, guint max) {
  if (line->len > 0 && line->str[line->len - 1] == '\n') g_string_truncate(line, line->len - 1);
  gsize at = 0;
  guint n = 0;
  while (at <= line->len && n < max) {
    /* cells 1 and 2 are the model's and the profile's names (csv_row) */
    gssize len = n == 1   ? (gssize)strlen(job->model.name)
                 : n == 2 ? (gssize)strlen(job->hw.name)
                          : -1;
    cells[n++] = cut(line, &at, len);
  }
  return n;
}
