/* kernel_tables.c — the CSV files of hw_profiles/kernels/ into per-GPU
 * kernel tables; the contract is in kernel_tables.h, the columns in kernel_tables_schema.c.
 *
 * A file is read in three steps: its header against the schema, each
 * record into a parsed row (every cell checked, then the row's own
 * consistency), and the rows applied to copies of the GPUs' tables, which
 * replace the originals only when the whole file went in — so a failed
 * file leaves nothing behind. */
#include "kernel_tables.h"

#include <math.h>
#include <string.h>
#include "config.h"
#include "csv_table.h"
#include "input.h"
#include "kernel_tables_int.h"
#include "numbers.h"

/* Two numbers of one row that restate each other agree within this. */
#define KERNEL_RESTATE_TOLERANCE 0.02

typedef struct {
  char *where, *what, *label; /* (owned) */
  int64_t line;
  gboolean used;
} Source;

typedef struct {
  const char *gpu, *series, *source, *marker, *label; /* interned in `strings` */
  int64_t line;
  double x, y;
} StoredRow;

struct PtsimKernelTables {
  GHashTable *sources;                   /* key -> Source */
  GStringChunk *strings;                 /* the rows' names */
  GArray *rows[PTSIM_KERNEL_KIND_COUNT]; /* StoredRow */
  GHashTable *tables;                    /* gpu -> PtsimKernelTable */
  GHashTable *points;                    /* point id (point_id) -> "FILE:LINE" of its row */
};

static void source_free(gpointer p) {
  Source *s = p;
  g_free(s->where);
  g_free(s->what);
  g_free(s->label);
  g_free(s);
}

PtsimKernelTables *ptsim_kernel_tables_new(void) {
  PtsimKernelTables *t = g_new0(PtsimKernelTables, 1);
  t->sources = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, source_free);
  t->strings = g_string_chunk_new(4096);
  for (int k = 0; k < PTSIM_KERNEL_KIND_COUNT; k++)
    t->rows[k] = g_array_new(FALSE, TRUE, sizeof(StoredRow));
  t->tables = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  t->points = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  return t;
}

void ptsim_kernel_tables_free(PtsimKernelTables *t) {
  if (!t) return;
  g_hash_table_unref(t->sources);
  g_string_chunk_free(t->strings);
  for (int k = 0; k < PTSIM_KERNEL_KIND_COUNT; k++) g_array_unref(t->rows[k]);
  g_hash_table_unref(t->tables);
  g_hash_table_unref(t->points);
  g_free(t);
}

const char *ptsim_kernel_tables_file(PtsimKernelKind kind) {
  return ptsim_kernel_schema(kind)->file;
}

/* ---- errors ---- */

#define row_error(label, line, ...)                                             \
  do {                                                                          \
    g_autofree char *what_ = g_strdup_printf(__VA_ARGS__);                      \
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,            \
                "%s:%" G_GINT64_FORMAT ": %s", (label), (gint64)(line), what_); \
  } while (0)

#define cell_error(label, cell, column, ...)                                            \
  do {                                                                                  \
    g_autofree char *what_ = g_strdup_printf(__VA_ARGS__);                              \
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,                    \
                "%s:%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT ": column %s: %s", (label), \
                (gint64)(cell)->line, (gint64)(cell)->col, (column), what_);            \
  } while (0)

/* ---- names and headers ---- */

/* A GPU, series or source name: [a-z0-9], then [a-z0-9._-], < PTSIM_KERNEL_NAME bytes. */
static gboolean valid_name(const char *s) {
  size_t len = strlen(s);
  if (len == 0 || len >= PTSIM_KERNEL_NAME || !(g_ascii_islower(s[0]) || g_ascii_isdigit(s[0])))
    return FALSE;
  for (const char *c = s; *c; c++)
    if (!(g_ascii_islower(*c) || g_ascii_isdigit(*c) || *c == '.' || *c == '_' || *c == '-'))
      return FALSE;
  return TRUE;
}

/* The record holding the header: exactly NAMES (N of them), in order. */
static gboolean check_header(PtsimCsvReader *reader, GArray *cells, const char *const *names,
                             guint n, GError **error) {
  const char *label = ptsim_csv_reader_label(reader);
  g_autoptr(GString) want = g_string_new(NULL);
  for (guint i = 0; i < n; i++) g_string_append_printf(want, "%s%s", i ? "," : "", names[i]);
  if (!ptsim_csv_reader_next(reader, cells, error)) {
    if (error && !*error)
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                  "%s: no header row; expected %s", label, want->str);
    return FALSE;
  }
  for (guint i = 0; i < MAX(n, cells->len); i++) {
    const PtsimCsvCell *cell = &g_array_index(cells, PtsimCsvCell, MIN(i, cells->len - 1));
    if (i < n && i < cells->len && strcmp(cell->text, names[i]) == 0) continue;
    /* a missing column is pointed at the end of the header */
    int64_t col = i < cells->len ? cell->col : cell->col + (int64_t)strlen(cell->text);
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                "%s:%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT ": the header is not %s (column %u %s)",
                label, (gint64)cell->line, (gint64)col, want->str, i + 1,
                i >= cells->len ? "is missing"
                : i >= n        ? "is one too many"
                                : "differs");
    return FALSE;
  }
  return TRUE;
}

