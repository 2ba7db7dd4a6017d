/* test_moe.c — mixture-of-experts models: the model files against their
 * published parameter counts, Megatron-LM's --moe-layer-freq, and (below)
 * the expert-parallel layout, all-to-all volumes and memory terms worked
 * by hand.
 *
 * Parameter counts are worked out in the comments from each config (SwiGLU
 * MLP 3 h w; RMSNorm h; GQA attention h(a d) + 2 h (k d) + (a d) h; MLA as
 * plan.c; router E h), and compared with what the model's authors publish:
 * Mistral and Qwen count both embedding matrices in "active", DeepSeek
 * leaves the input embedding out. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "config.h"
#include "job_validate.h"
#include "lifetimes.h"
#include "memory.h"
#include "moe_layers.h"
#include "plan.h"
#include "schedule.h"
#include "simulate.h"
#include "topology.h"
#include "workload.h"

typedef struct {
  const char *model;
  double total, active;                     /* exact, from the config by hand */
  double published_total, published_active; /* the authors' figures, in 1e9 ... */
  double total_step, active_step;           /* ... rounded (or cut) to these */
  int active_without_input_embedding;       /* the authors' convention */
} Count;

static void check_count(gconstpointer data) {
  const Count *c = data;
  PtsimModel m;
  g_autoptr(GError) error = NULL;
  double total = 0, active = 0;
  g_assert_true(ptsim_model_load(c->model, &m, &error));
  g_assert_no_error(error);
  if (strcmp(c->model, "deepseek-v3") == 0) m.mtp_num_layers = 0; /* 671B is the main model */
  ptsim_plan_model_parameters(&m, 4096, &total, &active);
  g_assert_cmpfloat(total, ==, c->total);
  g_assert_cmpfloat(active, ==, c->active);
  if (c->active_without_input_embedding) active -= (double)m.vocab_size * (double)m.hidden_size;
  g_assert_cmpfloat(fabs(total / 1e9 - c->published_total), <, c->total_step);
  g_assert_cmpfloat(fabs(active / 1e9 - c->published_active), <, c->active_step);
}

/* Mixtral 8x7B: attention 4096*4096 + 2*4096*1024 + 4096*4096 = 41,943,040;
 * expert 3*4096*14336 = 176,160,768; MoE layer 8 experts + router 8*4096 +
 * norms 8192 = 1,451,270,144; x32 = 46,440,644,608; embedding + head
 * 2*32000*4096 = 262,144,000, final norm 4096: 46,702,792,704.  Active: 2
 * experts: (41,943,040 + 2*176,160,768 + 32,768 + 8,192)*32 + 262,148,096. */
static const Count counts[] = {
    {"mixtral-8x7b", 46702792704.0, 12879925248.0, 46.7, 12.9, 0.1, 0.1, 0},
    /* 56 x (88,080,384 attention + 8 x 301,989,888 + 49,152 router + 12,288
     * norms) + 2 x 32768 x 6144 + 6144; published 141B / 39B */
    {"mixtral-8x22b", 140630071296.0, 39161468928.0, 141.0, 39.0, 1.0, 1.0, 0},
    /* MLA per layer: q 7168*1536 + 1536 + 1536*128*192, kv 7168*576 + 512
     * + 512*128*256, o 128*128*7168 = 187,107,328; 3 dense layers with an
     * 18432 MLP, 58 MoE layers of 256 x 3*7168*2048 + a 2048 shared expert
     * + router 256*7168; published 671B total (without the 11.6B MTP
     * block), 37B active (36.6B in README_WEIGHTS: without the input
     * embedding) */
    {"deepseek-v3", 671026404352.0, 37552282624.0, 671.0, 36.6, 1.0, 0.1, 1},
    /* MLA without a q latent: q 2048*16*192, kv 2048*576 + 512 + 512*16*256,
     * o 16*128*2048; 1 dense layer (10944), 26 MoE layers of 64 x
     * 3*2048*1408 + 2816 shared; published 15.7B / 2.4B */
    {"deepseek-v2-lite", 15706484224.0, 2661150208.0, 15.7, 2.4, 0.1, 0.1, 1},
    /* head dim 128: q 2048*4096, k, v 2048*512 each, o 4096*2048, q/k norms
     * 2*128; 48 layers of 128 x 3*2048*768; published 30.5B / 3.3B */
    {"qwen3-30b-a3b", 30532122624.0, 3353032704.0, 30.5, 3.3, 0.1, 0.1, 0},
    {"qwen3-235b-a22b", 235093634560.0, 22190763520.0, 235.0, 22.0, 1.0, 1.0, 0},
    /* gpt-oss-120b (config.json: h 2880, 64 heads of 64, 8 KV groups):
     * attention q 2880*4096 + k, v 2*2880*512 + o 4096*2880 = 26,542,080,
     * its biases 4096 + 2*512 + 2880 = 8000, sinks 64; norms 2*2880; router
     * 128*2880 = 368,640; an expert 3*2880*2880 + biases 2*2880 + 2880 =
     * 24,891,840, x128 = 3,186,155,520: 3,213,080,064 per layer, x36 =
     * 115,670,882,304; embedding and head 2*201088*2880 = 1,158,266,880;
     * final norm 2880: 116,829,152,064.  Active: 4 experts, 36*124 =
     * 4464 fewer experts: 5,711,978,304, 5,132,844,864 without the input
     * embedding.  The model card (arXiv 2508.10925, Table 1): 116.83B total
     * (it also counts the router's 36*128 biases, which Megatron's router
     * has not: 4608 short), 5.13B active. */
    {"gpt-oss-120b", 116829152064.0, 5711978304.0, 116.83, 5.13, 0.01, 0.01, 1},
    /* gpt-oss-20b: 24 layers of 32 experts: 26,550,144 attention + 5760
     * norms + 92,160 router + 32*24,891,840 = 823,186,944 per layer, x24 =
     * 19,756,486,656, + 1,158,266,880 + 2880 = 20,914,756,416; active 24*28
     * experts fewer: 4,187,439,936, 3,608,306,496 without the input
     * embedding.  Model card: 20.91B total (+768 router biases), 3.61B
     * active. */
    {"gpt-oss-20b", 20914756416.0, 4187439936.0, 20.91, 3.61, 0.01, 0.01, 1},
};

