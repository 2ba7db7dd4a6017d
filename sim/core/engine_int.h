/* engine_int.h — the engine's internals, shared by engine.c (the event
 * loop) and engine_period.c (the exact periodic shortcut).  Not a public
 * header: only those two files include it.
 *
 * State of a run
 * --------------
 * Each stage: the index `next` of its next item, whether an item runs
 * (`busy`; that item is `next`), when its stream became free, its
 * accumulators (busy_ns, pp_wait_ns) and per chunk the start of its latest
 * backward (an array of v in the scratch: vp has no cap of its own).  Orders are never built: stage
 * s's item i is ptsim_schedule_item_at(&shape, i), O(1).
 *
 * Inputs: when an item ends, the arrival time of its output is written to
 * the consumer's ready table (fwd_ready / bwd_ready at (stage, microbatch,
 * chunk)).  The tables are never initialised: an entry counts only once its
 * producer has ended, and a producer on stage t has ended exactly when its
 * index is below t's `next` (a stage finishes its order in order).  So a run
 * costs nothing for the microbatches it never touches, which is what lets
 * the shortcut skip them.  The loss (a last-stage B after its own F) is
 * always there when the B comes up, its F being earlier in the same order.
 *
 * Events: ITEM_DONE(stage, index) and WAKE(stage) in one (time, seq) heap.
 *
 * Core module internals: pure C, PTSIM_HD, no allocation. */
#ifndef PTSIM_ENGINE_INT_H
#define PTSIM_ENGINE_INT_H

#include "engine.h"
#include "rng.h"
#include "units.h"

#define PTSIM_ENGINE_EV_ITEM_DONE 0
#define PTSIM_ENGINE_EV_WAKE 1
#define PTSIM_ENGINE_NOT_YET (-1)
/* The duration table's entries per (stage, chunk): one per item kind, then
 * the ns an overlapped backward hides (ptsim_engine_item_ns). */
#define PTSIM_ENGINE_DURATION_SLOTS 5
#define PTSIM_ENGINE_HIDDEN_SLOT 4

typedef struct {
  int32_t next;      /* index of the next item of the order */
  int32_t busy;      /* item `next` is running */
  PtsimTime free_at; /* when the stream became free (its last item ended) */
  PtsimTime busy_ns;
  PtsimTime pp_wait_ns;
  PtsimTime *last_backward_start; /* v, in the scratch: per chunk, when its latest B began */
  PtsimScheduleShape shape;       /* the order, in closed form */
  /* Item `next` (when next < items), read once when `next` moves: */
  PtsimScheduleItem item;
  int32_t input;      /* its PtsimScheduleInput */
  int32_t from_stage; /* its producer's stage and index there */
  int32_t from_index;
  int32_t last_forward, last_backward; /* where the order's last F and B are */
  /* Shortcut only: item indices of this stage read since the last
   * snapshot or cut (lo > hi: none). */
  int32_t touched_lo, touched_hi;
} PtsimEngineStage;

struct PtsimEnginePeriod; /* engine_period.c */

typedef struct {
  const PtsimPlan *plan;
  const PtsimJob *job;         /* &plan->job */
  const PtsimVstages *vstages; /* &plan->vstages: where each virtual stage runs */
  const PtsimWorkload *w;
  int32_t p, m, v, items;
  PtsimTime *fwd_ready; /* m * p * v: arrival times (see above) */
  PtsimTime *bwd_ready;
  PtsimTime *durations;     /* p * v * PTSIM_ENGINE_DURATION_SLOTS: ns per (stage, chunk,
                               item kind), and what an overlapped B hides */
  PtsimEngineStage *stages; /* p */
  PtsimEventQueue queue;
  PtsimTrace *trace;
  const PtsimJitter *jitter; /* NULL: deterministic */
  PtsimRng rng;
  PtsimTime pp_ns;
  int64_t events;                   /* events of the full simulation */
  int64_t simulated;                /* events actually popped */
  struct PtsimEnginePeriod *period; /* NULL: every event is simulated */
  void *aux;     /* scratch of the shortcut (engine_period.c or engine_recur.c) */
  int32_t track; /* item indices read are recorded (touched_lo/hi) */
  double comm_s[PTSIM_MAX_STAGES][PTSIM_COMM_KINDS];
} PtsimEngineSim;

/* Position of (stage, microbatch, chunk) in a ready table: microbatch
 * major, so the few microbatches in flight share cache lines. */
static PTSIM_HD inline int64_t ptsim_engine_slot(const PtsimEngineSim *sim, int32_t stage,
                                                 int32_t mb, int32_t chunk) {
  return ((int64_t)mb * sim->p + stage) * sim->v + chunk;
}

