/* cost.h — how long one operation takes on a hardware profile: GEMMs,
 * flash attention, memory-bound kernels, and NCCL collectives.
 *
 * The engine asks this module for durations; it answers in seconds (double)
 * and the engine rounds to integer ns.  Everything here is a closed-form
 * model; the sources of every number are in shared/reference/
 * communication_and_hardware.md (cited below as B1..B5, C1..C3) or marked
 * "guess".
 *
 * Compute (roofline with efficiency curves):
 *
 *   gemm:  t = max(F / (peak * eff), bytes / (hbm * memory_efficiency)) + launch
 *          F = 2mnk, bytes = e_in*(mk + kn) + e_out*mn
 *          eff = gemm_efficiency_max * F/(F + gemm_half_flops) * waves(m,n,k)
 *   attention (flash): F = 4*b*heads*seq_q*seq_kv*head_dim (x causal fraction),
 *          backward 2.5 F; eff = attention_efficiency * s/(s + half_seq)
 *          (x 0.9 backward)
 *   grouped GEMM (MoE experts, g groups of one shape): t = g F / (peak * eff)
 *          with eff of one group's size and waves over all g groups' tiles
 *   memory-bound: t = bytes / (hbm * memory_efficiency) + launch
 *
 * Collectives (alpha-beta, B1, with NCCL's algorithm choice, B3): the
 * candidate algorithms below are each predicted and the cheapest wins, as
 * NCCL's ncclTopoGetAlgoTime ranking does.  Bandwidths saturate with
 * message size: B(n) = B * (n + h)/(n + 2h) (see PtsimCostParams).
 *
 *   inside one node (N = 1):   RING over NVLink; TREE; NVLS (all-reduce,
 *                              hw->nvls) through the NVSwitch
 *   across nodes (N > 1):      RING flat over all ranks (pipelined: the
 *                              slowest of NVLink and the node's NICs bounds
 *                              it); TREE (NCCL double binary tree);
 *                              HIERARCHICAL when G > 1 (intra reduce-scatter,
 *                              inter all-reduce of n/G per GPU, intra
 *                              all-gather — the 3-step formula of B1)
 *
 * Byte counts are "full buffer" sizes as nccl-tests defines them (B1): the
 * all-reduce size; the whole gathered / scattered array for AG / RS; the
 * per-rank send buffer for all-to-all; the message for send/recv.
 *
 * Measured kernels (cost_measured.c): a profile with a [kernels] group
 * prices a kernel from its measured table (PtsimCostParams.kernels,
 * hw_profiles/kernels/) wherever the table covers it, and by the formulas
 * above wherever it does not:
 *
 *   gemm:  eff = T(m,n,k) / peak                  a measured shape
 *              = S(F) / peak * waves(m,n,k) / waves(c,c,c)   else, from the
 *                square sweep S of the format, c = (F/2)^(1/3); below the
 *                smallest square its time is the floor, above the largest
 *                its throughput holds
 *   attention: eff = A(kernel, pass, mask, head dim)(seq_kv) / peak
 *   memory-bound: t = bytes / (measured HBM triad) + launch
 *   collectives inside one NVLink domain: t = bytes * busfactor / busbw(bytes)
 *          from the measured nccl-tests curve (alpha-beta above and across)
 *
 * Extra parameters PtsimHardware does not carry live in PtsimCostParams,
 * with documented defaults (ptsim_cost_params_default).  Every function
 * takes `params`; NULL means those defaults (no kernel table).
 *
 * Core module: pure C, PTSIM_HD, no allocation, no I/O; compiles as CUDA
 * C++.  Sibling: cost.c.  Uses topology.h for communicator placement.
 * Not here: which ops a step has (workload), when they run (engine). */
#ifndef PTSIM_COST_H
#define PTSIM_COST_H

#include <stdint.h>
#include "hd.h"
#include "job.h"
#include "kernel_table.h"
#include "topology.h"

/* ---- parameters beyond PtsimHardware ---- */