static void test_mtp_block(void) {
  g_test_summary("DeepSeek-V3's MTP module: one MoE layer + 3 norms + the 2h x h projection, "
                 "11.6B unique (README: 14B with its copy of the embedding and head, 11.5B "
                 "without)");
  PtsimModel m;
  double with, without;
  g_assert_true(ptsim_model_load("deepseek-v3", &m, NULL));
  ptsim_plan_model_parameters(&m, 4096, &with, NULL);
  m.mtp_num_layers = 0;
  ptsim_plan_model_parameters(&m, 4096, &without, NULL);
  g_assert_cmpfloat(with - without, ==, 682636472320.0 - 671026404352.0);
}

static void test_layer_freq(void) {
  g_test_summary("--moe-layer-freq: an integer N (every N-th layer from 0) or Megatron's list "
                 "arithmetic; the length must be num_layers");
  uint64_t bits[PTSIM_LAYER_WORDS];
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_moe_layers_parse("([0]*3+[1]*58)", 61, "x", bits, &error));
  g_assert_cmpuint(bits[0], ==, ((((uint64_t)1 << 58) - 1) << 3));
  g_assert_true(ptsim_moe_layers_parse("2", 5, "x", bits, &error));
  g_assert_cmpuint(bits[0], ==, 0x15u); /* layers 0, 2, 4 */
  g_assert_true(ptsim_moe_layers_parse(" ([1]*3+[0]*1)*3 ", 12, "x", bits, &error));
  g_assert_cmpuint(bits[0], ==, 0x777u);
  g_assert_true(ptsim_moe_layers_parse("[1, 0]*2+[1]", 5, "x", bits, &error));
  g_assert_cmpuint(bits[0], ==, 0x15u);
  g_assert_false(ptsim_moe_layers_parse("([0]*3+[1]*57)", 61, "--moe-layer-freq", bits, &error));
  g_assert_nonnull(strstr(error->message, "lists 60 layers; expected num_layers = 61"));
  g_clear_error(&error);
  g_assert_false(ptsim_moe_layers_parse("[0,2]", 2, "--moe-layer-freq", bits, &error));
  g_assert_nonnull(strstr(error->message, "0 (dense) or 1 (MoE)"));
  g_clear_error(&error);
  g_assert_false(ptsim_moe_layers_parse("([1]*2", 2, "--moe-layer-freq", bits, &error));
  g_assert_nonnull(strstr(error->message, "without its ')'"));
  g_clear_error(&error);
  g_assert_false(ptsim_moe_layers_parse("0", 2, "--moe-layer-freq", bits, &error));
  g_clear_error(&error);
  g_assert_false(ptsim_moe_layers_parse("[1]*100000000000", 4, "--moe-layer-freq", bits, &error));
  g_assert_nonnull(strstr(error->message, "more than 512 layers"));
}

/* A validated job of MODEL on HW with the layout's dimensions given;
 * FALSE (with *error) when validation refuses it. */
static gboolean moe_job(PtsimJob *job, const char *model, const char *hw, gint64 gpus, gint64 tp,
                        gint64 pp, gint64 ep, gint64 etp, GError **error) {
  memset(job, 0, sizeof *job);
  if (!ptsim_model_load(model, &job->model, error) || !ptsim_hardware_load(hw, &job->hw, error))
    return FALSE;
  ptsim_job_init_defaults(job);
  job->layout.gpus = gpus;
  job->layout.tp = tp;
  job->layout.pp = pp;
  job->layout.ep = ep;
  job->layout.etp = etp;
  job->layout.gbs = 64 * gpus;
  job->layout.seq = 4096;
  job->settings.moe_dispatcher = PTSIM_DISPATCH_ALLTOALL;
  return ptsim_job_validate(job, error);
}

static void test_folding_groups(void) {
  g_test_summary("MoE parallel folding, the example of notes/moe.md section 4: 8 GPUs as tp 2 "
                 "dp 4 for attention and etp 1 ep 4 edp 2 for the experts; EP groups {0,1,2,3}, "
                 "EDP groups {0,4}; with etp 2 the EP group holding rank 0 is {0,2,4,6}");
  PtsimLayout l;
  PtsimHardware hw;
  PtsimGroup g;
  memset(&l, 0, sizeof l);
  memset(&hw, 0, sizeof hw);
  l.tp = 2, l.cp = 1, l.dp = 4, l.pp = 1, l.ep = 4, l.etp = 1, l.edp = 2;
  hw.gpus_per_node = 4; /* two hosts: the EP group stays in one, EDP crosses */
  ptsim_topology_group(&l, &hw, PTSIM_GROUP_EP, &g);
  g_assert_cmpint(g.kind, ==, PTSIM_GROUP_EP);
  g_assert_cmpint(g.size, ==, 4);
  g_assert_cmpint(g.stride, ==, 1);
  g_assert_cmpint(g.nodes, ==, 1);
  ptsim_topology_group(&l, &hw, PTSIM_GROUP_EDP, &g);
  g_assert_cmpint(g.size, ==, 2);
  g_assert_cmpint(g.stride, ==, 4);
  g_assert_cmpint(g.nodes, ==, 2);
  g_assert_cmpint(g.fabric_senders_per_node, ==, 4);
  ptsim_topology_group(&l, &hw, PTSIM_GROUP_DP, &g); /* attention's dp: {0,2,4,6} */
  g_assert_cmpint(g.size, ==, 4);
  g_assert_cmpint(g.stride, ==, 2);
  l.etp = 2, l.ep = 4, l.edp = 1;
  ptsim_topology_group(&l, &hw, PTSIM_GROUP_EP, &g);
  g_assert_cmpint(g.size, ==, 4);
  g_assert_cmpint(g.stride, ==, 2);
  g_assert_cmpint(g.nodes, ==, 2); /* {0,2} on host 0, {4,6} on host 1 */
  g_assert_cmpint(g.gpus_per_node, ==, 2);
  ptsim_topology_group(&l, &hw, PTSIM_GROUP_ETP_EP, &g);
  g_assert_cmpint(g.size, ==, 8);
  g_assert_cmpint(g.stride, ==, 1);
}

