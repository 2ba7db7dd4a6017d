/* kernel_table.h — measured kernel and collective speeds of one GPU, as
 * curves the cost model can look up.
 *
 * The measurements live in CSV files beside the profiles, in
 * hw_profiles/kernels/, each row with its source; sim/io/kernel_tables.c
 * reads and checks them and fills one PtsimKernelTable per GPU.  This module is the plain,
 * fixed-size form of that table and its lookups, so that a profile can carry one into the cost
 * model and the CUDA batch evaluator alike.
 *
 * A curve is the measurements of one kind of kernel with one key (the
 * table below), in one series (one source's sweep), as points (x, y):
 *
 *   kind          key[0..5]                                          x              y
 *   GEMM          precision impl includes_quantize layout            FLOPs          TFLOP/s
 *   ATTENTION     impl precision pass mask window head_dim           seq length     TFLOP/s
 *   MEMORY        op pass impl dtype                                 row width      GB/s
 *   HBM           test impl                                          1 (one point)  GB/s
 *   COLLECTIVE    collective algo fabric ranks nodes                 bytes          bus GB/s
 *   MOE_DISPATCH  library kernel phase link sms metric               EP ranks       GB/s or us
 *   QUANTIZE      recipe impl input_dtype direction                  elements       GB/s
 *
 * (GEMM FLOPs = 2 groups m n k; unused key slots are 0; the enums below give
 * the words' values; GB = 10^9 B.)
 *
 * Interpolation rule (ptsim_kernel_curve_eval): piecewise linear in ln x,
 * linear in y, between the two measured points that bracket x; clamped to
 * the first / last point's y outside the measured range (a curve never
 * extrapolates a trend); a one-point curve is that constant.
 * ptsim_kernel_curve_covers says whether x lies inside the measured range,
 * so a caller can use its own model outside it.
 *
 * Invariants (kept by ptsim_kernel_table_add): 1 <= n <= PTSIM_KERNEL_POINTS,
 * x > 0 and strictly increasing, y finite and > 0, at most
 * PTSIM_KERNEL_CURVES curves and PTSIM_KERNEL_SHAPES GEMM shapes.
 *
 * Core module: pure C, PTSIM_HD, no allocation, no I/O.  Sibling:
 * kernel_table.c.  Not here: reading the files (sim/io/kernel_tables.h),
 * using the numbers (the cost model, after the layout split: see
 * hw_profiles/kernels/README.md). */
#ifndef PTSIM_KERNEL_TABLE_H
#define PTSIM_KERNEL_TABLE_H

#include <stdint.h>
#include "hd.h"

#define PTSIM_KERNEL_KEYS 6     /* key slots of a curve */
#define PTSIM_KERNEL_POINTS 24  /* points of one curve */
#define PTSIM_KERNEL_CURVES 128 /* curves of one GPU */
#define PTSIM_KERNEL_SHAPES 64  /* GEMM shapes of one GPU */
#define PTSIM_KERNEL_NAME 32    /* GPU and series names, NUL included */
/* A key slot that matches any value in ptsim_kernel_table_find. */
#define PTSIM_KERNEL_ANY (-1)

typedef enum {
  PTSIM_KERNEL_GEMM = 0,
  PTSIM_KERNEL_ATTENTION = 1,
  PTSIM_KERNEL_MEMORY = 2,
  PTSIM_KERNEL_HBM = 3,
  PTSIM_KERNEL_COLLECTIVE = 4,
  PTSIM_KERNEL_MOE_DISPATCH = 5,
  PTSIM_KERNEL_QUANTIZE = 6,
  PTSIM_KERNEL_KIND_COUNT = 7
} PtsimKernelKind;

/* Number formats: GEMM precision, attention precision, memory-bound and
 * quantize input dtype, quantize recipe. */
typedef enum {
  PTSIM_KERNEL_BF16 = 0,
  PTSIM_KERNEL_FP16 = 1,
  PTSIM_KERNEL_FP32 = 2,
  PTSIM_KERNEL_FP8_TENSORWISE = 3, /* e4m3, one scale per tensor */
  PTSIM_KERNEL_FP8_ROWWISE = 4,    /* one scale per row / column */
  PTSIM_KERNEL_FP8_BLOCKWISE = 5,  /* 1x128 activation, 128x128 weight scales */
  PTSIM_KERNEL_MXFP8 = 6,          /* 32-element blocks, e8m0 scales (Blackwell) */
  PTSIM_KERNEL_NVFP4 = 7,          /* e2m1, 16-element blocks, e4m3 scales */
  PTSIM_KERNEL_FP4 = 8,            /* e2m1, block-scale format not stated */
  PTSIM_KERNEL_PRECISION_COUNT = 9
} PtsimKernelPrecision;

