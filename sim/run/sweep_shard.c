/* sweep_shard.c — shard files and their merge; see sweep_shard.h. */
#define _POSIX_C_SOURCE 200809L /* getc_unlocked */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "config.h"
#include "input.h"
#include "numbers.h"
#include "sweep_options.h"
#include "sweep_shard.h"
#include "sweep_rows.h"

#define SHARD_MARK "# ptsim sweep shard"
#define SHARD_COLUMNS "layout_index,result,"
/* A shard's made-by block is a few dozen lines: more is no shard. */
#define SHARD_MADE_BY_MAX 4096
/* A row is under 2 KiB (its result in base64 and the sweep CSV's columns);
 * a longer line (/dev/zero, a file without newlines) is no shard row and is
 * not read into memory. */
#define SHARD_LINE_MAX (64 * 1024)

gboolean ptsim_shard_parse(const char *text, guint *k, guint *n, GError **error) {
  g_auto(GStrv) parts = g_strsplit(text, "/", -1);
  gint64 kk, nn;
  if (g_strv_length(parts) != 2 || !ptsim_number_parse_int64(parts[0], &kk) ||
      !ptsim_number_parse_int64(parts[1], &nn) || nn < 1 || nn > G_MAXUINT || kk < 1 || kk > nn) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                "--shard '%s': expected K/N, the K-th of N slices, 1 <= K <= N", text);
    return FALSE;
  }
  *k = (guint)kk;
  *n = (guint)nn;
  return TRUE;
}

void ptsim_shard_slice(guint k, guint n, guint64 valid, guint64 *first, guint64 *last) {
  /* valid * k never overflows for any sweep that fits a machine's time */
  *first = valid / n * (k - 1) + valid % n * (k - 1) / n;
  *last = valid / n * k + valid % n * k / n;
}

/* ---- what made a shard ---- */

/* The sweep flags that do not change a layout's result: how the run is
 * split, shown and computed (the CPU and the GPU give the same results). */
static const char *const run_flags[] = {"shard",         "merge",       "csv",     "format",
                                        "figures",       "top",         "threads", "device",
                                        "in-memory-max", "no-shortcut", NULL};

/* Whether sweep flag NAME takes a value: the sweep's own table says so (a
 * flag given alone is a missing value exactly when it wants one). */
static gboolean flag_takes_value(const char *name) {
  g_autofree char *word = g_strconcat("--", name, NULL);
  const char *flags[] = {word, NULL};
  PtsimSweepOptions tmp;
  ptsim_sweep_options_init(&tmp);
  g_autoptr(GError) error = NULL;
  gboolean alone = ptsim_sweep_options_parse(&tmp, flags, &error);
  ptsim_sweep_options_clear(&tmp);
  return !alone && g_error_matches(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE);
}