static gboolean check_cell_count(const char *label, GArray *cells, guint n, GError **error) {
  if (cells->len == n) return TRUE;
  row_error(label, g_array_index(cells, PtsimCsvCell, 0).line, "%u cells, the header has %u",
            cells->len, n);
  return FALSE;
}

/* ---- sources ---- */

/* OWNER/REPO@COMMIT:PATH, the commit 7 to 40 hex digits. */
static gboolean valid_repo_path(const char *s) {
  const char *slash = strchr(s, '/'), *at = strchr(s, '@'), *colon;
  if (!slash || !at || slash == s || at < slash + 2) return FALSE;
  for (const char *c = s; c < at; c++)
    if (!(g_ascii_isalnum(*c) || *c == '-' || *c == '_' || *c == '.' || (*c == '/' && c == slash)))
      return FALSE;
  colon = strchr(at, ':');
  if (!colon || colon - at - 1 < 7 || colon - at - 1 > 40 || colon[1] == '\0') return FALSE;
  for (const char *c = at + 1; c < colon; c++)
    if (!g_ascii_isxdigit(*c)) return FALSE;
  for (const char *c = colon + 1; *c; c++)
    if (g_ascii_isspace(*c)) return FALSE;
  return TRUE;
}

static gboolean valid_url(const char *s) {
  if (!g_str_has_prefix(s, "https://") || s[8] == '\0') return FALSE;
  for (const char *c = s; *c; c++)
    if (g_ascii_isspace(*c) || g_ascii_iscntrl(*c)) return FALSE;
  return TRUE;
}

gboolean ptsim_kernel_tables_add_sources(PtsimKernelTables *t, const char *data, gsize len,
                                         const char *label, GError **error) {
  static const char *const names[] = {"key", "where", "what"};
  g_autoptr(PtsimCsvReader) reader = ptsim_csv_reader_new(data, len, label);
  g_autoptr(GArray) cells = ptsim_csv_cells_new();
  g_autoptr(GHashTable) added = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, source_free);
  GError *local = NULL;
  label = ptsim_csv_reader_label(reader);
  if (!check_header(reader, cells, names, G_N_ELEMENTS(names), error)) return FALSE;
  while (ptsim_csv_reader_next(reader, cells, &local)) {
    if (!check_cell_count(label, cells, G_N_ELEMENTS(names), error)) return FALSE;
    const PtsimCsvCell *key = &g_array_index(cells, PtsimCsvCell, 0);
    const PtsimCsvCell *where = &g_array_index(cells, PtsimCsvCell, 1);
    const PtsimCsvCell *what = &g_array_index(cells, PtsimCsvCell, 2);
    if (!valid_name(key->text)) {
      cell_error(label, key, "key",
                 "'%s' is not a source key: [a-z0-9], then [a-z0-9._-], at most %d characters",
                 key->text, PTSIM_KERNEL_NAME - 1);
      return FALSE;
    }
    const Source *before = g_hash_table_lookup(t->sources, key->text);
    if (!before) before = g_hash_table_lookup(added, key->text);
    if (before) {
      cell_error(label, key, "key", "source '%s' is given twice (first at %s:%" G_GINT64_FORMAT ")",
                 key->text, before->label, (gint64)before->line);
      return FALSE;
    }
    if (!valid_url(where->text) && !valid_repo_path(where->text)) {
      cell_error(label, where, "where",
                 "'%s' is neither an https:// URL nor OWNER/REPO@COMMIT:PATH", where->text);
      return FALSE;
    }
    if (what->text[0] == '\0') {
      cell_error(label, what, "what", "empty: say what the source measured and how");
      return FALSE;
    }
    Source *s = g_new0(Source, 1);
    s->where = g_strdup(where->text);
    s->what = g_strdup(what->text);
    s->label = g_strdup(label);
    s->line = key->line;
    g_hash_table_insert(added, g_strdup(key->text), s);
  }
  if (local) {
    g_propagate_error(error, local);
    return FALSE;
  }
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init(&it, added);
  while (g_hash_table_iter_next(&it, &k, &v)) {
    g_hash_table_iter_steal(&it);
    g_hash_table_insert(t->sources, k, v);
  }
  return TRUE;
}