static void test_folding_checks(void) {
  g_test_summary("Megatron-LM's expert-parallel rules, each a one-line error naming the flag");
  static const struct {
    const char *model;
    gint64 gpus, tp, pp, ep, etp;
    const char *needle; /* NULL: valid */
  } cases[] = {
      {"mixtral-8x7b", 64, 1, 4, 8, 0, NULL},
      {"mixtral-8x7b", 64, 1, 4, 16, 1, "--ep 16 does not divide num_experts 8"},
      {"mixtral-8x7b", 24, 1, 1, 8, 2, "--gpus 24 is not divisible by etp*ep*pp"},
      {"qwen3-30b-a3b", 64, 2, 1, 32, 1, NULL},
      {"mixtral-8x22b", 96, 1, 1, 8, 3, "--etp 3 does not divide moe_ffn_hidden_size 16384"},
      {"llama3-8b", 8, 1, 1, 2, 0, "--ep 2 needs a mixture-of-experts model"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    PtsimJob job;
    g_autoptr(GError) error = NULL;
    gboolean ok = moe_job(&job, cases[i].model, "h100-80g", cases[i].gpus, cases[i].tp, cases[i].pp,
                          cases[i].ep, cases[i].etp, &error);
    if (!cases[i].needle) {
      g_assert_no_error(error);
      g_assert_true(ok);
      g_assert_cmpint(job.layout.etp, ==, cases[i].etp ? cases[i].etp : cases[i].tp);
      g_assert_cmpint(job.layout.edp, ==,
                      cases[i].gpus / (job.layout.etp * cases[i].ep * cases[i].pp));
      continue;
    }
    g_assert_false(ok);
    if (!strstr(error->message, cases[i].needle))
      g_error("case %zu: '%s' lacks '%s'", i, error->message, cases[i].needle);
  }
  /* tp > 1 needs sequence parallelism for an MoE layer to train */
  PtsimJob job;
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_model_load("mixtral-8x7b", &job.model, NULL));
  g_assert_true(ptsim_hardware_load("h100-80g", &job.hw, NULL));
  ptsim_job_init_defaults(&job);
  job.layout.gpus = 8, job.layout.tp = 2, job.layout.sp = 0, job.layout.gbs = 8;
  job.layout.seq = 4096;
  g_assert_false(ptsim_job_validate(&job, &error));
  g_assert_nonnull(strstr(error->message, "needs sequence parallelism"));
}

static void test_plan_layers(void) {
  g_test_summary("the plan counts each stage's and each model chunk's MoE layers as Megatron "
                 "places the layers");
  PtsimJob job;
  g_autoptr(GError) error = NULL;
  /* DeepSeek-V3, pp 8 with 5 layers first and 8 last: stage 0 holds
   * layers 0-4 (3 dense, 2 MoE), stages 1-6 eight MoE layers each */
  g_assert_true(moe_job(&job, "deepseek-v3", "h100-80g", 256, 1, 8, 32, 1, &error) == FALSE);
  g_clear_error(&error); /* 61 layers do not split over 8 stages evenly */
  memset(&job, 0, sizeof job);
  g_assert_true(ptsim_model_load("deepseek-v3", &job.model, NULL));
  g_assert_true(ptsim_hardware_load("h100-80g", &job.hw, NULL));
  ptsim_job_init_defaults(&job);
  job.layout.gpus = 256, job.layout.pp = 8, job.layout.ep = 32, job.layout.gbs = 2048;
  job.layout.seq = 4096, job.layout.first_stage_layers = 5, job.layout.last_stage_layers = 8;
  g_assert_true(ptsim_job_validate(&job, &error));
  g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
  ptsim_plan_build(&job, plan);
  g_assert_cmpint(plan->stage_moe_layers[0], ==, 2);
  g_assert_cmpint(plan->stage_moe_layers[1], ==, 8);
  g_assert_cmpint(plan->stage_moe_layers[7], ==, 8);
  g_assert_cmpint(plan->vstage_moe_layers[0], ==, 2);
  g_assert_cmpint(plan->local_experts, ==, 8);
  g_assert_true(plan->mtp_layer_is_moe);
  /* DeepSeek-V2-Lite, pp 3 x vp 3: virtual stage c*3 + s holds layers
   * 3(3c+s) .. +2; only layer 0 is dense */
  job.layout.gpus = 24, job.layout.pp = 3, job.layout.vp = 3, job.layout.ep = 8;
  job.layout.gbs = 24, job.layout.first_stage_layers = job.layout.last_stage_layers = 0;
  job.layout.dp = 0; /* derived again */
  g_assert_true(ptsim_model_load("deepseek-v2-lite", &job.model, NULL));
  g_assert_true(ptsim_job_validate(&job, &error));
  ptsim_plan_build(&job, plan);
  g_assert_cmpint(plan->vstage_moe_layers[0], ==, 2); /* chunk 0 of stage 0 */
  g_assert_cmpint(plan->vstage_moe_layers[3], ==, 3); /* chunk 1 of stage 0 */
  g_assert_cmpint(plan->vstage_moe_layers[1], ==, 3); /* chunk 0 of stage 1 */
  g_assert_cmpint(plan->stage_moe_layers[0], ==, 8);
  g_assert_cmpint(plan->stage_moe_layers[2], ==, 9);
  /* the routed experts of one GPU: 64/8 experts x 3 x 2048 x 1408 per MoE layer */
  g_assert_cmpfloat(plan->moe_expert_parameters, ==, 8.0 * 3.0 * 2048.0 * 1408.0);
  g_assert_cmpfloat(plan->stage_expert_parameters[0], ==, 8.0 * plan->moe_expert_parameters);
}

/* The all-to-all of nccl-tests' "per-rank send buffer" n on p ranks, g per
 * node, as cost.h prices it (B1 + NCCL's base latency), with the H100
 * profile's numbers: NVLink 370.8 GB/s and 3.4 us per step, NICs 48 GB/s
 * and 14 us, base 8.4 us, bandwidths saturating as (n + 16 MiB)/(n + 32 MiB). */
static double a2a_by_hand(double n, double p, double g) {
  double half = 16.0 * 1024 * 1024, sat = (n + half) / (n + 2.0 * half);
  double intra = (g - 1.0) / p * n / (370.8e9 * sat), inter = (p - g) / p * n / (48e9 * sat);
  return 8.4e-6 + (g - 1.0) * 3.4e-6 + (p - g) * 14e-6 + (inter > intra ? inter : intra);
}

