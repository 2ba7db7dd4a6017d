/* sweep.h — every valid layout of one or more scenarios, evaluated at once.
 *
 * A scenario is (model, hardware, gpus, seq, gbs); the sweep enumerates, for
 * each (and each data-parallel sharding mode asked for), every tp (dividing heads and query groups,
 * up to the NVLink domain unless tp_max says otherwise), cp, pp (with Megatron's uneven first/last
 * stages when pp does not divide the layers: ptsim_sweep_split), mbs,
 * recompute, schedule (with its vp values; the embedding and the loss
 * counted as layers where no first/last split divides by vp:
 * ptsim_sweep_split_accounted), and for an MoE model ep and
 * etp, and keeps those ptsim_job_validate() accepts.  What experts use is
 * in the defaults: every vp that splits every stage, every cp the sequence
 * allows, mbs doubling while some layout may still run, every ep the
 * experts and the GPUs allow.  Rejected combinations are counted by reason, never silently
 * dropped.  Evaluation runs ptsim_batch_evaluate_one (the same core the GPU
 * kernel runs) on a pool of CPU threads, or on the GPU in chunks.
 *
 * Two modes: in memory (ptsim_sweep_enumerate + ptsim_sweep_evaluate:
 * every job and result kept, for ranking and figures) and streamed
 * (ptsim_sweep_stream: chunks evaluated and handed on, nothing kept).
 *
 * Shell module.  Not here: ranking and printing (sweep_cmd.c). */
#ifndef PTSIM_SWEEP_H
#define PTSIM_SWEEP_H

#include <glib.h>
#include "batch.h"
#include "job.h"

/* NONE evaluates nothing (results stay zero): for callers that fill the
 * results themselves, as merging shards does. */
typedef enum {
  PTSIM_DEVICE_AUTO,
  PTSIM_DEVICE_CPU,
  PTSIM_DEVICE_GPU,
  PTSIM_DEVICE_NONE
} PtsimDevice;