const char *ptsim_kernel_tables_source(const PtsimKernelTables *t, const char *key) {
  const Source *s = key ? g_hash_table_lookup(t->sources, key) : NULL;
  return s ? s->where : NULL;
}

/* ---- one row ---- */

typedef struct {
  char gpu[PTSIM_KERNEL_NAME], series[PTSIM_KERNEL_NAME];
  const char *source, *marker; /* cells' text (the record's lifetime) */
  int64_t line;
  int32_t key[PTSIM_KERNEL_KEYS];
  double field[PTSIM_KERNEL_F_COUNT];
  gboolean has[PTSIM_KERNEL_F_COUNT];
  const PtsimCsvCell *cell[PTSIM_KERNEL_F_COUNT]; /* where each field was written */
  double x;
  double y[PTSIM_KERNEL_METRIC_COUNT];
  gboolean has_y[PTSIM_KERNEL_METRIC_COUNT];
} Parsed;

static gboolean word_index(const char *const *words, const char *text, int *out) {
  for (int i = 0; words[i]; i++)
    if (strcmp(words[i], text) == 0) {
      *out = i;
      return TRUE;
    }
  return FALSE;
}

/* Sets the field / key slot a column fills. */
static void put(Parsed *row, const PtsimKernelColumn *col, const PtsimCsvCell *cell, double v) {
  if (col->slot >= 0) row->key[col->slot] = (int32_t)v;
  if (col->field != PTSIM_KERNEL_F_NONE) {
    row->field[col->field] = v;
    row->has[col->field] = TRUE;
    row->cell[col->field] = cell;
  }
}

static gboolean parse_number(const char *label, const PtsimKernelColumn *col,
                             const PtsimCsvCell *cell, Parsed *row, GError **error) {
  if (col->type == PTSIM_KERNEL_COL_INT) {
    int64_t v = 0;
    if (!ptsim_number_parse_int64(cell->text, &v) || (double)v < col->lo || (double)v > col->hi) {
      g_autofree char *allowed = ptsim_number_int64_allowed((int64_t)col->lo, (int64_t)col->hi);
      cell_error(label, cell, col->name, "'%s' is not allowed: expected %s", cell->text, allowed);
      return FALSE;
    }
    put(row, col, cell, (double)v);
    return TRUE;
  }
  double v = 0.0;
  PtsimRange range = {col->lo, col->hi, FALSE, TRUE};
  if (!ptsim_number_parse_double(cell->text, &v) || !(v > col->lo) || v > col->hi) {
    g_autofree char *allowed = ptsim_number_range_allowed(range);
    cell_error(label, cell, col->name, "'%s' is not allowed: expected %s", cell->text, allowed);
    return FALSE;
  }
  put(row, col, cell, v);
  return TRUE;
}

