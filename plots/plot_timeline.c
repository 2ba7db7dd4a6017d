/* plot_timeline.c — the simulated step as a Gantt chart, one band per
 * pipeline stage; see plot.h (ptsim_plot_timeline).
 *
 * What is drawn depends on what can be read at the printed size:
 *   boxes   every item in the window is a box when the median compute box
 *           is at least BOX_MIN_PT wide; numbered by microbatch when the
 *           number fits inside; a thin white border only when boxes are
 *           wide (on slivers it is all one sees);
 *   bins    otherwise each drawn stage's lane is cut into bins BIN_PT wide
 *           and a bin is a little stacked bar: each kind fills the share of
 *           the lane's height that it ran of the bin's time (in sixteenths),
 *           idle time stays blank; runs of equal bins become one box.  A
 *           thousand microbatches on 128 stages then draw as a few thousand
 *           boxes that show warm-up (all forward), steady state (the
 *           forward/backward mix), cool-down and the bubble (blank).
 * Each band holds the compute lane and, under it and inside the same band,
 * the data-parallel lane; faint rules separate the bands so a lane cannot
 * be read as the next stage's.  A mixture-of-experts model's boxes carry a
 * strip along their bottom: the item's exposed expert-parallel dispatch
 * and combine (from its workload; boxes only, not bins). */
#include <math.h>
#include <string.h>
#include "plot_int.h"
#include "workload.h"

#define BOX_MIN_PT 3.0 /* narrower median compute box: bins */
#define BIN_PT 1.5     /* a bin's width on paper */
#define MAX_BANDS_PAGE 32
#define MAX_BANDS_NARROW 16

typedef struct {
  int32_t kind;      /* PtsimTraceKind */
  const char *name;  /* as in the Perfetto trace */
  const char *color; /* gnuplot colour variable from the style */
  const char *text;  /* microbatch label colour; NULL: no label */
  /* Interleaved schedules: odd model chunks get this colour and label
   * colour (a darker shade), as Narayanan et al. 2021 shade the chunks of
   * their interleaved-1F1B figure.  NULL: one colour for every chunk. */
  const char *odd_color, *odd_text;
  int lane;    /* 0 compute stream, 1 data-parallel stream */
  int pattern; /* gnuplot fill pattern; 0: solid */
} TimelineKind;

/* Legend order. */
static const TimelineKind timeline_kinds[] = {
    {PTSIM_TRACE_FORWARD, "forward", "c_forward", "#000000", "c_forward_odd", "#ffffff", 0, 0},
    {PTSIM_TRACE_BACKWARD, "backward", "c_backward", "#ffffff", "c_backward_odd", "#ffffff", 0, 0},
    {PTSIM_TRACE_BACKWARD_INPUT, "backward-input", "c_backward_input", "#ffffff", NULL, NULL, 0, 0},
    {PTSIM_TRACE_BACKWARD_WEIGHT, "backward-weight", "c_backward_weight", "#ffffff", NULL, NULL, 0,
     0},
    {PTSIM_TRACE_OPTIMIZER, "optimizer", "c_optimizer_step", NULL, NULL, NULL, 0, 0},
    {PTSIM_TRACE_GRAD_SYNC, "grad-sync", "c_grad_sync", NULL, NULL, NULL, 1, 4},
    {PTSIM_TRACE_PARAM_GATHER, "param-gather", "c_param_gather", NULL, NULL, NULL, 1, 5},
};
#define NKINDS ((int)G_N_ELEMENTS(timeline_kinds))

static int kind_index(int32_t kind) {
  for (int i = 0; i < NKINDS; i++)
    if (timeline_kinds[i].kind == kind) return i;
  return -1;
}

