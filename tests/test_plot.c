/* test_plot.c — the figures of one job (plots/plot_memory.c,
 * plot_timeline.c, plot_alloc.c), the options every figure shares (size,
 * window, stages; plots/plot.c) and what happens when gnuplot is missing
 * or fails.  The sweep and validation figures are in test_plot_sweep.c.
 *
 * Each test renders into its own g_dir_make_tmp folder and removes it, and
 * checks the data behind the figure (the .tsv rows, the values the .gp
 * draws) against the numbers the simulator computed, never pixels.  Jobs
 * come from the shipped models/ and hw_profiles/ (PTSIM_DATA_DIR, set by
 * ctest).  Tests that need gnuplot skip when it is not on PATH. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include "memory.h"
#include "plan_of.h"
#include "plot_cmd.h"
#include "plot_fixture.h"
#include "simulate.h"
#include "sweep.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* ---- options ---- */

static void test_size_parse(void) {
  g_test_summary("--size: the presets, W x H with a unit, and what is refused");
  PtsimPlotSize s;
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_plot_size_parse("column", &s, &error));
  g_assert_cmpfloat_with_epsilon(s.width_cm, 3.5 * 2.54, 1e-9);
  g_assert_cmpfloat(s.height_cm, ==, 0.0);
  g_assert_true(ptsim_plot_size_parse("page", &s, &error));
  g_assert_cmpfloat_with_epsilon(s.width_cm, 7.0 * 2.54, 1e-9);
  g_assert_true(ptsim_plot_size_parse("3.5x2.5in", &s, &error));
  g_assert_cmpfloat_with_epsilon(s.width_cm, 8.89, 1e-9);
  g_assert_cmpfloat_with_epsilon(s.height_cm, 6.35, 1e-9);
  g_assert_true(ptsim_plot_size_parse("12cm", &s, &error));
  g_assert_cmpfloat(s.width_cm, ==, 12.0);
  g_assert_cmpfloat(s.height_cm, ==, 0.0);
  g_assert_no_error(error);
  const char *bad[] = {"2x2mm",    "12",      "4cm",     "70cm",     "12x70cm",
                       "12x1cm",   "wide",    "x5cm",    "",         "nancm",
                       "12xinfcm", "1e999cm", "12x-4cm", "12x4x4cm", "0x10cm"};
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_assert_false(ptsim_plot_size_parse(bad[i], &s, &error));
    g_assert_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_OPTION);
    g_autofree char *quoted = g_strdup_printf("'%s'", bad[i]);
    g_assert_nonnull(strstr(error->message, quoted));
    g_clear_error(&error);
  }
}

static void test_range_parse(void) {
  g_test_summary("--window in s or ms, open-ended; --stages as numbers and ranges");
  PtsimPlotRange r;
  ptsim_plot_range_default(&r);
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_plot_range_parse_window("0:1.5", &r, &error));
  g_assert_cmpfloat(r.start_s, ==, 0.0);
  g_assert_cmpfloat(r.end_s, ==, 1.5);
  g_assert_true(ptsim_plot_range_parse_window("200ms:450ms", &r, &error));
  g_assert_cmpfloat_with_epsilon(r.start_s, 0.2, 1e-12);
  g_assert_cmpfloat_with_epsilon(r.end_s, 0.45, 1e-12);
  g_assert_true(ptsim_plot_range_parse_window("2.5:", &r, &error));
  g_assert_cmpfloat(r.start_s, ==, 2.5);
  g_assert_cmpfloat(r.end_s, ==, 0.0); /* to the end */
  g_assert_no_error(error);
  const char *bad_windows[] = {"3:1",   "1:1",   "1",     "a:b",    "-1:2", "1:2h",
                               "nan:1", "0:inf", "0x1:2", "1e999:", "ms:1"};
  for (size_t i = 0; i < G_N_ELEMENTS(bad_windows); i++) {
    g_assert_false(ptsim_plot_range_parse_window(bad_windows[i], &r, &error));
    g_assert_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_OPTION);
    g_clear_error(&error);
  }
  g_assert_true(ptsim_plot_range_parse_stages("0,2:3", 4, &r, &error));
  g_assert_true(r.stages_given);
  const guint8 want[4] = {1, 0, 1, 1};
  g_assert_cmpmem(r.stages, 4, want, 4);
  const char *bad_stages[] = {"0:4", "3:1", "-1", "a", "", "1,,2", "4", "0x1", "1:2:3", ":1", "1:"};
  for (size_t i = 0; i < G_N_ELEMENTS(bad_stages); i++) {
    g_assert_false(ptsim_plot_range_parse_stages(bad_stages[i], 4, &r, &error));
    g_assert_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_OPTION);
    g_assert_nonnull(strstr(error->message, "pp 4"));
    g_clear_error(&error);
  }
}

