/* plot.c — gnuplot figures; see plot.h.
 *
 * Each writer builds the .tsv and the .gp in memory, writes both through
 * the output policy (output.h: no half-written file, no input or device
 * replaced), and then runs gnuplot in the figure's folder so that every
 * name in the script is relative; the figure goes to a temporary and
 * replaces the old one only when gnuplot succeeded.  Numbers go through g_ascii_formatd: the files read the same
 * under any locale.
 *
 * Palette (CIE L* in brackets, so the grayscale order is known):
 *   memory terms, bottom to top — viridis steps: parameters #440154 (15),
 *   gradients #3b528b (36), optimizer #21918c (55), activations #5ec962
 *   (73), other #fde725 (91).
 *   timeline — compute solid, communication hatched:
 *   forward #92c5de (77), backward #b2182b (38) — odd model chunks of an
 *   interleaved schedule a darker shade: #4393c3 (58), #67001f (20) —, backward-input #d6604d
 *   (55), backward-weight #7f3b08 (33), optimizer #252525 (15),
 *   grad-sync #1b7837 hatched, param-gather #762a83 cross-hatched.
 *   Forward and backward, the two that fill most of a chart, are 39 L*
 *   apart; zb-h1's F, B, W are 77 / 55 / 33. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <unistd.h>
#include <string.h>
#include <glib/gstdio.h>
#include "names.h"
#include "output.h"
#include "plot.h"
#include "plot_int.h"

#define GIB PTSIM_PLOT_GIB
#define FONT_PT 9.0

G_DEFINE_QUARK(ptsim-plot-error-quark, ptsim_plot_error)

void ptsim_plot_files_clear(PtsimPlotFiles *files) {
  g_clear_pointer(&files->figure, g_free);
  g_clear_pointer(&files->script, g_free);
  g_clear_pointer(&files->data, g_free);
}

/* ---- formatting helpers ---- */

void ptsim_plot_num(GString *s, const char *format, double value) {
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_string_append(s, g_ascii_formatd(buf, sizeof buf, format, value));
}

void ptsim_plot_quoted(GString *s, const char *text) {
  g_string_append_c(s, '\'');
  for (const char *p = text; *p; p++) {
    if (*p == '\'') g_string_append_c(s, '\'');
    if (*p == '\n' || *p == '\r') continue;
    g_string_append_c(s, *p);
  }
  g_string_append_c(s, '\'');
}

/* A "# key value" header line naming the job, shared by .tsv and .gp. */
static void append_job_comment(GString *s, const PtsimJob *job) {
  const PtsimLayout *l = &job->layout;
  g_string_append_printf(
      s,
      "# job: model %s, hw %s, gpus %" G_GINT64_FORMAT ", tp %" G_GINT64_FORMAT
      " pp %" G_GINT64_FORMAT " cp %" G_GINT64_FORMAT " dp %" G_GINT64_FORMAT
      " vp %" G_GINT64_FORMAT ", mbs %" G_GINT64_FORMAT " gbs %" G_GINT64_FORMAT
      " seq %" G_GINT64_FORMAT ", recompute %s, schedule %s\n",
      job->model.name, job->hw.name, l->gpus, l->tp, l->pp, l->cp, l->dp, l->vp, l->mbs,
      l->gbs, l->seq, ptsim_names_get(PTSIM_NAMES_RECOMPUTE, l->recompute),
      ptsim_names_get(PTSIM_NAMES_SCHEDULE, l->schedule));
}

/* One-line description of the job for a figure title.  (transfer full) */
static char *job_title(const PtsimJob *job) {
  const PtsimLayout *l = &job->layout;
  g_autofree char *vp =
      l->vp > 1 ? g_strdup_printf(" vp %" G_GINT64_FORMAT, l->vp) : g_strdup("");
  return g_strdup_printf("%s on %" G_GINT64_FORMAT " x %s: tp %" G_GINT64_FORMAT
                         " pp %" G_GINT64_FORMAT " cp %" G_GINT64_FORMAT
                         " dp %" G_GINT64_FORMAT "%s, mbs %" G_GINT64_FORMAT
                         " gbs %" G_GINT64_FORMAT " seq %" G_GINT64_FORMAT
                         ", recompute %s, %s",
                         job->model.name, l->gpus, job->hw.name, l->tp, l->pp, l->cp, l->dp,
                         vp, l->mbs, l->gbs, l->seq,
                         ptsim_names_get(PTSIM_NAMES_RECOMPUTE, l->recompute),
                         ptsim_names_get(PTSIM_NAMES_SCHEDULE, l->schedule));
}

/* Appends the job's description as a label at the figure's top left (a
 * `set title` is centred over the plot area and clipped when the key takes
 * the right margin): the model and GPUs, the layout, then `extra` when
 * given.  Sets the top margin to fit. */
