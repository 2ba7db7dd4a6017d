/* cost.c — operation durations on a hardware profile; see cost.h for the
 * model, its parameters and their sources.
 *
 * Layout of this file: parameters, compute (GEMM, attention, memory-bound),
 * the pure alpha-beta formulas, then the collective candidates and NCCL's
 * min-time choice.
 *
 * Collective candidates in detail (p ranks, N nodes, G members per node,
 * a_nvl = hw->nvlink_latency_s, a_net = hw->net_latency_s, base =
 * params->base_latency_s, B_nvl(x) = nvlink_bytes_per_s * sat(x, nvlink_half),
 * B_nic(x) = per-sender NIC share * sat(x, net_half)):
 *
 *   all-reduce, N = 1
 *     RING   base + 2(p-1) a_nvl + 2(p-1)/p n / B_nvl(n)
 *     TREE   base + 2(p-1) a_nvl + 2n / (0.92 B_nvl(n))      (chain in a node)
 *     NVLS   nvls_lat + 2(p-1)/p n / (1.30 B_nvl(n))          (hw->nvls, p >= 2)
 *   all-reduce, N > 1
 *     RING   base + (2(p-1) - 2(N-1)) a_nvl + 2(N-1) a_net
 *              + 2(p-1)/p n / min(B_nvl(n), G B_nic(n))
 *            one flat ring, pipelined, so the slowest link bounds it: every
 *            GPU's NVLink carries 2(p-1)/p n, and each node's egress (the
 *            same amount) is spread over the G members' NICs.  This is the
 *            192 GB/s DGX-A100 case (8 x 24 GB/s; B5).
 *     TREE   base + 2((G-1) a_nvl + ceil(log2 N) a_net)
 *              + 2n / (0.92 min(B_nvl(n), G B_nic(n)))        (B3)
 *     HIER   base + ptsim_cost_hierarchical_allreduce_s(G, N, a_nvl, a_net,
 *              B_intra(n), B_nic(n/G), n), G > 1; B_intra = B_nvl, times the
 *              NVLS factor on NVLS hardware (NVLSTree's intra-node part).
 *              Steps are summed, not overlapped: the reference's measured
 *              2-node numbers (86 GB/s on 4xHDR, B5) sit below even the
 *              summed form, so overlapping them would over-predict.
 *   all-gather / reduce-scatter: RING only (NCCL's default for these;
 *     NVLS / PAT / CollNet variants are not modelled)
 *     base + ((p-1) - (N-1)) a_nvl + (N-1) a_net + (p-1)/p n / min(B_nvl, G B_nic)
 *   send/recv: base + a + n / B over NVLink (N = 1) or the NIC (N > 1; a
 *     group spanning nodes is taken as crossing — pass a 2-rank group for
 *     a pair known to be inside a node)
 *   all-to-all: base + (G-1) a_nvl + (p-G) a_net
 *     + max((G-1)/p n / B_nvl, (p-G)/p n / B_nic): the off-node share goes
 *     through the GPU's own NIC (B1: a single NIC's bandwidth).
 *
 * Per-sender NIC share = min(node_size * nic / senders, nic * nic_aggregation)
 * with senders = group->fabric_senders_per_node (topology.h); it is
 * hw->nic_bytes_per_s whenever every GPU of the node sends. */
#include "cost.h"

/* ---- small helpers (prefixed: core .c files may be compiled together) ---- */

PTSIM_HD static double cost_max(double a, double b) { return a > b ? a : b; }
PTSIM_HD static double cost_min(double a, double b) { return a < b ? a : b; }
PTSIM_HD static int64_t cost_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Saturation of a link with message size x (cost.h, nvlink_half_bytes):
 * (x + half)/(x + 2 half); 1 when half <= 0.  Large messages: ~1 - half/x,
 * as x/(x + half) would give; small ones: 1/2, where the latency terms
 * dominate anyway.  (x/(x + half) itself would turn into a fixed extra
 * latency of half/B — ~120 us for 16 MiB at 240 GB/s — on every small
 * collective, far above what nccl-tests measures.) */
PTSIM_HD static double cost_saturation(double x, double half) {
  if (half <= 0.0) return 1.0;
  if (x < 0.0) x = 0.0;
  return (x + half) / (x + 2.0 * half);
}

PTSIM_HD static const PtsimCostParams *cost_params_or_default(const PtsimHardware *hw,
                                                              const PtsimCostParams *params,
                                                              PtsimCostParams *storage) {
  if (params != 0) return params;
  ptsim_cost_params_default(hw, storage);
  return storage;
}

/* ---- parameters ---- */

PTSIM_HD void ptsim_cost_params_default(const PtsimHardware *hw, PtsimCostParams *out) {
  out->sm_count = hw->sm_count;
  out->gemm_tile_m = hw->gemm_tile_m;
  out->gemm_tile_n = hw->gemm_tile_n;
  out->gemm_split_k_min = 256;
  out->fp8_gemm_efficiency_scale = 0.95;
  out->fp8_attention_efficiency_scale = 0.8;
  out->attention_half_seq = 400.0;
  out->attention_backward_flops_factor = 2.5;
  out->attention_backward_efficiency = 0.9;
  out->base_latency_s = 8.4e-6;
  out->nvls_latency_s = 25e-6;
  out->nvls_busbw_factor = 1.30;
  out->tree_bw_factor = 0.92;
  out->nvlink_half_bytes = 16.0 * 1024.0 * 1024.0;
  out->net_half_bytes = 16.0 * 1024.0 * 1024.0;
  out->nic_aggregation = 1.0;
  out->kernels = 0;
}

