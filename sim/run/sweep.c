/* sweep.c — enumeration and evaluation of many layouts; see sweep.h. */
#include <string.h>
#include "batch.h"
#include "config.h"
#include "job_validate.h"
#include "gpu.h"
#include "simulate.h"
#include "sweep.h"

#define CHUNK 256      /* layouts per CPU work item */
#define GPU_CHUNK 65536 /* layouts per GPU launch: results stream back per chunk */

static GArray *int64_array(const gint64 *values, guint n) {
  GArray *a = g_array_new(FALSE, FALSE, sizeof(gint64));
  g_array_append_vals(a, values, n);
  return a;
}

static GArray *int_array(const int *values, guint n) {
  GArray *a = g_array_new(FALSE, FALSE, sizeof(int));
  g_array_append_vals(a, values, n);
  return a;
}

PtsimSweepSpec *ptsim_sweep_spec_new(void) {
  static const gint64 mbs[] = {1, 2, 4, 8}, cps[] = {1, 2, 4, 8}, vps[] = {2, 4};
  static const int recomputes[] = {PTSIM_RECOMPUTE_NONE, PTSIM_RECOMPUTE_SELECTIVE,
                                   PTSIM_RECOMPUTE_FULL};
  static const int schedules[] = {PTSIM_SCHEDULE_1F1B, PTSIM_SCHEDULE_INTERLEAVED,
                                  PTSIM_SCHEDULE_ZB_H1};
  PtsimSweepSpec *s = g_new0(PtsimSweepSpec, 1);
  s->models = g_ptr_array_new_with_free_func(g_free);
  s->hws = g_ptr_array_new_with_free_func(g_free);
  s->gpus = g_array_new(FALSE, FALSE, sizeof(gint64));
  s->seqs = g_array_new(FALSE, FALSE, sizeof(gint64));
  s->gbs = g_array_new(FALSE, FALSE, sizeof(gint64));
  s->mbs = int64_array(mbs, G_N_ELEMENTS(mbs));
  s->cps = int64_array(cps, G_N_ELEMENTS(cps));
  s->vps = int64_array(vps, G_N_ELEMENTS(vps));
  s->recomputes = int_array(recomputes, G_N_ELEMENTS(recomputes));
  s->schedules = int_array(schedules, G_N_ELEMENTS(schedules));
  ptsim_layout_init_defaults(&s->base);
  s->mc.straggler_slowdown = 2.0;
  s->mc.seed = 1;
  return s;
}

void ptsim_sweep_spec_free(PtsimSweepSpec *s) {
  if (!s) return;
  g_ptr_array_unref(s->models);
  g_ptr_array_unref(s->hws);
  g_array_unref(s->gpus);
  g_array_unref(s->seqs);
  g_array_unref(s->gbs);
  g_array_unref(s->mbs);
  g_array_unref(s->cps);
  g_array_unref(s->vps);
  g_array_unref(s->recomputes);
  g_array_unref(s->schedules);
  g_free(s);
}

typedef struct PtsimSweepStream PtsimSweepStream;
struct PtsimSweepStream {
  PtsimDevice device;
  guint threads, chunk;
  PtsimSweepChunkFn fn;
  gpointer user_data;
  PtsimSweepProgress progress;
  gpointer progress_data;
  GError *error; /* the first failure; enumeration stops once set */
};

void ptsim_sweep_free(PtsimSweep *sweep) {
  if (!sweep) return;
  if (sweep->stream) g_clear_error(&sweep->stream->error);
  g_free(sweep->stream);
  g_array_unref(sweep->jobs);
  g_array_unref(sweep->results);
  g_hash_table_unref(sweep->rejected);
  g_free(sweep->device_used);
  g_free(sweep);
}

/* ---- enumeration ---- */

/* A rejection message with its numbers and names blanked, so that one rule
 * is one reason: "--tp N does not divide num_attention_heads N of model M". */
static char *reason_of(const char *message) {
  GString *r = g_string_new(NULL);
  const char *model = strstr(message, " of model ");
  gsize end = model ? (gsize)(model - message) : strlen(message);
  for (gsize i = 0; i < end; i++) {
    if (g_ascii_isdigit(message[i])) {
      while (i + 1 < end && (g_ascii_isdigit(message[i + 1]) || message[i + 1] == '.')) i++;
      g_string_append_c(r, 'N');
    } else {
      g_string_append_c(r, message[i]);
    }
  }
  return g_string_free(r, FALSE);
}