/* ---- memory ---- */

static void check_memory(const char *ext, PtsimPlotFormat format) {
  if (!have_gnuplot()) return;
  g_autofree char *dir = make_tmp();
  g_autofree char *name = g_strconcat("memory.", ext, NULL);
  g_autofree char *figure = g_build_filename(dir, name, NULL);
  PtsimJob job;
  resolve_job(&job, 8, 4, 128);
  g_autofree PtsimMemoryEstimate *m = g_new0(PtsimMemoryEstimate, 1);
  estimate_of(&job, PTSIM_CE_LAST_STAGE, m);
  g_auto(PtsimPlotFiles) files = {NULL, NULL, NULL};
  g_autoptr(GError) error = NULL;
  gboolean ok = ptsim_plot_memory(figure, &job, m, NULL, NULL, &files, &error);
  g_assert_no_error(error);
  g_assert_true(ok);
  g_assert_cmpstr(files.figure, ==, figure);
  assert_magic(files.figure, format);
  g_assert_cmpint(data_rows(files.data), ==, m->num_stages);
  g_assert_cmpint(m->num_stages, ==, 4);
  assert_script_relative(&files);
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

static void test_memory_data(void) {
  g_test_summary("memory: each stage's terms and the allocator's peak as the estimate and "
                 "the emulation say; the lines at capacity and threshold x capacity; the "
                 "'other' entry names its largest value; numbers only where a bar is wide");
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
  g_assert_true(ptsim_plot_memory(figure, &job, m, a, NULL, &files, &error));
  g_assert_no_error(error);
  g_autoptr(GPtrArray) rows = tsv_rows(files.data);
  g_assert_cmpuint(rows->len, ==, 4);
  double max_other = 0;
  for (guint s = 0; s < 4; s++) {
    const PtsimStageMemory *sm = &m->stages[s];
    g_assert_cmpfloat(cell(rows, s, 0), ==, s);
    g_assert_cmpfloat_with_epsilon(cell(rows, s, 2), sm->parameters_bytes / GIB, 1e-4);
    g_assert_cmpfloat_with_epsilon(cell(rows, s, 5), sm->activations_bytes / GIB, 1e-4);
    g_assert_cmpfloat_with_epsilon(cell(rows, s, 6), sm->other_bytes / GIB, 1e-4);
    g_assert_cmpfloat_with_epsilon(cell(rows, s, 7), sm->total_bytes / GIB, 1e-4);
    g_assert_cmpfloat_with_epsilon(cell(rows, s, 11), a->stages[s].device_peak_bytes / GIB, 1e-4);
    g_assert_cmpfloat(cell(rows, s, 12), ==, !a->stages[s].fits);
    max_other = MAX(max_other, sm->other_bytes / GIB);
  }
  g_assert_cmpfloat_with_epsilon(file_value(files.script, "capacity_gib = "),
                                 job.hw.memory_bytes / GIB, 1e-4);
  g_assert_cmpfloat_with_epsilon(file_value(files.script, "threshold = "),
                                 job.settings.memory_threshold, 1e-9);
  g_autofree char *other = g_strdup_printf("%.2f GiB)", max_other);
  g_assert_true(file_has(files.script, other));
  g_assert_true(file_has(files.script, "allocator peak + ctx/NCCL"));
  g_assert_cmpfloat(file_value(files.script, "show_values = "), ==, 1);
  g_assert_cmpfloat(file_value(files.script, "xtic_every = "), ==, 1);
  ptsim_plot_files_clear(&files);

  /* 16 stages in a column: bars too thin for numbers, every other stage ticked */
  PtsimJobOptions o;
  ptsim_job_options_init(&o);
  o.model = g_strdup("llama3-70b");
  o.gpus = (PtsimOptionInt){TRUE, 128};
  o.tp = (PtsimOptionInt){TRUE, 8};
  o.pp = (PtsimOptionInt){TRUE, 16};
  o.gbs = (PtsimOptionInt){TRUE, 64};
  PtsimJob deep;
  resolve_job_opts(&o, &deep);
  estimate_of(&deep, PTSIM_CE_LAST_STAGE, m);
  PtsimPlotSize column;
  g_assert_true(ptsim_plot_size_parse("column", &column, &error));
  g_assert_true(ptsim_plot_memory(figure, &deep, m, NULL, &column, &files, &error));
  g_assert_no_error(error);
  g_assert_cmpint(data_rows(files.data), ==, 16);
  g_assert_cmpfloat(file_value(files.script, "show_values = "), ==, 0);
  g_assert_cmpfloat(file_value(files.script, "xtic_every = "), >, 1);
  g_assert_cmpfloat_with_epsilon(file_value(files.script, "width_cm = "), 8.89, 1e-3);
  remove_tree(dir);
}

/* ---- timeline ---- */

/* The timeline's rows: stage band lane kind kind_id microbatch chunk start
 * end label share_lo share_hi. */
enum {
  T_STAGE,
  T_BAND,
  T_LANE,
  T_KIND,
  T_KIND_ID,
  T_MB,
  T_CHUNK,
  T_START,
  T_END,
  T_LABEL,
  T_LO,
  T_HI
};

typedef struct {
  PtsimTimeResult *time;
  PtsimTrace trace;
} Sim;

static void simulate_job(const PtsimJob *job, Sim *sim) {
  sim->time = g_new0(PtsimTimeResult, 1);
  memset(&sim->trace, 0, sizeof sim->trace);
  g_autoptr(GError) error = NULL;
  g_assert_true(simulate_of(job, &sim->trace, sim->time, &error));
  g_assert_no_error(error);
}

static void sim_clear(Sim *sim) {
  ptsim_simulate_trace_clear(&sim->trace);
  g_free(sim->time);
}

static void check_timeline(const char *ext, PtsimPlotFormat format, gint64 gpus) {
  if (!have_gnuplot()) return;
  g_autofree char *dir = make_tmp();
  g_autofree char *name = g_strconcat("timeline.", ext, NULL);
  g_autofree char *figure = g_build_filename(dir, name, NULL);
  PtsimJob job;
  resolve_job(&job, gpus, 4, 16);
  Sim sim;
  simulate_job(&job, &sim);
  g_auto(PtsimPlotFiles) files = {NULL, NULL, NULL};
  g_autoptr(GError) error = NULL;
  gboolean ok = ptsim_plot_timeline(figure, &job, sim.time, &sim.trace, NULL, NULL, &files, &error);
  g_assert_no_error(error);
  g_assert_true(ok);
  assert_magic(files.figure, format);
  g_assert_cmpint(data_rows(files.data), ==, sim.trace.count);
  assert_script_relative(&files);
  sim_clear(&sim);
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
  g_assert_false(ptsim_plot_timeline(figure, &job, &time, &trace, NULL, NULL, NULL, &error));
  g_assert_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_DATA);
  g_autofree char *tsv = g_build_filename(dir, "t.tsv", NULL);
  g_assert_false(g_file_test(tsv, G_FILE_TEST_EXISTS));
  remove_tree(dir);
}