PTSIM_HD void ptsim_cost_params_init(const PtsimHardware *hw, const PtsimKernelTable *tables,
                                     int32_t count, PtsimCostParams *out) {
  ptsim_cost_params_default(hw, out);
  if (tables != 0 && hw->kernel_table >= 1 && hw->kernel_table <= count)
    out->kernels = &tables[hw->kernel_table - 1];
}

PTSIM_HD PtsimGemmFormat ptsim_cost_format(PtsimPrecision precision, PtsimFp8Recipe recipe) {
  if (precision == PTSIM_PRECISION_BF16) return PTSIM_FORMAT_BF16;
  if (precision == PTSIM_PRECISION_FP16) return PTSIM_FORMAT_FP16;
  switch (recipe) {
  case PTSIM_FP8_BLOCKWISE:
    return PTSIM_FORMAT_FP8_BLOCKWISE;
  case PTSIM_FP8_MXFP8:
    return PTSIM_FORMAT_MXFP8;
  case PTSIM_FP8_NVFP4:
    return PTSIM_FORMAT_NVFP4;
  case PTSIM_FP8_DELAYED:
  case PTSIM_FP8_TENSORWISE:
  default:
    return PTSIM_FORMAT_FP8;
  }
}

/* ---- compute ---- */

/* Fraction of the SMs' tile slots doing useful work over all waves, for one
 * tile orientation (tm along m, tn along n).  Split-K fills a partial first
 * wave when k allows it. */
PTSIM_HD static double cost_wave_fraction_of(int64_t tiles, int64_t k, int64_t sms,
                                             int64_t split_min) {
  int64_t waves;
  if (tiles < sms) {
    int64_t splits = sms / tiles;
    int64_t by_k = split_min > 0 ? k / split_min : 1;
    if (by_k < 1) by_k = 1;
    if (splits > by_k) splits = by_k;
    tiles *= splits;
  }
  waves = cost_ceil_div(tiles, sms);
  return (double)tiles / ((double)waves * (double)sms);
}

PTSIM_HD static double cost_wave_fraction(int64_t m, int64_t n, int64_t k, int64_t tm, int64_t tn,
                                          int64_t sms, int64_t split_min) {
  return cost_wave_fraction_of(cost_ceil_div(m, tm) * cost_ceil_div(n, tn), k, sms, split_min);
}

/* Best wave fill over the tile shapes a cuBLAS-like heuristic would try:
 * the profile's tile in both orientations; when that leaves the first wave
 * partly empty (fewer tiles than SMs), also the smaller 128x64, 64x128 and
 * 64x64 tiles (guess: small problems get small tiles; their lower per-tile
 * efficiency is left to the size factor F/(F + gemm_half_flops)). */
PTSIM_HD static double cost_wave_fill(int64_t m, int64_t n, int64_t k, int64_t tm, int64_t tn,
                                      int64_t sms, int64_t split_min) {
  double best = cost_max(cost_wave_fraction(m, n, k, tm, tn, sms, split_min),
                         cost_wave_fraction(m, n, k, tn, tm, sms, split_min));
  if (cost_ceil_div(m, tm) * cost_ceil_div(n, tn) < sms) {
    best = cost_max(best, cost_wave_fraction(m, n, k, 128, 64, sms, split_min));
    best = cost_max(best, cost_wave_fraction(m, n, k, 64, 128, sms, split_min));
    best = cost_max(best, cost_wave_fraction(m, n, k, 64, 64, sms, split_min));
  }
  return best;
}

PTSIM_HD double ptsim_cost_wave_fill(const PtsimCostParams *p, int64_t m, int64_t n, int64_t k) {
  int64_t sms = p->sm_count > 0 ? p->sm_count : 1;
  int64_t tm = p->gemm_tile_m > 0 ? p->gemm_tile_m : 128;
  int64_t tn = p->gemm_tile_n > 0 ? p->gemm_tile_n : 128;
  return cost_wave_fill(m, n, k, tm, tn, sms, p->gemm_split_k_min);
}

/* The same for `groups` GEMMs of one shape launched as one grouped kernel:
 * the tiles of every group share the waves. */
