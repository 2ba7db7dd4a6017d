/* test_offload.c — activation offloading (Megatron-LM's --fine-grained-
 * activation-offloading with --offload-modules; memory.c, "Activation
 * offloading"; workload_offload.c): the bytes that leave the GPU, the
 * host memory that holds them, the copies' time over the host link, the
 * replay, and the native flags against Megatron-LM's.
 *
 * The hand-worked job: Llama-3-8B (h 4096, q 4096, kv 1024) on 8 x H100,
 * tp 2 (SP), pp 2, dp 2, mbs 1, gbs 64, seq 4096: T = 4096 tokens, T_sp =
 * 2048; 16 layers a stage; 1F1B holds pp - s microbatches on stage s.
 * attn_norm offloads the layer input 2 T_sp h = 16 MiB, core_attn q, k, v
 * 2 T (q + 2 kv) / t = 24 MiB: O = 40 MiB a layer and microbatch. */
#include <glib.h>
#include <string.h>
#include "job_build.h"
#include "job_fixture.h"
#include "memory.h"
#include "plan_of.h"
#include "simulate.h"

#define MIB (1024.0 * 1024.0)
#define O (40.0 * MIB)

static void offload_job(PtsimJob *job, int modules) {
  FixtureLayout l = {8, 2, 2, 1, 1, 64, 4096, PTSIM_RECOMPUTE_NONE};
  fixture_job(job, "llama3-8b", "h100-80g", l);
  job->settings.offload_modules = modules;
}

/* Stage 0 keeps 2 x 16 layer-microbatches' offloaded inputs on the host,
 * 2 x 16 x O = 1280 MiB, and on the GPU the one layer's being copied: its
 * activations shrink by 1280 - 40 = 1240 MiB; stage 1 by 16 x O - O =
 * 600 MiB, with 640 MiB on the host. */
static void test_estimate(void) {
  g_test_summary("host 2 x 16 x O on stage 0, 16 x O on stage 1; GPU less that but one layer's");
  PtsimJob job;
  PtsimMemoryEstimate a, b;
  offload_job(&job, 0);
  estimate_of(&job, PTSIM_CE_LAST_STAGE, &a);
  offload_job(&job, PTSIM_OFFLOAD_ATTN_NORM | PTSIM_OFFLOAD_CORE_ATTN);
  g_autofree PtsimPlan *plan = plan_of(&job);
  g_assert_cmpfloat(ptsim_memory_offload_layer_bytes(plan, 0), ==, O);
  estimate_of(&job, PTSIM_CE_LAST_STAGE, &b);
  g_assert_cmpfloat(b.stages[0].host_bytes, ==, 32.0 * O);
  g_assert_cmpfloat(b.stages[1].host_bytes, ==, 16.0 * O);
  g_assert_cmpfloat(a.stages[0].activations_bytes - b.stages[0].activations_bytes, ==, 31.0 * O);
  g_assert_cmpfloat(a.stages[1].activations_bytes - b.stages[1].activations_bytes, ==, 15.0 * O);
  /* full recompute keeps a layer's input alone: nothing to offload */
  job.settings.recompute = PTSIM_RECOMPUTE_FULL;
  estimate_of(&job, PTSIM_CE_LAST_STAGE, &b);
  g_assert_cmpfloat(b.stages[0].host_bytes, ==, 0.0);
}

/* The copies: O = 41943040 B at the 51 GB/s pinned copies achieve (h100-80g.ini) is 0.822 ms a
 * layer pass.  The offload is hidden behind a layer's forward on H100; the reload is not (a group's
 * reload starts once the backward after it is done and its own backward waits for it): the backward
 * grows by exactly O / link.  Over a 1 GB/s link the offload takes 41.9 ms, longer than the
 * forward, which then lasts exactly that long. */
