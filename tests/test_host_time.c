/* test_host_time.c — the host's share of the step time (core/host_time.h)
 * on hand-derived cases, and the data file it reads (io/host_overhead.h). */
#include <glib.h>
#include <math.h>
#include <string.h>
#include "config.h"
#include "host_overhead.h"
#include "host_time.h"
#include "job_build.h"
#include "plan_of.h"

/* Megatron-LM's GPT test model (12 layers, h 512, LayerNorm, biases, learned
 * positions, Transformer Engine, flash attention) on 8 GPUs. */
#define GPT                                                                             \
  "--num-layers 12 --hidden-size 512 --num-attention-heads 8 --seq-length 1024 "        \
  "--max-position-embeddings 1024 --micro-batch-size 4 --global-batch-size 32 --bf16 "  \
  "--vocab-size 50257 --transformer-impl transformer_engine --attention-backend flash " \
  "--no-gradient-accumulation-fusion --use-distributed-optimizer "

static void job_of(const char *args, PtsimJob *job) {
  g_autofree char *with_gpus = g_strconcat(args, " --tensor-model-parallel-size 1", NULL);
  const char *flags[] = {"--megatron-args", with_gpus, "--gpus", "8", "--hw", "h100-80g", NULL};
  g_autoptr(GError) error = NULL;
  gboolean ok = ptsim_job_build_from_flags(flags, job, NULL, &error);
  g_assert_no_error(error);
  g_assert_true(ok);
}

/* Round numbers for hand arithmetic: 10 us an op, 20 us a TE module, a
 * graph 15 us + 0.5 us a kernel, 100 us of Megatron-Core's Python a layer
 * pass, 30 ms a logged step; apex's multi_tensor_apply limits. */
static void round_costs(PtsimHostCosts *c) {
  c->op_s = 10e-6;
  c->te_module_s = 20e-6;
  c->graph_launch_s = 15e-6;
  c->graph_node_s = 0.5e-6;
  c->layer_module_s = 100e-6;
  c->step_log_s = 30e-3;
  c->mta_chunk_elements = 65536.0;
  c->mta_blocks = 320.0;
  c->mta_tensors_norm = 110.0;
  c->mta_tensors_copy = 64.0;
  c->mta_tensors_adam = 36.0;
}

static void test_launches(void) {
  g_test_summary("a TE GPT layer at tp 1: forward attention 9 launches (norm, QKV, flash's 5, "
                 "proj, bias-dropout-add), MLP 5; backward 18 + 12 + the 12 tensors' main_grad "
                 "hooks; 5 TE modules a pass");
  PtsimJob job;
  job_of(GPT, &job);
  g_autofree PtsimPlan *plan = plan_of(&job);
  PtsimHostLaunches n;
  ptsim_host_layer_launches(plan, 0, &n);
  /* forward attention: norm 1 + QKV 1 + flash 5 + proj 1 + bda 1 = 9 */
  g_assert_cmpfloat(n.forward_attention, ==, 9.0);
  /* forward MLP: norm 1 + fc1 1 + GELU 1 + fc2 1 + bda 1 = 5 */
  g_assert_cmpfloat(n.forward_mlp, ==, 5.0);
  /* backward attention: bda + bias 2, proj dgrad/wgrad/bias 3, flash 7,
   * QKV dgrad/wgrad/bias 3, norm 2, residual 1 = 18; hooks: 4 weights +
   * 4 biases + 2 norms x (weight, bias) = 12 tensors, half on each side */
  g_assert_cmpfloat(n.backward_attention, ==, 18.0 + 6.0);
  /* backward MLP: bda + bias 2, fc2 3, GELU 1, fc1 3, norm 2, residual 1 */
  g_assert_cmpfloat(n.backward_mlp, ==, 12.0 + 6.0);
  g_assert_cmpfloat(n.te_modules, ==, 5.0);

  /* tp 2 with SP: an all-gather before QKV and fc1, a reduce-scatter
   * after proj and fc2, mirrored in backward plus the wgrad all-gathers */
  PtsimJob tp2;
  const char *flags[] = {"--megatron-args",
                         GPT " --tensor-model-parallel-size 2 --sequence-parallel",
                         "--gpus",
                         "8",
                         "--hw",
                         "h100-80g",
                         NULL};
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_job_build_from_flags(flags, &tp2, NULL, &error));
  g_autofree PtsimPlan *plan2 = plan_of(&tp2);
  ptsim_host_layer_launches(plan2, 0, &n);
  g_assert_cmpfloat(n.forward_attention, ==, 11.0);
  g_assert_cmpfloat(n.forward_mlp, ==, 7.0);
  g_assert_cmpfloat(n.backward_attention, ==, 24.0 + 3.0);
  g_assert_cmpfloat(n.backward_mlp, ==, 18.0 + 3.0);
}

