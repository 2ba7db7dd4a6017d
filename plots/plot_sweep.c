/* plot_sweep.c — the sweep figures' input (a `ptsim sweep --csv` file or
 * an in-process sweep), the choice of one scenario, and the GPU-count
 * scaling figure; see plot.h.  The heatmap and the Pareto scatter are in
 * plot_heatmap.c and plot_pareto.c; what they share in plot_sweep_int.h.
 *
 * Memory is the analytical estimate of the peak stage (the number the fit
 * verdict uses). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "names.h"
#include "plot_sweep_int.h"

#define GIB PTSIM_PLOT_GIB

/* ---- reading ---- */

/* Memory, time and throughput are never negative (0: not scheduled). */
static const PtsimRange NONNEGATIVE = {0.0, INFINITY, TRUE, FALSE};

GArray *ptsim_plot_layouts_read_csv(const char *path, GError **error) {
  static const char *const cols[] = {"rank",      "model",        "hw",
                                     "gpus",      "seq",          "gbs",
                                     "tp",        "pp",           "cp",
                                     "dp",        "vp",           "mbs",
                                     "recompute", "schedule",     "status",
                                     "fits",      "total_bytes",  "usage_fraction",
                                     "step_s",    "tokens_per_s", NULL};
  g_autoptr(PtsimPlotTable) t = ptsim_plot_table_read(path, ',', cols, error);
  if (!t) return NULL;
  int c[G_N_ELEMENTS(cols)];
  for (size_t i = 0; cols[i]; i++) c[i] = ptsim_plot_table_column(t, cols[i]);
  int runs_col = ptsim_plot_table_column(t, "runs"); /* optional: older CSVs lack it */
  g_autoptr(GArray) out = g_array_sized_new(FALSE, TRUE, sizeof(PtsimPlotLayout), t->rows->len);
  for (guint r = 0; r < t->rows->len; r++) {
    PtsimPlotLayout l;
    memset(&l, 0, sizeof l);
    l.line = g_array_index(t->lines, int, r);
    gint64 *ints[] = {&l.rank, NULL,  NULL,  &l.gpus, &l.seq, &l.gbs,
                      &l.tp,   &l.pp, &l.cp, &l.dp,   &l.vp,  &l.mbs};
    for (size_t i = 0; i < G_N_ELEMENTS(ints); i++) {
      if (!ints[i]) continue;
      if (!ptsim_plot_table_int(t, r, c[i], ints[i], error)) return NULL;
      if (*ints[i] < 0 || (*ints[i] == 0 && i != 0)) { /* rank 0: a streamed sweep */
        g_set_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_INPUT,
                    "%s:%d: column %s: %" G_GINT64_FORMAT " must be positive", path, l.line,
                    cols[i], *ints[i]);
        return NULL;
      }
    }
    g_strlcpy(l.model, ptsim_plot_table_text(t, r, c[1]), sizeof l.model);
    g_strlcpy(l.hw, ptsim_plot_table_text(t, r, c[2]), sizeof l.hw);
    g_strlcpy(l.recompute, ptsim_plot_table_text(t, r, c[12]), sizeof l.recompute);
    g_strlcpy(l.schedule, ptsim_plot_table_text(t, r, c[13]), sizeof l.schedule);
    gint64 status, fits;
    if (!ptsim_plot_table_int(t, r, c[14], &status, error) ||
        !ptsim_plot_table_int(t, r, c[15], &fits, error) ||
        !ptsim_plot_table_double(t, r, c[16], NONNEGATIVE, &l.total_bytes, error) ||
        !ptsim_plot_table_double(t, r, c[17], NONNEGATIVE, &l.usage_fraction, error) ||
        !ptsim_plot_table_double(t, r, c[18], NONNEGATIVE, &l.step_s, error) ||
        !ptsim_plot_table_double(t, r, c[19], NONNEGATIVE, &l.tokens_per_s, error))
      return NULL;
    if (fits != 0 && fits != 1) {
      g_set_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_INPUT,
                  "%s:%d: column fits: %" G_GINT64_FORMAT " must be 0 or 1", path, l.line, fits);
      return NULL;
    }
    l.status = (int)status;
    l.fits = (int)fits;
    l.runs = -2;
    gint64 runs;
    if (runs_col >= 0) {
      if (!ptsim_plot_table_int(t, r, runs_col, &runs, error)) return NULL;
      if (runs < -1 || runs > 1) {
        g_set_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_INPUT,
                    "%s:%d: column runs: %" G_GINT64_FORMAT " must be 1, 0 or -1", path, l.line,
                    runs);
        return NULL;
      }
      l.runs = (int)runs;
    }
    g_array_append_val(out, l);
  }
  return g_steal_pointer(&out);
}