static gint compare_lines(gconstpointer a, gconstpointer b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

char **ptsim_shard_made_by(const char *const *flags) {
  g_auto(GStrv) inputs = ptsim_input_digests();
  return ptsim_shard_made_by_inputs(flags, (const char *const *)inputs);
}

char **ptsim_shard_made_by_inputs(const char *const *flags, const char *const *inputs) {
  /* flag name -> "setting --NAME[ VALUE]": the last one given counts, as
   * GOption takes it, and the order they came in does not */
  g_autoptr(GHashTable) settings = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  for (guint i = 0; flags && flags[i]; i++) {
    const char *word = flags[i];
    if (strcmp(word, "--") == 0) break;
    if (strncmp(word, "--", 2) != 0) continue; /* a shard file of --merge */
    const char *eq = strchr(word + 2, '=');
    g_autofree char *name = eq ? g_strndup(word + 2, (gsize)(eq - word - 2)) : g_strdup(word + 2);
    const char *value = eq ? eq + 1 : NULL;
    if (!eq && flag_takes_value(name) && flags[i + 1]) value = flags[++i];
    if (g_strv_contains(run_flags, name)) continue;
    /* escaped: a value with a newline stays one header line */
    g_autofree char *shown = value ? g_strescape(value, NULL) : NULL;
    char *line = value ? g_strdup_printf("setting --%s %s", name, shown)
                       : g_strdup_printf("setting --%s", name);
    g_hash_table_replace(settings, g_steal_pointer(&name), line);
  }
  g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func(g_free);
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init(&it, settings);
  while (g_hash_table_iter_next(&it, NULL, &value)) g_ptr_array_add(lines, g_strdup(value));
  g_ptr_array_sort(lines, compare_lines);
  g_ptr_array_insert(lines, 0,
                     g_strdup_printf("ptsim %s, a result of %" G_GSIZE_FORMAT " bytes",
                                     PTSIM_VERSION_TEXT, sizeof(PtsimBatchResult)));
  for (guint i = 0; inputs && inputs[i]; i++)
    g_ptr_array_add(lines, g_strconcat("input ", inputs[i], NULL));
  g_ptr_array_add(lines, NULL);
  g_ptr_array_set_free_func(lines, NULL);
  return (char **)g_ptr_array_free(g_steal_pointer(&lines), FALSE);
}

void ptsim_shard_header(GString *out, const char *const *made_by) {
  g_string_append(out, SHARD_MARK "\n");
  for (guint i = 0; made_by && made_by[i]; i++) g_string_append_printf(out, "# %s\n", made_by[i]);
  g_string_append(out, SHARD_COLUMNS);
  g_string_append(out, ptsim_sweep_csv_header());
}

void ptsim_shard_row(GString *out, guint64 index, const PtsimJob *job, const PtsimBatchResult *r) {
  g_autofree char *bytes = g_base64_encode((const guchar *)r, sizeof *r);
  g_string_append_printf(out, "%" G_GUINT64_FORMAT ",%s,", index, bytes);
  ptsim_sweep_csv_row(out, 0, job, r);
}

/* ---- reading ---- */

typedef struct {
  char *path;
  FILE *file;
  guint64 line_no;
  char *line; /* the next data row (in buf, with its newline), or NULL at the end */
  GString *buf;
  guint64 index;       /* its layout index */
  GPtrArray *made_by;  /* its header's lines, without "# " */
  guint64 first_index; /* its first row's layout, at line first_line (0: no rows) */
  guint64 first_line;
  guint64 last_index; /* the last row taken, at line last_line (0: none yet) */
  guint64 last_line;
} ShardFile;

struct PtsimShardReader {
  ShardFile *files;  /* in slice order */
  guint n, at;       /* files, the one being read */
  GString *expected; /* scratch: the row the sweep's layout gives */
};

static void shard_file_clear(ShardFile *f) {
  if (f->file) fclose(f->file);
  if (f->made_by) g_ptr_array_unref(f->made_by);
  g_free(f->path);
  if (f->buf) g_string_free(f->buf, TRUE);
}

/* Reads f's next line into f->line (NULL at the end of the file): at most
 * SHARD_LINE_MAX bytes, no NUL. */
static gboolean shard_file_read(ShardFile *f, GError **error) {
  int c = EOF;
  g_string_truncate(f->buf, 0);
  errno = 0;
  while (f->buf->len <= SHARD_LINE_MAX && (c = getc_unlocked(f->file)) != EOF && c != '\0') {
    g_string_append_c(f->buf, (char)c);
    if (c == '\n') break;
  }
  if (c == EOF && ferror(f->file)) {
    g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "--merge %s: %s", f->path,
                g_strerror(errno));
    return FALSE;
  }
  f->line = NULL;
  if (c == EOF && f->buf->len == 0) return TRUE; /* the end */
  f->line_no++;
  if (c == '\0' || f->buf->len > SHARD_LINE_MAX) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                "--merge %s:%" G_GUINT64_FORMAT ": %s: not a shard file", f->path, f->line_no,
                c == '\0' ? "a NUL byte" : "a line longer than 64 KiB");
    return FALSE;
  }
  f->line = f->buf->str;
  return TRUE;
}