static void test_pass_time(void) {
  g_test_summary("a pass's host time: launches x op + TE modules x module; a layer's CUDA graph "
                 "replays at 15 us + 0.5 us a kernel; attention-only graphs keep the MLP eager, "
                 "and an MoE layer's experts stay eager unless the scope names moe");
  PtsimJob job;
  job_of(GPT, &job);
  g_autofree PtsimPlan *plan = plan_of(&job);
  PtsimHost host;
  memset(&host, 0, sizeof host);
  round_costs(&host.costs);
  PtsimHostLaunches n;
  ptsim_host_layer_launches(plan, 0, &n);
  /* forward: (9 + 5) x 10 us + 5 x 20 us = 240 us */
  g_assert_cmpfloat(fabs(ptsim_host_layer_pass_s(&host, &n, 0, 0) - 240e-6), <, 1e-12);
  /* backward: (24 + 18) x 10 us + 5 x 20 us = 520 us */
  g_assert_cmpfloat(fabs(ptsim_host_layer_pass_s(&host, &n, 1, 0) - 520e-6), <, 1e-12);
  host.graphs = PTSIM_GRAPH_LAYER; /* 15 + 14 x 0.5 = 22 us */
  g_assert_cmpfloat(fabs(ptsim_host_layer_pass_s(&host, &n, 0, 0) - 22e-6), <, 1e-12);
  /* an MoE layer under the same scope keeps its MLP part eager (no graph_moe):
   * 15 + 9 x 0.5 = 19.5 us, then 5 x 10 + 2 x 20 = 90 us */
  g_assert_cmpfloat(fabs(ptsim_host_layer_pass_s(&host, &n, 0, 1) - 109.5e-6), <, 1e-12);
  host.graph_moe = 1; /* the experts captured too: as the dense layer */
  g_assert_cmpfloat(fabs(ptsim_host_layer_pass_s(&host, &n, 0, 1) - 22e-6), <, 1e-12);
  /* attention graphed: 15 + 9 x 0.5 = 19.5 us, the MLP (fc1, fc2 modules)
   * 5 x 10 + 2 x 20 = 90 us */
  host.graphs = PTSIM_GRAPH_ATTN;
  g_assert_cmpfloat(fabs(ptsim_host_layer_pass_s(&host, &n, 0, 0) - 109.5e-6), <, 1e-12);
  /* the whole iteration graphed: its launch is once a step, 14 x 0.5 = 7 us */
  host.graphs = PTSIM_GRAPH_ITERATION;
  g_assert_cmpfloat(fabs(ptsim_host_layer_pass_s(&host, &n, 0, 0) - 7e-6), <, 1e-12);
}

/* JOB's workload, and the same job's with no host costs (the GPU's own
 * times): WITH and GPU. */
static void workloads_of(const PtsimJob *job, PtsimWorkload *gpu, PtsimWorkload *with) {
  PtsimJob bare = *job;
  memset(&bare.settings.host.costs, 0, sizeof bare.settings.host.costs);
  g_autofree PtsimPlan *plan = plan_of(job);
  g_autofree PtsimPlan *bare_plan = plan_of(&bare);
  ptsim_workload_build(bare_plan, NULL, gpu);
  ptsim_workload_build(plan, NULL, with);
}

/* The dense layer's forward and backward take the GPU's times raised to
 * HOST_F and HOST_B seconds of host issue time. */
static void assert_layer_raised(const PtsimWorkload *gpu, const PtsimWorkload *with, double host_f,
                                double host_b) {
  double gpu_b = gpu->layer.backward_input_s + gpu->layer.backward_weight_s;
  double with_b = with->layer.backward_input_s + with->layer.backward_weight_s;
  g_assert_cmpfloat(fabs(with->layer.forward_s - fmax(gpu->layer.forward_s, host_f)), <, 1e-12);
  g_assert_cmpfloat(fabs(with_b - fmax(gpu_b, host_b)), <, 1e-12);
}

static void test_host_bound(void) {
  g_test_summary("the compute stream waits for its host: a pass shorter on the GPU than its "
                 "host time takes the host time; a longer one is unchanged");
  PtsimJob job;
  job_of(GPT, &job);
  round_costs(&job.settings.host.costs);
  PtsimWorkload gpu, with;
  workloads_of(&job, &gpu, &with);
  /* 240 us and 520 us of host (test_pass_time) + 100 us of Megatron-Core's
   * Python each against the GPU's own times */
  assert_layer_raised(&gpu, &with, 340e-6, 620e-6);
  g_assert_cmpfloat(with.layer.flops, ==, gpu.layer.flops);
}

