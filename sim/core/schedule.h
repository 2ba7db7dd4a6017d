/* schedule.h — pipeline schedules as the ORDER of work items each stage runs,
 * and a small reference simulator of those orders with uniform costs.
 *
 * What it is: for a pipeline of p stages, m microbatches and v model chunks
 * per stage (Megatron's virtual pipeline size; 1 unless interleaved), the
 * sequence of forward / backward items one stage executes, in order.  The
 * engine (engine.c) turns each item into compute and communication
 * operations with real costs; this module knows nothing about costs except
 * in ptsim_schedule_simulate_uniform(), the engine's reference check.
 *
 * What it is not: a timeline.  Dependencies between stages are implied by
 * the pipeline (below); an order only says what a stage does next.
 *
 * Chunks and virtual stages: the model's p*v chunks, in model order, are its
 * virtual stages 0 .. p*v-1; a microbatch's forward runs through them in
 * that order and its backward back.  Which stage runs each, and as which of
 * its chunks, is the placement: one table (PtsimVstages, below) that the
 * plan builds once and every module reads.  Every schedule here but ZBV and
 * DualPipeV places the chunks looped, as Megatron-LM interleaves them:
 * stage s holds chunk c as virtual stage c*p + s, so a microbatch's forward
 * runs through stages 0..p-1 for chunk 0, then again 0..p-1 for chunk 1,
 * and so on.  ZBV and DualPipeV place two chunks as a V: chunk 0 of stage s
 * is virtual stage s and chunk 1 is 2p-1-s, so the forward runs down
 * 0..p-1 and back up p-1..0, and stage 0 holds the embedding and the loss.
 *
 * Dependencies (the ones the simulator honours, zero communication time),
 * with (s', c') the stage and chunk of the next virtual stage and (s", c")
 * those of the previous one:
 *   F(s, mb, c)  after F(s", mb, c")  (none for virtual stage 0)
 *   B(s, mb, c)  after B(s', mb, c'); for the last virtual stage: after
 *                F(s, mb, c)  (the loss)
 *   W(s, mb, c)  after B(s, mb, c)
 * "B" is BACKWARD (input + weight gradients together) in GPipe, 1F1B and
 * interleaved, and BACKWARD_INPUT in ZB-H1, whose BACKWARD_WEIGHT is "W".
 *
 * The orders (stage s, 0-based; microbatches 0-based):
 *
 *   GPIPE        all forwards 0..m-1, then all backwards in REVERSE order
 *                m-1..0, as in the GPipe paper's figure (Huang et al. 2019):
 *                the last stage starts backward with the microbatch it just
 *                finished.  In-flight forwards: m on every stage.
 *   1F1B         Megatron-LM's non-interleaved schedule (PipeDream-Flush):
 *                w = min(p-s-1, m) warm-up forwards F0..F(w-1); then m-w
 *                steady pairs F(w+k), B(k); then cool-down B(m-w)..B(m-1).
 *                In-flight forwards: min(p-s, m).
 *   INTERLEAVED  Megatron-LM's forward_backward_pipelining_with_interleaving
 *                with a microbatch group size g (--microbatch-group-size-per-
 *                virtual-pipeline-stage; p by default): each virtual stage
 *                runs g microbatches in a row.  Megatron's get_schedule_table
 *                cuts the microbatches into groups of g, the last group
 *                taking the rest: G = (m-1)/g whole groups before it and r =
 *                m - G*g (1..g) in it.  Virtual microbatch k in [0, m*v)
 *                maps, for k < G*g*v, to
 *                  chunk (k / g) % v, microbatch (k / (g*v))*g + k % g,
 *                and in the last group (k' = k - G*g*v) to
 *                  chunk k' / r, microbatch G*g + k' % r
 *                for forwards; backward k has the same microbatch and chunk
 *                v-1-(its forward chunk).  Warm-up w = min((p-s-1)*2 +
 *                (v-1)*g, m*v) forwards F(0..w-1); then m*v-w steady pairs
 *                F(w+k), B(k); then cool-down B(m*v-w .. m*v-1).  In-flight
 *                (in chunk-sized microbatches): w + 1, or m*v when every
 *                forward is warm-up.  Megatron accepts p <= g <= m with a
 *                last group of g, or of p at least (m % g == 0 or m % g >=
 *                p: a shorter one would wait on itself); with g = p that is
 *                m % p == 0, the old rule.
 *   ZB_H1        Qi et al. 2023, "Zero Bubble Pipeline Parallelism", the
 *                handcrafted ZB-H1: backward split into B (activation
 *                gradient) and W (weight gradient).  ptsim's exact order:
 *                w = min(p-s-1, m) warm-up forwards (as 1F1B); then for
 *                k = 0..m-w-1: F(w+k), B(k), and W(k-s) when k >= s; then
 *                for k = m-w..m-1: B(k), and W(k-s) when k >= s; then the
 *                remaining W's in order.  Stage s thus defers its W's by s
 *                microbatches: the later a stage, the more W's it keeps to
 *                fill the cool-down while the B chain travels back.  Forward
 *                minus B in flight: min(p-s, m) (as 1F1B); forward minus W:
 *                min(p, m) on every stage, the 1F1B peak (stage 0), so peak
 *                activation memory equals 1F1B's.  With uniform costs,
 *                m >= p and t_w <= min(t_f, t_b) the bubble is
 *                (p-1)(t_f + t_b - t_w), the paper's figure (1/3 of 1F1B's
 *                (p-1)(t_f + t_b + t_w) when the three are equal).
 *   ZBV, DUALPIPEV  the V-shaped schedules: PyTorch's ScheduleZBVZeroBubble
 *                (the ZB-V of Qi et al. 2024, sec. 6) and ScheduleDualPipeV
 *                (DeepSeek-V3's DualPipe folded into a V); their orders,
 *                phase by phase, are in schedule_vshape.c.  Every stage runs
 *                6m items: F, B and W per (microbatch, chunk); DualPipeV's
 *                full backwards are a B and its W back to back.  ZBV needs
 *                m >= 2p-1 and DualPipeV m >= 2p (PyTorch drops ZBV's
 *                missing microbatches from a longer order; ptsim refuses).
 *
 * Caps: p <= PTSIM_MAX_STAGES (128), m*v <= PTSIM_SCHEDULE_MAX_VIRTUAL_MB
 * (65536), so a stage has at most PTSIM_SCHEDULE_MAX_ITEMS items; p*v <=
 * PTSIM_MAX_VSTAGES (514), the placement table's size.
 *
 * Core module: pure C, PTSIM_HD, no allocation, no I/O; the caller provides
 * every buffer.  Building an order is O(items); simulating is O(p*m*v). */
