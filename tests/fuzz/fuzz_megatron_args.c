/* fuzz_megatron_args.c — a Megatron-LM command line as --megatron-args
 * takes it (megatron_args.c), then the job it gives (fuzz_job.h). */
#include "fuzz_common.h"
#include "fuzz_job.h"
#include "megatron_args.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > FUZZ_MAX_INPUT) return 0;
  g_autofree char *text = g_strndup((const char *)data, size);
  PtsimJob job;
  memset(&job, 0, sizeof job);
  g_autoptr(PtsimMegatronDiagnostics) diag = ptsim_megatron_diagnostics_new();
  g_autoptr(GError) error = NULL;
  if (!ptsim_megatron_args_parse(text, &job, diag, &error)) return 0;
  fuzz_job_exercise(&job);
  return 0;
}
