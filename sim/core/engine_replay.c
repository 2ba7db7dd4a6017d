/* engine_replay.c — a step's item times by replaying a recorded order; see
 * engine.h (ptsim_engine_run_replayed) and engine_int.h for the state.
 *
 * The recurrence (engine_recur.c) asks the schedule, for every item it
 * computes, what the item is (ptsim_schedule_item_at), whose output it
 * waits for (ptsim_schedule_input, ptsim_schedule_index_of) and where that
 * output lands; and it keeps a worklist of stages.  None of that depends on
 * the durations: it is the same for every layout of one schedule shape
 * (kind, p, m, v, group and the placement), which many layouts of a sweep
 * share (tp, cp, hardware, sequence, recompute, mbs for one m).  So the
 * first layout of a shape records every item of every stage once, in an
 * order where each item comes after its producer and after the items
 * before it on its stage, as a flat table of (stage, duration slot,
 * producer's position, latest-backward slot); every layout of that shape
 * then computes its times as one straight loop over the table:
 *   ready = producer's end + the transfer (0 without a producer),
 *   start = max(ready, the stage's free time), end = start + duration,
 * with the pp-wait rule and the latest backward starts as the recurrence
 * has them.  The times are the recurrence's, integer for integer: an item's
 * start depends only on its producer's end and its stage's previous item
 * (engine_int.h), which both precede it in the table; and each stage's
 * accumulators add the same integers.  The replay computes every item (no
 * periodic shortcut), so it is taken only for shapes of at most
 * PTSIM_ENGINE_REPLAY_MAX_ITEMS items in all whose first layout's
 * recurrence computed at least 1 / REPLAY_GAIN of them (the shortcut skips
 * most of a long 1F1B pipeline); DualPipeV's overlapped pairs that hide
 * communication (an accumulator in double that the shortcut extrapolates)
 * and a negative transfer time take the recurrence too.
 *
 * The cache is the caller's buffer (the core allocates nothing): a header
 * of PTSIM_ENGINE_CACHE_SLOTS shapes, direct-mapped by a hash of the shape,
 * the replay's end times, then an arena the tables are appended to; when it
 * is full, every shape is forgotten and the arena starts again.  One cache
 * per thread: it is written on every miss.
 *
 * Core module: pure C, PTSIM_HD, no allocation, no I/O. */
#include "engine_int.h"
#include "scratch.h"

#define CACHE_MAGIC 0x72706c79 /* "rply" */
/* The replay is taken for a shape once its first layout's recurrence
 * computed at least 1 / REPLAY_GAIN of the shape's items.  Measured
 * (cachegrind, a 10,679-layout subset of the default sweep): gains 12 and
 * 6 with the 65,536-item cap gave 12.66 G and 12.05 G instructions, 12
 * with a 16,384 cap 12.43 G, 13.14 G without the replay: with the
 * recording and each shape's first recurrence counted, an entry costs more
 * than a twelfth of a recurrence item. */
#define REPLAY_GAIN 6

/* One item of the recorded order. */
typedef struct {
  int32_t slot; /* its duration's index in sim->durations */
  int32_t from; /* its producer's position in the table; none: the sentinel (total) */
} ReplayOp;

/* A stretch of the table on one stage. */
typedef struct {
  int32_t stage, count;
} ReplayRun;

/* The last backward of a (stage, chunk): its position, its latest-start slot. */
typedef struct {
  int32_t at, latest;
} ReplayLast;

/* A shape the cache knows. */
typedef struct {
  int32_t schedule, p, m, v, group; /* the key, with the placement words at `at` */
  int32_t known;                    /* 0: empty */
  int32_t computed;                 /* items its first recurrence computed; -1: not yet */
  int32_t count;                    /* ops of its table; 0: none recorded */
  int32_t runs, lasts;
  int64_t at;    /* arena offset of its placement words */
  int64_t table; /* arena offset of its table: ops, lasts, runs */
} CacheSlot;

typedef struct {
  int32_t magic;
  int32_t gain;  /* REPLAY_GAIN; 0: replay every shape that fits (tests) */
  int64_t bytes; /* the whole buffer's */
  int64_t ends;  /* offset of the end times (PTSIM_ENGINE_REPLAY_MAX_ITEMS + 1) */
  int64_t arena; /* offset of the arena */
  int64_t used;  /* arena bytes used */
  CacheSlot slots[PTSIM_ENGINE_CACHE_SLOTS];
} Cache;

