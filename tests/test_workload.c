/* test_workload.c — the ops of a step (sim/core/workload.c) under FP8, as
 * Transformer Engine runs Megatron-LM's default GPT layer: the identities
 * below follow from which kernels exist, not from any tuned number.
 *
 * Llama 2 7B on one H100 (tp 1): h 4096, ffn 11008, MHA, T = 4096 tokens.
 * Between bf16 and fp8 only the GEMMs and the casts differ (norms, RoPE,
 * attention, residuals and the activation are bf16 either way), so
 *   layer(fp8) - GEMMs(fp8) - [layer(bf16) - GEMMs(bf16)]
 * is exactly the casts: forward, the inputs of O (T x h) and fc2
 * (T x ffn), each read in bf16 and written as fp8 plus its fp8 transpose
 * (4 bytes an element); QKV and fc1 get theirs from the LayerNorm kernel
 * (TE LayerNormLinear).  Backward, the four output gradients: T x 3h
 * (QKV), T x h (O), T x 2 ffn (fc1, gate and up), T x h (fc2). */
#include <glib.h>
#include "cost.h"
#include "job_fixture.h"
#include "plan_of.h"

#define T 4096
#define H 4096
#define FFN 11008

static void work_of(PtsimPrecision precision, gint64 tp, PtsimWorkload *w, PtsimJob *job) {
  FixtureLayout l = {tp, tp, 1, 1, 1, 64, T, PTSIM_RECOMPUTE_NONE};
  fixture_job(job, "llama2-7b", "h100-80g", l);
  job->settings.precision = precision;
  workload_of(job, NULL, w);
}

/* The forward and dgrad GEMMs of a layer at tp 1. */
static double gemms(const PtsimHardware *hw, PtsimPrecision p, int dgrad) {
  const gint64 shape[4][2] = {{3 * H, H}, {H, H}, {2 * FFN, H}, {H, FFN}}; /* (out, in) */
  double s = 0.0;
  for (int i = 0; i < 4; i++)
    s += dgrad ? ptsim_cost_gemm_s(hw, NULL, p, T, shape[i][1], shape[i][0])
               : ptsim_cost_gemm_s(hw, NULL, p, T, shape[i][0], shape[i][1]);
  return s;
}

/* The casts of a layer under `recipe` at tp 1: what fp8 adds beyond its
 * GEMMs, against bf16 beyond its GEMMs (forward, dgrad). */
static void casts_of(PtsimFp8Recipe recipe, double *fwd, double *bwd, PtsimHardware *hw) {
  PtsimJob job;
  g_autofree PtsimWorkload *b = g_new0(PtsimWorkload, 1);
  g_autofree PtsimWorkload *f = g_new0(PtsimWorkload, 1);
  work_of(PTSIM_PRECISION_BF16, 1, b, &job);
  job.settings.precision = PTSIM_PRECISION_FP8;
  job.settings.fp8_recipe = recipe;
  workload_of(&job, NULL, f);
  *hw = job.hw;
  *fwd = (f->layer.forward_s - gemms(hw, PTSIM_PRECISION_FP8, 0)) -
         (b->layer.forward_s - gemms(hw, PTSIM_PRECISION_BF16, 0));
  *bwd = (f->layer.backward_input_s - gemms(hw, PTSIM_PRECISION_FP8, 1)) -
         (b->layer.backward_input_s - gemms(hw, PTSIM_PRECISION_BF16, 1));
}

/* The four output gradients' casts, `per` bytes an element. */
static double dy_casts(const PtsimHardware *hw, double per) {
  return ptsim_cost_memory_bound_s(hw, per * T * 3 * H) +
         2.0 * ptsim_cost_memory_bound_s(hw, per * T * H) +
         ptsim_cost_memory_bound_s(hw, per * T * 2 * FFN);
}

static void test_fp8_casts(void) {
  g_test_summary("fp8 adds two forward casts (O, fc2 inputs) and four backward (every dY)");
  PtsimHardware hw;
  double fwd, bwd;
  casts_of(PTSIM_FP8_DELAYED, &fwd, &bwd, &hw);
  g_assert_cmpfloat_with_epsilon(fwd,
                                 ptsim_cost_memory_bound_s(&hw, 4.0 * T * H) +
                                     ptsim_cost_memory_bound_s(&hw, 4.0 * T * FFN),
                                 1e-12);
  g_assert_cmpfloat_with_epsilon(bwd, dy_casts(&hw, 4.0), 1e-12);
}

/* Current scaling (--fp8-recipe tensorwise): every cast first reads its
 * bf16 input once more for the amax (6 bytes an element), except where
 * the norm kernel computed the amax (TE normalization.cpp,
 * FUSED_NORM_AMAX_FP8): QKV's and fc1's inputs are then written bf16 by the
 * norm and cast without that pass (4 bytes an element), where delayed
 * scaling had no cast at all. */
static void test_fp8_casts_tensorwise(void) {
  g_test_summary("tensorwise: an amax pass per cast; the norm's amax spares QKV's and fc1's");
  PtsimHardware hw;
  double fwd, bwd;
  casts_of(PTSIM_FP8_TENSORWISE, &fwd, &bwd, &hw);
  g_assert_cmpfloat_with_epsilon(fwd,
                                 ptsim_cost_memory_bound_s(&hw, 6.0 * T * H) +       /* O */
                                     ptsim_cost_memory_bound_s(&hw, 6.0 * T * FFN) + /* fc2 */
                                     2.0 * ptsim_cost_memory_bound_s(&hw, 4.0 * T * H),
                                 1e-12); /* QKV, fc1 */
  g_assert_cmpfloat_with_epsilon(bwd, dy_casts(&hw, 6.0), 1e-12);
}

