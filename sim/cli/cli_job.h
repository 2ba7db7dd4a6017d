/* cli_job.h — what the ptsim command does around the library's job
 * building (sim/io/job_build.h): the command parsed the job options with
 * the library's table (sim/io/job_options.h), the library builds the job,
 * and this module says on stderr what the library found besides it, in
 * the library's lines (sim/api: the same a library caller gets).
 *
 * Shell module.  Not here: the options, their defaults and the job's
 * resolution (all in sim/io, for every front end), or a command's own
 * options and output. */
#ifndef PTSIM_CLI_JOB_H
#define PTSIM_CLI_JOB_H

#include <glib.h>
#include <ptsim.h>
#include "job.h"
#include "job_build.h"

/* ptsim_job_build for COMMAND ("predict", "plot", ...), printing to stderr
 * the inputs' warnings ("ptsim: warning: ...", also when the build fails:
 * they come before its error) and, once the job is built, the Megatron-LM
 * command line's diagnostics, prefixed "ptsim COMMAND:": the unmodelled
 * flags as a warning that the prediction may be off (with each flag's
 * direction), the unknown flags, the notes. */
gboolean ptsim_cli_job_build(const char *command, const PtsimJobOptions *opts, PtsimJob *job,
                             GError **error);

/* Prints DIAG's warnings to stderr, one "ptsim: warning: ..." line each. */
void ptsim_cli_job_print_warnings(const PtsimJobDiagnostics *diag);

/* One line of what the library found besides a job (ptsim.h's
 * PtsimApiDiagnosticKind) on stderr, as the command prints it: "ptsim: LINE"
 * for an input's warning, "ptsim COMMAND: LINE" for what a Megatron-LM
 * command line said. */
void ptsim_cli_print_diagnostic(const char *command, const char *line, PtsimApiDiagnosticKind kind);

#endif /* PTSIM_CLI_JOB_H */