static void append_title(GString *gp, const PtsimJob *job, const char *extra) {
  const PtsimLayout *l = &job->layout;
  g_autofree char *first =
      g_strdup_printf("%s on %" G_GINT64_FORMAT " x %s", job->model.name, l->gpus, job->hw.name);
  g_autofree char *full = job_title(job);
  const char *layout = strstr(full, ": ");
  layout = layout ? layout + 2 : full;
  ptsim_plot_title_lines(gp, first, layout, extra);
}

void ptsim_plot_title_lines(GString *gp, const char *first, const char *second,
                            const char *third) {
  const char *lines[] = {first, second, third};
  int n = 0;
  g_string_append(gp, "# what was run, top left; delete these lines for a paper (the caption says it)\n");
  g_string_append(gp, "set label 100 ");
  for (size_t i = 0; i < G_N_ELEMENTS(lines); i++) {
    if (!lines[i]) continue;
    if (n++) g_string_append(gp, ".\"\\n\".");  /* a line break: double-quoted "\n" */
    ptsim_plot_quoted(gp, lines[i]);
  }
  g_string_append_printf(gp, " at character 1, screen 1 offset 0,-1 left front\nset tmargin %d\n",
                         n + 2);
}

void ptsim_plot_script_header(GString *gp, const char *what, const PtsimPlotFiles *files) {
  g_autofree char *data_name = g_path_get_basename(files->data);
  g_autofree char *script_name = g_path_get_basename(files->script);
  g_string_append_printf(gp, "# ptsim plot %s\n# Reads %s; edit and rerun in this folder: gnuplot %s\n",
                         what, data_name, script_name);
}

/* ---- paths and formats ---- */

gboolean ptsim_plot_format_from_path(const char *path, PtsimPlotFormat *out, GError **error) {
  g_return_val_if_fail(path != NULL && out != NULL, FALSE);
  static const struct {
    const char *ext;
    PtsimPlotFormat format;
  } known[] = {{".pdf", PTSIM_PLOT_PDF}, {".png", PTSIM_PLOT_PNG}, {".svg", PTSIM_PLOT_SVG}};
  g_autofree char *base = g_path_get_basename(path);
  const char *dot = strrchr(base, '.');
  if (dot && dot != base) {
    for (size_t i = 0; i < G_N_ELEMENTS(known); i++)
      if (g_ascii_strcasecmp(dot, known[i].ext) == 0) {
        *out = known[i].format;
        return TRUE;
      }
  }
  g_set_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_FORMAT,
              "--out '%s': the figure name must end in .pdf, .png or .svg", path);
  return FALSE;
}

gboolean ptsim_plot_files_for(const char *figure_path, PtsimPlotFormat *format,
                              PtsimPlotFiles *files, GError **error) {
  if (!ptsim_plot_format_from_path(figure_path, format, error)) return FALSE;
  const char *dot = strrchr(figure_path, '.');
  g_autofree char *stem = g_strndup(figure_path, (gsize)(dot - figure_path));
  files->figure = g_strdup(figure_path);
  files->script = g_strconcat(stem, ".gp", NULL);
  files->data = g_strconcat(stem, ".tsv", NULL);
  return TRUE;
}

/* ---- the shared style ---- */

