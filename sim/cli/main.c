/* main.c — the ptsim command: subcommand dispatch, option parsing and exit
 * codes (0 ok, 2 bad input, 1 internal failure).  Everything a subcommand
 * computes lives in the library; this file only wires it to argv/stdout. */
#include <errno.h>
#include <ptsim.h>
#include <stdio.h>
#include <string.h>
#include "alloc_replay_cmd.h"
#include "api_int.h"
#include "calibrate_cmd.h"
#include "cli_job.h"
#include "cli_options.h"
#include "config.h"
#include "gpu.h"
#include "output.h"
#include "plot_cmd.h"
#include "prediction.h"
#include "sweep_cmd.h"
#include "validate_cmd.h"

#define EXIT_BAD_INPUT 2

typedef struct {
  const char *name;
  const char *summary;
  int (*run)(int argc, char **argv);
} Subcommand;

static int run_memory(int argc, char **argv);
static int run_predict(int argc, char **argv);

static const Subcommand subcommands[] = {
    {"memory", "the analytical per-stage memory estimate of one layout", run_memory},
    {"predict", "one layout: memory estimate, allocator emulation, simulated step time",
     run_predict},
    {"sweep", "every valid layout of one or more scenarios, ranked", ptsim_sweep_main},
    {"plot", "a gnuplot figure (memory, timeline, allocator, heatmap, pareto, scaling, validation)",
     ptsim_plot_main},
    {"calibrate", "a hardware profile with measured efficiency (from gemm_bench)",
     ptsim_calibrate_main},
    {"alloc-replay", "replay an allocator trace through the emulator; compare",
     ptsim_alloc_replay_main},
    {"validate", "predictions against measured runs (Megatron-LM logs, run CSVs)",
     ptsim_validate_main},
};

static void print_usage(FILE *to) {
  fprintf(to, "Usage: ptsim [COMMAND] [OPTIONS]\n\n"
              "Predicts per-GPU memory, allocator behaviour and step time of\n"
              "Megatron-style LLM training for a parallel layout.\n\n"
              "Commands:\n");
  for (size_t i = 0; i < G_N_ELEMENTS(subcommands); i++)
    fprintf(to, "  %-13s %s\n", subcommands[i].name, subcommands[i].summary);
  fprintf(to, "  (none)        the default job: a sweep of Llama-3-8B on one 8 x H100 node\n\n"
              "Options:\n"
              "  --help        this text; COMMAND --help for a command's options\n"
              "  --version     version, and whether a GPU path is compiled in and usable\n");
}

static int print_version(void) {
  g_autofree char *gpu = ptsim_gpu_describe();
  printf("ptsim %s\n%s\n", ptsim_api_version_string(), gpu);
  return 0;
}

/* Prints an error of the library (and the inputs' warnings before it);
 * its exit status. */
static int fail_api(const char *command, const PtsimApiError *error) {
  for (size_t i = 0; i < ptsim_api_error_diagnostic_count(error); i++)
    ptsim_cli_print_diagnostic(command, ptsim_api_error_diagnostic(error, i),
                               PTSIM_API_DIAGNOSTIC_INPUT);
  fprintf(stderr, "ptsim %s: %s\n", command, ptsim_api_error_message(error));
  return ptsim_api_error_exit_status(error);
}

static int fail(const char *command, const GError *error) {
  g_autoptr(PtsimApiError) e = ptsim_api_error_new(error, NULL);
  return fail_api(command, e);
}

/* memory and predict: the job's options (the library's table), --format,
 * and the prediction's own options (the library's table too). */
typedef struct {
  PtsimJobOptions job;
  PtsimPredictOptions predict;
  char *format;
} JobCommandOptions;

/* Reads the command line; *format, or an error. */
static gboolean parse_job_command(const char *command, int argc, char **argv,
                                  JobCommandOptions *opts, PtsimFormat *format, GError **error) {
  gboolean with_time = strcmp(command, "predict") == 0;
  const GOptionEntry entries[] = {{"format", 0, 0, G_OPTION_ARG_STRING, &opts->format,
                                   "text|json|csv (default text)", "F"},
                                  {NULL, 0, 0, 0, NULL, NULL, NULL}};
  g_autofree GOptionEntry *predict_entries = ptsim_predict_options_entries(&opts->predict,
                                                                           with_time);
  g_autofree char *title = g_strdup_printf(
      "- %s", with_time ? "one layout: memory estimate, allocator emulation, simulated step time"
                        : "the analytical per-stage memory estimate of one layout");
  g_autoptr(GOptionContext) context = g_option_context_new(title);
  ptsim_job_options_add_to_context(context, &opts->job, entries);
  g_option_context_add_main_entries(context, predict_entries, NULL);
  g_option_context_set_help_enabled(context, TRUE);
  if (!ptsim_options_parse(context, &argc, &argv, error)) return FALSE;
  if (argc > 1) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED,
                "unexpected argument '%s' (see --help)", argv[1]);
    return FALSE;
  }
  *format = PTSIM_FORMAT_TEXT;
  if (opts->format && !ptsim_format_parse(opts->format, format)) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                "--format '%s': allowed values are text|json|csv", opts->format);
    return FALSE;
  }
  PtsimCrossEntropyConvention ce;
  return ptsim_predict_options_ce(&opts->predict, &ce, error);
}

