/* test_kernel_table.c — the core kernel table (sim/core/kernel_table.c):
 * building curves (sorted points, duplicates, capacity), finding them by
 * key and series, exact GEMM shapes, and the interpolation rule on
 * hand-derived cases: linear in ln x between the bracketing points,
 * clamped outside the measured range. */
#include <glib.h>
#include <math.h>
#include <string.h>
#include "kernel_table.h"

static PtsimKernelTable *table_new(void) {
  PtsimKernelTable *t = g_new(PtsimKernelTable, 1);
  ptsim_kernel_table_init(t, "test-gpu");
  return t;
}

static void key_of(int32_t key[PTSIM_KERNEL_KEYS], int32_t a, int32_t b, int32_t c, int32_t d) {
  key[0] = a;
  key[1] = b;
  key[2] = c;
  key[3] = d;
  key[4] = 0;
  key[5] = 0;
}

static void test_interpolation(void) {
  g_test_summary(
      "(1e3, 10) and (1e5, 30): 20 at 1e4 (half way in ln x), clamped to 10 and 30 outside");
  g_autofree PtsimKernelTable *t = table_new();
  int32_t key[PTSIM_KERNEL_KEYS];
  key_of(key, 0, 0, 0, 0);
  g_assert_cmpint(ptsim_kernel_table_add(t, PTSIM_KERNEL_MEMORY, key, "s", 1e5, 30.0), ==,
                  PTSIM_KERNEL_ADD_OK);
  g_assert_cmpint(ptsim_kernel_table_add(t, PTSIM_KERNEL_MEMORY, key, "s", 1e3, 10.0), ==,
                  PTSIM_KERNEL_ADD_OK);
  const PtsimKernelCurve *c = ptsim_kernel_table_find(t, PTSIM_KERNEL_MEMORY, key, NULL);
  g_assert_nonnull(c);
  g_assert_cmpint(c->n, ==, 2);
  g_assert_cmpfloat_with_epsilon(ptsim_kernel_curve_x(c, 0), 1e3, 1e-9); /* sorted */
  g_assert_cmpfloat_with_epsilon(ptsim_kernel_curve_eval(c, 1e4), 20.0, 1e-12);
  g_assert_cmpfloat(ptsim_kernel_curve_eval(c, 1e3), ==, 10.0);
  g_assert_cmpfloat(ptsim_kernel_curve_eval(c, 1e5), ==, 30.0);
  g_assert_cmpfloat(ptsim_kernel_curve_eval(c, 10.0), ==, 10.0); /* below: the first point */
  g_assert_cmpfloat(ptsim_kernel_curve_eval(c, 1e9), ==, 30.0);  /* above: the last point */
  g_assert_cmpfloat(ptsim_kernel_curve_eval(c, 0.0), ==, 0.0);   /* no x */
  g_assert_cmpfloat(ptsim_kernel_curve_eval(c, -5.0), ==, 0.0);
  g_assert_true(ptsim_kernel_curve_covers(c, 1e3));
  g_assert_true(ptsim_kernel_curve_covers(c, 3e4));
  g_assert_true(ptsim_kernel_curve_covers(c, 1e5));
  g_assert_false(ptsim_kernel_curve_covers(c, 999.0));
  g_assert_false(ptsim_kernel_curve_covers(c, 1.01e5));
  g_assert_cmpfloat(ptsim_kernel_curve_x(c, 2), ==, 0.0);
}

