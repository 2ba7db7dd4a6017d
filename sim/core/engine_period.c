/* engine_period.c — the engine's exact periodic shortcut; see engine.h for
 * what it promises and engine_int.h for the state of a run.
 *
 * Why it is exact.  From one moment to another the event loop is a
 * deterministic function of
 *   (a) each stage's next index, busy flag, free time and latest backward
 *       starts,
 *   (b) the pending events, in (time, seq) order,
 *   (c) the inputs that have landed or are in flight but are not consumed,
 *   (d) the items it reads from the orders (and the constant durations).
 * At the end of each steady period of stage 0 a snapshot writes (a)-(c)
 * relative to itself: item indices minus stage 0's, times minus now.  When
 * snapshot n is word for word snapshot n-1, and every item index read since
 * snapshot n-1 (by the loop and by both snapshots) lies in its stage's
 * steady stretch (ptsim_schedule_steady: item i + period is item i moved by
 * `shift` microbatches), then period n+1 replays period n moved by one
 * period in the orders and by T = now_n - now_{n-1} in time — and so does
 * every later period while the indices it reads stay in the stretch.  K
 * periods later the state is snapshot n moved K times, and the accumulators
 * (busy and pp-wait time, events) have grown by K times their growth over
 * one period.  The jump writes exactly that state, then the loop goes on
 * event by event through the cool-down.
 *
 * (c) is finite: the inputs landed on a stage are a prefix of each of its
 * input streams (a producer ends its items in order, and each stream is
 * produced in the order the stage consumes it: /schedule/streams-in-order),
 * so a scan from `next` that stops at the first missing input of every
 * stream sees them all.  The loss is never pending (engine_int.h).  A state
 * larger than a snapshot holds — a stage falling ever further behind — is
 * not snapshotted, and such a run simulates every event.
 *
 * A run whose pattern needs several schedule periods to repeat (a max-plus
 * cyclicity above one) is compared over SNAPSHOTS - 1 periods at most.
 * Cost: a snapshot writes its stage part (p (3 + v) words) and compares it
 * with the last ones; only when that matches does it scan the pending
 * inputs and sort the events, so the transient costs little.  One jump per
 * steady phase (GPipe has two).  What the shortcut cannot skip is simulated:
 * the fill and the drain of the pipeline, and transients that take many
 * periods to settle (ZB-H1's stages often drift into step over ~15).
 *
 * Core module: pure C, PTSIM_HD, no allocation, no I/O. */
#include "engine_int.h"
#include "scratch.h"

#define SNAPSHOTS 4 /* the current one and the SNAPSHOTS - 1 before it */

typedef struct {
  int64_t *words; /* the state, relative (see above): the stages
                     first (p * (3 + v) words, cheap to write), then
                     the pending inputs and events (the full part) */
  int32_t len;    /* words used */
  int32_t valid;  /* the stages taken, and every snapshot since too */
  int32_t full;   /* the full part taken too */
  int32_t phase;  /* ptsim_schedule_steady phase */
  PtsimTime now;
  int64_t events;
  PtsimTime *busy_ns;    /* p: the accumulators, absolute */
  PtsimTime *pp_wait_ns; /* p */
  int32_t *read_lo;      /* p: item indices read in the period ending here, */
  int32_t *read_hi;      /*    this snapshot's and the previous one's included */
} Snapshot;

struct PtsimEnginePeriod {
  int32_t words_cap;   /* words a snapshot holds */
  int32_t pending_cap; /* pending inputs a snapshot holds, all stages */
  int32_t events_cap;  /* pending events a snapshot holds */
  int32_t scan_cap;    /* items one stage's scan may read */
  int32_t done_phases; /* bit per phase already jumped over */
  int32_t taken;       /* snapshots taken so far (the newest is taken-1) */
  PtsimEvent *sorted;  /* events_cap: pending events, sorted */
  Snapshot snaps[SNAPSHOTS];
};

static PTSIM_HD int32_t period_pending_cap(int32_t p, int32_t v) { return 4 * p * v + 64; }
static PTSIM_HD int32_t period_events_cap(int32_t p) { return 4 * p + 16; }
static PTSIM_HD int32_t period_words_cap(int32_t p, int32_t v) {
  return p * (4 + v) + 2 * period_pending_cap(p, v) + 1 + 4 * period_events_cap(p);
}

