/* fuzz_megatron_log.c — a Megatron-LM training log (megatron_log.c): the
 * arguments block, iteration and memory lines, OOM errors; then the job its
 * arguments block gives. */
#include "fuzz_common.h"
#include "fuzz_job.h"
#include "megatron_log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > FUZZ_MAX_INPUT) return 0;
  g_autoptr(PtsimMegatronLog) log = ptsim_megatron_log_parse((const char *)data, size, "fuzz.log");
  if (!log || !log->args_ok) return 0;
  PtsimJob job;
  memset(&job, 0, sizeof job);
  job.model = log->model;
  job.layout = log->layout;
  fuzz_job_exercise(&job);
  return 0;
}
