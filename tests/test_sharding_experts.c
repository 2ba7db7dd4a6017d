/* test_sharding_experts.c — PyTorch FSDP2 with a mixture-of-experts model
 * (plan.c "Sharding"): torchtitan shards the routed experts over efsdp =
 * dp_shard x cp x tp / ep ranks at stride ep, the rest over dp_shard x cp;
 * by hand on the tiny MoE model (sharding_fixture.h): the estimate's and
 * the allocator replay's bytes, PP's once-per-step reduction, what each
 * part of an MoE unit moves over which group and where the topology puts
 * it, HSDP's per-backward replica all-reduce, and the expert tensor-
 * parallel sizes torchtitan has (and the one left to resolve).
 *
 * The tiny model's units (test_sharding.c): the embedding 64000
 * parameters, the output unit 64064; an MoE layer's local experts 3 x 64 x
 * 128 = 24576 parameters each. */
#include <math.h>
#include <string.h>

#include <glib.h>

#include "lifetimes.h"
#include "memory.h"
#include "plan.h"
#include "schedule.h"
#include "sharding_fixture.h"
#include "simulate.h"
#include "workload.h"

#define EMB 64000.0
#define HEAD 64064.0
#define EXPERTS 49152.0 /* two local experts */
#define PE (2.0 * EXPERTS)

/* ---- torch's FSDP2 with experts (torchtitan: the experts over efsdp =
 * dp_shard x cp x tp / ep ranks, the rest over dp_shard x cp) ----
 *
 * The tiny model with 8 experts, ep 4 on 8 GPUs (etp 1): dp 8, edp 2, 2
 * local experts.  An MoE layer on one GPU: attention 16384, norms 128,
 * router 8 x 64 = 512, experts 2 x 3 x 64 x 128 = 49152: 66176, of it
 * 17024 dense.  The stage: 2 MoE layers, the embedding and the output
 * unit, 260416 parameters, 98304 experts and 162112 dense. */

#define MOE8_LAYER 66176.0
#define PM8 (2.0 * MOE8_LAYER + EMB + HEAD)
#define PD8 (PM8 - PE)

static void torch_experts_plan(PtsimJob *job, PtsimPlan *plan, int64_t gpus, int64_t ep,
                               const char *sharding, int64_t shard_size, PtsimFsdpImpl impl) {
  g_autoptr(GError) error = NULL;
  g_assert_true(tiny_experts_job(job, 8, gpus, ep, sharding, shard_size, impl, &error));
  g_assert_no_error(error);
  ptsim_plan_build(job, plan);
}

/* The tiny model with 8 experts (top 2, expert FFN 128, MoE from layer 3
 * on) on 8 GPUs under torch's FSDP2 over all of them, gbs 64, seq 128;
 * the pipeline, tensor, expert and expert-tensor sizes as given (0: left
 * to resolve). */
static void torch_experts_base(PtsimJob *job, int64_t pp, int64_t tp, int64_t ep, int64_t etp) {
  g_autoptr(GError) error = NULL;
  tiny_base(job, "tiny-moe");
  job->model.num_experts = 8;
  job->model.moe_router_topk = 2;
  job->model.moe_ffn_hidden_size = 128;
  job->model.moe_layers[0] = 3;
  job->layout.gpus = 8;
  job->layout.pp = pp;
  job->layout.tp = tp;
  job->layout.ep = ep;
  job->layout.etp = etp;
  job->layout.gbs = 64;
  job->layout.seq = 128;
  job->settings.fsdp_impl = PTSIM_FSDP_TORCH;
  g_assert_true(ptsim_layout_set_sharding(&job->layout, 8, PTSIM_SHARDING_MODE_FSDP, -1, &error));
  g_assert_no_error(error);
}

