/* plot_heatmap.c — tokens/s per GPU over tp x pp, one panel per cp (or
 * mbs), each cell the best fitting layout there; see plot.h
 * (ptsim_plot_heatmap).
 *
 * Numbers and colour bar share one unit, tokens/s per GPU, and the cell
 * labels carry as many decimals as it takes for the best cell to read
 * differently from the runner-up (whole numbers almost always suffice);
 * "1.2k" on four cells cannot say which one is best.  Panels wrap so that
 * a cell stays wide enough for its number at the printed size: four to a
 * row on a page, two in a column. */
#include <math.h>
#include <string.h>
#include "plot_sweep_int.h"

#define GIB PTSIM_PLOT_GIB

typedef struct {
  gint64 facet, tp, pp;
  int layouts, scheduled, fitting;
  int best; /* index into the scenario's layouts, -1: none fits */
} Cell;

/* `set xtics ('1' 0, '2' 1, ...)` for categorical axes. */
static void append_category_tics(GString *gp, const char *axis, const GArray *v) {
  g_string_append_printf(gp, "set %stics (", axis);
  for (guint k = 0; k < v->len; k++)
    g_string_append_printf(gp, "%s'%" G_GINT64_FORMAT "' %u", k ? ", " : "",
                           g_array_index(v, gint64, k), k);
  g_string_append(gp, ")\n");
}

/* Decimals that make the best value (and every other cell) print
 * differently from the runner-up, at most 2. */
static int label_decimals(const double *values, guint n, double best) {
  for (int d = 0; d < 2; d++) {
    char a[64], b[64];
    g_ascii_formatd(a, sizeof a, d == 0 ? "%.0f" : "%.1f", best);
    gboolean tie = FALSE;
    for (guint i = 0; i < n && !tie; i++) {
      if (values[i] == best) continue;
      g_ascii_formatd(b, sizeof b, d == 0 ? "%.0f" : "%.1f", values[i]);
      tie = strcmp(a, b) == 0;
    }
    if (!tie) return d;
  }
  return 2;
}

