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
#include "simulate.h"
#include "sweep.h"

#define PTSIM_PLOT_ERROR (ptsim_plot_error_quark())
GQuark ptsim_plot_error_quark(void);

typedef enum {
  PTSIM_PLOT_ERROR_FORMAT,     /* figure name has no .pdf/.png/.svg ending */
  PTSIM_PLOT_ERROR_NO_GNUPLOT, /* gnuplot is not on PATH */
  PTSIM_PLOT_ERROR_GNUPLOT,    /* gnuplot ran and failed */
  PTSIM_PLOT_ERROR_DATA,       /* nothing to plot (empty or truncated trace) */
  PTSIM_PLOT_ERROR_INPUT       /* an input file is malformed (message: file:line) */
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
 * (solid line) and the fit threshold (dashed).  With `alloc` (may be NULL;
 * its stage count must match), a thin outlined bar per stage reaches the
 * allocator emulation's reserved peak plus CUDA context and NCCL.  The .tsv
 * has one row per stage.  On success fills *files (clear with
 * ptsim_plot_files_clear); files may be NULL.  Errors: as
 * ptsim_plot_format_from_path, G_FILE_ERROR writing, as
 * ptsim_plot_run_gnuplot. */
gboolean ptsim_plot_memory(const char *figure_path, const PtsimJob *job,
                           const PtsimMemoryEstimate *memory, const PtsimAllocResult *alloc,
                           PtsimPlotFiles *files, GError **error);

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

/* ---- figures of a sweep (plot_sweep.c) ---- */

/* One layout of a sweep as the sweep figures use it: a row of
 * `ptsim sweep --csv`, or a job + result of an in-process sweep. */
typedef struct {
  int line;                      /* CSV line; 0: from an in-process sweep */
  gint64 rank;                   /* 1 = best (fitting first, tokens/s per GPU) */
  char model[64], hw[64];
  gint64 gpus, seq, gbs, tp, pp, cp, dp, vp, mbs;
  char recompute[16], schedule[24];
  int status;                    /* 0 ok, else the layout could not be scheduled */
  int fits;                      /* analytical estimate within the threshold */
  double total_bytes;            /* analytical per-GPU bytes of the peak stage */
  double usage_fraction;         /* total_bytes / GPU memory */
  double step_s, tokens_per_s;   /* tokens/s of the whole job */
} PtsimPlotLayout;

/* Reads a `ptsim sweep --csv` file: one PtsimPlotLayout per row (columns
 * found by name; extra columns are ignored).  Errors: G_FILE_ERROR, or
 * PTSIM_PLOT_ERROR_INPUT "FILE:LINE: ..." for a missing column, a bad
 * number, a row with the wrong cell count, or no rows.  (transfer full) */
GArray *ptsim_plot_layouts_read_csv(const char *path, GError **error);

/* The layouts of an evaluated sweep in `order` (ranked indices into
 * sweep->jobs).  (transfer full) */
GArray *ptsim_plot_layouts_from_sweep(const PtsimSweep *sweep, const GArray *order);

typedef enum { PTSIM_PLOT_FACET_CP, PTSIM_PLOT_FACET_MBS } PtsimPlotFacet;

/* Heatmap of tokens/s per GPU over tp (x) x pp (y), one small panel per cp
 * (or mbs) value, every cell the best fitting layout of the (facet, tp, pp)
 * (over the other layout words); a cell whose layouts all fail the memory
 * check is hatched gray and labelled OOM; the best layout is outlined.
 * Uses the scenario (model, hw, gpus, seq, gbs) of the best fitting layout;
 * rows of other scenarios are left out and counted in the data file.  The
 * .tsv has one row per (facet, tp, pp) cell present.  `source` names the
 * input in the data file's header.  Errors as ptsim_plot_memory, plus
 * PTSIM_PLOT_ERROR_DATA when no layout was scheduled. */
gboolean ptsim_plot_heatmap(const char *figure_path, const GArray *layouts,
                            PtsimPlotFacet facet, const char *source, PtsimPlotFiles *files,
                            GError **error);

/* Scatter of analytical memory per GPU (GiB) against tokens/s per GPU, one
 * point per scheduled layout (filled circles fit, open triangles do not),
 * the Pareto front of the fitting layouts (less memory or more throughput)
 * as a line, the best fitting layout labelled with tp/pp/cp/mbs, the GPU's
 * capacity as a vertical line.  Same scenario rule as the heatmap.  The
 * .tsv has block 0 (every layout) and block 1 (the front, by memory).
 * Errors as ptsim_plot_heatmap. */
gboolean ptsim_plot_pareto(const char *figure_path, const GArray *layouts, const char *source,
                           PtsimPlotFiles *files, GError **error);

typedef enum { PTSIM_PLOT_Y_THROUGHPUT, PTSIM_PLOT_Y_STEP } PtsimPlotScalingY;

/* Tokens/s per GPU (or step time) of the best fitting layout per GPU count,
 * one line per (model, hw, seq, gbs) series (named by what differs), log2
 * GPU axis; a GPU count where nothing fits is marked OOM on the axis.  The
 * .tsv has one block per series, one row per GPU count.  Errors as
 * ptsim_plot_heatmap. */
gboolean ptsim_plot_scaling(const char *figure_path, const GArray *layouts, PtsimPlotScalingY y,
                            const char *source, PtsimPlotFiles *files, GError **error);

/* ---- allocator over a step (plot_alloc.c) ---- */

/* Allocated and reserved bytes over the last replayed step, per stage (one
 * panel each, up to 8; for deeper pipelines 8 chosen stages: the first, the
 * peak, the last and evenly spaced ones), as step lines, against the
 * allocator's limit (capacity minus CUDA context + NCCL).  `timeline_path`
 * is a --memory-timeline TSV (columns stage, step, time_s, allocated_bytes,
 * reserved_bytes; comments `# step_s`, `# capacity_bytes`, `# outside_bytes`
 * when ptsim wrote it); the job supplies the capacity and outside bytes
 * when the comments are absent.  Without `# step_s` every step is drawn
 * over the whole time axis.  The figure's .tsv has one row per sample
 * drawn (plus one per stage carrying the previous step's last value to the
 * step start).  Errors as ptsim_plot_memory, plus PTSIM_PLOT_ERROR_INPUT
 * (file:line) for a malformed timeline or a stage the job does not have. */
gboolean ptsim_plot_allocator(const char *figure_path, const PtsimJob *job,
                              const char *timeline_path, PtsimPlotFiles *files, GError **error);

/* ---- predicted vs measured (plot_validation.c) ---- */

/* Predicted against measured step time from a CSV with the header
 * `source,run,measured_s,predicted_s` (extra columns ignored; seconds;
 * both > 0): log-log, the y = x line and a +-10% band, points by source
 * (point type + colour, legend), each labelled with its run when there are
 * at most 16 points.  The .tsv has one row per CSV row.  Errors:
 * G_FILE_ERROR, PTSIM_PLOT_ERROR_INPUT (file:line), as ptsim_plot_memory. */
gboolean ptsim_plot_validation(const char *figure_path, const char *csv_path,
                               PtsimPlotFiles *files, GError **error);

#endif /* PTSIM_PLOT_H */