static PTSIM_HD int64_t cache_ends_bytes(void) {
  return ptsim_scratch_align(((int64_t)PTSIM_ENGINE_REPLAY_MAX_ITEMS + 1) *
                                 (int64_t)sizeof(PtsimTime),
                             8);
}

PTSIM_HD int32_t ptsim_engine_cache_init(void *buffer, int64_t bytes) {
  Cache *c = (Cache *)buffer;
  int32_t k;
  int64_t head = ptsim_scratch_align((int64_t)sizeof(Cache), 8);
  if (!buffer || bytes < PTSIM_ENGINE_CACHE_MIN_BYTES || bytes < head + cache_ends_bytes() + 4096)
    return PTSIM_ENGINE_ERR_SCRATCH;
  c->magic = CACHE_MAGIC;
  c->gain = REPLAY_GAIN;
  c->bytes = bytes;
  c->ends = head;
  c->arena = head + cache_ends_bytes();
  c->used = 0;
  for (k = 0; k < PTSIM_ENGINE_CACHE_SLOTS; k++) c->slots[k].known = 0;
  return 0;
}

/* The placement words a shape is known by: prev then next, p v each. */
static PTSIM_HD int64_t placement_bytes(int32_t p, int32_t v) {
  return ptsim_scratch_align(2 * (int64_t)p * v * (int64_t)sizeof(uint16_t), 8);
}

static PTSIM_HD int64_t table_bytes(int32_t p, int32_t v, int32_t total, int32_t runs) {
  return ptsim_scratch_align((int64_t)total * (int64_t)sizeof(ReplayOp), 8) +
         ptsim_scratch_align((int64_t)p * v * (int64_t)sizeof(ReplayLast), 8) +
         ptsim_scratch_align((int64_t)runs * (int64_t)sizeof(ReplayRun), 8);
}

static PTSIM_HD int32_t slot_matches(const Cache *c, const CacheSlot *k, const PtsimEngineSim *sim,
                                     int32_t schedule, int32_t group) {
  const uint16_t *words;
  int32_t i, n = sim->p * sim->v;
  if (!k->known || k->schedule != schedule || k->p != sim->p || k->m != sim->m || k->v != sim->v ||
      k->group != group)
    return 0;
  words = (const uint16_t *)((const char *)c + c->arena + k->at);
  for (i = 0; i < n; i++)
    if (words[i] != sim->vstages->prev[i] || words[n + i] != sim->vstages->next[i]) return 0;
  return 1;
}

/* The slot of sim's shape, or the one it would take. */
static PTSIM_HD CacheSlot *cache_slot(Cache *c, const PtsimEngineSim *sim) {
  uint64_t h = (uint64_t)sim->job->layout.schedule;
  h = h * 1000003u + (uint64_t)sim->p;
  h = h * 1000003u + (uint64_t)sim->m;
  h = h * 1000003u + (uint64_t)sim->v;
  h = h * 1000003u + (uint64_t)(uint32_t)sim->plan->microbatch_group;
  h ^= h >> 33; /* a 64-bit finaliser: every key bit moves the slot */
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return &c->slots[h % PTSIM_ENGINE_CACHE_SLOTS];
}

/* Arena bytes from c->used, or every shape forgotten first when they do
 * not fit; -1 when they never would. */
static PTSIM_HD int64_t cache_take(Cache *c, int64_t need) {
  int32_t i;
  int64_t at;
  if (need > c->bytes - c->arena) return -1;
  if (c->used + need > c->bytes - c->arena) {
    for (i = 0; i < PTSIM_ENGINE_CACHE_SLOTS; i++) c->slots[i].known = 0;
    c->used = 0;
  }
  at = c->used;
  c->used += need;
  return at;
}

/* Records every item of every stage (p * items) into ops, each after its
 * producer and its stage's earlier items, as runs of one stage; `pos`
 * (p * items) is where each (stage, index) went.  Stage by stage, each as
 * far as its inputs allow, until all are done; then the last backward of
 * each (stage, chunk).  Returns the runs (at most `runs_cap`), or -1 when
 * the orders stall or the runs do not fit. */