/* Reads f's next data row and its layout index. */
static gboolean shard_file_advance(ShardFile *f, GError **error) {
  if (!shard_file_read(f, error)) return FALSE;
  if (!f->line) return TRUE;
  const char *comma = strchr(f->line, ',');
  g_autofree char *digits = comma ? g_strndup(f->line, (gsize)(comma - f->line)) : NULL;
  int64_t index = -1;
  if (!digits || !ptsim_number_parse_int64(digits, &index) || index < 0 ||
      !strchr(comma + 1, ',')) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                "--merge %s:%" G_GUINT64_FORMAT ": not a shard row (layout_index,result,...)",
                f->path, f->line_no);
    return FALSE;
  }
  f->index = (guint64)index;
  return TRUE;
}

static gint compare_first_index(gconstpointer a, gconstpointer b) {
  const ShardFile *x = a, *y = b;
  if (!x->line || !y->line) return (x->line == NULL) - (y->line == NULL); /* empty shards last */
  return (x->index > y->index) - (x->index < y->index);
}

/* Reads f's header: the mark, the made-by lines, the columns. */
static gboolean shard_file_header(ShardFile *f, const char *columns, GError **error) {
  if (!shard_file_read(f, error)) return FALSE;
  if (!f->line || strcmp(f->line, SHARD_MARK "\n") != 0) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                "--merge %s:1: not a shard file of this ptsim (written by sweep --shard K/N "
                "--csv FILE; its first line is '" SHARD_MARK "': a shard of an older ptsim "
                "is made again)",
                f->path);
    return FALSE;
  }
  for (;;) {
    if (!shard_file_read(f, error)) return FALSE;
    if (!f->line || strncmp(f->line, "# ", 2) != 0) break;
    if (f->made_by->len == SHARD_MADE_BY_MAX) {
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                  "--merge %s:%" G_GUINT64_FORMAT ": more than %d header lines: not a shard file",
                  f->path, f->line_no, SHARD_MADE_BY_MAX);
      return FALSE;
    }
    g_ptr_array_add(f->made_by, g_strndup(f->line + 2, strcspn(f->line + 2, "\n")));
  }
  if (!f->line || strcmp(f->line, columns) != 0) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                "--merge %s:%" G_GUINT64_FORMAT ": not this ptsim's shard columns (they start "
                "with %s and the sweep CSV's columns follow)",
                f->path, f->line_no, SHARD_COLUMNS);
    return FALSE;
  }
  return TRUE;
}

PtsimShardReader *ptsim_shard_reader_open(char **paths, guint n, GError **error) {
  g_autoptr(PtsimShardReader) r = g_new0(PtsimShardReader, 1);
  g_autoptr(GString) columns = g_string_new(NULL);
  g_string_append(columns, SHARD_COLUMNS);
  g_string_append(columns, ptsim_sweep_csv_header());
  r->files = g_new0(ShardFile, n);
  r->n = n;
  r->expected = g_string_new(NULL);
  for (guint i = 0; i < n; i++) {
    ShardFile *f = &r->files[i];
    f->path = g_strdup(paths[i]);
    f->buf = g_string_new(NULL);
    f->made_by = g_ptr_array_new_with_free_func(g_free);
    /* streamed (a shard may be gigabytes), but remembered as an input */
    if (!(f->file = ptsim_input_open_stream(f->path, "--merge", error))) return NULL;
    if (!shard_file_header(f, columns->str, error)) return NULL;
    if (!shard_file_advance(f, error)) return NULL;
    if (f->line) {
      f->first_index = f->index;
      f->first_line = f->line_no;
    }
  }
  qsort(r->files, n, sizeof *r->files, compare_first_index);
  return g_steal_pointer(&r);
}