static gboolean parse_cell(PtsimKernelTables *t, const char *label, const PtsimKernelColumn *col,
                           const PtsimCsvCell *cell, Parsed *row, GError **error) {
  const char *text = cell->text;
  int index = 0;
  if (text[0] == '\0' && col->type != PTSIM_KERNEL_COL_NOTE) {
    if (col->optional) return TRUE; /* slot stays 0, field absent */
    cell_error(label, cell, col->name, "empty");
    return FALSE;
  }
  switch (col->type) {
  case PTSIM_KERNEL_COL_GPU:
  case PTSIM_KERNEL_COL_SERIES:
    if (!valid_name(text)) {
      cell_error(label, cell, col->name,
                 "'%s' is not a name: [a-z0-9], then [a-z0-9._-], at most %d characters", text,
                 PTSIM_KERNEL_NAME - 1);
      return FALSE;
    }
    g_strlcpy(col->type == PTSIM_KERNEL_COL_GPU ? row->gpu : row->series, text, PTSIM_KERNEL_NAME);
    return TRUE;
  case PTSIM_KERNEL_COL_WORD:
  case PTSIM_KERNEL_COL_MARKER: {
    const char *const *words = col->type == PTSIM_KERNEL_COL_WORD ? col->words
                                                                  : ptsim_kernel_markers;
    if (!word_index(words, text, &index)) {
      g_autofree char *allowed = ptsim_kernel_words_allowed(words);
      cell_error(label, cell, col->name, "'%s' is not one of %s", text, allowed);
      return FALSE;
    }
    if (col->type == PTSIM_KERNEL_COL_MARKER)
      row->marker = text;
    else
      put(row, col, cell, (double)index);
    return TRUE;
  }
  case PTSIM_KERNEL_COL_INT:
  case PTSIM_KERNEL_COL_NUM:
    return parse_number(label, col, cell, row, error);
  case PTSIM_KERNEL_COL_SOURCE: {
    Source *s = g_hash_table_lookup(t->sources, text);
    if (!s) {
      cell_error(label, cell, col->name, "no source '%s' in %s", text, PTSIM_KERNEL_SOURCES_FILE);
      return FALSE;
    }
    s->used = TRUE;
    row->source = text;
    return TRUE;
  }
  case PTSIM_KERNEL_COL_NOTE:
  default:
    return TRUE;
  }
}

/* A restated number agrees with its source numbers: |got/want - 1| <= 2%. */
static gboolean restates(const char *label, const Parsed *row, PtsimKernelField field,
                         const char *name, double want, const char *formula, GError **error) {
  double got = row->field[field];
  if (fabs(got / want - 1.0) <= KERNEL_RESTATE_TOLERANCE) return TRUE;
  cell_error(label, row->cell[field], name, "%g does not agree with %s = %.4g (2%% allowed)", got,
             formula, want);
  return FALSE;
}

/* nccl-tests bus factor for n ranks (reference B2): 2(n-1)/n all-reduce,
 * (n-1)/n the others. */
static double bus_factor(int collective, double n) {
  return (collective == PTSIM_KERNEL_ALL_REDUCE ? 2.0 : 1.0) * (n - 1.0) / n;
}

