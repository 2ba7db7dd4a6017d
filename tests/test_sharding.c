/* test_sharding.c — sharded data parallelism (plan.c "Sharding",
 * sharding.c, its terms in memory.c and workload.c): a pass over units
 * timed as the stream rules say, worked by hand; each mode's memory on a
 * tiny model by hand; what one unit's all-gather and reduce-scatter move;
 * the effects the engine and the allocator replay must show; the same for
 * a tiny mixture-of-experts model, whose experts shard over edp (torch's
 * FSDP2 with experts: test_sharding_experts.c).
 *
 * The tiny model is test_memory.c's: L2 h64 hffn256 a4 k4 v1000, SwiGLU,
 * RMSNorm, untied.  A layer unit holds 65664 parameters (attention 16384,
 * MLP 49152, norms 128), the embedding unit 64000, the output unit 64064
 * (final norm 64 + LM head 64000): 259392 on one stage. */
#include <math.h>
#include <string.h>

#include <glib.h>

#include "config.h"
#include "job_validate.h"
#include "names.h"
#include "memory.h"
#include "plan.h"
#include "sharding.h"
#include "sharding_fixture.h"
#include "simulate.h"
#include "workload.h"

#define LAYER 65664.0
#define EMB 64000.0
#define HEAD 64064.0
#define P (2.0 * LAYER + EMB + HEAD)

/* ---- passes ---- */

static PtsimShardPass uniform(int64_t n, double c, double g, double r, double a) {
  PtsimShardPass p;
  memset(&p, 0, sizeof p);
  p.count = n;
  p.middle.compute_s = c;
  p.middle.gather_s = g;
  p.middle.reduce_s = r;
  p.middle.replicate_s = a;
  return p;
}

static void test_pass_forward(void) {
  g_test_summary("equal units: g + c + (n-1) max(c, g) with prefetch, n (g + c) without");
  PtsimShardPass a = uniform(5, 10.0, 3.0, 0.0, 0.0), b = uniform(5, 2.0, 3.0, 0.0, 0.0);
  g_assert_cmpfloat(ptsim_sharding_pass_s(&a, 1, 0), ==, 3.0 + 10.0 + 4.0 * 10.0);
  g_assert_cmpfloat(ptsim_sharding_pass_s(&b, 1, 0), ==, 3.0 + 2.0 + 4.0 * 3.0);
  g_assert_cmpfloat(ptsim_sharding_pass_s(&a, 0, 0), ==, 5.0 * 13.0);
  g_assert_cmpfloat(ptsim_sharding_pass_s(&b, 0, 0), ==, 5.0 * 5.0);
  /* nothing to gather: the plain compute; no units: nothing */
  PtsimShardPass c = uniform(5, 2.0, 0.0, 0.0, 0.0), d = uniform(0, 1.0, 1.0, 1.0, 1.0);
  g_assert_cmpfloat(ptsim_sharding_pass_s(&c, 1, 0), ==, 10.0);
  g_assert_cmpfloat(ptsim_sharding_pass_s(&d, 1, 1), ==, 0.0);
}

static void test_pass_backward(void) {
  g_test_summary("backward, by hand: AG(i+1) before RS(i) on one stream, the trailing RS and "
                 "the replicas' all-reduce end the pass");
  /* c 10, g 2, r 3 (g + r < c): only the first gather and the last
   * reduce-scatter are exposed: 2 + 3 x 10 + 3 */
  PtsimShardPass a = uniform(3, 10.0, 2.0, 3.0, 0.0);
  g_assert_cmpfloat(ptsim_sharding_pass_s(&a, 1, 1), ==, 35.0);
  /* c 1: AG0 [0,2]; C0 [2,3]; AG1 [2,4]; RS0 [4,7]; C1 [4,5]; AG2 [7,9];
   * RS1 [9,12]; C2 [9,10]; RS2 [12,15] */
  PtsimShardPass b = uniform(3, 1.0, 2.0, 3.0, 0.0);
  g_assert_cmpfloat(ptsim_sharding_pass_s(&b, 1, 1), ==, 15.0);
  /* + all-reduce 4 after each RS: [7,11], [12,16], [16,20] */
  PtsimShardPass c = uniform(3, 1.0, 2.0, 3.0, 4.0);
  g_assert_cmpfloat(ptsim_sharding_pass_s(&c, 1, 1), ==, 20.0);
  /* no prefetch: AG0 [0,2]; C0 [2,3]; RS0 [3,6]; AG1 [6,8]; C1 [8,9]; RS1
   * [9,12]; AG2 [12,14]; C2 [14,15]; RS2 [15,18] */
  g_assert_cmpfloat(ptsim_sharding_pass_s(&b, 0, 1), ==, 18.0);
  /* reduce only (ZeRO-2): n c + r */
  PtsimShardPass d = uniform(4, 5.0, 0.0, 1.0, 0.0);
  g_assert_cmpfloat(ptsim_sharding_pass_s(&d, 1, 1), ==, 21.0);
}