static void test_three_points(void) {
  g_test_summary(
      "(1, 1), (4, 3), (16, 4): x 2 gives 2 and x 8 gives 3.5 (each segment on its own)");
  g_autofree PtsimKernelTable *t = table_new();
  int32_t key[PTSIM_KERNEL_KEYS];
  key_of(key, 1, 2, 3, 4);
  g_assert_cmpint(ptsim_kernel_table_add(t, PTSIM_KERNEL_GEMM, key, "s", 16.0, 4.0), ==,
                  PTSIM_KERNEL_ADD_OK);
  g_assert_cmpint(ptsim_kernel_table_add(t, PTSIM_KERNEL_GEMM, key, "s", 1.0, 1.0), ==,
                  PTSIM_KERNEL_ADD_OK);
  g_assert_cmpint(ptsim_kernel_table_add(t, PTSIM_KERNEL_GEMM, key, "s", 4.0, 3.0), ==,
                  PTSIM_KERNEL_ADD_OK);
  const PtsimKernelCurve *c = ptsim_kernel_table_find(t, PTSIM_KERNEL_GEMM, key, "s");
  g_assert_nonnull(c);
  g_assert_cmpfloat_with_epsilon(ptsim_kernel_curve_eval(c, 2.0), 2.0, 1e-12);
  g_assert_cmpfloat_with_epsilon(ptsim_kernel_curve_eval(c, 8.0), 3.5, 1e-12);
  g_assert_cmpfloat_with_epsilon(ptsim_kernel_curve_eval(c, 4.0), 3.0, 1e-12);
  for (int i = 1; i < c->n; i++) g_assert_cmpfloat(c->log_x[i], >, c->log_x[i - 1]);
}

static void test_one_point(void) {
  g_test_summary("a one-point curve is that constant at every x and covers only its own x");
  g_autofree PtsimKernelTable *t = table_new();
  int32_t key[PTSIM_KERNEL_KEYS];
  key_of(key, 0, 0, 0, 0);
  g_assert_cmpint(ptsim_kernel_table_add(t, PTSIM_KERNEL_HBM, key, "s", 1.0, 2900.0), ==,
                  PTSIM_KERNEL_ADD_OK);
  const PtsimKernelCurve *c = ptsim_kernel_table_find(t, PTSIM_KERNEL_HBM, key, NULL);
  g_assert_cmpfloat(ptsim_kernel_curve_eval(c, 1e-3), ==, 2900.0);
  g_assert_cmpfloat(ptsim_kernel_curve_eval(c, 1e12), ==, 2900.0);
  g_assert_true(ptsim_kernel_curve_covers(c, 1.0));
  g_assert_false(ptsim_kernel_curve_covers(c, 2.0));
  g_assert_cmpfloat(ptsim_kernel_curve_eval(NULL, 1.0), ==, 0.0);
}

static void test_refusals(void) {
  g_test_summary(
      "bad values, a second value at one x, and full curves / tables leave the table unchanged");
  g_autofree PtsimKernelTable *t = table_new();
  int32_t key[PTSIM_KERNEL_KEYS];
  key_of(key, 0, 0, 0, 0);
  g_assert_cmpint(ptsim_kernel_table_add(t, PTSIM_KERNEL_GEMM, key, "s", 0.0, 1.0), ==,
                  PTSIM_KERNEL_ADD_BAD_VALUE);
  g_assert_cmpint(ptsim_kernel_table_add(t, PTSIM_KERNEL_GEMM, key, "s", 1.0, -1.0), ==,
                  PTSIM_KERNEL_ADD_BAD_VALUE);
  g_assert_cmpint(ptsim_kernel_table_add(t, PTSIM_KERNEL_GEMM, key, "s", NAN, 1.0), ==,
                  PTSIM_KERNEL_ADD_BAD_VALUE);
  g_assert_cmpint(ptsim_kernel_table_add(t, PTSIM_KERNEL_GEMM, key, "s", INFINITY, 1.0), ==,
                  PTSIM_KERNEL_ADD_BAD_VALUE);
  g_assert_cmpint(ptsim_kernel_table_add(t, PTSIM_KERNEL_KIND_COUNT, key, "s", 1.0, 1.0), ==,
                  PTSIM_KERNEL_ADD_BAD_VALUE);
  g_assert_cmpint(ptsim_kernel_table_add(t, PTSIM_KERNEL_GEMM, key, NULL, 1.0, 1.0), ==,
                  PTSIM_KERNEL_ADD_BAD_VALUE);
  g_assert_cmpint(t->curve_count, ==, 0);
  for (int i = 0; i < PTSIM_KERNEL_POINTS; i++)
    g_assert_cmpint(ptsim_kernel_table_add(t, PTSIM_KERNEL_GEMM, key, "s", (double)(i + 1), 1.0),
                    ==, PTSIM_KERNEL_ADD_OK);
  g_assert_cmpint(ptsim_kernel_table_add(t, PTSIM_KERNEL_GEMM, key, "s", 3.0, 2.0), ==,
                  PTSIM_KERNEL_ADD_DUPLICATE);
  g_assert_cmpint(ptsim_kernel_table_add(t, PTSIM_KERNEL_GEMM, key, "s", 1e6, 2.0), ==,
                  PTSIM_KERNEL_ADD_TOO_MANY_POINTS);
  g_assert_cmpint(t->curves[0].n, ==, PTSIM_KERNEL_POINTS);
  /* a different series is another curve; fill the table */
  for (int i = 1; i < PTSIM_KERNEL_CURVES; i++) {
    char series[16];
    g_snprintf(series, sizeof series, "s%d", i);
    g_assert_cmpint(ptsim_kernel_table_add(t, PTSIM_KERNEL_GEMM, key, series, 1.0, 1.0), ==,
                    PTSIM_KERNEL_ADD_OK);
  }
  g_assert_cmpint(ptsim_kernel_table_add(t, PTSIM_KERNEL_GEMM, key, "one-more", 1.0, 1.0), ==,
                  PTSIM_KERNEL_ADD_TOO_MANY_CURVES);
  g_assert_cmpint(t->curve_count, ==, PTSIM_KERNEL_CURVES);
}