static void test_all_to_all(void) {
  g_test_summary("the alltoall dispatcher's volume and price by hand: Mixtral 8x7B at ep 8 in "
                 "one node, Qwen3-30B-A3B at ep 16 over two nodes");
  PtsimJob job;
  g_autoptr(GError) error = NULL;
  g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
  g_autofree PtsimWorkload *w = g_new0(PtsimWorkload, 1);
  /* Mixtral: T = 4096 tokens, k 2, h 4096: each rank sends 4096 x 2 x 4096
   * x 2 B = 67,108,864 B per all-to-all, plus the probabilities 4096 x 2 x
   * 4 B = 32,768 B (dispatch only); forward = dispatch + combine */
  g_assert_true(moe_job(&job, "mixtral-8x7b", "h100-80g", 8, 1, 1, 8, 0, &error));
  ptsim_plan_build(&job, plan);
  ptsim_workload_build(plan, NULL, w);
  double mixtral = 2.0 * a2a_by_hand(67108864.0, 8, 8) + a2a_by_hand(32768.0, 8, 8);
  g_assert_cmpfloat(fabs(w->moe_layer.forward_comm_s[PTSIM_COMM_EP] - mixtral), <, 1e-12);
  g_assert_cmpfloat(fabs(w->moe_layer.backward_comm_s[PTSIM_COMM_EP] - mixtral), <, 1e-12);
  g_assert_cmpfloat(w->layer.forward_comm_s[PTSIM_COMM_EP], ==, 0.0); /* no dense layers */
  /* Qwen3-30B-A3B on 16 GPUs, ep 16: the EP group spans two 8-GPU nodes;
   * 4096 x 8 x 2048 x 2 = 134,217,728 B per rank, half of it across the
   * NICs (8 senders per node, each its own 48 GB/s NIC) */
  g_assert_true(moe_job(&job, "qwen3-30b-a3b", "h100-80g", 16, 1, 1, 16, 0, &error));
  ptsim_plan_build(&job, plan);
  g_assert_cmpint(plan->groups[PTSIM_GROUP_EP].nodes, ==, 2);
  ptsim_workload_build(plan, NULL, w);
  double qwen = 2.0 * a2a_by_hand(134217728.0, 16, 8) + a2a_by_hand(4096.0 * 8 * 4, 16, 8);
  g_assert_cmpfloat(fabs(w->moe_layer.forward_comm_s[PTSIM_COMM_EP] - qwen), <, 1e-12);
  /* the busiest rank at 1.25 x the balanced share (a capacity factor):
   * the token all-to-alls grow by 1.25, the probabilities' do not */
  ptsim_workload_build_loaded(plan, NULL, 1.25, w);
  qwen = 2.0 * a2a_by_hand(1.25 * 134217728.0, 16, 8) + a2a_by_hand(4096.0 * 8 * 4, 16, 8);
  g_assert_cmpfloat(fabs(w->moe_layer.forward_comm_s[PTSIM_COMM_EP] - qwen), <, 1e-12);
}

/* flex's dispatch across nodes as cost.h forwards it, with the H100
 * profile's numbers (as a2a_by_hand): N nodes of g GPUs, p ranks; each
 * copy but the own crosses NVLink once, the fabric carries one copy per
 * remote node. */
static double forwarded_by_hand(double rank_bytes, double node_bytes, double p, double g,
                                double nodes) {
  double half = 16.0 * 1024 * 1024;
  double nvl = (p - 1.0) / p * rank_bytes /
               (370.8e9 * (rank_bytes + half) / (rank_bytes + 2 * half));
  double net = node_bytes / (48e9 * (node_bytes + half) / (node_bytes + 2.0 * half));
  return 8.4e-6 + (g - 1.0) * 3.4e-6 + (nodes - 1.0) * 14e-6 + (net > nvl ? net : nvl);
}

static void test_flex_forwarding(void) {
  g_test_summary("the flex dispatcher (DeepEP) over 8 nodes by hand: DeepSeek-V3 at ep 64, one "
                 "copy per remote node over the fabric, node-limited routing to 4 of 8 groups");
  PtsimJob job;
  g_autoptr(GError) error = NULL;
  g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
  g_autofree PtsimWorkload *w = g_new0(PtsimWorkload, 1);
  /* T = 4096 tokens of h 7168 in bf16: one copy 58,720,256 B.  4 local
   * experts of 256, top 8: 64 (1 - C(252,8)/C(256,8)) = 64 (1 - 0.88007)
   * = 7.6758 ranks per token.  Nodes: uniformly 8 (1 - C(224,8)/C(256,8))
   * = 5.29, but the router picks 4 of 8 groups of 32 experts, one group
   * per node: 8 (1 - C(7,4)/C(8,4)) = 4 nodes, 3.5 of them remote.
   * forward = dispatch + combine, each 8.4 + 7 x 3.4 + 7 x 14 us + max(63/64
   * x 450.7 MB over NVLink = 1.24 ms, 205.5 MB over the NIC = 4.60 ms) */
  g_assert_true(moe_job(&job, "deepseek-v3", "h100-80g", 64, 1, 1, 64, 0, &error));
  g_assert_no_error(error);
  job.settings.moe_dispatcher = PTSIM_DISPATCH_FLEX;
  g_assert_true(ptsim_job_validate(&job, &error));
  ptsim_plan_build(&job, plan);
  g_assert_cmpint(plan->groups[PTSIM_GROUP_ETP_EP].nodes, ==, 8);
  ptsim_workload_build(plan, NULL, w);
  double copy = 4096.0 * 7168.0 * 2.0, ranks = 64.0 * (1.0 - 0.8800664);
  double fwd = 2.0 * forwarded_by_hand(copy * ranks, copy * 3.5, 64, 8, 8);
  g_assert_cmpfloat(fabs(w->moe_layer.forward_comm_s[PTSIM_COMM_EP] / fwd - 1.0), <, 1e-6);
  /* without the groups the uniform 5.29 nodes, 4.63 remote: the fabric's part
   * 4.63 / 3.5 = 1.32 times as long, the latencies the same */
  job.model.moe_router_groups = job.model.moe_router_group_topk = 0;
  ptsim_plan_build(&job, plan);
  ptsim_workload_build(plan, NULL, w);
  g_assert_cmpfloat(w->moe_layer.forward_comm_s[PTSIM_COMM_EP], >, 1.25 * fwd);
}

