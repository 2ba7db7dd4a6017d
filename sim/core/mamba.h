/* mamba.h — a Mamba-2 layer as Megatron-LM's MambaMixer builds it for
 * training, and the layer kinds of a hybrid model's pattern (Nemotron-H).
 *
 * Source: NVIDIA/Megatron-LM d98e8a64dd, megatron/core/ssm/mamba_mixer.py
 * (MambaMixer.__init__, _ssm_training), megatron/core/ssm/mamba_layer.py,
 * megatron/core/models/hybrid/hybrid_layer_allocation.py; the SSD
 * algorithm of Dao & Gu 2024, "Transformers are SSMs" (arXiv 2405.21060,
 * section 6), as mamba_ssm's Triton kernels run it.
 *
 * One Mamba layer (d_inner = nheads x headdim, or 2 h when nheads is not
 * given; G groups, state N, head dim P, H heads):
 *   in_proj   h -> 2 d_inner + 2 G N + H  ([z, x, B, C, dt]), no bias, with
 *             the layer's pre-norm fused in (TE LayerNormColumnParallelLinear)
 *   conv1d    depthwise, kernel 4, over x, B, C (conv_dim = d_inner + 2 G N),
 *             weight and bias
 *   A_log, D, dt_bias   H each
 *   norm      gated RMSNorm over d_inner (group size d_inner / G)
 *   out_proj  d_inner -> h, no bias (row-parallel)
 * Tensor parallelism splits heads and groups (Megatron asserts nheads and
 * ngroups divisible by tp): everything above but the pre-norm is divided
 * by tp.
 *
 * What the training path keeps for backward (the memory-efficient
 * mamba_split_conv1d_scan_combined, which recomputes the conv and the
 * chunk states in backward): in_proj's input and its norm output (the
 * layer's h, split by tp under sequence parallelism) with the norm's rstd,
 * the packed [z x B C dt] it produced, the scan output before gating
 * (out_x, d_inner), the gated norm's input and rstd per group, and
 * out_proj's input (d_inner). */
#ifndef PTSIM_MAMBA_H
#define PTSIM_MAMBA_H

#include <stdint.h>
#include "hd.h"
#include "job.h"

/* MambaMixer's fixed sizes (constructor defaults no flag changes). */
#define PTSIM_MAMBA_CONV_KERNEL 4
#define PTSIM_MAMBA_CHUNK 128

/* A Mamba layer's sizes, before the TP split. */
typedef struct {
  int64_t d_inner, nheads, headdim, ngroups, d_state;
  int64_t in_proj_width; /* 2 d_inner + 2 G N + H */
  int64_t conv_dim;      /* d_inner + 2 G N */
} PtsimMambaDims;

PTSIM_HD void ptsim_mamba_dims(const PtsimModel *model, PtsimMambaDims *out);

/* 1 when the model has a hybrid pattern. */
PTSIM_HD int ptsim_model_is_hybrid(const PtsimModel *model);
/* Layers of kind KIND (a PTSIM_HYBRID_* symbol) among COUNT from FIRST. */
PTSIM_HD int64_t ptsim_hybrid_count(const PtsimModel *model, int64_t first, int64_t count,
                                    char kind);

/* Parameters of one Mamba layer on one TP rank, its pre-norm included. */
PTSIM_HD double ptsim_mamba_layer_parameters(const PtsimModel *model, int64_t tp);

/* Forward FLOPs of one Mamba layer over TOKENS tokens on one TP rank. */
typedef struct {
  double in_proj, out_proj; /* the two GEMMs: 2 tokens x in x out / tp */
  double conv;              /* depthwise conv: 2 x kernel x conv_dim per token */
  /* the SSD chunked scan's matmuls per token (Dao & Gu 2024, section 6,
   * chunk length Q): C B^T within a chunk per group, 2 Q N each; per head
   * the masked scores times x within the chunk, 2 Q P, the chunk's state
   * B^T x, 2 N P, and the output from the carried state C h, 2 N P; the
   * state passing between chunks (N P per chunk) is negligible */
  double ssd;
} PtsimMambaFlops;

PTSIM_HD void ptsim_mamba_forward_flops(const PtsimModel *model, int64_t tp, double tokens,
                                        PtsimMambaFlops *out);

/* Bytes one Mamba layer keeps for backward over TOKENS tokens on one TP
 * rank (bf16 activations; see above), plus a 1-byte mask of h / tp per
 * token when DROPOUT (hidden dropout after the mixer). */
PTSIM_HD double ptsim_mamba_saved_bytes(const PtsimModel *model, int64_t tp, int sp, double tokens,
                                        int dropout);

/* Its time in a training step: workload_mamba.c (the GEMM and memory-bound
 * cost rules over these shapes). */

#endif /* PTSIM_MAMBA_H */