static void test_copy_time(void) {
  g_test_summary("a forward waits for its offload beyond its compute; a backward for its reload");
  PtsimJob job;
  g_autofree PtsimWorkload *a = g_new0(PtsimWorkload, 1);
  g_autofree PtsimWorkload *b = g_new0(PtsimWorkload, 1);
  offload_job(&job, 0);
  workload_of(&job, NULL, a);
  offload_job(&job, PTSIM_OFFLOAD_ATTN_NORM | PTSIM_OFFLOAD_CORE_ATTN);
  workload_of(&job, NULL, b);
  g_assert_cmpfloat(O / 51e9, <, a->layer.forward_s);
  g_assert_cmpfloat(b->layer.forward_s, ==, a->layer.forward_s);
  g_assert_cmpfloat_with_epsilon(b->layer.backward_input_s - a->layer.backward_input_s, O / 51e9,
                                 1e-12);
  g_assert_cmpfloat(b->layer.backward_weight_s, ==, a->layer.backward_weight_s);
  job.hw.host_link_bytes_per_s = 1e9;
  workload_of(&job, NULL, b);
  g_assert_cmpfloat(b->layer.forward_s, ==, O / 1e9);
  g_assert_cmpfloat_with_epsilon(b->layer.backward_input_s - a->layer.backward_input_s, O / 1e9,
                                 1e-12);
}

/* The replay frees each layer's offloaded inputs after its forward and
 * takes them back for its backward: stage 0's steady-state peak holds
 * at most the 32 layer-microbatches' O fewer, and at least 30 (the layer
 * being computed and the one copied back may hold theirs). */
static void test_replay(void) {
  g_test_summary("replay: the peak drops by 30 to 32 x O on stage 0");
  PtsimJob job;
  g_autoptr(GError) error = NULL;
  g_autofree PtsimAllocResult *a = g_new0(PtsimAllocResult, 1);
  g_autofree PtsimAllocResult *b = g_new0(PtsimAllocResult, 1);
  offload_job(&job, 0);
  g_assert_true(simulate_allocator_of(&job, 2, NULL, NULL, 0.0, NULL, a, &error));
  offload_job(&job, PTSIM_OFFLOAD_ATTN_NORM | PTSIM_OFFLOAD_CORE_ATTN);
  g_assert_true(simulate_allocator_of(&job, 2, NULL, NULL, 0.0, NULL, b, &error));
  g_assert_no_error(error);
  double drop = a->stages[0].steady_state.requested_peak_bytes -
                b->stages[0].steady_state.requested_peak_bytes;
  g_assert_cmpfloat(drop, >=, 30.0 * O);
  g_assert_cmpfloat(drop, <=, 32.0 * O);
}

#define BASE                                                                                 \
  "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 8 --hidden-size 1024 "           \
  "--num-attention-heads 16 --seq-length 4096 --max-position-embeddings 4096 "               \
  "--micro-batch-size 1 --global-batch-size 64 --tensor-model-parallel-size 2 "              \
  "--pipeline-model-parallel-size 2 --sequence-parallel --use-distributed-optimizer --bf16 " \
  "--vocab-size 50257 --swiglu --attention-dropout 0 --hidden-dropout 0 "

static void build(const char *megatron, gboolean on, const char *modules, PtsimJob *job) {
  PtsimJobOptions o;
  g_autoptr(GError) error = NULL;
  ptsim_job_options_init(&o);
  o.megatron_args = g_strdup(megatron);
  o.hw = g_strdup("h100-80g");
  o.fine_grained_offloading = on;
  o.offload_modules = g_strdup(modules);
  gboolean ok = ptsim_job_build(&o, job, NULL, &error);
  if (!ok) g_error("'%s': %s", megatron, error->message);
  ptsim_job_options_clear(&o);
}