PTSIM_HD int64_t ptsim_engine_period_bytes(int32_t p, int32_t v) {
  int64_t snap = ptsim_scratch_align((int64_t)period_words_cap(p, v) * 8, 8) + 2 * (int64_t)p * 8 +
                 ptsim_scratch_align(2 * (int64_t)p * 4, 8);
  return ptsim_scratch_align((int64_t)sizeof(struct PtsimEnginePeriod), 8) +
         ptsim_scratch_align((int64_t)period_events_cap(p) * (int64_t)sizeof(PtsimEvent), 8) +
         SNAPSHOTS * snap;
}

PTSIM_HD void ptsim_engine_period_init(PtsimEngineSim *sim, void *scratch) {
  char *base = (char *)scratch;
  struct PtsimEnginePeriod *pd = (struct PtsimEnginePeriod *)base;
  int64_t off = ptsim_scratch_align((int64_t)sizeof(struct PtsimEnginePeriod), 8);
  int32_t k, p = sim->p;
  pd->words_cap = period_words_cap(p, sim->v);
  pd->pending_cap = period_pending_cap(p, sim->v);
  pd->events_cap = period_events_cap(p);
  pd->scan_cap = 4 * p * sim->v + 32;
  pd->done_phases = 0;
  pd->taken = 0;
  pd->sorted = (PtsimEvent *)(base + off);
  off += ptsim_scratch_align((int64_t)pd->events_cap * (int64_t)sizeof(PtsimEvent), 8);
  for (k = 0; k < SNAPSHOTS; k++) {
    Snapshot *sn = &pd->snaps[k];
    sn->words = (int64_t *)(base + off);
    off += ptsim_scratch_align((int64_t)pd->words_cap * 8, 8);
    sn->busy_ns = (PtsimTime *)(base + off);
    off += (int64_t)p * 8;
    sn->pp_wait_ns = (PtsimTime *)(base + off);
    off += (int64_t)p * 8;
    sn->read_lo = (int32_t *)(base + off);
    sn->read_hi = sn->read_lo + p;
    off += ptsim_scratch_align(2 * (int64_t)p * 4, 8);
    sn->valid = 0;
  }
  sim->period = pd;
}

/* ---- taking a snapshot ---- */

/* 1 when event x pops before event y. */
static PTSIM_HD int32_t period_before(const PtsimEvent *x, const PtsimEvent *y) {
  return x->time != y->time ? x->time < y->time : x->seq < y->seq;
}

/* Writes the stages into sn (ref: stage 0's index). */
static PTSIM_HD void period_take_stages(PtsimEngineSim *sim, Snapshot *sn, int32_t ref,
                                        PtsimTime now) {
  int64_t *w = sn->words;
  int32_t n = 0, s, c;
  for (s = 0; s < sim->p; s++) {
    const PtsimEngineStage *st = &sim->stages[s];
    w[n++] = st->next - ref;
    w[n++] = st->busy;
    w[n++] = st->free_at - now;
    for (c = 0; c < sim->v; c++) w[n++] = st->last_backward_start[c] - now;
    sn->busy_ns[s] = st->busy_ns;
    sn->pp_wait_ns[s] = st->pp_wait_ns;
  }
  sn->len = n;
  sn->full = 0;
  sn->now = now;
  sn->events = sim->events;
}

