/* options.h — command-line flags as every front end reads them (the ptsim
 * command, and the library's argv-style job builder, job_build.h): GOption
 * parsing that names the flag when a value is not text in the user's
 * locale, and numeric flags read as text and parsed by the one strict
 * parser (numbers.h), so that "given or not" is a bit of its own and
 * nan/inf/overflow are refused by name.
 *
 * Shell module (GLib).  The process's locale is the caller's to set
 * (sim/cli/cli_options.h does it for the command).  Sibling: options.c. */
#ifndef PTSIM_OPTIONS_H
#define PTSIM_OPTIONS_H

#include <glib.h>
#include <stdint.h>
#include "numbers.h"

/* g_option_context_parse, with one difference: a value GLib cannot
 * convert to UTF-8 is an error naming its flag and the value (GLib says
 * only "Invalid byte sequence in conversion input"). */
gboolean ptsim_options_parse(GOptionContext *context, int *argc, char ***argv, GError **error);

/* The same on an argv-style array FLAGS without a program name (a library
 * caller's: {"--tp", "8", NULL}), which stays the caller's; a word no
 * entry takes is an error ("unexpected argument 'x'"). */
gboolean ptsim_options_parse_flags(GOptionContext *context, const char *const *flags,
                                   GError **error);

/* A numeric flag of an options struct: whether it was given is its own
 * bit, never a value standing for "not given". */
typedef struct {
  gboolean given;
  int64_t value;
} PtsimOptionInt;
typedef struct {
  gboolean given;
  double value;
} PtsimOptionDouble;

/* One row of a table of an options struct's numeric flags, for flags that
 * GOption hands to a G_OPTION_ARG_CALLBACK whose group's user data is the
 * struct: the flag as GOption names it ("--tp"), where its PtsimOptionInt
 * (or, when decimal, PtsimOptionDouble) lives in the struct, and its
 * range. */
typedef struct {
  const char *flag;
  gsize offset;
  gboolean decimal;
  int64_t lo, hi;   /* integers */
  PtsimRange range; /* decimals */
} PtsimOptionNumber;

/* The callback's work: FLAG's row of TABLE (N rows) parses TEXT strictly
 * into OPTS, or the error names the flag, the value and the range. */
gboolean ptsim_option_number_set(const PtsimOptionNumber *table, gsize n, const char *flag,
                                 const char *text, gpointer opts, GError **error);

#endif /* PTSIM_OPTIONS_H */