static void test_timeline_boxes(void) {
  g_test_summary("timeline of a 1-GPU job: one box per record at the record's times, each "
                 "forward and backward numbered, the whole lane high");
  if (!have_gnuplot()) return;
  g_autofree char *dir = make_tmp();
  g_autofree char *figure = g_build_filename(dir, "t.png", NULL);
  PtsimJobOptions o;
  ptsim_job_options_init(&o);
  o.gpus = (PtsimOptionInt){TRUE, 1};
  o.gbs = (PtsimOptionInt){TRUE, 8};
  o.seq = (PtsimOptionInt){TRUE, 4096};
  PtsimJob job;
  resolve_job_opts(&o, &job);
  Sim sim;
  simulate_job(&job, &sim);
  g_auto(PtsimPlotFiles) files = {NULL, NULL, NULL};
  g_autoptr(GError) error = NULL;
  g_assert_true(
      ptsim_plot_timeline(figure, &job, sim.time, &sim.trace, NULL, NULL, &files, &error));
  g_assert_no_error(error);
  g_assert_true(file_has(files.data, "# mode boxes"));
  g_autoptr(GPtrArray) rows = tsv_rows(files.data);
  g_assert_cmpuint(rows->len, ==, sim.trace.count);
  for (guint i = 0; i < rows->len; i++) {
    const PtsimTraceRecord *r = &sim.trace.records[i];
    g_assert_cmpfloat(cell(rows, i, T_KIND_ID), ==, r->kind);
    g_assert_cmpfloat(cell(rows, i, T_MB), ==, r->microbatch);
    g_assert_cmpfloat_with_epsilon(cell(rows, i, T_START), r->start_ns * 1e-9, 1e-9);
    g_assert_cmpfloat_with_epsilon(cell(rows, i, T_END), r->end_ns * 1e-9, 1e-9);
    g_assert_cmpfloat(cell(rows, i, T_LO), ==, 0.0);
    g_assert_cmpfloat(cell(rows, i, T_HI), ==, 1.0);
    /* 8 microbatches over 7 inches: every forward and backward has room */
    g_assert_cmpfloat(cell(rows, i, T_LABEL), ==, r->microbatch >= 0 && r->kind <= 1);
  }
  sim_clear(&sim);
  remove_tree(dir);
}

