/* test_cuda_graphs.c — CUDA graphs' memory (memory.c, "CUDA graphs"): the
 * static buffers each implementation keeps, in the estimate and in the
 * allocator replay (captured after step 0), and the native flags against
 * Megatron-LM's (--cuda-graph-impl, --cuda-graph-scope, the older
 * --enable-cuda-graph and --external-cuda-graph).
 *
 * The hand-worked layout: Llama-3-70B (h 8192, 80 layers) on 64 GPUs, tp
 * 8 (SP), pp 4, dp 2, mbs 1, gbs 64, seq 4096: m = 64 / 2 = 32
 * microbatches, 20 layers a stage; one microbatch's hidden states on a TP
 * rank E = 4096 / 8 x 8192 x 2 B = 8 MiB. */
#include <glib.h>
#include <string.h>
#include "job_build.h"
#include "job_fixture.h"
#include "memory.h"
#include "plan_of.h"
#include "simulate.h"

#define MIB (1024.0 * 1024.0)
#define E (8.0 * MIB)

static void graph_job(PtsimJob *job, int64_t pp, PtsimGraphImpl impl, PtsimGraphScope scope) {
  FixtureLayout l = {64, 8, pp, 1, 1, 64, 4096, PTSIM_RECOMPUTE_NONE};
  fixture_job(job, "llama3-70b", "h100-80g", l);
  job->settings.host.graph_impl = impl;
  job->settings.host.graphs = scope;
}

/* local with pp > 1: a runner per layer and microbatch, four buffers each:
 * 20 x 32 x 4 E = 20 GiB on every stage.  transformer_engine: four per
 * layer and in-flight microbatch, 1F1B's pp - s on stage s: stage 0 20 x 4
 * x 4 E = 2.5 GiB, stage 3 20 x 1 x 4 E = 0.625 GiB.  Without pipeline
 * parallelism (pp 1, tp 8, dp 8: 80 layers) one graph per layer for both:
 * 80 x 4 E = 2.5 GiB.  One graph of the whole iteration: nothing. */
static void test_estimate(void) {
  g_test_summary("static buffers: local L m 4E, TE L n 4E, pp 1 L 4E, full_iteration 0");
  PtsimJob job;
  PtsimMemoryEstimate none, est;
  graph_job(&job, 4, PTSIM_GRAPH_IMPL_NONE, PTSIM_GRAPH_NONE);
  estimate_of(&job, PTSIM_CE_LAST_STAGE, &none);
  g_assert_cmpfloat(none.stages[0].graph_bytes, ==, 0.0);
  graph_job(&job, 4, PTSIM_GRAPH_IMPL_LOCAL, PTSIM_GRAPH_LAYER);
  estimate_of(&job, PTSIM_CE_LAST_STAGE, &est);
  for (int s = 0; s < 4; s++) {
    g_assert_cmpfloat(est.stages[s].graph_bytes, ==, 20.0 * 32.0 * 4.0 * E);
    g_assert_cmpfloat(est.stages[s].total_bytes - none.stages[s].total_bytes, ==,
                      20.0 * 32.0 * 4.0 * E);
  }
  graph_job(&job, 4, PTSIM_GRAPH_IMPL_TE, PTSIM_GRAPH_LAYER);
  estimate_of(&job, PTSIM_CE_LAST_STAGE, &est);
  g_assert_cmpfloat(est.stages[0].graph_bytes, ==, 20.0 * 4.0 * 4.0 * E);
  g_assert_cmpfloat(est.stages[3].graph_bytes, ==, 20.0 * 1.0 * 4.0 * E);
  graph_job(&job, 4, PTSIM_GRAPH_IMPL_TE, PTSIM_GRAPH_ATTN); /* the attention's: same shape */
  estimate_of(&job, PTSIM_CE_LAST_STAGE, &est);
  g_assert_cmpfloat(est.stages[0].graph_bytes, ==, 20.0 * 4.0 * 4.0 * E);
  graph_job(&job, 1, PTSIM_GRAPH_IMPL_LOCAL, PTSIM_GRAPH_LAYER);
  estimate_of(&job, PTSIM_CE_LAST_STAGE, &est);
  g_assert_cmpfloat(est.stages[0].graph_bytes, ==, 80.0 * 4.0 * E);
  graph_job(&job, 1, PTSIM_GRAPH_IMPL_TE, PTSIM_GRAPH_LAYER);
  estimate_of(&job, PTSIM_CE_LAST_STAGE, &est);
  g_assert_cmpfloat(est.stages[0].graph_bytes, ==, 80.0 * 4.0 * E);
  graph_job(&job, 4, PTSIM_GRAPH_IMPL_LOCAL, PTSIM_GRAPH_ITERATION);
  estimate_of(&job, PTSIM_CE_LAST_STAGE, &est);
  g_assert_cmpfloat(est.stages[0].graph_bytes, ==, 0.0);
}

/* The replay captures after step 0 (the eager warm-up): step 0 peaks
 * without the buffers, the steady state with them, so the steady state's
 * requested peak over step 0's grows by exactly the transformer_engine
 * buffers of stage 0, 2.5 GiB, against the run without graphs. */