typedef struct {
  /* GEMM wave quantization: the profile's SM count and tile
   * (PtsimHardware sm_count, gemm_tile_m x gemm_tile_n; each profile names
   * its sources).  0 SMs: no wave quantization; a 0 tile edge: 128. */
  int64_t sm_count;
  int64_t gemm_tile_m, gemm_tile_n;
  /* Split-K when one wave is not filled: cuBLAS splits k so that small-m,n
   * GEMMs still occupy the SMs; each split keeps at least this much k.
   * Guess: 256.  When the profile's tile leaves the first wave partly
   * empty, the smaller 128x64 / 64x128 / 64x64 tiles are tried as well
   * (guess: cuBLAS heuristics pick small tiles for small problems). */
  int64_t gemm_split_k_min;
  /* FP8 achieved efficiency relative to bf16, as a fraction of the
   * respective peak.  GEMMs (applied to gemm_efficiency_max): 0.95, from
   * Transformer Engine's GEMM profiling guide (docs/examples/
   * gemm_profiling, "Worked Example: 5B Model on H200"): the 12 GEMMs of a
   * hidden-4096 / ffn-16384 layer at 15,872 tokens take 31.97 ms in bf16
   * and 16.79 ms as pre-quantized FP8 kernels, 1.90x; this cost model
   * gives that ratio for those shapes with 0.95 (0.8 gave 1.60x).
   * Attention (applied to attention_efficiency, fp8 attention only): from
   * C3, FA3 reaches ~75% of peak in fp16 and ~1.2 of 1.979 PFLOP/s (~61%)
   * in fp8, ratio ~0.8. */
  double fp8_gemm_efficiency_scale;
  double fp8_attention_efficiency_scale;
  /* Flash attention short-sequence factor s/(s + attention_half_seq),
   * s = seq_kv.  400: least-squares fit to the FA3 backward table of C3
   * (hd64: 400, hd128: 430; rms error ~2%).  attention_efficiency is the
   * asymptote of that curve (long sequences). */
  double attention_half_seq;
  /* Backward FLOPs / forward FLOPs (2.5: dQ, dK, dV plus the recomputed
   * scores of FlashAttention-2's backward) and backward efficiency relative
   * to forward (0.9, C3: "backward ~0.85-0.9x of forward throughput"). */
  double attention_backward_flops_factor;
  double attention_backward_efficiency;
  /* NCCL baseLat, Ring/Tree, Simple protocol: 8.4 us (B3).  Added once per
   * collective; the per-step latencies come from hw->nvlink_latency_s and
   * hw->net_latency_s. */
  double base_latency_s;
  /* NVLS all-reduce latency: hwLat NVLINK NVLS Simple 25 us, baseLat 0 (B3). */
  double nvls_latency_s;
  /* NVLS all-reduce bus bandwidth as a multiple of nvlink_bytes_per_s.
   * 1.30: measured 476-480 GB/s busbw on 8xH100 (B5, nccl-tests#290, #212)
   * over NCCL's 370 GB/s effective NVLink (B4).  NCCL's own tuning formula,
   * 2 * nvlsEfficiency(0.85) * (nCh-1)/nCh ~ 1.6, ranks algorithms but
   * over-predicts measured busbw by ~23%, so the measured ratio is used. */
  double nvls_busbw_factor;
  /* Tree all-reduce: NCCL models busBw = 0.92 * link busBw and
   * algbw = busBw / 2 (B3), i.e. t_bw = 2n / (0.92 B). */
  double tree_bw_factor;
  /* Message-size saturation of bus bandwidth: B(x) = B (x + h)/(x + 2h),
   * x the bytes a step moves; ~1 - h/x for large messages, 1/2 for tiny
   * ones (which are latency bound).  The plain x/(x + h) form would add a
   * fixed h/B to every small collective (120 us for 16 MiB at 240 GB/s),
   * far above measured small-message times, so this form is used instead.
   * h = 16 MiB for NVLink: guess fitted to "256M is too small to reach
   * peak bandwidth" (B2; 94% of peak at 256 MB, 98.5% at 1 GiB) and to
   * "busbw reaches its peak only at >= ~512 MB-1 GB for 8 GPUs" (B5).
   * h = 16 MiB for the fabric too: guess, no measured curve in the
   * reference. */
  double nvlink_half_bytes;
  double net_half_bytes;
  /* How many GPUs' worth of NIC bandwidth one GPU can use when fewer GPUs
   * of its node send than the node has: 1.0 — a GPU uses its own NIC
   * (B1/B5: all-to-all "cannot aggregate the bandwidth of multiple NICs"). */
  double nic_aggregation;
  /* The profile's measured kernel table (hw->kernel_table's entry of the
   * shell's registry, kernel_registry.h); NULL: none, every kernel by the
   * formulas.  (transfer none: the caller keeps it alive) */
  const PtsimKernelTable *kernels;
} PtsimCostParams;

