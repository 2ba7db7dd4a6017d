/* plot.c — what every figure shares: paths and formats, paper sizes and
 * fonts, the style preamble, titles, and running gnuplot; see plot.h and
 * plot_int.h.  The kinds live in plot_memory.c, plot_timeline.c,
 * plot_alloc.c, plot_sweep.c, plot_heatmap.c, plot_pareto.c and
 * plot_validation.c.
 *
 * Each writer builds the .tsv and the .gp in memory, writes both through
 * the output policy (output.h: no half-written file, no input or device
 * replaced), and then runs gnuplot in the figure's folder so that every
 * name in the script is relative; the figure goes to a temporary and
 * replaces the old one only when gnuplot succeeded.  Numbers go through g_ascii_formatd: the files
 * read the same under any locale.
 *
 * Palette (CIE L* in brackets, so the grayscale order is known; hues from
 * the blue/orange/purple families that the common colour-vision
 * deficiencies keep apart):
 *   memory terms, bottom to top — viridis steps: parameters #440154 (15),
 *   gradients #3b528b (36), optimizer #21918c (55), activations #5ec962
 *   (73), other #fde725 (91).
 *   timeline — compute solid, communication hatched: forward #6baed6 (68),
 *   backward #b2182b (38); odd model chunks of an interleaved schedule a
 *   darker shade (#3182bd 52, #67001f 20); zb-h1's backward-input #b2182b
 *   (38) and backward-weight #543005 (24); optimizer #737373 (49);
 *   grad-sync #1b7837 hatched, param-gather #762a83 cross-hatched.  Forward
 *   at 68, not lighter, so a forward box never reads as a gap (white, 100).
 *   series (hardware, sources, stages) — Okabe-Ito, each with its own point
 *   and dash type. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <glib/gstdio.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include "job_validate.h"
#include "names.h"
#include "numbers.h"
#include "output.h"
#include "output_session.h"
#include "plot.h"
#include "plot_int.h"

/* The domain name keeps its dashes (clang-format 14 would space them). */
/* clang-format off */
G_DEFINE_QUARK(ptsim-plot-error-quark, ptsim_plot_error)
/* clang-format on */

void ptsim_plot_files_clear(PtsimPlotFiles *files) {
  g_clear_pointer(&files->figure, g_free);
  g_clear_pointer(&files->script, g_free);
  g_clear_pointer(&files->data, g_free);
}

/* ---- formatting helpers ---- */

