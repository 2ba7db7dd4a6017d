/* test_cost.c — the cost model against hand-written alpha-beta formulas and
 * the measured numbers of shared/reference/communication_and_hardware.md. */
#include <glib.h>
#include <math.h>
#include <string.h>
#include "cost.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* DGX A100 80GB: C1 peaks and 108 SMs, B4 NVLink 240 GB/s, B5 ~24 GB/s per
 * HDR NIC, hw_profiles/a100-80g.ini's 128x128 GEMM tile. */
static void fill_a100(PtsimHardware *hw) {
  memset(hw, 0, sizeof *hw);
  g_strlcpy(hw->name, "a100-test", sizeof hw->name);
  hw->memory_bytes = 80e9;
  hw->peak_bf16_flops = 312e12;
  hw->peak_fp8_flops = 0.0;
  hw->peak_fp32_flops = 19.5e12;
  hw->hbm_bytes_per_s = 2039e9;
  hw->sm_count = 108;
  hw->gemm_tile_m = 128;
  hw->gemm_tile_n = 128;
  hw->gpus_per_node = 8;
  hw->nvlink_bytes_per_s = 240e9;
  hw->nvlink_latency_s = 1e-6;
  hw->nic_bytes_per_s = 24e9;
  hw->net_latency_s = 5e-6;
  hw->nvls = 0;
  hw->gemm_efficiency_max = 0.86;
  hw->gemm_half_flops = 1e9;
  hw->attention_efficiency = 0.65;
  hw->memory_efficiency = 0.8;
  hw->kernel_launch_s = 4e-6;
}

/* DGX H100: C1 peaks and 132 SMs, B4 NVLink 370 GB/s, B5 ~48 GB/s per NDR
 * NIC, NVLS, hw_profiles/h100-80g.ini's 128x256 GEMM tile. */
static void fill_h100(PtsimHardware *hw) {
  fill_a100(hw);
  g_strlcpy(hw->name, "h100-test", sizeof hw->name);
  hw->peak_bf16_flops = 989e12;
  hw->peak_fp8_flops = 1979e12;
  hw->peak_fp32_flops = 66.9e12;
  hw->hbm_bytes_per_s = 3350e9;
  hw->sm_count = 132;
  hw->gemm_tile_n = 256;
  hw->nvlink_bytes_per_s = 370e9;
  hw->nic_bytes_per_s = 48e9;
  hw->nvls = 1;
  hw->gemm_efficiency_max = 0.80;
  hw->attention_efficiency = 0.70;
}

/* Parameters with message-size saturation switched off, so that the model
 * reduces to the plain alpha-beta formulas. */
static void params_unsaturated(const PtsimHardware *hw, PtsimCostParams *p) {
  ptsim_cost_params_default(hw, p);
  p->nvlink_half_bytes = 0.0;
  p->net_half_bytes = 0.0;
}

static void assert_rel(double got, double want, double tol) {
  g_assert_cmpfloat(want, !=, 0.0);
  if (fabs(got - want) > tol * fabs(want))
    g_error("got %.9g, want %.9g (tolerance %.3g relative, off by %.3g)", got, want, tol,
            (got - want) / want);
}

/* ---- pure formulas ---- */

static void test_formulas(void) {
  double a = 2e-6, b = 100e9, n = 64e6;
  PtsimGroup grp;
  g_test_summary("alpha-beta formulas of B1, written out by hand");
  assert_rel(ptsim_cost_ring_allreduce_s(8, a, b, n), 2.0 * 7.0 * a + 2.0 * 7.0 / 8.0 * n / b,
             1e-12);
  assert_rel(ptsim_cost_ring_allgather_s(8, a, b, n), 7.0 * a + 7.0 / 8.0 * n / b, 1e-12);
  assert_rel(ptsim_cost_ring_reduce_scatter_s(16, a, b, n), 15.0 * a + 15.0 / 16.0 * n / b, 1e-12);
  assert_rel(ptsim_cost_send_recv_s(a, b, n), a + n / b, 1e-12);
  assert_rel(ptsim_cost_all_to_all_s(4, a, b, n), 3.0 * a + 3.0 / 4.0 * n / b, 1e-12);
  assert_rel(ptsim_cost_tree_allreduce_s(64, a, b, n), 2.0 * 6.0 * a + 2.0 * n / b, 1e-12);
  /* hierarchical, G = 8, N = 4: intra RS + inter AR of n/8 + intra AG */
  assert_rel(ptsim_cost_hierarchical_allreduce_s(8, 4, 1e-6, 5e-6, 240e9, 24e9, n),
             (7.0 * 1e-6 + 7.0 / 8.0 * n / 240e9) +
                 (2.0 * 3.0 * 5e-6 + 2.0 * 3.0 / 4.0 * (n / 8.0) / 24e9) +
                 (7.0 * 1e-6 + 7.0 / 8.0 * n / 240e9),
             1e-12);
  g_assert_cmpfloat(ptsim_cost_ring_allreduce_s(1, a, b, n), ==, 0.0);
  g_assert_cmpint(ptsim_cost_ceil_log2(1), ==, 0);
  g_assert_cmpint(ptsim_cost_ceil_log2(2), ==, 1);
  g_assert_cmpint(ptsim_cost_ceil_log2(5), ==, 3);
  g_assert_cmpint(ptsim_cost_ceil_log2(64), ==, 6);
  assert_rel(ptsim_cost_bus_factor(PTSIM_COLL_ALL_REDUCE, 8), 1.75, 1e-12);
  assert_rel(ptsim_cost_bus_factor(PTSIM_COLL_ALL_GATHER, 8), 0.875, 1e-12);
  assert_rel(ptsim_cost_bus_factor(PTSIM_COLL_SEND_RECV, 2), 1.0, 1e-12);
  (void)grp;
}