static void test_flops(void) {
  g_test_summary("Megatron-LM's num_floating_point_operations (d98e8a64) per token at seq 4096, "
                 "worked out independently in notes/moe.md section 3 (GFLOP/token, 0.01)");
  static const struct {
    const char *model;
    int64_t mtp;
    double gflop_per_token;
  } rows[] = {{"mixtral-8x7b", 0, 79.71},     {"mixtral-8x22b", 0, 242.20},
              {"deepseek-v3", 1, 259.99},     {"deepseek-v3", 0, 249.81},
              {"deepseek-v2-lite", 0, 16.39}, {"qwen3-30b-a3b", 0, 23.01},
              {"qwen3-235b-a22b", 0, 148.03}};
  for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
    PtsimJob job;
    memset(&job, 0, sizeof job);
    g_assert_true(ptsim_model_load(rows[i].model, &job.model, NULL));
    job.model.mtp_num_layers = rows[i].mtp;
    job.layout.gbs = 1;
    job.layout.seq = 4096;
    double got = ptsim_workload_megatron_flops(&job) / 4096.0 / 1e9;
    if (fabs(got - rows[i].gflop_per_token) > 0.006)
      g_error("%s (mtp %" G_GINT64_FORMAT "): %.4f GFLOP/token, notes say %.2f", rows[i].model,
              rows[i].mtp, got, rows[i].gflop_per_token);
  }
}

static void test_sampled_load(void) {
  g_test_summary("Monte-Carlo expert load: the busiest of ep ranks under uniform routing, a "
                 "little above the balanced share; bounded by the capacity factor, exactly it "
                 "when padded; nothing to sample at ep 1");
  PtsimJob job;
  g_autoptr(GError) error = NULL;
  g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
  PtsimRng rng;
  double sum = 0.0;
  int i;
  /* Qwen3-30B-A3B, ep 16: each rank receives Tm k = 4096 x 8 = 32768 copies
   * on average, sd sqrt(32768 x 15/16) = 175; the largest of 16 normals is
   * 1.77 sd on average: load ~ 1 + 1.77 x 175 / 32768 = 1.0095 */
  g_assert_true(moe_job(&job, "qwen3-30b-a3b", "h100-80g", 16, 1, 1, 16, 0, &error));
  ptsim_plan_build(&job, plan);
  ptsim_rng_init(&rng, 7, 0);
  for (i = 0; i < 200; i++) {
    double load = ptsim_workload_sample_expert_load(plan, &rng);
    g_assert_cmpfloat(load, >, 1.0);
    g_assert_cmpfloat(load, <, 1.03);
    sum += load;
  }
  g_assert_cmpfloat(fabs(sum / 200.0 - 1.0095), <, 0.001);
  job.settings.moe_capacity_factor = 1.005; /* the bound cuts the draws */
  ptsim_plan_build(&job, plan);
  g_assert_cmpfloat(ptsim_workload_sample_expert_load(plan, &rng), ==, 1.005);
  job.settings.moe_pad_to_capacity = 1, job.settings.moe_capacity_factor = 1.5;
  ptsim_plan_build(&job, plan);
  g_assert_cmpfloat(ptsim_workload_sample_expert_load(plan, &rng), ==, 1.5);
  g_assert_true(moe_job(&job, "mixtral-8x7b", "h100-80g", 8, 1, 1, 1, 0, &error));
  ptsim_plan_build(&job, plan);
  g_assert_cmpfloat(ptsim_workload_sample_expert_load(plan, &rng), ==, 1.0);
}

static void test_memory_terms(void) {
  g_test_summary("the MoE memory terms by hand: Mixtral 8x7B on 8 GPUs, ep 8 (edp 1), tp 1, "
                 "seq 4096, no dropout, flash attention, no recompute");
  PtsimJob job;
  g_autoptr(GError) error = NULL;
  g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
  PtsimMemoryEstimate est;
  g_assert_true(moe_job(&job, "mixtral-8x7b", "h100-80g", 8, 1, 1, 8, 0, &error));
  ptsim_plan_build(&job, plan);
  /* sb = 4096, h = 4096 (no SP at tp 1):
   *   8 sbh: input norm input, QKV input, post-attention norm input, MoE input
   *      = 134,217,728
   *   q 2 sb a d + k, v 2 x 2 sb 8 d + attention output 2 sb a d
   *      = 33,554,432 + 16,777,216 + 33,554,432 = 83,886,080
   *   router (unfused): 4096 x 8 experts x 9 B = 294,912
   *   rows N = 4096 x 2 (top-2) x 1 (etp) = 8192: input and probs
   *      N (2h + 4) = 67,141,632; fc1 output N x 2 x 14336 x 2 B =
   *      469,762,048; fc2 input N x 14336 x 2 = 234,881,024 (the fused
   *      weighted SwiGLU saves its input, fc1's output, and returns fc2's)
   * total 990,183,424 B per MoE layer and microbatch */
  g_assert_cmpfloat(ptsim_memory_moe_layer_activation_bytes(plan, 1), ==, 990183424.0);
  /* moe_act drops fc2's input; moe drops the whole block but its input */
  job.settings.recompute = PTSIM_RECOMPUTE_SELECTIVE;
  job.settings.recompute_modules = PTSIM_RECOMPUTE_MOE_ACT;
  ptsim_plan_build(&job, plan);
  g_assert_cmpfloat(ptsim_memory_moe_layer_activation_bytes(plan, 0), ==,
                    990183424.0 - 234881024.0);
  job.settings.recompute_modules = PTSIM_RECOMPUTE_MOE;
  ptsim_plan_build(&job, plan);
  g_assert_cmpfloat(ptsim_memory_moe_layer_activation_bytes(plan, 0), ==, 134217728.0 + 83886080.0);
  /* a capacity factor of 1.5 bounds the rows: 1.5 N */
  job.settings.recompute = PTSIM_RECOMPUTE_NONE;
  job.settings.moe_capacity_factor = 1.5;
  ptsim_plan_build(&job, plan);
  g_assert_cmpfloat(ptsim_memory_moe_layer_activation_bytes(plan, 1), ==,
                    134217728.0 + 83886080.0 + 294912.0 +
                        1.5 * (67141632.0 + 469762048.0 + 234881024.0));
  /* optimizer: the 32 layers' one local expert each (32 x 176,160,768 =
   * 5,637,144,576) unsharded (edp 1), the rest (32 x (41,943,040
   * attention + 32,768 router + 8,192 norms) + 2 x 32000 x 4096 + 4096 =
   * 1,605,636,096) over dp 8: 12 B x (200,704,512 + 5,637,144,576) */
  job.settings.moe_capacity_factor = 0.0;
  ptsim_plan_build(&job, plan);
  ptsim_memory_estimate(plan, PTSIM_CE_LAST_STAGE, &est);
  g_assert_cmpfloat(plan->stage_expert_parameters[0], ==, 5637144576.0);
  g_assert_cmpfloat(est.stages[0].parameters, ==, 5637144576.0 + 1605636096.0);
  g_assert_cmpfloat(est.stages[0].optimizer_bytes, ==, 12.0 * (200704512.0 + 5637144576.0));
  g_assert_cmpfloat(est.stages[0].gradients_bytes, ==, 4.0 * (5637144576.0 + 1605636096.0));
}

