/* test_cost_measured.c — the cost model on a measured kernel table
 * (cost_measured.c): each mechanism on a small table built here, the
 * expected value derived by hand in the comment from the formula of
 * cost.h and the table's numbers. */
#include <glib.h>
#include <math.h>
#include <string.h>
#include "cost.h"
#include "kernel_table.h"

#define MIB (1024.0 * 1024.0)
#define GIB (1024.0 * MIB)

static void assert_rel(double got, double want, double tol) {
  if (fabs(got - want) > tol * fabs(want))
    g_error("got %.9g, want %.9g (relative tolerance %g)", got, want, tol);
}

/* A B200-like profile: 2250 TFLOP/s bf16, 4500 fp8, 148 SMs, a 128 x 256
 * tile; formulas' constants that differ from anything the table gives. */
static void fill_b200(PtsimHardware *hw) {
  memset(hw, 0, sizeof *hw);
  g_strlcpy(hw->name, "b200-test", sizeof hw->name);
  hw->memory_bytes = 180e9;
  hw->peak_bf16_flops = 2250e12;
  hw->peak_fp8_flops = 4500e12;
  hw->peak_fp32_flops = 80e12;
  hw->hbm_bytes_per_s = 8000e9;
  hw->sm_count = 148;
  hw->gemm_tile_m = 128;
  hw->gemm_tile_n = 256;
  hw->gpus_per_node = 8;
  hw->nvlink_bytes_per_s = 740e9;
  hw->nvlink_latency_s = 3.4e-6;
  hw->nic_bytes_per_s = 48e9;
  hw->net_latency_s = 14e-6;
  hw->nvls = 1;
  hw->gemm_efficiency_max = 0.66;
  hw->gemm_half_flops = 24e9;
  hw->attention_efficiency = 0.4;
  hw->memory_efficiency = 0.8;
  hw->kernel_launch_s = 4e-6;
}

static void add(PtsimKernelTable *t, int32_t kind, int32_t k0, int32_t k1, int32_t k2, int32_t k3,
                int32_t k4, int32_t k5, const char *series, double x, double y) {
  int32_t key[PTSIM_KERNEL_KEYS];
  key[0] = k0;
  key[1] = k1;
  key[2] = k2;
  key[3] = k3;
  key[4] = k4;
  key[5] = k5;
  g_assert_cmpint(ptsim_kernel_table_add(t, kind, key, series, x, y), ==, PTSIM_KERNEL_ADD_OK);
}

/* bf16 squares 1024^3 423, 4096^3 1400, 8192^3 1420 TFLOP/s (torch). */
static void add_squares(PtsimKernelTable *t) {
  const double e[3] = {1024.0, 4096.0, 8192.0}, tf[3] = {423.0, 1400.0, 1420.0};
  for (int i = 0; i < 3; i++)
    add(t, PTSIM_KERNEL_GEMM, PTSIM_KERNEL_BF16, PTSIM_KERNEL_IMPL_TORCH, 0,
        PTSIM_KERNEL_LAYOUT_DENSE, 0, 0, "square", 2.0 * e[i] * e[i] * e[i], tf[i]);
}