/* The part of a made-by line two shards must share to be compared:
 * "setting --NAME", "input NAME", "ptsim". */
static gsize made_by_key_len(const char *line) {
  const char *space = strchr(line, ' ');
  if (!space) return strlen(line);
  if (g_str_has_prefix(line, "setting ") || g_str_has_prefix(line, "input ")) {
    const char *second = strchr(space + 1, ' ');
    return second ? (gsize)(second - line) : strlen(line);
  }
  return (gsize)(space - line);
}

/* The index in LINES of the line with KEY's key, or -1. */
static gint find_key(GPtrArray *lines, const char *key) {
  gsize len = made_by_key_len(key);
  for (guint i = 0; i < lines->len; i++) {
    const char *line = g_ptr_array_index(lines, i);
    if (made_by_key_len(line) == len && strncmp(line, key, len) == 0) return (gint)i;
  }
  return -1;
}

/* Names the first way shard F was not made by the sweep MADE_BY. */
static gboolean shard_file_check(const ShardFile *f, const char *const *made_by, GError **error) {
  /* the made-by lines start at line 2 */
  for (guint i = 0; made_by[i]; i++) {
    gint at = find_key(f->made_by, made_by[i]);
    const char *theirs = at < 0 ? NULL : g_ptr_array_index(f->made_by, at);
    if (theirs && strcmp(theirs, made_by[i]) == 0) continue;
    if (theirs)
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                  "--merge %s:%d: not a shard of this sweep: it has '%s', this sweep '%s' "
                  "(run every shard and the merge with the same flags, inputs and ptsim)",
                  f->path, at + 2, theirs, made_by[i]);
    else
      g_set_error(
          error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
          "--merge %s: not a shard of this sweep: this sweep has '%s', the shard "
          "was made without it (its header, lines 2-%u; run every shard and the merge with the "
          "same flags, inputs and ptsim)",
          f->path, made_by[i], f->made_by->len + 1);
    return FALSE;
  }
  for (guint i = 0; i < f->made_by->len; i++) {
    const char *theirs = g_ptr_array_index(f->made_by, i);
    gsize len = made_by_key_len(theirs);
    gboolean known = FALSE;
    for (guint k = 0; made_by[k] && !known; k++)
      known = made_by_key_len(made_by[k]) == len && strncmp(made_by[k], theirs, len) == 0;
    if (!known) {
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                  "--merge %s:%u: not a shard of this sweep: it has '%s', this sweep does not "
                  "(run every shard and the merge with the same flags, inputs and ptsim)",
                  f->path, i + 2, theirs);
      return FALSE;
    }
  }
  return TRUE;
}

gboolean ptsim_shard_reader_check(const PtsimShardReader *r, const char *const *made_by,
                                  GError **error) {
  for (guint i = 0; i < r->n; i++)
    if (!shard_file_check(&r->files[i], made_by, error)) return FALSE;
  return TRUE;
}

/* Where the shards stop holding the layout asked for, for the message: the
 * last row taken before the gap and the next row after it. */
static void describe_gap(const PtsimShardReader *r, GString *out) {
  const ShardFile *before = NULL, *after = r->at < r->n ? &r->files[r->at] : NULL;
  for (guint i = 0; i < r->n && i <= r->at; i++)
    if (r->files[i].last_line > 0 && (!after || &r->files[i] != after)) before = &r->files[i];
  if (after && !after->line) after = NULL;
  if (before)
    g_string_append_printf(out, "%s:%" G_GUINT64_FORMAT " ends with layout %" G_GUINT64_FORMAT,
                           before->path, before->last_line, before->last_index);
  if (after)
    g_string_append_printf(out, "%s%s:%" G_GUINT64_FORMAT " goes on with layout %" G_GUINT64_FORMAT,
                           before ? ", " : "", after->path, after->line_no, after->index);
  if (!before && !after) g_string_append(out, "the shards hold no layouts before it");
}

