/* run_csv.h — a reader of measured-runs CSV files (the format of
 * the CSV files in shared/data/published/; the columns are documented in
 * validate/README.md).
 *
 * Shell module (GLib).  RFC 4180 CSV: one header row of column names, then
 * one row per run; fields may be quoted ("a, b" and "" for a quote), a
 * quoted field may span lines; CRLF and a UTF-8 byte-order mark are
 * accepted; blank lines are skipped.  Columns are found by name, in any
 * order; columns the reader does not know are kept as text (cells) and
 * otherwise ignored.  An empty cell, or "not_stated", is unknown.  Numbers
 * may carry a leading '~' and trailing words after a blank or '(' ("~32
 * (approx)"): the value is read and the row is marked approximate.
 *
 * Where two columns say the same thing, the first named wins when both
 * are filled: hw over gpu, dp over dp_derived, vp over vp_derived,
 * step_time_s over iteration_time_ms (ms / 1000), tflops_per_gpu over
 * achieved_tflops_per_gpu.
 *
 * Errors (PTSIM_RUN_CSV_ERROR) name "file:line:column: " (1-based; the
 * column is the byte column of the cell in its line) and the column name:
 * an unreadable file, no header, a duplicated column name, a row with more
 * or fewer cells than the header, an unterminated quote, text after a
 * closing quote, a number that is not one, a word outside its column's
 * choices.  On error nothing is returned.
 *
 * Not here: comparing runs with predictions (validate/), Megatron-LM logs
 * (megatron_log.h). */
#ifndef PTSIM_RUN_CSV_H
#define PTSIM_RUN_CSV_H

#include <glib.h>
#include "job.h"

#define PTSIM_RUN_CSV_ERROR (ptsim_run_csv_error_quark())
GQuark ptsim_run_csv_error_quark(void);

typedef enum {
  PTSIM_RUN_CSV_ERROR_NOT_FOUND, /* the file cannot be read */
  PTSIM_RUN_CSV_ERROR_PARSE      /* malformed CSV or cell */
} PtsimRunCsvError;

/* One measured run.  Unknown numbers are -1 (counts) or NAN (measures),
 * unknown words NULL / -1. */
typedef struct {
  char *model; /* model column (transfer full); NULL: empty */
  char *hw;    /* hw, else gpu column; NULL: empty */
  int64_t num_gpus;
  int64_t tp, pp, dp, cp, vp; /* dp from dp or dp_derived, vp likewise */
  int64_t mbs, gbs, seq_len;
  int recompute;         /* PtsimRecompute; -1: unknown */
  int precision;         /* PtsimPrecision; -1: unknown */
  double step_time_s;    /* step_time_s, or iteration_time_ms / 1000 */
  double tflops_per_gpu; /* tflops_per_gpu or achieved_tflops_per_gpu */
  double max_allocated_mb;
  double max_reserved_mb;
  int oom;              /* 1 ran out of memory, 0 did not, -1 unknown */
  gboolean approximate; /* some documented number had ~ or words */
  int64_t line;         /* 1-based line where the row starts */
  char **cells;         /* every cell as text, header order (GStrv) */
} PtsimRun;

typedef struct {
  char *path;     /* name used in messages (transfer full) */
  char **columns; /* header names, in file order (GStrv) */
  GArray *runs;   /* PtsimRun, in file order */
} PtsimRunCsv;

void ptsim_run_csv_free(PtsimRunCsv *csv);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PtsimRunCsv, ptsim_run_csv_free)

/* Parses LEN bytes of DATA; NAME is used in messages.  (transfer full);
 * NULL with ERROR set on failure. */
PtsimRunCsv *ptsim_run_csv_parse(const char *data, gsize len, const char *name, GError **error);

/* Reads and parses PATH.  (transfer full) */
PtsimRunCsv *ptsim_run_csv_read_file(const char *path, GError **error);

/* Index of column NAME in the header, or -1. */
int ptsim_run_csv_column(const PtsimRunCsv *csv, const char *name);

/* Cell of RUN in column NAME, or NULL when there is no such column.
 * (transfer none) */
const char *ptsim_run_csv_cell(const PtsimRunCsv *csv, const PtsimRun *run, const char *name);

#endif /* PTSIM_RUN_CSV_H */