static void test_pass_ends(void) {
  g_test_summary("a first and a last unit of their own: output unit, layers, embedding");
  PtsimShardPass p = uniform(2, 1.0, 1.0, 0.0, 0.0);
  p.has_first = p.has_last = 1;
  p.first.compute_s = 4.0; /* kept gathered: nothing to wait for */
  p.last.compute_s = 1.0;
  p.last.gather_s = 6.0;
  /* C0 [0,4]; AG1 [0,1]; C1 [4,5]; AG2 waits for unit 0 to be freed (4):
   * [4,5]; C2 [5,6]; AG3 waits for unit 1 (5): [5,11]; C3 [11,12] */
  g_assert_cmpfloat(ptsim_sharding_pass_s(&p, 1, 0), ==, 12.0);
}

/* ---- the tiny model ---- */

static void tiny_job(PtsimJob *job, int64_t pp, int64_t dp, const char *sharding,
                     int64_t shard_size, PtsimFsdpImpl impl, int reshard, int prefetch) {
  g_autoptr(GError) error = NULL;
  PtsimLayout *l = &job->layout;
  PtsimSettings *run = &job->settings;
  tiny_base(job, "tiny");
  l->pp = pp;
  l->gpus = pp * dp;
  l->mbs = 1;
  l->gbs = 8 * dp * pp;
  l->seq = 128;
  run->fsdp_impl = impl;
  run->reshard_after_forward = reshard;
  run->fsdp_prefetch = prefetch;
  int mode = -1;
  g_assert_true(ptsim_names_parse(PTSIM_NAMES_SHARDING, sharding, &mode));
  g_assert_true(ptsim_layout_set_sharding(l, 8, mode, shard_size, &error));
  g_assert_true(ptsim_job_validate(job, &error));
  g_assert_no_error(error);
}

typedef struct {
  const char *name, *sharding;
  int64_t shard_size;
  PtsimFsdpImpl impl;
  int reshard, prefetch;
  double params, grads, optim, unsharded;
} MemoryCase;

