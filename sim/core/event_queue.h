/* event_queue.h — the discrete-event simulator's clock: a binary min-heap of
 * events ordered by (time, seq), in storage the caller provides.
 *
 * What it is: a priority queue of small plain events.  Time is an integer
 * count of nanoseconds (PtsimTime), never a double, and every push gets a
 * sequence number from the queue, so events at equal times pop in the order
 * they were pushed (FIFO) and a run is the same every time.  An event carries
 * a kind and two int32 payload words; there is no void* payload — the engine
 * maps (kind, a, b) back to its own tables.
 *
 * What it is not: an owner of memory.  The caller hands in an array of
 * `capacity` PtsimEvent slots (a local array, a GLib-allocated block, device
 * memory) and keeps it alive as long as the queue; the queue never allocates.
 *
 * There is no cancel: the engine never takes back an event it pushed, so
 * every heap entry is a pending event (no tombstones).
 *
 * Layout inside the caller's storage: slot i holds one event (or is free) and
 * also element i of the heap array (`heap_`, a slot index) — the heap of slot
 * indices lives in the same block, so events never move while the heap is
 * reordered.  Free slots are chained through `link_`.
 *
 * Slots are handed out lazily: those at or past `fresh` have never been used
 * and are not even initialised, so making a queue costs O(1) however large
 * its capacity (the engine sizes it for the worst case and rarely uses a
 * tenth of it).
 *
 * Invariants: 0 <= heap_count <= fresh <= capacity; heap_[0..heap_count)
 * is a min-heap under (time, seq).
 *
 * Costs: push, pop O(log n); count, entry O(1).
 *
 * Core module: pure C, PTSIM_HD, no allocation, no I/O.  Only the engine owns
 * a PtsimEventQueue (see STYLE.md, LAYERING). */
#ifndef PTSIM_EVENT_QUEUE_H
#define PTSIM_EVENT_QUEUE_H

#include <stdint.h>
#include "hd.h"

/* Simulated time, integer nanoseconds. */
typedef int64_t PtsimTime;

/* Return codes (0 is success). */
#define PTSIM_EVENT_QUEUE_OK 0
#define PTSIM_EVENT_QUEUE_ERR_FULL (-1)  /* push: every slot holds a pending event */
#define PTSIM_EVENT_QUEUE_ERR_EMPTY (-1) /* pop: no pending event */
#define PTSIM_EVENT_QUEUE_ERR_ARGS (-2)  /* init: NULL storage or capacity < 1 */

/* One event.  The caller reads time..b; the fields ending in _ are the
 * queue's own bookkeeping and are never touched by callers. */
typedef struct {
  PtsimTime time; /* when it fires, ns */
  uint64_t seq;   /* assigned by push: the insertion order */
  int32_t kind;   /* the caller's event kind */
  int32_t a, b;   /* the caller's payload */
  int32_t heap_;  /* private: heap array element at this index (a slot) */
  int32_t link_;  /* private: next free slot while this slot is free, else -1 */
} PtsimEvent;

typedef struct {
  PtsimEvent *slots;  /* caller's storage, `capacity` entries (transfer none) */
  int32_t capacity;   /* number of slots */
  int32_t heap_count; /* pending events */
  int32_t free_head;  /* first recycled free slot, -1 when none */
  int32_t fresh;      /* slots [fresh, capacity) were never used */
  uint64_t pushes;    /* pushes so far: the next event's seq */
} PtsimEventQueue;

/* Makes an empty queue over storage[0..capacity).  Returns 0, or
 * PTSIM_EVENT_QUEUE_ERR_ARGS (q or storage NULL, capacity < 1). */
PTSIM_HD int32_t ptsim_event_queue_init(PtsimEventQueue *q, PtsimEvent *storage, int32_t capacity);

/* Adds an event at `time`.  Returns its seq (>= 0), or
 * PTSIM_EVENT_QUEUE_ERR_FULL when `capacity` events are pending; the queue
 * is unchanged then. */
PTSIM_HD int64_t ptsim_event_queue_push(PtsimEventQueue *q, PtsimTime time, int32_t kind, int32_t a,
                                        int32_t b);

/* Removes the earliest event (smallest time, then smallest seq) and copies
 * it to *out (out may be NULL).  Returns 0, or PTSIM_EVENT_QUEUE_ERR_EMPTY
 * when no event is pending. */
PTSIM_HD int32_t ptsim_event_queue_pop(PtsimEventQueue *q, PtsimEvent *out);

/* Number of pending (pushed, not popped) events, and the event at heap
 * position i (0 <= i < count; the position says nothing about the order).
 * For a caller that inspects every pending event, or moves them all by the
 * same time (the heap stays valid: the order of every pair is unchanged). */
PTSIM_HD int32_t ptsim_event_queue_count(const PtsimEventQueue *q);
PTSIM_HD PtsimEvent *ptsim_event_queue_entry(PtsimEventQueue *q, int32_t i);

#endif /* PTSIM_EVENT_QUEUE_H */
