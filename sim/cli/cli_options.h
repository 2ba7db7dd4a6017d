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

/* A numeric flag of an options struct: whether it was given is its own
 * bit, never a value standing for "not given". */
typedef struct {
  gboolean given;
  int64_t value;
} PtsimCliInt;
typedef struct {
  gboolean given;
  double value;
} PtsimCliDouble;

/* One row of a table of an options struct's numeric flags, for flags that
 * GOption hands to a G_OPTION_ARG_CALLBACK whose group's user data is the
 * struct: the flag as GOption names it ("--tp"), where its PtsimCliInt
 * (or, when decimal, PtsimCliDouble) lives in the struct, and its range. */
typedef struct {
  const char *flag;
  gsize offset;
  gboolean decimal;
  int64_t lo, hi;    /* integers */
  PtsimRange range;  /* decimals */
} PtsimCliNumber;

/* The callback's work: FLAG's row of TABLE (N rows) parses TEXT strictly
 * into OPTS, or the error names the flag, the value and the range. */
gboolean ptsim_cli_number_set(const PtsimCliNumber *table, gsize n, const char *flag,
                              const char *text, gpointer opts, GError **error);

#endif /* PTSIM_CLI_OPTIONS_H */