GArray *ptsim_plot_layouts_from_sweep(const PtsimSweep *sweep, const GArray *order) {
  g_return_val_if_fail(sweep && order, NULL);
  GArray *out = g_array_sized_new(FALSE, TRUE, sizeof(PtsimPlotLayout), order->len);
  for (guint k = 0; k < order->len; k++) {
    guint i = g_array_index(order, guint, k);
    const PtsimJob *j = &g_array_index(sweep->jobs, PtsimJob, i);
    const PtsimBatchResult *r = &g_array_index(sweep->results, PtsimBatchResult, i);
    const PtsimLayout *y = &j->layout;
    PtsimPlotLayout l;
    memset(&l, 0, sizeof l);
    l.rank = k + 1;
    g_strlcpy(l.model, j->model.name, sizeof l.model);
    g_strlcpy(l.hw, j->hw.name, sizeof l.hw);
    l.gpus = y->gpus;
    l.seq = y->seq;
    l.gbs = y->gbs;
    l.tp = y->tp;
    l.pp = y->pp;
    l.cp = y->cp;
    l.dp = y->dp;
    l.vp = y->vp;
    l.mbs = y->mbs;
    g_strlcpy(l.recompute, ptsim_names_get(PTSIM_NAMES_RECOMPUTE, (int)j->settings.recompute),
              sizeof l.recompute);
    g_strlcpy(l.schedule, ptsim_names_get(PTSIM_NAMES_SCHEDULE, (int)y->schedule),
              sizeof l.schedule);
    l.status = r->status;
    l.fits = r->fits;
    l.runs = r->runs;
    l.total_bytes = r->total_bytes;
    l.usage_fraction = r->usage_fraction;
    l.step_s = r->step_s;
    l.tokens_per_s = r->tokens_per_s;
    g_array_append_val(out, l);
  }
  return out;
}

/* ---- helpers shared with plot_heatmap.c and plot_pareto.c ---- */

static gboolean same_scenario(const PtsimPlotLayout *a, const PtsimPlotLayout *b) {
  return strcmp(a->model, b->model) == 0 && strcmp(a->hw, b->hw) == 0 && a->gpus == b->gpus &&
         a->seq == b->seq && a->gbs == b->gbs;
}

int ptsim_plot_best_index(const GArray *layouts) {
  int best = -1;
  for (guint i = 0; i < layouts->len; i++) {
    const PtsimPlotLayout *l = &g_array_index(layouts, PtsimPlotLayout, i);
    if (l->status != 0) continue;
    if (best < 0) {
      best = (int)i;
      continue;
    }
    const PtsimPlotLayout *b = &g_array_index(layouts, PtsimPlotLayout, best);
    if (ptsim_plot_usable(l) != ptsim_plot_usable(b)) {
      if (ptsim_plot_usable(l)) best = (int)i;
      continue;
    }
    double x = ptsim_plot_per_gpu(l), y = ptsim_plot_per_gpu(b);
    if (x > y || (x == y && l->rank < b->rank)) best = (int)i;
  }
  return best;
}

/* TRUE when every layout has the scenario of the first. */
static gboolean single_scenario(const GArray *layouts) {
  for (guint i = 1; i < layouts->len; i++)
    if (!same_scenario(&g_array_index(layouts, PtsimPlotLayout, 0),
                       &g_array_index(layouts, PtsimPlotLayout, i)))
      return FALSE;
  return TRUE;
}

char *ptsim_plot_scenario_text(const PtsimPlotLayout *l) {
  return g_strdup_printf("%s on %" G_GINT64_FORMAT " x %s, seq %" G_GINT64_FORMAT
                         ", gbs %" G_GINT64_FORMAT,
                         l->model, l->gpus, l->hw, l->seq, l->gbs);
}

