/* fuzz_model_ini.c — a model .ini (config.c), then the model checks and the
 * core's plan, memory estimate and workload of a one-GPU job on it: an
 * accepted model must be safe for everything downstream. */
#include "fuzz_common.h"
#include "config.h"
#include "fuzz_job.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > FUZZ_MAX_INPUT) return 0;
  PtsimJob job;
  memset(&job, 0, sizeof job);
  g_autoptr(GError) error = NULL;
  if (!ptsim_model_load_data((const char *)data, size, "fuzz.ini", &job.model, &error)) return 0;
  fuzz_job_exercise(&job);
  return 0;
}