/* Defaults for a profile: its SM count and GEMM tile, and the constants
 * above; no kernel table.  Never fails. */
PTSIM_HD void ptsim_cost_params_default(const PtsimHardware *hw, PtsimCostParams *out);

/* The defaults with the profile's kernel table: TABLES[hw->kernel_table -
 * 1] when that index is within the COUNT tables given (NULL TABLES: none).
 * Never fails. */
PTSIM_HD void ptsim_cost_params_init(const PtsimHardware *hw, const PtsimKernelTable *tables,
                                     int32_t count, PtsimCostParams *out);

/* ---- number formats ---- */

/* The format a GEMM runs in: which peak it has and which measured curve
 * prices it.  The first three have PtsimPrecision's values. */
typedef enum {
  PTSIM_FORMAT_BF16 = 0,
  PTSIM_FORMAT_FP16 = 1,
  PTSIM_FORMAT_FP8 = 2,           /* e4m3/e5m2, one scale per tensor (delayed or current) */
  PTSIM_FORMAT_FP8_BLOCKWISE = 3, /* 1x128 / 128x128 block scales */
  PTSIM_FORMAT_MXFP8 = 4,         /* 32-element blocks, e8m0 scales */
  PTSIM_FORMAT_NVFP4 = 5          /* e2m1, 16-element blocks, e4m3 scales */
} PtsimGemmFormat;

/* The format of a GEMM in PRECISION under the FP8 RECIPE (recipe ignored
 * unless precision is FP8). */
PTSIM_HD PtsimGemmFormat ptsim_cost_format(PtsimPrecision precision, PtsimFp8Recipe recipe);

/* ---- compute ---- */

/* Dense GEMM C(m,n) = A(m,k) B(k,n), FP8 on peak_fp8_flops (bf16 peak when
 * the profile has no FP8), bf16/fp16 otherwise.  0 when m, n or k < 1. */
PTSIM_HD double ptsim_cost_gemm_s(const PtsimHardware *hw, const PtsimCostParams *params,
                                  PtsimPrecision precision, int64_t m, int64_t n, int64_t k);

/* `groups` GEMMs of one shape (m, n, k) in one grouped kernel (Transformer
 * Engine's GroupedLinear for an MoE layer's local experts): each group
 * runs at the efficiency of its own size (small per-expert shapes are
 * slow), their tiles share the waves, one launch.  0 when a size < 1. */
PTSIM_HD double ptsim_cost_grouped_gemm_s(const PtsimHardware *hw, const PtsimCostParams *params,
                                          PtsimPrecision precision, int64_t groups, int64_t m,
                                          int64_t n, int64_t k);

/* The efficiency ptsim_cost_gemm_s applies to the peak (before the memory
 * roofline and the launch): in (0, gemm_efficiency_max]. */
PTSIM_HD double ptsim_cost_gemm_efficiency(const PtsimHardware *hw, const PtsimCostParams *params,
                                           PtsimPrecision precision, int64_t m, int64_t n,
                                           int64_t k);

/* The same three in a given format (FP8 formats on peak_fp8_flops, bf16's
 * when the profile has no FP8, with 1-byte inputs; the precision versions
 * above are these with ptsim_cost_format(precision, tensorwise)). */
PTSIM_HD double ptsim_cost_gemm_format_s(const PtsimHardware *hw, const PtsimCostParams *params,
                                         PtsimGemmFormat format, int64_t m, int64_t n, int64_t k);
PTSIM_HD double ptsim_cost_grouped_gemm_format_s(const PtsimHardware *hw,
                                                 const PtsimCostParams *params,
                                                 PtsimGemmFormat format, int64_t groups, int64_t m,
                                                 int64_t n, int64_t k);
