/* test_blackwell_precision.c — MXFP8 and NVFP4 (issue 22 item 4): a profile's
 * capability keys (peak_fp4_tflops, mxfp8) let --fp8-recipe mxfp8 and
 * --fp4-format run on Blackwell and refuse them with the key named
 * elsewhere; an NVFP4 GEMM is priced at the FP4 peak with 4-bit operands;
 * NVFP4 layers keep 1.125-byte weight copies; --fp4-format means the same
 * from Megatron-LM's arguments as natively.  Expected values by hand from
 * the formulas of cost.h and plan.c and the profile's numbers.
 *
 * Fixtures: the shipped b200-180g and h100-80g profiles (PTSIM_DATA_DIR). */
#include <math.h>
#include <string.h>

#include <glib.h>

#include "config.h"
#include "cost.h"
#include "job_build.h"
#include "plan_of.h"

/* Two layers of a 1024-wide GPT (ffn 4096, 8 heads), 8 GPUs, bf16 base. */
#define SMALL                                                                         \
  "--num-layers 2 --hidden-size 1024 --num-attention-heads 8 --seq-length 2048 "      \
  "--max-position-embeddings 2048 --micro-batch-size 1 --global-batch-size 8 --bf16 " \
  "--vocab-size 32000 --attention-dropout 0 --hidden-dropout 0 --transformer-impl "   \
  "transformer_engine "

static void assert_rel(double got, double want, double tol) {
  if (fabs(got - want) > tol * fabs(want))
    g_error("got %.9g, want %.9g (relative tolerance %g)", got, want, tol);
}

/* Builds the job of MEGATRON (or none) plus the native PRECISION,
 * RECIPE, FP4 (each NULL: not given) on HW; FALSE with the error. */
static gboolean build(const char *hw, const char *megatron, const char *precision,
                      const char *recipe, const char *fp4, PtsimJob *job, GError **error) {
  PtsimJobOptions o;
  ptsim_job_options_init(&o);
  o.hw = g_strdup(hw);
  o.megatron_args = g_strdup(megatron);
  o.precision = g_strdup(precision);
  o.fp8_recipe = g_strdup(recipe);
  o.fp4_format = g_strdup(fp4);
  o.gpus = (PtsimOptionInt){TRUE, 8};
  gboolean ok = ptsim_job_build(&o, job, NULL, error);
  ptsim_job_options_clear(&o);
  return ok;
}

static void test_capabilities(void) {
  g_test_summary("--fp8-recipe mxfp8 and --fp4-format run on B200 and are refused on H100 with "
                 "the profile key named");
  PtsimJob job;
  g_autoptr(GError) error = NULL;
  g_assert_true(build("b200-180g", SMALL, "fp8", "mxfp8", NULL, &job, &error));
  g_assert_no_error(error);
  g_assert_cmpint(job.settings.fp8_recipe, ==, PTSIM_FP8_MXFP8);
  g_assert_true(build("b200-180g", SMALL, NULL, NULL, "e2m1", &job, &error));
  g_assert_no_error(error);
  g_assert_cmpint(job.settings.precision, ==, PTSIM_PRECISION_FP8);
  g_assert_cmpint(job.settings.fp8_recipe, ==, PTSIM_FP8_NVFP4);
  /* B200: 9000 TFLOP/s dense FP4 ([mleng]) */
  assert_rel(job.hw.peak_fp4_flops, 9000e12, 1e-15);
  g_assert_true(job.hw.mxfp8);

  g_assert_false(build("h100-80g", SMALL, "fp8", "mxfp8", NULL, &job, &error));
  g_assert_nonnull(strstr(error->message, "--fp8-recipe mxfp8 needs MXFP8 tensor cores"));
  g_assert_nonnull(strstr(error->message, "h100-80g has none (its [gpu] mxfp8 key"));
  g_clear_error(&error);
  g_assert_false(build("h100-80g", SMALL, NULL, NULL, "e2m1", &job, &error));
  g_assert_nonnull(strstr(error->message, "--fp4-format needs NVFP4 tensor cores"));
  g_assert_nonnull(strstr(error->message, "peak_fp4_tflops"));
  g_clear_error(&error);
  /* one low-precision recipe per run */
  g_assert_false(build("b200-180g", SMALL, NULL, "mxfp8", "e2m1", &job, &error));
  g_assert_nonnull(strstr(error->message, "--fp4-format"));
  g_clear_error(&error);
  g_assert_false(build("b200-180g", SMALL "--fp8-format hybrid --fp4-format e2m1", NULL, NULL, NULL,
                       &job, &error));
  g_assert_nonnull(strstr(error->message, "--fp4-format and --fp8-format"));
}

static void test_megatron_parity(void) {
  g_test_summary("Megatron-LM's --fp4-format e2m1 gives the job the native --fp4-format gives");
  PtsimJob a, b;
  g_autoptr(GError) error = NULL;
  g_assert_true(build("b200-180g", SMALL "--fp4-format e2m1", NULL, NULL, NULL, &a, &error));
  g_assert_no_error(error);
  g_assert_true(build("b200-180g", SMALL, NULL, NULL, "e2m1", &b, &error));
  g_assert_no_error(error);
  g_assert_cmpint(memcmp(&a, &b, sizeof a), ==, 0);
}