#ifndef PTSIM_SCHEDULE_H
#define PTSIM_SCHEDULE_H

#include <stdint.h>
#include "hd.h"
#include "job.h"
#include "event_queue.h"

#define PTSIM_SCHEDULE_MAX_VIRTUAL_MB 65536
#define PTSIM_SCHEDULE_MAX_ITEMS (3 * PTSIM_SCHEDULE_MAX_VIRTUAL_MB)

/* Error codes (all negative). */
#define PTSIM_SCHEDULE_ERR_ARGS (-1)    /* p, m or v < 1, stage out of range, NULL buffer */
#define PTSIM_SCHEDULE_ERR_KIND (-2)    /* unknown PtsimSchedule */
#define PTSIM_SCHEDULE_ERR_VIRTUAL (-3) /* v != 1 for a non-interleaved schedule */
#define PTSIM_SCHEDULE_ERR_DIVISIBLE \
  (-4) /* interleaved: group g outside [p, m], or m % g in (0, p) */
#define PTSIM_SCHEDULE_ERR_TOO_LARGE (-5) /* p > 128 or m*v > 65536 */
#define PTSIM_SCHEDULE_ERR_CAPACITY (-6)  /* output or scratch buffer too small */
#define PTSIM_SCHEDULE_ERR_DEADLOCK (-7)  /* simulate: the orders cannot all finish */
#define PTSIM_SCHEDULE_ERR_VSTAGES (-8)   /* p*v > PTSIM_MAX_VSTAGES (or v > 512) */
#define PTSIM_SCHEDULE_ERR_V_SHAPE (-9)   /* ZBV/DualPipeV: v != 2, or m < 2p-1 / 2p */

