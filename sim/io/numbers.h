/* numbers.h — the one strict parser of every number a user types: command-line
 * flags, .ini keys, Megatron-LM arguments, --alloc-conf values, list flags.
 *
 * Shell module (GLib).  The whole text (surrounding blanks allowed) must be
 * one decimal integer / one finite number: "12abc", "", "0x10", "1e999",
 * "nan" and "inf" are refused, and so is a value outside the range the
 * caller names.  There are no sentinel values: whether a flag was given is
 * the caller's own bit (its text is NULL or not).
 *
 * Errors are PTSIM_CONFIG_ERROR_PARSE, one line: "WHAT 'TEXT' is not allowed:
 * expected an integer from LO to HI" (or "a number in (LO, HI]"), where WHAT
 * is what the user wrote it as: "--threads", "file.ini:7: [gpu] hbm_gbps".
 *
 * Not here: words and enums (names.h), lists of names (the commands). */
#ifndef PTSIM_NUMBERS_H
#define PTSIM_NUMBERS_H

#include <glib.h>
#include <stdint.h>

/* Plain parses without a range or a message: FALSE without touching *out
 * when TEXT is not one whole decimal integer / finite number.  For readers
 * that word their own errors (a log line, a CSV cell). */
gboolean ptsim_number_parse_int64(const char *text, int64_t *out);
gboolean ptsim_number_parse_double(const char *text, double *out);

/* A range of decimals: lo < v (lo <= v when lo_closed), v < hi (v <= hi
 * when hi_closed).  hi = INFINITY: no upper bound. */
typedef struct {
  double lo, hi;
  gboolean lo_closed, hi_closed;
} PtsimRange;

/* "an integer from LO to HI".  (transfer full) */
char *ptsim_number_int64_allowed(int64_t lo, int64_t hi);
/* "a number in (0, 1]", "a number >= 0".  (transfer full) */
char *ptsim_number_range_allowed(PtsimRange range);

/* TEXT as an integer in [lo, hi], or the error naming WHAT, TEXT and the
 * range. */
gboolean ptsim_number_int64(const char *what, const char *text, int64_t lo, int64_t hi,
                            int64_t *out, GError **error);

/* TEXT as a finite number in RANGE, or the error naming WHAT, TEXT and the
 * range. */
gboolean ptsim_number_double(const char *what, const char *text, PtsimRange range, double *out,
                             GError **error);

/* A comma-separated list of integers in [lo, hi] into OUT (gint64,
 * emptied first), in the order given.  A value given twice is an error
 * ("--gpus '8,8': 8 is given twice"), and so is an empty item. */
gboolean ptsim_number_int64_list(const char *what, const char *text, int64_t lo, int64_t hi,
                                 GArray *out, GError **error);

#endif /* PTSIM_NUMBERS_H */
