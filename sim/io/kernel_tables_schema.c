/* kernel_tables_schema.c — the columns of every kernel table file and the
 * words of their word columns (kernel_tables_int.h); the meaning of each
 * column is documented in hw_profiles/kernels/README.md.
 *
 * Word lists follow the core enums of kernel_table.h value by value
 * (tests/test_kernel_tables.c checks their lengths against the enums'
 * counts).  Ranges are what is physical, not what is measured today:
 * 10^5 TFLOP/s or 10^6 GB/s would be an error in a file, not a GPU. */
#include "kernel_tables_int.h"

/* ---- words (in core enum order) ---- */

static const char *const precisions[] = {"bf16",        "fp16",
                                         "fp32",        "fp8_tensorwise",
                                         "fp8_rowwise", "fp8_blockwise",
                                         "mxfp8",       "nvfp4",
                                         "fp4",         NULL};
/* the plain formats: the first three of PtsimKernelPrecision */
static const char *const dtypes[] = {"bf16", "fp16", "fp32", NULL};
static const char *const impls[] = {
    "torch",       "cublas", "cublaslt",    "cutlass", "fbgemm", "deepgemm", "te",
    "fa2",         "fa3",    "fa4",         "cudnn",   "liger",  "megatron", "megatron_unfused",
    "huggingface", "cub",    "babelstream", NULL};
static const char *const yes_no[] = {"no", "yes", NULL};
static const char *const layouts[] = {"dense", "grouped_contiguous", "grouped_masked", NULL};
static const char *const passes[] = {"fwd", "bwd", "fwd_bwd", NULL};
static const char *const masks[] = {"none", "causal", "window", NULL};
static const char *const ops[] = {"rmsnorm", "layernorm", "swiglu", "cross_entropy", "relu", NULL};
static const char *const memory_passes[] = {"fwd", "bwd", NULL};
static const char *const streams[] = {"copy", "mul", "add", "triad", "dot", NULL};
static const char *const collectives[] = {"all_reduce", "all_gather", "reduce_scatter",
                                          "all_to_all", NULL};
static const char *const algos[] = {"default", "ring", "tree", "nvls", "nvlstree", NULL};
static const char *const fabrics[] = {"nvlink", "pcie", "ib", "roce", "efa", "mnnvl", NULL};
static const char *const libraries[] = {"deepep_v1", "deepep_v2", NULL};
static const char *const dispatch_kernels[] = {"normal", "low_latency", NULL};
static const char *const phases[] = {"dispatch", "combine", NULL};
static const char *const links[] = {"nvlink", "rdma", NULL};
/* what the dispatch kernel sends (descriptive: not a key) */
static const char *const payloads[] = {"bf16", "fp8", "nvfp4", NULL};
static const char *const directions[] = {"rowwise", "colwise", "both", NULL};

const char *const ptsim_kernel_markers[] = {"read", "plot", "derived", "3rd-party", NULL};

char *ptsim_kernel_words_allowed(const char *const *words) {
  g_autoptr(GString) s = g_string_new(NULL);
  for (const char *const *w = words; *w; w++) {
    if (s->len) g_string_append_c(s, '|');
    g_string_append(s, *w);
  }
  return g_string_free(g_steal_pointer(&s), FALSE);
}

/* ---- columns ---- */

#define NONE PTSIM_KERNEL_F_NONE
#define TERA 1e5                /* TFLOP/s bound */
#define GIGA 1e6                /* GB/s bound */
#define BIG_INT 1099511627776.0 /* 2^40 elements */

/* name, type, words, slot, field, lo, hi, optional */
#define GPU \
  { "gpu", PTSIM_KERNEL_COL_GPU, NULL, -1, NONE, 0, 0, FALSE }
#define SERIES \
  { "series", PTSIM_KERNEL_COL_SERIES, NULL, -1, NONE, 0, 0, FALSE }
