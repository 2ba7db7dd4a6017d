/* fuzz_plot_tables.c — every table `ptsim plot` reads, through the figure
 * code up to the gnuplot script (gnuplot itself is never found here): the
 * first byte picks the table, the rest is the file.
 *   0: a sweep CSV (ptsim sweep --csv) -> heatmap, pareto, scaling
 *   1: a validation CSV (source,run,measured_s,predicted_s) -> validation
 *   2: an allocator timeline TSV (predict --memory-timeline) -> allocator */
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
  ptsim_layout_init_defaults(&job.layout);
  job.layout.gpus = 8;
  job.layout.pp = 4;
  job.layout.gbs = 16;
  job.layout.seq = 1024;
  g_assert(ptsim_job_validate(&job, NULL));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > FUZZ_MAX_INPUT) return 0;
  int kind = data[0] % 3;
  static const char *const names[] = {"sweep.csv", "runs.csv", "timeline.tsv"};
  g_autofree char *input = fuzz_write_file(names[kind], data + 1, size - 1);
  g_autofree char *figure = g_build_filename(fuzz_dir(), "figure.png", NULL);
  g_autoptr(GError) error = NULL;
  if (kind == 0) {
    g_autoptr(GArray) layouts = ptsim_plot_layouts_read_csv(input, &error);
    if (!layouts) return 0;
    g_autoptr(GError) e1 = NULL, e2 = NULL, e3 = NULL, e4 = NULL;
    ptsim_plot_heatmap(figure, layouts, PTSIM_PLOT_FACET_CP, input, NULL, &e1);
    ptsim_plot_heatmap(figure, layouts, PTSIM_PLOT_FACET_MBS, input, NULL, &e2);
    ptsim_plot_pareto(figure, layouts, input, NULL, &e3);
    ptsim_plot_scaling(figure, layouts, PTSIM_PLOT_Y_STEP, input, NULL, &e4);
  } else if (kind == 1) {
    ptsim_plot_validation(figure, input, NULL, &error);
  } else {
    ptsim_plot_allocator(figure, &job, input, NULL, &error);
  }
  return 0;
}