/* What one item computes. */
typedef enum {
  PTSIM_SCHEDULE_ITEM_FORWARD = 0,        /* F */
  PTSIM_SCHEDULE_ITEM_BACKWARD = 1,       /* B + W together (non-zero-bubble schedules) */
  PTSIM_SCHEDULE_ITEM_BACKWARD_INPUT = 2, /* B: activation gradient (ZB) */
  PTSIM_SCHEDULE_ITEM_BACKWARD_WEIGHT = 3 /* W: weight gradient (ZB) */
} PtsimScheduleItemKind;

/* One unit of work on one stage. */
typedef struct {
  int32_t kind;       /* a PtsimScheduleItemKind */
  int32_t microbatch; /* 0 .. m-1 */
  int32_t chunk;      /* model chunk on this stage, 0 .. v-1 (0 unless interleaved) */
} PtsimScheduleItem;

/* ---- virtual stages: the placement ----
 *
 * Which stage runs each virtual stage, as one table: per chunk c of stage
 * s (at s * v + c) its virtual stage and where the virtual stages just
 * before and after it run, the neighbours every dependency above names.
 * A stage numbers its chunks in model order, so virtual stage 0 is chunk 0
 * of first_stage and the last one chunk v-1 of last_stage.  Looped (every
 * schedule here): virtual stage c*p + s is chunk c of stage s.  A V-shaped
 * placement, as DualPipeV and ZBV run (chunk 1 of stage s is virtual stage
 * 2p-1-s: both ends on stage 0, the last stage runs two in a row), is
 * another table; the engine, the workload, the allocator replay and the
 * plan read whichever the plan holds.
 *
 * The bound: every virtual stage holds one layer at least but for the
 * first and the last, which may hold only the embedding and the loss
 * (--account-for-embedding/loss-in-pipeline-split), so a model of at most
 * PTSIM_MAX_LAYERS layers (every mixture-of-experts model) never has more;
 * a deeper dense model with more is refused by ptsim_schedule_check(). */
#define PTSIM_MAX_VSTAGES (PTSIM_MAX_LAYERS + 2)

/* A stage and one of its chunks in a word: stage << PTSIM_VSTAGE_CHUNK_BITS
 * | chunk (v <= 512; stage < 128), or PTSIM_VSTAGE_NONE, which no pair of
 * a table of at most PTSIM_MAX_VSTAGES virtual stages can equal. */
#define PTSIM_VSTAGE_CHUNK_BITS 9
#define PTSIM_VSTAGE_NONE 0xffffu

typedef struct {
  int32_t p, v;                    /* stages, chunks per stage */
  int32_t count;                   /* virtual stages: p * v; 0 when not filled */
  int32_t first_stage, last_stage; /* the stages of virtual stage 0 (the embedding's)
                                      and of the last (the output layer's and the loss's) */
  /* Per chunk c of stage s, at s * v + c: */
  uint16_t vstage[PTSIM_MAX_VSTAGES]; /* its virtual stage */
  uint16_t prev[PTSIM_MAX_VSTAGES];   /* the previous virtual stage's (stage, chunk)
                                         word, NONE for virtual stage 0 */
  uint16_t next[PTSIM_MAX_VSTAGES];   /* the next one's, NONE for the last */
} PtsimVstages;

/* Fills *out with the placement `kind` runs for p stages of v chunks and
 * returns 0; or PTSIM_SCHEDULE_ERR_ARGS (p or v < 1), or
 * PTSIM_SCHEDULE_ERR_VSTAGES (p > PTSIM_MAX_STAGES, p*v > PTSIM_MAX_VSTAGES
 * or v > 512), with count 0 and only p, v and the ends' stages set. */
