/* lifetimes_period.c — the replay's exact periodic shortcut: what it
 * promises is in lifetimes_int.h, the allocator's part of the state in
 * alloc_state.c.
 *
 * Why it is exact.  Item i of a step does the same allocator calls for
 * every (microbatch, chunk) of a kind and chunk: what differs is only
 * which handle slots it reads, and those hold the tensors alive.  So from
 * a moment on, the replay is a function of (a) the allocator's state words
 * (ptsim_alloc_state: blocks by address, counters, next address) and (b)
 * the live pairs with their tensors' addresses, microbatches counted from
 * the boundary (microbatch minus boundary x shift), (c) ZeRO-3's gathered
 * units with their addresses (they belong to a chunk, not a microbatch:
 * lifetimes_units.c reads and changes them the same way in every period)
 * and (d) the items still to run.  Copies taken at boundaries n0 and
 * n1 = n0 + K that are equal word for word mean: the K periods after n1
 * redo the K periods after n0 with microbatches moved by K x shift, as
 * long as each item there is the item K periods before moved the same way
 * — which the jump checks item by item, not trusting the schedule's closed
 * form — and so on block after block (induction on blocks).  The replay's own accumulators are the
 * allocator's peaks (a repeat revisits the values of the block before, so
 * no peak grows and where each was first reached stays), its monotone
 * counters (ptsim_alloc_repeat adds their growth), and the OOM record (no
 * allocation failed in the block before, none fails in a repeat).
 *
 * Cheap most of the time: at a boundary it hashes the addresses handed out
 * since the last one with a few counters (the hint) and looks for the last
 * K hints repeating the K before them; only then does it copy the state
 * (O(blocks log blocks)) and, K periods later, copy and compare again.  A
 * comparison that fails (the hint lied: the allocator is still drifting)
 * becomes the next first copy; after MAX_FAILURES the stretch is replayed
 * item by item.  GPipe's stretches (all forwards, then all backwards) grow
 * or shrink the state every period and never repeat: it is not watched.
 *
 * Core module: pure C, PTSIM_HD, no allocation, no I/O. */
#include "lifetimes_int.h"

#define MAX_FAILURES 8

typedef struct {
  int64_t *words;              /* allocator words, then the live pairs */
  int64_t len;
  int32_t boundary, item;      /* where it was taken */
  PtsimAllocCounters counters;
} PeriodCopy;

struct PtsimLifetimesPeriod {
  PtsimScheduleSteady phases[PTSIM_SCHEDULE_PHASES];
  int32_t phase;               /* the stretch watched; PTSIM_SCHEDULE_PHASES: none */
  int32_t boundary;            /* boundaries of it so far (the one at x->period_next next) */
  int32_t kmax, ring;          /* longest repeat looked for, hints kept (2 kmax + 1) */
  uint64_t *hints;
  int32_t verify_k;            /* 0, or the repeat (in periods) copies[0] is checked for */
  int32_t failures;
  int64_t words_cap;
  PeriodCopy copies[2];        /* [0] the earlier copy, [1] the later */
};

static PTSIM_HD int64_t period_align(int64_t n) { return (n + 7) & ~(int64_t)7; }

/* The longest repeat looked for, in periods: a live pair per period at
 * least leaves, so the pairs alive (at most 2pv + 2, schedule.h) bound how
 * long the tensors take to come back to their places. */
static PTSIM_HD int32_t period_kmax(int32_t live_cap) { return live_cap + 4; }

static PTSIM_HD int64_t period_words(int32_t blocks, int32_t live_cap, int32_t per_slot,
                                     int32_t units) {
  return ptsim_alloc_state_words(blocks) + 1 + (int64_t)live_cap * (2 + per_slot) + units;
}

PTSIM_HD int64_t ptsim_lifetimes_period_bytes(int32_t blocks, int32_t live_cap, int32_t per_slot,
                                              int32_t units) {
  int64_t ring = 2 * (int64_t)period_kmax(live_cap) + 1;
  return period_align((int64_t)sizeof(struct PtsimLifetimesPeriod)) + period_align(ring * 8) +
         2 * period_align(period_words(blocks, live_cap, per_slot, units) * 8);
}

