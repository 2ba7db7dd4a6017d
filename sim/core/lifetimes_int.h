/* lifetimes_int.h — the state of one stage's replay, shared by
 * lifetimes.c (the tensors and the schedule walk), lifetimes_sets.c (a
 * layer's saved set), lifetimes_units.c (sharded data parallelism's units)
 * and lifetimes_period.c (the exact periodic shortcut).  Not a public
 * header: only those files include it.
 *
 * Handles: every (microbatch, chunk) has per_slot handle slots (the
 * receive buffer, PTSIM_LIFETIMES_LAYER_TENSORS per layer, the last
 * stage's logits, loss and MTP layers' tensors), -1 when empty; after them
 * one main-grad handle per bucket, then (ZeRO-3) one per unit of each
 * chunk.  A handle is emptied when its tensor is freed, so a slot's
 * non-empty handles are exactly its tensors alive.  The live list names
 * the (microbatch, chunk) whose forward ran and whose saved tensors are
 * not yet freed (its receive buffer is the last to go).
 *
 * Core module internals: pure C, PTSIM_HD, no allocation. */
#ifndef PTSIM_LIFETIMES_INT_H
#define PTSIM_LIFETIMES_INT_H

#include "lifetimes.h"

#define PTSIM_LIFETIMES_ELEM 2.0         /* bytes per 16-bit element */
#define PTSIM_LIFETIMES_LAYER_TENSORS 17 /* the dense set at its largest, LoRA's included */
/* per (microbatch, chunk): receive buffer, logits, fp32 logits, loss */
#define PTSIM_LIFETIMES_EXTRA_TENSORS 4
/* the allocator's streams (alloc.h) */
#define PTSIM_LIFETIMES_STREAM_COMPUTE 0
#define PTSIM_LIFETIMES_STREAM_COMM 1
/* The shortcut's hint hashes words FNV-1a style, x = (x ^ word) * this:
 * FNV's 64-bit prime (lifetimes.c and lifetimes_period.c hash alike). */
#define PTSIM_LIFETIMES_HASH_PRIME 0x100000001B3ull

/* What happens around a saved tensor besides its allocation (bits of
 * PtsimLifetimesTensor.role): unfused attention's scores are allocated
 * before the first tensor marked CORE or CORE_END and freed after the one
 * marked CORE_END (the attention output); the layer's forward transients
 * (ptsim_lifetimes_layer_transients) and an MoE layer's dispatch
 * (ptsim_lifetimes_moe_transients) run after the tensor marked so. */
#define PTSIM_LIFETIMES_ROLE_CORE 1
#define PTSIM_LIFETIMES_ROLE_CORE_END 2
#define PTSIM_LIFETIMES_ROLE_LAYER_TRANSIENTS 4
#define PTSIM_LIFETIMES_ROLE_MOE_TRANSIENTS 8
/* not scaled to the estimate's layer total (lifetimes_sets.c) */
#define PTSIM_LIFETIMES_ROLE_EXACT 16
/* a module input --offload-modules sends to the host after the layer's
 * forward, back before its backward (memory.c, "Activation offloading") */
#define PTSIM_LIFETIMES_ROLE_OFFLOAD 32
/* a hybrid model's Mamba layer: its mixer's transients after this tensor
 * (lifetimes_hybrid.c) */
#define PTSIM_LIFETIMES_ROLE_MAMBA_TRANSIENTS 64

typedef struct {
  const char *name;
  double bytes;
  int32_t role; /* PTSIM_LIFETIMES_ROLE_* bits */
} PtsimLifetimesTensor;

struct PtsimLifetimesPeriod; /* lifetimes_period.c */