PTSIM_HD static double cost_wave_fill_grouped(int64_t groups, int64_t m, int64_t n, int64_t k,
                                              int64_t tm, int64_t tn, int64_t sms,
                                              int64_t split_min) {
  static const int64_t small[3][2] = {{128, 64}, {64, 128}, {64, 64}};
  double best = cost_max(cost_wave_fraction_of(groups * cost_ceil_div(m, tm) * cost_ceil_div(n, tn),
                                               k, sms, split_min),
                         cost_wave_fraction_of(groups * cost_ceil_div(m, tn) * cost_ceil_div(n, tm),
                                               k, sms, split_min));
  int i;
  if (groups * cost_ceil_div(m, tm) * cost_ceil_div(n, tn) < sms)
    for (i = 0; i < 3; i++)
      best = cost_max(best, cost_wave_fraction_of(groups * cost_ceil_div(m, small[i][0]) *
                                                      cost_ceil_div(n, small[i][1]),
                                                  k, sms, split_min));
  return best;
}

/* The HBM bandwidth memory-bound work gets: the measured STREAM triad of
 * the profile's kernel table, else the datasheet's times
 * memory_efficiency.  PARAMS may be NULL. */
PTSIM_HD static double cost_hbm(const PtsimHardware *hw, const PtsimCostParams *params) {
  double measured = params != 0 ? ptsim_cost_measured_hbm_bytes_per_s(params->kernels) : -1.0;
  return measured > 0.0 ? measured : hw->hbm_bytes_per_s * hw->memory_efficiency;
}

/* Whether FORMAT runs on the FP8 (or FP4) tensor cores here: not when the
 * profile has no FP8 peak (then it runs, and is priced, as bf16). */
PTSIM_HD static int cost_low_precision(const PtsimHardware *hw, PtsimGemmFormat format) {
  return format >= PTSIM_FORMAT_FP8 && hw->peak_fp8_flops > 0.0 ? 1 : 0;
}

/* The peak of FORMAT: NVFP4 on the FP4 tensor cores (peak_fp4_flops),
 * the FP8 formats on the FP8 ones, else bf16's. */
PTSIM_HD static double cost_peak(const PtsimHardware *hw, PtsimGemmFormat format) {
  if (format == PTSIM_FORMAT_NVFP4 && hw->peak_fp4_flops > 0.0) return hw->peak_fp4_flops;
  return cost_low_precision(hw, format) ? hw->peak_fp8_flops : hw->peak_bf16_flops;
}

/* The format a GEMM is priced as: NVFP4 as FP8 where the profile has no FP4
 * tensor cores, and bf16 where it has no FP8 ones (validation refuses
 * both for a job; the cost functions stay total). */
PTSIM_HD static PtsimGemmFormat cost_run_format(const PtsimHardware *hw, PtsimGemmFormat format) {
  if (format == PTSIM_FORMAT_NVFP4 && !(hw->peak_fp4_flops > 0.0)) format = PTSIM_FORMAT_FP8;
  return format >= PTSIM_FORMAT_FP8 && !cost_low_precision(hw, format) ? PTSIM_FORMAT_BF16 : format;
}

/* Bytes of one input element (a GEMM's output is bf16): the value and its
 * share of the block scale, MXFP8 1 + 1/32 (an E8M0 byte per 32), NVFP4
 * 1/2 + 1/16 (an E4M3 byte per 16; the per-tensor FP32 scale is nothing). */
PTSIM_HD static double cost_input_bytes(const PtsimHardware *hw, PtsimGemmFormat format) {
  if (!cost_low_precision(hw, format)) return 2.0;
  if (format == PTSIM_FORMAT_MXFP8) return 1.0 + 1.0 / 32.0;
  if (format == PTSIM_FORMAT_NVFP4) return 0.5 + 1.0 / 16.0;
  return 1.0;
}

/* The formulas' efficiency: the profile's fitted ramp and asymptote. */
PTSIM_HD static double cost_formula_gemm_efficiency(const PtsimHardware *hw,
                                                    const PtsimCostParams *p,
                                                    PtsimGemmFormat format, int64_t m, int64_t n,
                                                    int64_t k) {
  double flops, half, size_factor, wave, eff;
  flops = 2.0 * (double)m * (double)n * (double)k;
  /* gemm_half_flops is given for bf16; a faster peak makes the same
   * overhead cost more FLOPs, so scale it with the peak (same time). */
  half = hw->gemm_half_flops;
  if (cost_low_precision(hw, format) && hw->peak_bf16_flops > 0.0)
    half *= cost_peak(hw, format) / hw->peak_bf16_flops;
  size_factor = half > 0.0 ? flops / (flops + half) : 1.0;
  wave = ptsim_cost_wave_fill(p, m, n, k);
  eff = hw->gemm_efficiency_max * size_factor * wave;
  if (cost_low_precision(hw, format)) eff *= p->fp8_gemm_efficiency_scale;
  return eff;
}

PTSIM_HD double ptsim_cost_gemm_format_efficiency(const PtsimHardware *hw,
                                                  const PtsimCostParams *params,
                                                  PtsimGemmFormat format, int64_t m, int64_t n,
                                                  int64_t k) {
  PtsimCostParams storage;
  const PtsimCostParams *p = cost_params_or_default(hw, params, &storage);
  double eff, best;
  if (m < 1 || n < 1 || k < 1) return 0.0;
  format = cost_run_format(hw, format);
  eff = ptsim_cost_measured_gemm_efficiency(p->kernels, p, format, cost_peak(hw, format), m, n, k);
  best = ptsim_cost_measured_gemm_best(p->kernels, format, cost_peak(hw, format));
  if (eff > 0.0 && best > 0.0) {
    /* the measured shape dependence (size, waves) under the level the
     * profile's large GEMMs reach in a step (gemm_efficiency_max, fitted;
     * FP8 at fp8_gemm_efficiency_scale of it) */
    double level = hw->gemm_efficiency_max;
    if (cost_low_precision(hw, format)) level *= p->fp8_gemm_efficiency_scale;
    return level * eff / best;
  }
  return cost_formula_gemm_efficiency(hw, p, format, m, n, k);
}

