/* api_int.h — the public API's objects inside the library, and the entry
 * points the command uses where it has already parsed its command line
 * (one GOption context for the job's flags, predict's and its own, so that
 * --help lists them all): the same constructors the public functions end
 * in, entered with parsed options instead of flag words.
 *
 * Internal to libptsim and the command (sim/cli); a program outside the
 * project sees include/ptsim.h only.  Siblings: api_version.c, api_shard.c, api_plot.c,
 * api_error.c, api_inputs.c (models, profiles), api_job.c, api_result.c
 * (predict, memory), api_sweep.c. */
#ifndef PTSIM_API_INT_H
#define PTSIM_API_INT_H

#include <glib.h>
#include <ptsim.h>
#include "job.h"
#include "job_build.h"
#include "job_options.h"
#include "prediction.h"

struct PtsimApiError {
  PtsimApiErrorCode code;
  int exit_status;
  char *message;
  GPtrArray *diagnostics; /* (element-type utf8) the inputs' warnings before it */
};

struct PtsimApiModel {
  PtsimModel model;
};

struct PtsimApiHardware {
  PtsimHardware hw;
};

struct PtsimApiJob {
  PtsimJob job;
  const char *overlap_source; /* static: ptsim_job_options_overlap_source */
  GPtrArray *diagnostics;     /* (element-type utf8) lines, in order */
  GArray *kinds;              /* PtsimApiDiagnosticKind of each */
};

struct PtsimApiResult {
  PtsimPrediction prediction;
  const char *overlap_source;
  gsize json_ready; /* g_once_init: the JSON is written on first demand */
  GString *json;
};

G_DEFINE_AUTOPTR_CLEANUP_FUNC(PtsimApiError, ptsim_api_error_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PtsimApiModel, ptsim_api_model_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PtsimApiHardware, ptsim_api_hardware_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PtsimApiJob, ptsim_api_job_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PtsimApiResult, ptsim_api_result_free)

/* ---- errors (api_error.c) ---- */

/* A callback asked to stop (PTSIM_API_ERROR_STOPPED). */
#define PTSIM_API_STOPPED_ERROR (ptsim_api_stopped_error_quark())
GQuark ptsim_api_stopped_error_quark(void);

/* The public error for a library GError: its message, and its kind and
 * exit status by domain -- the one place where a failure becomes bad input
 * (config, options, files, refused outputs: exit 2), an unusable GPU
 * (exit 2), a callback's stop (exit 1) or an internal failure (exit 1).  DIAGNOSTICS (may be NULL):
 * lines the inputs gave before it, copied.  (transfer full) */
PtsimApiError *ptsim_api_error_new(const GError *error, const GPtrArray *diagnostics);

/* Sets *DEST (when DEST is not NULL) to ptsim_api_error_new(ERROR, ...). */
void ptsim_api_error_set(PtsimApiError **dest, const GError *error, const GPtrArray *diagnostics);

/* ---- jobs (api_job.c) ---- */

/* What a built job's diagnostics say, as lines (each with its kind,
 * appended to LINES and KINDS) in the order the command prints them: the
 * inputs' warnings, then -- when BUILT -- the Megatron-LM command line's
 * unmodelled flags, unknown words and notes. */
void ptsim_api_diagnostic_lines(const PtsimJobDiagnostics *diag, gboolean built, GPtrArray *lines,
                                GArray *kinds);

/* ptsim_api_job_new with the job's options already parsed. */
PtsimApiJob *ptsim_api_job_new_from_options(const PtsimJobOptions *opts, const PtsimModel *model,
                                            const PtsimHardware *hw, PtsimApiError **error);

/* ---- predictions (api_result.c) ---- */

/* ptsim_api_predict (TIME) or ptsim_api_memory with the prediction's
 * options already parsed. */
PtsimApiResult *ptsim_api_result_new(const PtsimApiJob *job, const PtsimPredictOptions *opts,
                                     gboolean time, PtsimApiError **error);

#endif /* PTSIM_API_INT_H */