static PTSIM_HD inline void ptsim_engine_touch(PtsimEngineStage *st, int32_t index) {
  if (index < st->touched_lo) st->touched_lo = index;
  if (index > st->touched_hi) st->touched_hi = index;
}

/* The stage and chunk that receive the output of `it`, chunk `it->chunk`
 * of `stage`: the next virtual stage's for a forward, the previous one's
 * for a backward (B); 0 when it goes nowhere (the last forward, whose loss
 * stays on the stage; the first backward; W). */
static PTSIM_HD inline int32_t ptsim_engine_output_to(const PtsimEngineSim *sim, int32_t stage,
                                                      const PtsimScheduleItem *it,
                                                      int32_t *to_stage, int32_t *to_chunk) {
  const PtsimVstages *t = sim->vstages;
  int32_t at = stage * t->v + it->chunk;
  uint32_t word = it->kind == PTSIM_SCHEDULE_ITEM_FORWARD           ? t->next[at]
                  : it->kind != PTSIM_SCHEDULE_ITEM_BACKWARD_WEIGHT ? t->prev[at]
                                                                    : PTSIM_VSTAGE_NONE;
  if (word == PTSIM_VSTAGE_NONE) return 0;
  *to_stage = ptsim_schedule_word_stage(word);
  *to_chunk = ptsim_schedule_word_chunk(word);
  return 1;
}

/* 1 under Megatron-LM's combined 1F1B (--overlap-moe-expert-parallel-comm
 * with its 1F1B or interleaved order). */
static PTSIM_HD inline int32_t ptsim_engine_combined(const PtsimEngineSim *sim) {
  return sim->job->settings.moe_ep_comm_overlap &&
         (sim->job->layout.schedule == PTSIM_SCHEDULE_1F1B ||
          sim->job->layout.schedule == PTSIM_SCHEDULE_INTERLEAVED);
}

/* 1 when the full backward (B) at `index` of a 1F1B or interleaved order
 * runs paired with a forward in Megatron-LM's combined 1F1B: the steady
 * state's, the one a forward follows.  Megatron runs one more warm-up
 * forward and pairs each steady backward with the forward after it, so
 * the pairs are one fewer than the steady state's, and the warm-up and
 * the cool-down run alone (pipeline_parallel/combined_1f1b.py). */
static PTSIM_HD inline int32_t ptsim_engine_combined_pair(const PtsimEngineSim *sim, int32_t stage,
                                                          int32_t index) {
  PtsimScheduleItem next;
  if (index + 1 >= sim->items) return 0;
  ptsim_schedule_item_at(&sim->stages[stage].shape, index + 1, &next);
  return next.kind == PTSIM_SCHEDULE_ITEM_FORWARD;
}

/* How long item `index` of `stage` runs, jitter aside: its kind's duration,
 * less, for the B of one of DualPipeV's overlapped forward + backward pairs
 * (ptsim_schedule_overlapped) or of combined 1F1B's (the full backward B,
 * whose hidden slot only --overlap-moe-expert-parallel-comm fills), what
 * the pair hides (engine.c tabulate); the hidden expert all-to-all then
 * leaves the stage's exposed communication. */
static PTSIM_HD inline PtsimTime ptsim_engine_item_ns(PtsimEngineSim *sim, int32_t stage,
                                                      int32_t index, const PtsimScheduleItem *it) {
  const PtsimTime *d = sim->durations +
                       ((int64_t)stage * sim->v + it->chunk) * PTSIM_ENGINE_DURATION_SLOTS;
  PtsimTime hidden = d[PTSIM_ENGINE_HIDDEN_SLOT];
  if (hidden <= 0 || (it->kind == PTSIM_SCHEDULE_ITEM_BACKWARD
                          ? !ptsim_engine_combined_pair(sim, stage, index)
                          : it->kind != PTSIM_SCHEDULE_ITEM_BACKWARD_INPUT ||
                                !ptsim_schedule_overlapped(&sim->stages[stage].shape, index)))
    return d[it->kind];
  /* combined 1F1B's without jitter: from the busy time at the end
   * (engine.c), as the periodic shortcut skips items */
  if (it->kind != PTSIM_SCHEDULE_ITEM_BACKWARD || sim->jitter)
    sim->comm_s[stage][PTSIM_COMM_EP] -= (double)hidden * PTSIM_S_PER_NS;
  return d[it->kind] - hidden;
}

/* Reads item `next` of `stage` and where its input comes from.  With
 * sim->track, both indices count as read (they must repeat with the
 * period). */
