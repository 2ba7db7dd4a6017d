/* api_result.c — predict and memory through the library, and their
 * results; see ptsim.h and api_int.h.  The prediction is prediction.h's
 * (the command's), and so is the JSON. */
#include "api_int.h"

#include <math.h>

PtsimApiResult *ptsim_api_result_new(const PtsimApiJob *job, const PtsimPredictOptions *opts,
                                     gboolean time, PtsimApiError **error) {
  g_autoptr(GError) local = NULL;
  PtsimApiResult *r = g_new0(PtsimApiResult, 1);
  if (!ptsim_prediction_run(&job->job, opts, time, &r->prediction, &local)) {
    g_free(r);
    ptsim_api_error_set(error, local, NULL);
    return NULL;
  }
  r->overlap_source = job->overlap_source;
  return r;
}

/* The public entries: OPTIONS parsed as the command parses them. */
static PtsimApiResult *run(const PtsimApiJob *job, const char *const *options, gboolean time,
                           PtsimApiError **error) {
  g_autoptr(GError) local = NULL;
  if (!job) {
    g_set_error_literal(&local, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "no job given");
    ptsim_api_error_set(error, local, NULL);
    return NULL;
  }
  PtsimPredictOptions opts;
  ptsim_predict_options_init(&opts);
  PtsimApiResult *r = NULL;
  if (ptsim_predict_options_parse(&opts, time, options, &local))
    r = ptsim_api_result_new(job, &opts, time, error);
  else
    ptsim_api_error_set(error, local, NULL);
  ptsim_predict_options_clear(&opts);
  return r;
}

PtsimApiResult *ptsim_api_predict(const PtsimApiJob *job, const char *const *options,
                                  PtsimApiError **error) {
  return run(job, options, TRUE, error);
}

PtsimApiResult *ptsim_api_memory(const PtsimApiJob *job, const char *const *options,
                                 PtsimApiError **error) {
  return run(job, options, FALSE, error);
}

const char *ptsim_api_result_json(const PtsimApiResult *result, size_t *length) {
  if (!result) {
    if (length) *length = 0;
    return NULL;
  }
  /* written once, on first demand, whichever thread asks first */
  PtsimApiResult *r = (PtsimApiResult *)result;
  if (g_once_init_enter(&r->json_ready)) {
    r->json = g_string_new(NULL);
    ptsim_prediction_write(r->json, &r->prediction, PTSIM_FORMAT_JSON, r->overlap_source);
    g_once_init_leave(&r->json_ready, 1);
  }
  if (length) *length = r->json->len;
  return r->json->str;
}

/* ---- the main numbers ---- */

static const PtsimPrediction *timed(const PtsimApiResult *r) {
  return r && r->prediction.time ? &r->prediction : NULL;
}

static const PtsimPrediction *emulated(const PtsimApiResult *r) {
  return r && r->prediction.allocator ? &r->prediction : NULL;
}

double ptsim_api_result_step_s(const PtsimApiResult *r) {
  return timed(r) ? r->prediction.step->step_s : NAN;
}

double ptsim_api_result_tokens_per_s(const PtsimApiResult *r) {
  return timed(r) ? r->prediction.step->tokens_per_s : NAN;
}

double ptsim_api_result_tflops_per_gpu(const PtsimApiResult *r) {
  return timed(r) ? r->prediction.step->tflops_per_gpu : NAN;
}

double ptsim_api_result_mfu(const PtsimApiResult *r) {
  return timed(r) ? r->prediction.step->mfu : NAN;
}

double ptsim_api_result_memory_bytes(const PtsimApiResult *r) {
  return r ? r->prediction.memory->total_bytes : NAN;
}

double ptsim_api_result_capacity_bytes(const PtsimApiResult *r) {
  return r ? r->prediction.memory->capacity_bytes : NAN;
}

double ptsim_api_result_device_peak_bytes(const PtsimApiResult *r) {
  if (!emulated(r)) return NAN;
  const PtsimAllocResult *a = r->prediction.alloc;
  return a->stages[a->peak_stage].device_peak_bytes;
}

int ptsim_api_result_fits(const PtsimApiResult *r) {
  return r ? r->prediction.memory->fits != 0 : -1;
}

int ptsim_api_result_runs(const PtsimApiResult *r) {
  return emulated(r) ? r->prediction.alloc->runs != 0 : -1;
}

void ptsim_api_result_free(PtsimApiResult *result) {
  if (!result) return;
  ptsim_prediction_clear(&result->prediction);
  if (result->json) g_string_free(result->json, TRUE);
  g_free(result);
}