PTSIM_HD double ptsim_cost_gemm_format_efficiency(const PtsimHardware *hw,
                                                  const PtsimCostParams *params,
                                                  PtsimGemmFormat format, int64_t m, int64_t n,
                                                  int64_t k);

/* Which attention kernel a framework runs (the measured curve that prices
 * it; the formulas ignore it). */
typedef enum {
  PTSIM_ATTENTION_CUDNN = 0, /* Transformer Engine's fused attention (cuDNN) */
  PTSIM_ATTENTION_FA2 = 1,   /* FlashAttention-2 (flash-attn, PyTorch SDPA's flash backend) */
  PTSIM_ATTENTION_FA3 = 2,
  PTSIM_ATTENTION_FA4 = 3
} PtsimAttentionKernel;

/* Fraction of the SMs' tile slots a GEMM (m, n, k) keeps busy over its
 * waves on the profile's SMs (PARAMS' sm_count and gemm_tile_m x
 * gemm_tile_n, either orientation; for a first wave left partly empty also
 * 128x64, 64x128 and 64x64 tiles, and split-K down to gemm_split_k_min of
 * k per split): tiles / (waves * SMs) of the best.  In (0, 1]. */
PTSIM_HD double ptsim_cost_wave_fill(const PtsimCostParams *params, int64_t m, int64_t n,
                                     int64_t k);

/* Flash attention over b sequences x heads, seq_q queries against seq_kv
 * keys of head_dim.  Causal: the fraction of the score matrix under a
 * bottom-right aligned causal mask, 1 - seq_q/(2 seq_kv) for
 * seq_q <= seq_kv (1/2 when they are equal), 1/2 otherwise.  backward: the
 * backward kernel (2.5x the forward FLOPs, 0.9x its efficiency).  0 when a
 * size is < 1. */
PTSIM_HD double ptsim_cost_attention_s(const PtsimHardware *hw, const PtsimCostParams *params,
                                       PtsimPrecision precision, int64_t b, int64_t heads,
                                       int64_t seq_q, int64_t seq_kv, int64_t head_dim, int causal,
                                       int backward);

/* The same run by KERNEL (priced from its measured curve where the
 * profile's table has one). */
PTSIM_HD double ptsim_cost_attention_kernel_s(const PtsimHardware *hw,
                                              const PtsimCostParams *params,
                                              PtsimAttentionKernel kernel, PtsimPrecision precision,
                                              int64_t b, int64_t heads, int64_t seq_q,
                                              int64_t seq_kv, int64_t head_dim, int causal,
                                              int backward);

/* Causal self-attention over SEQ tokens where each query sees only itself
 * and the WINDOW tokens before it (sliding-window attention, Megatron's
 * --window-size WINDOW,0), in bf16: the window's share of the FLOPs
 * (ptsim_cost_window_fraction against the causal one), at the efficiency
 * of a kernel over WINDOW + 1 keys; the HBM traffic of Q, K, V and O is
 * the full kernel's.  WINDOW <= 0 or WINDOW + 1 >= SEQ: the causal
 * kernel. */
PTSIM_HD double ptsim_cost_attention_window_s(const PtsimHardware *hw,
                                              const PtsimCostParams *params,
                                              PtsimAttentionKernel kernel, int64_t b, int64_t heads,
                                              int64_t seq, int64_t head_dim, int64_t window,
                                              int backward);

/* The share of a SEQ x SEQ score matrix that a causal mask of WINDOW keys
 * before each query (and the query itself) leaves: with w = WINDOW + 1,
 * (1 + 2 + ... + w + (s - w) w) / s^2; WINDOW <= 0 or w >= SEQ: the
 * causal (s + 1) / (2 s). */
PTSIM_HD double ptsim_cost_window_fraction(int64_t seq, int64_t window);

/* FLOPs the attention kernel above executes (causal fraction applied). */
PTSIM_HD double ptsim_cost_attention_flops(const PtsimCostParams *params, int64_t b, int64_t heads,
                                           int64_t seq_q, int64_t seq_kv, int64_t head_dim,
                                           int causal, int backward);

/* Elementwise / memory-bound kernel moving `bytes` (reads + writes) through
 * HBM: norms, RoPE, activations, residual adds, the optimizer step.
 * 0 when bytes <= 0. */
