/* fuzz_plot_tables.c — every table `ptsim plot` reads, through the figure
 * code up to the gnuplot script (gnuplot itself is never found here): the
 * first byte picks the table, the rest is the file.
 *   0: a sweep CSV (ptsim sweep --csv) -> heatmap, pareto, scaling
 *   1: a validation CSV (source,run,measured_s,predicted_s) -> validation
 *   2: an allocator timeline TSV (predict --memory-timeline) -> allocator
 *   3: the figure options, one a line: --size, --window, --stages (of a
 *      4-stage job) */
static void make_job(void);
#define FUZZ_TARGET_INIT make_job()
#include "fuzz_common.h"
#include "config.h"
#include "job_validate.h"
#include "plot.h"

static PtsimJob job; /* the allocator figure's job: 4 stages */

static void make_job(void) {
  memset(&job, 0, sizeof job);
  g_assert(ptsim_model_load("llama3-8b", &job.model, NULL));
  g_assert(ptsim_hardware_load("h100-80g", &job.hw, NULL));
  ptsim_job_init_defaults(&job);
  job.layout.gpus = 8;
  job.layout.pp = 4;
  job.layout.gbs = 16;
  job.layout.seq = 1024;
  g_assert(ptsim_job_validate(&job, NULL));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > FUZZ_MAX_INPUT) return 0;
  int kind = data[0] % 4;
  if (kind == 3) {
    g_autofree char *text = g_strndup((const char *)data + 1, size - 1);
    g_auto(GStrv) lines = g_strsplit(text, "\n", 3);
    PtsimPlotSize sz;
    PtsimPlotRange range;
    ptsim_plot_range_default(&range);
    g_autoptr(GError) e1 = NULL, e2 = NULL, e3 = NULL;
    for (guint i = 0; lines[i]; i++) {
      if (i == 0 && ptsim_plot_size_parse(lines[i], &sz, &e1))
        g_assert_true(sz.width_cm >= 5.0 && sz.width_cm <= 60.0 && sz.height_cm <= 60.0);
      if (i == 1 && ptsim_plot_range_parse_window(lines[i], &range, &e2))
        g_assert_true(range.start_s >= 0 && (range.end_s == 0 || range.end_s > range.start_s));
      if (i == 2) ptsim_plot_range_parse_stages(lines[i], 4, &range, &e3);
    }
    return 0;
  }
  static const char *const names[] = {"sweep.csv", "runs.csv", "timeline.tsv"};
  g_autofree char *input = fuzz_write_file(names[kind], data + 1, size - 1);
  g_autofree char *figure = g_build_filename(fuzz_dir(), "figure.png", NULL);
  g_autoptr(GError) error = NULL;
  if (kind == 0) {
    /* the sweep CSV: read and its three figures within the time bound,
     * every measured value finite and never negative */
    fuzz_time_start();
    g_autoptr(GArray) layouts = ptsim_plot_layouts_read_csv(input, &error);
    if (!layouts) return 0;
    for (guint i = 0; i < layouts->len; i++) {
      const PtsimPlotLayout *l = &g_array_index(layouts, PtsimPlotLayout, i);
      fuzz_check_measured("step_s", l->step_s, 0.0, G_MAXDOUBLE);
      fuzz_check_measured("tokens_per_s", l->tokens_per_s, 0.0, G_MAXDOUBLE);
      fuzz_check_measured("total_bytes", l->total_bytes, 0.0, G_MAXDOUBLE);
    }
    g_autoptr(GError) e1 = NULL, e2 = NULL, e3 = NULL, e4 = NULL;
    ptsim_plot_heatmap(figure, layouts, PTSIM_PLOT_FACET_CP, input, NULL, NULL, &e1);
    ptsim_plot_heatmap(figure, layouts, PTSIM_PLOT_FACET_MBS, input, NULL, NULL, &e2);
    ptsim_plot_pareto(figure, layouts, 0.0, input, NULL, NULL, &e3);
    ptsim_plot_scaling(figure, layouts, PTSIM_PLOT_Y_STEP, input, NULL, NULL, &e4);
    fuzz_time_check("plot_tables sweep CSV");
  } else if (kind == 1) {
    ptsim_plot_validation(figure, input, PTSIM_PLOT_VALIDATION_RESIDUAL, NULL, NULL, NULL, &error);
  } else {
    ptsim_plot_allocator(figure, &job, input, NULL, NULL, NULL, &error);
  }
  return 0;
}