/* ---- combined 1F1B (--overlap-moe-expert-parallel-comm) ---- */

static void test_pair_period(void) {
  g_test_summary("Megatron-LM's per-layer F + B pair on two streams, by hand: the period with "
                 "and without --delay-wgrad-compute");
  /* ms: forward attn 1, dispatch 1.5, experts 1, combine 1.5; backward
   * combine 1.5, experts dgrad 1 + wgrad 1, dispatch 1.5, attn dgrad 1 +
   * wgrad 1.  Without the delay (wgrads inside the dgrads: mlp_b = attn_b
   * = 2), a layer's events, chained from the previous layer's ends:
   *   L1  combine_b 0-1.5, attn_f 0-1, mlp_b 1.5-3.5, dispatch_f 1.5-3,
   *       dispatch_b 3.5-5, mlp_f 3.5-4.5, combine_f 5-6.5, attn_b 5-7
   *   L2  combine_b 7-8.5 (waits attn_b), attn_f 7-8 (waits the comp
   *       stream), mlp_b 8.5-10.5, dispatch_f 8.5-10, dispatch_b
   *       10.5-12, mlp_f 10.5-11.5, combine_f 12-13.5, attn_b 12-14
   * and so on every 7 ms: 7 of the pair's 5 + 7 = 12 serial, 1 ms of its 6
   * ms of all-to-all exposed.  With the delay (mlp_b = attn_b = 1, their
   * wgrads after them), from L2 on (start 6.5) the compute stream never
   * waits: attn_f 6.5-7.5, mlp_b -8.5, mlp_w -9.5, mlp_f -10.5 (dispatch_f
   * 7.5-9 before it), attn_b -11.5 (dispatch_b 9-10.5), attn_w -12.5:
   * 6 ms, all of the all-to-all hidden. */
  PtsimMoePairParts p = {1.0, 1.5, 1.0, 1.5, 1.5, 1.0, 1.0, 1.5, 1.0, 1.0};
  g_assert_cmpfloat(ptsim_work_moe_pair_s(&p, 0), ==, 7.0);
  g_assert_cmpfloat(ptsim_work_moe_pair_s(&p, 1), ==, 6.0);
  /* all-to-alls of 0.5 fit beside the compute either way: 6 */
  p.dispatch_f = p.combine_f = p.dispatch_b = p.combine_b = 0.5;
  g_assert_cmpfloat(ptsim_work_moe_pair_s(&p, 0), ==, 6.0);
  g_assert_cmpfloat(ptsim_work_moe_pair_s(&p, 1), ==, 6.0);
  /* no compute: the four all-to-alls back to back on the comm stream */
  PtsimMoePairParts q = {0, 1.0, 0, 1.0, 1.0, 0, 0, 1.0, 0, 0};
  g_assert_cmpfloat(ptsim_work_moe_pair_s(&q, 0), ==, 4.0);
}

static void test_pair_memory(void) {
  g_test_summary("combined 1F1B holds one MoE layer's activations more: Mixtral 8x7B, ep 8, by "
                 "test_memory_terms' 990,183,424 B");
  PtsimJob job;
  g_autoptr(GError) error = NULL;
  PtsimMemoryEstimate a, b;
  g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
  g_assert_true(moe_job(&job, "mixtral-8x7b", "h100-80g", 8, 1, 1, 8, 0, &error));
  ptsim_plan_build(&job, plan);
  ptsim_memory_estimate(plan, PTSIM_CE_LAST_STAGE, &a);
  /* one stage of 32 layers, 1F1B holds one microbatch (32 layers); the
   * pair's forward stores its first layer before the backward frees its
   * last: 33 layers, one more of 990,183,424 B */
  job.settings.moe_ep_comm_overlap = 1;
  g_assert_true(ptsim_job_validate(&job, &error));
  ptsim_plan_build(&job, plan);
  g_assert_cmpfloat(plan->inflight_microbatches[0], ==, 1.0 + 1.0 / 32.0);
  ptsim_memory_estimate(plan, PTSIM_CE_LAST_STAGE, &b);
  g_assert_cmpfloat_with_epsilon(b.stages[0].activations_bytes - a.stages[0].activations_bytes,
                                 990183424.0, 1.0);
}

