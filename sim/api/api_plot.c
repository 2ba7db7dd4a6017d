/* api_plot.c — the figures of a file through the library; see ptsim.h
 * (ptsim_api_plot).  The kinds `ptsim plot` draws from a file: heatmap,
 * pareto and scaling from a sweep CSV, validation from a runs CSV, drawn by
 * the very functions the command calls (plots/: the figure, its gnuplot
 * script NAME.gp and its data NAME.tsv, then gnuplot).  Only the flag words
 * are read here, with the command's messages (sim/cli/plot_cmd.c). */
#include "api_int.h"

#include <string.h>
#include "config.h"
#include "numbers.h"
#include "plot.h"

typedef struct {
  char *facet, *y, *size, *view, *held_out, *model, *hw, *gpus, *seq, *gbs;
} PlotFlags;

static void plot_flags_clear(PlotFlags *f) {
  char **fields[] = {&f->facet, &f->y,  &f->size, &f->view, &f->held_out,
                     &f->model, &f->hw, &f->gpus, &f->seq,  &f->gbs};
  for (gsize i = 0; i < G_N_ELEMENTS(fields); i++) g_clear_pointer(fields[i], g_free);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(PlotFlags, plot_flags_clear)

/* FLAG's value, when given, as a count > 0 into *OUT (0: not given). */
static gboolean scenario_number(const char *flag, const char *text, gint64 *out, GError **error) {
  *out = 0;
  if (!text) return TRUE;
  if (ptsim_number_parse_int64(text, out) && *out > 0) return TRUE;
  g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
              "%s '%s': expected a whole number > 0", flag, text);
  return FALSE;
}

/* "applies to KINDS only", as the command says it. */
static gboolean only_for(const char *value, const char *flag, gboolean applies, const char *kinds,
                         GError **error) {
  if (!value || applies) return TRUE;
  g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "%s applies to %s only", flag, kinds);
  return FALSE;
}