static void reject(PtsimSweep *sweep, const char *message) {
  char *reason = reason_of(message);
  guint count = GPOINTER_TO_UINT(g_hash_table_lookup(sweep->rejected, reason));
  g_hash_table_replace(sweep->rejected, reason, GUINT_TO_POINTER(count + 1));
}

static void flush(PtsimSweep *sweep);

typedef struct {
  const PtsimSweepSpec *spec;
  PtsimSweep *sweep;
  PtsimModel model;
  PtsimHardware hw;
  gint64 gpus, seq, gbs;
} Scenario;

static void try_layout(Scenario *sc, gint64 tp, gint64 cp, gint64 pp, gint64 mbs,
                       int recompute, int schedule, gint64 vp) {
  PtsimJob job;
  g_autoptr(GError) error = NULL;
  memset(&job, 0, sizeof job);
  job.model = sc->model;
  job.hw = sc->hw;
  job.layout = sc->spec->base;
  PtsimLayout *l = &job.layout;
  l->gpus = sc->gpus;
  l->tp = tp;
  l->cp = cp;
  l->pp = pp;
  l->vp = vp;
  l->mbs = mbs;
  l->gbs = sc->gbs;
  l->seq = sc->seq;
  l->recompute = (PtsimRecompute)recompute;
  l->schedule = (PtsimSchedule)schedule;
  if (sc->sweep->stream && sc->sweep->stream->error) return;
  sc->sweep->candidates++;
  if (!ptsim_job_validate(&job, &error)) {
    reject(sc->sweep, error->message);
    return;
  }
  g_array_append_val(sc->sweep->jobs, job);
  sc->sweep->valid++;
  if (sc->sweep->stream && sc->sweep->jobs->len >= sc->sweep->stream->chunk) flush(sc->sweep);
}

static void enumerate_scenario(Scenario *sc) {
  const PtsimSweepSpec *spec = sc->spec;
  gint64 tp_max = spec->tp_max > 0 ? spec->tp_max : sc->hw.gpus_per_node;
  for (gint64 tp = 1; tp <= tp_max && tp <= sc->gpus; tp++) {
    if (sc->gpus % tp) continue;
    for (guint c = 0; c < spec->cps->len; c++) {
      gint64 cp = g_array_index(spec->cps, gint64, c);
      if ((sc->gpus / tp) % cp) continue;
      gint64 rest = sc->gpus / (tp * cp);
      for (gint64 pp = 1; pp <= rest && pp <= sc->model.num_layers; pp++) {
        if (rest % pp || (spec->pp_max > 0 && pp > spec->pp_max)) continue;
        for (guint b = 0; b < spec->mbs->len; b++)
          for (guint r = 0; r < spec->recomputes->len; r++)
            for (guint s = 0; s < spec->schedules->len; s++) {
              gint64 mbs = g_array_index(spec->mbs, gint64, b);
              int recompute = g_array_index(spec->recomputes, int, r);
              int schedule = g_array_index(spec->schedules, int, s);
              /* One stage has no pipeline: the schedules coincide. */
              if (pp == 1 && s > 0) continue;
              if (pp == 1) schedule = PTSIM_SCHEDULE_1F1B;
              if (schedule != PTSIM_SCHEDULE_INTERLEAVED) {
                try_layout(sc, tp, cp, pp, mbs, recompute, schedule, 1);
                continue;
              }
              for (guint v = 0; v < spec->vps->len; v++)
                try_layout(sc, tp, cp, pp, mbs, recompute, schedule,
                           g_array_index(spec->vps, gint64, v));
            }
      }
    }
  }
}

/* Enumerates the spec into sweep (flushing chunks when streaming). */
static gboolean enumerate_into(const PtsimSweepSpec *spec, PtsimSweep *sweep, GError **error) {
  for (guint mi = 0; mi < spec->models->len; mi++) {
    Scenario sc;
    memset(&sc, 0, sizeof sc);
    sc.spec = spec;
    sc.sweep = sweep;
    if (!ptsim_model_load(g_ptr_array_index(spec->models, mi), &sc.model, error)) return FALSE;
    if (spec->model_settings && !spec->model_settings(&sc.model, spec->model_settings_data, error))
      return FALSE;
    for (guint hi = 0; hi < spec->hws->len; hi++) {
      if (!ptsim_hardware_load(g_ptr_array_index(spec->hws, hi), &sc.hw, error)) return FALSE;
      for (guint g = 0; g < spec->gpus->len; g++)
        for (guint s = 0; s < spec->seqs->len; s++)
          for (guint b = 0; b < spec->gbs->len; b++) {
            sc.gpus = g_array_index(spec->gpus, gint64, g);
            sc.seq = g_array_index(spec->seqs, gint64, s);
            sc.gbs = g_array_index(spec->gbs, gint64, b);
            enumerate_scenario(&sc);
          }
    }
  }
  return TRUE;
}

