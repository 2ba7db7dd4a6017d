/* prediction.h — one job's prediction, as `ptsim predict` and `ptsim
 * memory` make it and every front end gets it (the command, the public
 * API): the plan, the analytical memory estimate, and for predict the
 * simulated step, its error band, the caching-allocator emulation and the
 * files asked for (a Perfetto trace, a memory timeline); and the result
 * written as text, JSON or CSV.
 *
 * The prediction's own options (besides the job's flags, job_options.h,
 * and the command's --format): --ce for both, and for predict --trace,
 * --trace-steps, --memory-timeline, --alloc-conf, --no-shortcut and
 * --no-allocator.  Their one table is here: the command adds it to its
 * option context, a library caller hands it an argv-style array.
 *
 * Shell module (GLib).  Errors: an option (PTSIM_CONFIG_ERROR,
 * G_OPTION_ERROR), an output path the policy refuses or a failed write
 * (PTSIM_OUTPUT_ERROR), a layout the engine cannot schedule
 * (PTSIM_CONFIG_ERROR_INVALID). */
#ifndef PTSIM_PREDICTION_H
#define PTSIM_PREDICTION_H

#include <glib.h>
#include "error_bands.h"
#include "job.h"
#include "memory.h"
#include "plan.h"
#include "remedies.h"
#include "report.h"
#include "simulate.h"

/* Raw option values as given (NULL / FALSE: not given). */
typedef struct {
  char *ce;          /* last-stage | every-stage */
  char *estimator;   /* ptsim | fujii2024 */
  char *trace;       /* predict only, like the rest */
  char *trace_steps; /* 1 to 1000, parsed strictly (numbers.h) */
  char *memory_timeline;
  char *alloc_conf;
  gboolean no_shortcut;
  gboolean no_allocator;
} PtsimPredictOptions;

void ptsim_predict_options_init(PtsimPredictOptions *opts);
/* Frees the strings and sets every field to "not given" again. */
void ptsim_predict_options_clear(PtsimPredictOptions *opts);

/* The options' GOption entries writing into *opts, in the order --help
 * lists them: --ce, --estimator, then with TIME (predict) the others; NULL-terminated.
 * (transfer container: g_free the array) */
GOptionEntry *ptsim_predict_options_entries(PtsimPredictOptions *opts, gboolean time);

/* Reads FLAGS, a NULL-terminated argv-style array without a program name
 * (NULL: none), into *opts as the command reads its command line: with
 * TIME predict's options, else memory's (--ce).  A word that is not one of
 * them is an error. */
gboolean ptsim_predict_options_parse(PtsimPredictOptions *opts, gboolean time,
                                     const char *const *flags, GError **error);

/* --ce's value (PTSIM_CONFIG_ERROR_PARSE naming it otherwise). */
gboolean ptsim_predict_options_ce(const PtsimPredictOptions *opts, PtsimCrossEntropyConvention *ce,
                                  GError **error);

/* --estimator's value: FALSE for ptsim's own estimate (memory.h), TRUE
 * for the seed's closed form (memory_fujii2024.h); PTSIM_CONFIG_ERROR_PARSE
 * naming it otherwise. */
gboolean ptsim_predict_options_estimator(const PtsimPredictOptions *opts, gboolean *closed_form,
                                         GError **error);

/* One job's prediction.  (Each pointer owned; ptsim_prediction_clear.) */
typedef struct {
  gboolean time;      /* predict: the step was simulated (time, band) */
  gboolean allocator; /* predict: the allocator was emulated (alloc) */
  PtsimPlan *plan;    /* plan->job is the job */
  PtsimMemoryEstimate *memory;
  PtsimTimeResult *step;   /* zero without time */
  PtsimAllocResult *alloc; /* zero without the allocator */
  PtsimErrorBand band;     /* the step time's (error_bands.h); with time only */
  /* predict, a layout that does not run: what would (remedies.h) */
  PtsimRemedies remedies;
  /* The command's arguments after its name (NULL-terminated; NULL: not
   * known, as for a library caller): the remedies' command lines start
   * from them.  (transfer none) */
  const char *const *words;
} PtsimPrediction;

/* Predicts JOB (resolved and checked, job_build.h) as `ptsim predict`
 * (TIME) or `ptsim memory` does with OPTS, writing the trace and the
 * memory timeline they ask for.  The options are checked in the order the
 * command always checked them, before any work: --ce, --trace-steps,
 * --alloc-conf, the output paths, --no-allocator with what needs the
 * emulation. */
gboolean ptsim_prediction_run(const PtsimJob *job, const PtsimPredictOptions *opts, gboolean time,
                              PtsimPrediction *out, GError **error);
void ptsim_prediction_clear(PtsimPrediction *p);

/* P in FORMAT, appended to OUT: what `ptsim predict|memory --format F`
 * prints.  OVERLAP_SOURCE: where the overlap switches came from
 * (ptsim_job_options_overlap_source). */
void ptsim_prediction_write(GString *out, const PtsimPrediction *p, PtsimFormat format,
                            const char *overlap_source);

#endif /* PTSIM_PREDICTION_H */
