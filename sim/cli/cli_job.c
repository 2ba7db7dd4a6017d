/* cli_job.c — the job built for a command, and what the library found
 * besides it on stderr; see cli_job.h. */
#include <stdio.h>
#include "cli_job.h"

/* A Megatron-LM command line's diagnostics (cli_job.h). */
static void warn(const char *command, const PtsimMegatronDiagnostics *d) {
  if (d->unmodelled->len > 0) {
    fprintf(stderr, "ptsim %s: warning: not modelled, so the prediction may be off:", command);
    for (guint i = 0; i < d->unmodelled->len; i++)
      fprintf(stderr, "%s %s", i ? ";" : "", (const char *)d->unmodelled->pdata[i]);
    fputc('\n', stderr);
  }
  if (d->unknown->len > 0) {
    fprintf(stderr, "ptsim %s: not Megatron-LM flags, ignored:", command);
    for (guint i = 0; i < d->unknown->len; i++)
      fprintf(stderr, " %s", (const char *)d->unknown->pdata[i]);
    fputc('\n', stderr);
  }
  for (guint i = 0; i < d->notes->len; i++)
    fprintf(stderr, "ptsim %s: note: %s\n", command, (const char *)d->notes->pdata[i]);
}

gboolean ptsim_cli_job_build(const char *command, const PtsimJobOptions *opts, PtsimJob *job,
                             GError **error) {
  g_autoptr(PtsimJobDiagnostics) diag = ptsim_job_diagnostics_new();
  gboolean ok = ptsim_job_build(opts, job, diag, error);
  ptsim_cli_job_print_warnings(diag);
  if (ok) warn(command, diag->megatron);
  return ok;
}

void ptsim_cli_job_print_warnings(const PtsimJobDiagnostics *diag) {
  for (guint i = 0; i < diag->warnings->len; i++)
    g_printerr("ptsim: warning: %s\n", (const char *)g_ptr_array_index(diag->warnings, i));
}