/* The row's x and values, and the checks across its cells. */
static gboolean finish_row(PtsimKernelKind kind, const char *label, Parsed *r, GError **error) {
  const double *f = r->field;
  r->has_y[PTSIM_KERNEL_METRIC_BANDWIDTH] = TRUE;
  switch (kind) {
  case PTSIM_KERNEL_GEMM:
    if (f[PTSIM_KERNEL_F_LAYOUT] == PTSIM_KERNEL_LAYOUT_DENSE && f[PTSIM_KERNEL_F_GROUPS] != 1.0) {
      cell_error(label, r->cell[PTSIM_KERNEL_F_GROUPS], "groups", "a dense GEMM has groups 1");
      return FALSE;
    }
    r->x = 2.0 * f[PTSIM_KERNEL_F_GROUPS] * f[PTSIM_KERNEL_F_M] * f[PTSIM_KERNEL_F_N] *
           f[PTSIM_KERNEL_F_K];
    r->y[0] = f[PTSIM_KERNEL_F_TFLOPS];
    return TRUE;
  case PTSIM_KERNEL_ATTENTION:
    if ((f[PTSIM_KERNEL_F_MASK] == PTSIM_KERNEL_MASK_WINDOW) != (f[PTSIM_KERNEL_F_WINDOW] > 0.0)) {
      cell_error(label, r->cell[PTSIM_KERNEL_F_WINDOW], "window",
                 "the window width is > 0 exactly when mask is window");
      return FALSE;
    }
    r->x = f[PTSIM_KERNEL_F_SEQ];
    r->y[0] = f[PTSIM_KERNEL_F_TFLOPS];
    return TRUE;
  case PTSIM_KERNEL_MEMORY:
  case PTSIM_KERNEL_QUANTIZE:
    if (r->has[PTSIM_KERNEL_F_BYTES] && r->has[PTSIM_KERNEL_F_TIME_US] &&
        !restates(label, r, PTSIM_KERNEL_F_GBPS, "gbps",
                  f[PTSIM_KERNEL_F_BYTES] / (f[PTSIM_KERNEL_F_TIME_US] * 1e3), "bytes / time_us",
                  error))
      return FALSE;
    r->x = kind == PTSIM_KERNEL_MEMORY ? f[PTSIM_KERNEL_F_COLS]
                                       : f[PTSIM_KERNEL_F_ROWS] * f[PTSIM_KERNEL_F_COLS];
    r->y[0] = f[PTSIM_KERNEL_F_GBPS];
    return TRUE;
  case PTSIM_KERNEL_HBM:
    r->x = 1.0;
    r->y[0] = f[PTSIM_KERNEL_F_GBPS];
    return TRUE;
  case PTSIM_KERNEL_COLLECTIVE:
    if (f[PTSIM_KERNEL_F_NODES] > f[PTSIM_KERNEL_F_RANKS]) {
      cell_error(label, r->cell[PTSIM_KERNEL_F_NODES], "nodes", "more nodes than ranks");
      return FALSE;
    }
    if (r->has[PTSIM_KERNEL_F_TIME_US] &&
        !restates(label, r, PTSIM_KERNEL_F_BUSBW, "busbw_gbps",
                  f[PTSIM_KERNEL_F_BYTES] / (f[PTSIM_KERNEL_F_TIME_US] * 1e3) *
                      bus_factor((int)f[PTSIM_KERNEL_F_COLLECTIVE], f[PTSIM_KERNEL_F_RANKS]),
                  "bytes / time_us x the bus factor", error))
      return FALSE;
    r->x = f[PTSIM_KERNEL_F_BYTES];
    r->y[0] = f[PTSIM_KERNEL_F_BUSBW];
    return TRUE;
  case PTSIM_KERNEL_MOE_DISPATCH:
  default:
    if (f[PTSIM_KERNEL_F_NODES] > f[PTSIM_KERNEL_F_EP_RANKS]) {
      cell_error(label, r->cell[PTSIM_KERNEL_F_NODES], "nodes", "more nodes than ep_ranks");
      return FALSE;
    }
    r->has_y[PTSIM_KERNEL_METRIC_BANDWIDTH] = r->has[PTSIM_KERNEL_F_BANDWIDTH];
    r->has_y[PTSIM_KERNEL_METRIC_LATENCY] = r->has[PTSIM_KERNEL_F_LATENCY];
    if (!r->has[PTSIM_KERNEL_F_BANDWIDTH] && !r->has[PTSIM_KERNEL_F_LATENCY]) {
      row_error(label, r->line, "neither bandwidth_gbps nor latency_us: a row needs one");
      return FALSE;
    }
    r->x = f[PTSIM_KERNEL_F_EP_RANKS];
    r->y[PTSIM_KERNEL_METRIC_BANDWIDTH] = f[PTSIM_KERNEL_F_BANDWIDTH];
    r->y[PTSIM_KERNEL_METRIC_LATENCY] = f[PTSIM_KERNEL_F_LATENCY];
    return TRUE;
  }
}

