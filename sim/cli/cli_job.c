/* cli_job.c — the job built for a command, and what the library found
 * besides it on stderr; see cli_job.h.  The lines are the library's
 * (ptsim_api_diagnostic_lines): the command only prefixes them. */
#include <stdio.h>
#include "api_int.h"
#include "cli_job.h"

void ptsim_cli_print_diagnostic(const char *command, const char *line,
                                PtsimApiDiagnosticKind kind) {
  if (kind == PTSIM_API_DIAGNOSTIC_INPUT)
    g_printerr("ptsim: %s\n", line);
  else
    fprintf(stderr, "ptsim %s: %s\n", command, line);
}

/* DIAG's lines: the inputs' warnings, and once BUILT the Megatron-LM
 * command line's diagnostics. */
static void print(const char *command, const PtsimJobDiagnostics *diag, gboolean built) {
  g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GArray) kinds = g_array_new(FALSE, FALSE, sizeof(PtsimApiDiagnosticKind));
  ptsim_api_diagnostic_lines(diag, built, lines, kinds);
  for (guint i = 0; i < lines->len; i++)
    ptsim_cli_print_diagnostic(command, g_ptr_array_index(lines, i),
                               g_array_index(kinds, PtsimApiDiagnosticKind, i));
}

gboolean ptsim_cli_job_build(const char *command, const PtsimJobOptions *opts, PtsimJob *job,
                             GError **error) {
  g_autoptr(PtsimJobDiagnostics) diag = ptsim_job_diagnostics_new();
  gboolean ok = ptsim_job_build(opts, job, diag, error);
  print(command, diag, ok);
  return ok;
}

void ptsim_cli_job_print_warnings(const PtsimJobDiagnostics *diag) { print(NULL, diag, FALSE); }
