/* test_plot.c — the gnuplot figure writers (plots/plot.c).
 *
 * Each test renders into its own g_dir_make_tmp folder and removes it.
 * Jobs come from the shipped models/ and hw_profiles/ (PTSIM_DATA_DIR, set
 * by ctest).  Tests that need gnuplot skip when it is not on PATH; the
 * missing-gnuplot and failing-gnuplot paths are simulated with PATH. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include "cli_job.h"
#include "memory.h"
#include "plot.h"
#include "plot_cmd.h"
#include "sweep.h"
#include "simulate.h"
#include "plan_of.h"

/* ---- helpers ---- */

static gboolean have_gnuplot(void) {
  g_autofree char *path = g_find_program_in_path("gnuplot");
  if (!path) g_test_skip("gnuplot is not on PATH");
  return path != NULL;
}

static void resolve_job(PtsimJob *job, gint64 gpus, gint64 pp, gint64 gbs) {
  PtsimCliJob opts;
  ptsim_cli_job_init(&opts);
  opts.gpus = gpus;
  opts.pp = pp;
  opts.gbs = gbs;
  g_autoptr(GError) error = NULL;
  gboolean ok = ptsim_cli_job_resolve(&opts, job, NULL, &error);
  ptsim_cli_job_clear(&opts);
  g_assert_no_error(error);
  g_assert_true(ok);
}

static void remove_tree(const char *dir) {
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  if (d) {
    const char *name;
    while ((name = g_dir_read_name(d))) {
      g_autofree char *path = g_build_filename(dir, name, NULL);
      if (g_file_test(path, G_FILE_TEST_IS_DIR))
        remove_tree(path);
      else
        g_unlink(path);
    }
  }
  g_rmdir(dir);
}

static char *make_tmp(void) {
  g_autoptr(GError) error = NULL;
  char *dir = g_dir_make_tmp("ptsim-plot-XXXXXX", &error);
  g_assert_no_error(error);
  return dir;
}

/* The figure starts with the bytes its format promises. */
static void assert_magic(const char *path, PtsimPlotFormat format) {
  g_autofree char *contents = NULL;
  gsize len = 0;
  g_autoptr(GError) error = NULL;
  g_assert_true(g_file_get_contents(path, &contents, &len, &error));
  g_assert_no_error(error);
  g_assert_cmpuint(len, >, 100);
  switch (format) {
    case PTSIM_PLOT_PDF: g_assert_cmpmem(contents, 4, "%PDF", 4); break;
    case PTSIM_PLOT_PNG: g_assert_cmpmem(contents, 4, "\x89PNG", 4); break;
    case PTSIM_PLOT_SVG: g_assert_nonnull(g_strstr_len(contents, (gssize)len, "<svg")); break;
  }
}

/* Rows of a TSV that are not comments or blank. */
static gint64 data_rows(const char *path) {
  g_autofree char *contents = NULL;
  g_assert_true(g_file_get_contents(path, &contents, NULL, NULL));
  g_auto(GStrv) lines = g_strsplit(contents, "\n", -1);
  gint64 n = 0;
  for (char **l = lines; *l; l++)
    if (**l && **l != '#') n++;
  return n;
}

/* The script names its data and figure by bare file name (so it reruns
 * from its own folder). */
static void assert_script_relative(const PtsimPlotFiles *files) {
  g_autofree char *gp = NULL;
  g_assert_true(g_file_get_contents(files->script, &gp, NULL, NULL));
  g_autofree char *data = g_path_get_basename(files->data);
  g_autofree char *fig = g_path_get_basename(files->figure);
  g_autofree char *data_q = g_strdup_printf("data = '%s'", data);
  g_autofree char *fig_q =
      g_strdup_printf("set output (exists('ptsim_output') ? ptsim_output : '%s')", fig);
  g_assert_nonnull(strstr(gp, data_q));
  g_assert_nonnull(strstr(gp, fig_q));
  g_autofree char *dir = g_path_get_dirname(files->figure);
  g_assert_null(strstr(gp, dir));
}

/* ---- memory ---- */