/* Points x->period_next at the first boundary of the first non-empty
 * stretch from phase `from` on whose start is not before item `after`. */
static PTSIM_HD void period_enter(PtsimLifetimesCtx *x, int32_t from, int32_t after) {
  struct PtsimLifetimesPeriod *pd = x->period;
  pd->phase = from;
  while (pd->phase < PTSIM_SCHEDULE_PHASES &&
         (pd->phases[pd->phase].lo >= pd->phases[pd->phase].hi ||
          pd->phases[pd->phase].lo < after))
    pd->phase += 1;
  pd->boundary = 0;
  pd->verify_k = 0;
  pd->failures = 0;
  x->period_next = pd->phase < PTSIM_SCHEDULE_PHASES ? pd->phases[pd->phase].lo : -1;
}

PTSIM_HD int32_t ptsim_lifetimes_period_init(PtsimLifetimesCtx *x, void *scratch, int64_t bytes,
                                             int32_t n_items) {
  const PtsimLayout *l = &x->job->layout;
  PtsimScheduleShape sh;
  struct PtsimLifetimesPeriod *pd = (struct PtsimLifetimesPeriod *)scratch;
  char *at = (char *)scratch;
  int32_t k, any = 0;
  int64_t words = period_words(x->alloc.capacity_blocks, x->live_cap, x->per_slot, x->n_gathered);
  if (bytes < ptsim_lifetimes_period_bytes(x->alloc.capacity_blocks, x->live_cap, x->per_slot,
                                           x->n_gathered))
    return -1;
  /* GPipe's stretches hold one more microbatch, then one fewer, every
   * period: its state never comes back */
  if (l->schedule == PTSIM_SCHEDULE_GPIPE ||
      ptsim_schedule_shape(l->schedule, (int32_t)l->pp, x->m, x->v, (int32_t)x->stage, &sh) != 0 ||
      sh.items != n_items)
    return -1;
  for (k = 0; k < PTSIM_SCHEDULE_PHASES; k++) {
    ptsim_schedule_steady(&sh, k, &pd->phases[k]);
    any |= pd->phases[k].lo < pd->phases[k].hi && pd->phases[k].shift != 0;
  }
  if (!any) return -1;
  pd->kmax = period_kmax(x->live_cap);
  pd->ring = 2 * pd->kmax + 1;
  pd->words_cap = words;
  at += period_align((int64_t)sizeof *pd);
  pd->hints = (uint64_t *)at;
  at += period_align((int64_t)pd->ring * 8);
  for (k = 0; k < 2; k++) {
    pd->copies[k].words = (int64_t *)at;
    at += period_align(words * 8);
  }
  x->period = pd;
  x->period_next = -1;
  return 0;
}

PTSIM_HD void ptsim_lifetimes_period_step(PtsimLifetimesCtx *x) {
  if (!x->period) return;
  period_enter(x, 0, 0);
}

/* ---- the live list (lifetimes_int.h) ---- */

PTSIM_HD void ptsim_lifetimes_live_add(PtsimLifetimesCtx *x, int32_t mb, int32_t chunk) {
  if (!x->period || x->irregular) return;
  if (x->n_live == x->live_cap || x->live_pos[(int64_t)mb * x->v + chunk] >= 0) {
    x->irregular = 1;
    return;
  }
  ptsim_lifetimes_live_set(x, x->n_live, mb, chunk);
  x->n_live += 1;
}

PTSIM_HD void ptsim_lifetimes_live_use(PtsimLifetimesCtx *x, int32_t mb, int32_t chunk, int done) {
  int32_t k, last;
  if (!x->period || x->irregular) return;
  k = x->live_pos[(int64_t)mb * x->v + chunk];
  if (k < 0) {
    x->irregular = 1;
    return;
  }
  if (!done) return;
  x->live_pos[(int64_t)mb * x->v + chunk] = -1;
  x->n_live -= 1;
  last = x->n_live;
  if (k != last) ptsim_lifetimes_live_set(x, k, x->live[2 * last], x->live[2 * last + 1]);
}

/* ---- copies of the state ---- */