static void test_host_cpu_scale(void) {
  g_test_summary("a slower host (the profile's host_cpu_scale, Grace's 2.75) spends that much "
                 "longer on every op and TE module; the fitted layer Python and logged step stay; "
                 "the shipped GB200 profile carries TE issue #2053's 37.08 / 13.48");
  PtsimJob job;
  job_of(GPT "--log-interval 1", &job);
  round_costs(&job.settings.host.costs);
  job.hw.host_cpu_scale = 2.5;
  g_autofree PtsimPlan *plan = plan_of(&job);
  PtsimWorkload gpu, with;
  workloads_of(&job, &gpu, &with);
  /* forward: 240 us of ops and modules x 2.5 + 100 us of layer Python =
   * 700 us; backward: 520 x 2.5 + 100 = 1400 us */
  assert_layer_raised(&gpu, &with, 700e-6, 1400e-6);
  /* the optimizer's ops: 2.5 x the x86 host's (a hand-made profile's 0
   * scale); the 30 ms logged step as it is */
  PtsimJob x86 = job;
  x86.hw.host_cpu_scale = 0.0;
  g_autofree PtsimPlan *x86_plan = plan_of(&x86);
  double x86_opt = ptsim_host_optimizer_s(x86_plan, 0);
  g_assert_cmpfloat(x86_opt, >, 0.0);
  g_assert_cmpfloat(fabs(ptsim_host_optimizer_s(plan, 0) - 2.5 * x86_opt), <, 1e-12);
  PtsimWorkload x86_w;
  ptsim_workload_build(x86_plan, NULL, &x86_w);
  g_assert_cmpfloat(fabs((with.optimizer_s[0] - gpu.optimizer_s[0] - 30e-3) -
                         2.5 * (x86_w.optimizer_s[0] - gpu.optimizer_s[0] - 30e-3)),
                    <, 1e-9);
  PtsimHardware hw;
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_hardware_load("gb200-nvl72", &hw, &error));
  g_assert_cmpfloat(fabs(hw.host_cpu_scale - 2.75), <, 1e-12); /* 37.08 / 13.48 = 2.751 */
  g_assert_true(ptsim_hardware_load("h100-80g", &hw, &error));
  g_assert_cmpfloat(hw.host_cpu_scale, ==, 1.0);
}

static void test_host_framework_scale(void) {
  g_test_summary("the profile's host_framework_scale multiplies the framework's fitted Python "
                 "(the layer's and the logged step's) and nothing else; the DGX A100 profiles "
                 "carry the ratio measured on Megatron-LM's paired test runs for both scales");
  PtsimJob job;
  job_of(GPT "--log-interval 1", &job);
  round_costs(&job.settings.host.costs);
  job.hw.host_framework_scale = 2.0;
  g_autofree PtsimPlan *plan = plan_of(&job);
  PtsimWorkload gpu, with;
  workloads_of(&job, &gpu, &with);
  /* forward: 240 us of ops and modules as they are + 2 x 100 us of layer
   * Python = 440 us; backward: 520 + 2 x 100 = 720 us */
  assert_layer_raised(&gpu, &with, 440e-6, 720e-6);
  /* the optimizer's ops as the x86 host's, the 30 ms logged step doubled */
  PtsimJob x86 = job;
  x86.hw.host_framework_scale = 0.0;
  g_autofree PtsimPlan *x86_plan = plan_of(&x86);
  g_assert_cmpfloat(ptsim_host_optimizer_s(plan, 0), ==, ptsim_host_optimizer_s(x86_plan, 0));
  PtsimWorkload x86_w;
  ptsim_workload_build(x86_plan, NULL, &x86_w);
  g_assert_cmpfloat(fabs((with.optimizer_s[0] - x86_w.optimizer_s[0]) - 30e-3), <, 1e-9);
  PtsimHardware hw;
  g_autoptr(GError) error = NULL;
  const char *a100[] = {"a100-80g", "a100-40g"};
  for (size_t i = 0; i < G_N_ELEMENTS(a100); i++) {
    g_assert_true(ptsim_hardware_load(a100[i], &hw, &error));
    g_assert_cmpfloat(hw.host_cpu_scale, ==, 1.43);
    g_assert_cmpfloat(hw.host_framework_scale, ==, 1.43);
  }
  /* Grace: the per-op ratio is measured, the framework's is not */
  g_assert_true(ptsim_hardware_load("gb200-nvl72", &hw, &error));
  g_assert_cmpfloat(hw.host_framework_scale, ==, 1.0);
}