typedef struct {
  GPtrArray *models;  /* (element-type utf8) names or .ini paths */
  GPtrArray *hws;     /* (element-type utf8) */
  GArray *gpus;       /* gint64 */
  GArray *seqs;       /* gint64 */
  GArray *gbs;        /* gint64 */
  GArray *mbs;        /* gint64; empty (default): 1, 2, 4, ... while some layout's held
                       * floor (memory.h) plus context and NCCL fits the GPU; an
                       * mbs > 1 that does not is rejected, not evaluated */
  GArray *cps;        /* gint64; empty (default): every cp dividing gpus/tp with
                       * seq % (2 cp) == 0 */
  GArray *vps;        /* gint64 for the interleaved schedule; empty (default): every
                       * vp from 2 to layers/pp that splits every stage */
  GArray *recomputes; /* int PtsimRecompute; default none, selective, full */
  GArray *schedules;  /* int PtsimSchedule; default 1f1b, interleaved, zb-h1 */
  /* int PtsimShardingMode (job_validate.h); empty (default): the base's.
   * hsdp is tried with each of shard_sizes (gint64 ranks of a shard group;
   * empty: one NVLink domain / tp). */
  GArray *shardings;
  GArray *shard_sizes;
  /* Expert parallelism of mixture-of-experts models (dense models: ep 1).
   * eps empty: every ep dividing both num_experts and gpus / (etp pp);
   * etps empty: etp = tp (Megatron's default). */
  GArray *eps;  /* gint64 */
  GArray *etps; /* gint64 */
  /* tp and pp to try; empty (default): every tp dividing the GPUs up to
   * tp_max, every pp dividing the GPUs tp x cp leave up to pp_max.  A
   * given size that does not divide them is a counted rejection. */
  GArray *tps, *pps; /* gint64 */
  /* (element-type utf8) Megatron-LM pipeline layouts (pipeline_layout.h);
   * empty (default): the sweep's splits (ptsim_sweep_split).  Given, only
   * theirs, each for every pp dividing its stage count (vp = stages / pp;
   * vp > 1 with the interleaved schedule, 1 with the others, never the
   * V-shaped ones); a layout that does not fit a model's layers is an
   * error. */
  GPtrArray *layouts;
  gint64 tp_max; /* 0: the NVLink domain (ptsim_sweep_tp_max_default) */
  gint64 pp_max; /* 0: no limit */
  /* Every layout's job starts from this one: the layout's fields the sweep
   * does not enumerate (sequence parallelism, the distributed optimizer and
   * its instances, the sharding mode unless shardings says, the embedding
   * and loss counted in the split), the run's
   * settings (precision, overlap, attention, memory threshold, ...; not
   * recompute, which it enumerates) and the source.  Its model and hardware
   * are unused (each scenario's), its dimensions overwritten (each
   * candidate's).  ptsim_job_init_defaults() unless the caller says
   * otherwise (ptsim_job_build_sweep_base). */
  PtsimJob base;
  /* Applied to every model once loaded (model-shape settings); may be NULL. */
  gboolean (*model_settings)(PtsimModel *model, gpointer data, GError **error);
  gpointer model_settings_data;
  PtsimMonteCarlo mc; /* samples 0: deterministic */
  gboolean allocator; /* replay every layout through the allocator emulation (CPU), not
                       * only the fastest that may run (ptsim_sweep_settle_top) */
  /* Only the valid layouts with index in [first, last) (enumeration order,
   * 0-based) are kept and evaluated — one shard of a sweep split over
   * machines; the counts (candidates, valid, rejected) stay the whole
   * sweep's.  Default: all. */
  guint64 first, last;
  /* Enumeration progress (NULL: none): called after each scenario (model,
   * hardware, gpus, seq, gbs, sharding) and every PTSIM_SWEEP_PROGRESS_EVERY
   * combinations within one, with the scenarios done of all and the valid
   * layouts so far, so that a caller can say how far it is and estimate the
   * total before any layout is evaluated. */
  void (*enumerate_progress)(guint64 scenarios_done, guint64 scenarios, guint64 valid,
                             gpointer data);
  gpointer enumerate_progress_data;
  /* > 1: a held enumeration (ptsim_sweep_enumerate_at_most, with a max of
   * at most 1,048,576 layouts: the jobs' array is reserved) hands every
   * chunk of layouts to this many CPU threads as it is found (one fewer
   * while enumeration runs on the caller's), and ptsim_sweep_evaluate on
   * the CPU waits for them and does the rest: the same results, the
   * evaluation no longer waiting for the whole enumeration.  0 or 1
   * (default): evaluation starts when ptsim_sweep_evaluate is called. */
  guint evaluate_threads;
} PtsimSweepSpec;

#define PTSIM_SWEEP_PROGRESS_EVERY 16384

/* Spec with the defaults above and empty scenario lists.  (transfer full) */
PtsimSweepSpec *ptsim_sweep_spec_new(void);
void ptsim_sweep_spec_free(PtsimSweepSpec *spec);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PtsimSweepSpec, ptsim_sweep_spec_free)

typedef struct {
  GArray *jobs;         /* PtsimJob, the valid layouts */
  GArray *results;      /* PtsimBatchResult, same order (after evaluation) */
  GHashTable *rejected; /* reason (utf8) -> count (GUINT_TO_POINTER) */
  guint64 candidates;   /* combinations tried */
  char *device_used;    /* "cpu (N threads)" or the GPU's name */
  PtsimMonteCarlo mc;   /* copied from the spec */
  gboolean allocator;   /* copied from the spec */
  guint64 first_index;  /* sweep-wide index of jobs[0] (streaming: the chunk's) */
  guint64 valid;        /* valid layouts so far (all chunks) */
  guint64 hold_max;     /* enumeration stops once more jobs than this are held */
  gboolean stopped;     /* it did: jobs and counts are incomplete */
  /* Streaming state (ptsim_sweep_stream); unused otherwise. */
  struct PtsimSweepStream *stream;
  /* Chunks evaluated while enumerating (spec->evaluate_threads); NULL: none. */
  struct PtsimSweepEarly *early;
} PtsimSweep;

void ptsim_sweep_free(PtsimSweep *sweep);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PtsimSweep, ptsim_sweep_free)