void ptsim_plot_num(GString *s, const char *format, double value) {
  if (isnan(value)) { /* as the other undefined cells of a table are written */
    g_string_append(s, "NaN");
    return;
  }
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

static void append_style(GString *gp, const PtsimPlotCanvas *c, const char *figure_name);

GString *ptsim_plot_script_begin(const PtsimPlotFiles *files, const PtsimPlotCanvas *c,
                                 const char *what, const PtsimJob *job, const char *scenario) {
  g_autofree char *data_name = g_path_get_basename(files->data);
  g_autofree char *script_name = g_path_get_basename(files->script);
  g_autofree char *figure_name = g_path_get_basename(files->figure);
  GString *gp = g_string_new(NULL);
  g_string_append_printf(gp,
                         "# ptsim plot %s\n# Reads %s; edit and rerun in this folder: gnuplot %s\n",
                         what, data_name, script_name);
  if (job) ptsim_plot_job_comment(gp, job);
  if (scenario) g_string_append_printf(gp, "# scenario: %s\n", scenario);
  append_style(gp, c, figure_name);
  g_string_append(gp, "data = ");
  ptsim_plot_quoted(gp, data_name);
  return gp;
}

double ptsim_plot_nice_step(double lo, double hi, int count) {
  double raw = (hi - lo) / (count > 0 ? count : 1);
  if (!(raw > 0)) return 1.0;
  double mag = pow(10.0, floor(log10(raw))), best = mag, best_miss = G_MAXDOUBLE;
  static const double steps[] = {1.0, 2.0, 5.0, 10.0};
  for (size_t i = 0; i < G_N_ELEMENTS(steps); i++) {
    /* too few tics is worse than too many: a reader interpolates between them */
    double ratio = log((hi - lo) / (steps[i] * mag) / count);
    double miss = ratio >= 0 ? 0.6 * ratio : -ratio;
    if (miss < best_miss - 1e-9) {
      best_miss = miss;
      best = steps[i] * mag;
    }
  }
  return best;
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

/* Fills *files from the figure path (NAME.EXT -> NAME.gp, NAME.tsv) and
 * *format from its ending.  Error: PTSIM_PLOT_ERROR_FORMAT. */
static gboolean files_for(const char *figure_path, PtsimPlotFormat *format, PtsimPlotFiles *files,
                          GError **error) {
  if (!ptsim_plot_format_from_path(figure_path, format, error)) return FALSE;
  const char *dot = strrchr(figure_path, '.');
  g_autofree char *stem = g_strndup(figure_path, (gsize)(dot - figure_path));
  files->figure = g_strdup(figure_path);
  files->script = g_strconcat(stem, ".gp", NULL);
  files->data = g_strconcat(stem, ".tsv", NULL);
  return TRUE;
}

/* ---- size and range options ---- */

void ptsim_plot_size_default(PtsimPlotSize *size) {
  size->width_cm = PTSIM_PLOT_PAGE_CM;
  size->height_cm = 0.0;
}

/* TEXT ending in one of UNITS (case-insensitive), the rest into *number
 * (transfer full) and the unit's index into *unit; a text without a unit
 * is unit -1 when NO_UNIT is TRUE.  FALSE when no unit fits. */
static gboolean split_unit(const char *text, const char *const *units, gboolean no_unit,
                           char **number, int *unit) {
  gsize n = strlen(text);
  for (int u = 0; units[u]; u++) {
    gsize k = strlen(units[u]);
    if (n >= k && g_ascii_strcasecmp(text + n - k, units[u]) == 0) {
      *number = g_strndup(text, n - k);
      *unit = u;
      return TRUE;
    }
  }
  if (!no_unit) return FALSE;
  *number = g_strdup(text);
  *unit = -1;
  return TRUE;
}

/* A number >= 0 through the strict parser (numbers.h). */
static gboolean nonnegative(const char *text, double *out) {
  return ptsim_number_parse_double(text, out) && *out >= 0;
}

gboolean ptsim_plot_size_parse(const char *text, PtsimPlotSize *out, GError **error) {
  g_return_val_if_fail(text && out, FALSE);
  if (g_ascii_strcasecmp(text, "column") == 0 || g_ascii_strcasecmp(text, "page") == 0) {
    out->width_cm = g_ascii_strcasecmp(text, "column") == 0 ? PTSIM_PLOT_COLUMN_CM
                                                            : PTSIM_PLOT_PAGE_CM;
    out->height_cm = 0.0;
    return TRUE;
  }
  static const char *const units[] = {"in", "cm", NULL};
  static const double per_unit[] = {PTSIM_PLOT_CM_PER_IN, 1.0};
  g_autofree char *number = NULL;
  int unit = -1;
  double w = 0, h = 0;
  gboolean ok = split_unit(text, units, FALSE, &number, &unit);
  if (ok) {
    /* W or WxH; 'x' is no digit, sign or exponent, so it splits cleanly */
    g_auto(GStrv) wh = g_strsplit_set(number, "xX", 3);
    guint parts = g_strv_length(wh);
    ok = (parts == 1 || parts == 2) && nonnegative(wh[0], &w) &&
         (parts == 1 || nonnegative(wh[1], &h));
    w *= per_unit[unit];
    h *= per_unit[unit];
  }
  if (!ok || w < 5.0 || w > 60.0 || h > 60.0 || (h > 0 && h < 3.0)) {
    g_set_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_OPTION,
                "--size '%s': allowed are column (3.5 in), page (7 in) or WxH with a unit, "
                "e.g. 3.5x2.5in or 12x8cm (width 5-60 cm, height 3-60 cm; the height may be "
                "left out: 12cm)",
                text);
    return FALSE;
  }
  out->width_cm = w;
  out->height_cm = h;
  return TRUE;
}

void ptsim_plot_range_default(PtsimPlotRange *range) { memset(range, 0, sizeof *range); }

/* A time "1.5", "1.5s", "250ms" or "" (none) into seconds. */
static gboolean parse_time(const char *text, double *out, gboolean *given) {
  static const char *const units[] = {"ms", "s", NULL};
  *given = *text != 0;
  if (!*given) return TRUE;
  g_autofree char *number = NULL;
  int unit = -1;
  double v = 0;
  if (!split_unit(text, units, TRUE, &number, &unit) || !nonnegative(number, &v)) return FALSE;
  *out = unit == 0 ? v * 1e-3 : v;
  return TRUE;
}

gboolean ptsim_plot_range_parse_window(const char *text, PtsimPlotRange *range, GError **error) {
  g_return_val_if_fail(text && range, FALSE);
  const char *colon = strchr(text, ':');
  double start = 0, end = 0;
  gboolean has_start = FALSE, has_end = FALSE, ok = colon != NULL;
  if (ok) {
    g_autofree char *a = g_strndup(text, (gsize)(colon - text));
    g_autofree char *b = g_strdup(colon + 1);
    ok = parse_time(g_strstrip(a), &start, &has_start) &&
         parse_time(g_strstrip(b), &end, &has_end) && (!has_end || end > start);
  }
  if (!ok) {
    g_set_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_OPTION,
                "--window '%s': allowed is START:END in seconds from the step's start, "
                "END > START, each optionally with ms (e.g. 0:1.5, 200ms:450ms, 2.5:)",
                text);
    return FALSE;
  }
  range->start_s = start;
  range->end_s = has_end ? end : 0.0;
  return TRUE;
}