PTSIM_HD int32_t ptsim_schedule_vstages(PtsimSchedule kind, int32_t p, int32_t v,
                                        PtsimVstages *out);

/* The virtual stage of chunk `chunk` of `stage` (a filled table). */
static PTSIM_HD inline int32_t ptsim_schedule_vstage_of(const PtsimVstages *t, int32_t stage,
                                                        int32_t chunk) {
  return (int32_t)t->vstage[stage * t->v + chunk];
}

/* The stage and the chunk of a (stage, chunk) word. */
static PTSIM_HD inline int32_t ptsim_schedule_word_stage(uint32_t word) {
  return (int32_t)(word >> PTSIM_VSTAGE_CHUNK_BITS);
}
static PTSIM_HD inline int32_t ptsim_schedule_word_chunk(uint32_t word) {
  return (int32_t)(word & ((1u << PTSIM_VSTAGE_CHUNK_BITS) - 1u));
}

/* Every function below takes the schedule's shape as (kind, p, m, v,
 * group): `group` is the interleaved schedule's microbatch group size g
 * (<= 0: Megatron's default, p); the other schedules ignore it. */

/* 0 when (kind, p, m, v, group) is a schedule ptsim can build, else an
 * error code. */
PTSIM_HD int32_t ptsim_schedule_check(PtsimSchedule kind, int32_t p, int32_t m, int32_t v,
                                      int32_t group);

/* Items per stage (the same on every stage): 2*m*v, or 3*m for ZB_H1; or an
 * error code from ptsim_schedule_check(). */
PTSIM_HD int32_t ptsim_schedule_num_items(PtsimSchedule kind, int32_t p, int32_t m, int32_t v,
                                          int32_t group);

/* Writes stage `stage`'s order to out[0..n) and returns n, or an error code
 * (PTSIM_SCHEDULE_ERR_CAPACITY when capacity < n; out is then untouched). */
PTSIM_HD int32_t ptsim_schedule_build(PtsimSchedule kind, int32_t p, int32_t m, int32_t v,
                                      int32_t group, int32_t stage, PtsimScheduleItem *out,
                                      int32_t capacity);

/* ---- one stage's order in closed form ----
 *
 * The engine reads an order item by item and asks which item consumes or
 * produces a given (microbatch, chunk); building whole orders costs O(m)
 * per stage, so these answer in O(1) from the shape.  item_at(i) is exactly
 * ptsim_schedule_build()'s out[i], and index_of() is its inverse. */
typedef struct {
  int32_t kind;    /* a PtsimSchedule */
  int32_t p, m, v; /* stages, microbatches, chunks per stage */
  int32_t stage;
  int32_t items;  /* ptsim_schedule_num_items() */
  int32_t warmup; /* warm-up forwards: those before the stage's first backward */
  /* Interleaved: the group size g, and the last group (schedule.h): its
   * first virtual microbatch G*g*v, first microbatch G*g, size r. */
  int32_t group, last_group_at, last_group_mb, last_group_size;
  /* ZB-H1 only: after the warm-up, groups of 1 to 3 items (schedule.c) in
   * three runs of equal-sized groups: run r starts at item run_index[r]
   * with group run_group[r], groups of run_size[r] items; the trailing W's
   * start at item `tail`. */
  int32_t run_index[3], run_group[3], run_size[3], tail;
  /* Interleaved: g, v and the last group's size as reciprocals
   * (ptsim_schedule_recip), so item_at and index_of, which the engine
   * calls for every item, multiply instead of divide. */
  uint64_t recip_group, recip_v, recip_last_group;
} PtsimScheduleShape;

/* Division by an invariant d >= 1 as a multiply: with r =
 * ptsim_schedule_recip(d) = floor(2^40 / d) + 1, (n * r) >> 40 is n / d
 * exactly for 0 <= n and n * d < 2^40 (the error n * (r - 2^40/d) / 2^40
 * stays below 1/d; every index and divisor of an order is below 2^18). */