static gboolean parse_row(PtsimKernelTables *t, PtsimKernelKind kind, const char *label,
                          GArray *cells, Parsed *row, GError **error) {
  const PtsimKernelSchema *schema = ptsim_kernel_schema(kind);
  memset(row, 0, sizeof *row);
  if (!check_cell_count(label, cells, schema->n_columns, error)) return FALSE;
  row->line = g_array_index(cells, PtsimCsvCell, 0).line;
  for (guint i = 0; i < schema->n_columns; i++)
    if (!parse_cell(t, label, &schema->columns[i], &g_array_index(cells, PtsimCsvCell, i), row,
                    error))
      return FALSE;
  return finish_row(kind, label, row, error);
}

/* ---- applying rows to the GPUs' tables ---- */

/* One point's identity: the curve and its x. */
static char *point_id(PtsimKernelKind kind, const char *gpu, const int32_t *key, const char *series,
                      double x) {
  return g_strdup_printf("%d|%s|%d,%d,%d,%d,%d,%d|%s|%.17g", (int)kind, gpu, key[0], key[1], key[2],
                         key[3], key[4], key[5], series, x);
}

typedef struct {
  PtsimKernelTables *t;
  GHashTable *tables; /* gpu -> staged copy (PtsimKernelTable) */
  GHashTable *points; /* point id -> "FILE:LINE", this file's */
} Staging;

static PtsimKernelTable *staged_table(Staging *s, const char *label, const Parsed *row,
                                      GError **error) {
  PtsimKernelTable *table = g_hash_table_lookup(s->tables, row->gpu);
  if (table) return table;
  const PtsimKernelTable *committed = g_hash_table_lookup(s->t->tables, row->gpu);
  if (!committed && g_hash_table_size(s->t->tables) + g_hash_table_size(s->tables) >=
                        PTSIM_KERNEL_TABLES_MAX_GPUS) {
    row_error(label, row->line, "more than %d GPUs", PTSIM_KERNEL_TABLES_MAX_GPUS);
    return NULL;
  }
  table = g_new(PtsimKernelTable, 1);
  if (committed)
    *table = *committed;
  else
    ptsim_kernel_table_init(table, row->gpu);
  g_hash_table_insert(s->tables, g_strdup(row->gpu), table);
  return table;
}

static gboolean apply_status(PtsimKernelAddStatus status, Staging *s, const char *label,
                             const Parsed *row, const char *id, const char *x_name, double x,
                             GError **error) {
  const char *first = NULL;
  switch (status) {
  case PTSIM_KERNEL_ADD_OK:
    return TRUE;
  case PTSIM_KERNEL_ADD_DUPLICATE:
    first = g_hash_table_lookup(s->points, id);
    if (!first) first = g_hash_table_lookup(s->t->points, id);
    row_error(label, row->line,
              "a second value at %s %.17g for the same gpu, key and series '%s'%s%s%s", x_name, x,
              row->series, first ? " (first at " : "", first ? first : "", first ? ")" : "");
    return FALSE;
  case PTSIM_KERNEL_ADD_TOO_MANY_POINTS:
    row_error(label, row->line, "more than %d points in series '%s' of one curve: split the series",
              PTSIM_KERNEL_POINTS, row->series);
    return FALSE;
  case PTSIM_KERNEL_ADD_TOO_MANY_CURVES:
    row_error(label, row->line, "more than %d curves for gpu %s", PTSIM_KERNEL_CURVES, row->gpu);
    return FALSE;
  case PTSIM_KERNEL_ADD_TOO_MANY_SHAPES:
    row_error(label, row->line, "more than %d GEMM shapes for gpu %s", PTSIM_KERNEL_SHAPES,
              row->gpu);
    return FALSE;
  case PTSIM_KERNEL_ADD_BAD_VALUE:
  default:
    row_error(label, row->line, "%s %g or its value is not a finite number > 0", x_name, x);
    return FALSE;
  }
}

