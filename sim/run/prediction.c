/* prediction.c — one job's prediction and its outputs; see prediction.h.
 * The steps are those `ptsim predict` always took: the options checked,
 * the plan, the engine's step (with the records a trace or a timeline
 * needs), the trace, the allocator emulation, the analytical estimate. */
#include "prediction.h"

#include <string.h>
#include "alloc_conf.h"
#include "config.h"
#include "memory_fujii2024.h"
#include "numbers.h"
#include "options.h"
#include "output.h"
#include "trace.h"

void ptsim_predict_options_init(PtsimPredictOptions *o) { memset(o, 0, sizeof *o); }

void ptsim_predict_options_clear(PtsimPredictOptions *o) {
  g_free(o->ce);
  g_free(o->estimator);
  g_free(o->trace);
  g_free(o->trace_steps);
  g_free(o->memory_timeline);
  g_free(o->alloc_conf);
  ptsim_predict_options_init(o);
}

GOptionEntry *ptsim_predict_options_entries(PtsimPredictOptions *o, gboolean time) {
  const GOptionEntry entries[] = {
      {"ce", 0, 0, G_OPTION_ARG_STRING, &o->ce,
       "Where the fp32 logits/cross-entropy term is charged: last-stage (default) or "
       "every-stage (the paper's printed closed form)",
       "WHERE"},
      {"estimator", 0, 0, G_OPTION_ARG_STRING, &o->estimator,
       "The analytical estimate: ptsim (default: what a run holds) or fujii2024 (the seed's "
       "closed form, Fujii et al. 2024, as published; Llama-architecture models)",
       "E"},
      /* predict's */
      {"trace", 0, 0, G_OPTION_ARG_FILENAME, &o->trace,
       "Write a Chrome/Perfetto trace of the simulated step (open in ui.perfetto.dev): per "
       "stage a compute, TP, CP, PP send/recv and DP track, recompute and waits as slices, "
       "PP transfers as flow arrows",
       "FILE.json"},
      {"trace-steps", 0, 0, G_OPTION_ARG_STRING, &o->trace_steps,
       "Steps in the trace, 1 to 1000 (default 1; steps repeat: the simulation is "
       "deterministic)",
       "N"},
      {"memory-timeline", 0, 0, G_OPTION_ARG_FILENAME, &o->memory_timeline,
       "Write allocated/reserved bytes over simulated time per stage (TSV)", "FILE.tsv"},
      {"alloc-conf", 0, 0, G_OPTION_ARG_STRING, &o->alloc_conf,
       "PYTORCH_CUDA_ALLOC_CONF for the allocator emulation, e.g. "
       "expandable_segments:True,max_split_size_mb:512",
       "CONF"},
      {"no-shortcut", 0, 0, G_OPTION_ARG_NONE, &o->no_shortcut,
       "Simulate every event of the step, and replay every schedule item through the "
       "allocator emulation, instead of skipping the repeating steady state (the result is "
       "the same; this checks it)",
       NULL},
      {"no-allocator", 0, 0, G_OPTION_ARG_NONE, &o->no_allocator,
       "Skip the caching-allocator emulation: the step time and the analytical estimate only "
       "(for scripts that fit step times; no allocator keys, no runs verdict)",
       NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  const gsize memory_only = 2; /* --ce, --estimator */
  gsize n = time ? G_N_ELEMENTS(entries) - 1 : memory_only;
  GOptionEntry *out = g_new0(GOptionEntry, n + 1); /* zeroed: the terminator */
  memcpy(out, entries, n * sizeof *out);
  return out;
}

gboolean ptsim_predict_options_parse(PtsimPredictOptions *o, gboolean time,
                                     const char *const *flags, GError **error) {
  if (!flags || !flags[0]) return TRUE; /* none: no context to build */
  g_autofree GOptionEntry *entries = ptsim_predict_options_entries(o, time);
  g_autoptr(GOptionContext) context = g_option_context_new(NULL);
  g_option_context_set_help_enabled(context, FALSE);
  g_option_context_add_main_entries(context, entries, NULL);
  return ptsim_options_parse_flags(context, flags, error);
}

gboolean ptsim_predict_options_ce(const PtsimPredictOptions *o, PtsimCrossEntropyConvention *ce,
                                  GError **error) {
  *ce = PTSIM_CE_LAST_STAGE;
  if (!o->ce || strcmp(o->ce, "last-stage") == 0) return TRUE;
  if (strcmp(o->ce, "every-stage") == 0) {
    *ce = PTSIM_CE_EVERY_STAGE;
    return TRUE;
  }
  g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
              "--ce '%s': allowed values are last-stage|every-stage", o->ce);
  return FALSE;
}

gboolean ptsim_predict_options_estimator(const PtsimPredictOptions *o, gboolean *closed_form,
                                         GError **error) {
  *closed_form = o->estimator && strcmp(o->estimator, "fujii2024") == 0;
  if (!o->estimator || *closed_form || strcmp(o->estimator, "ptsim") == 0) return TRUE;
  g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
              "--estimator '%s': allowed values are ptsim|fujii2024", o->estimator);
  return FALSE;
}

