/* plot_sweep.c — figures of a whole sweep: the tp x pp heatmap, the
 * memory/throughput Pareto scatter, and GPU-count scaling; see plot.h.
 *
 * Input is a list of PtsimPlotLayout, read from `ptsim sweep --csv` or
 * taken from an in-process sweep, so both paths draw the same figure.
 * "Best" always means: among layouts that were scheduled and fit, the most
 * tokens/s per GPU (the sweep's own ranking).  Throughput is per GPU so
 * that figures compare across GPU counts.  Memory is the analytical
 * estimate of the peak stage (the number the fit verdict uses). */
#include <math.h>
#include <string.h>
#include "names.h"
#include "plot_int.h"

#define GIB PTSIM_PLOT_GIB

static double per_gpu(const PtsimPlotLayout *l) {
  return l->gpus > 0 ? l->tokens_per_s / (double)l->gpus : 0.0;
}

static gboolean usable(const PtsimPlotLayout *l) { return l->status == 0 && l->fits; }

/* ---- reading ---- */

/* Memory, time and throughput are never negative (0: not scheduled). */
static const PtsimRange NONNEGATIVE = {0.0, INFINITY, TRUE, FALSE};

GArray *ptsim_plot_layouts_read_csv(const char *path, GError **error) {
  static const char *const cols[] = {"rank", "model", "hw", "gpus", "seq", "gbs", "tp", "pp",
                                     "cp", "dp", "vp", "mbs", "recompute", "schedule",
                                     "status", "fits", "total_bytes", "usage_fraction",
                                     "step_s", "tokens_per_s", NULL};
  g_autoptr(PtsimPlotTable) t = ptsim_plot_table_read(path, ',', cols, error);
  if (!t) return NULL;
  int c[G_N_ELEMENTS(cols)];
  for (size_t i = 0; cols[i]; i++) c[i] = ptsim_plot_table_column(t, cols[i]);
  g_autoptr(GArray) out = g_array_sized_new(FALSE, TRUE, sizeof(PtsimPlotLayout), t->rows->len);
  for (guint r = 0; r < t->rows->len; r++) {
    PtsimPlotLayout l;
    memset(&l, 0, sizeof l);
    l.line = g_array_index(t->lines, int, r);
    gint64 *ints[] = {&l.rank, NULL, NULL, &l.gpus, &l.seq, &l.gbs, &l.tp, &l.pp, &l.cp,
                      &l.dp, &l.vp, &l.mbs};
    for (size_t i = 0; i < G_N_ELEMENTS(ints); i++) {
      if (!ints[i]) continue;
      if (!ptsim_plot_table_int(t, r, c[i], ints[i], error)) return NULL;
      if (*ints[i] < 0 || (*ints[i] == 0 && i != 0)) { /* rank 0: a streamed sweep */
        g_set_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_INPUT,
                    "%s:%d: column %s: %" G_GINT64_FORMAT " must be positive", path, l.line,
                    cols[i], *ints[i]);
        return NULL;
      }
    }
    g_strlcpy(l.model, ptsim_plot_table_text(t, r, c[1]), sizeof l.model);
    g_strlcpy(l.hw, ptsim_plot_table_text(t, r, c[2]), sizeof l.hw);
    g_strlcpy(l.recompute, ptsim_plot_table_text(t, r, c[12]), sizeof l.recompute);
    g_strlcpy(l.schedule, ptsim_plot_table_text(t, r, c[13]), sizeof l.schedule);
    gint64 status, fits;
    if (!ptsim_plot_table_int(t, r, c[14], &status, error) ||
        !ptsim_plot_table_int(t, r, c[15], &fits, error) ||
        !ptsim_plot_table_double(t, r, c[16], NONNEGATIVE, &l.total_bytes, error) ||
        !ptsim_plot_table_double(t, r, c[17], NONNEGATIVE, &l.usage_fraction, error) ||
        !ptsim_plot_table_double(t, r, c[18], NONNEGATIVE, &l.step_s, error) ||
        !ptsim_plot_table_double(t, r, c[19], NONNEGATIVE, &l.tokens_per_s, error))
      return NULL;
    if (fits != 0 && fits != 1) {
      g_set_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_INPUT,
                  "%s:%d: column fits: %" G_GINT64_FORMAT " must be 0 or 1", path, l.line, fits);
      return NULL;
    }
    l.status = (int)status;
    l.fits = (int)fits;
    g_array_append_val(out, l);
  }
  return g_steal_pointer(&out);
}