/* ---- collectives against the formulas ---- */

static void test_collectives_match_formulas(void) {
  PtsimHardware hw;
  PtsimCostParams p;
  PtsimGroup node8, dp4, dp32, pair_inter;
  double n = 256e6, base;
  g_test_summary("each algorithm, saturation off, equals base latency + its B1 formula");
  fill_a100(&hw);
  params_unsaturated(&hw, &p);
  base = p.base_latency_s;
  ptsim_topology_group_uniform(8, 8, &node8);      /* one node */
  ptsim_topology_group_uniform(4, 1, &dp4);        /* 4 nodes, G = 1 */
  ptsim_topology_group_uniform(32, 8, &dp32);      /* 4 nodes, G = 8 */
  ptsim_topology_group_uniform(2, 1, &pair_inter); /* 2 nodes */

  /* inside a node: ring over NVLink */
  assert_rel(ptsim_cost_collective_algo_s(&hw, &p, PTSIM_COLL_ALL_REDUCE, PTSIM_ALGO_RING, n,
                                          &node8),
             base + 2.0 * 7.0 * 1e-6 + 2.0 * 7.0 / 8.0 * n / 240e9, 1e-12);
  assert_rel(ptsim_cost_collective_algo_s(&hw, &p, PTSIM_COLL_ALL_GATHER, PTSIM_ALGO_RING, n,
                                          &node8),
             base + 7.0 * 1e-6 + 7.0 / 8.0 * n / 240e9, 1e-12);
  assert_rel(ptsim_cost_collective_algo_s(&hw, &p, PTSIM_COLL_REDUCE_SCATTER, PTSIM_ALGO_RING, n,
                                          &node8),
             base + 7.0 * 1e-6 + 7.0 / 8.0 * n / 240e9, 1e-12);
  assert_rel(ptsim_cost_collective_algo_s(&hw, &p, PTSIM_COLL_ALL_TO_ALL, PTSIM_ALGO_RING, n,
                                          &node8),
             base + 7.0 * 1e-6 + 7.0 / 8.0 * n / 240e9, 1e-12);
  /* A100: no NVLS */
  g_assert_cmpfloat(ptsim_cost_collective_algo_s(&hw, &p, PTSIM_COLL_ALL_REDUCE, PTSIM_ALGO_NVLS, n,
                                                 &node8),
                    <, 0.0);
  g_assert_cmpfloat(ptsim_cost_collective_algo_s(&hw, &p, PTSIM_COLL_ALL_REDUCE,
                                                 PTSIM_ALGO_HIERARCHICAL, n, &node8),
                    <, 0.0);

  /* across nodes, G = 1: flat ring over each GPU's own NIC */
  assert_rel(ptsim_cost_collective_algo_s(&hw, &p, PTSIM_COLL_ALL_REDUCE, PTSIM_ALGO_RING, n, &dp4),
             base + ptsim_cost_ring_allreduce_s(4, 5e-6, 24e9, n), 1e-12);
  assert_rel(ptsim_cost_collective_algo_s(&hw, &p, PTSIM_COLL_ALL_GATHER, PTSIM_ALGO_RING, n, &dp4),
             base + ptsim_cost_ring_allgather_s(4, 5e-6, 24e9, n), 1e-12);
  assert_rel(ptsim_cost_collective_algo_s(&hw, &p, PTSIM_COLL_ALL_REDUCE, PTSIM_ALGO_TREE, n, &dp4),
             base + 2.0 * 2.0 * 5e-6 + 2.0 * n / (0.92 * 24e9), 1e-12);
  g_assert_cmpfloat(ptsim_cost_collective_algo_s(&hw, &p, PTSIM_COLL_ALL_REDUCE,
                                                 PTSIM_ALGO_HIERARCHICAL, n, &dp4),
                    <, 0.0);

  /* across nodes, G = 8: ring bounded by min(NVLink, 8 NICs); hierarchical */
  assert_rel(ptsim_cost_collective_algo_s(&hw, &p, PTSIM_COLL_ALL_REDUCE, PTSIM_ALGO_RING, n,
                                          &dp32),
             base + (62.0 - 6.0) * 1e-6 + 6.0 * 5e-6 + 2.0 * 31.0 / 32.0 * n / (8.0 * 24e9), 1e-12);
  assert_rel(ptsim_cost_collective_algo_s(&hw, &p, PTSIM_COLL_ALL_REDUCE, PTSIM_ALGO_HIERARCHICAL,
                                          n, &dp32),
             base + (7.0 * 1e-6 + 7.0 / 8.0 * n / 240e9) +
                 (2.0 * 3.0 * 5e-6 + 2.0 * 3.0 / 4.0 * (n / 8.0) / 24e9) +
                 (7.0 * 1e-6 + 7.0 / 8.0 * n / 240e9),
             1e-12);

  /* send/recv inside a node and across */
  ptsim_topology_group_uniform(2, 2, &node8);
  assert_rel(ptsim_cost_collective_s(&hw, &p, PTSIM_COLL_SEND_RECV, n, &node8),
             base + 1e-6 + n / 240e9, 1e-12);
  assert_rel(ptsim_cost_collective_s(&hw, &p, PTSIM_COLL_SEND_RECV, n, &pair_inter),
             base + 5e-6 + n / 24e9, 1e-12);
}