gboolean ptsim_plot_range_parse_stages(const char *text, int64_t num_stages, PtsimPlotRange *range,
                                       GError **error) {
  g_return_val_if_fail(text && range, FALSE);
  guint8 want[PTSIM_MAX_STAGES] = {0};
  g_auto(GStrv) parts = g_strsplit(text, ",", -1);
  gboolean ok = parts[0] != NULL && num_stages <= PTSIM_MAX_STAGES;
  for (char **p = parts; ok && *p; p++) {
    /* A or A:B, each through the strict parser */
    g_auto(GStrv) ends = g_strsplit(*p, ":", 3);
    guint n = g_strv_length(ends);
    int64_t a = 0, b = 0;
    ok = (n == 1 || n == 2) && ptsim_number_parse_int64(ends[0], &a) &&
         ptsim_number_parse_int64(ends[n - 1], &b) && a >= 0 && b >= a && b < num_stages;
    for (int64_t s = a; ok && s <= b; s++) want[s] = 1;
  }
  if (!ok) {
    g_set_error(
        error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_OPTION,
        "--stages '%s': allowed are stage numbers and A:B ranges from 0 to %" G_GINT64_FORMAT
        " (the job has pp %" G_GINT64_FORMAT "), e.g. 0,3:5",
        text, num_stages - 1, num_stages);
    return FALSE;
  }
  memcpy(range->stages, want, sizeof want);
  range->stages_given = TRUE;
  return TRUE;
}

/* ---- the canvas ---- */

/* size NULL: the page preset. */
static void canvas_init(PtsimPlotCanvas *c, PtsimPlotFormat format, const PtsimPlotSize *size) {
  PtsimPlotSize def;
  if (!size) {
    ptsim_plot_size_default(&def);
    size = &def;
  }
  memset(c, 0, sizeof *c);
  c->format = format;
  c->width_cm = size->width_cm;
  c->given_height_cm = size->height_cm;
  c->height_cm = size->height_cm > 0 ? size->height_cm : 0.6 * size->width_cm;
  /* A paper's captions are 8-9 pt; figure text printed at the figure's own
   * size should match them, and nothing should go under 6 pt. */
  c->narrow = size->width_cm <= 11.0;
  c->font_pt = c->narrow ? 8.0 : 9.0;
  c->small_pt = c->font_pt - 1.0;
  c->tiny_pt = c->font_pt - 2.0;
}

gboolean ptsim_plot_begin(const char *figure_path, const PtsimPlotSize *size, PtsimPlotFiles *files,
                          PtsimPlotCanvas *c, GError **error) {
  PtsimPlotFormat format;
  if (!files_for(figure_path, &format, files, error)) return FALSE;
  canvas_init(c, format, size);
  return TRUE;
}

void ptsim_plot_canvas_height(PtsimPlotCanvas *c, double auto_cm) {
  c->height_cm = c->given_height_cm > 0 ? c->given_height_cm : CLAMP(auto_cm, 3.0, 60.0);
}

double ptsim_plot_text_cm(double pt, double chars) {
  return chars * 0.62 * pt / PTSIM_PLOT_PT_PER_IN * PTSIM_PLOT_CM_PER_IN;
}

/* The `width` of a key in pngcairo's terms: long titles can lose a few of
 * gnuplot's generous character estimates, short ones cannot without their
 * columns colliding. */