GArray *ptsim_plot_layouts_from_sweep(const PtsimSweep *sweep, const GArray *order) {
  g_return_val_if_fail(sweep && order, NULL);
  GArray *out = g_array_sized_new(FALSE, TRUE, sizeof(PtsimPlotLayout), order->len);
  for (guint k = 0; k < order->len; k++) {
    guint i = g_array_index(order, guint, k);
    const PtsimJob *j = &g_array_index(sweep->jobs, PtsimJob, i);
    const PtsimBatchResult *r = &g_array_index(sweep->results, PtsimBatchResult, i);
    const PtsimLayout *y = &j->layout;
    PtsimPlotLayout l;
    memset(&l, 0, sizeof l);
    l.rank = k + 1;
    g_strlcpy(l.model, j->model.name, sizeof l.model);
    g_strlcpy(l.hw, j->hw.name, sizeof l.hw);
    l.gpus = y->gpus; l.seq = y->seq; l.gbs = y->gbs; l.tp = y->tp; l.pp = y->pp;
    l.cp = y->cp; l.dp = y->dp; l.vp = y->vp; l.mbs = y->mbs;
    g_strlcpy(l.recompute, ptsim_names_get(PTSIM_NAMES_RECOMPUTE, (int)y->recompute),
              sizeof l.recompute);
    g_strlcpy(l.schedule, ptsim_names_get(PTSIM_NAMES_SCHEDULE, (int)y->schedule),
              sizeof l.schedule);
    l.status = r->status;
    l.fits = r->fits;
    l.total_bytes = r->total_bytes;
    l.usage_fraction = r->usage_fraction;
    l.step_s = r->step_s;
    l.tokens_per_s = r->tokens_per_s;
    g_array_append_val(out, l);
  }
  return out;
}

/* ---- scenario choice and helpers ---- */

static gboolean same_scenario(const PtsimPlotLayout *a, const PtsimPlotLayout *b) {
  return strcmp(a->model, b->model) == 0 && strcmp(a->hw, b->hw) == 0 && a->gpus == b->gpus &&
         a->seq == b->seq && a->gbs == b->gbs;
}

/* Index of the best layout (best usable by tokens/s per GPU, lowest rank on
 * ties; when none is usable, the best scheduled one), or -1 when none was
 * scheduled. */
static int best_index(const GArray *layouts) {
  int best = -1;
  for (guint i = 0; i < layouts->len; i++) {
    const PtsimPlotLayout *l = &g_array_index(layouts, PtsimPlotLayout, i);
    if (l->status != 0) continue;
    if (best < 0) { best = (int)i; continue; }
    const PtsimPlotLayout *b = &g_array_index(layouts, PtsimPlotLayout, best);
    if (usable(l) != usable(b)) {
      if (usable(l)) best = (int)i;
      continue;
    }
    if (per_gpu(l) > per_gpu(b) || (per_gpu(l) == per_gpu(b) && l->rank < b->rank))
      best = (int)i;
  }
  return best;
}

static char *scenario_text(const PtsimPlotLayout *l) {
  return g_strdup_printf("%s on %" G_GINT64_FORMAT " x %s, seq %" G_GINT64_FORMAT
                         ", gbs %" G_GINT64_FORMAT,
                         l->model, l->gpus, l->hw, l->seq, l->gbs);
}

static char *layout_words(const PtsimPlotLayout *l) {
  g_autofree char *vp =
      l->vp > 1 ? g_strdup_printf(" vp %" G_GINT64_FORMAT, l->vp) : g_strdup("");
  return g_strdup_printf("tp %" G_GINT64_FORMAT " pp %" G_GINT64_FORMAT " cp %" G_GINT64_FORMAT
                         " mbs %" G_GINT64_FORMAT "%s", l->tp, l->pp, l->cp, l->mbs, vp);
}

/* The layouts of the best layout's scenario.  *dropped: rows left out.
 * Error PTSIM_PLOT_ERROR_DATA when nothing was scheduled. */
static GArray *one_scenario(const GArray *layouts, const char *kind, guint *dropped,
                            GError **error) {
  int b = best_index(layouts);
  if (b < 0) {
    g_set_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_DATA,
                "%s: none of the %u layouts could be scheduled; nothing to plot", kind,
                layouts->len);
    return NULL;
  }
  const PtsimPlotLayout *best = &g_array_index(layouts, PtsimPlotLayout, b);
  GArray *out = g_array_new(FALSE, FALSE, sizeof(PtsimPlotLayout));
  *dropped = 0;
  for (guint i = 0; i < layouts->len; i++) {
    const PtsimPlotLayout *l = &g_array_index(layouts, PtsimPlotLayout, i);
    if (same_scenario(l, best)) g_array_append_val(out, *l);
    else (*dropped)++;
  }
  return out;
}

static int cmp_i64(const void *a, const void *b) {
  gint64 x = *(const gint64 *)a, y = *(const gint64 *)b;
  return (x > y) - (x < y);
}

/* Sorted distinct values of one field. */
static GArray *distinct(const GArray *layouts, size_t offset) {
  GArray *v = g_array_new(FALSE, FALSE, sizeof(gint64));
  for (guint i = 0; i < layouts->len; i++) {
    gint64 x = *(const gint64 *)((const char *)&g_array_index(layouts, PtsimPlotLayout, i) + offset);
    gboolean seen = FALSE;
    for (guint k = 0; k < v->len && !seen; k++) seen = g_array_index(v, gint64, k) == x;
    if (!seen) g_array_append_val(v, x);
  }
  g_array_sort(v, (GCompareFunc)cmp_i64);
  return v;
}

static int index_of(const GArray *v, gint64 x) {
  for (guint k = 0; k < v->len; k++)
    if (g_array_index(v, gint64, k) == x) return (int)k;
  return -1;
}