typedef struct {
  const PtsimPlan *plan;
  const PtsimJob *job; /* &plan->job */
  int64_t stage;
  int32_t v, m, chunk_layers;
  PtsimAllocator alloc;
  int32_t *handles; /* (m*v) slots of per_slot handles */
  int32_t per_slot;
  PtsimLifetimesTensor saved[PTSIM_LIFETIMES_LAYER_TENSORS];
  int32_t n_saved;
  PtsimLifetimesTensor saved_moe[PTSIM_LIFETIMES_LAYER_TENSORS]; /* an MoE layer's
                                                                     (mixture-of-experts models) */
  int32_t n_saved_moe;
  /* A hybrid model's (mamba.h) Mamba, attention-only and MLP-only layers'
   * sets (its MoE-only layers' in saved_moe), lifetimes_hybrid.c */
  PtsimLifetimesTensor saved_hybrid[3][PTSIM_LIFETIMES_LAYER_TENSORS];
  int32_t n_saved_hybrid[3];
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
  int32_t *main_grads; /* (buckets) fp32 main-grad copies alive, or -1 */
  int32_t buckets;
  double reserved_best;     /* highest reserved seen so far (all phases) */
  int32_t attention_buffer; /* unfused attention's global buffer, once got */
  /* --defer-embedding-wgrad-compute, the last stage: the logits gradients
   * and output-layer inputs kept this step (deferred_cap handles), and the
   * flush's two all-gather buffers, once got */
  int32_t *deferred;
  int32_t n_deferred, deferred_cap;
  int32_t drain_buffers[2];
  /* ZeRO-3: the gathered units of each chunk, (v) slots of chunk_layers + 2
   * (embedding, layers, output unit), -1 when sharded; NULL otherwise */
  int32_t *gathered;
  int32_t n_gathered; /* its slots (ptsim_lifetimes_unit_slots), 0 without */
  /* The live list: (microbatch, chunk) pairs, 2 words each, in no order;
   * live_pos[mb * v + chunk] is a pair's place in it, -1 when not live. */
  int32_t *live, *live_pos;
  int32_t n_live, live_cap;
  int32_t irregular;                   /* an item read a slot its forward never filled, or
                                          the live list overflowed: no shortcut */
  uint64_t trace_hash;                 /* the addresses handed out since the last period
                                          boundary, hashed (the shortcut's cheap hint) */
  struct PtsimLifetimesPeriod *period; /* NULL: every item is replayed */
  int32_t period_next;                 /* the item before which the shortcut looks next, -1 never */
} PtsimLifetimesCtx;

/* The layers of model chunk `chunk` of the replayed stage (the plan's, per
 * virtual stage; chunk_layers, the stage's most, sizes the slots). */
static PTSIM_HD inline int32_t ptsim_lifetimes_layers_of(const PtsimLifetimesCtx *x,
                                                         int32_t chunk) {
  int64_t first, count;
  ptsim_plan_chunk_range(x->plan, x->stage, chunk, &first, &count);
  return (int32_t)count;
}

/* Chunk `chunk` of the stage holds the embedding / the output layer: it is
 * the first / the last virtual stage (plan.h vstages). */
static inline PTSIM_HD int ptsim_lifetimes_is_first(const PtsimLifetimesCtx *x, int32_t chunk) {
  return x->stage == x->plan->vstages.first_stage && chunk == 0;
}
static inline PTSIM_HD int ptsim_lifetimes_is_last(const PtsimLifetimesCtx *x, int32_t chunk) {
  return x->stage == x->plan->vstages.last_stage && chunk == x->v - 1;
}

/* 1 when chunk `chunk` of the replayed stage runs the MTP layers (the
 * plan's mtp_stage and mtp_chunk: the last chunk, or the one before it
 * apart, whose heads the last chunk then runs). */
static inline PTSIM_HD int ptsim_lifetimes_is_mtp(const PtsimLifetimesCtx *x, int32_t chunk) {
  return x->job->model.mtp_num_layers > 0 && x->stage == x->plan->mtp_stage &&
         chunk == x->plan->mtp_chunk;
}

/* One allocation of `bytes` named `name` on `stream`: its handle, or -1
 * (nothing to allocate, or the replay has failed: the first failure is
 * recorded in x->out).  And its free (a handle < 0 is none). */
PTSIM_HD int32_t ptsim_lifetimes_take(PtsimLifetimesCtx *x, const char *name, double bytes,
                                      int32_t stream);
PTSIM_HD void ptsim_lifetimes_give(PtsimLifetimesCtx *x, int32_t handle);
/* A tensor freed as soon as it is made (take then give, in one call). */
PTSIM_HD void ptsim_lifetimes_take_give(PtsimLifetimesCtx *x, const char *name, double bytes,
                                        int32_t stream);

/* The transients of one layer's forward (the SP all-gather, CP's ring
 * blocks, the row-parallel output), and an MoE layer's beyond them (the
 * dispatch's sent and received rows, the experts' output): allocated and
 * freed around the ops (lifetimes.c). */
PTSIM_HD void ptsim_lifetimes_layer_transients(PtsimLifetimesCtx *x);
PTSIM_HD void ptsim_lifetimes_moe_transients(PtsimLifetimesCtx *x);

/* Handles per MTP layer, on the last stage: its inputs, its layer's saved
 * set, its fp32 logits and loss. */
#define PTSIM_LIFETIMES_MTP_TENSORS (PTSIM_LIFETIMES_LAYER_TENSORS + 3)

/* The MTP layers (lifetimes_mtp.c), each layer's handles at
 * h + j * PTSIM_LIFETIMES_MTP_TENSORS: forward after the decoder's, the
 * output heads after the main one, backward before the decoder's (the
 * saved sets freed unless keep_saved), and the release of handles
 * [first, last) of every layer. */
