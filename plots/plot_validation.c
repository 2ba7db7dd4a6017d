/* plot_validation.c — predicted against measured step time; see plot.h
 * (ptsim_plot_validation).
 *
 * Input format (one header line, comma-separated, no quoting, '#' lines
 * are comments):
 *   source,run,measured_s,predicted_s[,fit]
 *   narayanan2021,1.7B,1.234,1.301,in-sample
 * source   where the measurement comes from (groups points: one point type
 *          and colour per source);
 * run      a short name of the run (the point's label when few);
 * measured_s, predicted_s   step times in seconds, > 0;
 * fit      optional: in-sample (the hardware profile's efficiency was
 *          fitted on this run) or held-out (it was not), empty: unknown.
 * validate/calibrate_published.py --csv FILE writes exactly this; `ptsim
 * validate --format csv` output is read too (label, measured_step_s and
 * predicted_step_s for run, measured_s and predicted_s; rows whose status
 * is not "compared" are left out).
 *
 * Two views.  The residual view (the default) answers "how wrong, and
 * where": relative error on a linear axis against measured step time on a
 * log axis, so a 3% miss is as visible at 0.4 s as at 100 s; the parity
 * view is the classic log-log y = x, where three decades of range hide
 * errors of a few percent.  Held-out runs are filled, in-sample runs open:
 * an in-sample error says how well the fit went, a held-out one how well
 * it predicts. */
#include <math.h>
#include <string.h>
#include "plot_int.h"

#define LABEL_MAX_POINTS 16
#define BAND 0.10

typedef enum { FIT_UNKNOWN = 0, FIT_IN_SAMPLE = 1, FIT_HELD_OUT = 2 } Fit;
static const char *const fit_names[] = {"unknown", "in-sample", "held-out"};

/* Whether row R compared a measurement with a prediction: its status says
 * so (when there is one) and, with TIMES (the measured and predicted
 * columns at times[2], times[3]), both cells hold a value. */
static gboolean row_compared(const PtsimPlotTable *t, guint r, int status_col, const int *times) {
  if (status_col >= 0 && strcmp(ptsim_plot_table_text(t, r, status_col), "compared") != 0)
    return FALSE;
  return !times ||
         (*ptsim_plot_table_text(t, r, times[2]) && *ptsim_plot_table_text(t, r, times[3]));
}

