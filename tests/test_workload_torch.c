/* test_workload_torch.c — a layer of PyTorch's modules (sim/core/
 * workload_torch.c) and torch's per-op selective checkpointing (its work
 * there, what memory.c keeps): every expected value is written out by hand
 * from torchtitan's Llama block and its AC policy (pytorch/torchtitan@238fa99,
 * models/llama3/infra/parallelize.py _op_sac_save_list, distributed/
 * activation_checkpoint.py), not read back from the code.
 *
 * Llama 3 8B (h 4096, 32 heads of 128, 8 KV heads, ffn 14336, SwiGLU, no
 * bias) on H100s, mbs 1, seq 8192: T = 8192 tokens. */
#include <glib.h>
#include "cost.h"
#include "job_fixture.h"
#include "plan_of.h"

#define T 8192.0
#define H 4096.0
#define KV 1024.0 /* 8 KV heads x 128 */
#define F 14336.0
#define HEADS 32.0

static void torch_job(PtsimJob *job, gint64 tp, PtsimTorchLayers layers, PtsimRecompute recompute) {
  FixtureLayout l = {8, tp, 1, 1, 1, 64, 8192, PTSIM_RECOMPUTE_NONE};
  fixture_job(job, "llama3-8b", "h100-80g", l);
  job->settings.transformer_engine = 0;
  job->settings.torch_layers = layers;
  job->settings.recompute = recompute;
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_job_validate(job, &error));
}

static void test_saved_gemms(void) {
  g_test_summary("the policy keeps every other aten.mm in call order: wq, wv, w1, w2 (SwiGLU); "
                 "wq, wv, w1 (GELU); none with biases (addmm)");
  PtsimModel m = {0};
  m.activation = PTSIM_ACTIVATION_SWIGLU;
  const int swiglu[PTSIM_TORCH_GEMMS] = {1, 0, 1, 0, 1, 0, 1}; /* wq wk wv wo w1 w3 w2 */
  const int gelu[PTSIM_TORCH_GEMMS] = {1, 0, 1, 0, 1, 0, 0};   /* wq wk wv wo w1 -- w2 */
  for (int g = 0; g < PTSIM_TORCH_GEMMS; g++)
    g_assert_cmpint(ptsim_plan_torch_gemm_saved(&m, g), ==, swiglu[g]);
  m.activation = PTSIM_ACTIVATION_GELU;
  for (int g = 0; g < PTSIM_TORCH_GEMMS; g++)
    g_assert_cmpint(ptsim_plan_torch_gemm_saved(&m, g), ==, gelu[g]);
  m.bias = 1;
  for (int g = 0; g < PTSIM_TORCH_GEMMS; g++)
    g_assert_cmpint(ptsim_plan_torch_gemm_saved(&m, g), ==, 0);
}

static void test_saved_bytes_8b(void) {
  g_test_summary("per-op checkpointing keeps 63,616 B a token of a Llama-3-8B layer (tp 1), "
                 "44,096 with tp 2 and SP; the stage holds 32 of them plus one layer's rest");
  PtsimJob job;
  torch_job(&job, 1, PTSIM_TORCH_LAYERS_EAGER, PTSIM_RECOMPUTE_SELECTIVE_OP);
  g_autofree PtsimPlan *plan = plan_of(&job);
  /* block input 2Th, wq 2Th, wv 2T kv, w1 2Tf, w2 2Th, SDPA out 2Th, lse 4 x 32 heads x T */
  double kept = 2.0 * T * H + 2.0 * T * H + 2.0 * T * KV + 2.0 * T * F + 2.0 * T * H + 2.0 * T * H +
                4.0 * HEADS * T;
  g_assert_cmpfloat(kept, ==, 63616.0 * T);
  g_assert_cmpfloat(ptsim_memory_layer_op_saved_bytes(plan), ==, kept);
  /* without recomputation the layer keeps (memory.c, the reference's table): the two norm
   * inputs and outputs 8Th, q, k, v and the attention output 2Th + 4T kv + 2Th, the MLP's
   * w1, w3, silu and product outputs 8Tf */
  double full = 8.0 * T * H + 4.0 * T * H + 4.0 * T * KV + 8.0 * T * F;
  g_assert_cmpfloat(ptsim_memory_layer_activation_bytes(plan, 1), ==, full);
  PtsimMemoryEstimate est;
  ptsim_memory_estimate(plan, PTSIM_CE_LAST_STAGE, &est);
  g_assert_cmpfloat(est.stages[0].inflight_microbatches, ==, 1.0);
  g_assert_cmpfloat_with_epsilon(est.stages[0].activations_bytes, 32.0 * kept + (full - kept),
                                 1e-6 * full);
  g_assert_cmpfloat(est.stages[0].activation_bytes_per_layer, ==, kept);

  /* tp 2 with SP: the block input in the SP region (2Th / 2), the column-parallel outputs
   * and attention split (2Th/2, 2T kv/2, 2Tf/2, 2Th/2, 4 x 16 heads x T), w2's partial sum
   * whole (2Th), the two reduce-scatter outputs 2 x 2Th / 2 */
  torch_job(&job, 2, PTSIM_TORCH_LAYERS_EAGER, PTSIM_RECOMPUTE_SELECTIVE_OP);
  g_autofree PtsimPlan *tp2 = plan_of(&job);
  double kept2 = T * H + T * H + T * KV + T * F + 2.0 * T * H + T * H + 4.0 * 16.0 * T +
                 2.0 * T * H;
  g_assert_cmpfloat(kept2, ==, 44096.0 * T);
  g_assert_cmpfloat(ptsim_memory_layer_op_saved_bytes(tp2), ==, kept2);
}