/* Appends the pending inputs and events to sn; -1 when they do not fit. */
static PTSIM_HD int32_t period_take_full(PtsimEngineSim *sim, Snapshot *sn, int32_t ref,
                                         PtsimTime now) {
  struct PtsimEnginePeriod *pd = sim->period;
  int64_t *w = sn->words;
  int32_t n = sn->len, pending = 0, s, k, count = ptsim_event_queue_count(&sim->queue), live = 0;
  int32_t done[PTSIM_MAX_STAGES]; /* a producer's items below its next have ended */
  for (s = 0; s < sim->p; s++) done[s] = sim->stages[s].next;
  for (s = 0; s < sim->p; s++) /* from the first item not started */
    if (ptsim_engine_scan_pending(sim, s, sim->stages[s].next + sim->stages[s].busy, done, now, w,
                                  &n, pd->words_cap, &pending, pd->pending_cap, pd->scan_cap) != 0)
      return -1;
  /* the pending events in the order they will pop (insertion sort: few) */
  for (k = 0; k < count; k++) {
    PtsimEvent *ev = ptsim_event_queue_entry(&sim->queue, k);
    int32_t at;
    if (live >= pd->events_cap) return -1;
    for (at = live; at > 0 && period_before(ev, &pd->sorted[at - 1]); at--)
      pd->sorted[at] = pd->sorted[at - 1];
    pd->sorted[at] = *ev;
    live++;
  }
  if (n + 1 + 4 * live > pd->words_cap) return -1;
  w[n++] = live;
  for (k = 0; k < live; k++) {
    const PtsimEvent *ev = &pd->sorted[k];
    w[n++] = ev->time - now;
    w[n++] = ev->kind;
    w[n++] = ev->a;
    w[n++] = ev->kind == PTSIM_ENGINE_EV_ITEM_DONE ? ev->b - ref : ev->b;
  }
  sn->len = n;
  sn->full = 1;
  return 0;
}

/* The first `len` words of a and b are equal. */
static PTSIM_HD int32_t period_same_words(const Snapshot *a, const Snapshot *b, int32_t len) {
  int32_t k;
  for (k = 0; k < len; k++)
    if (a->words[k] != b->words[k]) return 0;
  return 1;
}

/* ---- the jump ---- */

/* Whole repeats of the last `cycles` periods that keep every index they
 * read inside its stage's steady stretch; 0 when none. */
static PTSIM_HD int32_t period_repeats_left(const PtsimEngineSim *sim, int32_t phase,
                                            int32_t cycles) {
  const struct PtsimEnginePeriod *pd = sim->period;
  PtsimScheduleSteady ref, r;
  int32_t s, k, left = 0x7fffffff;
  ptsim_schedule_steady(&sim->stages[0].shape, phase, &ref);
  for (s = 0; s < sim->p; s++) {
    int32_t lo = sim->items, hi = -1;
    for (k = 0; k < cycles; k++) {
      const Snapshot *sn = &pd->snaps[(pd->taken - k) % SNAPSHOTS];
      if (sn->read_lo[s] < lo) lo = sn->read_lo[s];
      if (sn->read_hi[s] > hi) hi = sn->read_hi[s];
    }
    ptsim_schedule_steady(&sim->stages[s].shape, phase, &r);
    if (r.period != ref.period || r.shift != ref.shift || lo > hi || lo < r.lo || hi >= r.hi)
      return 0;
    k = (r.hi - 1 - hi) / (r.period * cycles);
    if (k < left) left = k;
  }
  return left;
}

/* Moves the run from snapshot `now_snap` forward by `repeats` repeats of
 * what happened since `then`. */
static PTSIM_HD void jump_run_forward(PtsimEngineSim *sim, const Snapshot *then,
                                      const Snapshot *now_snap, int32_t phase, int32_t cycles,
                                      int32_t repeats) {
  PtsimScheduleSteady ref;
  int32_t s, c, k, n = 0, count = ptsim_event_queue_count(&sim->queue);
  int32_t di;
  PtsimTime dt = (PtsimTime)repeats * (now_snap->now - then->now);
  ptsim_schedule_steady(&sim->stages[0].shape, phase, &ref);
  di = repeats * cycles * ref.period;
  for (s = 0; s < sim->p; s++) {
    PtsimEngineStage *st = &sim->stages[s];
    st->next += di;
    st->free_at += dt;
    for (c = 0; c < sim->v; c++) st->last_backward_start[c] += dt;
    st->busy_ns += (PtsimTime)repeats * (now_snap->busy_ns[s] - then->busy_ns[s]);
    st->pp_wait_ns += (PtsimTime)repeats * (now_snap->pp_wait_ns[s] - then->pp_wait_ns[s]);
  }
  for (s = 0; s < sim->p; s++) ptsim_engine_stage_load(sim, s);
  for (k = 0; k < count; k++) { /* the same shift for all keeps the heap a heap */
    PtsimEvent *ev = ptsim_event_queue_entry(&sim->queue, k);
    ev->time += dt;
    if (ev->kind == PTSIM_ENGINE_EV_ITEM_DONE) ev->b += di;
  }
  /* the pending inputs, re-read from the snapshot onto their moved items */
  n = sim->p * (3 + sim->v);
  for (s = 0; s < sim->p; s++) {
    PtsimEngineStage *st = &sim->stages[s];
    int64_t pending = now_snap->words[n++];
    for (k = 0; k < pending; k++, n += 2) {
      PtsimScheduleItem it, from;
      int32_t from_stage = 0, input;
      ptsim_schedule_item_at(&st->shape, st->next + st->busy + (int32_t)now_snap->words[n], &it);
      input = ptsim_schedule_input(sim->vstages, s, &it, &from_stage, &from);
      (input == PTSIM_SCHEDULE_INPUT_FORWARD
           ? sim->fwd_ready
           : sim->bwd_ready)[ptsim_engine_slot(sim, s, it.microbatch, it.chunk)] =
          now_snap->now + dt + now_snap->words[n + 1];
    }
  }
  sim->events += (int64_t)repeats * (now_snap->events - then->events);
}