char *ptsim_plot_layout_words(const PtsimPlotLayout *l) {
  g_autofree char *vp = l->vp > 1 ? g_strdup_printf(" vp %" G_GINT64_FORMAT, l->vp) : g_strdup("");
  return g_strdup_printf("tp %" G_GINT64_FORMAT " pp %" G_GINT64_FORMAT " cp %" G_GINT64_FORMAT
                         " mbs %" G_GINT64_FORMAT "%s",
                         l->tp, l->pp, l->cp, l->mbs, vp);
}

static int cmp_i64(const void *a, const void *b) {
  gint64 x = *(const gint64 *)a, y = *(const gint64 *)b;
  return (x > y) - (x < y);
}

GArray *ptsim_plot_distinct(const GArray *layouts, size_t offset) {
  /* sorted, then the repeats dropped: n log n for a CSV of any length */
  GArray *v = g_array_sized_new(FALSE, FALSE, sizeof(gint64), layouts->len);
  for (guint i = 0; i < layouts->len; i++) {
    gint64 x =
        *(const gint64 *)((const char *)&g_array_index(layouts, PtsimPlotLayout, i) + offset);
    g_array_append_val(v, x);
  }
  g_array_sort(v, (GCompareFunc)cmp_i64);
  guint kept = 0;
  for (guint i = 0; i < v->len; i++)
    if (kept == 0 || g_array_index(v, gint64, i) != g_array_index(v, gint64, kept - 1))
      g_array_index(v, gint64, kept++) = g_array_index(v, gint64, i);
  g_array_set_size(v, kept);
  return v;
}

int ptsim_plot_index_of(const GArray *v, gint64 x) {
  for (guint k = 0; k < v->len; k++)
    if (g_array_index(v, gint64, k) == x) return (int)k;
  return -1;
}

void ptsim_plot_source_comment(GString *s, const char *source, guint used) {
  g_string_append_printf(s, "# from %s: %u layouts of this scenario\n",
                         source ? source : "an in-process sweep", used);
}

gboolean ptsim_plot_check_one_scenario(const GArray *layouts, const char *kind, GError **error) {
  if (layouts->len > 0 && !single_scenario(layouts)) {
    g_set_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_DATA,
                "%s: the layouts mix scenarios; pick one first (ptsim_plot_layouts_one_scenario)",
                kind);
    return FALSE;
  }
  if (ptsim_plot_best_index(layouts) < 0) {
    g_set_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_DATA,
                "%s: none of the %u layouts could be scheduled; nothing to plot", kind,
                layouts->len);
    return FALSE;
  }
  return TRUE;
}

/* ---- one scenario ---- */

/* A name as the user may spell it: "h100-80g", "hw_profiles/h100-80g.ini". */
static gboolean name_matches(const char *want, const char *have) {
  if (!want || !*want) return TRUE;
  if (strcmp(want, have) == 0) return TRUE;
  g_autofree char *base = g_path_get_basename(want);
  char *dot = strrchr(base, '.');
  if (dot && strcmp(dot, ".ini") == 0) *dot = 0;
  return strcmp(base, have) == 0;
}

static gboolean matches(const PtsimPlotLayout *l, const PtsimPlotScenario *w) {
  return !w || (name_matches(w->model, l->model) && name_matches(w->hw, l->hw) &&
                (w->gpus <= 0 || w->gpus == l->gpus) && (w->seq <= 0 || w->seq == l->seq) &&
                (w->gbs <= 0 || w->gbs == l->gbs));
}

/* "model/hw/gpus/seq/gbs" of each distinct scenario, up to `max`, and the
 * flags that tell them apart. */
