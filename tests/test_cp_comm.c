/* test_cp_comm.c — context parallelism as each framework runs it
 * (workload_cp.c, issue 22 item 3): the p2p ring exposes what a K/V send
 * outlasts its block's attention, which short attention cannot hide; the
 * all-gather exposes the gather (and, backward, the gather and the
 * reduce-scatter); Ulysses' all-to-all exposes its four exchanges and runs
 * the attention on heads / cp heads over the whole sequence.  Megatron-LM's
 * --cp-comm-type means what the native flag means.  The expected values
 * are the formulas of workload_cp.c on byte counts derived by hand, with
 * the collective and attention prices of cost.h (tested in test_cost).
 *
 * Fixtures: the shipped llama3-8b model and h100-80g profile. */
#include <math.h>
#include <string.h>

#include <glib.h>

#include "config.h"
#include "cost.h"
#include "job_build.h"
#include "plan_of.h"

static void assert_rel(double got, double want, double tol) {
  if (fabs(got - want) > tol * fabs(want))
    g_error("got %.9g, want %.9g (relative tolerance %g)", got, want, tol);
}

/* llama3-8b on GPUS H100s at cp CP, seq SEQ, mbs 1, one microbatch per
 * DP rank, with --cp-comm-type TYPE (NULL: the default). */
static gboolean build(gint64 gpus, gint64 cp, gint64 seq, const char *type, PtsimJob *job,
                      GError **error) {
  PtsimJobOptions o;
  ptsim_job_options_init(&o);
  o.model = g_strdup("llama3-8b");
  o.hw = g_strdup("h100-80g");
  o.gpus = (PtsimOptionInt){TRUE, gpus};
  o.cp = (PtsimOptionInt){TRUE, cp};
  o.seq = (PtsimOptionInt){TRUE, seq};
  o.gbs = (PtsimOptionInt){TRUE, gpus / cp};
  o.cp_comm_type = g_strdup(type);
  gboolean ok = ptsim_job_build(&o, job, NULL, error);
  ptsim_job_options_clear(&o);
  return ok;
}

typedef struct {
  PtsimPlan *plan;
  PtsimWorkload w;
} Built;

static void built_of(gint64 gpus, gint64 cp, gint64 seq, const char *type, Built *b) {
  PtsimJob job;
  g_autoptr(GError) error = NULL;
  if (!build(gpus, cp, seq, type, &job, &error)) g_error("%s", error->message);
  b->plan = plan_of(&job);
  ptsim_workload_build(b->plan, NULL, &b->w);
}

/* llama3-8b: 32 heads of 128, 8 KV groups: q width 4096, K or V 1024. */
#define Q_WIDTH 4096.0
#define KV_WIDTH 1024.0

static void test_ring_cannot_hide(void) {
  g_test_summary("a CP ring over 16 H100s on two nodes at seq 4096: each K/V send outlasts its "
                 "block's attention, and the difference is exposed");
  Built b;
  built_of(16, 16, 4096, "p2p", &b);
  const PtsimHardware *hw = &b.plan->job.hw;
  const PtsimGroup *g = &b.plan->groups[PTSIM_GROUP_CP];
  /* 4096 / 16 = 256 tokens a block; cp / 2 = 8 unmasked 256 x 256 blocks of
   * 32 heads a rank (the causal load balance); a send carries K and V of a
   * block, 2 x 256 x 1024 x 2 B = 1 MiB, the backward's twice that.  15
   * steps, each exposed by what its send outlasts 1/15 of the attention. */
  double kv = 2.0 * 256 * KV_WIDTH * 2.0;
  double fwd = 8.0 *
               ptsim_cost_attention_s(hw, NULL, PTSIM_PRECISION_BF16, 1, 32, 256, 256, 128, 0, 0);
  double bwd = 8.0 *
               ptsim_cost_attention_s(hw, NULL, PTSIM_PRECISION_BF16, 1, 32, 256, 256, 128, 0, 1);
  double send_f = ptsim_cost_collective_s(hw, NULL, PTSIM_COLL_SEND_RECV, kv, g);
  double send_b = ptsim_cost_collective_s(hw, NULL, PTSIM_COLL_SEND_RECV, 2.0 * kv, g);
  g_assert_cmpfloat(send_f, >, fwd / 15.0); /* the case this test is about */
  assert_rel(b.w.layer.forward_comm_s[PTSIM_COMM_CP], 15.0 * (send_f - fwd / 15.0), 1e-12);
  assert_rel(b.w.layer.backward_comm_s[PTSIM_COMM_CP],
             send_b > bwd / 15.0 ? 15.0 * (send_b - bwd / 15.0) : 0.0, 1e-12);
  g_free(b.plan);
  /* at 128K tokens the same ring hides: 8K-token blocks take far longer
   * than their 32 MiB sends */
  built_of(16, 16, 131072, "p2p", &b);
  g_assert_cmpfloat(b.w.layer.forward_comm_s[PTSIM_COMM_CP], ==, 0.0);
  g_free(b.plan);
}

