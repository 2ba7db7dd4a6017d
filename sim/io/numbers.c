/* numbers.c — strict numbers with ranges; the contract is in numbers.h.
 *
 * g_ascii_strtoll / g_ascii_strtod do the digits (C locale whatever the
 * user's locale); this file adds what they let through: trailing text,
 * overflow (errno), non-finite values and the caller's range.  GOption's
 * own G_OPTION_ARG_INT64 / DOUBLE are not used for that reason: DOUBLE
 * takes "nan" and "inf", and neither knows the flag's range. */
#include "numbers.h"

#include <errno.h>
#include <math.h>
#include "config.h"

/* The text after leading blanks, or NULL when nothing is left. */
static const char *number_start(const char *text) {
  if (text == NULL) return NULL;
  while (g_ascii_isspace(*text)) text++;
  return *text == '\0' ? NULL : text;
}

/* TRUE when the parse consumed something, did not overflow, and only
 * blanks follow. */
static gboolean number_end(const char *start, const char *end) {
  if (errno != 0 || end == start) return FALSE;
  while (g_ascii_isspace(*end)) end++;
  return *end == '\0';
}

gboolean ptsim_number_parse_int64(const char *text, int64_t *out) {
  const char *start = number_start(text);
  if (!start) return FALSE;
  /* strtoll also takes "0x.." with base 0 only; base 10 refuses it, but a
   * leading '+' is taken, as argparse's int() does. */
  char *end = NULL;
  errno = 0;
  gint64 v = g_ascii_strtoll(start, &end, 10);
  if (!number_end(start, end)) return FALSE;
  *out = v;
  return TRUE;
}

gboolean ptsim_number_parse_double(const char *text, double *out) {
  const char *start = number_start(text);
  if (!start) return FALSE;
  /* g_ascii_strtod reads "nan", "inf" and hex floats: only decimals pass. */
  for (const char *c = start; *c && !g_ascii_isspace(*c); c++)
    if (!(g_ascii_isdigit(*c) || *c == '.' || *c == '-' || *c == '+' || *c == 'e' || *c == 'E'))
      return FALSE;
  char *end = NULL;
  errno = 0;
  double v = g_ascii_strtod(start, &end);
  /* ERANGE is also set on underflow to a subnormal or zero ("1e-400"):
   * refused as well, since no physical input here is that small. */
  if (!number_end(start, end) || !isfinite(v)) return FALSE;
  *out = v;
  return TRUE;
}

char *ptsim_number_int64_allowed(int64_t lo, int64_t hi) {
  return g_strdup_printf("an integer from %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT, (gint64)lo,
                         (gint64)hi);
}

/* The shortest decimal that reads back as V: 0.01, 1000000, 1e-06. */
static void shortest(char buf[32], double v) {
  if (v == floor(v) && fabs(v) < 1e15) { /* whole numbers without an exponent */
    g_snprintf(buf, 32, "%.0f", v);
    return;
  }
  for (int digits = 1; digits <= 17; digits++) {
    g_snprintf(buf, 32, "%.*g", digits, v);
    if (g_ascii_strtod(buf, NULL) == v) return;
  }
}

char *ptsim_number_range_allowed(PtsimRange r) {
  char lo[32], hi[32];
  shortest(lo, r.lo);
  if (isinf(r.hi)) return g_strdup_printf("a number %s %s", r.lo_closed ? ">=" : ">", lo);
  shortest(hi, r.hi);
  return g_strdup_printf("a number in %s%s, %s%s", r.lo_closed ? "[" : "(", lo, hi,
                         r.hi_closed ? "]" : ")");
}

static gboolean in_range(double v, PtsimRange r) {
  gboolean above = r.lo_closed ? v >= r.lo : v > r.lo;
  gboolean below = isinf(r.hi) || (r.hi_closed ? v <= r.hi : v < r.hi);
  return above && below;
}

gboolean ptsim_number_int64(const char *what, const char *text, int64_t lo, int64_t hi,
                            int64_t *out, GError **error) {
  int64_t v = 0;
  if (ptsim_number_parse_int64(text, &v) && v >= lo && v <= hi) {
    *out = v;
    return TRUE;
  }
  g_autofree char *allowed = ptsim_number_int64_allowed(lo, hi);
  g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
              "%s '%s' is not allowed: expected %s", what, text ? text : "", allowed);
  return FALSE;
}

gboolean ptsim_number_double(const char *what, const char *text, PtsimRange range, double *out,
                             GError **error) {
  double v = 0;
  if (ptsim_number_parse_double(text, &v) && in_range(v, range)) {
    *out = v;
    return TRUE;
  }
  g_autofree char *allowed = ptsim_number_range_allowed(range);
  g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
              "%s '%s' is not allowed: expected %s", what, text ? text : "", allowed);
  return FALSE;
}

gboolean ptsim_number_int64_list(const char *what, const char *text, int64_t lo, int64_t hi,
                                 GArray *out, GError **error) {
  g_return_val_if_fail(out != NULL && g_array_get_element_size(out) == sizeof(gint64), FALSE);
  g_array_set_size(out, 0);
  g_auto(GStrv) parts = g_strsplit(text ? text : "", ",", -1);
  for (char **p = parts; *p; p++) {
    int64_t v = 0;
    if (!ptsim_number_parse_int64(*p, &v) || v < lo || v > hi) {
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                  "%s '%s': '%s' is not allowed: expected a comma-separated list of "
                  "integers, each from %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT,
                  what, text ? text : "", g_strstrip(*p), (gint64)lo, (gint64)hi);
      return FALSE;
    }
    for (guint i = 0; i < out->len; i++)
      if (g_array_index(out, gint64, i) == v) {
        g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                    "%s '%s': %" G_GINT64_FORMAT " is given twice", what, text, (gint64)v);
        return FALSE;
      }
    gint64 value = v;
    g_array_append_val(out, value);
  }
  return TRUE;
}