static void describe_scenarios(GString *out, const GArray *layouts, guint max) {
  g_autoptr(GArray) firsts = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint i = 0; i < layouts->len; i++) {
    const PtsimPlotLayout *l = &g_array_index(layouts, PtsimPlotLayout, i);
    gboolean seen = FALSE;
    for (guint k = 0; k < firsts->len && !seen; k++)
      seen = same_scenario(l, &g_array_index(layouts, PtsimPlotLayout,
                                             g_array_index(firsts, guint, k)));
    if (!seen) g_array_append_val(firsts, i);
  }
  const PtsimPlotLayout *a = &g_array_index(layouts, PtsimPlotLayout, 0);
  gboolean differ[5] = {FALSE};
  for (guint k = 1; k < firsts->len; k++) {
    const PtsimPlotLayout *b = &g_array_index(layouts, PtsimPlotLayout,
                                              g_array_index(firsts, guint, k));
    differ[0] |= strcmp(a->model, b->model) != 0;
    differ[1] |= strcmp(a->hw, b->hw) != 0;
    differ[2] |= a->gpus != b->gpus;
    differ[3] |= a->seq != b->seq;
    differ[4] |= a->gbs != b->gbs;
  }
  static const char *const flag[] = {"--model", "--hw", "--gpus", "--seq", "--gbs"};
  g_string_append_printf(out, "%u scenarios", firsts->len);
  if (firsts->len > 1) {
    g_string_append(out, " (pick one with");
    for (int f = 0; f < 5; f++)
      if (differ[f]) g_string_append_printf(out, " %s", flag[f]);
    g_string_append(out, ")");
  }
  g_string_append(out, ": ");
  for (guint k = 0; k < firsts->len && k < max; k++) {
    const PtsimPlotLayout *l = &g_array_index(layouts, PtsimPlotLayout,
                                              g_array_index(firsts, guint, k));
    g_string_append_printf(out,
                           "%s%s %s gpus %" G_GINT64_FORMAT " seq %" G_GINT64_FORMAT
                           " gbs %" G_GINT64_FORMAT,
                           k ? "; " : "", l->model, l->hw, l->gpus, l->seq, l->gbs);
  }
  if (firsts->len > max) g_string_append_printf(out, "; ... (%u more)", firsts->len - max);
}

GArray *ptsim_plot_layouts_one_scenario(const GArray *layouts, const PtsimPlotScenario *want,
                                        GError **error) {
  g_return_val_if_fail(layouts, NULL);
  g_autoptr(GArray) out = g_array_new(FALSE, FALSE, sizeof(PtsimPlotLayout));
  for (guint i = 0; i < layouts->len; i++) {
    const PtsimPlotLayout *l = &g_array_index(layouts, PtsimPlotLayout, i);
    if (matches(l, want)) g_array_append_val(out, *l);
  }
  if (out->len == 0 || !single_scenario(out)) {
    g_autoptr(GString) text = g_string_new(NULL);
    if (out->len == 0) {
      g_string_append(text, "no layout matches --model/--hw/--gpus/--seq/--gbs; the input holds ");
      if (layouts->len)
        describe_scenarios(text, layouts, 8);
      else
        g_string_append(text, "no layouts");
    } else {
      g_string_append(text, "the input holds ");
      describe_scenarios(text, out, 8);
    }
    g_set_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_OPTION, "%s", text->str);
    return NULL;
  }
  return g_steal_pointer(&out);
}

/* ---- scaling ---- */

#define SCALING_SERIES_MAX 64
#define SCALING_GPU_COUNTS_MAX 1024