PTSIM_HD double ptsim_cost_gemm_efficiency(const PtsimHardware *hw, const PtsimCostParams *params,
                                           PtsimPrecision precision, int64_t m, int64_t n,
                                           int64_t k) {
  return ptsim_cost_gemm_format_efficiency(hw, params,
                                           ptsim_cost_format(precision, PTSIM_FP8_TENSORWISE), m, n,
                                           k);
}

PTSIM_HD double ptsim_cost_gemm_format_s(const PtsimHardware *hw, const PtsimCostParams *params,
                                         PtsimGemmFormat format, int64_t m, int64_t n, int64_t k) {
  double flops, e_in, bytes, eff, t_compute, t_memory;
  if (m < 1 || n < 1 || k < 1) return 0.0;
  format = cost_run_format(hw, format);
  flops = 2.0 * (double)m * (double)n * (double)k;
  e_in = cost_input_bytes(hw, format);
  bytes = e_in * ((double)m * (double)k + (double)k * (double)n) + 2.0 * (double)m * (double)n;
  eff = ptsim_cost_gemm_format_efficiency(hw, params, format, m, n, k);
  t_compute = flops / (cost_peak(hw, format) * eff);
  t_memory = bytes / cost_hbm(hw, params);
  return cost_max(t_compute, t_memory) + hw->kernel_launch_s;
}

PTSIM_HD double ptsim_cost_gemm_s(const PtsimHardware *hw, const PtsimCostParams *params,
                                  PtsimPrecision precision, int64_t m, int64_t n, int64_t k) {
  return ptsim_cost_gemm_format_s(hw, params, ptsim_cost_format(precision, PTSIM_FP8_TENSORWISE), m,
                                  n, k);
}

PTSIM_HD double ptsim_cost_grouped_gemm_format_s(const PtsimHardware *hw,
                                                 const PtsimCostParams *params,
                                                 PtsimGemmFormat format, int64_t groups, int64_t m,
                                                 int64_t n, int64_t k) {
  PtsimCostParams storage;
  const PtsimCostParams *p = cost_params_or_default(hw, params, &storage);
  double flops, e_in, bytes, half, eff, t_compute, t_memory;
  int64_t sms = p->sm_count > 0 ? p->sm_count : 1;
  int64_t tm = p->gemm_tile_m > 0 ? p->gemm_tile_m : 128;
  int64_t tn = p->gemm_tile_n > 0 ? p->gemm_tile_n : 128;
  if (groups < 1 || m < 1 || n < 1 || k < 1) return 0.0;
  format = cost_run_format(hw, format);
  flops = 2.0 * (double)m * (double)n * (double)k; /* one group's */
  half = hw->gemm_half_flops;
  if (cost_low_precision(hw, format) && hw->peak_bf16_flops > 0.0)
    half *= cost_peak(hw, format) / hw->peak_bf16_flops;
  eff = hw->gemm_efficiency_max * (half > 0.0 ? flops / (flops + half) : 1.0) *
        cost_wave_fill_grouped(groups, m, n, k, tm, tn, sms, p->gemm_split_k_min);
  if (cost_low_precision(hw, format)) eff *= p->fp8_gemm_efficiency_scale;
  e_in = cost_input_bytes(hw, format);
  bytes = (double)groups *
          (e_in * ((double)m * (double)k + (double)k * (double)n) + 2.0 * (double)m * (double)n);
  t_compute = (double)groups * flops / (cost_peak(hw, format) * eff);
  t_memory = bytes / cost_hbm(hw, p);
  return cost_max(t_compute, t_memory) + hw->kernel_launch_s;
}

PTSIM_HD double ptsim_cost_grouped_gemm_s(const PtsimHardware *hw, const PtsimCostParams *params,
                                          PtsimPrecision precision, int64_t groups, int64_t m,
                                          int64_t n, int64_t k) {
  return ptsim_cost_grouped_gemm_format_s(hw, params,
                                          ptsim_cost_format(precision, PTSIM_FP8_TENSORWISE),
                                          groups, m, n, k);
}