static void test_timeline_window_stages(void) {
  g_test_summary("timeline --window 0.1:0.3 --stages 0,2: exactly the records of stages 0 and "
                 "2 that overlap the window, cut to it, in bands 0 and 1");
  if (!have_gnuplot()) return;
  g_autofree char *dir = make_tmp();
  g_autofree char *figure = g_build_filename(dir, "t.svg", NULL);
  PtsimJob job;
  resolve_job(&job, 4, 4, 16);
  Sim sim;
  simulate_job(&job, &sim);
  PtsimPlotRange range;
  ptsim_plot_range_default(&range);
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_plot_range_parse_window("0.1:0.3", &range, &error));
  g_assert_true(ptsim_plot_range_parse_stages("0,2", 4, &range, &error));
  g_auto(PtsimPlotFiles) files = {NULL, NULL, NULL};
  g_assert_true(
      ptsim_plot_timeline(figure, &job, sim.time, &sim.trace, NULL, &range, &files, &error));
  g_assert_no_error(error);
  guint want = 0;
  for (gint64 i = 0; i < sim.trace.count; i++) {
    const PtsimTraceRecord *r = &sim.trace.records[i];
    want += (r->stage == 0 || r->stage == 2) && r->end_ns * 1e-9 >= 0.1 &&
            r->start_ns * 1e-9 <= 0.3;
  }
  g_autoptr(GPtrArray) rows = tsv_rows(files.data);
  g_assert_cmpuint(want, >, 0);
  g_assert_cmpuint(rows->len, ==, want);
  for (guint i = 0; i < rows->len; i++) {
    double stage = cell(rows, i, T_STAGE);
    g_assert_true(stage == 0 || stage == 2);
    g_assert_cmpfloat(cell(rows, i, T_BAND), ==, stage / 2);
    g_assert_cmpfloat(cell(rows, i, T_START), >=, 0.1);
    g_assert_cmpfloat(cell(rows, i, T_END), <=, 0.3);
  }
  /* a window after the step is refused, nothing written */
  g_assert_true(ptsim_plot_range_parse_window("100:", &range, &error));
  g_autofree char *late = g_build_filename(dir, "late.png", NULL);
  g_assert_false(ptsim_plot_timeline(late, &job, sim.time, &sim.trace, NULL, &range, NULL, &error));
  g_assert_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_OPTION);
  g_autofree char *late_tsv = g_build_filename(dir, "late.tsv", NULL);
  g_assert_false(g_file_test(late_tsv, G_FILE_TEST_EXISTS));
  sim_clear(&sim);
  remove_tree(dir);
}