/* The live pairs in (microbatch, chunk) order (insertion sort: a few dozen). */
static PTSIM_HD void period_sort_live(PtsimLifetimesCtx *x, int descending) {
  int32_t i, j, k;
  for (i = 1; i < x->n_live; i++) {
    int32_t mb = x->live[2 * i], c = x->live[2 * i + 1];
    for (j = i; j > 0; j--) {
      int32_t pm = x->live[2 * (j - 1)], pc = x->live[2 * (j - 1) + 1];
      int before = pm < mb || (pm == mb && pc < c);
      if (descending ? before : !before) {
        x->live[2 * j] = pm;
        x->live[2 * j + 1] = pc;
      } else {
        break;
      }
    }
    x->live[2 * j] = mb;
    x->live[2 * j + 1] = c;
  }
  for (k = 0; k < x->n_live; k++) ptsim_lifetimes_live_set(x, k, x->live[2 * k], x->live[2 * k + 1]);
}

static PTSIM_HD void period_copy(PtsimLifetimesCtx *x, PeriodCopy *cp, int32_t item) {
  struct PtsimLifetimesPeriod *pd = x->period;
  const PtsimScheduleSteady *st = &pd->phases[pd->phase];
  int64_t n = ptsim_alloc_state(&x->alloc, cp->words);
  int64_t moved = (int64_t)pd->boundary * st->shift;
  int32_t k, j;
  period_sort_live(x, 0);
  cp->words[n++] = x->n_live;
  for (k = 0; k < x->n_live; k++) {
    const int32_t *hs = ptsim_lifetimes_slot(x, x->live[2 * k], x->live[2 * k + 1]);
    cp->words[n++] = (int64_t)x->live[2 * k] - moved;
    cp->words[n++] = x->live[2 * k + 1];
    for (j = 0; j < x->per_slot; j++)
      cp->words[n++] = hs[j] >= 0 ? x->alloc.blocks[hs[j]].addr : -1;
  }
  /* ZeRO-3's gathered units belong to no microbatch: they stay in place */
  for (j = 0; j < x->n_gathered; j++)
    cp->words[n++] = x->gathered[j] >= 0 ? x->alloc.blocks[x->gathered[j]].addr : -1;
  cp->len = n;
  cp->boundary = pd->boundary;
  cp->item = item;
  ptsim_alloc_counters(&x->alloc, &cp->counters);
}

static PTSIM_HD int period_same(const PeriodCopy *a, const PeriodCopy *b) {
  int64_t k;
  if (a->len != b->len) return 0;
  for (k = 0; k < a->len; k++)
    if (a->words[k] != b->words[k]) return 0;
  return 1;
}

/* ---- the jump ---- */

static PTSIM_HD int period_moved(const PtsimScheduleItem *a, const PtsimScheduleItem *b,
                                 int64_t shift) {
  return a->kind == b->kind && a->chunk == b->chunk &&
         (int64_t)a->microbatch == (int64_t)b->microbatch + shift;
}

/* copies[0] (boundary n0) and copies[1] (now, item i1, K periods later)
 * are the same state.  Skips every whole K-period block whose items are
 * the block before moved by K x shift; returns the item to run next (i1
 * when no block can be skipped). */
static PTSIM_HD int32_t period_jump(PtsimLifetimesCtx *x, const PtsimScheduleItem *items,
                                    int32_t n_items, int32_t i1) {
  struct PtsimLifetimesPeriod *pd = x->period;
  const PtsimScheduleSteady *st = &pd->phases[pd->phase];
  int32_t span = i1 - pd->copies[0].item;
  int64_t per_block = (int64_t)pd->verify_k * st->shift, moved;
  int32_t e = i1, k, j;
  int64_t blocks;
  while (e < n_items && period_moved(&items[e], &items[e - span], per_block)) e++;
  blocks = (e - i1) / span;
  if (blocks < 1) return i1;
  moved = blocks * per_block;
  for (k = 0; k < x->n_live; k++) {
    int64_t mb = x->live[2 * k] + moved;
    if (mb < 0 || mb >= x->m) return i1;
  }
  ptsim_alloc_repeat(&x->alloc, &pd->copies[0].counters, blocks);
  /* move each live pair's handles; in the order that never overwrites a
   * pair not yet moved */
  period_sort_live(x, moved > 0);
  for (k = 0; k < x->n_live; k++) {
    int32_t mb = x->live[2 * k], c = x->live[2 * k + 1];
    int32_t *from = ptsim_lifetimes_slot(x, mb, c);
    int32_t *to = ptsim_lifetimes_slot(x, (int32_t)(mb + moved), c);
    for (j = 0; j < x->per_slot; j++) {
      to[j] = from[j];
      from[j] = -1;
    }
    x->live_pos[(int64_t)mb * x->v + c] = -1;
  }
  for (k = 0; k < x->n_live; k++)
    ptsim_lifetimes_live_set(x, k, x->live[2 * k] + (int32_t)moved, x->live[2 * k + 1]);
  return i1 + (int32_t)(blocks * span);
}