/* The layer's work of `job`. */
static void layer_of(const PtsimJob *job, PtsimWork *layer) {
  g_autofree PtsimWorkload *w = g_new0(PtsimWorkload, 1);
  workload_of(job, NULL, w);
  *layer = w->layer;
}

static void test_recompute_flops_8b(void) {
  g_test_summary("per-op recompute re-runs wk, wo and w3 (2T(h kv + h h + h f) FLOPs) and no "
                 "attention; full recompute re-runs the whole forward");
  PtsimJob job;
  PtsimWork none, op, full;
  torch_job(&job, 1, PTSIM_TORCH_LAYERS_EAGER, PTSIM_RECOMPUTE_NONE);
  layer_of(&job, &none);
  torch_job(&job, 1, PTSIM_TORCH_LAYERS_EAGER, PTSIM_RECOMPUTE_SELECTIVE_OP);
  layer_of(&job, &op);
  torch_job(&job, 1, PTSIM_TORCH_LAYERS_EAGER, PTSIM_RECOMPUTE_FULL);
  layer_of(&job, &full);
  double redo = 2.0 * T * (H * KV + H * H + H * F); /* wk, wo, w3 */
  g_assert_cmpfloat(redo, ==, 1305670057984.0);
  g_assert_cmpfloat_with_epsilon(op.flops - none.flops, redo, 1e-9 * redo);
  /* the forward: seven GEMMs 2T(h q + 2 h kv + q h + 3 h f) and attention 4 T^2 heads d
   * (Megatron's count, no causal halving) */
  double forward = 2.0 * T * (H * H + 2.0 * H * KV + H * H + 3.0 * H * F) + 4.0 * T * T * H;
  g_assert_cmpfloat_with_epsilon(full.flops - none.flops, forward, 1e-9 * forward);
  g_assert_cmpfloat_with_epsilon(none.flops, 3.0 * forward, 1e-9 * forward);
  g_assert_cmpfloat(op.recompute_s, >, 0.0);
  g_assert_cmpfloat(op.recompute_s, <, 0.5 * full.recompute_s); /* no attention, 3 of 7 GEMMs */
  g_assert_cmpfloat(op.forward_s, ==, none.forward_s);
  g_assert_cmpfloat_with_epsilon(op.backward_input_s - none.backward_input_s, op.recompute_s,
                                 1e-12);
}

static void test_eager_kernels_8b(void) {
  g_test_summary("eager PyTorch against torch.compile: RoPE's three kernels on q and k, SiLU "
                 "and the product apart, autograd's three gradient sums; norms alike");
  PtsimJob job;
  PtsimWork eager, compiled;
  torch_job(&job, 1, PTSIM_TORCH_LAYERS_EAGER, PTSIM_RECOMPUTE_NONE);
  layer_of(&job, &eager);
  torch_job(&job, 1, PTSIM_TORCH_LAYERS_COMPILED, PTSIM_RECOMPUTE_NONE);
  layer_of(&job, &compiled);
  const PtsimHardware *hw = &job.hw;
#define PASS(bytes) ptsim_cost_memory_bound_s(hw, (bytes))
  double q = T * H, k = T * KV, f = T * F;
  /* forward: RoPE to fp32 (2 r + 4 w), complex product (4 r + 4 w), to bf16 (4 r + 2 w) on q
   * and on k, against one bf16 pass over both (2 r + 2 w); silu (2 r + 2 w) and the product
   * (4 r + 2 w) against one fused pass (4 r + 2 w) */
  double fwd = PASS(6 * q) + PASS(8 * q) + PASS(6 * q) + PASS(6 * k) + PASS(8 * k) + PASS(6 * k) -
               PASS(4 * (q + k)) + PASS(4 * f) + PASS(6 * f) - PASS(6 * f);
  /* backward: RoPE the same three kernels each, against twice the fused pass; the product's
   * two gradients and silu's (4 r + 2 w each) against twice the fused pass; the sums of the
   * q/k/v and w1/w3 input gradients (4 r + 2 w over T x h) */
  double bwd = 2.0 * PASS(6 * q) + PASS(8 * q) + 2.0 * PASS(6 * k) + PASS(8 * k) -
               PASS(8 * (q + k)) + 3.0 * PASS(6 * f) - PASS(12 * f) + 3.0 * PASS(6 * T * H);
#undef PASS
  g_assert_cmpfloat_with_epsilon(eager.forward_s - compiled.forward_s, fwd, 1e-12);
  g_assert_cmpfloat_with_epsilon(eager.backward_input_s - compiled.backward_input_s, bwd, 1e-12);
  g_assert_cmpfloat(eager.backward_weight_s, ==, compiled.backward_weight_s);
  g_assert_cmpfloat(eager.flops, ==, compiled.flops);
}