static void check_memory(const char *ext, PtsimPlotFormat format) {
  if (!have_gnuplot()) return;
  g_autofree char *dir = make_tmp();
  g_autofree char *name = g_strconcat("memory.", ext, NULL);
  g_autofree char *figure = g_build_filename(dir, name, NULL);
  PtsimJob job;
  resolve_job(&job, 8, 4, 128);
  PtsimMemoryEstimate *m = g_new0(PtsimMemoryEstimate, 1);
  estimate_of(&job, PTSIM_CE_LAST_STAGE, m);
  g_auto(PtsimPlotFiles) files = {NULL, NULL, NULL};
  g_autoptr(GError) error = NULL;
  gboolean ok = ptsim_plot_memory(figure, &job, m, NULL, &files, &error);
  g_assert_no_error(error);
  g_assert_true(ok);
  g_assert_cmpstr(files.figure, ==, figure);
  assert_magic(files.figure, format);
  g_assert_cmpint(data_rows(files.data), ==, m->num_stages);
  g_assert_cmpint(m->num_stages, ==, 4);
  assert_script_relative(&files);
  g_free(m);
  remove_tree(dir);
}

static void test_memory_png(void) {
  g_test_summary("memory figure as PNG: signature, one TSV row per stage, relative .gp");
  check_memory("png", PTSIM_PLOT_PNG);
}

static void test_memory_pdf(void) {
  g_test_summary("memory figure as PDF (pdfcairo) starts with %PDF");
  check_memory("pdf", PTSIM_PLOT_PDF);
}

static void test_memory_svg(void) {
  g_test_summary("memory figure as SVG contains <svg");
  check_memory("SVG", PTSIM_PLOT_SVG);
}

/* ---- timeline ---- */

static void check_timeline(const char *ext, PtsimPlotFormat format, gint64 gpus) {
  if (!have_gnuplot()) return;
  g_autofree char *dir = make_tmp();
  g_autofree char *name = g_strconcat("timeline.", ext, NULL);
  g_autofree char *figure = g_build_filename(dir, name, NULL);
  PtsimJob job;
  resolve_job(&job, gpus, 4, 16);
  PtsimTimeResult *time = g_new0(PtsimTimeResult, 1);
  PtsimTrace trace = {NULL, 0, 0};
  g_autoptr(GError) error = NULL;
  g_assert_true(simulate_of(&job, &trace, time, &error));
  g_assert_no_error(error);
  g_assert_cmpint(trace.count, >, 0);
  g_auto(PtsimPlotFiles) files = {NULL, NULL, NULL};
  gboolean ok = ptsim_plot_timeline(figure, &job, time, &trace, &files, &error);
  g_assert_no_error(error);
  g_assert_true(ok);
  assert_magic(files.figure, format);
  g_assert_cmpint(data_rows(files.data), ==, trace.count);
  assert_script_relative(&files);
  ptsim_simulate_trace_clear(&trace);
  g_free(time);
  remove_tree(dir);
}

static void test_timeline_png(void) {
  g_test_summary("timeline as PNG: one TSV row per trace record");
  check_timeline("png", PTSIM_PLOT_PNG, 4);
}

static void test_timeline_pdf_dp(void) {
  g_test_summary("timeline with a data-parallel lane (dp 2) as PDF");
  check_timeline("pdf", PTSIM_PLOT_PDF, 8);
}

static void test_timeline_svg(void) {
  g_test_summary("timeline as SVG");
  check_timeline("svg", PTSIM_PLOT_SVG, 4);
}

static void test_timeline_empty_trace(void) {
  g_test_summary("an empty trace is PTSIM_PLOT_ERROR_DATA, nothing is written");
  g_autofree char *dir = make_tmp();
  g_autofree char *figure = g_build_filename(dir, "t.png", NULL);
  PtsimJob job;
  resolve_job(&job, 4, 4, 16);
  PtsimTimeResult time;
  memset(&time, 0, sizeof time);
  PtsimTrace trace = {NULL, 0, 0};
  g_autoptr(GError) error = NULL;
  g_assert_false(ptsim_plot_timeline(figure, &job, &time, &trace, NULL, &error));
  g_assert_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_DATA);
  g_autofree char *tsv = g_build_filename(dir, "t.tsv", NULL);
  g_assert_false(g_file_test(tsv, G_FILE_TEST_EXISTS));
  remove_tree(dir);
}


/* ---- sweep, allocator and validation kinds ---- */

/* An evaluated sweep of one scenario (llama3-8b on `gpus` x h100-80g) with
 * a small layout space, and its layouts in sweep order.  */
