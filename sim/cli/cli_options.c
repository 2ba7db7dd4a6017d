/* cli_options.c — the command-line locale and the command's numeric flags;
 * see cli_options.h.  The locale is why options.c's parse can read
 * non-ASCII text: GOption converts G_OPTION_ARG_STRING values from the
 * locale's charset, which is ASCII in a program that never calls
 * setlocale. */
#include "cli_options.h"

#include <locale.h>

void ptsim_cli_init_locale(void) {
  setlocale(LC_CTYPE, "");
  const char *charset = NULL;
  if (!g_get_charset(&charset) &&
      (g_ascii_strcasecmp(charset, "ANSI_X3.4-1968") == 0 ||
       g_ascii_strcasecmp(charset, "ASCII") == 0 || g_ascii_strcasecmp(charset, "US-ASCII") == 0))
    setlocale(LC_CTYPE, "C.UTF-8");
}

gboolean ptsim_cli_int64_flag(const char *flag, const char *text, int64_t lo, int64_t hi,
                              int64_t *out, GError **error) {
  if (text == NULL) return TRUE;
  return ptsim_number_int64(flag, text, lo, hi, out, error);
}

gboolean ptsim_cli_double_flag(const char *flag, const char *text, PtsimRange range, double *out,
                               GError **error) {
  if (text == NULL) return TRUE;
  return ptsim_number_double(flag, text, range, out, error);
}