PtsimSweep *ptsim_sweep_enumerate(const PtsimSweepSpec *spec, GError **error) {
  g_autoptr(PtsimSweep) sweep = g_new0(PtsimSweep, 1);
  sweep->jobs = g_array_new(FALSE, FALSE, sizeof(PtsimJob));
  sweep->results = g_array_new(FALSE, TRUE, sizeof(PtsimBatchResult));
  sweep->rejected = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  sweep->mc = spec->mc;
  sweep->allocator = spec->allocator;
  if (!enumerate_into(spec, sweep, error)) return NULL;
  return g_steal_pointer(&sweep);
}

/* ---- evaluation ---- */

typedef struct {
  PtsimSweep *sweep;
  gint done; /* layouts evaluated (atomic) */
} Pool;

/* The allocator emulation of jobs [first, last), into their results. */
static void allocator_pass(PtsimSweep *sweep, guint first, guint last) {
  g_autofree PtsimAllocResult *alloc = g_new0(PtsimAllocResult, 1);
  g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
  for (guint i = first; i < last; i++) {
    PtsimBatchResult *r = &g_array_index(sweep->results, PtsimBatchResult, i);
    g_autoptr(GError) error = NULL;
    if (r->status != 0) continue;
    ptsim_plan_build(&g_array_index(sweep->jobs, PtsimJob, i), plan);
    if (!ptsim_simulate_allocator(plan, 2, NULL, NULL, 0.0, NULL, alloc, &error))
      continue;
    r->alloc_device_peak_bytes = alloc->stages[alloc->peak_stage].device_peak_bytes;
    r->alloc_oom = 0;
    for (int64_t s = 0; s < alloc->num_stages; s++) r->alloc_oom |= !alloc->stages[s].fits;
  }
}

static void evaluate_chunk(gpointer data, gpointer user_data) {
  Pool *pool = user_data;
  guint first = GPOINTER_TO_UINT(data) - 1;
  guint last = MIN(first + CHUNK, pool->sweep->jobs->len);
  int64_t bytes = 0;
  for (guint i = first; i < last; i++) {
    int64_t b = ptsim_batch_scratch_bytes_mc(&g_array_index(pool->sweep->jobs, PtsimJob, i),
                                             &pool->sweep->mc);
    if (b > bytes) bytes = b;
  }
  void *scratch = g_malloc(bytes);
  for (guint i = first; i < last; i++)
    ptsim_batch_evaluate_mc(&g_array_index(pool->sweep->jobs, PtsimJob, i), &pool->sweep->mc,
                            pool->sweep->first_index + i,
                            scratch, bytes, &g_array_index(pool->sweep->results, PtsimBatchResult, i));
  g_free(scratch);
  if (pool->sweep->allocator) allocator_pass(pool->sweep, first, last);
  g_atomic_int_add(&pool->done, (gint)(last - first));
}

static gboolean evaluate_cpu(PtsimSweep *sweep, guint threads, PtsimSweepProgress progress,
                             gpointer user_data, GError **error) {
  Pool pool = {sweep, 0};
  if (threads == 0) threads = g_get_num_processors();
  /* An exclusive pool starts every thread at once: no more than the work items. */
  guint items = (sweep->jobs->len + CHUNK - 1) / CHUNK;
  if (threads > items) threads = MAX(items, 1);
  GThreadPool *workers = g_thread_pool_new(evaluate_chunk, &pool, (gint)threads, TRUE, error);
  if (!workers) return FALSE;
  for (guint first = 0; first < sweep->jobs->len; first += CHUNK)
    g_thread_pool_push(workers, GUINT_TO_POINTER(first + 1), NULL);
  while ((guint)g_atomic_int_get(&pool.done) < sweep->jobs->len) {
    if (progress) progress((guint64)g_atomic_int_get(&pool.done), sweep->jobs->len, user_data);
    g_usleep(50000);
  }
  g_thread_pool_free(workers, FALSE, TRUE);
  if (progress) progress(sweep->jobs->len, sweep->jobs->len, user_data);
  g_free(sweep->device_used);
  sweep->device_used = g_strdup_printf("cpu (%u thread%s)", threads, threads == 1 ? "" : "s");
  return TRUE;
}

