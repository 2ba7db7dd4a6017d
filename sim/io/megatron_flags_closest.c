/* megatron_flags_closest.c — the known Megatron-LM flags closest to an
 * unknown one, for "did you mean" (megatron_flags.h): a typo's edit
 * distance, or the same flag with its parts abbreviated. */
#include "megatron_flags.h"

#include "edit_distance.h"

#include <string.h>

/* Edit distance between A and B, each at most 63 bytes compared (the
 * bound keeps a huge unknown token cheap against every flag), '_' and '-'
 * the same: argparse spells dest names with '_', users type them. */
static int distance(const char *a, const char *b) {
  g_autofree char *x = g_strndup(a, 63), *y = g_strndup(b, 63);
  return (int)ptsim_edit_distance(x, y, TRUE);
}

/* "--use-dist-optimizer" for "--use-distributed-optimizer": as many
 * '-'-separated parts, each a prefix of the other's. */
static gboolean abbreviates(const char *key, const char *name) {
  g_auto(GStrv) a = g_strsplit_set(key + 2, "-_", -1), b = g_strsplit(name + 2, "-", -1);
  if (g_strv_length(a) != g_strv_length(b)) return FALSE;
  for (guint i = 0; a[i]; i++)
    if (a[i][0] == '\0' || !g_str_has_prefix(b[i], a[i])) return FALSE;
  return TRUE;
}

char *ptsim_megatron_flag_closest(const char *name, gsize len) {
  g_autofree char *key = g_strndup(name, len);
  /* a typo, not another flag: at most a quarter of the name after "--" wrong */
  int limit = MAX(1, ((int)len - 2) / 4), best = limit + 1;
  GString *out = g_string_new(NULL);
  gsize count = 0;
  const PtsimMegatronFlag *table = ptsim_megatron_flags(&count);
  for (int pass = 0; pass < 2; pass++) /* the best distance, then the names at it */
    for (gsize k = 0; k < count; k++) {
      int d = distance(key, table[k].name);
      if (g_str_has_prefix(key, "--") && abbreviates(key, table[k].name)) d = MIN(d, limit);
      if (pass == 0 && d < best) best = d;
      if (pass == 1 && d == best && out->len < 200)
        g_string_append_printf(out, "%s%s", out->len ? " or " : "", table[k].name);
    }
  return g_string_free(out, out->len == 0);
}