static PtsimSweep *small_sweep(const char *gpus_list, const char *hws) {
  g_autoptr(PtsimSweepSpec) spec = ptsim_sweep_spec_new();
  g_ptr_array_add(spec->models, g_strdup("llama3-8b"));
  g_auto(GStrv) hw = g_strsplit(hws, ",", -1);
  for (char **h = hw; *h; h++) g_ptr_array_add(spec->hws, g_strdup(*h));
  g_auto(GStrv) g = g_strsplit(gpus_list, ",", -1);
  for (char **p = g; *p; p++) {
    gint64 v = g_ascii_strtoll(*p, NULL, 10);
    g_array_append_val(spec->gpus, v);
  }
  gint64 seq = 8192, gbs = 128;
  g_array_append_val(spec->seqs, seq);
  g_array_append_val(spec->gbs, gbs);
  g_autoptr(GError) error = NULL;
  PtsimSweep *sweep = ptsim_sweep_enumerate(spec, &error);
  g_assert_no_error(error);
  g_assert_true(ptsim_sweep_evaluate(sweep, PTSIM_DEVICE_CPU, 2, NULL, NULL, &error));
  g_assert_no_error(error);
  return sweep;
}

static GArray *identity_order(const PtsimSweep *sweep) {
  GArray *order = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint i = 0; i < sweep->jobs->len; i++) g_array_append_val(order, i);
  return order;
}

/* Rows of block `index` (blocks are separated by two blank lines). */
static gint64 block_rows(const char *path, int index) {
  g_autofree char *contents = NULL;
  g_assert_true(g_file_get_contents(path, &contents, NULL, NULL));
  g_auto(GStrv) lines = g_strsplit(contents, "\n", -1);
  gint64 n = 0;
  int block = 0, blanks = 0;
  for (char **l = lines; *l; l++) {
    if (!**l) {
      if (++blanks == 2) block++;
      continue;
    }
    blanks = 0;
    if (**l != '#' && block == index) n++;
  }
  return n;
}

static void test_memory_allocator_outline(void) {
  g_test_summary("memory with the allocator: three more columns per stage, the legend entry");
  if (!have_gnuplot()) return;
  g_autofree char *dir = make_tmp();
  g_autofree char *figure = g_build_filename(dir, "m.png", NULL);
  PtsimJob job;
  resolve_job(&job, 8, 4, 128);
  g_autofree PtsimMemoryEstimate *m = g_new0(PtsimMemoryEstimate, 1);
  g_autofree PtsimAllocResult *a = g_new0(PtsimAllocResult, 1);
  estimate_of(&job, PTSIM_CE_LAST_STAGE, m);
  g_autoptr(GError) error = NULL;
  g_assert_true(simulate_allocator_of(&job, 2, NULL, NULL, 0.0, NULL, a, &error));
  g_auto(PtsimPlotFiles) files = {NULL, NULL, NULL};
  g_assert_true(ptsim_plot_memory(figure, &job, m, a, &files, &error));
  g_assert_no_error(error);
  assert_magic(files.figure, PTSIM_PLOT_PNG);
  g_assert_cmpint(data_rows(files.data), ==, 4);
  g_autofree char *tsv = NULL, *gp = NULL;
  g_assert_true(g_file_get_contents(files.data, &tsv, NULL, NULL));
  g_assert_true(g_file_get_contents(files.script, &gp, NULL, NULL));
  g_assert_nonnull(strstr(tsv, "alloc_device_gib"));
  g_assert_null(strstr(strstr(tsv, "\n0\t"), "NaN"));
  g_assert_nonnull(strstr(gp, "allocator reserved + context/NCCL"));
  remove_tree(dir);
}