PTSIM_HD void ptsim_lifetimes_mtp_forward(PtsimLifetimesCtx *x, int32_t *h);
PTSIM_HD void ptsim_lifetimes_mtp_heads(PtsimLifetimesCtx *x, int32_t *h);
PTSIM_HD void ptsim_lifetimes_mtp_backward(PtsimLifetimesCtx *x, int32_t *h, int keep_saved,
                                           int heads, int layers);
PTSIM_HD void ptsim_lifetimes_mtp_give(PtsimLifetimesCtx *x, int32_t *h, int32_t first,
                                       int32_t last);

/* Megatron's native fused cross entropy (--cross-entropy-loss-fusion, the
 * default --cross-entropy-fusion-impl native): its helpers are compiled
 * (megatron/core/fusions/fused_cross_entropy.py: @jit_fuser, which
 * megatron/core/jit.py makes torch.compile).  calculate_predicted_logits
 * subtracts the max from its fp32 logits and exponentiates them in place
 * and returns them, calculate_gradients turns the kept softmax into the
 * gradient in place and casts it to bf16; a compiled function does not
 * write its inputs in place but computes the new values into a buffer of
 * its own and copies them back (torch.compile's functionalization of input
 * mutations), so each holds a second fp32 logits-sized tensor while it
 * runs.  Measured: Megatron-LM's test gpt3_mcore_te_tp2_pp2_cross_entropy_
 * loss_fusion peaks 0.382 GiB above its unfused twin (..._resume_torch_dist)
 * on H100 (golden values of 2026-08-19), 0.338 + 0.047 (its smaller cuBLAS
 * workspaces) on A100 (lts): one fp32 copy of 4 x 1024 x 25216 logits,
 * 0.385 GiB.  Transformer Engine's Triton kernel (te) keeps an fp32
 * gradient as the unfused one keeps its softmax, nothing more. */
static inline PTSIM_HD int ptsim_lifetimes_ce_compiled(const PtsimLifetimesCtx *x) {
  return x->job->settings.cross_entropy_fusion && !x->job->settings.cross_entropy_te;
}

/* Puts pair k of the live list at (mb, chunk) and records its place. */
static inline PTSIM_HD void ptsim_lifetimes_live_set(PtsimLifetimesCtx *x, int32_t k, int32_t mb,
                                                     int32_t chunk) {
  x->live[2 * k] = mb;
  x->live[2 * k + 1] = chunk;
  x->live_pos[(int64_t)mb * x->v + chunk] = k;
}

/* The job runs a Megatron-LM dated in [from, until) (date 0, the current
 * one, is in no past interval). */
static inline PTSIM_HD int ptsim_lifetimes_megatron_between(const PtsimJob *job, int32_t from,
                                                            int32_t until) {
  int32_t d = job->source.megatron_date;
  return d > 0 && d >= from && d < until;
}

/* ---- a hybrid model's layers (lifetimes_hybrid.c) ---- */

/* The saved sets of a hybrid model's layer kinds (nothing for others). */
PTSIM_HD void ptsim_lifetimes_build_hybrid(PtsimLifetimesCtx *x);
/* The saved set of the model's layer `layer` (its pattern's kind). */
PTSIM_HD const PtsimLifetimesTensor *ptsim_lifetimes_hybrid_saved_of(const PtsimLifetimesCtx *x,
                                                                     int64_t layer, int32_t *n);
/* A Mamba layer's transients (forward, and again in its backward). */
PTSIM_HD void ptsim_lifetimes_mamba_transients(PtsimLifetimesCtx *x);
/* A hybrid stage's weights: a tensor per layer, then the embedding and head. */
PTSIM_HD void ptsim_lifetimes_hybrid_weights(PtsimLifetimesCtx *x);

/* ---- what a stage keeps besides (lifetimes_kept.c) ---- */

/* The stage's GEMM workspaces (memory.h PtsimWorkspaces), at start. */
PTSIM_HD void ptsim_lifetimes_workspaces(PtsimLifetimesCtx *x);
/* --defer-embedding-wgrad-compute: the handles the last stage's deferred
 * tensors need in a step (0 elsewhere), and the flush before the
 * optimizer step that frees them. */
PTSIM_HD int64_t ptsim_lifetimes_deferred_cap(const PtsimPlan *plan, int64_t stage);
PTSIM_HD void ptsim_lifetimes_drain_deferred(PtsimLifetimesCtx *x);

/* ---- the saved sets (lifetimes_sets.c) ---- */

/* Allocates the saved set set[0..n) of one layer into hs[0..n), each
 * tensor's bytes x scale, with what its roles say around it: the
 * attention scores, and (inline) the layer's and the MoE dispatch's
 * transients; without inline the caller runs those itself. */
PTSIM_HD void ptsim_lifetimes_take_set(PtsimLifetimesCtx *x, const PtsimLifetimesTensor *set,
                                       int32_t n, double scale, int inline_transients, int32_t *hs);

