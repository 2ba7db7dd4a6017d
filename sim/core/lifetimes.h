/* lifetimes.h — the tensors one pipeline stage allocates and frees during
 * training steps, replayed through the caching-allocator emulation.
 *
 * Per stage (one GPU standing for its tp x cp x dp peers), in the order
 * the stage's schedule runs its items:
 *   at start   bf16 weights (one tensor per parameter matrix), the fp32
 *              gradient buffer in Megatron's buckets (40M parameters, or
 *              1M x dp), the optimizer shard (master, m, v per bucket);
 *   forward    per layer its saved activations (the analytical estimate's
 *              tensors, so the two agree on what is kept) and its transient
 *              working tensors: the SP all-gather output, GEMM outputs
 *              before the reduce-scatter / all-reduce, attention workspace,
 *              the CP ring buffers; the pipeline receive buffer; on the last
 *              stage the logits, their fp32 copy and the loss buffers;
 *   backward   under full recompute the layer's tensors re-materialised
 *              first; the incoming and outgoing activation gradients
 *              (transient), then the saved tensors freed in reverse.
 * What NCCL and the CUDA context hold is outside the allocator and counted
 * apart (the seed's "temporary buffers"): it lowers the capacity the
 * allocator may reserve.
 *
 * Core module: pure C, PTSIM_HD, no allocation; the caller gives the block
 * storage (ptsim_lifetimes_blocks_needed).  Not here: the allocator rules
 * (alloc.h), timing (engine.h). */
#ifndef PTSIM_LIFETIMES_H
#define PTSIM_LIFETIMES_H

#include "alloc.h"
#include "hd.h"
#include "job.h"
#include "plan.h"
#include "schedule.h"

#define PTSIM_LIFETIMES_NAME_MAX 24

/* What the allocator did on one stage. */
typedef struct {
  double allocated_peak_bytes;   /* most bytes handed out at once */
  double reserved_peak_bytes;    /* most bytes cudaMalloc'ed at once */
  double fragmentation;          /* 1 - allocated peak / reserved peak */
  double inactive_split_peak_bytes; /* cached pieces of split segments, at most */
  double outside_bytes;          /* CUDA context + NCCL buffers (not the allocator's) */
  double device_peak_bytes;      /* reserved peak + outside */
  int32_t fits;                  /* no allocation failed at the profile's capacity */
  /* The first allocation that failed (when !fits). */
  int32_t oom_step, oom_item, oom_microbatch, oom_chunk, oom_kind; /* kind: PtsimScheduleItemKind, -1 at start */
  double oom_request_bytes;
  char oom_tensor[PTSIM_LIFETIMES_NAME_MAX];
} PtsimStageAlloc;

/* Samples of allocated/reserved after each schedule item, for timelines. */
typedef struct {
  int32_t step, item;
  double allocated_bytes, reserved_bytes;
} PtsimAllocSample;

typedef struct {
  PtsimAllocSample *samples; /* (transfer none) */
  int64_t capacity, count;   /* count may exceed capacity (then truncated) */
} PtsimAllocTimeline;

/* CUDA context and NCCL communicator buffers of one GPU of this job. */
PTSIM_HD double ptsim_lifetimes_outside_bytes(const PtsimJob *job);

/* Scratch bytes ptsim_lifetimes_replay needs for this stage (allocator
 * blocks and the handles of live tensors). */
PTSIM_HD int64_t ptsim_lifetimes_scratch_bytes(const PtsimPlan *plan, int64_t stage);

/* Replays `steps` training steps of stage `stage`, whose schedule order is
 * items[0..n_items), through an allocator with `opts` (NULL: PyTorch's
 * defaults) at the profile's capacity minus the outside bytes.  timeline
 * may be NULL.  Returns 0, PTSIM_ALLOC_ERR_NO_BLOCKS when scratch is too
 * small, or PTSIM_ALLOC_ERR_ARGS for bad options. */
PTSIM_HD int32_t ptsim_lifetimes_replay(const PtsimPlan *plan, int64_t stage,
                                        const PtsimScheduleItem *items, int32_t n_items,
                                        int32_t steps, const PtsimAllocOptions *opts,
                                        void *scratch, int64_t scratch_bytes,
                                        PtsimAllocTimeline *timeline, PtsimStageAlloc *out);

#endif /* PTSIM_LIFETIMES_H */
