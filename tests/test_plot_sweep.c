/* test_plot_sweep.c — the figures of a sweep (plots/plot_sweep.c,
 * plot_heatmap.c, plot_pareto.c) and of a validation (plot_validation.c):
 * the scenario a figure draws, the cells, points, front, lines and labels
 * behind each, checked in the .tsv and .gp against the layouts given,
 * never in pixels.  Layouts come from a small real sweep or are written by
 * hand where a case (a tie, an inferred threshold) needs exact values. */
#include <glib.h>
#include <math.h>
#include <string.h>
#include "plot_fixture.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* A layout of llama3-8b on `gpus` x `hw` that ran, with the given numbers. */
static PtsimPlotLayout layout(const char *hw, gint64 gpus, gint64 tp, gint64 pp, gint64 cp,
                              double tokens_per_s_per_gpu, double usage, int fits) {
  PtsimPlotLayout l;
  memset(&l, 0, sizeof l);
  g_strlcpy(l.model, "llama3-8b", sizeof l.model);
  g_strlcpy(l.hw, hw, sizeof l.hw);
  g_strlcpy(l.recompute, "none", sizeof l.recompute);
  g_strlcpy(l.schedule, "1f1b", sizeof l.schedule);
  l.gpus = gpus;
  l.seq = 8192;
  l.gbs = 128;
  l.tp = tp;
  l.pp = pp;
  l.cp = cp;
  l.dp = gpus / (tp * pp * cp);
  l.vp = 1;
  l.mbs = 1;
  l.fits = fits;
  l.runs = -2; /* no runs verdict (a CSV without the column): the 80% rule stands in */
  l.usage_fraction = usage;
  l.total_bytes = usage * 80.0 * GIB;
  l.tokens_per_s = tokens_per_s_per_gpu * (double)gpus;
  l.step_s = (double)(l.gbs * l.seq) / l.tokens_per_s;
  return l;
}

/* ---- choosing a scenario ---- */

static void test_one_scenario(void) {
  g_test_summary("a mixed set of layouts names its scenarios and the flags that tell them "
                 "apart; a filter keeps one; a profile given as a path matches its name");
  g_autoptr(GArray) all = g_array_new(FALSE, FALSE, sizeof(PtsimPlotLayout));
  PtsimPlotLayout ls[] = {layout("h100-80g", 8, 1, 1, 1, 1000, 0.5, 1),
                          layout("h100-80g", 16, 2, 1, 1, 900, 0.4, 1),
                          layout("h100-80g", 16, 1, 2, 1, 950, 0.4, 1)};
  g_array_append_vals(all, ls, G_N_ELEMENTS(ls));
  g_autoptr(GError) error = NULL;
  g_assert_null(ptsim_plot_layouts_one_scenario(all, NULL, &error));
  g_assert_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_OPTION);
  g_assert_nonnull(strstr(error->message, "2 scenarios (pick one with --gpus)"));
  g_clear_error(&error);
  PtsimPlotScenario want = {NULL, "hw_profiles/h100-80g.ini", 16, 0, 0};
  g_autoptr(GArray) rows = ptsim_plot_layouts_one_scenario(all, &want, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(rows->len, ==, 2);
  for (guint i = 0; i < rows->len; i++)
    g_assert_cmpint(g_array_index(rows, PtsimPlotLayout, i).gpus, ==, 16);
  want.gpus = 32;
  g_assert_null(ptsim_plot_layouts_one_scenario(all, &want, &error));
  g_assert_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_OPTION);
  g_assert_nonnull(strstr(error->message, "no layout matches"));
  g_clear_error(&error);
  /* the figures refuse a mixed set rather than drop part of it */
  g_autofree char *dir = make_tmp();
  g_autofree char *figure = g_build_filename(dir, "h.png", NULL);
  g_assert_false(ptsim_plot_heatmap(figure, all, PTSIM_PLOT_FACET_CP, NULL, NULL, NULL, &error));
  g_assert_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_DATA);
  g_clear_error(&error);
  g_assert_false(ptsim_plot_pareto(figure, all, 0.0, NULL, NULL, NULL, &error));
  g_assert_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_DATA);
  remove_tree(dir);
}