static int key_width_png(int longest_chars) {
  return longest_chars < 16 ? 0 : -(longest_chars / 12);
}

int ptsim_plot_key_rows(const PtsimPlotCanvas *c, int entries, int longest_chars, int *per_row) {
  /* gnuplot makes a key column (longest title + 4 + width + the sample)
   * characters of its estimate, about 0.72 em, wide, and puts as many
   * columns as fit the plot area (the figure less ~3 cm of margins) */
  double chars = longest_chars + 4.0 + key_width_png(longest_chars) + 2.6;
  double entry_cm = chars * 0.72 * c->small_pt / PTSIM_PLOT_PT_PER_IN * PTSIM_PLOT_CM_PER_IN;
  int n = MAX(1, (int)((c->width_cm - 3.0) / entry_cm));
  n = MIN(n, MAX(entries, 1));
  if (per_row) *per_row = n;
  return (entries + n - 1) / n;
}

/* ---- the shared style ---- */

/* Appends the shared preamble to `gp`: terminal for the canvas's format
 * and size, output file `figure_name` (a bare file name), fonts (the
 * variables f_small and f_tiny hold the smaller two), borders, grid, and
 * the named colours/line styles every kind uses. */
static void append_style(GString *gp, const PtsimPlotCanvas *c, const char *figure_name) {
  g_string_append_printf(gp,
                         "# ---- style (shared by every ptsim figure) ----\n"
                         "# printed size %.2f x %.2f cm (%.2f x %.2f in)\n",
                         c->width_cm, c->height_cm, c->width_cm / PTSIM_PLOT_CM_PER_IN,
                         c->height_cm / PTSIM_PLOT_CM_PER_IN);
  g_string_append(gp, "width_cm = ");
  ptsim_plot_num(gp, "%.3f", c->width_cm);
  g_string_append(gp, "; height_cm = ");
  ptsim_plot_num(gp, "%.3f", c->height_cm);
  g_string_append(gp, "   # printed size\nfont_pt = ");
  ptsim_plot_num(gp, "%g", c->font_pt);
  g_string_append(gp, "  # axis and tick labels, titles\nf_small = ',");
  ptsim_plot_num(gp, "%g", c->small_pt);
  g_string_append(gp, "'  # keys, line labels, notes\nf_tiny = ',");
  ptsim_plot_num(gp, "%g", c->tiny_pt);
  g_string_append(gp, "'   # numbers inside boxes and cells\n");
  switch (c->format) {
  case PTSIM_PLOT_PDF:
    /* pdfcairo's defaults are fontscale 0.5 and 0.5 pt lines: undo both so
     * the PDF shows font_pt text and 1 pt lines, like the PNG. */
    g_string_append(gp, "set terminal pdfcairo enhanced color font 'Sans,'.font_pt "
                        "fontscale 1.0 linewidth 2 size ");
    ptsim_plot_num(gp, "%.2f", c->width_cm);
    g_string_append(gp, "cm,");
    ptsim_plot_num(gp, "%.2f", c->height_cm);
    g_string_append(gp, "cm\n");
    break;
  case PTSIM_PLOT_PNG:
    /* cairo's font points are at 72 per inch, hence the fontscale, so the
     * PNG looks like the PDF at 2x. */
    g_string_append(gp, "set terminal pngcairo enhanced color font 'Sans,'.font_pt fontscale ");
    ptsim_plot_num(gp, "%.3f", PTSIM_PLOT_PNG_PPI / PTSIM_PLOT_PT_PER_IN);
    g_string_append(gp, " linewidth ");
    ptsim_plot_num(gp, "%.3f", PTSIM_PLOT_PNG_PPI / PTSIM_PLOT_PT_PER_IN);
    g_string_append_printf(gp, " size %d,%d\n",
                           (int)lround(c->width_cm / PTSIM_PLOT_CM_PER_IN * PTSIM_PLOT_PNG_PPI),
                           (int)lround(c->height_cm / PTSIM_PLOT_CM_PER_IN * PTSIM_PLOT_PNG_PPI));
    break;
  case PTSIM_PLOT_SVG:
    g_string_append_printf(gp,
                           "set terminal svg enhanced font 'Sans,'.font_pt linewidth 1 "
                           "size %d,%d background '#ffffff'\n", /* in points */
                           (int)lround(c->width_cm / PTSIM_PLOT_CM_PER_IN * PTSIM_PLOT_PT_PER_IN),
                           (int)lround(c->height_cm / PTSIM_PLOT_CM_PER_IN * PTSIM_PLOT_PT_PER_IN));
    break;
  }
  /* ptsim renders into a temporary name it passes as ptsim_output and moves
   * the figure into place only when gnuplot succeeded; run by hand, the
   * script writes the figure itself. */
  g_string_append(gp, "set output (exists('ptsim_output') ? ptsim_output : ");
  ptsim_plot_quoted(gp, figure_name);
  g_string_append(
      gp, ")\nset encoding utf8\n"
          "set termoption noenhanced       # names with '_' print as typed\n"
          "set datafile separator '\\t'\n"
          "set border 3 linewidth 0.8 linecolor rgb '#404040'  # left + bottom only\n"
          "set xtics nomirror out scale 0.6\n"
          "set ytics nomirror out scale 0.6\n"
          "set grid ytics linetype 1 linewidth 0.8 linecolor rgb '#d4d4d4' dashtype solid\n"
          "set grid noxtics\n"
          "set key noautotitle nobox samplen 1.6 spacing 1.0 reverse Left font f_small\n"
          "# memory terms, bottom to top (viridis; CIE L* 15, 36, 55, 73, 91)\n"
          "c_parameters  = '#440154'\n"
          "c_gradients   = '#3b528b'\n"
          "c_optimizer   = '#21918c'\n"
          "c_activations = '#5ec962'\n"
          "c_other       = '#fde725'\n"
          "# timeline: compute solid, communication hatched (L* in comments)\n"
          "c_forward         = '#6baed6'  # 68: never as light as a gap\n"
          "c_forward_odd     = '#3182bd'  # 52, odd model chunks (interleaved)\n"
          "c_backward        = '#b2182b'  # 38\n"
          "c_backward_odd    = '#67001f'  # 20, odd model chunks (interleaved)\n"
          "c_backward_input  = '#b2182b'  # 38 (zb-h1's B)\n"
          "c_backward_weight = '#543005'  # 24 (zb-h1's W)\n"
          "c_optimizer_step  = '#737373'  # 49\n"
          "c_grad_sync       = '#1b7837'  # 44, pattern 4\n"
          "c_param_gather    = '#762a83'  # 32, pattern 5\n"
          "c_line = '#000000'\n"
          "c_alloc = '#d95f02'   # allocator outline on the memory bars (L* 55)\n"
          "c_oom   = '#bdbdbd'   # cells/points that do not fit (L* 77, hatched)\n"
          "c_band  = '#d9d9d9'   # tolerance bands (L* 87)\n"
          "c_note  = '#404040'   # secondary text\n"
          "# series (hw, source, stage): Okabe-Ito, each also with its own point type\n"
          "# and dash type, so lines stay apart in grayscale (L* 0, 46, 71, 35, 70, 54)\n"
          "array c_series[6] = ['#000000', '#0072b2', '#e69f00', '#7b3294', '#56b4e9', '#d55e00']\n"
          "array pt_series[6] = [7, 5, 9, 11, 13, 15]\n"
          "array pto_series[6] = [6, 4, 8, 10, 12, 14]  # the same shapes, open\n"
          "array dt_series[6] = [1, 2, 4, 5, 3, 1]\n"
          "# sequential colour scale (viridis; lightness rises monotonically)\n"
          "set palette defined (0 '#440154', 1 '#3b528b', 2 '#21918c', 3 '#5ec962', 4 '#fde725')\n"
          "# ---- figure ----\n");
}