PTSIM_HD double ptsim_cost_attention_flops(const PtsimCostParams *params, int64_t b, int64_t heads,
                                           int64_t seq_q, int64_t seq_kv, int64_t head_dim,
                                           int causal, int backward) {
  double flops, fraction = 1.0;
  if (b < 1 || heads < 1 || seq_q < 1 || seq_kv < 1 || head_dim < 1) return 0.0;
  /* QK^T and PV: 2 GEMMs of 2*sq*skv*d FLOPs each, per (batch, head). */
  flops = 4.0 * (double)b * (double)heads * (double)seq_q * (double)seq_kv * (double)head_dim;
  if (causal) {
    fraction = seq_q <= seq_kv ? 1.0 - (double)seq_q / (2.0 * (double)seq_kv) : 0.5;
  }
  flops *= fraction;
  if (backward) {
    double factor = params != 0 ? params->attention_backward_flops_factor : 2.5;
    flops *= factor;
  }
  return flops;
}

PTSIM_HD double ptsim_cost_window_fraction(int64_t seq, int64_t window) {
  double s = (double)seq, w = (double)window + 1.0, keys;
  if (seq < 1) return 0.0;
  if (window <= 0 || w >= s) return 0.5 + 0.5 / s; /* every query sees its whole prefix */
  /* query i attends to min(i + 1, w) keys: 1 + 2 + ... + w for the first w
   * queries, w for each of the s - w others */
  keys = 0.5 * w * (w + 1.0) + (s - w) * w;
  return keys / (s * s);
}

/* A flash kernel over seq_q queries and seq_kv keys; WINDOW > 0: each query
 * sees only itself and the WINDOW keys before it (seq_q = seq_kv), so the
 * FLOPs are the window's share of the score matrix and the efficiency that
 * of a kernel over the keys one query sees. */
static PTSIM_HD double attention_kernel_at(const PtsimHardware *hw, const PtsimCostParams *params,
                                           PtsimAttentionKernel kernel, PtsimPrecision precision,
                                           int64_t b, int64_t heads, int64_t seq_q, int64_t seq_kv,
                                           int64_t head_dim, int causal, int64_t window,
                                           int backward) {
  PtsimCostParams storage;
  const PtsimCostParams *p = cost_params_or_default(hw, params, &storage);
  PtsimGemmFormat format = cost_run_format(hw, ptsim_cost_format(precision, PTSIM_FP8_TENSORWISE));
  double flops, eff, elem, rows, bytes, t_compute, t_memory, measured = -1.0, best = -1.0;
  int windowed = window > 0 && window + 1 < seq_kv && seq_q == seq_kv;
  int64_t seen = windowed ? window + 1 : seq_kv; /* the keys one query sees, at most */
  flops = ptsim_cost_attention_flops(p, b, heads, seq_q, seq_kv, head_dim, causal, backward);
  if (flops <= 0.0) return 0.0;
  if (windowed) /* the window's share instead of the causal one */
    flops *= ptsim_cost_window_fraction(seq_q, window) / ptsim_cost_window_fraction(seq_q, 0);
  /* the measured curves are 16-bit kernels over a whole causal prefix */
  if (!cost_low_precision(hw, format) && !windowed)
    measured = ptsim_cost_measured_attention_tflops(p->kernels, kernel, backward, causal, head_dim,
                                                    seq_kv, &best);
  if (measured > 0.0 && best > 0.0) {
    /* the measured dependence on sequence, pass, mask and head dimension
     * under the level the profile's attention reaches in a step
     * (attention_efficiency, fitted: the kernel's best case) */
    eff = hw->attention_efficiency * measured / best;
  } else {
    eff = hw->attention_efficiency;
    if (p->attention_half_seq > 0.0) /* short-sequence factor s/(s + half) */
      eff *= (double)seen / ((double)seen + p->attention_half_seq);
    if (backward) eff *= p->attention_backward_efficiency;
    if (cost_low_precision(hw, format)) eff *= p->fp8_attention_efficiency_scale;
  }
  /* HBM traffic: forward reads Q, K, V and writes O; backward reads Q, K,
   * V, O, dO and writes dQ, dK, dV. */
  elem = cost_input_bytes(hw, format);
  rows = backward ? 4.0 * (double)seq_q + 4.0 * (double)seq_kv
                  : 2.0 * (double)seq_q + 2.0 * (double)seq_kv;
  bytes = elem * (double)b * (double)heads * (double)head_dim * rows;
  t_compute = flops / (cost_peak(hw, format) * eff);
  t_memory = bytes / cost_hbm(hw, p);
  return cost_max(t_compute, t_memory) + hw->kernel_launch_s;
}

PTSIM_HD double ptsim_cost_attention_kernel_s(const PtsimHardware *hw,
                                              const PtsimCostParams *params,
                                              PtsimAttentionKernel kernel, PtsimPrecision precision,
                                              int64_t b, int64_t heads, int64_t seq_q,
                                              int64_t seq_kv, int64_t head_dim, int causal,
                                              int backward) {
  return attention_kernel_at(hw, params, kernel, precision, b, heads, seq_q, seq_kv, head_dim,
                             causal, 0, backward);
}

PTSIM_HD double ptsim_cost_attention_window_s(const PtsimHardware *hw,
                                              const PtsimCostParams *params,
                                              PtsimAttentionKernel kernel, int64_t b, int64_t heads,
                                              int64_t seq, int64_t head_dim, int64_t window,
                                              int backward) {
  return attention_kernel_at(hw, params, kernel, PTSIM_PRECISION_BF16, b, heads, seq, seq, head_dim,
                             1, window, backward);
}