/* Who runs the kernel. */
typedef enum {
  PTSIM_KERNEL_IMPL_TORCH =
      0, /* PyTorch ops (cuBLAS(Lt) under torch.mm / _scaled_mm, eager modules) */
  PTSIM_KERNEL_IMPL_CUBLAS = 1,   /* cuBLAS called directly (a loop of GEMMs for groups) */
  PTSIM_KERNEL_IMPL_CUBLASLT = 2, /* cuBLASLt called directly */
  PTSIM_KERNEL_IMPL_CUTLASS = 3,
  PTSIM_KERNEL_IMPL_FBGEMM = 4,
  PTSIM_KERNEL_IMPL_DEEPGEMM = 5,
  PTSIM_KERNEL_IMPL_TE = 6,  /* Transformer Engine */
  PTSIM_KERNEL_IMPL_FA2 = 7, /* FlashAttention-2 */
  PTSIM_KERNEL_IMPL_FA3 = 8,
  PTSIM_KERNEL_IMPL_FA4 = 9,
  PTSIM_KERNEL_IMPL_CUDNN = 10,    /* cuDNN fused attention (TE's fused backend) */
  PTSIM_KERNEL_IMPL_LIGER = 11,    /* Liger-Kernel (Triton) */
  PTSIM_KERNEL_IMPL_MEGATRON = 12, /* Megatron-Core fused kernels */
  PTSIM_KERNEL_IMPL_MEGATRON_UNFUSED = 13,
  PTSIM_KERNEL_IMPL_HUGGINGFACE = 14, /* HF transformers eager modules */
  PTSIM_KERNEL_IMPL_CUB = 15,         /* CUDA's cub */
  PTSIM_KERNEL_IMPL_BABELSTREAM = 16,
  PTSIM_KERNEL_IMPL_COUNT = 17
} PtsimKernelImpl;

typedef enum {
  PTSIM_KERNEL_FWD = 0,
  PTSIM_KERNEL_BWD = 1,
  PTSIM_KERNEL_FWD_BWD = 2,
  PTSIM_KERNEL_PASS_COUNT = 3
} PtsimKernelPass;

typedef enum {
  PTSIM_KERNEL_MASK_NONE = 0,
  PTSIM_KERNEL_MASK_CAUSAL = 1,
  PTSIM_KERNEL_MASK_WINDOW = 2, /* sliding window: key[4] is its width */
  PTSIM_KERNEL_MASK_COUNT = 3
} PtsimKernelMask;

typedef enum {
  PTSIM_KERNEL_LAYOUT_DENSE = 0,
  PTSIM_KERNEL_LAYOUT_GROUPED_CONTIGUOUS = 1, /* experts' rows back to back */
  PTSIM_KERNEL_LAYOUT_GROUPED_MASKED = 2,     /* fixed rows per expert, masked */
  PTSIM_KERNEL_LAYOUT_COUNT = 3
} PtsimKernelLayout;

typedef enum {
  PTSIM_KERNEL_OP_RMSNORM = 0,
  PTSIM_KERNEL_OP_LAYERNORM = 1,
  PTSIM_KERNEL_OP_SWIGLU = 2,
  PTSIM_KERNEL_OP_CROSS_ENTROPY = 3,
  PTSIM_KERNEL_OP_RELU = 4, /* a unary elementwise kernel */
  PTSIM_KERNEL_OP_COUNT = 5
} PtsimKernelOp;

typedef enum {
  PTSIM_KERNEL_STREAM_COPY = 0,
  PTSIM_KERNEL_STREAM_MUL = 1,
  PTSIM_KERNEL_STREAM_ADD = 2,
  PTSIM_KERNEL_STREAM_TRIAD = 3,
  PTSIM_KERNEL_STREAM_DOT = 4,
  PTSIM_KERNEL_STREAM_COUNT = 5
} PtsimKernelStream;

typedef enum {
  PTSIM_KERNEL_ALL_REDUCE = 0,
  PTSIM_KERNEL_ALL_GATHER = 1,
  PTSIM_KERNEL_REDUCE_SCATTER = 2,
  PTSIM_KERNEL_ALL_TO_ALL = 3,
  PTSIM_KERNEL_COLLECTIVE_COUNT = 4
} PtsimKernelCollective;

