/* plot_alloc.c — the caching allocator over one training step, per
 * pipeline stage; see plot.h (ptsim_plot_allocator).
 *
 * Reads the allocator timeline TSV that `ptsim predict --memory-timeline`
 * (ptsim_simulate_allocator) writes: a sample after every schedule item of
 * every replayed step.  A sample holds until the next one, so the lines
 * are gnuplot `steps`.  The last replayed step is drawn (the first one
 * includes the reserve growth of warm-up; the reserved level it leaves is
 * what the next step starts from), with time measured from that step's
 * start; each stage's curve starts with the value the previous step left.
 *
 * With many microbatches a step line of `allocated` is a comb, one tooth
 * per microbatch, that says nothing at print size.  When a panel would get
 * more samples than it has room for (one per BIN_PT), the samples are
 * folded into bins: allocated becomes its min-max band over each bin
 * (including the value held into the bin), reserved its maximum. */
#include <math.h>
#include <string.h>
#include "lifetimes.h"
#include "plot_int.h"

#define GIB PTSIM_PLOT_GIB
#define MAX_PANELS 8        /* picked for a deep pipeline on a page */
#define MAX_PANELS_NARROW 4 /* in a column, where panels stack */
#define MAX_PANELS_GIVEN 16
#define BIN_PT 1.5

typedef struct {
  gint64 stage, step;
  double t, allocated, reserved;
} Sample;

/* Picks the panels: stage -> TRUE, at most `max` unless the range names
 * them.  Returns their count, or -1 when the range names more than
 * MAX_PANELS_GIVEN. */
static int pick_panels(int64_t pp, const gboolean *present, const double *peak,
                       const PtsimPlotRange *range, int max, gboolean *shown) {
  int n = 0;
  int64_t peak_stage = 0, nstages = 0;
  for (int64_t s = 0; s < pp; s++) {
    nstages += present[s];
    if (peak[s] > peak[peak_stage]) peak_stage = s;
  }
  if (range && range->stages_given) {
    for (int64_t s = 0; s < pp; s++) n += shown[s] = present[s] && range->stages[s];
    return n > MAX_PANELS_GIVEN ? -1 : n;
  }
  if (nstages <= max) {
    for (int64_t s = 0; s < pp; s++) n += shown[s] = present[s];
    return n;
  }
  /* first, peak, last, then evenly spaced until `max` */
  int64_t want[MAX_PANELS + 3];
  int nw = 0;
  want[nw++] = 0;
  want[nw++] = peak_stage;
  want[nw++] = pp - 1;
  for (int k = 1; k < max - 1; k++) want[nw++] = (pp - 1) * k / (max - 1);
  for (int k = 0; k < nw && n < max; k++)
    if (present[want[k]] && !shown[want[k]]) {
      shown[want[k]] = TRUE;
      n++;
    }
  return n;
}

static void append_row(GString *tsv, int64_t stage, int panel, double t, double until, double amin,
                       double amax, double reserved) {
  g_string_append_printf(tsv, "%" G_GINT64_FORMAT "\t%d\t", stage, panel);
  ptsim_plot_num(tsv, "%.9f", t);
  g_string_append_c(tsv, '\t');
  ptsim_plot_num(tsv, "%.9f", until);
  g_string_append_c(tsv, '\t');
  ptsim_plot_num(tsv, "%.4f", amin / GIB);
  g_string_append_c(tsv, '\t');
  ptsim_plot_num(tsv, "%.4f", amax / GIB);
  g_string_append_c(tsv, '\t');
  ptsim_plot_num(tsv, "%.4f", reserved / GIB);
  g_string_append_c(tsv, '\n');
}

