/* test_plot.c — the gnuplot figure writers (sim/plot.c).
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
#include "simulate.h"

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
  g_autofree char *fig_q = g_strdup_printf("set output '%s'", fig);
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
  ptsim_memory_estimate(&job, PTSIM_CE_LAST_STAGE, m);
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
  g_assert_true(ptsim_simulate(&job, &trace, time, &error));
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
  ptsim_memory_estimate(&job, PTSIM_CE_LAST_STAGE, m);
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
  g_test_add_func("/plot/gnuplot/missing", test_no_gnuplot);
  g_test_add_func("/plot/gnuplot/fails", test_gnuplot_fails);
  g_test_add_func("/plot/gnuplot/writes-nothing", test_gnuplot_writes_nothing);
  return g_test_run();
}