static void test_gemm_waves_148(void) {
  static PtsimKernelTable t;
  PtsimHardware hw;
  PtsimCostParams p;
  g_test_summary("a GEMM the table has not measured: the square sweep at its FLOPs times its "
                 "waves on 148 SMs over the square's");
  fill_b200(&hw);
  ptsim_kernel_table_init(&t, "b200-test");
  add_squares(&t);
  hw.kernel_table = 1;
  ptsim_cost_params_init(&hw, &t, 1, &p);
  g_assert_true(p.kernels == &t);
  /* (4096, 4096, 8192): F = 2^38 = 2.749e11, between the 4096^3 (2^37) and
   * 8192^3 (2^40) squares, a third of the way in ln F:
   *   S = 1400 + (1420 - 1400) / 3 = 1406.667 TFLOP/s.
   * Its 128 x 256 tiles: 32 x 16 = 512 on 148 SMs, 4 waves: 512 / 592.
   * The square of the same FLOPs, c = (F/2)^(1/3) = 5160.6 -> 5161:
   * 41 x 21 = 861 tiles, 6 waves: 861 / 888.
   * Relative to the sweep's best, 1420, under the level of the profile's
   * large GEMMs (gemm_efficiency_max 0.66):
   *   eff = 0.66 * 1406.667 / 1420 * (512 / 592) / (861 / 888) = 0.58318 */
  assert_rel(ptsim_cost_gemm_format_efficiency(&hw, &p, PTSIM_FORMAT_BF16, 4096, 4096, 8192),
             0.66 * (1400.0 + 20.0 / 3.0) / 1420.0 * (512.0 / 592.0) / (861.0 / 888.0), 1e-12);
  assert_rel(ptsim_cost_wave_fill(&p, 4096, 4096, 8192), 512.0 / 592.0, 1e-15);
  assert_rel(ptsim_cost_measured_gemm_efficiency(&t, &p, PTSIM_FORMAT_BF16, 2250e12, 4096, 4096,
                                                 8192),
             (1400.0 + 20.0 / 3.0) / 2250.0 * (512.0 / 592.0) / (861.0 / 888.0), 1e-12);
  /* a measured square is its own measurement: 4096^3 at 0.66 x 1400 / 1420 */
  assert_rel(ptsim_cost_gemm_format_efficiency(&hw, &p, PTSIM_FORMAT_BF16, 4096, 4096, 4096),
             0.66 * 1400.0 / 1420.0, 1e-12);
  /* fp16 runs on bf16's sweep (the same tensor cores) */
  assert_rel(ptsim_cost_gemm_format_efficiency(&hw, &p, PTSIM_FORMAT_FP16, 4096, 4096, 4096),
             0.66 * 1400.0 / 1420.0, 1e-12);
}

static void test_gemm_floor_and_shape(void) {
  static PtsimKernelTable t;
  PtsimHardware hw;
  PtsimCostParams p, none;
  int32_t key[PTSIM_KERNEL_KEYS] = {
      PTSIM_KERNEL_BF16, PTSIM_KERNEL_IMPL_CUBLASLT, 0, PTSIM_KERNEL_LAYOUT_DENSE, 0, 0};
  double t_small, t_floor;
  g_test_summary("below the smallest measured square a GEMM takes the square's time; a measured "
                 "shape is its measurement; a format without a curve keeps the formulas");
  fill_b200(&hw);
  ptsim_kernel_table_init(&t, "b200-test");
  add_squares(&t);
  /* one measured non-square shape: 1024 x 2145 x 1024 at 1022.2 TFLOP/s */
  add(&t, PTSIM_KERNEL_GEMM, key[0], key[1], key[2], key[3], key[4], key[5], "azure-mixed",
      2.0 * 1024 * 2145 * 1024, 1022.2);
  g_assert_cmpint(ptsim_kernel_table_add_shape(&t, key, "azure-mixed", 1, 1024, 2145, 1024, 1022.2),
                  ==, PTSIM_KERNEL_ADD_OK);
  hw.kernel_table = 1;
  ptsim_cost_params_init(&hw, &t, 1, &p);
  assert_rel(ptsim_cost_gemm_format_efficiency(&hw, &p, PTSIM_FORMAT_BF16, 1024, 2145, 1024),
             0.66 * 1022.2 / 1420.0, 1e-12);
  /* 512^3 is below 1024^3: its compute time is the 1024^3 square's
   * (512^3's waves are its own square's), at the level 0.66 of the best
   * 1420: 2 1024^3 / (423e12 x 0.66 / (1420 / 2250)) = 7.69 us */
  t_small = ptsim_cost_gemm_format_s(&hw, &p, PTSIM_FORMAT_BF16, 512, 512, 512);
  t_floor = 2.0 * 1024.0 * 1024.0 * 1024.0 / (423e12 * 0.66 / (1420.0 / 2250.0));
  assert_rel(t_small - hw.kernel_launch_s, t_floor, 1e-12);
  /* no fp8 curve in this table: the formulas, as without a table */
  ptsim_cost_params_default(&hw, &none);
  assert_rel(ptsim_cost_gemm_format_efficiency(&hw, &p, PTSIM_FORMAT_FP8, 4096, 4096, 4096),
             ptsim_cost_gemm_format_efficiency(&hw, &none, PTSIM_FORMAT_FP8, 4096, 4096, 4096),
             1e-15);
  /* a profile whose index is out of the tables given has none */
  hw.kernel_table = 2;
  ptsim_cost_params_init(&hw, &t, 1, &p);
  g_assert_null(p.kernels);
}

