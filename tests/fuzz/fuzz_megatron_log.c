/* fuzz_megatron_log.c — a Megatron-LM training log (megatron_log.c): the
 * arguments block, iteration and memory lines, OOM errors; then the job its
 * arguments block gives, on the Megatron-LM release the block dates
 * (megatron_log_date.c), as validate runs it.  Every measured value the
 * parser keeps is finite and in its range (others are its value_error),
 * and one input is read within the time bound. */
#include "fuzz_common.h"
#include "fuzz_job.h"
#include "megatron_log.h"
#include "megatron_log_date.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > FUZZ_MAX_INPUT) return 0;
  fuzz_time_start();
  g_autoptr(PtsimMegatronLog) log = ptsim_megatron_log_parse((const char *)data, size, "fuzz.log");
  fuzz_time_check("megatron_log");
  for (guint i = 0; i < log->iterations->len; i++) {
    const PtsimLogIteration *it = &g_array_index(log->iterations, PtsimLogIteration, i);
    fuzz_check_measured("elapsed_ms", it->elapsed_ms, 1e-300, 1e9);
    fuzz_check_measured("tflops_per_gpu", it->tflops_per_gpu, 0.0, 1e5);
  }
  for (guint i = 0; i < log->memory->len; i++) {
    const PtsimLogMemory *m = &g_array_index(log->memory, PtsimLogMemory, i);
    fuzz_check_measured("allocated_mb", m->allocated_mb, 0.0, 1e9);
    fuzz_check_measured("max_allocated_mb", m->max_allocated_mb, 0.0, 1e9);
    fuzz_check_measured("reserved_mb", m->reserved_mb, 0.0, 1e9);
    fuzz_check_measured("max_reserved_mb", m->max_reserved_mb, 0.0, 1e9);
  }
  if (!log || !log->args_ok) return 0;
  PtsimJob job = log->job; /* its hw zero: fuzz_job_exercise loads one */
  int32_t before = 0;
  job.source.megatron_date = ptsim_megatron_log_date(log, &before);
  /* a date the job takes: 0 (current) or a real YYYYMMDD before the bound */
  int32_t d = job.source.megatron_date;
  g_assert(d == 0 || (d / 10000 >= 2019 && d / 100 % 100 >= 1 && d / 100 % 100 <= 12 &&
                      d % 100 >= 1 && d % 100 <= 31));
  g_assert(before == 0 || d < before);
  fuzz_job_exercise(&job);
  return 0;
}