static void test_parity(void) {
  g_test_summary("--fine-grained-activation-offloading --offload-modules: Megatron-LM's job");
  PtsimJob a, b, c;
  PtsimMemoryEstimate ma, mc;
  build(BASE "--fine-grained-activation-offloading --offload-modules attn_norm core_attn "
             "mlp_norm",
        FALSE, NULL, &a);
  build(BASE, TRUE, "attn_norm,core_attn,mlp_norm", &b);
  build(BASE, FALSE, NULL, &c);
  if (memcmp(&a, &b, sizeof a) != 0) g_error("the native flags give another job");
  g_assert_cmpint(a.settings.offload_modules, ==,
                  PTSIM_OFFLOAD_ATTN_NORM | PTSIM_OFFLOAD_CORE_ATTN | PTSIM_OFFLOAD_MLP_NORM);
  estimate_of(&a, PTSIM_CE_LAST_STAGE, &ma);
  estimate_of(&c, PTSIM_CE_LAST_STAGE, &mc);
  g_assert_cmpfloat(ma.total_bytes, <, mc.total_bytes);
}

/* Unfused attention under core_attn (BASE: T = 4096, h = q = kv = 1024, 16
 * heads, t = 2; Transformer Engine's unfused core with its fused causal
 * softmax, bf16, no dropout): q, k, v 2 T (q + 2 kv) / t = 12 MiB, and the
 * softmax output 2 B x 16/2 heads x 4096^2 = 256 MiB leave the GPU: 268 MiB
 * freed.  The softmax saves that output and the probs x v bmm saves it
 * again; each saved tensor is copied: 12 + 2 x 256 = 524 MiB cross the
 * link each way. */
static void test_unfused_scores(void) {
  g_test_summary("unfused attention: the s x s softmax output offloaded, copied twice");
  PtsimJob job;
  build(BASE "--attention-backend unfused", TRUE, "core_attn", &job);
  g_autofree PtsimPlan *plan = plan_of(&job);
  g_assert_cmpfloat(ptsim_memory_offload_layer_bytes(plan, 0), ==, 268.0 * MIB);
  g_assert_cmpfloat(ptsim_memory_offload_copy_bytes(plan, 0), ==, 524.0 * MIB);
  /* the replay: stage 0 holds 4 layers x 2 microbatches of them; its
   * steady-state peak drops by 8 x 268 MiB at most, at least 6 (the layer
   * being computed and the one copied back may hold theirs) */
  PtsimJob none;
  g_autoptr(GError) error = NULL;
  g_autofree PtsimAllocResult *a = g_new0(PtsimAllocResult, 1);
  g_autofree PtsimAllocResult *b = g_new0(PtsimAllocResult, 1);
  build(BASE "--attention-backend unfused", FALSE, NULL, &none);
  g_assert_true(simulate_allocator_of(&none, 2, NULL, NULL, 0.0, NULL, a, &error));
  g_assert_true(simulate_allocator_of(&job, 2, NULL, NULL, 0.0, NULL, b, &error));
  double drop = a->stages[0].steady_state.requested_peak_bytes -
                b->stages[0].steady_state.requested_peak_bytes;
  g_assert_cmpfloat(drop, >=, 6.0 * 268.0 * MIB);
  g_assert_cmpfloat(drop, <=, 8.0 * 268.0 * MIB);
}

static void test_refusals(void) {
  g_test_summary("no modules, an unknown one, a profile without a host link: refused by name");
  const char *bad[][6] = {{"--fine-grained-activation-offloading", NULL},
                          {"--offload-modules", "core_attn", NULL},
                          {"--fine-grained-activation-offloading", "--offload-modules", "lm_head",
                           NULL},
                          {"--fine-grained-activation-offloading", "--offload-modules", "core_attn",
                           "--hw", "b200-180g", NULL}};
  const char *says[] = {"needs --offload-modules", "needs --fine-grained-activation-offloading",
                        "--offload-modules 'lm_head'", "host_link_gbps"};
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) fixture_assert_refused(bad[i], says[i]);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/offload/estimate", test_estimate);
  g_test_add_func("/offload/copy-time", test_copy_time);
  g_test_add_func("/offload/replay", test_replay);
  g_test_add_func("/offload/parity", test_parity);
  g_test_add_func("/offload/unfused-scores", test_unfused_scores);
  g_test_add_func("/offload/refusals", test_refusals);
  return g_test_run();
}