static void test_nvfp4_gemm(void) {
  g_test_summary("an NVFP4 GEMM runs at the FP4 peak with the ramp scaled to it, and reads "
                 "9/16-byte operands");
  PtsimHardware hw;
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_hardware_load("b200-180g", &hw, &error));
  g_assert_no_error(error);
  /* 8192^3: F = 2 x 8192^3 = 1.0995e12.  The ramp 24 GFLOP at bf16 scaled
   * by 9000 / 2250 = 96 GFLOP: size factor F / (F + 96e9).  128 x 256
   * tiles: 64 x 32 = 2048 on 148 SMs, 14 waves of 148 = 2072 slots: fill
   * 2048 / 2072.  Efficiency 0.66 x size x fill x 0.95 (the low-precision
   * GEMM factor, cost.c).  Compute F / (9000e12 x eff) = 0.1419 ms; HBM:
   * (9/16) x 2 x 8192^2 + 2 x 8192^2 B at 8000 GB/s x 0.85 = 0.0316 ms,
   * hidden; plus the 4 us launch. */
  double f = 2.0 * 8192.0 * 8192.0 * 8192.0;
  double eff = 0.66 * f / (f + 96e9) * (2048.0 / 2072.0) * 0.95;
  double want = f / (9000e12 * eff) + 4e-6;
  assert_rel(ptsim_cost_gemm_format_s(&hw, NULL, PTSIM_FORMAT_NVFP4, 8192, 8192, 8192), want,
             1e-12);
  /* the operands: at 1 GB/s of HBM (x 0.85) memory binds an 8 x 8192 x 8192
   * GEMM (its compute, under 0.1 ms, does not); it reads (9/16) B per
   * NVFP4 element and (33/32) B per MXFP8 one, and writes 2 B per output:
   * ((9/16) (8 x 8192 + 8192^2) + 2 x 8 x 8192) / 0.85e9 = 44.6 ms */
  PtsimHardware slow = hw;
  slow.hbm_bytes_per_s = 1e9; /* so that memory binds both */
  double elems = 8.0 * 8192.0 + 8192.0 * 8192.0;
  double t_nvfp4 = ptsim_cost_gemm_format_s(&slow, NULL, PTSIM_FORMAT_NVFP4, 8, 8192, 8192);
  double t_mxfp8 = ptsim_cost_gemm_format_s(&slow, NULL, PTSIM_FORMAT_MXFP8, 8, 8192, 8192);
  assert_rel(t_nvfp4, ((0.5 + 1.0 / 16.0) * elems + 2.0 * 8 * 8192) / (1e9 * 0.85) + 4e-6, 1e-12);
  assert_rel(t_mxfp8, ((1.0 + 1.0 / 32.0) * elems + 2.0 * 8 * 8192) / (1e9 * 0.85) + 4e-6, 1e-12);
  /* without FP4 tensor cores NVFP4 is priced as FP8 (validation refuses
   * the job; the cost stays total) */
  PtsimHardware h100;
  g_assert_true(ptsim_hardware_load("h100-80g", &h100, &error));
  assert_rel(ptsim_cost_gemm_format_s(&h100, NULL, PTSIM_FORMAT_NVFP4, 8192, 8192, 8192),
             ptsim_cost_gemm_format_s(&h100, NULL, PTSIM_FORMAT_FP8, 8192, 8192, 8192), 1e-15);
}

static void test_weight_copies(void) {
  g_test_summary("NVFP4 layers keep a row-wise and a column-wise 4-bit copy of each weight "
                 "matrix with E4M3 scales per 16: 1.125 B per parameter beside the bf16 weight");
  PtsimJob bf16, fp8, fp4;
  g_autoptr(GError) error = NULL;
  g_assert_true(build("b200-180g", SMALL, NULL, NULL, NULL, &bf16, &error));
  g_assert_true(build("b200-180g", SMALL, "fp8", "tensorwise", NULL, &fp8, &error));
  g_assert_true(build("b200-180g", SMALL, NULL, NULL, "e2m1", &fp4, &error));
  g_assert_no_error(error);
  g_autofree PtsimPlan *p16 = plan_of(&bf16);
  g_autofree PtsimPlan *p8 = plan_of(&fp8);
  g_autofree PtsimPlan *p4 = plan_of(&fp4);
  /* a layer's matrices: QKV 3 h^2 + projection h^2 + fc1 and fc2 2 x 4 h^2
   * = 12 x 1024^2 = 12,582,912; two layers 25,165,824.  FP8 copies 2 B
   * each, NVFP4 2 x (1/2 + 1/16) = 1.125 B. */
  double matrices = 2.0 * 12.0 * 1024.0 * 1024.0;
  assert_rel(p8->stage_weight_bytes[0] - p16->stage_weight_bytes[0], 2.0 * matrices, 1e-12);
  assert_rel(p4->stage_weight_bytes[0] - p16->stage_weight_bytes[0], 1.125 * matrices, 1e-12);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/blackwell-precision/capabilities", test_capabilities);
  g_test_add_func("/blackwell-precision/megatron-parity", test_megatron_parity);
  g_test_add_func("/blackwell-precision/nvfp4-gemm", test_nvfp4_gemm);
  g_test_add_func("/blackwell-precision/weight-copies", test_weight_copies);
  return g_test_run();
}