gboolean ptsim_plot_validation(const char *figure_path, const char *csv_path,
                               PtsimPlotValidationView view, const char *const *held_out,
                               const PtsimPlotSize *size, PtsimPlotFiles *out, GError **error) {
  g_return_val_if_fail(figure_path && csv_path, FALSE);
  g_auto(PtsimPlotFiles) files = {NULL, NULL, NULL};
  PtsimPlotCanvas c;
  if (!ptsim_plot_begin(figure_path, size, &files, &c, error)) return FALSE;
  /* the run CSV's names, validate --format csv's, and validate
   * --megatron-cases --format csv's (a case's iteration time; its
   * memory-only cases have none and are left out) */
  static const char *const names[][4] = {{"source", "run", "measured_s", "predicted_s"},
                                         {"source", "label", "measured_step_s", "predicted_step_s"},
                                         {"family", "case", "measured_iteration_time_s",
                                          "predicted_iteration_time"}};
  g_autoptr(PtsimPlotTable) t = ptsim_plot_table_read(csv_path, ',', NULL, error);
  if (!t) return FALSE;
  int ci[4];
  gsize set = 0;
  for (; set < G_N_ELEMENTS(names); set++) {
    int found = 0;
    for (int i = 0; i < 4; i++) found += (ci[i] = ptsim_plot_table_column(t, names[set][i])) >= 0;
    if (found == 4) break;
  }
  for (int i = 0; i < 4 && set == G_N_ELEMENTS(names); i++)
    if (ptsim_plot_table_column(t, names[0][i]) < 0 &&
        ptsim_plot_table_column(t, names[1][i]) < 0) {
      g_set_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_INPUT,
                  "%s: the header has no column '%s'%s%s%s", csv_path, names[0][i],
                  strcmp(names[0][i], names[1][i]) ? " (nor validate --format csv's '" : "",
                  strcmp(names[0][i], names[1][i]) ? names[1][i] : "",
                  strcmp(names[0][i], names[1][i]) ? "')" : "");
      return FALSE;
    }
  if (set == G_N_ELEMENTS(names)) {
    g_set_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_INPUT,
                "%s: the header has neither a run CSV's columns (source, run, measured_s, "
                "predicted_s), validate --format csv's (source, label, measured_step_s, "
                "predicted_step_s) nor validate --megatron-cases --format csv's",
                csv_path);
    return FALSE;
  }
  gboolean cases = set == 2; /* rows without an iteration time are memory-only cases */
  int status_col = ptsim_plot_table_column(t, "status");
  int fit_col = ptsim_plot_table_column(t, "fit");
  g_autoptr(GPtrArray) sources = g_ptr_array_new(); /* (element-type utf8) (transfer none) */
  g_autoptr(GString) tsv = g_string_new(NULL);
  guint rows = t->rows->len, n = 0, within = 0, count[3] = {0, 0, 0};
  /* validate's rows that compared nothing (refused, no measurement) are left out */
  for (guint r = 0; r < rows; r++) n += row_compared(t, r, status_col, cases ? ci : NULL);
  if (n == 0) {
    g_set_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_INPUT,
                "%s: no row compared a measurement with a prediction", csv_path);
    return FALSE;
  }
  double lo = G_MAXDOUBLE, hi = 0, emax = 0, abs_sum[3] = {0, 0, 0};
  g_string_append_printf(
      tsv,
      "# ptsim validation: predicted against measured step time\n# from %s (%u runs)\n"
      "# columns: source_index (0-based, in order of first appearance), source, run, "
      "measured_s, predicted_s (seconds), error (predicted / measured - 1), fit (0 unknown, "
      "1 in-sample: the profile was fitted on this run, 2 held-out)\n"
      "# source_index\tsource\trun\tmeasured_s\tpredicted_s\terror\tfit\n",
      csv_path, n);
  for (guint r = 0; r < rows; r++) {
    if (!row_compared(t, r, status_col, cases ? ci : NULL)) continue;
    const char *source = ptsim_plot_table_text(t, r, ci[0]);
    const char *run = ptsim_plot_table_text(t, r, ci[1]);
    double measured, predicted;
    const PtsimRange positive = {0.0, INFINITY, FALSE, FALSE};
    if (!ptsim_plot_table_double(t, r, ci[2], positive, &measured, error) ||
        !ptsim_plot_table_double(t, r, ci[3], positive, &predicted, error))
      return FALSE;
    int line = g_array_index(t->lines, int, r);
    if (!*source || strchr(source, '\t') || strchr(run, '\t')) {
      g_set_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_INPUT,
                  "%s:%d: the source must be non-empty and neither cell may hold a tab", csv_path,
                  line);
      return FALSE;
    }
    Fit fit = FIT_UNKNOWN;
    if (held_out) {
      fit = g_strv_contains(held_out, source) ? FIT_HELD_OUT : FIT_IN_SAMPLE;
    } else if (fit_col >= 0) {
      const char *f = ptsim_plot_table_text(t, r, fit_col);
      if (strcmp(f, "in-sample") == 0)
        fit = FIT_IN_SAMPLE;
      else if (strcmp(f, "held-out") == 0)
        fit = FIT_HELD_OUT;
      else if (*f) {
        g_set_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_INPUT,
                    "%s:%d: column fit: '%s' is neither in-sample nor held-out (or empty)",
                    csv_path, line, f);
        return FALSE;
      }
    }
    guint si = 0;
    while (si < sources->len && strcmp(g_ptr_array_index(sources, si), source) != 0) si++;
    if (si == sources->len) g_ptr_array_add(sources, (gpointer)source);
    double err = predicted / measured - 1.0;
    within += fabs(err) <= BAND + 1e-12;
    count[fit]++;
    abs_sum[fit] += fabs(err);
    emax = MAX(emax, fabs(err));
    lo = MIN(lo, view == PTSIM_PLOT_VALIDATION_PARITY ? MIN(measured, predicted) : measured);
    hi = MAX(hi, view == PTSIM_PLOT_VALIDATION_PARITY ? MAX(measured, predicted) : measured);
    g_string_append_printf(tsv, "%u\t%s\t%s\t", si, source, run);
    ptsim_plot_num(tsv, "%.6g", measured);
    g_string_append_c(tsv, '\t');
    ptsim_plot_num(tsv, "%.6g", predicted);
    g_string_append_c(tsv, '\t');
    ptsim_plot_num(tsv, "%.5f", err);
    g_string_append_printf(tsv, "\t%d\n", fit);
  }
  double xlo = lo / 1.35, xhi = hi * 1.35;
  /* the error axis: the band and every point, symmetric, a round number */
  double elim = ptsim_plot_nice_step(0, MAX(emax, BAND) * 1.15 * 100.0, 1);
  int longest = 17;
  for (guint k = 0; k < sources->len; k++)
    longest = MAX(longest, (int)strlen(g_ptr_array_index(sources, k)));
  gboolean mixed = count[FIT_HELD_OUT] > 0 && count[FIT_IN_SAMPLE] > 0;
  int per_row = 1, key_rows = ptsim_plot_key_rows(&c, (int)sources->len + 2 + (mixed ? 2 : 0),
                                                  longest, &per_row);
  int title_lines = c.narrow ? 5 : 3;
  gboolean parity = view == PTSIM_PLOT_VALIDATION_PARITY;
  double plot_h = parity ? MIN(c.width_cm - 2.0, 9.0) : (c.narrow ? 4.6 : 5.6);
  /* The subtitle says what the groups' errors are, and which is which. */
  GString *sub = g_string_new(NULL);
  g_string_append_printf(sub, "%u runs, %u within \xc2\xb1%.0f%%", n, within, 100 * BAND);
  for (int f = 2; f >= 0; f--) {
    if (!count[f]) continue;
    if (f == FIT_UNKNOWN && count[1] + count[2] == 0)
      g_string_append_printf(sub,
                             "; mean |error| %.1f%% (in-sample or held-out not given: add "
                             "a fit column or --held-out)",
                             100 * abs_sum[f] / count[f]);
    else
      g_string_append_printf(sub, "; %s (%s) mean |error| %.1f%% over %u", fit_names[f],
                             f == FIT_HELD_OUT    ? "filled"
                             : f == FIT_IN_SAMPLE ? "open"
                                                  : "x",
                             100 * abs_sum[f] / count[f], count[f]);
  }
  if (count[FIT_IN_SAMPLE] && !count[FIT_HELD_OUT])
    g_string_append(sub, " \xe2\x80\x94 every run was in the fit");
  g_autofree char *subtitle = g_string_free(sub, FALSE);
  const char *title[] = {parity ? "ptsim predicted vs measured step time"
                                : "ptsim step-time error vs measured step time",
                         subtitle, NULL};
  double top_cm = 0.3, bottom_cm = ptsim_plot_axis_cm(&c) + ptsim_plot_key_cm(&c, key_rows);
  ptsim_plot_canvas_height(&c, ptsim_plot_title_cm(&c, title_lines, title) + top_cm + plot_h +
                                   bottom_cm);

  g_autoptr(GString)
      gp = ptsim_plot_script_begin(&files, &c,
                                   parity ? "validation: predicted against measured step time."
                                          : "validation: error of the predicted step time.",
                                   NULL, NULL);
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
  g_string_append_printf(gp,
                         "   # measured step time axis (s)\nband = %.2f   # the tolerance "
                         "drawn around zero error\nelim = %g   # error axis, +-%%\n",
                         BAND, elim);
  ptsim_plot_title(gp, &c, title_lines, title);
  ptsim_plot_margins(gp, top_cm, bottom_cm);
  ptsim_plot_key_under(gp, &c, per_row, longest, 0.0);
  /* one point style per (source, fit): filled held-out (and unknown), open
   * in-sample; the key shows each source once, in the style most points
   * have, and the two styles' meanings */
  g_string_append_printf(gp, "key_open = %d   # the sources' key entries drawn open\n",
                         count[FIT_IN_SAMPLE] > 0 && count[FIT_HELD_OUT] + count[FIT_UNKNOWN] == 0);
  g_string_append(gp, "set logscale x 10\nset xrange [lo:hi]\nset format x '%g'\nset mxtics 10\n"
                      "set grid xtics\nset xlabel 'measured step time (s)' offset 0,0.3\n"
                      "set samples 200\n");
  const char *y = parity ? "5" : "(100*$6)";
  if (parity)
    g_string_append(gp,
                    "set logscale y 10\nset yrange [lo:hi]\nset size ratio -1\nset format y '%g'\n"
                    "set mytics 10\nset grid ytics\nset ylabel 'predicted step time (s)'\n"
                    "plot '+' using 1:($1*(1-band)):($1*(1+band)) with filledcurves fc rgb c_band "
                    "title sprintf('\xc2\xb1%.0f%%', 100*band), \\\n"
                    "     x with lines lw 1.0 lc rgb c_line title 'y = x', \\\n");
  else
    g_string_append(gp, "set yrange [-elim:elim]\nset ytics format '%+g'\nset ytics add ('0' 0)\n"
                        "set ylabel 'error of the prediction (%)'\n"
                        "plot '+' using 1:(-100*band):(100*band) with filledcurves fc rgb c_band "
                        "title sprintf('\xc2\xb1%.0f%%', 100*band), \\\n"
                        "     0 with lines lw 1.0 lc rgb c_line title 'exact', \\\n");
  /* colour s mod 6 and point type (s + s/6) mod 6: the first 36 sources
   * each look different (the 7th is the 1st colour with the 2nd shape) */
  g_string_append_printf(
      gp,
      "     for [s=0:|source|-1] data using ($1==s && $7!=1 ? $4 : NaN):%s with points "
      "pt pt_series[(s+s/6)%%6+1] ps 1.1 lc rgb c_series[s%%6+1] title (key_open ? '' : source[s+1]), \\\n"
      "     for [s=0:|source|-1] data using ($1==s && $7==1 ? $4 : NaN):%s with points "
      "pt pto_series[(s+s/6)%%6+1] ps 1.1 lc rgb c_series[s%%6+1] title (key_open ? source[s+1] : ''), \\\n"
      "     NaN with points pt 7 lc rgb c_line title %s, \\\n"
      "     NaN with points pt 6 lc rgb c_line title %s, \\\n"
      "     data using 4:%s:(show_runs ? stringcolumn(3) : '') with labels left offset 0.7,0 "
      "font f_tiny tc rgb c_note notitle\n",
      y, y, count[FIT_HELD_OUT] && count[FIT_IN_SAMPLE] ? "'held-out (filled)'" : "''",
      count[FIT_HELD_OUT] && count[FIT_IN_SAMPLE] ? "'in-sample (open)'" : "''", y);
  return ptsim_plot_render(&files, tsv, gp, out, error);
}