gboolean ptsim_plot_allocator(const char *figure_path, const PtsimJob *job,
                              const char *timeline_path, const PtsimPlotSize *size,
                              const PtsimPlotRange *range, PtsimPlotFiles *out, GError **error) {
  g_return_val_if_fail(figure_path && job && timeline_path, FALSE);
  g_auto(PtsimPlotFiles) files = {NULL, NULL, NULL};
  PtsimPlotCanvas c;
  if (!ptsim_plot_begin(figure_path, size, &files, &c, error)) return FALSE;
  static const char *const cols[] = {"stage",           "step",           "time_s",
                                     "allocated_bytes", "reserved_bytes", NULL};
  g_autoptr(PtsimPlotTable) t = ptsim_plot_table_read(timeline_path, '\t', cols, error);
  if (!t) return FALSE;
  int ci[5];
  for (int i = 0; i < 5; i++) ci[i] = ptsim_plot_table_column(t, cols[i]);
  int64_t pp = job->layout.pp;
  g_autoptr(GArray) samples = g_array_sized_new(FALSE, FALSE, sizeof(Sample), t->rows->len);
  gint64 last_step = 0;
  const PtsimRange nonnegative = {0.0, INFINITY, TRUE, FALSE};
  for (guint r = 0; r < t->rows->len; r++) {
    Sample s;
    if (!ptsim_plot_table_int(t, r, ci[0], &s.stage, error) ||
        !ptsim_plot_table_int(t, r, ci[1], &s.step, error) ||
        !ptsim_plot_table_double(t, r, ci[2], nonnegative, &s.t, error) ||
        !ptsim_plot_table_double(t, r, ci[3], nonnegative, &s.allocated, error) ||
        !ptsim_plot_table_double(t, r, ci[4], nonnegative, &s.reserved, error))
      return FALSE;
    if (s.stage < 0 || s.stage >= pp || s.step < 0 || s.t < 0 || s.allocated < 0 ||
        s.reserved < s.allocated) {
      g_set_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_INPUT,
                  "%s:%d: stage %" G_GINT64_FORMAT " step %" G_GINT64_FORMAT
                  ": %s (the job has pp %" G_GINT64_FORMAT "; give the job options the "
                  "timeline was written for)",
                  timeline_path, g_array_index(t->lines, int, r), s.stage, s.step,
                  s.stage < 0 || s.stage >= pp ? "no such stage"
                  : s.reserved < s.allocated   ? "reserved below allocated"
                                               : "negative step, time or bytes",
                  pp);
      return FALSE;
    }
    last_step = MAX(last_step, s.step);
    g_array_append_val(samples, s);
  }
  const PtsimRange positive = {0.0, INFINITY, FALSE, FALSE};
  double step_s, capacity, outside;
  if (!ptsim_plot_table_comment_value(t, "step_s", nonnegative, &step_s, error) ||
      !ptsim_plot_table_comment_value(t, "capacity_bytes", positive, &capacity, error) ||
      !ptsim_plot_table_comment_value(t, "outside_bytes", nonnegative, &outside, error)) {
    g_prefix_error(error, "allocator timeline: ");
    return FALSE;
  }
  if (isnan(capacity)) capacity = job->hw.memory_bytes;
  if (isnan(outside)) outside = ptsim_lifetimes_outside_bytes(job);
  gboolean one_step = !isnan(step_s) && step_s > 0;
  double limit_gib = (capacity - outside) / GIB;
  double t0 = one_step ? step_s * (double)last_step : 0.0;

  /* the time axis: the step (or every step) cut to the window */
  double tmax = one_step ? step_s : 0.0;
  double peak[PTSIM_MAX_STAGES] = {0};
  gboolean present[PTSIM_MAX_STAGES] = {FALSE};
  double ymax = limit_gib;
  for (guint i = 0; i < samples->len; i++) {
    const Sample *s = &g_array_index(samples, Sample, i);
    present[s->stage] = TRUE;
    peak[s->stage] = MAX(peak[s->stage], s->reserved);
    ymax = MAX(ymax, s->reserved / GIB);
    if (!one_step || s->step == last_step) tmax = MAX(tmax, s->t - t0);
  }
  if (tmax <= 0) tmax = 1.0;
  double w0 = range ? range->start_s : 0.0;
  double w1 = range && range->end_s > 0 ? range->end_s : tmax;
  if (w0 >= tmax) {
    g_set_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_OPTION,
                "--window starts at %g s, at or after the step's end (%g s)", w0, tmax);
    return FALSE;
  }
  gboolean shown[PTSIM_MAX_STAGES] = {FALSE};
  int npanels = pick_panels(pp, present, peak, range, c.narrow ? MAX_PANELS_NARROW : MAX_PANELS,
                            shown);
  int64_t nstages = 0;
  for (int64_t s = 0; s < pp; s++) nstages += present[s];
  if (npanels <= 0) {
    g_set_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_OPTION,
                npanels < 0 ? "--stages: at most %d panels; name fewer stages"
                            : "--stages: none of the named stages is in the timeline (%d)",
                MAX_PANELS_GIVEN);
    return FALSE;
  }
  int cols_n = npanels <= 4 || c.narrow ? 1 : 2, rows_n = (npanels + cols_n - 1) / cols_n;
  double panel_pt = ((c.width_cm - 0.4) / cols_n - 2.4) / PTSIM_PLOT_CM_PER_IN *
                    PTSIM_PLOT_PT_PER_IN;
  int nb = MAX(1, (int)(panel_pt / BIN_PT));
  double bin_s = (w1 - w0) / nb;

  g_autoptr(GString) tsv = g_string_new(NULL);
  g_string_append_printf(tsv, "# ptsim allocator: caching-allocator bytes over %s, per stage\n",
                         one_step ? "the last replayed step" : "every replayed step");
  g_string_append_printf(tsv, "# from %s\n", timeline_path);
  g_string_append(tsv, "# limit_gib ");
  ptsim_plot_num(tsv, "%.4f", limit_gib);
  g_string_append(tsv, " (capacity ");
  ptsim_plot_num(tsv, "%.4f", capacity / GIB);
  g_string_append(tsv, " GiB minus CUDA context + NCCL ");
  ptsim_plot_num(tsv, "%.4f", outside / GIB);
  g_string_append(tsv, " GiB)\n# window_s ");
  ptsim_plot_num(tsv, "%.9f", w0);
  g_string_append_c(tsv, ' ');
  ptsim_plot_num(tsv, "%.9f", w1);
  g_string_append_printf(
      tsv,
      "\n# columns: stage (0-based), panel (1-based), time_s (%s), until_s (the sample holds, "
      "or the bin lasts, until then), allocated_min_gib and allocated_max_gib (handed out to "
      "tensors: the sample, or its least and most over the bin), reserved_gib (held from "
      "CUDA: the sample, or its most over the bin); GiB = 2^30 bytes\n# a panel is samples "
      "unless a '# panel N: bins of S s' line says so; a binned panel ends with a closing row "
      "(time_s = until_s)\n"
      "# stage\tpanel\ttime_s\tuntil_s\tallocated_min_gib\tallocated_max_gib\treserved_gib\n",
      one_step ? "from the step's start" : "from the first step's start");
  g_autoptr(GString) modes = g_string_new(NULL); /* gnuplot array: 1 = bins */
  g_autofree double *amin = g_new(double, nb), *amax = g_new(double, nb), *res = g_new(double, nb);
  int panel = 0, any_binned = 0;
  for (int64_t st = 0; st < pp; st++) {
    if (!shown[st]) continue;
    ++panel;
    /* the stage's samples of the drawn step, with the value held at its start */
    g_autoptr(GArray) mine = g_array_new(FALSE, FALSE, sizeof(Sample));
    const Sample *carry = NULL;
    for (guint i = 0; i < samples->len; i++) {
      const Sample *s = &g_array_index(samples, Sample, i);
      if (s->stage != st) continue;
      if (one_step && s->step < last_step) {
        carry = s;
        continue;
      }
      Sample x = *s;
      x.t = MAX(0.0, s->t - t0);
      if (carry) {
        Sample y = *carry;
        y.t = 0;
        g_array_append_val(mine, y);
        carry = NULL;
      }
      g_array_append_val(mine, x);
    }
    /* samples in the window (plus the one held into it) */
    guint from = 0, to = 0, n_in = 0;
    for (guint i = 0; i < mine->len; i++) {
      double x = g_array_index(mine, Sample, i).t;
      if (x <= w0) from = i;
      if (x <= w1) to = i;
      n_in += x >= w0 && x <= w1;
    }
    gboolean binned = n_in > (guint)nb;
    any_binned |= binned;
    g_string_append_printf(modes, "%s%d", panel > 1 ? ", " : "", binned);
    if (!binned) {
      for (guint i = from; i <= to && i < mine->len; i++) {
        const Sample *s = &g_array_index(mine, Sample, i);
        double until = i + 1 < mine->len ? g_array_index(mine, Sample, i + 1).t : w1;
        append_row(tsv, st, panel, MAX(s->t, w0), MIN(until, w1), s->allocated, s->allocated,
                   s->reserved);
      }
      continue;
    }
    g_string_append_printf(tsv, "# panel %d: bins of ", panel);
    ptsim_plot_num(tsv, "%.6g", bin_s);
    g_string_append(tsv, " s\n");
    for (int b = 0; b < nb; b++) {
      amin[b] = G_MAXDOUBLE;
      amax[b] = res[b] = -1;
    }
    for (guint i = from; i <= to && i < mine->len; i++) {
      const Sample *s = &g_array_index(mine, Sample, i);
      double until = i + 1 < mine->len ? g_array_index(mine, Sample, i + 1).t : w1;
      /* the sample holds over [t, until): every bin it touches sees it */
      int b0 = (int)floor((MAX(s->t, w0) - w0) / bin_s);
      int b1 = (int)floor((MIN(until, w1) - w0) / bin_s);
      if (b1 >= nb) b1 = nb - 1;
      for (int b = MAX(b0, 0); b <= b1; b++) {
        amin[b] = MIN(amin[b], s->allocated);
        amax[b] = MAX(amax[b], s->allocated);
        res[b] = MAX(res[b], s->reserved);
      }
    }
    int last = -1;
    for (int b = 0; b < nb; b++) {
      if (amax[b] < 0) continue;
      append_row(tsv, st, panel, w0 + b * bin_s, w0 + (b + 1) * bin_s, amin[b], amax[b], res[b]);
      last = b;
    }
    /* a closing point, so the step lines reach the last bin's end */
    if (last >= 0)
      append_row(tsv, st, panel, w0 + (last + 1) * bin_s, w0 + (last + 1) * bin_s, amin[last],
                 amax[last], res[last]);
  }
  gboolean in_ms = w1 - w0 < 2.0;

  double panel_h = c.narrow ? 2.6 : 3.0;
  int title_lines = c.narrow ? 6 : 4;
  g_autofree char *what = ptsim_plot_job_what(job);
  g_autofree char *layout = ptsim_plot_job_layout(job);
  GString *sub = g_string_new(NULL);
  g_string_append_printf(sub, "caching allocator, %s",
                         one_step ? "last replayed step" : "every replayed step");
  if (w0 > 0 || w1 < tmax)
    g_string_append_printf(sub, ", window %.4g-%.4g %s", w0 * (in_ms ? 1e3 : 1.0),
                           w1 * (in_ms ? 1e3 : 1.0), in_ms ? "ms" : "s");
  if (npanels < nstages)
    g_string_append_printf(sub, ", %d of %" G_GINT64_FORMAT " stages%s", npanels, nstages,
                           range && range->stages_given ? ""
                                                        : " (first, peak, last, evenly spaced)");
  if (any_binned)
    g_string_append_printf(sub, "; allocated as its min-max band over %.3g ms bins", bin_s * 1e3);
  g_autofree char *subtitle = g_string_free(sub, FALSE);
  const char *title[] = {what, layout, subtitle, NULL};
  /* the key belongs to the first panel, and gnuplot fits it to that panel */
  PtsimPlotCanvas key_canvas = c;
  key_canvas.width_cm = (c.width_cm - 0.4) / cols_n - 2.4 + 3.0;
  int per_row = 1, key_rows = ptsim_plot_key_rows(&key_canvas, any_binned ? 4 : 3, 31, &per_row);
  double top_cm = 0.2, bottom_cm = ptsim_plot_axis_cm(&c) + ptsim_plot_key_cm(&c, key_rows);
  ptsim_plot_canvas_height(&c, ptsim_plot_title_cm(&c, title_lines, title) + top_cm +
                                   panel_h * rows_n + bottom_cm);
  g_autoptr(GString) gp = ptsim_plot_script_begin(
      &files, &c, "allocator: allocated and reserved memory over a step, per stage.", NULL, NULL);
  g_string_append(gp, "\nlimit_gib = ");
  ptsim_plot_num(gp, "%.4f", limit_gib);
  g_string_append_printf(gp,
                         "   # capacity minus CUDA context + NCCL: where the allocator OOMs\n"
                         "t_scale = %s   # seconds -> axis unit\narray stage[%d] = [",
                         in_ms ? "1000.0" : "1.0", npanels);
  int k = 0;
  for (int64_t st = 0; st < pp; st++)
    if (shown[st]) g_string_append_printf(gp, "%s%" G_GINT64_FORMAT, k++ ? ", " : "", st);
  g_string_append_printf(gp,
                         "]\narray binned[%d] = [%s]   # 1: the panel's samples are binned\n"
                         "any_binned = %d\n",
                         npanels, modes->str, any_binned);
  ptsim_plot_title(gp, &c, title_lines, title);
  g_string_append_printf(gp, "set multiplot layout %d,%d columnsfirst margins ", rows_n, cols_n);
  ptsim_plot_num(gp, "%.3f", 2.0 / c.width_cm); /* tick labels and 'stage N (GiB)' */
  g_string_append(gp, ",");
  ptsim_plot_num(gp, "%.3f", 1.0 - 0.4 / c.width_cm);
  g_string_append(gp, ",");
  ptsim_plot_num(gp, "%.3f", bottom_cm);
  g_string_append(gp, "/height_cm, 1-(title_cm+");
  ptsim_plot_num(gp, "%.3f", top_cm);
  g_string_append(gp, ")/height_cm");
  g_string_append(gp, " spacing ");
  ptsim_plot_num(gp, "%.3f", 2.9 / c.width_cm); /* the right panel's y labels */
  g_string_append(gp, ",");
  ptsim_plot_num(gp, "%.3f", 0.3 / c.height_cm);
  g_string_append(gp, "\nset xrange [");
  ptsim_plot_num(gp, "%.6g", w0 * (in_ms ? 1000.0 : 1.0));
  g_string_append(gp, ":");
  ptsim_plot_num(gp, "%.6g", w1 * (in_ms ? 1000.0 : 1.0));
  g_string_append(gp, "]\nset yrange [0:");
  ptsim_plot_num(gp, "%.2f", ymax * 1.15);
  g_string_append(gp, "]\nset ytics 0,");
  ptsim_plot_num(gp, "%g", ptsim_plot_nice_step(0, ymax * 1.15, 4));
  g_string_append(gp, "\nset style textbox opaque noborder margins 0.3,0.2  # the panels' names");
  g_string_append_printf(
      gp,
      "\nset grid xtics\n"
      "rows = %d\n"
      "do for [p=1:|stage|] {\n"
      "  if (p %% rows == 0 || p == |stage|) { set xlabel 'time from step start (%s)' offset 0,0.4;"
      " set format x '%%g' } else { unset xlabel; set format x '' }\n"
      "  set ylabel 'GiB' offset 0.5,0\n"
      "  set label 1 sprintf('stage %%d', stage[p]) at graph 0.01, graph 0.97 left front "
      "font f_small boxed\n"
      "  # one key for all panels, centred under them\n"
      "  if (p == 1) { set key at screen 0.5, screen 0.1/height_cm center bottom horizontal "
      "maxcols %d width %d samplen 2 } else { unset key }\n"
      "  # a bin's band is a box: a polygon of zero-width steps leaves seams in PDF viewers\n"
      "  plot data using ($2==p && binned[p] ? ($3+$4)/2*t_scale : NaN):(($5+$6)/2):"
      "($3*t_scale):($4*t_scale):5:6 with boxxyerror fs solid 1.0 noborder fc rgb '#a6cee3' "
      "title (any_binned ? 'allocated (min-max per bin)' : ''), \\\n"
      "       data using ($2==p ? $3*t_scale : NaN):7 with steps lw 1.5 lc rgb c_line "
      "title 'reserved', \\\n"
      "       data using ($2==p ? $3*t_scale : NaN):6 with steps lw 1.0 lc rgb c_series[2] "
      "dt 1 title (binned[p] ? '' : 'allocated'), \\\n"
      "       limit_gib with lines lw 1.2 dt (6,4) lc rgb c_series[6] "
      "title sprintf('limit %%.1f GiB', limit_gib)\n"
      "}\nunset multiplot\n",
      rows_n, in_ms ? "ms" : "s", per_row, ptsim_plot_key_width(&c, 31));
  return ptsim_plot_render(&files, tsv, gp, out, error);
}