/* `set xtics ('1' 0, '2' 1, ...)` for categorical axes. */
static void append_category_tics(GString *gp, const char *axis, const GArray *v) {
  g_string_append_printf(gp, "set %stics (", axis);
  for (guint k = 0; k < v->len; k++)
    g_string_append_printf(gp, "%s'%" G_GINT64_FORMAT "' %u", k ? ", " : "",
                           g_array_index(v, gint64, k), k);
  g_string_append(gp, ")\n");
}

static void append_source_comment(GString *s, const char *source, guint used, guint dropped) {
  g_string_append_printf(s, "# from %s: %u layouts of this scenario used, %u of other scenarios left out\n",
                         source ? source : "an in-process sweep", used, dropped);
}

/* ---- heatmap ---- */

typedef struct {
  gint64 facet, tp, pp;
  int layouts, scheduled, fitting;
  int best; /* index into the scenario's layouts, -1: none fits */
} Cell;

gboolean ptsim_plot_heatmap(const char *figure_path, const GArray *layouts,
                            PtsimPlotFacet facet, const char *source, PtsimPlotFiles *out,
                            GError **error) {
  g_return_val_if_fail(figure_path && layouts, FALSE);
  PtsimPlotFormat format;
  g_auto(PtsimPlotFiles) files = {NULL, NULL, NULL};
  if (!ptsim_plot_files_for(figure_path, &format, &files, error)) return FALSE;
  guint dropped = 0;
  g_autoptr(GArray) rows = one_scenario(layouts, "heatmap", &dropped, error);
  if (!rows) return FALSE;
  size_t facet_off = facet == PTSIM_PLOT_FACET_CP ? G_STRUCT_OFFSET(PtsimPlotLayout, cp)
                                                  : G_STRUCT_OFFSET(PtsimPlotLayout, mbs);
  const char *facet_name = facet == PTSIM_PLOT_FACET_CP ? "cp" : "mbs";
  g_autoptr(GArray) facets = distinct(rows, facet_off);
  g_autoptr(GArray) tps = distinct(rows, G_STRUCT_OFFSET(PtsimPlotLayout, tp));
  g_autoptr(GArray) pps = distinct(rows, G_STRUCT_OFFSET(PtsimPlotLayout, pp));
  guint nf = facets->len, nx = tps->len, ny = pps->len;
  g_autofree Cell *cells = g_new0(Cell, nf * nx * ny);
  for (guint i = 0; i < nf * nx * ny; i++) cells[i].best = -1;
  for (guint i = 0; i < rows->len; i++) {
    const PtsimPlotLayout *l = &g_array_index(rows, PtsimPlotLayout, i);
    gint64 fv = *(const gint64 *)((const char *)l + facet_off);
    Cell *c = &cells[((guint)index_of(facets, fv) * ny + (guint)index_of(pps, l->pp)) * nx +
                     (guint)index_of(tps, l->tp)];
    c->facet = fv; c->tp = l->tp; c->pp = l->pp;
    c->layouts++;
    c->scheduled += l->status == 0;
    if (!usable(l)) continue;
    c->fitting++;
    if (c->best < 0 || per_gpu(l) > per_gpu(&g_array_index(rows, PtsimPlotLayout, c->best)))
      c->best = (int)i;
  }
  int overall = best_index(rows);
  const PtsimPlotLayout *top = &g_array_index(rows, PtsimPlotLayout, overall);
  double vmax = 0, vmin = G_MAXDOUBLE;
  for (guint i = 0; i < nf * nx * ny; i++)
    if (cells[i].best >= 0) {
      double v = per_gpu(&g_array_index(rows, PtsimPlotLayout, cells[i].best));
      vmax = MAX(vmax, v);
      vmin = MIN(vmin, v);
    }
  /* The colour scale spans the cells (in thousands), from a round number
   * below the slowest to the fastest, so neighbouring cells differ. */
  double lo_k = vmin < G_MAXDOUBLE ? floor(vmin * 0.95 / 500.0) * 0.5 : 0.0;
  double hi_k = vmax > 0 ? vmax / 1000.0 : 1.0;
  if (hi_k <= lo_k) lo_k = MAX(0.0, hi_k - 1.0);

  g_autofree char *scenario = scenario_text(top);
  g_autoptr(GString) tsv = g_string_new(NULL);
  g_string_append_printf(tsv, "# ptsim heatmap: tokens/s per GPU of the best fitting layout per "
                              "(%s, tp, pp)\n# scenario: %s\n", facet_name, scenario);
  append_source_comment(tsv, source, rows->len, dropped);
  g_string_append_printf(
      tsv,
      "# columns: %s (facet), tp, pp, x (tp's column index), y (pp's row index), layouts "
      "(in the cell), fitting (scheduled and within the memory threshold), state (1 best "
      "fitting layout shown, 0 no layout fits: OOM), tokens_per_s_per_gpu (NaN when OOM), "
      "step_s, memory_gib (analytical, peak stage), cp, mbs, vp, recompute, schedule (of the "
      "best; - when OOM), overall_best (1 for the cell holding the best layout)\n"
      "# %s\ttp\tpp\tx\ty\tlayouts\tfitting\tstate\ttokens_per_s_per_gpu\tstep_s\tmemory_gib"
      "\tcp\tmbs\tvp\trecompute\tschedule\toverall_best\n",
      facet_name, facet_name);
  guint ncells = 0;
  for (guint i = 0; i < nf * nx * ny; i++) {
    const Cell *c = &cells[i];
    if (c->layouts == 0) continue;
    ncells++;
    guint x = i % nx, y = (i / nx) % ny;
    g_string_append_printf(tsv, "%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT
                           "\t%u\t%u\t%d\t%d\t%d\t", c->facet, c->tp, c->pp, x, y, c->layouts,
                           c->fitting, c->best >= 0);
    if (c->best >= 0) {
      const PtsimPlotLayout *b = &g_array_index(rows, PtsimPlotLayout, c->best);
      ptsim_plot_num(tsv, "%.1f", per_gpu(b));
      g_string_append_c(tsv, '\t');
      ptsim_plot_num(tsv, "%.6f", b->step_s);
      g_string_append_c(tsv, '\t');
      ptsim_plot_num(tsv, "%.3f", b->total_bytes / GIB);
      g_string_append_printf(tsv, "\t%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT
                             "\t%s\t%s\t%d\n", b->cp, b->mbs, b->vp, b->recompute, b->schedule,
                             c->best == overall && usable(top));
    } else {
      g_string_append(tsv, "NaN\tNaN\tNaN\t-\t-\t-\t-\t-\t0\n");
    }
  }

  /* Panels side by side, up to 4 per row; about 1.1 cm per cell. */
  guint cols = MIN(nf, 4u), prow = (nf + cols - 1) / cols;
  double panel_w = MAX(4.2, 1.1 * nx + 1.2), panel_h = MAX(3.6, 0.8 * ny + 1.4);
  double width_cm = CLAMP(panel_w * cols + 5.1, 14.0, 30.0);
  double height_cm = CLAMP(panel_h * prow + 3.2, 8.0, 26.0);
  g_autofree char *fig_name = g_path_get_basename(files.figure);
  g_autofree char *data_name = g_path_get_basename(files.data);
  g_autoptr(GString) gp = g_string_new(NULL);
  ptsim_plot_script_header(gp, "heatmap: tokens/s per GPU over tp x pp, one panel per facet.",
                           &files);
  g_string_append_printf(gp, "# scenario: %s\n", scenario);
  ptsim_plot_style(gp, format, fig_name, width_cm, height_cm);
  g_string_append(gp, "data = ");
  ptsim_plot_quoted(gp, data_name);
  g_string_append_printf(gp, "\nnx = %u; ny = %u   # tp columns, pp rows\narray facet[%u] = [", nx,
                         ny, nf);
  for (guint f = 0; f < nf; f++)
    g_string_append_printf(gp, "%s%" G_GINT64_FORMAT, f ? ", " : "", g_array_index(facets, gint64, f));
  g_string_append(gp, "]\nlo_k = ");
  ptsim_plot_num(gp, "%.3f", lo_k);
  g_string_append(gp, "; hi_k = ");
  ptsim_plot_num(gp, "%.3f", hi_k);
  g_string_append(gp, "   # colour scale, thousands of tokens/s per GPU\n");
  g_autofree char *best_words = layout_words(top);
  g_autofree char *sub = g_strdup_printf(
      "cell: best fitting layout over mbs, recompute, schedule%s; OOM: nothing fits; blank: "
      "no valid layout",
      facet == PTSIM_PLOT_FACET_CP ? "" : ", cp");
  g_autofree char *third = g_strdup_printf("%s%s", usable(top) ? "outlined: the best, " : "",
                                           usable(top) ? best_words : "no layout fits in memory");
  g_autofree char *first = g_strdup_printf("tokens/s per GPU — %s", scenario);
  ptsim_plot_title_lines(gp, first, sub, third);
  double top_m = 1.0 - 3.1 / height_cm, bot_m = 1.2 / height_cm;
  double right_m = 1.0 - 3.4 / width_cm, left_m = 1.7 / width_cm;
  g_string_append(gp, "set multiplot layout ");
  g_string_append_printf(gp, "%u,%u margins ", prow, cols);
  ptsim_plot_num(gp, "%.3f", left_m);
  g_string_append(gp, ",");
  ptsim_plot_num(gp, "%.3f", right_m);
  g_string_append(gp, ",");
  ptsim_plot_num(gp, "%.3f", bot_m);
  g_string_append(gp, ",");
  ptsim_plot_num(gp, "%.3f", top_m);
  g_string_append(gp, " spacing ");
  ptsim_plot_num(gp, "%.3f", 0.9 / width_cm);
  g_string_append(gp, ",");
  ptsim_plot_num(gp, "%.3f", 1.6 / height_cm);
  g_string_append(gp, "\n");
  append_category_tics(gp, "x", tps);
  append_category_tics(gp, "y", pps);
  g_string_append(gp,
                  "set xrange [-0.5:nx-0.5]\nset yrange [-0.5:ny-0.5]\n"
                  "set grid noytics\nset border 0\nset xtics scale 0\nset ytics scale 0\n"
                  "set xlabel 'tp' offset 0,0.5\n"
                  "set cbrange [lo_k:hi_k]\nset cblabel 'k tokens/s per GPU'\n"
                  "set cbtics out nomirror scale 0.6\n"
                  "set colorbox user origin screen ");
  ptsim_plot_num(gp, "%.3f", right_m + 0.9 / width_cm);
  g_string_append(gp, ", screen ");
  ptsim_plot_num(gp, "%.3f", bot_m);
  g_string_append(gp, " size screen ");
  ptsim_plot_num(gp, "%.3f", 0.35 / width_cm);
  g_string_append(gp, ", screen ");
  ptsim_plot_num(gp, "%.3f", top_m - bot_m);
  g_string_append_printf(
      gp,
      "\n%s"
      "kfmt(v) = v >= 10000 ? sprintf('%%.0fk', v/1000) : (v >= 1000 ? sprintf('%%.1fk', v/1000) : sprintf('%%.0f', v))\n"
      "in(f) = (column(1) == facet[f])\n"
      "do for [f=1:|facet|] {\n"
      "  set title sprintf('", vmax > 0 ? "" : "unset colorbox   # nothing fits: no scale to show\n");
  g_string_append_printf(gp, "%s %%d', facet[f]) offset 0,-0.6\n", facet_name);
  g_string_append(
      gp,
      "  if (f % 4 == 1) { set ylabel 'pp' } else { unset ylabel }\n"
      "  plot data using (in(f) && $8==1 ? $4 : NaN):5:($4-0.5):($4+0.5):($5-0.5):($5+0.5):($9/1000) \\\n"
      "         with boxxyerror fs solid 1.0 border lc rgb '#ffffff' lc palette, \\\n"
      "       data using (in(f) && $8==0 ? $4 : NaN):5:($4-0.5):($4+0.5):($5-0.5):($5+0.5) \\\n"
      "         with boxxyerror fs pattern 2 border lc rgb '#ffffff' lc rgb c_oom, \\\n"
      "       data using (in(f) && $17==1 ? $4 : NaN):5:($4-0.47):($4+0.47):($5-0.47):($5+0.47) \\\n"
      "         with boxxyerror fs empty border lc rgb c_line lw 2.5 lc rgb c_line, \\\n"
      "       data using (in(f) && $8==1 ? $4 : NaN):5:(kfmt($9)):(($9/1000-lo_k) < 0.45*(hi_k-lo_k) ? 0xffffff : 0x000000) \\\n"
      "         with labels tc rgb variable font ',8', \\\n"
      "       data using (in(f) && $8==0 ? $4 : NaN):5:('OOM') with labels tc rgb '#404040' font ',8'\n"
      "  unset colorbox   # one colour scale for every panel\n"
      "}\n"
      "unset multiplot\n");
  (void)ncells;
  return ptsim_plot_render(&files, tsv, gp, out, error);
}