PTSIM_HD double ptsim_cost_attention_s(const PtsimHardware *hw, const PtsimCostParams *params,
                                       PtsimPrecision precision, int64_t b, int64_t heads,
                                       int64_t seq_q, int64_t seq_kv, int64_t head_dim, int causal,
                                       int backward) {
  return ptsim_cost_attention_kernel_s(hw, params, PTSIM_ATTENTION_CUDNN, precision, b, heads,
                                       seq_q, seq_kv, head_dim, causal, backward);
}

PTSIM_HD double ptsim_cost_memory_bound_s(const PtsimHardware *hw, double bytes) {
  if (bytes <= 0.0) return 0.0;
  return bytes / (hw->hbm_bytes_per_s * hw->memory_efficiency) + hw->kernel_launch_s;
}

PTSIM_HD double ptsim_cost_memory_bound_at_s(const PtsimHardware *hw, const PtsimCostParams *params,
                                             double bytes) {
  if (bytes <= 0.0) return 0.0;
  return bytes / cost_hbm(hw, params) + hw->kernel_launch_s;
}

/* ---- pure alpha-beta formulas (B1) ---- */

PTSIM_HD int64_t ptsim_cost_ceil_log2(int64_t x) {
  int64_t r = 0, v = 1;
  while (v < x) {
    v *= 2;
    r++;
  }
  return r;
}

PTSIM_HD double ptsim_cost_ring_allreduce_s(int64_t p, double alpha, double bw, double bytes) {
  double pd = (double)p;
  if (p < 2) return 0.0;
  return 2.0 * (pd - 1.0) * alpha + 2.0 * (pd - 1.0) / pd * bytes / bw;
}

PTSIM_HD double ptsim_cost_ring_allgather_s(int64_t p, double alpha, double bw, double bytes) {
  double pd = (double)p;
  if (p < 2) return 0.0;
  return (pd - 1.0) * alpha + (pd - 1.0) / pd * bytes / bw;
}

PTSIM_HD double ptsim_cost_ring_reduce_scatter_s(int64_t p, double alpha, double bw, double bytes) {
  return ptsim_cost_ring_allgather_s(p, alpha, bw, bytes);
}

PTSIM_HD double ptsim_cost_tree_allreduce_s(int64_t p, double alpha, double bw, double bytes) {
  if (p < 2) return 0.0;
  return 2.0 * (double)ptsim_cost_ceil_log2(p) * alpha + 2.0 * bytes / bw;
}

PTSIM_HD double ptsim_cost_send_recv_s(double alpha, double bw, double bytes) {
  return alpha + bytes / bw;
}

PTSIM_HD double ptsim_cost_all_to_all_s(int64_t p, double alpha, double bw, double bytes) {
  double pd = (double)p;
  if (p < 2) return 0.0;
  return (pd - 1.0) * alpha + (pd - 1.0) / pd * bytes / bw;
}

PTSIM_HD double ptsim_cost_hierarchical_allreduce_s(int64_t g, int64_t nodes, double alpha_intra,
                                                    double alpha_inter, double bw_intra,
                                                    double bw_inter, double bytes) {
  double gd = (double)g, nd = (double)nodes, t = 0.0;
  if (g > 1) /* reduce-scatter, then all-gather, inside the node */
    t += 2.0 * ((gd - 1.0) * alpha_intra + (gd - 1.0) / gd * bytes / bw_intra);
  if (nodes > 1) /* ring all-reduce of the n/G shard across nodes */
    t += 2.0 * (nd - 1.0) * alpha_inter + 2.0 * (nd - 1.0) / nd * (bytes / gd) / bw_inter;
  return t;
}

PTSIM_HD double ptsim_cost_bus_factor(PtsimCollective kind, int64_t p) {
  double pd = (double)p;
  if (p < 2) return 1.0;
  switch (kind) {
  case PTSIM_COLL_ALL_REDUCE:
    return 2.0 * (pd - 1.0) / pd;
  case PTSIM_COLL_ALL_GATHER:
  case PTSIM_COLL_REDUCE_SCATTER:
  case PTSIM_COLL_ALL_TO_ALL:
    return (pd - 1.0) / pd;
  case PTSIM_COLL_SEND_RECV:
  default:
    return 1.0;
  }
}

/* ---- collectives: candidates ---- */

/* What every candidate needs, computed once. */
typedef struct {
  int64_t p, nodes, g;
  double a_nvl, a_net, base;
  double b_nvl, b_nic; /* per GPU, before saturation */
} CostLinks;

