/* run_csv.c — measured-runs CSV into PtsimRunCsv.
 *
 * What it is: a byte-level RFC 4180 tokenizer that remembers where every
 * cell starts (line, column), and a row reader that looks the documented
 * columns up by name and reads their cells strictly.  The format and the
 * failure behaviour are in run_csv.h; the columns in validate/README.md.
 *
 * What it is not: a general CSV library (no other separators, no type
 * guessing for unknown columns: they stay text). */
#include "run_csv.h"
#include "numbers.h"
#include "input.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The domain name keeps its dashes (clang-format 14 would space them). */
/* clang-format off */
G_DEFINE_QUARK(ptsim-run-csv-error-quark, ptsim_run_csv_error)
/* clang-format on */

/* ---- the tokenizer ---- */

typedef struct {
  char *text;   /* the cell, unquoted (transfer full) */
  int64_t line; /* where it starts, 1-based */
  int64_t col;
} Cell;

static void cell_clear(gpointer p) { g_free(((Cell *)p)->text); }

typedef struct {
  const char *p, *end;
  const char *line_start;
  int64_t line;
  const char *name;
} Lexer;

#define lex_error(lx, l, c, ...)                                                             \
  do {                                                                                       \
    g_autofree char *what_ = g_strdup_printf(__VA_ARGS__);                                   \
    g_set_error(error, PTSIM_RUN_CSV_ERROR, PTSIM_RUN_CSV_ERROR_PARSE,                       \
                "%s:%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT ": %s", (lx)->name, (gint64)(l), \
                (gint64)(c), what_);                                                         \
  } while (0)

static int64_t lex_col(const Lexer *lx) { return (int64_t)(lx->p - lx->line_start) + 1; }

static void lex_newline(Lexer *lx) { /* lx->p is on '\n' */
  lx->p++;
  lx->line++;
  lx->line_start = lx->p;
}

static gboolean at_row_end(const Lexer *lx) {
  return lx->p >= lx->end || *lx->p == '\n' ||
         (*lx->p == '\r' && (lx->p + 1 >= lx->end || lx->p[1] == '\n'));
}

/* Reads one record into CELLS (emptied first).  Returns FALSE at the end
 * of the data (CELLS empty) or on error (ERROR set). */
static gboolean lex_record(Lexer *lx, GArray *cells, GError **error) {
  g_array_set_size(cells, 0);
  /* blank lines between records */
  while (lx->p < lx->end) {
    if (*lx->p == '\n') {
      lex_newline(lx);
    } else if (*lx->p == '\r' && lx->p + 1 < lx->end && lx->p[1] == '\n') {
      lx->p++;
      lex_newline(lx);
    } else {
      break;
    }
  }
  if (lx->p >= lx->end) return FALSE;
  for (;;) {
    Cell cell = {NULL, lx->line, lex_col(lx)};
    g_autoptr(GString) text = g_string_new(NULL);
    if (lx->p < lx->end && *lx->p == '"') {
      lx->p++;
      for (;;) {
        if (lx->p >= lx->end) {
          lex_error(lx, cell.line, cell.col, "unterminated quoted field");
          return FALSE;
        }
        char c = *lx->p;
        if (c == '"') {
          if (lx->p + 1 < lx->end && lx->p[1] == '"') {
            g_string_append_c(text, '"');
            lx->p += 2;
            continue;
          }
          lx->p++;
          break;
        }
        if (c == '\0') {
          lex_error(lx, lx->line, lex_col(lx), "NUL byte in a field");
          return FALSE;
        }
        g_string_append_c(text, c);
        if (c == '\n')
          lex_newline(lx);
        else
          lx->p++;
      }
      if (!at_row_end(lx) && *lx->p != ',') {
        lex_error(lx, lx->line, lex_col(lx), "text after the closing quote of a field");
        return FALSE;
      }
    } else {
      while (lx->p < lx->end && *lx->p != ',' && !at_row_end(lx)) {
        if (*lx->p == '\0') {
          lex_error(lx, lx->line, lex_col(lx), "NUL byte in a field");
          return FALSE;
        }
        g_string_append_c(text, *lx->p++);
      }
    }
    cell.text = g_string_free(g_steal_pointer(&text), FALSE);
    g_array_append_val(cells, cell);
    if (lx->p < lx->end && *lx->p == ',') {
      lx->p++;
      continue;
    }
    /* end of the record */
    if (lx->p < lx->end && *lx->p == '\r') lx->p++;
    if (lx->p < lx->end && *lx->p == '\n') lex_newline(lx);
    return TRUE;
  }
}

/* ---- cells ---- */

static char *trimmed(const char *text) { return g_strstrip(g_strdup(text)); }

/* Empty or "not_stated": unknown. */
static gboolean is_unknown(const char *t) {
  return t[0] == '\0' || g_ascii_strcasecmp(t, "not_stated") == 0;
}

#define cell_error(cell, column, ...)                                                \
  do {                                                                               \
    g_autofree char *what_ = g_strdup_printf(__VA_ARGS__);                           \
    g_set_error(error, PTSIM_RUN_CSV_ERROR, PTSIM_RUN_CSV_ERROR_PARSE,               \
                "%s:%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT ": column %s: %s", name, \
                (gint64)(cell)->line, (gint64)(cell)->col, (column), what_);         \
  } while (0)

/* Splits "~32 (approx)" into the number's text (transfer full) and whether
 * it is approximate: a leading '~', or words after a blank or '('. */
static char *number_part(const char *t, gboolean *approx) {
  gboolean tilde = *t == '~';
  const char *s = tilde ? t + 1 : t;
  size_t len = strcspn(s, " \t(");
  if (tilde || s[len] != '\0') *approx = TRUE;
  return g_strndup(s, len);
}

/* A number cell; *out untouched (unknown) when empty / not_stated.  The
 * number itself goes through the one strict parser (numbers.h): "0x10",
 * "inf" and "1e999" are not numbers here either. */
static gboolean cell_double(const Cell *cell, const char *column, const char *name, double *out,
                            gboolean *approx, GError **error) {
  g_autofree char *t = trimmed(cell->text);
  if (is_unknown(t)) return TRUE;
  gboolean words = FALSE;
  g_autofree char *number = number_part(t, &words);
  double v = 0;
  if (!ptsim_number_parse_double(number, &v)) {
    cell_error(cell, column, "'%s' is not a number", t);
    return FALSE;
  }
  if (words) *approx = TRUE;
  *out = v;
  return TRUE;
}

static gboolean cell_count(const Cell *cell, const char *column, const char *name, int64_t *out,
                           gboolean *approx, GError **error) {
  g_autofree char *t = trimmed(cell->text);
  if (is_unknown(t)) return TRUE;
  gboolean words = FALSE;
  g_autofree char *number = number_part(t, &words);
  int64_t v = 0;
  if (!ptsim_number_parse_int64(number, &v) || !g_ascii_isdigit(number[0]) || v >= G_MAXINT64 / 2) {
    cell_error(cell, column, "'%s' is not a whole number", t);
    return FALSE;
  }
  if (v < 1) {
    cell_error(cell, column,
               "'%s' is not allowed: expected a positive "
               "integer",
               t);
    return FALSE;
  }
  if (words) *approx = TRUE;
  *out = v;
  return TRUE;
}

/* Index of T (case-insensitive) in CHOICES "a|b|c"; -1 unknown. */
static gboolean cell_word(const Cell *cell, const char *column, const char *name,
                          const char *choices, int *out, GError **error) {
  g_autofree char *t = trimmed(cell->text);
  if (is_unknown(t)) return TRUE;
  g_auto(GStrv) list = g_strsplit(choices, "|", -1);
  for (int i = 0; list[i] != NULL; i++) {
    if (g_ascii_strcasecmp(t, list[i]) == 0) {
      *out = i;
      return TRUE;
    }
  }
  cell_error(cell, column, "'%s' is not allowed: expected %s or not_stated", t, choices);
  return FALSE;
}

/* ---- columns ---- */

typedef enum {
  C_MODEL,
  C_HW,
  C_GPU,
  C_NUM_GPUS,
  C_TP,
  C_PP,
  C_DP,
  C_DP_DERIVED,
  C_CP,
  C_VP,
  C_VP_DERIVED,
  C_MBS,
  C_GBS,
  C_SEQ_LEN,
  C_RECOMPUTE,
  C_PRECISION,
  C_STEP_TIME_S,
  C_ITERATION_TIME_MS,
  C_TFLOPS,
  C_ACHIEVED_TFLOPS,
  C_MAX_ALLOCATED_MB,
  C_MAX_RESERVED_MB,
  C_OOM,
  C_COUNT
} ColumnId;

static const char *const column_names[C_COUNT] = {"model",
                                                  "hw",
                                                  "gpu",
                                                  "num_gpus",
                                                  "tp",
                                                  "pp",
                                                  "dp",
                                                  "dp_derived",
                                                  "cp",
                                                  "vp",
                                                  "vp_derived",
                                                  "mbs",
                                                  "gbs",
                                                  "seq_len",
                                                  "recompute",
                                                  "precision",
                                                  "step_time_s",
                                                  "iteration_time_ms",
                                                  "tflops_per_gpu",
                                                  "achieved_tflops_per_gpu",
                                                  "max_allocated_mb",
                                                  "max_reserved_mb",
                                                  "oom"};

/* The cell of column ID in CELLS, or NULL when the file has no such
 * column or the cell is unknown (empty / not_stated). */
static const Cell *known(const GArray *cells, const int *index, ColumnId id) {
  if (index[id] < 0) return NULL;
  const Cell *c = &g_array_index(cells, Cell, index[id]);
  g_autofree char *t = trimmed(c->text);
  return is_unknown(t) ? NULL : c;
}

static void run_clear(gpointer p) {
  PtsimRun *r = p;
  g_free(r->model);
  g_free(r->hw);
  g_strfreev(r->cells);
}

static gboolean read_row(const GArray *cells, const int *index, const char *name, PtsimRun *r,
                         GError **error) {
  gboolean *ap = &r->approximate;
  const Cell *c;
  if ((c = known(cells, index, C_MODEL)) != NULL) r->model = trimmed(c->text);
  if ((c = known(cells, index, C_HW)) != NULL || (c = known(cells, index, C_GPU)) != NULL)
    r->hw = trimmed(c->text);

  static const struct {
    ColumnId first, second; /* second: used when first is unknown */
    size_t offset;
  } counts[] = {
      {C_NUM_GPUS, C_COUNT, G_STRUCT_OFFSET(PtsimRun, num_gpus)},
      {C_TP, C_COUNT, G_STRUCT_OFFSET(PtsimRun, tp)},
      {C_PP, C_COUNT, G_STRUCT_OFFSET(PtsimRun, pp)},
      {C_DP, C_DP_DERIVED, G_STRUCT_OFFSET(PtsimRun, dp)},
      {C_CP, C_COUNT, G_STRUCT_OFFSET(PtsimRun, cp)},
      {C_VP, C_VP_DERIVED, G_STRUCT_OFFSET(PtsimRun, vp)},
      {C_MBS, C_COUNT, G_STRUCT_OFFSET(PtsimRun, mbs)},
      {C_GBS, C_COUNT, G_STRUCT_OFFSET(PtsimRun, gbs)},
      {C_SEQ_LEN, C_COUNT, G_STRUCT_OFFSET(PtsimRun, seq_len)},
  };
  for (size_t k = 0; k < G_N_ELEMENTS(counts); k++) {
    int64_t *slot = G_STRUCT_MEMBER_P(r, counts[k].offset);
    ColumnId id = counts[k].first;
    c = known(cells, index, id);
    if (c == NULL && counts[k].second != C_COUNT) {
      id = counts[k].second;
      c = known(cells, index, id);
    }
    if (c != NULL && !cell_count(c, column_names[id], name, slot, ap, error)) return FALSE;
  }

  /* Measured values no run can exceed (in the first column's unit): a step
   * of 1e7 s (116 days), 1e5 TFLOP/s per GPU (100 times any GPU's peak),
   * 1e9 MB (1 PB) of memory; a step takes time. */
  static const struct {
    ColumnId first, second;
    double scale_second; /* unit of the second column to the first's */
    size_t offset;
    double max;
    gboolean positive;
  } measures[] = {
      {C_STEP_TIME_S, C_ITERATION_TIME_MS, 1e-3, G_STRUCT_OFFSET(PtsimRun, step_time_s), 1e7, TRUE},
      {C_TFLOPS, C_ACHIEVED_TFLOPS, 1.0, G_STRUCT_OFFSET(PtsimRun, tflops_per_gpu), 1e5, FALSE},
      {C_MAX_ALLOCATED_MB, C_COUNT, 1.0, G_STRUCT_OFFSET(PtsimRun, max_allocated_mb), 1e9, FALSE},
      {C_MAX_RESERVED_MB, C_COUNT, 1.0, G_STRUCT_OFFSET(PtsimRun, max_reserved_mb), 1e9, FALSE},
  };
  for (size_t k = 0; k < G_N_ELEMENTS(measures); k++) {
    double *slot = G_STRUCT_MEMBER_P(r, measures[k].offset);
    ColumnId id = measures[k].first;
    double scale = 1.0;
    c = known(cells, index, id);
    if (c == NULL && measures[k].second != C_COUNT) {
      id = measures[k].second;
      scale = measures[k].scale_second;
      c = known(cells, index, id);
    }
    if (c == NULL) continue;
    double v = NAN;
    if (!cell_double(c, column_names[id], name, &v, ap, error)) return FALSE;
    if (v < 0) {
      cell_error(c, column_names[id], "'%s' is negative", c->text);
      return FALSE;
    }
    if (v * scale > measures[k].max || (measures[k].positive && v == 0)) {
      cell_error(c, column_names[id], "'%s' is not allowed: expected a number in %s0, %g]", c->text,
                 measures[k].positive ? "(" : "[", measures[k].max / scale);
      return FALSE;
    }
    *slot = v * scale;
  }

  int w = -1;
  if ((c = known(cells, index, C_RECOMPUTE)) != NULL) {
    if (!cell_word(c, "recompute", name, "none|selective|full", &w, error)) return FALSE;
    r->recompute = w == 0   ? PTSIM_RECOMPUTE_NONE
                   : w == 1 ? PTSIM_RECOMPUTE_SELECTIVE
                            : PTSIM_RECOMPUTE_FULL;
  }
  if ((c = known(cells, index, C_PRECISION)) != NULL) {
    if (!cell_word(c, "precision", name, "bf16|fp16|fp8", &w, error)) return FALSE;
    r->precision = w == 0   ? PTSIM_PRECISION_BF16
                   : w == 1 ? PTSIM_PRECISION_FP16
                            : PTSIM_PRECISION_FP8;
  }
  if ((c = known(cells, index, C_OOM)) != NULL) {
    if (!cell_word(c, "oom", name, "0|1|false|true|no|yes", &w, error)) return FALSE;
    r->oom = w % 2;
  }
  return TRUE;
}

/* ---- entry points ---- */

void ptsim_run_csv_free(PtsimRunCsv *csv) {
  if (csv == NULL) return;
  g_free(csv->path);
  g_strfreev(csv->columns);
  g_array_unref(csv->runs);
  g_free(csv);
}

PtsimRunCsv *ptsim_run_csv_parse(const char *data, gsize len, const char *name, GError **error) {
  g_return_val_if_fail(data != NULL || len == 0, NULL);
  g_return_val_if_fail(error == NULL || *error == NULL, NULL);
  if (name == NULL) name = "<csv>";
  Lexer lx = {data, data + len, data, 1, name};
  if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0) /* BOM */
    lx.p = lx.line_start = data + 3;

  g_autoptr(GArray) cells = g_array_new(FALSE, TRUE, sizeof(Cell));
  g_array_set_clear_func(cells, cell_clear);
  g_autoptr(GError) local = NULL;
  if (!lex_record(&lx, cells, &local)) {
    if (local != NULL)
      g_propagate_error(error, g_steal_pointer(&local));
    else
      g_set_error(error, PTSIM_RUN_CSV_ERROR, PTSIM_RUN_CSV_ERROR_PARSE,
                  "%s:1:1: no header row (an empty file)", name);
    return NULL;
  }

  /* the header */
  int index[C_COUNT];
  for (int k = 0; k < C_COUNT; k++) index[k] = -1;
  guint ncols = cells->len;
  g_autoptr(GStrvBuilder) header = g_strv_builder_new();
  g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
  gboolean documented = FALSE;
  for (guint k = 0; k < ncols; k++) {
    const Cell *c = &g_array_index(cells, Cell, k);
    char *col = trimmed(c->text);
    g_ptr_array_add(names, col);
    if (col[0] == '\0') {
      lex_error(&lx, c->line, c->col, "empty column name in the header");
      return NULL;
    }
    if (g_hash_table_contains(seen, col)) {
      lex_error(&lx, c->line, c->col,
                "column '%s' appears twice in the "
                "header",
                col);
      return NULL;
    }
    g_hash_table_add(seen, col);
    g_strv_builder_add(header, col);
    for (int id = 0; id < C_COUNT; id++)
      if (strcmp(col, column_names[id]) == 0) {
        index[id] = (int)k;
        documented = TRUE;
      }
  }
  if (!documented) {
    const Cell *c = &g_array_index(cells, Cell, 0);
    lex_error(&lx, c->line, c->col,
              "the header names none of the documented columns (model, "
              "num_gpus, tp, ...; see validate/README.md)");
    return NULL;
  }

  g_autoptr(PtsimRunCsv) csv = g_new0(PtsimRunCsv, 1);
  csv->path = g_strdup(name);
  csv->columns = g_strv_builder_end(header);
  csv->runs = g_array_new(FALSE, TRUE, sizeof(PtsimRun));
  g_array_set_clear_func(csv->runs, run_clear);

  while (lex_record(&lx, cells, &local)) {
    const Cell *first = &g_array_index(cells, Cell, 0);
    if (cells->len != ncols) {
      /* where the first extra cell starts, or where the short row ends */
      const Cell *last = &g_array_index(cells, Cell, cells->len - 1);
      const Cell *at = cells->len > ncols ? &g_array_index(cells, Cell, ncols) : last;
      int64_t col = cells->len > ncols ? at->col : at->col + (int64_t)strlen(at->text);
      lex_error(&lx, at->line, col, "row has %u cell(s), the header has %u", cells->len, ncols);
      return NULL;
    }
    PtsimRun r;
    memset(&r, 0, sizeof r);
    r.num_gpus = r.tp = r.pp = r.dp = r.cp = r.vp = -1;
    r.mbs = r.gbs = r.seq_len = -1;
    r.recompute = r.precision = r.oom = -1;
    r.step_time_s = r.tflops_per_gpu = NAN;
    r.max_allocated_mb = r.max_reserved_mb = NAN;
    r.line = first->line;
    g_autoptr(GStrvBuilder) row = g_strv_builder_new();
    for (guint k = 0; k < cells->len; k++)
      g_strv_builder_add(row, g_array_index(cells, Cell, k).text);
    r.cells = g_strv_builder_end(row);
    if (!read_row(cells, index, name, &r, error)) {
      run_clear(&r);
      return NULL;
    }
    g_array_append_val(csv->runs, r);
  }
  if (local != NULL) {
    g_propagate_error(error, g_steal_pointer(&local));
    return NULL;
  }
  return g_steal_pointer(&csv);
}

PtsimRunCsv *ptsim_run_csv_read_file(const char *path, GError **error) {
  g_return_val_if_fail(path != NULL, NULL);
  g_return_val_if_fail(error == NULL || *error == NULL, NULL);
  g_autofree char *data = NULL;
  gsize len = 0;
  g_autoptr(GError) local = NULL;
  if (!ptsim_input_read(path, "runs CSV", PTSIM_INPUT_MAX_TABLE, &data, &len, &local)) {
    g_set_error(error, PTSIM_RUN_CSV_ERROR, PTSIM_RUN_CSV_ERROR_NOT_FOUND, "%s", local->message);
    return NULL;
  }
  return ptsim_run_csv_parse(data, len, path, error);
}

int ptsim_run_csv_column(const PtsimRunCsv *csv, const char *name) {
  g_return_val_if_fail(csv != NULL && name != NULL, -1);
  for (int k = 0; csv->columns[k] != NULL; k++)
    if (strcmp(csv->columns[k], name) == 0) return k;
  return -1;
}

const char *ptsim_run_csv_cell(const PtsimRunCsv *csv, const PtsimRun *run, const char *name) {
  g_return_val_if_fail(csv != NULL && run != NULL, NULL);
  int k = ptsim_run_csv_column(csv, name);
  return k < 0 ? NULL : run->cells[k];
}
