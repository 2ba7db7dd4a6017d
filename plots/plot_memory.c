/* plot_memory.c — per-GPU memory of each pipeline stage as stacked bars;
 * see plot.h (ptsim_plot_memory).
 *
 * Layout, chosen so nothing collides at a column's width: the key under
 * the plot (it took ~45% of the width on the right), the capacity and
 * fit-limit lines named in the key and their values in the right margin
 * (a label above a line meets the bar tops), the analytical total inside
 * the top of its stack and the allocator's peak above its outline, both
 * only when the bar is wide enough for the number. */
#include <math.h>
#include "plot_int.h"

#define GIB PTSIM_PLOT_GIB

gboolean ptsim_plot_memory(const char *figure_path, const PtsimJob *job,
                           const PtsimMemoryEstimate *memory, const PtsimAllocResult *alloc,
                           const PtsimPlotSize *size, PtsimPlotFiles *out, GError **error) {
  g_return_val_if_fail(figure_path && job && memory, FALSE);
  g_return_val_if_fail(!alloc || alloc->num_stages == memory->num_stages, FALSE);
  g_auto(PtsimPlotFiles) files = {NULL, NULL, NULL};
  PtsimPlotCanvas c;
  if (!ptsim_plot_begin(figure_path, size, &files, &c, error)) return FALSE;

  int64_t n = memory->num_stages;
  double capacity_gib = memory->capacity_bytes / GIB;
  double threshold = job->settings.memory_threshold;
  double max_total = 0, max_other = 0;
  /* ZeRO-2/3's gathered units and unsharded gradients go with "other" */
  gboolean sharded = job->layout.sharding != PTSIM_SHARDING_NONE;
  /* an MoE model's parameters split in its routed experts' and the rest */
  gboolean moe = job->model.num_experts > 0;
  g_autofree PtsimPlan *plan = moe ? g_new0(PtsimPlan, 1) : NULL;
  if (moe) ptsim_plan_build(job, plan);
  g_autoptr(GString) tsv = g_string_new(NULL);
  g_string_append(tsv, "# ptsim memory estimate: per-GPU memory of each pipeline stage, in GiB "
                       "(2^30 bytes)\n");
  ptsim_plot_job_comment(tsv, job);
  g_string_append(tsv, "# capacity_gib ");
  ptsim_plot_num(tsv, "%.4f", capacity_gib);
  g_string_append(tsv, ", memory_threshold ");
  ptsim_plot_num(tsv, "%.3f", threshold);
  g_string_append_printf(
      tsv,
      "\n# columns: stage (0-based), layers (transformer layers on the stage), "
      "parameters_gib, gradients_gib, optimizer_gib, activations_gib, other_gib "
      "(input ids + fp32 logits%s), total_gib, usage (total / capacity), "
      "alloc_reserved_gib (caching-allocator emulation: reserved peak over 2 "
      "steps), outside_gib (CUDA context + NCCL, outside the allocator), "
      "alloc_device_gib (reserved + outside), alloc_oom (1: an allocation failed at "
      "the GPU's capacity, the peak is where it stopped); NaN: not emulated%s\n"
      "# stage\tlayers\tparameters_gib\tgradients_gib\toptimizer_gib"
      "\tactivations_gib\tother_gib\ttotal_gib\tusage"
      "\talloc_reserved_gib\toutside_gib\talloc_device_gib\talloc_oom%s\n",
      sharded ? " + the FSDP units gathered and the unsharded gradients" : "",
      moe ? "; expert_parameters_gib (the routed experts' part of parameters_gib)" : "",
      moe ? "\texpert_parameters_gib" : "");
  for (int64_t s = 0; s < n; s++) {
    const PtsimStageMemory *m = &memory->stages[s];
    double other = m->other_bytes + (sharded ? m->unsharded_bytes : 0.0);
    const double terms[] = {
        m->parameters_bytes, m->gradients_bytes, m->optimizer_bytes, m->activations_bytes, other,
        m->total_bytes};
    g_string_append_printf(tsv, "%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT, s, m->num_layers);
    for (size_t i = 0; i < G_N_ELEMENTS(terms); i++) {
      g_string_append_c(tsv, '\t');
      ptsim_plot_num(tsv, "%.4f", terms[i] / GIB);
    }
    g_string_append_c(tsv, '\t');
    ptsim_plot_num(tsv, "%.4f",
                   memory->capacity_bytes > 0 ? m->total_bytes / memory->capacity_bytes : 0);
    if (alloc) {
      const PtsimStageAlloc *a = &alloc->stages[s];
      const double al[] = {a->reserved_peak_bytes, a->outside_bytes, a->device_peak_bytes};
      for (size_t i = 0; i < G_N_ELEMENTS(al); i++) {
        g_string_append_c(tsv, '\t');
        ptsim_plot_num(tsv, "%.4f", al[i] / GIB);
      }
      g_string_append_printf(tsv, "\t%d", !a->fits);
      max_total = MAX(max_total, a->device_peak_bytes / GIB);
    } else {
      g_string_append(tsv, "\tNaN\tNaN\tNaN\tNaN");
    }
    if (moe) {
      g_string_append_c(tsv, '\t');
      /* ZeRO-3 keeps their shard (plan.h expert_weight_shards) */
      ptsim_plot_num(tsv, "%.4f",
                     2.0 * plan->stage_expert_parameters[s] / plan->expert_weight_shards / GIB);
    }
    g_string_append_c(tsv, '\n');
    max_total = MAX(max_total, m->total_bytes / GIB);
    max_other = MAX(max_other, other / GIB);
  }

  /* Plot width: the canvas less the y axis (~1.6 cm) and the line values
   * in the right margin (~1.2 cm).  A bar is 70% of its slot; a number
   * goes on it when it fits with a little room. */
  double plot_cm = c.width_cm - 1.6 - 1.2;
  double bar_cm = 0.7 * plot_cm / (double)n;
  int show_values = bar_cm >= 1.15 * ptsim_plot_text_cm(c.tiny_pt, 4.0);
  int64_t tic_every = 1;
  while (plot_cm / ((double)n / (double)tic_every) < ptsim_plot_text_cm(c.small_pt, 4.0))
    tic_every = tic_every < 5 ? tic_every + 1 : tic_every * 2;
  /* Bars under ~6 pt: no borders (they would be all one sees) and the
   * allocator's peak as a step line over the bars instead of an outline
   * around each; stages ticked on a round step. */
  int thin = bar_cm < 0.2;
  /* the key under the plot: five terms, the outline, the two lines */
  g_autofree char *other_title = g_strdup_printf("other (ids, logits%s; %s%.2f GiB)",
                                                 sharded ? ", FSDP buffers" : "",
                                                 n > 1 ? "\xe2\x89\xa4 " : "", max_other);
  int longest = MAX((int)g_utf8_strlen(other_title, -1), alloc ? 26 : 16);
  int per_row = 1,
      key_rows = ptsim_plot_key_rows(&c, (alloc ? 8 : 7) + (moe ? 1 : 0), longest, &per_row);
  int title_lines = c.narrow ? 5 : 3;
  g_autofree char *what = ptsim_plot_job_what(job);
  g_autofree char *layout = ptsim_plot_job_layout(job);
  g_autofree char *sub =
      g_strdup_printf("%s%s", show_values ? "analytical total in the bar" : "analytical estimate",
                      !alloc        ? ""
                      : show_values ? ", allocator peak above its outline"
                      : thin        ? " and allocator peak (line)"
                                    : " and allocator peak (outline)");
  const char *title[] = {what, layout, sub, NULL};
  double top_cm = 0.35, bottom_cm = ptsim_plot_axis_cm(&c) + ptsim_plot_key_cm(&c, key_rows);
  ptsim_plot_canvas_height(&c, ptsim_plot_title_cm(&c, title_lines, title) + top_cm +
                                   (c.narrow ? 4.0 : 4.8) + bottom_cm);

  g_autoptr(GString)
      gp = ptsim_plot_script_begin(&files, &c, "memory: per-GPU memory of each pipeline stage.",
                                   job, NULL);
  g_string_append(gp, "\ncapacity_gib = ");
  ptsim_plot_num(gp, "%.4f", capacity_gib);
  g_string_append(gp, "  # GPU memory\nthreshold = ");
  ptsim_plot_num(gp, "%.3f", threshold);
  g_string_append_printf(gp,
                         "     # fit verdict: total <= threshold x capacity\n"
                         "stages = %" G_GINT64_FORMAT "\n"
                         "xtic_every = %" G_GINT64_FORMAT "  # label every n-th stage\n"
                         "xtic_step = %g  # with many stages, the tics' round step\n"
                         "show_values = %d   # 1: the GiB of each bar written on it\n"
                         "have_alloc = %d    # the allocator emulation's outline is in the data\n"
                         "thin = %d          # 1: bars too thin for borders and outlines\n",
                         n, tic_every, ptsim_plot_nice_step(0, (double)n, c.narrow ? 4 : 8),
                         show_values, alloc != NULL, thin);
  ptsim_plot_title(gp, &c, title_lines, title);
  ptsim_plot_margins(gp, top_cm, bottom_cm);
  double ymax = MAX(capacity_gib, max_total) * 1.1;
  g_string_append(gp, "set yrange [0:");
  ptsim_plot_num(gp, "%.2f", ymax);
  g_string_append(gp, "]\nset ytics 0,");
  ptsim_plot_num(gp, "%g", ptsim_plot_nice_step(0, ymax, c.narrow ? 4 : 5));
  g_string_append_c(gp, '\n');
  ptsim_plot_key_under(gp, &c, per_row, longest, 0.0);
  g_string_append_printf(
      gp,
      "set xrange [-0.6:stages-0.4]\n"
      "set xlabel 'pipeline stage' offset 0,0.3\n"
      "set ylabel 'memory per GPU (GiB)'\n"
      "set rmargin %d   # room for the two lines' values\n"
      "set style data histograms\n"
      "set style histogram rowstacked\n"
      "if (thin) { set style fill solid 1.0 noborder } else { set style fill solid 1.0 border lc rgb '#303030' }\n"
      "set boxwidth 0.7 relative\n"
      "# the lines are named in the key; their values sit in the right margin\n"
      "set label 1 sprintf('%%.1f', capacity_gib) at graph 1, first capacity_gib left "
      "offset 0.4,0 font f_small\n"
      "set label 2 sprintf('%%.1f', threshold*capacity_gib) at graph 1, first "
      "threshold*capacity_gib left offset 0.4,0 font f_small\n"
      "set label 3 'GiB' at graph 1, graph 1 left offset 0.4,0.6 font f_small tc rgb c_note\n"
      "stage_tic(s) = (int(s) %% xtic_every == 0) ? sprintf('%%d', int(s)) : ''\n"
      "if (xtic_every > 1) { set xtics 0, %s scale 0.6 }  # a round step, not a tic per bar\n"
      "# the allocator's number sits above its outline or the stack, whichever is higher\n"
      "top(a, b) = column(b) > column(a) ? column(b) : column(a)\n"
      "set style textbox opaque noborder margins 0.5,0.3\n"
      "# a labelled tic per bar, or (many stages) the round step above\n"
      "xtic_using = xtic_every > 1 ? '' : ':xtic(stage_tic(column(1)))'\n"
      "%s"
      "     ''   using 4 title 'gradients' lc rgb c_gradients, \\\n"
      "     ''   using 5 title 'optimizer states' lc rgb c_optimizer, \\\n"
      "     ''   using 6 title 'activations' lc rgb c_activations, \\\n"
      "     ''   using 7 title '%s' lc rgb c_other, \\\n"
      "     ''   using 0:(show_values ? column(8) : NaN):(sprintf('%%.1f', column(8))) \\\n"
      "          with labels offset 0,-0.55 font f_tiny tc rgb '#000000' notitle, \\\n"
      "     ''   using 0:(show_values && have_alloc ? top(8, 12) : NaN):(column(13) == 1 ? 'OOM' : "
      "sprintf('%%.1f', column(12))) \\\n"
      "          with labels offset 0,0.65 font f_tiny tc rgb c_alloc boxed notitle, \\\n"
      "     ''   using (thin ? NaN : $0-0.4):12:($0-0.4):($0+0.4):(0):12 with boxxyerror fs empty \\\n"
      "          lw 1.2 lc rgb c_alloc title (have_alloc && !thin ? 'allocator peak + ctx/NCCL' : ''), \\\n"
      "     ''   using (thin ? $0 : NaN):12 with histeps lw 1.2 lc rgb c_alloc \\\n"
      "          title (have_alloc && thin ? 'allocator peak + ctx/NCCL' : ''), \\\n"
      "     capacity_gib with lines dashtype solid lw 1.5 lc rgb c_line title 'capacity', \\\n"
      "     threshold*capacity_gib with lines dashtype (8,5) lw 1.5 lc rgb c_line \\\n"
      "          title sprintf('fit limit (%%.0f%%%%)', 100*threshold)\n",
      5, "xtic_step",
      /* an MoE model: the parameters as its routed experts' (column 14) and the rest */
      moe ? "c_expert_parameters = '#7b3294'\n"
            "plot data using ($3-$14)@xtic_using title 'dense parameters' lc rgb c_parameters, \\\n"
            "     ''   using 14 title 'expert parameters' lc rgb c_expert_parameters, \\\n"
          : "plot data using 3@xtic_using title 'parameters' lc rgb c_parameters, \\\n",
      other_title);
  return ptsim_plot_render(&files, tsv, gp, out, error);
}