#define TAIL                                                              \
  {"source", PTSIM_KERNEL_COL_SOURCE, NULL, -1, NONE, 0, 0, FALSE},       \
      {"marker", PTSIM_KERNEL_COL_MARKER, NULL, -1, NONE, 0, 0, FALSE}, { \
    "note", PTSIM_KERNEL_COL_NOTE, NULL, -1, NONE, 0, 0, TRUE             \
  }
#define WORD(name, words, slot, field) \
  { name, PTSIM_KERNEL_COL_WORD, words, slot, field, 0, 0, FALSE }
#define INT(name, slot, field, lo, hi, opt) \
  { name, PTSIM_KERNEL_COL_INT, NULL, slot, field, lo, hi, opt }
#define NUM(name, field, hi, opt) \
  { name, PTSIM_KERNEL_COL_NUM, NULL, -1, field, 0, hi, opt }

static const PtsimKernelColumn gemm[] = {GPU,
                                         WORD("precision", precisions, 0, NONE),
                                         WORD("impl", impls, 1, NONE),
                                         WORD("includes_quantize", yes_no, 2, NONE),
                                         WORD("layout", layouts, 3, PTSIM_KERNEL_F_LAYOUT),
                                         SERIES,
                                         INT("groups", -1, PTSIM_KERNEL_F_GROUPS, 1, 1048576,
                                             FALSE),
                                         INT("m", -1, PTSIM_KERNEL_F_M, 1, 2147483648.0, FALSE),
                                         INT("n", -1, PTSIM_KERNEL_F_N, 1, 2147483648.0, FALSE),
                                         INT("k", -1, PTSIM_KERNEL_F_K, 1, 2147483648.0, FALSE),
                                         NUM("tflops", PTSIM_KERNEL_F_TFLOPS, TERA, FALSE),
                                         TAIL};

static const PtsimKernelColumn attention[] = {GPU,
                                              WORD("impl", impls, 0, NONE),
                                              WORD("precision", precisions, 1, NONE),
                                              WORD("pass", passes, 2, NONE),
                                              WORD("mask", masks, 3, PTSIM_KERNEL_F_MASK),
                                              INT("window", 4, PTSIM_KERNEL_F_WINDOW, 0, 16777216,
                                                  FALSE),
                                              INT("head_dim", 5, NONE, 1, 1024, FALSE),
                                              SERIES,
                                              INT("batch", -1, NONE, 1, 1048576, TRUE),
                                              INT("heads", -1, NONE, 1, 65536, TRUE),
                                              INT("seq", -1, PTSIM_KERNEL_F_SEQ, 1, 67108864,
                                                  FALSE),
                                              NUM("tflops", PTSIM_KERNEL_F_TFLOPS, TERA, FALSE),
                                              TAIL};

static const PtsimKernelColumn memory[] = {GPU,
                                           WORD("op", ops, 0, NONE),
                                           WORD("pass", memory_passes, 1, NONE),
                                           WORD("impl", impls, 2, NONE),
                                           WORD("dtype", dtypes, 3, NONE),
                                           SERIES,
                                           INT("rows", -1, PTSIM_KERNEL_F_ROWS, 1, BIG_INT, FALSE),
                                           INT("cols", -1, PTSIM_KERNEL_F_COLS, 1, BIG_INT, FALSE),
                                           INT("bytes", -1, PTSIM_KERNEL_F_BYTES, 1,
                                               1125899906842624.0, TRUE),
                                           NUM("time_us", PTSIM_KERNEL_F_TIME_US, 1e12, TRUE),
                                           NUM("gbps", PTSIM_KERNEL_F_GBPS, GIGA, FALSE),
                                           TAIL};

static const PtsimKernelColumn hbm[] = {GPU, WORD("test", streams, 0, NONE),
                                        WORD("impl", impls, 1, NONE),
                                        NUM("gbps", PTSIM_KERNEL_F_GBPS, GIGA, FALSE), TAIL};

