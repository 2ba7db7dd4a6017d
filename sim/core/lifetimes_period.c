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
 * and (d) the items still to run.  States at boundaries n0 and
 * n1 = n0 + K that are equal word for word mean: the K periods after n1
 * redo the K periods after n0 with microbatches moved by K x shift, as
 * long as each item there is the item K periods before moved the same way
 * — which the jump checks item by item, not trusting the schedule's closed
 * form — and so on block after block (induction on blocks).  The replay's
 * own accumulators are the allocator's peaks (a repeat revisits the
 * values of the block before, so no peak grows and where each was first
 * reached stays), its monotone counters (ptsim_alloc_repeat adds their
 * growth), and the OOM record (no allocation failed in the block before,
 * none fails in a repeat).
 *
 * Finding the repeat.  At a boundary the addresses handed out since the
 * last one are hashed with a few counters (the hint; a hint, not a
 * proof).  When the last hints repeat those K periods before (K of them,
 * or HINT_RUN when a stored state can be compared), the state may have
 * come back:
 *   - stored states (stretches whose period has RING_PERIOD_ITEMS items or
 *     more, the interleaved schedule's: a state may take tens of periods
 *     to come back there): every stride-th boundary the allocator is
 *     copied as it is (ptsim_alloc_snapshot, one memcpy; the stride makes
 *     that STRIDE_ITEMS items apart) into a ring, with its live words.
 *     The latest stored state a multiple of K periods back is compared
 *     with the state now, word for word (both put in ptsim_alloc_state's
 *     order: only then is anything sorted); the same, the replay jumps at
 *     once;
 *   - otherwise the state now is copied, and compared with the state K
 *     periods later (1F1B and ZB-H1 repeat within a period or two once
 *     settled); a comparison that fails (the allocator still drifts)
 *     becomes the next copy; after MAX_FAILURES the stretch is replayed
 *     item by item.
 * GPipe's stretches (all forwards, then all backwards) grow or shrink the
 * state every period and never repeat: they are not watched.
 *
 * Core module: pure C, PTSIM_HD, no allocation, no I/O. */
#include "lifetimes_int.h"
#include "scratch.h"

#define MAX_FAILURES 8
/* Hints that must repeat before a stored state is compared (fewer when K
 * is smaller). */
#define HINT_RUN 3
/* Stored states: stretches whose period has this many items at least
 * keep them, STRIDE_ITEMS items apart at least, in RING_BYTES. */
#define RING_PERIOD_ITEMS 16
#define STRIDE_ITEMS 128
#define RING_BYTES ((int64_t)8 << 20)

/* The state in ptsim_alloc_state's order, its live words after it. */
typedef struct {
  int64_t *words;
  int64_t len;
  int32_t boundary, item; /* where it was taken */
  PtsimAllocCounters counters;
} PeriodCopy;

/* A stored state: the allocator as it was, the live words then. */
typedef struct {
  int32_t boundary;     /* -1: empty */
  int32_t item;         /* the item the replay was about to run */
  int32_t differs;      /* compared once and not the same: not again */
  PtsimAllocator alloc; /* its blocks in `blocks` */
  PtsimAllocCounters counters;
  PtsimAllocBlock *blocks;
  int64_t *live;
  int64_t live_len;
} PeriodState;

struct PtsimLifetimesPeriod {
  PtsimScheduleSteady phases[PTSIM_SCHEDULE_PHASES];
  int32_t phase;           /* the stretch watched; PTSIM_SCHEDULE_PHASES: none */
  int32_t boundary;        /* boundaries of it so far (the one at x->period_next next) */
  int32_t kmax, hint_ring; /* longest repeat looked for, hints kept (2 kmax + 1) */
  uint64_t *hints;
  int32_t verify_k; /* 0, or the repeat (in periods) copies[0] is checked for */
  int32_t failures;
  int32_t stride;       /* boundaries between stored states; 0: none stored */
  int32_t ring;         /* stored states in the ring; 0: not laid out yet, -1: none */
  int32_t states_max;   /* headers laid out */
  int32_t entry_blocks; /* blocks a stored state holds */
  int64_t live_max;     /* live words at most */
  char *ring_at;        /* RING_BYTES */
  PeriodState *states;
  PeriodCopy copies[2]; /* [0] the earlier copy (or a stored state's words), [1] now */
  /* per stretch: its hints repeated this step (some K), it was watched to
   * its end, and the previous step's watch of it saw no repeat */
  int32_t repeated[PTSIM_SCHEDULE_PHASES], watched[PTSIM_SCHEDULE_PHASES];
  int32_t futile[PTSIM_SCHEDULE_PHASES];
};