/* ---- heatmap ---- */

static void test_heatmap_cells(void) {
  g_test_summary("heatmap: one TSV row per (cp, tp, pp) of the sweep, for both facets, in "
                 "the panels where some layout runs (the others are named, not drawn)");
  if (!have_gnuplot()) return;
  g_autoptr(PtsimSweep) sweep = small_sweep("8", "h100-80g");
  g_autoptr(GArray) order = identity_order(sweep);
  g_autoptr(GArray) layouts = ptsim_plot_layouts_from_sweep(sweep, order);
  g_autofree char *dir = make_tmp();
  for (int facet = 0; facet < 2; facet++) {
    g_autoptr(GHashTable) cells = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_autoptr(GHashTable) running = g_hash_table_new(g_int64_hash, g_int64_equal);
    for (guint i = 0; i < layouts->len; i++) {
      const PtsimPlotLayout *l = &g_array_index(layouts, PtsimPlotLayout, i);
      if (l->status == 0 && l->runs == 1)
        g_hash_table_add(running, (gpointer)(facet ? &l->mbs : &l->cp));
    }
    for (guint i = 0; i < layouts->len; i++) {
      const PtsimPlotLayout *l = &g_array_index(layouts, PtsimPlotLayout, i);
      if (g_hash_table_size(running) > 0 &&
          !g_hash_table_contains(running, facet ? &l->mbs : &l->cp))
        continue;
      g_hash_table_add(cells, g_strdup_printf("%" G_GINT64_FORMAT "/%" G_GINT64_FORMAT
                                              "/%" G_GINT64_FORMAT,
                                              facet ? l->mbs : l->cp, l->tp, l->pp));
    }
    g_autofree char *figure = g_build_filename(dir, facet ? "h-mbs.pdf" : "h.png", NULL);
    g_auto(PtsimPlotFiles) files = {NULL, NULL, NULL};
    g_autoptr(GError) error = NULL;
    g_assert_true(ptsim_plot_heatmap(figure, layouts,
                                     facet ? PTSIM_PLOT_FACET_MBS : PTSIM_PLOT_FACET_CP, NULL, NULL,
                                     &files, &error));
    g_assert_no_error(error);
    assert_magic(files.figure, facet ? PTSIM_PLOT_PDF : PTSIM_PLOT_PNG);
    g_assert_cmpint(data_rows(files.data), ==, g_hash_table_size(cells));
    assert_script_relative(&files);
  }
  remove_tree(dir);
}

/* Column of the heatmap's rows. */
enum { H_TP = 1, H_PP = 2, H_STATE = 7, H_TPS = 8, H_BEST = 16 };