/* Every measured number of a result is finite: ptsim computes no inf or
 * NaN, so one in a shard was put there. */
static gboolean result_is_finite(const PtsimBatchResult *r) {
  const double values[] = {r->total_bytes,
                           r->usage_fraction,
                           r->step_s,
                           r->tokens_per_s,
                           r->tflops_per_gpu,
                           r->mfu,
                           r->bubble_fraction,
                           r->exposed_comm_s[0],
                           r->exposed_comm_s[1],
                           r->exposed_comm_s[2],
                           r->exposed_comm_s[3],
                           r->exposed_comm_s[4],
                           r->alloc_device_peak_bytes,
                           r->held_floor_bytes,
                           r->step_p50_s,
                           r->step_p90_s,
                           r->step_p99_s};
  for (gsize i = 0; i < G_N_ELEMENTS(values); i++)
    if (!isfinite(values[i])) return FALSE;
  return TRUE;
}

gboolean ptsim_shard_reader_next(PtsimShardReader *r, guint64 index, const PtsimJob *job,
                                 PtsimBatchResult *out, GError **error) {
  ShardFile *f;
  const char *bytes, *row;
  gsize len = 0;
  while (r->at < r->n && !r->files[r->at].line) r->at++;
  if (r->at == r->n || r->files[r->at].index > index) {
    g_autoptr(GString) where = g_string_new(NULL);
    describe_gap(r, where);
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                "--merge: no shard holds layout %" G_GUINT64_FORMAT
                " of this sweep: %s (is a shard missing?)",
                index, where->str);
    return FALSE;
  }
  f = &r->files[r->at];
  if (f->index < index) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                "--merge %s:%" G_GUINT64_FORMAT ": layout %" G_GUINT64_FORMAT
                " is given twice (the same shard twice, or shards of another split?)",
                f->path, f->line_no, f->index);
    return FALSE;
  }
  bytes = strchr(f->line, ',') + 1;
  row = strchr(bytes, ',');
  if (row) {
    g_autofree char *text = g_strndup(bytes, (gsize)(row - bytes));
    g_autofree guchar *raw = g_base64_decode(text, &len);
    if (len == sizeof *out) memcpy(out, raw, len);
  }
  if (row && len == sizeof *out && !result_is_finite(out)) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                "--merge %s:%" G_GUINT64_FORMAT ": layout %" G_GUINT64_FORMAT
                ": a result that is not a finite number (an edited shard?)",
                f->path, f->line_no, f->index);
    return FALSE;
  }
  g_string_truncate(r->expected, 0);
  if (row && len == sizeof *out) ptsim_sweep_csv_row(r->expected, 0, job, out);
  if (!row || len != sizeof *out || strcmp(row + 1, r->expected->str) != 0) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                "--merge %s:%" G_GUINT64_FORMAT ": layout %" G_GUINT64_FORMAT
                " is not this sweep's layout %" G_GUINT64_FORMAT
                " (run every shard and the merge with the same sweep flags and ptsim)",
                f->path, f->line_no, f->index, index);
    return FALSE;
  }
  f->last_index = f->index;
  f->last_line = f->line_no;
  return shard_file_advance(f, error);
}

gboolean ptsim_shard_reader_finish(PtsimShardReader *r, GError **error) {
  for (guint i = 0; i < r->n; i++)
    if (r->files[i].line) {
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                  "--merge %s:%" G_GUINT64_FORMAT ": layout %" G_GUINT64_FORMAT
                  " is beyond this sweep's layouts (shards of a larger sweep?)",
                  r->files[i].path, r->files[i].line_no, r->files[i].index);
      return FALSE;
    }
  return TRUE;
}

void ptsim_shard_reader_free(PtsimShardReader *r) {
  if (!r) return;
  for (guint i = 0; i < r->n; i++) shard_file_clear(&r->files[i]);
  g_free(r->files);
  if (r->expected) g_string_free(r->expected, TRUE);
  g_free(r);
}
