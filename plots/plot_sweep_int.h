/* plot_sweep_int.h — what the sweep figures (plot_sweep.c: reading,
 * scenarios, scaling; plot_heatmap.c; plot_pareto.c) share.
 *
 * "Best" always means: among layouts that were scheduled and fit, the most
 * tokens/s per GPU (the sweep's own ranking), the lower rank on ties.
 * Throughput is per GPU so that figures compare across GPU counts. */
#ifndef PTSIM_PLOT_SWEEP_INT_H
#define PTSIM_PLOT_SWEEP_INT_H

#include "plot_int.h"

static inline double ptsim_plot_per_gpu(const PtsimPlotLayout *l) {
  return l->gpus > 0 ? l->tokens_per_s / (double)l->gpus : 0.0;
}

static inline gboolean ptsim_plot_usable(const PtsimPlotLayout *l) {
  /* the table's verdict, runs; the 80% rule only where a CSV lacks it */
  return l->status == 0 && (l->runs == -2 ? l->fits : l->runs == 1);
}

/* Index of the best layout (best usable; when none is usable, the best
 * scheduled one), or -1 when none was scheduled. */
int ptsim_plot_best_index(const GArray *layouts);

/* "MODEL on N x HW, seq S, gbs B" and "tp . pp . cp . mbs .[ vp .]".
 * (transfer full) */
char *ptsim_plot_scenario_text(const PtsimPlotLayout *l);
char *ptsim_plot_layout_words(const PtsimPlotLayout *l);

/* Sorted distinct values of the gint64 field at `offset`.  (transfer full) */
GArray *ptsim_plot_distinct(const GArray *layouts, size_t offset);
int ptsim_plot_index_of(const GArray *v, gint64 x);

/* "# from SOURCE: N layouts" for a data file's header. */
void ptsim_plot_source_comment(GString *s, const char *source, guint used);

/* The checks every one-scenario figure starts with: the layouts share a
 * scenario and one was scheduled.  Errors PTSIM_PLOT_ERROR_DATA. */
gboolean ptsim_plot_check_one_scenario(const GArray *layouts, const char *kind, GError **error);

#endif /* PTSIM_PLOT_SWEEP_INT_H */
