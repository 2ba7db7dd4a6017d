/* plot_int.h — what the figure writers (plot.c, plot_alloc.c,
 * plot_sweep.c, plot_validation.c) share and callers do not see: number and
 * string formatting for gnuplot, the NAME.EXT -> NAME.gp / NAME.tsv naming,
 * the write-then-render step, the title label, and a small reader of
 * comma- and tab-separated files that reports file:line.
 *
 * Every number written to a .tsv or .gp goes through ptsim_plot_num (C
 * locale).  Every figure goes through ptsim_plot_render, which checks all
 * three paths against the output policy (output.h), writes data and
 * script, runs gnuplot in the figure's folder into a temporary, and moves a
 * non-empty figure into place (a failed gnuplot leaves the old one). */
#ifndef PTSIM_PLOT_INT_H
#define PTSIM_PLOT_INT_H

#include <glib.h>
#include "numbers.h"
#include "plot.h"

#define PTSIM_PLOT_GIB (1024.0 * 1024.0 * 1024.0)

/* Appends `value` printed with a printf double format, in the C locale. */
void ptsim_plot_num(GString *s, const char *format, double value);

/* Appends TEXT as a gnuplot single-quoted string (a quote is doubled,
 * line breaks dropped). */
void ptsim_plot_quoted(GString *s, const char *text);

/* Fills *files from the figure path (NAME.EXT -> NAME.gp, NAME.tsv) and
 * *format from its ending.  Error: PTSIM_PLOT_ERROR_FORMAT. */
gboolean ptsim_plot_files_for(const char *figure_path, PtsimPlotFormat *format,
                              PtsimPlotFiles *files, GError **error);

/* Checks the three paths, writes files->data (tsv) and files->script (gp),
 * runs gnuplot into a temporary and moves the figure into place.  Errors:
 * PTSIM_OUTPUT_ERROR (a refused path, a failed write), as
 * ptsim_plot_run_gnuplot.  On success moves the paths into *out (may be
 * NULL). */
gboolean ptsim_plot_render(PtsimPlotFiles *files, const GString *tsv, const GString *gp,
                           PtsimPlotFiles *out, GError **error);

/* The script's opening comment: what it draws, the data it reads, how to
 * rerun it. */
void ptsim_plot_script_header(GString *gp, const char *what, const PtsimPlotFiles *files);

/* A label at the figure's top left with up to three lines (NULL: left
 * out), and a top margin that fits them.  (A `set title` is centred over
 * the plot area and clipped when the key takes the right margin.) */
void ptsim_plot_title_lines(GString *gp, const char *first, const char *second,
                            const char *third);

/* ---- delimited text files (sweep CSV, validation CSV, allocator TSV) ---- */

/* One table: a header of column names and rows of cells, with the line
 * number each row came from.  Lines starting with '#' and blank lines are
 * skipped.  Cells are split at `sep` with no quoting (the files read here
 * never quote; a quoted cell is an error naming its line). */
typedef struct {
  char *path;           /* as given, for messages */
  GPtrArray *header;    /* (element-type utf8) column names */
  GPtrArray *rows;      /* (element-type GStrv) cells per row */
  GArray *lines;        /* int: 1-based line number of each row */
  GPtrArray *comments;  /* (element-type utf8) '#' lines, without the '#' */
} PtsimPlotTable;

void ptsim_plot_table_free(PtsimPlotTable *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PtsimPlotTable, ptsim_plot_table_free)

/* Reads `path`.  The first non-comment line is the header; every name in
 * `required` (NULL-terminated, may be NULL) must be in it.
 * Errors (PTSIM_PLOT_ERROR_INPUT, message "path:line: ..."): unreadable
 * file (G_FILE_ERROR), no header, a missing column, a row with a different
 * number of cells, a quoted cell, no data rows.  (transfer full) */
PtsimPlotTable *ptsim_plot_table_read(const char *path, char sep, const char *const *required,
                                      GError **error);

/* Index of column `name` or -1. */
int ptsim_plot_table_column(const PtsimPlotTable *t, const char *name);

/* Cell `col` of row `row` as a number in RANGE (numbers.h: the strict
 * parse).  Error PTSIM_PLOT_ERROR_INPUT "path:line: column NAME: 'text' is
 * not allowed: expected a number >= 0". */
gboolean ptsim_plot_table_double(const PtsimPlotTable *t, guint row, int col, PtsimRange range,
                                 double *out, GError **error);
gboolean ptsim_plot_table_int(const PtsimPlotTable *t, guint row, int col, gint64 *out,
                              GError **error);
const char *ptsim_plot_table_text(const PtsimPlotTable *t, guint row, int col);

#endif /* PTSIM_PLOT_INT_H */
