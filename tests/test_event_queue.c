/* test_event_queue.c — the event queue against a sorted-array reference, FIFO
 * ties, the full-queue error. */
#include <glib.h>
#include "event_queue.h"

/* ---- reference: an array kept sorted by (time, seq) ---- */

typedef struct {
  PtsimTime time;
  int64_t seq;
  int32_t kind, a, b;
} RefEvent;

typedef struct {
  GArray *events; /* RefEvent, ascending (time, seq): the next to pop first */
} Reference;

static void ref_insert(Reference *r, const RefEvent *e) {
  guint i = r->events->len;
  while (i > 0) {
    const RefEvent *x = &g_array_index(r->events, RefEvent, i - 1);
    if (x->time < e->time || (x->time == e->time && x->seq < e->seq)) break;
    i--;
  }
  g_array_insert_val(r->events, i, *e);
}

static void test_ties_are_fifo(void) {
  g_test_summary("Events at the same time pop in push order; earlier times first");
  PtsimEvent storage[16];
  PtsimEventQueue q;
  g_assert_cmpint(ptsim_event_queue_init(&q, storage, 16), ==, 0);
  for (int i = 0; i < 10; i++) g_assert_cmpint(ptsim_event_queue_push(&q, 500, 7, i, -i), >=, 0);
  g_assert_cmpint(ptsim_event_queue_push(&q, 100, 1, 99, 0), >=, 0);
  g_assert_cmpint(ptsim_event_queue_count(&q), ==, 11);
  PtsimEvent ev;
  g_assert_cmpint(ptsim_event_queue_pop(&q, &ev), ==, 0);
  g_assert_cmpint(ev.time, ==, 100);
  g_assert_cmpint(ev.a, ==, 99);
  uint64_t last_seq = 0;
  for (int i = 0; i < 10; i++) {
    g_assert_cmpint(ptsim_event_queue_pop(&q, &ev), ==, 0);
    g_assert_cmpint(ev.time, ==, 500);
    g_assert_cmpint(ev.kind, ==, 7);
    g_assert_cmpint(ev.a, ==, i);
    g_assert_cmpint(ev.b, ==, -i);
    if (i > 0) g_assert_cmpuint(ev.seq, >, last_seq);
    last_seq = ev.seq;
  }
  g_assert_cmpint(ptsim_event_queue_pop(&q, &ev), ==, PTSIM_EVENT_QUEUE_ERR_EMPTY);
  g_assert_cmpint(ptsim_event_queue_count(&q), ==, 0);
}

static void test_full_queue(void) {
  g_test_summary("push returns -1 when every slot is pending; a pop frees its slot");
  PtsimEvent storage[4];
  PtsimEventQueue q;
  g_assert_cmpint(ptsim_event_queue_init(&q, storage, 4), ==, 0);
  for (int i = 0; i < 4; i++) ptsim_event_queue_push(&q, 10 * (4 - i), 0, i, 0);
  g_assert_cmpint(ptsim_event_queue_push(&q, 1, 0, 9, 0), ==, PTSIM_EVENT_QUEUE_ERR_FULL);
  g_assert_cmpint(ptsim_event_queue_count(&q), ==, 4);
  /* a pop frees one slot: one more push fits, the next does not */
  PtsimEvent ev;
  g_assert_cmpint(ptsim_event_queue_pop(&q, &ev), ==, 0);
  g_assert_cmpint(ev.a, ==, 3);
  g_assert_cmpint(ptsim_event_queue_push(&q, 1, 0, 9, 0), >=, 0);
  g_assert_cmpint(ptsim_event_queue_push(&q, 2, 0, 10, 0), ==, PTSIM_EVENT_QUEUE_ERR_FULL);
  g_assert_cmpint(ptsim_event_queue_pop(&q, &ev), ==, 0);
  g_assert_cmpint(ev.a, ==, 9);
  g_assert_cmpint(ptsim_event_queue_init(&q, NULL, 4), ==, PTSIM_EVENT_QUEUE_ERR_ARGS);
  g_assert_cmpint(ptsim_event_queue_init(&q, storage, 0), ==, PTSIM_EVENT_QUEUE_ERR_ARGS);
}

/* Random pushes (times from a small range so ties are common) and pops,
 * compared event by event with the reference. */
static void run_random(guint32 seed, int capacity, int steps) {
  g_autoptr(GRand) rng = g_rand_new_with_seed(seed);
  PtsimEvent *storage = g_new0(PtsimEvent, capacity);
  PtsimEventQueue q;
  Reference ref;
  ref.events = g_array_new(FALSE, FALSE, sizeof(RefEvent));
  g_assert_cmpint(ptsim_event_queue_init(&q, storage, capacity), ==, 0);
  PtsimTime now = 0;
  for (int step = 0; step < steps; step++) {
    int op = g_rand_int_range(rng, 0, 100);
    if (op < 55) { /* a little more often than pops, so the queue fills */
      RefEvent e;
      e.time = now + g_rand_int_range(rng, 0, 20);
      e.kind = g_rand_int_range(rng, 0, 5);
      e.a = g_rand_int(rng) & 0x7fffffff;
      e.b = step;
      e.seq = ptsim_event_queue_push(&q, e.time, e.kind, e.a, e.b);
      if ((int)ref.events->len == capacity) {
        g_assert_cmpint(e.seq, ==, PTSIM_EVENT_QUEUE_ERR_FULL);
      } else {
        g_assert_cmpint(e.seq, >=, 0);
        ref_insert(&ref, &e);
      }
    } else {
      PtsimEvent ev;
      int32_t rc = ptsim_event_queue_pop(&q, &ev);
      if (ref.events->len == 0) {
        g_assert_cmpint(rc, ==, PTSIM_EVENT_QUEUE_ERR_EMPTY);
      } else {
        g_assert_cmpint(rc, ==, 0);
        RefEvent want = g_array_index(ref.events, RefEvent, 0);
        g_assert_cmpint(ev.time, ==, want.time);
        g_assert_cmpint((int64_t)ev.seq, ==, want.seq);
        g_assert_cmpint(ev.kind, ==, want.kind);
        g_assert_cmpint(ev.a, ==, want.a);
        g_assert_cmpint(ev.b, ==, want.b);
        g_assert_cmpint(ev.time, >=, now);
        now = ev.time;
        g_array_remove_index(ref.events, 0);
      }
    }
    g_assert_cmpint(ptsim_event_queue_count(&q), ==, (int)ref.events->len);
  }
  g_array_free(ref.events, TRUE);
  g_free(storage);
}

static void test_random_against_reference(void) {
  g_test_summary("Random push/pop sequences match a sorted-array reference");
  run_random(12345u, 64, 20000);
  run_random(777u, 7, 5000); /* small: the queue is full often */
  run_random(2024u, 1, 500); /* one slot */
  run_random(99u, 1000, 50000);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/event-queue/ties-are-fifo", test_ties_are_fifo);
  g_test_add_func("/event-queue/full-queue", test_full_queue);
  g_test_add_func("/event-queue/random-against-reference", test_random_against_reference);
  return g_test_run();
}
