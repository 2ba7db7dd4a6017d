/* api_job.c — a job built from flags (or from the options a command
 * parsed), with what its inputs said besides; see ptsim.h and api_int.h.
 * The job is job_build.h's: the same pass for every front end. */
#include "api_int.h"

/* LINE (transfer full) and its KIND, appended. */
static void add_line(GPtrArray *lines, GArray *kinds, PtsimApiDiagnosticKind kind, char *line) {
  g_ptr_array_add(lines, line);
  if (kinds) g_array_append_val(kinds, kind);
}

void ptsim_api_diagnostic_lines(const PtsimJobDiagnostics *d, gboolean built, GPtrArray *lines,
                                GArray *kinds) {
  for (guint i = 0; i < d->warnings->len; i++)
    add_line(lines, kinds, PTSIM_API_DIAGNOSTIC_INPUT,
             g_strdup_printf("warning: %s", (const char *)g_ptr_array_index(d->warnings, i)));
  if (!built) return;
  const PtsimMegatronDiagnostics *m = d->megatron;
  if (m->unmodelled->len > 0) {
    GString *line = g_string_new("warning: not modelled, so the prediction may be off:");
    for (guint i = 0; i < m->unmodelled->len; i++)
      g_string_append_printf(line, "%s %s", i ? ";" : "", (const char *)m->unmodelled->pdata[i]);
    add_line(lines, kinds, PTSIM_API_DIAGNOSTIC_MEGATRON, g_string_free(line, FALSE));
  }
  if (m->unknown->len > 0) {
    GString *line = g_string_new("not Megatron-LM flags, ignored:");
    for (guint i = 0; i < m->unknown->len; i++)
      g_string_append_printf(line, " %s", (const char *)m->unknown->pdata[i]);
    add_line(lines, kinds, PTSIM_API_DIAGNOSTIC_MEGATRON, g_string_free(line, FALSE));
  }
  for (guint i = 0; i < m->notes->len; i++)
    add_line(lines, kinds, PTSIM_API_DIAGNOSTIC_MEGATRON,
             g_strdup_printf("note: %s", (const char *)m->notes->pdata[i]));
}

PtsimApiJob *ptsim_api_job_new_from_options(const PtsimJobOptions *opts, const PtsimModel *model,
                                            const PtsimHardware *hw, PtsimApiError **error) {
  g_autoptr(PtsimJobDiagnostics) diag = ptsim_job_diagnostics_new();
  g_autoptr(GError) local = NULL;
  g_autoptr(PtsimApiJob) job = g_new0(PtsimApiJob, 1);
  job->diagnostics = g_ptr_array_new_with_free_func(g_free);
  job->kinds = g_array_new(FALSE, FALSE, sizeof(PtsimApiDiagnosticKind));
  gboolean built = ptsim_job_build_given(opts, model, hw, &job->job, diag, &local);
  ptsim_api_diagnostic_lines(diag, built, job->diagnostics, job->kinds);
  if (!built) {
    ptsim_api_error_set(error, local, job->diagnostics);
    return NULL;
  }
  job->overlap_source = ptsim_job_options_overlap_source(opts);
  return g_steal_pointer(&job);
}

PtsimApiJob *ptsim_api_job_new(const char *const *flags, const PtsimApiModel *model,
                               const PtsimApiHardware *hw, PtsimApiError **error) {
  static const char *const none[] = {NULL};
  PtsimJobOptions opts;
  ptsim_job_options_init(&opts);
  g_autoptr(GError) local = NULL;
  PtsimApiJob *job = NULL;
  if (ptsim_job_options_parse(&opts, flags ? flags : none, &local))
    job = ptsim_api_job_new_from_options(&opts, model ? &model->model : NULL, hw ? &hw->hw : NULL,
                                         error);
  else
    ptsim_api_error_set(error, local, NULL);
  ptsim_job_options_clear(&opts);
  return job;
}

void ptsim_api_job_free(PtsimApiJob *job) {
  if (!job) return;
  g_ptr_array_unref(job->diagnostics);
  g_array_unref(job->kinds);
  g_free(job);
}

size_t ptsim_api_job_diagnostic_count(const PtsimApiJob *job) {
  return job ? job->diagnostics->len : 0;
}

const char *ptsim_api_job_diagnostic(const PtsimApiJob *job, size_t i,
                                     PtsimApiDiagnosticKind *kind) {
  if (!job || i >= job->diagnostics->len) return NULL;
  if (kind) *kind = g_array_index(job->kinds, PtsimApiDiagnosticKind, i);
  return g_ptr_array_index(job->diagnostics, i);
}