/* Seconds each stage's compute lane was busy in the engine's trace. */
static void busy_per_stage(const PtsimTrace *t, double *busy, int64_t pp) {
  for (int64_t s = 0; s < pp; s++) busy[s] = 0;
  for (gint64 i = 0; i < t->count; i++)
    if (t->records[i].kind <= PTSIM_TRACE_BACKWARD_WEIGHT ||
        t->records[i].kind == PTSIM_TRACE_OPTIMIZER)
      busy[t->records[i].stage] += (t->records[i].end_ns - t->records[i].start_ns) * 1e-9;
}

static void test_timeline_bins(void) {
  g_test_summary("timeline of 512 microbatches in a column: bins whose shares add up to each "
                 "stage's busy time (to a 32nd of a bin each), never more than the lane");
  if (!have_gnuplot()) return;
  g_autofree char *dir = make_tmp();
  g_autofree char *figure = g_build_filename(dir, "t.pdf", NULL);
  PtsimJob job;
  resolve_job(&job, 4, 4, 512);
  Sim sim;
  simulate_job(&job, &sim);
  PtsimPlotSize column;
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_plot_size_parse("column", &column, &error));
  g_auto(PtsimPlotFiles) files = {NULL, NULL, NULL};
  g_assert_true(
      ptsim_plot_timeline(figure, &job, sim.time, &sim.trace, &column, NULL, &files, &error));
  g_assert_no_error(error);
  g_assert_true(file_has(files.data, "# mode bins"));
  g_autoptr(GPtrArray) rows = tsv_rows(files.data);
  g_assert_cmpuint(rows->len, <, (guint)sim.trace.count / 4); /* far fewer boxes */
  double busy[4], drawn[4] = {0, 0, 0, 0}, span = 0;
  busy_per_stage(&sim.trace, busy, 4);
  for (guint i = 0; i < rows->len; i++) {
    g_assert_cmpfloat(cell(rows, i, T_MB), ==, -1);
    g_assert_cmpfloat(cell(rows, i, T_LO), <, cell(rows, i, T_HI));
    g_assert_cmpfloat(cell(rows, i, T_HI), <=, 1.0);
    span = MAX(span, cell(rows, i, T_END));
    if (cell(rows, i, T_LANE) == 0)
      drawn[(int)cell(rows, i, T_STAGE)] += (cell(rows, i, T_HI) - cell(rows, i, T_LO)) *
                                            (cell(rows, i, T_END) - cell(rows, i, T_START));
  }
  /* bins are 1.5 pt of a ~6.8 cm lane: about 130 of them; each share is
   * rounded to a 16th, so a stage is off by at most half a 16th per bin */
  for (int s = 0; s < 4; s++) g_assert_cmpfloat(fabs(drawn[s] - busy[s]), <=, span / 32.0);
  sim_clear(&sim);
  remove_tree(dir);
}

static void test_timeline_deep(void) {
  g_test_summary("a 32-stage pipeline in a column: 16 bands, the first and the last stage "
                 "among them, evenly spaced");
  if (!have_gnuplot()) return;
  g_autofree char *dir = make_tmp();
  g_autofree char *figure = g_build_filename(dir, "t.png", NULL);
  PtsimJobOptions o;
  ptsim_job_options_init(&o);
  o.model = g_strdup("gpt3-175b");
  o.gpus = (PtsimOptionInt){TRUE, 256};
  o.tp = (PtsimOptionInt){TRUE, 8};
  o.pp = (PtsimOptionInt){TRUE, 32};
  o.gbs = (PtsimOptionInt){TRUE, 64};
  o.seq = (PtsimOptionInt){TRUE, 2048};
  PtsimJob job;
  resolve_job_opts(&o, &job);
  Sim sim;
  simulate_job(&job, &sim);
  PtsimPlotSize column;
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_plot_size_parse("column", &column, &error));
  g_auto(PtsimPlotFiles) files = {NULL, NULL, NULL};
  g_assert_true(
      ptsim_plot_timeline(figure, &job, sim.time, &sim.trace, &column, NULL, &files, &error));
  g_assert_no_error(error);
  g_autoptr(GPtrArray) rows = tsv_rows(files.data);
  gboolean stage_seen[32] = {FALSE};
  int bands = 0;
  double band_of[32];
  for (guint i = 0; i < rows->len; i++) {
    int s = (int)cell(rows, i, T_STAGE);
    if (!stage_seen[s]) bands++;
    stage_seen[s] = TRUE;
    band_of[s] = cell(rows, i, T_BAND);
  }
  g_assert_cmpint(bands, ==, 16);
  g_assert_true(stage_seen[0] && stage_seen[31]);
  g_assert_cmpfloat(band_of[0], ==, 0);
  g_assert_cmpfloat(band_of[31], ==, 15);
  g_assert_true(file_has(files.script, "16 of 32 stages"));
  sim_clear(&sim);
  remove_tree(dir);
}