static void test_attention_derived(void) {
  static PtsimKernelTable t;
  const int32_t A = PTSIM_KERNEL_ATTENTION, FA2 = PTSIM_KERNEL_IMPL_FA2, FP16 = PTSIM_KERNEL_FP16;
  const int32_t CAUSAL = PTSIM_KERNEL_MASK_CAUSAL, NONE = PTSIM_KERNEL_MASK_NONE;
  g_test_summary("attention: a measured pass at the nearest head dimension; a causal backward "
                 "from the unmasked one and the forward's causal ratio; a backward from the "
                 "forward and forward+backward curves");
  ptsim_kernel_table_init(&t, "h100-test");
  /* FA2 on H100 at head dim 128 (the FA3 paper's forward figure and
   * backward transcription, 2k and 8k): forward none 362 / 370, causal
   * 298 / 333; backward none 300 / 331 */
  add(&t, A, FA2, FP16, PTSIM_KERNEL_FWD, NONE, 0, 128, "s", 2048, 362.0);
  add(&t, A, FA2, FP16, PTSIM_KERNEL_FWD, NONE, 0, 128, "s", 8192, 370.0);
  add(&t, A, FA2, FP16, PTSIM_KERNEL_FWD, CAUSAL, 0, 128, "s", 2048, 298.0);
  add(&t, A, FA2, FP16, PTSIM_KERNEL_FWD, CAUSAL, 0, 128, "s", 8192, 333.0);
  add(&t, A, FA2, FP16, PTSIM_KERNEL_BWD, NONE, 0, 128, "s", 2048, 300.0);
  add(&t, A, FA2, FP16, PTSIM_KERNEL_BWD, NONE, 0, 128, "s", 8192, 331.0);
  /* and at head dim 64, forward+backward only (the FA2 figure), causal
   * 232 / 273 at 2k / 8k, with a causal forward 262 / 295 */
  add(&t, A, FA2, FP16, PTSIM_KERNEL_FWD_BWD, CAUSAL, 0, 64, "fb", 2048, 232.0);
  add(&t, A, FA2, FP16, PTSIM_KERNEL_FWD_BWD, CAUSAL, 0, 64, "fb", 8192, 273.0);
  add(&t, A, FA2, FP16, PTSIM_KERNEL_FWD, CAUSAL, 0, 64, "s", 2048, 262.0);
  add(&t, A, FA2, FP16, PTSIM_KERNEL_FWD, CAUSAL, 0, 64, "s", 8192, 295.0);
  /* forward causal at 4096 (head dim 112: nearer 128 than 64 in ln),
   * halfway in ln s between 2k and 8k: (298 + 333) / 2 */
  assert_rel(ptsim_cost_measured_attention_tflops(&t, PTSIM_ATTENTION_FA2, 0, 1, 112, 4096, NULL),
             315.5, 1e-12);
  /* backward causal at 8k, head dim 128: 331 x 333 / 370 = 297.9 */
  assert_rel(ptsim_cost_measured_attention_tflops(&t, PTSIM_ATTENTION_FA2, 1, 1, 128, 8192, NULL),
             331.0 * 333.0 / 370.0, 1e-12);
  /* backward causal at 8k, head dim 64, from T_fb = 273 and T_f = 295:
   * FLOPs 1 + 2.5 in 3.5 / 273, the forward's 1 in 1 / 295, so
   * T_b = 2.5 / (3.5 / 273 - 1 / 295) = 265.37 */
  assert_rel(ptsim_cost_measured_attention_tflops(&t, PTSIM_ATTENTION_FA2, 1, 1, 64, 8192, NULL),
             2.5 / (3.5 / 273.0 - 1.0 / 295.0), 1e-12);
  /* not measured: cuDNN runs FA2's kernel (Transformer Engine's other
   * backend), FA3 nothing */
  assert_rel(ptsim_cost_measured_attention_tflops(&t, PTSIM_ATTENTION_CUDNN, 0, 1, 128, 8192, NULL),
             333.0, 1e-12);
  g_assert_cmpfloat(ptsim_cost_measured_attention_tflops(&t, PTSIM_ATTENTION_FA3, 0, 1, 128, 8192,
                                                         NULL),
                    <, 0.0);
}