static void test_heatmap_labels(void) {
  g_test_summary("heatmap labels: whole tokens/s per GPU, one decimal when the best and the "
                 "runner-up would print alike; the best cell is marked; OOM cells have no "
                 "value; the colour scale spans the cells");
  if (!have_gnuplot()) return;
  g_autofree char *dir = make_tmp();
  g_autofree char *figure = g_build_filename(dir, "h.png", NULL);
  g_autoptr(GArray) rows = g_array_new(FALSE, FALSE, sizeof(PtsimPlotLayout));
  PtsimPlotLayout ls[] = {layout("h100-80g", 8, 1, 1, 1, 1098.44, 0.9, 0), /* OOM cell */
                          layout("h100-80g", 8, 2, 1, 1, 1098.31, 0.5, 1),
                          layout("h100-80g", 8, 4, 1, 1, 1098.44, 0.4, 1),
                          layout("h100-80g", 8, 8, 1, 1, 900.0, 0.3, 1)};
  for (guint i = 0; i < G_N_ELEMENTS(ls); i++) ls[i].rank = i + 1;
  g_array_append_vals(rows, ls, G_N_ELEMENTS(ls));
  g_auto(PtsimPlotFiles) files = {NULL, NULL, NULL};
  g_autoptr(GError) error = NULL;
  g_assert_true(
      ptsim_plot_heatmap(figure, rows, PTSIM_PLOT_FACET_CP, "hand", NULL, &files, &error));
  g_assert_no_error(error);
  /* 1098.44 and 1098.31 are both "1098": one decimal tells them apart */
  g_assert_cmpfloat(file_value(files.data, "# label_decimals "), ==, 1);
  g_assert_true(file_has(files.script, "label_format = '%.1f'"));
  g_autoptr(GPtrArray) t = tsv_rows(files.data);
  g_assert_cmpuint(t->len, ==, 4);
  for (guint i = 0; i < t->len; i++) {
    double tp = cell(t, i, H_TP);
    g_assert_cmpfloat(cell(t, i, H_STATE), ==, tp == 1 ? 0 : 1);
    g_assert_cmpfloat(cell(t, i, H_BEST), ==, tp == 4);
    if (tp == 1) g_assert_true(isnan(cell(t, i, H_TPS)));
    if (tp == 4) g_assert_cmpfloat_with_epsilon(cell(t, i, H_TPS), 1098.44, 0.005);
  }
  g_assert_cmpfloat(file_value(files.script, "cb_hi = "), >=, 1098.44 - 0.01);
  double lo = file_value(files.script, "cb_lo = ");
  g_assert_cmpfloat(lo, <=, 900.0);
  g_assert_cmpfloat(lo, >, 0.0);
  ptsim_plot_files_clear(&files);
  /* no tie: whole numbers */
  g_array_index(rows, PtsimPlotLayout, 1).tokens_per_s = 1050.0 * 8;
  g_assert_true(
      ptsim_plot_heatmap(figure, rows, PTSIM_PLOT_FACET_CP, "hand", NULL, &files, &error));
  g_assert_cmpfloat(file_value(files.data, "# label_decimals "), ==, 0);
  remove_tree(dir);
}

/* ---- pareto ---- */

