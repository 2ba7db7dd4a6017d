/* test_montecarlo.c — the Monte-Carlo path: the CPU generator against the
 * published Philox4x32-10 known-answer vectors (Random123's kat_vectors),
 * and the sampled step times behaving as sampling must. */
#include <glib.h>
#include <math.h>
#include <string.h>
#include "batch.h"
#include "config.h"
#include "job_fixture.h"
#include "rng.h"
#include "kernel_registry.h"

/* How many kernel tables the profiles loaded so far registered: the CPU
 * batch and ptsim_simulate price with them (kernel_registry.h). */
static int32_t kernel_table_count(void) {
  int32_t n = 0;
  ptsim_kernel_registry_tables(&n);
  return n;
}

static void check_block(const uint32_t c[4], const uint32_t k[2], const uint32_t want[4]) {
  uint32_t out[4];
  ptsim_rng_block(c, k, out);
  for (int i = 0; i < 4; i++) g_assert_cmphex(out[i], ==, want[i]);
}

static void test_philox_known_answers(void) {
  g_test_summary("Philox4x32-10 matches the Random123 known-answer vectors");
  const uint32_t zero_c[4] = {0, 0, 0, 0}, zero_k[2] = {0, 0};
  const uint32_t zero_want[4] = {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8};
  const uint32_t ones_c[4] = {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff};
  const uint32_t ones_k[2] = {0xffffffff, 0xffffffff};
  const uint32_t ones_want[4] = {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd};
  const uint32_t pi_c[4] = {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344};
  const uint32_t pi_k[2] = {0xa4093822, 0x299f31d0};
  const uint32_t pi_want[4] = {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1};
  check_block(zero_c, zero_k, zero_want);
  check_block(ones_c, ones_k, ones_want);
  check_block(pi_c, pi_k, pi_want);
}

static void test_normal_moments(void) {
  g_test_summary("normals from one stream have mean ~0 and variance ~1");
  PtsimRng r;
  ptsim_rng_init(&r, 42, 7);
  double sum = 0.0, sq = 0.0;
  const int n = 200000;
  for (int i = 0; i < n; i++) {
    double z = ptsim_rng_normal(&r);
    sum += z;
    sq += z * z;
  }
  g_assert_cmpfloat(fabs(sum / n), <, 0.01);
  g_assert_cmpfloat(fabs(sq / n - 1.0), <, 0.02);
}

static void load_job(PtsimJob *job) {
  FixtureLayout l = {8, 2, 2, 1, 1, 32, 4096, PTSIM_RECOMPUTE_NONE};
  fixture_job(job, "llama3-8b", "h100-80g", l);
}

static void evaluate(const PtsimJob *job, const PtsimMonteCarlo *mc, uint64_t index,
                     PtsimBatchResult *out) {
  int64_t bytes = ptsim_batch_scratch_bytes_mc(job, mc);
  g_autofree void *scratch = g_malloc(bytes);
  ptsim_batch_evaluate_mc(job, mc, ptsim_kernel_registry_tables(NULL), kernel_table_count(), index,
                          scratch, bytes, out);
  g_assert_cmpint(out->status, ==, 0);
}

static void test_zero_jitter_is_deterministic(void) {
  g_test_summary("sigma 0 and no stragglers: every sample equals the deterministic step");
  PtsimJob job;
  load_job(&job);
  PtsimMonteCarlo mc = {16, 0.0, 0.0, 2.0, 1, 0};
  PtsimBatchResult r;
  evaluate(&job, &mc, 0, &r);
  g_assert_cmpfloat(r.step_p50_s, ==, r.step_s);
  g_assert_cmpfloat(r.step_p99_s, ==, r.step_s);
}

static void test_sampling_behaves(void) {
  g_test_summary("ordered percentiles near the mean-one jitter's step; seeds reproduce");
  PtsimJob job;
  load_job(&job);
  PtsimMonteCarlo mc = {64, 0.05, 0.0, 2.0, 7, 0};
  PtsimBatchResult a, b, c;
  evaluate(&job, &mc, 3, &a);
  evaluate(&job, &mc, 3, &b);
  g_assert_cmpint(memcmp(&a, &b, sizeof a), ==, 0);
  g_assert_cmpfloat(a.step_p50_s, <=, a.step_p90_s);
  g_assert_cmpfloat(a.step_p90_s, <=, a.step_p99_s);
  g_assert_cmpfloat(a.step_p99_s, >, a.step_p50_s);
  /* Mean-one factors: the median stays within a few percent; the max of
   * parallel stages only pushes it up a little. */
  g_assert_cmpfloat(fabs(a.step_p50_s / a.step_s - 1.0), <, 0.03);
  evaluate(&job, &mc, 4, &c); /* another layout index: other streams */
  g_assert_cmpfloat(c.step_p50_s, !=, a.step_p50_s);
}

static void test_stragglers_slow_the_tail(void) {
  g_test_summary("stragglers move p99 up");
  PtsimJob job;
  load_job(&job);
  PtsimMonteCarlo calm = {64, 0.02, 0.0, 2.0, 1, 0}, stormy = {64, 0.02, 0.01, 3.0, 1, 0};
  PtsimBatchResult a, b;
  evaluate(&job, &calm, 0, &a);
  evaluate(&job, &stormy, 0, &b);
  g_assert_cmpfloat(b.step_p99_s, >, a.step_p99_s);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/montecarlo/philox-known-answers", test_philox_known_answers);
  g_test_add_func("/montecarlo/normal-moments", test_normal_moments);
  g_test_add_func("/montecarlo/zero-jitter-is-deterministic", test_zero_jitter_is_deterministic);
  g_test_add_func("/montecarlo/sampling-behaves", test_sampling_behaves);
  g_test_add_func("/montecarlo/stragglers-slow-the-tail", test_stragglers_slow_the_tail);
  return g_test_run();
}