#define PTSIM_SCHEDULE_RECIP_BITS 40
static PTSIM_HD inline uint64_t ptsim_schedule_recip(int32_t d) {
  return (((uint64_t)1 << PTSIM_SCHEDULE_RECIP_BITS) / (uint64_t)d) + 1u;
}
static PTSIM_HD inline int32_t ptsim_schedule_div(int32_t n, uint64_t recip) {
  return (int32_t)(((uint64_t)n * recip) >> PTSIM_SCHEDULE_RECIP_BITS);
}

/* Fills *out for stage `stage`; returns 0 or the error code of
 * ptsim_schedule_build() (PTSIM_SCHEDULE_ERR_ARGS for a bad stage). */
PTSIM_HD int32_t ptsim_schedule_shape(PtsimSchedule kind, int32_t p, int32_t m, int32_t v,
                                      int32_t group, int32_t stage, PtsimScheduleShape *out);

/* Item `index` (0 <= index < items) of the order. */
PTSIM_HD void ptsim_schedule_item_at(const PtsimScheduleShape *sh, int32_t index,
                                     PtsimScheduleItem *out);

/* Position in the order of the item of kind `item_kind` (BACKWARD and
 * BACKWARD_INPUT both name the stage's backward, "B" of schedule.h) for
 * (microbatch, chunk); -1 when the order has no such item (a W outside
 * ZB-H1, or out-of-range arguments). */
PTSIM_HD int32_t ptsim_schedule_index_of(const PtsimScheduleShape *sh, int32_t item_kind,
                                         int32_t microbatch, int32_t chunk);

/* Position of the last F (item_kind FORWARD) or the last B (BACKWARD or
 * BACKWARD_INPUT) in the order. */
PTSIM_HD int32_t ptsim_schedule_last_index(const PtsimScheduleShape *sh, int32_t item_kind);

/* Whose output an item waits for (the dependencies above, W excepted: its
 * B runs earlier on the same stage, so order alone serves it). */
typedef enum {
  PTSIM_SCHEDULE_INPUT_NONE = 0,     /* F of virtual stage 0, or W */
  PTSIM_SCHEDULE_INPUT_FORWARD = 1,  /* the previous virtual stage's F */
  PTSIM_SCHEDULE_INPUT_BACKWARD = 2, /* the next virtual stage's B */
  PTSIM_SCHEDULE_INPUT_LOSS = 3      /* this stage's own F (last virtual stage) */
} PtsimScheduleInput;

/* Which input `it` on `stage` waits for under placement `t`; unless NONE,
 * *from_stage and *from name the producing item (its kind FORWARD or
 * BACKWARD).  Inline: the engine asks it for every item, one table read. */
static PTSIM_HD inline int32_t ptsim_schedule_input(const PtsimVstages *t, int32_t stage,
                                                    const PtsimScheduleItem *it,
                                                    int32_t *from_stage, PtsimScheduleItem *from) {
  int32_t at = stage * t->v + it->chunk;
  uint32_t word;
  from->microbatch = it->microbatch;
  if (it->kind == PTSIM_SCHEDULE_ITEM_FORWARD) {
    word = t->prev[at];
    if (word == PTSIM_VSTAGE_NONE) return PTSIM_SCHEDULE_INPUT_NONE;
    from->kind = PTSIM_SCHEDULE_ITEM_FORWARD;
    from->chunk = ptsim_schedule_word_chunk(word);
    *from_stage = ptsim_schedule_word_stage(word);
    return PTSIM_SCHEDULE_INPUT_FORWARD;
  }
  if (it->kind == PTSIM_SCHEDULE_ITEM_BACKWARD_WEIGHT) return PTSIM_SCHEDULE_INPUT_NONE;
  word = t->next[at];
  if (word == PTSIM_VSTAGE_NONE) {
    from->kind = PTSIM_SCHEDULE_ITEM_FORWARD;
    from->chunk = it->chunk;
    *from_stage = stage;
    return PTSIM_SCHEDULE_INPUT_LOSS;
  }
  from->kind = PTSIM_SCHEDULE_ITEM_BACKWARD;
  from->chunk = ptsim_schedule_word_chunk(word);
  *from_stage = ptsim_schedule_word_stage(word);
  return PTSIM_SCHEDULE_INPUT_BACKWARD;
}