static void test_allocator(void) {
  g_test_summary("allocator: one row per sample of the last step plus one carried per stage; "
                 "--from the same TSV gives the same data");
  if (!have_gnuplot()) return;
  g_autofree char *dir = make_tmp();
  g_autofree char *timeline = g_build_filename(dir, "timeline.tsv", NULL);
  g_autofree char *figure = g_build_filename(dir, "alloc.svg", NULL);
  PtsimJob job;
  resolve_job(&job, 8, 4, 32);
  g_autofree PtsimTimeResult *time = g_new0(PtsimTimeResult, 1);
  g_autofree PtsimAllocResult *a = g_new0(PtsimAllocResult, 1);
  PtsimTrace trace = {NULL, 0, 0};
  g_autoptr(GError) error = NULL;
  g_assert_true(simulate_of(&job, &trace, time, &error));
  g_assert_true(simulate_allocator_of(&job, 2, NULL, &trace, time->step_s, timeline, a, &error));
  ptsim_simulate_trace_clear(&trace);
  g_auto(PtsimPlotFiles) files = {NULL, NULL, NULL};
  g_assert_true(ptsim_plot_allocator(figure, &job, timeline, &files, &error));
  g_assert_no_error(error);
  assert_magic(files.figure, PTSIM_PLOT_SVG);
  /* samples of step 1 in the emulator's TSV */
  g_autofree char *raw = NULL;
  g_assert_true(g_file_get_contents(timeline, &raw, NULL, NULL));
  g_auto(GStrv) lines = g_strsplit(raw, "\n", -1);
  gint64 last_step = 0;
  for (char **l = lines; *l; l++) {
    g_auto(GStrv) c = g_strsplit(*l, "\t", -1);
    if (**l && **l != '#' && g_strv_length(c) == 5 && g_ascii_isdigit(c[1][0]))
      last_step += strcmp(c[1], "1") == 0;
  }
  g_assert_cmpint(last_step, >, 0);
  g_assert_cmpint(data_rows(files.data), ==, last_step + 4);
  assert_script_relative(&files);
  remove_tree(dir);
}

static void test_allocator_bad_input(void) {
  g_test_summary("allocator: a stage the job does not have and a bad number name file:line");
  g_autofree char *dir = make_tmp();
  g_autofree char *tsv = g_build_filename(dir, "t.tsv", NULL);
  g_autofree char *figure = g_build_filename(dir, "a.png", NULL);
  PtsimJob job;
  resolve_job(&job, 8, 2, 32);
  g_autoptr(GError) error = NULL;
  g_assert_true(g_file_set_contents(
      tsv, "# c\nstage\tstep\ttime_s\tallocated_bytes\treserved_bytes\n0\t0\t0\t1\t2\n"
           "5\t0\t0\t1\t2\n", -1, NULL));
  g_assert_false(ptsim_plot_allocator(figure, &job, tsv, NULL, &error));
  g_assert_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_INPUT);
  g_autofree char *where = g_strdup_printf("%s:4:", tsv);
  g_assert_nonnull(strstr(error->message, where));
  g_clear_error(&error);
  g_assert_true(g_file_set_contents(
      tsv, "stage\tstep\ttime_s\tallocated_bytes\treserved_bytes\n0\t0\tx\t1\t2\n", -1, NULL));
  g_assert_false(ptsim_plot_allocator(figure, &job, tsv, NULL, &error));
  g_assert_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_INPUT);
  g_free(where);
  where = g_strdup_printf("%s:2: column time_s", tsv);
  g_assert_nonnull(strstr(error->message, where));
  remove_tree(dir);
}

static void test_heatmap(void) {
  g_test_summary("heatmap: one TSV row per (cp, tp, pp) of the sweep, for both facets");
  if (!have_gnuplot()) return;
  g_autoptr(PtsimSweep) sweep = small_sweep("8", "h100-80g");
  g_autoptr(GArray) order = identity_order(sweep);
  g_autoptr(GArray) layouts = ptsim_plot_layouts_from_sweep(sweep, order);
  g_autofree char *dir = make_tmp();
  for (int facet = 0; facet < 2; facet++) {
    g_autoptr(GHashTable) cells = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (guint i = 0; i < layouts->len; i++) {
      const PtsimPlotLayout *l = &g_array_index(layouts, PtsimPlotLayout, i);
      g_hash_table_add(cells, g_strdup_printf("%" G_GINT64_FORMAT "/%" G_GINT64_FORMAT
                                              "/%" G_GINT64_FORMAT,
                                              facet ? l->mbs : l->cp, l->tp, l->pp));
    }
    g_autofree char *figure = g_build_filename(dir, facet ? "h-mbs.pdf" : "h.png", NULL);
    g_auto(PtsimPlotFiles) files = {NULL, NULL, NULL};
    g_autoptr(GError) error = NULL;
    g_assert_true(ptsim_plot_heatmap(figure, layouts, facet ? PTSIM_PLOT_FACET_MBS
                                                            : PTSIM_PLOT_FACET_CP,
                                     NULL, &files, &error));
    g_assert_no_error(error);
    assert_magic(files.figure, facet ? PTSIM_PLOT_PDF : PTSIM_PLOT_PNG);
    g_assert_cmpint(data_rows(files.data), ==, g_hash_table_size(cells));
    assert_script_relative(&files);
  }
  remove_tree(dir);
}