static int decimal_digits(int64_t v) {
  int d = 1;
  while (v >= 10) {
    v /= 10;
    d++;
  }
  return d;
}

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Picks the bands: stage -> band (0 = top) or -1.  Returns the count. */
static int pick_bands(int64_t pp, const PtsimPlotRange *range, int max_bands, int band_of[]) {
  int n = 0;
  for (int64_t s = 0; s < pp; s++) band_of[s] = -1;
  gboolean want[PTSIM_MAX_STAGES] = {FALSE};
  if (range && range->stages_given) {
    for (int64_t s = 0; s < pp; s++) want[s] = range->stages[s] != 0;
  } else if (pp <= max_bands) {
    for (int64_t s = 0; s < pp; s++) want[s] = TRUE;
  } else { /* the first, the last and evenly spaced between */
    for (int k = 0; k < max_bands; k++) want[(pp - 1) * k / (max_bands - 1)] = TRUE;
  }
  for (int64_t s = 0; s < pp; s++)
    if (want[s]) band_of[s] = n++;
  return n;
}

/* Whether record `r` is drawn: a kind this figure knows (*k), on a drawn
 * stage, overlapping the window [w0, w1] (touching it counts).  *a, *b:
 * its start and end in seconds. */
static gboolean in_view(const PtsimTraceRecord *r, int64_t pp, const int *band_of, double w0,
                        double w1, int *k, double *a, double *b) {
  *k = kind_index(r->kind);
  *a = (double)r->start_ns * PTSIM_S_PER_NS;
  *b = (double)r->end_ns * PTSIM_S_PER_NS;
  return *k >= 0 && r->stage >= 0 && r->stage < pp && band_of[r->stage] >= 0 && *b >= w0 &&
         *a <= w1;
}

/* One drawn box. */
typedef struct {
  int stage, band, lane, kind_index, microbatch, chunk, label;
  double start_s, end_s;
  double share_lo, share_hi; /* the part of the lane's height it fills, 0-1 from the top */
  double ep_s;               /* MoE: its exposed all-to-all, cut to the box (bins: 0) */
} Box;

/* moe: the ep_s column too. */
static void append_box(GString *tsv, const Box *b, gboolean moe) {
  const TimelineKind *k = &timeline_kinds[b->kind_index];
  g_string_append_printf(tsv, "%d\t%d\t%d\t%s\t%d\t%d\t%d\t", b->stage, b->band, b->lane, k->name,
                         k->kind, b->microbatch, b->chunk);
  ptsim_plot_num(tsv, "%.9f", b->start_s);
  g_string_append_c(tsv, '\t');
  ptsim_plot_num(tsv, "%.9f", b->end_s);
  g_string_append_printf(tsv, "\t%d\t", b->label);
  ptsim_plot_num(tsv, "%.4f", b->share_lo);
  g_string_append_c(tsv, '\t');
  ptsim_plot_num(tsv, "%.4f", b->share_hi);
  if (moe) {
    g_string_append_c(tsv, '\t');
    ptsim_plot_num(tsv, "%.9f", b->ep_s);
  }
  g_string_append_c(tsv, '\n');
}

/* The exposed expert-parallel time of record r: its chunk's, forward or
 * input-gradient (weight gradients have none). */
static double item_ep_s(const PtsimWorkload *w, const PtsimTraceRecord *r) {
  PtsimWork chunk;
  if (r->chunk < 0 || r->kind > PTSIM_TRACE_BACKWARD_INPUT) return 0.0;
  ptsim_workload_chunk(w, r->stage, r->chunk, &chunk);
  return r->kind == PTSIM_TRACE_FORWARD ? chunk.forward_comm_s[PTSIM_COMM_EP]
                                        : chunk.backward_comm_s[PTSIM_COMM_EP];
}

/* Bins of one (band, lane): `acc` holds the seconds of each kind per bin
 * (nb x NKINDS).  Each bin's shares are rounded to sixteenths; runs of
 * bins with equal shares become one box per kind, stacked in legend
 * order from the lane's top. */
