/* plot.h — gnuplot figures of one job, a sweep or a validation: the data
 * file, a standalone script and the rendered figure.
 *
 * For a figure path DIR/NAME.EXT (EXT = pdf | png | svg) a writer leaves
 * three files in DIR:
 *   NAME.tsv  the data, tab-separated, one header comment naming every
 *             column with its unit;
 *   NAME.gp   a gnuplot script that reads NAME.tsv and writes NAME.EXT by
 *             relative name, so `cd DIR && gnuplot NAME.gp` re-renders the
 *             figure after a hand edit (sizes, fonts and colours are named
 *             variables at its top);
 *   NAME.EXT  the figure (pdfcairo for papers, pngcairo, svg).
 * Every figure is laid out for a paper size (PtsimPlotSize: a 3.5 in column
 * or the 7 in text width) with fonts that stay readable printed at that
 * size, from one preamble (plot.c's append_style): a palette that is
 * colour-blind-safe and whose lightness steps survive grayscale printing,
 * every series also told apart by point or dash type, units in axis labels,
 * GiB = 2^30 bytes, only the left and bottom borders, a light grid.
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
  PTSIM_PLOT_ERROR_INPUT,      /* an input file is malformed (message: file:line) */
  PTSIM_PLOT_ERROR_OPTION      /* a figure option is malformed or selects nothing */
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

/* ---- size and what part of a job to draw ---- */

#define PTSIM_PLOT_COLUMN_CM 8.89 /* 3.5 in: one column of a two-column paper */
#define PTSIM_PLOT_PAGE_CM 17.78  /* 7 in: the text width, across both columns */

/* The printed size of a figure.  The fonts follow the width (8 pt text up
 * to a column, 9 pt wider; never under 6 pt for the smallest labels), so a
 * figure printed at this size reads like the paper's captions. */
typedef struct {
  double width_cm;  /* > 0 */
  double height_cm; /* 0: the kind picks a height for its content at this width */
} PtsimPlotSize;

/* The page preset with the kind's own height (what NULL means to every
 * writer). */
void ptsim_plot_size_default(PtsimPlotSize *size);

/* Parses --size: "column" (3.5 in), "page" (7 in), or "WxH" / "W" with a
 * unit "in" or "cm" after the numbers ("3.5x2.5in", "12cm", "12x8cm";
 * height 0 or left out: the kind's).  Widths from 5 to 60 cm, heights up to
 * 60 cm.  Error PTSIM_PLOT_ERROR_OPTION naming the value and what is
 * allowed. */
gboolean ptsim_plot_size_parse(const char *text, PtsimPlotSize *out, GError **error);

/* What part of a step the timeline and allocator figures draw. */
typedef struct {
  double start_s, end_s;           /* time window from the step's start; end_s <= 0: to
                                      the end of the step */
  gboolean stages_given;           /* FALSE: the figure picks (all when they fit) */
  guint8 stages[PTSIM_MAX_STAGES]; /* 1: draw this pipeline stage */
} PtsimPlotRange;

/* The whole step, stages picked by the figure. */
void ptsim_plot_range_default(PtsimPlotRange *range);

/* Parses --window "START:END" (seconds; "ms" after a number: milliseconds;
 * END may be left out: to the end of the step).  Error
 * PTSIM_PLOT_ERROR_OPTION. */
gboolean ptsim_plot_range_parse_window(const char *text, PtsimPlotRange *range, GError **error);

/* Parses --stages "0,4:7,127" (stage numbers and inclusive A:B ranges,
 * 0-based) for a job of `num_stages`.  Error PTSIM_PLOT_ERROR_OPTION naming
 * the value and the job's stage count. */
gboolean ptsim_plot_range_parse_stages(const char *text, int64_t num_stages, PtsimPlotRange *range,
                                       GError **error);

/* ---- figures of one job ---- */

/* Stacked bars of the memory terms per pipeline stage (parameters,
 * gradients, optimizer, activations, other) against the GPU's capacity
 * (solid line) and the fit threshold (dashed), both labelled with their
 * value in the right margin.  With `alloc` (may be NULL; its stage count
 * must match), an outlined bar per stage reaches the allocator emulation's
 * reserved peak plus CUDA context and NCCL, its value above it; the
 * analytical total sits inside the top of the stack.  The key sits under
 * the plot; the "other" entry carries its largest value, since its bar
 * segment is often a hairline.  The .tsv has one row per stage.  size may
 * be NULL (page).  On success fills *files (clear with
 * ptsim_plot_files_clear); files may be NULL.  Errors: as
 * ptsim_plot_format_from_path, G_FILE_ERROR writing,
 * PTSIM_PLOT_ERROR_NO_GNUPLOT when gnuplot is not on PATH (the message says
 * how to install it), PTSIM_PLOT_ERROR_GNUPLOT with gnuplot's stderr when it
 * exits non-zero or leaves no figure, G_SPAWN_ERROR when it cannot start. */