PTSIM_HD double ptsim_cost_memory_bound_s(const PtsimHardware *hw, double bytes);

/* The same at the profile's measured HBM bandwidth (the STREAM triad of its
 * kernel table) where it has one. */
PTSIM_HD double ptsim_cost_memory_bound_at_s(const PtsimHardware *hw, const PtsimCostParams *params,
                                             double bytes);

/* ---- collectives ---- */

typedef enum {
  PTSIM_COLL_ALL_REDUCE = 0,
  PTSIM_COLL_ALL_GATHER = 1,
  PTSIM_COLL_REDUCE_SCATTER = 2,
  PTSIM_COLL_SEND_RECV = 3,
  PTSIM_COLL_ALL_TO_ALL = 4
} PtsimCollective;

typedef enum {
  PTSIM_ALGO_RING = 0,        /* ring (also: direct for send/recv, all-to-all) */
  PTSIM_ALGO_TREE = 1,        /* NCCL double binary tree (all-reduce) */
  PTSIM_ALGO_NVLS = 2,        /* NVLink SHARP (all-reduce, one node, hw->nvls) */
  PTSIM_ALGO_HIERARCHICAL = 3 /* intra RS + inter AR + intra AG (all-reduce, N > 1, G > 1) */
} PtsimAlgorithm;

#define PTSIM_ALGO_COUNT 4

/* The prediction for one collective. */
typedef struct {
  double time_s;            /* predicted duration */
  PtsimAlgorithm algo;      /* the algorithm chosen (cheapest) */
  double algbw_bytes_per_s; /* bytes / time_s (nccl-tests algbw) */
  double busbw_bytes_per_s; /* algbw x the nccl-tests bus factor (B2) */
} PtsimCollectiveCost;

/* Duration of `kind` moving `bytes` in `group` with the algorithm NCCL would
 * pick (the cheapest candidate).  0 when bytes <= 0 or the group has one
 * rank.  Never fails. */
PTSIM_HD double ptsim_cost_collective_s(const PtsimHardware *hw, const PtsimCostParams *params,
                                        PtsimCollective kind, double bytes,
                                        const PtsimGroup *group);

/* Same, with the chosen algorithm and the bandwidths. */
PTSIM_HD void ptsim_cost_collective(const PtsimHardware *hw, const PtsimCostParams *params,
                                    PtsimCollective kind, double bytes, const PtsimGroup *group,
                                    PtsimCollectiveCost *out);

/* An expert dispatch that forwards inside the node (DeepEP's normal
 * kernels, HybridEP): a token crosses the fabric once per remote
 * destination NODE, to the GPU of its own local rank there, and NVLink once
 * per destination RANK, forwarded inside the node; the two run pipelined,
 * so the slower decides.  rank_bytes: this GPU's send counted once per
 * destination rank (itself included, as an all-to-all's bytes);
 * node_bytes: counted once per remote destination node.  Inside one node
 * there is nothing to forward: the all-to-all of rank_bytes.  0 when the
 * group has one rank or rank_bytes <= 0.  Never fails. */
PTSIM_HD double ptsim_cost_forwarded_all_to_all_s(const PtsimHardware *hw,
                                                  const PtsimCostParams *params,
                                                  const PtsimGroup *group, double rank_bytes,
                                                  double node_bytes);

/* Duration with one algorithm forced (NCCL_ALGO=...); -1.0 when the
 * algorithm does not apply to this collective / group / hardware. */
PTSIM_HD double ptsim_cost_collective_algo_s(const PtsimHardware *hw, const PtsimCostParams *params,
                                             PtsimCollective kind, PtsimAlgorithm algo,
                                             double bytes, const PtsimGroup *group);

/* nccl-tests bus-bandwidth factor (B2) for p ranks: 2(p-1)/p all-reduce,
 * (p-1)/p all-gather / reduce-scatter / all-to-all, 1 send/recv. */
PTSIM_HD double ptsim_cost_bus_factor(PtsimCollective kind, int64_t p);

/* ---- the pure alpha-beta formulas (B1) ----
 * p ranks, alpha seconds per step, bw bytes/s per rank, bytes as above. */

