/* plot_cmd.c — `ptsim plot KIND`; see plot_cmd.h. */
#include <stdio.h>
#include <string.h>
#include "cli_job.h"
#include "config.h"
#include "memory.h"
#include "plot.h"
#include "plot_cmd.h"
#include "simulate.h"

#define EXIT_BAD_INPUT 2

typedef enum { KIND_MEMORY, KIND_TIMELINE } PlotKind;

static const struct {
  const char *name;
  PlotKind kind;
  const char *summary;
} kinds[] = {
    {"memory", KIND_MEMORY,
     "stacked per-stage memory terms against GPU capacity and the fit threshold"},
    {"timeline", KIND_TIMELINE,
     "Gantt chart of the simulated step per pipeline stage, microbatches numbered"},
};

static int exit_code(const GError *error) {
  if (error->domain == PTSIM_PLOT_ERROR)
    return error->code == PTSIM_PLOT_ERROR_FORMAT ? EXIT_BAD_INPUT : 1;
  return error->domain == PTSIM_CONFIG_ERROR || error->domain == G_OPTION_ERROR ||
                 error->domain == G_KEY_FILE_ERROR || error->domain == G_FILE_ERROR ||
                 error->domain == G_SHELL_ERROR
             ? EXIT_BAD_INPUT
             : 1;
}

static int fail(const GError *error) {
  fprintf(stderr, "ptsim plot: %s\n", error->message);
  return exit_code(error);
}

typedef struct {
  PtsimCliJob job;
  char *out;
  char *ce;
} PlotOptions;

static void clear_options(PlotOptions *o) {
  ptsim_cli_job_clear(&o->job);
  g_clear_pointer(&o->out, g_free);
  g_clear_pointer(&o->ce, g_free);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(PlotOptions, clear_options)

/* Parses argv into *kind, *job, *ce and the figure path.  (The path is
 * transfer full.) */
static gboolean parse(int argc, char **argv, PlotKind *kind, PtsimJob *job,
                      PtsimCrossEntropyConvention *ce, char **out_path, GError **error) {
  g_auto(PlotOptions) o;
  memset(&o, 0, sizeof o);
  ptsim_cli_job_init(&o.job);
  const GOptionEntry entries[] = {
      {"out", 'o', 0, G_OPTION_ARG_FILENAME, &o.out,
       "Figure to write; the ending picks the format (.pdf for papers, .png, .svg). "
       "NAME.tsv (data) and NAME.gp (gnuplot script) are written next to it",
       "FILE.pdf|.png|.svg"},
      {"ce", 0, 0, G_OPTION_ARG_STRING, &o.ce,
       "Where the fp32 logits/cross-entropy term is charged: last-stage (default) or "
       "every-stage",
       "WHERE"},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  GString *summary = g_string_new("Kinds:");
  for (size_t i = 0; i < G_N_ELEMENTS(kinds); i++)
    g_string_append_printf(summary, "\n  %-9s %s", kinds[i].name, kinds[i].summary);
  g_string_append(summary,
                  "\n\nNeeds gnuplot (Debian/Ubuntu: apt-get install gnuplot-nox). Rerun a "
                  "figure after editing its script: cd DIR && gnuplot NAME.gp");
  g_autoptr(GOptionContext) context = g_option_context_new("KIND --out FILE.pdf|.png|.svg - write a gnuplot figure");
  g_option_context_set_summary(context, summary->str);
  g_string_free(summary, TRUE);
  g_option_context_add_main_entries(context, entries, NULL);
  g_option_context_add_group(context, ptsim_cli_job_option_group(&o.job));
  g_option_context_set_help_enabled(context, TRUE);
  if (!g_option_context_parse(context, &argc, &argv, error)) return FALSE;
  if (argc < 2) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED,
                "which figure? give a KIND: memory|timeline (see --help)");
    return FALSE;
  }
  if (argc > 2) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED,
                "unexpected argument '%s' (see --help)", argv[2]);
    return FALSE;
  }
  gboolean known = FALSE;
  for (size_t i = 0; i < G_N_ELEMENTS(kinds); i++)
    if (strcmp(argv[1], kinds[i].name) == 0) {
      *kind = kinds[i].kind;
      known = TRUE;
    }
  if (!known) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "unknown kind '%s': allowed kinds are memory|timeline", argv[1]);
    return FALSE;
  }
  if (!o.out) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED,
                "--out FILE.pdf|.png|.svg is required");
    return FALSE;
  }
  PtsimPlotFormat format;
  if (!ptsim_plot_format_from_path(o.out, &format, error)) return FALSE;
  *ce = PTSIM_CE_LAST_STAGE;
  if (o.ce) {
    if (strcmp(o.ce, "every-stage") == 0)
      *ce = PTSIM_CE_EVERY_STAGE;
    else if (strcmp(o.ce, "last-stage") != 0) {
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                  "--ce '%s': allowed values are last-stage|every-stage", o.ce);
      return FALSE;
    }
  }
  g_autoptr(GPtrArray) ignored = g_ptr_array_new_with_free_func(g_free);
  if (!ptsim_cli_job_resolve(&o.job, job, ignored, error)) return FALSE;
  if (ignored->len > 0) {
    fprintf(stderr, "ptsim plot: ignored Megatron-LM flags:");
    for (guint i = 0; i < ignored->len; i++)
      fprintf(stderr, " %s", (const char *)g_ptr_array_index(ignored, i));
    fputc('\n', stderr);
  }
  *out_path = g_steal_pointer(&o.out);
  return TRUE;
}

int ptsim_plot_main(int argc, char **argv) {
  PlotKind kind = KIND_MEMORY;
  PtsimCrossEntropyConvention ce = PTSIM_CE_LAST_STAGE;
  g_autofree char *out_path = NULL;
  g_autofree PtsimJob *job = g_new0(PtsimJob, 1);
  g_autoptr(GError) error = NULL;
  if (!parse(argc, argv, &kind, job, &ce, &out_path, &error)) return fail(error);

  PtsimPlotFiles files = {NULL, NULL, NULL};
  gboolean ok;
  const char *kind_name = kind == KIND_MEMORY ? "memory" : "timeline";
  if (kind == KIND_MEMORY) {
    g_autofree PtsimMemoryEstimate *memory = g_new0(PtsimMemoryEstimate, 1);
    ptsim_memory_estimate(job, ce, memory);
    ok = ptsim_plot_memory(out_path, job, memory, &files, &error);
  } else {
    g_autofree PtsimTimeResult *time = g_new0(PtsimTimeResult, 1);
    PtsimTrace trace = {NULL, 0, 0};
    ok = ptsim_simulate(job, &trace, time, &error) &&
         ptsim_plot_timeline(out_path, job, time, &trace, &files, &error);
    ptsim_simulate_trace_clear(&trace);
  }
  if (!ok) return fail(error);
  printf("ptsim plot %s: wrote %s (figure), %s (gnuplot script), %s (data)\n", kind_name,
         files.figure, files.script, files.data);
  ptsim_plot_files_clear(&files);
  return 0;
}