/* The longest repeat looked for, in periods: a live pair per period at
 * least leaves, so the pairs alive (at most 2pv + 2, schedule.h) bound how
 * long the tensors take to come back to their places. */
static PTSIM_HD int32_t period_kmax(int32_t live_cap) { return live_cap + 4; }

/* Live words at most: the pair count, each pair's microbatch, chunk and
 * handles' addresses, the gathered units' addresses. */
static PTSIM_HD int64_t period_live_max(int32_t live_cap, int32_t per_slot, int32_t units) {
  return 1 + (int64_t)live_cap * (2 + per_slot) + units;
}

PTSIM_HD int64_t ptsim_lifetimes_period_bytes(int32_t blocks, int32_t live_cap, int32_t per_slot,
                                              int32_t units) {
  int64_t kmax = period_kmax(live_cap);
  int64_t words = ptsim_alloc_state_words(blocks) + period_live_max(live_cap, per_slot, units);
  return ptsim_scratch_align((int64_t)sizeof(struct PtsimLifetimesPeriod), 8) +
         ptsim_scratch_align((2 * kmax + 1) * 8, 8) +
         ptsim_scratch_align((kmax + 1) * (int64_t)sizeof(PeriodState), 8) + RING_BYTES +
         2 * ptsim_scratch_align(words * 8, 8);
}

/* Points x->period_next at the first boundary of the first non-empty
 * stretch from phase `from` on whose start is not before item `after`. */
static PTSIM_HD void period_enter(PtsimLifetimesCtx *x, int32_t from, int32_t after) {
  struct PtsimLifetimesPeriod *pd = x->period;
  if (pd->phase < PTSIM_SCHEDULE_PHASES) pd->watched[pd->phase] = 1; /* the one it leaves */
  pd->phase = from;
  while (pd->phase < PTSIM_SCHEDULE_PHASES &&
         (pd->phases[pd->phase].lo >= pd->phases[pd->phase].hi || pd->phases[pd->phase].lo < after))
    pd->phase += 1;
  pd->boundary = 0;
  pd->verify_k = 0;
  pd->failures = 0;
  pd->ring = 0;
  pd->stride = 0;
  if (pd->phase < PTSIM_SCHEDULE_PHASES && pd->phases[pd->phase].period >= RING_PERIOD_ITEMS &&
      !pd->futile[pd->phase])
    pd->stride = (STRIDE_ITEMS + pd->phases[pd->phase].period - 1) / pd->phases[pd->phase].period;
  x->period_next = pd->phase < PTSIM_SCHEDULE_PHASES ? pd->phases[pd->phase].lo : -1;
}

PTSIM_HD int32_t ptsim_lifetimes_period_init(PtsimLifetimesCtx *x, void *scratch, int64_t bytes,
                                             int32_t n_items) {
  const PtsimLayout *l = &x->job->layout;
  PtsimScheduleShape sh;
  struct PtsimLifetimesPeriod *pd = (struct PtsimLifetimesPeriod *)scratch;
  char *at = (char *)scratch;
  int32_t k, any = 0;
  int64_t live = period_live_max(x->live_cap, x->per_slot, x->n_gathered);
  int64_t words = ptsim_alloc_state_words(x->alloc.capacity_blocks) + live;
  if (bytes < ptsim_lifetimes_period_bytes(x->alloc.capacity_blocks, x->live_cap, x->per_slot,
                                           x->n_gathered))
    return -1;
  /* GPipe's stretches hold one more microbatch, then one fewer, every
   * period: its state never comes back */
  if (l->schedule == PTSIM_SCHEDULE_GPIPE ||
      ptsim_schedule_shape(l->schedule, (int32_t)l->pp, x->m, x->v, x->plan->microbatch_group,
                           (int32_t)x->stage, &sh) != 0 ||
      sh.items != n_items)
    return -1;
  for (k = 0; k < PTSIM_SCHEDULE_PHASES; k++) {
    ptsim_schedule_steady(&sh, k, &pd->phases[k]);
    any |= pd->phases[k].lo < pd->phases[k].hi && pd->phases[k].shift != 0;
  }
  if (!any) return -1;
  for (k = 0; k < PTSIM_SCHEDULE_PHASES; k++) pd->repeated[k] = pd->watched[k] = pd->futile[k] = 0;
  pd->phase = PTSIM_SCHEDULE_PHASES;
  pd->kmax = period_kmax(x->live_cap);
  pd->hint_ring = 2 * pd->kmax + 1;
  pd->states_max = pd->kmax + 1;
  pd->live_max = live;
  at += ptsim_scratch_align((int64_t)sizeof *pd, 8);
  pd->hints = (uint64_t *)(void *)at;
  at += ptsim_scratch_align((int64_t)pd->hint_ring * 8, 8);
  pd->states = (PeriodState *)(void *)at;
  at += ptsim_scratch_align((int64_t)pd->states_max * (int64_t)sizeof(PeriodState), 8);
  pd->ring_at = at;
  at += RING_BYTES;
  for (k = 0; k < 2; k++) {
    pd->copies[k].words = (int64_t *)(void *)at;
    at += ptsim_scratch_align(words * 8, 8);
  }
  x->period = pd;
  x->period_next = -1;
  return 0;
}