static gboolean evaluate_gpu(PtsimSweep *sweep, const PtsimGpuInfo *info,
                             PtsimSweepProgress progress, gpointer user_data, GError **error) {
  for (guint first = 0; first < sweep->jobs->len; first += GPU_CHUNK) {
    guint n = MIN(GPU_CHUNK, sweep->jobs->len - first);
    if (!ptsim_gpu_evaluate_mc(&g_array_index(sweep->jobs, PtsimJob, first), n, &sweep->mc,
                               sweep->first_index + first,
                               &g_array_index(sweep->results, PtsimBatchResult, first), error))
      return FALSE;
    if (sweep->allocator) allocator_pass(sweep, first, first + n); /* on the host */
    if (progress) progress(first + n, sweep->jobs->len, user_data);
  }
  g_free(sweep->device_used);
  sweep->device_used = g_strdup_printf("gpu (%s)", info->name);
  return TRUE;
}

gboolean ptsim_sweep_evaluate(PtsimSweep *sweep, PtsimDevice device, guint threads,
                              PtsimSweepProgress progress, gpointer user_data,
                              GError **error) {
  g_array_set_size(sweep->results, sweep->jobs->len);
  if (device != PTSIM_DEVICE_CPU) {
    PtsimGpuInfo info;
    g_autoptr(GError) gpu_error = NULL;
    if (ptsim_gpu_query(&info, &gpu_error))
      return evaluate_gpu(sweep, &info, progress, user_data, error);
    if (device == PTSIM_DEVICE_GPU) {
      g_propagate_prefixed_error(error, g_steal_pointer(&gpu_error), "--device gpu: ");
      return FALSE;
    }
  }
  return evaluate_cpu(sweep, threads, progress, user_data, error);
}

/* ---- streaming ---- */

/* Reports progress sweep-wide (the total is not known while streaming). */
typedef struct {
  PtsimSweep *sweep;
} ChunkProgress;

static void chunk_progress(guint64 done, guint64 total, gpointer user_data) {
  ChunkProgress *cp = user_data;
  PtsimSweepStream *st = cp->sweep->stream;
  (void)total;
  if (st->progress) st->progress(cp->sweep->first_index + done, 0, st->progress_data);
}

/* Evaluates the jobs collected so far, hands them on, and starts a new chunk. */
static void flush(PtsimSweep *sweep) {
  PtsimSweepStream *st = sweep->stream;
  ChunkProgress cp = {sweep};
  if (st->error || sweep->jobs->len == 0) return;
  if (st->fn && ptsim_sweep_evaluate(sweep, st->device, st->threads, chunk_progress, &cp, &st->error))
    st->fn((const PtsimJob *)sweep->jobs->data, (const PtsimBatchResult *)sweep->results->data,
           sweep->jobs->len, sweep->first_index, st->user_data, &st->error);
  sweep->first_index += sweep->jobs->len;
  g_array_set_size(sweep->jobs, 0);
  g_array_set_size(sweep->results, 0);
}

PtsimSweep *ptsim_sweep_stream(const PtsimSweepSpec *spec, PtsimDevice device, guint threads,
                               guint chunk, PtsimSweepChunkFn fn, gpointer user_data,
                               PtsimSweepProgress progress, gpointer progress_data,
                               GError **error) {
  g_autoptr(PtsimSweep) sweep = g_new0(PtsimSweep, 1);
  sweep->jobs = g_array_new(FALSE, FALSE, sizeof(PtsimJob));
  sweep->results = g_array_new(FALSE, TRUE, sizeof(PtsimBatchResult));
  sweep->rejected = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  sweep->mc = spec->mc;
  sweep->allocator = spec->allocator;
  sweep->stream = g_new0(struct PtsimSweepStream, 1);
  sweep->stream->device = device;
  sweep->stream->threads = threads;
  sweep->stream->chunk = chunk > 0 ? chunk : 1;
  sweep->stream->fn = fn;
  sweep->stream->user_data = user_data;
  sweep->stream->progress = progress;
  sweep->stream->progress_data = progress_data;
  if (!enumerate_into(spec, sweep, error)) return NULL;
  flush(sweep);
  if (sweep->stream->error) {
    g_propagate_error(error, g_steal_pointer(&sweep->stream->error));
    return NULL;
  }
  return g_steal_pointer(&sweep);
}

guint64 ptsim_sweep_count(const PtsimSweepSpec *spec, GError **error) {
  g_autoptr(PtsimSweep) sweep =
      ptsim_sweep_stream(spec, PTSIM_DEVICE_CPU, 1, 4096, NULL, NULL, NULL, NULL, error);
  return sweep ? sweep->valid : G_MAXUINT64;
}
