/* fuzz_megatron_args_file.c — a launch-script file as --megatron-args-file
 * reads it (continuations, comments, the capped reader), then the job. */
#include "fuzz_common.h"
#include "fuzz_job.h"
#include "megatron_args.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > FUZZ_MAX_INPUT) return 0;
  g_autofree char *path = fuzz_write_file("args.sh", data, size);
  PtsimJob job;
  memset(&job, 0, sizeof job);
  g_autoptr(PtsimMegatronDiagnostics) diag = ptsim_megatron_diagnostics_new();
  g_autoptr(GError) error = NULL;
  if (!ptsim_megatron_args_parse_file(path, &job, diag, &error)) return 0;
  fuzz_job_exercise(&job);
  return 0;
}
