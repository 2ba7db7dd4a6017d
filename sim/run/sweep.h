/* sweep.h — every valid layout of one or more scenarios, evaluated at once.
 *
 * A scenario is (model, hardware, gpus, seq, gbs); the sweep enumerates, for
 * each, every tp (dividing heads and query groups, up to the node size
 * unless tp_max says more), cp, pp (dividing the layers), mbs, recompute,
 * schedule (with its vp values), and keeps those ptsim_job_validate()
 * accepts.  Rejected combinations are counted by reason, never silently
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

typedef enum { PTSIM_DEVICE_AUTO, PTSIM_DEVICE_CPU, PTSIM_DEVICE_GPU } PtsimDevice;

typedef struct {
  GPtrArray *models;      /* (element-type utf8) names or .ini paths */
  GPtrArray *hws;         /* (element-type utf8) */
  GArray *gpus;           /* gint64 */
  GArray *seqs;           /* gint64 */
  GArray *gbs;            /* gint64 */
  GArray *mbs;            /* gint64; default 1, 2, 4, 8 */
  GArray *cps;            /* gint64; default 1, 2, 4, 8 */
  GArray *vps;            /* gint64 for the interleaved schedule; default 2, 4 */
  GArray *recomputes;     /* int PtsimRecompute; default none, selective, full */
  GArray *schedules;      /* int PtsimSchedule; default 1f1b, interleaved, zb-h1 */
  gint64 tp_max;          /* 0: the node size */
  gint64 pp_max;          /* 0: no limit */
  /* Every layout starts from this one: the job's settings that are not
   * swept (precision, overlap, attention, memory threshold, ...);
   * ptsim_layout_init_defaults() unless the caller says otherwise. */
  PtsimLayout base;
  /* Applied to every model once loaded (model-shape settings); may be NULL. */
  gboolean (*model_settings)(PtsimModel *model, gpointer data, GError **error);
  gpointer model_settings_data;
  PtsimMonteCarlo mc;     /* samples 0: deterministic */
  gboolean allocator;     /* also replay every layout through the allocator emulation (CPU) */
} PtsimSweepSpec;

/* Spec with the defaults above and empty scenario lists.  (transfer full) */
PtsimSweepSpec *ptsim_sweep_spec_new(void);
void ptsim_sweep_spec_free(PtsimSweepSpec *spec);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PtsimSweepSpec, ptsim_sweep_spec_free)

typedef struct {
  GArray *jobs;           /* PtsimJob, the valid layouts */
  GArray *results;        /* PtsimBatchResult, same order (after evaluation) */
  GHashTable *rejected;   /* reason (utf8) -> count (GUINT_TO_POINTER) */
  guint64 candidates;     /* combinations tried */
  char *device_used;      /* "cpu (N threads)" or the GPU's name */
  PtsimMonteCarlo mc;     /* copied from the spec */
  gboolean allocator;     /* copied from the spec */
  guint64 first_index;    /* sweep-wide index of jobs[0] (streaming: the chunk's) */
  guint64 valid;          /* valid layouts so far (all chunks) */
  /* Streaming state (ptsim_sweep_stream); unused otherwise. */
  struct PtsimSweepStream *stream;
} PtsimSweep;

void ptsim_sweep_free(PtsimSweep *sweep);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PtsimSweep, ptsim_sweep_free)

/* Enumerates the spec.  Fails only when a model or profile cannot be loaded
 * (PTSIM_CONFIG_ERROR).  (transfer full) */
PtsimSweep *ptsim_sweep_enumerate(const PtsimSweepSpec *spec, GError **error);

/* Progress callback: done of total layouts evaluated. */
typedef void (*PtsimSweepProgress)(guint64 done, guint64 total, gpointer user_data);

/* Evaluates every job.  threads 0 = all cores.  device AUTO uses the GPU when
 * one is usable, else the CPU; GPU when none is usable is an error
 * (PTSIM_CUDA_ERROR). */
gboolean ptsim_sweep_evaluate(PtsimSweep *sweep, PtsimDevice device, guint threads,
                              PtsimSweepProgress progress, gpointer user_data,
                              GError **error);

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
                               PtsimSweepProgress progress, gpointer progress_data,
                               GError **error);

/* How many valid layouts the spec has (enumeration and validation only,
 * bounded memory).  G_MAXUINT64 when a model or profile cannot be loaded
 * (the error is set). */
guint64 ptsim_sweep_count(const PtsimSweepSpec *spec, GError **error);

#endif /* PTSIM_SWEEP_H */
