/* test_embedding_grads.c — the tied word embedding's gradient all-reduce
 * between the first and the last pipeline stage (core/workload.c, Megatron-
 * LM's finalize_model_grads _allreduce_word_embedding_grads) and its place
 * in the step (core/engine.c): after the data-parallel reduction, before
 * the optimizer, exposed, counted as pipeline communication.  The bytes and
 * the group are derived here by hand; the collective's time is the cost
 * model's for that group, bounded here by the NIC's bandwidth. */
#include <glib.h>
#include <math.h>
#include "job_fixture.h"
#include "cost.h"
#include "engine.h"
#include "plan_of.h"

/* gpt3-175b (tied, vocab 51200, h 12288) on h100-80g (8 GPUs a node, one
 * 48 GB/s NIC each), tp 8, dp 1: with pp 2 the first stage is ranks 0-7
 * (node 0), the last ranks 8-15 (node 1). */
static void job_of(PtsimJob *job, gint64 pp) {
  FixtureLayout l = {8 * pp, 8, pp, 1, 1, 8, 2048, PTSIM_RECOMPUTE_FULL};
  fixture_job(job, "gpt3-175b", "h100-80g", l);
}

static void run(const PtsimJob *job, const PtsimWorkload *w, PtsimTimeResult *out) {
  g_autofree PtsimPlan *plan = plan_of(job);
  int64_t bytes = ptsim_engine_scratch_bytes(plan);
  g_autofree void *scratch = g_malloc(bytes);
  g_assert_cmpint(ptsim_engine_run(plan, w, scratch, bytes, NULL, out), ==, 0);
}

/* pp 2 across two nodes.  Each tp rank's slice of the embedding is
 * vocab/tp x h = 51200/8 x 12288 = 78,643,200 parameters, its main
 * gradient fp32 (4 B): 314,572,800 B, all-reduced by ranks r and r + 8,
 * one on each node: a 2-rank group over 2 nodes, 1 member a node, all 8
 * GPUs of a node sending at once (every tp rank has its pair), so each
 * has its own NIC, 48 GB/s.  A 2-rank ring all-reduce moves
 * 2 (n-1)/n = 1 x the buffer over the NIC each way: at least
 * 314,572,800 / 48e9 = 6.554 ms; the cost model's saturation at this size,
 * (x + 16 MiB) / (x + 32 MiB) = 0.952, and two 14 us network hops make the
 * ring 6.88 ms + 28 us + its base latency: under 7.2 ms. */
static void test_two_nodes(void) {
  g_test_summary("pp 2 over two nodes: vocab/tp x h x 4 B all-reduced by 2 ranks over the NIC");
  PtsimJob job;
  job_of(&job, 2);
  g_autofree PtsimPlan *plan = plan_of(&job);
  g_assert_cmpfloat(plan->grad_bytes, ==, 4.0);
  g_autofree PtsimWorkload *w = g_new0(PtsimWorkload, 1);
  workload_of(&job, NULL, w);
  double bytes = 51200.0 / 8.0 * 12288.0 * 4.0;
  g_assert_cmpfloat(bytes, ==, 314572800.0);
  PtsimGroup pair = {PTSIM_GROUP_PP, 2, 0, 8, 2, 1, 1, 1, 8, 8};
  double expected = ptsim_cost_collective_s(&job.hw, NULL, PTSIM_COLL_ALL_REDUCE, bytes, &pair);
  g_assert_cmpfloat(fabs(w->embedding_grad_sync_s - expected), <, 1e-12);
  g_assert_cmpfloat(w->embedding_grad_sync_s, >=, bytes / 48e9);
  g_assert_cmpfloat(w->embedding_grad_sync_s, <, 7.2e-3);

  /* In the step: after the gradient reduction, before the optimizer, on
   * every stage; exposed, as pipeline communication. */
  g_autofree PtsimTimeResult *with = g_new0(PtsimTimeResult, 1);
  g_autofree PtsimTimeResult *without = g_new0(PtsimTimeResult, 1);
  run(&job, w, with);
  double t = w->embedding_grad_sync_s;
  w->embedding_grad_sync_s = 0.0;
  run(&job, w, without);
  g_assert_cmpfloat(fabs(with->step_s - without->step_s - t), <, 2e-9);
  g_assert_cmpfloat(fabs(with->exposed_comm_s[PTSIM_COMM_PP] -
                         without->exposed_comm_s[PTSIM_COMM_PP] - t),
                    <, 2e-9);
  g_assert_cmpfloat(fabs(with->exposed_comm_s[PTSIM_COMM_DP] -
                         without->exposed_comm_s[PTSIM_COMM_DP]),
                    <, 2e-9);
}

/* pp 1 holds the one copy; untied weights have nothing to share; a frozen
 * embedding (LoRA) has no gradient: no all-reduce. */
static void test_none(void) {
  g_test_summary("no all-reduce with pp 1, untied embeddings or a frozen embedding");
  PtsimJob job;
  g_autofree PtsimWorkload *w = g_new0(PtsimWorkload, 1);
  job_of(&job, 1);
  workload_of(&job, NULL, w);
  g_assert_cmpfloat(w->embedding_grad_sync_s, ==, 0.0);
  job_of(&job, 2);
  job.model.tied_embeddings = 0;
  workload_of(&job, NULL, w);
  g_assert_cmpfloat(w->embedding_grad_sync_s, ==, 0.0);
  job_of(&job, 2);
  job.settings.lora_rank = 16;
  workload_of(&job, NULL, w);
  g_assert_cmpfloat(w->embedding_grad_sync_s, ==, 0.0);
}

/* Untied with an MTP layer: the MTP block embeds on the last stage, so
 * the same vocab/tp x h copy is all-reduced as when tied. */
static void test_mtp_untied(void) {
  g_test_summary("untied with MTP: the MTP block's embedding copy is all-reduced as a tied one");
  PtsimJob job;
  g_autofree PtsimWorkload *tied = g_new0(PtsimWorkload, 1);
  g_autofree PtsimWorkload *mtp = g_new0(PtsimWorkload, 1);
  job_of(&job, 2);
  workload_of(&job, NULL, tied);
  job.model.tied_embeddings = 0;
  job.model.mtp_num_layers = 1;
  workload_of(&job, NULL, mtp);
  g_assert_cmpfloat(fabs(mtp->embedding_grad_sync_s - tied->embedding_grad_sync_s), <, 1e-12);
}

/* pp 4, tp 8: the ends are ranks 0-7 and 24-31, nodes 0 and 3: the same
 * pair over the NIC as at pp 2, whatever the middle stages hold. */
static void test_ends_only(void) {
  g_test_summary("pp 4: the first and the last stage alone, the same pair as pp 2");
  PtsimJob job;
  g_autofree PtsimWorkload *w2 = g_new0(PtsimWorkload, 1);
  g_autofree PtsimWorkload *w4 = g_new0(PtsimWorkload, 1);
  job_of(&job, 2);
  workload_of(&job, NULL, w2);
  job_of(&job, 4);
  workload_of(&job, NULL, w4);
  g_assert_cmpfloat(w4->embedding_grad_sync_s, >, 0.0);
  g_assert_cmpfloat(fabs(w4->embedding_grad_sync_s - w2->embedding_grad_sync_s), <, 1e-12);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/embedding_grads/two_nodes", test_two_nodes);
  g_test_add_func("/embedding_grads/none", test_none);
  g_test_add_func("/embedding_grads/mtp_untied", test_mtp_untied);
  g_test_add_func("/embedding_grads/ends_only", test_ends_only);
  return g_test_run();
}
