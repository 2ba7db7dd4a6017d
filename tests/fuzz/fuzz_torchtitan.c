/* fuzz_torchtitan.c — a torchtitan job config (.toml: sim/io/toml.c, then
 * sim/io/torchtitan.c's mapping) and the job it gives.  Written before the
 * reader reached this branch: until sim/io/torchtitan.h is in the tree the
 * target accepts every input and tests nothing. */
#include "fuzz_common.h"

#if defined(__has_include) && __has_include("torchtitan.h")
#include "config.h"
#include "fuzz_job.h"
#include "toml.h"
#include "torchtitan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > FUZZ_MAX_INPUT) return 0;
  g_autoptr(GError) error = NULL;
  g_autoptr(PtsimToml) toml = ptsim_toml_parse("fuzz.toml", (const char *)data, size, &error);
  if (!toml) return 0;
  PtsimTorchtitan tt;
  memset(&tt, 0, sizeof tt);
  g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func(g_free);
  if (!ptsim_torchtitan_parse(toml, 8, &tt, warnings, &error)) return 0;
  PtsimJob job;
  memset(&job, 0, sizeof job);
  g_assert(ptsim_hardware_load("h100-80g", &job.hw, NULL));
  if (!ptsim_torchtitan_job(&tt, &job, &error)) return 0;
  fuzz_job_exercise(&job);
  return 0;
}
#else
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  (void)data;
  (void)size;
  return 0;
}
#endif