static void test_pareto_front(void) {
  g_test_summary("pareto: block 0 every scheduled layout by memory; block 1 the front: memory "
                 "up, throughput strictly up, every fitting layout on or under it; the fit "
                 "limit at 80% of the capacity; the best named in the note");
  if (!have_gnuplot()) return;
  g_autoptr(PtsimSweep) sweep = small_sweep("8", "h100-80g");
  g_autoptr(GArray) order = identity_order(sweep);
  g_autoptr(GArray) layouts = ptsim_plot_layouts_from_sweep(sweep, order);
  guint scheduled = 0;
  for (guint i = 0; i < layouts->len; i++)
    scheduled += g_array_index(layouts, PtsimPlotLayout, i).status == 0;
  g_autofree char *dir = make_tmp();
  g_autofree char *figure = g_build_filename(dir, "p.png", NULL);
  g_auto(PtsimPlotFiles) files = {NULL, NULL, NULL};
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_plot_pareto(figure, layouts, 0.0, NULL, NULL, &files, &error));
  g_assert_no_error(error);
  assert_magic(files.figure, PTSIM_PLOT_PNG);
  g_autoptr(GPtrArray) all = tsv_rows_of_block(files.data, 0);
  g_autoptr(GPtrArray) front = tsv_rows_of_block(files.data, 1);
  g_assert_cmpuint(all->len, ==, scheduled);
  g_assert_cmpuint(front->len, >, 0);
  for (guint i = 1; i < front->len; i++) {
    g_assert_cmpfloat(cell(front, i, 9), >=, cell(front, i - 1, 9));
    g_assert_cmpfloat(cell(front, i, 10), >, cell(front, i - 1, 10));
  }
  for (guint i = 0; i < all->len; i++) {
    if (cell(all, i, 11) != 1) continue;
    gboolean covered = FALSE;
    for (guint k = 0; k < front->len && !covered; k++)
      covered = cell(front, k, 9) <= cell(all, i, 9) + 1e-9 &&
                cell(front, k, 10) >= cell(all, i, 10) - 1e-9;
    g_assert_true(covered);
  }
  double capacity = file_value(files.data, "# capacity_gib ");
  /* h100-80g: 81559 MiB, what the driver reports (hw_profiles/h100-80g.ini) */
  g_assert_cmpfloat_with_epsilon(capacity, 81559.0 / 1024.0, 1e-3);
  g_assert_cmpfloat_with_epsilon(file_value(files.data, "# threshold "), 0.8, 1e-9);
  g_assert_cmpfloat_with_epsilon(file_value(files.data, "# fit_limit_gib "), 0.8 * 81559.0 / 1024.0,
                                 1e-3);
  g_assert_true(file_has(files.script, "set arrow 2 from threshold*capacity_gib"));
  /* the best: the sweep's fastest layout that runs (the runs verdict, as the table ranks) */
  const PtsimPlotLayout *best = NULL;
  for (guint i = 0; i < layouts->len; i++) {
    const PtsimPlotLayout *l = &g_array_index(layouts, PtsimPlotLayout, i);
    if (l->status == 0 && l->runs == 1 && (!best || l->tokens_per_s > best->tokens_per_s)) best = l;
  }
  g_assert_nonnull(best);
  g_autofree char *words = g_strdup_printf("ringed: the best layout that runs, tp %" G_GINT64_FORMAT
                                           " pp %" G_GINT64_FORMAT,
                                           best->tp, best->pp);
  g_assert_true(file_has(files.script, words));
  remove_tree(dir);
}

static void test_pareto_threshold(void) {
  g_test_summary("pareto: a sweep run at another threshold shows where its verdicts put the "
                 "line (the largest usage that fits), or the threshold given");
  if (!have_gnuplot()) return;
  g_autofree char *dir = make_tmp();
  g_autofree char *figure = g_build_filename(dir, "p.svg", NULL);
  g_autoptr(GArray) rows = g_array_new(FALSE, FALSE, sizeof(PtsimPlotLayout));
  PtsimPlotLayout ls[] = {layout("h100-80g", 8, 1, 1, 1, 900, 0.85, 1),
                          layout("h100-80g", 8, 2, 1, 1, 800, 0.60, 1),
                          layout("h100-80g", 8, 4, 1, 1, 950, 0.95, 0)};
  g_array_append_vals(rows, ls, G_N_ELEMENTS(ls));
  g_auto(PtsimPlotFiles) files = {NULL, NULL, NULL};
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_plot_pareto(figure, rows, 0.0, NULL, NULL, &files, &error));
  g_assert_no_error(error);
  g_assert_cmpfloat_with_epsilon(file_value(files.data, "# threshold "), 0.85, 1e-9);
  g_assert_true(file_has(files.data, "inferred"));
  ptsim_plot_files_clear(&files);
  g_assert_true(ptsim_plot_pareto(figure, rows, 0.9, NULL, NULL, &files, &error));
  g_assert_cmpfloat_with_epsilon(file_value(files.data, "# threshold "), 0.9, 1e-9);
  g_assert_cmpfloat_with_epsilon(file_value(files.data, "# fit_limit_gib "), 72.0, 1e-3);
  g_assert_false(file_has(files.data, "inferred"));
  remove_tree(dir);
}

/* ---- scaling ---- */

