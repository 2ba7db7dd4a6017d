/* plot_cmd.c — `ptsim plot KIND` and the default job's figures; see
 * plot_cmd.h. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <stdlib.h>
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
     "Gantt chart of the simulated step per pipeline stage, microbatches numbered\n"
     "            when they fit; thousands of microbatches are drawn as bins each kind\n"
     "            fills by its share of the time. Job options; --window START:END zooms,\n"
     "            --stages picks bands (at most 32 are drawn unless named)."},
    {"allocator", KIND_ALLOCATOR, "optional",
     "allocated and reserved bytes over the last replayed step, one panel per stage\n"
     "            (8 at most, 4 in a column), against the allocator's limit.\n"
     "            Job options; the emulation's timeline is written to NAME.timeline.tsv,\n"
     "            or give --from FILE.tsv (ptsim predict --memory-timeline) with the same\n"
     "            job options. --window, --stages as for timeline."},
    {"heatmap", KIND_HEATMAP, "required",
     "tokens/s per GPU over tp x pp, best fitting layout per cell, one panel per cp\n"
     "            (--facet mbs: per mbs); hatched OOM cells: no layout fits.\n"
     "            --from SWEEP.csv (ptsim sweep --csv); a CSV of several scenarios needs\n"
     "            --model/--hw/--gpus/--seq/--gbs to pick one."},
    {"pareto", KIND_PARETO, "required",
     "analytical memory per GPU vs tokens/s per GPU, every layout (filled: fits),\n"
     "            the Pareto front of fitting layouts, capacity and fit limit (80% or\n"
     "            --memory-threshold), the best ringed. --from SWEEP.csv, one scenario\n"
     "            as for heatmap."},
    {"scaling", KIND_SCALING, "required",
     "tokens/s per GPU (--y step: step time) of the best fitting layout vs GPU count,\n"
     "            one line per hw (and model/seq/gbs when they vary), log2 x axis, the\n"
     "            ideal scaling from the first count that fits dashed.\n"
     "            --from SWEEP.csv of a sweep with several --gpus (and --hw)."},
    {"validation", KIND_VALIDATION, "required",
     "error of the predicted step time vs measured step time (--view parity:\n"
     "            predicted vs measured, log-log), a 10% band, points by source, filled\n"
     "            when held-out of the fit, open when in-sample. --from RUNS.csv with the\n"
     "            header source,run,measured_s,predicted_s and an optional fit column\n"
     "            (in-sample|held-out), or --held-out SOURCE,... (seconds, > 0; extra\n"
     "            columns ignored, no quoting, '#' lines skipped);\n"
     "            validate/calibrate_published.py --csv FILE writes it."},
};

static int exit_code(const GError *error) {
  if (error->domain == PTSIM_OUTPUT_ERROR) return ptsim_output_exit_code(error);
  if (error->domain == PTSIM_PLOT_ERROR)
    return error->code == PTSIM_PLOT_ERROR_FORMAT || error->code == PTSIM_PLOT_ERROR_INPUT ||
                   error->code == PTSIM_PLOT_ERROR_OPTION
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
  PtsimJobOptions job;
  char *out, *ce, *from, *facet, *y, *size, *window, *stages, *view, *held_out;
} PlotOptions;

static void clear_options(PlotOptions *o) {
  ptsim_job_options_clear(&o->job);
  char **fields[] = {&o->out,  &o->ce,     &o->from,   &o->facet, &o->y,
                     &o->size, &o->window, &o->stages, &o->view,  &o->held_out};
  for (size_t i = 0; i < G_N_ELEMENTS(fields); i++) g_clear_pointer(fields[i], g_free);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(PlotOptions, clear_options)

/* What one run of `ptsim plot` was asked to do. */
typedef struct {
  int kind;     /* index into kinds[] */
  PtsimJob job; /* for memory, timeline, allocator */
  PtsimCrossEntropyConvention ce;
  char *out;  /* figure path */
  char *from; /* input file or NULL */
  PtsimPlotFacet facet;
  PtsimPlotScalingY y;
  PtsimPlotSize size;
  PtsimPlotRange range;  /* timeline, allocator */
  char *stages;          /* --stages, parsed once the job's pp is known */
  char *model, *hw;      /* heatmap, pareto: the scenario (NULL: any) */
  gint64 gpus, seq, gbs; /* 0: any */
  double threshold;      /* pareto: 0 infer */
  PtsimPlotValidationView view;
  GStrv held_out; /* validation: NULL unless --held-out */
} PlotRequest;

