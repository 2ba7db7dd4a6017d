/* fuzz_job_options.c — the job options every front end shares
 * (sim/io/job_options.c), the job built from them (job_build.c) and the
 * resolve and check behind it (job_resolve.c, job_validate.c): the input is
 * a command line, one argument per line (a final newline ends the last
 * line), read by ptsim_job_build_from_flags as `ptsim predict` reads the
 * same flags; an accepted job is then run as far as ptsim would
 * (fuzz_job.h). */
#include "cli_options.h"
#include "job_build.h"
#define FUZZ_TARGET_INIT ptsim_cli_init_locale()
#include "fuzz_common.h"
#include "fuzz_job.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4096) return 0;
  g_autofree char *text = g_strndup((const char *)data, size);
  g_auto(GStrv) lines = g_strsplit(text, "\n", 64);
  guint n = g_strv_length(lines);
  if (n > 0 && size > 0 && data[size - 1] == '\n' && lines[n - 1][0] == '\0') {
    g_free(lines[n - 1]);
    lines[--n] = NULL;
  }
  g_autoptr(GError) error = NULL;
  PtsimJob job;
  memset(&job, 0, sizeof job);
  if (ptsim_job_build_from_flags((const char *const *)lines, &job, NULL, &error))
    fuzz_job_exercise(&job);
  return 0;
}
