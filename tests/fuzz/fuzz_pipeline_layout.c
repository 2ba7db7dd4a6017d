/* fuzz_pipeline_layout.c — Megatron-LM's --pipeline-model-parallel-layout
 * string (sim/io/pipeline_layout.c): the first byte gives the pipeline
 * ranks (1 to 16, its low four bits) and the multi-token-prediction layers
 * (0 to 3, the next two), the second the transformer layers (1 to 256),
 * the rest is the layout.  Repeats "(...)*n" and "x*n" are unrolled, so their work
 * must stay bounded whatever the counts.  An accepted layout is applied to
 * a job of the tiny model with that many layers and run (fuzz_job.h), and
 * its string (ptsim_pipeline_layout_format) read back as the same virtual
 * stages. */
#include "fuzz_common.h"
#include "config.h"
#include "fuzz_job.h"
#include "pipeline_layout.h"
#include "plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2 || size > FUZZ_MAX_INPUT) return 0;
  int64_t pp = data[0] % 16 + 1, mtp = (data[0] >> 4) % 4, layers = data[1] + 1;
  g_autofree char *text = g_strndup((const char *)data + 2, size - 2);
  g_autoptr(GError) error = NULL;
  PtsimPipelineLayout p;
  if (!ptsim_pipeline_layout_parse(text, pp, layers, mtp, &p, &error)) {
    g_assert_nonnull(error);
    return 0;
  }
  g_assert_true(p.vp >= 1 && p.first_stage_layers >= 0 && p.last_stage_layers >= 0);
  g_assert_true(p.first_stage_layers <= layers && p.last_stage_layers <= layers);
  g_assert_true(p.runs >= 0 && p.runs <= PTSIM_LAYOUT_RUNS);
  int64_t stages = 0, sum = 0;
  for (int32_t r = 0; r < p.runs; r++) {
    g_assert_true(p.run_count[r] >= 1 && p.run_layers[r] >= 0);
    stages += p.run_count[r];
    sum += (int64_t)p.run_count[r] * p.run_layers[r];
  }
  g_assert_true(p.runs == 0 || (stages == pp * p.vp && sum == layers));
  PtsimJob job;
  memset(&job, 0, sizeof job);
  g_autofree char *tiny = g_build_filename(PTSIM_SOURCE_DIR, "tests", "data", "model_tiny.ini",
                                           NULL);
  g_assert(ptsim_model_load(tiny, &job.model, NULL));
  job.model.num_layers = layers;
  job.model.mtp_num_layers = mtp;
  ptsim_job_init_defaults(&job);
  job.layout.pp = pp;
  job.layout.gpus = pp;
  g_assert_true(ptsim_pipeline_layout_apply(text, layers, mtp, &job.layout, &error));
  g_assert_cmpint(ptsim_pipeline_layout_stages(text, NULL), ==, pp * p.vp);
  int32_t want[PTSIM_MAX_VSTAGES], got[PTSIM_MAX_VSTAGES];
  g_autofree char *again = ptsim_pipeline_layout_format(&job.layout, layers, mtp);
  if (again && ptsim_plan_split_vstages(&job.layout, layers, want) == 0) {
    PtsimLayout back = job.layout;
    g_assert_true(ptsim_pipeline_layout_apply(again, layers, mtp, &back, &error));
    g_assert_cmpint(ptsim_plan_split_vstages(&back, layers, got), ==, 0);
    g_assert_cmpint(memcmp(want, got, sizeof(int32_t) * (size_t)(pp * p.vp)), ==, 0);
    g_assert_cmpint(back.mtp_apart, ==, job.layout.mtp_apart); /* "...m|L" reads back apart */
  }
  fuzz_job_exercise(&job);
  return 0;
}
