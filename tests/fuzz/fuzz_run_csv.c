/* fuzz_run_csv.c — a measured-runs CSV (run_csv.c): RFC 4180 quoting,
 * typed columns, approximate numbers; every measured value it accepts is
 * finite and in its range, and one input is read within the time bound. */
#include "fuzz_common.h"
#include "run_csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > FUZZ_MAX_INPUT) return 0;
  g_autoptr(GError) error = NULL;
  fuzz_time_start();
  g_autoptr(PtsimRunCsv) csv = ptsim_run_csv_parse((const char *)data, size, "fuzz.csv", &error);
  fuzz_time_check("run_csv");
  g_assert_true((csv == NULL) == (error != NULL));
  for (guint i = 0; csv && i < csv->runs->len; i++) {
    const PtsimRun *r = &g_array_index(csv->runs, PtsimRun, i);
    fuzz_check_measured("step_time_s", r->step_time_s, 1e-300, 1e7);
    fuzz_check_measured("tflops_per_gpu", r->tflops_per_gpu, 0.0, 1e5);
    fuzz_check_measured("max_allocated_mb", r->max_allocated_mb, 0.0, 1e9);
    fuzz_check_measured("max_reserved_mb", r->max_reserved_mb, 0.0, 1e9);
  }
  return 0;
}