static void clear_request(PlotRequest *r) {
  g_clear_pointer(&r->out, g_free);
  g_clear_pointer(&r->from, g_free);
  g_clear_pointer(&r->stages, g_free);
  g_clear_pointer(&r->model, g_free);
  g_clear_pointer(&r->hw, g_free);
  g_clear_pointer(&r->held_out, g_strfreev);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(PlotRequest, clear_request)

static gboolean parse(int argc, char **argv, PlotRequest *req, GError **error) {
  g_auto(PlotOptions) o;
  memset(&o, 0, sizeof o);
  ptsim_job_options_init(&o.job);
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
      {"size", 0, 0, G_OPTION_ARG_STRING, &o.size,
       "Printed size: column (3.5 in), page (7 in, default) or WxH with a unit (3.5x2.5in, "
       "12x8cm; no height: the figure picks one); fonts follow the width",
       "column|page|WxH"},
      {"window", 0, 0, G_OPTION_ARG_STRING, &o.window,
       "timeline, allocator: the time window to draw, seconds from the step's start (ms "
       "suffix allowed; END left out: to the end)",
       "START:END"},
      {"stages", 0, 0, G_OPTION_ARG_STRING, &o.stages,
       "timeline, allocator: the pipeline stages to draw (default: all that fit, else the "
       "first, the last and evenly spaced ones)",
       "0,4:7,..."},
      {"view", 0, 0, G_OPTION_ARG_STRING, &o.view,
       "validation: error vs measured (residual, default) or predicted vs measured (parity)",
       "residual|parity"},
      {"held-out", 0, 0, G_OPTION_ARG_STRING, &o.held_out,
       "validation: sources whose runs were not used to fit the hardware profiles (the rest "
       "are in-sample); overrides the CSV's fit column",
       "SOURCE,..."},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  GString *summary = g_string_new("Kinds:");
  for (size_t i = 0; i < G_N_ELEMENTS(kinds); i++)
    g_string_append_printf(summary, "\n  %-9s %s", kinds[i].name, kinds[i].summary);
  g_string_append(summary,
                  "\n\nEvery figure is laid out for --size column (3.5 in), page (7 in, default) "
                  "or WxH (12x8cm, 5x3in),\nwith fonts that read printed at that size, and "
                  "comes with NAME.tsv (its data; '#' header lines\nname the columns and "
                  "units) and NAME.gp (a standalone gnuplot script; rerun after editing it:\n"
                  "cd DIR && gnuplot NAME.gp; show_title = 0 drops the title for a paper).\n"
                  "Memory is in GiB (2^30 bytes). "
                  "Needs gnuplot (Debian/Ubuntu: apt-get install gnuplot-nox).\n"
                  "Exit codes: 0 ok, 2 bad input (the message names the flag or FILE:LINE), "
                  "1 gnuplot missing or failing.");
  g_autoptr(GOptionContext)
      context = g_option_context_new("KIND --out FILE.pdf|.png|.svg - write a gnuplot figure");
  g_option_context_set_summary(context, summary->str);
  g_string_free(summary, TRUE);
  ptsim_job_options_add_to_context(context, &o.job, entries);
  g_option_context_set_help_enabled(context, TRUE);
  if (!ptsim_options_parse(context, &argc, &argv, error)) return FALSE;
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
  if (o.facet && strcmp(o.facet, "mbs") == 0)
    req->facet = PTSIM_PLOT_FACET_MBS;
  else if (o.facet && strcmp(o.facet, "cp") != 0) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "--facet '%s': allowed values are cp|mbs", o.facet);
    return FALSE;
  }
  req->y = PTSIM_PLOT_Y_THROUGHPUT;
  if (o.y && strcmp(o.y, "step") == 0)
    req->y = PTSIM_PLOT_Y_STEP;
  else if (o.y && strcmp(o.y, "tokens") != 0) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "--y '%s': allowed values are tokens|step", o.y);
    return FALSE;
  }
  PlotKind kind = kinds[req->kind].kind;
  gboolean one_job = kind == KIND_MEMORY || kind == KIND_TIMELINE || kind == KIND_ALLOCATOR;
  struct {
    const char *value, *flag;
    gboolean applies;
    const char *kinds;
  } only[] = {{o.window, "--window", kind == KIND_TIMELINE || kind == KIND_ALLOCATOR,
               "timeline and allocator"},
              {o.stages, "--stages", kind == KIND_TIMELINE || kind == KIND_ALLOCATOR,
               "timeline and allocator"},
              {o.view, "--view", kind == KIND_VALIDATION, "validation"},
              {o.held_out, "--held-out", kind == KIND_VALIDATION, "validation"}};
  for (size_t i = 0; i < G_N_ELEMENTS(only); i++)
    if (only[i].value && !only[i].applies) {
      g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "%s applies to %s only",
                  only[i].flag, only[i].kinds);
      return FALSE;
    }
  ptsim_plot_size_default(&req->size);
  if (o.size && !ptsim_plot_size_parse(o.size, &req->size, error)) return FALSE;
  ptsim_plot_range_default(&req->range);
  if (o.window && !ptsim_plot_range_parse_window(o.window, &req->range, error)) return FALSE;
  req->view = PTSIM_PLOT_VALIDATION_RESIDUAL;
  if (o.view && strcmp(o.view, "parity") == 0)
    req->view = PTSIM_PLOT_VALIDATION_PARITY;
  else if (o.view && strcmp(o.view, "residual") != 0) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "--view '%s': allowed values are residual|parity", o.view);
    return FALSE;
  }
  if (o.held_out) {
    req->held_out = g_strsplit(o.held_out, ",", -1);
    for (char **h = req->held_out; *h; h++) g_strstrip(*h);
  }
  /* heatmap, pareto: the job options name the scenario; only those given */
  req->model = g_strdup(o.job.model);
  req->hw = g_strdup(o.job.hw);
  req->gpus = o.job.gpus.given ? o.job.gpus.value : 0;
  req->seq = o.job.seq.given ? o.job.seq.value : 0;
  req->gbs = o.job.gbs.given ? o.job.gbs.value : 0;
  req->threshold = o.job.threshold.given ? o.job.threshold.value : 0.0; /* 0: inferred */
  req->stages = g_steal_pointer(&o.stages);
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
  if (one_job && !ptsim_cli_job_build("plot", &o.job, &req->job, error)) return FALSE;
  req->out = g_steal_pointer(&o.out);
  req->from = g_steal_pointer(&o.from);
  return TRUE;
}