/* The seed's closed form of the plan's job, or why it does not apply. */
static gboolean closed_form_estimate(const PtsimPlan *plan, PtsimCrossEntropyConvention ce,
                                     PtsimMemoryEstimate *out, GError **error) {
  if (plan->job.model.hybrid_pattern[0] != '\0') {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                "--estimator fujii2024: the closed form is written for Llama's architecture; %s "
                "is a hybrid model (Mamba layers)",
                plan->job.model.name);
    return FALSE;
  }
  int32_t rc = ptsim_memory_fujii2024(plan, ce, out);
  if (rc == 0) return TRUE;
  g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
              "--estimator fujii2024: the closed form is written for Llama's architecture (a "
              "SwiGLU MLP, GQA attention, no experts); %s has %s",
              plan->job.model.name,
              rc == PTSIM_FUJII2024_ERR_MOE   ? "mixture-of-experts layers"
              : rc == PTSIM_FUJII2024_ERR_MLA ? "multi-latent attention"
                                              : "another MLP activation");
  return FALSE;
}

/* The options, checked before any work, in the command's order. */
static gboolean check_options(const PtsimPredictOptions *o, PtsimCrossEntropyConvention *ce,
                              gboolean *closed_form, int64_t *trace_steps, PtsimAllocOptions *alloc,
                              GError **error) {
  if (!ptsim_predict_options_ce(o, ce, error) ||
      !ptsim_predict_options_estimator(o, closed_form, error))
    return FALSE;
  *trace_steps = 1;
  if (o->trace_steps && !o->trace) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "--trace-steps needs --trace FILE.json");
    return FALSE;
  }
  if (o->trace_steps &&
      !ptsim_number_int64("--trace-steps", o->trace_steps, 1, 1000, trace_steps, error))
    return FALSE;
  ptsim_alloc_options_init(alloc);
  if ((o->alloc_conf && !ptsim_alloc_conf_parse(o->alloc_conf, alloc, error)) ||
      (o->trace && !ptsim_output_check(o->trace, error)) ||
      (o->memory_timeline && !ptsim_output_check(o->memory_timeline, error)))
    return FALSE;
  if (o->no_allocator && (o->memory_timeline || o->alloc_conf)) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "--no-allocator: %s needs the allocator emulation; give one or the other",
                o->memory_timeline ? "--memory-timeline" : "--alloc-conf");
    return FALSE;
  }
  return TRUE;
}