static void test_collective_edges(void) {
  PtsimHardware hw;
  PtsimGroup one, eight;
  PtsimCollectiveCost c;
  g_test_summary("one-rank groups and empty buffers cost nothing");
  fill_a100(&hw);
  ptsim_topology_group_uniform(1, 8, &one);
  ptsim_topology_group_uniform(8, 8, &eight);
  g_assert_cmpfloat(ptsim_cost_collective_s(&hw, NULL, PTSIM_COLL_ALL_REDUCE, 1e9, &one), ==, 0.0);
  g_assert_cmpfloat(ptsim_cost_collective_s(&hw, NULL, PTSIM_COLL_SEND_RECV, 1e9, &one), ==, 0.0);
  g_assert_cmpfloat(ptsim_cost_collective_s(&hw, NULL, PTSIM_COLL_ALL_GATHER, 0.0, &eight), ==,
                    0.0);
  ptsim_cost_collective(&hw, NULL, PTSIM_COLL_ALL_REDUCE, 8.0, &eight, &c);
  g_assert_cmpfloat(c.time_s, >, 0.0);
  /* tiny message: latency bound, at least the base latency */
  g_assert_cmpfloat(c.time_s, >=, 8.4e-6);
  g_assert_cmpfloat(c.time_s, <, 100e-6);
}

/* ---- collectives against measurements (B5) ---- */

static double allreduce_busbw(const PtsimHardware *hw, const PtsimGroup *grp, double n,
                              PtsimAlgorithm *algo) {
  PtsimCollectiveCost c;
  ptsim_cost_collective(hw, NULL, PTSIM_COLL_ALL_REDUCE, n, grp, &c);
  if (algo != NULL) *algo = c.algo;
  assert_rel(c.busbw_bytes_per_s, n / c.time_s * 2.0 * (double)(grp->size - 1) / (double)grp->size,
             1e-12);
  return c.busbw_bytes_per_s;
}

static void test_a100_node_allreduce(void) {
  PtsimHardware hw;
  PtsimGroup grp;
  PtsimAlgorithm algo;
  double t, want;
  g_test_summary("8xA100 1 GiB all-reduce near the measured 232.5 GB/s busbw (B5), within 15%");
  fill_a100(&hw);
  ptsim_topology_group_uniform(8, 8, &grp);
  t = ptsim_cost_collective_s(&hw, NULL, PTSIM_COLL_ALL_REDUCE, GIB, &grp);
  want = 2.0 * 7.0 / 8.0 * GIB / 232e9;
  assert_rel(t, want, 0.15);
  allreduce_busbw(&hw, &grp, GIB, &algo);
  g_assert_cmpint(algo, ==, PTSIM_ALGO_RING);
  /* never above the link: busbw <= NVLink bandwidth */
  g_assert_cmpfloat(allreduce_busbw(&hw, &grp, 4.0 * GIB, NULL), <=, 240e9);
}

static void test_h100_nvls(void) {
  PtsimHardware hw;
  PtsimGroup grp;
  PtsimAlgorithm algo;
  double busbw, ring_busbw;
  PtsimCollectiveCost c;
  g_test_summary(
      "8xH100 NVLS 1 GiB all-reduce near 476 GB/s busbw (B5), within 15%; ring near 370");
  fill_h100(&hw);
  ptsim_topology_group_uniform(8, 8, &grp);
  busbw = allreduce_busbw(&hw, &grp, GIB, &algo);
  g_assert_cmpint(algo, ==, PTSIM_ALGO_NVLS);
  assert_rel(busbw, 476e9, 0.15);
  ring_busbw = 2.0 * 7.0 / 8.0 * GIB /
               ptsim_cost_collective_algo_s(&hw, NULL, PTSIM_COLL_ALL_REDUCE, PTSIM_ALGO_RING, GIB,
                                            &grp);
  assert_rel(ring_busbw, 370e9, 0.15);
  /* B2: "256M is too small to reach peak": clearly below the 1 GiB value */
  ptsim_cost_collective(&hw, NULL, PTSIM_COLL_ALL_REDUCE, 256e6, &grp, &c);
  g_assert_cmpfloat(c.busbw_bytes_per_s, <, 0.97 * busbw);
  g_assert_cmpfloat(c.busbw_bytes_per_s, >, 0.80 * busbw);
}