static void test_attention_time(void) {
  static PtsimKernelTable t;
  PtsimHardware hw;
  PtsimCostParams p;
  double flops;
  g_test_summary("an attention kernel runs at the profile's attention efficiency times the "
                 "measured throughput relative to the kernel's best, plus the launch");
  fill_b200(&hw);
  ptsim_kernel_table_init(&t, "b200-test");
  add(&t, PTSIM_KERNEL_ATTENTION, PTSIM_KERNEL_IMPL_CUDNN, PTSIM_KERNEL_BF16, PTSIM_KERNEL_FWD,
      PTSIM_KERNEL_MASK_CAUSAL, 0, 128, "s", 4096, 800.0);
  add(&t, PTSIM_KERNEL_ATTENTION, PTSIM_KERNEL_IMPL_CUDNN, PTSIM_KERNEL_BF16, PTSIM_KERNEL_FWD,
      PTSIM_KERNEL_MASK_CAUSAL, 0, 128, "s", 8192, 1000.0);
  hw.kernel_table = 1;
  ptsim_cost_params_init(&hw, &t, 1, &p);
  /* causal 4k x 4k, 32 heads, d 128: 4 * 32 * 4096^2 * 128 / 2 = 1.374e11
   * FLOPs at attention_efficiency 0.4 x 800 / 1000 of 2250 TFLOP/s:
   * 1.374e11 / 720e12 = 190.9 us */
  flops = 4.0 * 32 * 4096.0 * 4096.0 * 128 / 2.0;
  assert_rel(ptsim_cost_attention_kernel_s(&hw, &p, PTSIM_ATTENTION_CUDNN, PTSIM_PRECISION_BF16, 1,
                                           32, 4096, 4096, 128, 1, 0) -
                 hw.kernel_launch_s,
             flops / (2250e12 * 0.4 * 0.8), 1e-12);
}

