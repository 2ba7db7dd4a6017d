/* fuzz_kernel_tables.c — a kernel table file (sim/io/kernel_tables.c over
 * csv_table.c): the first byte picks the file kind (gemm, attention,
 * memory, hbm, collectives, moe_dispatch, quantize, or sources.csv itself),
 * the rest is its text, read after a fixed sources.csv.  An accepted file
 * must give every GPU a table whose curves are sorted and whose lookups
 * are finite and within the measured values. */
#include <math.h>
#include "fuzz_common.h"
#include "kernel_tables.h"

static const char sources[] = "key,where,what\n"
                              "src,https://example.org/bench,a bench\n"
                              "repo,owner/name@0123456789abcdef:README.md,a file\n";

static void check_table(const PtsimKernelTable *t) {
  g_assert(t->curve_count >= 0 && t->curve_count <= PTSIM_KERNEL_CURVES);
  g_assert(t->shape_count >= 0 && t->shape_count <= PTSIM_KERNEL_SHAPES);
  for (int32_t i = 0; i < t->curve_count; i++) {
    const PtsimKernelCurve *c = &t->curves[i];
    double lo = c->y[0], hi = c->y[0];
    g_assert(c->n >= 1 && c->n <= PTSIM_KERNEL_POINTS);
    for (int32_t p = 0; p < c->n; p++) {
      g_assert(isfinite(c->log_x[p]) && isfinite(c->y[p]) && c->y[p] > 0.0);
      if (p > 0) g_assert(c->log_x[p] > c->log_x[p - 1]);
      lo = MIN(lo, c->y[p]);
      hi = MAX(hi, c->y[p]);
    }
    const double xs[] = {1e-3, 1.0, 1e3, 1e6, 1e9, 1e12, 1e15, ptsim_kernel_curve_x(c, 0)};
    for (size_t k = 0; k < G_N_ELEMENTS(xs); k++) {
      double y = ptsim_kernel_curve_eval(c, xs[k]);
      g_assert(isfinite(y) && y >= lo * (1 - 1e-12) && y <= hi * (1 + 1e-12));
    }
    g_assert(ptsim_kernel_table_find(t, c->kind, c->key, c->series) == c);
  }
  for (int32_t i = 0; i < t->shape_count; i++) {
    const PtsimKernelGemmShape *s = &t->shapes[i];
    g_assert(s->curve >= 0 && s->curve < t->curve_count);
    g_assert(ptsim_kernel_table_gemm_shape(t, t->curves[s->curve].key, s->groups, s->m, s->n,
                                           s->k) != NULL);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > FUZZ_MAX_INPUT) return 0;
  int kind = data[0] % (PTSIM_KERNEL_KIND_COUNT + 1);
  const char *text = (const char *)data + 1;
  gsize len = size - 1;
  g_autoptr(PtsimKernelTables) t = ptsim_kernel_tables_new();
  g_autoptr(GError) error = NULL;
  g_assert(ptsim_kernel_tables_add_sources(t, sources, sizeof sources - 1, "sources.csv", NULL));
  gboolean ok = kind == PTSIM_KERNEL_KIND_COUNT
                    ? ptsim_kernel_tables_add_sources(t, text, len, "fuzz.csv", &error)
                    : ptsim_kernel_tables_add_rows(t, (PtsimKernelKind)kind, text, len, "fuzz.csv",
                                                   &error);
  g_assert(ok == (error == NULL));
  if (!ok) {
    g_assert(error->message && error->message[0]);
    return 0;
  }
  g_auto(GStrv) gpus = ptsim_kernel_tables_gpus(t);
  g_autofree PtsimKernelTable *table = g_new(PtsimKernelTable, 1);
  for (char **g = gpus; *g; g++) {
    g_assert(ptsim_kernel_tables_select(t, *g, table, NULL));
    check_table(table);
  }
  return 0;
}