/* ---- the job, for titles and data headers ---- */

void ptsim_plot_job_comment(GString *s, const PtsimJob *job) {
  const PtsimLayout *l = &job->layout;
  const PtsimSettings *run = &job->settings;
  g_string_append_printf(s,
                         "# job: model %s, hw %s, gpus %" G_GINT64_FORMAT ", tp %" G_GINT64_FORMAT
                         " pp %" G_GINT64_FORMAT " cp %" G_GINT64_FORMAT " dp %" G_GINT64_FORMAT
                         " vp %" G_GINT64_FORMAT ", mbs %" G_GINT64_FORMAT " gbs %" G_GINT64_FORMAT
                         " seq %" G_GINT64_FORMAT ", recompute %s, schedule %s\n",
                         job->model.name, job->hw.name, l->gpus, l->tp, l->pp, l->cp, l->dp, l->vp,
                         l->mbs, l->gbs, l->seq,
                         ptsim_names_get(PTSIM_NAMES_RECOMPUTE, run->recompute),
                         ptsim_names_get(PTSIM_NAMES_SCHEDULE, l->schedule));
}

char *ptsim_plot_job_what(const PtsimJob *job) {
  return g_strdup_printf("%s on %" G_GINT64_FORMAT " x %s", job->model.name, job->layout.gpus,
                         job->hw.name);
}