/* ---- pareto ---- */

static const GArray *sort_rows;
static gint cmp_memory(gconstpointer a, gconstpointer b) {
  const PtsimPlotLayout *x = &g_array_index(sort_rows, PtsimPlotLayout, *(const guint *)a);
  const PtsimPlotLayout *y = &g_array_index(sort_rows, PtsimPlotLayout, *(const guint *)b);
  if (x->total_bytes != y->total_bytes) return x->total_bytes < y->total_bytes ? -1 : 1;
  if (per_gpu(x) != per_gpu(y)) return per_gpu(x) > per_gpu(y) ? -1 : 1;
  return (x->rank > y->rank) - (x->rank < y->rank);
}

static void append_layout_row(GString *tsv, const PtsimPlotLayout *l, int front) {
  g_string_append_printf(tsv, "%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT
                         "\t%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT
                         "\t%" G_GINT64_FORMAT "\t%s\t%s\t",
                         l->rank, l->tp, l->pp, l->cp, l->dp, l->vp, l->mbs, l->recompute,
                         l->schedule);
  ptsim_plot_num(tsv, "%.4f", l->total_bytes / GIB);
  g_string_append_c(tsv, '\t');
  ptsim_plot_num(tsv, "%.1f", per_gpu(l));
  g_string_append_printf(tsv, "\t%d\t%d\n", l->fits, front);
}

