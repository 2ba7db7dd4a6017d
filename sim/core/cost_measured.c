/* cost_measured.c — kernel prices read from a profile's measured kernel
 * table (hw_profiles/kernels/, kernel_table.h): the GEMM efficiency of a
 * format by shape, attention throughput by kernel, pass, mask, head
 * dimension and sequence, HBM bandwidth, and NCCL bus bandwidth by message
 * size.  cost.c asks these first and uses its formulas where they answer
 * "not measured" (a negative value).  The formulas of each are in cost.h;
 * the reasons for each choice below, beside it.
 *
 * Core module: pure C, PTSIM_HD, no allocation, no I/O.  Siblings: cost.c
 * (the formulas and the callers), kernel_table.c (the lookups). */
#include <math.h>
#include "cost.h"

/* ---- helpers (prefixed: core .c files may be compiled together) ---- */

PTSIM_HD static void measured_key(int32_t *key, int32_t a, int32_t b, int32_t c, int32_t d,
                                  int32_t e, int32_t f) {
  key[0] = a;
  key[1] = b;
  key[2] = c;
  key[3] = d;
  key[4] = e;
  key[5] = f;
}

/* A curve with this many points or more is a sweep over x; fewer is a
 * spot measurement (one size of a collective, one best shape). */
#define MEASURED_SWEEP_POINTS 3

/* ---- GEMM ---- */

/* The implementations a GEMM curve is taken from, best first: Transformer
 * Engine's (what Megatron-LM runs), then cuBLASLt / torch (cuBLASLt under
 * torch.mm and _scaled_mm) / cuBLAS, then the rest. */
#define MEASURED_GEMM_IMPLS 7
PTSIM_HD static int32_t measured_gemm_impl(int i) {
  static const int32_t order[MEASURED_GEMM_IMPLS] = {
      PTSIM_KERNEL_IMPL_TE,      PTSIM_KERNEL_IMPL_CUBLASLT, PTSIM_KERNEL_IMPL_TORCH,
      PTSIM_KERNEL_IMPL_CUBLAS,  PTSIM_KERNEL_IMPL_CUTLASS,  PTSIM_KERNEL_IMPL_FBGEMM,
      PTSIM_KERNEL_IMPL_DEEPGEMM};
  return order[i];
}

/* The table's precisions for a format, best first (-1: no more): 16-bit
 * GEMMs run bf16 and fp16 on the same tensor cores at the same rate, so
 * either's sweep serves the other. */
PTSIM_HD static int32_t measured_precision(PtsimGemmFormat format, int i) {
  switch (format) {
  case PTSIM_FORMAT_BF16:
    return i == 0 ? PTSIM_KERNEL_BF16 : i == 1 ? PTSIM_KERNEL_FP16 : -1;
  case PTSIM_FORMAT_FP16:
    return i == 0 ? PTSIM_KERNEL_FP16 : i == 1 ? PTSIM_KERNEL_BF16 : -1;
  case PTSIM_FORMAT_FP8:
    return i == 0 ? PTSIM_KERNEL_FP8_TENSORWISE : -1;
  case PTSIM_FORMAT_FP8_BLOCKWISE:
    return i == 0 ? PTSIM_KERNEL_FP8_BLOCKWISE : -1;
  case PTSIM_FORMAT_MXFP8:
    return i == 0 ? PTSIM_KERNEL_MXFP8 : -1;
  case PTSIM_FORMAT_NVFP4:
  default:
    return i == 0 ? PTSIM_KERNEL_NVFP4 : -1;
  }
}

/* The square sweep of FORMAT (TE's, then cuBLASLt's, torch's, ...), or
 * NULL. */