static void test_allgather_and_a2a(void) {
  g_test_summary("the all-gather exposes the K/V gather (backward: gather and reduce-scatter); "
                 "Ulysses exposes an all-to-all of Q, K, V and one of O each way and runs "
                 "heads / cp heads over the whole sequence");
  Built b;
  built_of(8, 8, 32768, "allgather", &b);
  const PtsimHardware *hw = &b.plan->job.hw;
  const PtsimGroup *g = &b.plan->groups[PTSIM_GROUP_CP];
  /* K and V of all 32768 tokens: 2 x 32768 x 1024 x 2 B = 128 MiB */
  double gathered = 2.0 * 32768 * KV_WIDTH * 2.0;
  double ag = ptsim_cost_collective_s(hw, NULL, PTSIM_COLL_ALL_GATHER, gathered, g);
  double rs = ptsim_cost_collective_s(hw, NULL, PTSIM_COLL_REDUCE_SCATTER, gathered, g);
  assert_rel(b.w.layer.forward_comm_s[PTSIM_COMM_CP], ag, 1e-12);
  assert_rel(b.w.layer.backward_comm_s[PTSIM_COMM_CP], ag + rs, 1e-12);
  g_free(b.plan);

  built_of(8, 8, 32768, "a2a", &b);
  hw = &b.plan->job.hw; /* the new plan's: the first one is freed */
  g = &b.plan->groups[PTSIM_GROUP_CP];
  /* each rank sends its 4096 tokens of Q, K, V: 4096 x (4096 + 2 x 1024) x
   * 2 B = 48 MiB, and of O: 4096 x 4096 x 2 B = 32 MiB */
  double qkv = ptsim_cost_collective_s(hw, NULL, PTSIM_COLL_ALL_TO_ALL,
                                       4096.0 * (Q_WIDTH + 2.0 * KV_WIDTH) * 2.0, g);
  double o = ptsim_cost_collective_s(hw, NULL, PTSIM_COLL_ALL_TO_ALL, 4096.0 * Q_WIDTH * 2.0, g);
  assert_rel(b.w.layer.forward_comm_s[PTSIM_COMM_CP], qkv + o, 1e-12);
  assert_rel(b.w.layer.backward_comm_s[PTSIM_COMM_CP], qkv + o, 1e-12);
  /* the attention: 32 / 8 = 4 heads, causal over all 32768 tokens: its
   * share of the layer's forward is that kernel's time */
  double attn = ptsim_cost_attention_s(hw, NULL, PTSIM_PRECISION_BF16, 1, 4, 32768, 32768, 128, 1,
                                       0);
  g_assert_cmpfloat(b.w.layer.forward_s, >, attn + qkv + o);
  g_free(b.plan);
}

static void test_inputs(void) {
  g_test_summary("Ulysses needs heads and KV groups divisible by cp; Megatron-LM's --cp-comm-type "
                 "gives the native flag's job, a2a+p2p the ring");
  PtsimJob job;
  g_autoptr(GError) error = NULL;
  /* llama3-8b's 8 KV groups over cp 16 */
  g_assert_false(build(16, 16, 4096, "a2a", &job, &error));
  g_assert_nonnull(strstr(error->message, "--cp-comm-type a2a"));
  g_assert_nonnull(strstr(error->message, "divisible by --cp 16"));
  g_clear_error(&error);

  static const char *const base =
      "--num-layers 2 --hidden-size 1024 --num-attention-heads 8 --seq-length 4096 "
      "--max-position-embeddings 4096 --micro-batch-size 1 --global-batch-size 2 --bf16 "
      "--vocab-size 32000 --context-parallel-size 4 ";
  const char *types[] = {"a2a", "allgather", "p2p"};
  for (int i = 0; i < 3; i++) {
    PtsimJob a, n;
    for (int k = 0; k < 2; k++) {
      PtsimJobOptions o;
      ptsim_job_options_init(&o);
      o.hw = g_strdup("h100-80g");
      o.gpus = (PtsimOptionInt){TRUE, 8};
      o.megatron_args = k == 0 ? g_strconcat(base, "--cp-comm-type ", types[i], NULL)
                               : g_strdup(base);
      if (k == 1) o.cp_comm_type = g_strdup(types[i]);
      g_assert_true(ptsim_job_build(&o, k == 0 ? &a : &n, NULL, &error));
      g_assert_no_error(error);
      ptsim_job_options_clear(&o);
    }
    g_assert_cmpint(a.settings.cp_comm, ==, (PtsimCpComm)(i == 0 ? 1 : i == 1 ? 2 : 0));
    g_assert_cmpint(memcmp(&a, &n, sizeof a), ==, 0);
  }
  PtsimJobOptions o;
  ptsim_job_options_init(&o);
  o.hw = g_strdup("h100-80g");
  o.gpus = (PtsimOptionInt){TRUE, 8};
  o.megatron_args = g_strconcat(base, "--cp-comm-type a2a+p2p", NULL);
  g_assert_true(ptsim_job_build(&o, &job, NULL, &error));
  g_assert_cmpint(job.settings.cp_comm, ==, PTSIM_CP_P2P);
  ptsim_job_options_clear(&o);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/cp-comm/ring-cannot-hide", test_ring_cannot_hide);
  g_test_add_func("/cp-comm/allgather-and-a2a", test_allgather_and_a2a);
  g_test_add_func("/cp-comm/inputs", test_inputs);
  return g_test_run();
}
