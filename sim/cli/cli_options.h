/* cli_options.h — what every command does with its command line before
 * its own work: GOptionContext parsing that names the flag when a value is
 * not text in the user's locale, and the numeric flags read as text and
 * parsed by the one strict parser (numbers.h), so that "given or not" is
 * the text being NULL or not and nan/inf/overflow are refused by name.
 *
 * Shell module.  Not here: the job options (cli_job.h). */
#ifndef PTSIM_CLI_OPTIONS_H
#define PTSIM_CLI_OPTIONS_H

#include <glib.h>
#include <stdint.h>
#include "numbers.h"

/* The process's character set for command-line text: the user's locale
 * (LC_CTYPE only: numbers are always printed and read in the C locale),
 * or C.UTF-8 when that locale is plain ASCII (LANG unset, "C", "POSIX"),
 * so that non-ASCII names and values, valid on Linux, pass.  Call once,
 * first thing in main. */
void ptsim_cli_init_locale(void);

/* g_option_context_parse, with one difference: a value GLib cannot
 * convert to UTF-8 is an error naming its flag and the value (GLib says
 * only "Invalid byte sequence in conversion input"). */
gboolean ptsim_cli_parse_options(GOptionContext *context, int *argc, char ***argv,
                                 GError **error);

/* A numeric flag given as TEXT (NULL: not given, *out keeps its default):
 * the strict parse with the flag's range. */
gboolean ptsim_cli_int64_flag(const char *flag, const char *text, int64_t lo, int64_t hi,
                              int64_t *out, GError **error);
gboolean ptsim_cli_double_flag(const char *flag, const char *text, PtsimRange range,
                               double *out, GError **error);

#endif /* PTSIM_CLI_OPTIONS_H */