typedef enum {
  PTSIM_KERNEL_ALGO_DEFAULT = 0, /* NCCL's (or a tuner's) own choice */
  PTSIM_KERNEL_ALGO_RING = 1,
  PTSIM_KERNEL_ALGO_TREE = 2,
  PTSIM_KERNEL_ALGO_NVLS = 3,
  PTSIM_KERNEL_ALGO_NVLSTREE = 4,
  PTSIM_KERNEL_ALGO_COUNT = 5
} PtsimKernelAlgo;

/* The links a measurement crossed: one NVLink domain (nvlink, pcie), or
 * a scale-out fabric between domains; mnnvl is a multi-node NVLink
 * domain (GB200 NVL72). */
typedef enum {
  PTSIM_KERNEL_FABRIC_NVLINK = 0,
  PTSIM_KERNEL_FABRIC_PCIE = 1,
  PTSIM_KERNEL_FABRIC_IB = 2,
  PTSIM_KERNEL_FABRIC_ROCE = 3,
  PTSIM_KERNEL_FABRIC_EFA = 4,
  PTSIM_KERNEL_FABRIC_MNNVL = 5,
  PTSIM_KERNEL_FABRIC_COUNT = 6
} PtsimKernelFabric;

typedef enum {
  PTSIM_KERNEL_DEEPEP_V1 = 0,
  PTSIM_KERNEL_DEEPEP_V2 = 1,
  PTSIM_KERNEL_LIBRARY_COUNT = 2
} PtsimKernelLibrary;

typedef enum {
  PTSIM_KERNEL_DISPATCH_NORMAL = 0,      /* throughput kernels (training, prefill) */
  PTSIM_KERNEL_DISPATCH_LOW_LATENCY = 1, /* pure-RDMA decode kernels */
  PTSIM_KERNEL_DISPATCH_KERNEL_COUNT = 2
} PtsimKernelDispatchKernel;

typedef enum {
  PTSIM_KERNEL_PHASE_DISPATCH = 0,
  PTSIM_KERNEL_PHASE_COMBINE = 1,
  PTSIM_KERNEL_PHASE_COUNT = 2
} PtsimKernelPhase;

typedef enum {
  PTSIM_KERNEL_LINK_NVLINK = 0, /* the bandwidth is NVLink's */
  PTSIM_KERNEL_LINK_RDMA = 1,   /* the bandwidth is the NIC's */
  PTSIM_KERNEL_LINK_COUNT = 2
} PtsimKernelLink;

/* MOE_DISPATCH key[5]: which value column a curve holds. */
typedef enum {
  PTSIM_KERNEL_METRIC_BANDWIDTH = 0, /* GB/s */
  PTSIM_KERNEL_METRIC_LATENCY = 1,   /* microseconds */
  PTSIM_KERNEL_METRIC_COUNT = 2
} PtsimKernelMetric;

typedef enum {
  PTSIM_KERNEL_ROWWISE = 0,
  PTSIM_KERNEL_COLWISE = 1,
  PTSIM_KERNEL_BOTH = 2,
  PTSIM_KERNEL_DIRECTION_COUNT = 3
} PtsimKernelDirection;

/* One curve: the measurements of one key and series. */
typedef struct {
  int32_t kind;                      /* PtsimKernelKind */
  int32_t key[PTSIM_KERNEL_KEYS];    /* per kind, as in the table above */
  char series[PTSIM_KERNEL_NAME];    /* the source's sweep, e.g. "square" */
  int32_t n;                         /* points */
  double log_x[PTSIM_KERNEL_POINTS]; /* ln x, strictly increasing */
  double y[PTSIM_KERNEL_POINTS];     /* the measured value at x */
} PtsimKernelCurve;

/* One measured GEMM shape, for exact-shape lookups. */
typedef struct {
  int32_t curve; /* index of its curve in the table */
  int64_t groups, m, n, k;
  double tflops;
} PtsimKernelGemmShape;

/* Everything measured on one GPU. */
typedef struct {
  char gpu[PTSIM_KERNEL_NAME]; /* the data files' gpu name, e.g. "h100-sxm5" */
  int32_t curve_count;
  PtsimKernelCurve curves[PTSIM_KERNEL_CURVES];
  int32_t shape_count;
  PtsimKernelGemmShape shapes[PTSIM_KERNEL_SHAPES];
} PtsimKernelTable;