static void test_scaling(void) {
  g_test_summary("scaling: one block per hw, one row per GPU count, the ideal line from the "
                 "first count that fits (same tokens/s per GPU; step time x first/gpus)");
  if (!have_gnuplot()) return;
  g_autoptr(PtsimSweep) sweep = small_sweep("8,16", "h100-80g,a100-80g");
  g_autoptr(GArray) order = identity_order(sweep);
  g_autoptr(GArray) layouts = ptsim_plot_layouts_from_sweep(sweep, order);
  g_autofree char *dir = make_tmp();
  for (int y = 0; y < 2; y++) {
    g_autofree char *figure = g_build_filename(dir, y ? "s-step.svg" : "s.png", NULL);
    g_auto(PtsimPlotFiles) files = {NULL, NULL, NULL};
    g_autoptr(GError) error = NULL;
    g_assert_true(ptsim_plot_scaling(figure, layouts,
                                     y ? PTSIM_PLOT_Y_STEP : PTSIM_PLOT_Y_THROUGHPUT, NULL, NULL,
                                     &files, &error));
    g_assert_no_error(error);
    assert_magic(files.figure, y ? PTSIM_PLOT_SVG : PTSIM_PLOT_PNG);
    g_assert_cmpint(data_rows(files.data), ==, 4);
    for (int b = 0; b < 2; b++) {
      g_autoptr(GPtrArray) rows = tsv_rows_of_block(files.data, b);
      g_assert_cmpuint(rows->len, ==, 2);
      g_assert_cmpfloat(cell(rows, 0, 2), ==, 8);
      if (cell(rows, 0, 3) != 1 || cell(rows, 1, 3) != 1) continue; /* a count where none fits */
      double first = cell(rows, 0, y ? 5 : 4);
      g_assert_cmpfloat_with_epsilon(cell(rows, 0, 6), first, 1e-3 * first);
      double ideal16 = y ? first * 8.0 / 16.0 : first;
      g_assert_cmpfloat_with_epsilon(cell(rows, 1, 6), ideal16, 1e-3 * ideal16);
    }
  }
  remove_tree(dir);
}

static void test_sweep_csv_errors(void) {
  g_test_summary("sweep CSV: missing column and bad number name file:line");
  g_autofree char *dir = make_tmp();
  g_autofree char *csv = g_build_filename(dir, "s.csv", NULL);
  g_autoptr(GError) error = NULL;
  g_assert_true(g_file_set_contents(csv, "rank,model\n1,x\n", -1, NULL));
  g_assert_null(ptsim_plot_layouts_read_csv(csv, &error));
  g_assert_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_INPUT);
  g_autofree char *where = g_strdup_printf("%s:1: the header has no column 'hw'", csv);
  g_assert_cmpstr(error->message, ==, where);
  g_clear_error(&error);
  g_autofree char *no_file = g_build_filename(dir, "none.csv", NULL);
  g_assert_null(ptsim_plot_layouts_read_csv(no_file, &error));
  g_assert_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT);
  remove_tree(dir);
}

/* ---- validation ---- */

