/* engine_recur.c — a step's item times without events, for the batch; see
 * engine.h (ptsim_engine_run_recurrence) and engine_int.h for the state.
 *
 * The event loop (engine.c) starts an item at max(its stage's free time,
 * its input's arrival) whatever order the events pop in (engine_int.h); so
 * the times are a recurrence over the items, which this file evaluates
 * stage by stage in dependency order — a stage runs until an input is
 * missing, then the stages it feeds — with no event queue.  That is about
 * four times cheaper per item, and gives every result of the event loop
 * but the event count.
 *
 * The periodic shortcut in the recurrence's terms.  In a steady phase
 * (ptsim_schedule_steady), cut n of stage s is item lo_s + n * period;
 * round n runs every stage up to its cut (further only when a consumer
 * needs it).  The items after the cuts depend on those before them only
 * through (a) each stage's free time and latest backward starts at its
 * cut, and (b) the inputs produced before the producer's cut for items
 * after the consumer's: a prefix of each input stream, as in
 * engine_period.c.  Written relative to stage 0's free time at its cut,
 * when the state at cut n equals the one at cut n - c word for word, and
 * every item read since lies in its stage's steady stretch, the items
 * after cut n repeat those after cut n - c moved by c periods and by the
 * time between the two cuts, for as many repeats as the stretch holds; the
 * accumulators (busy and pp-wait time) grow by their growth over the
 * repeat each time.  The run jumps there and goes on to the end.
 *
 * Core module: pure C, PTSIM_HD, no allocation, no I/O. */
#include "engine_int.h"
#include "scratch.h"

#define RECUR_ROUNDS 8 /* cut records kept per stage: a stage may run ahead */
#define RECUR_STATES 4 /* states kept: repeats of up to 3 periods are seen */

/* A stage as it was at one of its cuts. */
typedef struct {
  int32_t round; /* which cut, -1: none */
  PtsimTime free_at, busy_ns, pp_wait_ns;
  PtsimTime *last_backward_start; /* v, in the scratch */
} CutRecord;

/* The state at one cut, relative (see above). */
typedef struct {
  int64_t *words; /* per stage: free time, latest backward starts; then
                     per stage: pending inputs (count, (index - cut,
                     arrival)) */
  int32_t len;
  int32_t round;    /* -1: not taken (records missing) */
  int32_t full;     /* the pending inputs taken too (they fitted) */
  PtsimTime ref;    /* stage 0's free time at its cut */
  int32_t *read_lo; /* p: item indices read since the previous cut */
  int32_t *read_hi;
} CutState;

typedef struct {
  int32_t phase, period, shift;
  int32_t lo[PTSIM_MAX_STAGES], hi[PTSIM_MAX_STAGES]; /* the steady stretches */
  /* While tracking: each stage's next cut (an item index: it is there once
   * `next` reaches it) and that cut's round, so an item tests one equality */
  int32_t cut_at[PTSIM_MAX_STAGES], cut_round[PTSIM_MAX_STAGES];
  CutRecord *records; /* RECUR_ROUNDS * p: round n of stage s at (n % R) * p + s */
  CutState states[RECUR_STATES];
  int32_t words_cap, pending_cap, scan_cap;
  int64_t items; /* items computed */
} Recur;

static PTSIM_HD int32_t recur_pending_cap(int32_t p, int32_t v) { return 4 * p * v + 64; }
static PTSIM_HD int32_t recur_words_cap(int32_t p, int32_t v) {
  return p * (2 + v) + 2 * recur_pending_cap(p, v);
}

PTSIM_HD int64_t ptsim_engine_recur_bytes(int32_t p, int32_t v) {
  return ptsim_scratch_align((int64_t)RECUR_ROUNDS * p * (int64_t)sizeof(CutRecord), 8) +
         ptsim_scratch_align((int64_t)RECUR_ROUNDS * p * v * (int64_t)sizeof(PtsimTime), 8) +
         RECUR_STATES * (ptsim_scratch_align((int64_t)recur_words_cap(p, v) * 8, 8) +
                         ptsim_scratch_align(2 * (int64_t)p * 4, 8));
}