static void test_split_gemms(void) {
  g_test_summary("PyTorch's layer runs q, k, v and gate, up as separate GEMMs: the same FLOPs "
                 "as Megatron's fused QKV and fc1, each GEMM priced at its own size");
  PtsimJob job;
  PtsimWork te, torch;
  FixtureLayout l = {8, 1, 1, 1, 1, 64, 8192, PTSIM_RECOMPUTE_NONE};
  fixture_job(&job, "llama3-8b", "h100-80g", l);
  layer_of(&job, &te);
  torch_job(&job, 1, PTSIM_TORCH_LAYERS_COMPILED, PTSIM_RECOMPUTE_NONE);
  layer_of(&job, &torch);
  g_assert_cmpfloat_with_epsilon(te.flops, torch.flops, 1e-9 * te.flops);
  const PtsimHardware *hw = &job.hw;
  /* wgrad GEMMs differ only by the split: (h, q) + 2 (h, kv) + 2 (h, f) against (h, q + 2kv)
   * and (h, 2f), K = T */
  double split = ptsim_cost_gemm_s(hw, NULL, PTSIM_PRECISION_BF16, 4096, 4096, 8192) +
                 2.0 * ptsim_cost_gemm_s(hw, NULL, PTSIM_PRECISION_BF16, 4096, 1024, 8192) +
                 2.0 * ptsim_cost_gemm_s(hw, NULL, PTSIM_PRECISION_BF16, 4096, 14336, 8192);
  double fused = ptsim_cost_gemm_s(hw, NULL, PTSIM_PRECISION_BF16, 4096, 6144, 8192) +
                 ptsim_cost_gemm_s(hw, NULL, PTSIM_PRECISION_BF16, 4096, 28672, 8192);
  g_assert_cmpfloat_with_epsilon(torch.backward_weight_s - te.backward_weight_s, split - fused,
                                 1e-12);
}

static void test_validation(void) {
  g_test_summary("selective-op needs PyTorch layers and flash attention");
  PtsimJob job;
  FixtureLayout l = {8, 1, 1, 1, 1, 64, 8192, PTSIM_RECOMPUTE_NONE};
  fixture_job(&job, "llama3-8b", "h100-80g", l);
  job.settings.recompute = PTSIM_RECOMPUTE_SELECTIVE_OP;
  g_autoptr(GError) error = NULL;
  g_assert_false(ptsim_job_validate(&job, &error)); /* Transformer Engine layers */
  g_assert_nonnull(strstr(error->message, "--transformer-impl torch"));
  g_clear_error(&error);
  job.settings.transformer_engine = 0;
  job.settings.torch_layers = PTSIM_TORCH_LAYERS_EAGER;
  job.settings.flash_attention = 0;
  g_assert_false(ptsim_job_validate(&job, &error));
  g_assert_nonnull(strstr(error->message, "--attention flash"));
  g_clear_error(&error);
  job.settings.flash_attention = 1;
  g_assert_true(ptsim_job_validate(&job, &error));
  job.settings.recompute = PTSIM_RECOMPUTE_SELECTIVE;
  g_assert_false(ptsim_job_validate(&job, &error)); /* Megatron's modules are not torch's */
  g_assert_nonnull(strstr(error->message, "selective-op"));
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/workload-torch/saved-gemms", test_saved_gemms);
  g_test_add_func("/workload-torch/op-saved-bytes-8b", test_saved_bytes_8b);
  g_test_add_func("/workload-torch/op-recompute-flops-8b", test_recompute_flops_8b);
  g_test_add_func("/workload-torch/eager-kernels-8b", test_eager_kernels_8b);
  g_test_add_func("/workload-torch/split-gemms", test_split_gemms);
  g_test_add_func("/workload-torch/validation", test_validation);
  return g_test_run();
}
