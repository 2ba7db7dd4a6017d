/* schedule_vshape.c — the orders of the V-shaped schedules ZBV and
 * DualPipeV (schedule.h), as PyTorch's torch.distributed.pipelining builds
 * them (ScheduleZBVZeroBubble, ScheduleDualPipeV; torchtitan runs those).
 *
 * Stage s holds chunk 0 (virtual stage s) and chunk 1 (virtual stage
 * 2p-1-s).  F0/F1 are the forwards of chunk 0/1, B the input-gradient
 * backward (PyTorch's "I"), W the weight-gradient one; microbatches count
 * up from the number after "@" by one per repetition.
 *
 * ZBV (Qi et al. 2024, "Zero Bubble Pipeline Parallelism", sec. 6, as
 * PyTorch writes it), m >= 2p-1, with a = m - 2p + 1 + s:
 *   2(p-s)-1 x  F0@0                      warm-up of chunk 0
 *   s        x  F1@0 F0@2(p-s)-1
 *   p-s      x  F1@s B1@0 W1@0            chunk 1's first backwards
 *   a        x  F0@2p-1-s B0@0 W0@0 F1@p B1@p-s W1@p-s      steady
 *   p-1-s    x  B0@a W0@a F1@p+a B1@p-s+a W1@p-s+a          chunk 0 done
 *   s        x  B0@m-p B1@m-s             cool-down: W's deferred
 *   p-s      x  B0@m-p+s W0@m-p
 *   s        x  W1@m-s
 *   s        x  W0@m-s
 * Forwards minus W's peak at 2p chunks on every stage (after the warm-up's
 * 2p-1 forwards and the first F1): the paper's "same peak activation
 * memory as 1F1B", p microbatches of a whole stage.
 *
 * DualPipeV (PyTorch's reading of deepseek-ai/DualPipe's dualpipev.py),
 * m >= 2p, with n = m - 2p + s + 1 and h = (s+1)/2; a full backward "BW"
 * is B and its W back to back; "(F BW)" an overlapped pair:
 *   2(p-s-1) x  F0@0
 *   s+1      x  F0@2(p-s-1) F1@0
 *   p-s-1    x  B1@0 W1@0 F1@s+1
 *   n        x  (F0@2p-s-1 BW1@p-s-1) (F1@p BW0@0)   steady; the last
 *                  stage runs its first F0 BW1 without overlap
 *   p-s-1    x  BW1@m-p (F1@m-p+s+1 BW0@n)
 *   s+1      x  chunk 1 then chunk 0, B1@m-s-1 / B0@m-p: full backwards
 *                  (BW) before repetition h, B alone from h on (for even
 *                  s, repetition h's B1 is still full); each lone B queues
 *                  its W
 *   p-s-1    x  W(queue) B0@m-p+s+1 (queuing its W)
 *   s+1      x  W(queue)
 * The queue holds s+1 W's when the sixth phase ends, so it never runs dry.
 * Forwards minus W's peak at 2p+1 chunks (the steady state's F0 before its
 * overlapped backward): DeepSeek-V3's "PP+1" activations per device, in
 * the V's half-stage chunks.
 *
 * Every phase is `reps` repetitions of a pattern of at most 6 items, each
 * item's microbatch one more per repetition: a walk over the phases finds
 * item i, or the index of an item, in O(1) per phase.  Core module: pure C,
 * PTSIM_HD, no allocation. */
#include "schedule.h"

#define F_ PTSIM_SCHEDULE_ITEM_FORWARD
#define B_ PTSIM_SCHEDULE_ITEM_BACKWARD_INPUT
#define W_ PTSIM_SCHEDULE_ITEM_BACKWARD_WEIGHT
#define SLOTS 6

/* What a walk does with the phases it passes. */
enum { WALK_BUILD = 0, WALK_AT = 1, WALK_FIND = 2, WALK_LAST = 3, WALK_PEAK = 4 };

typedef struct {
  int32_t mode;
  int32_t pos;            /* items before the current phase */
  int32_t done;           /* AT / FIND: answered */
  PtsimScheduleItem *out; /* BUILD: the order */
  int32_t target;         /* AT: the index sought */
  PtsimScheduleItem item; /* AT: the answer; FIND/LAST: the item (kind class) sought */
  int32_t overlapped;     /* AT: the answer is the B of an overlapped pair */
  int32_t found;          /* FIND: the index; LAST: the largest index; -1: none */
  int64_t weight[2];      /* PEAK: what a forward of chunk c holds until its W */
  int64_t held, peak;     /* PEAK: held now, the most held after any item */
} Walk;