static PTSIM_HD void recur_carve(Recur *r, const PtsimEngineSim *sim, void *scratch) {
  char *base = (char *)scratch;
  int64_t off = 0;
  int32_t k, p = sim->p;
  PtsimTime *last;
  r->records = (CutRecord *)base;
  off += ptsim_scratch_align((int64_t)RECUR_ROUNDS * p * (int64_t)sizeof(CutRecord), 8);
  last = (PtsimTime *)(base + off);
  off += ptsim_scratch_align((int64_t)RECUR_ROUNDS * p * sim->v * (int64_t)sizeof(PtsimTime), 8);
  for (k = 0; k < RECUR_ROUNDS * p; k++) {
    r->records[k].round = -1;
    r->records[k].last_backward_start = last + (int64_t)k * sim->v;
  }
  r->words_cap = recur_words_cap(p, sim->v);
  r->pending_cap = recur_pending_cap(p, sim->v);
  r->scan_cap = 4 * p * sim->v + 32;
  for (k = 0; k < RECUR_STATES; k++) {
    CutState *cs = &r->states[k];
    cs->words = (int64_t *)(base + off);
    off += ptsim_scratch_align((int64_t)r->words_cap * 8, 8);
    cs->read_lo = (int32_t *)(base + off);
    cs->read_hi = cs->read_lo + p;
    off += ptsim_scratch_align(2 * (int64_t)p * 4, 8);
    cs->round = -1;
  }
  r->items = 0;
}

/* ---- computing items ---- */

/* The stage's next item, which has its input: its times, its output. */
static PTSIM_HD void recur_item(PtsimEngineSim *sim, Recur *r, int32_t s, PtsimTime ready) {
  PtsimEngineStage *st = &sim->stages[s];
  const PtsimScheduleItem *it = &st->item;
  int32_t p = sim->p, v = sim->v, to_stage, to_chunk;
  PtsimTime start = ready > st->free_at ? ready : st->free_at;
  PtsimTime dur = ptsim_engine_item_ns(sim, s, st->next, it);
  /* the event loop's pp-wait rule (engine.c try_start) */
  if (ready > st->free_at && sim->pp_ns > 0) {
    PtsimTime sent = ready - sim->pp_ns;
    PtsimTime from = sent > st->free_at ? sent : st->free_at;
    if (ready > from) st->pp_wait_ns += ready - from;
  }
  if (it->kind == PTSIM_SCHEDULE_ITEM_BACKWARD || it->kind == PTSIM_SCHEDULE_ITEM_BACKWARD_INPUT)
    st->last_backward_start[it->chunk] = start;
  st->busy_ns += dur;
  st->free_at = start + dur;
  if (ptsim_engine_output_to(sim, s, it, &to_stage, &to_chunk))
    (it->kind == PTSIM_SCHEDULE_ITEM_FORWARD
         ? sim->fwd_ready
         : sim->bwd_ready)[ptsim_engine_slot(sim, to_stage, it->microbatch, to_chunk)] =
        st->free_at + sim->pp_ns;
  st->next += 1;
  r->items += 1;
  /* at a cut of the steady phase: what the stage is there */
  if (sim->track && st->next == r->cut_at[s]) {
    int32_t round = r->cut_round[s], c;
    CutRecord *rec = &r->records[(round % RECUR_ROUNDS) * p + s];
    r->cut_at[s] += r->period;
    r->cut_round[s] = round + 1;
    rec->round = round;
    rec->free_at = st->free_at;
    rec->busy_ns = st->busy_ns;
    rec->pp_wait_ns = st->pp_wait_ns;
    for (c = 0; c < v; c++) rec->last_backward_start[c] = st->last_backward_start[c];
  }
  ptsim_engine_stage_load(sim, s);
}

/* Runs every stage up to target[s] (a stage goes further only as far as a
 * consumer needs); target may grow.  Returns 0, or PTSIM_ENGINE_ERR_STALL. */
