/* fuzz_hf_config.c — a Hugging Face config.json (sim/io/hf_config.c, over
 * json-glib), then the core's plan, memory estimate and workload of a
 * one-GPU job on the model: an accepted config must be safe for everything
 * downstream, and its warnings well formed. */
#include "fuzz_common.h"
#include "fuzz_job.h"
#include "hf_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > FUZZ_MAX_INPUT) return 0;
  PtsimJob job;
  memset(&job, 0, sizeof job);
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func(g_free);
  if (!ptsim_hf_config_parse((const char *)data, size, "fuzz/config.json", &job.model, warnings,
                             &error)) {
    g_assert_nonnull(error);
    return 0;
  }
  for (guint i = 0; i < warnings->len; i++)
    g_assert_true(g_str_has_prefix(warnings->pdata[i], "fuzz/config.json: "));
  fuzz_job_exercise(&job);
  return 0;
}