static gboolean plot(const char *kind, const char *from, const char *out,
                     const char *const *options, GError **error) {
  g_auto(PlotFlags) f;
  memset(&f, 0, sizeof f);
  const GOptionEntry entries[] = {{"facet", 0, 0, G_OPTION_ARG_STRING, &f.facet, NULL, NULL},
                                  {"y", 0, 0, G_OPTION_ARG_STRING, &f.y, NULL, NULL},
                                  {"size", 0, 0, G_OPTION_ARG_STRING, &f.size, NULL, NULL},
                                  {"view", 0, 0, G_OPTION_ARG_STRING, &f.view, NULL, NULL},
                                  {"held-out", 0, 0, G_OPTION_ARG_STRING, &f.held_out, NULL, NULL},
                                  {"model", 0, 0, G_OPTION_ARG_STRING, &f.model, NULL, NULL},
                                  {"hw", 0, 0, G_OPTION_ARG_STRING, &f.hw, NULL, NULL},
                                  {"gpus", 0, 0, G_OPTION_ARG_STRING, &f.gpus, NULL, NULL},
                                  {"seq", 0, 0, G_OPTION_ARG_STRING, &f.seq, NULL, NULL},
                                  {"gbs", 0, 0, G_OPTION_ARG_STRING, &f.gbs, NULL, NULL},
                                  {NULL, 0, 0, 0, NULL, NULL, NULL}};
  gboolean heatmap = g_strcmp0(kind, "heatmap") == 0, pareto = g_strcmp0(kind, "pareto") == 0,
           scaling = g_strcmp0(kind, "scaling") == 0,
           validation = g_strcmp0(kind, "validation") == 0;
  if (!heatmap && !pareto && !scaling && !validation) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "unknown kind '%s': the library draws heatmap|pareto|scaling|validation (memory, "
                "timeline and allocator: ptsim plot KIND with the job's flags)",
                kind ? kind : "(none)");
    return FALSE;
  }
  /* argv with a program name, copied: GOption reorders and removes words */
  g_autoptr(GPtrArray) words = g_ptr_array_new_with_free_func(g_free);
  g_ptr_array_add(words, g_strdup("plot"));
  for (gsize i = 0; options && options[i]; i++) g_ptr_array_add(words, g_strdup(options[i]));
  g_ptr_array_add(words, NULL);
  gint argc = (gint)words->len - 1;
  g_autofree char **argv = g_memdup2(words->pdata, words->len * sizeof(char *));
  g_autoptr(GOptionContext) context = g_option_context_new(NULL);
  g_option_context_set_help_enabled(context, FALSE);
  g_option_context_add_main_entries(context, entries, NULL);
  if (!g_option_context_parse(context, &argc, &argv, error)) return FALSE;
  if (argc > 1) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED,
                "unexpected argument '%s' (see ptsim plot --help)", argv[1]);
    return FALSE;
  }
  if (!out) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED,
                "--out FILE.pdf|.png|.svg is required");
    return FALSE;
  }
  PtsimPlotFormat format;
  if (!ptsim_plot_format_from_path(out, &format, error)) return FALSE;
  if (!from) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "%s needs --from FILE (see --help)",
                kind);
    return FALSE;
  }
  if (!only_for(f.facet, "--facet", heatmap, "heatmap", error) ||
      !only_for(f.y, "--y", scaling, "scaling", error) ||
      !only_for(f.view, "--view", validation, "validation", error) ||
      !only_for(f.held_out, "--held-out", validation, "validation", error))
    return FALSE;
  PtsimPlotFacet facet = PTSIM_PLOT_FACET_CP;
  if (f.facet && strcmp(f.facet, "mbs") == 0)
    facet = PTSIM_PLOT_FACET_MBS;
  else if (f.facet && strcmp(f.facet, "cp") != 0) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "--facet '%s': allowed values are cp|mbs", f.facet);
    return FALSE;
  }
  PtsimPlotScalingY y = PTSIM_PLOT_Y_THROUGHPUT;
  if (f.y && strcmp(f.y, "step") == 0)
    y = PTSIM_PLOT_Y_STEP;
  else if (f.y && strcmp(f.y, "tokens") != 0) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "--y '%s': allowed values are tokens|step", f.y);
    return FALSE;
  }
  PtsimPlotValidationView view = PTSIM_PLOT_VALIDATION_RESIDUAL;
  if (f.view && strcmp(f.view, "parity") == 0)
    view = PTSIM_PLOT_VALIDATION_PARITY;
  else if (f.view && strcmp(f.view, "residual") != 0) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "--view '%s': allowed values are residual|parity", f.view);
    return FALSE;
  }
  PtsimPlotSize size;
  ptsim_plot_size_default(&size);
  if (f.size && !ptsim_plot_size_parse(f.size, &size, error)) return FALSE;
  PtsimPlotScenario want = {f.model, f.hw, 0, 0, 0};
  if (!scenario_number("--gpus", f.gpus, &want.gpus, error) ||
      !scenario_number("--seq", f.seq, &want.seq, error) ||
      !scenario_number("--gbs", f.gbs, &want.gbs, error))
    return FALSE;
  PtsimPlotFiles files = {NULL, NULL, NULL};
  gboolean ok;
  if (validation) {
    g_auto(GStrv) held_out = f.held_out ? g_strsplit(f.held_out, ",", -1) : NULL;
    for (char **h = held_out; h && *h; h++) g_strstrip(*h);
    ok = ptsim_plot_validation(out, from, view, (const char *const *)held_out, &size, &files,
                               error);
  } else {
    g_autoptr(GArray) layouts = ptsim_plot_layouts_read_csv(from, error);
    if (!layouts) return FALSE;
    if (scaling) {
      ok = ptsim_plot_scaling(out, layouts, y, from, &size, &files, error);
    } else {
      g_autoptr(GArray) rows = ptsim_plot_layouts_one_scenario(layouts, &want, error);
      if (!rows) {
        g_prefix_error(error, "%s: ", from);
        return FALSE;
      }
      ok = heatmap ? ptsim_plot_heatmap(out, rows, facet, from, &size, &files, error)
                   : ptsim_plot_pareto(out, rows, 0.0, from, &size, &files, error);
    }
  }
  ptsim_plot_files_clear(&files);
  return ok;
}

int ptsim_api_plot(const char *kind, const char *from, const char *out, const char *const *options,
                   PtsimApiError **error) {
  g_autoptr(GError) local = NULL;
  if (plot(kind, from, out, options, &local)) return 0;
  ptsim_api_error_set(error, local, NULL);
  return -1;
}