static PTSIM_HD int32_t record(const PtsimEngineSim *sim, ReplayOp *ops, ReplayLast *lasts,
                               int32_t *n_lasts, ReplayRun *runs, int32_t runs_cap, int32_t *pos) {
  int32_t next[PTSIM_MAX_STAGES];
  int32_t s, c, p = sim->p, v = sim->v, items = sim->items, count = 0, total = p * items;
  int32_t n_runs = 0;
  for (s = 0; s < p; s++) next[s] = 0;
  while (count < total) {
    int32_t progressed = 0;
    for (s = 0; s < p; s++) {
      const PtsimScheduleShape *shape = &sim->stages[s].shape;
      int32_t first = count;
      while (next[s] < items) {
        PtsimScheduleItem it, src;
        int32_t from_stage = 0, input, from = total;
        ptsim_schedule_item_at(shape, next[s], &it);
        input = ptsim_schedule_input(sim->vstages, s, &it, &from_stage, &src);
        if (input == PTSIM_SCHEDULE_INPUT_FORWARD || input == PTSIM_SCHEDULE_INPUT_BACKWARD) {
          int32_t j = ptsim_schedule_index_of(&sim->stages[from_stage].shape, src.kind,
                                              src.microbatch, src.chunk);
          if (j < 0) return -1;
          if (j >= next[from_stage]) break; /* its producer has not run yet */
          from = pos[from_stage * items + j];
        }
        ops[count].slot = (s * v + it.chunk) * PTSIM_ENGINE_DURATION_SLOTS + it.kind;
        ops[count].from = from;
        pos[s * items + next[s]] = count++;
        next[s] += 1;
      }
      if (count > first) {
        if (n_runs >= runs_cap) return -1;
        runs[n_runs].stage = s;
        runs[n_runs].count = count - first;
        n_runs++;
        progressed = 1;
      }
    }
    if (!progressed) return -1;
  }
  *n_lasts = 0;
  for (s = 0; s < p; s++) /* the last B of each chunk: its start is the latest */
    for (c = 0; c < v; c++) {
      int32_t i;
      for (i = items - 1; i >= 0; i--) {
        PtsimScheduleItem it;
        ptsim_schedule_item_at(&sim->stages[s].shape, i, &it);
        if (it.chunk == c && (it.kind == PTSIM_SCHEDULE_ITEM_BACKWARD ||
                              it.kind == PTSIM_SCHEDULE_ITEM_BACKWARD_INPUT)) {
          lasts[*n_lasts].at = pos[s * items + i];
          lasts[*n_lasts].latest = s * v + c;
          *n_lasts += 1;
          break;
        }
      }
    }
  return n_runs;
}

/* Records sim's table into slot k (known, not recorded); 0 or -1. */
static PTSIM_HD int32_t cache_record(Cache *c, CacheSlot *k, const PtsimEngineSim *sim) {
  int32_t total = sim->p * sim->items, runs, lasts = 0;
  int64_t at, room = table_bytes(sim->p, sim->v, total, total);
  char *base;
  at = cache_take(c, room);
  if (at < 0) return -1;
  if (!k->known) return -1; /* forgotten to make room */
  base = (char *)c + c->arena + at;
  /* the positions go where the end times will: free until the replay */
  runs = record(sim, (ReplayOp *)base,
                (ReplayLast *)(base + table_bytes(sim->p, sim->v, total, 0) -
                               ptsim_scratch_align(
                                   (int64_t)sim->p * sim->v * (int64_t)sizeof(ReplayLast), 8)),
                &lasts, (ReplayRun *)(base + table_bytes(sim->p, sim->v, total, 0)), total,
                (int32_t *)((char *)c + c->ends));
  if (runs < 0) {
    c->used = at;     /* give it back */
    k->computed = -2; /* never replayed */
    return -1;
  }
  c->used = at + table_bytes(sim->p, sim->v, total, runs);
  k->count = total;
  k->runs = runs;
  k->lasts = lasts;
  k->table = at;
  return 0;
}

/* Computes the times from the table: per run, its stage's free time, busy
 * and pp-wait time in registers; per entry ready = producer's end + the
 * transfer (the sentinel's end is -pp: ready 0), start = max(ready, free),
 * end = start + duration.  The event loop's pp-wait rule (engine.c
 * try_start: when the input arrives after the stage is free, the part of
 * the gap the transfer covers, max(sent, free) to ready) is min(gap, pp). */