/* 2(p-1) alpha + 2(p-1)/p n/bw */
PTSIM_HD double ptsim_cost_ring_allreduce_s(int64_t p, double alpha, double bw, double bytes);
/* (p-1) alpha + (p-1)/p n/bw */
PTSIM_HD double ptsim_cost_ring_allgather_s(int64_t p, double alpha, double bw, double bytes);
/* (p-1) alpha + (p-1)/p n/bw */
PTSIM_HD double ptsim_cost_ring_reduce_scatter_s(int64_t p, double alpha, double bw, double bytes);
/* 2 ceil(log2 p) alpha + 2 n/bw  (pipelined double binary tree: up and
 * down overlap; algbw = bw/2 as in NCCL's model) */
PTSIM_HD double ptsim_cost_tree_allreduce_s(int64_t p, double alpha, double bw, double bytes);
/* alpha + n/bw */
PTSIM_HD double ptsim_cost_send_recv_s(double alpha, double bw, double bytes);
/* (p-1) alpha + (p-1)/p n/bw */
PTSIM_HD double ptsim_cost_all_to_all_s(int64_t p, double alpha, double bw, double bytes);
/* G GPUs per node, N nodes, steps run one after the other:
 *   intra RS  (G-1) a_intra + (G-1)/G n/bw_intra
 *   inter AR  2(N-1) a_inter + 2(N-1)/N (n/G)/bw_inter
 *   intra AG  (G-1) a_intra + (G-1)/G n/bw_intra */
PTSIM_HD double ptsim_cost_hierarchical_allreduce_s(int64_t g, int64_t nodes, double alpha_intra,
                                                    double alpha_inter, double bw_intra,
                                                    double bw_inter, double bytes);

/* ---- measured kernels (cost_measured.c) ----
 * Each returns what the table T measured, or a negative value when T has
 * no curve for the case (the caller then uses the formulas). */

/* The efficiency (fraction of PEAK) of a dense GEMM (m, n, k) in FORMAT:
 * a measured shape, else the square sweep with the wave difference on the
 * profile's SMs and tile (PARAMS' sm_count, gemm_tile_*, split-K). */
PTSIM_HD double ptsim_cost_measured_gemm_efficiency(const PtsimKernelTable *t,
                                                    const PtsimCostParams *params,
                                                    PtsimGemmFormat format, double peak, int64_t m,
                                                    int64_t n, int64_t k);

/* The best efficiency (fraction of PEAK) FORMAT's square sweep measured:
 * what the sweep's shape dependence is relative to. */
PTSIM_HD double ptsim_cost_measured_gemm_best(const PtsimKernelTable *t, PtsimGemmFormat format,
                                              double peak);

/* The TFLOP/s of KERNEL's 16-bit attention PASS (0 forward, 1 backward),
 * causal or not, at the measured head dimension nearest HEAD_DIM, at
 * SEQ_KV keys; a backward not measured as such is derived from the
 * forward and forward+backward curves (cost_measured.c).  *BEST (may be
 * NULL) gets the best TFLOP/s any of the kernel's curves measured at that
 * head dimension: what the dependence on sequence, pass and mask is
 * relative to. */
PTSIM_HD double ptsim_cost_measured_attention_tflops(const PtsimKernelTable *t,
                                                     PtsimAttentionKernel kernel, int backward,
                                                     int causal, int64_t head_dim, int64_t seq_kv,
                                                     double *best);

/* The measured HBM bandwidth (B/s) of elementwise kernels: the STREAM
 * triad. */
PTSIM_HD double ptsim_cost_measured_hbm_bytes_per_s(const PtsimKernelTable *t);

/* The measured bus bandwidth (B/s) of KIND moving BYTES among RANKS GPUs
 * of one NVLink domain (all-gather / reduce-scatter from the all-reduce
 * ring curve and their measured ratio to it); send/recv: none. */
PTSIM_HD double ptsim_cost_measured_busbw(const PtsimKernelTable *t, PtsimCollective kind,
                                          int64_t ranks, double bytes);

/* ceil(log2 x) for x >= 1 (0 for x <= 1). */
PTSIM_HD int64_t ptsim_cost_ceil_log2(int64_t x);

#endif /* PTSIM_COST_H */