static void test_torch_experts_memory(void) {
  g_test_summary("torch's FSDP2, ep 4 on 8 GPUs: expert states / 2 (efsdp), dense states / 8, "
                 "no bf16 shard, the gathered MoE unit holds its two local experts in full; by "
                 "hand, in the estimate and the allocator replay");
  PtsimJob job;
  PtsimMemoryEstimate est;
  g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
  torch_experts_plan(&job, plan, 8, 4, "fsdp", -1, PTSIM_FSDP_TORCH);
  g_assert_cmpint(job.layout.etp, ==, 1);
  g_assert_cmpint(job.layout.edp, ==, 2);
  g_assert_cmpint(plan->local_experts, ==, 2);
  g_assert_cmpfloat(plan->optimizer_shards, ==, 8.0);
  g_assert_cmpfloat(plan->expert_optimizer_shards, ==, 2.0);
  /* the gathered MoE unit: 2 x 66176 bytes, its experts' 2 x 49152 of them
   * (each rank kept 24576 expert parameters of the 49152) */
  g_assert_cmpfloat(plan->unit_gather_bytes[PTSIM_UNIT_MOE_LAYER], ==, 2.0 * MOE8_LAYER);
  g_assert_cmpfloat(plan->unit_expert_gather_bytes[PTSIM_UNIT_MOE_LAYER], ==, 2.0 * EXPERTS);
  ptsim_memory_estimate(plan, PTSIM_CE_LAST_STAGE, &est);
  const PtsimStageMemory *s = &est.stages[0];
  g_assert_cmpfloat(s->parameters, ==, PM8);
  g_assert_cmpfloat(s->expert_parameters, ==, PE);
  /* fp32 shards are the master weights: no bf16 shard; gradients 4 (PD8/8 +
   * PE/2) = 4 x 69416 = 277664; master + m + v 12 x 69416 = 832992 */
  g_assert_cmpfloat(s->parameters_bytes, ==, 0.0);
  g_assert_cmpfloat(s->gradients_bytes, ==, 277664.0);
  g_assert_cmpfloat(s->optimizer_bytes, ==, 832992.0);
  /* unsharded, backward order (output, MoE, MoE, embedding), at the second
   * MoE layer: its bf16 gradient 2 M + the first's fp32 reduce-scatter
   * input 4 M + itself and the embedding gathered 2 M + 2 EMB:
   * 8 x 66176 + 128000 = 657408 */
  g_assert_cmpfloat(s->unsharded_bytes, ==, 657408.0);

  /* the replay after a steady optimizer step holds the same states: 4 unit
   * gradient shards and 3 x 2 parts of master, m and v, each rounded up to
   * 512 B, beside the workspaces */
  int32_t n = plan->schedule_items;
  g_autofree PtsimScheduleItem *items = g_new(PtsimScheduleItem, n);
  ptsim_schedule_build(job.layout.schedule, (int32_t)plan->num_stages,
                       (int32_t)plan->num_microbatches, (int32_t)plan->num_chunks,
                       (int32_t)plan->microbatch_group, 0, items, n);
  int64_t bytes = ptsim_lifetimes_scratch_bytes(plan, 0);
  g_autofree void *scratch = g_malloc(bytes);
  PtsimAllocTimeline tl = {NULL, ptsim_lifetimes_timeline_samples(n, 2), 0};
  g_autofree PtsimAllocSample *samples = g_new(PtsimAllocSample, tl.capacity);
  tl.samples = samples;
  g_autofree PtsimStageAlloc *out = g_new0(PtsimStageAlloc, 1);
  g_assert_cmpint(ptsim_lifetimes_replay(plan, 0, items, n, 2, NULL, 1, scratch, bytes, &tl, out),
                  ==, 0);
  double held = samples[tl.count - 1].allocated_bytes - ptsim_memory_workspace_bytes(plan, 0);
  g_test_message("steady allocated less workspaces %.0f (states 1110656)", held);
  g_assert_cmpfloat(held, >=, 277664.0 + 832992.0);
  g_assert_cmpfloat(held, <, 277664.0 + 832992.0 + 10.0 * 512.0);

  /* Megatron-FSDP on the same layout adds its bf16 shards, 2 x 69416 */
  torch_experts_plan(&job, plan, 8, 4, "fsdp", -1, PTSIM_FSDP_MEGATRON);
  ptsim_memory_estimate(plan, PTSIM_CE_LAST_STAGE, &est);
  g_assert_cmpint(job.layout.etp, ==, 1);
  g_assert_cmpfloat(est.stages[0].parameters_bytes, ==, 138832.0);
  g_assert_cmpfloat(est.stages[0].gradients_bytes, ==, 277664.0);
}