static void test_replay(void) {
  g_test_summary(
      "replay: the buffers arrive after step 0, the steady state holds 20 x 4 x 4E more");
  PtsimJob job;
  g_autoptr(GError) error = NULL;
  g_autofree PtsimAllocResult *a = g_new0(PtsimAllocResult, 1);
  g_autofree PtsimAllocResult *b = g_new0(PtsimAllocResult, 1);
  graph_job(&job, 4, PTSIM_GRAPH_IMPL_NONE, PTSIM_GRAPH_NONE);
  g_assert_true(simulate_allocator_of(&job, 2, NULL, NULL, 0.0, NULL, a, &error));
  graph_job(&job, 4, PTSIM_GRAPH_IMPL_TE, PTSIM_GRAPH_LAYER);
  g_assert_true(simulate_allocator_of(&job, 2, NULL, NULL, 0.0, NULL, b, &error));
  g_assert_no_error(error);
  const PtsimStageAlloc *x = &a->stages[0], *y = &b->stages[0];
  g_assert_cmpfloat(y->first_step.requested_peak_bytes, ==, x->first_step.requested_peak_bytes);
  g_assert_cmpfloat(y->steady_state.requested_peak_bytes - x->steady_state.requested_peak_bytes, ==,
                    20.0 * 4.0 * 4.0 * E);
}

/* The same job from Megatron-LM's flags and from ptsim's own. */
#define BASE                                                                                 \
  "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 8 --hidden-size 1024 "           \
  "--num-attention-heads 16 --seq-length 4096 --max-position-embeddings 4096 "               \
  "--micro-batch-size 1 --global-batch-size 64 --tensor-model-parallel-size 2 "              \
  "--pipeline-model-parallel-size 2 --sequence-parallel --use-distributed-optimizer --bf16 " \
  "--vocab-size 50257 --swiglu --attention-dropout 0 --hidden-dropout 0 "

static void build(const char *megatron, const char *impl, const char *scope, PtsimJob *job) {
  PtsimJobOptions o;
  g_autoptr(GError) error = NULL;
  ptsim_job_options_init(&o);
  o.megatron_args = g_strdup(megatron);
  o.hw = g_strdup("h100-80g");
  o.cuda_graph_impl = g_strdup(impl);
  o.cuda_graph_scope = g_strdup(scope);
  gboolean ok = ptsim_job_build(&o, job, NULL, &error);
  if (!ok) g_error("'%s': %s", megatron, error->message);
  ptsim_job_options_clear(&o);
}

static void test_parity(void) {
  g_test_summary("--cuda-graph-impl/--cuda-graph-scope give Megatron-LM's job; memory moves");
  const struct {
    const char *flags, *impl, *scope;
    PtsimGraphScope graphs;
    PtsimGraphImpl graph_impl;
  } cases[] = {
      {"--cuda-graph-impl transformer_engine", "transformer_engine", NULL, PTSIM_GRAPH_LAYER,
       PTSIM_GRAPH_IMPL_TE},
      {"--cuda-graph-impl local --cuda-graph-scope attn", "local", "attn", PTSIM_GRAPH_ATTN,
       PTSIM_GRAPH_IMPL_LOCAL},
      {"--enable-cuda-graph", "local", NULL, PTSIM_GRAPH_LAYER, PTSIM_GRAPH_IMPL_LOCAL},
      {"--external-cuda-graph --cuda-graph-scope attn mlp", "transformer_engine", "attn,mlp",
       PTSIM_GRAPH_LAYER, PTSIM_GRAPH_IMPL_TE},
      {"--cuda-graph-impl local --cuda-graph-scope full_iteration", "local", "full_iteration",
       PTSIM_GRAPH_ITERATION, PTSIM_GRAPH_IMPL_LOCAL},
  };
  PtsimJob plain;
  PtsimMemoryEstimate m0, m1;
  build(BASE, NULL, NULL, &plain);
  estimate_of(&plain, PTSIM_CE_LAST_STAGE, &m0);
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    PtsimJob a, b;
    g_autofree char *with = g_strconcat(BASE, cases[i].flags, NULL);
    build(with, NULL, NULL, &a);
    build(BASE, cases[i].impl, cases[i].scope, &b);
    if (memcmp(&a, &b, sizeof a) != 0) g_error("%s: the native flags give another job", with);
    g_assert_cmpint(a.settings.host.graphs, ==, cases[i].graphs);
    g_assert_cmpint(a.settings.host.graph_impl, ==, cases[i].graph_impl);
    estimate_of(&a, PTSIM_CE_LAST_STAGE, &m1);
    if (cases[i].graphs == PTSIM_GRAPH_ITERATION)
      g_assert_cmpfloat(m1.total_bytes, ==, m0.total_bytes);
    else
      g_assert_cmpfloat(m1.total_bytes, >, m0.total_bytes);
  }
}

static void test_flag_errors(void) {
  g_test_summary("--cuda-graph-scope without graphs, unknown words: refused by name");
  const char *bad[][5] = {{"--cuda-graph-scope", "attn", NULL},
                          {"--cuda-graph-impl", "cudnn", NULL},
                          {"--cuda-graph-impl", "local", "--cuda-graph-scope", "decoder", NULL}};
  const char *says[] = {"--cuda-graph-scope needs --cuda-graph-impl", "--cuda-graph-impl 'cudnn'",
                        "--cuda-graph-scope 'decoder'"};
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) fixture_assert_refused(bad[i], says[i]);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/cuda-graphs/estimate", test_estimate);
  g_test_add_func("/cuda-graphs/replay", test_replay);
  g_test_add_func("/cuda-graphs/parity", test_parity);
  g_test_add_func("/cuda-graphs/flag-errors", test_flag_errors);
  return g_test_run();
}