gboolean ptsim_plot_memory(const char *figure_path, const PtsimJob *job,
                           const PtsimMemoryEstimate *memory, const PtsimAllocResult *alloc,
                           const PtsimPlotSize *size, PtsimPlotFiles *files, GError **error);

/* Gantt chart of the simulated step (plot_timeline.c): one band per drawn
 * pipeline stage (stage 0 at the top) with a compute lane (forward,
 * backward, backward-input, backward-weight, optimizer) over a thinner
 * data-parallel lane (grad-sync, param-gather) inside the band; x in ms or
 * s over the range's window.  When the boxes are wide enough at this size
 * each is drawn (and numbered by microbatch when the number fits);
 * otherwise each stage's lane is cut into bins about 1.5 pt wide and a bin
 * is drawn in the colour of the kind that ran longest in it (left blank
 * when the lane was mostly idle), which keeps thousands of microbatches
 * readable and the file small.  Deep pipelines draw at most 32 stages (16
 * at column width) — the first, the last and evenly spaced ones — unless
 * the range names them.  The .tsv has one row per drawn box.  Errors as
 * ptsim_plot_memory, plus PTSIM_PLOT_ERROR_DATA for an empty or truncated
 * trace and PTSIM_PLOT_ERROR_OPTION for a window or stage outside the
 * step. */
gboolean ptsim_plot_timeline(const char *figure_path, const PtsimJob *job,
                             const PtsimTimeResult *time, const PtsimTrace *trace,
                             const PtsimPlotSize *size, const PtsimPlotRange *range,
                             PtsimPlotFiles *files, GError **error);

/* ---- figures of a sweep (plot_sweep.c, plot_heatmap.c, plot_pareto.c) ---- */

/* One layout of a sweep as the sweep figures use it: a row of
 * `ptsim sweep --csv`, or a job + result of an in-process sweep. */
typedef struct {
  int line;    /* CSV line; 0: from an in-process sweep */
  gint64 rank; /* 1 = best (fitting first, tokens/s per GPU) */
  char model[64], hw[64];
  gint64 gpus, seq, gbs, tp, pp, cp, dp, vp, mbs;
  char recompute[16], schedule[24];
  int status;                  /* 0 ok, else the layout could not be scheduled */
  int fits;                    /* analytical estimate within the threshold */
  int runs;                    /* the runs verdict: 1 yes, 0 no, -1 not settled; -2 not
                                  known (a CSV without the column: the 80% rule stands in) */
  double total_bytes;          /* analytical per-GPU bytes of the peak stage */
  double usage_fraction;       /* total_bytes / GPU memory */
  double step_s, tokens_per_s; /* tokens/s of the whole job */
} PtsimPlotLayout;

/* Reads a `ptsim sweep --csv` file: one PtsimPlotLayout per row (columns
 * found by name, in any order; extra columns are ignored).  Errors:
 * G_FILE_ERROR, or PTSIM_PLOT_ERROR_INPUT "FILE:LINE: ..." for a missing
 * column, a bad number, a row with the wrong cell count, or no rows.
 * (transfer full) */
GArray *ptsim_plot_layouts_read_csv(const char *path, GError **error);

/* The layouts of an evaluated sweep in `order` (ranked indices into
 * sweep->jobs).  (transfer full) */
GArray *ptsim_plot_layouts_from_sweep(const PtsimSweep *sweep, const GArray *order);

/* Which scenario (model, hw, gpus, seq, gbs) a heatmap or pareto figure
 * draws: NULL / 0 fields match anything. */
typedef struct {
  const char *model, *hw;
  gint64 gpus, seq, gbs;
} PtsimPlotScenario;

/* The layouts of exactly one scenario: those matching `want` (NULL: any).
 * Errors PTSIM_PLOT_ERROR_OPTION: nothing matches (the message lists the
 * scenarios there are), or several scenarios still match (the message
 * lists them and the flags that pick one).  (transfer full) */
GArray *ptsim_plot_layouts_one_scenario(const GArray *layouts, const PtsimPlotScenario *want,
                                        GError **error);

typedef enum { PTSIM_PLOT_FACET_CP, PTSIM_PLOT_FACET_MBS } PtsimPlotFacet;

/* Heatmap of tokens/s per GPU over tp (x) x pp (y), one small panel per cp
 * (or mbs) value, every cell the best fitting layout of the (facet, tp, pp)
 * (over the other layout words), labelled in whole tokens/s per GPU — the
 * colour bar's unit — so that no two cells share a label unless their
 * values round alike; a cell whose layouts all fail the memory check is
 * hatched gray and labelled OOM; the best layout is outlined.  `layouts`
 * must hold one scenario (ptsim_plot_layouts_one_scenario).  The .tsv has
 * one row per (facet, tp, pp) cell present.  `source` names the input in
 * the data file's header.  Errors as ptsim_plot_memory, plus
 * PTSIM_PLOT_ERROR_DATA when no layout was scheduled or the layouts mix
 * scenarios. */
gboolean ptsim_plot_heatmap(const char *figure_path, const GArray *layouts, PtsimPlotFacet facet,
                            const char *source, const PtsimPlotSize *size, PtsimPlotFiles *files,
                            GError **error);