static gboolean apply_row(Staging *s, PtsimKernelKind kind, const char *label, const Parsed *row,
                          GError **error) {
  const PtsimKernelSchema *schema = ptsim_kernel_schema(kind);
  PtsimKernelTable *table = staged_table(s, label, row, error);
  if (!table) return FALSE;
  for (int metric = 0; metric < PTSIM_KERNEL_METRIC_COUNT; metric++) {
    if (!row->has_y[metric]) continue;
    int32_t key[PTSIM_KERNEL_KEYS];
    memcpy(key, row->key, sizeof key);
    if (kind == PTSIM_KERNEL_MOE_DISPATCH) key[5] = metric;
    g_autofree char *id = point_id(kind, row->gpu, key, row->series, row->x);
    PtsimKernelAddStatus status = ptsim_kernel_table_add(table, kind, key, row->series, row->x,
                                                         row->y[metric]);
    if (!apply_status(status, s, label, row, id, schema->x_name, row->x, error)) return FALSE;
    g_hash_table_insert(s->points, g_steal_pointer(&id),
                        g_strdup_printf("%s:%" G_GINT64_FORMAT, label, (gint64)row->line));
  }
  if (kind == PTSIM_KERNEL_GEMM) {
    const double *f = row->field;
    PtsimKernelAddStatus status =
        ptsim_kernel_table_add_shape(table, row->key, row->series,
                                     (int64_t)f[PTSIM_KERNEL_F_GROUPS],
                                     (int64_t)f[PTSIM_KERNEL_F_M], (int64_t)f[PTSIM_KERNEL_F_N],
                                     (int64_t)f[PTSIM_KERNEL_F_K], row->y[0]);
    if (!apply_status(status, s, label, row, "", schema->x_name, row->x, error)) return FALSE;
  }
  return TRUE;
}

static void store_row(PtsimKernelTables *t, PtsimKernelKind kind, const char *label,
                      const Parsed *row) {
  int metric = row->has_y[PTSIM_KERNEL_METRIC_BANDWIDTH] ? 0 : 1;
  StoredRow stored = {g_string_chunk_insert_const(t->strings, row->gpu),
                      g_string_chunk_insert_const(t->strings, row->series),
                      g_string_chunk_insert_const(t->strings, row->source),
                      g_string_chunk_insert_const(t->strings, row->marker),
                      g_string_chunk_insert_const(t->strings, label),
                      row->line,
                      row->x,
                      row->y[metric]};
  g_array_append_val(t->rows[kind], stored);
}

gboolean ptsim_kernel_tables_add_rows(PtsimKernelTables *t, PtsimKernelKind kind, const char *data,
                                      gsize len, const char *label, GError **error) {
  g_return_val_if_fail(kind >= 0 && kind < PTSIM_KERNEL_KIND_COUNT, FALSE);
  const PtsimKernelSchema *schema = ptsim_kernel_schema(kind);
  g_autoptr(PtsimCsvReader) reader = ptsim_csv_reader_new(data, len, label ? label : schema->file);
  g_autoptr(GArray) cells = ptsim_csv_cells_new();
  g_autoptr(GHashTable) tables = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GHashTable) points = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GArray) parsed = g_array_new(FALSE, TRUE, sizeof(Parsed));
  g_autoptr(GPtrArray)
      texts = g_ptr_array_new_with_free_func(g_free); /* the rows' source / marker */
  Staging staging = {t, tables, points};
  GError *local = NULL;
  label = ptsim_csv_reader_label(reader);
  const char *names[32];
  g_assert(schema->n_columns <= G_N_ELEMENTS(names));
  for (guint i = 0; i < schema->n_columns; i++) names[i] = schema->columns[i].name;
  if (!check_header(reader, cells, names, schema->n_columns, error)) return FALSE;
  while (ptsim_csv_reader_next(reader, cells, &local)) {
    Parsed row;
    if (!parse_row(t, kind, label, cells, &row, error)) return FALSE;
    /* the texts outlive the record */
    char *source = g_strdup(row.source), *marker = g_strdup(row.marker);
    g_ptr_array_add(texts, source);
    g_ptr_array_add(texts, marker);
    row.source = source;
    row.marker = marker;
    if (!apply_row(&staging, kind, label, &row, error)) return FALSE;
    g_array_append_val(parsed, row);
  }
  if (local) {
    g_propagate_error(error, local);
    return FALSE;
  }
  /* the whole file went in: commit */
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init(&it, tables);
  while (g_hash_table_iter_next(&it, &k, &v)) {
    g_hash_table_iter_steal(&it);
    g_hash_table_replace(t->tables, k, v);
  }
  g_hash_table_iter_init(&it, points);
  while (g_hash_table_iter_next(&it, &k, &v)) {
    g_hash_table_iter_steal(&it);
    g_hash_table_replace(t->points, k, v);
  }
  for (guint i = 0; i < parsed->len; i++)
    store_row(t, kind, label, &g_array_index(parsed, Parsed, i));
  return TRUE;
}

