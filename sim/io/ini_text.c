/* ini_text.c — an .ini file's bytes checked before GKeyFile reads them; see
 * ini_text.h.  Lines are split as GKeyFile splits them: leading blanks
 * skipped, '#' a comment, "[name]" a section, "key = value" a key. */
#include "ini_text.h"

#include <string.h>

#include "config.h"

static gboolean fail(GError **error, const char *path, gsize line, const char *format, ...)
    G_GNUC_PRINTF(4, 5);

static gboolean fail(GError **error, const char *path, gsize line, const char *format, ...) {
  va_list args;
  va_start(args, format);
  g_autofree char *what = g_strdup_vprintf(format, args);
  va_end(args);
  g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE, "%s:%" G_GSIZE_FORMAT ": %s",
              path, line, what);
  return FALSE;
}

/* The encoding: a byte-order mark or NUL bytes say UTF-16/32 or a binary
 * file; bytes that are not UTF-8 say another 8-bit encoding. */
static gboolean check_encoding(const char *path, const char *text, gsize len, GError **error) {
  const guchar *u = (const guchar *)text;
  if (len >= 3 && u[0] == 0xEF && u[1] == 0xBB && u[2] == 0xBF)
    return fail(error, path, 1,
                "starts with a UTF-8 byte-order mark: save it as UTF-8 without one");
  if (len >= 2 && ((u[0] == 0xFF && u[1] == 0xFE) || (u[0] == 0xFE && u[1] == 0xFF)))
    return fail(error, path, 1, "UTF-16 text (a byte-order mark): ptsim reads UTF-8 .ini files");
  gsize line = 1;
  for (gsize i = 0; i < len; i++) {
    if (text[i] == '\n') line++;
    if (text[i] == '\0')
      return fail(error, path, line,
                  i < 4 ? "a NUL byte (UTF-16 or UTF-32 text?): ptsim reads UTF-8 .ini files"
                        : "a NUL byte: not a text file (a value would be cut short at it)");
  }
  const char *end = NULL;
  if (!g_utf8_validate(text, (gssize)len, &end)) {
    line = 1;
    for (const char *p = text; p < end; p++) line += *p == '\n';
    return fail(error, path, line, "bytes that are not UTF-8: ptsim reads UTF-8 .ini files");
  }
  return TRUE;
}

gboolean ptsim_ini_text_check(const char *path, const char *text, gsize len, GError **error) {
  if (!check_encoding(path, text, len, error)) return FALSE;
  /* section -> its line; "section\nkey" -> the key's line */
  g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  g_autofree char *group = NULL;
  gsize line = 0;
  for (const char *p = text; p < text + len;) {
    const char *nl = memchr(p, '\n', (gsize)(text + len - p));
    const char *eol = nl ? nl : text + len;
    line++;
    const char *s = p;
    while (s < eol && g_ascii_isspace(*s)) s++;
    if (s < eol && *s == '[') {
      const char *close = memchr(s, ']', (gsize)(eol - s));
      if (close) {
        g_free(group);
        group = g_strndup(s + 1, (gsize)(close - s - 1));
        gpointer first = g_hash_table_lookup(seen, group);
        if (first)
          return fail(error, path, line,
                      "[%s] again (first at line %" G_GSIZE_FORMAT "): give a section once", group,
                      GPOINTER_TO_SIZE(first));
        g_hash_table_insert(seen, g_strdup(group), GSIZE_TO_POINTER(line));
      }
    } else if (s < eol && *s != '#' && group) {
      const char *eq = memchr(s, '=', (gsize)(eol - s));
      if (eq) {
        const char *k = eq;
        while (k > s && g_ascii_isspace(k[-1])) k--;
        g_autofree char *key = g_strndup(s, (gsize)(k - s));
        g_autofree char *id = g_strconcat(group, "\n", key, NULL);
        gpointer first = g_hash_table_lookup(seen, id);
        if (first)
          return fail(error, path, line,
                      "[%s] %s again (first at line %" G_GSIZE_FORMAT "): give a key once", group,
                      key, GPOINTER_TO_SIZE(first));
        g_hash_table_insert(seen, g_steal_pointer(&id), GSIZE_TO_POINTER(line));
      }
    }
    p = nl ? nl + 1 : text + len;
  }
  return TRUE;
}