static void test_find(void) {
  g_test_summary(
      "find: the first curve in the order added whose key matches, PTSIM_KERNEL_ANY a wildcard");
  g_autofree PtsimKernelTable *t = table_new();
  int32_t a[PTSIM_KERNEL_KEYS], b[PTSIM_KERNEL_KEYS], q[PTSIM_KERNEL_KEYS];
  key_of(a, PTSIM_KERNEL_FP8_ROWWISE, PTSIM_KERNEL_IMPL_FBGEMM, 0, 0);
  key_of(b, PTSIM_KERNEL_FP8_ROWWISE, PTSIM_KERNEL_IMPL_FBGEMM, 1, 0);
  g_assert_cmpint(ptsim_kernel_table_add(t, PTSIM_KERNEL_GEMM, b, "llm", 1e12, 900.0), ==,
                  PTSIM_KERNEL_ADD_OK);
  g_assert_cmpint(ptsim_kernel_table_add(t, PTSIM_KERNEL_GEMM, a, "llm", 1e12, 1100.0), ==,
                  PTSIM_KERNEL_ADD_OK);
  g_assert_cmpint(ptsim_kernel_table_add(t, PTSIM_KERNEL_GEMM, a, "square", 1e12, 1000.0), ==,
                  PTSIM_KERNEL_ADD_OK);
  g_assert_true(ptsim_kernel_table_find(t, PTSIM_KERNEL_GEMM, a, NULL) == &t->curves[1]);
  g_assert_true(ptsim_kernel_table_find(t, PTSIM_KERNEL_GEMM, a, "square") == &t->curves[2]);
  key_of(q, PTSIM_KERNEL_FP8_ROWWISE, PTSIM_KERNEL_ANY, PTSIM_KERNEL_ANY, PTSIM_KERNEL_ANY);
  g_assert_true(ptsim_kernel_table_find(t, PTSIM_KERNEL_GEMM, q, NULL) == &t->curves[0]);
  g_assert_null(ptsim_kernel_table_find(t, PTSIM_KERNEL_ATTENTION, q, NULL));
  g_assert_null(ptsim_kernel_table_find(t, PTSIM_KERNEL_GEMM, a, "nope"));
  key_of(q, PTSIM_KERNEL_BF16, PTSIM_KERNEL_ANY, PTSIM_KERNEL_ANY, PTSIM_KERNEL_ANY);
  g_assert_null(ptsim_kernel_table_find(t, PTSIM_KERNEL_GEMM, q, NULL));
}