/* ---- boundaries ---- */

/* The smallest K whose last K hints repeat the K before them (the hint of
 * boundary 0 covers the warm-up and is left out), or 0. */
static PTSIM_HD int32_t period_candidate(const struct PtsimLifetimesPeriod *pd) {
  int32_t n = pd->boundary, K, j;
  for (K = 1; K <= pd->kmax && 2 * K <= n; K++) {
    for (j = 0; j < K; j++)
      if (pd->hints[(n - j) % pd->ring] != pd->hints[(n - j - K) % pd->ring]) break;
    if (j == K) return K;
  }
  return 0;
}

static PTSIM_HD uint64_t period_hint(const PtsimLifetimesCtx *x) {
  const PtsimAllocStats *st = &x->alloc.stats;
  uint64_t h = x->trace_hash;
  h = (h ^ (uint64_t)x->alloc.next_addr) * 0x100000001B3ull;
  h = (h ^ (uint64_t)st->reserved_bytes) * 0x100000001B3ull;
  h = (h ^ (uint64_t)st->allocated_bytes) * 0x100000001B3ull;
  h = (h ^ (uint64_t)x->alloc.free_count) * 0x100000001B3ull;
  return h ^ (h >> 29);
}

/* Boundary pd->boundary of the current stretch, before item i. */
static PTSIM_HD int32_t period_boundary(PtsimLifetimesCtx *x, const PtsimScheduleItem *items,
                                        int32_t n_items, int32_t i) {
  struct PtsimLifetimesPeriod *pd = x->period;
  const PtsimScheduleSteady *st = &pd->phases[pd->phase];
  int32_t n = pd->boundary, copied = 0, K;
  pd->hints[n % pd->ring] = period_hint(x);
  x->trace_hash = 0;
  if (pd->verify_k > 0 && n == pd->copies[0].boundary + pd->verify_k) {
    PeriodCopy t;
    period_copy(x, &pd->copies[1], i);
    if (period_same(&pd->copies[0], &pd->copies[1])) {
      int32_t next = period_jump(x, items, n_items, i);
      if (next != i) {
        period_enter(x, pd->phase + 1, next);
        return next;
      }
    }
    pd->failures += 1;
    t = pd->copies[0];
    pd->copies[0] = pd->copies[1];
    pd->copies[1] = t;
    pd->verify_k = 0;
    copied = 1;
  }
  if (pd->verify_k == 0 && pd->failures < MAX_FAILURES) {
    K = period_candidate(pd);
    if (K > 0 && (int64_t)i + 2 * (int64_t)K * st->period <= st->hi) {
      if (!copied) period_copy(x, &pd->copies[0], i);
      pd->verify_k = K;
    }
  }
  pd->boundary += 1;
  if ((int64_t)st->lo + (int64_t)pd->boundary * st->period <= st->hi)
    x->period_next = st->lo + pd->boundary * st->period;
  else
    period_enter(x, pd->phase + 1, i);
  return i;
}

PTSIM_HD int32_t ptsim_lifetimes_period_at(PtsimLifetimesCtx *x, const PtsimScheduleItem *items,
                                           int32_t n_items, int32_t i) {
  if (!x->period || x->irregular) {
    x->period_next = -1;
    return i;
  }
  /* a stretch may start where the last one ended */
  while (x->period_next == i) {
    int32_t next = period_boundary(x, items, n_items, i);
    if (next != i) return next;
  }
  return i;
}