static void test_memory_by_hand(void) {
  g_test_summary("each mode's states and unsharded buffers on 4 GPUs (tp pp cp 1), by hand");
  /* F = 4: shard group of all 4 ranks; fp32 grads 4 B, master + m + v 12 B.
   * Unsharded, at each unit of the backward order (output, layer, layer,
   * embedding): its gradient (megatron 4 B, torch's bf16 2 B) + the
   * previous unit's reduce-scatter input (4 B) + under ZeRO-3 the unit and
   * the next one gathered (2 B); the largest:
   *   zero2     layer, layer: 8 LAYER = 525312
   *   megatron  layer, layer + gathered layer + embedding:
   *             525312 + 2 LAYER + 2 EMB = 784640
   *   torch     2 LAYER + 4 LAYER + 2 LAYER + 2 EMB = 653312
   *   never     all gathered 2P = 518784, + the gradients 525312
   *   no prefetch  525312 + 2 LAYER = 656640 */
  static const MemoryCase cases[] = {
      {"ddp", "ddp", -1, PTSIM_FSDP_MEGATRON, PTSIM_RESHARD_AUTO, 1, 2 * P, 4 * P, 12 * P, 0},
      {"zero1", "zero1", -1, PTSIM_FSDP_MEGATRON, PTSIM_RESHARD_AUTO, 1, 2 * P, 4 * P, 3 * P, 0},
      {"zero2", "zero2", -1, PTSIM_FSDP_MEGATRON, PTSIM_RESHARD_AUTO, 1, 2 * P, P, 3 * P, 525312},
      {"fsdp megatron", "fsdp", -1, PTSIM_FSDP_MEGATRON, PTSIM_RESHARD_AUTO, 1, P / 2, P, 3 * P,
       784640},
      {"fsdp torch", "fsdp", -1, PTSIM_FSDP_TORCH, PTSIM_RESHARD_AUTO, 1, 0, P, 3 * P, 653312},
      {"hsdp 2 x 2", "hsdp", 2, PTSIM_FSDP_MEGATRON, PTSIM_RESHARD_AUTO, 1, P, 2 * P, 6 * P,
       784640},
      {"fsdp never", "fsdp", -1, PTSIM_FSDP_MEGATRON, PTSIM_RESHARD_NEVER, 1, P / 2, P, 3 * P,
       2 * P + 525312},
      {"fsdp no prefetch", "fsdp", -1, PTSIM_FSDP_MEGATRON, PTSIM_RESHARD_AUTO, 0, P / 2, P, 3 * P,
       656640},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    const MemoryCase *c = &cases[i];
    PtsimJob job;
    PtsimMemoryEstimate est;
    tiny_job(&job, 1, 4, c->sharding, c->shard_size, c->impl, c->reshard, c->prefetch);
    g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
    ptsim_plan_build(&job, plan);
    ptsim_memory_estimate(plan, PTSIM_CE_LAST_STAGE, &est);
    const PtsimStageMemory *s = &est.stages[0];
    g_test_message("%s: %.0f %.0f %.0f %.0f", c->name, s->parameters_bytes, s->gradients_bytes,
                   s->optimizer_bytes, s->unsharded_bytes);
    g_assert_cmpfloat(s->parameters, ==, P);
    g_assert_cmpfloat(s->parameters_bytes, ==, c->params);
    g_assert_cmpfloat(s->gradients_bytes, ==, c->grads);
    g_assert_cmpfloat(s->optimizer_bytes, ==, c->optim);
    g_assert_cmpfloat(s->unsharded_bytes, ==, c->unsharded);
    g_assert_cmpfloat(s->total_bytes, ==,
                      s->parameters_bytes + s->gradients_bytes + s->optimizer_bytes +
                          s->activations_bytes + s->other_bytes + s->unsharded_bytes);
  }
}

static void test_memory_pp_torch(void) {
  g_test_summary("torch under PP (sync_once): every unit gathered all step, gradients "
                 "accumulated unsharded in fp32, only master + m + v sharded");
  PtsimJob job;
  PtsimMemoryEstimate est;
  tiny_job(&job, 2, 4, "fsdp", -1, PTSIM_FSDP_TORCH, PTSIM_RESHARD_AUTO, 1);
  g_assert_cmpint(job.settings.reshard_after_forward, ==, PTSIM_RESHARD_NEVER);
  g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
  ptsim_plan_build(&job, plan);
  g_assert_true(plan->sync_once);
  ptsim_memory_estimate(plan, PTSIM_CE_LAST_STAGE, &est);
  const PtsimStageMemory *s = &est.stages[0]; /* one layer + the embedding */
  double p0 = LAYER + EMB;
  g_assert_cmpfloat(s->parameters, ==, p0);
  g_assert_cmpfloat(s->parameters_bytes, ==, 0.0);
  g_assert_cmpfloat(s->gradients_bytes, ==, 4.0 * p0);
  g_assert_cmpfloat(s->optimizer_bytes, ==, 12.0 * p0 / 4.0);
  g_assert_cmpfloat(s->unsharded_bytes, ==, 2.0 * p0);
}

/* ---- what one unit moves ---- */