/* ---- the check ---- */

PTSIM_HD int32_t ptsim_engine_period_check(PtsimEngineSim *sim, int32_t index, PtsimTime now) {
  struct PtsimEnginePeriod *pd = sim->period;
  PtsimScheduleSteady r;
  Snapshot *cur;
  int32_t phase, s, cycles, ok, stage_words;
  for (phase = 0; phase < PTSIM_SCHEDULE_PHASES; phase++) {
    if (pd->done_phases & (1 << phase)) continue;
    ptsim_schedule_steady(&sim->stages[0].shape, phase, &r);
    if (index >= r.lo && index < r.hi && (index - r.lo) % r.period == r.period - 1) break;
  }
  if (phase == PTSIM_SCHEDULE_PHASES) return 0;
  cur = &pd->snaps[pd->taken % SNAPSHOTS];
  cur->phase = phase;
  cur->valid = 1;
  period_take_stages(sim, cur, index, now);
  stage_words = cur->len;
  for (s = 0; s < sim->p; s++) { /* the period's reads; the scan's are added below */
    cur->read_lo[s] = sim->stages[s].touched_lo;
    cur->read_hi[s] = sim->stages[s].touched_hi;
    sim->stages[s].touched_lo = sim->items;
    sim->stages[s].touched_hi = -1;
  }
  /* The stages alone are cheap to compare and differ all through the
   * transient; only when they match a recent snapshot's is the rest worth
   * writing. */
  for (cycles = 1; cycles < SNAPSHOTS && cycles <= pd->taken; cycles++) {
    const Snapshot *then = &pd->snaps[(pd->taken - cycles) % SNAPSHOTS];
    if (!then->valid) break;
    if (then->phase == phase && period_same_words(then, cur, stage_words)) {
      cur->valid = period_take_full(sim, cur, index, now) == 0;
      break;
    }
  }
  ok = cur->valid;
  /* what this snapshot read belongs to the periods on both sides of it */
  for (s = 0; s < sim->p; s++) {
    PtsimEngineStage *st = &sim->stages[s];
    if (st->touched_lo < cur->read_lo[s]) cur->read_lo[s] = st->touched_lo;
    if (st->touched_hi > cur->read_hi[s]) cur->read_hi[s] = st->touched_hi;
  }
  for (cycles = 1; ok && cur->full && cycles < SNAPSHOTS && cycles <= pd->taken; cycles++) {
    const Snapshot *then = &pd->snaps[(pd->taken - cycles) % SNAPSHOTS];
    int32_t repeats;
    if (!then->valid) break;
    if (!then->full || then->phase != phase || then->len != cur->len ||
        !period_same_words(then, cur, cur->len) || now <= then->now)
      continue;
    repeats = period_repeats_left(sim, phase, cycles);
    if (repeats < 1) break;
    jump_run_forward(sim, then, cur, phase, cycles, repeats);
    pd->done_phases |= 1 << phase;
    for (s = 0; s < sim->p; s++) { /* the indices read so far are left behind */
      sim->stages[s].touched_lo = sim->items;
      sim->stages[s].touched_hi = -1;
    }
    ok = 0; /* start over: the snapshots before describe another time */
    break;
  }
  if (!ok) /* every snapshot before this one is now out of date */
    for (s = 0; s < SNAPSHOTS; s++) pd->snaps[s].valid = 0;
  pd->taken += 1;
  return 0;
}
