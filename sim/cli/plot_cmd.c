/* plot_cmd.c — `ptsim plot KIND` and the default job's figures; see
 * plot_cmd.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <glib/gstdio.h>
#include "cli_job.h"
#include "cli_options.h"
#include "config.h"
#include "memory.h"
#include "output.h"
#include "plot.h"
#include "plot_cmd.h"
#include "simulate.h"

#define EXIT_BAD_INPUT 2

typedef enum {
  KIND_MEMORY,
  KIND_TIMELINE,
  KIND_ALLOCATOR,
  KIND_HEATMAP,
  KIND_PARETO,
  KIND_SCALING,
  KIND_VALIDATION
} PlotKind;

static const struct {
  const char *name;
  PlotKind kind;
  const char *from; /* what --from takes: NULL none, "optional", "required" */
  const char *summary;
} kinds[] = {
    {"memory", KIND_MEMORY, NULL,
     "stacked per-stage memory terms (analytical) against GPU capacity and the fit\n"
     "            threshold; an outlined bar per stage: the caching-allocator emulation's\n"
     "            reserved peak + CUDA context/NCCL. Job options."},
    {"timeline", KIND_TIMELINE, NULL,
     "Gantt chart of the simulated step per pipeline stage, microbatches numbered.\n"
     "            Job options."},
    {"allocator", KIND_ALLOCATOR, "optional",
     "allocated and reserved bytes over the last replayed step, one panel per stage\n"
     "            (8 at most), against the allocator's limit (capacity - context/NCCL).\n"
     "            Job options; the emulation's timeline is written to NAME.timeline.tsv,\n"
     "            or give --from FILE.tsv (ptsim predict --memory-timeline) with the same\n"
     "            job options."},
    {"heatmap", KIND_HEATMAP, "required",
     "tokens/s per GPU over tp x pp, best fitting layout per cell, one panel per cp\n"
     "            (--facet mbs: per mbs); hatched OOM cells: no layout fits.\n"
     "            --from SWEEP.csv (ptsim sweep --csv)."},
    {"pareto", KIND_PARETO, "required",
     "analytical memory per GPU vs tokens/s per GPU, every layout (filled: fits),\n"
     "            the Pareto front of fitting layouts, the best labelled. --from SWEEP.csv."},
    {"scaling", KIND_SCALING, "required",
     "tokens/s per GPU (--y step: step time) of the best fitting layout vs GPU count,\n"
     "            one line per hw (and model/seq/gbs when they vary), log2 x axis.\n"
     "            --from SWEEP.csv of a sweep with several --gpus (and --hw)."},
    {"validation", KIND_VALIDATION, "required",
     "predicted vs measured step time, log-log, y = x and a +-10% band, points by\n"
     "            source. --from RUNS.csv with the header source,run,measured_s,predicted_s\n"
     "            (seconds, > 0; extra columns ignored, no quoting, '#' lines skipped);\n"
     "            validate/calibrate_published.py --csv FILE writes it."},
};

static int exit_code(const GError *error) {
  if (error->domain == PTSIM_OUTPUT_ERROR) return ptsim_output_exit_code(error);
  if (error->domain == PTSIM_PLOT_ERROR)
    return error->code == PTSIM_PLOT_ERROR_FORMAT || error->code == PTSIM_PLOT_ERROR_INPUT
               ? EXIT_BAD_INPUT
               : 1;
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
  char *out, *ce, *from, *facet, *y;
} PlotOptions;

