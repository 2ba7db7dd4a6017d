/* main.c — the ptsim command: subcommand dispatch, option parsing and exit
 * codes (0 ok, 2 bad input, 1 internal failure).  Everything a subcommand
 * computes lives in the library; this file only wires it to argv/stdout. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "alloc_replay_cmd.h"
#include "calibrate_cmd.h"
#include "cli_job.h"
#include "config.h"
#include "gpu.h"
#include "memory.h"
#include "plot_cmd.h"
#include "report.h"
#include "simulate.h"
#include "trace.h"
#include "sweep_cmd.h"
#include "validate_cmd.h"
#include "alloc_conf.h"
#include "cli_options.h"
#include "output.h"

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
    {"predict", "one layout: memory estimate, allocator emulation, simulated step time", run_predict},
    {"sweep", "every valid layout of one or more scenarios, ranked", ptsim_sweep_main},
    {"plot", "a gnuplot figure (memory, timeline, allocator, heatmap, pareto, scaling, validation)", ptsim_plot_main},
    {"calibrate", "a hardware profile with measured efficiency (from gemm_bench)", ptsim_calibrate_main},
    {"alloc-replay", "replay an allocator trace through the emulator; compare", ptsim_alloc_replay_main},
    {"validate", "predictions against measured runs (Megatron-LM logs, run CSVs)", ptsim_validate_main},
};

static void print_usage(FILE *to) {
  fprintf(to,
          "Usage: ptsim [COMMAND] [OPTIONS]\n\n"
          "Predicts per-GPU memory, allocator behaviour and step time of\n"
          "Megatron-style LLM training for a parallel layout.\n\n"
          "Commands:\n");
  for (size_t i = 0; i < G_N_ELEMENTS(subcommands); i++)
    fprintf(to, "  %-13s %s\n", subcommands[i].name, subcommands[i].summary);
  fprintf(to,
          "  (none)        the default job: a sweep of Llama-3-8B on one 8 x H100 node\n\n"
          "Options:\n"
          "  --help        this text; COMMAND --help for a command's options\n"
          "  --version     version, and whether a GPU path is compiled in and usable\n");
}

static int print_version(void) {
  g_autofree char *gpu = ptsim_gpu_describe();
  printf("ptsim %s\n%s\n", PTSIM_VERSION, gpu);
  return 0;
}

static int fail(const char *command, const GError *error) {
  fprintf(stderr, "ptsim %s: %s\n", command, error->message);
  if (error->domain == PTSIM_OUTPUT_ERROR) return ptsim_output_exit_code(error);
  return error->domain == PTSIM_CONFIG_ERROR || error->domain == G_OPTION_ERROR ||
                 error->domain == G_KEY_FILE_ERROR || error->domain == G_FILE_ERROR ||
                 error->domain == G_SHELL_ERROR
             ? EXIT_BAD_INPUT
             : 1;
}

/* Options shared by memory and predict: the job plus --format and --ce. */
typedef struct {
  PtsimJobOptions job;
  char *format;
  char *ce;
  char *trace; /* predict only */
  char *trace_steps; /* NULL: not given; parsed strictly (numbers.h) */
  char *memory_timeline;
  char *alloc_conf;
  gboolean no_shortcut;
  gboolean no_allocator;
} JobCommandOptions;

