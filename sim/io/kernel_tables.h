/* kernel_tables.h — the measured kernel and collective tables of
 * hw_profiles/kernels/ read, checked, and turned into one core
 * PtsimKernelTable per GPU (kernel_table.h).
 *
 * Shell module (GLib).  The files and their columns are documented in
 * hw_profiles/kernels/README.md: sources.csv (key, where, what) and one
 * CSV per kind (gemm.csv, attention.csv, ...), each read through the
 * capped reader (input.h) and the strict CSV reader (csv_table.h).  Every
 * number goes through the strict parser (numbers.h) with its column's
 * range; every word must be one of its column's words; every row names a
 * source of sources.csv and a marker (read, plot, derived, 3rd-party);
 * rows whose own numbers restate each other must agree (gbps = bytes /
 * time, busbw = bytes / time x the bus factor, within 2%); no curve may get
 * two values at one x.  Errors: PTSIM_CONFIG_ERROR_PARSE (exit 2), one
 * line, "FILE:LINE:COLUMN: column NAME: what is wrong" or "FILE:LINE: ...".
 * On error the tables keep what earlier calls added and nothing of the
 * failed file.
 *
 * Not here: the curves and their lookups (kernel_table.h), using them
 * (the cost model, later). */
#ifndef PTSIM_KERNEL_TABLES_H
#define PTSIM_KERNEL_TABLES_H

#include <glib.h>
#include "kernel_table.h"

/* The folder, relative to the data dir (ptsim_config_data_dir()). */
#define PTSIM_KERNEL_TABLES_DIR "hw_profiles/kernels"
#define PTSIM_KERNEL_SOURCES_FILE "sources.csv"
/* At most this many GPUs (each gets a PtsimKernelTable). */
#define PTSIM_KERNEL_TABLES_MAX_GPUS 64

typedef struct PtsimKernelTables PtsimKernelTables;

PtsimKernelTables *ptsim_kernel_tables_new(void);
void ptsim_kernel_tables_free(PtsimKernelTables *tables);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PtsimKernelTables, ptsim_kernel_tables_free)

/* The file of KIND's table in the folder ("gemm.csv").  (transfer none) */
const char *ptsim_kernel_tables_file(PtsimKernelKind kind);

/* Adds the sources of DATA (LEN bytes, sources.csv's format); LABEL names
 * it in errors.  A key given twice, here or before, is an error. */
gboolean ptsim_kernel_tables_add_sources(PtsimKernelTables *tables, const char *data, gsize len,
                                         const char *label, GError **error);

/* Adds the rows of DATA, a file of KIND; each row's source must have been
 * added already. */
gboolean ptsim_kernel_tables_add_rows(PtsimKernelTables *tables, PtsimKernelKind kind,
                                      const char *data, gsize len, const char *label,
                                      GError **error);

/* Reads DIR/sources.csv, then every kind's file in DIR (NULL: the data
 * dir's hw_profiles/kernels), then checks that every source is used. */
gboolean ptsim_kernel_tables_load(PtsimKernelTables *tables, const char *dir, GError **error);

/* One row as it was read. */
typedef struct {
  const char *gpu, *series, *source, *marker; /* (transfer none) */
  const char *label;                          /* the file it came from */
  int64_t line;
  double x; /* the curve's x (kernel_table.h) */
  double y; /* its first value (MOE_DISPATCH: bandwidth, else latency) */
} PtsimKernelRow;

/* Rows of KIND read so far. */
guint ptsim_kernel_tables_rows(const PtsimKernelTables *tables, PtsimKernelKind kind);

/* Row I of KIND; FALSE when I is out of range. */
gboolean ptsim_kernel_tables_row(const PtsimKernelTables *tables, PtsimKernelKind kind, guint i,
                                 PtsimKernelRow *out);

/* Where the source KEY is (a URL or OWNER/REPO@COMMIT:PATH); NULL when
 * there is no such source.  (transfer none) */
const char *ptsim_kernel_tables_source(const PtsimKernelTables *tables, const char *key);

/* The GPUs with rows, sorted.  (transfer full: a NULL-terminated vector) */
char **ptsim_kernel_tables_gpus(const PtsimKernelTables *tables);

/* Copies GPU's table into OUT.  An error naming the GPUs there are when
 * GPU has no rows (PTSIM_CONFIG_ERROR_NOT_FOUND). */
gboolean ptsim_kernel_tables_select(const PtsimKernelTables *tables, const char *gpu,
                                    PtsimKernelTable *out, GError **error);

#endif /* PTSIM_KERNEL_TABLES_H */
