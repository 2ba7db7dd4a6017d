/* memory_fujii2024.h — the seed's closed-form memory estimate (Fujii,
 * Watanabe, Yokota 2024, arXiv 2411.06465), as published: `ptsim memory
 * --estimator fujii2024`.
 *
 * The closed form (shared/reference/memory_estimate_fujii2024.md, 1.2) of
 * the first pipeline stage, bytes per GPU,
 *   term1 = (6 + 12/(d c)) [h v/t + (2L/p) h^2 ((1 + k/a + 1.5 f/h)/t + 1/h)]
 *   term2 = s b h/(t c) [(12 + 4k/a + 8 f/h) L + 8p + 4(1 + v/h)]
 * filled into ptsim's per-stage figures so that the same reports print it;
 * ptsim's own estimate (memory.h) is what a run holds, and README's
 * "Memory: the seed's closed form and ptsim's estimate" names each
 * difference by its mechanism.
 *
 * Core module: pure C, PTSIM_HD, no allocation, no I/O. */
#ifndef PTSIM_MEMORY_FUJII2024_H
#define PTSIM_MEMORY_FUJII2024_H

#include "hd.h"
#include "memory.h"
#include "plan.h"

/* 0, or why the closed form does not describe the plan's model: it is
 * written for Llama's architecture (a gated SwiGLU MLP, GQA attention). */
#define PTSIM_FUJII2024_ERR_MOE (-1) /* mixture-of-experts layers */
#define PTSIM_FUJII2024_ERR_MLA (-2) /* multi-latent attention */
#define PTSIM_FUJII2024_ERR_MLP (-3) /* an MLP other than SwiGLU */

PTSIM_HD int32_t ptsim_memory_fujii2024_check(const PtsimPlan *plan);

/* Fills *out for the plan's job with the closed form's terms per stage
 * (memory_fujii2024.c says how the first stage's generalises): stage 0
 * equals term1 + term2, with the 4(1 + v/h) term on the stage with the
 * LM head under PTSIM_CE_LAST_STAGE (the author's estimator: only when
 * p = 1 on stage 0) and on every stage under PTSIM_CE_EVERY_STAGE (the
 * printed equation).  Returns ptsim_memory_fujii2024_check's code; *out
 * is filled only when it is 0. */
PTSIM_HD int32_t ptsim_memory_fujii2024(const PtsimPlan *plan, PtsimCrossEntropyConvention ce,
                                        PtsimMemoryEstimate *out);

#endif /* PTSIM_MEMORY_FUJII2024_H */