static const PtsimKernelColumn collective[] = {
    GPU,
    WORD("collective", collectives, 0, PTSIM_KERNEL_F_COLLECTIVE),
    WORD("algo", algos, 1, NONE),
    WORD("fabric", fabrics, 2, NONE),
    INT("ranks", 3, PTSIM_KERNEL_F_RANKS, 2, 1048576, FALSE),
    INT("nodes", 4, PTSIM_KERNEL_F_NODES, 1, 1048576, FALSE),
    SERIES,
    INT("bytes", -1, PTSIM_KERNEL_F_BYTES, 1, 1125899906842624.0, FALSE),
    NUM("busbw_gbps", PTSIM_KERNEL_F_BUSBW, GIGA, FALSE),
    NUM("time_us", PTSIM_KERNEL_F_TIME_US, 1e12, TRUE),
    TAIL};

static const PtsimKernelColumn moe_dispatch[] = {
    GPU,
    WORD("library", libraries, 0, NONE),
    WORD("kernel", dispatch_kernels, 1, NONE),
    WORD("phase", phases, 2, NONE),
    WORD("link", links, 3, NONE),
    SERIES,
    INT("ep_ranks", -1, PTSIM_KERNEL_F_EP_RANKS, 2, 1048576, FALSE),
    INT("nodes", -1, PTSIM_KERNEL_F_NODES, 1, 1048576, FALSE),
    INT("tokens", -1, NONE, 1, 1073741824, TRUE),
    INT("hidden", -1, NONE, 1, 1048576, TRUE),
    INT("topk", -1, NONE, 1, 1024, TRUE),
    {"dispatch_dtype", PTSIM_KERNEL_COL_WORD, payloads, -1, NONE, 0, 0, TRUE},
    INT("sms", 4, NONE, 1, 1024, TRUE),
    NUM("bandwidth_gbps", PTSIM_KERNEL_F_BANDWIDTH, GIGA, TRUE),
    NUM("latency_us", PTSIM_KERNEL_F_LATENCY, 1e9, TRUE),
    TAIL};

static const PtsimKernelColumn quantize[] = {
    GPU,
    WORD("recipe", precisions, 0, NONE),
    WORD("impl", impls, 1, NONE),
    WORD("input_dtype", dtypes, 2, NONE),
    WORD("direction", directions, 3, NONE),
    SERIES,
    INT("rows", -1, PTSIM_KERNEL_F_ROWS, 1, BIG_INT, FALSE),
    INT("cols", -1, PTSIM_KERNEL_F_COLS, 1, BIG_INT, FALSE),
    INT("bytes", -1, PTSIM_KERNEL_F_BYTES, 1, 1125899906842624.0, TRUE),
    NUM("time_us", PTSIM_KERNEL_F_TIME_US, 1e12, TRUE),
    NUM("gbps", PTSIM_KERNEL_F_GBPS, GIGA, FALSE),
    TAIL};

static const PtsimKernelSchema schemas[PTSIM_KERNEL_KIND_COUNT] = {
    {PTSIM_KERNEL_GEMM, "gemm.csv", "FLOPs", gemm, G_N_ELEMENTS(gemm)},
    {PTSIM_KERNEL_ATTENTION, "attention.csv", "seq", attention, G_N_ELEMENTS(attention)},
    {PTSIM_KERNEL_MEMORY, "memory.csv", "cols", memory, G_N_ELEMENTS(memory)},
    {PTSIM_KERNEL_HBM, "hbm.csv", "(one value)", hbm, G_N_ELEMENTS(hbm)},
    {PTSIM_KERNEL_COLLECTIVE, "collectives.csv", "bytes", collective, G_N_ELEMENTS(collective)},
    {PTSIM_KERNEL_MOE_DISPATCH, "moe_dispatch.csv", "ep_ranks", moe_dispatch,
     G_N_ELEMENTS(moe_dispatch)},
    {PTSIM_KERNEL_QUANTIZE, "quantize.csv", "rows x cols", quantize, G_N_ELEMENTS(quantize)},
};

const PtsimKernelSchema *ptsim_kernel_schema(PtsimKernelKind kind) {
  g_return_val_if_fail(kind >= 0 && kind < PTSIM_KERNEL_KIND_COUNT, NULL);
  return &schemas[kind];
}