static void test_pair_refusals(void) {
  g_test_summary("what Megatron-LM refuses with the overlap, named by the flag");
  PtsimJob job;
  g_autoptr(GError) error = NULL;
  g_assert_true(moe_job(&job, "mixtral-8x7b", "h100-80g", 8, 1, 1, 8, 0, &error));
  job.settings.delay_wgrad_compute = 1;
  g_assert_false(ptsim_job_validate(&job, &error));
  g_assert_nonnull(strstr(error->message, "--delay-wgrad-compute needs "
                                          "--overlap-moe-expert-parallel-comm"));
  g_clear_error(&error);
  job.settings.moe_ep_comm_overlap = 1;
  g_assert_true(ptsim_job_validate(&job, &error));
  job.settings.moe_dispatcher = PTSIM_DISPATCH_ALLGATHER;
  g_assert_false(ptsim_job_validate(&job, &error));
  g_assert_nonnull(strstr(error->message, "--overlap-moe-expert-parallel-comm needs the alltoall"));
  g_clear_error(&error);
  job.settings.moe_dispatcher = PTSIM_DISPATCH_ALLTOALL;
  job.settings.recompute = PTSIM_RECOMPUTE_FULL;
  g_assert_false(ptsim_job_validate(&job, &error));
  g_assert_nonnull(strstr(error->message, "no full recomputation"));
}

/* ---- first-step memory and the runs floor ---- */

/* Replays `steps` steps of stage 0 of the job's plan; the allocator's
 * samples (after the start, after every item and every optimizer step)
 * into tl, whose capacity the caller sets. */
static void replay_stage0(const PtsimPlan *plan, int32_t steps, PtsimAllocTimeline *tl,
                          PtsimStageAlloc *out) {
  int32_t n = plan->schedule_items;
  g_autofree PtsimScheduleItem *items = g_new(PtsimScheduleItem, n);
  const PtsimLayout *l = &plan->job.layout;
  g_assert_cmpint(ptsim_schedule_build(l->schedule, (int32_t)l->pp, (int32_t)plan->num_microbatches,
                                       (int32_t)plan->num_chunks, plan->microbatch_group, 0, items,
                                       n),
                  ==, n);
  int64_t bytes = ptsim_lifetimes_scratch_bytes(plan, 0);
  g_autofree void *scratch = g_malloc(bytes);
  g_assert_cmpint(ptsim_lifetimes_replay(plan, 0, items, n, steps, NULL, 0, scratch, bytes, tl,
                                         out),
                  ==, 0);
}

/* Mixtral 8x7B, ep 8 on 8 GPUs (test_memory_terms' layout, by hand there:
 * dense D = 1,605,636,096 parameters with their optimizer states over dp
 * 8, the local experts E = 5,637,144,576 over edp 1), one microbatch of
 * seq 1024 on an H200.  Before step 0 the allocator holds the bf16
 * weights, the fp32 gradient buffers and the fp32 masters: 2 (D + E) +
 * 4 (D + E) + 4 (D/8 + E) = 66,808,080,384 B; Adam's two fp32 states,
 * 8 (D/8 + E) = 46,702,792,704 B, come with step 0's optimizer step and
 * with no later one.  A block handed out may exceed its request by up to
 * 1 MiB (the allocator does not split off less than that): 461 tensors
 * before step 0 (97 weights, 182 gradient buckets of 40M parameters, 182
 * master shards), 364 Adam states. */
static void test_expert_states_at_first_step(void) {
  g_test_summary("MoE first-step memory: the experts' Adam states (over edp) appear at step 0's "
                 "optimizer step, by hand");
  const double D = 1605636096.0, E = 5637144576.0, MiB = 1024.0 * 1024.0;
  PtsimJob job;
  g_autoptr(GError) error = NULL;
  g_assert_true(moe_job(&job, "mixtral-8x7b", "h200-141g", 8, 1, 1, 8, 0, &error));
  job.layout.seq = 1024;
  job.layout.gbs = 8;
  g_assert_true(ptsim_job_validate(&job, &error));
  g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
  ptsim_plan_build(&job, plan);
  g_assert_cmpfloat(plan->stage_expert_parameters[0], ==, E);
  g_assert_cmpfloat(plan->stage_parameters[0], ==, D + E);
  g_assert_cmpfloat(plan->optimizer_shards, ==, 8.0);
  g_assert_cmpfloat(plan->expert_optimizer_shards, ==, 1.0);
  int32_t n = plan->schedule_items; /* F, B */
  PtsimAllocTimeline tl = {g_new0(PtsimAllocSample, 2 * n + 3), 2 * n + 3, 0};
  PtsimStageAlloc out;
  replay_stage0(plan, 2, &tl, &out);
  g_assert_true(out.fits);
  g_assert_cmpint(tl.count, ==, 2 * n + 3);
  const PtsimAllocSample *at = tl.samples;
  double start = 2.0 * (D + E) + 4.0 * (D + E) + 4.0 * (D / 8.0 + E);
  double adam = 8.0 * (D / 8.0 + E);
  g_assert_cmpfloat(start, ==, 66808080384.0);
  g_assert_cmpfloat(adam, ==, 46702792704.0);
  g_assert_cmpfloat(at[0].allocated_bytes, >=, start);
  g_assert_cmpfloat(at[0].allocated_bytes, <=, start + 461 * MiB);
  /* step 0's items free what they take; its optimizer step adds Adam */
  g_assert_cmpfloat(at[n].allocated_bytes, ==, at[0].allocated_bytes);
  g_assert_cmpfloat(at[n + 1].allocated_bytes - at[n].allocated_bytes, >=, adam);
  g_assert_cmpfloat(at[n + 1].allocated_bytes - at[n].allocated_bytes, <=, adam + 364 * MiB);
  /* step 1's optimizer step creates nothing */
  g_assert_cmpfloat(at[2 * n + 2].allocated_bytes, ==, at[2 * n + 1].allocated_bytes);
  g_assert_cmpfloat(out.steady_state.allocated_peak_bytes - out.first_step.allocated_peak_bytes, >,
                    0.0);
  g_free(tl.samples);
}

/* The runs verdict's floor (ptsim_memory_held_floor_bytes: weights,
 * gradients, optimizer states and saved activations of the estimate) is
 * below what the emulation allocates for MoE layouts too: every term the
 * estimate adds for experts, MLA and the MTP layers is replayed (an MTP
 * layer raises the replay's peak by at least what it adds to the floor). */
