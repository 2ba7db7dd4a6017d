/* plot_int.h — what the figure writers (plot_memory.c, plot_timeline.c,
 * plot_alloc.c, plot_sweep.c, plot_heatmap.c, plot_pareto.c,
 * plot_validation.c) share and callers do not see: the canvas (printed
 * size and the fonts that go with it), number and string formatting for
 * gnuplot, the NAME.EXT -> NAME.gp / NAME.tsv naming, the write-then-render
 * step, titles that wrap to the figure's width, and a small reader of
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
#include "units.h"

#define PTSIM_PLOT_GIB PTSIM_GIB_BYTES
/* Printing units: a figure's sizes are in cm, its fonts in points. */
#define PTSIM_PLOT_CM_PER_IN 2.54 /* by definition */
#define PTSIM_PLOT_PT_PER_IN 72.0 /* PostScript points, cairo's font unit */
/* A PNG's pixels per inch: on a screen it looks like the PDF at about 2x. */
#define PTSIM_PLOT_PNG_PPI 150.0

/* ---- the canvas ---- */

/* One figure's page: its printed size and the three font sizes every kind
 * uses.  Built from a PtsimPlotSize by ptsim_plot_begin; the height is set
 * once the writer knows its content (ptsim_plot_canvas_height). */
typedef struct {
  PtsimPlotFormat format;
  double width_cm, height_cm;
  double given_height_cm; /* the caller's height, 0: the kind's */
  double font_pt;         /* axis and tick labels, titles */
  double small_pt;        /* keys, line labels, notes */
  double tiny_pt;         /* numbers inside boxes and cells */
  gboolean narrow;        /* a column or narrower: compact layouts */
} PtsimPlotCanvas;

/* What every writer starts with: the files of `figure_path` (NAME.EXT ->
 * NAME.gp, NAME.tsv) and the canvas for its format at `size` (NULL: page).
 * Error: PTSIM_PLOT_ERROR_FORMAT. */
gboolean ptsim_plot_begin(const char *figure_path, const PtsimPlotSize *size, PtsimPlotFiles *files,
                          PtsimPlotCanvas *c, GError **error);

/* Sets the height: the caller's when given, else `auto_cm` (clamped to
 * 3..60 cm). */
void ptsim_plot_canvas_height(PtsimPlotCanvas *c, double auto_cm);

/* Width in cm of `chars` characters at `pt` (an average Sans glyph is
 * about 0.6 em wide, digits and capitals a little more). */
double ptsim_plot_text_cm(double pt, double chars);

/* A key under the plot: how many of `entries` entries, the longest
 * `longest_chars` characters, fit on a row of the canvas (*per_row), and
 * how many rows that makes. */
int ptsim_plot_key_rows(const PtsimPlotCanvas *c, int entries, int longest_chars, int *per_row);

/* ---- formatting ---- */

/* Appends `value` printed with a printf double format, in the C locale. */
void ptsim_plot_num(GString *s, const char *format, double value);

/* Appends TEXT as a gnuplot single-quoted string (a quote is doubled,
 * line breaks dropped). */
void ptsim_plot_quoted(GString *s, const char *text);

/* Checks the three paths, writes files->data (tsv) and files->script (gp),
 * runs gnuplot into a temporary and moves the figure into place.  Errors:
 * PTSIM_OUTPUT_ERROR (a refused path, a failed write), gnuplot's errors as
 * ptsim_plot_memory (plot.h).  On success moves the paths into *out (may be
 * NULL). */
gboolean ptsim_plot_render(PtsimPlotFiles *files, const GString *tsv, const GString *gp,
                           PtsimPlotFiles *out, GError **error);

/* A new script: its opening comment (what it draws, the data it reads, how
 * to rerun it; the job and the scenario when given, either may be NULL),
 * the shared style for the canvas, and `data = 'NAME.tsv'` (no newline
 * after it).  (transfer full) */
GString *ptsim_plot_script_begin(const PtsimPlotFiles *files, const PtsimPlotCanvas *c,
                                 const char *what, const PtsimJob *job, const char *scenario);