static PTSIM_HD int32_t recur_advance(PtsimEngineSim *sim, Recur *r, int32_t *target) {
  int32_t worklist[PTSIM_MAX_STAGES];
  unsigned char listed[PTSIM_MAX_STAGES];
  int32_t top = 0, s, p = sim->p;
  for (s = 0; s < p; s++) {
    listed[p - 1 - s] = sim->stages[p - 1 - s].next < target[p - 1 - s];
    if (listed[p - 1 - s]) worklist[top++] = p - 1 - s; /* stage 0 on top */
  }
  while (top > 0) {
    PtsimEngineStage *st;
    int32_t progressed = 0;
    s = worklist[--top];
    listed[s] = 0;
    st = &sim->stages[s];
    while (st->next < target[s]) {
      PtsimTime ready = ptsim_engine_input_ready(sim, s);
      if (ready == PTSIM_ENGINE_NOT_YET) {
        /* its producer must get there, even past its own target; below it,
         * the producer is under way and will come back here */
        int32_t from = st->from_stage;
        if (st->from_index >= target[from]) {
          target[from] = st->from_index + 1;
          if (!listed[from]) {
            worklist[top++] = from;
            listed[from] = 1;
          }
        }
        break;
      }
      recur_item(sim, r, s, ready);
      progressed = 1;
    }
    /* the stages it feeds may go on: those of the virtual stages next to
     * its own, its ring neighbours (looped; a V-shaped placement also feeds
     * the stage itself, which runs on above) */
    if (progressed && p > 1) {
      int32_t next = s + 1 == p ? 0 : s + 1, prev = s == 0 ? p - 1 : s - 1; /* no division */
      if (!listed[next] && sim->stages[next].next < target[next]) {
        worklist[top++] = next;
        listed[next] = 1;
      }
      if (!listed[prev] && sim->stages[prev].next < target[prev]) {
        worklist[top++] = prev;
        listed[prev] = 1;
      }
    }
  }
  for (s = 0; s < p; s++)
    if (sim->stages[s].next < target[s]) return PTSIM_ENGINE_ERR_STALL;
  return 0;
}

/* ---- the state at a cut ---- */

/* Writes the stages' part of the state at cut n into cs (cs->round stays
 * -1 when a stage's record is gone). */
static PTSIM_HD void recur_take(PtsimEngineSim *sim, Recur *r, int32_t n, CutState *cs) {
  int32_t s, c, len = 0, p = sim->p;
  PtsimTime ref;
  cs->round = -1;
  cs->full = 0;
  for (s = 0; s < p; s++)
    if (r->records[(n % RECUR_ROUNDS) * p + s].round != n) return; /* overwritten: ran ahead */
  ref = r->records[(n % RECUR_ROUNDS) * p].free_at;
  for (s = 0; s < p; s++) {
    const CutRecord *rec = &r->records[(n % RECUR_ROUNDS) * p + s];
    cs->words[len++] = rec->free_at - ref;
    for (c = 0; c < sim->v; c++) cs->words[len++] = rec->last_backward_start[c] - ref;
  }
  cs->len = len;
  cs->ref = ref;
  cs->round = n;
}

/* Appends the pending inputs at cut n to cs (cs->full: they fitted). */
static PTSIM_HD void recur_take_full(PtsimEngineSim *sim, Recur *r, int32_t n, CutState *cs) {
  int32_t s, len = cs->len, pending = 0;
  int32_t cut[PTSIM_MAX_STAGES]; /* at the cut, what is before it has ended */
  for (s = 0; s < sim->p; s++) cut[s] = r->lo[s] + n * r->period;
  for (s = 0; s < sim->p; s++)
    if (ptsim_engine_scan_pending(sim, s, cut[s], cut, cs->ref, cs->words, &len, r->words_cap,
                                  &pending, r->pending_cap, r->scan_cap) != 0)
      return;
  cs->len = len;
  cs->full = 1;
}

/* The first `len` words of a and b are equal. */
static PTSIM_HD int32_t recur_same(const CutState *a, const CutState *b, int32_t len) {
  int32_t k;
  for (k = 0; k < len; k++)
    if (a->words[k] != b->words[k]) return 0;
  return 1;
}

/* ---- the jump ---- */

/* Whole repeats of the last `cycles` periods that keep every index they
 * read in its stage's steady stretch. */