static void test_floor_below_emulation(void) {
  g_test_summary(
      "MoE: held floor <= the emulation's allocated peak (Mixtral tp 2 pp 2 ep 4, Qwen3 ep 4 "
      "etp 1, DeepSeek-V2-Lite with an MTP layer; recompute none and full)");
  static const struct {
    const char *model;
    gint64 gpus, tp, pp, ep, etp, mtp;
  } cases[] = {{"mixtral-8x7b", 16, 2, 2, 4, 0, 0},
               {"qwen3-30b-a3b", 8, 2, 1, 4, 1, 0},
               {"deepseek-v2-lite", 8, 1, 1, 8, 0, 1}};
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++)
    for (int r = 0; r < 2; r++) {
      PtsimJob job;
      g_autoptr(GError) error = NULL;
      g_assert_true(moe_job(&job, cases[i].model, "h200-141g", cases[i].gpus, cases[i].tp,
                            cases[i].pp, cases[i].ep, cases[i].etp, &error));
      job.model.mtp_num_layers = cases[i].mtp;
      job.layout.gbs = 4 * job.layout.dp;
      job.settings.recompute = r ? PTSIM_RECOMPUTE_FULL : PTSIM_RECOMPUTE_NONE;
      g_assert_true(ptsim_job_validate(&job, &error));
      g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
      g_autofree PtsimMemoryEstimate *m = g_new0(PtsimMemoryEstimate, 1);
      g_autofree PtsimAllocResult *a = g_new0(PtsimAllocResult, 1);
      ptsim_plan_build(&job, plan);
      ptsim_memory_estimate(plan, PTSIM_CE_LAST_STAGE, m);
      g_assert_true(ptsim_simulate_allocator(plan, 2, NULL, NULL, 0.0, NULL, a, &error));
      double most = 0.0;
      for (int64_t s = 0; s < a->num_stages; s++) {
        g_assert_true(a->stages[s].fits);
        most = MAX(most, a->stages[s].allocated_peak_bytes);
      }
      g_assert_cmpfloat(ptsim_memory_held_floor_bytes(m), <=, most);
      if (i == 2 && r == 0) { /* the same without its MTP layer */
        double with_floor = ptsim_memory_held_floor_bytes(m), with_peak = most;
        job.model.mtp_num_layers = 0;
        g_assert_true(ptsim_job_validate(&job, &error));
        ptsim_plan_build(&job, plan);
        ptsim_memory_estimate(plan, PTSIM_CE_LAST_STAGE, m);
        g_assert_true(ptsim_simulate_allocator(plan, 2, NULL, NULL, 0.0, NULL, a, &error));
        /* the replay holds what the MTP layer adds to the floor, activations included */
        g_assert_cmpfloat(with_peak - a->stages[0].allocated_peak_bytes, >=,
                          with_floor - ptsim_memory_held_floor_bytes(m));
      }
    }
}

static void test_pair_replay(void) {
  g_test_summary("combined 1F1B in the allocator replay: the paired forward's first layer held "
                 "beside the backward, Mixtral 8x7B ep 8 on H200");
  /* test_pair_memory's job at seq 1024 on H200 (it fits there), m = 4:
   * the allocated peak grows by the first layer's saved set while a
   * paired backward runs.  test_memory_terms' 990,183,424 B at seq 4096
   * is linear in s (flash attention keeps no s x s term): L = 247,545,856
   * B at 1024; the replay's set may keep less past the layer than the
   * estimate counts (more than half of it here), and not more than L plus
   * a 512 B rounding of each of its at most 17 tensors (lifetimes_int.h). */
  const double L = 247545856.0;
  PtsimJob job;
  g_autoptr(GError) error = NULL;
  g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
  g_autofree PtsimAllocResult *a = g_new0(PtsimAllocResult, 1);
  g_autofree PtsimAllocResult *b = g_new0(PtsimAllocResult, 1);
  g_assert_true(moe_job(&job, "mixtral-8x7b", "h200-141g", 8, 1, 1, 8, 0, &error));
  job.layout.gbs = 4 * job.layout.dp;
  job.layout.seq = 1024;
  g_assert_true(ptsim_job_validate(&job, &error));
  ptsim_plan_build(&job, plan);
  g_assert_true(ptsim_simulate_allocator(plan, 2, NULL, NULL, 0.0, NULL, a, &error));
  g_assert_true(a->stages[0].fits);
  job.settings.moe_ep_comm_overlap = 1;
  g_assert_true(ptsim_job_validate(&job, &error));
  ptsim_plan_build(&job, plan);
  g_assert_true(ptsim_simulate_allocator(plan, 2, NULL, NULL, 0.0, NULL, b, &error));
  g_assert_true(b->stages[0].fits);
  double grew = b->stages[0].allocated_peak_bytes - a->stages[0].allocated_peak_bytes;
  g_test_message("replay peak grew by %.0f B", grew);
  g_assert_cmpfloat(grew, >, 0.5 * L);
  g_assert_cmpfloat(grew, <=, L + 512.0 * 17.0);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  for (size_t i = 0; i < G_N_ELEMENTS(counts); i++) {
    g_autofree char *path = g_strdup_printf("/moe/parameters/%s", counts[i].model);
    g_test_add_data_func(path, &counts[i], check_count);
  }
  g_test_add_func("/moe/parameters/mtp-block", test_mtp_block);
  g_test_add_func("/moe/layer-freq", test_layer_freq);
  g_test_add_func("/moe/folding/groups", test_folding_groups);
  g_test_add_func("/moe/folding/checks", test_folding_checks);
  g_test_add_func("/moe/plan/layers", test_plan_layers);
  g_test_add_func("/moe/workload/all-to-all", test_all_to_all);
  g_test_add_func("/moe/workload/flex-forwarding", test_flex_forwarding);
  g_test_add_func("/moe/workload/flops", test_flops);
  g_test_add_func("/moe/workload/sampled-load", test_sampled_load);
  g_test_add_func("/moe/memory/terms", test_memory_terms);
  g_test_add_func("/moe/combined-1f1b/pair-period", test_pair_period);
  g_test_add_func("/moe/combined-1f1b/pair-memory", test_pair_memory);
  g_test_add_func("/moe/combined-1f1b/refusals", test_pair_refusals);
  g_test_add_func("/moe/combined-1f1b/pair-replay", test_pair_replay);
  g_test_add_func("/moe/lifetimes/expert-states-at-first-step", test_expert_states_at_first_step);
  g_test_add_func("/moe/lifetimes/floor-below-emulation", test_floor_below_emulation);
  return g_test_run();
}
