/* fuzz_hw_ini.c — a hardware profile .ini (config.c), then a small job on
 * it through the cost model and the step simulation: an accepted profile
 * must give finite, positive times. */
#include "fuzz_common.h"
#include "config.h"
#include "fuzz_job.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > FUZZ_MAX_INPUT) return 0;
  PtsimJob job;
  memset(&job, 0, sizeof job);
  g_autoptr(GError) error = NULL;
  if (!ptsim_hardware_load_data((const char *)data, size, "fuzz.ini", &job.hw, &error)) return 0;
  fuzz_job_exercise(&job);
  return 0;
}
