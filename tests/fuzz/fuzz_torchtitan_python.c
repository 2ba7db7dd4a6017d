/* fuzz_torchtitan_python.c — a launch of torchtitan's Python configuration
 * form (sim/io/torchtitan_python.c: the shell reader, --module/--config and
 * the overrides, models/torchtitan/configs.toml), then sim/io/torchtitan.c's
 * mapping and the job it gives (fuzz_job.h). */
#include "fuzz_common.h"
#include "config.h"
#include "fuzz_job.h"
#include "torchtitan.h"
#include "torchtitan_python.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > FUZZ_MAX_INPUT) return 0;
  g_autoptr(GError) error = NULL;
  int64_t gpus = -1;
  g_autoptr(PtsimToml) toml = ptsim_torchtitan_python_parse("fuzz.sh", (const char *)data, size,
                                                            &gpus, NULL, &error);
  if (!toml) return 0;
  g_auto(PtsimTorchtitan) tt = {0};
  g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func(g_free);
  if (!ptsim_torchtitan_parse(toml, gpus > 0 && gpus <= 4096 ? gpus : 8, &tt, warnings, &error))
    return 0;
  PtsimJob job;
  memset(&job, 0, sizeof job);
  g_assert(ptsim_hardware_load("h100-80g", &job.hw, NULL));
  if (!ptsim_torchtitan_job(&tt, &job, &error)) return 0;
  fuzz_job_exercise(&job);
  return 0;
}