gboolean ptsim_plot_pareto(const char *figure_path, const GArray *layouts, const char *source,
                           PtsimPlotFiles *out, GError **error) {
  g_return_val_if_fail(figure_path && layouts, FALSE);
  PtsimPlotFormat format;
  g_auto(PtsimPlotFiles) files = {NULL, NULL, NULL};
  if (!ptsim_plot_files_for(figure_path, &format, &files, error)) return FALSE;
  guint dropped = 0;
  g_autoptr(GArray) rows = one_scenario(layouts, "pareto", &dropped, error);
  if (!rows) return FALSE;
  int b = best_index(rows);
  const PtsimPlotLayout *top = &g_array_index(rows, PtsimPlotLayout, b);
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
    max_tps = MAX(max_tps, per_gpu(l));
  }
  sort_rows = rows;
  g_array_sort(order, cmp_memory);
  g_autofree int *front = g_new0(int, rows->len);
  double best_so_far = -1;
  guint nfront = 0, nfit = 0;
  for (guint k = 0; k < order->len; k++) {
    guint i = g_array_index(order, guint, k);
    const PtsimPlotLayout *l = &g_array_index(rows, PtsimPlotLayout, i);
    if (!usable(l)) continue;
    nfit++;
    if (per_gpu(l) > best_so_far) {
      front[i] = 1;
      nfront++;
      best_so_far = per_gpu(l);
    }
  }
  g_autofree char *scenario = scenario_text(top);
  g_autoptr(GString) tsv = g_string_new(NULL);
  g_string_append_printf(tsv, "# ptsim pareto: analytical memory per GPU against tokens/s per GPU\n"
                              "# scenario: %s\n", scenario);
  append_source_comment(tsv, source, rows->len, dropped);
  g_string_append(tsv, "# capacity_gib ");
  ptsim_plot_num(tsv, "%.4f", capacity_gib);
  g_string_append_printf(
      tsv,
      "\n# block 0: every scheduled layout (%u), by memory; block 1 (after two blank lines): "
      "the Pareto front of the fitting layouts (%u), by memory\n"
      "# columns: rank (sweep rank), tp, pp, cp, dp, vp, mbs, recompute, schedule, "
      "memory_gib (analytical, peak stage, GiB), tokens_per_s_per_gpu, fits (0/1), "
      "front (1 on the Pareto front)\n"
      "# rank\ttp\tpp\tcp\tdp\tvp\tmbs\trecompute\tschedule\tmemory_gib\ttokens_per_s_per_gpu"
      "\tfits\tfront\n",
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

  g_autofree char *fig_name = g_path_get_basename(files.figure);
  g_autofree char *data_name = g_path_get_basename(files.data);
  g_autoptr(GString) gp = g_string_new(NULL);
  ptsim_plot_script_header(gp, "pareto: memory per GPU against throughput, every layout.",
                           &files);
  g_string_append_printf(gp, "# scenario: %s\n", scenario);
  ptsim_plot_style(gp, format, fig_name, 18.0, 10.0);
  g_string_append(gp, "data = ");
  ptsim_plot_quoted(gp, data_name);
  g_string_append(gp, "\ncapacity_gib = ");
  ptsim_plot_num(gp, "%.4f", capacity_gib);
  g_string_append(gp, "\nbest_mem = ");
  ptsim_plot_num(gp, "%.4f", top->total_bytes / GIB);
  g_string_append(gp, "; best_tps = ");
  ptsim_plot_num(gp, "%.1f", per_gpu(top));
  g_autofree char *words = layout_words(top);
  g_string_append(gp, "\nbest_text = ");
  g_autofree char *bt = g_strdup_printf("best: %s", words);
  ptsim_plot_quoted(gp, usable(top) ? bt : "nothing fits");
  g_string_append_c(gp, '\n');
  /* Layouts far past the capacity only squeeze the interesting part: the
   * axis stops at twice the capacity and the subtitle counts the rest. */
  double xmax = MAX(max_mem, capacity_gib) * 1.04;
  guint beyond = 0;
  if (capacity_gib > 0 && xmax > 2.0 * capacity_gib) {
    xmax = 2.0 * capacity_gib;
    for (guint k = 0; k < order->len; k++)
      beyond += g_array_index(rows, PtsimPlotLayout, g_array_index(order, guint, k)).total_bytes /
                    GIB > xmax;
  }
  g_autofree char *beyond_text =
      beyond ? g_strdup_printf(", %u past %.0f GiB off the axis", beyond, xmax) : g_strdup("");
  g_autofree char *sub = g_strdup_printf("%u layouts, %u fit%s; analytical memory, peak stage",
                                         order->len, nfit, beyond_text);
  ptsim_plot_title_lines(gp, scenario, sub, NULL);
  g_string_append(gp, "set xrange [0:");
  ptsim_plot_num(gp, "%.2f", xmax);
  g_string_append(gp, "]\nset yrange [0:");
  ptsim_plot_num(gp, "%.1f", max_tps * 1.12);
  g_string_append(
      gp,
      "]\nset xlabel 'memory per GPU, analytical (GiB)'\n"
      "set ylabel 'tokens/s per GPU'\n"
      "set grid xtics\n"
      "set key inside left bottom vertical reverse Left samplen 1.2 font ',8'\n"
      "set style textbox opaque noborder margins 1,1\n"
      "set arrow 1 from capacity_gib, graph 0 to capacity_gib, graph 1 nohead lw 1.2 lc rgb c_line\n"
      "set label 1 sprintf('capacity %.1f GiB', capacity_gib) at capacity_gib, graph 0.04 left "
      "offset 0.5,0 font ',8'\n");
  if (usable(top))
    g_string_append(
        gp,
        "set label 2 best_text at best_mem, best_tps left offset 1.2,0.6 font ',8' front boxed\n");
  g_string_append(
      gp,
      "plot data index 0 using ($12==0 ? $10 : NaN):11 with points pt 8 ps 0.6 lc rgb '#808080' "
      "title 'does not fit', \\\n"
      "     data index 0 using ($12==1 ? $10 : NaN):11 with points pt 7 ps 0.45 lc rgb c_series[2] "
      "title 'fits', \\\n"
      "     data index 1 using 10:11 with linespoints lw 1.5 pt 7 ps 0.55 lc rgb c_line "
      "title 'Pareto front (fitting layouts)', \\\n"
      "     '+' using (best_mem):(best_tps) every ::0::0 with points pt 6 ps 1.6 lw 1.5 "
      "lc rgb c_line notitle\n");
  return ptsim_plot_render(&files, tsv, gp, out, error);
}