/* A stretch of an order that repeats: for lo <= i and i + period < hi, item
 * i + period is item i with its microbatch moved by `shift` (same kind, same
 * chunk).  1F1B: the steady pairs (period 2, shift 1); interleaved: the
 * steady pairs, period 2gv, shift g (v = 1: 2 and 1), as long as both
 * items' forwards lie in whole groups of g (a shorter last group maps
 * its microbatches otherwise); ZB-H1: the steady
 * triples F, B, W (period 3, shift 1); GPipe: phase 0 the forwards (period
 * 1, shift 1), phase 1 the backwards (period 1, shift -1).  Other schedules
 * have phase 0 only.  Empty (lo >= hi) when there is no such stretch. */
typedef struct {
  int32_t lo, hi; /* item indices [lo, hi) */
  int32_t period; /* items */
  int32_t shift;  /* microbatches per period */
} PtsimScheduleSteady;

#define PTSIM_SCHEDULE_PHASES 2

/* Fills *out with phase `phase` (0 .. PTSIM_SCHEDULE_PHASES-1) of the order;
 * an absent phase is empty. */
PTSIM_HD void ptsim_schedule_steady(const PtsimScheduleShape *sh, int32_t phase,
                                    PtsimScheduleSteady *out);

/* Scans an order: *peak_until_backward = max over prefixes of forwards minus
 * BACKWARD/BACKWARD_INPUT items; *peak_until_weight = the same with
 * BACKWARD/BACKWARD_WEIGHT (memory freed only once W ran).  Either pointer may
 * be NULL. */
PTSIM_HD void ptsim_schedule_count_inflight(const PtsimScheduleItem *items, int32_t n,
                                            int32_t *peak_until_backward,
                                            int32_t *peak_until_weight);

/* Buffers the simulator needs, owned by the caller (transfer none). */
typedef struct {
  PtsimScheduleItem *orders; /* p * order_stride items: stage s's order at s*order_stride */
  int32_t order_stride;      /* >= ptsim_schedule_num_items() */
  PtsimTime *finish;         /* >= 3*p*m*v entries: finish times of F, B, W */
  int64_t finish_len;        /* entries in finish */
} PtsimScheduleScratch;

/* What the uniform simulation found. */
typedef struct {
  int32_t num_stages;                             /* p */
  PtsimTime step_time;                            /* last item's end, ns */
  PtsimTime busy_time;                            /* per stage (equal on all stages), ns */
  double bubble_fraction;                         /* 1 - busy_time / step_time */
  PtsimTime stage_end[PTSIM_MAX_STAGES];          /* when each stage's last item ends */
  int32_t peak_inflight[PTSIM_MAX_STAGES];        /* forwards minus backwards (B), max over time */
  int32_t peak_inflight_weight[PTSIM_MAX_STAGES]; /* forwards minus W (= above without ZB) */
} PtsimScheduleSimResult;

/* Runs every stage's order, one item at a time and strictly in order, each
 * item as soon as its stage is free and its dependency (above) finished.
 * Costs per chunk, ns: forward t_f, BACKWARD t_b + t_w, BACKWARD_INPUT t_b,
 * BACKWARD_WEIGHT t_w; communication is free.  Returns 0 and fills *out, or
 * an error code (PTSIM_SCHEDULE_ERR_CAPACITY when the scratch is too small,
 * PTSIM_SCHEDULE_ERR_ARGS for negative costs, PTSIM_SCHEDULE_ERR_DEADLOCK
 * should an order ever wait on itself). */
PTSIM_HD int32_t ptsim_schedule_simulate_uniform(PtsimSchedule kind, int32_t p, int32_t m,
                                                 int32_t v, int32_t group, PtsimTime t_f,
                                                 PtsimTime t_b, PtsimTime t_w,
                                                 const PtsimScheduleScratch *scratch,
                                                 PtsimScheduleSimResult *out);

