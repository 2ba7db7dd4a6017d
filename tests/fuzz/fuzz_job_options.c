/* fuzz_job_options.c — the job options every command shares (cli_job.c)
 * and the validator behind them (job_validate.c): the input is a command
 * line, one argument per line, parsed by the same GOptionContext the
 * commands build; an accepted job is then run as far as ptsim would
 * (fuzz_job.h). */
#include "cli_job.h"
#include "cli_options.h"
#define FUZZ_TARGET_INIT ptsim_cli_init_locale()
#include "fuzz_common.h"
#include "fuzz_job.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4096) return 0;
  g_autofree char *text = g_strndup((const char *)data, size);
  g_auto(GStrv) lines = g_strsplit(text, "\n", 64);
  guint n = g_strv_length(lines);
  /* argv[0] is the command's name; GOption may reorder and drop entries, so
   * it gets a shallow copy and the strings stay owned by `lines`. */
  g_autofree char **argv = g_new0(char *, n + 2);
  argv[0] = "predict";
  for (guint i = 0; i < n; i++) argv[i + 1] = lines[i];
  int argc = (int)n + 1;
  char **args = argv;
  PtsimCliJob opts;
  ptsim_cli_job_init(&opts);
  g_autoptr(GOptionContext) context = g_option_context_new(NULL);
  g_option_context_set_help_enabled(context, FALSE);
  ptsim_cli_job_add_to_context(context, &opts, NULL);
  g_autoptr(GError) error = NULL;
  PtsimJob job;
  memset(&job, 0, sizeof job);
  if (ptsim_cli_parse_options(context, &argc, &args, &error) &&
      ptsim_cli_job_resolve(&opts, &job, NULL, &error))
    fuzz_job_exercise(&job);
  ptsim_cli_job_clear(&opts);
  return 0;
}