/* ---- scaling ---- */

gboolean ptsim_plot_scaling(const char *figure_path, const GArray *layouts, PtsimPlotScalingY y,
                            const char *source, PtsimPlotFiles *out, GError **error) {
  g_return_val_if_fail(figure_path && layouts, FALSE);
  PtsimPlotFormat format;
  g_auto(PtsimPlotFiles) files = {NULL, NULL, NULL};
  if (!ptsim_plot_files_for(figure_path, &format, &files, error)) return FALSE;
  if (best_index(layouts) < 0) {
    g_set_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_DATA,
                "scaling: none of the %u layouts could be scheduled; nothing to plot",
                layouts->len);
    return FALSE;
  }
  /* Series: distinct (model, hw, seq, gbs) in order of first appearance. */
  g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GArray) series_of = g_array_new(FALSE, FALSE, sizeof(int));
  for (guint i = 0; i < layouts->len; i++) {
    const PtsimPlotLayout *l = &g_array_index(layouts, PtsimPlotLayout, i);
    g_autofree char *key = g_strdup_printf("%s\t%s\t%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT,
                                           l->model, l->hw, l->seq, l->gbs);
    int s = -1;
    for (guint k = 0; k < keys->len && s < 0; k++)
      if (strcmp(g_ptr_array_index(keys, k), key) == 0) s = (int)k;
    if (s < 0) {
      s = (int)keys->len;
      g_ptr_array_add(keys, g_steal_pointer(&key));
    }
    g_array_append_val(series_of, s);
  }
  /* What differs between series names them. */
  gboolean differ[4] = {FALSE, FALSE, FALSE, FALSE};
  g_auto(GStrv) k0 = g_strsplit(g_ptr_array_index(keys, 0), "\t", 4);
  for (guint k = 1; k < keys->len; k++) {
    g_auto(GStrv) kk = g_strsplit(g_ptr_array_index(keys, k), "\t", 4);
    for (int f = 0; f < 4; f++) differ[f] |= strcmp(k0[f], kk[f]) != 0;
  }
  if (!differ[0] && !differ[2] && !differ[3]) differ[1] = TRUE; /* one line: name it by hw */
  g_autoptr(GArray) all_gpus = distinct(layouts, G_STRUCT_OFFSET(PtsimPlotLayout, gpus));
  const char *ylabel = y == PTSIM_PLOT_Y_STEP ? "step time (s)" : "tokens/s per GPU";
  g_autoptr(GString) tsv = g_string_new(NULL);
  g_string_append_printf(
      tsv,
      "# ptsim scaling: the best fitting layout per GPU count, one block per series\n"
      "# from %s (%u layouts)\n"
      "# columns: series (0-based block), name, gpus, fits (0: no layout fits at this count), "
      "tokens_per_s_per_gpu, step_s, tp, pp, cp, dp, vp, mbs, recompute, schedule (of the "
      "best; NaN/- when nothing fits)\n",
      source ? source : "an in-process sweep", layouts->len);
  guint nseries = keys->len, rows_written = 0;
  double ymin = G_MAXDOUBLE, ymax = 0;
  g_autoptr(GString) names = g_string_new(NULL);
  for (guint s = 0; s < nseries; s++) {
    g_auto(GStrv) kk = g_strsplit(g_ptr_array_index(keys, s), "\t", 4);
    g_autoptr(GString) name = g_string_new(NULL);
    static const char *const field[] = {"", "", "seq ", "gbs "};
    for (int f = 0; f < 4; f++)
      if (differ[f]) g_string_append_printf(name, "%s%s%s", name->len ? ", " : "", field[f], kk[f]);
    g_string_append_printf(names, "%s'%s'", s ? ", " : "", name->str);
    if (s) g_string_append(tsv, "\n\n");
    g_string_append_printf(tsv, "# block %u: %s\n# series\tname\tgpus\tfits\ttokens_per_s_per_gpu"
                                "\tstep_s\ttp\tpp\tcp\tdp\tvp\tmbs\trecompute\tschedule\n",
                           s, name->str);
    for (guint g = 0; g < all_gpus->len; g++) {
      gint64 n = g_array_index(all_gpus, gint64, g);
      int best = -1, present = 0;
      for (guint i = 0; i < layouts->len; i++) {
        const PtsimPlotLayout *l = &g_array_index(layouts, PtsimPlotLayout, i);
        if (g_array_index(series_of, int, i) != (int)s || l->gpus != n) continue;
        present = 1;
        if (usable(l) &&
            (best < 0 || per_gpu(l) > per_gpu(&g_array_index(layouts, PtsimPlotLayout, best))))
          best = (int)i;
      }
      if (!present) continue;
      rows_written++;
      g_string_append_printf(tsv, "%u\t%s\t%" G_GINT64_FORMAT "\t%d\t", s, name->str, n, best >= 0);
      if (best < 0) {
        g_string_append(tsv, "NaN\tNaN\t-\t-\t-\t-\t-\t-\t-\t-\n");
        continue;
      }
      const PtsimPlotLayout *l = &g_array_index(layouts, PtsimPlotLayout, best);
      ptsim_plot_num(tsv, "%.1f", per_gpu(l));
      g_string_append_c(tsv, '\t');
      ptsim_plot_num(tsv, "%.6f", l->step_s);
      g_string_append_printf(tsv, "\t%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT
                             "\t%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT
                             "\t%s\t%s\n", l->tp, l->pp, l->cp, l->dp, l->vp, l->mbs,
                             l->recompute, l->schedule);
      double v = y == PTSIM_PLOT_Y_STEP ? l->step_s : per_gpu(l);
      ymin = MIN(ymin, v);
      ymax = MAX(ymax, v);
    }
  }
  (void)rows_written;
  g_autofree char *fig_name = g_path_get_basename(files.figure);
  g_autofree char *data_name = g_path_get_basename(files.data);
  g_autoptr(GString) gp = g_string_new(NULL);
  ptsim_plot_script_header(gp, "scaling: the best fitting layout per GPU count, per series.",
                           &files);
  ptsim_plot_style(gp, format, fig_name, 16.0, 10.0);
  g_string_append(gp, "data = ");
  ptsim_plot_quoted(gp, data_name);
  g_string_append_printf(gp, "\narray name[%u] = [%s]\n", nseries, names->str);
  g_string_append_printf(gp, "ycol = %d   # 5: tokens/s per GPU, 6: step time (s)\n",
                         y == PTSIM_PLOT_Y_STEP ? 6 : 5);
  {
    const PtsimPlotLayout *l0 = &g_array_index(layouts, PtsimPlotLayout, 0);
    GString *first = g_string_new(NULL);
    g_string_append_printf(first, "%s vs GPU count", ylabel);
    if (!differ[0]) g_string_append_printf(first, " — %s", l0->model);
    if (!differ[2]) g_string_append_printf(first, ", seq %" G_GINT64_FORMAT, l0->seq);
    if (!differ[3]) g_string_append_printf(first, ", gbs %" G_GINT64_FORMAT, l0->gbs);
    g_autofree char *first_s = g_string_free(first, FALSE);
    ptsim_plot_title_lines(gp, first_s,
                           "each point: the best layout that fits (sweep ranking); OOM: none fits",
                           NULL);
  }
  g_string_append(gp, "set logscale x 2\nset xtics (");
  for (guint g = 0; g < all_gpus->len; g++)
    g_string_append_printf(gp, "%s'%" G_GINT64_FORMAT "' %" G_GINT64_FORMAT, g ? ", " : "",
                           g_array_index(all_gpus, gint64, g), g_array_index(all_gpus, gint64, g));
  gint64 gmin = g_array_index(all_gpus, gint64, 0),
         gmax = g_array_index(all_gpus, gint64, all_gpus->len - 1);
  g_string_append_printf(gp, ")\nset xrange [%g:%g]\n", gmin / 1.4, gmax * 1.4);
  if (ymax <= 0) ymax = 1.0;
  if (y == PTSIM_PLOT_Y_STEP) {
    g_string_append(gp, "set logscale y 10\nset yrange [");
    ptsim_plot_num(gp, "%.6g", (ymin < G_MAXDOUBLE ? ymin : 1.0) / 1.6);
    g_string_append(gp, ":");
    ptsim_plot_num(gp, "%.6g", ymax * 1.6);
    g_string_append(gp, "]\nset format y '%g'\nset ytics (");
    /* 1-2-5 tics: a log axis over less than two decades otherwise shows one */
    double lo = (ymin < G_MAXDOUBLE ? ymin : 1.0) / 1.6, hi = ymax * 1.6;
    int first = 1;
    for (double dec = pow(10.0, floor(log10(lo))); dec <= hi; dec *= 10.0)
      for (int m = 0; m < 3; m++) {
        double v = dec * (m == 0 ? 1.0 : m == 1 ? 2.0 : 5.0);
        if (v < lo || v > hi) continue;
        if (!first) g_string_append(gp, ", ");
        first = 0;
        ptsim_plot_num(gp, "%g", v);
      }
    g_string_append(gp, ")\noom_y = ");
    ptsim_plot_num(gp, "%.6g", (ymin < G_MAXDOUBLE ? ymin : 1.0) / 1.4);
  } else {
    g_string_append(gp, "set yrange [0:");
    ptsim_plot_num(gp, "%.6g", ymax * 1.15);
    g_string_append(gp, "]\noom_y = ");
    ptsim_plot_num(gp, "%.6g", ymax * 0.03);
  }
  g_string_append_printf(
      gp,
      "   # where OOM marks sit\n"
      "set xlabel 'GPUs'\nset ylabel '%s'\n"
      "set key %s right reverse Left samplen 2.5 font ',8'\n"
      "plot for [s=0:%u] data index s using 3:($4==1 ? column(ycol) : NaN) with linespoints \\\n"
      "       lw 1.5 lc rgb c_series[s%%6+1] pt pt_series[s%%6+1] dt dt_series[s%%6+1] ps 0.8 "
      "title name[s+1], \\\n"
      "     for [s=0:%u] data index s using 3:($4==0 ? oom_y : NaN):('OOM') with labels "
      "font ',7' tc rgb c_series[s%%6+1] notitle\n",
      ylabel, y == PTSIM_PLOT_Y_STEP ? "top" : "bottom", nseries - 1, nseries - 1);
  return ptsim_plot_render(&files, tsv, gp, out, error);
}