static void test_unit_volume(void) {
  g_test_summary("one unit's all-gather (bf16, or fp8 matrices) and reduce-scatter (the "
                 "gradient dtype) bytes, and the workload's times are the cost model's");
  PtsimJob job;
  tiny_job(&job, 1, 4, "hsdp", 2, PTSIM_FSDP_TORCH, PTSIM_RESHARD_AUTO, 1);
  g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
  g_autofree PtsimWorkload *w = g_new0(PtsimWorkload, 1);
  ptsim_plan_build(&job, plan);
  g_assert_cmpfloat(plan->unit_parameters[PTSIM_UNIT_LAYER], ==, LAYER);
  g_assert_cmpfloat(plan->unit_parameters[PTSIM_UNIT_EMBEDDING], ==, EMB);
  g_assert_cmpfloat(plan->unit_parameters[PTSIM_UNIT_HEAD], ==, HEAD);
  g_assert_cmpfloat(plan->unit_gather_bytes[PTSIM_UNIT_LAYER], ==, 2.0 * LAYER);
  g_assert_cmpfloat(plan->unit_reduce_bytes[PTSIM_UNIT_LAYER], ==, 4.0 * LAYER);
  g_assert_cmpfloat(plan->unit_gather_bytes[PTSIM_UNIT_HEAD], ==, 2.0 * HEAD);
  g_assert_cmpint(plan->shard_group.size, ==, 2);
  g_assert_cmpint(plan->replicate_group.size, ==, 2);
  ptsim_workload_build(plan, NULL, w);
  g_assert_cmpfloat(w->unit_gather_s[PTSIM_UNIT_LAYER], ==,
                    ptsim_cost_collective_s(&job.hw, NULL, PTSIM_COLL_ALL_GATHER, 2.0 * LAYER,
                                            &plan->shard_group));
  g_assert_cmpfloat(w->unit_reduce_s[PTSIM_UNIT_LAYER], ==,
                    ptsim_cost_collective_s(&job.hw, NULL, PTSIM_COLL_REDUCE_SCATTER, 4.0 * LAYER,
                                            &plan->shard_group));
  /* the replicas all-reduce the reduced shard: 4 LAYER / 2 */
  g_assert_cmpfloat(w->unit_replicate_s[PTSIM_UNIT_LAYER], ==,
                    ptsim_cost_collective_s(&job.hw, NULL, PTSIM_COLL_ALL_REDUCE, 2.0 * LAYER,
                                            &plan->replicate_group));
  g_assert_cmpfloat(w->unit_replicate_s[PTSIM_UNIT_LAYER], >, 0.0);

  /* fp8 all-gather: the 65536 matrix parameters in 1 B, the 128 norm ones
   * in 2; 2-byte gradients halve the reduce-scatter */
  job.settings.precision = PTSIM_PRECISION_FP8;
  job.settings.fp8_param_gather = 1;
  job.settings.fp32_grad_accumulation = 0;
  ptsim_plan_build(&job, plan);
  g_assert_cmpfloat(plan->unit_gather_bytes[PTSIM_UNIT_LAYER], ==, 65536.0 + 2.0 * 128.0);
  g_assert_cmpfloat(plan->unit_reduce_bytes[PTSIM_UNIT_LAYER], ==, 2.0 * LAYER);
  g_assert_cmpfloat(plan->unit_gather_bytes[PTSIM_UNIT_EMBEDDING], ==, 2.0 * EMB);
}

static void test_chunk_pass(void) {
  g_test_summary("a chunk's forward is the pass over [embedding, layers, output]; what exceeds "
                 "the plain compute is exposed dp");
  PtsimJob job;
  tiny_job(&job, 1, 4, "fsdp", -1, PTSIM_FSDP_MEGATRON, PTSIM_RESHARD_AUTO, 1);
  g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
  g_autofree PtsimWorkload *w = g_new0(PtsimWorkload, 1);
  ptsim_plan_build(&job, plan);
  ptsim_workload_build(plan, NULL, w);
  PtsimWork work;
  ptsim_workload_chunk(w, 0, 0, &work);
  PtsimShardPass f;
  memset(&f, 0, sizeof f);
  f.has_first = f.has_last = 1;
  f.count = 2;
  f.first.compute_s = w->embedding.forward_s;
  f.first.gather_s = w->unit_gather_s[PTSIM_UNIT_EMBEDDING];
  f.middle.compute_s = w->layer.forward_s;
  f.middle.gather_s = w->unit_gather_s[PTSIM_UNIT_LAYER];
  f.last.compute_s = w->head.forward_s;
  f.last.gather_s = w->unit_gather_s[PTSIM_UNIT_HEAD];
  double plain = 2.0 * w->layer.forward_s + w->embedding.forward_s + w->head.forward_s;
  double pass = ptsim_sharding_pass_s(&f, 1, 0);
  g_assert_cmpfloat(pass, >, plain); /* at least the first gather waits */
  g_assert_cmpfloat(fabs(work.forward_s - pass), <=, 1e-12 * pass);
  g_assert_cmpfloat(fabs(work.forward_comm_s[PTSIM_COMM_DP] - (pass - plain)), <=, 1e-12 * pass);
  g_assert_cmpfloat(work.backward_comm_s[PTSIM_COMM_DP], >, 0.0);
}

