/* kernel_table.c — building and looking up a GPU's measured kernel curves;
 * the contract and the interpolation rule are in kernel_table.h.
 *
 * Everything is linear scans: a table holds at most a few hundred points,
 * and the cost model will look a curve up once per operation kind, not per
 * event. */
#include "kernel_table.h"

#include <math.h>

/* Two x closer than this in ln x are the same point (1e-9 relative). */
#define KERNEL_SAME_LOG_X 1e-9

/* ---- names (no C library on the device) ---- */

PTSIM_HD static void kernel_name_copy(char *dst, const char *src) {
  int i = 0;
  if (src != 0)
    for (; i < PTSIM_KERNEL_NAME - 1 && src[i] != '\0'; i++) dst[i] = src[i];
  for (; i < PTSIM_KERNEL_NAME; i++) dst[i] = '\0';
}

/* 1 when the stored name equals NAME (compared as kernel_name_copy keeps it). */
PTSIM_HD static int kernel_name_equal(const char *stored, const char *name) {
  int i;
  for (i = 0; i < PTSIM_KERNEL_NAME - 1; i++) {
    if (stored[i] != name[i]) return 0;
    if (name[i] == '\0') return 1;
  }
  return name[i] == '\0';
}

PTSIM_HD static int kernel_key_equal(const int32_t *a, const int32_t *b) {
  int i;
  for (i = 0; i < PTSIM_KERNEL_KEYS; i++)
    if (a[i] != b[i]) return 0;
  return 1;
}

/* KEY matches a curve's key when each slot is equal or PTSIM_KERNEL_ANY. */
PTSIM_HD static int kernel_key_matches(const int32_t *curve_key, const int32_t *key) {
  int i;
  for (i = 0; i < PTSIM_KERNEL_KEYS; i++)
    if (key[i] != PTSIM_KERNEL_ANY && key[i] != curve_key[i]) return 0;
  return 1;
}

PTSIM_HD static int kernel_positive(double v) { return v > 0.0 && v < HUGE_VAL; }

/* ---- building ---- */

PTSIM_HD void ptsim_kernel_table_init(PtsimKernelTable *t, const char *gpu) {
  kernel_name_copy(t->gpu, gpu);
  t->curve_count = 0;
  t->shape_count = 0;
}

/* Index of the curve with exactly (kind, key, series), or -1. */
PTSIM_HD static int32_t kernel_curve_index(const PtsimKernelTable *t, int32_t kind,
                                           const int32_t *key, const char *series) {
  int32_t i;
  for (i = 0; i < t->curve_count; i++) {
    const PtsimKernelCurve *c = &t->curves[i];
    if (c->kind == kind && kernel_key_equal(c->key, key) && kernel_name_equal(c->series, series))
      return i;
  }
  return -1;
}

PTSIM_HD PtsimKernelAddStatus ptsim_kernel_table_add(PtsimKernelTable *t, int32_t kind,
                                                     const int32_t key[PTSIM_KERNEL_KEYS],
                                                     const char *series, double x, double y) {
  PtsimKernelCurve *c;
  double lx;
  int32_t ci, at, i;
  if (kind < 0 || kind >= PTSIM_KERNEL_KIND_COUNT || series == 0 || !kernel_positive(x) ||
      !kernel_positive(y))
    return PTSIM_KERNEL_ADD_BAD_VALUE;
  lx = log(x);
  ci = kernel_curve_index(t, kind, key, series);
  if (ci < 0) {
    if (t->curve_count >= PTSIM_KERNEL_CURVES) return PTSIM_KERNEL_ADD_TOO_MANY_CURVES;
    c = &t->curves[t->curve_count];
    c->kind = kind;
    for (i = 0; i < PTSIM_KERNEL_KEYS; i++) c->key[i] = key[i];
    kernel_name_copy(c->series, series);
    c->n = 1;
    c->log_x[0] = lx;
    c->y[0] = y;
    t->curve_count++;
    return PTSIM_KERNEL_ADD_OK;
  }
  c = &t->curves[ci];
  for (i = 0; i < c->n; i++)
    if (fabs(c->log_x[i] - lx) < KERNEL_SAME_LOG_X) return PTSIM_KERNEL_ADD_DUPLICATE;
  if (c->n >= PTSIM_KERNEL_POINTS) return PTSIM_KERNEL_ADD_TOO_MANY_POINTS;
  at = c->n;
  while (at > 0 && c->log_x[at - 1] > lx) at--;
  ptsim_hd_memmove(&c->log_x[at + 1], &c->log_x[at], (size_t)(c->n - at) * sizeof(double));
  ptsim_hd_memmove(&c->y[at + 1], &c->y[at], (size_t)(c->n - at) * sizeof(double));
  c->log_x[at] = lx;
  c->y[at] = y;
  c->n++;
  return PTSIM_KERNEL_ADD_OK;
}