static void test_test_mode(void) {
  g_test_summary("--test-mode with --qk-layernorm: each attention forward stacks the q/k norms' "
                 "four parameters, all-gathers them over dp and tp, and compares every copy "
                 "under an assert: 3 + 9 (dp + tp) launches and 4 (dp + tp) synchronisations");
  PtsimJob plain, tested, no_qk;
  job_of(GPT "--qk-layernorm", &plain);
  job_of(GPT "--qk-layernorm --test-mode", &tested);
  job_of(GPT "--test-mode", &no_qk);
  g_assert_true(tested.settings.host.test_mode && !plain.settings.host.test_mode);
  g_autofree PtsimPlan *p0 = plan_of(&plain);
  g_autofree PtsimPlan *p1 = plan_of(&tested);
  g_autofree PtsimPlan *p2 = plan_of(&no_qk);
  PtsimHostLaunches a, b, c, d;
  ptsim_host_layer_launches(p0, 0, &a);
  ptsim_host_layer_launches(p1, 0, &b);
  /* tp 1, dp 8 on 8 GPUs: 3 + 9 x 9 = 84 launches, 4 x 9 = 36 syncs */
  g_assert_cmpint(tested.layout.dp, ==, 8);
  g_assert_cmpfloat(b.forward_attention - a.forward_attention, ==, 84.0);
  g_assert_cmpfloat(b.forward_syncs - a.forward_syncs, ==, 36.0);
  g_assert_cmpfloat(b.backward_attention, ==, a.backward_attention);
  /* without q/k norms the checks return at once */
  job_of(GPT, &plain);
  g_autofree PtsimPlan *p3 = plan_of(&plain);
  ptsim_host_layer_launches(p3, 0, &c);
  ptsim_host_layer_launches(p2, 0, &d);
  g_assert_cmpfloat(d.forward_attention, ==, c.forward_attention);
  g_assert_cmpfloat(d.forward_syncs, ==, c.forward_syncs);
}

static void test_optimizer(void) {
  g_test_summary("the optimizer's host time: with fp32 main grads and the distributed optimizer "
                 "one copy per local tensor, the norm's and Adam's multi_tensor_apply launches, "
                 "the logged norms");
  PtsimJob job;
  job_of(GPT "--log-params-norm --log-num-zeros-in-grad", &job);
  g_assert_true(job.settings.host.log_params_norm && job.settings.host.log_num_zeros);
  round_costs(&job.settings.host.costs);
  g_autofree PtsimPlan *plan = plan_of(&job);
  /* one stage: 12 layers x 12 tensors + word and position embeddings (2)
   * + the final norm (2) = 148 tensors; dp 8 shards: 19 + 1 = 20 local.
   * Elements: the stage's parameters / 8; chunks = elements / 65536 + 20. */
  double elements = plan->stage_parameters[0] / 8.0;
  double chunks = ceil(elements / 65536.0) + 20.0;
  double norm = fmax(1.0, ceil(chunks / 320.0)), adam = fmax(1.0, ceil(chunks / 320.0));
  /* fp32 main grads: no cast; the parameters back 20; grad norm 2 x norm + 2,
   * Adam, zeros 2 x 20 + 2, params norm + 2 */
  double ops = 20.0 + 2.0 * norm + 2.0 + adam + 42.0 + norm + 2.0;
  g_assert_cmpfloat(fabs(ptsim_host_optimizer_s(plan, 0) - ops * 10e-6), <, 1e-12);
}

