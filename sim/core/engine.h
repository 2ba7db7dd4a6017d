/* engine.h — the discrete-event simulation of one training step.
 *
 * Each pipeline stage (one GPU standing for its tp x cp x dp peers) has a
 * compute stream that runs its schedule order (schedule.h) one item at a
 * time; an item starts when the stream is free and its input has arrived.
 * Activations and their gradients travel between neighbouring stages as
 * point-to-point transfers that take the workload's pp_transfer_s and do
 * not occupy the compute stream.  TP collectives and the exposed part of
 * the CP ring block the compute stream (they are inside item durations,
 * workload.h).  A per-stage data-parallel stream reduces the gradients —
 * when overlap_grad_reduce is on, in Megatron DDP's buckets as each chunk's
 * last backward makes their gradients (plan_buckets.c; PyTorch's DDP/FSDP:
 * from the start of each chunk's last backward), else after the stage's
 * last item — and the
 * step ends with the optimizer step and (unless overlap_param_gather) the
 * parameter all-gather, after the global gradient-norm synchronisation.
 *
 * One binary-heap event queue ordered by (time, seq), integer ns: the same
 * input gives bit-identical output.
 *
 * The periodic shortcut: with identical microbatches every schedule repeats
 * itself once the pipeline is full.  A deterministic run without a trace
 * watches for the whole state of the simulation (every stage, every pending
 * event, every input in flight) to come back moved by one period of the
 * schedule, then advances as many whole periods as the steady stretch
 * holds in one step and simulates the rest.  The result is the one of
 * simulating every event, to the nanosecond and to the event count (the
 * property test in test_engine.c checks thousands of layouts); the cost no
 * longer grows with the number of microbatches once the pipeline repeats.
 * Where the state never repeats (a stage that falls ever further behind,
 * as GPipe's last stage does when it is the slowest) the run simply
 * simulates every event.  ptsim_engine_run_full never takes the shortcut.
 * ptsim_engine_run_recurrence gives the same times without events, and is
 * what the batch evaluator runs.
 *
 * Core module: pure C, PTSIM_HD, no allocation, no I/O; the caller gives the
 * scratch memory (ptsim_engine_scratch_bytes). */
#ifndef PTSIM_ENGINE_H
#define PTSIM_ENGINE_H

#include "event_queue.h"
#include "hd.h"
#include "job.h"
#include "plan.h"
#include "schedule.h"
#include "workload.h"

#define PTSIM_ENGINE_ERR_SCRATCH (-100)  /* scratch too small */
#define PTSIM_ENGINE_ERR_QUEUE (-101)    /* event queue overflow */
#define PTSIM_ENGINE_ERR_STALL (-102)    /* a stage waits forever (bad order) */
#define PTSIM_ENGINE_ERR_TOO_LONG (-103) /* the step could outlast the clock (see below) */

/* The clock is int64 ns.  A step whose durations add up (serially, the
 * most any schedule can take) to more than this many seconds is refused
 * with PTSIM_ENGINE_ERR_TOO_LONG rather than overflowing: 1e9 s is 31
 * years, 1e18 ns, inside int64's 9.2e18.  A Monte-Carlo run scales each
 * duration by at most PTSIM_ENGINE_MAX_JITTER (a larger drawn factor is
 * clamped), so its steps are refused past 1e9 / that seconds. */
#define PTSIM_ENGINE_MAX_STEP_S 1e9
#define PTSIM_ENGINE_MAX_JITTER 1e4

typedef struct {
  double busy_s;    /* compute stream busy (includes blocking comm) */
  double compute_s; /* busy minus blocking communication */
  double idle_s;    /* pipeline end minus busy */
  double pp_wait_s; /* idle time spent waiting for a transfer in flight */
  double end_s;     /* its last item ends */
  double exposed_comm_s[PTSIM_COMM_KINDS];
  double grad_sync_end_s; /* its data-parallel stream is done */
} PtsimStageTime;

typedef struct {
  double step_s;
  double tokens_per_s;
  double tflops_per_gpu;                   /* Megatron-LM's formula (what its logs print) */
  double mfu;                              /* model FLOPs / (step x gpus x dense bf16 peak) */
  double hfu;                              /* executed FLOPs (recomputation included) likewise */
  double bubble_fraction;                  /* 1 - mean stage busy / pipeline end */
  double compute_s;                        /* of the busiest stage */
  double exposed_comm_s[PTSIM_COMM_KINDS]; /* tp, cp: busiest stage; pp: its
                                              transfer waits; dp: the tail */
  double pipeline_s;                       /* last compute item ends */
  double optimizer_s;
  int64_t busiest_stage;
  int64_t num_stages;
  int64_t events;           /* events of the whole simulation (the periodic
                               shortcut counts the ones it skipped) */
  int64_t events_simulated; /* events actually processed (the recurrence:
                               items computed) */
  PtsimStageTime stages[PTSIM_MAX_STAGES];
} PtsimTimeResult;

/* What ran when, for traces and timeline plots. */
typedef enum {
  PTSIM_TRACE_FORWARD = 0,
  PTSIM_TRACE_BACKWARD = 1,        /* B + W */
  PTSIM_TRACE_BACKWARD_INPUT = 2,  /* B */
  PTSIM_TRACE_BACKWARD_WEIGHT = 3, /* W */
  PTSIM_TRACE_GRAD_SYNC = 4,       /* data-parallel stream */
  PTSIM_TRACE_OPTIMIZER = 5,
  PTSIM_TRACE_PARAM_GATHER = 6
} PtsimTraceKind;

