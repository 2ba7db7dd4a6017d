/* event_queue.c — binary min-heap of slot indices over caller storage; see
 * event_queue.h for the layout and invariants. */
#include "event_queue.h"

/* ---- ordering ---- */

/* 1 when an event at (tx, sx) fires before one at (ty, sy).  Without
 * branches: which of two events comes first is as good as random, and a
 * mispredicted branch costs more than the whole comparison. */
PTSIM_HD static int before(PtsimTime tx, uint64_t sx, PtsimTime ty, uint64_t sy) {
  return (tx < ty) | ((tx == ty) & (sx < sy));
}

PTSIM_HD static void sift_up(PtsimEvent *slots, int32_t pos) {
  int32_t moving = slots[pos].heap_;
  PtsimTime mt = slots[moving].time;
  uint64_t ms = slots[moving].seq;
  while (pos > 0) {
    int32_t parent = (pos - 1) / 2;
    int32_t above = slots[parent].heap_;
    if (!before(mt, ms, slots[above].time, slots[above].seq)) break;
    slots[pos].heap_ = above;
    pos = parent;
  }
  slots[pos].heap_ = moving;
}

PTSIM_HD static void sift_down(PtsimEvent *slots, int32_t count, int32_t pos) {
  int32_t moving = slots[pos].heap_;
  PtsimTime mt = slots[moving].time;
  uint64_t ms = slots[moving].seq;
  for (;;) {
    int32_t child = 2 * pos + 1, first;
    PtsimTime ft;
    uint64_t fs;
    if (child >= count) break;
    first = slots[child].heap_;
    ft = slots[first].time;
    fs = slots[first].seq;
    if (child + 1 < count) { /* the earlier child, chosen without a branch */
      int32_t second = slots[child + 1].heap_;
      PtsimTime st = slots[second].time;
      uint64_t ss = slots[second].seq;
      int32_t right = before(st, ss, ft, fs);
      child += right;
      first = right ? second : first;
      ft = right ? st : ft;
      fs = right ? ss : fs;
    }
    if (!before(ft, fs, mt, ms)) break;
    slots[pos].heap_ = first;
    pos = child;
  }
  slots[pos].heap_ = moving;
}

/* ---- slots ---- */

PTSIM_HD static void free_slot(PtsimEventQueue *q, int32_t slot) {
  q->slots[slot].link_ = q->free_head;
  q->free_head = slot;
}

/* Removes the heap's top and frees its slot. */
PTSIM_HD static void remove_top(PtsimEventQueue *q) {
  int32_t top = q->slots[0].heap_;
  q->heap_count -= 1;
  if (q->heap_count > 0) {
    q->slots[0].heap_ = q->slots[q->heap_count].heap_;
    sift_down(q->slots, q->heap_count, 0);
  }
  free_slot(q, top);
}

/* ---- public ---- */

PTSIM_HD int32_t ptsim_event_queue_init(PtsimEventQueue *q, PtsimEvent *storage, int32_t capacity) {
  if (q == 0 || storage == 0 || capacity < 1) return PTSIM_EVENT_QUEUE_ERR_ARGS;
  q->slots = storage;
  q->capacity = capacity;
  q->heap_count = 0;
  q->pushes = 0;
  q->fresh = 0;
  q->free_head = -1;
  return PTSIM_EVENT_QUEUE_OK;
}

PTSIM_HD int64_t ptsim_event_queue_push(PtsimEventQueue *q, PtsimTime time, int32_t kind, int32_t a,
                                        int32_t b) {
  int32_t slot;
  PtsimEvent *ev;
  if (q->free_head < 0 && q->fresh == q->capacity) return PTSIM_EVENT_QUEUE_ERR_FULL;
  if (q->free_head >= 0) {
    slot = q->free_head;
    q->free_head = q->slots[slot].link_;
  } else {
    slot = q->fresh;
    q->fresh += 1;
  }
  ev = &q->slots[slot];
  ev->time = time;
  ev->seq = q->pushes;
  ev->kind = kind;
  ev->a = a;
  ev->b = b;
  ev->link_ = -1;
  q->pushes += 1;
  q->slots[q->heap_count].heap_ = slot;
  q->heap_count += 1;
  sift_up(q->slots, q->heap_count - 1);
  return (int64_t)ev->seq;
}

PTSIM_HD int32_t ptsim_event_queue_pop(PtsimEventQueue *q, PtsimEvent *out) {
  if (q->heap_count == 0) return PTSIM_EVENT_QUEUE_ERR_EMPTY;
  if (out != 0) *out = q->slots[q->slots[0].heap_];
  remove_top(q);
  return PTSIM_EVENT_QUEUE_OK;
}

PTSIM_HD int32_t ptsim_event_queue_count(const PtsimEventQueue *q) { return q->heap_count; }

PTSIM_HD PtsimEvent *ptsim_event_queue_entry(PtsimEventQueue *q, int32_t i) {
  return &q->slots[q->slots[i].heap_];
}