static void test_dgx_a100_multinode_ring(void) {
  PtsimHardware hw;
  PtsimGroup grp;
  double t_ring, busbw;
  int nodes;
  g_test_summary("DGX-A100 8x HDR multi-node ring all-reduce near 192 GB/s busbw (B5), within 20%");
  fill_a100(&hw);
  for (nodes = 2; nodes <= 32; nodes *= 2) {
    ptsim_topology_group_uniform(8 * nodes, 8, &grp);
    t_ring = ptsim_cost_collective_algo_s(&hw, NULL, PTSIM_COLL_ALL_REDUCE, PTSIM_ALGO_RING, GIB,
                                          &grp);
    busbw = GIB / t_ring * ptsim_cost_bus_factor(PTSIM_COLL_ALL_REDUCE, grp.size);
    assert_rel(busbw, 192e9, 0.20);
    /* NCCL's choice is never slower than its ring */
    g_assert_cmpfloat(ptsim_cost_collective_s(&hw, NULL, PTSIM_COLL_ALL_REDUCE, GIB, &grp), <=,
                      t_ring);
  }
}

static void test_forwarded_all_to_all(void) {
  PtsimHardware hw;
  PtsimCostParams prm;
  PtsimGroup grp, node;
  double copy, ranks, nodes, rank_bytes, node_bytes, t, want, flat;
  g_test_summary("DeepEP-style dispatch across 2 nodes: the fabric carries one copy per remote "
                 "node, NVLink one per rank; near DeepEP's measured 43 GB/s RDMA bottleneck at "
                 "EP16 (H800, CX7), and faster than a flat all-to-all");
  /* DeepEP's legacy table (shared/reference/kernel_benchmarks.md): 4096
   * tokens of hidden 7168 in bf16, top-8 of 256 experts, EP16 = 2 nodes
   * of 8 H800 (NVLink ~160 GB/s achievable, CX7 400G: the profile's 48
   * GB/s NIC).  One copy: 4096 x 7168 x 2 = 58,720,256 bytes.  Ranks hit
   * per token, 16 local experts each: 16 (1 - C(240,8)/C(256,8)) =
   * 16 (1 - 0.5923) = 6.52; remote nodes, 128 experts each: 2 (1 -
   * C(128,8)/C(256,8)) / 2 = 1 - 0.00349 = 0.997. */
  fill_h100(&hw);
  hw.nvlink_bytes_per_s = 160e9;
  ptsim_topology_group_uniform(16, 8, &grp);
  copy = 4096.0 * 7168.0 * 2.0;
  ranks = 16.0 * (1.0 - 0.5923);
  nodes = 1.0 - 0.00349;
  rank_bytes = copy * ranks;
  node_bytes = copy * nodes;
  /* unsaturated: 8.4 us + 7 x 1 us + 1 x 5 us + max(15/16 x 383.0 MB /
   * 160 GB/s = 2.244 ms, 58.5 MB / 48 GB/s = 1.219 ms) */
  params_unsaturated(&hw, &prm);
  t = ptsim_cost_forwarded_all_to_all_s(&hw, &prm, &grp, rank_bytes, node_bytes);
  want = prm.base_latency_s + 7.0 * 1e-6 + 5e-6 +
         fmax(15.0 / 16.0 * rank_bytes / 160e9, node_bytes / 48e9);
  assert_rel(t, want, 1e-9);
  /* with a faster NVLink the fabric decides: its bandwidth near the 43
   * GB/s DeepEP measured as the RDMA bottleneck, within 15% */
  hw.nvlink_bytes_per_s = 370e9;
  t = ptsim_cost_forwarded_all_to_all_s(&hw, NULL, &grp, rank_bytes, node_bytes);
  assert_rel(node_bytes / t, 43e9, 0.15);
  /* a flat all-to-all sends each remote rank's copy over the fabric */
  flat = ptsim_cost_collective_s(&hw, NULL, PTSIM_COLL_ALL_TO_ALL, rank_bytes, &grp);
  g_assert_cmpfloat(t, <, flat);
  /* inside one node there is nothing to forward: the all-to-all itself */
  ptsim_topology_group_uniform(8, 8, &node);
  assert_rel(ptsim_cost_forwarded_all_to_all_s(&hw, NULL, &node, rank_bytes, 0.0),
             ptsim_cost_collective_s(&hw, NULL, PTSIM_COLL_ALL_TO_ALL, rank_bytes, &node), 1e-12);
  g_assert_cmpfloat(ptsim_cost_forwarded_all_to_all_s(&hw, NULL, &grp, 0.0, node_bytes), ==, 0.0);
}