static void test_graph_flags(void) {
  g_test_summary("--cuda-graph-impl and its scope (or the older --cuda-graph-modules) pick what "
                 "is captured");
  PtsimJob job;
  job_of(GPT "--cuda-graph-impl transformer_engine", &job);
  g_assert_cmpint(job.settings.host.graphs, ==, PTSIM_GRAPH_LAYER);
  job_of(GPT "--cuda-graph-impl transformer_engine --cuda-graph-modules attn", &job);
  g_assert_cmpint(job.settings.host.graphs, ==, PTSIM_GRAPH_ATTN);
  /* as a test case's YAML list arrives: one word with brackets */
  job_of(GPT "--cuda-graph-impl transformer_engine --cuda-graph-modules "
             "'[attn mlp moe_router moe_preprocess]'",
         &job);
  g_assert_cmpint(job.settings.host.graphs, ==, PTSIM_GRAPH_LAYER);
  g_assert_false(job.settings.host.graph_moe);
  job_of(GPT "--cuda-graph-impl transformer_engine --cuda-graph-scope attn moe", &job);
  g_assert_cmpint(job.settings.host.graphs, ==, PTSIM_GRAPH_ATTN);
  g_assert_true(job.settings.host.graph_moe);
  job_of(GPT "--cuda-graph-impl local --cuda-graph-scope full_iteration", &job);
  g_assert_cmpint(job.settings.host.graphs, ==, PTSIM_GRAPH_ITERATION);
  job_of(GPT "--cuda-graph-impl none", &job);
  g_assert_cmpint(job.settings.host.graphs, ==, PTSIM_GRAPH_NONE);
  job_of(GPT "--enable-cuda-graph", &job);
  g_assert_cmpint(job.settings.host.graphs, ==, PTSIM_GRAPH_LAYER);
}

static void test_layer_python(void) {
  g_test_summary("Megatron-Core's Python of a layer pass: added to the eager pass, half to each "
                 "side of the attention / MLP boundary, none under a layer's CUDA graph or for "
                 "a job Megatron-LM does not drive");
  PtsimJob job;
  job_of(GPT, &job);
  g_assert_true(job.settings.host.megatron);
  g_autofree PtsimPlan *plan = plan_of(&job);
  PtsimHost host;
  memset(&host, 0, sizeof host);
  round_costs(&host.costs);
  PtsimHostLaunches n;
  ptsim_host_layer_launches(plan, 0, &n);
  /* not Megatron-LM: 240 us (test_pass_time) */
  g_assert_cmpfloat(fabs(ptsim_host_layer_pass_s(&host, &n, 0, 0) - 240e-6), <, 1e-12);
  host.megatron = 1;
  /* forward 240 + 100 = 340 us; backward 520 + 100 = 620 us */
  g_assert_cmpfloat(fabs(ptsim_host_layer_pass_s(&host, &n, 0, 0) - 340e-6), <, 1e-12);
  g_assert_cmpfloat(fabs(ptsim_host_layer_pass_s(&host, &n, 1, 0) - 620e-6), <, 1e-12);
  /* attention graphed: 15 + 9 x 0.5 = 19.5 us; the MLP eager 90 + 50 = 140 us */
  host.graphs = PTSIM_GRAPH_ATTN;
  g_assert_cmpfloat(fabs(ptsim_host_layer_pass_s(&host, &n, 0, 0) - 159.5e-6), <, 1e-12);
  /* the whole layer graphed: 15 + 14 x 0.5 = 22 us, no Python */
  host.graphs = PTSIM_GRAPH_LAYER;
  g_assert_cmpfloat(fabs(ptsim_host_layer_pass_s(&host, &n, 0, 0) - 22e-6), <, 1e-12);
}

static void test_step_log(void) {
  g_test_summary("training_log's work per logged step, spread over --log-interval steps "
                 "(Megatron-LM's default 100); none for a job Megatron-LM does not drive");
  PtsimJob job;
  job_of(GPT "--log-interval 1", &job);
  g_assert_cmpint(job.settings.host.log_interval, ==, 1);
  job.settings.host.costs.step_log_s = 30e-3;
  /* 30 ms / 1 */
  g_assert_cmpfloat(fabs(ptsim_host_step_log_s(&job.settings.host) - 30e-3), <, 1e-15);
  job_of(GPT "--log-interval 10", &job);
  job.settings.host.costs.step_log_s = 30e-3;
  /* 30 ms / 10 = 3 ms */
  g_assert_cmpfloat(fabs(ptsim_host_step_log_s(&job.settings.host) - 3e-3), <, 1e-15);
  job_of(GPT, &job);
  g_assert_cmpint(job.settings.host.log_interval, ==, 100);
  job.settings.host.costs.step_log_s = 30e-3;
  /* 30 ms / 100 = 0.3 ms */
  g_assert_cmpfloat(fabs(ptsim_host_step_log_s(&job.settings.host) - 0.3e-3), <, 1e-15);
  job.settings.host.megatron = 0;
  g_assert_cmpfloat(ptsim_host_step_log_s(&job.settings.host), ==, 0.0);
  /* each stage's step end carries it beside the optimizer's host work */
  job_of(GPT "--log-interval 1", &job);
  round_costs(&job.settings.host.costs);
  g_autofree PtsimPlan *plan = plan_of(&job);
  PtsimJob quiet = job;
  quiet.settings.host.costs.step_log_s = 1e-9;
  g_autofree PtsimPlan *quiet_plan = plan_of(&quiet);
  PtsimWorkload with, without;
  ptsim_workload_build(plan, NULL, &with);
  ptsim_workload_build(quiet_plan, NULL, &without);
  g_assert_cmpfloat(fabs(with.optimizer_s[0] - without.optimizer_s[0] - (30e-3 - 1e-9)), <, 1e-12);
}

