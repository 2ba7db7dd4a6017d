/* fuzz_run_csv.c — a measured-runs CSV (run_csv.c): RFC 4180 quoting,
 * typed columns, approximate numbers. */
#include "fuzz_common.h"
#include "run_csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > FUZZ_MAX_INPUT) return 0;
  g_autoptr(GError) error = NULL;
  g_autoptr(PtsimRunCsv) csv = ptsim_run_csv_parse((const char *)data, size, "fuzz.csv", &error);
  g_assert_true((csv == NULL) == (error != NULL));
  return 0;
}