/* The same simulation for orders the caller built (any per-stage sequence
 * over m microbatches and the v chunks of placement `t`, whose p and v it
 * runs): stage s runs orders[s*order_stride .. s*order_stride + counts[s]).
 * finish needs 3*p*m*v entries.  Returns 0, or PTSIM_SCHEDULE_ERR_ARGS (bad
 * sizes, an item out of range), PTSIM_SCHEDULE_ERR_VSTAGES (t not filled:
 * too many virtual stages), PTSIM_SCHEDULE_ERR_CAPACITY,
 * PTSIM_SCHEDULE_ERR_DEADLOCK (some stage waits forever; *out then holds the
 * partial times). */
PTSIM_HD int32_t ptsim_schedule_simulate_orders(const PtsimVstages *t, int32_t m,
                                                const PtsimScheduleItem *orders,
                                                int32_t order_stride, const int32_t *counts,
                                                PtsimTime t_f, PtsimTime t_b, PtsimTime t_w,
                                                PtsimTime *finish, int64_t finish_len,
                                                PtsimScheduleSimResult *out);

/* ---- the V-shaped orders (schedule_vshape.c) ----
 *
 * The schedule functions above call these for ZBV and DUALPIPEV; each
 * order is a short list of repeated patterns, so one stage's item `index`,
 * or where an item is, costs O(1) for ZBV and O(p) for DualPipeV (whose
 * cool-down drains a queue of W's one at a time), never O(m).  Neither has
 * a steady stretch for the shortcuts (ptsim_schedule_steady: empty). */

/* 1 when kind is ZBV or DUALPIPEV. */
static PTSIM_HD inline int32_t ptsim_schedule_is_vshape(int32_t kind) {
  return kind == PTSIM_SCHEDULE_ZBV || kind == PTSIM_SCHEDULE_DUALPIPEV;
}

/* 0, or PTSIM_SCHEDULE_ERR_V_SHAPE (v != 2, too few microbatches). */
PTSIM_HD int32_t ptsim_schedule_vshape_check(PtsimSchedule kind, int32_t p, int32_t m, int32_t v);
/* Writes stage `stage`'s order to out (6m items; the caller checked the
 * shape and the capacity) and returns its length. */
PTSIM_HD int32_t ptsim_schedule_vshape_build(PtsimSchedule kind, int32_t p, int32_t m,
                                             int32_t stage, PtsimScheduleItem *out);
PTSIM_HD void ptsim_schedule_vshape_item_at(const PtsimScheduleShape *sh, int32_t index,
                                            PtsimScheduleItem *out);
PTSIM_HD int32_t ptsim_schedule_vshape_index_of(const PtsimScheduleShape *sh, int32_t item_kind,
                                                int32_t microbatch, int32_t chunk);
PTSIM_HD int32_t ptsim_schedule_vshape_last_index(const PtsimScheduleShape *sh, int32_t item_kind);

/* The most a stage's order holds at once when a forward of chunk c holds
 * w0 or w1 (its layers, say) until its W: O(p), phase by phase.  With
 * w0 = w1 = 1 it is the in-flight peak of chunks (2p for ZBV, 2p + 1 for
 * DualPipeV); with unequal chunks it weighs each held one by its own. */
PTSIM_HD int64_t ptsim_schedule_vshape_peak(PtsimSchedule kind, int32_t p, int32_t m, int32_t stage,
                                            int64_t w0, int64_t w1);

/* 1 when item `index` is the backward (B) of an overlapped pair: DualPipeV
 * runs the forward of one chunk and the full backward of the other as one
 * action (PyTorch's OVERLAP_F_B), the pair's F being item index - 1 and the
 * backward's W item index + 1; 0 for every other item and schedule. */
PTSIM_HD int32_t ptsim_schedule_overlapped(const PtsimScheduleShape *sh, int32_t index);

/* A short English phrase for an error code ("ok" for 0). */
PTSIM_HD const char *ptsim_schedule_strerror(int32_t code);

#endif /* PTSIM_SCHEDULE_H */