static void test_data_file(void) {
  g_test_summary("the shipped host_overhead.ini loads, every value with a source; a value "
                 "without one, an unknown key or a value out of range is refused");
  PtsimHostCosts c;
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_host_costs_load(&c, &error));
  g_assert_no_error(error);
  g_assert_cmpfloat(fabs(c.op_s - 27.9e-6), <, 1e-15);
  g_assert_cmpfloat(c.mta_tensors_adam, ==, 36.0);
  g_assert_cmpfloat(c.sinkhorn_iterations, ==, 3.0);
  const char *keys =
      "[host]\nop_us = 1\nte_module_us = 1\ngraph_launch_us = 1\n"
      "graph_node_us = 1\nlayer_module_us = 1\nstep_log_us = 1\nmta_chunk_elements = 1\nmta_blocks = 1\n"
      "mta_tensors_norm = 1\nmta_tensors_copy = 1\nmta_tensors_adam = 1\nsync_us = 1\n"
      "sinkhorn_iterations = 1\n";
  const char *sources =
      "[source]\nop_us = a\nte_module_us = a\ngraph_launch_us = a\n"
      "graph_node_us = a\nlayer_module_us = a\nstep_log_us = a\nmta_chunk_elements = a\nmta_blocks = a\n"
      "mta_tensors_norm = a\nmta_tensors_copy = a\nmta_tensors_adam = a\nsync_us = a\n"
      "sinkhorn_iterations = a\n";
  g_autofree char *good = g_strconcat(keys, sources, NULL);
  g_assert_true(ptsim_host_costs_load_data(good, strlen(good), "t", &c, &error));
  g_autofree char *unsourced = g_strconcat(keys, "[source]\nop_us = a\n", NULL);
  g_assert_false(ptsim_host_costs_load_data(unsourced, strlen(unsourced), "t", &c, &error));
  g_assert_nonnull(strstr(error->message, "te_module_us"));
  g_clear_error(&error);
  g_autofree char *unknown = g_strconcat(keys, "op_ms = 2\n", sources, NULL);
  g_assert_false(ptsim_host_costs_load_data(unknown, strlen(unknown), "t", &c, &error));
  g_assert_nonnull(strstr(error->message, "op_ms"));
  g_clear_error(&error);
  g_autofree char *negative = g_strconcat("[host]\nop_us = -1\n", sources, NULL);
  g_assert_false(ptsim_host_costs_load_data(negative, strlen(negative), "t", &c, &error));
  g_assert_nonnull(strstr(error->message, "op_us"));
}

/* Megatron-LM's small MoE test model: the GPT above with 8 experts on 8
 * GPUs at tp 2 (sequence parallel) and ep 2, no biases, unfused attention. */
#define MOE                                                                               \
  "--num-layers 12 --hidden-size 512 --num-attention-heads 8 --seq-length 1024 "          \
  "--max-position-embeddings 1024 --micro-batch-size 4 --global-batch-size 32 --bf16 "    \
  "--vocab-size 50257 --transformer-impl transformer_engine --attention-backend unfused " \
  "--no-gradient-accumulation-fusion --use-distributed-optimizer --disable-bias-linear "  \
  "--tensor-model-parallel-size 2 --sequence-parallel --num-experts 8 "                   \
  "--expert-model-parallel-size 2 "

static void moe_job(const char *args, PtsimJob *job) {
  const char *flags[] = {"--megatron-args", args, "--gpus", "8", "--hw", "h100-80g", NULL};
  g_autoptr(GError) error = NULL;
  gboolean ok = ptsim_job_build_from_flags(flags, job, NULL, &error);
  g_assert_no_error(error);
  g_assert_true(ok);
}

