/* plot_fixture.h — what the figure tests (test_plot.c, test_plot_sweep.c)
 * share: a temporary folder per test, gnuplot's presence, the figure's
 * magic bytes, and readers of the .tsv/.gp a figure leaves (its data rows,
 * blocks, '#' comments) so tests check the numbers behind a figure, never
 * its pixels.  Header-only. */
#ifndef PTSIM_TEST_PLOT_FIXTURE_H
#define PTSIM_TEST_PLOT_FIXTURE_H

#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include "job_build.h"
#include "plot.h"
#include "sweep.h"

static inline gboolean have_gnuplot(void) {
  g_autofree char *path = g_find_program_in_path("gnuplot");
  if (!path) g_test_skip("gnuplot is not on PATH");
  return path != NULL;
}

static inline void remove_tree(const char *dir) {
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

static inline char *make_tmp(void) {
  g_autoptr(GError) error = NULL;
  char *dir = g_dir_make_tmp("ptsim-plot-XXXXXX", &error);
  g_assert_no_error(error);
  return dir;
}

/* A job from the shipped models and profiles, resolved as the commands do. */
static inline void resolve_job_opts(PtsimJobOptions *opts, PtsimJob *job) {
  g_autoptr(GError) error = NULL;
  gboolean ok = ptsim_job_build(opts, job, NULL, &error);
  ptsim_job_options_clear(opts);
  g_assert_no_error(error);
  g_assert_true(ok);
}

static inline void resolve_job(PtsimJob *job, gint64 gpus, gint64 pp, gint64 gbs) {
  PtsimJobOptions opts;
  ptsim_job_options_init(&opts);
  opts.gpus = (PtsimOptionInt){TRUE, gpus};
  opts.pp = (PtsimOptionInt){TRUE, pp};
  opts.gbs = (PtsimOptionInt){TRUE, gbs};
  resolve_job_opts(&opts, job);
}

/* The figure starts with the bytes its format promises. */
static inline void assert_magic(const char *path, PtsimPlotFormat format) {
  g_autofree char *contents = NULL;
  gsize len = 0;
  g_autoptr(GError) error = NULL;
  g_assert_true(g_file_get_contents(path, &contents, &len, &error));
  g_assert_no_error(error);
  g_assert_cmpuint(len, >, 100);
  switch (format) {
  case PTSIM_PLOT_PDF:
    g_assert_cmpmem(contents, 4, "%PDF", 4);
    break;
  case PTSIM_PLOT_PNG:
    g_assert_cmpmem(contents, 4, "\x89PNG", 4);
    break;
  case PTSIM_PLOT_SVG:
    g_assert_nonnull(g_strstr_len(contents, (gssize)len, "<svg"));
    break;
  }
}

/* The data rows of a .tsv (not comments, not blank), split at tabs, with
 * the block each is in (blocks are separated by two blank lines).
 * (transfer full) (element-type GStrv) */
static inline GPtrArray *tsv_rows_of_block(const char *path, int want_block) {
  g_autofree char *contents = NULL;
  g_assert_true(g_file_get_contents(path, &contents, NULL, NULL));
  g_auto(GStrv) lines = g_strsplit(contents, "\n", -1);
  GPtrArray *rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
  int block = 0, blanks = 0;
  for (char **l = lines; *l; l++) {
    if (!**l) {
      if (++blanks == 2) block++;
      continue;
    }
    blanks = 0;
    if (**l != '#' && (want_block < 0 || block == want_block))
      g_ptr_array_add(rows, g_strsplit(*l, "\t", -1));
  }
  return rows;
}

static inline GPtrArray *tsv_rows(const char *path) { return tsv_rows_of_block(path, -1); }

static inline gint64 data_rows(const char *path) {
  g_autoptr(GPtrArray) rows = tsv_rows(path);
  return rows->len;
}

/* Cell `col` of data row `row` as a number. */
static inline double cell(GPtrArray *rows, guint row, int col) {
  g_assert_cmpuint(row, <, rows->len);
  char **cells = g_ptr_array_index(rows, row);
  g_assert_cmpint(col, <, (int)g_strv_length(cells));
  return g_ascii_strtod(cells[col], NULL);
}

static inline const char *cell_text(GPtrArray *rows, guint row, int col) {
  char **cells = g_ptr_array_index(rows, row);
  g_assert_cmpint(col, <, (int)g_strv_length(cells));
  return cells[col];
}

/* The number after "KEY " in the first '#'/gnuplot line starting with
 * `prefix` (e.g. "# threshold" or "capacity_gib =" ), or NAN. */
static inline double file_value(const char *path, const char *prefix) {
  g_autofree char *contents = NULL;
  g_assert_true(g_file_get_contents(path, &contents, NULL, NULL));
  g_auto(GStrv) lines = g_strsplit(contents, "\n", -1);
  for (char **l = lines; *l; l++)
    if (g_str_has_prefix(*l, prefix)) return g_ascii_strtod(*l + strlen(prefix), NULL);
  return NAN;
}

static inline gboolean file_has(const char *path, const char *text) {
  g_autofree char *contents = NULL;
  g_assert_true(g_file_get_contents(path, &contents, NULL, NULL));
  return strstr(contents, text) != NULL;
}

/* The script names its data and figure by bare file name (so it reruns
 * from its own folder). */
static inline void assert_script_relative(const PtsimPlotFiles *files) {
  g_autofree char *data = g_path_get_basename(files->data);
  g_autofree char *fig = g_path_get_basename(files->figure);
  g_autofree char *data_q = g_strdup_printf("data = '%s'", data);
  g_autofree char *fig_q =
      g_strdup_printf("set output (exists('ptsim_output') ? ptsim_output : '%s')", fig);
  g_assert_true(file_has(files->script, data_q));
  g_assert_true(file_has(files->script, fig_q));
  g_autofree char *dir = g_path_get_dirname(files->figure);
  g_assert_false(file_has(files->script, dir));
}

/* ---- sweeps ---- */

/* An evaluated sweep of one scenario (llama3-8b on `gpus` x h100-80g) with
 * a small layout space, and its layouts in sweep order.  */
static inline PtsimSweep *small_sweep(const char *gpus_list, const char *hws) {
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

static inline GArray *identity_order(const PtsimSweep *sweep) {
  GArray *order = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint i = 0; i < sweep->jobs->len; i++) g_array_append_val(order, i);
  return order;
}

#endif /* PTSIM_TEST_PLOT_FIXTURE_H */