static void test_collective_measured(void) {
  static PtsimKernelTable t;
  PtsimHardware hw;
  PtsimCostParams p;
  PtsimGroup g;
  const int32_t C = PTSIM_KERNEL_COLLECTIVE, NV = PTSIM_KERNEL_FABRIC_NVLINK;
  g_test_summary("a collective at a measured size: bytes x the bus factor / the measured busbw; "
                 "all-gather at the all-reduce's busbw times their measured ratio");
  fill_b200(&hw);
  ptsim_kernel_table_init(&t, "h100-test");
  /* H100 x 8 all-reduce, NCCL's default (Azure, NVLS): 1 MiB 43.70, 64 MiB
   * 361.78, 1 GiB 466.35 GB/s busbw; all-gather ring at 16 GiB 361.4 */
  add(&t, C, PTSIM_KERNEL_ALL_REDUCE, PTSIM_KERNEL_ALGO_DEFAULT, NV, 8, 1, 0, "ar", MIB, 43.70);
  add(&t, C, PTSIM_KERNEL_ALL_REDUCE, PTSIM_KERNEL_ALGO_DEFAULT, NV, 8, 1, 0, "ar", 64 * MIB,
      361.78);
  add(&t, C, PTSIM_KERNEL_ALL_REDUCE, PTSIM_KERNEL_ALGO_DEFAULT, NV, 8, 1, 0, "ar", GIB, 466.35);
  add(&t, C, PTSIM_KERNEL_ALL_GATHER, PTSIM_KERNEL_ALGO_RING, NV, 8, 1, 0, "ag", 16 * GIB, 361.4);
  hw.kernel_table = 1;
  ptsim_cost_params_init(&hw, &t, 1, &p);
  memset(&g, 0, sizeof g);
  g.size = 8;
  g.nodes = 1;
  g.gpus_per_node = 8;
  g.max_gpus_per_node = 8;
  g.node_size = 8;
  g.fabric_senders_per_node = 8;
  /* 64 MiB all-reduce: 67108864 x 2 x 7/8 / 361.78e9 = 324.6 us */
  assert_rel(ptsim_cost_collective_s(&hw, &p, PTSIM_COLL_ALL_REDUCE, 64 * MIB, &g),
             64 * MIB * 1.75 / 361.78e9, 1e-12);
  /* 64 MiB all-gather: busbw 361.78 x 361.4 / 466.35 (its ratio to the
   * all-reduce at the largest size measured), bus factor 7/8 */
  assert_rel(ptsim_cost_collective_s(&hw, &p, PTSIM_COLL_ALL_GATHER, 64 * MIB, &g),
             64 * MIB * 0.875 / (361.78e9 * 361.4 / 466.35), 1e-12);
  /* send/recv is not in the table: the formulas */
  {
    PtsimCostParams none;
    ptsim_cost_params_default(&hw, &none);
    assert_rel(ptsim_cost_collective_s(&hw, &p, PTSIM_COLL_SEND_RECV, 64 * MIB, &g),
               ptsim_cost_collective_s(&hw, &none, PTSIM_COLL_SEND_RECV, 64 * MIB, &g), 1e-15);
  }
}

static void test_hbm_triad(void) {
  static PtsimKernelTable t;
  PtsimHardware hw;
  PtsimCostParams p;
  g_test_summary("memory-bound kernels run at the measured STREAM triad");
  fill_b200(&hw);
  ptsim_kernel_table_init(&t, "h100-test");
  /* H100 BabelStream triad 2970 GB/s (Azure) */
  add(&t, PTSIM_KERNEL_HBM, PTSIM_KERNEL_STREAM_TRIAD, PTSIM_KERNEL_IMPL_BABELSTREAM, 0, 0, 0, 0,
      "babelstream", 1.0, 2970.0);
  hw.kernel_table = 1;
  ptsim_cost_params_init(&hw, &t, 1, &p);
  /* 1 GB: 1e9 / 2970e9 = 336.7 us, plus the launch */
  assert_rel(ptsim_cost_memory_bound_at_s(&hw, &p, 1e9), 1e9 / 2970e9 + hw.kernel_launch_s, 1e-12);
  /* without the table: hbm x memory_efficiency */
  assert_rel(ptsim_cost_memory_bound_at_s(&hw, NULL, 1e9),
             1e9 / (8000e9 * 0.8) + hw.kernel_launch_s, 1e-12);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/cost-measured/gemm-waves-148", test_gemm_waves_148);
  g_test_add_func("/cost-measured/gemm-floor-and-shape", test_gemm_floor_and_shape);
  g_test_add_func("/cost-measured/attention-derived", test_attention_derived);
  g_test_add_func("/cost-measured/attention-time", test_attention_time);
  g_test_add_func("/cost-measured/collective-measured-size", test_collective_measured);
  g_test_add_func("/cost-measured/hbm-triad", test_hbm_triad);
  return g_test_run();
}