PTSIM_HD static void cost_links(const PtsimHardware *hw, const PtsimCostParams *prm,
                                const PtsimGroup *group, CostLinks *l) {
  double node_nic, share;
  int64_t senders;
  l->p = group->size;
  l->nodes = group->nodes < 1 ? 1 : group->nodes;
  l->g = group->gpus_per_node < 1 ? 1 : group->gpus_per_node;
  l->a_nvl = hw->nvlink_latency_s;
  l->a_net = hw->net_latency_s;
  l->base = prm->base_latency_s;
  l->b_nvl = hw->nvlink_bytes_per_s;
  /* The node's NICs shared by the GPUs that send at once (topology.h). */
  senders = group->fabric_senders_per_node;
  node_nic = (double)(group->node_size > 0 ? group->node_size : l->g) * hw->nic_bytes_per_s;
  share = senders > 0 ? node_nic / (double)senders : hw->nic_bytes_per_s;
  l->b_nic = cost_min(share, hw->nic_bytes_per_s *
                                 (prm->nic_aggregation > 0.0 ? prm->nic_aggregation : 1.0));
}

PTSIM_HD static double cost_allreduce(const PtsimHardware *hw, const PtsimCostParams *prm,
                                      const CostLinks *l, PtsimAlgorithm algo, double n) {
  double pd = (double)l->p, nd = (double)l->nodes, gd = (double)l->g;
  double b_nvl = l->b_nvl * cost_saturation(n, prm->nvlink_half_bytes);
  if (l->nodes == 1) {
    switch (algo) {
    case PTSIM_ALGO_RING:
      return l->base + ptsim_cost_ring_allreduce_s(l->p, l->a_nvl, b_nvl, n);
    case PTSIM_ALGO_TREE:
      return l->base + 2.0 * (pd - 1.0) * l->a_nvl + 2.0 * n / (prm->tree_bw_factor * b_nvl);
    case PTSIM_ALGO_NVLS:
      if (!hw->nvls) return -1.0;
      return prm->nvls_latency_s + 2.0 * (pd - 1.0) / pd * n / (prm->nvls_busbw_factor * b_nvl);
    case PTSIM_ALGO_HIERARCHICAL:
    default:
      return -1.0;
    }
  } else {
    double b_nic = l->b_nic * cost_saturation(n, prm->net_half_bytes);
    double bottleneck = cost_min(b_nvl, gd * b_nic);
    switch (algo) {
    case PTSIM_ALGO_RING: {
      double inter_steps = 2.0 * (nd - 1.0);
      double intra_steps = 2.0 * (pd - 1.0) - inter_steps;
      return l->base + intra_steps * l->a_nvl + inter_steps * l->a_net +
             2.0 * (pd - 1.0) / pd * n / bottleneck;
    }
    case PTSIM_ALGO_TREE:
      return l->base +
             2.0 * ((gd - 1.0) * l->a_nvl + (double)ptsim_cost_ceil_log2(l->nodes) * l->a_net) +
             2.0 * n / (prm->tree_bw_factor * bottleneck);
    case PTSIM_ALGO_HIERARCHICAL: {
      double b_intra = b_nvl, b_inter;
      if (l->g < 2) return -1.0;
      if (hw->nvls) b_intra *= prm->nvls_busbw_factor;
      b_inter = l->b_nic * cost_saturation(n / gd, prm->net_half_bytes);
      return l->base + ptsim_cost_hierarchical_allreduce_s(l->g, l->nodes, l->a_nvl, l->a_net,
                                                           b_intra, b_inter, n);
    }
    case PTSIM_ALGO_NVLS:
    default:
      return -1.0;
    }
  }
}

/* Ring all-gather / reduce-scatter (the same cost). */
PTSIM_HD static double cost_gather_scatter(const PtsimCostParams *prm, const CostLinks *l,
                                           PtsimAlgorithm algo, double n) {
  double pd = (double)l->p, nd = (double)l->nodes, gd = (double)l->g;
  double b_nvl = l->b_nvl * cost_saturation(n, prm->nvlink_half_bytes);
  double inter_steps, intra_steps, bw;
  if (algo != PTSIM_ALGO_RING) return -1.0;
  if (l->nodes == 1) return l->base + ptsim_cost_ring_allgather_s(l->p, l->a_nvl, b_nvl, n);
  inter_steps = nd - 1.0;
  intra_steps = (pd - 1.0) - inter_steps;
  bw = cost_min(b_nvl, gd * l->b_nic * cost_saturation(n, prm->net_half_bytes));
  return l->base + intra_steps * l->a_nvl + inter_steps * l->a_net + (pd - 1.0) / pd * n / bw;
}

PTSIM_HD static double cost_send_recv(const PtsimCostParams *prm, const CostLinks *l,
                                      PtsimAlgorithm algo, double n) {
  if (algo != PTSIM_ALGO_RING) return -1.0;
  if (l->nodes == 1)
    return ptsim_cost_send_recv_s(l->base + l->a_nvl,
                                  l->b_nvl * cost_saturation(n, prm->nvlink_half_bytes), n);
  return ptsim_cost_send_recv_s(l->base + l->a_net,
                                l->b_nic * cost_saturation(n, prm->net_half_bytes), n);
}