/* ---- the engine and the allocator ---- */

static double step_of(const PtsimJob *job, double *dp_exposed) {
  g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
  g_autofree PtsimTimeResult *t = g_new0(PtsimTimeResult, 1);
  g_autoptr(GError) error = NULL;
  ptsim_plan_build(job, plan);
  g_assert_true(ptsim_simulate(plan, NULL, t, &error));
  if (dp_exposed) *dp_exposed = t->exposed_comm_s[PTSIM_COMM_DP];
  return t->step_s;
}

static void llama_job(PtsimJob *job, const char *sharding, int reshard, int prefetch) {
  g_autoptr(GError) error = NULL;
  memset(job, 0, sizeof *job);
  g_assert_true(ptsim_model_load("llama3-8b", &job->model, &error));
  g_assert_true(ptsim_hardware_load("h100-80g", &job->hw, &error));
  ptsim_job_init_defaults(job);
  job->layout.gpus = 64;
  job->layout.gbs = 128;
  job->layout.seq = 4096;
  job->settings.reshard_after_forward = reshard;
  job->settings.fsdp_prefetch = prefetch;
  job->settings.overlap_grad_reduce = job->settings.overlap_param_gather = 1;
  int mode = -1;
  g_assert_true(ptsim_names_parse(PTSIM_NAMES_SHARDING, sharding, &mode));
  g_assert_true(ptsim_layout_set_sharding(&job->layout, 8, mode, -1, &error));
  g_assert_true(ptsim_job_validate(job, &error));
}

static void test_engine_effects(void) {
  g_test_summary("Llama 3 8B on 64 H100s: FSDP exposes dp time ZeRO-1 hides; prefetch hides "
                 "more; keeping units gathered saves the backward all-gathers");
  PtsimJob zero1, fsdp, no_prefetch, never;
  double e1, e3, e_np;
  llama_job(&zero1, "zero1", PTSIM_RESHARD_AUTO, 1);
  llama_job(&fsdp, "fsdp", PTSIM_RESHARD_AUTO, 1);
  llama_job(&no_prefetch, "fsdp", PTSIM_RESHARD_AUTO, 0);
  llama_job(&never, "fsdp", PTSIM_RESHARD_NEVER, 1);
  double s1 = step_of(&zero1, &e1), s3 = step_of(&fsdp, &e3), snp = step_of(&no_prefetch, &e_np);
  double sn = step_of(&never, NULL);
  g_test_message("step zero1 %.4f fsdp %.4f (dp %.4f) no prefetch %.4f (dp %.4f) never %.4f", s1,
                 s3, e3, snp, e_np, sn);
  g_assert_cmpfloat(s3, >, s1);
  g_assert_cmpfloat(e3, >, e1);
  g_assert_cmpfloat(snp, >, s3);
  g_assert_cmpfloat(e_np, >, e3);
  g_assert_cmpfloat(sn, <=, s3);
}

static void test_allocator(void) {
  g_test_summary("the allocator replay holds each mode's states: its allocated peak is at least "
                 "the estimate's held floor, and ZeRO-3 on 64 ranks needs far less than ZeRO-1");
  static const char *const modes[] = {"zero1", "zero2", "fsdp", "hsdp"};
  double peak[4];
  for (int k = 0; k < 4; k++) {
    PtsimJob job;
    PtsimMemoryEstimate est;
    g_autoptr(GError) error = NULL;
    llama_job(&job, modes[k], PTSIM_RESHARD_AUTO, 1);
    if (k == 3) { /* one replica per node pair: shard 32 */
      g_assert_true(
          ptsim_layout_set_sharding(&job.layout, 8, PTSIM_SHARDING_MODE_HSDP, 32, &error));
      g_assert_true(ptsim_job_validate(&job, &error));
    }
    g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
    g_autofree PtsimAllocResult *a = g_new0(PtsimAllocResult, 1);
    ptsim_plan_build(&job, plan);
    ptsim_memory_estimate(plan, PTSIM_CE_LAST_STAGE, &est);
    g_assert_true(ptsim_simulate_allocator(plan, 2, NULL, NULL, 0.0, NULL, a, &error));
    g_assert_no_error(error);
    peak[k] = a->stages[0].allocated_peak_bytes;
    g_test_message("%s: allocated %.2f GiB, estimate %.2f GiB", modes[k], peak[k] / 1073741824.0,
                   est.total_bytes / 1073741824.0);
    g_assert_cmpfloat(peak[k], >=, ptsim_memory_held_floor_bytes(&est));
  }
  g_assert_cmpfloat(peak[1], <, peak[0]);
  g_assert_cmpfloat(peak[2], <, peak[1]);
  g_assert_cmpfloat(peak[3], >, peak[2]); /* shard 32 holds twice the shard of 64 */
}