/* A stretch whose hints did not repeat once in a whole step stores no
 * states the next step: its allocator state did not come back (the free
 * set's best fits hand other addresses out every period), and a stored
 * state is compared only after its hints repeat, so storing it was all
 * cost (~11% of an interleaved stage's replay).  The hints and the
 * copy-and-compare path stay: a repeat the next step still jumps, and no
 * jump at all replays every item, which gives the same result. */
PTSIM_HD void ptsim_lifetimes_period_step(PtsimLifetimesCtx *x) {
  struct PtsimLifetimesPeriod *pd = x->period;
  int32_t k;
  if (!pd) return;
  if (pd->phase < PTSIM_SCHEDULE_PHASES) pd->watched[pd->phase] = 1; /* watched to the step's end */
  for (k = 0; k < PTSIM_SCHEDULE_PHASES; k++) {
    pd->futile[k] = pd->watched[k] && !pd->repeated[k];
    pd->repeated[k] = pd->watched[k] = 0;
  }
  pd->phase = PTSIM_SCHEDULE_PHASES;
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

/* ---- states ---- */

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
  for (k = 0; k < x->n_live; k++)
    ptsim_lifetimes_live_set(x, k, x->live[2 * k], x->live[2 * k + 1]);
}

/* The live words now (parts (b) and (c) of the state) into w: the pair
 * count, then per pair in (microbatch, chunk) order its microbatch counted
 * from the boundary, its chunk and its handles' addresses (-1: none), then
 * the gathered units' addresses.  Returns the count. */
static PTSIM_HD int64_t period_live_words(PtsimLifetimesCtx *x, int64_t *w) {
  struct PtsimLifetimesPeriod *pd = x->period;
  int64_t moved = (int64_t)pd->boundary * pd->phases[pd->phase].shift, n = 0;
  int32_t k, j;
  period_sort_live(x, 0);
  w[n++] = x->n_live;
  for (k = 0; k < x->n_live; k++) {
    const int32_t *hs = ptsim_lifetimes_slot(x, x->live[2 * k], x->live[2 * k + 1]);
    w[n++] = (int64_t)x->live[2 * k] - moved;
    w[n++] = x->live[2 * k + 1];
    for (j = 0; j < x->per_slot; j++) w[n++] = hs[j] >= 0 ? x->alloc.blocks[hs[j]].addr : -1;
  }
  for (j = 0; j < x->n_gathered; j++)
    w[n++] = x->gathered[j] >= 0 ? x->alloc.blocks[x->gathered[j]].addr : -1;
  return n;
}