/* Scatter of analytical memory per GPU (GiB) against tokens/s per GPU, one
 * point per scheduled layout (filled circles fit, open triangles do not),
 * the Pareto front of the fitting layouts (less memory or more throughput)
 * as a line, the GPU's capacity as a solid vertical line and the fit limit
 * (threshold x capacity, the line that decides "fits") dashed, each
 * labelled with its value; the best fitting layout is ringed and named in a
 * note under the plot, clear of every point and line.  `threshold` is the
 * fit threshold the sweep used (0: inferred from the rows' fits and
 * usage; 0.8 when they do not say).  One scenario, as the heatmap.  The
 * .tsv has block 0 (every layout) and block 1 (the front, by memory).
 * Errors as ptsim_plot_heatmap. */
gboolean ptsim_plot_pareto(const char *figure_path, const GArray *layouts, double threshold,
                           const char *source, const PtsimPlotSize *size, PtsimPlotFiles *files,
                           GError **error);

typedef enum { PTSIM_PLOT_Y_THROUGHPUT, PTSIM_PLOT_Y_STEP } PtsimPlotScalingY;

/* Tokens/s per GPU (or step time) of the best fitting layout per GPU count,
 * one line per (model, hw, seq, gbs) series (named by what differs), log2
 * GPU axis, with each series' ideal scaling from its smallest fitting GPU
 * count as a thin dashed line of the same colour (tokens/s per GPU
 * constant; step time falling as 1/GPUs); a GPU count where nothing fits is
 * marked OOM on the axis; the key sits under the plot.  The .tsv has one
 * block per series, one row per GPU count, with the ideal value.  Errors
 * as ptsim_plot_heatmap (several scenarios are the point here). */
gboolean ptsim_plot_scaling(const char *figure_path, const GArray *layouts, PtsimPlotScalingY y,
                            const char *source, const PtsimPlotSize *size, PtsimPlotFiles *files,
                            GError **error);

/* ---- allocator over a step (plot_alloc.c) ---- */

/* Allocated and reserved bytes over the last replayed step, per stage (one
 * panel each, up to 8, 4 at column width; for deeper pipelines that many
 * chosen stages: the first, the peak, the last and evenly spaced ones,
 * unless the range names them), as step lines, against the allocator's
 * limit (capacity minus CUDA context + NCCL, its value in the key).  When a panel would hold more
 * samples than it is points wide, allocated is drawn as its min-max
 * envelope over bins of about 1.5 pt (each microbatch's rise and fall
 * become a band instead of a comb) and reserved as its maximum per bin.
 * `timeline_path` is a --memory-timeline TSV (columns stage, step, time_s,
 * allocated_bytes, reserved_bytes; comments `# step_s`, `# capacity_bytes`,
 * `# outside_bytes` when ptsim wrote it); the job supplies the capacity and
 * outside bytes when the comments are absent.  Without `# step_s` every
 * step is drawn over the whole time axis.  The figure's .tsv has one row
 * per point drawn.  Errors as ptsim_plot_timeline, plus
 * PTSIM_PLOT_ERROR_INPUT (file:line) for a malformed timeline or a stage
 * the job does not have. */
gboolean ptsim_plot_allocator(const char *figure_path, const PtsimJob *job,
                              const char *timeline_path, const PtsimPlotSize *size,
                              const PtsimPlotRange *range, PtsimPlotFiles *files, GError **error);

/* ---- predicted vs measured (plot_validation.c) ---- */

typedef enum {
  PTSIM_PLOT_VALIDATION_RESIDUAL, /* error (%) against measured step time */
  PTSIM_PLOT_VALIDATION_PARITY    /* predicted against measured, log-log, y = x */
} PtsimPlotValidationView;

/* Predicted against measured step time from a CSV with the header
 * `source,run,measured_s,predicted_s` and an optional `fit` column
 * (in-sample: the run was among those the hardware profile was fitted on;
 * held-out: it was not) — extra columns ignored; seconds, both > 0.
 * `held_out` (NULL-terminated source names, may be NULL) marks every run of
 * those sources held-out and the others in-sample, overriding the column.
 * The residual view draws the relative error against measured step time
 * (log x), the +-10% band, points by source (point type + colour), filled
 * when held-out and open when in-sample; the parity view draws predicted
 * against measured, log-log, with y = x.  The subtitle gives the mean
 * |error| of each group, or says that the CSV does not tell them apart.
 * The .tsv has one row per CSV row.  Errors: G_FILE_ERROR,
 * PTSIM_PLOT_ERROR_INPUT (file:line; a `fit` cell that is neither
 * in-sample nor held-out), as ptsim_plot_memory. */
gboolean ptsim_plot_validation(const char *figure_path, const char *csv_path,
                               PtsimPlotValidationView view, const char *const *held_out,
                               const PtsimPlotSize *size, PtsimPlotFiles *files, GError **error);

#endif /* PTSIM_PLOT_H */