static void test_pareto(void) {
  g_test_summary("pareto: block 0 one row per scheduled layout, a non-empty front in block 1");
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
  g_assert_true(ptsim_plot_pareto(figure, layouts, NULL, &files, &error));
  g_assert_no_error(error);
  assert_magic(files.figure, PTSIM_PLOT_PNG);
  g_assert_cmpint(block_rows(files.data, 0), ==, scheduled);
  g_assert_cmpint(block_rows(files.data, 1), >, 0);
  g_assert_cmpint(block_rows(files.data, 1), <=, scheduled);
  remove_tree(dir);
}

static void test_scaling(void) {
  g_test_summary("scaling: one block per hw, one row per GPU count");
  if (!have_gnuplot()) return;
  g_autoptr(PtsimSweep) sweep = small_sweep("8,16", "h100-80g,a100-80g");
  g_autoptr(GArray) order = identity_order(sweep);
  g_autoptr(GArray) layouts = ptsim_plot_layouts_from_sweep(sweep, order);
  g_autofree char *dir = make_tmp();
  for (int y = 0; y < 2; y++) {
    g_autofree char *figure = g_build_filename(dir, y ? "s-step.svg" : "s.png", NULL);
    g_auto(PtsimPlotFiles) files = {NULL, NULL, NULL};
    g_autoptr(GError) error = NULL;
    g_assert_true(ptsim_plot_scaling(figure, layouts, y ? PTSIM_PLOT_Y_STEP : PTSIM_PLOT_Y_THROUGHPUT,
                                     NULL, &files, &error));
    g_assert_no_error(error);
    assert_magic(files.figure, y ? PTSIM_PLOT_SVG : PTSIM_PLOT_PNG);
    g_assert_cmpint(data_rows(files.data), ==, 4);
    g_assert_cmpint(block_rows(files.data, 0), ==, 2);
    g_assert_cmpint(block_rows(files.data, 1), ==, 2);
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

static void test_validation(void) {
  g_test_summary("validation: one row per CSV row; a non-positive time names file:line");
  g_autofree char *dir = make_tmp();
  g_autofree char *csv = g_build_filename(dir, "runs.csv", NULL);
  g_autofree char *figure = g_build_filename(dir, "v.png", NULL);
  g_autoptr(GError) error = NULL;
  g_assert_true(g_file_set_contents(csv,
                                    "# a comment\nsource,run,measured_s,predicted_s\n"
                                    "a,r1,1.0,1.05\na,r2,2.0,1.7\nb,r3,10,11\n",
                                    -1, NULL));
  if (have_gnuplot()) {
    g_auto(PtsimPlotFiles) files = {NULL, NULL, NULL};
    g_assert_true(ptsim_plot_validation(figure, csv, &files, &error));
    g_assert_no_error(error);
    assert_magic(files.figure, PTSIM_PLOT_PNG);
    g_assert_cmpint(data_rows(files.data), ==, 3);
    assert_script_relative(&files);
  }
  g_assert_true(g_file_set_contents(csv, "source,run,measured_s,predicted_s\na,r1,1.0,1.05\n"
                                         "a,r2,0,1.7\n", -1, NULL));
  g_assert_false(ptsim_plot_validation(figure, csv, NULL, &error));
  g_assert_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_INPUT);
  g_autofree char *where = g_strdup_printf("%s:3: column measured_s", csv);
  g_assert_nonnull(strstr(error->message, where));
  g_clear_error(&error);
  g_assert_true(g_file_set_contents(csv, "source,run,measured_s,predicted_s\na,r1,1.0\n", -1, NULL));
  g_assert_false(ptsim_plot_validation(figure, csv, NULL, &error));
  g_assert_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_INPUT);
  g_free(where);
  where = g_strdup_printf("%s:2:", csv);
  g_assert_nonnull(strstr(error->message, where));
  remove_tree(dir);
}