char *ptsim_plot_job_layout(const PtsimJob *job) {
  /* the words a reader needs; cp 1, vp 1 and no recompute go without saying */
  const PtsimLayout *l = &job->layout;
  const PtsimSettings *run = &job->settings;
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "tp %" G_GINT64_FORMAT " pp %" G_GINT64_FORMAT, l->tp, l->pp);
  if (l->cp > 1) g_string_append_printf(s, " cp %" G_GINT64_FORMAT, l->cp);
  g_string_append_printf(s, " dp %" G_GINT64_FORMAT, l->dp);
  if (l->vp > 1) g_string_append_printf(s, " vp %" G_GINT64_FORMAT, l->vp);
  /* an MoE model: the expert folding after the dense layout */
  if (job->model.num_experts > 0)
    g_string_append_printf(s, ", ep %" G_GINT64_FORMAT " etp %" G_GINT64_FORMAT, l->ep, l->etp);
  g_string_append_printf(s,
                         ", mbs %" G_GINT64_FORMAT " gbs %" G_GINT64_FORMAT
                         " seq %" G_GINT64_FORMAT,
                         l->mbs, l->gbs, l->seq);
  if (run->recompute != PTSIM_RECOMPUTE_NONE)
    g_string_append_printf(s, ", recompute %s",
                           ptsim_names_get(PTSIM_NAMES_RECOMPUTE, run->recompute));
  g_string_append_printf(s, ", %s", ptsim_names_get(PTSIM_NAMES_SCHEDULE, l->schedule));
  if (l->sharding != PTSIM_SHARDING_NONE) /* the distributed optimizer goes without saying */
    g_string_append_printf(s, ", %s", ptsim_layout_sharding_word(l));
  return g_string_free(s, FALSE);
}

/* ---- titles ---- */

GPtrArray *ptsim_plot_wrap(const PtsimPlotCanvas *c, double pt, int max_lines,
                           const char *const *texts) {
  GPtrArray *lines = g_ptr_array_new_with_free_func(g_free);
  /* characters per line: the canvas minus a little margin, at 0.7 em a
   * character (titles are mostly digits and lower case at 0.6-0.64 em,
   * and a line must never run off the edge) */
  int per_line =
      (int)((c->width_cm - 0.5) / (0.7 * pt / PTSIM_PLOT_PT_PER_IN * PTSIM_PLOT_CM_PER_IN));
  (void)max_lines; /* a hint only: a title is never cut, the figure grows for it */
  for (const char *const *t = texts; *t; t++) {
    const char *p = *t;
    while (*p) {
      int len = (int)g_utf8_strlen(p, -1);
      if (len <= per_line) {
        g_ptr_array_add(lines, g_strdup(p));
        break;
      }
      /* break after the last ", " or "; " that fits, else at a space */
      const char *brk = NULL, *sp = NULL, *q = p;
      for (int n = 0; *q && n < per_line; n++, q = g_utf8_next_char(q)) {
        if ((q[0] == ',' || q[0] == ';') && q[1] == ' ') brk = q + 1;
        if (q[0] == ' ') sp = q;
      }
      const char *at = brk ? brk : sp ? sp : q;
      g_ptr_array_add(lines, g_strndup(p, (gsize)(at - p)));
      p = at;
      while (*p == ' ') p++;
    }
  }
  return lines;
}

double ptsim_plot_line_cm(double pt) {
  return pt * 1.35 / PTSIM_PLOT_PT_PER_IN * PTSIM_PLOT_CM_PER_IN;
}

double ptsim_plot_title_cm(const PtsimPlotCanvas *c, int max_lines, const char *const *texts) {
  g_autoptr(GPtrArray) lines = ptsim_plot_wrap(c, c->font_pt, max_lines, texts);
  return 0.3 + ptsim_plot_line_cm(c->font_pt) * (lines->len + 0.6);
}