/* The largest tp a sweep tries unless told: the NVLink domain
 * (ptsim_topology_domain_size: 8 on HGX hosts, 72 on a GB200 NVL72 rack;
 * a TP group leaving it would run its per-layer collectives over the NICs),
 * at most the model's attention heads (a TP rank holds at least one). */
gint64 ptsim_sweep_tp_max_default(const PtsimModel *model, const PtsimHardware *hw);

/* The stage split the sweep gives pp stages with vp virtual stages each:
 * even when pp divides the layers (and vp the layers per stage); else
 * Megatron's --decoder-first/last-pipeline-num-layers with equal ends no
 * heavier than the middle stages, the most even such split whose every
 * stage divides by vp (pp 2: the first takes the extra layer).  first =
 * last = 0 for an even split.  FALSE when there is none. */
gboolean ptsim_sweep_split(gint64 layers, gint64 pp, gint64 vp, gint64 *first, gint64 *last);

/* The split the sweep gives pp x vp virtual stages where no first/last
 * split divides by vp (ptsim_sweep_split; vp then divides the layers):
 * Megatron's --account-for-embedding/loss-in-pipeline-split, the embedding
 * and the loss each counted as a layer so that layers + 2 (or + 1, the
 * embedding or else the loss alone) splits evenly into pp x vp chunks, the
 * first chunk one layer short of the others for the embedding, the last
 * one short for the loss and one more per MTP layer on its stage (the
 * flag counts the loss alone; with MTP layers the split is a
 * --pipeline-model-parallel-layout string's, as DeepSeek-V3's
 * "Et|(tt|)*30mL" on pp 8, vp 4: 61 + 1 + 2 = 64 = 32 x 2).
 * Every chunk but the last holds a layer.  *embedding and *loss: the slots
 * (job.h account_embedding, account_loss); FALSE when none splits. */
gboolean ptsim_sweep_split_accounted(gint64 layers, gint64 mtp_layers, gint64 pp, gint64 vp,
                                     int *embedding, int *loss);

/* The split the sweep gives a V-shaped schedule (zbv, dualpipev: 2 pp
 * virtual stages, stage s holding virtual stages s and 2pp-1-s): even when
 * 2 pp divides the layers (runs 0); else the most even one, as runs of
 * equal virtual stages (job.h vstage_runs): every virtual stage
 * e = floor(layers / 2pp) and r = layers % 2pp of them one more, so that
 * no stage holds more than ceil(layers / pp).  The V puts virtual stages
 * 0..pp-1 on stages 0..pp-1 (chunk 0), then pp.. on stages pp-1, pp-2, ..
 * (chunk 1): with r < pp the extra layers go to virtual stages 1..r, one
 * per stage on stages 1..r, sparing stage 0 (the embedding, the output
 * layer and the loss); else to 0..r-1, one per stage and a second on
 * stages pp-1 down.  FALSE when the layers are fewer than 2 pp. */
gboolean ptsim_sweep_v_split(gint64 layers, gint64 pp, PtsimLayout *l);

/* Enumerates the spec.  Fails only when a model or profile cannot be loaded
 * (PTSIM_CONFIG_ERROR).  (transfer full) */
PtsimSweep *ptsim_sweep_enumerate(const PtsimSweepSpec *spec, GError **error);

/* The same, except that it stops once more than `max` layouts would be
 * held, returning a sweep with `stopped` set and its jobs and counts
 * incomplete: whether a sweep can be held, without a count pass first. */
PtsimSweep *ptsim_sweep_enumerate_at_most(const PtsimSweepSpec *spec, guint64 max, GError **error);

/* Progress callback: done of total layouts evaluated. */
typedef void (*PtsimSweepProgress)(guint64 done, guint64 total, gpointer user_data);

/* Evaluates every job.  threads 0 = all cores.  device AUTO uses the GPU when
 * one is usable, else the CPU; GPU when none is usable is an error
 * (PTSIM_CUDA_ERROR). */
gboolean ptsim_sweep_evaluate(PtsimSweep *sweep, PtsimDevice device, guint threads,
                              PtsimSweepProgress progress, gpointer user_data, GError **error);

/* Receives one evaluated chunk: jobs[i] and results[i] are layout
 * first_index + i of the sweep.  Return FALSE (with error set) to stop. */