void ptsim_plot_style(GString *gp, PtsimPlotFormat format, const char *figure_name,
                      double width_cm, double height_cm) {
  g_string_append(gp, "# ---- style (shared by every ptsim figure) ----\n");
  switch (format) {
    case PTSIM_PLOT_PDF:
      g_string_append(gp, "set terminal pdfcairo enhanced color font 'Sans,");
      ptsim_plot_num(gp, "%.0f", FONT_PT);
      /* pdfcairo's defaults are fontscale 0.5 and 0.5 pt lines: undo both so
       * the PDF shows FONT_PT text and 1 pt lines, like the PNG. */
      g_string_append(gp, "' fontscale 1.0 linewidth 2 size ");
      ptsim_plot_num(gp, "%.1f", width_cm);
      g_string_append(gp, "cm,");
      ptsim_plot_num(gp, "%.1f", height_cm);
      g_string_append(gp, "cm\n");
      break;
    case PTSIM_PLOT_PNG:
      /* 150 pixels per inch; cairo's font points are at 72 per inch, hence
       * the fontscale, so the PNG looks like the PDF at 2x. */
      g_string_append(gp, "set terminal pngcairo enhanced color font 'Sans,");
      ptsim_plot_num(gp, "%.0f", FONT_PT);
      g_string_append(gp, "' fontscale ");
      ptsim_plot_num(gp, "%.3f", 150.0 / 72.0);
      g_string_append(gp, " linewidth ");
      ptsim_plot_num(gp, "%.3f", 150.0 / 72.0);
      g_string_append_printf(gp, " size %d,%d\n", (int)lround(width_cm / 2.54 * 150.0),
                             (int)lround(height_cm / 2.54 * 150.0));
      break;
    case PTSIM_PLOT_SVG:
      g_string_append(gp, "set terminal svg enhanced font 'Sans,");
      ptsim_plot_num(gp, "%.0f", FONT_PT);
      g_string_append_printf(gp, "' linewidth 1 size %d,%d background '#ffffff'\n",
                             (int)lround(width_cm / 2.54 * 72.0),
                             (int)lround(height_cm / 2.54 * 72.0));
      break;
  }
  /* ptsim renders into a temporary name it passes as ptsim_output and moves
   * the figure into place only when gnuplot succeeded; run by hand, the
   * script writes the figure itself. */
  g_string_append(gp, "set output (exists('ptsim_output') ? ptsim_output : ");
  ptsim_plot_quoted(gp, figure_name);
  g_string_append(gp,
                  ")\nset encoding utf8\n"
                  "set termoption noenhanced       # names with '_' print as typed\n"
                  "set datafile separator '\\t'\n"
                  "set border 3 linewidth 0.8 linecolor rgb '#404040'  # left + bottom only\n"
                  "set xtics nomirror out scale 0.6\n"
                  "set ytics nomirror out scale 0.6\n"
                  "set grid ytics linetype 1 linewidth 0.8 linecolor rgb '#d4d4d4' dashtype solid\n"
                  "set grid noxtics\n"
                  "set key noautotitle nobox samplen 1.6 spacing 1.1\n"
                  "# memory terms, bottom to top (viridis; CIE L* 15, 36, 55, 73, 91)\n"
                  "c_parameters  = '#440154'\n"
                  "c_gradients   = '#3b528b'\n"
                  "c_optimizer   = '#21918c'\n"
                  "c_activations = '#5ec962'\n"
                  "c_other       = '#fde725'\n"
                  "# timeline: compute solid, communication hatched (L* in comments)\n"
                  "c_forward         = '#92c5de'  # 77\n"
                  "c_forward_odd     = '#4393c3'  # 58, odd model chunks (interleaved)\n"
                  "c_backward        = '#b2182b'  # 38\n"
                  "c_backward_odd    = '#67001f'  # 20, odd model chunks (interleaved)\n"
                  "c_backward_input  = '#d6604d'  # 55\n"
                  "c_backward_weight = '#7f3b08'  # 33\n"
                  "c_optimizer_step  = '#252525'  # 15\n"
                  "c_grad_sync       = '#1b7837'  # 44, pattern 4\n"
                  "c_param_gather    = '#762a83'  # 32, pattern 5\n"
                  "c_line = '#000000'\n"
                  "c_alloc = '#d95f02'   # allocator outline on the memory bars (L* 58)\n"
                  "c_oom   = '#bdbdbd'   # cells/points that do not fit (L* 77, hatched)\n"
                  "c_band  = '#e8e8e8'   # tolerance bands\n"
                  "# series (one per hw, source, stage): each also has its own point type and\n"
                  "# dash type, so lines stay apart in grayscale (L* 0, 48, 63, 30, 75, 40)\n"
                  "array c_series[6] = ['#000000', '#0072b2', '#e69f00', '#7b3294', '#56b4e9', '#b2182b']\n"
                  "array pt_series[6] = [7, 5, 9, 11, 13, 15]\n"
                  "array dt_series[6] = [1, 2, 4, 5, 3, 1]\n"
                  "# sequential colour scale (viridis; lightness rises monotonically)\n"
                  "set palette defined (0 '#440154', 1 '#3b528b', 2 '#21918c', 3 '#5ec962', 4 '#fde725')\n"
                  "# ---- figure ----\n");
}

/* ---- running gnuplot ---- */

/* Runs gnuplot on SCRIPT_PATH in its folder; OUTPUT_NAME (may be NULL) is
 * the file name the figure goes to instead of the script's own. */
static gboolean run_gnuplot(const char *script_path, const char *output_name, GError **error) {
  g_autofree char *gnuplot = g_find_program_in_path("gnuplot");
  if (!gnuplot) {
    g_set_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_NO_GNUPLOT,
                "gnuplot not found on PATH; install it (Debian/Ubuntu: apt-get install "
                "gnuplot-nox) and run 'gnuplot %s' in its folder, or rerun this command",
                script_path);
    return FALSE;
  }
  g_autofree char *dir = g_path_get_dirname(script_path);
  g_autofree char *name = g_path_get_basename(script_path);
  g_autoptr(GString) define = g_string_new("ptsim_output = ");
  if (output_name) ptsim_plot_quoted(define, output_name);
  char *argv[] = {gnuplot, "-e", define->str, name, NULL};
  if (!output_name) { /* the script's own output name */
    argv[1] = name;
    argv[2] = NULL;
  }
  g_autofree char *out = NULL, *err = NULL;
  int status = 0;
  if (!g_spawn_sync(dir, argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, error)) {
    g_prefix_error(error, "running %s: ", gnuplot);
    return FALSE;
  }
  g_autoptr(GError) wait_error = NULL;
  if (!g_spawn_check_wait_status(status, &wait_error)) {
    g_strstrip(err);
    g_strdelimit(err, "\r\n", ' '); /* one line */
    g_set_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_GNUPLOT, "gnuplot %s: %s%s%s",
                script_path, wait_error->message, *err ? ": " : "", err);
    return FALSE;
  }
  return TRUE;
}