/* ---- figures of one job ---- */

static gboolean memory_figure(const char *out, const PtsimPlan *plan,
                              PtsimCrossEntropyConvention ce, const PtsimPlotSize *size,
                              PtsimPlotFiles *files, GError **error) {
  g_autofree PtsimMemoryEstimate *memory = g_new0(PtsimMemoryEstimate, 1);
  g_autofree PtsimAllocResult *alloc = g_new0(PtsimAllocResult, 1);
  ptsim_memory_estimate(plan, ce, memory);
  if (!ptsim_simulate_allocator(plan, 2, NULL, NULL, 0.0, NULL, alloc, error)) return FALSE;
  return ptsim_plot_memory(out, &plan->job, memory, alloc, size, files, error);
}

static gboolean timeline_figure(const char *out, const PtsimPlan *plan, const PtsimPlotSize *size,
                                const PtsimPlotRange *range, PtsimPlotFiles *files,
                                GError **error) {
  g_autofree PtsimTimeResult *time = g_new0(PtsimTimeResult, 1);
  PtsimTrace trace = {NULL, 0, 0};
  gboolean ok = ptsim_simulate(plan, &trace, time, error) &&
                ptsim_plot_timeline(out, &plan->job, time, &trace, size, range, files, error);
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
                                 const PtsimPlotSize *size, const PtsimPlotRange *range,
                                 PtsimPlotFiles *files, GError **error) {
  const PtsimJob *job = &plan->job;
  if (from) return ptsim_plot_allocator(out, job, from, size, range, files, error);
  g_autofree char *timeline = timeline_path_for(out);
  g_autofree PtsimTimeResult *time = g_new0(PtsimTimeResult, 1);
  g_autofree PtsimAllocResult *alloc = g_new0(PtsimAllocResult, 1);
  PtsimTrace trace = {NULL, 0, 0};
  gboolean ok = ptsim_simulate(plan, &trace, time, error) &&
                ptsim_simulate_allocator(plan, 2, NULL, &trace, time->step_s, timeline, alloc,
                                         error) &&
                ptsim_plot_allocator(out, job, timeline, size, range, files, error);
  ptsim_simulate_trace_clear(&trace);
  return ok;
}

/* ---- figures of a sweep ---- */