PTSIM_HD static const PtsimKernelCurve *measured_square(const PtsimKernelTable *t,
                                                        PtsimGemmFormat format) {
  int32_t key[PTSIM_KERNEL_KEYS];
  const PtsimKernelCurve *square = 0;
  int i, j;
  for (j = 0; square == 0 && measured_precision(format, j) >= 0; j++)
    for (i = 0; square == 0 && i < MEASURED_GEMM_IMPLS; i++) {
      measured_key(key, measured_precision(format, j), measured_gemm_impl(i), 0,
                   PTSIM_KERNEL_LAYOUT_DENSE, 0, 0);
      square = ptsim_kernel_table_find(t, PTSIM_KERNEL_GEMM, key, "square");
    }
  return square != 0 && square->n >= MEASURED_SWEEP_POINTS ? square : 0;
}

PTSIM_HD double ptsim_cost_measured_gemm_best(const PtsimKernelTable *t, PtsimGemmFormat format,
                                              double peak) {
  const PtsimKernelCurve *square;
  double best = 0.0;
  int32_t i;
  if (t == 0 || !(peak > 0.0)) return -1.0;
  square = measured_square(t, format);
  if (square == 0) return -1.0;
  for (i = 0; i < square->n; i++)
    if (square->y[i] > best) best = square->y[i];
  return best * 1e12 / peak;
}

PTSIM_HD double ptsim_cost_measured_gemm_efficiency(const PtsimKernelTable *t,
                                                    const PtsimCostParams *params,
                                                    PtsimGemmFormat format, double peak, int64_t m,
                                                    int64_t n, int64_t k) {
  int32_t key[PTSIM_KERNEL_KEYS];
  int i, j;
  double flops, tflops, f_min, f_max, c_edge;
  int64_t c;
  const PtsimKernelCurve *square = 0;
  if (t == 0 || !(peak > 0.0) || m < 1 || n < 1 || k < 1) return -1.0;
  /* a measured shape (any series: Azure's mixed shapes, FBGEMM's LLM
   * shapes, DeepGEMM's) carries its own waves */
  for (j = 0; measured_precision(format, j) >= 0; j++)
    for (i = 0; i < MEASURED_GEMM_IMPLS; i++) {
      const PtsimKernelGemmShape *s;
      measured_key(key, measured_precision(format, j), measured_gemm_impl(i), 0,
                   PTSIM_KERNEL_LAYOUT_DENSE, 0, 0);
      s = ptsim_kernel_table_gemm_shape(t, key, 1, m, n, k);
      if (s != 0) return s->tflops * 1e12 / peak;
    }
  /* else the square sweep: the only series that varies the size alone */
  square = measured_square(t, format);
  if (square == 0) return -1.0;
  flops = 2.0 * (double)m * (double)n * (double)k;
  f_min = ptsim_kernel_curve_x(square, 0);
  f_max = ptsim_kernel_curve_x(square, square->n - 1);
  /* below the smallest square its time is the floor (a smaller GEMM is not
   * faster: launch and one wave), above the largest its throughput holds */
  if (flops < f_min)
    tflops = square->y[0] * flops / f_min;
  else
    tflops = ptsim_kernel_curve_eval(square, flops > f_max ? f_max : flops);
  /* the square of the same FLOPs had its own waves; the shape asked for
   * differs from it only by its waves on this GPU's SMs */
  c_edge = cbrt(flops / 2.0);
  c = (int64_t)(c_edge + 0.5);
  if (c < 1) c = 1;
  return tflops * 1e12 / peak * ptsim_cost_wave_fill(params, m, n, k) /
         ptsim_cost_wave_fill(params, c, c, c);
}

/* ---- attention ---- */

/* The measured impl of a kernel. */
PTSIM_HD static int32_t measured_attention_impl(PtsimAttentionKernel kernel) {
  switch (kernel) {
  case PTSIM_ATTENTION_FA2:
    return PTSIM_KERNEL_IMPL_FA2;
  case PTSIM_ATTENTION_FA3:
    return PTSIM_KERNEL_IMPL_FA3;
  case PTSIM_ATTENTION_FA4:
    return PTSIM_KERNEL_IMPL_FA4;
  case PTSIM_ATTENTION_CUDNN:
  default:
    return PTSIM_KERNEL_IMPL_CUDNN;
  }
}

