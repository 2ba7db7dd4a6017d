/* sweep.c — enumeration and evaluation of many layouts; see sweep.h. */
#include <string.h>
#include "batch.h"
#include "batch_cpu.h"
#include "config.h"
#include "job_validate.h"
#include "gpu.h"
#include "lifetimes.h"
#include "memory.h"
#include "pipeline_layout.h"
#include "plan.h"
#include "simulate.h"
#include "sweep.h"
#include "kernel_registry.h"
#include "workspaces.h"
#include "topology.h"

#define CHUNK 256       /* layouts per CPU work item */
#define GPU_CHUNK 65536 /* layouts per GPU launch: results stream back per chunk */
/* Sweeps held up to this many layouts may be evaluated while enumerating
 * (their jobs' array reserved: a PtsimJob a layout of address space). */
#define EARLY_HOLD_MAX 1048576

static GArray *int_array(const int *values, guint n) {
  GArray *a = g_array_new(FALSE, FALSE, sizeof(int));
  g_array_append_vals(a, values, n);
  return a;
}

PtsimSweepSpec *ptsim_sweep_spec_new(void) {
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
  s->mbs = g_array_new(FALSE, FALSE, sizeof(gint64));
  s->cps = g_array_new(FALSE, FALSE, sizeof(gint64));
  s->vps = g_array_new(FALSE, FALSE, sizeof(gint64));
  s->recomputes = int_array(recomputes, G_N_ELEMENTS(recomputes));
  s->schedules = int_array(schedules, G_N_ELEMENTS(schedules));
  s->shardings = g_array_new(FALSE, FALSE, sizeof(int));
  s->shard_sizes = g_array_new(FALSE, FALSE, sizeof(gint64));
  s->eps = g_array_new(FALSE, FALSE, sizeof(gint64));
  s->etps = g_array_new(FALSE, FALSE, sizeof(gint64));
  s->tps = g_array_new(FALSE, FALSE, sizeof(gint64));
  s->pps = g_array_new(FALSE, FALSE, sizeof(gint64));
  s->layouts = g_ptr_array_new_with_free_func(g_free);
  ptsim_job_init_defaults(&s->base);
  s->mc.straggler_slowdown = 2.0;
  s->mc.seed = 1;
  s->last = G_MAXUINT64;
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
  g_array_unref(s->shardings);
  g_array_unref(s->shard_sizes);
  g_array_unref(s->eps);
  g_array_unref(s->etps);
  g_array_unref(s->tps);
  g_ptr_array_unref(s->layouts);
  g_array_unref(s->pps);
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

static void early_free(struct PtsimSweepEarly *early);

void ptsim_sweep_free(PtsimSweep *sweep) {
  if (!sweep) return;
  g_clear_pointer(&sweep->early, early_free);
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
  const char *model = strstr(message, " of model ");
  gsize end = model ? (gsize)(model - message) : strlen(message), n = 0;
  char *r = g_malloc(end + 1); /* never longer than the message */
  for (gsize i = 0; i < end; i++) {
    if (g_ascii_isdigit(message[i])) {
      while (i + 1 < end && (g_ascii_isdigit(message[i + 1]) || message[i + 1] == '.')) i++;
      r[n++] = 'N';
    } else {
      r[n++] = message[i];
    }
  }
  r[n] = '\0';
  return r;
}

static void reject(PtsimSweep *sweep, const char *message) {
  char *reason = reason_of(message);
  guint count = GPOINTER_TO_UINT(g_hash_table_lookup(sweep->rejected, reason));
  g_hash_table_replace(sweep->rejected, reason, GUINT_TO_POINTER(count + 1));
}

static void flush(PtsimSweep *sweep);
static void early_open(PtsimSweep *sweep, guint threads);
static void early_push(PtsimSweep *sweep);

typedef struct {
  const PtsimSweepSpec *spec;
  PtsimSweep *sweep;
  PtsimJob job; /* the spec's base with this scenario's model and hardware:
                   every candidate's job starts as a copy of it */
  gint64 gpus, seq, gbs;
  int sharding;      /* PtsimShardingMode, -1: the base's */
  gint64 shard_size; /* of hsdp (0: one NVLink domain / tp) */
  PtsimPlan *plan;   /* scratch of may_run() */
  PtsimMemoryEstimate *memory;
  guint64 *scenarios_done, scenarios; /* for the progress callback */
  const gint64 *layout_stages;        /* each given pipeline layout's stages (pp x vp) */
  guint64 layouts_met;                /* bit k: layout k's stages are a multiple of a pp tried */
} Scenario;

/* What one layout of the scenario looks like besides its sizes. */
typedef struct {
  gint64 tp, cp, pp, vp, mbs, first, last;
  int recompute, schedule;
  gint64 ep, etp;                   /* expert parallelism (MoE models; dense: 1 and 0) */
  const PtsimPipelineLayout *split; /* a given pipeline layout's (NULL: first, last) */
  int embedding, loss;              /* an accounted split's slots (ptsim_sweep_split_accounted) */
} Candidate;

/* Outcome of try_layout. */
enum { TRIED_INVALID, TRIED_WONT_RUN, TRIED_MAY_RUN };

/* 1 unless what the allocator emulation must hold plus the context and
 * NCCL buffers exceeds the GPU (ptsim_memory_held_floor_bytes). */
static gboolean may_run(Scenario *sc, const PtsimJob *job) {
  ptsim_plan_build(job, sc->plan);
  ptsim_memory_estimate(sc->plan, PTSIM_CE_LAST_STAGE, sc->memory);
  return ptsim_memory_held_floor_bytes(sc->memory) + ptsim_lifetimes_outside_bytes(job) <=
         job->hw.memory_bytes;
}

static int try_expert_layout(Scenario *sc, const Candidate *c) {
  int tried = TRIED_MAY_RUN;
  PtsimJob job = sc->job;
  g_autoptr(GError) error = NULL;
  PtsimLayout *l = &job.layout;
  l->gpus = sc->gpus;
  l->tp = c->tp;
  l->cp = c->cp;
  l->pp = c->pp;
  l->vp = c->vp;
  l->mbs = c->mbs;
  l->gbs = sc->gbs;
  l->seq = sc->seq;
  l->first_stage_layers = c->first;
  l->last_stage_layers = c->last;
  job.settings.recompute = (PtsimRecompute)c->recompute;
  l->schedule = (PtsimSchedule)c->schedule;
  if (l->schedule == PTSIM_SCHEDULE_ZBV || l->schedule == PTSIM_SCHEDULE_DUALPIPEV)
    ptsim_sweep_v_split(job.model.num_layers, c->pp, l);
  if (c->split) ptsim_pipeline_layout_set(c->split, l);
  if (c->embedding || c->loss) {
    l->account_embedding = c->embedding;
    l->account_loss = c->loss;
  }
  l->ep = c->ep;
  l->etp = c->etp;
  if ((sc->sweep->stream && sc->sweep->stream->error) || sc->sweep->stopped) return TRIED_INVALID;
  if (++sc->sweep->candidates % PTSIM_SWEEP_PROGRESS_EVERY == 0 && sc->spec->enumerate_progress)
    sc->spec->enumerate_progress(*sc->scenarios_done, sc->scenarios, sc->sweep->valid,
                                 sc->spec->enumerate_progress_data);
  if ((sc->sharding >= 0 &&
       !ptsim_layout_set_sharding(l, ptsim_topology_domain_size(&sc->job.hw), sc->sharding,
                                  sc->sharding == PTSIM_SHARDING_MODE_HSDP ? sc->shard_size : -1,
                                  &error)) ||
      !ptsim_job_validate(&job, &error)) {
    reject(sc->sweep, error->message);
    return TRIED_INVALID;
  }
  /* Choosing mbs itself, the sweep does not evaluate an mbs > 1 that
   * cannot run: it is a rejection, and larger ones are not tried. */
  if (sc->spec->mbs->len == 0 && !may_run(sc, &job)) {
    if (c->mbs > 1) {
      g_autofree char *why =
          g_strdup_printf("--mbs %" G_GINT64_FORMAT
                          ": weights, gradients, optimizer states and saved "
                          "activations alone exceed the GPU's memory (larger mbs not tried)",
                          c->mbs);
      reject(sc->sweep, why);
      return TRIED_WONT_RUN;
    }
    tried = TRIED_WONT_RUN;
  }
  /* a shard keeps its slice of the valid layouts only */
  if (sc->sweep->valid++ < sc->spec->first || sc->sweep->valid > sc->spec->last) return tried;
  g_array_append_val(sc->sweep->jobs, job);
  if (sc->sweep->jobs->len > sc->sweep->hold_max) sc->sweep->stopped = TRUE;
  if (sc->sweep->stream && sc->sweep->jobs->len >= sc->sweep->stream->chunk) flush(sc->sweep);
  if (sc->sweep->early && sc->sweep->jobs->len % CHUNK == 0) early_push(sc->sweep);
  return tried;
}

/* Which split to try is the sweep's choice; whether it splits (every stage
 * into its vp chunks) is the plan's rule, ptsim_plan_split_fits.  In units
 * of vp layers (every stage holds a whole number of them), the most even
 * split is closed-form: the middle stages take u = ceil(units / pp), the
 * two ends the rest r = units - (pp - 2) u, which lies in [2, 2u] whenever
 * any split with ends no heavier than the middle exists, the first end
 * ceil(r / 2) and the last (with the head and the loss) floor(r / 2).  No
 * search: O(1) per (pp, vp), where trying every end size was O(layers). */
gboolean ptsim_sweep_split(gint64 layers, gint64 pp, gint64 vp, gint64 *first, gint64 *last) {
  *first = *last = 0;
  if (pp < 1 || vp < 1 || layers < pp) return FALSE;
  if (layers % pp == 0) return ptsim_plan_split_fits(pp, vp, layers, 0, 0);
  if (layers % vp != 0) return FALSE;
  gint64 units = layers / vp;
  if (pp == 2) { /* two ends: the last (with the head) takes the smaller half */
    if (units < 2) return FALSE;
    *first = (units - units / 2) * vp;
    *last = units / 2 * vp;
    return ptsim_plan_split_fits(pp, vp, layers, *first, *last);
  }
  gint64 middle = (units + pp - 1) / pp, rest = units - (pp - 2) * middle;
  if (rest < 2 || rest > 2 * middle) return FALSE;
  *first = (rest - rest / 2) * vp;
  *last = rest / 2 * vp;
  if (ptsim_plan_split_fits(pp, vp, layers, *first, *last)) return TRUE;
  *first = *last = 0;
  return FALSE;
}

gboolean ptsim_sweep_v_split(gint64 layers, gint64 pp, PtsimLayout *l) {
  gint64 n = 2 * pp, each = pp > 0 ? layers / n : 0, extra = pp > 0 ? layers % n : 0;
  l->vstage_runs = 0;
  memset(l->vstage_run_count, 0, sizeof l->vstage_run_count);
  memset(l->vstage_run_layers, 0, sizeof l->vstage_run_layers);
  if (pp < 1 || each < 1) return FALSE;
  if (extra == 0) return TRUE;
  /* virtual stages in model order; the extra ones contiguous: 1..extra
   * when they fit on stages 1..pp-1, else 0..extra-1 (stage 0 takes one,
   * the rest go to chunk 1 of stages pp-1, pp-2, ...) */
  int32_t r = 0;
  if (extra < pp) {
    l->vstage_run_count[r] = 1;
    l->vstage_run_layers[r++] = (int32_t)each;
  }
  l->vstage_run_count[r] = (int32_t)extra;
  l->vstage_run_layers[r++] = (int32_t)(each + 1);
  l->vstage_run_count[r] = (int32_t)(n - extra - (extra < pp));
  l->vstage_run_layers[r++] = (int32_t)each;
  l->vstage_runs = r;
  return TRUE;
}

gboolean ptsim_sweep_split_accounted(gint64 layers, gint64 mtp_layers, gint64 pp, gint64 vp,
                                     int *embedding, int *loss) {
  /* (embedding, loss side): both first (the vocabulary-sized ends each
   * cost about a layer), then the embedding alone, then the loss alone;
   * the loss side counts the MTP layers that share its stage too. */
  const int tried[3][2] = {{1, 1}, {1, 0}, {0, 1}};
  int64_t stages[PTSIM_MAX_STAGES], chunk;
  *embedding = *loss = 0;
  if (pp < 1 || pp > PTSIM_MAX_STAGES || vp < 1 || mtp_layers < 0) return FALSE;
  for (int k = 0; k < 3; k++) {
    int e = tried[k][0], l = tried[k][1] > 0 ? 1 + (int)mtp_layers : 0;
    if (ptsim_plan_split_accounted(pp, vp, layers, e, l, stages, &chunk) != 0) continue;
    /* every virtual stage but the ends holds a layer; the first one too
     * (an embedding-only first stage is a given layout's choice, 'E|') */
    if (chunk - e < 1) continue;
    *embedding = e;
    *loss = l;
    return TRUE;
  }
  return FALSE;
}

/* The virtual-pipeline sizes to try for pp: the given list, or every vp
 * from 2 to layers/pp that splits every stage (ptsim_sweep_split) or,
 * where none does, whose accounted split does
 * (ptsim_sweep_split_accounted). */
static void vps_for(const Scenario *sc, gint64 pp, GArray *out) {
  g_array_set_size(out, 0);
  if (sc->spec->vps->len > 0) {
    g_array_append_vals(out, sc->spec->vps->data, sc->spec->vps->len);
    return;
  }
  /* O(layers / pp) checks of O(1) each, once per pp and scenario (the
   * accounted splits' vp divide layers + 1 or + 2, not the layers) */
  gint64 layers = sc->job.model.num_layers, first, last;
  int embedding, loss;
  for (gint64 vp = 2; vp <= layers / pp; vp++)
    if (ptsim_sweep_split(layers, pp, vp, &first, &last) ||
        ptsim_sweep_split_accounted(layers, sc->job.model.mtp_num_layers, pp, vp, &embedding,
                                    &loss))
      g_array_append_val(out, vp);
}

/* The context-parallel sizes to try for tp: the given list, or every cp
 * dividing the GPUs left by tp whose 2 x cp chunks split the sequence. */
static void cps_for(const Scenario *sc, gint64 tp, GArray *out) {
  g_array_set_size(out, 0);
  if (sc->spec->cps->len > 0) {
    g_array_append_vals(out, sc->spec->cps->data, sc->spec->cps->len);
    return;
  }
  for (gint64 cp = 1; cp <= sc->gpus / tp; cp++)
    if ((sc->gpus / tp) % cp == 0 && (cp == 1 || sc->seq % (2 * cp) == 0))
      g_array_append_val(out, cp);
}

/* The expert tensor-parallel size a layout gets unless --etp lists them
 * (job_resolve.h), in the scenario's data-parallel mode. */
static gint64 default_etp(const Scenario *sc, gint64 tp, gint64 ep) {
  PtsimLayout l = sc->job.layout;
  l.tp = tp;
  l.ep = ep;
  if (sc->sharding >= 0) /* only whether the mode shards parameters matters here */
    l.sharding = sc->sharding >= PTSIM_SHARDING_MODE_FSDP ? PTSIM_SHARDING_PARAMS
                                                          : PTSIM_SHARDING_NONE;
  return ptsim_layout_default_etp(&l, &sc->job.settings);
}

/* Every (ep, etp) of the layout: dense models have ep 1 (etp unused);
 * an MoE model the given lists, or every ep dividing both its experts and
 * the GPUs a stage's etp x ep x edp fold (the others cannot be valid).
 * Returns the best outcome of them (one that may run, else one valid). */
static int try_layout(Scenario *sc, Candidate *c) {
  const PtsimSweepSpec *spec = sc->spec;
  guint n_etp = spec->etps->len > 0 ? spec->etps->len : 1;
  int best = TRIED_INVALID;
  if (sc->job.model.num_experts <= 0) {
    c->ep = 1;
    c->etp = 0;
    return try_expert_layout(sc, c);
  }
  for (guint e = 0; e < n_etp; e++) {
    gint64 given = spec->etps->len > 0 ? g_array_index(spec->etps, gint64, e) : 0;
    if (spec->eps->len > 0) {
      for (guint k = 0; k < spec->eps->len; k++) {
        c->ep = g_array_index(spec->eps, gint64, k);
        c->etp = given > 0 ? given : default_etp(sc, c->tp, c->ep);
        int tried = try_expert_layout(sc, c);
        best = MAX(best, tried);
      }
      continue;
    }
    for (c->ep = 1; c->ep <= sc->job.model.num_experts; c->ep++) {
      c->etp = given > 0 ? given : default_etp(sc, c->tp, c->ep);
      if (sc->job.model.num_experts % c->ep == 0 && (sc->gpus / c->pp) % (c->etp * c->ep) == 0) {
        int tried = try_expert_layout(sc, c);
        best = MAX(best, tried);
      }
    }
  }
  return best;
}

/* The sweep's R-th recompute and S-th schedule on C; FALSE where the pair
 * repeats another: one stage has no pipeline, so its schedules coincide
 * (1F1B stands for them). */
static gboolean set_variant(const PtsimSweepSpec *spec, Candidate *c, guint r, guint s) {
  c->recompute = g_array_index(spec->recomputes, int, r);
  c->schedule = g_array_index(spec->schedules, int, s);
  if (c->pp == 1 && s > 0) return FALSE;
  if (c->pp == 1) c->schedule = PTSIM_SCHEDULE_1F1B;
  return TRUE;
}

/* Every given pipeline layout with pp x vp stages, vp > 1 under the
 * interleaved schedule, vp 1 under the others but the V-shaped ones (whose
 * chunks are placed otherwise), with every recompute; returns whether one
 * is valid and may run. */
static gboolean try_given_layouts(Scenario *sc, Candidate *c) {
  const PtsimSweepSpec *spec = sc->spec;
  gboolean any = FALSE;
  for (guint k = 0; k < spec->layouts->len; k++) {
    const char *text = g_ptr_array_index(spec->layouts, k);
    PtsimPipelineLayout split;
    g_autoptr(GError) error = NULL;
    gboolean scheduled = FALSE;
    if (sc->layout_stages[k] % c->pp != 0) continue; /* another pp's */
    if (!ptsim_pipeline_layout_parse(text, c->pp, sc->job.model.num_layers,
                                     sc->job.model.mtp_num_layers, &split, &error)) {
      sc->sweep->candidates++;
      reject(sc->sweep, error->message);
      continue;
    }
    c->split = &split;
    c->vp = split.vp;
    c->first = c->last = 0;
    for (guint r = 0; r < spec->recomputes->len; r++)
      for (guint s = 0; s < spec->schedules->len; s++) {
        if (!set_variant(spec, c, r, s)) continue;
        if (c->schedule == PTSIM_SCHEDULE_ZBV || c->schedule == PTSIM_SCHEDULE_DUALPIPEV ||
            (c->schedule == PTSIM_SCHEDULE_INTERLEAVED) != (split.vp > 1))
          continue;
        scheduled = TRUE;
        any |= try_layout(sc, c) == TRIED_MAY_RUN;
      }
    c->split = NULL;
    if (!scheduled) {
      g_autofree char *why = g_strdup_printf(
          "--pipeline-layout: vp %" G_GINT64_FORMAT " at pp %" G_GINT64_FORMAT
          " runs under none of the sweep's schedules (interleaved runs several chunks a "
          "stage on two stages or more; the others, zbv and dualpipev aside, one chunk)",
          split.vp, c->pp);
      sc->sweep->candidates++;
      reject(sc->sweep, why);
    }
  }
  return any;
}

/* Every recompute, schedule and vp of one (tp, cp, pp, mbs); returns
 * whether one of them is valid and may run. */
static gboolean try_variants(Scenario *sc, Candidate *c, const GArray *vps) {
  const PtsimSweepSpec *spec = sc->spec;
  gboolean any = FALSE;
  if (spec->layouts->len > 0) return try_given_layouts(sc, c);
  for (guint r = 0; r < spec->recomputes->len; r++)
    for (guint s = 0; s < spec->schedules->len; s++) {
      if (!set_variant(spec, c, r, s)) continue;
      /* the V-shaped schedules run two chunks per stage (their split:
       * ptsim_sweep_v_split, both ends being on stage 0) */
      if (c->schedule == PTSIM_SCHEDULE_ZBV || c->schedule == PTSIM_SCHEDULE_DUALPIPEV) {
        c->vp = 2;
        c->first = c->last = 0;
        any |= try_layout(sc, c) == TRIED_MAY_RUN;
        continue;
      }
      if (c->schedule != PTSIM_SCHEDULE_INTERLEAVED) {
        c->vp = 1;
        ptsim_sweep_split(sc->job.model.num_layers, c->pp, 1, &c->first, &c->last);
        any |= try_layout(sc, c) == TRIED_MAY_RUN;
        continue;
      }
      for (guint v = 0; v < vps->len; v++) {
        c->vp = g_array_index(vps, gint64, v);
        /* where no first/last split divides by vp, the embedding and the
         * loss counted as layers may (Megatron's
         * --account-for-embedding/loss-in-pipeline-split) */
        if (!ptsim_sweep_split(sc->job.model.num_layers, c->pp, c->vp, &c->first, &c->last))
          ptsim_sweep_split_accounted(sc->job.model.num_layers, sc->job.model.mtp_num_layers, c->pp,
                                      c->vp, &c->embedding, &c->loss);
        any |= try_layout(sc, c) == TRIED_MAY_RUN;
        c->embedding = c->loss = 0;
      }
    }
  return any;
}

gint64 ptsim_sweep_tp_max_default(const PtsimModel *model, const PtsimHardware *hw) {
  gint64 domain = ptsim_topology_domain_size(hw);
  return model->num_attention_heads > 0 && model->num_attention_heads < domain
             ? model->num_attention_heads
             : domain;
}

/* The sizes to try: the given list, or 1..hi.  A given size that does not
 * divide `of` is rejected (counted once per scenario and size); the
 * default's are skipped (they are not combinations anyone asked for). */
static void sizes_for(Scenario *sc, const GArray *given, const char *flag, const char *what,
                      gint64 of, gint64 hi, GArray *out) {
  g_array_set_size(out, 0);
  if (given->len == 0) {
    for (gint64 v = 1; v <= hi && v <= of; v++)
      if (of % v == 0) g_array_append_val(out, v);
    return;
  }
  for (guint i = 0; i < given->len; i++) {
    gint64 v = g_array_index(given, gint64, i);
    if (of % v == 0) {
      g_array_append_val(out, v);
      continue;
    }
    g_autofree char *why = g_strdup_printf("%s %" G_GINT64_FORMAT
                                           " does not divide %s %" G_GINT64_FORMAT,
                                           flag, v, what, of);
    sc->sweep->candidates++;
    reject(sc->sweep, why);
  }
}

static void enumerate_scenario(Scenario *sc) {
  const PtsimSweepSpec *spec = sc->spec;
  sc->layouts_met = 0;
  gint64 tp_max = spec->tp_max > 0 ? spec->tp_max
                                   : ptsim_sweep_tp_max_default(&sc->job.model, &sc->job.hw);
  g_autoptr(GArray) tps = g_array_new(FALSE, FALSE, sizeof(gint64));
  g_autoptr(GArray) pps = g_array_new(FALSE, FALSE, sizeof(gint64));
  g_autoptr(GArray) cps = g_array_new(FALSE, FALSE, sizeof(gint64));
  g_autoptr(GArray) vps = g_array_new(FALSE, FALSE, sizeof(gint64));
  sizes_for(sc, spec->tps, "--tp", "the GPUs", sc->gpus, tp_max, tps);
  for (guint ti = 0; ti < tps->len; ti++) {
    gint64 tp = g_array_index(tps, gint64, ti);
    cps_for(sc, tp, cps);
    for (guint ci = 0; ci < cps->len; ci++) {
      gint64 cp = g_array_index(cps, gint64, ci);
      if ((sc->gpus / tp) % cp) continue;
      gint64 rest = sc->gpus / (tp * cp);
      sizes_for(sc, spec->pps, "--pp", "the GPUs tp x cp leave", rest,
                spec->pp_max > 0 ? MIN(spec->pp_max, sc->job.model.num_layers)
                                 : sc->job.model.num_layers,
                pps);
      for (guint pi = 0; pi < pps->len; pi++) {
        gint64 pp = g_array_index(pps, gint64, pi);
        for (guint k = 0; k < MIN(spec->layouts->len, 64); k++)
          if (sc->layout_stages[k] % pp == 0) sc->layouts_met |= G_GUINT64_CONSTANT(1) << k;
        Candidate c = {tp, cp, pp, 1, 1, 0, 0, 0, 0, 1, 0, NULL, 0, 0};
        vps_for(sc, pp, vps);
        if (spec->mbs->len > 0) {
          for (guint b = 0; b < spec->mbs->len; b++) {
            c.mbs = g_array_index(spec->mbs, gint64, b);
            try_variants(sc, &c, vps);
          }
          continue;
        }
        /* mbs 1, 2, 4, ... while some layout may run (what must be held
         * grows with mbs). */
        for (c.mbs = 1; c.mbs * (rest / pp) <= sc->gbs; c.mbs *= 2)
          if (!try_variants(sc, &c, vps)) break;
      }
    }
  }
  /* a given layout no pp of the scenario divides: one rejection, by reason */
  for (guint k = 0; k < MIN(spec->layouts->len, 64); k++) {
    if (sc->layouts_met & (G_GUINT64_CONSTANT(1) << k)) continue;
    g_autofree char *why =
        g_strdup_printf("--pipeline-layout: %" G_GINT64_FORMAT
                        " stages, a multiple of no pp tried (pp "
                        "divides the GPUs tp x cp leave, up to --pp-max and the layers)",
                        sc->layout_stages[k]);
    sc->sweep->candidates++;
    reject(sc->sweep, why);
  }
}

/* One scenario, and the progress after it. */
static void enumerate_one(Scenario *sc) {
  enumerate_scenario(sc);
  ++*sc->scenarios_done;
  if (sc->spec->enumerate_progress)
    sc->spec->enumerate_progress(*sc->scenarios_done, sc->scenarios, sc->sweep->valid,
                                 sc->spec->enumerate_progress_data);
}

/* Scenarios per (model, hardware, gpus, seq, gbs): one per sharding mode
 * (hsdp one per shard size), or one. */
static guint64 sharding_runs(const PtsimSweepSpec *spec) {
  guint64 n = 0;
  for (guint k = 0; k < spec->shardings->len; k++)
    n += g_array_index(spec->shardings, int, k) == PTSIM_SHARDING_MODE_HSDP &&
                 spec->shard_sizes->len > 0
             ? spec->shard_sizes->len
             : 1;
  return MAX(n, 1);
}

/* The scenario once per sharding mode asked for (hsdp once per shard
 * size), or once with the base's. */
static void enumerate_shardings(Scenario *sc) {
  const PtsimSweepSpec *spec = sc->spec;
  static const gint64 auto_size = 0;
  sc->sharding = -1;
  if (spec->shardings->len == 0) {
    enumerate_one(sc);
    return;
  }
  for (guint k = 0; k < spec->shardings->len; k++) {
    sc->sharding = g_array_index(spec->shardings, int, k);
    gboolean hsdp = sc->sharding == PTSIM_SHARDING_MODE_HSDP;
    guint sizes = hsdp && spec->shard_sizes->len > 0 ? spec->shard_sizes->len : 1;
    for (guint z = 0; z < sizes; z++) {
      sc->shard_size = hsdp && spec->shard_sizes->len > 0
                           ? g_array_index(spec->shard_sizes, gint64, z)
                           : auto_size;
      enumerate_one(sc);
    }
  }
}

/* Enumerates the spec into sweep (flushing chunks when streaming). */
static gboolean enumerate_into(const PtsimSweepSpec *spec, PtsimSweep *sweep, GError **error) {
  guint64 done = 0;
  guint64 scenarios = (guint64)spec->models->len * spec->hws->len * spec->gpus->len *
                      spec->seqs->len * spec->gbs->len * sharding_runs(spec);
  for (guint mi = 0; mi < spec->models->len; mi++) {
    Scenario sc;
    memset(&sc, 0, sizeof sc);
    sc.spec = spec;
    sc.sweep = sweep;
    sc.scenarios_done = &done;
    sc.scenarios = scenarios;
    sc.job = spec->base;
    /* owned here, lent to sc (clang counts `x = y = ...` as x unused) */
    g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
    g_autofree PtsimMemoryEstimate *memory = g_new0(PtsimMemoryEstimate, 1);
    sc.plan = plan;
    sc.memory = memory;
    g_autofree gint64 *layout_stages = g_new0(gint64, spec->layouts->len + 1);
    sc.layout_stages = layout_stages;
    if (!ptsim_model_load(g_ptr_array_index(spec->models, mi), &sc.job.model, error)) return FALSE;
    if (spec->model_settings &&
        !spec->model_settings(&sc.job.model, spec->model_settings_data, error))
      return FALSE;
    /* a given pipeline layout must fit every model (pp = its stages reads it) */
    for (guint k = 0; k < spec->layouts->len; k++) {
      const char *text = g_ptr_array_index(spec->layouts, k);
      PtsimPipelineLayout split;
      gint64 stages = layout_stages[k] = ptsim_pipeline_layout_stages(text, error);
      if (stages < 0 || !ptsim_pipeline_layout_parse(text, stages, sc.job.model.num_layers,
                                                     sc.job.model.mtp_num_layers, &split, error)) {
        g_prefix_error(error, "--pipeline-layout, model %s: ", sc.job.model.name);
        return FALSE;
      }
    }
    for (guint hi = 0; hi < spec->hws->len; hi++) {
      if (!ptsim_hardware_load(g_ptr_array_index(spec->hws, hi), &sc.job.hw, error) ||
          !ptsim_workspaces_resolve(sc.job.hw.name, NULL, &sc.job.settings, error))
        return FALSE;
      if (spec->base.settings.cublas_workspace_bytes > 0.0) /* --cublas-workspace-config */
        sc.job.settings.cublas_workspace_bytes = spec->base.settings.cublas_workspace_bytes;
      for (guint g = 0; g < spec->gpus->len; g++)
        for (guint s = 0; s < spec->seqs->len; s++)
          for (guint b = 0; b < spec->gbs->len; b++) {
            sc.gpus = g_array_index(spec->gpus, gint64, g);
            sc.seq = g_array_index(spec->seqs, gint64, s);
            sc.gbs = g_array_index(spec->gbs, gint64, b);
            enumerate_shardings(&sc);
          }
    }
  }
  return TRUE;
}

PtsimSweep *ptsim_sweep_enumerate(const PtsimSweepSpec *spec, GError **error) {
  return ptsim_sweep_enumerate_at_most(spec, G_MAXUINT64, error);
}

PtsimSweep *ptsim_sweep_enumerate_at_most(const PtsimSweepSpec *spec, guint64 max, GError **error) {
  g_autoptr(PtsimSweep) sweep = g_new0(PtsimSweep, 1);
  sweep->hold_max = max;
  /* Evaluated while enumerating, the jobs must stay where they are: their
   * array is reserved for all it may hold (enumeration stops past max),
   * which costs address space only (pages not written are not taken). */
  gboolean early = spec->evaluate_threads > 1 && max < EARLY_HOLD_MAX;
  sweep->jobs = early ? g_array_sized_new(FALSE, FALSE, sizeof(PtsimJob), (guint)max + 1)
                      : g_array_new(FALSE, FALSE, sizeof(PtsimJob));
  sweep->results = g_array_new(FALSE, TRUE, sizeof(PtsimBatchResult));
  sweep->rejected = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  sweep->mc = spec->mc;
  sweep->allocator = spec->allocator;
  sweep->first_index = spec->first;
  if (early) early_open(sweep, spec->evaluate_threads);
  if (!enumerate_into(spec, sweep, error)) return NULL;
  return g_steal_pointer(&sweep);
}

/* ---- evaluation ---- */

typedef struct {
  PtsimSweep *sweep;
  GMutex lock;
  GCond progressed; /* signalled when the last layout is done */
  guint done;       /* layouts evaluated (under lock) */
} Pool;

/* ---- the runs verdict ---- */

/* What costs nothing: the floor of what the emulation must hold. */
static void settle_floor(const PtsimJob *job, PtsimBatchResult *r) {
  if (r->runs_from != PTSIM_RUNS_FROM_NONE) return;
  if (r->held_floor_bytes + ptsim_lifetimes_outside_bytes(job) > job->hw.memory_bytes) {
    r->runs = 0;
    r->runs_from = PTSIM_RUNS_FROM_FLOOR;
  }
}

/* After evaluation: the floor, or the emulation of every layout (--allocator). */
static void settle_range(const PtsimSweep *sweep, const PtsimJob *jobs, PtsimBatchResult *results,
                         guint n) {
  for (guint i = 0; i < n; i++) {
    if (sweep->allocator) ptsim_sweep_allocator_one(&jobs[i], sweep->mc.no_shortcut, &results[i]);
    settle_floor(&jobs[i], &results[i]);
  }
}

static void settle_chunk(PtsimSweep *sweep, guint first, guint last) {
  settle_range(sweep, &g_array_index(sweep->jobs, PtsimJob, first),
               &g_array_index(sweep->results, PtsimBatchResult, first), last - first);
}

/* Evaluates and settles jobs[0..n), whose sweep-wide index starts at
 * `index`, into results (one work item of a pool). */
static void evaluate_range(const PtsimSweep *sweep, const PtsimJob *jobs, PtsimBatchResult *results,
                           guint n, guint64 index) {
  int64_t bytes = 0;
  for (guint i = 0; i < n; i++) {
    int64_t b = ptsim_batch_scratch_bytes_mc(&jobs[i], &sweep->mc);
    if (b > bytes) bytes = b;
  }
  void *scratch = g_malloc(bytes);
  int32_t tables = 0;
  const PtsimKernelTable *table = ptsim_kernel_registry_tables(&tables);
  void *cache = ptsim_batch_cpu_thread_cache(); /* the engine's recorded orders */
  for (guint i = 0; i < n; i++)
    ptsim_batch_evaluate_cached(&jobs[i], &sweep->mc, table, tables, index + i, scratch, bytes,
                                cache, &results[i]);
  g_free(scratch);
  settle_range(sweep, jobs, results, n);
}

static void evaluate_chunk(gpointer data, gpointer user_data) {
  Pool *pool = user_data;
  guint first = GPOINTER_TO_UINT(data) - 1;
  guint last = MIN(first + CHUNK, pool->sweep->jobs->len);
  evaluate_range(pool->sweep, &g_array_index(pool->sweep->jobs, PtsimJob, first),
                 &g_array_index(pool->sweep->results, PtsimBatchResult, first), last - first,
                 pool->sweep->first_index + first);
  g_mutex_lock(&pool->lock);
  pool->done += last - first;
  if (pool->done == pool->sweep->jobs->len) g_cond_signal(&pool->progressed);
  g_mutex_unlock(&pool->lock);
}

/* ---- evaluation while enumerating ---- */

/* A chunk of layouts handed to the early pool: its jobs in the sweep's
 * array (reserved: it does not move while enumeration appends), its
 * results (the results array is sized, and cleared, when evaluated). */
typedef struct {
  guint first, n;
  const PtsimJob *jobs;
  PtsimBatchResult *results;
} EarlyChunk;

struct PtsimSweepEarly {
  PtsimSweep *sweep;
  GThreadPool *pool;
  gconstpointer base; /* the jobs' array's data: reserved, it never moves */
  GPtrArray *chunks;  /* EarlyChunk, in enumeration order (owned) */
  guint pushed;       /* layouts handed on */
  GMutex lock;
  GCond progressed;
  guint done; /* layouts evaluated (under lock) */
};

static void early_chunk_free(gpointer data) {
  EarlyChunk *c = data;
  g_free(c->results);
  g_free(c);
}

static void early_evaluate(gpointer data, gpointer user_data) {
  struct PtsimSweepEarly *early = user_data;
  EarlyChunk *c = data;
  evaluate_range(early->sweep, c->jobs, c->results, c->n, early->sweep->first_index + c->first);
  g_mutex_lock(&early->lock);
  early->done += c->n;
  g_cond_signal(&early->progressed);
  g_mutex_unlock(&early->lock);
}

/* While enumeration runs on the caller's thread, one fewer worker. */
static void early_open(PtsimSweep *sweep, guint threads) {
  struct PtsimSweepEarly *early = g_new0(struct PtsimSweepEarly, 1);
  early->sweep = sweep;
  early->base = sweep->jobs->data;
  early->chunks = g_ptr_array_new_with_free_func(early_chunk_free);
  g_mutex_init(&early->lock);
  g_cond_init(&early->progressed);
  early->pool = g_thread_pool_new(early_evaluate, early, (gint)MAX(threads - 1, 1), FALSE, NULL);
  if (!early->pool) {
    early_free(early);
    return;
  }
  sweep->early = early;
}

/* Hands the jobs enumerated since the last chunk on. */
static void early_push(PtsimSweep *sweep) {
  struct PtsimSweepEarly *early = sweep->early;
  if (sweep->jobs->len == early->pushed) return;
  /* at most max + 1 jobs are appended to an array reserved for them */
  g_assert(sweep->jobs->data == early->base);
  EarlyChunk *c = g_new(EarlyChunk, 1);
  c->first = early->pushed;
  c->n = sweep->jobs->len - early->pushed;
  c->jobs = &g_array_index(sweep->jobs, PtsimJob, c->first);
  c->results = g_new0(PtsimBatchResult, c->n);
  early->pushed = sweep->jobs->len;
  g_ptr_array_add(early->chunks, c);
  g_thread_pool_push(early->pool, c, NULL);
}

static void early_free(struct PtsimSweepEarly *early) {
  if (early->pool) g_thread_pool_free(early->pool, TRUE, TRUE); /* what waits is dropped */
  g_ptr_array_unref(early->chunks);
  g_mutex_clear(&early->lock);
  g_cond_clear(&early->progressed);
  g_free(early);
}

/* The rest of the chunks, every thread, and the results in place. */
static void early_finish(PtsimSweep *sweep, guint threads, PtsimSweepProgress progress,
                         gpointer user_data) {
  struct PtsimSweepEarly *early = sweep->early;
  guint n = sweep->jobs->len;
  early_push(sweep);
  g_thread_pool_set_max_threads(early->pool, (gint)threads, NULL);
  g_mutex_lock(&early->lock);
  while (early->done < n) {
    guint done = early->done;
    g_mutex_unlock(&early->lock);
    if (progress) progress(done, n, user_data);
    g_mutex_lock(&early->lock);
    if (early->done < n)
      g_cond_wait_until(&early->progressed, &early->lock,
                        g_get_monotonic_time() + 50 * G_TIME_SPAN_MILLISECOND);
  }
  g_mutex_unlock(&early->lock);
  for (guint k = 0; k < early->chunks->len; k++) {
    const EarlyChunk *c = g_ptr_array_index(early->chunks, k);
    memcpy(&g_array_index(sweep->results, PtsimBatchResult, c->first), c->results,
           (gsize)c->n * sizeof *c->results);
  }
  g_clear_pointer(&sweep->early, early_free);
}

static gboolean evaluate_cpu(PtsimSweep *sweep, guint threads, PtsimSweepProgress progress,
                             gpointer user_data, GError **error) {
  Pool pool;
  pool.sweep = sweep;
  pool.done = 0;
  g_mutex_init(&pool.lock);
  g_cond_init(&pool.progressed);
  if (threads == 0) threads = g_get_num_processors();
  /* An exclusive pool starts every thread at once: no more than the work items. */
  guint items = (sweep->jobs->len + CHUNK - 1) / CHUNK;
  if (threads > items) threads = MAX(items, 1);
  g_free(sweep->device_used);
  sweep->device_used = g_strdup_printf("cpu (%u thread%s)", threads, threads == 1 ? "" : "s");
  if (sweep->early) {
    early_finish(sweep, threads, progress, user_data);
    g_mutex_clear(&pool.lock);
    g_cond_clear(&pool.progressed);
    if (progress) progress(sweep->jobs->len, sweep->jobs->len, user_data);
    return TRUE;
  }
  GThreadPool *workers = g_thread_pool_new(evaluate_chunk, &pool, (gint)threads, TRUE, error);
  if (!workers) {
    g_mutex_clear(&pool.lock);
    g_cond_clear(&pool.progressed);
    return FALSE;
  }
  for (guint first = 0; first < sweep->jobs->len; first += CHUNK)
    g_thread_pool_push(workers, GUINT_TO_POINTER(first + 1), NULL);
  /* Progress every 50 ms, and back the moment the last layout is done (a
   * plain 50 ms sleep wasted 25 ms a sweep on average, 5% of a 48k-layout
   * sweep). */
  g_mutex_lock(&pool.lock);
  while (pool.done < sweep->jobs->len) {
    guint done = pool.done;
    g_mutex_unlock(&pool.lock);
    if (progress) progress(done, sweep->jobs->len, user_data);
    g_mutex_lock(&pool.lock);
    if (pool.done < sweep->jobs->len)
      g_cond_wait_until(&pool.progressed, &pool.lock,
                        g_get_monotonic_time() + 50 * G_TIME_SPAN_MILLISECOND);
  }
  g_mutex_unlock(&pool.lock);
  g_thread_pool_free(workers, FALSE, TRUE);
  g_mutex_clear(&pool.lock);
  g_cond_clear(&pool.progressed);
  if (progress) progress(sweep->jobs->len, sweep->jobs->len, user_data);
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
    settle_chunk(sweep, first, first + n); /* on the host */
    if (progress) progress(first + n, sweep->jobs->len, user_data);
  }
  g_free(sweep->device_used);
  sweep->device_used = g_strdup_printf("gpu (%s)", info->name);
  return TRUE;
}

