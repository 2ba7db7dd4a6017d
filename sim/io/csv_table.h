/* csv_table.h — a strict reader of the CSV data files ptsim ships (the
 * kernel and collective tables of hw_profiles/kernels/): records of cells,
 * each cell with the line and column it starts at, for errors that point
 * at it.
 *
 * Shell module (GLib).  The format: comma-separated cells; a cell may be
 * quoted ("a, b", with "" for a quote) but not span lines; a line whose
 * first character is '#' is a comment; blank lines are skipped; CRLF line
 * ends and a UTF-8 byte-order mark are accepted.  A NUL byte, a line break
 * inside quotes, an unterminated quote or text after a closing quote is an
 * error: PTSIM_CONFIG_ERROR_PARSE, "LABEL:LINE:COLUMN: what" (1-based; the
 * column is the byte column in the line).
 *
 * Not here: what the cells mean (the readers, e.g. kernel_tables.c), the
 * measured-runs CSVs (validate/run_csv.c, which has quoted cells spanning
 * lines and looser rules). */
#ifndef PTSIM_CSV_TABLE_H
#define PTSIM_CSV_TABLE_H

#include <glib.h>
#include <stdint.h>

/* One cell of a record. */
typedef struct {
  char *text;   /* unquoted (transfer full, freed with the record) */
  int64_t line; /* where it starts, 1-based */
  int64_t col;
} PtsimCsvCell;

typedef struct PtsimCsvReader PtsimCsvReader;

/* A reader of DATA (LEN bytes, not copied: it must outlive the reader);
 * LABEL names it in errors ("gemm.csv").  (transfer full) */
PtsimCsvReader *ptsim_csv_reader_new(const char *data, gsize len, const char *label);
void ptsim_csv_reader_free(PtsimCsvReader *reader);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PtsimCsvReader, ptsim_csv_reader_free)

/* The next record into CELLS (a GArray of PtsimCsvCell made by
 * ptsim_csv_cells_new, emptied first).  FALSE at the end of the data
 * (ERROR untouched) or on an error (ERROR set, CELLS emptied). */
gboolean ptsim_csv_reader_next(PtsimCsvReader *reader, GArray *cells, GError **error);

/* An empty GArray of PtsimCsvCell that frees the cells' text.  (transfer full) */
GArray *ptsim_csv_cells_new(void);

/* The reader's LABEL.  (transfer none) */
const char *ptsim_csv_reader_label(const PtsimCsvReader *reader);

#endif /* PTSIM_CSV_TABLE_H */