static void clear_job_command(JobCommandOptions *opts) {
  ptsim_job_options_clear(&opts->job);
  ptsim_predict_options_clear(&opts->predict);
  g_free(opts->format);
}

/* The job and its prediction through the library's API (ptsim.h): the
 * options parsed here go to the constructors that ptsim_api_job_new and
 * ptsim_api_predict / ptsim_api_memory end in; the JSON is the API's. */
static int run_job_command(const char *command, int argc, char **argv) {
  JobCommandOptions opts;
  memset(&opts, 0, sizeof opts);
  ptsim_job_options_init(&opts.job);
  ptsim_predict_options_init(&opts.predict);
  PtsimFormat format;
  g_autoptr(GError) error = NULL;
  g_autoptr(PtsimApiError) api_error = NULL;
  g_autoptr(PtsimApiJob) job = NULL;
  g_autoptr(PtsimApiResult) result = NULL;
  gboolean with_time = strcmp(command, "predict") == 0;
  int rc = 0;
  /* the words as typed (the parse takes them out of argv), for the
   * command lines of what would make a layout run */
  g_auto(GStrv) words = g_new0(char *, (gsize)argc);
  for (int i = 1; i < argc; i++) words[i - 1] = g_strdup(argv[i]);
  if (!parse_job_command(command, argc, argv, &opts, &format, &error))
    rc = fail(command, error);
  else if (!(job = ptsim_api_job_new_from_options(&opts.job, NULL, NULL, &api_error)))
    rc = fail_api(command, api_error);
  else {
    for (size_t i = 0; i < ptsim_api_job_diagnostic_count(job); i++) {
      PtsimApiDiagnosticKind kind;
      const char *line = ptsim_api_job_diagnostic(job, i, &kind);
      ptsim_cli_print_diagnostic(command, line, kind);
    }
    if (!(result = ptsim_api_result_new(job, &opts.predict, with_time, &api_error)))
      rc = fail_api(command, api_error);
  }
  clear_job_command(&opts);
  if (rc != 0) return rc;
  if (format == PTSIM_FORMAT_JSON) {
    size_t len;
    const char *json = ptsim_api_result_json(result, &len);
    if (!ptsim_output_stdout(json, len, &error)) return fail(command, error);
    return 0;
  }
  g_autoptr(GString) out = g_string_new(NULL);
  result->prediction.words = (const char *const *)words;
  ptsim_prediction_write(out, &result->prediction, format, result->overlap_source);
  if (!ptsim_output_stdout(out->str, out->len, &error)) return fail(command, error);
  return 0;
}

static int run_memory(int argc, char **argv) { return run_job_command("memory", argc, argv); }
static int run_predict(int argc, char **argv) { return run_job_command("predict", argc, argv); }

/* What a successful command printed with stdio is checked once more at the
 * end: a full disk or a closed pipe on standard output is a failure (exit
 * 1), never a silent 0.  (A failed command has said why already.) */
static int checked_exit(const char *command, int code) {
  errno = 0;
  if (code == 0 && (fflush(stdout) != 0 || ferror(stdout))) {
    fprintf(stderr, "ptsim%s%s: writing standard output failed: %s\n", command ? " " : "",
            command ? command : "", g_strerror(errno ? errno : EIO));
    return 1;
  }
  return code;
}

int main(int argc, char **argv) {
  ptsim_cli_init_locale();
  if (argc < 2) return checked_exit(NULL, ptsim_sweep_default_job());
  const char *first = argv[1];
  if (strcmp(first, "--version") == 0) return checked_exit(NULL, print_version());
  if (strcmp(first, "--help") == 0 || strcmp(first, "-h") == 0 || strcmp(first, "help") == 0) {
    print_usage(stdout);
    return checked_exit(NULL, 0);
  }
  for (size_t i = 0; i < G_N_ELEMENTS(subcommands); i++)
    if (strcmp(first, subcommands[i].name) == 0)
      return checked_exit(first, subcommands[i].run(argc - 1, argv + 1));
  fprintf(stderr, "ptsim: unknown command '%s'\n", first);
  print_usage(stderr);
  return EXIT_BAD_INPUT;
}
