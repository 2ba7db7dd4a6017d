/* fuzz_error_bands.c — an error-bands file (error_bands.c: validate/
 * error_bands.ini as predict and sweep read it) looked up for a dense fp8
 * job on H100, a bf16 job on A100 and an MoE job: a band it finds must be
 * a real one (finite, in range, from at least one run). */
static void load_jobs(void);
#define FUZZ_TARGET_INIT load_jobs()
#include "fuzz_common.h"
#include "config.h"
#include "error_bands.h"
#include "job_validate.h"

static PtsimJob jobs[3];

static void load_job(PtsimJob *job, const char *model, const char *hw, PtsimPrecision precision) {
  memset(job, 0, sizeof *job);
  g_assert(ptsim_model_load(model, &job->model, NULL));
  g_assert(ptsim_hardware_load(hw, &job->hw, NULL));
  ptsim_job_init_defaults(job);
  job->layout.gpus = 8;
  job->layout.gbs = 64;
  job->layout.seq = 4096;
  job->settings.precision = precision;
}

static void load_jobs(void) {
  load_job(&jobs[0], "llama3-8b", "h100-80g", PTSIM_PRECISION_FP8);
  load_job(&jobs[1], "llama2-7b", "a100-80g", PTSIM_PRECISION_BF16);
  load_job(&jobs[2], "mixtral-8x7b", "h100-80g", PTSIM_PRECISION_FP8);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > FUZZ_MAX_INPUT) return 0;
  for (size_t i = 0; i < G_N_ELEMENTS(jobs); i++) {
    PtsimErrorBand band;
    ptsim_error_band_lookup_data(&jobs[i], (const char *)data, size, &band);
    g_assert(memchr(band.note, '\0', sizeof band.note) != NULL);
    if (!band.found) continue;
    g_assert(band.mean_abs_error >= 0.0 && band.mean_abs_error <= 10.0);
    g_assert(band.max_abs_error >= 0.0 && band.max_abs_error <= 10.0);
    g_assert(band.bias >= -10.0 && band.bias <= 10.0);
    g_assert(band.runs >= 1);
  }
  return 0;
}