gboolean ptsim_plot_heatmap(const char *figure_path, const GArray *rows, PtsimPlotFacet facet,
                            const char *source, const PtsimPlotSize *size, PtsimPlotFiles *out,
                            GError **error) {
  g_return_val_if_fail(figure_path && rows, FALSE);
  g_auto(PtsimPlotFiles) files = {NULL, NULL, NULL};
  PtsimPlotCanvas c;
  if (!ptsim_plot_begin(figure_path, size, &files, &c, error)) return FALSE;
  if (!ptsim_plot_check_one_scenario(rows, "heatmap", error)) return FALSE;
  size_t facet_off = facet == PTSIM_PLOT_FACET_CP ? G_STRUCT_OFFSET(PtsimPlotLayout, cp)
                                                  : G_STRUCT_OFFSET(PtsimPlotLayout, mbs);
  const char *facet_name = facet == PTSIM_PLOT_FACET_CP ? "cp" : "mbs";
  g_autoptr(GArray) all_facets = ptsim_plot_distinct(rows, facet_off);
  /* A panel in which no layout runs is left out (named in the title): a
   * grid of OOM cells says nothing the title cannot. */
  g_autoptr(GArray) facets = g_array_new(FALSE, FALSE, sizeof(gint64));
  g_autoptr(GString) dropped = g_string_new(NULL);
  for (guint f = 0; f < all_facets->len; f++) {
    gint64 fv = g_array_index(all_facets, gint64, f);
    gboolean any = FALSE;
    for (guint i = 0; i < rows->len && !any; i++) {
      const PtsimPlotLayout *l = &g_array_index(rows, PtsimPlotLayout, i);
      any = *(const gint64 *)((const char *)l + facet_off) == fv && ptsim_plot_usable(l);
    }
    if (any)
      g_array_append_val(facets, fv);
    else
      g_string_append_printf(dropped, "%s%" G_GINT64_FORMAT, dropped->len ? ", " : "", fv);
  }
  if (facets->len == 0) /* nothing runs anywhere: every panel, all OOM */
    g_array_append_vals(facets, all_facets->data, all_facets->len);
  g_autoptr(GArray) tps = ptsim_plot_distinct(rows, G_STRUCT_OFFSET(PtsimPlotLayout, tp));
  g_autoptr(GArray) pps = ptsim_plot_distinct(rows, G_STRUCT_OFFSET(PtsimPlotLayout, pp));
  guint nf = facets->len, nx = tps->len, ny = pps->len;
  g_autofree Cell *cells = g_new0(Cell, nf * nx * ny);
  for (guint i = 0; i < nf * nx * ny; i++) cells[i].best = -1;
  for (guint i = 0; i < rows->len; i++) {
    const PtsimPlotLayout *l = &g_array_index(rows, PtsimPlotLayout, i);
    gint64 fv = *(const gint64 *)((const char *)l + facet_off);
    if (ptsim_plot_index_of(facets, fv) < 0) continue;
    Cell *cl = &cells[((guint)ptsim_plot_index_of(facets, fv) * ny +
                       (guint)ptsim_plot_index_of(pps, l->pp)) *
                          nx +
                      (guint)ptsim_plot_index_of(tps, l->tp)];
    cl->facet = fv;
    cl->tp = l->tp;
    cl->pp = l->pp;
    cl->layouts++;
    cl->scheduled += l->status == 0;
    if (!ptsim_plot_usable(l)) continue;
    cl->fitting++;
    if (cl->best < 0 ||
        ptsim_plot_per_gpu(l) > ptsim_plot_per_gpu(&g_array_index(rows, PtsimPlotLayout, cl->best)))
      cl->best = (int)i;
  }
  int overall = ptsim_plot_best_index(rows);
  const PtsimPlotLayout *top = &g_array_index(rows, PtsimPlotLayout, overall);
  gboolean any_fits = ptsim_plot_usable(top);
  double vmax = 0, vmin = G_MAXDOUBLE;
  g_autofree double *values = g_new(double, nf *nx *ny);
  guint nvalues = 0;
  for (guint i = 0; i < nf * nx * ny; i++)
    if (cells[i].best >= 0) {
      double v = ptsim_plot_per_gpu(&g_array_index(rows, PtsimPlotLayout, cells[i].best));
      values[nvalues++] = v;
      vmax = MAX(vmax, v);
      vmin = MIN(vmin, v);
    }
  /* The colour scale spans the cells, from a round number below the
   * slowest to the fastest, so neighbouring cells differ. */
  double cb_step = ptsim_plot_nice_step(vmin < G_MAXDOUBLE ? vmin : 0, vmax, 4);
  double lo = vmin < G_MAXDOUBLE ? floor(vmin * 0.97 / cb_step) * cb_step : 0.0;
  double hi = vmax > 0 ? vmax : 1.0;
  if (hi <= lo) lo = MAX(0.0, hi - cb_step);
  cb_step = ptsim_plot_nice_step(lo, hi, 4);
  int decimals = any_fits ? label_decimals(values, nvalues, ptsim_plot_per_gpu(top)) : 0;

  g_autofree char *scenario = ptsim_plot_scenario_text(top);
  g_autoptr(GString) tsv = g_string_new(NULL);
  g_string_append_printf(tsv,
                         "# ptsim heatmap: tokens/s per GPU of the best fitting layout per "
                         "(%s, tp, pp)\n# scenario: %s\n",
                         facet_name, scenario);
  ptsim_plot_source_comment(tsv, source, rows->len);
  g_string_append_printf(
      tsv,
      "# label_decimals %d\n"
      "# columns: %s (facet), tp, pp, x (tp's column index), y (pp's row index), layouts "
      "(in the cell), fitting (scheduled and within the memory threshold), state (1 best "
      "fitting layout shown, 0 no layout fits: OOM), tokens_per_s_per_gpu (NaN when OOM), "
      "step_s, memory_gib (analytical, peak stage), cp, mbs, vp, recompute, schedule (of the "
      "best; - when OOM), overall_best (1 for the cell holding the best layout)\n"
      "# %s\ttp\tpp\tx\ty\tlayouts\tfitting\tstate\ttokens_per_s_per_gpu\tstep_s\tmemory_gib"
      "\tcp\tmbs\tvp\trecompute\tschedule\toverall_best\n",
      decimals, facet_name, facet_name);
  for (guint i = 0; i < nf * nx * ny; i++) {
    const Cell *cl = &cells[i];
    if (cl->layouts == 0) continue;
    guint x = i % nx, y = (i / nx) % ny;
    g_string_append_printf(tsv,
                           "%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT
                           "\t%u\t%u\t%d\t%d\t%d\t",
                           cl->facet, cl->tp, cl->pp, x, y, cl->layouts, cl->fitting,
                           cl->best >= 0);
    if (cl->best < 0) {
      g_string_append(tsv, "NaN\tNaN\tNaN\t-\t-\t-\t-\t-\t0\n");
      continue;
    }
    const PtsimPlotLayout *b = &g_array_index(rows, PtsimPlotLayout, cl->best);
    ptsim_plot_num(tsv, "%.2f", ptsim_plot_per_gpu(b));
    g_string_append_c(tsv, '\t');
    ptsim_plot_num(tsv, "%.6f", b->step_s);
    g_string_append_c(tsv, '\t');
    ptsim_plot_num(tsv, "%.3f", b->total_bytes / GIB);
    g_string_append_printf(tsv,
                           "\t%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT
                           "\t%s\t%s\t%d\n",
                           b->cp, b->mbs, b->vp, b->recompute, b->schedule,
                           cl->best == overall && any_fits);
  }

  /* Panels placed by hand: as many to a row as keep a cell wider than its
   * number (digits at the tiny font, 30% room); the y labels take LEFT_CM;
   * the colour bar lies under the panels (beside them it would take 3 cm
   * of a column's 8.9).  Cells are 0.8 as high as wide. */
  const double left_cm = 1.3, right_cm = 0.3, gap_cm = 0.3;
  int digits = (int)floor(log10(MAX(vmax, 1.0))) + 1 + (decimals ? decimals + 1 : 0);
  double need_cm = MAX(0.55, 1.3 * ptsim_plot_text_cm(c.tiny_pt, digits));
  double avail_cm = c.width_cm - left_cm - right_cm;
  guint cols = MIN(nf, 4u);
  while (cols > 1 && (avail_cm - (cols - 1) * gap_cm) / (cols * nx) < need_cm) cols--;
  double cell_cm = MIN(1.0, (avail_cm - (cols - 1) * gap_cm) / (cols * nx));
  guint prow = (nf + cols - 1) / cols;
  double panel_w = cell_cm * nx, panel_h = 0.8 * cell_cm * ny;
  /* a row: its panel title, the cells, tick labels and the 'tp' label */
  double row_cm = ptsim_plot_line_cm(c.small_pt) + panel_h + ptsim_plot_axis_cm(&c);
  int title_lines = c.narrow ? 4 : 2;
  g_autofree char *best_words = ptsim_plot_layout_words(top);
  /* the colour bar says tokens/s per GPU and the cells say OOM: the title
   * need not */
  g_autofree char *none = dropped->len && any_fits
                              ? g_strdup_printf("; %s %s: no layout runs (not drawn)", facet_name,
                                                dropped->str)
                              : g_strdup("");
  g_autofree char *second = g_strdup_printf(
      "each cell: the best layout that runs (the allocator emulation's verdict)%s; %s%s%s",
      facet == PTSIM_PLOT_FACET_CP ? "" : " (any cp)",
      any_fits ? "outlined: the best, " : "no layout runs", any_fits ? best_words : "", none);
  const char *first = scenario;
  const char *title[] = {first, second, NULL};
  double title_cm = ptsim_plot_title_cm(&c, title_lines, title);
  double bar_cm = 0.3 + 0.25 + 2.2 * ptsim_plot_line_cm(c.small_pt) + 0.3;
  ptsim_plot_canvas_height(&c, title_cm + row_cm * prow + bar_cm);
  g_autoptr(GString)
      gp = ptsim_plot_script_begin(&files, &c,
                                   "heatmap: tokens/s per GPU over tp x pp, one panel per facet.",
                                   NULL, scenario);
  g_string_append_printf(gp, "\nnx = %u; ny = %u   # tp columns, pp rows\narray facet[%u] = [", nx,
                         ny, nf);
  for (guint f = 0; f < nf; f++)
    g_string_append_printf(gp, "%s%" G_GINT64_FORMAT, f ? ", " : "",
                           g_array_index(facets, gint64, f));
  g_string_append(gp, "]\n# colour scale, tokens/s per GPU\ncb_lo = ");
  ptsim_plot_num(gp, "%.6g", lo);
  g_string_append(gp, "\ncb_hi = ");
  ptsim_plot_num(gp, "%.6g", hi);
  g_string_append(gp, "\ncb_step = ");
  ptsim_plot_num(gp, "%.6g", cb_step);
  g_string_append_printf(gp,
                         "\n"
                         "label_format = '%%.%df'   # cell numbers, tokens/s per GPU\n",
                         decimals);
  g_string_append_printf(gp, "# the panels' grid, in cm: %u to a row\ncols = %u\n", cols, cols);
  const char *geometry[] = {"left_cm", "panel_w",      "panel_h", "gap_cm",
                            "row_cm",  "title_row_cm", "bar_y"};
  const double sizes[] = {left_cm,     panel_w, panel_h,
                          gap_cm,      row_cm,  ptsim_plot_line_cm(c.small_pt),
                          bar_cm - 0.6};
  for (size_t i = 0; i < G_N_ELEMENTS(geometry); i++) {
    g_string_append_printf(gp, "%s%s = ", i ? "; " : "", geometry[i]);
    ptsim_plot_num(gp, "%.3f", sizes[i]);
  }
  g_string_append_c(gp, '\n');
  ptsim_plot_title(gp, &c, title_lines, title);
  append_category_tics(gp, "x", tps);
  g_string_append(gp, "ytics_cmd = \"");
  append_category_tics(gp, "y", pps);
  g_string_truncate(gp, gp->len - 1); /* the newline */
  g_string_append(gp, " nomirror scale 0");
  g_string_append(gp, "\"   # only the first panel of a row labels pp\n");
  g_string_append_printf(
      gp,
      "set xrange [-0.5:nx-0.5]\nset yrange [-0.5:ny-0.5]\n"
      "set grid noytics\nset border 0\nset xtics scale 0\nset ytics scale 0\n"
      "set xlabel 'tp' offset 0,0.6\n"
      "set cbrange [cb_lo:cb_hi]\nset cblabel 'tokens/s per GPU' offset 0,0.5 font f_small\n"
      "set cbtics cb_lo, cb_step out nomirror scale 0.6 font f_small offset 0,0.3\n"
      "# the colour bar: under the panels, as wide as a row of them (8 cm at most)\n"
      "cb_w = cols*panel_w + (cols-1)*gap_cm - 0.5; cb_w = cb_w > 8 ? 8 : cb_w\n"
      "set colorbox horizontal user origin screen left_cm/width_cm, screen bar_y/height_cm "
      "size screen cb_w/width_cm, screen 0.3/height_cm\n"
      "%s"
      "in(f) = (column(1) == facet[f])\n"
      "set multiplot\n"
      "do for [f=1:|facet|] {\n"
      "  col = (f-1) %% cols; row = (f-1) / cols\n"
      "  x0 = left_cm + col*(panel_w+gap_cm); y1 = height_cm - title_cm - row*row_cm - title_row_cm\n"
      "  set lmargin at screen x0/width_cm; set rmargin at screen (x0+panel_w)/width_cm\n"
      "  set tmargin at screen y1/height_cm; set bmargin at screen (y1-panel_h)/height_cm\n"
      "  set title sprintf('%s %%d', facet[f]) offset 0,-0.9 font f_small\n"
      "  if (col == 0) { set ylabel 'pp' offset 0.5,0; @ytics_cmd } "
      "else { unset ylabel; unset ytics }\n"
      "  plot data using (in(f) && $8==1 ? $4 : NaN):5:($4-0.5):($4+0.5):($5-0.5):($5+0.5):9 \\\n"
      "         with boxxyerror fs solid 1.0 border lc rgb '#ffffff' lc palette, \\\n"
      "       data using (in(f) && $8==0 ? $4 : NaN):5:($4-0.5):($4+0.5):($5-0.5):($5+0.5) \\\n"
      "         with boxxyerror fs pattern 2 border lc rgb '#ffffff' lc rgb c_oom, \\\n"
      "       data using (in(f) && $17==1 ? $4 : NaN):5:($4-0.47):($4+0.47):($5-0.46):($5+0.46) \\\n"
      "         with boxxyerror fs empty border lc rgb c_line lw 2 lc rgb c_line, \\\n"
      "       data using (in(f) && $8==1 ? $4 : NaN):5:(sprintf(label_format, $9)):"
      "(($9-cb_lo) < 0.45*(cb_hi-cb_lo) ? 0xffffff : 0x000000) \\\n"
      "         with labels tc rgb variable font f_tiny, \\\n"
      "       data using (in(f) && $8==0 ? $4 : NaN):5:('OOM') with labels tc rgb c_note "
      "font f_tiny\n"
      "  unset colorbox   # one colour scale for every panel\n"
      "}\n"
      "unset multiplot\n",
      vmax > 0 ? "" : "unset colorbox   # nothing fits: no scale to show\n", facet_name);
  return ptsim_plot_render(&files, tsv, gp, out, error);
}