/* The 16-bit curve of (impl, pass, mask, head_dim); NULL when none. */
PTSIM_HD static const PtsimKernelCurve *measured_attention_curve(const PtsimKernelTable *t,
                                                                 int32_t impl, int32_t pass,
                                                                 int32_t mask, int64_t head_dim) {
  int32_t i;
  for (i = 0; i < t->curve_count; i++) {
    const PtsimKernelCurve *c = &t->curves[i];
    if (c->kind != PTSIM_KERNEL_ATTENTION || c->key[0] != impl || c->key[2] != pass ||
        c->key[3] != mask || c->key[4] != 0 || (int64_t)c->key[5] != head_dim)
      continue;
    if (c->key[1] == PTSIM_KERNEL_BF16 || c->key[1] == PTSIM_KERNEL_FP16) return c;
  }
  return 0;
}

/* TFLOP/s of (impl, pass, mask) at seq and exactly head_dim, measured or
 * derived from curves of that head dimension; -1 when they cannot say.
 * Derivations, in order:
 *   - a pass measured only without a mask, asked causal: the unmasked
 *     value times the forward's causal / unmasked ratio at the same point
 *     (FA4 on SM100 at 8K: forward 0.92, backward 0.90: the mask costs
 *     both passes alike);
 *   - backward from forward (T_f) and forward+backward (T_fb) at the same
 *     point: FLOPs 1 and 2.5 of the forward's, so T_b = 2.5 / (3.5 / T_fb -
 *     1 / T_f) (hw_profiles/kernels/README.md, Wiring);
 *   - either pass from forward+backward alone: T_fb. */
PTSIM_HD static double measured_attention_pass(const PtsimKernelTable *t, int32_t impl,
                                               int32_t pass, int32_t mask, int64_t head_dim,
                                               double seq) {
  const PtsimKernelCurve *c = measured_attention_curve(t, impl, pass, mask, head_dim);
  const PtsimKernelCurve *f, *fb;
  if (c != 0) return ptsim_kernel_curve_eval(c, seq);
  if (mask == PTSIM_KERNEL_MASK_CAUSAL) {
    const PtsimKernelCurve *open = measured_attention_curve(t, impl, pass, PTSIM_KERNEL_MASK_NONE,
                                                            head_dim);
    const PtsimKernelCurve *fc = measured_attention_curve(t, impl, PTSIM_KERNEL_FWD,
                                                          PTSIM_KERNEL_MASK_CAUSAL, head_dim);
    const PtsimKernelCurve *fo = measured_attention_curve(t, impl, PTSIM_KERNEL_FWD,
                                                          PTSIM_KERNEL_MASK_NONE, head_dim);
    if (open != 0 && fc != 0 && fo != 0)
      return ptsim_kernel_curve_eval(open, seq) * ptsim_kernel_curve_eval(fc, seq) /
             ptsim_kernel_curve_eval(fo, seq);
  }
  fb = measured_attention_curve(t, impl, PTSIM_KERNEL_FWD_BWD, mask, head_dim);
  if (fb == 0) return -1.0;
  f = measured_attention_curve(t, impl, PTSIM_KERNEL_FWD, mask, head_dim);
  if (pass == PTSIM_KERNEL_BWD && f != 0) {
    double t_fb = ptsim_kernel_curve_eval(fb, seq), t_f = ptsim_kernel_curve_eval(f, seq);
    double rest = 3.5 / t_fb - 1.0 / t_f;
    if (rest > 0.0) return 2.5 / rest;
  }
  return ptsim_kernel_curve_eval(fb, seq);
}

/* The same at the measured head dimension nearest HEAD_DIM (in ln: 96 is
 * as far from 64 as from 144; the smaller first when two are as near)
 * whose curves can say, then the next nearest. */
