/* plot_alloc.c — the caching allocator over one training step, per
 * pipeline stage; see plot.h (ptsim_plot_allocator).
 *
 * Reads the allocator timeline TSV that `ptsim predict --memory-timeline`
 * (ptsim_simulate_allocator) writes: a sample after every schedule item of
 * every replayed step.  A sample holds until the next one, so the lines
 * are gnuplot `steps`.  The last replayed step is drawn (the first one
 * includes the reserve growth of warm-up; the reserved level it leaves is
 * what the next step starts from), with time measured from that step's
 * start; each stage's curve starts with the value the previous step left. */
#include <math.h>
#include <string.h>
#include "lifetimes.h"
#include "plot_int.h"

#define GIB PTSIM_PLOT_GIB
#define MAX_PANELS 8

/* The value of "# key VALUE" among the table's comments into *out (NAN when
 * absent); a value that is not a number in RANGE is an error naming it. */
static gboolean comment_value(const PtsimPlotTable *t, const char *key, PtsimRange range,
                              double *out, GError **error) {
  size_t n = strlen(key);
  *out = NAN;
  for (guint i = 0; i < t->comments->len; i++) {
    const char *c = g_ptr_array_index(t->comments, i);
    while (*c == ' ') c++;
    if (strncmp(c, key, n) != 0 || (c[n] != ' ' && c[n] != '\t')) continue;
    g_autofree char *what = g_strdup_printf("%s: '# %s'", t->path, key);
    if (!ptsim_number_double(what, c + n + 1, range, out, error)) {
      g_prefix_error(error, "allocator timeline: ");
      return FALSE;
    }
  }
  return TRUE;
}

typedef struct {
  gint64 stage, step;
  double t, allocated, reserved;
} Sample;