static void test_tree_for_small_messages(void) {
  PtsimHardware hw;
  PtsimGroup grp;
  PtsimCollectiveCost c;
  g_test_summary("many nodes: tree (log2 latency) wins small all-reduces, ring wins large ones");
  fill_a100(&hw);
  ptsim_topology_group_uniform(128, 1, &grp); /* dp = 128 over 128 nodes */
  ptsim_cost_collective(&hw, NULL, PTSIM_COLL_ALL_REDUCE, 64e3, &grp, &c);
  g_assert_cmpint(c.algo, ==, PTSIM_ALGO_TREE);
  ptsim_cost_collective(&hw, NULL, PTSIM_COLL_ALL_REDUCE, 4.0 * GIB, &grp, &c);
  g_assert_cmpint(c.algo, ==, PTSIM_ALGO_RING);
}

static void test_nic_sharing(void) {
  PtsimHardware hw;
  PtsimCostParams p;
  PtsimGroup dp, half;
  double n = 1e9, t_all, t_half;
  g_test_summary("each GPU uses its own NIC: fewer senders per node do not speed a GPU up");
  fill_a100(&hw);
  params_unsaturated(&hw, &p);
  /* tp = 8, dp = 4: 8 DP groups per node, G = 1, every GPU sends */
  ptsim_topology_group_of(8, 1, 4, 1, 8, PTSIM_GROUP_DP, 0, &dp);
  g_assert_cmpint(dp.fabric_senders_per_node, ==, 8);
  t_all = ptsim_cost_collective_algo_s(&hw, &p, PTSIM_COLL_ALL_REDUCE, PTSIM_ALGO_RING, n, &dp);
  assert_rel(t_all, p.base_latency_s + ptsim_cost_ring_allreduce_s(4, 5e-6, 24e9, n), 1e-12);
  /* only half the GPUs of the node sending: still one NIC each
   * (nic_aggregation 1) ... */
  half = dp;
  half.fabric_senders_per_node = 4;
  t_half = ptsim_cost_collective_algo_s(&hw, &p, PTSIM_COLL_ALL_REDUCE, PTSIM_ALGO_RING, n, &half);
  assert_rel(t_half, t_all, 1e-12);
  /* ... unless NIC aggregation is allowed (PXN-like): then 2 NICs each */
  p.nic_aggregation = 2.0;
  t_half = ptsim_cost_collective_algo_s(&hw, &p, PTSIM_COLL_ALL_REDUCE, PTSIM_ALGO_RING, n, &half);
  assert_rel(t_half, p.base_latency_s + ptsim_cost_ring_allreduce_s(4, 5e-6, 48e9, n), 1e-12);
}

static void test_layout_groups(void) {
  PtsimHardware hw;
  PtsimGroup tp, dp;
  double n = 512e6, t_tp, t_dp;
  g_test_summary("a DP group crossing nodes costs more than the TP group inside the node");
  fill_a100(&hw);
  ptsim_topology_group_of(8, 1, 4, 1, 8, PTSIM_GROUP_TP, 0, &tp);
  ptsim_topology_group_of(8, 1, 4, 1, 8, PTSIM_GROUP_DP, 0, &dp);
  t_tp = ptsim_cost_collective_s(&hw, NULL, PTSIM_COLL_ALL_REDUCE, n, &tp);
  t_dp = ptsim_cost_collective_s(&hw, NULL, PTSIM_COLL_ALL_REDUCE, n, &dp);
  g_assert_cmpfloat(t_dp, >, 5.0 * t_tp);
  /* tp = 2 dp = 8 on 8-GPU nodes: DP has G = 4 per node, hierarchical
   * applies */
  ptsim_topology_group_of(2, 1, 8, 1, 8, PTSIM_GROUP_DP, 0, &dp);
  g_assert_cmpint(dp.gpus_per_node, ==, 4);
  g_assert_cmpfloat(ptsim_cost_collective_algo_s(&hw, NULL, PTSIM_COLL_ALL_REDUCE,
                                                 PTSIM_ALGO_HIERARCHICAL, n, &dp),
                    >, 0.0);
}

/* ---- compute ---- */

static double gemm_tflops(const PtsimHardware *hw, PtsimPrecision prec, int64_t m, int64_t n,
                          int64_t k) {
  return 2.0 * (double)m * (double)n * (double)k / ptsim_cost_gemm_s(hw, NULL, prec, m, n, k) /
         1e12;
}