/* ---- allocator ---- */

static void test_allocator(void) {
  g_test_summary("allocator: one row per sample of the last step plus one carried per stage; "
                 "--from the same TSV gives the same data; the limit is capacity - outside");
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
  g_assert_true(ptsim_plot_allocator(figure, &job, timeline, NULL, NULL, &files, &error));
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
  g_assert_cmpfloat_with_epsilon(file_value(files.script, "limit_gib = "),
                                 (job.hw.memory_bytes - a->stages[0].outside_bytes) / GIB, 1e-4);
  assert_script_relative(&files);
  remove_tree(dir);
}

static void test_allocator_bins(void) {
  g_test_summary("allocator with 256 microbatches in a column: the samples fold into bins; "
                 "the band's top reaches the step's highest allocation and its bottom the "
                 "lowest, allocated <= reserved in every bin");
  if (!have_gnuplot()) return;
  g_autofree char *dir = make_tmp();
  g_autofree char *timeline = g_build_filename(dir, "timeline.tsv", NULL);
  g_autofree char *figure = g_build_filename(dir, "alloc.png", NULL);
  PtsimJobOptions o;
  ptsim_job_options_init(&o);
  o.model = g_strdup("mcore-gpt-1.7b"); /* small enough not to run out of memory */
  o.gpus = (PtsimOptionInt){TRUE, 2};
  o.pp = (PtsimOptionInt){TRUE, 2};
  o.gbs = (PtsimOptionInt){TRUE, 256};
  o.seq = (PtsimOptionInt){TRUE, 2048};
  PtsimJob job;
  resolve_job_opts(&o, &job);
  g_autofree PtsimTimeResult *time = g_new0(PtsimTimeResult, 1);
  g_autofree PtsimAllocResult *a = g_new0(PtsimAllocResult, 1);
  PtsimTrace trace = {NULL, 0, 0};
  g_autoptr(GError) error = NULL;
  g_assert_true(simulate_of(&job, &trace, time, &error));
  g_assert_true(simulate_allocator_of(&job, 2, NULL, &trace, time->step_s, timeline, a, &error));
  ptsim_simulate_trace_clear(&trace);
  PtsimPlotSize column;
  g_assert_true(ptsim_plot_size_parse("column", &column, &error));
  g_auto(PtsimPlotFiles) files = {NULL, NULL, NULL};
  g_assert_true(ptsim_plot_allocator(figure, &job, timeline, &column, NULL, &files, &error));
  g_assert_no_error(error);
  g_assert_true(file_has(files.data, "# panel 1: bins of"));
  /* the emulator's samples of the last step, per stage */
  double hi[2] = {0, 0}, lo[2] = {G_MAXDOUBLE, G_MAXDOUBLE};
  g_autoptr(GPtrArray) raw = tsv_rows(timeline);
  for (guint i = 1; i < raw->len; i++) { /* row 0: the header */
    if (strcmp(cell_text(raw, i, 1), "1") != 0) continue;
    int s = (int)cell(raw, i, 0);
    hi[s] = MAX(hi[s], cell(raw, i, 3) / GIB);
    lo[s] = MIN(lo[s], cell(raw, i, 3) / GIB);
  }
  g_autoptr(GPtrArray) rows = tsv_rows(files.data);
  double top[2] = {0, 0}, bottom[2] = {G_MAXDOUBLE, G_MAXDOUBLE};
  for (guint i = 0; i < rows->len; i++) {
    int s = (int)cell(rows, i, 0);
    g_assert_cmpfloat(cell(rows, i, 2), <=, cell(rows, i, 3)); /* time <= until */
    g_assert_cmpfloat(cell(rows, i, 4), <=, cell(rows, i, 5));
    g_assert_cmpfloat(cell(rows, i, 5), <=, cell(rows, i, 6) + 1e-9);
    top[s] = MAX(top[s], cell(rows, i, 5));
    bottom[s] = MIN(bottom[s], cell(rows, i, 4));
  }
  g_assert_cmpuint(rows->len, <, raw->len / 2);
  for (int s = 0; s < 2; s++) {
    g_assert_cmpfloat_with_epsilon(top[s], hi[s], 1e-4);
    /* the value carried in from the previous step may be lower still */
    g_assert_cmpfloat(bottom[s], <=, lo[s] + 1e-4);
  }
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
      tsv,
      "# c\nstage\tstep\ttime_s\tallocated_bytes\treserved_bytes\n0\t0\t0\t1\t2\n"
      "5\t0\t0\t1\t2\n",
      -1, NULL));
  g_assert_false(ptsim_plot_allocator(figure, &job, tsv, NULL, NULL, NULL, &error));
  g_assert_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_INPUT);
  g_autofree char *where = g_strdup_printf("%s:4:", tsv);
  g_assert_nonnull(strstr(error->message, where));
  g_clear_error(&error);
  g_assert_true(g_file_set_contents(
      tsv, "stage\tstep\ttime_s\tallocated_bytes\treserved_bytes\n0\t0\tx\t1\t2\n", -1, NULL));
  g_assert_false(ptsim_plot_allocator(figure, &job, tsv, NULL, NULL, NULL, &error));
  g_assert_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_INPUT);
  g_free(where);
  where = g_strdup_printf("%s:2: column time_s", tsv);
  g_assert_nonnull(strstr(error->message, where));
  remove_tree(dir);
}