/* What ptsim_kernel_table_add says. */
typedef enum {
  PTSIM_KERNEL_ADD_OK = 0,
  PTSIM_KERNEL_ADD_BAD_VALUE = 1, /* x or y not finite and > 0, or a kind / series out of range */
  PTSIM_KERNEL_ADD_DUPLICATE = 2, /* the curve already has a point at this x */
  PTSIM_KERNEL_ADD_TOO_MANY_POINTS = 3,
  PTSIM_KERNEL_ADD_TOO_MANY_CURVES = 4,
  PTSIM_KERNEL_ADD_TOO_MANY_SHAPES = 5
} PtsimKernelAddStatus;

/* An empty table for GPU (truncated to PTSIM_KERNEL_NAME - 1 bytes). */
PTSIM_HD void ptsim_kernel_table_init(PtsimKernelTable *t, const char *gpu);

/* Adds the point (x, y) to the curve of (kind, key, series), creating the
 * curve when it is new, keeping x sorted.  On anything but OK the table is
 * unchanged.  Duplicates: two x whose ln differs by less than 1e-9. */
PTSIM_HD PtsimKernelAddStatus ptsim_kernel_table_add(PtsimKernelTable *t, int32_t kind,
                                                     const int32_t key[PTSIM_KERNEL_KEYS],
                                                     const char *series, double x, double y);

/* Records a measured GEMM shape of the curve holding FLOPs 2 groups m n k
 * for (precision/impl/quantize/layout key, series), after its point was
 * added.  TOO_MANY_SHAPES when full; BAD_VALUE when no such curve or a size
 * is < 1. */
PTSIM_HD PtsimKernelAddStatus ptsim_kernel_table_add_shape(PtsimKernelTable *t,
                                                           const int32_t key[PTSIM_KERNEL_KEYS],
                                                           const char *series, int64_t groups,
                                                           int64_t m, int64_t n, int64_t k,
                                                           double tflops);

/* The first curve (in the order added, i.e. the file's row order) of KIND
 * whose key matches KEY slot by slot (PTSIM_KERNEL_ANY matches anything)
 * and, unless SERIES is NULL, whose series is SERIES.  NULL when none. */
PTSIM_HD const PtsimKernelCurve *ptsim_kernel_table_find(const PtsimKernelTable *t, int32_t kind,
                                                         const int32_t key[PTSIM_KERNEL_KEYS],
                                                         const char *series);

/* The measured GEMM of exactly this shape (groups, m, n, k) whose curve's
 * key matches KEY (PTSIM_KERNEL_ANY allowed); the first in row order.
 * NULL when the shape was not measured. */
PTSIM_HD const PtsimKernelGemmShape *ptsim_kernel_table_gemm_shape(
    const PtsimKernelTable *t, const int32_t key[PTSIM_KERNEL_KEYS], int64_t groups, int64_t m,
    int64_t n, int64_t k);

/* Appends SRC's curves of the kinds in KINDS (bit 1 << kind) to DST, after
 * DST's own, so that a lookup finds DST's first (a profile's own GPU before
 * the GPUs it falls back on), with GEMM and attention TFLOP/s scaled by
 * COMPUTE_SCALE (a fallback GPU's efficiency carried to another peak: 1.0
 * keeps them), and the GEMM shapes of the appended curves.  A curve DST
 * already has (the same kind, key and series) is skipped.  Returns
 * TOO_MANY_CURVES or TOO_MANY_SHAPES when DST fills up (what fitted stays),
 * BAD_VALUE for a scale that is not finite and > 0, else OK. */
PTSIM_HD PtsimKernelAddStatus ptsim_kernel_table_append(PtsimKernelTable *dst,
                                                        const PtsimKernelTable *src, int32_t kinds,
                                                        double compute_scale);

/* y at x by the interpolation rule above; 0 for an empty curve or x <= 0. */
PTSIM_HD double ptsim_kernel_curve_eval(const PtsimKernelCurve *c, double x);

/* 1 when x lies within the curve's measured range [first x, last x]. */
PTSIM_HD int ptsim_kernel_curve_covers(const PtsimKernelCurve *c, double x);

/* The curve's i-th x (exp of log_x; 0 when i is out of range). */
PTSIM_HD double ptsim_kernel_curve_x(const PtsimKernelCurve *c, int32_t i);

#endif /* PTSIM_KERNEL_TABLE_H */