PTSIM_HD static double cost_all_to_all(const PtsimCostParams *prm, const CostLinks *l,
                                       PtsimAlgorithm algo, double n) {
  double pd = (double)l->p, gd = (double)l->g;
  double b_nvl = l->b_nvl * cost_saturation(n, prm->nvlink_half_bytes);
  double b_nic, t_intra, t_inter;
  if (algo != PTSIM_ALGO_RING) return -1.0;
  if (l->nodes == 1) return l->base + ptsim_cost_all_to_all_s(l->p, l->a_nvl, b_nvl, n);
  b_nic = l->b_nic * cost_saturation(n, prm->net_half_bytes);
  t_intra = (gd - 1.0) / pd * n / b_nvl;
  t_inter = (pd - gd) / pd * n / b_nic;
  return l->base + (gd - 1.0) * l->a_nvl + (pd - gd) * l->a_net + cost_max(t_intra, t_inter);
}

/* ---- collectives: public ---- */

PTSIM_HD double ptsim_cost_collective_algo_s(const PtsimHardware *hw, const PtsimCostParams *params,
                                             PtsimCollective kind, PtsimAlgorithm algo,
                                             double bytes, const PtsimGroup *group) {
  PtsimCostParams storage;
  const PtsimCostParams *prm = cost_params_or_default(hw, params, &storage);
  CostLinks l;
  if (group->size < 2 || bytes <= 0.0) return algo == PTSIM_ALGO_RING ? 0.0 : -1.0;
  cost_links(hw, prm, group, &l);
  switch (kind) {
  case PTSIM_COLL_ALL_REDUCE:
    return cost_allreduce(hw, prm, &l, algo, bytes);
  case PTSIM_COLL_ALL_GATHER:
  case PTSIM_COLL_REDUCE_SCATTER:
    return cost_gather_scatter(prm, &l, algo, bytes);
  case PTSIM_COLL_SEND_RECV:
    return cost_send_recv(prm, &l, algo, bytes);
  case PTSIM_COLL_ALL_TO_ALL:
  default:
    return cost_all_to_all(prm, &l, algo, bytes);
  }
}

PTSIM_HD void ptsim_cost_collective(const PtsimHardware *hw, const PtsimCostParams *params,
                                    PtsimCollective kind, double bytes, const PtsimGroup *group,
                                    PtsimCollectiveCost *out) {
  PtsimCostParams storage;
  const PtsimCostParams *prm = cost_params_or_default(hw, params, &storage);
  int a;
  out->time_s = 0.0;
  out->algo = PTSIM_ALGO_RING;
  out->algbw_bytes_per_s = 0.0;
  out->busbw_bytes_per_s = 0.0;
  if (group->size < 2 || bytes <= 0.0) return;
  out->time_s = -1.0;
  for (a = 0; a < PTSIM_ALGO_COUNT; a++) {
    double t = ptsim_cost_collective_algo_s(hw, prm, kind, (PtsimAlgorithm)a, bytes, group);
    if (t >= 0.0 && (out->time_s < 0.0 || t < out->time_s)) {
      out->time_s = t;
      out->algo = (PtsimAlgorithm)a;
    }
  }
  if (group->nodes <= 1) {
    /* inside one NVLink domain, what nccl-tests measured at this size
     * where the table has it (the latencies of small messages included):
     * NCCL's own choice of algorithm, whatever the formulas ranked first */
    double busbw = ptsim_cost_measured_busbw(prm->kernels, kind, group->size, bytes);
    if (busbw > 0.0) out->time_s = bytes * ptsim_cost_bus_factor(kind, group->size) / busbw;
  }
  if (out->time_s > 0.0) {
    out->algbw_bytes_per_s = bytes / out->time_s;
    out->busbw_bytes_per_s = out->algbw_bytes_per_s * ptsim_cost_bus_factor(kind, group->size);
  }
}

PTSIM_HD double ptsim_cost_forwarded_all_to_all_s(const PtsimHardware *hw,
                                                  const PtsimCostParams *params,
                                                  const PtsimGroup *group, double rank_bytes,
                                                  double node_bytes) {
  PtsimCostParams storage;
  const PtsimCostParams *prm = cost_params_or_default(hw, params, &storage);
  CostLinks l;
  double t_nvl, t_net;
  if (group->size < 2 || rank_bytes <= 0.0) return 0.0;
  if (group->nodes <= 1)
    return ptsim_cost_collective_s(hw, params, PTSIM_COLL_ALL_TO_ALL, rank_bytes, group);
  cost_links(hw, prm, group, &l);
  /* every copy but the GPU's own crosses NVLink once, sent or forwarded */
  t_nvl = ((double)l.p - 1.0) / (double)l.p * rank_bytes /
          (l.b_nvl * cost_saturation(rank_bytes, prm->nvlink_half_bytes));
  t_net = node_bytes > 0.0
              ? node_bytes / (l.b_nic * cost_saturation(node_bytes, prm->net_half_bytes))
              : 0.0;
  return l.base + ((double)l.g - 1.0) * l.a_nvl + ((double)l.nodes - 1.0) * l.a_net +
         cost_max(t_nvl, t_net);
}

PTSIM_HD double ptsim_cost_collective_s(const PtsimHardware *hw, const PtsimCostParams *params,
                                        PtsimCollective kind, double bytes,
                                        const PtsimGroup *group) {
  PtsimCollectiveCost c;
  ptsim_cost_collective(hw, params, kind, bytes, group, &c);
  return c.time_s;
}