/* The backward of unfused attention's core, between the layer's incoming
 * and outgoing gradients: the s x s gradients (transient), and the kept
 * tensors re-created first when selective recompute dropped them. */
PTSIM_HD void ptsim_lifetimes_attention_backward(PtsimLifetimesCtx *x);

/* x->saved (and, for a mixture-of-experts model, x->saved_moe) for the
 * stage's shapes. */
PTSIM_HD void ptsim_lifetimes_build_saved(PtsimLifetimesCtx *x);

/* Layer `layer` of a chunk is recomputed in backward (Megatron's full
 * recompute by its method and count, or torch's per-op checkpointing),
 * and a recomputed layer's checkpoint keeps its input. */
PTSIM_HD int ptsim_lifetimes_recomputed(const PtsimLifetimesCtx *x, int32_t layer);
PTSIM_HD int ptsim_lifetimes_keeps_input(const PtsimLifetimesCtx *x, int32_t layer);

/* The saved set of layer `layer` of model chunk `chunk`; its size in *n. */
PTSIM_HD const PtsimLifetimesTensor *ptsim_lifetimes_saved_of(const PtsimLifetimesCtx *x,
                                                              int32_t chunk, int32_t layer,
                                                              int32_t *n);

/* The live list's upkeep (only while the shortcut watches): a forward
 * filled (mb, chunk); an item reads its tensors, `done` when it frees the
 * last of them.  An item that breaks the pattern (a second forward, a read
 * of a pair no forward filled) makes the replay irregular. */
PTSIM_HD void ptsim_lifetimes_live_add(PtsimLifetimesCtx *x, int32_t mb, int32_t chunk);
PTSIM_HD void ptsim_lifetimes_live_use(PtsimLifetimesCtx *x, int32_t mb, int32_t chunk, int done);

/* Handle slots of (microbatch, chunk). */
static inline PTSIM_HD int32_t *ptsim_lifetimes_slot(PtsimLifetimesCtx *x, int32_t mb,
                                                     int32_t chunk) {
  return x->handles + ((int64_t)mb * x->v + chunk) * x->per_slot;
}

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

/* ---- the periodic shortcut (lifetimes_period.c) ----
 *
 * Within one step, from the pipeline's steady state on, the items repeat
 * (ptsim_schedule_steady: item i + period is item i moved by `shift`
 * microbatches), and once the allocator has settled so does everything it
 * does.  At each period boundary of the steady stretch the shortcut hashes
 * the period's handed-out addresses with the allocator's counters (a hint,
 * not a proof); when the last hashes repeat those K periods before, it
 * compares the state now with one stored K periods (or a multiple) before
 * (stretches of long periods store one every few boundaries), or copies
 * the state, runs K more periods and compares again.  When the two
 * states are the same (every block's address, size, request and
 * kind, the counters, the live tensors' addresses with microbatches moved
 * by K x shift, the gathered units' addresses) the replay from the second is the replay from the
 * first moved by K periods, and so on while the items keep repeating: it jumps over whole K-period
 * blocks (moving the live microbatches, adding the monotone counters' growth) and replays the rest.
 * Peaks cannot grow in a repeated block (it revisits the values of the one before), no allocation
 * can fail in one (the one before did not), so the result is the plain replay's, byte for byte
 * (tests/test_lifetimes_period.c). */

/* Scratch bytes of the shortcut for a stage whose allocator has `blocks`
 * slots, whose live list holds `live_cap` pairs of per_slot handles, with
 * `units` gathered-unit handles (the stored states' ring included: 8 MiB,
 * touched as far as used). */
PTSIM_HD int64_t ptsim_lifetimes_period_bytes(int32_t blocks, int32_t live_cap, int32_t per_slot,
                                              int32_t units);

/* Sets the shortcut up in scratch (ptsim_lifetimes_period_bytes) for
 * the stage's items; x->period points to it afterwards.  Returns 0, or -1
 * when the schedule has no steady stretch (x->period stays NULL). */
PTSIM_HD int32_t ptsim_lifetimes_period_init(PtsimLifetimesCtx *x, void *scratch, int64_t bytes,
                                             int32_t n_items);

/* A step begins: forget what the last one saw. */
PTSIM_HD void ptsim_lifetimes_period_step(PtsimLifetimesCtx *x);

/* The replay is about to run item i of items[0..n_items).  Returns the
 * item to run next: i, or further on when whole repeating blocks were
 * skipped (the state then is the one the plain replay would reach there). */
PTSIM_HD int32_t ptsim_lifetimes_period_at(PtsimLifetimesCtx *x, const PtsimScheduleItem *items,
                                           int32_t n_items, int32_t i);

#endif /* PTSIM_LIFETIMES_INT_H */
