/* sweep_shard.c — shard files and their merge; see sweep_shard.h. */
#define _POSIX_C_SOURCE 200809L /* getc_unlocked */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "config.h"
#include "input.h"
#include "numbers.h"
#include "sweep_shard.h"
#include "sweep_rows.h"

#define SHARD_COLUMNS "layout_index,result,"
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

void ptsim_shard_header(GString *out) {
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
  guint64 index; /* its layout index */
} ShardFile;

struct PtsimShardReader {
  ShardFile *files;  /* in slice order */
  guint n, at;       /* files, the one being read */
  GString *expected; /* scratch: the row the sweep's layout gives */
};

static void shard_file_clear(ShardFile *f) {
  if (f->file) fclose(f->file);
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

PtsimShardReader *ptsim_shard_reader_open(char **paths, guint n, GError **error) {
  g_autoptr(PtsimShardReader) r = g_new0(PtsimShardReader, 1);
  g_autoptr(GString) header = g_string_new(NULL);
  ptsim_shard_header(header);
  r->files = g_new0(ShardFile, n);
  r->n = n;
  r->expected = g_string_new(NULL);
  for (guint i = 0; i < n; i++) {
    ShardFile *f = &r->files[i];
    f->path = g_strdup(paths[i]);
    f->buf = g_string_new(NULL);
    /* streamed (a shard may be gigabytes), but remembered as an input */
    if (!(f->file = ptsim_input_open_stream(f->path, "--merge", error))) return NULL;
    if (!shard_file_read(f, error)) return NULL;
    if (!f->line || strcmp(f->line, header->str) != 0) {
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                  "--merge %s:1: not a shard file (written by sweep --shard K/N --csv FILE "
                  "of this ptsim; its header starts with %s)",
                  f->path, SHARD_COLUMNS);
      return NULL;
    }
    if (!shard_file_advance(f, error)) return NULL;
  }
  qsort(r->files, n, sizeof *r->files, compare_first_index);
  return g_steal_pointer(&r);
}

gboolean ptsim_shard_reader_next(PtsimShardReader *r, guint64 index, const PtsimJob *job,
                                 PtsimBatchResult *out, GError **error) {
  ShardFile *f;
  const char *bytes, *row;
  gsize len = 0;
  while (r->at < r->n && !r->files[r->at].line) r->at++;
  if (r->at == r->n || r->files[r->at].index > index) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                "--merge: no shard holds layout %" G_GUINT64_FORMAT
                " of this sweep (is a shard missing?)",
                index);
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