/* ---- a mixture-of-experts model (Megatron-FSDP shards the routed experts
 * over the expert data-parallel group) ----
 *
 * The tiny model with both layers MoE: 4 experts of width 128, top-2, no
 * shared experts; on 8 GPUs with ep 2 (tp pp cp 1): dp 8, edp 8 / (etp ep
 * pp) = 4, 2 local experts.  An MoE layer on one GPU: attention 16384, two
 * norms 128, router 4 x 64 = 256, experts 2 x 3 x 64 x 128 = 49152: 65920,
 * of it 16768 dense.  With the embedding and the output unit the stage
 * holds 259904 parameters, 98304 of them experts and 161600 dense. */

#define MOE_LAYER 65920.0
#define EXPERTS 49152.0
#define PM (2.0 * MOE_LAYER + EMB + HEAD)
#define PE (2.0 * EXPERTS)
#define PD (PM - PE)

/* The tiny MoE model (above) on 8 GPUs with ep 2 (sharding_fixture.h). */
static gboolean tiny_moe_job(PtsimJob *job, const char *sharding, int64_t shard_size,
                             PtsimFsdpImpl impl, GError **error) {
  return tiny_experts_job(job, 4, 8, 2, sharding, shard_size, impl, error);
}

static void plan_of(const char *sharding, int64_t shard_size, PtsimJob *job, PtsimPlan *plan) {
  g_autoptr(GError) error = NULL;
  g_assert_true(tiny_moe_job(job, sharding, shard_size, PTSIM_FSDP_MEGATRON, &error));
  g_assert_no_error(error);
  ptsim_plan_build(job, plan);
}

typedef struct {
  const char *name, *sharding;
  int64_t shard_size;
  double params, grads, optim, unsharded;
} MoeMemoryCase;

static void test_moe_memory(void) {
  g_test_summary("each mode's states on the tiny MoE model: the dense part over dp x cp, the "
                 "routed experts over edp, and the unsharded units, by hand");
  /* F = 8 (dp), E = 4 (edp); fp32 grads, master + m + v 12 B.
   *   zero1    optimizer 12 (PD/8 + PE/4) = 537312
   *   zero2    + gradients 4 (PD/8 + PE/4) = 179104; unsharded: a unit's
   *            gradient and the previous one's reduce-scatter input, the
   *            largest at the second MoE layer: 8 MOE_LAYER = 527360
   *   fsdp     + weights 2 (PD/8 + PE/4) = 89552; unsharded in backward
   *            (output, MoE, MoE, embedding) at the second MoE layer:
   *            8 MOE_LAYER + 2 MOE_LAYER + 2 EMB = 787200
   *   hsdp 4x2 F = 4, E = 4 / 2 = 2: weights 2 (PD/4 + PE/2) = 179104,
   *            gradients 358208, optimizer 1074624 */
  static const MoeMemoryCase cases[] = {
      {"zero1", "zero1", -1, 2 * PM, 4 * PM, 537312, 0},
      {"zero2", "zero2", -1, 2 * PM, 179104, 537312, 527360},
      {"fsdp", "fsdp", -1, 89552, 179104, 537312, 787200},
      {"hsdp 4 x 2", "hsdp", 4, 179104, 358208, 1074624, 787200},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    const MoeMemoryCase *c = &cases[i];
    PtsimJob job;
    PtsimMemoryEstimate est;
    g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
    plan_of(c->sharding, c->shard_size, &job, plan);
    g_assert_cmpint(job.layout.edp, ==, 4);
    ptsim_memory_estimate(plan, PTSIM_CE_LAST_STAGE, &est);
    const PtsimStageMemory *s = &est.stages[0];
    g_test_message("%s: %.0f %.0f %.0f %.0f", c->name, s->parameters_bytes, s->gradients_bytes,
                   s->optimizer_bytes, s->unsharded_bytes);
    g_assert_cmpfloat(s->parameters, ==, PM);
    g_assert_cmpfloat(s->expert_parameters, ==, PE);
    g_assert_cmpfloat(s->parameters_bytes, ==, c->params);
    g_assert_cmpfloat(s->gradients_bytes, ==, c->grads);
    g_assert_cmpfloat(s->optimizer_bytes, ==, c->optim);
    g_assert_cmpfloat(s->unsharded_bytes, ==, c->unsharded);
  }
}