static void test_fp8_head_is_bf16(void) {
  g_test_summary("the LM head (Megatron's ColumnParallelLinear, outside TE) costs the same in fp8");
  PtsimJob job;
  g_autofree PtsimWorkload *b = g_new0(PtsimWorkload, 1);
  g_autofree PtsimWorkload *f = g_new0(PtsimWorkload, 1);
  work_of(PTSIM_PRECISION_BF16, 2, b, &job);
  work_of(PTSIM_PRECISION_FP8, 2, f, &job);
  g_assert_cmpfloat(f->head.forward_s, ==, b->head.forward_s);
  g_assert_cmpfloat(f->head.backward_input_s, ==, b->head.backward_input_s);
  g_assert_cmpfloat(f->head.backward_weight_s, ==, b->head.backward_weight_s);
}

/* tp 2 with SP, no TP overlap: forward, QKV and fc1 all-gather their norm's
 * output in fp8 (T x h bytes) where bf16 moves 2 T x h; O and fc2
 * reduce-scatter bf16 outputs either way. */
static void test_fp8_allgather(void) {
  g_test_summary("sequence-parallel all-gathers of the LayerNormLinear inputs move fp8 bytes");
  PtsimJob job;
  g_autofree PtsimWorkload *f = g_new0(PtsimWorkload, 1);
  work_of(PTSIM_PRECISION_FP8, 2, f, &job);
  g_autofree PtsimPlan *plan = plan_of(&job);
  const PtsimGroup *g = &plan->groups[PTSIM_GROUP_TP];
  double ag = ptsim_cost_collective_s(&job.hw, NULL, PTSIM_COLL_ALL_GATHER, 1.0 * T * H, g);
  double rs = ptsim_cost_collective_s(&job.hw, NULL, PTSIM_COLL_REDUCE_SCATTER, 2.0 * T * H, g);
  g_assert_cmpfloat_with_epsilon(f->layer.forward_comm_s[PTSIM_COMM_TP], 2.0 * ag + 2.0 * rs,
                                 1e-12);
}

/* --deterministic-mode: PyTorch fills each tensor empty() allocates, so
 * every output Transformer Engine allocates is written once more (2 bytes
 * an element, one fill launch each).  Llama 2 7B, tp 1, T = 4096, bf16,
 * MHA (K and V h wide each).  Forward: the QKV (T x 3h), attention (T x
 * h), O (T x h), fc1 (T x 2 ffn) and fc2 (T x h) outputs.  Backward: the
 * dgrads' outputs, T x h for QKV, O and fc1 and T x ffn for fc2, and the
 * attention's dQ, dK and dV (T x h each, three tensors).  The wgrads
 * fill nothing while they accumulate straight into main_grad; without
 * gradient-accumulation fusion each writes a new 3h x h, h x h, 2 ffn x h
 * and h x ffn gradient. */
static void test_deterministic_fill(void) {
  g_test_summary("deterministic mode fills every TE output once: forward, dgrad, attention, and "
                 "the wgrads without gradient-accumulation fusion");
  PtsimJob job;
  g_autofree PtsimWorkload *b = g_new0(PtsimWorkload, 1);
  g_autofree PtsimWorkload *d = g_new0(PtsimWorkload, 1);
  work_of(PTSIM_PRECISION_BF16, 1, b, &job);
  job.settings.deterministic = 1;
  workload_of(&job, NULL, d);
  const PtsimHardware *hw = &job.hw;
#define FILL(elements) ptsim_cost_memory_bound_s(hw, 2.0 * (elements))
  double fwd = FILL(1.0 * T * 3 * H) + FILL(1.0 * T * H) /* attention */ + FILL(1.0 * T * H) +
               FILL(2.0 * T * FFN) + FILL(1.0 * T * H);
  double bwd = 3.0 * FILL(1.0 * T * H) + FILL(1.0 * T * FFN) + 3.0 * FILL(1.0 * T * H);
  double wgrad = FILL(3.0 * H * H) + FILL(1.0 * H * H) + FILL(2.0 * FFN * H) + FILL(1.0 * H * FFN);
  g_assert_cmpfloat_with_epsilon(d->layer.forward_s - b->layer.forward_s, fwd, 1e-12);
  g_assert_cmpfloat_with_epsilon(d->layer.backward_input_s - b->layer.backward_input_s, bwd, 1e-12);
  if (job.settings.grad_accumulation_fusion) {
    g_assert_cmpfloat(d->layer.backward_weight_s, ==, b->layer.backward_weight_s);
    job.settings.grad_accumulation_fusion = 0;
    workload_of(&job, NULL, d);
    job.settings.deterministic = 0;
    workload_of(&job, NULL, b);
  }
  g_assert_cmpfloat_with_epsilon(d->layer.backward_weight_s - b->layer.backward_weight_s, wgrad,
                                 1e-12);
  /* Megatron's own LM head (torch.matmul) allocates nothing through empty() */
  g_assert_cmpfloat(d->head.forward_s, ==, b->head.forward_s);
  /* Megatron's local layers neither */
  job.settings.transformer_engine = 0;
  workload_of(&job, NULL, b);
  job.settings.deterministic = 1;
  workload_of(&job, NULL, d);
  g_assert_cmpfloat(d->layer.forward_s, ==, b->layer.forward_s);
#undef FILL
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/workload/fp8-casts", test_fp8_casts);
  g_test_add_func("/workload/fp8-casts-tensorwise", test_fp8_casts_tensorwise);
  g_test_add_func("/workload/fp8-head-is-bf16", test_fp8_head_is_bf16);
  g_test_add_func("/workload/fp8-allgather", test_fp8_allgather);
  g_test_add_func("/workload/deterministic-fill", test_deterministic_fill);
  return g_test_run();
}
