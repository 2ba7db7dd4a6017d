/* lifetimes_int.h — the state of one stage's replay, shared by
 * lifetimes.c (the tensors and the schedule walk) and lifetimes_units.c
 * (sharded data parallelism's units).  Not a public header: only those two
 * files include it.
 *
 * Handles: every (microbatch, chunk) has per_slot handle slots (the
 * receive buffer, PTSIM_LIFETIMES_LAYER_TENSORS per layer, the last
 * stage's logits, loss and MTP layers), -1 when empty; after them one
 * main-grad handle per bucket, then (ZeRO-3) one per unit of each chunk.
 *
 * Core module internals: pure C, PTSIM_HD, no allocation. */
#ifndef PTSIM_LIFETIMES_INT_H
#define PTSIM_LIFETIMES_INT_H

#include "lifetimes.h"

#define PTSIM_LIFETIMES_LAYER_TENSORS 16
/* per (microbatch, chunk): receive buffer, logits, fp32 logits, loss */
#define PTSIM_LIFETIMES_EXTRA_TENSORS 4
/* the allocator's streams (alloc.h) */
#define PTSIM_LIFETIMES_STREAM_COMPUTE 0
#define PTSIM_LIFETIMES_STREAM_COMM 1

typedef struct {
  const char *name;
  double bytes;
} PtsimLifetimesTensor;

typedef struct {
  const PtsimPlan *plan;
  const PtsimJob *job;       /* &plan->job */
  int64_t stage;
  int32_t v, m, chunk_layers;
  PtsimAllocator alloc;
  int32_t *handles;          /* (m*v) slots of per_slot handles */
  int32_t per_slot;
  PtsimLifetimesTensor saved[PTSIM_LIFETIMES_LAYER_TENSORS];
  int32_t n_saved;
  PtsimLifetimesTensor saved_moe[PTSIM_LIFETIMES_LAYER_TENSORS]; /* an MoE layer's
                                                                     (mixture-of-experts models) */
  int32_t n_saved_moe;
  /* A recomputed layer: what its checkpoint keeps under torch's per-op
   * policy (PTSIM_RECOMPUTE_SELECTIVE_OP; full recompute keeps the input
   * alone), and the share of its saved set that comes and goes as it is
   * computed and recomputed (1; the rest beyond the kept set under per-op) */
  PtsimLifetimesTensor kept[PTSIM_LIFETIMES_LAYER_TENSORS];
  int32_t n_kept;
  double rest_scale;
  double layer_input_bytes, tokens, tokens_sp, logits_elems;
  PtsimStageAlloc *out;
  int32_t step, item, kind, microbatch, chunk;
  int failed;
  int32_t *main_grads;       /* (buckets) fp32 main-grad copies alive, or -1 */
  int32_t buckets;
  int32_t attention_buffer;  /* unfused attention's global buffer, once got */
  double reserved_best;      /* highest reserved seen so far (all phases) */
  /* ZeRO-3: the gathered units of each chunk, (v) slots of chunk_layers + 2
   * (embedding, layers, output unit), -1 when sharded; NULL otherwise */
  int32_t *gathered;
} PtsimLifetimesCtx;

/* Chunk `chunk` of the stage holds the embedding / the output layer. */
static inline PTSIM_HD int ptsim_lifetimes_is_first(const PtsimLifetimesCtx *x, int32_t chunk) {
  return x->stage == 0 && chunk == 0;
}
static inline PTSIM_HD int ptsim_lifetimes_is_last(const PtsimLifetimesCtx *x, int32_t chunk) {
  return x->stage == x->job->layout.pp - 1 && chunk == x->v - 1;
}

/* One allocation of `bytes` named `name` on `stream`: its handle, or -1
 * (nothing to allocate, or the replay has failed: the first failure is
 * recorded in x->out).  And its free (a handle < 0 is none). */
PTSIM_HD int32_t ptsim_lifetimes_take(PtsimLifetimesCtx *x, const char *name, double bytes,
                                      int32_t stream);
PTSIM_HD void ptsim_lifetimes_give(PtsimLifetimesCtx *x, int32_t handle);

/* ---- sharded data parallelism's units (lifetimes_units.c) ----
 *
 * A chunk's units are 0 (the embedding, first chunk of stage 0),
 * 1..chunk_layers (its layers; an MoE layer is an MoE unit),
 * chunk_layers + 1 (the output unit, last chunk of the last stage). */

/* Handles of gathered units (ZeRO-3): chunk_layers + 2 per chunk. */
PTSIM_HD int64_t ptsim_lifetimes_unit_slots(const PtsimPlan *plan, int64_t stage);
/* Before unit u's pass: it and (prefetch) the next one in pass order
 * (dir +1 forward, -1 backward) gathered. */
PTSIM_HD void ptsim_lifetimes_unit_enter(PtsimLifetimesCtx *x, int32_t chunk, int32_t u,
                                         int32_t dir);
/* After unit u's forward: resharded unless kept for backward. */
PTSIM_HD void ptsim_lifetimes_unit_forward_done(PtsimLifetimesCtx *x, int32_t chunk, int32_t u);
/* Unit u's backward begins: gathered, and its gradient's handle (-1: none). */
PTSIM_HD int32_t ptsim_lifetimes_unit_backward_begin(PtsimLifetimesCtx *x, int32_t chunk,
                                                     int32_t u);
/* ... and ends: its gradient becomes the reduce-scatter input in flight
 * (*reducing, the previous one's freed), the unit resharded. */
PTSIM_HD void ptsim_lifetimes_unit_backward_end(PtsimLifetimesCtx *x, int32_t chunk, int32_t u,
                                                int32_t grad, int32_t *reducing);
/* Every gathered unit freed (sync_once: the reduction after the last
 * micro-batch reshards them). */
PTSIM_HD void ptsim_lifetimes_units_reshard(PtsimLifetimesCtx *x);
/* At start, ZeRO-2/3: each unit's weight shard (ZeRO-3, megatron) and
 * gradient shard (or, under sync_once, whole gradient). */
PTSIM_HD void ptsim_lifetimes_sharded_units(PtsimLifetimesCtx *x);

#endif /* PTSIM_LIFETIMES_INT_H */