static PTSIM_HD inline void ptsim_engine_stage_load(PtsimEngineSim *sim, int32_t stage) {
  PtsimEngineStage *st = &sim->stages[stage];
  PtsimScheduleItem from;
  if (st->next >= sim->items) return;
  ptsim_schedule_item_at(&st->shape, st->next, &st->item);
  st->input = ptsim_schedule_input(sim->vstages, stage, &st->item, &st->from_stage, &from);
  if (sim->track) ptsim_engine_touch(st, st->next);
  if (st->input == PTSIM_SCHEDULE_INPUT_NONE || st->input == PTSIM_SCHEDULE_INPUT_LOSS) return;
  st->from_index = ptsim_schedule_index_of(&sim->stages[st->from_stage].shape, from.kind,
                                           from.microbatch, from.chunk);
  if (sim->track) ptsim_engine_touch(&sim->stages[st->from_stage], st->from_index);
}

/* When the input of item `next` of `stage` is available: 0 when it waits
 * for nothing (F of virtual stage 0, W, the loss), NOT_YET while its
 * producer has not ended, else the arrival time. */
static PTSIM_HD inline PtsimTime ptsim_engine_input_ready(const PtsimEngineSim *sim,
                                                          int32_t stage) {
  const PtsimEngineStage *st = &sim->stages[stage];
  if (st->input == PTSIM_SCHEDULE_INPUT_NONE || st->input == PTSIM_SCHEDULE_INPUT_LOSS) return 0;
  if (st->from_index >= sim->stages[st->from_stage].next) return PTSIM_ENGINE_NOT_YET;
  return (st->input == PTSIM_SCHEDULE_INPUT_FORWARD
              ? sim->fwd_ready
              : sim->bwd_ready)[ptsim_engine_slot(sim, stage, st->item.microbatch, st->item.chunk)];
}

/* Where a shortcut's state lists stage s's pending inputs: its items from
 * `from` on whose producers are done (their index below done_below[] of
 * their stage), which are a prefix of each input stream (a producer ends
 * its items in order, and each stream is produced in the order the stage
 * consumes it: /schedule/streams-in-order), so the scan stops at the first
 * missing input of every stream.  Appends the count, then (index - from,
 * arrival - ref) pairs, to w[*len..] (cap words, *pending against
 * pending_cap, at most scan_cap items read); every index read counts as
 * read (touched).  Returns 0, or -1 when they do not fit. */
PTSIM_HD int32_t ptsim_engine_scan_pending(PtsimEngineSim *sim, int32_t s, int32_t from,
                                           const int32_t *done_below, PtsimTime ref, int64_t *w,
                                           int32_t *len, int32_t cap, int32_t *pending,
                                           int32_t pending_cap, int32_t scan_cap);

/* ---- engine_period.c ---- */

/* Scratch bytes of the shortcut's snapshots for p stages and v chunks. */
PTSIM_HD int64_t ptsim_engine_period_bytes(int32_t p, int32_t v);

/* Sets sim->period up in `scratch` (ptsim_engine_period_bytes of it). */
PTSIM_HD void ptsim_engine_period_init(PtsimEngineSim *sim, void *scratch);

/* Called after the ITEM_DONE of item `index` of stage 0 at `now`: takes a
 * snapshot at the start of each steady period and, once two in a row are
 * the same state moved by one period, advances the run by as many whole
 * periods as the steady stretch still holds.  Returns 0 (jumped or not). */
PTSIM_HD int32_t ptsim_engine_period_check(PtsimEngineSim *sim, int32_t index, PtsimTime now);

/* ---- engine_recur.c ---- */

/* Scratch bytes of the recurrence's cut records for p stages, v chunks. */
PTSIM_HD int64_t ptsim_engine_recur_bytes(int32_t p, int32_t v);

/* Computes every item's times by the recurrence, with its periodic
 * shortcut, into sim's stages (no events: sim->simulated counts the items
 * computed).  `scratch`: ptsim_engine_recur_bytes.  Returns 0 or
 * PTSIM_ENGINE_ERR_STALL. */
PTSIM_HD int32_t ptsim_engine_recur(PtsimEngineSim *sim, void *scratch);

/* ---- engine_replay.c ---- */

/* Computes every item's times by replaying the recorded order of sim's
 * shape, found in or recorded into `cache` (ptsim_engine_cache_init), into
 * sim's stages, as ptsim_engine_recur would.  Returns 0, or 1 when the
 * shape is not replayed (too many items, communication hidden by
 * overlapped pairs, no room, no cache): then the caller runs the
 * recurrence. */
PTSIM_HD int32_t ptsim_engine_replay(PtsimEngineSim *sim, void *cache);

/* After the recurrence ran a shape the cache has just met: how many items
 * it computed, which decides whether the next layouts replay (a shape the
 * shortcut skips most of is cheaper without). */
PTSIM_HD void ptsim_engine_replay_learn(const PtsimEngineSim *sim, void *cache);

#endif /* PTSIM_ENGINE_INT_H */