static void test_gemm_shapes(void) {
  g_test_summary(
      "exact GEMM shapes: 8192^3 found by its key, 8192x8192x4096 (other FLOPs) and other keys not");
  g_autofree PtsimKernelTable *t = table_new();
  int32_t key[PTSIM_KERNEL_KEYS], other[PTSIM_KERNEL_KEYS];
  key_of(key, PTSIM_KERNEL_BF16, PTSIM_KERNEL_IMPL_TORCH, 0, PTSIM_KERNEL_LAYOUT_DENSE);
  key_of(other, PTSIM_KERNEL_FP8_ROWWISE, PTSIM_KERNEL_IMPL_TORCH, 0, PTSIM_KERNEL_LAYOUT_DENSE);
  double flops = 2.0 * 8192.0 * 8192.0 * 8192.0;
  g_assert_cmpint(ptsim_kernel_table_add_shape(t, key, "square", 1, 8192, 8192, 8192, 585.0), ==,
                  PTSIM_KERNEL_ADD_BAD_VALUE);
  g_assert_cmpint(ptsim_kernel_table_add(t, PTSIM_KERNEL_GEMM, key, "square", flops, 585.0), ==,
                  PTSIM_KERNEL_ADD_OK);
  g_assert_cmpint(ptsim_kernel_table_add_shape(t, key, "square", 1, 8192, 8192, 8192, 585.0), ==,
                  PTSIM_KERNEL_ADD_OK);
  g_assert_cmpint(ptsim_kernel_table_add_shape(t, key, "square", 0, 8192, 8192, 8192, 585.0), ==,
                  PTSIM_KERNEL_ADD_BAD_VALUE);
  const PtsimKernelGemmShape *s = ptsim_kernel_table_gemm_shape(t, key, 1, 8192, 8192, 8192);
  g_assert_nonnull(s);
  g_assert_cmpfloat(s->tflops, ==, 585.0);
  g_assert_cmpint(s->curve, ==, 0);
  g_assert_null(ptsim_kernel_table_gemm_shape(t, key, 1, 8192, 8192, 4096));
  g_assert_null(ptsim_kernel_table_gemm_shape(t, other, 1, 8192, 8192, 8192));
  key_of(other, PTSIM_KERNEL_ANY, PTSIM_KERNEL_ANY, PTSIM_KERNEL_ANY, PTSIM_KERNEL_ANY);
  g_assert_nonnull(ptsim_kernel_table_gemm_shape(t, other, 1, 8192, 8192, 8192));
  g_assert_cmpfloat(ptsim_kernel_curve_eval(&t->curves[0], flops), ==, 585.0);
}

static void test_names(void) {
  g_test_summary("GPU and series names are kept to 31 bytes and compared as kept");
  g_autofree PtsimKernelTable *t = g_new(PtsimKernelTable, 1);
  ptsim_kernel_table_init(t, "a-gpu-name-that-is-much-longer-than-thirty-one-bytes");
  g_assert_cmpuint(strlen(t->gpu), ==, PTSIM_KERNEL_NAME - 1);
  int32_t key[PTSIM_KERNEL_KEYS];
  key_of(key, 0, 0, 0, 0);
  g_assert_cmpint(ptsim_kernel_table_add(t, PTSIM_KERNEL_GEMM, key, "sweep", 1.0, 1.0), ==,
                  PTSIM_KERNEL_ADD_OK);
  g_assert_null(ptsim_kernel_table_find(t, PTSIM_KERNEL_GEMM, key, "swee"));
  g_assert_null(ptsim_kernel_table_find(t, PTSIM_KERNEL_GEMM, key, "sweeps"));
  g_assert_nonnull(ptsim_kernel_table_find(t, PTSIM_KERNEL_GEMM, key, "sweep"));
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/kernel-table/interpolation", test_interpolation);
  g_test_add_func("/kernel-table/three-points", test_three_points);
  g_test_add_func("/kernel-table/one-point", test_one_point);
  g_test_add_func("/kernel-table/refusals", test_refusals);
  g_test_add_func("/kernel-table/find", test_find);
  g_test_add_func("/kernel-table/gemm-shapes", test_gemm_shapes);
  g_test_add_func("/kernel-table/names", test_names);
  return g_test_run();
}
