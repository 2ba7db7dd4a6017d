/* plot_validation.c — predicted against measured step time; see plot.h
 * (ptsim_plot_validation).
 *
 * Input format (one header line, comma-separated, no quoting, '#' lines
 * are comments):
 *   source,run,measured_s,predicted_s
 *   narayanan2021,1.7B,1.234,1.301
 * source   where the measurement comes from (groups points: one point type
 *          and colour per source);
 * run      a short name of the run (the point's label when few);
 * measured_s, predicted_s   step times in seconds, > 0.
 * validate/calibrate_published.py --csv FILE writes exactly this. */
#include <math.h>
#include <string.h>
#include "plot_int.h"

#define LABEL_MAX_POINTS 16

gboolean ptsim_plot_validation(const char *figure_path, const char *csv_path,
                               PtsimPlotFiles *out, GError **error) {
  g_return_val_if_fail(figure_path && csv_path, FALSE);
  PtsimPlotFormat format;
  g_auto(PtsimPlotFiles) files = {NULL, NULL, NULL};
  if (!ptsim_plot_files_for(figure_path, &format, &files, error)) return FALSE;
  static const char *const cols[] = {"source", "run", "measured_s", "predicted_s", NULL};
  g_autoptr(PtsimPlotTable) t = ptsim_plot_table_read(csv_path, ',', cols, error);
  if (!t) return FALSE;
  int c[4];
  for (int i = 0; i < 4; i++) c[i] = ptsim_plot_table_column(t, cols[i]);
  g_autoptr(GPtrArray) sources = g_ptr_array_new();  /* (element-type utf8) (transfer none) */
  g_autoptr(GString) tsv = g_string_new(NULL);
  guint n = t->rows->len, within = 0;
  double lo = G_MAXDOUBLE, hi = 0, abs_sum = 0;
  g_string_append_printf(
      tsv,
      "# ptsim validation: predicted against measured step time\n# from %s (%u runs)\n"
      "# columns: source_index (0-based, in order of first appearance), source, run, "
      "measured_s, predicted_s (seconds), error (predicted / measured - 1)\n"
      "# source_index\tsource\trun\tmeasured_s\tpredicted_s\terror\n",
      csv_path, n);
  for (guint r = 0; r < n; r++) {
    const char *source = ptsim_plot_table_text(t, r, c[0]);
    const char *run = ptsim_plot_table_text(t, r, c[1]);
    double measured, predicted;
    const PtsimRange positive = {0.0, INFINITY, FALSE, FALSE};
    if (!ptsim_plot_table_double(t, r, c[2], positive, &measured, error) ||
        !ptsim_plot_table_double(t, r, c[3], positive, &predicted, error))
      return FALSE;
    if (!*source || strchr(source, '\t') || strchr(run, '\t')) {
      g_set_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_INPUT,
                  "%s:%d: the source must be non-empty and neither cell may hold a tab", csv_path,
                  g_array_index(t->lines, int, r));
      return FALSE;
    }
    guint si = 0;
    while (si < sources->len && strcmp(g_ptr_array_index(sources, si), source) != 0) si++;
    if (si == sources->len) g_ptr_array_add(sources, (gpointer)source);
    double err = predicted / measured - 1.0;
    within += fabs(err) <= 0.10 + 1e-12;
    abs_sum += fabs(err);
    lo = MIN(lo, MIN(measured, predicted));
    hi = MAX(hi, MAX(measured, predicted));
    g_string_append_printf(tsv, "%u\t%s\t%s\t", si, source, run);
    ptsim_plot_num(tsv, "%.6g", measured);
    g_string_append_c(tsv, '\t');
    ptsim_plot_num(tsv, "%.6g", predicted);
    g_string_append_c(tsv, '\t');
    ptsim_plot_num(tsv, "%.5f", err);
    g_string_append_c(tsv, '\n');
  }
  /* A square, log-log, decade-aligned when the range is wide. */
  double xlo = lo / 1.35, xhi = hi * 1.35;
  g_autofree char *fig_name = g_path_get_basename(files.figure);
  g_autofree char *data_name = g_path_get_basename(files.data);
  g_autoptr(GString) gp = g_string_new(NULL);
  ptsim_plot_script_header(gp, "validation: predicted against measured step time.", &files);
  ptsim_plot_style(gp, format, fig_name, 14.0, 12.5);
  g_string_append(gp, "data = ");
  ptsim_plot_quoted(gp, data_name);
  g_string_append_printf(gp, "\narray source[%u] = [", sources->len);
  for (guint s = 0; s < sources->len; s++) {
    if (s) g_string_append(gp, ", ");
    ptsim_plot_quoted(gp, g_ptr_array_index(sources, s));
  }
  g_string_append_printf(gp, "]\nshow_runs = %d   # 1: label every point with its run\n",
                         n <= LABEL_MAX_POINTS);
  g_string_append(gp, "lo = ");
  ptsim_plot_num(gp, "%.6g", xlo);
  g_string_append(gp, "; hi = ");
  ptsim_plot_num(gp, "%.6g", xhi);
  g_string_append(gp, "\nband = 0.10   # the tolerance drawn around y = x\n");
  g_autofree char *sub = g_strdup_printf("%u runs, %u within +-10%%, mean |error| %.1f%%", n,
                                         within, 100.0 * abs_sum / n);
  ptsim_plot_title_lines(gp, "ptsim predicted vs measured step time", sub, NULL);
  g_string_append(
      gp,
      "set logscale xy 10\nset xrange [lo:hi]\nset yrange [lo:hi]\nset size ratio -1\n"
      "set format x '%g'\nset format y '%g'\nset mxtics 10\nset mytics 10\n"
      "set grid xtics ytics\n"
      "set xlabel 'measured step time (s)'\nset ylabel 'predicted step time (s)'\n"
      "set samples 200\n"
      "set key inside right bottom reverse Left samplen 1.5 font ',8'  # the corner y = x leaves empty\n"
      "plot '+' using 1:($1*(1-band)):($1*(1+band)) with filledcurves fc rgb c_band "
      "title '+-10%', \\\n"
      "     x with lines lw 1.0 lc rgb c_line title 'y = x', \\\n"
      "     for [s=0:|source|-1] data using ($1==s ? $4 : NaN):5 with points pt pt_series[s%6+1] "
      "ps 1.2 lc rgb c_series[s%6+1] title source[s+1], \\\n"
      "     data using 4:5:(show_runs ? stringcolumn(3) : '') with labels left offset 0.7,0 "
      "font ',7' tc rgb '#404040' notitle\n");
  return ptsim_plot_render(&files, tsv, gp, out, error);
}