static void test_moe_sinkhorn(void) {
  g_test_summary("an MoE layer with Sinkhorn routing (top-1), the all-gather dispatcher and "
                 "4 local experts one after another: the router's loop, the dispatch's two "
                 "synchronisations, a backward that is not twice the forward");
  PtsimJob job;
  moe_job(MOE "--moe-router-load-balancing-type sinkhorn --moe-router-topk 1", &job);
  job.settings.host.costs.sinkhorn_iterations = 3.0;
  g_autofree PtsimPlan *plan = plan_of(&job);
  PtsimHostLaunches n;
  g_assert_cmpint(plan->local_experts, ==, 4);
  ptsim_host_layer_launches(plan, 1, &n);
  /* router: gating 1; sinkhorn: cast 1, exp 1, ones 2, 3 trips x 12,
   * d1 * cost * d0 2, topk 1; sigmoid 1; map 4; scores 1: 50.
   * dispatch (etp 2 x ep 2 > 1): 3 all-gathers, 2 slices, sum, long, .cpu(),
   * permute 4, 2 transposes and masked_select: 15; combine: zeros and
   * scatter_add_ 2, the reduce-scatter 1: 18.
   * experts: 4 x (fc1, GELU, x probs, fc2) + cat = 17.
   * norm 1 + 50 + 18 + 17 + bda 1 = 87 */
  g_assert_cmpfloat(n.forward_mlp, ==, 87.0);
  /* backward: norm and residual 2; router: gating 2, scores' product and
   * sigmoid 2; dispatch: 2 reduce-scatters, slices' 2, masked_select's 2,
   * permute's 2, unpermute's 1, the all-gather 1: 10; experts: 4 x (fc2 2,
   * x probs 3, GELU 1, fc1 2) + the two splits' cat 2 = 34; bda 1:
   * 2 + 4 + 10 + 34 + 1 = 51; hooks: attention's 2 weights, router 1,
   * 8 expert weights, 2 LayerNorms x 2 = 15 tensors, half here */
  g_assert_cmpfloat(n.backward_mlp, ==, 51.0 + 7.5);
  /* 3 trips' bool(), .cpu() and masked_select; the .cpu() waits for the
   * gathers */
  g_assert_cmpfloat(n.forward_syncs, ==, 5.0);
  g_assert_cmpfloat(n.dispatch_waits, ==, 1.0);

  /* the syncs' cost in the forward pass: 87 ops x 10 us + 5 x 12.6 us, and
   * the 2 + 4 TE modules (2 attention-side, 8 expert Linears: 3 + 8 = 11,
   * 8 of them on the MLP side) x 20 us; the attention side as for a dense
   * layer */
  PtsimHost host;
  memset(&host, 0, sizeof host);
  round_costs(&host.costs);
  host.costs.sync_s = 12.6e-6;
  double with = ptsim_host_layer_pass_s(&host, &n, 0, 1);
  host.costs.sync_s = 0.0;
  double without = ptsim_host_layer_pass_s(&host, &n, 0, 1);
  g_assert_cmpfloat(fabs(with - without - 5.0 * 12.6e-6), <, 1e-12);
  host.costs.sync_s = 12.6e-6; /* none in backward */
  double back = ptsim_host_layer_pass_s(&host, &n, 1, 1);
  host.costs.sync_s = 0.0;
  g_assert_cmpfloat(fabs(ptsim_host_layer_pass_s(&host, &n, 1, 1) - back), <, 1e-15);
}

