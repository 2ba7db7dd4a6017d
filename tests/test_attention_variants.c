/* test_attention_variants.c — attention sinks (--softmax-type, a model file's
 * softmax_type) and squared ReLU (--squared-relu, activation = relu2) as
 * mechanisms: the sinks' parameters on each TP rank and stage, their
 * kernel priced as the fused one, the refusal where Transformer Engine has
 * no backend for them; squared ReLU's matrices, saved bytes and
 * elementwise passes against GELU's. */
#include <math.h>
#include <string.h>

#include <glib.h>

#include "config.h"
#include "host_time.h"
#include "memory.h"
#include "job_build.h"
#include "plan_of.h"

/* A small GPT on one 8 x H100 node: 8 layers of h 1024 with 16 heads, ffn
 * 4096 (4h, GELU), tp 2, pp 2, dp 2, SP, distributed optimizer, bf16. */
#define BASE                                                                                 \
  "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 8 --hidden-size 1024 "           \
  "--num-attention-heads 16 --seq-length 4096 --max-position-embeddings 4096 "               \
  "--micro-batch-size 1 --global-batch-size 64 --tensor-model-parallel-size 2 "              \
  "--pipeline-model-parallel-size 2 --sequence-parallel --use-distributed-optimizer --bf16 " \
  "--vocab-size 50257 --attention-dropout 0 --hidden-dropout 0 "

typedef struct {
  double step_s, memory_bytes, params_stage0;
} Prediction;

static gboolean build(const char *line, PtsimJob *job, GError **error) {
  PtsimJobOptions o;
  ptsim_job_options_init(&o);
  o.megatron_args = g_strdup(line);
  o.hw = g_strdup("h100-80g");
  gboolean ok = ptsim_job_build(&o, job, NULL, error);
  ptsim_job_options_clear(&o);
  return ok;
}

static void predict(const char *extra, Prediction *p) {
  g_autofree char *line = g_strconcat(BASE, extra, NULL);
  g_autoptr(GError) error = NULL;
  PtsimJob job;
  if (!build(line, &job, &error)) g_error("'%s': %s", line, error->message);
  /* so small a model is bound by its host's launches (host_time.h): the
   * GPU-side effect is what is checked */
  memset(&job.settings.host.costs, 0, sizeof job.settings.host.costs);
  g_autofree PtsimPlan *plan = plan_of(&job);
  g_autofree PtsimTimeResult *t = g_new0(PtsimTimeResult, 1);
  PtsimMemoryEstimate m;
  g_assert_true(ptsim_simulate(plan, NULL, t, &error));
  g_assert_no_error(error);
  ptsim_memory_estimate(plan, PTSIM_CE_LAST_STAGE, &m);
  p->step_s = t->step_s;
  p->memory_bytes = 0.0;
  for (int64_t i = 0; i < m.num_stages; i++) p->memory_bytes += m.stages[i].total_bytes;
  p->params_stage0 = plan->stage_trainable_parameters[0];
}

static void test_sink_parameters(void) {
  g_test_summary("learnable sinks: one parameter per head and layer, split over TP with the "
                 "heads; off-by-one's sink is a constant (none)");
  PtsimModel m;
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_model_load("llama3-8b", &m, &error));
  g_assert_no_error(error);
  double vanilla1 = ptsim_plan_layer_parameters(&m, 1),
         vanilla4 = ptsim_plan_layer_parameters(&m, 4);
  double total = 0.0, with_sinks = 0.0;
  ptsim_plan_model_parameters(&m, 8192, &total, NULL);
  m.softmax_type = PTSIM_SOFTMAX_OFF_BY_ONE;
  g_assert_cmpfloat(ptsim_plan_layer_parameters(&m, 1), ==, vanilla1);
  m.softmax_type = PTSIM_SOFTMAX_LEARNABLE;
  /* 32 heads: 32 on one rank, 32 / 4 = 8 on each of four */
  g_assert_cmpfloat(ptsim_plan_layer_parameters(&m, 1) - vanilla1, ==, 32.0);
  g_assert_cmpfloat(ptsim_plan_layer_parameters(&m, 4) - vanilla4, ==, 8.0);
  /* 32 layers x 32 heads = 1024 more in the model */
  ptsim_plan_model_parameters(&m, 8192, &with_sinks, NULL);
  g_assert_cmpfloat(with_sinks - total, ==, 1024.0);
}