gboolean ptsim_plot_run_gnuplot(const char *script_path, GError **error) {
  g_return_val_if_fail(script_path != NULL, FALSE);
  return run_gnuplot(script_path, NULL, error);
}

gboolean ptsim_plot_render(PtsimPlotFiles *files, const GString *tsv, const GString *gp,
                           PtsimPlotFiles *out, GError **error) {
  /* Every output is checked before any is written: a refused path (an
   * input, a device) leaves nothing behind. */
  if (!ptsim_output_check(files->data, error) || !ptsim_output_check(files->script, error) ||
      !ptsim_output_check(files->figure, error))
    return FALSE;
  if (!ptsim_output_write(files->data, tsv->str, tsv->len, error) ||
      !ptsim_output_write(files->script, gp->str, gp->len, error))
    return FALSE;
  /* gnuplot writes a temporary beside the figure; only a complete figure
   * replaces the old one, so a failing gnuplot leaves no partial file. */
  g_autofree char *dir = g_path_get_dirname(files->figure);
  g_autofree char *base = g_path_get_basename(files->figure);
  g_autofree char *tmp = g_strdup_printf("%s/.%s.XXXXXX", dir, base);
  int fd = g_mkstemp_full(tmp, O_RDWR | O_CLOEXEC, 0666);
  if (fd < 0) {
    int saved = errno;
    g_set_error(error, PTSIM_OUTPUT_ERROR, PTSIM_OUTPUT_ERROR_WRITE,
                "%s: creating a file beside it failed: %s", files->figure, g_strerror(saved));
    return FALSE;
  }
  close(fd);
  g_autofree char *tmp_name = g_path_get_basename(tmp);
  g_autofree char *figure = NULL;
  gsize len = 0;
  gboolean ok = run_gnuplot(files->script, tmp_name, error);
  if (ok && (!g_file_get_contents(tmp, &figure, &len, NULL) || len == 0)) {
    g_set_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_GNUPLOT,
                "gnuplot %s exited 0 but wrote no figure %s", files->script, files->figure);
    ok = FALSE;
  }
  g_unlink(tmp);
  if (!ok || !ptsim_output_write(files->figure, figure, len, error)) return FALSE;
  if (out) {
    *out = *files;
    memset(files, 0, sizeof *files);
  }
  return TRUE;
}

/* ---- memory ---- */

