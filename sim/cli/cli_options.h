/* cli_options.h — what the command does with its command line before its
 * own work, beyond the flag parsing every front end shares (sim/io/
 * options.h): the process's locale for command-line text, and the
 * command's own numeric flags read as text and parsed by the one strict
 * parser (numbers.h), so that "given or not" is the text being NULL or not
 * and nan/inf/overflow are refused by name.
 *
 * Shell module.  Not here: the job options (sim/io/job_options.h). */
#ifndef PTSIM_CLI_OPTIONS_H
#define PTSIM_CLI_OPTIONS_H

#include <glib.h>
#include <stdint.h>
#include "numbers.h"
#include "options.h"

/* The process's character set for command-line text: the user's locale
 * (LC_CTYPE only: numbers are always printed and read in the C locale),
 * or C.UTF-8 when that locale is plain ASCII (LANG unset, "C", "POSIX"),
 * so that non-ASCII names and values, valid on Linux, pass.  Call once,
 * first thing in main. */
void ptsim_cli_init_locale(void);

/* A numeric flag given as TEXT (NULL: not given, *out keeps its default):
 * the strict parse with the flag's range. */
gboolean ptsim_cli_int64_flag(const char *flag, const char *text, int64_t lo, int64_t hi,
                              int64_t *out, GError **error);
gboolean ptsim_cli_double_flag(const char *flag, const char *text, PtsimRange range, double *out,
                               GError **error);

#endif /* PTSIM_CLI_OPTIONS_H */
