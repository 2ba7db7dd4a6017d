/* csv_table.c — the strict CSV reader of csv_table.h: a byte-level
 * tokenizer that remembers where each cell starts. */
#include "csv_table.h"
#include "config.h"

struct PtsimCsvReader {
  const char *p, *end;
  const char *line_start;
  int64_t line;
  char *label;
};

PtsimCsvReader *ptsim_csv_reader_new(const char *data, gsize len, const char *label) {
  PtsimCsvReader *r = g_new0(PtsimCsvReader, 1);
  r->p = data;
  r->end = data + len;
  /* a UTF-8 byte-order mark is not part of the first cell */
  if (len >= 3 && (guchar)data[0] == 0xEF && (guchar)data[1] == 0xBB && (guchar)data[2] == 0xBF)
    r->p += 3;
  r->line_start = r->p;
  r->line = 1;
  r->label = g_strdup(label ? label : "CSV");
  return r;
}

void ptsim_csv_reader_free(PtsimCsvReader *reader) {
  if (!reader) return;
  g_free(reader->label);
  g_free(reader);
}

const char *ptsim_csv_reader_label(const PtsimCsvReader *reader) { return reader->label; }

static void cell_clear(gpointer p) { g_free(((PtsimCsvCell *)p)->text); }

GArray *ptsim_csv_cells_new(void) {
  GArray *cells = g_array_new(FALSE, TRUE, sizeof(PtsimCsvCell));
  g_array_set_clear_func(cells, cell_clear);
  return cells;
}

static int64_t column(const PtsimCsvReader *r) { return (int64_t)(r->p - r->line_start) + 1; }

static gboolean fail(const PtsimCsvReader *r, GArray *cells, GError **error, const char *what) {
  g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
              "%s:%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT ": %s", r->label, (gint64)r->line,
              (gint64)column(r), what);
  g_array_set_size(cells, 0);
  return FALSE;
}

/* At a line end: "\n", "\r\n", or the end of the data. */
static gboolean at_line_end(const PtsimCsvReader *r) {
  return r->p >= r->end || *r->p == '\n' || (*r->p == '\r' && r->p + 1 < r->end && r->p[1] == '\n');
}

/* Steps over the line end at r->p (at_line_end is TRUE). */
static void next_line(PtsimCsvReader *r) {
  if (r->p >= r->end) return;
  r->p += *r->p == '\r' ? 2 : 1;
  r->line++;
  r->line_start = r->p;
}

/* Skips blank and comment lines; FALSE at the end of the data. */
static gboolean skip_to_record(PtsimCsvReader *r) {
  while (r->p < r->end) {
    if (at_line_end(r)) {
      next_line(r);
    } else if (*r->p == '#') {
      while (!at_line_end(r)) r->p++;
      next_line(r);
    } else {
      return TRUE;
    }
  }
  return FALSE;
}

/* A quoted cell from the opening quote at r->p into TEXT. */
static gboolean quoted_cell(PtsimCsvReader *r, GString *text, GArray *cells, GError **error) {
  r->p++;
  for (;;) {
    if (r->p >= r->end) return fail(r, cells, error, "unterminated quoted cell");
    char c = *r->p;
    if (c == '"') {
      if (r->p + 1 < r->end && r->p[1] == '"') {
        g_string_append_c(text, '"');
        r->p += 2;
        continue;
      }
      r->p++;
      if (!at_line_end(r) && *r->p != ',')
        return fail(r, cells, error, "text after the closing quote of a cell");
      return TRUE;
    }
    if (c == '\0') return fail(r, cells, error, "NUL byte in a cell");
    if (c == '\n' || c == '\r') return fail(r, cells, error, "line break inside a quoted cell");
    g_string_append_c(text, c);
    r->p++;
  }
}

gboolean ptsim_csv_reader_next(PtsimCsvReader *r, GArray *cells, GError **error) {
  g_array_set_size(cells, 0);
  if (!skip_to_record(r)) return FALSE;
  for (;;) {
    PtsimCsvCell cell = {NULL, r->line, column(r)};
    g_autoptr(GString) text = g_string_new(NULL);
    if (r->p < r->end && *r->p == '"') {
      if (!quoted_cell(r, text, cells, error)) return FALSE;
    } else {
      while (!at_line_end(r) && *r->p != ',') {
        if (*r->p == '\0') return fail(r, cells, error, "NUL byte in a cell");
        if (*r->p == '"') return fail(r, cells, error, "a quote inside an unquoted cell");
        if (*r->p == '\r') return fail(r, cells, error, "a carriage return without a line feed");
        g_string_append_c(text, *r->p++);
      }
    }
    cell.text = g_string_free(g_steal_pointer(&text), FALSE);
    g_array_append_val(cells, cell);
    if (r->p < r->end && *r->p == ',') {
      r->p++;
      continue;
    }
    next_line(r);
    return TRUE;
  }
}