/* The state now, in words, into cp. */
static PTSIM_HD void period_copy(PtsimLifetimesCtx *x, PeriodCopy *cp, int32_t item) {
  int64_t n = ptsim_alloc_state(&x->alloc, cp->words);
  cp->len = n + period_live_words(x, cp->words + n);
  cp->boundary = x->period->boundary;
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

/* Lays the ring out for this stretch: a stored state holds the blocks in
 * use now and a quarter more; as many states as RING_BYTES allows, up to
 * the longest repeat looked for. */
static PTSIM_HD void period_layout(PtsimLifetimesCtx *x) {
  struct PtsimLifetimesPeriod *pd = x->period;
  int64_t blocks = (int64_t)x->alloc.high_water + x->alloc.high_water / 4 + 64;
  int64_t entry, fit;
  int32_t k;
  if (blocks > x->alloc.capacity_blocks) blocks = x->alloc.capacity_blocks;
  entry = ptsim_scratch_align(blocks * (int64_t)sizeof(PtsimAllocBlock), 8) +
          ptsim_scratch_align(pd->live_max * 8, 8);
  fit = RING_BYTES / entry;
  pd->ring = (int32_t)(fit < pd->states_max ? fit : pd->states_max);
  if (pd->ring < 1) {
    pd->ring = -1; /* a state is larger than the ring */
    return;
  }
  pd->entry_blocks = (int32_t)blocks;
  for (k = 0; k < pd->ring; k++) {
    PeriodState *e = &pd->states[k];
    e->boundary = -1;
    e->blocks = (PtsimAllocBlock *)(void *)(pd->ring_at + (int64_t)k * entry);
    e->live =
        (int64_t *)(void *)(pd->ring_at + (int64_t)k * entry +
                            ptsim_scratch_align(blocks * (int64_t)sizeof(PtsimAllocBlock), 8));
  }
}

/* Stores the state now (boundary n, item i) in the ring. */
static PTSIM_HD void period_store(PtsimLifetimesCtx *x, int32_t n, int32_t i) {
  struct PtsimLifetimesPeriod *pd = x->period;
  PeriodState *e;
  if (pd->ring == 0) period_layout(x);
  if (pd->ring < 0) return;
  e = &pd->states[(n / pd->stride) % pd->ring];
  e->boundary = -1;
  if (ptsim_alloc_snapshot(&x->alloc, &e->alloc, e->blocks, pd->entry_blocks) != 0) return;
  e->boundary = n;
  e->item = i;
  e->differs = 0;
  e->live_len = period_live_words(x, e->live);
  ptsim_alloc_counters(&x->alloc, &e->counters);
}

/* The latest stored state a multiple of K periods before boundary n not
 * yet found to differ, or NULL. */
static PTSIM_HD PeriodState *period_stored(struct PtsimLifetimesPeriod *pd, int32_t n, int32_t K) {
  int32_t n0;
  if (pd->ring <= 0) return (PeriodState *)0;
  for (n0 = n - K; n0 >= 0 && n0 > n - pd->ring * pd->stride; n0 -= K) {
    PeriodState *e = &pd->states[(n0 / pd->stride) % pd->ring];
    if (n0 % pd->stride != 0 || e->boundary != n0) continue;
    return e->differs ? (PeriodState *)0 : e;
  }
  return (PeriodState *)0;
}

/* ---- the jump ---- */

static PTSIM_HD int period_moved(const PtsimScheduleItem *a, const PtsimScheduleItem *b,
                                 int64_t shift) {
  return a->kind == b->kind && a->chunk == b->chunk &&
         (int64_t)a->microbatch == (int64_t)b->microbatch + shift;
}

/* The state now (item i1) is the state at item i0, K periods before, with
 * counters `then`.  Skips every whole K-period block whose items are the
 * block before moved by K x shift; returns the item to run next (i1 when
 * no block can be skipped). */
static PTSIM_HD int32_t skip_repeated_blocks(PtsimLifetimesCtx *x, const PtsimScheduleItem *items,
                                             int32_t n_items, int32_t i1, int32_t i0,
                                             const PtsimAllocCounters *then, int32_t K) {
  const PtsimScheduleSteady *st = &x->period->phases[x->period->phase];
  int32_t span = i1 - i0;
  int64_t per_block = (int64_t)K * st->shift, moved;
  int32_t end = i1, k, j;
  int64_t blocks;
  while (end < n_items && period_moved(&items[end], &items[end - span], per_block)) end++;
  blocks = (end - i1) / span;
  if (blocks < 1) return i1;
  moved = blocks * per_block;
  for (k = 0; k < x->n_live; k++) {
    int64_t mb = x->live[2 * k] + moved;
    if (mb < 0 || mb >= x->m) return i1;
  }
  ptsim_alloc_repeat(&x->alloc, then, blocks);
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

/* 1 when the last `run` hints repeat those K boundaries before (the hint
 * of boundary 0 covers the warm-up and is left out). */
static PTSIM_HD int period_hints_repeat(const struct PtsimLifetimesPeriod *pd, int32_t K,
                                        int32_t run) {
  int32_t n = pd->boundary, j;
  if (n - run + 1 - K < 1) return 0;
  for (j = 0; j < run; j++)
    if (pd->hints[(n - j) % pd->hint_ring] != pd->hints[(n - j - K) % pd->hint_ring]) return 0;
  return 1;
}

static PTSIM_HD uint64_t period_hint(const PtsimLifetimesCtx *x) {
  const PtsimAllocStats *st = &x->alloc.stats;
  uint64_t h = x->trace_hash;
  h = (h ^ (uint64_t)x->alloc.next_addr) * PTSIM_LIFETIMES_HASH_PRIME;
  h = (h ^ (uint64_t)st->reserved_bytes) * PTSIM_LIFETIMES_HASH_PRIME;
  h = (h ^ (uint64_t)st->allocated_bytes) * PTSIM_LIFETIMES_HASH_PRIME;
  h = (h ^ (uint64_t)x->alloc.free_count) * PTSIM_LIFETIMES_HASH_PRIME;
  return h ^ (h >> 29);
}

/* The state now is compared with a stored one (its words in copies[0],
 * free while no copy waits for its check): the jump, or i.  A state that
 * came back with too few items left for a whole repeat ends the watch of
 * this stretch (*done). */
static PTSIM_HD int32_t period_try_stored(PtsimLifetimesCtx *x, const PtsimScheduleItem *items,
                                          int32_t n_items, int32_t i, PeriodState *e, int *done) {
  struct PtsimLifetimesPeriod *pd = x->period;
  PtsimAllocator then = e->alloc;
  PeriodCopy *was = &pd->copies[0];
  int64_t k;
  then.blocks = e->blocks;
  was->len = ptsim_alloc_state(&then, was->words);
  for (k = 0; k < e->live_len; k++) was->words[was->len + k] = e->live[k];
  was->len += e->live_len;
  period_copy(x, &pd->copies[1], i);
  if (!period_same(was, &pd->copies[1])) {
    e->differs = 1;
    return i;
  }
  *done = 1;
  return skip_repeated_blocks(x, items, n_items, i, e->item, &e->counters,
                              pd->boundary - e->boundary);
}

/* Boundary pd->boundary of the current stretch, before item i.  Returns
 * the item to run next. */
static PTSIM_HD int32_t period_boundary(PtsimLifetimesCtx *x, const PtsimScheduleItem *items,
                                        int32_t n_items, int32_t i) {
  struct PtsimLifetimesPeriod *pd = x->period;
  const PtsimScheduleSteady *st = &pd->phases[pd->phase];
  int32_t n = pd->boundary, copied = 0, K, done = 0, next = i;
  pd->hints[n % pd->hint_ring] = period_hint(x);
  x->trace_hash = 0;
  if (pd->verify_k > 0 && n == pd->copies[0].boundary + pd->verify_k) {
    PeriodCopy t;
    period_copy(x, &pd->copies[1], i);
    if (period_same(&pd->copies[0], &pd->copies[1])) {
      done = 1;
      next = skip_repeated_blocks(x, items, n_items, i, pd->copies[0].item, &pd->copies[0].counters,
                                  pd->verify_k);
    } else {
      pd->failures += 1;
      t = pd->copies[0];
      pd->copies[0] = pd->copies[1];
      pd->copies[1] = t;
      pd->verify_k = 0;
      copied = 1;
    }
  }
  for (K = 1; !done && K <= pd->kmax; K++) {
    PeriodState *e;
    if (!period_hints_repeat(pd, K, K < HINT_RUN ? K : HINT_RUN)) continue;
    pd->repeated[pd->phase] = 1;
    e = pd->verify_k == 0 && !copied ? period_stored(pd, n, K) : (PeriodState *)0;
    if (e) next = period_try_stored(x, items, n_items, i, e, &done);
    if (done || pd->verify_k > 0 || pd->failures >= MAX_FAILURES) break;
    if (period_hints_repeat(pd, K, K) && (int64_t)i + 2 * (int64_t)K * st->period <= st->hi) {
      if (!copied) period_copy(x, &pd->copies[0], i);
      pd->verify_k = K;
      break;
    }
  }
  if (done) { /* the jump, or a repeat too long for what is left: the next stretch */
    period_enter(x, pd->phase + 1, next);
    return next;
  }
  if (pd->stride > 0 && n % pd->stride == 0) period_store(x, n, i);
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