/* The step, its trace and the allocator emulation (predict). */
static gboolean simulate(const PtsimPredictOptions *o, int64_t trace_steps,
                         const PtsimAllocOptions *alloc_opts, PtsimPrediction *p, GError **error) {
  PtsimTrace trace = {NULL, 0, 0};
  gboolean need_trace = o->trace || o->memory_timeline;
  gboolean ok =
      ptsim_simulate_with(p->plan, need_trace ? &trace : NULL, o->no_shortcut, p->step, error) &&
      (!o->trace ||
       ptsim_trace_write(o->trace, p->plan, &trace, p->step, (int32_t)trace_steps, error)) &&
      (!p->allocator || ptsim_simulate_allocator_with(p->plan, 2, alloc_opts, o->no_shortcut,
                                                      need_trace ? &trace : NULL, p->step->step_s,
                                                      o->memory_timeline, p->alloc, error));
  ptsim_simulate_trace_clear(&trace);
  return ok;
}

gboolean ptsim_prediction_run(const PtsimJob *job, const PtsimPredictOptions *o, gboolean time,
                              PtsimPrediction *p, GError **error) {
  memset(p, 0, sizeof *p);
  PtsimCrossEntropyConvention ce;
  int64_t trace_steps;
  PtsimAllocOptions alloc_opts;
  gboolean closed_form;
  if (!check_options(o, &ce, &closed_form, &trace_steps, &alloc_opts, error)) return FALSE;
  p->time = time;
  p->allocator = time && !o->no_allocator;
  p->plan = g_new0(PtsimPlan, 1);
  p->memory = g_new0(PtsimMemoryEstimate, 1);
  p->step = g_new0(PtsimTimeResult, 1);
  p->alloc = g_new0(PtsimAllocResult, 1);
  ptsim_plan_build(job, p->plan);
  if ((closed_form && !closed_form_estimate(p->plan, ce, p->memory, error)) ||
      (time && !simulate(o, trace_steps, &alloc_opts, p, error))) {
    ptsim_prediction_clear(p);
    return FALSE;
  }
  if (!closed_form) ptsim_memory_estimate(p->plan, ce, p->memory);
  if (time) ptsim_error_band_lookup(job, &p->band);
  if (p->allocator && !p->alloc->runs)
    ptsim_remedies_find(job, &alloc_opts, o->alloc_conf, &p->remedies);
  return TRUE;
}

void ptsim_prediction_clear(PtsimPrediction *p) {
  ptsim_remedies_clear(&p->remedies);
  g_free(p->plan);
  g_free(p->memory);
  g_free(p->step);
  g_free(p->alloc);
  memset(p, 0, sizeof *p);
}

void ptsim_prediction_write(GString *out, const PtsimPrediction *p, PtsimFormat format,
                            const char *overlap_source) {
  const PtsimJob *job = &p->plan->job;
  if (format == PTSIM_FORMAT_JSON) {
    PtsimJson json;
    ptsim_json_init(&json, out);
    ptsim_json_begin_object(&json, NULL);
    ptsim_report_json_config(&json, p->plan);
    ptsim_report_json_settings(&json, job, &job->model, overlap_source);
    ptsim_report_json_memory(&json, p->memory, job->settings.memory_threshold,
                             p->allocator ? p->alloc : NULL);
    if (p->time) ptsim_report_json_time(&json, job, p->step, &p->band);
    ptsim_remedies_write_json(&json, &p->remedies);
    ptsim_json_end_object(&json);
  } else if (format == PTSIM_FORMAT_CSV) {
    ptsim_report_csv_memory(out, job, p->memory, p->time ? p->step : NULL,
                            p->allocator ? p->alloc : NULL);
  } else {
    ptsim_report_text_config(out, p->plan);
    ptsim_report_text_settings(out, job, &job->model, overlap_source);
    ptsim_report_text_memory(out, job, p->memory);
    if (p->allocator) ptsim_report_text_allocator(out, p->memory, p->alloc);
    if (p->time) ptsim_report_text_time(out, job, p->step, &p->band);
    ptsim_remedies_write_text(out, &p->remedies, job, p->words);
  }
}