static void clear_options(PlotOptions *o) {
  ptsim_cli_job_clear(&o->job);
  g_clear_pointer(&o->out, g_free);
  g_clear_pointer(&o->ce, g_free);
  g_clear_pointer(&o->from, g_free);
  g_clear_pointer(&o->facet, g_free);
  g_clear_pointer(&o->y, g_free);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(PlotOptions, clear_options)

/* What one run of `ptsim plot` was asked to do. */
typedef struct {
  int kind;                 /* index into kinds[] */
  PtsimJob job;             /* for memory, timeline, allocator */
  PtsimCrossEntropyConvention ce;
  char *out;                /* figure path */
  char *from;               /* input file or NULL */
  PtsimPlotFacet facet;
  PtsimPlotScalingY y;
} PlotRequest;

static void clear_request(PlotRequest *r) {
  g_clear_pointer(&r->out, g_free);
  g_clear_pointer(&r->from, g_free);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(PlotRequest, clear_request)

static gboolean parse(int argc, char **argv, PlotRequest *req, GError **error) {
  g_auto(PlotOptions) o;
  memset(&o, 0, sizeof o);
  ptsim_cli_job_init(&o.job);
  const GOptionEntry entries[] = {
      {"out", 'o', 0, G_OPTION_ARG_FILENAME, &o.out,
       "Figure to write; the ending picks the format (.pdf for papers, .png, .svg). "
       "NAME.tsv (data) and NAME.gp (gnuplot script) are written next to it",
       "FILE.pdf|.png|.svg"},
      {"from", 'f', 0, G_OPTION_ARG_FILENAME, &o.from,
       "Input file: a sweep CSV (heatmap, pareto, scaling), a runs CSV (validation), an "
       "allocator timeline TSV (allocator, optional)",
       "FILE"},
      {"facet", 0, 0, G_OPTION_ARG_STRING, &o.facet,
       "heatmap: one panel per cp (default) or per mbs", "cp|mbs"},
      {"y", 0, 0, G_OPTION_ARG_STRING, &o.y,
       "scaling: tokens/s per GPU (tokens, default) or step time (step)", "tokens|step"},
      {"ce", 0, 0, G_OPTION_ARG_STRING, &o.ce,
       "memory: where the fp32 logits/cross-entropy term is charged: last-stage (default) or "
       "every-stage",
       "WHERE"},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  GString *summary = g_string_new("Kinds:");
  for (size_t i = 0; i < G_N_ELEMENTS(kinds); i++)
    g_string_append_printf(summary, "\n  %-9s %s", kinds[i].name, kinds[i].summary);
  g_string_append(summary,
                  "\n\nEvery figure comes with NAME.tsv (its data; '#' header lines name the "
                  "columns and units) and NAME.gp\n(a standalone gnuplot script; rerun after "
                  "editing it: cd DIR && gnuplot NAME.gp).\nMemory is in GiB (2^30 bytes). "
                  "Needs gnuplot (Debian/Ubuntu: apt-get install gnuplot-nox).\n"
                  "Exit codes: 0 ok, 2 bad input (the message names the flag or FILE:LINE), "
                  "1 gnuplot missing or failing.");
  g_autoptr(GOptionContext) context =
      g_option_context_new("KIND --out FILE.pdf|.png|.svg - write a gnuplot figure");
  g_option_context_set_summary(context, summary->str);
  g_string_free(summary, TRUE);
  ptsim_cli_job_add_to_context(context, &o.job, entries);
  g_option_context_set_help_enabled(context, TRUE);
  if (!ptsim_cli_parse_options(context, &argc, &argv, error)) return FALSE;
  if (argc < 2) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED,
                "which figure? give a KIND: "
                "memory|timeline|allocator|heatmap|pareto|scaling|validation (see --help)");
    return FALSE;
  }
  if (argc > 2) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED,
                "unexpected argument '%s' (see --help)", argv[2]);
    return FALSE;
  }
  req->kind = -1;
  for (size_t i = 0; i < G_N_ELEMENTS(kinds); i++)
    if (strcmp(argv[1], kinds[i].name) == 0) req->kind = (int)i;
  if (req->kind < 0) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "unknown kind '%s': allowed kinds are "
                "memory|timeline|allocator|heatmap|pareto|scaling|validation",
                argv[1]);
    return FALSE;
  }
  const char *from_rule = kinds[req->kind].from;
  if (!o.out) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED,
                "--out FILE.pdf|.png|.svg is required");
    return FALSE;
  }
  PtsimPlotFormat format;
  if (!ptsim_plot_format_from_path(o.out, &format, error)) return FALSE;
  if (o.from && !from_rule) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED,
                "--from: the %s kind computes its data from the job options; it reads no file",
                kinds[req->kind].name);
    return FALSE;
  }
  if (!o.from && from_rule && strcmp(from_rule, "required") == 0) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "%s needs --from FILE (see --help)",
                kinds[req->kind].name);
    return FALSE;
  }
  if (o.facet && kinds[req->kind].kind != KIND_HEATMAP) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "--facet applies to heatmap only");
    return FALSE;
  }
  if (o.y && kinds[req->kind].kind != KIND_SCALING) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "--y applies to scaling only");
    return FALSE;
  }
  req->facet = PTSIM_PLOT_FACET_CP;
  if (o.facet && strcmp(o.facet, "mbs") == 0) req->facet = PTSIM_PLOT_FACET_MBS;
  else if (o.facet && strcmp(o.facet, "cp") != 0) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "--facet '%s': allowed values are cp|mbs", o.facet);
    return FALSE;
  }
  req->y = PTSIM_PLOT_Y_THROUGHPUT;
  if (o.y && strcmp(o.y, "step") == 0) req->y = PTSIM_PLOT_Y_STEP;
  else if (o.y && strcmp(o.y, "tokens") != 0) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "--y '%s': allowed values are tokens|step", o.y);
    return FALSE;
  }
  req->ce = PTSIM_CE_LAST_STAGE;
  if (o.ce) {
    if (strcmp(o.ce, "every-stage") == 0)
      req->ce = PTSIM_CE_EVERY_STAGE;
    else if (strcmp(o.ce, "last-stage") != 0) {
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                  "--ce '%s': allowed values are last-stage|every-stage", o.ce);
      return FALSE;
    }
  }
  PlotKind k = kinds[req->kind].kind;
  if (k == KIND_MEMORY || k == KIND_TIMELINE || k == KIND_ALLOCATOR) {
    g_autoptr(GPtrArray) ignored = g_ptr_array_new_with_free_func(g_free);
    if (!ptsim_cli_job_resolve(&o.job, &req->job, ignored, error)) return FALSE;
    if (ignored->len > 0) {
      fprintf(stderr, "ptsim plot: ignored Megatron-LM flags:");
      for (guint i = 0; i < ignored->len; i++)
        fprintf(stderr, " %s", (const char *)g_ptr_array_index(ignored, i));
      fputc('\n', stderr);
    }
  }
  req->out = g_steal_pointer(&o.out);
  req->from = g_steal_pointer(&o.from);
  return TRUE;
}