typedef struct {
  int32_t n;
  int32_t kind[SLOTS], chunk[SLOTS], mb[SLOTS], overlap[SLOTS];
} Pattern;

PTSIM_HD static void pat_start(Pattern *pt) { pt->n = 0; }

PTSIM_HD static void pat(Pattern *pt, int32_t kind, int32_t chunk, int32_t mb, int32_t overlap) {
  pt->kind[pt->n] = kind;
  pt->chunk[pt->n] = chunk;
  pt->mb[pt->n] = mb;
  pt->overlap[pt->n] = overlap;
  pt->n += 1;
}

/* B and BACKWARD both name a stage's backward (schedule.h). */
PTSIM_HD static int32_t kind_class(int32_t kind) {
  return kind == PTSIM_SCHEDULE_ITEM_BACKWARD ? B_ : kind;
}

/* One phase: `reps` repetitions of the pattern. */
PTSIM_HD static void phase(Walk *w, int32_t reps, const Pattern *pt) {
  int32_t r, j, len = pt->n * (reps > 0 ? reps : 0);
  if (w->done || len == 0) return;
  switch (w->mode) {
  case WALK_BUILD:
    for (r = 0; r < reps; r++)
      for (j = 0; j < pt->n; j++) {
        PtsimScheduleItem *it = &w->out[w->pos + r * pt->n + j];
        it->kind = pt->kind[j];
        it->microbatch = pt->mb[j] + r;
        it->chunk = pt->chunk[j];
      }
    break;
  case WALK_AT:
    if (w->target < w->pos + len) {
      r = (w->target - w->pos) / pt->n;
      j = w->target - w->pos - r * pt->n;
      w->item.kind = pt->kind[j];
      w->item.microbatch = pt->mb[j] + r;
      w->item.chunk = pt->chunk[j];
      w->overlapped = pt->overlap[j];
      w->done = 1;
      return;
    }
    break;
  case WALK_FIND:
    for (j = 0; j < pt->n; j++) {
      r = w->item.microbatch - pt->mb[j];
      if (pt->kind[j] == w->item.kind && pt->chunk[j] == w->item.chunk && r >= 0 && r < reps) {
        w->found = w->pos + r * pt->n + j;
        w->done = 1;
        return;
      }
    }
    break;
  case WALK_PEAK: {
    /* held after item j of repetition r: held + r * delta + prefix(j);
     * linear in r, so its most is at the first or the last repetition */
    int64_t prefix = 0, most = 0, delta;
    for (j = 0; j < pt->n; j++) {
      prefix += pt->kind[j] == F_   ? w->weight[pt->chunk[j]]
                : pt->kind[j] == W_ ? -w->weight[pt->chunk[j]]
                                    : 0;
      if (j == 0 || prefix > most) most = prefix;
    }
    delta = prefix;
    most += w->held + (delta > 0 ? (int64_t)(reps - 1) * delta : 0);
    if (most > w->peak) w->peak = most;
    w->held += (int64_t)reps * delta;
    break;
  }
  case WALK_LAST:
  default:
    for (j = 0; j < pt->n; j++)
      if (pt->kind[j] == w->item.kind && w->pos + (reps - 1) * pt->n + j > w->found)
        w->found = w->pos + (reps - 1) * pt->n + j;
    break;
  }
  w->pos += len;
}

/* ZBV, the phases of the header comment. */
PTSIM_HD static void walk_zbv(Walk *w, int32_t p, int32_t m, int32_t s) {
  Pattern pt;
  int32_t a = m - 2 * p + 1 + s;
  pat_start(&pt);
  pat(&pt, F_, 0, 0, 0);
  phase(w, 2 * (p - s) - 1, &pt);
  pat_start(&pt);
  pat(&pt, F_, 1, 0, 0);
  pat(&pt, F_, 0, 2 * (p - s) - 1, 0);
  phase(w, s, &pt);
  pat_start(&pt);
  pat(&pt, F_, 1, s, 0);
  pat(&pt, B_, 1, 0, 0);
  pat(&pt, W_, 1, 0, 0);
  phase(w, p - s, &pt);
  pat_start(&pt);
  pat(&pt, F_, 0, 2 * p - 1 - s, 0);
  pat(&pt, B_, 0, 0, 0);
  pat(&pt, W_, 0, 0, 0);
  pat(&pt, F_, 1, p, 0);
  pat(&pt, B_, 1, p - s, 0);
  pat(&pt, W_, 1, p - s, 0);
  phase(w, a, &pt);
  pat_start(&pt);
  pat(&pt, B_, 0, a, 0);
  pat(&pt, W_, 0, a, 0);
  pat(&pt, F_, 1, p + a, 0);
  pat(&pt, B_, 1, p - s + a, 0);
  pat(&pt, W_, 1, p - s + a, 0);
  phase(w, p - 1 - s, &pt);
  pat_start(&pt);
  pat(&pt, B_, 0, m - p, 0);
  pat(&pt, B_, 1, m - s, 0);
  phase(w, s, &pt);
  pat_start(&pt);
  pat(&pt, B_, 0, m - p + s, 0);
  pat(&pt, W_, 0, m - p, 0);
  phase(w, p - s, &pt);
  pat_start(&pt);
  pat(&pt, W_, 1, m - s, 0);
  phase(w, s, &pt);
  pat_start(&pt);
  pat(&pt, W_, 0, m - s, 0);
  phase(w, s, &pt);
}