gboolean ptsim_sweep_evaluate(PtsimSweep *sweep, PtsimDevice device, guint threads,
                              PtsimSweepProgress progress, gpointer user_data, GError **error) {
  g_array_set_size(sweep->results, sweep->jobs->len);
  if (device == PTSIM_DEVICE_NONE) {
    g_clear_pointer(&sweep->early, early_free);
    memset(sweep->results->data, 0, sizeof(PtsimBatchResult) * sweep->results->len);
    return TRUE;
  }
  if (device != PTSIM_DEVICE_CPU) {
    PtsimGpuInfo info;
    g_autoptr(GError) gpu_error = NULL;
    if (ptsim_gpu_query(&info, &gpu_error)) {
      g_clear_pointer(&sweep->early, early_free); /* the device evaluates all */
      return evaluate_gpu(sweep, &info, progress, user_data, error);
    }
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
  if (st->fn &&
      ptsim_sweep_evaluate(sweep, st->device, st->threads, chunk_progress, &cp, &st->error))
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
  sweep->first_index = spec->first;
  sweep->hold_max = G_MAXUINT64;
  if (!enumerate_into(spec, sweep, error)) return NULL;
  flush(sweep);
  if (sweep->stream->error) {
    g_propagate_error(error, g_steal_pointer(&sweep->stream->error));
    return NULL;
  }
  return g_steal_pointer(&sweep);
}

guint64 ptsim_sweep_count(const PtsimSweepSpec *spec, GError **error) {
  g_autoptr(PtsimSweep)
      sweep = ptsim_sweep_stream(spec, PTSIM_DEVICE_CPU, 1, 4096, NULL, NULL, NULL, NULL, error);
  return sweep ? sweep->valid : G_MAXUINT64;
}
