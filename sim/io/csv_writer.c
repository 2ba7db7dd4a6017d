/* csv_writer.c — a CSV text field (see csv_writer.h). */
#include "csv_writer.h"

#include <string.h>

void ptsim_csv_append_text(GString *out, const char *text) {
  if (!strpbrk(text, ",\"\r\n")) {
    g_string_append(out, text);
    return;
  }
  g_string_append_c(out, '"');
  for (const char *p = text; *p; p++) {
    if (*p == '"') g_string_append_c(out, '"');
    g_string_append_c(out, *p);
  }
  g_string_append_c(out, '"');
}