typedef gboolean (*PtsimSweepChunkFn)(const PtsimJob *jobs, const PtsimBatchResult *results,
                                      guint n, guint64 first_index, gpointer user_data,
                                      GError **error);

/* Enumerates and evaluates the spec in chunks of `chunk` layouts, handing
 * each evaluated chunk to fn and keeping none, so memory stays bounded
 * however many layouts there are.  The returned sweep carries the counts
 * (candidates, valid, rejected reasons, device) and empty job/result
 * arrays.  Fails when a model or profile cannot be loaded, the device
 * fails, or fn says stop.  (transfer full) */
PtsimSweep *ptsim_sweep_stream(const PtsimSweepSpec *spec, PtsimDevice device, guint threads,
                               guint chunk, PtsimSweepChunkFn fn, gpointer user_data,
                               PtsimSweepProgress progress, gpointer progress_data, GError **error);

/* How many valid layouts the spec has (enumeration and validation only,
 * bounded memory).  G_MAXUINT64 when a model or profile cannot be loaded
 * (the error is set). */
guint64 ptsim_sweep_count(const PtsimSweepSpec *spec, GError **error);

/* ---- the `runs` verdict (batch.h's runs, runs_from) ----
 *
 * Evaluation settles what costs nothing: within the 80% rule a layout
 * runs; when what the allocator emulation must hold (held_floor_bytes)
 * plus the context and NCCL buffers exceeds the GPU, it does not.  The
 * rest is in doubt until the emulation runs, which costs milliseconds per
 * layout, so it runs only where the answer changes the ranking: on the
 * fastest layouts that may run (ptsim_sweep_settle_top). */

/* The emulation (both phases, PyTorch's defaults) of one layout into its
 * result: alloc_device_peak_bytes, alloc_oom, runs.  A pure function of
 * the job, safe to run on many threads; a layout that cannot be
 * scheduled is left as it is.  every_item: replay every schedule item
 * (`--no-shortcut`; the same result, lifetimes.h). */
void ptsim_sweep_allocator_one(const PtsimJob *job, gboolean every_item, PtsimBatchResult *r);

/* ptsim_sweep_allocator_one on results[idx[k]] for k < n, on `threads`
 * CPU threads (0: all cores), one pipeline stage per work item. */
void ptsim_sweep_run_allocator(const PtsimJob *jobs, PtsimBatchResult *results, const guint *idx,
                               guint n, guint threads, gboolean every_item);

/* Runs the emulation until the `top` fastest layouts that may run (by
 * ptsim_sweep_rank_key, ties by index) are all settled by it.  Returns how
 * many layouts it emulated. */
guint ptsim_sweep_settle_top(const PtsimJob *jobs, PtsimBatchResult *results, guint n, guint top,
                             guint threads, gboolean every_item);

/* The best layout that runs of each of N_GROUPS groups into best[g]
 * (G_MAXUINT: none runs): members[g] are the group's layouts that may run,
 * ranked; each group's walk emulates its candidates in doubt in that order
 * until one runs, all groups' walks as one stream of work on `threads`
 * (no rounds: a group goes on the moment its verdict comes).  The layouts
 * emulated do not depend on the threads.  Returns how many it emulated. */
guint ptsim_sweep_settle_groups(const PtsimJob *jobs, PtsimBatchResult *results,
                                GArray *const *members, guint n_groups, guint *best, guint threads,
                                gboolean every_item);

/* The ranking: class first (0 runs, 1 not settled, 2 does not run,
 * 3 could not be scheduled), then tokens/s per GPU (comparable across GPU
 * counts), higher first. */
int ptsim_sweep_rank_class(const PtsimBatchResult *r);
gdouble ptsim_sweep_rank_key(const PtsimJob *job, const PtsimBatchResult *r);

/* Sorts idx[0..n) (indices into jobs and results) by the ranking: by class
 * first when by_class, then by rank key, higher first, ties by index.  The
 * keys are read once per layout, not per comparison (a job is a large
 * record: the comparisons of a sort over the jobs missed the cache). */
void ptsim_sweep_sort_ranked(const PtsimJob *jobs, const PtsimBatchResult *results, guint *idx,
                             guint n, gboolean by_class);

#endif /* PTSIM_SWEEP_H */