static PTSIM_HD int32_t recur_repeats_left(const PtsimEngineSim *sim, const Recur *r, int32_t n,
                                           int32_t cycles) {
  int32_t s, k, left = 0x7fffffff;
  for (s = 0; s < sim->p; s++) {
    int32_t lo = sim->items, hi = -1;
    for (k = 0; k < cycles; k++) {
      const CutState *cs = &r->states[(n - k) % RECUR_STATES];
      if (cs->read_lo[s] < lo) lo = cs->read_lo[s];
      if (cs->read_hi[s] > hi) hi = cs->read_hi[s];
    }
    if (lo > hi || lo < r->lo[s] || hi >= r->hi[s]) return 0;
    k = (r->hi[s] - 1 - hi) / (r->period * cycles);
    if (k < left) left = k;
  }
  return left;
}

/* From cut n, `repeats` repeats of what happened since cut n - cycles. */
static PTSIM_HD void recur_jump(PtsimEngineSim *sim, Recur *r, int32_t n, int32_t cycles,
                                int32_t repeats) {
  const CutState *now = &r->states[n % RECUR_STATES],
                 *then = &r->states[(n - cycles) % RECUR_STATES];
  int32_t s, c, k, len = sim->p * (1 + sim->v), p = sim->p;
  int32_t to = n + repeats * cycles;
  PtsimTime dt = (PtsimTime)repeats * (now->ref - then->ref);
  for (s = 0; s < p; s++) {
    PtsimEngineStage *st = &sim->stages[s];
    const CutRecord *rec = &r->records[(n % RECUR_ROUNDS) * p + s];
    const CutRecord *old = &r->records[((n - cycles) % RECUR_ROUNDS) * p + s];
    st->next = r->lo[s] + to * r->period; /* what ran past cut n is run again */
    st->free_at = rec->free_at + dt;
    for (c = 0; c < sim->v; c++) st->last_backward_start[c] = rec->last_backward_start[c] + dt;
    st->busy_ns = rec->busy_ns + (PtsimTime)repeats * (rec->busy_ns - old->busy_ns);
    st->pp_wait_ns = rec->pp_wait_ns + (PtsimTime)repeats * (rec->pp_wait_ns - old->pp_wait_ns);
  }
  for (s = 0; s < p; s++) { /* the pending inputs, onto their moved items */
    PtsimEngineStage *st = &sim->stages[s];
    int64_t pending = now->words[len++];
    for (k = 0; k < pending; k++, len += 2) {
      PtsimScheduleItem it, from;
      int32_t from_stage = 0, input;
      ptsim_schedule_item_at(&st->shape, st->next + (int32_t)now->words[len], &it);
      input = ptsim_schedule_input(sim->vstages, s, &it, &from_stage, &from);
      (input == PTSIM_SCHEDULE_INPUT_FORWARD
           ? sim->fwd_ready
           : sim->bwd_ready)[ptsim_engine_slot(sim, s, it.microbatch, it.chunk)] =
          now->ref + dt + now->words[len + 1];
    }
  }
  for (s = 0; s < p; s++) ptsim_engine_stage_load(sim, s);
}

/* ---- a phase, round by round ---- */

/* Sets r up for `phase`; 0 when every stage has its stretch, alike. */
static PTSIM_HD int32_t recur_phase(PtsimEngineSim *sim, Recur *r, int32_t phase) {
  PtsimScheduleSteady st;
  int32_t s;
  for (s = 0; s < sim->p; s++) {
    ptsim_schedule_steady(&sim->stages[s].shape, phase, &st);
    if (st.lo >= st.hi || (s > 0 && (st.period != r->period || st.shift != r->shift))) return -1;
    r->phase = phase;
    r->period = st.period;
    r->shift = st.shift;
    r->lo[s] = st.lo;
    r->hi[s] = st.hi;
  }
  return 0;
}

/* Rounds of one phase until the state repeats (then the jump) or the
 * stretch ends.  Returns 0 or an engine error. */