/* ---- the default job's figures ---- */

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
  gboolean ok = ptsim_plot_memory(figure, &job, m, NULL, NULL, NULL, error);
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
  g_assert_true(
      g_file_set_contents(fake, "#!/bin/sh\necho 'line 7: broken script' >&2\nexit 3\n", -1, NULL));
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
  g_test_add_func("/plot/size/parse", test_size_parse);
  g_test_add_func("/plot/range/parse", test_range_parse);
  g_test_add_func("/plot/memory/png", test_memory_png);
  g_test_add_func("/plot/memory/pdf", test_memory_pdf);
  g_test_add_func("/plot/memory/svg", test_memory_svg);
  g_test_add_func("/plot/memory/data", test_memory_data);
  g_test_add_func("/plot/timeline/png", test_timeline_png);
  g_test_add_func("/plot/timeline/pdf-dp-lane", test_timeline_pdf_dp);
  g_test_add_func("/plot/timeline/svg", test_timeline_svg);
  g_test_add_func("/plot/timeline/empty-trace", test_timeline_empty_trace);
  g_test_add_func("/plot/timeline/boxes", test_timeline_boxes);
  g_test_add_func("/plot/timeline/window-stages", test_timeline_window_stages);
  g_test_add_func("/plot/timeline/bins", test_timeline_bins);
  g_test_add_func("/plot/timeline/deep-pipeline", test_timeline_deep);
  g_test_add_func("/plot/allocator/svg", test_allocator);
  g_test_add_func("/plot/allocator/bins", test_allocator_bins);
  g_test_add_func("/plot/allocator/bad-input", test_allocator_bad_input);
  g_test_add_func("/plot/default-figures/png", test_default_figures);
  g_test_add_func("/plot/default-figures/no-gnuplot", test_default_figures_no_gnuplot);
  g_test_add_func("/plot/gnuplot/missing", test_no_gnuplot);
  g_test_add_func("/plot/gnuplot/fails", test_gnuplot_fails);
  g_test_add_func("/plot/gnuplot/writes-nothing", test_gnuplot_writes_nothing);
  return g_test_run();
}