static gboolean parse_job_command(const char *command, int argc, char **argv,
                                  JobCommandOptions *opts, PtsimJob *job,
                                  PtsimFormat *format, PtsimCrossEntropyConvention *ce,
                                  GError **error) {
  const GOptionEntry entries[] = {
      {"format", 0, 0, G_OPTION_ARG_STRING, &opts->format, "text|json|csv (default text)",
       "F"},
      {"ce", 0, 0, G_OPTION_ARG_STRING, &opts->ce,
       "Where the fp32 logits/cross-entropy term is charged: last-stage (default) or "
       "every-stage (the paper's printed closed form)",
       "WHERE"},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  const GOptionEntry predict_entries[] = {
      {"trace", 0, 0, G_OPTION_ARG_FILENAME, &opts->trace,
       "Write a Chrome/Perfetto trace of the simulated step (open in ui.perfetto.dev): per "
       "stage a compute, TP, CP, PP send/recv and DP track, recompute and waits as slices, "
       "PP transfers as flow arrows",
       "FILE.json"},
      {"trace-steps", 0, 0, G_OPTION_ARG_STRING, &opts->trace_steps,
       "Steps in the trace, 1 to 1000 (default 1; steps repeat: the simulation is "
       "deterministic)", "N"},
      {"memory-timeline", 0, 0, G_OPTION_ARG_FILENAME, &opts->memory_timeline,
       "Write allocated/reserved bytes over simulated time per stage (TSV)", "FILE.tsv"},
      {"alloc-conf", 0, 0, G_OPTION_ARG_STRING, &opts->alloc_conf,
       "PYTORCH_CUDA_ALLOC_CONF for the allocator emulation, e.g. "
       "expandable_segments:True,max_split_size_mb:512",
       "CONF"},
      {"no-shortcut", 0, 0, G_OPTION_ARG_NONE, &opts->no_shortcut,
       "Simulate every event of the step, and replay every schedule item through the "
       "allocator emulation, instead of skipping the repeating steady state (the result is "
       "the same; this checks it)",
       NULL},
      {"no-allocator", 0, 0, G_OPTION_ARG_NONE, &opts->no_allocator,
       "Skip the caching-allocator emulation: the step time and the analytical estimate only "
       "(for scripts that fit step times; no allocator keys, no runs verdict)",
       NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  g_autofree char *title = g_strdup_printf(
      "- %s", strcmp(command, "predict") == 0
                  ? "one layout: memory estimate, allocator emulation, simulated step time"
                  : "the analytical per-stage memory estimate of one layout");
  g_autoptr(GOptionContext) context = g_option_context_new(title);
  ptsim_job_options_add_to_context(context, &opts->job, entries);
  if (strcmp(command, "predict") == 0)
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
  *ce = PTSIM_CE_LAST_STAGE;
  if (opts->ce) {
    if (strcmp(opts->ce, "every-stage") == 0)
      *ce = PTSIM_CE_EVERY_STAGE;
    else if (strcmp(opts->ce, "last-stage") != 0) {
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                  "--ce '%s': allowed values are last-stage|every-stage", opts->ce);
      return FALSE;
    }
  }
  return ptsim_cli_job_build(command, &opts->job, job, error);
}

static void clear_job_command(JobCommandOptions *opts) {
  ptsim_job_options_clear(&opts->job);
  g_free(opts->format);
  g_free(opts->ce);
  g_free(opts->trace);
  g_free(opts->trace_steps);
  g_free(opts->memory_timeline);
  g_free(opts->alloc_conf);
}

static int run_job_command(const char *command, int argc, char **argv) {
  JobCommandOptions opts;
  memset(&opts, 0, sizeof opts);
  ptsim_job_options_init(&opts.job);
  PtsimJob job;
  PtsimFormat format;
  PtsimCrossEntropyConvention ce;
  g_autoptr(GError) error = NULL;
  if (!parse_job_command(command, argc, argv, &opts, &job, &format, &ce, &error)) {
    clear_job_command(&opts);
    return fail(command, error);
  }
  g_autofree char *trace_path = g_strdup(opts.trace);
  int64_t trace_steps = 1;
  if (opts.trace_steps && !trace_path)
    g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "--trace-steps needs --trace FILE.json");
  else
    ptsim_cli_int64_flag("--trace-steps", opts.trace_steps, 1, 1000, &trace_steps, &error);
  if (error) {
    clear_job_command(&opts);
    return fail(command, error);
  }
  g_autofree char *timeline_path = g_strdup(opts.memory_timeline);
  PtsimAllocOptions alloc_opts;
  ptsim_alloc_options_init(&alloc_opts);
  if ((opts.alloc_conf && !ptsim_alloc_conf_parse(opts.alloc_conf, &alloc_opts, &error)) ||
      (trace_path && !ptsim_output_check(trace_path, &error)) ||
      (timeline_path && !ptsim_output_check(timeline_path, &error))) {
    clear_job_command(&opts);
    return fail(command, error);
  }
  if (opts.no_allocator && (timeline_path || opts.alloc_conf)) {
    g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "--no-allocator: %s needs the allocator emulation; give one or the other",
                timeline_path ? "--memory-timeline" : "--alloc-conf");
    clear_job_command(&opts);
    return fail(command, error);
  }
  const char *overlap_source = ptsim_job_options_overlap_source(&opts.job);
  gboolean every_event = opts.no_shortcut;
  gboolean with_alloc = !opts.no_allocator;
  clear_job_command(&opts);

  g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
  ptsim_plan_build(&job, plan);
  gboolean with_time = strcmp(command, "predict") == 0;
  g_autofree PtsimTimeResult *time = g_new0(PtsimTimeResult, 1);
  g_autofree PtsimAllocResult *alloc = g_new0(PtsimAllocResult, 1);
  if (with_time) {
    PtsimTrace trace = {NULL, 0, 0};
    gboolean need_trace = trace_path || timeline_path;
    if (!ptsim_simulate_with(plan, need_trace ? &trace : NULL, every_event, time, &error) ||
        (trace_path &&
         !ptsim_trace_write(trace_path, plan, &trace, time, (int32_t)trace_steps, &error)) ||
        (with_alloc && !ptsim_simulate_allocator_with(plan, 2, &alloc_opts, every_event,
                                                      need_trace ? &trace : NULL, time->step_s,
                                                      timeline_path, alloc, &error))) {
      ptsim_simulate_trace_clear(&trace);
      return fail(command, error);
    }
    ptsim_simulate_trace_clear(&trace);
  }
  PtsimMemoryEstimate *memory = g_new0(PtsimMemoryEstimate, 1);
  ptsim_memory_estimate(plan, ce, memory);
  PtsimErrorBand band;
  ptsim_error_band_lookup(&job, &band);
  g_autoptr(GString) out = g_string_new(NULL);
  if (format == PTSIM_FORMAT_JSON) {
    PtsimJson json;
    ptsim_json_init(&json, out);
    ptsim_json_begin_object(&json, NULL);
    ptsim_report_json_config(&json, plan);
    ptsim_report_json_settings(&json, &job.layout, &job.model, overlap_source);
    ptsim_report_json_memory(&json, memory, job.layout.memory_threshold,
                             with_time && with_alloc ? alloc : NULL);
    if (with_time) ptsim_report_json_time(&json, time, &band);
    ptsim_json_end_object(&json);
  } else if (format == PTSIM_FORMAT_CSV) {
    ptsim_report_csv_memory(out, &job, memory);
  } else {
    ptsim_report_text_config(out, plan);
    ptsim_report_text_settings(out, &job.layout, &job.model, overlap_source);
    ptsim_report_text_memory(out, &job, memory);
    if (with_time && with_alloc) ptsim_report_text_allocator(out, memory, alloc);
    if (with_time) ptsim_report_text_time(out, time, &band, job.model.num_experts > 0);
  }
  g_free(memory);
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
  if (strcmp(first, "--help") == 0 || strcmp(first, "-h") == 0 ||
      strcmp(first, "help") == 0) {
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