static void test_gemm_monotone(void) {
  PtsimHardware hws[2];
  int h;
  g_test_summary("bigger square GEMMs reach more TFLOP/s, never above max efficiency x peak");
  fill_a100(&hws[0]);
  fill_h100(&hws[1]);
  for (h = 0; h < 2; h++) {
    const PtsimHardware *hw = &hws[h];
    double prev = 0.0, cap = hw->gemm_efficiency_max * hw->peak_bf16_flops / 1e12;
    int64_t s;
    for (s = 128; s <= 32768; s *= 2) {
      double tf = gemm_tflops(hw, PTSIM_PRECISION_BF16, s, s, s);
      double eff = ptsim_cost_gemm_efficiency(hw, NULL, PTSIM_PRECISION_BF16, s, s, s);
      g_assert_cmpfloat(tf, >, prev);
      g_assert_cmpfloat(tf, <=, cap);
      g_assert_cmpfloat(eff, >, 0.0);
      g_assert_cmpfloat(eff, <=, hw->gemm_efficiency_max);
      prev = tf;
    }
    /* the largest reaches close to the cap */
    g_assert_cmpfloat(prev, >, 0.95 * cap);
  }
  g_assert_cmpfloat(ptsim_cost_gemm_s(&hws[0], NULL, PTSIM_PRECISION_BF16, 0, 10, 10), ==, 0.0);
}

static void test_gemm_tp_split_slower(void) {
  PtsimHardware hw;
  double whole, split;
  g_test_summary("a TP-split GEMM (n/8) runs at lower TFLOP/s than the whole one");
  fill_a100(&hw);
  /* Llama-like MLP up-projection: tokens 4096, h 4096 -> 4h */
  whole = gemm_tflops(&hw, PTSIM_PRECISION_BF16, 4096, 16384, 4096);
  split = gemm_tflops(&hw, PTSIM_PRECISION_BF16, 4096, 16384 / 8, 4096);
  g_assert_cmpfloat(split, <, whole);
  /* skinny: one row block per SM wave is poor */
  g_assert_cmpfloat(gemm_tflops(&hw, PTSIM_PRECISION_BF16, 128, 1024, 4096), <, 0.5 * whole);
}

static void test_gemm_roofline(void) {
  PtsimHardware hw;
  double t, mem;
  g_test_summary("a matrix-vector-like GEMM is memory bound: bytes/(hbm x eff) + launch");
  fill_a100(&hw);
  t = ptsim_cost_gemm_s(&hw, NULL, PTSIM_PRECISION_BF16, 1, 8192, 8192);
  mem = 2.0 * (1.0 * 8192 + 8192.0 * 8192 + 1.0 * 8192) /
        (hw.hbm_bytes_per_s * hw.memory_efficiency);
  assert_rel(t, mem + hw.kernel_launch_s, 1e-12);
}

static void test_fp8(void) {
  PtsimHardware h100, a100;
  int64_t s = 8192;
  double bf16, fp8;
  g_test_summary("FP8 beats bf16 on large GEMMs on H100; a profile without FP8 falls back to bf16");
  fill_h100(&h100);
  fill_a100(&a100);
  bf16 = ptsim_cost_gemm_s(&h100, NULL, PTSIM_PRECISION_BF16, s, s, s);
  fp8 = ptsim_cost_gemm_s(&h100, NULL, PTSIM_PRECISION_FP8, s, s, s);
  g_assert_cmpfloat(fp8, <, 0.75 * bf16);
  g_assert_cmpfloat(fp8, >, 0.4 * bf16);
  assert_rel(ptsim_cost_gemm_s(&a100, NULL, PTSIM_PRECISION_FP8, s, s, s),
             ptsim_cost_gemm_s(&a100, NULL, PTSIM_PRECISION_BF16, s, s, s), 1e-12);
}

static void test_params_default(void) {
  PtsimHardware hw;
  PtsimCostParams p;
  g_test_summary("defaults: 108 SMs and 128x128 tiles on A100, 132 and 128x256 on H100");
  fill_a100(&hw);
  ptsim_cost_params_default(&hw, &p);
  g_assert_cmpint(p.sm_count, ==, 108);
  g_assert_cmpint(p.gemm_tile_n, ==, 128);
  assert_rel(p.base_latency_s, 8.4e-6, 1e-12);
  fill_h100(&hw);
  ptsim_cost_params_default(&hw, &p);
  g_assert_cmpint(p.sm_count, ==, 132);
  g_assert_cmpint(p.gemm_tile_n, ==, 256);
}

