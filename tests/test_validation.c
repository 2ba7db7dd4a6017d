/* test_validation.c — validate/validation.c on a tiny set computed by hand:
 * MAPE, max |error|, bias, skipped pairs, and the confusion counts of the
 * memory verdict at two thresholds and of a boolean verdict. */
#include <math.h>

#include <glib.h>

#include "validation.h"

/* Pairs (predicted, measured): errors +10%, -20%, +5%, then a pair with
 * measured 0 and one with a NAN prediction, both skipped.
 *   MAPE = (0.10 + 0.20 + 0.05) / 3 = 0.116666...
 *   max  = 0.20 (index 1)
 *   bias = (0.10 - 0.20 + 0.05) / 3 = -0.016666... */
static void test_error_stats(void) {
  const double predicted[] = {1.1, 8.0, 2.1, 3.0, NAN};
  const double measured[] = {1.0, 10.0, 2.0, 0.0, 5.0};
  PtsimErrorStats s;
  ptsim_validation_error_stats(predicted, measured, 5, &s);
  g_assert_cmpuint(s.n, ==, 3);
  g_assert_cmpfloat_with_epsilon(s.mape, 0.35 / 3.0, 1e-12);
  g_assert_cmpfloat_with_epsilon(s.max_abs, 0.20, 1e-12);
  g_assert_cmpuint(s.max_index, ==, 1);
  g_assert_cmpfloat_with_epsilon(s.bias, -0.05 / 3.0, 1e-12);
  g_test_summary("MAPE, max and bias of three pairs; zero and NAN pairs skipped");
}

static void test_error_stats_empty(void) {
  const double p[] = {NAN}, m[] = {1.0};
  PtsimErrorStats s;
  ptsim_validation_error_stats(p, m, 1, &s);
  g_assert_cmpuint(s.n, ==, 0);
  g_assert_true(isnan(s.mape));
  g_assert_true(isnan(s.max_abs));
  g_assert_true(isnan(s.bias));
  g_assert_true(isnan(ptsim_validation_relative_error(1.0, -1.0)));
  g_assert_cmpfloat_with_epsilon(ptsim_validation_relative_error(3.0, 2.0), 0.5, 1e-15);
}

static void test_thresholds(void) {
  g_assert_cmpfloat(ptsim_validation_threshold(0), ==, 0.70);
  g_assert_cmpfloat(ptsim_validation_threshold(2), ==, 0.80);
  g_assert_cmpfloat(ptsim_validation_threshold(PTSIM_VALIDATION_NUM_THRESHOLDS - 1), ==, 1.00);
}

/* usage     0.60  0.78  0.90  1.20  0.85  0.50  NAN
 * real OOM  0     1     1     1     0     -1    1
 * (the last two are skipped: unknown outcome, no usage)
 * threshold 0.75: predicted OOM = 0.78, 0.90, 1.20, 0.85
 *   TP 3 (0.78 0.90 1.20), FP 1 (0.85), TN 1 (0.60), FN 0
 * threshold 0.95: predicted OOM = 1.20
 *   TP 1, FP 0, TN 2 (0.60 0.85), FN 2 (0.78 0.90) */
static void test_confusion(void) {
  const double usage[] = {0.60, 0.78, 0.90, 1.20, 0.85, 0.50, NAN};
  const int oom[] = {0, 1, 1, 1, 0, -1, 1};
  PtsimConfusion c;
  ptsim_validation_confusion_threshold(usage, oom, 7, 0.75, &c);
  g_assert_cmpuint(c.tp, ==, 3);
  g_assert_cmpuint(c.fp, ==, 1);
  g_assert_cmpuint(c.tn, ==, 1);
  g_assert_cmpuint(c.fn, ==, 0);
  g_assert_cmpuint(ptsim_validation_confusion_total(&c), ==, 5);
  ptsim_validation_confusion_threshold(usage, oom, 7, 0.95, &c);
  g_assert_cmpuint(c.tp, ==, 1);
  g_assert_cmpuint(c.fp, ==, 0);
  g_assert_cmpuint(c.tn, ==, 2);
  g_assert_cmpuint(c.fn, ==, 2);
  /* "> threshold", not ">=": usage exactly at the threshold fits. */
  const double at[] = {0.80};
  const int ran[] = {0};
  ptsim_validation_confusion_threshold(at, ran, 1, 0.80, &c);
  g_assert_cmpuint(c.tn, ==, 1);
  g_test_summary("confusion counts at 0.75 and 0.95 on five known outcomes");
}

static void test_confusion_verdict(void) {
  const int predicted[] = {1, 0, 1, 0, -1, 1};
  const int oom[] = {1, 1, 0, 0, 1, -1};
  PtsimConfusion c;
  ptsim_validation_confusion_verdict(predicted, oom, 6, &c);
  g_assert_cmpuint(c.tp, ==, 1);
  g_assert_cmpuint(c.fn, ==, 1);
  g_assert_cmpuint(c.fp, ==, 1);
  g_assert_cmpuint(c.tn, ==, 1);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/validation/error-stats", test_error_stats);
  g_test_add_func("/validation/error-stats-empty", test_error_stats_empty);
  g_test_add_func("/validation/thresholds", test_thresholds);
  g_test_add_func("/validation/confusion-thresholds", test_confusion);
  g_test_add_func("/validation/confusion-verdict", test_confusion_verdict);
  return g_test_run();
}
