/* plot_pareto.c — analytical memory per GPU against tokens/s per GPU for
 * every layout of a scenario, with the Pareto front of the fitting ones;
 * see plot.h (ptsim_plot_pareto).
 *
 * Two vertical lines: the GPU's capacity and the fit limit (threshold x
 * capacity) — the second decides the "fits" colour, so a point between
 * them is drawn as not fitting and the reader sees why.  Their values sit
 * above the plot area, each on the side away from the other line; the best
 * layout is ringed in the plot and named in a note under it, so no label
 * box covers a line or a point. */
#include <math.h>
#include <string.h>
#include "plot_sweep_int.h"

#define GIB PTSIM_PLOT_GIB

static const GArray *sort_rows;
static gint cmp_memory(gconstpointer a, gconstpointer b) {
  const PtsimPlotLayout *x = &g_array_index(sort_rows, PtsimPlotLayout, *(const guint *)a);
  const PtsimPlotLayout *y = &g_array_index(sort_rows, PtsimPlotLayout, *(const guint *)b);
  if (x->total_bytes != y->total_bytes) return x->total_bytes < y->total_bytes ? -1 : 1;
  double px = ptsim_plot_per_gpu(x), py = ptsim_plot_per_gpu(y);
  if (px != py) return px > py ? -1 : 1;
  return (x->rank > y->rank) - (x->rank < y->rank);
}

static void append_layout_row(GString *tsv, const PtsimPlotLayout *l, int front) {
  g_string_append_printf(tsv,
                         "%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT
                         "\t%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT
                         "\t%" G_GINT64_FORMAT "\t%s\t%s\t",
                         l->rank, l->tp, l->pp, l->cp, l->dp, l->vp, l->mbs, l->recompute,
                         l->schedule);
  ptsim_plot_num(tsv, "%.4f", l->total_bytes / GIB);
  g_string_append_c(tsv, '\t');
  ptsim_plot_num(tsv, "%.1f", ptsim_plot_per_gpu(l));
  g_string_append_printf(tsv, "\t%d\t%d\n", ptsim_plot_usable(l), front);
}

/* The threshold the rows' fits say the sweep used: 0.8 (the default) when
 * every scheduled row agrees with it, else the largest usage that fits.
 * *inferred: it is not the default. */
static double infer_threshold(const GArray *rows, gboolean *inferred) {
  double max_fit = 0, min_unfit = G_MAXDOUBLE;
  for (guint i = 0; i < rows->len; i++) {
    const PtsimPlotLayout *l = &g_array_index(rows, PtsimPlotLayout, i);
    if (l->status != 0 || l->usage_fraction <= 0) continue;
    if (l->fits)
      max_fit = MAX(max_fit, l->usage_fraction);
    else
      min_unfit = MIN(min_unfit, l->usage_fraction);
  }
  *inferred = !(max_fit <= 0.8 + 1e-9 && min_unfit > 0.8);
  return *inferred ? (max_fit > 0 ? max_fit : MIN(min_unfit, 1.0)) : 0.8;
}