/* DualPipeV's W queue after its sixth phase: entry k (0 <= k < p) as
 * (chunk, microbatch).  The sixth phase queues, from repetition h on,
 * B1@m-s-1+i then B0@m-p+i (for even s, repetition h queues B0 only); the
 * seventh queues B0@m-p+s+1.. one by one. */
PTSIM_HD static void dualpipev_queued(int32_t p, int32_t m, int32_t s, int32_t k, int32_t *chunk,
                                      int32_t *mb) {
  int32_t h = (s + 1) / 2, j = k;
  if (k >= s + 1) { /* the seventh phase's, in order */
    *chunk = 0;
    *mb = m - p + k;
    return;
  }
  if (s % 2 == 0) {
    if (k == 0) {
      *chunk = 0;
      *mb = m - p + h;
      return;
    }
    j = k - 1;
    h += 1; /* the pairs start one repetition later */
  }
  *chunk = j % 2 == 0 ? 1 : 0;
  *mb = (*chunk == 1 ? m - s - 1 : m - p) + h + j / 2;
}

/* DualPipeV, the phases of the header comment. */
PTSIM_HD static void walk_dualpipev(Walk *w, int32_t p, int32_t m, int32_t s) {
  Pattern pt;
  int32_t n = m - 2 * p + s + 1, h = (s + 1) / 2, k, c, mb, first = 0;
  pat_start(&pt);
  pat(&pt, F_, 0, 0, 0);
  phase(w, 2 * (p - s - 1), &pt);
  pat_start(&pt);
  pat(&pt, F_, 0, 2 * (p - s - 1), 0);
  pat(&pt, F_, 1, 0, 0);
  phase(w, s + 1, &pt);
  pat_start(&pt);
  pat(&pt, B_, 1, 0, 0);
  pat(&pt, W_, 1, 0, 0);
  pat(&pt, F_, 1, s + 1, 0);
  phase(w, p - s - 1, &pt);
  /* steady: the last stage's first F0 and BW1 run apart */
  if (s == p - 1) {
    pat_start(&pt);
    pat(&pt, F_, 0, 2 * p - s - 1, 0);
    pat(&pt, B_, 1, p - s - 1, 0);
    pat(&pt, W_, 1, p - s - 1, 0);
    pat(&pt, F_, 1, p, 0);
    pat(&pt, B_, 0, 0, 1);
    pat(&pt, W_, 0, 0, 0);
    phase(w, 1, &pt);
    first = 1;
  }
  pat_start(&pt);
  pat(&pt, F_, 0, 2 * p - s - 1 + first, 0);
  pat(&pt, B_, 1, p - s - 1 + first, 1);
  pat(&pt, W_, 1, p - s - 1 + first, 0);
  pat(&pt, F_, 1, p + first, 0);
  pat(&pt, B_, 0, first, 1);
  pat(&pt, W_, 0, first, 0);
  phase(w, n - first, &pt);
  pat_start(&pt);
  pat(&pt, B_, 1, m - p, 0);
  pat(&pt, W_, 1, m - p, 0);
  pat(&pt, F_, 1, m - p + s + 1, 0);
  pat(&pt, B_, 0, n, 1);
  pat(&pt, W_, 0, n, 0);
  phase(w, p - s - 1, &pt);
  /* sixth: full backwards, then B's alone */
  pat_start(&pt);
  pat(&pt, B_, 1, m - s - 1, 0);
  pat(&pt, W_, 1, m - s - 1, 0);
  pat(&pt, B_, 0, m - p, 0);
  pat(&pt, W_, 0, m - p, 0);
  phase(w, h, &pt);
  pat_start(&pt);
  pat(&pt, B_, 1, m - s - 1 + h, 0);
  if (s % 2 == 0) pat(&pt, W_, 1, m - s - 1 + h, 0);
  pat(&pt, B_, 0, m - p + h, 0);
  phase(w, 1, &pt);
  pat_start(&pt);
  pat(&pt, B_, 1, m - s + h, 0);
  pat(&pt, B_, 0, m - p + h + 1, 0);
  phase(w, s - h, &pt);
  /* seventh and eighth: the queue drains one W at a time */
  for (k = 0; k < p && !w->done; k++) {
    dualpipev_queued(p, m, s, k, &c, &mb);
    pat_start(&pt);
    pat(&pt, W_, c, mb, 0);
    if (k < p - s - 1) pat(&pt, B_, 0, m - p + s + 1 + k, 0);
    phase(w, 1, &pt);
  }
}