/* ---- figures of one job ---- */

static gboolean memory_figure(const char *out, const PtsimPlan *plan,
                              PtsimCrossEntropyConvention ce, PtsimPlotFiles *files,
                              GError **error) {
  g_autofree PtsimMemoryEstimate *memory = g_new0(PtsimMemoryEstimate, 1);
  g_autofree PtsimAllocResult *alloc = g_new0(PtsimAllocResult, 1);
  ptsim_memory_estimate(plan, ce, memory);
  if (!ptsim_simulate_allocator(plan, 2, NULL, NULL, 0.0, NULL, alloc, error)) return FALSE;
  return ptsim_plot_memory(out, &plan->job, memory, alloc, files, error);
}

static gboolean timeline_figure(const char *out, const PtsimPlan *plan, PtsimPlotFiles *files,
                                GError **error) {
  g_autofree PtsimTimeResult *time = g_new0(PtsimTimeResult, 1);
  PtsimTrace trace = {NULL, 0, 0};
  gboolean ok = ptsim_simulate(plan, &trace, time, error) &&
                ptsim_plot_timeline(out, &plan->job, time, &trace, files, error);
  ptsim_simulate_trace_clear(&trace);
  return ok;
}

/* NAME.EXT -> NAME.timeline.tsv  (transfer full) */
static char *timeline_path_for(const char *figure) {
  const char *dot = strrchr(figure, '.');
  g_autofree char *stem = g_strndup(figure, (gsize)(dot - figure));
  return g_strconcat(stem, ".timeline.tsv", NULL);
}

static gboolean allocator_figure(const char *out, const PtsimPlan *plan, const char *from,
                                 PtsimPlotFiles *files, GError **error) {
  const PtsimJob *job = &plan->job;
  if (from) return ptsim_plot_allocator(out, job, from, files, error);
  g_autofree char *timeline = timeline_path_for(out);
  g_autofree PtsimTimeResult *time = g_new0(PtsimTimeResult, 1);
  g_autofree PtsimAllocResult *alloc = g_new0(PtsimAllocResult, 1);
  PtsimTrace trace = {NULL, 0, 0};
  gboolean ok = ptsim_simulate(plan, &trace, time, error) &&
                ptsim_simulate_allocator(plan, 2, NULL, &trace, time->step_s, timeline, alloc,
                                         error) &&
                ptsim_plot_allocator(out, job, timeline, files, error);
  ptsim_simulate_trace_clear(&trace);
  return ok;
}