/* Wave quantization by hand, the profile's 128x256 tile on B200's 148 SMs
 * against H100's 132 (everything else of the GPU the same, bf16, k 4096):
 *
 * m 512, n 9472: ceil(512/128) x ceil(9472/256) = 4 x 37 = 148 tiles, and
 *   148 the other way round (2 x 74).  Not fewer tiles than SMs on either
 *   GPU, so no split-K and no smaller tiles.  148 SMs: 1 wave, all busy,
 *   fill 148/(1 x 148) = 1.  132 SMs: ceil(148/132) = 2 waves, the second
 *   with 16 tiles, fill 148/(2 x 132) = 148/264 = 0.5606.  The efficiency
 *   ratio B200/H100 is 264/148 = 1.784.
 * m 8192, n 14336 (Llama-3.1-8B's up-projection at 8K tokens, the worked
 *   example of shared/reference/kernel_benchmarks.md 1.5): 64 x 56 = 3584
 *   tiles (32 x 112 the other way).  148 SMs: ceil(3584/148) = 25 waves,
 *   fill 3584/3700; 132 SMs: ceil(3584/132) = 28 waves, fill 3584/3696.
 *   Ratio 3696/3700. */
static void test_wave_count_b200_h100(void) {
  PtsimHardware h100, b200;
  PtsimCostParams p;
  const PtsimPrecision bf16 = PTSIM_PRECISION_BF16;
  double flops;
  g_test_summary("the profile's SM count sets the waves: 148 tiles fill one wave on 148 SMs, two "
                 "on 132; 3584 tiles take 25 waves on 148 and 28 on 132");
  fill_h100(&h100);
  b200 = h100;
  b200.sm_count = 148;
  ptsim_cost_params_default(&b200, &p);
  g_assert_cmpint(p.sm_count, ==, 148);
  g_assert_cmpint(p.gemm_tile_m, ==, 128);
  g_assert_cmpint(p.gemm_tile_n, ==, 256);
  assert_rel(ptsim_cost_gemm_efficiency(&b200, NULL, bf16, 512, 9472, 4096) /
                 ptsim_cost_gemm_efficiency(&h100, NULL, bf16, 512, 9472, 4096),
             264.0 / 148.0, 1e-12);
  /* on 148 SMs only the size factor F/(F + half) is left: no wave lost */
  flops = 2.0 * 512 * 9472 * 4096;
  assert_rel(ptsim_cost_gemm_efficiency(&b200, NULL, bf16, 512, 9472, 4096),
             b200.gemm_efficiency_max * flops / (flops + b200.gemm_half_flops), 1e-12);
  assert_rel(ptsim_cost_gemm_efficiency(&b200, NULL, bf16, 8192, 14336, 4096) /
                 ptsim_cost_gemm_efficiency(&h100, NULL, bf16, 8192, 14336, 4096),
             3696.0 / 3700.0, 1e-12);
}

static void test_attention(void) {
  PtsimHardware hw;
  double full, causal, fwd, bwd, tf_short, tf_long;
  g_test_summary("attention: causal halves the FLOPs time, backward 2.5x FLOPs at 0.9x efficiency");
  fill_h100(&hw);
  full = ptsim_cost_attention_s(&hw, NULL, PTSIM_PRECISION_BF16, 1, 32, 8192, 8192, 128, 0, 0);
  causal = ptsim_cost_attention_s(&hw, NULL, PTSIM_PRECISION_BF16, 1, 32, 8192, 8192, 128, 1, 0);
  assert_rel(causal, 0.5 * full, 0.01);
  assert_rel(ptsim_cost_attention_flops(NULL, 1, 32, 8192, 8192, 128, 0, 0),
             4.0 * 32 * 8192.0 * 8192.0 * 128, 1e-12);
  assert_rel(ptsim_cost_attention_flops(NULL, 1, 32, 8192, 8192, 128, 1, 1),
             2.5 * 0.5 * 4.0 * 32 * 8192.0 * 8192.0 * 128, 1e-12);
  fwd = full;
  bwd = ptsim_cost_attention_s(&hw, NULL, PTSIM_PRECISION_BF16, 1, 32, 8192, 8192, 128, 0, 1);
  assert_rel(bwd / fwd, 2.5 / 0.9, 0.01);
  /* short sequences are less efficient (same total FLOPs: b x seq^2 fixed) */
  tf_short = ptsim_cost_attention_flops(NULL, 64, 32, 1024, 1024, 128, 0, 0) /
             ptsim_cost_attention_s(&hw, NULL, PTSIM_PRECISION_BF16, 64, 32, 1024, 1024, 128, 0, 0);
  tf_long = ptsim_cost_attention_flops(NULL, 1, 32, 8192, 8192, 128, 0, 0) / full;
  g_assert_cmpfloat(tf_short, <, tf_long);
  /* ... by the factor s/(s + 400) of PtsimCostParams */
  assert_rel(tf_short / tf_long, (1024.0 / 1424.0) / (8192.0 / 8592.0), 0.02);
  /* long sequences approach attention_efficiency x peak */
  assert_rel(tf_long, hw.attention_efficiency * hw.peak_bf16_flops * 8192.0 / 8592.0, 0.01);
  g_assert_cmpfloat(tf_long, <=, hw.attention_efficiency * hw.peak_bf16_flops);
  /* FA3 backward table shape (C3): 512 -> ~0.56 of the 16k value */
  assert_rel(512.0 / (512.0 + 400.0) / (16384.0 / (16384.0 + 400.0)), 316.0 / 561.0, 0.05);
  g_assert_cmpfloat(ptsim_cost_attention_s(&hw, NULL, PTSIM_PRECISION_BF16, 0, 32, 8, 8, 8, 0, 0),
                    ==, 0.0);
}