double ptsim_plot_axis_cm(const PtsimPlotCanvas *c) {
  /* tick marks, tick labels and the axis label, as gnuplot spaces them */
  return 0.45 + 2.4 * ptsim_plot_line_cm(c->font_pt);
}

int ptsim_plot_title(GString *gp, const PtsimPlotCanvas *c, int max_lines,
                     const char *const *texts) {
  g_autoptr(GPtrArray) lines = ptsim_plot_wrap(c, c->font_pt, max_lines, texts);
  g_string_append(gp, "# what was run, top left; set show_title = 0 for a paper (the caption "
                      "says it)\nshow_title = 1\ntitle_cm = ");
  ptsim_plot_num(gp, "%.3f", 0.3 + ptsim_plot_line_cm(c->font_pt) * (lines->len + 0.6));
  g_string_append(gp, "   # the height it takes\nif (show_title) {\n  set label 100 ");
  for (guint i = 0; i < lines->len; i++) {
    if (i) g_string_append(gp, ".\"\\n\"."); /* a line break: double-quoted "\n" */
    ptsim_plot_quoted(gp, g_ptr_array_index(lines, i));
  }
  if (lines->len == 0) g_string_append(gp, "''");
  g_string_append(gp, " at character 0.6, screen 1 offset 0,-0.8 left front\n} else {\n"
                      "  title_cm = 0\n}\n");
  return (int)lines->len;
}

void ptsim_plot_margins(GString *gp, double top_cm, double bottom_cm) {
  g_string_append(gp, "set tmargin at screen 1 - (title_cm + ");
  ptsim_plot_num(gp, "%.3f", top_cm);
  g_string_append(gp, ")/height_cm\nset bmargin at screen ");
  ptsim_plot_num(gp, "%.3f", bottom_cm);
  g_string_append(gp, "/height_cm\n");
}

double ptsim_plot_key_cm(const PtsimPlotCanvas *c, int rows) {
  /* gnuplot's key rows are about 1.6 em apart */
  return rows > 0 ? 0.2 + 1.6 * c->small_pt / PTSIM_PLOT_PT_PER_IN * PTSIM_PLOT_CM_PER_IN * rows
                  : 0.0;
}

int ptsim_plot_key_width(const PtsimPlotCanvas *c, int longest_chars) {
  /* pdfcairo estimates a character about a tenth wider than pngcairo at the
   * same printed size, which would cost a key of long titles a column */
  int pdf = c->format == PTSIM_PLOT_PDF && longest_chars >= 16
                ? -(int)lround(0.08 * (longest_chars + 6.0))
                : 0;
  return key_width_png(longest_chars) + pdf;
}

void ptsim_plot_key_under(GString *gp, const PtsimPlotCanvas *c, int per_row, int longest_chars,
                          double above_cm) {
  g_string_append(gp, "set key at screen 0.5, screen ");
  ptsim_plot_num(gp, "%.3f", above_cm + 0.1);
  g_string_append_printf(gp, "/height_cm center bottom horizontal maxcols %d width %d\n",
                         MAX(per_row, 1), ptsim_plot_key_width(c, longest_chars));
}

/* ---- running gnuplot ---- */

/* In the child before gnuplot starts: it ends when ptsim does (killed,
 * interrupted), not drawing on for nobody. */
static void end_with_parent(gpointer data) {
  (void)data;
#ifdef __linux__
  prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
}

/* Runs gnuplot on SCRIPT_PATH in its folder; OUTPUT_NAME is the file name
 * the figure goes to instead of the script's own. */
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
  ptsim_plot_quoted(define, output_name);
  char *argv[] = {gnuplot, "-e", define->str, name, NULL};
  g_autofree char *out = NULL, *err = NULL;
  int status = 0;
  if (!g_spawn_sync(dir, argv, NULL, G_SPAWN_DEFAULT, end_with_parent, NULL, &out, &err, &status,
                    error)) {
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
  g_autofree char *tmp = ptsim_output_temp_template(dir, base);
  int fd = g_mkstemp_full(tmp, O_RDWR | O_CLOEXEC, PTSIM_OUTPUT_NEW_FILE_MODE);
  if (fd >= 0) ptsim_output_session_track(tmp);
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
  ptsim_output_session_forget(tmp);
  if (!ok || !ptsim_output_write(files->figure, figure, len, error)) return FALSE;
  if (out) {
    *out = *files;
    memset(files, 0, sizeof *files);
  }
  return TRUE;
}
