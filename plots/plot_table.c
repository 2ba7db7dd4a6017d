/* plot_table.c — the small delimited-text reader the figure kinds share
 * (sweep CSV, validation CSV, allocator timeline TSV); see plot_int.h.
 *
 * The files ptsim reads for figures are written by ptsim (sweep --csv,
 * validate --format csv, predict --memory-timeline) or by a converter
 * (validate/calibrate_published.py --csv).  validate quotes a cell holding
 * the separator or a quote ("a, b", "" for a quote), as RFC 4180 says; such
 * cells are read, on one line (a quote left open at the line's end is an
 * error, not a cell spanning lines).  Every error names path:line. */
#include <math.h>
#include <string.h>
#include "input.h"
#include "numbers.h"
#include "plot_int.h"

void ptsim_plot_table_free(PtsimPlotTable *t) {
  if (!t) return;
  g_free(t->path);
  if (t->header) g_ptr_array_unref(t->header);
  if (t->rows) g_ptr_array_unref(t->rows);
  if (t->lines) g_array_unref(t->lines);
  if (t->comments) g_ptr_array_unref(t->comments);
  g_free(t);
}

/* Splits LINE at SEP into a new GStrv with each cell stripped; a cell
 * that opens with a quote runs to its closing quote ("" inside is one
 * quote).  NULL (WHY set) on an unterminated quote, text after a closing
 * quote, or a quote inside an unquoted cell. */
static char **split_cells(const char *line, char sep, const char **why) {
  GPtrArray *cells = g_ptr_array_new();
  const char *p = line;
  for (;;) {
    GString *cell = g_string_new(NULL);
    while (*p == ' ' || *p == '\t') p++;
    if (*p == '"') {
      for (p++;; p++) {
        if (*p == 0) {
          *why = "a quoted cell not closed on its line";
          break;
        }
        if (*p == '"' && p[1] == '"') {
          g_string_append_c(cell, '"');
          p++;
        } else if (*p == '"') {
          p++;
          break;
        } else {
          g_string_append_c(cell, *p);
        }
      }
      while (!*why && (*p == ' ' || *p == '\t')) p++;
      if (!*why && *p && *p != sep) *why = "text after the closing quote of a cell";
    } else {
      while (*p && *p != sep) {
        if (*p == '"') *why = "a quote inside an unquoted cell";
        g_string_append_c(cell, *p++);
      }
    }
    g_ptr_array_add(cells, g_strstrip(g_string_free(cell, FALSE)));
    if (*why || *p != sep) break;
    p++;
  }
  g_ptr_array_add(cells, NULL);
  char **out = (char **)g_ptr_array_free(cells, FALSE);
  if (*why) {
    g_strfreev(out);
    return NULL;
  }
  return out;
}

