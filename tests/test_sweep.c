/* test_sweep.c — enumeration counts against hand counts, rejected
 * combinations counted by reason, and the thread pool agreeing with one
 * thread bit for bit. */
#include <glib.h>
#include <string.h>
#include "sweep.h"

static PtsimSweepSpec *small_spec(const char *model) {
  PtsimSweepSpec *spec = ptsim_sweep_spec_new();
  const gint64 gpus = 8, seq = 4096, gbs = 64, one = 1;
  const int none = PTSIM_RECOMPUTE_NONE, f1b = PTSIM_SCHEDULE_1F1B;
  g_ptr_array_add(spec->models, g_strdup(model));
  g_ptr_array_add(spec->hws, g_strdup("h100-80g"));
  g_array_append_val(spec->gpus, gpus);
  g_array_append_val(spec->seqs, seq);
  g_array_append_val(spec->gbs, gbs);
  g_array_set_size(spec->mbs, 0);
  g_array_append_val(spec->mbs, one);
  g_array_set_size(spec->cps, 0);
  g_array_append_val(spec->cps, one);
  g_array_set_size(spec->recomputes, 0);
  g_array_append_val(spec->recomputes, none);
  g_array_set_size(spec->schedules, 0);
  g_array_append_val(spec->schedules, f1b);
  return spec;
}

static PtsimSweep *enumerate(const PtsimSweepSpec *spec) {
  g_autoptr(GError) error = NULL;
  PtsimSweep *sweep = ptsim_sweep_enumerate(spec, &error);
  g_assert_no_error(error);
  g_assert_nonnull(sweep);
  return sweep;
}

static void test_hand_count(void) {
  g_test_summary("8 GPUs, tp <= 8: (tp, pp) = 4 + 3 + 2 + 1 = 10 layouts, all valid for Llama-3-8B");
  g_autoptr(PtsimSweepSpec) spec = small_spec("llama3-8b");
  g_autoptr(PtsimSweep) sweep = enumerate(spec);
  g_assert_cmpuint(sweep->candidates, ==, 10);
  g_assert_cmpuint(sweep->jobs->len, ==, 10);
  g_assert_cmpuint(g_hash_table_size(sweep->rejected), ==, 0);
}

static void test_rejections_counted_by_reason(void) {
  g_test_summary("30 layers: pp 4 (tp 1, 2) and pp 8 (tp 1) are rejected, one reason, count 3");
  g_autoptr(PtsimSweepSpec) spec = small_spec("sc21-gpt-3.6b");
  g_autoptr(PtsimSweep) sweep = enumerate(spec);
  g_assert_cmpuint(sweep->candidates, ==, 10);
  g_assert_cmpuint(sweep->jobs->len, ==, 7);
  g_assert_cmpuint(g_hash_table_size(sweep->rejected), ==, 1);
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init(&it, sweep->rejected);
  g_assert_true(g_hash_table_iter_next(&it, &key, &value));
  g_assert_nonnull(strstr(key, "does not divide num_layers"));
  g_assert_cmpuint(GPOINTER_TO_UINT(value), ==, 3);
}

static void test_expert_parallel_count(void) {
  g_test_summary("Mixtral 8x7B on 8 GPUs: every ep dividing the 8 experts and the GPUs a stage "
                 "folds as etp x ep x edp (etp = tp): 10 + 6 + 3 + 1 = 20 layouts; etp 1: 30; "
                 "--ep 16 is rejected for each (tp, pp), one reason");
  g_autoptr(PtsimSweepSpec) spec = small_spec("mixtral-8x7b");
  g_autoptr(PtsimSweep) sweep = enumerate(spec);
  /* tp 1: pp 1, 2, 4, 8 with ep 1-8, 1-4, 1-2, 1: 4 + 3 + 2 + 1; tp 2:
   * (8/pp) % (2 ep): 3 + 2 + 1; tp 4: 2 + 1; tp 8: 1 */
  g_assert_cmpuint(sweep->candidates, ==, 20);
  g_assert_cmpuint(sweep->jobs->len, ==, 20);
  const gint64 one = 1, sixteen = 16;
  g_array_append_val(spec->etps, one);
  g_autoptr(PtsimSweep) etp1 = enumerate(spec);
  /* tp 1: 10; tp 2: 4 + 3 + 2; tp 4: 4 + 3; tp 8: 4 */
  g_assert_cmpuint(etp1->jobs->len, ==, 30);
  g_array_set_size(spec->etps, 0);
  g_array_append_val(spec->eps, sixteen);
  g_autoptr(PtsimSweep) bad = enumerate(spec);
  g_assert_cmpuint(bad->candidates, ==, 10);
  g_assert_cmpuint(bad->jobs->len, ==, 0);
  g_assert_cmpuint(g_hash_table_size(bad->rejected), ==, 1);
  /* a dense model ignores the lists: ep 1 */
  g_autoptr(PtsimSweepSpec) dense = small_spec("llama3-8b");
  g_array_append_val(dense->eps, sixteen);
  g_autoptr(PtsimSweep) d = enumerate(dense);
  g_assert_cmpuint(d->jobs->len, ==, 10);
}

static void test_interleaved_adds_vp(void) {
  g_test_summary("adding interleaved with vp 2: every pp > 1 layout gains one more (10 + 6)");
  g_autoptr(PtsimSweepSpec) spec = small_spec("llama3-8b");
  const int interleaved = PTSIM_SCHEDULE_INTERLEAVED;
  const gint64 two = 2;
  g_array_append_val(spec->schedules, interleaved);
  g_array_set_size(spec->vps, 0);
  g_array_append_val(spec->vps, two);
  g_autoptr(PtsimSweep) sweep = enumerate(spec);
  g_assert_cmpuint(sweep->jobs->len, ==, 16);
}

static void test_pool_equals_single_thread(void) {
  g_test_summary("the thread pool's results equal one thread's, bit for bit");
  g_autoptr(PtsimSweepSpec) spec = small_spec("llama3-8b");
  const gint64 two = 2, cp2 = 2;
  const int full = PTSIM_RECOMPUTE_FULL;
  g_array_append_val(spec->mbs, two);
  g_array_append_val(spec->cps, cp2);
  g_array_append_val(spec->recomputes, full);
  g_autoptr(PtsimSweep) one = enumerate(spec);
  g_autoptr(PtsimSweep) many = enumerate(spec);
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_sweep_evaluate(one, PTSIM_DEVICE_CPU, 1, NULL, NULL, &error));
  g_assert_true(ptsim_sweep_evaluate(many, PTSIM_DEVICE_CPU, 4, NULL, NULL, &error));
  g_assert_no_error(error);
  g_assert_cmpuint(one->results->len, ==, many->results->len);
  g_assert_cmpuint(one->results->len, >, 20);
  g_assert_cmpint(memcmp(one->results->data, many->results->data,
                         sizeof(PtsimBatchResult) * one->results->len),
                  ==, 0);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/sweep/hand-count", test_hand_count);
  g_test_add_func("/sweep/rejections-counted-by-reason", test_rejections_counted_by_reason);
  g_test_add_func("/sweep/interleaved-adds-vp", test_interleaved_adds_vp);
  g_test_add_func("/sweep/expert-parallel-count", test_expert_parallel_count);
  g_test_add_func("/sweep/pool-equals-single-thread", test_pool_equals_single_thread);
  return g_test_run();
}
