/* plot_cmd.h — the `ptsim plot KIND` subcommand: parses the job options
 * every subcommand shares (job_options.h) plus --out, computes what the kind
 * needs (memory estimate, simulated step with its trace) and writes the
 * figure with its data and script (plot.h).
 *
 * Shell module.  Not here: the figures themselves (plot.c). */
#ifndef PTSIM_PLOT_CMD_H
#define PTSIM_PLOT_CMD_H

#include <glib.h>
#include "sweep.h"

/* argv[0] is the subcommand's name ("plot"), argv[1] the kind.  Prints the
 * written paths on stdout and errors as one line on stderr.  Returns 0 ok,
 * 2 bad input (unknown kind, missing --out, bad extension, bad job
 * options, a missing output folder), 1 when gnuplot is missing or fails or
 * the simulation produced nothing to draw. */
int ptsim_plot_main(int argc, char **argv);

/* The default job's figures of an evaluated sweep, as PNG in `dir`
 * (created when missing): memory.png and timeline.png of the best layout
 * (order[0]), heatmap.png and pareto.png of the whole sweep, each with its
 * .tsv and .gp.  Appends to `report` where they are, or one line saying
 * they were skipped because gnuplot is not on PATH (and how to install it;
 * that is not a failure).  Returns FALSE when a figure failed (the report
 * says which and why); the sweep's result stands either way. */
/* Refuses (PTSIM_OUTPUT_ERROR_REFUSED, naming FLAG) an output PATH that is
 * one of the files ptsim_plot_default_figures writes in DIR. */
gboolean ptsim_plot_default_figures_check(const char *dir, const char *path, const char *flag,
                                          GError **error);

gboolean ptsim_plot_default_figures(const PtsimSweep *sweep, const GArray *order, const char *dir,
                                    GString *report);

#endif /* PTSIM_PLOT_CMD_H */