static void test_moe_unit_volume(void) {
  g_test_summary("an MoE unit all-gathers and reduce-scatters its dense part over the shard "
                 "group and its experts over the expert shard group; HSDP's replicas all-reduce "
                 "both shards once per step (megatron)");
  PtsimJob job;
  g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
  g_autofree PtsimWorkload *w = g_new0(PtsimWorkload, 1);
  plan_of("hsdp", 4, &job, plan);
  g_assert_cmpint(plan->shard_group.size, ==, 4);
  g_assert_cmpint(plan->replicate_group.size, ==, 2);
  g_assert_cmpint(plan->expert_shard_group.size, ==, 2);
  g_assert_cmpint(plan->expert_replicate_group.size, ==, 2);
  g_assert_cmpfloat(plan->unit_parameters[PTSIM_UNIT_MOE_LAYER], ==, MOE_LAYER);
  g_assert_cmpfloat(plan->unit_expert_parameters[PTSIM_UNIT_MOE_LAYER], ==, EXPERTS);
  g_assert_cmpfloat(plan->unit_gather_bytes[PTSIM_UNIT_MOE_LAYER], ==, 2.0 * MOE_LAYER);
  g_assert_cmpfloat(plan->unit_expert_gather_bytes[PTSIM_UNIT_MOE_LAYER], ==, 2.0 * EXPERTS);
  g_assert_cmpfloat(plan->unit_expert_parameters[PTSIM_UNIT_LAYER], ==, 0.0);
  ptsim_workload_build(plan, NULL, w);
  const PtsimHardware *hw = &job.hw;
  double dense = MOE_LAYER - EXPERTS; /* 16768 */
  g_assert_cmpfloat(w->unit_gather_s[PTSIM_UNIT_MOE_LAYER], ==,
                    ptsim_cost_collective_s(hw, NULL, PTSIM_COLL_ALL_GATHER, 2.0 * dense,
                                            &plan->shard_group) +
                        ptsim_cost_collective_s(hw, NULL, PTSIM_COLL_ALL_GATHER, 2.0 * EXPERTS,
                                                &plan->expert_shard_group));
  g_assert_cmpfloat(w->unit_reduce_s[PTSIM_UNIT_MOE_LAYER], ==,
                    ptsim_cost_collective_s(hw, NULL, PTSIM_COLL_REDUCE_SCATTER, 4.0 * dense,
                                            &plan->shard_group) +
                        ptsim_cost_collective_s(hw, NULL, PTSIM_COLL_REDUCE_SCATTER, 4.0 * EXPERTS,
                                                &plan->expert_shard_group));
  g_assert_cmpfloat(w->unit_replicate_s[PTSIM_UNIT_MOE_LAYER], ==, 0.0); /* megatron: per step */
  /* once per step: the dense shard (4 PD / 4) and the experts' (4 PE / 2)
   * all-reduced over their replicas; tp 1: no router all-reduce */
  g_assert_cmpfloat(w->grad_sync_s[0], ==,
                    ptsim_cost_collective_s(hw, NULL, PTSIM_COLL_ALL_REDUCE, PD,
                                            &plan->replicate_group) +
                        ptsim_cost_collective_s(hw, NULL, PTSIM_COLL_ALL_REDUCE, 2.0 * PE,
                                                &plan->expert_replicate_group));
  g_assert_cmpfloat(w->param_gather_s[0], ==, 0.0);

  /* ZeRO-2 gathers the updated weights after the step, each part over its group */
  plan_of("zero2", -1, &job, plan);
  ptsim_workload_build(plan, NULL, w);
  g_assert_cmpint(plan->expert_shard_group.size, ==, 4);
  g_assert_cmpfloat(w->param_gather_s[0], ==,
                    ptsim_cost_collective_s(hw, NULL, PTSIM_COLL_ALL_GATHER, 2.0 * PD,
                                            &plan->shard_group) +
                        ptsim_cost_collective_s(hw, NULL, PTSIM_COLL_ALL_GATHER, 2.0 * PE,
                                                &plan->expert_shard_group));
}