gboolean ptsim_plot_memory(const char *figure_path, const PtsimJob *job,
                           const PtsimMemoryEstimate *memory, const PtsimAllocResult *alloc,
                           PtsimPlotFiles *out, GError **error) {
  g_return_val_if_fail(figure_path && job && memory, FALSE);
  g_return_val_if_fail(!alloc || alloc->num_stages == memory->num_stages, FALSE);
  PtsimPlotFormat format;
  g_auto(PtsimPlotFiles) files = {NULL, NULL, NULL};
  if (!ptsim_plot_files_for(figure_path, &format, &files, error)) return FALSE;

  int64_t n = memory->num_stages;
  double capacity_gib = memory->capacity_bytes / GIB;
  double threshold = job->layout.memory_threshold;
  double max_total = 0;
  g_autoptr(GString) tsv = g_string_new(NULL);
  g_string_append(tsv,
                  "# ptsim memory estimate: per-GPU memory of each pipeline stage, in GiB "
                  "(2^30 bytes)\n");
  append_job_comment(tsv, job);
  g_string_append(tsv, "# capacity_gib ");
  ptsim_plot_num(tsv, "%.4f", capacity_gib);
  g_string_append(tsv, ", memory_threshold ");
  ptsim_plot_num(tsv, "%.3f", threshold);
  g_string_append(tsv,
                  "\n# columns: stage (0-based), layers (transformer layers on the stage), "
                  "parameters_gib, gradients_gib, optimizer_gib, activations_gib, other_gib "
                  "(input ids + fp32 logits), total_gib, usage (total / capacity), "
                  "alloc_reserved_gib (caching-allocator emulation: reserved peak over 2 "
                  "steps), outside_gib (CUDA context + NCCL, outside the allocator), "
                  "alloc_device_gib (reserved + outside); NaN: not emulated\n"
                  "# stage\tlayers\tparameters_gib\tgradients_gib\toptimizer_gib"
                  "\tactivations_gib\tother_gib\ttotal_gib\tusage"
                  "\talloc_reserved_gib\toutside_gib\talloc_device_gib\n");
  for (int64_t s = 0; s < n; s++) {
    const PtsimStageMemory *m = &memory->stages[s];
    const double terms[] = {m->parameters_bytes, m->gradients_bytes, m->optimizer_bytes,
                            m->activations_bytes, m->other_bytes, m->total_bytes};
    g_string_append_printf(tsv, "%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT, s, m->num_layers);
    for (size_t i = 0; i < G_N_ELEMENTS(terms); i++) {
      g_string_append_c(tsv, '\t');
      ptsim_plot_num(tsv, "%.4f", terms[i] / GIB);
    }
    g_string_append_c(tsv, '\t');
    ptsim_plot_num(tsv, "%.4f", memory->capacity_bytes > 0 ? m->total_bytes / memory->capacity_bytes : 0);
    if (alloc) {
      const PtsimStageAlloc *a = &alloc->stages[s];
      const double al[] = {a->reserved_peak_bytes, a->outside_bytes, a->device_peak_bytes};
      for (size_t i = 0; i < G_N_ELEMENTS(al); i++) {
        g_string_append_c(tsv, '\t');
        ptsim_plot_num(tsv, "%.4f", al[i] / GIB);
      }
      if (a->device_peak_bytes / GIB > max_total) max_total = a->device_peak_bytes / GIB;
    } else {
      g_string_append(tsv, "\tNaN\tNaN\tNaN");
    }
    g_string_append_c(tsv, '\n');
    if (m->total_bytes / GIB > max_total) max_total = m->total_bytes / GIB;
  }

  g_autofree char *fig_name = g_path_get_basename(files.figure);
  g_autofree char *data_name = g_path_get_basename(files.data);
  g_autofree char *script_name = g_path_get_basename(files.script);
  g_autoptr(GString) gp = g_string_new(NULL);
  g_string_append_printf(gp,
                         "# ptsim plot memory: per-GPU memory of each pipeline stage.\n"
                         "# Reads %s; edit and rerun in this folder: gnuplot %s\n",
                         data_name, script_name);
  append_job_comment(gp, job);
  double width_cm = n <= 16 ? 18.0 : (n <= 48 ? 22.0 : 28.0);  /* ~6 cm go to the key */
  ptsim_plot_style(gp, format, fig_name, width_cm, 9.0);
  g_string_append(gp, "data = ");
  ptsim_plot_quoted(gp, data_name);
  g_string_append(gp, "\ncapacity_gib = ");
  ptsim_plot_num(gp, "%.4f", capacity_gib);
  g_string_append(gp, "  # GPU memory\nthreshold = ");
  ptsim_plot_num(gp, "%.3f", threshold);
  g_string_append_printf(gp,
                         "     # fit verdict: total <= threshold x capacity\n"
                         "stages = %" G_GINT64_FORMAT "\n"
                         "xtic_every = %" G_GINT64_FORMAT "  # label every n-th stage\n"
                         "show_totals = %d   # 1: total GiB above each bar\n",
                         n, (n + 15) / 16, n <= 16 ? 1 : 0);
  append_title(gp, job, NULL);
  double ymax = MAX(capacity_gib, max_total) * 1.12;
  g_string_append(gp, "set yrange [0:");
  ptsim_plot_num(gp, "%.2f", ymax);
  g_string_append(
      gp,
      "]\n"
      "set xrange [-0.6:stages-0.4]\n"
      "set xlabel 'pipeline stage'\n"
      "set ylabel 'memory per GPU (GiB)'\n"
      "set style data histograms\n"
      "set style histogram rowstacked\n"
      "set style fill solid 1.0 border lc rgb '#303030'\n"
      "set boxwidth 0.7 relative\n"
      "set key outside right top vertical invert reverse Left width -2 font ',8'\n"
      "# the two lines are labelled where they are drawn, not in the key\n"
      "set label 1 sprintf('capacity %.1f GiB', capacity_gib) at graph 0.99, first capacity_gib \\\n"
      "    right offset 0,0.6 front font ',8'\n"
      "set label 2 sprintf('%.0f%% threshold, %.1f GiB', 100*threshold, threshold*capacity_gib) \\\n"
      "    at graph 0.99, first threshold*capacity_gib right offset 0,0.6 front font ',8'\n"
      "stage_tic(s) = (int(s) % xtic_every == 0) ? sprintf('%d', int(s)) : ''\n"      "# a total sits above its bar and above the allocator outline\n"
      "top(a, b) = (column(b) == column(b) && column(b) > column(a)) ? column(b) : column(a)\n"
      "plot data using 3:xtic(stage_tic(column(1))) title 'parameters' lc rgb c_parameters, \\\n"
      "     ''   using 4 title 'gradients' lc rgb c_gradients, \\\n"
      "     ''   using 5 title 'optimizer states' lc rgb c_optimizer, \\\n"
      "     ''   using 6 title 'activations' lc rgb c_activations, \\\n"
      "     ''   using 7 title 'other (ids, logits)' lc rgb c_other, \\\n"
      "     ''   using 0:(show_totals ? top(8, 12) : NaN):(sprintf('%.1f', column(8))) \\\n"
      "          with labels offset 0,0.55 font ',8' notitle, \\\n"
      "     ''   using ($0-0.43):12:($0-0.43):($0+0.43):(0):12 with boxxyerror fs empty \\\n"
      "          lw 1.2 lc rgb c_alloc title 'allocator reserved + context/NCCL', \\\n"
      "     threshold*capacity_gib with lines dashtype (8,5) lw 1.5 lc rgb c_line notitle, \\\n"
      "     capacity_gib with lines dashtype solid lw 1.5 lc rgb c_line notitle\n");
  return ptsim_plot_render(&files, tsv, gp, out, error);
}

/* ---- timeline ---- */

typedef struct {
  int32_t kind;      /* PtsimTraceKind */
  const char *name;  /* as in the Perfetto trace */
  const char *color; /* gnuplot colour variable from the style */
  const char *text;  /* microbatch label colour; NULL: no label */
  /* Interleaved schedules: odd model chunks get this colour and label
   * colour (a darker shade), as Narayanan et al. 2021 shade the chunks of
   * their interleaved-1F1B figure.  NULL: one colour for every chunk. */
  const char *odd_color, *odd_text;
  int lane;          /* 0 compute stream, 1 data-parallel stream */
  int pattern;       /* gnuplot fill pattern; 0: solid */
} TimelineKind;

/* Legend order. */
static const TimelineKind timeline_kinds[] = {
    {PTSIM_TRACE_FORWARD, "forward", "c_forward", "#000000", "c_forward_odd", "#000000", 0, 0},
    {PTSIM_TRACE_BACKWARD, "backward", "c_backward", "#ffffff", "c_backward_odd", "#ffffff", 0,
     0},
    {PTSIM_TRACE_BACKWARD_INPUT, "backward-input", "c_backward_input", "#000000", NULL, NULL, 0,
     0},
    {PTSIM_TRACE_BACKWARD_WEIGHT, "backward-weight", "c_backward_weight", "#ffffff", NULL, NULL,
     0, 0},
    {PTSIM_TRACE_OPTIMIZER, "optimizer", "c_optimizer_step", NULL, NULL, NULL, 0, 0},
    {PTSIM_TRACE_GRAD_SYNC, "grad-sync", "c_grad_sync", NULL, NULL, NULL, 1, 4},
    {PTSIM_TRACE_PARAM_GATHER, "param-gather", "c_param_gather", NULL, NULL, NULL, 1, 5},
};

static const TimelineKind *timeline_kind(int32_t kind) {
  for (size_t i = 0; i < G_N_ELEMENTS(timeline_kinds); i++)
    if (timeline_kinds[i].kind == kind) return &timeline_kinds[i];
  return NULL;
}

static int decimal_digits(int64_t v) {
  int d = 1;
  while (v >= 10) {
    v /= 10;
    d++;
  }
  return d;
}

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* One `plot` element drawing the boxes of kind k whose chunk passes
 * `chunk_filter` (a gnuplot condition on $6, "1" for all). */
static void append_boxes(GString *gp, const TimelineKind *k, const char *chunk_filter,
                         const char *color, const char *title) {
  const char *lo = k->lane ? "d_lo" : "c_lo", *hi = k->lane ? "d_hi" : "c_hi";
  g_string_append_printf(gp,
                         "  data using ($4==%d && %s ? ($7+$8)/2*t_scale : NaN):1:($7*t_scale):"
                         "($8*t_scale):($1+%s):($1+%s) \\\n       with boxxyerror ",
                         k->kind, chunk_filter, lo, hi);
  if (k->pattern)
    g_string_append_printf(gp, "fs pattern %d border lc rgb %s", k->pattern, color);
  else
    g_string_append(gp, "fs solid 1.0 border lc rgb '#ffffff' lw 0.5");
  g_string_append_printf(gp, " lc rgb %s title ", color);
  ptsim_plot_quoted(gp, title);
}

/* One `plot` element numbering the boxes of kind k that are wide enough. */
static void append_labels(GString *gp, const TimelineKind *k, const char *chunk_filter,
                          const char *text) {
  g_string_append_printf(gp,
                         "  data using ($4==%d && %s && $5>=0 && ($8-$7)>=label_min_s ? "
                         "($7+$8)/2*t_scale : NaN):($1+(c_lo+c_hi)/2):(sprintf('%%d', $5)) "
                         "\\\n       with labels font label_font tc rgb '%s' notitle",
                         k->kind, chunk_filter, text);
}

gboolean ptsim_plot_timeline(const char *figure_path, const PtsimJob *job,
                             const PtsimTimeResult *time, const PtsimTrace *trace,
                             PtsimPlotFiles *out, GError **error) {
  g_return_val_if_fail(figure_path && job && time && trace, FALSE);
  PtsimPlotFormat format;
  g_auto(PtsimPlotFiles) files = {NULL, NULL, NULL};
  if (!ptsim_plot_files_for(figure_path, &format, &files, error)) return FALSE;
  if (trace->count <= 0 || trace->count > trace->capacity || !trace->records) {
    g_set_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_DATA,
                "timeline: the trace has %" G_GINT64_FORMAT " records (capacity %" G_GINT64_FORMAT
                "); nothing complete to plot",
                trace->count, trace->capacity);
    return FALSE;
  }

  int64_t stages = job->layout.pp;
  int interleaved = job->layout.vp > 1;
  int present[G_N_ELEMENTS(timeline_kinds)] = {0};
  int has_dp_lane = 0;
  int64_t max_mb = 0;
  PtsimTime span_ns = 0;
  /* durations of forward boxes and of all numbered compute boxes */
  g_autoptr(GArray) forward_s = g_array_new(FALSE, FALSE, sizeof(double));
  g_autoptr(GArray) compute_s = g_array_new(FALSE, FALSE, sizeof(double));
  g_autoptr(GString) tsv = g_string_new(NULL);
  g_string_append(tsv, "# ptsim timeline: what each pipeline stage ran in one simulated step\n");
  append_job_comment(tsv, job);
  g_string_append(tsv, "# step_s ");
  ptsim_plot_num(tsv, "%.9f", time->step_s);
  g_string_append(tsv,
                  "\n# columns: stage (0-based), lane (0 compute stream, 1 data-parallel "
                  "stream), kind (name), kind_id (PtsimTraceKind), microbatch (0-based; -1: "
                  "none), chunk (model chunk, 0-based; -1: none), start_s, end_s, "
                  "duration_s (seconds from the step's start)\n"
                  "# stage\tlane\tkind\tkind_id\tmicrobatch\tchunk\tstart_s\tend_s\tduration_s\n");
  for (int64_t i = 0; i < trace->count; i++) {
    const PtsimTraceRecord *r = &trace->records[i];
    const TimelineKind *k = timeline_kind(r->kind);
    if (!k) continue; /* a kind this writer does not know: not drawn */
    present[k - timeline_kinds] = 1;
    has_dp_lane |= k->lane == 1;
    if (r->microbatch > max_mb) max_mb = r->microbatch;
    if (r->end_ns > span_ns) span_ns = r->end_ns;
    double d = (double)(r->end_ns - r->start_ns) * 1e-9;
    if (r->kind == PTSIM_TRACE_FORWARD) g_array_append_val(forward_s, d);
    if (k->text && r->microbatch >= 0) g_array_append_val(compute_s, d);
    g_string_append_printf(tsv, "%d\t%d\t%s\t%d\t%d\t%d\t", r->stage, k->lane, k->name, r->kind,
                           r->microbatch, r->chunk);
    ptsim_plot_num(tsv, "%.9f", (double)r->start_ns * 1e-9);
    g_string_append_c(tsv, '\t');
    ptsim_plot_num(tsv, "%.9f", (double)r->end_ns * 1e-9);
    g_string_append_c(tsv, '\t');
    ptsim_plot_num(tsv, "%.9f", (double)(r->end_ns - r->start_ns) * 1e-9);
    g_string_append_c(tsv, '\n');
  }
  double span_s = (double)span_ns * 1e-9;
  if (span_s <= 0) span_s = time->step_s > 0 ? time->step_s : 1.0;
  int in_ms = span_s < 2.0;

  /* A label fits a box wider than its text: ~0.6 em per digit plus 3 pt
   * of margin, at 7 pt (6 pt for two-digit and longer numbers).  The
   * figure is made wide enough (18 to 36 cm) for the median forward box to
   * carry its number, or failing that the median compute box (most
   * backwards); the plot area is ~3.2 cm narrower than the figure. */
  int digits = decimal_digits(max_mb);
  double label_font_pt = digits > 1 ? 6.0 : 7.0;
  double label_pt = digits * 0.6 * label_font_pt + 3.0;
  double width_cm = 18.0;
  GArray *sizing[] = {forward_s, compute_s};
  for (size_t i = 0; i < G_N_ELEMENTS(sizing); i++) {
    if (sizing[i]->len == 0) continue;
    qsort(sizing[i]->data, sizing[i]->len, sizeof(double), compare_double);
    double median = g_array_index(sizing[i], double, sizing[i]->len / 2);
    if (median <= 0) continue;
    double need_cm = 1.08 * label_pt * span_s / median / 72.0 * 2.54 + 3.2; /* 8% slack */
    width_cm = CLAMP(need_cm, 18.0, 36.0);
    if (need_cm <= 36.0) break;
  }
  double plot_pt = (width_cm - 3.2) / 2.54 * 72.0;
  double label_min_s = span_s * label_pt / plot_pt;
  /* A band of ~1 cm per stage for a few stages, less for deep pipelines. */
  double band_cm = stages <= 8 ? 0.95 : (stages <= 32 ? 0.5 : 0.3);
  double height_cm = CLAMP(4.6 + band_cm * (double)stages, 7.0, 26.0);

  g_autofree char *fig_name = g_path_get_basename(files.figure);
  g_autofree char *data_name = g_path_get_basename(files.data);
  g_autofree char *script_name = g_path_get_basename(files.script);
  g_autoptr(GString) gp = g_string_new(NULL);
  g_string_append_printf(gp,
                         "# ptsim plot timeline: the simulated pipeline schedule, one band per "
                         "stage.\n# Reads %s; edit and rerun in this folder: gnuplot %s\n",
                         data_name, script_name);
  append_job_comment(gp, job);
  ptsim_plot_style(gp, format, fig_name, width_cm, height_cm);
  g_string_append(gp, "data = ");
  ptsim_plot_quoted(gp, data_name);
  g_string_append_printf(gp,
                         "\nstages = %" G_GINT64_FORMAT "\nt_scale = %s  # seconds -> axis unit\n",
                         stages, in_ms ? "1000.0" : "1.0");
  g_string_append(gp, "label_min_s = ");
  ptsim_plot_num(gp, "%.6g", label_min_s);
  g_string_append(gp, "  # boxes shorter than this (s) get no microbatch number\nlabel_font = ");
  g_string_append_printf(gp, "',%d'\n", (int)label_font_pt);
  if (has_dp_lane)
    g_string_append(gp,
                    "# lanes inside a stage's band (y grows downwards): compute above,\n"
                    "# data-parallel communication below\n"
                    "c_lo = -0.42; c_hi = 0.12\nd_lo = 0.17; d_hi = 0.42\n");
  else
    g_string_append(gp,
                    "# one lane per stage: no data-parallel communication in this step\n"
                    "c_lo = -0.40; c_hi = 0.40\nd_lo = 0.0; d_hi = 0.0\n");
  g_autofree char *subtitle = g_strdup_printf(
      "step %.3f s, bubble %.1f%%; boxes numbered by microbatch%s", time->step_s,
      100.0 * time->bubble_fraction, interleaved ? ", odd model chunks darker" : "");
  append_title(gp, job, subtitle);
  g_string_append(gp, "set xrange [0:");
  ptsim_plot_num(gp, "%.6g", span_s * 1.01 * (in_ms ? 1000.0 : 1.0));
  g_string_append(gp, "]\nset yrange [stages-0.5:-0.5]  # stage 0 at the top\n");
  g_string_append_printf(gp, "set ytics 0,%" G_GINT64_FORMAT ",stages-1\n",
                         stages <= 16 ? (int64_t)1 : (stages + 15) / 16);
  g_string_append_printf(
      gp,
      "set grid noytics\n"
      "set grid xtics linetype 1 linewidth 0.6 linecolor rgb '#e0e0e0' dashtype solid\n"
      "set xlabel 'time from step start (%s)'\n"
      "set ylabel 'pipeline stage'\n"
      "set key outside bottom center horizontal maxrows 1 reverse Left width -1 font ',8'\n",
      in_ms ? "ms" : "s");
  g_string_append(gp, "plot \\\n");
  gboolean first = TRUE;
  for (size_t i = 0; i < G_N_ELEMENTS(timeline_kinds); i++) {
    if (!present[i]) continue;
    const TimelineKind *k = &timeline_kinds[i];
    if (!first) g_string_append(gp, ", \\\n");
    first = FALSE;
    if (interleaved && k->odd_color) {
      g_autofree char *even = g_strdup_printf("%s, %s", k->name,
                                              job->layout.vp == 2 ? "chunk 0" : "even chunks");
      g_autofree char *odd = g_strdup_printf("%s, %s", k->name,
                                             job->layout.vp == 2 ? "chunk 1" : "odd chunks");
      append_boxes(gp, k, "int($6)%2==0", k->color, even);
      g_string_append(gp, ", \\\n");
      append_boxes(gp, k, "int($6)%2==1", k->odd_color, odd);
    } else {
      append_boxes(gp, k, "1", k->color, k->name);
    }
  }
  for (size_t i = 0; i < G_N_ELEMENTS(timeline_kinds); i++) {
    const TimelineKind *k = &timeline_kinds[i];
    if (!present[i] || !k->text) continue;
    g_string_append(gp, ", \\\n");
    if (interleaved && k->odd_color) {
      append_labels(gp, k, "int($6)%2==0", k->text);
      g_string_append(gp, ", \\\n");
      append_labels(gp, k, "int($6)%2==1", k->odd_text);
    } else {
      append_labels(gp, k, "1", k->text);
    }
  }
  g_string_append_c(gp, '\n');
  return ptsim_plot_render(&files, tsv, gp, out, error);
}