static void test_default_figures(void) {
  g_test_summary("the default job's figures: four PNGs with data and scripts in the folder");
  if (!have_gnuplot()) return;
  g_autoptr(PtsimSweep) sweep = small_sweep("8", "h100-80g");
  g_autoptr(GArray) order = identity_order(sweep);
  g_autofree char *dir = make_tmp();
  g_autofree char *out = g_build_filename(dir, "ptsim-out", NULL);
  g_autoptr(GString) report = g_string_new(NULL);
  g_assert_true(ptsim_plot_default_figures(sweep, order, out, report));
  const char *names[] = {"memory", "timeline", "heatmap", "pareto"};
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
    g_autofree char *png = g_strdup_printf("%s/%s.png", out, names[i]);
    g_autofree char *tsv = g_strdup_printf("%s/%s.tsv", out, names[i]);
    assert_magic(png, PTSIM_PLOT_PNG);
    g_assert_true(g_file_test(tsv, G_FILE_TEST_EXISTS));
  }
  g_assert_nonnull(strstr(report->str, out));
  remove_tree(dir);
}

static void test_default_figures_no_gnuplot(void) {
  g_test_summary("the default job without gnuplot: one line saying so, success, no folder");
  g_autoptr(PtsimSweep) sweep = small_sweep("8", "h100-80g");
  g_autoptr(GArray) order = identity_order(sweep);
  g_autofree char *dir = make_tmp();
  g_autofree char *out = g_build_filename(dir, "ptsim-out", NULL);
  g_autoptr(GString) report = g_string_new(NULL);
  g_autofree char *saved = g_strdup(g_getenv("PATH"));
  g_setenv("PATH", "/nonexistent", TRUE);
  gboolean ok = ptsim_plot_default_figures(sweep, order, out, report);
  g_setenv("PATH", saved ? saved : "", TRUE);
  g_assert_true(ok);
  g_assert_nonnull(strstr(report->str, "figures skipped"));
  g_assert_nonnull(strstr(report->str, "apt-get install gnuplot-nox"));
  g_assert_false(g_file_test(out, G_FILE_TEST_EXISTS));
  remove_tree(dir);
}

/* ---- formats and gnuplot failures ---- */

static void test_format_from_path(void) {
  g_test_summary("extension picks the terminal, case-insensitive; others are refused");
  PtsimPlotFormat f;
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_plot_format_from_path("a/b.pdf", &f, &error));
  g_assert_cmpint(f, ==, PTSIM_PLOT_PDF);
  g_assert_true(ptsim_plot_format_from_path("x.PNG", &f, &error));
  g_assert_cmpint(f, ==, PTSIM_PLOT_PNG);
  g_assert_true(ptsim_plot_format_from_path("x.svg", &f, &error));
  g_assert_cmpint(f, ==, PTSIM_PLOT_SVG);
  g_assert_no_error(error);
  const char *bad[] = {"x.jpg", "x", ".png", "dir.png/x", "x.png.gz"};
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_assert_false(ptsim_plot_format_from_path(bad[i], &f, &error));
    g_assert_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_FORMAT);
    g_assert_nonnull(strstr(error->message, bad[i]));
    g_clear_error(&error);
  }
}

/* Runs ptsim_plot_memory with PATH set to `path_dir` only. */
static gboolean memory_with_path(const char *path_dir, const char *figure, GError **error) {
  PtsimJob job;
  resolve_job(&job, 8, 2, 128);
  PtsimMemoryEstimate *m = g_new0(PtsimMemoryEstimate, 1);
  estimate_of(&job, PTSIM_CE_LAST_STAGE, m);
  g_autofree char *saved = g_strdup(g_getenv("PATH"));
  g_setenv("PATH", path_dir, TRUE);
  gboolean ok = ptsim_plot_memory(figure, &job, m, NULL, NULL, error);
  if (saved)
    g_setenv("PATH", saved, TRUE);
  else
    g_unsetenv("PATH");
  g_free(m);
  return ok;
}

