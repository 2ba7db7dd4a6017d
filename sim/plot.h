/* plot.h — gnuplot figures of one job: the data file, a standalone script
 * and the rendered figure.
 *
 * For a figure path DIR/NAME.EXT (EXT = pdf | png | svg) a writer leaves
 * three files in DIR:
 *   NAME.tsv  the data, tab-separated, one header comment naming every
 *             column with its unit;
 *   NAME.gp   a gnuplot script that reads NAME.tsv and writes NAME.EXT by
 *             relative name, so `cd DIR && gnuplot NAME.gp` re-renders the
 *             figure after a hand edit;
 *   NAME.EXT  the figure (pdfcairo for papers, pngcairo, svg).
 * Every kind of figure starts from one preamble (ptsim_plot_style): one
 * font, one size, a fixed palette whose lightness steps survive grayscale
 * printing, communication hatched, units in axis labels, GiB = 2^30 bytes,
 * only the left and bottom borders, a light grid.
 *
 * Shell module (GLib, I/O, runs gnuplot).  Not here: the numbers plotted
 * (memory.h, engine.h) or option parsing (plot_cmd.h). */
#ifndef PTSIM_PLOT_H
#define PTSIM_PLOT_H

#include <glib.h>
#include "engine.h"
#include "job.h"
#include "memory.h"

#define PTSIM_PLOT_ERROR (ptsim_plot_error_quark())
GQuark ptsim_plot_error_quark(void);

typedef enum {
  PTSIM_PLOT_ERROR_FORMAT,     /* figure name has no .pdf/.png/.svg ending */
  PTSIM_PLOT_ERROR_NO_GNUPLOT, /* gnuplot is not on PATH */
  PTSIM_PLOT_ERROR_GNUPLOT,    /* gnuplot ran and failed */
  PTSIM_PLOT_ERROR_DATA        /* nothing to plot (empty or truncated trace) */
} PtsimPlotErrorCode;

typedef enum {
  PTSIM_PLOT_PDF = 0, /* pdfcairo, vector, for papers */
  PTSIM_PLOT_PNG = 1, /* pngcairo, for screens and reviews */
  PTSIM_PLOT_SVG = 2  /* svg, for the web */
} PtsimPlotFormat;

/* The files one figure consists of.  Paths as the caller spelt the figure
 * (same folder). */
typedef struct {
  char *figure; /* NAME.EXT */
  char *script; /* NAME.gp */
  char *data;   /* NAME.tsv */
} PtsimPlotFiles;

void ptsim_plot_files_clear(PtsimPlotFiles *files);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(PtsimPlotFiles, ptsim_plot_files_clear)

/* Format from the figure path's extension (case-insensitive).  Error:
 * PTSIM_PLOT_ERROR_FORMAT naming the path and the allowed endings. */
gboolean ptsim_plot_format_from_path(const char *path, PtsimPlotFormat *out, GError **error);

/* Appends the shared preamble to `gp`: terminal for `format` at the size
 * given in centimetres, output file `figure_name` (a bare file name), font,
 * borders, grid, and the named colours/line styles every kind uses. */
void ptsim_plot_style(GString *gp, PtsimPlotFormat format, const char *figure_name,
                      double width_cm, double height_cm);

/* Runs `gnuplot NAME.gp` in the script's folder.  Errors:
 * PTSIM_PLOT_ERROR_NO_GNUPLOT when gnuplot is not on PATH (the message says
 * how to install it), PTSIM_PLOT_ERROR_GNUPLOT with gnuplot's stderr when it
 * exits non-zero or leaves no figure, G_SPAWN_ERROR when it cannot start. */
gboolean ptsim_plot_run_gnuplot(const char *script_path, GError **error);

/* Stacked bars of the memory terms per pipeline stage (parameters,
 * gradients, optimizer, activations, other) against the GPU's capacity
 * (solid line) and the fit threshold (dashed).  The .tsv has one row per
 * stage.  On success fills *files (clear with ptsim_plot_files_clear);
 * files may be NULL.  Errors: as ptsim_plot_format_from_path,
 * G_FILE_ERROR writing, as ptsim_plot_run_gnuplot. */
gboolean ptsim_plot_memory(const char *figure_path, const PtsimJob *job,
                           const PtsimMemoryEstimate *memory, PtsimPlotFiles *files,
                           GError **error);

/* Gantt chart of the simulated step: one band per pipeline stage (stage 0
 * at the top) with a compute lane (forward, backward, backward-input,
 * backward-weight, optimizer) above a thinner data-parallel lane
 * (grad-sync, param-gather); x in ms or s; each compute box labelled with
 * its microbatch when wide enough.  The .tsv has one row per trace record
 * (records past the trace's capacity are lost: an error).  Errors as
 * ptsim_plot_memory, plus PTSIM_PLOT_ERROR_DATA for an empty or truncated
 * trace. */
gboolean ptsim_plot_timeline(const char *figure_path, const PtsimJob *job,
                             const PtsimTimeResult *time, const PtsimTrace *trace,
                             PtsimPlotFiles *files, GError **error);

#endif /* PTSIM_PLOT_H */