static void mixtral_job(PtsimJob *job, const char *sharding) {
  g_autoptr(GError) error = NULL;
  memset(job, 0, sizeof *job);
  g_assert_true(ptsim_model_load("mixtral-8x7b", &job->model, &error));
  g_assert_true(ptsim_hardware_load("h100-80g", &job->hw, &error));
  ptsim_job_init_defaults(job);
  job->layout.gpus = 64;
  job->layout.pp = 2;
  job->layout.ep = 8;
  job->layout.gbs = 128;
  job->layout.seq = 4096;
  job->settings.moe_dispatcher = PTSIM_DISPATCH_ALLTOALL;
  job->settings.overlap_grad_reduce = job->settings.overlap_param_gather = 1;
  int mode = -1;
  g_assert_true(ptsim_names_parse(PTSIM_NAMES_SHARDING, sharding, &mode));
  g_assert_true(ptsim_layout_set_sharding(&job->layout, 8, mode, -1, &error));
  g_assert_true(ptsim_job_validate(job, &error));
  g_assert_no_error(error);
}

static void test_moe_mixtral(void) {
  g_test_summary("Mixtral 8x7B on 64 H100s (pp 2, ep 8, edp 4): each mode's allocator replay "
                 "holds at least the estimate's floor and less than ZeRO-1's; FSDP exposes dp "
                 "time ZeRO-1 hides");
  static const char *const modes[] = {"zero1", "zero2", "fsdp"};
  double peak[3], step[3], dp[3];
  for (int k = 0; k < 3; k++) {
    PtsimJob job;
    PtsimMemoryEstimate est;
    g_autoptr(GError) error = NULL;
    mixtral_job(&job, modes[k]);
    g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
    g_autofree PtsimAllocResult *a = g_new0(PtsimAllocResult, 1);
    g_autofree PtsimTimeResult *t = g_new0(PtsimTimeResult, 1);
    ptsim_plan_build(&job, plan);
    g_assert_cmpint(plan->expert_shard_group.size, ==, 4);
    ptsim_memory_estimate(plan, PTSIM_CE_LAST_STAGE, &est);
    g_assert_true(ptsim_simulate_allocator(plan, 2, NULL, NULL, 0.0, NULL, a, &error));
    g_assert_no_error(error);
    g_assert_true(ptsim_simulate(plan, NULL, t, &error));
    peak[k] = a->stages[0].allocated_peak_bytes;
    step[k] = t->step_s;
    dp[k] = t->exposed_comm_s[PTSIM_COMM_DP];
    g_test_message("%s: allocated %.2f GiB, estimate %.2f GiB, step %.4f s (dp %.4f)", modes[k],
                   peak[k] / 1073741824.0, est.total_bytes / 1073741824.0, step[k], dp[k]);
    g_assert_cmpfloat(peak[k], >=, ptsim_memory_held_floor_bytes(&est));
  }
  g_assert_cmpfloat(peak[1], <, peak[0]);
  g_assert_cmpfloat(peak[2], <, peak[1]);
  g_assert_cmpfloat(step[2], >, step[0]);
  g_assert_cmpfloat(dp[2], >, dp[0]);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/sharding/pass/forward", test_pass_forward);
  g_test_add_func("/sharding/pass/backward", test_pass_backward);
  g_test_add_func("/sharding/pass/ends", test_pass_ends);
  g_test_add_func("/sharding/memory/by-hand", test_memory_by_hand);
  g_test_add_func("/sharding/memory/pp-torch", test_memory_pp_torch);
  g_test_add_func("/sharding/volume/unit", test_unit_volume);
  g_test_add_func("/sharding/workload/chunk-pass", test_chunk_pass);
  g_test_add_func("/sharding/engine/effects", test_engine_effects);
  g_test_add_func("/sharding/allocator/states", test_allocator);
  g_test_add_func("/sharding/moe/memory", test_moe_memory);
  g_test_add_func("/sharding/moe/unit-volume", test_moe_unit_volume);
  g_test_add_func("/sharding/moe/mixtral", test_moe_mixtral);
  return g_test_run();
}