static void test_no_gnuplot(void) {
  g_test_summary("gnuplot missing from PATH: a clear error naming the package; data and "
                 "script are still written");
  g_autofree char *dir = make_tmp();
  g_autofree char *empty = g_build_filename(dir, "empty-bin", NULL);
  g_assert_cmpint(g_mkdir(empty, 0755), ==, 0);
  g_autofree char *figure = g_build_filename(dir, "m.png", NULL);
  g_autoptr(GError) error = NULL;
  g_assert_false(memory_with_path(empty, figure, &error));
  g_assert_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_NO_GNUPLOT);
  g_assert_nonnull(strstr(error->message, "apt-get install gnuplot-nox"));
  g_autofree char *tsv = g_build_filename(dir, "m.tsv", NULL);
  g_autofree char *gp = g_build_filename(dir, "m.gp", NULL);
  g_assert_true(g_file_test(tsv, G_FILE_TEST_EXISTS));
  g_assert_true(g_file_test(gp, G_FILE_TEST_EXISTS));
  g_assert_false(g_file_test(figure, G_FILE_TEST_EXISTS));
  remove_tree(dir);
}

static void test_gnuplot_fails(void) {
  g_test_summary("gnuplot exiting non-zero: PTSIM_PLOT_ERROR_GNUPLOT carrying its stderr");
  g_autofree char *dir = make_tmp();
  g_autofree char *bin = g_build_filename(dir, "bin", NULL);
  g_assert_cmpint(g_mkdir(bin, 0755), ==, 0);
  g_autofree char *fake = g_build_filename(bin, "gnuplot", NULL);
  g_assert_true(g_file_set_contents(fake, "#!/bin/sh\necho 'line 7: broken script' >&2\nexit 3\n",
                                    -1, NULL));
  g_assert_cmpint(g_chmod(fake, 0755), ==, 0);
  g_autofree char *figure = g_build_filename(dir, "m.pdf", NULL);
  g_autoptr(GError) error = NULL;
  g_assert_false(memory_with_path(bin, figure, &error));
  g_assert_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_GNUPLOT);
  g_assert_nonnull(strstr(error->message, "line 7: broken script"));
  remove_tree(dir);
}

static void test_gnuplot_writes_nothing(void) {
  g_test_summary("gnuplot exiting 0 without a figure is an error too");
  g_autofree char *dir = make_tmp();
  g_autofree char *bin = g_build_filename(dir, "bin", NULL);
  g_assert_cmpint(g_mkdir(bin, 0755), ==, 0);
  g_autofree char *fake = g_build_filename(bin, "gnuplot", NULL);
  g_assert_true(g_file_set_contents(fake, "#!/bin/sh\nexit 0\n", -1, NULL));
  g_assert_cmpint(g_chmod(fake, 0755), ==, 0);
  g_autofree char *figure = g_build_filename(dir, "m.svg", NULL);
  g_autoptr(GError) error = NULL;
  g_assert_false(memory_with_path(bin, figure, &error));
  g_assert_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_GNUPLOT);
  remove_tree(dir);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/plot/format/from-path", test_format_from_path);
  g_test_add_func("/plot/memory/png", test_memory_png);
  g_test_add_func("/plot/memory/pdf", test_memory_pdf);
  g_test_add_func("/plot/memory/svg", test_memory_svg);
  g_test_add_func("/plot/timeline/png", test_timeline_png);
  g_test_add_func("/plot/timeline/pdf-dp-lane", test_timeline_pdf_dp);
  g_test_add_func("/plot/timeline/svg", test_timeline_svg);
  g_test_add_func("/plot/timeline/empty-trace", test_timeline_empty_trace);
  g_test_add_func("/plot/memory/allocator-outline", test_memory_allocator_outline);
  g_test_add_func("/plot/allocator/svg", test_allocator);
  g_test_add_func("/plot/allocator/bad-input", test_allocator_bad_input);
  g_test_add_func("/plot/heatmap/cells", test_heatmap);
  g_test_add_func("/plot/pareto/blocks", test_pareto);
  g_test_add_func("/plot/scaling/series", test_scaling);
  g_test_add_func("/plot/sweep-csv/errors", test_sweep_csv_errors);
  g_test_add_func("/plot/validation/csv", test_validation);
  g_test_add_func("/plot/default-figures/png", test_default_figures);
  g_test_add_func("/plot/default-figures/no-gnuplot", test_default_figures_no_gnuplot);
  g_test_add_func("/plot/gnuplot/missing", test_no_gnuplot);
  g_test_add_func("/plot/gnuplot/fails", test_gnuplot_fails);
  g_test_add_func("/plot/gnuplot/writes-nothing", test_gnuplot_writes_nothing);
  return g_test_run();
}