static guint append_bins(GString *tsv, int stage, int band, int lane, const double *acc, int nb,
                         double w0, double bin_s, gboolean moe) {
  guint rows = 0;
  int run_from = 0;
  int run[NKINDS] = {0}, cur[NKINDS];
  for (int b = 0; b <= nb; b++) {
    int total = 0;
    for (int k = 0; k < NKINDS; k++) {
      cur[k] = b < nb ? (int)lround(16.0 * acc[(gsize)b * NKINDS + k] / bin_s) : -1;
      if (b < nb) {
        cur[k] = MIN(cur[k], 16 - total);
        total += cur[k];
      }
    }
    if (b > 0 && memcmp(cur, run, sizeof run) == 0) continue;
    int cum = 0;
    for (int k = 0; k < NKINDS && b > 0; k++) {
      if (run[k] <= 0) continue;
      Box box = {stage,
                 band,
                 lane,
                 k,
                 -1,
                 -1,
                 0,
                 w0 + run_from * bin_s,
                 w0 + b * bin_s,
                 cum / 16.0,
                 (cum + run[k]) / 16.0,
                 0.0};
      append_box(tsv, &box, moe);
      cum += run[k];
      rows++;
    }
    memcpy(run, cur, sizeof run);
    run_from = b;
  }
  return rows;
}

/* One `plot` element: the boxes of kind k whose chunk passes `filter`. */
static void plot_boxes(GString *gp, const TimelineKind *k, const char *filter, const char *color,
                       const char *title) {
  const char *lo = k->lane ? "d_lo" : "c_lo", *hi = k->lane ? "d_hi" : "c_hi";
  g_string_append_printf(gp,
                         "  data using ($5==%d && %s ? ($8+$9)/2*t_scale : NaN):2:($8*t_scale):"
                         "($9*t_scale):($2+%s+(%s-%s)*$11):($2+%s+(%s-%s)*$12) \\\n"
                         "       with boxxyerror ",
                         k->kind, filter, lo, hi, lo, lo, hi, lo);
  if (k->pattern)
    g_string_append_printf(gp, "fs pattern %d border lc rgb %s", k->pattern, color);
  else
    g_string_append(gp, "@box_style");
  g_string_append_printf(gp, " lc rgb %s title ", color);
  ptsim_plot_quoted(gp, title);
}

/* One `plot` element: the microbatch numbers of kind k's labelled boxes. */
static void plot_labels(GString *gp, const TimelineKind *k, const char *filter, const char *text) {
  g_string_append_printf(gp,
                         "  data using ($5==%d && %s && $10==1 && show_numbers ? "
                         "($8+$9)/2*t_scale : NaN):($2+(c_lo+c_hi)/2):(sprintf('%%d', $6)) "
                         "\\\n       with labels font f_tiny tc rgb '%s' notitle",
                         k->kind, filter, text);
}