PTSIM_HD static void walk(Walk *w, int32_t kind, int32_t p, int32_t m, int32_t s) {
  w->pos = 0;
  w->done = 0;
  w->overlapped = 0;
  if (kind == PTSIM_SCHEDULE_ZBV)
    walk_zbv(w, p, m, s);
  else
    walk_dualpipev(w, p, m, s);
}

PTSIM_HD int32_t ptsim_schedule_vshape_check(PtsimSchedule kind, int32_t p, int32_t m, int32_t v) {
  if (v != 2) return PTSIM_SCHEDULE_ERR_V_SHAPE;
  if (kind == PTSIM_SCHEDULE_ZBV && m < 2 * p - 1) return PTSIM_SCHEDULE_ERR_V_SHAPE;
  if (kind == PTSIM_SCHEDULE_DUALPIPEV && m < 2 * p) return PTSIM_SCHEDULE_ERR_V_SHAPE;
  return 0;
}

PTSIM_HD int32_t ptsim_schedule_vshape_build(PtsimSchedule kind, int32_t p, int32_t m,
                                             int32_t stage, PtsimScheduleItem *out) {
  Walk w;
  w.mode = WALK_BUILD;
  w.out = out;
  walk(&w, (int32_t)kind, p, m, stage);
  return w.pos;
}

PTSIM_HD void ptsim_schedule_vshape_item_at(const PtsimScheduleShape *sh, int32_t index,
                                            PtsimScheduleItem *out) {
  Walk w;
  w.mode = WALK_AT;
  w.target = index;
  w.item.kind = F_;
  w.item.microbatch = 0;
  w.item.chunk = 0;
  walk(&w, sh->kind, sh->p, sh->m, sh->stage);
  *out = w.item;
}

PTSIM_HD int32_t ptsim_schedule_vshape_index_of(const PtsimScheduleShape *sh, int32_t item_kind,
                                                int32_t microbatch, int32_t chunk) {
  Walk w;
  if (microbatch < 0 || microbatch >= sh->m || chunk < 0 || chunk > 1) return -1;
  w.mode = WALK_FIND;
  w.item.kind = kind_class(item_kind);
  w.item.microbatch = microbatch;
  w.item.chunk = chunk;
  w.found = -1;
  walk(&w, sh->kind, sh->p, sh->m, sh->stage);
  return w.found;
}

PTSIM_HD int32_t ptsim_schedule_vshape_last_index(const PtsimScheduleShape *sh, int32_t item_kind) {
  Walk w;
  w.mode = WALK_LAST;
  w.item.kind = kind_class(item_kind);
  w.found = -1;
  walk(&w, sh->kind, sh->p, sh->m, sh->stage);
  return w.found;
}

PTSIM_HD int64_t ptsim_schedule_vshape_peak(PtsimSchedule kind, int32_t p, int32_t m, int32_t stage,
                                            int64_t w0, int64_t w1) {
  Walk w;
  w.mode = WALK_PEAK;
  w.weight[0] = w0;
  w.weight[1] = w1;
  w.held = w.peak = 0;
  walk(&w, (int32_t)kind, p, m, stage);
  return w.peak;
}

PTSIM_HD int32_t ptsim_schedule_overlapped(const PtsimScheduleShape *sh, int32_t index) {
  Walk w;
  if (sh->kind != PTSIM_SCHEDULE_DUALPIPEV || index < 0 || index >= sh->items) return 0;
  w.mode = WALK_AT;
  w.target = index;
  walk(&w, sh->kind, sh->p, sh->m, sh->stage);
  return w.overlapped;
}