static PTSIM_HD void replay(PtsimEngineSim *sim, const Cache *c, const CacheSlot *k) {
  const char *base = (const char *)c + c->arena + k->table;
  int32_t total = k->count, p = sim->p, v = sim->v;
  const ReplayOp *ops = (const ReplayOp *)base;
  const ReplayLast *lasts =
      (const ReplayLast *)(base + table_bytes(p, v, total, 0) -
                           ptsim_scratch_align((int64_t)p * v * (int64_t)sizeof(ReplayLast), 8));
  const ReplayRun *runs = (const ReplayRun *)(base + table_bytes(p, v, total, 0));
  const PtsimTime *d = sim->durations;
  PtsimTime *ends = (PtsimTime *)((char *)c + c->ends), pp = sim->pp_ns;
  PtsimTime *latest = sim->stages[0].last_backward_start; /* p * v, stage-major (engine.c carve) */
  int32_t r, i = 0;
  ends[total] = -pp; /* the sentinel: no producer */
  for (r = 0; r < k->runs; r++) {
    PtsimEngineStage *st = &sim->stages[runs[r].stage];
    PtsimTime free = st->free_at, busy = st->busy_ns, wait = st->pp_wait_ns;
    int32_t end = i + runs[r].count;
    for (; i < end; i++) {
      PtsimTime dur = d[ops[i].slot], ready = ends[ops[i].from] + pp, gap = ready - free;
      if (gap > 0) {
        wait += gap < pp ? gap : pp;
        free = ready;
      }
      busy += dur;
      free += dur;
      ends[i] = free;
    }
    st->free_at = free;
    st->busy_ns = busy;
    st->pp_wait_ns = wait;
  }
  for (r = 0; r < k->lasts; r++)
    latest[lasts[r].latest] = ends[lasts[r].at] - d[ops[lasts[r].at].slot];
}

PTSIM_HD int32_t ptsim_engine_replay(PtsimEngineSim *sim, void *cache) {
  Cache *c = (Cache *)cache;
  CacheSlot *k;
  int32_t s, i, total = sim->p * sim->items;
  /* a negative transfer: the pp-wait rule's min(gap, pp) would not hold */
  if (!c || c->magic != CACHE_MAGIC || total > PTSIM_ENGINE_REPLAY_MAX_ITEMS || sim->pp_ns < 0)
    return 1;
  for (s = 0; s < sim->p; s++) /* overlapped pairs that hide communication */
    for (i = 0; i < sim->v; i++)
      if (sim->durations[((int64_t)s * sim->v + i) * PTSIM_ENGINE_DURATION_SLOTS +
                         PTSIM_ENGINE_HIDDEN_SLOT] > 0)
        return 1;
  k = cache_slot(c, sim);
  if (!slot_matches(c, k, sim, (int32_t)sim->job->layout.schedule, sim->plan->microbatch_group)) {
    int32_t n = sim->p * sim->v;
    int64_t at = cache_take(c, placement_bytes(sim->p, sim->v));
    uint16_t *words;
    if (at < 0) return 1;
    words = (uint16_t *)((char *)c + c->arena + at);
    for (i = 0; i < n; i++) {
      words[i] = sim->vstages->prev[i];
      words[n + i] = sim->vstages->next[i];
    }
    k->schedule = (int32_t)sim->job->layout.schedule;
    k->p = sim->p;
    k->m = sim->m;
    k->v = sim->v;
    k->group = sim->plan->microbatch_group;
    k->at = at;
    k->known = 1;
    k->computed = -1; /* the recurrence runs, and tells (ptsim_engine_replay_learn) */
    k->count = 0;
    if (c->gain > 0) return 1;
  }
  if (k->count == 0) {
    if (c->gain > 0 && (k->computed < 0 || (int64_t)total > (int64_t)c->gain * k->computed))
      return 1;
    if (k->computed == -2) return 1; /* its orders stall */
    if (cache_record(c, k, sim) != 0) return 1;
  }
  replay(sim, c, k);
  for (s = 0; s < sim->p; s++) sim->stages[s].next = sim->items;
  sim->simulated = total;
  return 0;
}

PTSIM_HD void ptsim_engine_cache_replay_always(void *cache) {
  Cache *c = (Cache *)cache;
  if (c && c->magic == CACHE_MAGIC) c->gain = 0;
}

PTSIM_HD void ptsim_engine_replay_learn(const PtsimEngineSim *sim, void *cache) {
  Cache *c = (Cache *)cache;
  CacheSlot *k;
  if (!c || c->magic != CACHE_MAGIC) return;
  k = cache_slot(c, sim);
  if (k->computed == -1 &&
      slot_matches(c, k, sim, (int32_t)sim->job->layout.schedule, sim->plan->microbatch_group))
    k->computed = sim->simulated > 0x7fffffff ? 0x7fffffff : (int32_t)sim->simulated;
}