gboolean ptsim_plot_scaling(const char *figure_path, const GArray *layouts, PtsimPlotScalingY y,
                            const char *source, const PtsimPlotSize *size, PtsimPlotFiles *out,
                            GError **error) {
  g_return_val_if_fail(figure_path && layouts, FALSE);
  g_auto(PtsimPlotFiles) files = {NULL, NULL, NULL};
  PtsimPlotCanvas c;
  if (!ptsim_plot_begin(figure_path, size, &files, &c, error)) return FALSE;
  if (ptsim_plot_best_index(layouts) < 0) {
    g_set_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_DATA,
                "scaling: none of the %u layouts could be scheduled; nothing to plot",
                layouts->len);
    return FALSE;
  }
  /* Series: distinct (model, hw, seq, gbs) in order of first appearance. */
  g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GArray) series_of = g_array_new(FALSE, FALSE, sizeof(int));
  g_autoptr(GHashTable) index_of = g_hash_table_new(g_str_hash, g_str_equal); /* key -> s + 1 */
  for (guint i = 0; i < layouts->len; i++) {
    const PtsimPlotLayout *l = &g_array_index(layouts, PtsimPlotLayout, i);
    g_autofree char *key = g_strdup_printf("%s\t%s\t%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT,
                                           l->model, l->hw, l->seq, l->gbs);
    int s = GPOINTER_TO_INT(g_hash_table_lookup(index_of, key)) - 1;
    if (s < 0) {
      s = (int)keys->len;
      g_hash_table_insert(index_of, key, GINT_TO_POINTER(s + 1));
      g_ptr_array_add(keys, g_steal_pointer(&key));
    }
    g_array_append_val(series_of, s);
  }
  g_autoptr(GArray) all_gpus = ptsim_plot_distinct(layouts, G_STRUCT_OFFSET(PtsimPlotLayout, gpus));
  /* A figure past these draws nothing readable (and gnuplot has crashed
   * on thousands of series): a CSV with them is not one sweep's. */
  if (keys->len > SCALING_SERIES_MAX || all_gpus->len > SCALING_GPU_COUNTS_MAX) {
    g_set_error(error, PTSIM_PLOT_ERROR, PTSIM_PLOT_ERROR_INPUT,
                "scaling: %u series (model, hw, seq, gbs) over %u GPU counts; the figure draws "
                "at most %d series and %d GPU counts: plot a part of %s",
                keys->len, all_gpus->len, SCALING_SERIES_MAX, SCALING_GPU_COUNTS_MAX,
                source ? source : "the sweep");
    return FALSE;
  }
  /* The best usable layout of each (series, GPU count), and which pairs
   * have layouts at all: one pass, not one per pair. */
  guint ng = all_gpus->len;
  g_autofree int *best_of = g_new(int, (gsize)keys->len *ng);
  g_autofree gboolean *present_of = g_new0(gboolean, (gsize)keys->len * ng);
  for (gsize k = 0; k < (gsize)keys->len * ng; k++) best_of[k] = -1;
  for (guint i = 0; i < layouts->len; i++) {
    const PtsimPlotLayout *l = &g_array_index(layouts, PtsimPlotLayout, i);
    const gint64 *at = bsearch(&l->gpus, all_gpus->data, ng, sizeof(gint64), cmp_i64);
    gsize k = (gsize)g_array_index(series_of, int, i) * ng + (gsize)(at - (gint64 *)all_gpus->data);
    present_of[k] = TRUE;
    if (ptsim_plot_usable(l) &&
        (best_of[k] < 0 ||
         ptsim_plot_per_gpu(l) >
             ptsim_plot_per_gpu(&g_array_index(layouts, PtsimPlotLayout, best_of[k]))))
      best_of[k] = (int)i;
  }
  /* What differs between series names them. */
  gboolean differ[4] = {FALSE, FALSE, FALSE, FALSE};
  g_auto(GStrv) k0 = g_strsplit(g_ptr_array_index(keys, 0), "\t", 4);
  for (guint k = 1; k < keys->len; k++) {
    g_auto(GStrv) kk = g_strsplit(g_ptr_array_index(keys, k), "\t", 4);
    for (int f = 0; f < 4; f++) differ[f] |= strcmp(k0[f], kk[f]) != 0;
  }
  if (!differ[0] && !differ[2] && !differ[3]) differ[1] = TRUE; /* one line: name it by hw */
  gboolean step = y == PTSIM_PLOT_Y_STEP;
  const char *ylabel = step ? "step time (s)" : "tokens/s per GPU";
  g_autoptr(GString) tsv = g_string_new(NULL);
  g_string_append_printf(
      tsv,
      "# ptsim scaling: the best fitting layout per GPU count, one block per series\n"
      "# from %s (%u layouts)\n"
      "# columns: series (0-based block), name, gpus, fits (0: no layout fits at this count), "
      "tokens_per_s_per_gpu, step_s, ideal (the series' first fitting count scaled "
      "perfectly: the same tokens/s per GPU, step time x first/gpus; NaN before it), tp, pp, "
      "cp, dp, vp, mbs, recompute, schedule (of the best; NaN/- when nothing fits)\n",
      source ? source : "an in-process sweep", layouts->len);
  guint nseries = keys->len;
  int longest_name = 0;
  double ymin = G_MAXDOUBLE, ymax = 0;
  gboolean any_oom = FALSE; /* a count where nothing fits: the OOM labels */
  g_autoptr(GString) names = g_string_new(NULL);
  for (guint s = 0; s < nseries; s++) {
    g_auto(GStrv) kk = g_strsplit(g_ptr_array_index(keys, s), "\t", 4);
    g_autoptr(GString) name = g_string_new(NULL);
    static const char *const field[] = {"", "", "seq ", "gbs "};
    for (int f = 0; f < 4; f++)
      if (differ[f]) g_string_append_printf(name, "%s%s%s", name->len ? ", " : "", field[f], kk[f]);
    g_string_append_printf(names, "%s'%s'", s ? ", " : "", name->str);
    longest_name = MAX(longest_name, (int)name->len);
    if (s) g_string_append(tsv, "\n\n");
    g_string_append_printf(tsv,
                           "# block %u: %s\n# series\tname\tgpus\tfits\ttokens_per_s_per_gpu"
                           "\tstep_s\tideal\ttp\tpp\tcp\tdp\tvp\tmbs\trecompute\tschedule\n",
                           s, name->str);
    double base_v = 0;
    gint64 base_g = 0;
    for (guint g = 0; g < all_gpus->len; g++) {
      gint64 n = g_array_index(all_gpus, gint64, g);
      int best = best_of[(gsize)s * ng + g];
      if (!present_of[(gsize)s * ng + g]) continue;
      const PtsimPlotLayout *l = best >= 0 ? &g_array_index(layouts, PtsimPlotLayout, best) : NULL;
      double v = l ? (step ? l->step_s : ptsim_plot_per_gpu(l)) : NAN;
      if (l && base_g == 0) {
        base_g = n;
        base_v = v;
      }
      double ideal = base_g == 0 ? NAN : step ? base_v * (double)base_g / (double)n : base_v;
      g_string_append_printf(tsv, "%u\t%s\t%" G_GINT64_FORMAT "\t%d\t", s, name->str, n, l != NULL);
      if (l) {
        ptsim_plot_num(tsv, "%.1f", ptsim_plot_per_gpu(l));
        g_string_append_c(tsv, '\t');
        ptsim_plot_num(tsv, "%.6f", l->step_s);
      } else {
        g_string_append(tsv, "NaN\tNaN");
      }
      g_string_append_c(tsv, '\t');
      ptsim_plot_num(tsv, step ? "%.6f" : "%.1f", ideal);
      if (!l) {
        g_string_append(tsv, "\t-\t-\t-\t-\t-\t-\t-\t-\n");
        any_oom = TRUE;
        continue;
      }
      g_string_append_printf(tsv,
                             "\t%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT
                             "\t%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT
                             "\t%s\t%s\n",
                             l->tp, l->pp, l->cp, l->dp, l->vp, l->mbs, l->recompute, l->schedule);
      ymin = MIN(ymin, v);
      ymax = MAX(ymax, v);
      if (isfinite(ideal)) {
        ymin = MIN(ymin, ideal);
        ymax = MAX(ymax, ideal);
      }
    }
  }
  /* key under the plot: the series and the ideal-scaling entry */
  int longest = MAX(13, longest_name); /* 13: "ideal scaling" */
  int per_row = 1, key_rows = ptsim_plot_key_rows(&c, (int)nseries + 1, longest, &per_row);
  const PtsimPlotLayout *l0 = &g_array_index(layouts, PtsimPlotLayout, 0);
  g_autoptr(GString) first = g_string_new(NULL);
  g_string_append_printf(first, "%s vs GPU count", ylabel);
  if (!differ[0]) g_string_append_printf(first, ", %s", l0->model);
  if (!differ[2]) g_string_append_printf(first, ", seq %" G_GINT64_FORMAT, l0->seq);
  if (!differ[3]) g_string_append_printf(first, ", gbs %" G_GINT64_FORMAT, l0->gbs);
  const char *title[] = {first->str,
                         "each point: the best layout that fits; dashed: ideal scaling from the "
                         "first count that fits; OOM: none fits",
                         NULL};
  int title_lines = c.narrow ? 4 : 3;
  double top_cm = 0.3, bottom_cm = ptsim_plot_axis_cm(&c) + ptsim_plot_key_cm(&c, key_rows);
  ptsim_plot_canvas_height(&c, ptsim_plot_title_cm(&c, title_lines, title) + top_cm +
                                   (c.narrow ? 4.4 : 5.4) + bottom_cm);
  g_autoptr(GString)
      gp = ptsim_plot_script_begin(&files, &c,
                                   "scaling: the best fitting layout per GPU count, per series.",
                                   NULL, NULL);
  g_string_append_printf(gp, "\narray name[%u] = [%s]\n", nseries, names->str);
  g_string_append_printf(gp,
                         "ycol = %d   # 5: tokens/s per GPU, 6: step time (s)\n"
                         "show_ideal = 1   # the dashed ideal-scaling lines\n",
                         step ? 6 : 5);
  ptsim_plot_title(gp, &c, title_lines, title);
  ptsim_plot_margins(gp, top_cm, bottom_cm);
  ptsim_plot_key_under(gp, &c, per_row, longest, 0.0);
  g_string_append(gp, "set logscale x 2\nset xtics (");
  for (guint g = 0; g < all_gpus->len; g++)
    g_string_append_printf(gp, "%s'%" G_GINT64_FORMAT "' %" G_GINT64_FORMAT, g ? ", " : "",
                           g_array_index(all_gpus, gint64, g), g_array_index(all_gpus, gint64, g));
  gint64 gmin = g_array_index(all_gpus, gint64, 0),
         gmax = g_array_index(all_gpus, gint64, all_gpus->len - 1);
  g_string_append_printf(gp, ")\nset xrange [%g:%g]\n", gmin / 1.4, gmax * 1.4);
  if (ymax <= 0) ymax = 1.0;
  if (ymin >= G_MAXDOUBLE) ymin = ymax;
  if (step) {
    double lo = ymin / 1.6, hi = ymax * 1.6;
    g_string_append(gp, "set logscale y 10\nset yrange [");
    ptsim_plot_num(gp, "%.6g", lo);
    g_string_append(gp, ":");
    ptsim_plot_num(gp, "%.6g", hi);
    g_string_append(gp, "]\nset format y '%g'\nset ytics (");
    /* 1-2-5 tics: a log axis over less than two decades otherwise shows one */
    int first_tic = 1;
    /* at most the ~630 decades of a double (and none from lo = 0) */
    int decades = 0;
    for (double dec = pow(10.0, floor(log10(lo))); dec > 0.0 && dec <= hi && decades < 700;
         dec *= 10.0, decades++)
      for (int m = 0; m < 3; m++) {
        double v = dec * (m == 0 ? 1.0 : m == 1 ? 2.0 : 5.0);
        if (v < lo || v > hi) continue;
        if (!first_tic) g_string_append(gp, ", ");
        first_tic = 0;
        ptsim_plot_num(gp, "%g", v);
      }
    g_string_append(gp, ")\noom_y(s) = ");
    ptsim_plot_num(gp, "%.6g", ymin / 1.4);
    g_string_append(gp, " * 1.25**s");
  } else {
    g_string_append(gp, "set yrange [0:");
    ptsim_plot_num(gp, "%.6g", ymax * 1.12);
    g_string_append(gp, "]\nset ytics 0,");
    ptsim_plot_num(gp, "%g", ptsim_plot_nice_step(0, ymax * 1.12, c.narrow ? 4 : 5));
    g_string_append(gp, "\noom_y(s) = ");
    ptsim_plot_num(gp, "%.6g", ymax * 0.03);
    g_string_append(gp, " + s * ");
    ptsim_plot_num(gp, "%.6g", ymax * 0.06);
  }
  g_string_append_printf(
      gp,
      "   # where series s marks OOM: stacked, so two series never print on each other\n"
      "set xlabel 'GPUs' offset 0,0.3\nset ylabel '%s'\nset key samplen 2.5\n"
      "plot for [s=0:%u] data index s using 3:($4==1 ? column(ycol) : NaN) with linespoints \\\n"
      "       lw 1.5 lc rgb c_series[s%%6+1] pt pt_series[s%%6+1] dt dt_series[s%%6+1] ps 0.8 "
      "title name[s+1], \\\n"
      "     for [s=0:%u] data index s using 3:(show_ideal ? column(7) : NaN) with lines \\\n"
      "       lw 0.8 dt (3,3) lc rgb c_series[s%%6+1] notitle, \\\n"
      "     NaN with lines lw 0.8 dt (3,3) lc rgb c_line title (show_ideal ? 'ideal scaling' : '')",
      ylabel, nseries - 1, nseries - 1);
  /* only where some count has no fitting layout: gnuplot 5.4.4 crashed
   * (SIGSEGV) on the labels plot of a one-count sweep whose count fits,
   * every label undefined */
  if (any_oom)
    g_string_append_printf(gp,
                           ", \\\n     for [s=0:%u] data index s using 3:($4==0 ? oom_y(s) : NaN):"
                           "('OOM') with labels font f_tiny tc rgb c_series[s%%6+1] notitle",
                           nseries - 1);
  g_string_append_c(gp, '\n');
  return ptsim_plot_render(&files, tsv, gp, out, error);
}