static void test_torch_experts_pp(void) {
  g_test_summary("torch's FSDP2 with experts under PP (sync_once): every unit gathered all "
                 "step, gradients whole in fp32, master + m + v over their groups");
  /* 8 GPUs, pp 2, ep 2: dp 4, edp 8 / (2 x 2) = 2; stage 0 holds MoE
   * layer 0 and the embedding: 66176 + 64000, experts 49152 */
  PtsimJob job;
  PtsimMemoryEstimate est;
  g_autoptr(GError) error = NULL;
  g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
  torch_experts_base(&job, 2, 1, 2, 0);
  g_assert_true(ptsim_job_validate(&job, &error));
  g_assert_no_error(error);
  ptsim_plan_build(&job, plan);
  g_assert_true(plan->sync_once);
  g_assert_cmpint(job.layout.edp, ==, 2);
  ptsim_memory_estimate(plan, PTSIM_CE_LAST_STAGE, &est);
  const PtsimStageMemory *s = &est.stages[0];
  /* local experts 8 / 2 = 4: 4 x 3 x 64 x 128 = 98304; the layer 16384 +
   * 128 + 512 + 98304 = 115328 */
  double layer = 115328.0, experts = 98304.0, p0 = layer + EMB;
  g_assert_cmpfloat(s->parameters, ==, p0);
  g_assert_cmpfloat(s->parameters_bytes, ==, 0.0);
  g_assert_cmpfloat(s->gradients_bytes, ==, 4.0 * p0);
  g_assert_cmpfloat(s->optimizer_bytes, ==, 12.0 * ((p0 - experts) / 4.0 + experts / 2.0));
  g_assert_cmpfloat(s->unsharded_bytes, ==, 2.0 * p0);
}

static void test_torch_experts_time(void) {
  g_test_summary("an MoE unit's all-gather: its experts over the 2 ranks of the expert shard "
                 "group (stride ep), the rest over all 8; across nodes the expert group spans "
                 "them as the topology places it; HSDP's replicas all-reduce both shards every "
                 "backward (torch)");
  PtsimJob job;
  g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
  g_autofree PtsimWorkload *w = g_new0(PtsimWorkload, 1);
  torch_experts_plan(&job, plan, 8, 4, "fsdp", -1, PTSIM_FSDP_TORCH);
  const PtsimHardware *hw = &job.hw;
  /* ranks {0, 4}: one node of 8 */
  g_assert_cmpint(plan->expert_shard_group.size, ==, 2);
  g_assert_cmpint(plan->expert_shard_group.stride, ==, 4);
  g_assert_cmpint(plan->expert_shard_group.nodes, ==, 1);
  g_assert_cmpint(plan->shard_group.size, ==, 8);
  ptsim_workload_build(plan, NULL, w);
  double dense = MOE8_LAYER - EXPERTS; /* 17024 */
  double experts_ag = ptsim_cost_collective_s(hw, NULL, PTSIM_COLL_ALL_GATHER, 2.0 * EXPERTS,
                                              &plan->expert_shard_group);
  double dense_ag = ptsim_cost_collective_s(hw, NULL, PTSIM_COLL_ALL_GATHER, 2.0 * dense,
                                            &plan->shard_group);
  g_assert_cmpfloat(w->unit_gather_s[PTSIM_UNIT_MOE_LAYER], ==, dense_ag + experts_ag);
  g_assert_cmpfloat(w->unit_reduce_s[PTSIM_UNIT_MOE_LAYER], ==,
                    ptsim_cost_collective_s(hw, NULL, PTSIM_COLL_REDUCE_SCATTER, 4.0 * dense,
                                            &plan->shard_group) +
                        ptsim_cost_collective_s(hw, NULL, PTSIM_COLL_REDUCE_SCATTER, 4.0 * EXPERTS,
                                                &plan->expert_shard_group));
  /* a ring all-gather over n ranks takes n - 1 steps: the experts' half
   * (49152 B) in one step, the dense 7/8 x 34048 B in seven; units this
   * small are latency-bound (49152 B is well under a microsecond on
   * NVLink, a step's latency microseconds), so the larger expert part is
   * the faster gather */
  g_assert_cmpfloat(experts_ag, <, dense_ag);

  /* 16 GPUs, ep 8: the expert shard group is ranks {0, 8}, one on each
   * node; the dense one all 16 over both */
  torch_experts_plan(&job, plan, 16, 8, "fsdp", -1, PTSIM_FSDP_TORCH);
  g_assert_cmpint(plan->expert_shard_group.size, ==, 2);
  g_assert_cmpint(plan->expert_shard_group.stride, ==, 8);
  g_assert_cmpint(plan->expert_shard_group.nodes, ==, 2);
  g_assert_cmpint(plan->expert_shard_group.gpus_per_node, ==, 1);
  g_assert_cmpint(plan->shard_group.nodes, ==, 2);
  ptsim_workload_build(plan, NULL, w);
  /* 1 local expert: 3 x 64 x 128 = 24576 parameters */
  g_assert_cmpfloat(w->unit_gather_s[PTSIM_UNIT_MOE_LAYER], ==,
                    ptsim_cost_collective_s(hw, NULL, PTSIM_COLL_ALL_GATHER, 2.0 * dense,
                                            &plan->shard_group) +
                        ptsim_cost_collective_s(hw, NULL, PTSIM_COLL_ALL_GATHER, 2.0 * 24576.0,
                                                &plan->expert_shard_group));

  /* HSDP 4 x 2 on 8 GPUs, ep 2: edp 4, the experts' shard group 4 / 2 = 2
   * consecutive (ep, edp) ranks, replicated twice; torch all-reduces each
   * reduced shard over its replicas in every backward: the dense 4 x 17024
   * / 4 and, with 4 local experts (98304 parameters), 4 x 98304 / 2 */
  torch_experts_plan(&job, plan, 8, 2, "hsdp", 4, PTSIM_FSDP_TORCH);
  g_assert_true(plan->replicate_backward);
  g_assert_cmpint(plan->shard_group.size, ==, 4);
  g_assert_cmpint(plan->expert_shard_group.size, ==, 2);
  g_assert_cmpint(plan->expert_replicate_group.size, ==, 2);
  ptsim_workload_build(plan, NULL, w);
  g_assert_cmpfloat(w->unit_replicate_s[PTSIM_UNIT_MOE_LAYER], ==,
                    ptsim_cost_collective_s(hw, NULL, PTSIM_COLL_ALL_REDUCE, dense,
                                            &plan->replicate_group) +
                        ptsim_cost_collective_s(hw, NULL, PTSIM_COLL_ALL_REDUCE, 2.0 * 98304.0,
                                                &plan->expert_replicate_group));
  g_assert_cmpfloat(w->grad_sync_s[0], ==, 0.0); /* nothing left for the step's end */
}