PTSIM_HD PtsimKernelAddStatus ptsim_kernel_table_add_shape(PtsimKernelTable *t,
                                                           const int32_t key[PTSIM_KERNEL_KEYS],
                                                           const char *series, int64_t groups,
                                                           int64_t m, int64_t n, int64_t k,
                                                           double tflops) {
  PtsimKernelGemmShape *s;
  int32_t ci;
  if (series == 0 || groups < 1 || m < 1 || n < 1 || k < 1 || !kernel_positive(tflops))
    return PTSIM_KERNEL_ADD_BAD_VALUE;
  ci = kernel_curve_index(t, PTSIM_KERNEL_GEMM, key, series);
  if (ci < 0) return PTSIM_KERNEL_ADD_BAD_VALUE;
  if (t->shape_count >= PTSIM_KERNEL_SHAPES) return PTSIM_KERNEL_ADD_TOO_MANY_SHAPES;
  s = &t->shapes[t->shape_count++];
  s->curve = ci;
  s->groups = groups;
  s->m = m;
  s->n = n;
  s->k = k;
  s->tflops = tflops;
  return PTSIM_KERNEL_ADD_OK;
}

PTSIM_HD PtsimKernelAddStatus ptsim_kernel_table_append(PtsimKernelTable *dst,
                                                        const PtsimKernelTable *src, int32_t kinds,
                                                        double compute_scale) {
  int32_t i, j;
  if (!kernel_positive(compute_scale)) return PTSIM_KERNEL_ADD_BAD_VALUE;
  for (i = 0; i < src->curve_count; i++) {
    const PtsimKernelCurve *c = &src->curves[i];
    PtsimKernelCurve *d;
    int compute = c->kind == PTSIM_KERNEL_GEMM || c->kind == PTSIM_KERNEL_ATTENTION;
    int32_t at;
    if (!(kinds & (1 << c->kind)) || kernel_curve_index(dst, c->kind, c->key, c->series) >= 0)
      continue;
    if (dst->curve_count >= PTSIM_KERNEL_CURVES) return PTSIM_KERNEL_ADD_TOO_MANY_CURVES;
    at = dst->curve_count++;
    d = &dst->curves[at];
    *d = *c;
    if (compute)
      for (j = 0; j < d->n; j++) d->y[j] *= compute_scale;
    for (j = 0; j < src->shape_count; j++) {
      PtsimKernelGemmShape *s;
      if (src->shapes[j].curve != i) continue;
      if (dst->shape_count >= PTSIM_KERNEL_SHAPES) return PTSIM_KERNEL_ADD_TOO_MANY_SHAPES;
      s = &dst->shapes[dst->shape_count++];
      *s = src->shapes[j];
      s->curve = at;
      s->tflops *= compute_scale;
    }
  }
  return PTSIM_KERNEL_ADD_OK;
}

/* ---- lookups ---- */

PTSIM_HD const PtsimKernelCurve *ptsim_kernel_table_find(const PtsimKernelTable *t, int32_t kind,
                                                         const int32_t key[PTSIM_KERNEL_KEYS],
                                                         const char *series) {
  int32_t i;
  for (i = 0; i < t->curve_count; i++) {
    const PtsimKernelCurve *c = &t->curves[i];
    if (c->kind != kind || !kernel_key_matches(c->key, key)) continue;
    if (series != 0 && !kernel_name_equal(c->series, series)) continue;
    return c;
  }
  return 0;
}

PTSIM_HD const PtsimKernelGemmShape *ptsim_kernel_table_gemm_shape(
    const PtsimKernelTable *t, const int32_t key[PTSIM_KERNEL_KEYS], int64_t groups, int64_t m,
    int64_t n, int64_t k) {
  int32_t i;
  for (i = 0; i < t->shape_count; i++) {
    const PtsimKernelGemmShape *s = &t->shapes[i];
    if (s->groups == groups && s->m == m && s->n == n && s->k == k &&
        kernel_key_matches(t->curves[s->curve].key, key))
      return s;
  }
  return 0;
}

PTSIM_HD double ptsim_kernel_curve_eval(const PtsimKernelCurve *c, double x) {
  double lx, f;
  int32_t i;
  if (c == 0 || c->n < 1 || !(x > 0.0)) return 0.0;
  lx = log(x);
  if (c->n == 1 || lx <= c->log_x[0]) return c->y[0];
  if (lx >= c->log_x[c->n - 1]) return c->y[c->n - 1];
  i = 1;
  while (i < c->n - 1 && c->log_x[i] < lx) i++;
  /* log_x[i-1] < lx <= log_x[i] */
  f = (lx - c->log_x[i - 1]) / (c->log_x[i] - c->log_x[i - 1]);
  return c->y[i - 1] + f * (c->y[i] - c->y[i - 1]);
}

PTSIM_HD int ptsim_kernel_curve_covers(const PtsimKernelCurve *c, double x) {
  double lx;
  if (c == 0 || c->n < 1 || !(x > 0.0)) return 0;
  lx = log(x);
  /* the end points themselves, up to the rounding of log */
  return lx >= c->log_x[0] - KERNEL_SAME_LOG_X && lx <= c->log_x[c->n - 1] + KERNEL_SAME_LOG_X;
}

PTSIM_HD double ptsim_kernel_curve_x(const PtsimKernelCurve *c, int32_t i) {
  if (c == 0 || i < 0 || i >= c->n) return 0.0;
  return exp(c->log_x[i]);
}