gboolean ptsim_plot_pareto(const char *figure_path, const GArray *rows, double threshold,
                           const char *source, const PtsimPlotSize *size, PtsimPlotFiles *out,
                           GError **error) {
  g_return_val_if_fail(figure_path && rows, FALSE);
  g_auto(PtsimPlotFiles) files = {NULL, NULL, NULL};
  PtsimPlotCanvas c;
  if (!ptsim_plot_begin(figure_path, size, &files, &c, error)) return FALSE;
  if (!ptsim_plot_check_one_scenario(rows, "pareto", error)) return FALSE;
  int b = ptsim_plot_best_index(rows);
  const PtsimPlotLayout *top = &g_array_index(rows, PtsimPlotLayout, b);
  gboolean inferred = FALSE;
  if (!(threshold > 0)) threshold = infer_threshold(rows, &inferred);
  /* Scheduled layouts by memory; the front: fitting layouts faster than
   * every fitting layout with less (or equal) memory. */
  g_autoptr(GArray) order = g_array_new(FALSE, FALSE, sizeof(guint));
  double capacity_gib = 0, max_mem = 0, max_tps = 0;
  for (guint i = 0; i < rows->len; i++) {
    const PtsimPlotLayout *l = &g_array_index(rows, PtsimPlotLayout, i);
    if (l->status != 0) continue;
    g_array_append_val(order, i);
    if (capacity_gib == 0 && l->usage_fraction > 0)
      capacity_gib = l->total_bytes / l->usage_fraction / GIB;
    max_mem = MAX(max_mem, l->total_bytes / GIB);
    max_tps = MAX(max_tps, ptsim_plot_per_gpu(l));
  }
  sort_rows = rows;
  g_array_sort(order, cmp_memory);
  g_autofree int *front = g_new0(int, rows->len);
  double best_so_far = -1;
  guint nfront = 0, nfit = 0;
  for (guint k = 0; k < order->len; k++) {
    guint i = g_array_index(order, guint, k);
    const PtsimPlotLayout *l = &g_array_index(rows, PtsimPlotLayout, i);
    if (!ptsim_plot_usable(l)) continue;
    nfit++;
    if (ptsim_plot_per_gpu(l) > best_so_far) {
      front[i] = 1;
      nfront++;
      best_so_far = ptsim_plot_per_gpu(l);
    }
  }
  g_autofree char *scenario = ptsim_plot_scenario_text(top);
  g_autoptr(GString) tsv = g_string_new(NULL);
  g_string_append_printf(tsv,
                         "# ptsim pareto: analytical memory per GPU against tokens/s per GPU\n"
                         "# scenario: %s\n",
                         scenario);
  ptsim_plot_source_comment(tsv, source, rows->len);
  g_string_append(tsv, "# capacity_gib ");
  ptsim_plot_num(tsv, "%.4f", capacity_gib);
  g_string_append(tsv, "\n# threshold ");
  ptsim_plot_num(tsv, "%.4f", threshold);
  g_string_append_printf(tsv, "%s\n# fit_limit_gib ",
                         inferred ? " (inferred from the rows' fits: the largest usage that fits)"
                                  : "");
  ptsim_plot_num(tsv, "%.4f", threshold * capacity_gib);
  g_string_append_printf(
      tsv,
      "\n# block 0: every scheduled layout (%u), by memory; block 1 (after two blank lines): "
      "the Pareto front of the layouts that run (%u), by memory\n"
      "# columns: rank (sweep rank), tp, pp, cp, dp, vp, mbs, recompute, schedule, "
      "memory_gib (analytical, peak stage, GiB), tokens_per_s_per_gpu, runs (0/1: the runs verdict; the 80%% rule where the CSV has none), "
      "front (1 on the Pareto front)\n"
      "# rank\ttp\tpp\tcp\tdp\tvp\tmbs\trecompute\tschedule\tmemory_gib\ttokens_per_s_per_gpu"
      "\truns\tfront\n",
      order->len, nfront);
  for (guint k = 0; k < order->len; k++) {
    guint i = g_array_index(order, guint, k);
    append_layout_row(tsv, &g_array_index(rows, PtsimPlotLayout, i), front[i]);
  }
  g_string_append(tsv, "\n\n# block 1: the Pareto front\n");
  for (guint k = 0; k < order->len; k++) {
    guint i = g_array_index(order, guint, k);
    if (front[i]) append_layout_row(tsv, &g_array_index(rows, PtsimPlotLayout, i), 1);
  }

  /* Layouts far past the capacity only squeeze the interesting part: the
   * axis stops at twice the capacity and the subtitle counts the rest. */
  double xmax = MAX(max_mem, capacity_gib) * 1.04;
  guint beyond = 0;
  if (capacity_gib > 0 && xmax > 2.0 * capacity_gib) {
    xmax = 2.0 * capacity_gib;
    for (guint k = 0; k < order->len; k++)
      beyond += g_array_index(rows, PtsimPlotLayout, g_array_index(order, guint, k)).total_bytes /
                    GIB >
                xmax;
  }
  g_autofree char *words = ptsim_plot_layout_words(top);
  g_autofree char *note =
      ptsim_plot_usable(top)
          ? g_strdup_printf("ringed: the best layout that runs, %s: %.1f GiB, %.0f tokens/s per "
                            "GPU",
                            words, top->total_bytes / GIB, ptsim_plot_per_gpu(top))
          : g_strdup("no layout runs");
  const char *note_texts[] = {note, NULL};
  g_autoptr(GPtrArray) note_lines = ptsim_plot_wrap(&c, c.small_pt, 3, note_texts);
  g_autofree char *beyond_text =
      beyond ? g_strdup_printf("; %u past %.0f GiB not shown", beyond, xmax) : g_strdup("");
  g_autofree char *sub =
      g_strdup_printf("%u layouts, %u run (the allocator emulation's verdict; the dashed line: "
                      "the 80%% rule)%s; memory: analytical estimate of the peak stage",
                      order->len, nfit, beyond_text);
  const char *title[] = {scenario, sub, NULL};
  int title_lines = c.narrow ? 5 : 3;
  /* under the plot: tick labels and x label, the key, the note */
  int per_row = 1, key_rows = ptsim_plot_key_rows(&c, 4, 12, &per_row);
  double note_cm = 0.25 + ptsim_plot_line_cm(c.small_pt) * note_lines->len;
  double key_cm = ptsim_plot_key_cm(&c, key_rows);
  double top_cm = 0.2 + ptsim_plot_line_cm(c.small_pt) + 0.2; /* the lines' values */
  double bottom_cm = ptsim_plot_axis_cm(&c) + key_cm + note_cm;
  ptsim_plot_canvas_height(&c, ptsim_plot_title_cm(&c, title_lines, title) + top_cm +
                                   (c.narrow ? 4.6 : 5.6) + bottom_cm);
  g_autoptr(GString)
      gp = ptsim_plot_script_begin(&files, &c,
                                   "pareto: memory per GPU against throughput, every layout.", NULL,
                                   scenario);
  g_string_append(gp, "\ncapacity_gib = ");
  ptsim_plot_num(gp, "%.4f", capacity_gib);
  g_string_append(gp, "\nthreshold = ");
  ptsim_plot_num(gp, "%.4f", threshold);
  g_string_append_printf(gp, "   # fits: memory <= threshold x capacity%s\nbest_mem = ",
                         inferred ? " (inferred from the rows)" : "");
  ptsim_plot_num(gp, "%.4f", top->total_bytes / GIB);
  g_string_append(gp, "; best_tps = ");
  ptsim_plot_num(gp, "%.1f", ptsim_plot_per_gpu(top));
  g_string_append_printf(gp, "\nshow_best = %d\n", ptsim_plot_usable(top));
  ptsim_plot_title(gp, &c, title_lines, title);
  ptsim_plot_margins(gp, top_cm, bottom_cm);
  ptsim_plot_key_under(gp, &c, per_row, 12, note_cm);
  g_string_append(gp, "set xrange [0:");
  ptsim_plot_num(gp, "%.2f", xmax);
  g_string_append(gp, "]\nset yrange [0:");
  ptsim_plot_num(gp, "%.1f", max_tps * 1.08);
  g_string_append(gp, "]\nset xtics 0,");
  ptsim_plot_num(gp, "%g", ptsim_plot_nice_step(0, xmax, c.narrow ? 4 : 8));
  g_string_append(gp, "\nset ytics 0,");
  ptsim_plot_num(gp, "%g", ptsim_plot_nice_step(0, max_tps * 1.08, c.narrow ? 4 : 5));
  g_string_append(gp, "\n# the best layout, named under the key\nset label 10 ");
  for (guint i = 0; i < note_lines->len; i++) {
    if (i) g_string_append(gp, ".\"\\n\".");
    ptsim_plot_quoted(gp, g_ptr_array_index(note_lines, i));
  }
  g_string_append(gp, " at character 0.6, screen ");
  ptsim_plot_num(gp, "%.3f", note_cm - 0.1 - 0.5 * ptsim_plot_line_cm(c.small_pt));
  g_string_append(
      gp,
      "/height_cm left font f_small tc rgb c_note\n"
      "set xlabel 'memory per GPU, analytical (GiB)' offset 0,0.3\n"
      "set ylabel 'tokens/s per GPU'\n"
      "set grid xtics\n"
      "set arrow 1 from capacity_gib, graph 0 to capacity_gib, graph 1 nohead lw 1.2 lc rgb c_line front\n"
      "set arrow 2 from threshold*capacity_gib, graph 0 to threshold*capacity_gib, graph 1 nohead "
      "lw 1.2 dt (6,4) lc rgb c_line front\n"
      "# the lines' values above the plot, each on the side away from the other\n"
      "set label 1 sprintf('capacity %.0f GiB', capacity_gib) at capacity_gib, graph 1 left "
      "offset 0.2,0.6 font f_small\n"
      "set label 2 sprintf('80%% rule: %.1f GiB (%.0f%%)', threshold*capacity_gib, "
      "100*threshold) at threshold*capacity_gib, graph 1 right offset -0.2,0.6 font f_small\n"
      "plot data index 0 using ($12==0 ? $10 : NaN):11 with points pt 8 ps 0.5 lc rgb '#808080' "
      "title 'does not run, or not settled', \\\n"
      "     data index 0 using ($12==1 ? $10 : NaN):11 with points pt 7 ps 0.4 lc rgb c_series[2] "
      "title 'runs', \\\n"
      "     data index 1 using 10:11 with linespoints lw 1.5 pt 7 ps 0.5 lc rgb c_line "
      "title 'Pareto front', \\\n"
      "     '+' using (show_best ? best_mem : NaN):(best_tps) every ::0::0 with points pt 6 ps 1.8 "
      "lw 1.5 lc rgb c_series[6] title (show_best ? 'best' : '')\n");
  return ptsim_plot_render(&files, tsv, gp, out, error);
}