gboolean ptsim_plot_allocator(const char *figure_path, const PtsimJob *job,
                              const char *timeline_path, PtsimPlotFiles *out, GError **error) {
  g_return_val_if_fail(figure_path && job && timeline_path, FALSE);
  PtsimPlotFormat format;
  g_auto(PtsimPlotFiles) files = {NULL, NULL, NULL};
  if (!ptsim_plot_files_for(figure_path, &format, &files, error)) return FALSE;
  static const char *const cols[] = {"stage", "step", "time_s", "allocated_bytes",
                                     "reserved_bytes", NULL};
  g_autoptr(PtsimPlotTable) t = ptsim_plot_table_read(timeline_path, '\t', cols, error);
  if (!t) return FALSE;
  int c[5];
  for (int i = 0; i < 5; i++) c[i] = ptsim_plot_table_column(t, cols[i]);
  int64_t pp = job->layout.pp;
  g_autoptr(GArray) samples = g_array_sized_new(FALSE, FALSE, sizeof(Sample), t->rows->len);
  gint64 last_step = 0;
  const PtsimRange nonnegative = {0.0, INFINITY, TRUE, FALSE};
  for (guint r = 0; r < t->rows->len; r++) {
    Sample s;
    if (!ptsim_plot_table_int(t, r, c[0], &s.stage, error) ||
        !ptsim_plot_table_int(t, r, c[1], &s.step, error) ||
        !ptsim_plot_table_double(t, r, c[2], nonnegative, &s.t, error) ||
        !ptsim_plot_table_double(t, r, c[3], nonnegative, &s.allocated, error) ||
        !ptsim_plot_table_double(t, r, c[4], nonnegative, &s.reserved, error))
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
  if (!comment_value(t, "step_s", nonnegative, &step_s, error) ||
      !comment_value(t, "capacity_bytes", positive, &capacity, error) ||
      !comment_value(t, "outside_bytes", nonnegative, &outside, error))
    return FALSE;
  if (isnan(capacity)) capacity = job->hw.memory_bytes;
  if (isnan(outside)) outside = ptsim_lifetimes_outside_bytes(job);
  gboolean one_step = !isnan(step_s) && step_s > 0;
  double limit_gib = (capacity - outside) / GIB;

  /* Stages present, their reserved peak, and which get a panel. */
  double peak[PTSIM_MAX_STAGES] = {0};
  gboolean present[PTSIM_MAX_STAGES] = {FALSE};
  double ymax = limit_gib, tmax = 0;
  for (guint i = 0; i < samples->len; i++) {
    const Sample *s = &g_array_index(samples, Sample, i);
    present[s->stage] = TRUE;
    peak[s->stage] = MAX(peak[s->stage], s->reserved);
    ymax = MAX(ymax, s->reserved / GIB);
  }
  int64_t peak_stage = 0, nstages = 0;
  for (int64_t s = 0; s < pp; s++) {
    nstages += present[s];
    if (peak[s] > peak[peak_stage]) peak_stage = s;
  }
  gboolean shown[PTSIM_MAX_STAGES] = {FALSE};
  int npanels = 0;
  if (nstages <= MAX_PANELS) {
    for (int64_t s = 0; s < pp; s++) shown[s] = present[s];
    npanels = (int)nstages;
  } else {
    /* first, peak, last, then evenly spaced until 8 */
    int64_t want[MAX_PANELS + 3];
    int nw = 0;
    want[nw++] = 0; want[nw++] = peak_stage; want[nw++] = pp - 1;
    for (int k = 1; k < MAX_PANELS - 1; k++) want[nw++] = (pp - 1) * k / (MAX_PANELS - 1);
    for (int k = 0; k < nw && npanels < MAX_PANELS; k++)
      if (present[want[k]] && !shown[want[k]]) {
        shown[want[k]] = TRUE;
        npanels++;
      }
  }

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
  g_string_append_printf(
      tsv,
      " GiB)\n# columns: stage (0-based), panel (1-based), step (replayed step), time_s (%s), "
      "allocated_gib (handed out to tensors), reserved_gib (held from CUDA), GiB = 2^30 bytes\n"
      "# stage\tpanel\tstep\ttime_s\tallocated_gib\treserved_gib\n",
      one_step ? "from the step's start" : "from the first step's start");
  int panel = 0;
  for (int64_t st = 0; st < pp; st++) {
    if (!shown[st]) continue;
    ++panel;
    const Sample *carry = NULL;
    for (guint i = 0; i < samples->len; i++) {
      const Sample *s = &g_array_index(samples, Sample, i);
      if (s->stage != st) continue;
      if (one_step && s->step < last_step) {
        carry = s;
        continue;
      }
      double t0 = one_step ? step_s * (double)last_step : 0.0;
      if (carry) {
        g_string_append_printf(tsv, "%" G_GINT64_FORMAT "\t%d\t%" G_GINT64_FORMAT "\t0", st, panel,
                               last_step);
        g_string_append_c(tsv, '\t');
        ptsim_plot_num(tsv, "%.4f", carry->allocated / GIB);
        g_string_append_c(tsv, '\t');
        ptsim_plot_num(tsv, "%.4f", carry->reserved / GIB);
        g_string_append_c(tsv, '\n');
        carry = NULL;
      }
      double x = MAX(0.0, s->t - t0);
      tmax = MAX(tmax, x);
      g_string_append_printf(tsv, "%" G_GINT64_FORMAT "\t%d\t%" G_GINT64_FORMAT "\t", st, panel,
                             s->step);
      ptsim_plot_num(tsv, "%.9f", x);
      g_string_append_c(tsv, '\t');
      ptsim_plot_num(tsv, "%.4f", s->allocated / GIB);
      g_string_append_c(tsv, '\t');
      ptsim_plot_num(tsv, "%.4f", s->reserved / GIB);
      g_string_append_c(tsv, '\n');
    }
  }
  if (one_step) tmax = MAX(tmax, step_s);
  if (tmax <= 0) tmax = 1.0;
  gboolean in_ms = tmax < 2.0;

  int cols_n = npanels <= 4 ? 1 : 2, rows_n = (npanels + cols_n - 1) / cols_n;
  double width_cm = cols_n == 1 ? 16.0 : 22.0;
  double height_cm = CLAMP(3.6 + 3.4 * rows_n, 8.0, 22.0);
  g_autofree char *fig_name = g_path_get_basename(files.figure);
  g_autofree char *data_name = g_path_get_basename(files.data);
  g_autoptr(GString) gp = g_string_new(NULL);
  ptsim_plot_script_header(gp, "allocator: allocated and reserved memory over a step, per stage.",
                           &files);
  ptsim_plot_style(gp, format, fig_name, width_cm, height_cm);
  g_string_append(gp, "data = ");
  ptsim_plot_quoted(gp, data_name);
  g_string_append(gp, "\nlimit_gib = ");
  ptsim_plot_num(gp, "%.4f", limit_gib);
  g_string_append_printf(gp, "   # capacity minus CUDA context + NCCL: where the allocator OOMs\n"
                             "t_scale = %s   # seconds -> axis unit\narray stage[%d] = [",
                         in_ms ? "1000.0" : "1.0", npanels);
  int k = 0;
  for (int64_t st = 0; st < pp; st++)
    if (shown[st]) g_string_append_printf(gp, "%s%" G_GINT64_FORMAT, k++ ? ", " : "", st);
  g_string_append(gp, "]\n");
  g_autofree char *first = g_strdup_printf(
      "%s on %" G_GINT64_FORMAT " x %s: tp %" G_GINT64_FORMAT
      " pp %" G_GINT64_FORMAT " cp %" G_GINT64_FORMAT " dp %" G_GINT64_FORMAT ", mbs %" G_GINT64_FORMAT,
      job->model.name, job->layout.gpus, job->hw.name, job->layout.tp, job->layout.pp,
      job->layout.cp, job->layout.dp, job->layout.mbs);
  g_autofree char *subset =
      npanels < nstages ? g_strdup_printf(", %d of %" G_GINT64_FORMAT " stages (first, peak, "
                                          "last, evenly spaced)", npanels, nstages)
                        : g_strdup("");
  g_autofree char *second = g_strdup_printf(
      "caching allocator, %s%s", one_step ? "last replayed step" : "every replayed step", subset);
  g_autofree char *third = g_strdup_printf("limit: %.1f GiB capacity - %.1f GiB context/NCCL",
                                           capacity / GIB, outside / GIB);
  ptsim_plot_title_lines(gp, first, second, third);
  double top_m = 1.0 - 2.8 / height_cm, bot_m = 2.2 / height_cm;
  g_string_append_printf(gp, "set multiplot layout %d,%d columnsfirst margins ", rows_n, cols_n);
  ptsim_plot_num(gp, "%.3f", 2.3 / width_cm);
  g_string_append(gp, ",");
  ptsim_plot_num(gp, "%.3f", 1.0 - 0.4 / width_cm);
  g_string_append(gp, ",");
  ptsim_plot_num(gp, "%.3f", bot_m);
  g_string_append(gp, ",");
  ptsim_plot_num(gp, "%.3f", top_m);
  g_string_append(gp, " spacing ");
  ptsim_plot_num(gp, "%.3f", 2.6 / width_cm);
  g_string_append(gp, ",");
  ptsim_plot_num(gp, "%.3f", 0.35 / height_cm);
  g_string_append(gp, "\nset xrange [0:");
  ptsim_plot_num(gp, "%.6g", tmax * (in_ms ? 1000.0 : 1.0));
  /* y tics: about four per panel at a 1-2-5 step */
  double raw = ymax * 1.1 / 4.0, mag = pow(10.0, floor(log10(raw > 0 ? raw : 1.0)));
  double step = raw / mag <= 1.0 ? mag : raw / mag <= 2.0 ? 2 * mag : raw / mag <= 5.0 ? 5 * mag : 10 * mag;
  g_string_append(gp, "]\nset yrange [0:");
  ptsim_plot_num(gp, "%.2f", ymax * 1.1);
  g_string_append(gp, "]\nset ytics 0,");
  ptsim_plot_num(gp, "%g", step);
  g_string_append_printf(
      gp,
      "\nset grid xtics\n"
      "rows = %d\n"
      "do for [p=1:|stage|] {\n"
      "  if (p %% rows == 0 || p == |stage|) { set xlabel 'time from step start (%s)' offset 0,0.4;"
      " set format x '%%g' } else { unset xlabel; set format x '' }\n"
      "  set ylabel sprintf('stage %%d (GiB)', stage[p])\n"
      "  # one key for all panels, centred under them\n"
      "  if (p == 1) { set key at screen 0.5, screen 0.005 center bottom horizontal maxrows 1 width 0 font ',8' samplen 2 }"
      " else { unset key }\n"
      "  plot data using ($2==p ? $4*t_scale : NaN):6 with steps lw 1.5 lc rgb c_line "
      "title 'reserved', \\\n"
      "       data using ($2==p ? $4*t_scale : NaN):5 with steps lw 1.2 lc rgb c_series[2] "
      "dt 1 title 'allocated', \\\n"
      "       limit_gib with lines lw 1.2 dt (6,4) lc rgb c_series[6] "
      "title 'limit'\n"
      "}\nunset multiplot\n",
      rows_n, in_ms ? "ms" : "s");
  return ptsim_plot_render(&files, tsv, gp, out, error);
}