int ptsim_plot_main(int argc, char **argv) {
  g_auto(PlotRequest) req;
  memset(&req, 0, sizeof req);
  g_autoptr(GError) error = NULL;
  if (!parse(argc, argv, &req, &error)) return fail(error);

  PtsimPlotFiles files = {NULL, NULL, NULL};
  gboolean ok = FALSE;
  PlotKind kind = kinds[req.kind].kind;
  g_autoptr(GArray) layouts = NULL;
  if (kind == KIND_HEATMAP || kind == KIND_PARETO || kind == KIND_SCALING) {
    layouts = ptsim_plot_layouts_read_csv(req.from, &error);
    if (!layouts) return fail(error);
  }
  g_autofree PtsimPlan *plan = NULL;
  if (kind == KIND_MEMORY || kind == KIND_TIMELINE || kind == KIND_ALLOCATOR) {
    plan = g_new0(PtsimPlan, 1); /* these kinds read one validated job */
    ptsim_plan_build(&req.job, plan);
  }
  switch (kind) {
    case KIND_MEMORY: ok = memory_figure(req.out, plan, req.ce, &files, &error); break;
    case KIND_TIMELINE: ok = timeline_figure(req.out, plan, &files, &error); break;
    case KIND_ALLOCATOR:
      ok = allocator_figure(req.out, plan, req.from, &files, &error);
      break;
    case KIND_HEATMAP:
      ok = ptsim_plot_heatmap(req.out, layouts, req.facet, req.from, &files, &error);
      break;
    case KIND_PARETO: ok = ptsim_plot_pareto(req.out, layouts, req.from, &files, &error); break;
    case KIND_SCALING:
      ok = ptsim_plot_scaling(req.out, layouts, req.y, req.from, &files, &error);
      break;
    case KIND_VALIDATION: ok = ptsim_plot_validation(req.out, req.from, &files, &error); break;
  }
  if (!ok) return fail(error);
  printf("ptsim plot %s: wrote %s (figure), %s (gnuplot script), %s (data)\n",
         kinds[req.kind].name, files.figure, files.script, files.data);
  ptsim_plot_files_clear(&files);
  return 0;
}

/* ---- the default job's figures ---- */

gboolean ptsim_plot_default_figures(const PtsimSweep *sweep, const GArray *order, const char *dir,
                                    GString *report) {
  g_return_val_if_fail(sweep && order && dir && report, FALSE);
  g_autofree char *gnuplot = g_find_program_in_path("gnuplot");
  if (!gnuplot) {
    g_string_append_printf(report,
                           "figures skipped: gnuplot is not on PATH (Debian/Ubuntu: apt-get "
                           "install gnuplot-nox; then rerun to get them in %s/)\n",
                           dir);
    return TRUE;
  }
  if (order->len == 0) {
    g_string_append(report, "figures skipped: the sweep has no layouts\n");
    return TRUE;
  }
  if (g_mkdir_with_parents(dir, 0755) != 0) {
    g_string_append_printf(report, "figures skipped: cannot create %s: %s\n", dir,
                           g_strerror(errno));
    return FALSE;
  }
  g_autofree PtsimPlan *best = g_new0(PtsimPlan, 1);
  ptsim_plan_build(&g_array_index(sweep->jobs, PtsimJob, g_array_index(order, guint, 0)), best);
  g_autoptr(GArray) layouts = ptsim_plot_layouts_from_sweep(sweep, order);
  static const char *const names[] = {"memory", "timeline", "heatmap", "pareto"};
  const char *what[] = {"per-stage memory of the best layout",
                        "its simulated step", "tokens/s per GPU over tp x pp",
                        "memory vs throughput of every layout"};
  gboolean all_ok = TRUE;
  GString *written = g_string_new(NULL);
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
    g_autofree char *name = g_strconcat(names[i], ".png", NULL);
    g_autofree char *path = g_build_filename(dir, name, NULL);
    g_autoptr(GError) error = NULL;
    PtsimPlotFiles files = {NULL, NULL, NULL};
    gboolean ok = FALSE;
    switch (i) {
      case 0: ok = memory_figure(path, best, PTSIM_CE_LAST_STAGE, &files, &error); break;
      case 1: ok = timeline_figure(path, best, &files, &error); break;
      case 2: ok = ptsim_plot_heatmap(path, layouts, PTSIM_PLOT_FACET_CP, NULL, &files, &error); break;
      case 3: ok = ptsim_plot_pareto(path, layouts, NULL, &files, &error); break;
    }
    if (ok) {
      g_string_append_printf(written, "  %-14s %s\n", name, what[i]);
    } else {
      g_string_append_printf(report, "figure %s failed: %s\n", path, error->message);
      all_ok = FALSE;
    }
    ptsim_plot_files_clear(&files);
  }
  if (written->len)
    g_string_append_printf(report,
                           "\nfigures in %s/ (each with its .tsv data and .gp script; rerun: cd "
                           "%s && gnuplot NAME.gp):\n%s",
                           dir, dir, written->str);
  g_string_free(written, TRUE);
  return all_ok;
}