static void test_sinks_in_a_job(void) {
  g_test_summary("--softmax-type learnable: stage 0 holds 4 layers x 16 heads / tp 2 = 32 more "
                 "parameters (with their gradients and optimizer states: more memory), its "
                 "attention priced as the same fused kernel (cuDNN); off-by-one moves nothing");
  Prediction base, learnable, offbyone;
  predict("", &base);
  predict("--softmax-type learnable", &learnable);
  predict("--softmax-type off-by-one", &offbyone);
  g_assert_cmpfloat(learnable.params_stage0 - base.params_stage0, ==, 32.0);
  g_assert_cmpfloat(learnable.memory_bytes, >, base.memory_bytes);
  /* 32 parameters in a ~100M-parameter stage: the reductions move by bytes */
  g_assert_cmpfloat(fabs(learnable.step_s - base.step_s) / base.step_s, <, 1e-6);
  g_assert_cmpfloat(offbyone.params_stage0, ==, base.params_stage0);
  g_assert_cmpfloat(offbyone.memory_bytes, ==, base.memory_bytes);
  g_assert_cmpfloat(offbyone.step_s, ==, base.step_s);
}

static void test_sinks_under_cp(void) {
  g_test_summary("sinks with context parallelism: Transformer Engine has a backend only with "
                 "cp_comm_type a2a (cuDNN's fused attention); p2p and all-gather are refused");
  g_autoptr(GError) error = NULL;
  PtsimJob job;
  g_assert_false(build(BASE "--context-parallel-size 2 --softmax-type learnable", &job, &error));
  g_assert_nonnull(error);
  g_test_message("%s", error->message);
  g_assert_nonnull(strstr(error->message, "use --cp-comm-type a2a"));
  g_clear_error(&error);
  g_assert_false(build(BASE "--context-parallel-size 2 --cp-comm-type allgather "
                            "--softmax-type off-by-one",
                       &job, &error));
  g_test_message("%s", error->message);
  g_assert_nonnull(strstr(error->message, "all-gather"));
  g_clear_error(&error);
  g_assert_true(build(BASE "--context-parallel-size 2 --cp-comm-type a2a --softmax-type learnable",
                      &job, &error));
  g_assert_no_error(error);
  g_assert_true(build(BASE "--context-parallel-size 2", &job, &error)); /* vanilla: any CP */
  g_assert_no_error(error);
}

static void test_sinks_on_local_layers(void) {
  g_test_summary("sinks on Megatron's local (unfused) attention: FusedScaleMaskSoftmax's kernel "
                 "needs softmax_offset None, so PyTorch's softmax runs (its fp32 output kept "
                 "with --attention-softmax-in-fp32: 4 + 2 B a score instead of 2) and the mask "
                 "fill and the sink column's concatenation make the step slower");
  g_autoptr(GError) error = NULL;
  const char *local = "--transformer-impl local --attention-softmax-in-fp32 ";
  g_autofree char *plain = g_strconcat(BASE, local, NULL);
  g_autofree char *sinks = g_strconcat(BASE, local, "--softmax-type learnable", NULL);
  PtsimJob a, b;
  PtsimAttentionCore ca, cb;
  g_assert_true(build(plain, &a, &error));
  g_assert_true(build(sinks, &b, &error));
  g_autofree PtsimPlan *pa = plan_of(&a);
  g_autofree PtsimPlan *pb = plan_of(&b);
  ptsim_memory_attention_core(pa, &ca);
  ptsim_memory_attention_core(pb, &cb);
  /* seq 4096: 16 < 4096 <= 4096, a multiple of 4: the fused kernel, 2 B */
  g_assert_cmpint(ca.fused, ==, 1);
  g_assert_cmpfloat(ca.probs + ca.applied, ==, 2.0);
  g_assert_cmpint(cb.fused, ==, 0);
  g_assert_cmpfloat(cb.probs + cb.applied, ==, 6.0);
  Prediction with, without;
  predict("--transformer-impl local --attention-softmax-in-fp32 ", &without);
  predict("--transformer-impl local --attention-softmax-in-fp32 --softmax-type learnable", &with);
  g_assert_cmpfloat(with.step_s, >, without.step_s);
  g_assert_cmpfloat(with.memory_bytes, >, without.memory_bytes);
}