static void test_moe_aux_alltoall(void) {
  g_test_summary("an MoE layer with top-2 softmax routing and the aux loss, grouped GEMM; "
                 "the all-to-all dispatcher with fused permutes synchronises once");
  PtsimJob job;
  moe_job(MOE "--moe-router-load-balancing-type aux_loss --moe-router-topk 2 "
              "--moe-aux-loss-coeff 1e-2 --moe-grouped-gemm",
          &job);
  g_autofree PtsimPlan *plan = plan_of(&job);
  PtsimHostLaunches n;
  ptsim_host_layer_launches(plan, 1, &n);
  /* router: gating 1, topk 1, softmax 1, type_as 1, sparse probs and map 6;
   * aux: scores (softmax, topk, map 4) 6, sum 1, all-reduce over tp 2 1,
   * loss 4, the tracker 2: 14; 24 in all.  dispatch (all-gather) 18 as
   * above; experts: fc1, GELU, x probs, fc2 = 4.  1 + 24 + 18 + 4 + 1 */
  g_assert_cmpfloat(n.forward_mlp, ==, 48.0);
  /* backward: 2; router: gating 2, gather 1, cast 1, softmax 1, topk's 2;
   * aux: scaler 2, loss 3, softmax 1, the logits' sum 1: 14; dispatch 10;
   * experts: 2 GroupedLinear x (dgrad, wgrad) 4 + GELU 1 + x probs 3 = 8;
   * bda 1: 35; hooks: 15 tensors as above (TE's GroupedLinear keeps a
   * weight per expert: weight0 .. weight3 in fc1 and in fc2) */
  g_assert_cmpfloat(n.backward_mlp, ==, 35.0 + 7.5);
  g_assert_cmpfloat(n.forward_syncs, ==, 2.0);

  PtsimJob a2a;
  moe_job(MOE "--moe-router-load-balancing-type aux_loss --moe-router-topk 2 "
              "--moe-aux-loss-coeff 1e-2 --moe-grouped-gemm --moe-token-dispatcher-type alltoall "
              "--moe-permute-fusion",
          &a2a);
  g_autofree PtsimPlan *plan2 = plan_of(&a2a);
  ptsim_host_layer_launches(plan2, 1, &n);
  /* preprocess: sum, long 2 + splits 6 + 4 copies and an event 5 = 13;
   * fused permute 1, all-to-all of tokens and probs 2, their all-gather
   * over etp 2 2, fused chunk sort 1: 6; combine: chunk sort 1, etp
   * reduce-scatter 1, all-to-all 1, fused unpermute 1: 4.  23 in place of
   * the all-gather dispatcher's 18: 48 - 18 + 23 */
  g_assert_cmpfloat(n.forward_mlp, ==, 53.0);
  g_assert_cmpfloat(n.forward_syncs, ==, 1.0);
  g_assert_cmpfloat(n.dispatch_waits, ==, 0.0);
  /* backward: collectives 3 ep + 3 etp = 6, chunk sorts 2, permute 1,
   * unpermute 1: 10, as the all-gather dispatcher's 10 */
  g_assert_cmpfloat(n.backward_mlp, ==, 35.0 + 7.5);

  /* DeepSeek-style routing as the pp 2 test cases have it: sigmoid scores
   * with the expert bias, 4 groups of which 2, top-4, an fp32 router */
  PtsimJob ds;
  moe_job(MOE "--moe-router-load-balancing-type aux_loss --moe-router-topk 4 "
              "--moe-aux-loss-coeff 1e-4 --moe-router-score-function sigmoid "
              "--moe-router-enable-expert-bias --moe-router-num-groups 4 "
              "--moe-router-group-topk 2 --moe-router-dtype fp32 --moe-grouped-gemm "
              "--moe-token-dispatcher-type alltoall --moe-permute-fusion",
          &ds);
  g_autofree PtsimPlan *plan3 = plan_of(&ds);
  ptsim_host_layer_launches(plan3, 1, &n);
  /* router: gating 1; sigmoid 1, the bias's float, add, topk, gather 4, the
   * k > 1 normalisation 3, the sparse probs and map 6 (no casts: fp32): 14;
   * the groups 9; the expert bias's count 2; aux: scores (sigmoid, sum,
   * add, div, topk, map 4) 9, sum 1, all-reduce 1, loss 4, tracker 2: 17.
   * 1 + 14 + 9 + 2 + 17 = 43.  dispatch 23 as above; experts: fc1, GELU,
   * x fp32 probs and the cast back, fc2 = 5.  1 + 43 + 23 + 5 + 1 = 73 */
  g_assert_cmpfloat(n.forward_mlp, ==, 73.0);
  /* backward: 2; router: gating 2 + fp32's 4 casts, gather 1, norm 3,
   * sigmoid 1, topk's 2, masked_fill 1, aux 7: 21; dispatch 10; experts
   * 4 + GELU 1 + x probs 3 + the cast 1 = 9; bda 1: 43 */
  g_assert_cmpfloat(n.backward_mlp, ==, 43.0 + 7.5);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/host-time/launches", test_launches);
  g_test_add_func("/host-time/pass-time", test_pass_time);
  g_test_add_func("/host-time/host-bound", test_host_bound);
  g_test_add_func("/host-time/host-cpu-scale", test_host_cpu_scale);
  g_test_add_func("/host-time/host-framework-scale", test_host_framework_scale);
  g_test_add_func("/host-time/test-mode", test_test_mode);
  g_test_add_func("/host-time/optimizer", test_optimizer);
  g_test_add_func("/host-time/graph-flags", test_graph_flags);
  g_test_add_func("/host-time/layer-python", test_layer_python);
  g_test_add_func("/host-time/step-log", test_step_log);
  g_test_add_func("/host-time/data-file", test_data_file);
  g_test_add_func("/host-time/moe-sinkhorn", test_moe_sinkhorn);
  g_test_add_func("/host-time/moe-aux-alltoall", test_moe_aux_alltoall);
  return g_test_run();
}