/* A title at the figure's top left: each of the given texts (NULL-
 * terminated) wrapped at ", " and "; " to the canvas's width, never cut
 * (`max_lines` is the usual count; a longer title makes the figure taller:
 * ptsim_plot_title_cm counts the same lines).  The .gp
 * gets `show_title = 1` (set it to 0 for a paper, where the caption says
 * what was run) and `title_cm`, the height the title takes, which
 * ptsim_plot_margins reserves.  Returns the number of lines. */
int ptsim_plot_title(GString *gp, const PtsimPlotCanvas *c, int max_lines,
                     const char *const *texts);

/* The height ptsim_plot_title's title will take (title_cm). */
double ptsim_plot_title_cm(const PtsimPlotCanvas *c, int max_lines, const char *const *texts);

/* Height in cm under the plot area for tick labels and an axis label. */
double ptsim_plot_axis_cm(const PtsimPlotCanvas *c);

/* Height in cm of one line of text at `pt`. */
double ptsim_plot_line_cm(double pt);

/* Fixes the plot area in screen coordinates, so a long key or title can
 * never squeeze it: `top_cm` under the title (when shown), `bottom_cm`
 * above the figure's lower edge (tick labels, x label, a key under the
 * plot).  Margins left and right stay gnuplot's. */
void ptsim_plot_margins(GString *gp, double top_cm, double bottom_cm);

/* The height a key of `rows` rows under the plot takes, and its placement
 * `above_cm` over the figure's bottom edge, `per_row` entries to a row,
 * the longest `longest_chars` long. */
double ptsim_plot_key_cm(const PtsimPlotCanvas *c, int rows);
void ptsim_plot_key_under(GString *gp, const PtsimPlotCanvas *c, int per_row, int longest_chars,
                          double above_cm);

/* The `width` a key needs so gnuplot lays out the columns
 * ptsim_plot_key_rows counted, whatever the terminal. */
int ptsim_plot_key_width(const PtsimPlotCanvas *c, int longest_chars);

/* The texts' lines as ptsim_plot_title wraps them.  (transfer full) */
GPtrArray *ptsim_plot_wrap(const PtsimPlotCanvas *c, double pt, int max_lines,
                           const char *const *texts);

/* A 1-2-5 step (..., 0.5, 1, 2, 5, 10, ...) giving about `count`
 * intervals over [lo, hi]: tick spacing that a reader can add up. */
double ptsim_plot_nice_step(double lo, double hi, int count);

/* ---- the job ---- */

/* A "# job: ..." header line naming the job, for .tsv and .gp. */
void ptsim_plot_job_comment(GString *s, const PtsimJob *job);

/* "MODEL on N x HW" and "tp . pp . [cp .] dp . [vp .], mbs . gbs . seq .
 * [, recompute .], SCHEDULE" for titles (cp, vp and recompute when they are
 * not 1 / none).  (transfer full) */
char *ptsim_plot_job_what(const PtsimJob *job);
char *ptsim_plot_job_layout(const PtsimJob *job);

/* ---- delimited text files (sweep CSV, validation CSV, allocator TSV) ---- */

/* One table: a header of column names and rows of cells, with the line
 * number each row came from.  Lines starting with '#' and blank lines are
 * skipped.  Cells are split at `sep` with no quoting (the files read here
 * never quote; a quoted cell is an error naming its line). */
typedef struct {
  char *path;          /* as given, for messages */
  GPtrArray *header;   /* (element-type utf8) column names */
  GPtrArray *rows;     /* (element-type GStrv) cells per row */
  GArray *lines;       /* int: 1-based line number of each row */
  GPtrArray *comments; /* (element-type utf8) '#' lines, without the '#' */
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

/* The value of "# KEY VALUE" among the table's comments into *out (NAN
 * when absent); a value that is not a number in RANGE is an error naming
 * the file, the key and the value. */
gboolean ptsim_plot_table_comment_value(const PtsimPlotTable *t, const char *key, PtsimRange range,
                                        double *out, GError **error);

#endif /* PTSIM_PLOT_INT_H */