static PTSIM_HD int32_t recur_rounds(PtsimEngineSim *sim, Recur *r, int32_t *target) {
  int32_t n, s, k, cycles, rc, p = sim->p, stage_words = p * (1 + sim->v);
  for (k = 0; k < RECUR_ROUNDS * p; k++) r->records[k].round = -1;
  for (k = 0; k < RECUR_STATES; k++) r->states[k].round = -1;
  for (s = 0; s < p; s++) {
    int32_t past = sim->stages[s].next + 1 - r->lo[s]; /* the first cut `next` still reaches */
    r->cut_round[s] = past <= 0 ? 0 : (past + r->period - 1) / r->period;
    r->cut_at[s] = r->lo[s] + r->cut_round[s] * r->period;
    sim->stages[s].touched_lo = sim->items;
    sim->stages[s].touched_hi = -1;
  }
  sim->track = 1;
  for (n = 0;; n++) {
    CutState *cs = &r->states[n % RECUR_STATES];
    for (s = 0; s < p; s++) {
      int32_t cut = r->lo[s] + n * r->period;
      if (cut >= r->hi[s]) {
        sim->track = 0;
        return 0; /* the stretch is over: no repeat found */
      }
      if (target[s] < cut) target[s] = cut;
    }
    rc = recur_advance(sim, r, target);
    if (rc != 0) return rc;
    for (s = 0; s < p; s++) { /* the round's reads, the last cut's scan included... */
      cs->read_lo[s] = sim->stages[s].touched_lo;
      cs->read_hi[s] = sim->stages[s].touched_hi;
      sim->stages[s].touched_lo = sim->items;
      sim->stages[s].touched_hi = -1;
    }
    recur_take(sim, r, n, cs);
    /* The stages' part is cheap and differs all through a transient; the
     * pending inputs are scanned only when it matches a recent cut's — or
     * at the first two cuts, where a pipeline that repeats at once shows
     * it. */
    for (cycles = 1; cs->round == n && cycles < RECUR_STATES && cycles <= n + 1; cycles++) {
      const CutState *then = &r->states[(n - cycles + RECUR_STATES) % RECUR_STATES];
      if (n < 2 || (then->round == n - cycles && recur_same(then, cs, stage_words))) {
        recur_take_full(sim, r, n, cs);
        break;
      }
    }
    for (s = 0; s < p; s++) { /* ...and this cut's, which also opens the next round's */
      PtsimEngineStage *st = &sim->stages[s];
      if (st->touched_lo < cs->read_lo[s]) cs->read_lo[s] = st->touched_lo;
      if (st->touched_hi > cs->read_hi[s]) cs->read_hi[s] = st->touched_hi;
    }
    if (!cs->full) continue;
    for (cycles = 1; cycles < RECUR_STATES && cycles <= n; cycles++) {
      const CutState *then = &r->states[(n - cycles) % RECUR_STATES];
      int32_t repeats;
      if (then->round != n - cycles || !then->full || then->len != cs->len ||
          cs->ref <= then->ref || !recur_same(then, cs, cs->len))
        continue;
      repeats = recur_repeats_left(sim, r, n, cycles);
      if (repeats < 1) break;
      recur_jump(sim, r, n, cycles, repeats);
      for (s = 0; s < p; s++)
        if (target[s] < sim->stages[s].next) target[s] = sim->stages[s].next;
      sim->track = 0;
      return 0;
    }
  }
}

PTSIM_HD int32_t ptsim_engine_recur(PtsimEngineSim *sim, void *scratch) {
  Recur r;
  int32_t target[PTSIM_MAX_STAGES];
  int32_t s, phase, rc;
  recur_carve(&r, sim, scratch);
  r.period = 1;
  for (s = 0; s < sim->p; s++) {
    target[s] = 0;
    r.lo[s] = 0;
    r.hi[s] = 0;
  }
  sim->track = 0;
  for (phase = 0; phase < PTSIM_SCHEDULE_PHASES; phase++) {
    if (recur_phase(sim, &r, phase) != 0) continue;
    rc = recur_rounds(sim, &r, target);
    if (rc != 0) return rc;
  }
  for (s = 0; s < sim->p; s++) target[s] = sim->items;
  rc = recur_advance(sim, &r, target);
  sim->simulated = r.items;
  return rc;
}