static void test_window(void) {
  PtsimHardware hw;
  double causal, windowed, floor_s;
  g_test_summary("sliding-window attention: the share of the score matrix a window of w keys "
                 "before each query leaves, priced at the efficiency of a kernel over w + 1 keys");
  /* s 8, w 2: queries 0..7 see 1, 2, 3, 3, 3, 3, 3, 3 keys = 21 of 64 */
  assert_rel(ptsim_cost_window_fraction(8, 2), 21.0 / 64.0, 1e-12);
  /* no window, or one as long as the sequence: the causal (s + 1) / 2s */
  assert_rel(ptsim_cost_window_fraction(8, 0), 36.0 / 64.0, 1e-12);
  assert_rel(ptsim_cost_window_fraction(8, 7), 36.0 / 64.0, 1e-12);
  fill_h100(&hw);
  causal = ptsim_cost_attention_s(&hw, NULL, PTSIM_PRECISION_BF16, 1, 64, 8192, 8192, 64, 1, 0);
  g_assert_cmpfloat(ptsim_cost_attention_window_s(&hw, NULL, PTSIM_ATTENTION_CUDNN, 1, 64, 8192, 64,
                                                  8191, 0),
                    ==, causal);
  /* s 8192, w 1024: (1025 x 1026 / 2 + 7167 x 1025) / (8193 x 8192 / 2) of the causal FLOPs =
   * 0.234, at the efficiency s/(s + 400) of 1025 keys against 8192 (0.719 / 0.953): 0.310 of
   * the causal time, above the kernel's HBM floor */
  windowed = ptsim_cost_attention_window_s(&hw, NULL, PTSIM_ATTENTION_CUDNN, 1, 64, 8192, 64, 1024,
                                           0);
  double share = (1025.0 * 1026.0 / 2.0 + 7167.0 * 1025.0) / (8193.0 * 8192.0 / 2.0);
  double eff = (1025.0 / 1425.0) / (8192.0 / 8592.0);
  assert_rel(windowed - hw.kernel_launch_s, (causal - hw.kernel_launch_s) * share / eff, 0.01);
  /* a window of 128: the Q, K, V, O traffic bounds it (4 x 8192 x 64 heads x 64 x 2 bytes) */
  windowed = ptsim_cost_attention_window_s(&hw, NULL, PTSIM_ATTENTION_CUDNN, 1, 64, 8192, 64, 128,
                                           0);
  floor_s = 4.0 * 8192.0 * 64.0 * 64.0 * 2.0 / (hw.hbm_bytes_per_s * hw.memory_efficiency);
  g_assert_cmpfloat(windowed, >=, floor_s);
  g_assert_cmpfloat(windowed, <, causal);
}

static void test_memory_bound(void) {
  PtsimHardware hw;
  g_test_summary("memory-bound op: bytes / (hbm x memory_efficiency) + launch");
  fill_a100(&hw);
  assert_rel(ptsim_cost_memory_bound_s(&hw, 1e9), 1e9 / (2039e9 * 0.8) + 4e-6, 1e-12);
  g_assert_cmpfloat(ptsim_cost_memory_bound_s(&hw, 0.0), ==, 0.0);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/cost/formulas", test_formulas);
  g_test_add_func("/cost/collectives-match-formulas", test_collectives_match_formulas);
  g_test_add_func("/cost/collective-edges", test_collective_edges);
  g_test_add_func("/cost/a100-node-allreduce-232", test_a100_node_allreduce);
  g_test_add_func("/cost/h100-nvls-476", test_h100_nvls);
  g_test_add_func("/cost/dgx-a100-multinode-ring-192", test_dgx_a100_multinode_ring);
  g_test_add_func("/cost/tree-for-small-messages", test_tree_for_small_messages);
  g_test_add_func("/cost/forwarded-all-to-all", test_forwarded_all_to_all);
  g_test_add_func("/cost/nic-sharing", test_nic_sharing);
  g_test_add_func("/cost/layout-groups", test_layout_groups);
  g_test_add_func("/cost/gemm-monotone", test_gemm_monotone);
  g_test_add_func("/cost/gemm-tp-split-slower", test_gemm_tp_split_slower);
  g_test_add_func("/cost/gemm-roofline", test_gemm_roofline);
  g_test_add_func("/cost/fp8", test_fp8);
  g_test_add_func("/cost/params-default", test_params_default);
  g_test_add_func("/cost/wave-count-b200-h100", test_wave_count_b200_h100);
  g_test_add_func("/cost/attention", test_attention);
  g_test_add_func("/cost/window", test_window);
  g_test_add_func("/cost/memory-bound", test_memory_bound);
  return g_test_run();
}
