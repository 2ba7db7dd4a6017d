/* options.c — flag parsing and numeric flags; see options.h.
 *
 * Why the locale matters: GOption converts G_OPTION_ARG_STRING values from
 * the locale's charset to UTF-8.  A program that never calls setlocale runs
 * in the "C" locale, whose charset is ASCII, so any byte >= 0x80 ("modèle")
 * fails to convert.  Paths use G_OPTION_ARG_FILENAME (bytes, no
 * conversion); everything else is text in the user's charset. */
#include "options.h"

#include <string.h>

/* The flag a value belongs to: "--flag=value" names itself, a bare value
 * names the argument before it. */
static char *flag_of(char **args, int i) {
  const char *arg = args[i];
  if (arg[0] == '-' && strchr(arg, '=')) return g_strndup(arg, (gsize)(strchr(arg, '=') - arg));
  if (i > 0 && args[i - 1][0] == '-') return g_strdup(args[i - 1]);
  return g_strdup("an argument");
}

gboolean ptsim_options_parse(GOptionContext *context, int *argc, char ***argv, GError **error) {
  /* GOption reorders *argv: keep the original order to find the culprit. */
  g_auto(GStrv) original = g_strdupv(*argv);
  g_autoptr(GError) local = NULL;
  if (g_option_context_parse(context, argc, argv, &local)) return TRUE;
  if (local->domain == G_CONVERT_ERROR) {
    const char *charset = NULL;
    g_get_charset(&charset);
    for (int i = 0; original[i]; i++) {
      g_autofree char *converted = g_locale_to_utf8(original[i], -1, NULL, NULL, NULL);
      if (converted) continue;
      g_autofree char *flag = flag_of(original, i);
      g_autofree char *shown = g_utf8_make_valid(original[i], -1);
      g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                  "%s '%s': not valid text in the locale's character set (%s); "
                  "write it in UTF-8 or set LC_ALL/LANG to the charset it uses",
                  flag, shown, charset);
      return FALSE;
    }
  }
  g_propagate_error(error, g_steal_pointer(&local));
  return FALSE;
}

gboolean ptsim_option_number_set(const PtsimOptionNumber *table, gsize n, const char *flag,
                                 const char *text, gpointer opts, GError **error) {
  for (gsize i = 0; i < n; i++) {
    const PtsimOptionNumber *row = &table[i];
    if (strcmp(row->flag, flag) != 0) continue;
    gpointer field = G_STRUCT_MEMBER_P(opts, row->offset);
    if (row->decimal) {
      PtsimOptionDouble *d = field;
      if (!ptsim_number_double(flag, text, row->range, &d->value, error)) return FALSE;
      d->given = TRUE;
    } else {
      PtsimOptionInt *v = field;
      if (!ptsim_number_int64(flag, text, row->lo, row->hi, &v->value, error)) return FALSE;
      v->given = TRUE;
    }
    return TRUE;
  }
  g_critical("%s: not a numeric flag of its table", flag);
  return FALSE;
}

gboolean ptsim_options_parse_flags(GOptionContext *context, const char *const *flags,
                                   GError **error) {
  /* GOption wants a program name first and may reorder and drop entries:
   * it gets a shallow copy, the strings stay the caller's */
  guint n = g_strv_length((char **)flags);
  g_autofree char **argv = g_new0(char *, n + 2);
  argv[0] = (char *)"ptsim";
  for (guint i = 0; i < n; i++) argv[i + 1] = (char *)flags[i];
  int argc = (int)n + 1;
  char **args = argv;
  if (!ptsim_options_parse(context, &argc, &args, error)) return FALSE;
  if (argc > 1) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "unexpected argument '%s'", args[1]);
    return FALSE;
  }
  return TRUE;
}