PTSIM_HD static double measured_attention_at(const PtsimKernelTable *t, int32_t impl, int32_t pass,
                                             int32_t mask, int64_t head_dim, double seq,
                                             int64_t *used) {
  int64_t tried = 0; /* head dims tried so far: those nearer than `last` */
  double last = -1.0;
  for (;;) {
    int64_t best = 0;
    double best_distance = 0.0, tflops;
    int32_t i;
    for (i = 0; i < t->curve_count; i++) {
      const PtsimKernelCurve *c = &t->curves[i];
      int64_t d = (int64_t)c->key[5];
      double distance;
      if (c->kind != PTSIM_KERNEL_ATTENTION || c->key[0] != impl || d < 1) continue;
      distance = fabs(log((double)d / (double)head_dim));
      if (distance < last - 1e-12 || (distance <= last + 1e-12 && d <= tried)) continue;
      if (best == 0 || distance < best_distance - 1e-12 ||
          (distance <= best_distance + 1e-12 && d < best)) {
        best = d;
        best_distance = distance;
      }
    }
    if (best == 0) return -1.0;
    tflops = measured_attention_pass(t, impl, pass, mask, best, seq);
    if (tflops > 0.0) {
      *used = best;
      return tflops;
    }
    tried = best;
    last = best_distance;
  }
}

/* The best TFLOP/s of impl's 16-bit curves at head_dim. */
PTSIM_HD static double measured_attention_best(const PtsimKernelTable *t, int32_t impl,
                                               int64_t head_dim) {
  double best = 0.0;
  int32_t i, j;
  for (i = 0; i < t->curve_count; i++) {
    const PtsimKernelCurve *c = &t->curves[i];
    if (c->kind != PTSIM_KERNEL_ATTENTION || c->key[0] != impl || c->key[4] != 0 ||
        (int64_t)c->key[5] != head_dim ||
        (c->key[1] != PTSIM_KERNEL_BF16 && c->key[1] != PTSIM_KERNEL_FP16))
      continue;
    for (j = 0; j < c->n; j++)
      if (c->y[j] > best) best = c->y[j];
  }
  return best;
}

PTSIM_HD double ptsim_cost_measured_attention_tflops(const PtsimKernelTable *t,
                                                     PtsimAttentionKernel kernel, int backward,
                                                     int causal, int64_t head_dim, int64_t seq_kv,
                                                     double *best) {
  int32_t pass = backward ? PTSIM_KERNEL_BWD : PTSIM_KERNEL_FWD;
  int32_t mask = causal ? PTSIM_KERNEL_MASK_CAUSAL : PTSIM_KERNEL_MASK_NONE;
  int32_t impl = measured_attention_impl(kernel);
  int64_t used = 0;
  double tflops;
  if (t == 0 || head_dim < 1 || seq_kv < 1) return -1.0;
  tflops = measured_attention_at(t, impl, pass, mask, head_dim, (double)seq_kv, &used);
  /* Transformer Engine runs flash-attn's kernel where cuDNN's is not
   * measured (its other backend; the one it picks on Ampere) */
  if (tflops < 0.0 && kernel == PTSIM_ATTENTION_CUDNN) {
    impl = PTSIM_KERNEL_IMPL_FA2;
    tflops = measured_attention_at(t, impl, pass, mask, head_dim, (double)seq_kv, &used);
  }
  if (best != 0) *best = tflops > 0.0 ? measured_attention_best(t, impl, used) : -1.0;
  return tflops;
}

/* ---- memory-bound ---- */

PTSIM_HD double ptsim_cost_measured_hbm_bytes_per_s(const PtsimKernelTable *t) {
  int32_t key[PTSIM_KERNEL_KEYS];
  const PtsimKernelCurve *c;
  if (t == 0) return -1.0;
  /* the triad (a = b + s c: two reads, one write) is the mix of the
   * elementwise kernels of a step (read inputs, write an output) */
  measured_key(key, PTSIM_KERNEL_STREAM_TRIAD, PTSIM_KERNEL_ANY, 0, 0, 0, 0);
  c = ptsim_kernel_table_find(t, PTSIM_KERNEL_HBM, key, 0);
  return c != 0 ? c->y[0] * 1e9 : -1.0;
}