typedef struct {
  int32_t stage, kind, microbatch, chunk;
  PtsimTime start_ns, end_ns;
} PtsimTraceRecord;

typedef struct {
  PtsimTraceRecord *records; /* (transfer none) */
  int64_t capacity;
  int64_t count; /* written; may exceed capacity (then truncated) */
} PtsimTrace;

/* Monte-Carlo perturbation of one run: every item's duration is multiplied
 * by a mean-one lognormal factor exp(sigma z - sigma^2/2), and with
 * probability straggler_rate the item is also a straggler, slowed by
 * straggler_slowdown (a GPU throttling, an OS hiccup, a slow NIC link).
 * Draws come from stream (seed, subsequence) of rng.h. */
typedef struct {
  double sigma;
  double straggler_rate;
  double straggler_slowdown;
  uint64_t seed, subsequence;
} PtsimJitter;

/* Bytes of scratch ptsim_engine_run needs for this plan, or a negative
 * schedule error code when the job's schedule cannot be built.  Reads only
 * the plan's counts (ptsim_plan_counts). */
PTSIM_HD int64_t ptsim_engine_scratch_bytes(const PtsimPlan *plan);

/* Records a run's trace may hold: every item, per stage the optimizer,
 * the gathers and the data-parallel stream (a record per bucket with
 * Megatron DDP's buckets, plan_buckets.c), with a margin. */
PTSIM_HD int64_t ptsim_engine_trace_capacity(const PtsimPlan *plan);

/* Simulates one step.  trace may be NULL; without one the periodic
 * shortcut applies (above).  Returns 0, or a negative code (schedule
 * errors, PTSIM_ENGINE_ERR_*). */
PTSIM_HD int32_t ptsim_engine_run(const PtsimPlan *plan, const PtsimWorkload *workload,
                                  void *scratch, int64_t scratch_bytes, PtsimTrace *trace,
                                  PtsimTimeResult *out);

/* The same, simulating every event (`--no-shortcut`): the reference the
 * shortcut is checked against. */
PTSIM_HD int32_t ptsim_engine_run_full(const PtsimPlan *plan, const PtsimWorkload *workload,
                                       void *scratch, int64_t scratch_bytes, PtsimTrace *trace,
                                       PtsimTimeResult *out);

/* Bytes of scratch ptsim_engine_run_recurrence needs (no event queue: a
 * fifth of the above for long pipelines), or a negative schedule code. */
PTSIM_HD int64_t ptsim_engine_recurrence_bytes(const PtsimPlan *plan);

/* The same result but for `events` (0: not counted), without events: an
 * item starts at max(its stage's free time, its input's arrival) whatever
 * order the events pop in, so the times are a recurrence over the items,
 * evaluated stage by stage in dependency order, with the same periodic
 * shortcut (engine_recur.c).  About four times cheaper per item than the
 * event loop: what the batch evaluator runs.  Deterministic, no trace. */
PTSIM_HD int32_t ptsim_engine_run_recurrence(const PtsimPlan *plan, const PtsimWorkload *workload,
                                             void *scratch, int64_t scratch_bytes,
                                             PtsimTimeResult *out);

/* The recorded-order replay (engine_replay.c): the recurrence's control
 * flow depends only on the schedule's shape, so a shape's items are
 * recorded once, in dependency order, and every layout of that shape
 * computes its times as one loop of max and add over that table.  The
 * table lives in a cache the caller owns (one per thread: it is written
 * on a miss), of any size from PTSIM_ENGINE_CACHE_MIN_BYTES; shapes of more
 * than PTSIM_ENGINE_REPLAY_MAX_ITEMS items (all stages) run the
 * recurrence, whose periodic shortcut is cheaper there. */
#define PTSIM_ENGINE_CACHE_SLOTS 1024
#define PTSIM_ENGINE_REPLAY_MAX_ITEMS 65536
#define PTSIM_ENGINE_CACHE_MIN_BYTES (1024 * 1024)

/* Sets a cache up in `buffer` (bytes); 0, or PTSIM_ENGINE_ERR_SCRATCH when
 * it is smaller than PTSIM_ENGINE_CACHE_MIN_BYTES. */
PTSIM_HD int32_t ptsim_engine_cache_init(void *buffer, int64_t bytes);

/* Makes the cache replay every shape within PTSIM_ENGINE_REPLAY_MAX_ITEMS
 * from its first layout on, whatever the shortcut would skip (the tests
 * check the replay on every shape with it). */
PTSIM_HD void ptsim_engine_cache_replay_always(void *cache);

/* ptsim_engine_run_recurrence's result, the same bytes, by the replay when
 * `cache` (NULL: none) holds or can hold the shape's table. */
PTSIM_HD int32_t ptsim_engine_run_replayed(const PtsimPlan *plan, const PtsimWorkload *workload,
                                           void *cache, void *scratch, int64_t scratch_bytes,
                                           PtsimTimeResult *out);

/* The same with every item perturbed as `jitter` says; every event is
 * simulated (a perturbed run has no period).  jitter NULL: ptsim_engine_run. */
PTSIM_HD int32_t ptsim_engine_run_jittered(const PtsimPlan *plan, const PtsimWorkload *workload,
                                           const PtsimJitter *jitter, void *scratch,
                                           int64_t scratch_bytes, PtsimTrace *trace,
                                           PtsimTimeResult *out);

#endif /* PTSIM_ENGINE_H */