static void test_relu2_elements(void) {
  g_test_summary("the activation's forward elements per fc2-input element: SwiGLU 3 (gate, up "
                 "in; out), GELU 2 (bias fused), squared ReLU 2, and 4 with biases (its own "
                 "bias add: read and write)");
  PtsimModel m;
  memset(&m, 0, sizeof m);
  m.activation = PTSIM_ACTIVATION_SWIGLU;
  g_assert_cmpfloat(ptsim_plan_activation_elements(&m), ==, 3.0);
  m.activation = PTSIM_ACTIVATION_GELU;
  g_assert_cmpfloat(ptsim_plan_activation_elements(&m), ==, 2.0);
  m.bias = 1;
  g_assert_cmpfloat(ptsim_plan_activation_elements(&m), ==, 2.0);
  m.activation = PTSIM_ACTIVATION_RELU2;
  g_assert_cmpfloat(ptsim_plan_activation_elements(&m), ==, 4.0);
  m.bias = 0;
  g_assert_cmpfloat(ptsim_plan_activation_elements(&m), ==, 2.0);
}

static void test_relu2_in_a_job(void) {
  g_test_summary("--squared-relu against GELU: the same two matrices and saved bytes (the "
                 "compiled kernel's input, 2 B, and fc2's input); without biases the same "
                 "time, with them the bias add's pass more");
  Prediction gelu, relu2, gelu_nb, relu2_nb;
  predict("", &gelu);
  predict("--squared-relu --no-bias-gelu-fusion", &relu2);
  predict("--disable-bias-linear", &gelu_nb);
  predict("--disable-bias-linear --squared-relu", &relu2_nb);
  g_assert_cmpfloat(relu2.params_stage0, ==, gelu.params_stage0);
  g_assert_cmpfloat(relu2.memory_bytes, ==, gelu.memory_bytes);
  g_assert_cmpfloat(relu2.step_s, >, gelu.step_s);
  g_assert_cmpfloat(relu2_nb.memory_bytes, ==, gelu_nb.memory_bytes);
  g_assert_cmpfloat(relu2_nb.step_s, ==, gelu_nb.step_s);
}

/* The forward launches of one dense layer's MLP on BASE's job + EXTRA. */
static double forward_mlp_launches(const char *extra) {
  g_autofree char *line = g_strconcat(BASE, extra, NULL);
  g_autoptr(GError) error = NULL;
  PtsimJob job;
  PtsimHostLaunches n;
  if (!build(line, &job, &error)) g_error("'%s': %s", line, error->message);
  g_autofree PtsimPlan *plan = plan_of(&job);
  ptsim_host_layer_launches(plan, 0, &n);
  return n.forward_mlp;
}

static void test_relu2_launches(void) {
  g_test_summary("squared ReLU's forward MLP launches: GELU's (the bias fused into bias-GELU), "
                 "one more with biases (Megatron's bias add before it)");
  double gelu = forward_mlp_launches("");
  g_assert_cmpfloat(forward_mlp_launches("--squared-relu --no-bias-gelu-fusion"), ==, gelu + 1.0);
  g_assert_cmpfloat(forward_mlp_launches("--disable-bias-linear --squared-relu"), ==,
                    forward_mlp_launches("--disable-bias-linear"));
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/attention-variants/sink-parameters", test_sink_parameters);
  g_test_add_func("/attention-variants/sinks-in-a-job", test_sinks_in_a_job);
  g_test_add_func("/attention-variants/sinks-under-cp", test_sinks_under_cp);
  g_test_add_func("/attention-variants/sinks-on-local-layers", test_sinks_on_local_layers);
  g_test_add_func("/attention-variants/relu2-elements", test_relu2_elements);
  g_test_add_func("/attention-variants/relu2-in-a-job", test_relu2_in_a_job);
  g_test_add_func("/attention-variants/relu2-launches", test_relu2_launches);
  return g_test_run();
}