static void test_torch_experts_refused(void) {
  g_test_summary("torch's FSDP2 with experts refuses an expert tensor-parallel size torchtitan "
                 "has no layout for, naming it; left unset it resolves to torchtitan's");
  PtsimJob job;
  g_autoptr(GError) error = NULL;
  /* tp 2, ep 1, etp 1: torchtitan shards the experts over tp when EP is off */
  torch_experts_base(&job, 1, 2, 1, 1);
  g_assert_false(ptsim_job_validate(&job, &error));
  g_assert_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID);
  g_assert_nonnull(strstr(error->message, "--etp 1 has no PyTorch FSDP2 layout"));
  g_clear_error(&error);
  /* ep 2 borrowing from TP: allowed, and so is etp = tp */
  job.layout.ep = 2;
  g_assert_true(ptsim_job_validate(&job, &error));
  g_assert_no_error(error);
  job.layout.etp = 2;
  g_assert_true(ptsim_job_validate(&job, &error));
  g_assert_no_error(error);
  /* left to resolve: 1 under torch's FSDP2 with ep > 1 (edp 8 / 2 = 4),
   * tp with ep 1 or under Megatron-FSDP (edp 8 / (2 x 2) = 2) */
  job.layout.etp = 0;
  g_assert_true(ptsim_job_validate(&job, &error));
  g_assert_cmpint(job.layout.etp, ==, 1);
  g_assert_cmpint(job.layout.edp, ==, 4);
  job.layout.etp = 0;
  job.layout.ep = 1;
  g_assert_true(ptsim_job_validate(&job, &error));
  g_assert_cmpint(job.layout.etp, ==, 2);
  job.layout.etp = 0;
  job.layout.ep = 2;
  job.settings.fsdp_impl = PTSIM_FSDP_MEGATRON;
  g_assert_true(ptsim_job_validate(&job, &error));
  g_assert_cmpint(job.layout.etp, ==, 2);
  g_assert_cmpint(job.layout.edp, ==, 2);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/sharding-experts/torch/memory", test_torch_experts_memory);
  g_test_add_func("/sharding-experts/torch/pp", test_torch_experts_pp);
  g_test_add_func("/sharding-experts/torch/time", test_torch_experts_time);
  g_test_add_func("/sharding-experts/torch/refused", test_torch_experts_refused);
  return g_test_run();
}