static gboolean sweep_figure(PlotKind kind, const PlotRequest *req, const GArray *layouts,
                             PtsimPlotFiles *files, GError **error) {
  if (kind == KIND_SCALING)
    return ptsim_plot_scaling(req->out, layouts, req->y, req->from, &req->size, files, error);
  PtsimPlotScenario want = {req->model, req->hw, req->gpus, req->seq, req->gbs};
  g_autoptr(GArray) rows = ptsim_plot_layouts_one_scenario(layouts, &want, error);
  if (!rows) {
    g_prefix_error(error, "%s: ", req->from);
    return FALSE;
  }
  if (kind == KIND_HEATMAP)
    return ptsim_plot_heatmap(req->out, rows, req->facet, req->from, &req->size, files, error);
  return ptsim_plot_pareto(req->out, rows, req->threshold, req->from, &req->size, files, error);
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
    if (req.stages &&
        !ptsim_plot_range_parse_stages(req.stages, plan->num_stages, &req.range, &error))
      return fail(error);
  }
  switch (kind) {
  case KIND_MEMORY:
    ok = memory_figure(req.out, plan, req.ce, &req.size, &files, &error);
    break;
  case KIND_TIMELINE:
    ok = timeline_figure(req.out, plan, &req.size, &req.range, &files, &error);
    break;
  case KIND_ALLOCATOR:
    ok = allocator_figure(req.out, plan, req.from, &req.size, &req.range, &files, &error);
    break;
  case KIND_HEATMAP:
  case KIND_PARETO:
  case KIND_SCALING:
    ok = sweep_figure(kind, &req, layouts, &files, &error);
    break;
  case KIND_VALIDATION:
    ok = ptsim_plot_validation(req.out, req.from, req.view, (const char *const *)req.held_out,
                               &req.size, &files, &error);
    break;
  }
  if (!ok) return fail(error);
  printf("ptsim plot %s: wrote %s (figure), %s (gnuplot script), %s (data)\n", kinds[req.kind].name,
         files.figure, files.script, files.data);
  ptsim_plot_files_clear(&files);
  return 0;
}

/* ---- the default job's figures ---- */

static const char *const default_figures[] = {"memory", "timeline", "heatmap", "pareto"};

gboolean ptsim_plot_default_figures_check(const char *dir, const char *path, const char *flag,
                                          GError **error) {
  g_autofree char *real_dir = realpath(dir, NULL);
  g_autofree char *parent = g_path_get_dirname(path);
  g_autofree char *real_parent = realpath(parent, NULL);
  if (!real_dir || !real_parent || strcmp(real_dir, real_parent) != 0) return TRUE;
  g_autofree char *base = g_path_get_basename(path);
  static const char *const kinds[] = {".png", ".tsv", ".gp"};
  for (gsize i = 0; i < G_N_ELEMENTS(default_figures); i++)
    for (gsize k = 0; k < G_N_ELEMENTS(kinds); k++) {
      g_autofree char *name = g_strconcat(default_figures[i], kinds[k], NULL);
      if (strcmp(base, name) == 0) {
        g_set_error(error, PTSIM_OUTPUT_ERROR, PTSIM_OUTPUT_ERROR_REFUSED,
                    "%s %s is a file --figures %s writes: two outputs on one path (give each "
                    "output a file of its own)",
                    flag, path, dir);
        return FALSE;
      }
    }
  return TRUE;
}

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
  g_autoptr(GArray) all = ptsim_plot_layouts_from_sweep(sweep, order);
  /* heatmap and pareto draw one scenario: the best layout's (order[0]) */
  const PtsimPlotLayout *top = &g_array_index(all, PtsimPlotLayout, 0);
  PtsimPlotScenario want = {top->model, top->hw, top->gpus, top->seq, top->gbs};
  g_autoptr(GArray) layouts = ptsim_plot_layouts_one_scenario(all, &want, NULL);
  const char *const *names = default_figures;
  const char *what[] = {"per-stage memory of the best layout", "its simulated step",
                        "tokens/s per GPU over tp x pp", "memory vs throughput of every layout"};
  gboolean all_ok = TRUE;
  GString *written = g_string_new(NULL);
  for (size_t i = 0; i < G_N_ELEMENTS(default_figures); i++) {
    g_autofree char *name = g_strconcat(names[i], ".png", NULL);
    g_autofree char *path = g_build_filename(dir, name, NULL);
    g_autoptr(GError) error = NULL;
    PtsimPlotFiles files = {NULL, NULL, NULL};
    gboolean ok = FALSE;
    switch (i) {
    case 0:
      ok = memory_figure(path, best, PTSIM_CE_LAST_STAGE, NULL, &files, &error);
      break;
    case 1:
      ok = timeline_figure(path, best, NULL, NULL, &files, &error);
      break;
    case 2:
      ok = ptsim_plot_heatmap(path, layouts, PTSIM_PLOT_FACET_CP, NULL, NULL, &files, &error);
      break;
    case 3:
      ok = ptsim_plot_pareto(path, layouts, 0.0, NULL, NULL, &files, &error);
      break;
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