PtsimPlotTable *ptsim_plot_table_read(const char *path, char sep, const char *const *required,
                                      GError **error) {
  g_return_val_if_fail(path != NULL, NULL);
  g_autofree char *contents = NULL;
  if (!ptsim_input_read(path, "table", PTSIM_INPUT_MAX_TABLE, &contents, NULL, error)) return NULL;
  g_autoptr(PtsimPlotTable) t = g_new0(PtsimPlotTable, 1);
  t->path = g_strdup(path);
  t->header = g_ptr_array_new_with_free_func(g_free);
  t->rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
  t->lines = g_array_new(FALSE, FALSE, sizeof(int));
  t->comments = g_ptr_array_new_with_free_func(g_free);
  g_auto(GStrv) lines = g_strsplit(contents, "\n", -1);
  gboolean have_header = FALSE;
  int header_line = 0;
  for (int i = 0; lines[i]; i++) {
    char *line = lines[i];
    size_t len = strlen(line);
    if (len > 0 && line[len - 1] == '\r') line[len - 1] = 0;
    const char *p = line;
    while (*p == ' ' || *p == '\t') p++;
    if (*p == 0) continue;
    if (*p == '#') {
      g_ptr_array_add(t->comments, g_strdup(p + 1));
      continue;
    }
    const char *why = NULL;
    char **cells = split_cells(line, sep, &why);
    if (!cells) {
      g_set_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_INPUT, "%s:%d: %s", path, i + 1, why);
      return NULL;
    }
    if (!have_header) {
      for (char **c = cells; *c; c++) g_ptr_array_add(t->header, g_strdup(*c));
      g_strfreev(cells);
      have_header = TRUE;
      header_line = i + 1;
      continue;
    }
    if (g_strv_length(cells) != t->header->len) {
      g_set_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_INPUT,
                  "%s:%d: %u cells, the header (line %d) names %u columns", path, i + 1,
                  g_strv_length(cells), header_line, t->header->len);
      g_strfreev(cells);
      return NULL;
    }
    g_ptr_array_add(t->rows, cells);
    int n = i + 1;
    g_array_append_val(t->lines, n);
  }
  if (!have_header) {
    g_set_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_INPUT,
                "%s:1: empty file, expected a header line of column names", path);
    return NULL;
  }
  for (const char *const *r = required; r && *r; r++)
    if (ptsim_plot_table_column(t, *r) < 0) {
      g_set_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_INPUT,
                  "%s:%d: the header has no column '%s'", path, header_line, *r);
      return NULL;
    }
  if (t->rows->len == 0) {
    g_set_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_INPUT, "%s:%d: a header but no data rows",
                path, header_line);
    return NULL;
  }
  return g_steal_pointer(&t);
}

int ptsim_plot_table_column(const PtsimPlotTable *t, const char *name) {
  for (guint i = 0; i < t->header->len; i++)
    if (strcmp(g_ptr_array_index(t->header, i), name) == 0) return (int)i;
  return -1;
}

const char *ptsim_plot_table_text(const PtsimPlotTable *t, guint row, int col) {
  g_assert(row < t->rows->len && col >= 0 && (guint)col < t->header->len);
  return ((char **)g_ptr_array_index(t->rows, row))[col];
}

static int row_line(const PtsimPlotTable *t, guint row) {
  return g_array_index(t->lines, int, row);
}

gboolean ptsim_plot_table_double(const PtsimPlotTable *t, guint row, int col, PtsimRange range,
                                 double *out, GError **error) {
  const char *text = ptsim_plot_table_text(t, row, col);
  double v = 0;
  if (!ptsim_number_parse_double(text, &v) || !(range.lo_closed ? v >= range.lo : v > range.lo) ||
      !(isinf(range.hi) || (range.hi_closed ? v <= range.hi : v < range.hi))) {
    g_autofree char *allowed = ptsim_number_range_allowed(range);
    g_set_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_INPUT,
                "%s:%d: column %s: '%s' is not allowed: expected %s", t->path, row_line(t, row),
                (const char *)g_ptr_array_index(t->header, col), text, allowed);
    return FALSE;
  }
  *out = v;
  return TRUE;
}

gboolean ptsim_plot_table_int(const PtsimPlotTable *t, guint row, int col, gint64 *out,
                              GError **error) {
  const char *text = ptsim_plot_table_text(t, row, col);
  int64_t v = 0;
  if (!ptsim_number_parse_int64(text, &v)) {
    g_set_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_INPUT,
                "%s:%d: column %s: '%s' is not an integer", t->path, row_line(t, row),
                (const char *)g_ptr_array_index(t->header, col), text);
    return FALSE;
  }
  *out = v;
  return TRUE;
}

gboolean ptsim_plot_table_comment_value(const PtsimPlotTable *t, const char *key, PtsimRange range,
                                        double *out, GError **error) {
  size_t n = strlen(key);
  *out = NAN;
  for (guint i = 0; i < t->comments->len; i++) {
    const char *c = g_ptr_array_index(t->comments, i);
    while (*c == ' ') c++;
    if (strncmp(c, key, n) != 0 || (c[n] != ' ' && c[n] != '\t')) continue;
    g_autofree char *what = g_strdup_printf("%s: '# %s'", t->path, key);
    return ptsim_number_double(what, c + n + 1, range, out, error);
  }
  return TRUE;
}