gboolean ptsim_plot_timeline(const char *figure_path, const PtsimJob *job,
                             const PtsimTimeResult *time, const PtsimTrace *trace,
                             const PtsimPlotSize *size, const PtsimPlotRange *range,
                             PtsimPlotFiles *out, GError **error) {
  g_return_val_if_fail(figure_path && job && time && trace, FALSE);
  g_auto(PtsimPlotFiles) files = {NULL, NULL, NULL};
  PtsimPlotCanvas c;
  if (!ptsim_plot_begin(figure_path, size, &files, &c, error)) return FALSE;
  if (trace->count <= 0 || trace->count > trace->capacity || !trace->records) {
    g_set_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_DATA,
                "timeline: the trace has %" G_GINT64_FORMAT " records (capacity %" G_GINT64_FORMAT
                "); nothing complete to plot",
                trace->count, trace->capacity);
    return FALSE;
  }
  int64_t pp = job->layout.pp;
  int interleaved = job->layout.vp > 1;
  /* an MoE model: each compute item's exposed all-to-all, from its workload */
  gboolean moe = job->model.num_experts > 0;
  g_autofree PtsimPlan *plan = moe ? g_new0(PtsimPlan, 1) : NULL;
  g_autofree PtsimWorkload *workload = moe ? g_new0(PtsimWorkload, 1) : NULL;
  if (moe) {
    ptsim_plan_build(job, plan);
    ptsim_workload_build(plan, NULL, workload);
  }

  /* the window */
  PtsimTime span_ns = 0;
  for (int64_t i = 0; i < trace->count; i++) span_ns = MAX(span_ns, trace->records[i].end_ns);
  double span_s = span_ns > 0 ? (double)span_ns * PTSIM_S_PER_NS : MAX(time->step_s, 1e-9);
  double w0 = range ? range->start_s : 0.0;
  double w1 = range && range->end_s > 0 ? range->end_s : span_s;
  if (w0 >= span_s) {
    g_set_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_OPTION,
                "--window starts at %g s, at or after the step's end (%g s)", w0, span_s);
    return FALSE;
  }
  gboolean windowed = w0 > 0 || w1 < span_s;

  /* the bands */
  int band_of[PTSIM_MAX_STAGES];
  int max_bands = c.narrow ? MAX_BANDS_NARROW : MAX_BANDS_PAGE;
  int nbands = pick_bands(pp, range, max_bands, band_of);

  /* what falls in the window, and the width of a compute box on paper */
  double plot_cm = c.width_cm - 2.1;
  double plot_pt = plot_cm / PTSIM_PLOT_CM_PER_IN * PTSIM_PLOT_PT_PER_IN;
  double pt_per_s = plot_pt / (w1 - w0);
  g_autoptr(GArray) widths = g_array_new(FALSE, FALSE, sizeof(double));
  int present[NKINDS] = {0};
  int has_dp_lane = 0;
  int64_t max_mb = 0;
  for (int64_t i = 0; i < trace->count; i++) {
    const PtsimTraceRecord *r = &trace->records[i];
    int k;
    double a, b;
    if (!in_view(r, pp, band_of, w0, w1, &k, &a, &b)) continue;
    present[k] = 1;
    has_dp_lane |= timeline_kinds[k].lane == 1;
    max_mb = MAX(max_mb, r->microbatch);
    if (timeline_kinds[k].text && r->microbatch >= 0) {
      double w = (b - a) * pt_per_s;
      g_array_append_val(widths, w);
    }
  }
  double median_pt = 0;
  if (widths->len) {
    qsort(widths->data, widths->len, sizeof(double), compare_double);
    median_pt = g_array_index(widths, double, widths->len / 2);
  }
  gboolean binned = widths->len > 0 && median_pt < BOX_MIN_PT;
  /* a number fits a box wider than its digits plus 2 pt */
  double label_pt = decimal_digits(max_mb) * 0.6 * c.tiny_pt + 2.0;

  g_autoptr(GString) tsv = g_string_new(NULL);
  g_string_append(tsv, "# ptsim timeline: what each pipeline stage ran in one simulated step\n");
  ptsim_plot_job_comment(tsv, job);
  g_string_append(tsv, "# step_s ");
  ptsim_plot_num(tsv, "%.9f", time->step_s);
  g_string_append(tsv, "\n# window_s ");
  ptsim_plot_num(tsv, "%.9f", w0);
  g_string_append_c(tsv, ' ');
  ptsim_plot_num(tsv, "%.9f", w1);
  g_string_append_printf(tsv, "\n# mode %s", binned ? "bins" : "boxes");
  if (binned) {
    g_string_append(tsv, " (each row a run of bins of ");
    ptsim_plot_num(tsv, "%.6g", BIN_PT / pt_per_s);
    g_string_append(tsv, " s; a box fills the share of its lane's height that its kind ran "
                         "of the bin's time)");
  }
  g_string_append_printf(
      tsv,
      "\n# columns: stage (0-based), band (row from the top), lane (0 compute stream, 1 "
      "data-parallel stream), kind (name), kind_id (PtsimTraceKind), microbatch (0-based; -1: "
      "none or a bin), chunk (model chunk, 0-based; -1: none or a bin), start_s, end_s (seconds "
      "from the step's start, cut to the window), label (1: the microbatch number fits), "
      "share_lo, share_hi (the part of the lane's height the box fills, 0 top to 1 bottom)%s\n"
      "# stage\tband\tlane\tkind\tkind_id\tmicrobatch\tchunk\tstart_s\tend_s\tlabel"
      "\tshare_lo\tshare_hi%s\n",
      moe ? ", ep_s (an MoE item's exposed all-to-all dispatch and combine, cut to the box; 0 "
            "for the others and for bins)"
          : "",
      moe ? "\tep_s" : "");
  guint rows = 0, labelled = 0;
  if (!binned) {
    for (int64_t i = 0; i < trace->count; i++) {
      const PtsimTraceRecord *r = &trace->records[i];
      int k;
      double a, b;
      if (!in_view(r, pp, band_of, w0, w1, &k, &a, &b)) continue;
      a = MAX(a, w0);
      b = MIN(b, w1);
      Box box = {r->stage,
                 band_of[r->stage],
                 timeline_kinds[k].lane,
                 k,
                 r->microbatch,
                 r->chunk,
                 timeline_kinds[k].text && r->microbatch >= 0 && (b - a) * pt_per_s >= label_pt,
                 a,
                 b,
                 0.0,
                 1.0,
                 moe ? MIN(item_ep_s(workload, r), b - a) : 0.0};
      append_box(tsv, &box, moe);
      rows++;
      labelled += box.label;
    }
  } else {
    int nb = MAX(1, (int)ceil(plot_pt / BIN_PT));
    double bin_s = (w1 - w0) / nb;
    g_autofree double *acc = g_new0(double, (gsize)nbands * 2 * nb * NKINDS);
    int stage_of_band[PTSIM_MAX_STAGES];
    for (int64_t s = 0; s < pp; s++)
      if (band_of[s] >= 0) stage_of_band[band_of[s]] = (int)s;
    for (int64_t i = 0; i < trace->count; i++) {
      const PtsimTraceRecord *r = &trace->records[i];
      int k;
      double a, b;
      if (!in_view(r, pp, band_of, w0, w1, &k, &a, &b) || b == w0 || a == w1) continue;
      double *lane = acc + ((gsize)band_of[r->stage] * 2 + timeline_kinds[k].lane) * nb * NKINDS;
      a = MAX(a, w0);
      b = MIN(b, w1);
      for (int bin = (int)((a - w0) / bin_s); bin < nb && w0 + bin * bin_s < b; bin++) {
        double lo = MAX(a, w0 + bin * bin_s), hi = MIN(b, w0 + (bin + 1) * bin_s);
        if (hi > lo) lane[(gsize)bin * NKINDS + k] += hi - lo;
      }
    }
    for (int band = 0; band < nbands; band++)
      for (int lane = 0; lane < 2; lane++)
        rows += append_bins(tsv, stage_of_band[band], band, lane,
                            acc + ((gsize)band * 2 + lane) * nb * NKINDS, nb, w0, bin_s, moe);
  }
  if (rows == 0) {
    g_set_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_OPTION,
                "--window %g:%g s holds nothing of the drawn stages to plot", w0, w1);
    return FALSE;
  }

  /* A band of ~0.6 cm for a few stages, thinner for many. */
  double band_cm = CLAMP(7.0 / nbands, 0.2, c.narrow ? 0.55 : 0.7);
  int entries = 0, longest = 0;
  for (int k = 0; k < NKINDS; k++) {
    if (!present[k]) continue;
    gboolean two = interleaved && timeline_kinds[k].odd_color && !binned;
    entries += two ? 2 : 1;
    longest = MAX(longest, (int)strlen(timeline_kinds[k].name) + (two ? 13 : 5));
  }
  gboolean ep_strip = moe && !binned;
  if (ep_strip) {
    entries++;
    longest = MAX(longest, 19);
  }
  int per_row = 1, key_rows = ptsim_plot_key_rows(&c, entries, longest, &per_row);
  int title_lines = c.narrow ? 6 : 4;
  int in_ms = w1 - w0 < 2.0;
  g_autofree char *what = ptsim_plot_job_what(job);
  g_autofree char *layout = ptsim_plot_job_layout(job);
  GString *sub = g_string_new(NULL);
  g_string_append_printf(sub, "step %.3f s, bubble %.1f%%", time->step_s,
                         100.0 * time->bubble_fraction);
  if (windowed)
    g_string_append_printf(sub, "; window %.4g-%.4g %s", w0 * (in_ms ? 1e3 : 1.0),
                           w1 * (in_ms ? 1e3 : 1.0), in_ms ? "ms" : "s");
  if (nbands < pp)
    g_string_append_printf(sub, "; %d of %" G_GINT64_FORMAT " stages%s", nbands, pp,
                           range && range->stages_given ? "" : " (first, last, evenly spaced)");
  if (binned)
    g_string_append_printf(sub, "; %.3g ms bins, each kind filling its share (zoom: --window)",
                           BIN_PT / pt_per_s * 1e3);
  if (!binned && interleaved) g_string_append(sub, "; odd model chunks darker");
  if (!binned && labelled == 0) g_string_append(sub, "; --window to number the items");
  g_autofree char *subtitle = g_string_free(sub, FALSE);
  const char *title[] = {what, layout, subtitle, NULL};
  double top_cm = 0.25, bottom_cm = ptsim_plot_axis_cm(&c) + ptsim_plot_key_cm(&c, key_rows);
  ptsim_plot_canvas_height(&c, ptsim_plot_title_cm(&c, title_lines, title) + top_cm +
                                   MAX(band_cm * nbands, 1.2) + bottom_cm);

  g_autoptr(GString)
      gp = ptsim_plot_script_begin(&files, &c,
                                   "timeline: the simulated pipeline schedule, one band per stage.",
                                   job, NULL);
  g_string_append_printf(gp, "\nbands = %d\nt_scale = %s  # seconds -> axis unit\n", nbands,
                         in_ms ? "1000.0" : "1.0");
  g_string_append_printf(gp,
                         "show_numbers = 1   # microbatch numbers on the boxes wide enough\n"
                         "# white rules between boxes only when they are wide: on a sliver "
                         "the rule is all one sees\nbox_style = \"%s\"\n",
                         !binned && median_pt >= 4.0 ? "fs solid 1.0 border lc rgb '#ffffff' lw 0.5"
                                                     : "fs solid 1.0 noborder");
  if (has_dp_lane)
    g_string_append(gp, "# lanes inside a stage's band (y grows downwards): compute above,\n"
                        "# data-parallel communication below\n"
                        "c_lo = -0.44; c_hi = 0.14\nd_lo = 0.18; d_hi = 0.42\n");
  else
    g_string_append(gp, "# one lane per stage: no data-parallel communication drawn\n"
                        "c_lo = -0.42; c_hi = 0.42\nd_lo = 0.0; d_hi = 0.0\n");

  ptsim_plot_title(gp, &c, title_lines, title);
  ptsim_plot_margins(gp, top_cm, bottom_cm);
  ptsim_plot_key_under(gp, &c, per_row, longest, 0.0);
  g_string_append(gp, "set xrange [");
  ptsim_plot_num(gp, "%.6g", w0 * (in_ms ? 1000.0 : 1.0));
  g_string_append(gp, ":");
  ptsim_plot_num(gp, "%.6g", (windowed ? w1 : w1 * 1.01) * (in_ms ? 1000.0 : 1.0));
  g_string_append(gp, "]\nset yrange [bands-0.5:-0.5]  # stage 0 at the top\nset ytics (");
  int tic_every = nbands <= 16 ? 1 : (nbands + 15) / 16;
  int first = 1;
  for (int64_t s = 0; s < pp; s++) {
    /* every tic_every-th band and the last, which the one before it makes way for */
    int b = band_of[s];
    gboolean last = b == nbands - 1;
    if (b < 0 || (b % tic_every != 0 && !last) || (!last && b > nbands - 1 - tic_every)) continue;
    g_string_append_printf(gp, "%s'%" G_GINT64_FORMAT "' ", first ? "" : ", ", s);
    ptsim_plot_num(gp, "%g", band_of[s] + (has_dp_lane ? -0.15 : 0.0)); /* the compute lane */
    first = 0;
  }
  g_string_append_printf(
      gp,
      ")\n"
      "set grid noytics\n"
      "set grid xtics linetype 1 linewidth 0.6 linecolor rgb '#e0e0e0' dashtype solid\n"
      "# faint rules between the stages' bands\n"
      "do for [b=1:bands-1] { set arrow from graph 0, first b-0.5 to graph 1, first b-0.5 "
      "nohead lw 0.5 lc rgb '#e8e8e8' back }\n"
      "set xlabel 'time from step start (%s)' offset 0,0.3\n"
      "set ylabel 'stage'\n",
      in_ms ? "ms" : "s");
  if (has_dp_lane)
    g_string_append(gp, "set label 'DP' at graph 1, first (d_lo+d_hi)/2 left offset 0.3,0 "
                        "font f_tiny tc rgb c_note\nset rmargin 3\n");
  g_string_append(gp, "plot \\\n");
  gboolean need_comma = FALSE;
  for (int i = 0; i < NKINDS; i++) {
    if (!present[i]) continue;
    const TimelineKind *k = &timeline_kinds[i];
    if (need_comma) g_string_append(gp, ", \\\n");
    need_comma = TRUE;
    g_autofree char *name = g_strdup_printf("%s%s", k->name, k->lane ? " (DP)" : "");
    if (interleaved && k->odd_color && !binned) {
      g_autofree char *even = g_strdup_printf("%s, %s", k->name,
                                              job->layout.vp == 2 ? "chunk 0" : "even chunks");
      g_autofree char *odd = g_strdup_printf("%s, %s", k->name,
                                             job->layout.vp == 2 ? "chunk 1" : "odd chunks");
      plot_boxes(gp, k, "int($7)%2!=1", k->color, even);
      g_string_append(gp, ", \\\n");
      plot_boxes(gp, k, "int($7)%2==1", k->odd_color, odd);
    } else {
      plot_boxes(gp, k, "1", k->color, name);
    }
  }
  for (int i = 0; i < NKINDS && !binned; i++) {
    const TimelineKind *k = &timeline_kinds[i];
    if (!present[i] || !k->text) continue;
    g_string_append(gp, ", \\\n");
    if (interleaved && k->odd_color) {
      plot_labels(gp, k, "int($7)%2!=1", k->text);
      g_string_append(gp, ", \\\n");
      plot_labels(gp, k, "int($7)%2==1", k->odd_text);
    } else {
      plot_labels(gp, k, "1", k->text);
    }
  }
  if (ep_strip) /* a strip along the bottom of each compute box */
    g_string_append(gp, ", \\\n  data using ($13>0 ? ($8+$13/2)*t_scale : NaN):2:($8*t_scale):"
                        "(($8+$13)*t_scale):($2+c_hi-0.25*(c_hi-c_lo)):($2+c_hi) \\\n"
                        "       with boxxyerror fs solid 1.0 noborder lc rgb '#ff7f00' "
                        "title 'ep all-to-all'");
  g_string_append_c(gp, '\n');
  return ptsim_plot_render(&files, tsv, gp, out, error);
}