/* ---- collectives ---- */

/* The all-reduce size sweep of one NVLink domain nearest RANKS (in ln),
 * preferring NCCL's default choice, then NVLS, then ring, at equal
 * distance; NULL when none. */
PTSIM_HD static const PtsimKernelCurve *measured_allreduce_sweep(const PtsimKernelTable *t,
                                                                 int64_t ranks) {
  static const int32_t algos[3] = {PTSIM_KERNEL_ALGO_DEFAULT, PTSIM_KERNEL_ALGO_NVLS,
                                   PTSIM_KERNEL_ALGO_RING};
  const PtsimKernelCurve *best = 0;
  double best_distance = 0.0;
  int a;
  int32_t i;
  for (a = 0; a < 3; a++)
    for (i = 0; i < t->curve_count; i++) {
      const PtsimKernelCurve *c = &t->curves[i];
      double distance;
      if (c->kind != PTSIM_KERNEL_COLLECTIVE || c->key[0] != PTSIM_KERNEL_ALL_REDUCE ||
          c->key[1] != algos[a] || c->key[2] != PTSIM_KERNEL_FABRIC_NVLINK || c->key[4] != 1 ||
          c->n < MEASURED_SWEEP_POINTS)
        continue;
      distance = fabs(log((double)c->key[3] / (double)ranks));
      if (best == 0 || distance < best_distance - 1e-12) {
        best = c;
        best_distance = distance;
      }
    }
  return best;
}

/* The one-size point of a collective on one NVLink domain of RANKS GPUs
 * (nccl-tests at 8-16 GiB), or 0. */
PTSIM_HD static double measured_point(const PtsimKernelTable *t, int32_t kind, int32_t algo,
                                      int64_t ranks) {
  int32_t key[PTSIM_KERNEL_KEYS];
  const PtsimKernelCurve *c;
  measured_key(key, kind, algo, PTSIM_KERNEL_FABRIC_NVLINK, (int32_t)ranks, 1, 0);
  c = ptsim_kernel_table_find(t, PTSIM_KERNEL_COLLECTIVE, key, 0);
  return c != 0 ? c->y[c->n - 1] : 0.0;
}

PTSIM_HD double ptsim_cost_measured_busbw(const PtsimKernelTable *t, PtsimCollective kind,
                                          int64_t ranks, double bytes) {
  const PtsimKernelCurve *sweep;
  double busbw;
  if (t == 0 || ranks < 2 || !(bytes > 0.0)) return -1.0;
  if (kind != PTSIM_COLL_ALL_REDUCE && kind != PTSIM_COLL_ALL_GATHER &&
      kind != PTSIM_COLL_REDUCE_SCATTER)
    return -1.0;
  sweep = measured_allreduce_sweep(t, ranks);
  if (sweep == 0) return -1.0;
  busbw = ptsim_kernel_curve_eval(sweep, bytes) * 1e9;
  if (kind != PTSIM_COLL_ALL_REDUCE) {
    /* all-gather and reduce-scatter run NCCL's ring: the sweep's value
     * times their measured busbw over the same size's all-reduce of the
     * sweep's algorithm (nccl-tests on one node, 8 GPUs); without those
     * points, not measured */
    double own = measured_point(t,
                                kind == PTSIM_COLL_ALL_GATHER ? PTSIM_KERNEL_ALL_GATHER
                                                              : PTSIM_KERNEL_REDUCE_SCATTER,
                                PTSIM_KERNEL_ALGO_RING, 8);
    double same = measured_point(t, PTSIM_KERNEL_ALL_REDUCE, sweep->key[1], 8);
    if (!(own > 0.0) || !(same > 0.0)) return -1.0;
    busbw *= own / same;
  }
  return busbw;
}