static void test_validation(void) {
  g_test_summary("validation: one row per CSV row with its error and fit; the subtitle's mean "
                 "|error| per group; --held-out overrides the fit column; bad cells name "
                 "file:line");
  g_autofree char *dir = make_tmp();
  g_autofree char *csv = g_build_filename(dir, "runs.csv", NULL);
  g_autofree char *figure = g_build_filename(dir, "v.png", NULL);
  g_autoptr(GError) error = NULL;
  g_assert_true(g_file_set_contents(csv,
                                    "# a comment\nsource,run,measured_s,predicted_s,fit\n"
                                    "a,r1,1.0,1.05,in-sample\na,r2,2.0,1.7,in-sample\n"
                                    "b,r3,10,11,held-out\n",
                                    -1, NULL));
  if (have_gnuplot()) {
    g_auto(PtsimPlotFiles) files = {NULL, NULL, NULL};
    g_assert_true(ptsim_plot_validation(figure, csv, PTSIM_PLOT_VALIDATION_RESIDUAL, NULL, NULL,
                                        &files, &error));
    g_assert_no_error(error);
    assert_magic(files.figure, PTSIM_PLOT_PNG);
    g_autoptr(GPtrArray) rows = tsv_rows(files.data);
    g_assert_cmpuint(rows->len, ==, 3);
    const double err[] = {0.05, -0.15, 0.10}, fit[] = {1, 1, 2};
    for (guint i = 0; i < 3; i++) {
      g_assert_cmpfloat_with_epsilon(cell(rows, i, 5), err[i], 1e-5);
      g_assert_cmpfloat(cell(rows, i, 6), ==, fit[i]);
    }
    /* in-sample: (5% + 15%) / 2 = 10.0%; held-out: 10.0% */
    g_assert_true(file_has(files.script, "held-out (filled) mean |error| 10.0% over 1"));
    g_assert_true(file_has(files.script, "in-sample (open) mean |error| 10.0% over 2"));
    g_assert_true(file_has(files.script, "2 within \xc2\xb1"
                                         "10%"));
    assert_script_relative(&files);
    ptsim_plot_files_clear(&files);
    /* --held-out a: a's runs held out, b's in-sample */
    const char *held[] = {"a", NULL};
    g_assert_true(ptsim_plot_validation(figure, csv, PTSIM_PLOT_VALIDATION_PARITY, held, NULL,
                                        &files, &error));
    g_autoptr(GPtrArray) again = tsv_rows(files.data);
    g_assert_cmpfloat(cell(again, 0, 6), ==, 2);
    g_assert_cmpfloat(cell(again, 2, 6), ==, 1);
    g_assert_true(file_has(files.script, "set size ratio -1")); /* parity: square, y = x */
  }
  g_assert_true(g_file_set_contents(csv,
                                    "source,run,measured_s,predicted_s\na,r1,1.0,1.05\n"
                                    "a,r2,0,1.7\n",
                                    -1, NULL));
  g_assert_false(
      ptsim_plot_validation(figure, csv, PTSIM_PLOT_VALIDATION_RESIDUAL, NULL, NULL, NULL, &error));
  g_assert_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_INPUT);
  g_autofree char *where = g_strdup_printf("%s:3: column measured_s", csv);
  g_assert_nonnull(strstr(error->message, where));
  g_clear_error(&error);
  g_assert_true(
      g_file_set_contents(csv, "source,run,measured_s,predicted_s\na,r1,1.0\n", -1, NULL));
  g_assert_false(
      ptsim_plot_validation(figure, csv, PTSIM_PLOT_VALIDATION_RESIDUAL, NULL, NULL, NULL, &error));
  g_assert_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_INPUT);
  g_free(where);
  where = g_strdup_printf("%s:2:", csv);
  g_assert_nonnull(strstr(error->message, where));
  g_clear_error(&error);
  g_assert_true(
      g_file_set_contents(csv, "source,run,measured_s,predicted_s,fit\na,r1,1,2,yes\n", -1, NULL));
  g_assert_false(
      ptsim_plot_validation(figure, csv, PTSIM_PLOT_VALIDATION_RESIDUAL, NULL, NULL, NULL, &error));
  g_assert_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_INPUT);
  g_free(where);
  where = g_strdup_printf("%s:2: column fit: 'yes'", csv);
  g_assert_nonnull(strstr(error->message, where));
  remove_tree(dir);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/plot-sweep/one-scenario", test_one_scenario);
  g_test_add_func("/plot-sweep/heatmap/cells", test_heatmap_cells);
  g_test_add_func("/plot-sweep/heatmap/labels", test_heatmap_labels);
  g_test_add_func("/plot-sweep/pareto/front", test_pareto_front);
  g_test_add_func("/plot-sweep/pareto/threshold", test_pareto_threshold);
  g_test_add_func("/plot-sweep/scaling/ideal", test_scaling);
  g_test_add_func("/plot-sweep/csv/errors", test_sweep_csv_errors);
  g_test_add_func("/plot-sweep/validation/residual", test_validation);
  return g_test_run();
}