/* ---- the folder ---- */

static gboolean load_file(PtsimKernelTables *t, const char *dir, int kind, GError **error) {
  const char *file = kind < 0 ? PTSIM_KERNEL_SOURCES_FILE : ptsim_kernel_tables_file(kind);
  g_autofree char *path = g_build_filename(dir, file, NULL);
  g_autofree char *contents = NULL;
  gsize len = 0;
  if (!ptsim_input_read(path, "kernel table", PTSIM_INPUT_MAX_TEXT, &contents, &len, error))
    return FALSE;
  if (kind < 0) return ptsim_kernel_tables_add_sources(t, contents, len, path, error);
  return ptsim_kernel_tables_add_rows(t, (PtsimKernelKind)kind, contents, len, path, error);
}

gboolean ptsim_kernel_tables_load(PtsimKernelTables *t, const char *dir, GError **error) {
  g_autofree char *shipped = g_build_filename(ptsim_config_data_dir(), PTSIM_KERNEL_TABLES_DIR,
                                              NULL);
  if (!dir) dir = shipped;
  for (int kind = -1; kind < PTSIM_KERNEL_KIND_COUNT; kind++)
    if (!load_file(t, dir, kind, error)) return FALSE;
  /* a source no row uses is a sign of a row left out or a key mistyped */
  g_autoptr(GList) keys = g_list_sort(g_hash_table_get_keys(t->sources), (GCompareFunc)strcmp);
  for (GList *l = keys; l; l = l->next) {
    const Source *s = g_hash_table_lookup(t->sources, l->data);
    if (s->used) continue;
    row_error(s->label, s->line, "source '%s' is used by no row", (const char *)l->data);
    return FALSE;
  }
  return TRUE;
}

/* ---- reading back ---- */

guint ptsim_kernel_tables_rows(const PtsimKernelTables *t, PtsimKernelKind kind) {
  g_return_val_if_fail(kind >= 0 && kind < PTSIM_KERNEL_KIND_COUNT, 0);
  return t->rows[kind]->len;
}

gboolean ptsim_kernel_tables_row(const PtsimKernelTables *t, PtsimKernelKind kind, guint i,
                                 PtsimKernelRow *out) {
  if (kind < 0 || kind >= PTSIM_KERNEL_KIND_COUNT || i >= t->rows[kind]->len) return FALSE;
  const StoredRow *r = &g_array_index(t->rows[kind], StoredRow, i);
  out->gpu = r->gpu;
  out->series = r->series;
  out->source = r->source;
  out->marker = r->marker;
  out->label = r->label;
  out->line = r->line;
  out->x = r->x;
  out->y = r->y;
  return TRUE;
}

char **ptsim_kernel_tables_gpus(const PtsimKernelTables *t) {
  g_autoptr(GList) keys = g_list_sort(g_hash_table_get_keys(t->tables), (GCompareFunc)strcmp);
  g_autoptr(GStrvBuilder) b = g_strv_builder_new();
  for (GList *l = keys; l; l = l->next) g_strv_builder_add(b, l->data);
  return g_strv_builder_end(b);
}

gboolean ptsim_kernel_tables_select(const PtsimKernelTables *t, const char *gpu,
                                    PtsimKernelTable *out, GError **error) {
  const PtsimKernelTable *table = gpu ? g_hash_table_lookup(t->tables, gpu) : NULL;
  if (table) {
    *out = *table;
    return TRUE;
  }
  g_auto(GStrv) gpus = ptsim_kernel_tables_gpus(t);
  g_autofree char *list = g_strjoinv(", ", gpus);
  g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_NOT_FOUND,
              "no kernel measurements for gpu '%s' (there are: %s)", gpu ? gpu : "(null)",
              list[0] ? list : "none");
  return FALSE;
}
