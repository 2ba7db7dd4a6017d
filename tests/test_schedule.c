/* test_schedule.c — pipeline orders against hand-drawn cases, structural
 * properties over many (p, m, v), bubble and in-flight formulas through the
 * uniform simulator, error codes. */
#include <string.h>
#include <glib.h>
#include "plan.h"
#include "schedule.h"

/* ---- helpers ---- */

/* A scratch sized for (kind, p, m, v, g); free with scratch_free. */
static PtsimScheduleScratch scratch_new(PtsimSchedule kind, int p, int m, int v, int g) {
  PtsimScheduleScratch s;
  int n = ptsim_schedule_num_items(kind, p, m, v, g);
  g_assert_cmpint(n, >, 0);
  s.order_stride = n;
  s.orders = g_new(PtsimScheduleItem, (gsize)p * (gsize)n);
  s.finish_len = 3 * (int64_t)p * m * v;
  s.finish = g_new(PtsimTime, (gsize)s.finish_len);
  return s;
}

static void scratch_free(PtsimScheduleScratch *s) {
  g_free(s->orders);
  g_free(s->finish);
}

/* Writes an order as "F0 B0 I1 W2 F3c1 ..." (F forward, B backward, I
 * backward-input, W backward-weight; cN = chunk N when v > 1). */
static char *order_string(const PtsimScheduleItem *items, int n, int v) {
  GString *out = g_string_new(NULL);
  for (int i = 0; i < n; i++) {
    static const char letters[] = "FBIW";
    if (i > 0) g_string_append_c(out, ' ');
    g_string_append_printf(out, "%c%d", letters[items[i].kind], items[i].microbatch);
    if (v > 1) g_string_append_printf(out, "c%d", items[i].chunk);
  }
  return g_string_free(out, FALSE);
}

static void check_order(PtsimSchedule kind, int p, int m, int v, int g, int stage,
                        const char *expected) {
  PtsimScheduleItem items[256];
  int n = ptsim_schedule_build(kind, p, m, v, g, stage, items, 256);
  g_assert_cmpint(n, >, 0);
  g_autofree char *got = order_string(items, n, v);
  g_assert_cmpstr(got, ==, expected);
}

static const PtsimSchedule all_kinds[] = {PTSIM_SCHEDULE_GPIPE, PTSIM_SCHEDULE_1F1B,
                                          PTSIM_SCHEDULE_INTERLEAVED, PTSIM_SCHEDULE_ZB_H1};

/* ---- hand-drawn orders ---- */

static void test_hand_1f1b(void) {
  g_test_summary("1F1B p=2 m=4: stage 0 warms up with one forward, stage 1 with none");
  check_order(PTSIM_SCHEDULE_1F1B, 2, 4, 1, 0, 0, "F0 F1 B0 F2 B1 F3 B2 B3");
  check_order(PTSIM_SCHEDULE_1F1B, 2, 4, 1, 0, 1, "F0 B0 F1 B1 F2 B2 F3 B3");
  /* p=4 m=4, stage 0: three warm-up forwards, one steady pair, cool-down */
  check_order(PTSIM_SCHEDULE_1F1B, 4, 4, 1, 0, 0, "F0 F1 F2 F3 B0 B1 B2 B3");
  check_order(PTSIM_SCHEDULE_1F1B, 4, 4, 1, 0, 2, "F0 F1 B0 F2 B1 F3 B2 B3");
  /* fewer microbatches than stages: warm-up capped at m */
  check_order(PTSIM_SCHEDULE_1F1B, 4, 2, 1, 0, 0, "F0 F1 B0 B1");
}

static void test_hand_gpipe(void) {
  g_test_summary("GPipe p=2 m=4: all forwards, then backwards in reverse microbatch order");
  check_order(PTSIM_SCHEDULE_GPIPE, 2, 4, 1, 0, 0, "F0 F1 F2 F3 B3 B2 B1 B0");
  check_order(PTSIM_SCHEDULE_GPIPE, 2, 4, 1, 0, 1, "F0 F1 F2 F3 B3 B2 B1 B0");
}

static void test_hand_interleaved(void) {
  g_test_summary("Interleaved p=2 v=2 m=4: Megatron-LM's order (warm-up 4 and 2)");
  /* virtual k:   0    1    2    3    4    5    6    7
   * forward:   0c0  1c0  0c1  1c1  2c0  3c0  2c1  3c1
   * backward:  0c1  1c1  0c0  1c0  2c1  3c1  2c0  3c0 */
  check_order(PTSIM_SCHEDULE_INTERLEAVED, 2, 4, 2, 0, 0,
              "F0c0 F1c0 F0c1 F1c1 "
              "F2c0 B0c1 F3c0 B1c1 F2c1 B0c0 F3c1 B1c0 "
              "B2c1 B3c1 B2c0 B3c0");
  check_order(PTSIM_SCHEDULE_INTERLEAVED, 2, 4, 2, 0, 1,
              "F0c0 F1c0 "
              "F0c1 B0c1 F1c1 B1c1 F2c0 B0c0 F3c0 B1c0 F2c1 B2c1 F3c1 B3c1 "
              "B2c0 B3c0");
}

static void test_hand_groups(void) {
  g_test_summary("Interleaved in microbatch groups: p=4 v=2 m=5 g=5 and Megatron-LM's own "
                 "p=2 v=2 m=5 g=3, written out from its get_schedule_table");
  /* p=4 v=2 m=5 g=5 (5 microbatches, not a multiple of pp 4: Megatron-LM
   * runs them with --microbatch-group-size-per-virtual-pipeline-stage 5).
   * get_schedule_table: groups of 5 from 0; 0 + 5 >= 5, so the one group
   * is the last, microbatches 0..4, listed chunk by chunk:
   *   virtual k:  0    1    2    3    4    5    6    7    8    9
   *   forward:   0c0  1c0  2c0  3c0  4c0  0c1  1c1  2c1  3c1  4c1
   *   backward:  0c1  1c1  2c1  3c1  4c1  0c0  1c0  2c0  3c0  4c0
   * (a backward reverses the chunk: v-1-c).  Warm-up (get_pp_rank_
   * microbatches): (p-s-1)*2 + (v-1)*g = 11, 9, 7, 5 on stages 0..3, at
   * most m*v = 10; then F(w+k), B(k) for k < 10-w; then the rest of B. */
  check_order(PTSIM_SCHEDULE_INTERLEAVED, 4, 5, 2, 5, 0,
              "F0c0 F1c0 F2c0 F3c0 F4c0 F0c1 F1c1 F2c1 F3c1 F4c1 "
              "B0c1 B1c1 B2c1 B3c1 B4c1 B0c0 B1c0 B2c0 B3c0 B4c0");
  check_order(PTSIM_SCHEDULE_INTERLEAVED, 4, 5, 2, 5, 1,
              "F0c0 F1c0 F2c0 F3c0 F4c0 F0c1 F1c1 F2c1 F3c1 "
              "F4c1 B0c1 "
              "B1c1 B2c1 B3c1 B4c1 B0c0 B1c0 B2c0 B3c0 B4c0");
  check_order(PTSIM_SCHEDULE_INTERLEAVED, 4, 5, 2, 5, 2,
              "F0c0 F1c0 F2c0 F3c0 F4c0 F0c1 F1c1 "
              "F2c1 B0c1 F3c1 B1c1 F4c1 B2c1 "
              "B3c1 B4c1 B0c0 B1c0 B2c0 B3c0 B4c0");
  check_order(PTSIM_SCHEDULE_INTERLEAVED, 4, 5, 2, 5, 3,
              "F0c0 F1c0 F2c0 F3c0 F4c0 "
              "F0c1 B0c1 F1c1 B1c1 F2c1 B2c1 F3c1 B3c1 F4c1 B4c1 "
              "B0c0 B1c0 B2c0 B3c0 B4c0");
  /* p=2 v=2 m=5 g=3, model_parallel_config.py's example: groups from 0
   * (0 + 3 < 5: microbatches 0..2) and from 3 (3 + 3 >= 5: the last, 3..4):
   *   virtual k:  0    1    2    3    4    5    6    7    8    9
   *   forward:   0c0  1c0  2c0  0c1  1c1  2c1  3c0  4c0  3c1  4c1
   *   backward:  0c1  1c1  2c1  0c0  1c0  2c0  3c1  4c1  3c0  4c0
   * ("rank 0 | 0 1 2 0 1 2 3 4 3 4").  Warm-up (2-s-1)*2 + 1*3 = 5, 3. */
  check_order(PTSIM_SCHEDULE_INTERLEAVED, 2, 5, 2, 3, 0,
              "F0c0 F1c0 F2c0 F0c1 F1c1 "
              "F2c1 B0c1 F3c0 B1c1 F4c0 B2c1 F3c1 B0c0 F4c1 B1c0 "
              "B2c0 B3c1 B4c1 B3c0 B4c0");
  check_order(PTSIM_SCHEDULE_INTERLEAVED, 2, 5, 2, 3, 1,
              "F0c0 F1c0 F2c0 "
              "F0c1 B0c1 F1c1 B1c1 F2c1 B2c1 F3c0 B0c0 F4c0 B1c0 F3c1 B2c0 F4c1 B3c1 "
              "B4c1 B3c0 B4c0");
  /* g = p is the default: the same order as group size 0 */
  PtsimScheduleItem a[64], b[64];
  g_assert_cmpint(ptsim_schedule_build(PTSIM_SCHEDULE_INTERLEAVED, 4, 8, 2, 4, 1, a, 64), ==, 32);
  g_assert_cmpint(ptsim_schedule_build(PTSIM_SCHEDULE_INTERLEAVED, 4, 8, 2, 0, 1, b, 64), ==, 32);
  g_assert_cmpmem(a, sizeof a[0] * 32, b, sizeof b[0] * 32);
}

static void test_hand_zb_h1(void) {
  g_test_summary("ZB-H1 p=2 m=4: 1F1B warm-up, stage s defers its W's by s microbatches");
  check_order(PTSIM_SCHEDULE_ZB_H1, 2, 4, 1, 0, 0, "F0 F1 I0 W0 F2 I1 W1 F3 I2 W2 I3 W3");
  check_order(PTSIM_SCHEDULE_ZB_H1, 2, 4, 1, 0, 1, "F0 I0 F1 I1 W0 F2 I2 W1 F3 I3 W2 W3");
}

/* ---- structure over many shapes ---- */

/* Calls fn for every valid (kind, p, m, v, g) with p 1..8, m 1..16, v 1..4;
 * g 0 (pp), and for the interleaved schedule every group size from p to
 * m that Megatron-LM accepts. */
typedef void (*ShapeFn)(PtsimSchedule kind, int p, int m, int v, int g);

static void for_each_shape(ShapeFn fn) {
  for (guint k = 0; k < G_N_ELEMENTS(all_kinds); k++)
    for (int p = 1; p <= 8; p++)
      for (int m = 1; m <= 16; m++)
        for (int v = 1; v <= 4; v++)
          for (int g = 0; g <= (all_kinds[k] == PTSIM_SCHEDULE_INTERLEAVED ? m : 0); g++)
            if ((g == 0 || g >= p) && ptsim_schedule_check(all_kinds[k], p, m, v, g) == 0)
              fn(all_kinds[k], p, m, v, g);
}

static void check_once(PtsimSchedule kind, int p, int m, int v, int g) {
  int n = ptsim_schedule_num_items(kind, p, m, v, g);
  PtsimScheduleItem *items = g_new(PtsimScheduleItem, n);
  /* position of each (class, chunk, mb): class 0 F, 1 B or I, 2 W */
  int *seen = g_new(int, 3 * m * v);
  for (int s = 0; s < p; s++) {
    for (int i = 0; i < 3 * m * v; i++) seen[i] = -1;
    g_assert_cmpint(ptsim_schedule_build(kind, p, m, v, g, s, items, n), ==, n);
    for (int i = 0; i < n; i++) {
      g_assert_cmpint(items[i].microbatch, >=, 0);
      g_assert_cmpint(items[i].microbatch, <, m);
      g_assert_cmpint(items[i].chunk, >=, 0);
      g_assert_cmpint(items[i].chunk, <, v);
      int cls = items[i].kind == PTSIM_SCHEDULE_ITEM_FORWARD           ? 0
                : items[i].kind == PTSIM_SCHEDULE_ITEM_BACKWARD_WEIGHT ? 2
                                                                       : 1;
      if (kind == PTSIM_SCHEDULE_ZB_H1)
        g_assert_cmpint(items[i].kind, !=, PTSIM_SCHEDULE_ITEM_BACKWARD);
      else
        g_assert_cmpint(items[i].kind, <=, PTSIM_SCHEDULE_ITEM_BACKWARD);
      int slot = (cls * v + items[i].chunk) * m + items[i].microbatch;
      g_assert_cmpint(seen[slot], ==, -1); /* at most once */
      seen[slot] = i;
    }
    for (int c = 0; c < v; c++)
      for (int mb = 0; mb < m; mb++) {
        int f = seen[(0 * v + c) * m + mb], b = seen[(1 * v + c) * m + mb];
        g_assert_cmpint(f, >=, 0); /* exactly once */
        g_assert_cmpint(b, >, f);  /* backward after its forward */
        if (kind == PTSIM_SCHEDULE_ZB_H1)
          g_assert_cmpint(seen[(2 * v + c) * m + mb], >, b); /* W after its B */
      }
  }
  g_free(seen);
  g_free(items);
}

static void test_each_item_once(void) {
  g_test_summary("Every (microbatch, chunk) is forwarded and backwarded exactly once per stage");
  for_each_shape(check_once);
}

static void check_no_deadlock(PtsimSchedule kind, int p, int m, int v, int g) {
  PtsimScheduleScratch s = scratch_new(kind, p, m, v, g);
  PtsimScheduleSimResult r;
  g_assert_cmpint(ptsim_schedule_simulate_uniform(kind, p, m, v, g, 1000, 2000, 700, &s, &r), ==,
                  0);
  g_assert_cmpint(r.busy_time, ==, (PtsimTime)m * v * 3700);
  g_assert_cmpint(r.step_time, >=, r.busy_time);
  for (int st = 0; st < p; st++) g_assert_cmpint(r.stage_end[st], <=, r.step_time);
  scratch_free(&s);
}

static void test_no_deadlock(void) {
  g_test_summary("Every order completes under the pipeline dependencies");
  for_each_shape(check_no_deadlock);
}

/* ---- closed form ---- */

static void check_closed_form(PtsimSchedule kind, int p, int m, int v, int g) {
  int n = ptsim_schedule_num_items(kind, p, m, v, g);
  PtsimScheduleItem *items = g_new(PtsimScheduleItem, n);
  for (int s = 0; s < p; s++) {
    PtsimScheduleShape sh;
    g_assert_cmpint(ptsim_schedule_shape(kind, p, m, v, g, s, &sh), ==, 0);
    g_assert_cmpint(sh.items, ==, n);
    g_assert_cmpint(ptsim_schedule_build(kind, p, m, v, g, s, items, n), ==, n);
    for (int i = 0; i < n; i++) {
      PtsimScheduleItem it;
      ptsim_schedule_item_at(&sh, i, &it);
      g_assert_cmpint(it.kind, ==, items[i].kind);
      g_assert_cmpint(it.microbatch, ==, items[i].microbatch);
      g_assert_cmpint(it.chunk, ==, items[i].chunk);
      g_assert_cmpint(ptsim_schedule_index_of(&sh, it.kind, it.microbatch, it.chunk), ==, i);
    }
    g_assert_cmpint(ptsim_schedule_index_of(&sh, PTSIM_SCHEDULE_ITEM_FORWARD, m, 0), ==, -1);
    int last_f = -1, last_b = -1;
    for (int i = 0; i < n; i++) {
      if (items[i].kind == PTSIM_SCHEDULE_ITEM_FORWARD) last_f = i;
      if (items[i].kind == PTSIM_SCHEDULE_ITEM_BACKWARD ||
          items[i].kind == PTSIM_SCHEDULE_ITEM_BACKWARD_INPUT)
        last_b = i;
    }
    g_assert_cmpint(ptsim_schedule_last_index(&sh, PTSIM_SCHEDULE_ITEM_FORWARD), ==, last_f);
    g_assert_cmpint(ptsim_schedule_last_index(&sh, PTSIM_SCHEDULE_ITEM_BACKWARD), ==, last_b);
  }
  g_free(items);
}

static void test_closed_form(void) {
  g_test_summary("item_at(i) is ptsim_schedule_build's item i, index_of is its inverse, "
                 "last_index finds the last F and B");
  for_each_shape(check_closed_form);
}

static void check_steady(PtsimSchedule kind, int p, int m, int v, int g) {
  for (int s = 0; s < p; s++) {
    PtsimScheduleShape sh;
    g_assert_cmpint(ptsim_schedule_shape(kind, p, m, v, g, s, &sh), ==, 0);
    for (int phase = 0; phase < PTSIM_SCHEDULE_PHASES; phase++) {
      PtsimScheduleSteady st;
      ptsim_schedule_steady(&sh, phase, &st);
      g_assert_cmpint(st.period, >=, 1);
      g_assert_cmpint(st.lo, >=, 0);
      g_assert_cmpint(st.hi, <=, sh.items);
      for (int i = st.lo; i + st.period < st.hi; i++) {
        PtsimScheduleItem a, b;
        ptsim_schedule_item_at(&sh, i, &a);
        ptsim_schedule_item_at(&sh, i + st.period, &b);
        g_assert_cmpint(b.kind, ==, a.kind);
        g_assert_cmpint(b.chunk, ==, a.chunk);
        g_assert_cmpint(b.microbatch, ==, a.microbatch + st.shift);
      }
    }
  }
}

static void test_steady_repeats(void) {
  g_test_summary("In a steady stretch, item i + period is item i moved by shift microbatches");
  for_each_shape(check_steady);
  /* the stretches are as long as schedule.h says: 1F1B stage 0 of p=4,
   * m=16 has 12 steady pairs after 3 warm-up forwards */
  PtsimScheduleShape sh;
  PtsimScheduleSteady st;
  g_assert_cmpint(ptsim_schedule_shape(PTSIM_SCHEDULE_1F1B, 4, 16, 1, 0, 0, &sh), ==, 0);
  ptsim_schedule_steady(&sh, 0, &st);
  g_assert_cmpint(st.lo, ==, 3);
  g_assert_cmpint(st.hi, ==, 3 + 2 * 13);
}

/* The engine's shortcut reads a stage's pending inputs as a prefix of each
 * input stream: that holds because a producer finishes in order and every
 * stream's producing items come in the consumer's order.  The loss needs no
 * order: its F runs earlier on the same stage, so it is always there. */
static void check_streams_in_order(PtsimSchedule kind, int p, int m, int v, int g) {
  PtsimVstages placement;
  g_assert_cmpint(ptsim_schedule_vstages(kind, p, v, &placement), ==, 0);
  for (int s = 0; s < p; s++) {
    PtsimScheduleShape sh, from_sh[PTSIM_MAX_STAGES];
    int last[4] = {-1, -1, -1, -1};
    g_assert_cmpint(ptsim_schedule_shape(kind, p, m, v, g, s, &sh), ==, 0);
    for (int t = 0; t < p; t++)
      g_assert_cmpint(ptsim_schedule_shape(kind, p, m, v, g, t, &from_sh[t]), ==, 0);
    for (int i = 0; i < sh.items; i++) {
      PtsimScheduleItem it, from;
      int32_t from_stage = -1;
      ptsim_schedule_item_at(&sh, i, &it);
      int input = ptsim_schedule_input(&placement, s, &it, &from_stage, &from);
      if (input == PTSIM_SCHEDULE_INPUT_NONE) continue;
      int j = ptsim_schedule_index_of(&from_sh[from_stage], from.kind, from.microbatch, from.chunk);
      g_assert_cmpint(j, >=, 0);
      if (input == PTSIM_SCHEDULE_INPUT_LOSS) { /* own F: earlier in the order, any order */
        g_assert_cmpint(j, <, i);
        continue;
      }
      g_assert_cmpint(j, >, last[input]);
      last[input] = j;
    }
  }
}

static void test_streams_in_order(void) {
  g_test_summary("Each input stream of a stage is produced in the order the stage consumes it");
  for_each_shape(check_streams_in_order);
}

/* ---- bubbles ---- */

static PtsimTime step_of(PtsimSchedule kind, int p, int m, int v, PtsimTime tf, PtsimTime tb,
                         PtsimTime tw, double *bubble) {
  PtsimScheduleScratch s = scratch_new(kind, p, m, v, 0);
  PtsimScheduleSimResult r;
  g_assert_cmpint(ptsim_schedule_simulate_uniform(kind, p, m, v, 0, tf, tb, tw, &s, &r), ==, 0);
  scratch_free(&s);
  if (bubble != NULL) *bubble = r.bubble_fraction;
  return r.step_time;
}

static void test_bubble_1f1b_gpipe(void) {
  g_test_summary("1F1B and GPipe with t_b = 2 t_f: bubble (p-1)/(m+p-1), i.e. (p-1)/m of ideal");
  for (int p = 1; p <= 8; p++)
    for (int m = 1; m <= 16; m++)
      for (int k = 0; k < 2; k++) {
        PtsimSchedule kind = k == 0 ? PTSIM_SCHEDULE_1F1B : PTSIM_SCHEDULE_GPIPE;
        double bubble;
        /* t_b = 2 t_f as one backward; also split as t_b + t_w */
        PtsimTime step = step_of(kind, p, m, 1, 1000, 2000, 0, &bubble);
        PtsimTime ideal = (PtsimTime)m * 3000;
        g_assert_cmpint(step, ==, (PtsimTime)(m + p - 1) * 3000);
        g_assert_cmpint((step - ideal) * m, ==, (PtsimTime)(p - 1) * ideal);
        g_assert_cmpfloat_with_epsilon(bubble, (double)(p - 1) / (m + p - 1), 1e-12);
        g_assert_cmpint(step_of(kind, p, m, 1, 1000, 1000, 1000, NULL), ==, step);
      }
}

static void test_bubble_interleaved(void) {
  g_test_summary("Interleaved: bubble / ideal = (p-1)/(v*m) with per-chunk costs, t_b = 2 t_f");
  for (int p = 1; p <= 8; p++)
    for (int m = p; m <= 4 * p; m += p)
      for (int v = 1; v <= 4; v++) {
        PtsimTime step = step_of(PTSIM_SCHEDULE_INTERLEAVED, p, m, v, 500, 1000, 0, NULL);
        PtsimTime ideal = (PtsimTime)m * v * 1500;
        g_assert_cmpint((step - ideal) * v * m, ==, (PtsimTime)(p - 1) * ideal);
      }
}

static void test_bubble_zb_h1(void) {
  g_test_summary("ZB-H1: bubble strictly below 1F1B's; (p-1)(t_f+t_b-t_w) when m >= p, "
                 "t_w <= min(t_f, t_b)");
  static const PtsimTime costs[][3] = {{1000, 1000, 1000}, {1000, 2000, 1000}, {2000, 2000, 1000},
                                       {3000, 2000, 1000}, {2000, 1000, 1000}, {1000, 2000, 2000},
                                       {1000, 1000, 2000}};
  for (int p = 1; p <= 8; p++)
    for (int m = 1; m <= 3 * p + 2; m++)
      for (guint c = 0; c < G_N_ELEMENTS(costs); c++) {
        PtsimTime tf = costs[c][0], tb = costs[c][1], tw = costs[c][2];
        PtsimTime ideal = (PtsimTime)m * (tf + tb + tw);
        PtsimTime zb = step_of(PTSIM_SCHEDULE_ZB_H1, p, m, 1, tf, tb, tw, NULL) - ideal;
        PtsimTime one = step_of(PTSIM_SCHEDULE_1F1B, p, m, 1, tf, tb, tw, NULL) - ideal;
        if (p == 1) {
          g_assert_cmpint(zb, ==, 0);
          g_assert_cmpint(one, ==, 0);
        } else {
          g_assert_cmpint(zb, <, one);
        }
        if (m >= p && tw <= tf && tw <= tb)
          g_assert_cmpint(zb, ==, (PtsimTime)(p - 1) * (tf + tb - tw));
      }
  /* the paper's headline: equal costs -> a third of 1F1B's bubble */
  PtsimTime zb = step_of(PTSIM_SCHEDULE_ZB_H1, 4, 8, 1, 1000, 1000, 1000, NULL) - 24000;
  PtsimTime one = step_of(PTSIM_SCHEDULE_1F1B, 4, 8, 1, 1000, 1000, 1000, NULL) - 24000;
  g_assert_cmpint(3 * zb, ==, one);
}

/* ---- in-flight activations ---- */

static void check_inflight(PtsimSchedule kind, int p, int m, int v, int g) {
  PtsimScheduleScratch s = scratch_new(kind, p, m, v, g);
  PtsimScheduleSimResult r;
  g_assert_cmpint(ptsim_schedule_simulate_uniform(kind, p, m, v, g, 1000, 1000, 1000, &s, &r), ==,
                  0);
  for (int st = 0; st < p; st++) {
    int expected, expected_w;
    switch (kind) {
    case PTSIM_SCHEDULE_GPIPE:
      expected = expected_w = m;
      break;
    case PTSIM_SCHEDULE_INTERLEAVED:
      expected = expected_w = MIN((p - st - 1) * 2 + (v - 1) * (g > 0 ? g : p) + 1, m * v);
      break;
    case PTSIM_SCHEDULE_ZB_H1:
      expected = MIN(p - st, m);
      expected_w = MIN(p, m); /* the 1F1B peak (stage 0) on every stage */
      break;
    case PTSIM_SCHEDULE_1F1B:
    default:
      expected = expected_w = MIN(p - st, m);
      break;
    }
    int peak_b = -1, peak_w = -1;
    ptsim_schedule_count_inflight(s.orders + (gsize)st * s.order_stride, s.order_stride, &peak_b,
                                  &peak_w);
    g_assert_cmpint(peak_b, ==, expected);
    g_assert_cmpint(peak_w, ==, expected_w);
    g_assert_cmpint(r.peak_inflight[st], ==, expected);
    g_assert_cmpint(r.peak_inflight_weight[st], ==, expected_w);
    /* the plan's one formula, for the shapes a plan has: validation gives
     * the interleaved schedule vp > 1 (one chunk counts as 1F1B there) */
    if (kind != PTSIM_SCHEDULE_INTERLEAVED || v > 1)
      g_assert_cmpint(ptsim_plan_inflight_chunks(kind, p, m, v, g, st), ==, expected_w);
  }
  scratch_free(&s);
}

static void test_inflight(void) {
  g_test_summary("Peak forwards-minus-backwards: min(p-s, m) 1F1B, m GPipe, Megatron's "
                 "warm-up+1 interleaved (in groups of g: 2(p-s-1) + (v-1)g + 1); ZB-H1 keeps "
                 "1F1B's peak");
  for_each_shape(check_inflight);
}

/* ---- errors ---- */

static void test_errors(void) {
  g_test_summary("Bad p/m/v combinations, stages and buffers give negative codes");
  PtsimScheduleItem items[64];
  g_assert_cmpint(ptsim_schedule_build(PTSIM_SCHEDULE_INTERLEAVED, 4, 6, 2, 0, 0, items, 64), ==,
                  PTSIM_SCHEDULE_ERR_DIVISIBLE);
  g_assert_cmpint(ptsim_schedule_build(PTSIM_SCHEDULE_1F1B, 4, 8, 2, 0, 0, items, 64), ==,
                  PTSIM_SCHEDULE_ERR_VIRTUAL);
  g_assert_cmpint(ptsim_schedule_build(PTSIM_SCHEDULE_ZB_H1, 4, 8, 2, 0, 0, items, 64), ==,
                  PTSIM_SCHEDULE_ERR_VIRTUAL);
  g_assert_cmpint(ptsim_schedule_build(PTSIM_SCHEDULE_1F1B, 0, 8, 1, 0, 0, items, 64), ==,
                  PTSIM_SCHEDULE_ERR_ARGS);
  g_assert_cmpint(ptsim_schedule_build(PTSIM_SCHEDULE_1F1B, 4, 0, 1, 0, 0, items, 64), ==,
                  PTSIM_SCHEDULE_ERR_ARGS);
  g_assert_cmpint(ptsim_schedule_build(PTSIM_SCHEDULE_1F1B, 4, 8, 1, 0, 4, items, 64), ==,
                  PTSIM_SCHEDULE_ERR_ARGS);
  g_assert_cmpint(ptsim_schedule_build(PTSIM_SCHEDULE_1F1B, 4, 8, 1, 0, -1, items, 64), ==,
                  PTSIM_SCHEDULE_ERR_ARGS);
  g_assert_cmpint(ptsim_schedule_build((PtsimSchedule)99, 4, 8, 1, 0, 0, items, 64), ==,
                  PTSIM_SCHEDULE_ERR_KIND);
  g_assert_cmpint(ptsim_schedule_build(PTSIM_SCHEDULE_1F1B, 4, 8, 1, 0, 0, items, 15), ==,
                  PTSIM_SCHEDULE_ERR_CAPACITY);
  g_assert_cmpint(ptsim_schedule_build(PTSIM_SCHEDULE_1F1B, 4, 8, 1, 0, 0, NULL, 64), ==,
                  PTSIM_SCHEDULE_ERR_ARGS);
  g_assert_cmpint(ptsim_schedule_check(PTSIM_SCHEDULE_1F1B, 129, 8, 1, 0), ==,
                  PTSIM_SCHEDULE_ERR_TOO_LARGE);
  g_assert_cmpint(ptsim_schedule_check(PTSIM_SCHEDULE_INTERLEAVED, 4, 32768, 3, 0), ==,
                  PTSIM_SCHEDULE_ERR_TOO_LARGE);
  g_assert_cmpint(ptsim_schedule_check(PTSIM_SCHEDULE_INTERLEAVED, 4, 16384, 4, 0), ==, 0);
  g_assert_cmpint(ptsim_schedule_num_items(PTSIM_SCHEDULE_ZB_H1, 4, 8, 1, 0), ==, 24);
  g_assert_cmpint(ptsim_schedule_num_items(PTSIM_SCHEDULE_INTERLEAVED, 4, 8, 3, 0), ==, 48);
  g_assert_cmpstr(ptsim_schedule_strerror(PTSIM_SCHEDULE_ERR_DIVISIBLE), ==,
                  "interleaved schedule needs a microbatch group size (pp by default) from pp to "
                  "the microbatches whose last group has pp microbatches at least");
  /* microbatch groups (Megatron-LM's rule): g from p to m, and m % g 0 or
   * at least p */
  g_assert_cmpint(ptsim_schedule_check(PTSIM_SCHEDULE_INTERLEAVED, 4, 5, 3, 5), ==, 0);
  g_assert_cmpint(ptsim_schedule_check(PTSIM_SCHEDULE_INTERLEAVED, 2, 5, 2, 3), ==, 0);
  g_assert_cmpint(ptsim_schedule_check(PTSIM_SCHEDULE_INTERLEAVED, 4, 5, 3, 0), ==,
                  PTSIM_SCHEDULE_ERR_DIVISIBLE); /* 5 % 4 = 1 < 4 */
  g_assert_cmpint(ptsim_schedule_check(PTSIM_SCHEDULE_INTERLEAVED, 4, 8, 2, 3), ==,
                  PTSIM_SCHEDULE_ERR_DIVISIBLE); /* g < p */
  g_assert_cmpint(ptsim_schedule_check(PTSIM_SCHEDULE_INTERLEAVED, 4, 8, 2, 9), ==,
                  PTSIM_SCHEDULE_ERR_DIVISIBLE); /* g > m */
  g_assert_cmpint(ptsim_schedule_check(PTSIM_SCHEDULE_INTERLEAVED, 4, 11, 2, 5), ==,
                  PTSIM_SCHEDULE_ERR_DIVISIBLE); /* last group 11 % 5 = 1 < 4 */
  g_assert_cmpint(ptsim_schedule_check(PTSIM_SCHEDULE_INTERLEAVED, 4, 9, 2, 5), ==, 0);
  g_assert_cmpint(ptsim_schedule_check(PTSIM_SCHEDULE_1F1B, 4, 5, 1, 2), ==, 0); /* ignored */

  /* scratch too small, negative cost */
  PtsimScheduleScratch s = scratch_new(PTSIM_SCHEDULE_1F1B, 4, 8, 1, 0);
  PtsimScheduleSimResult r;
  s.finish_len -= 1;
  g_assert_cmpint(ptsim_schedule_simulate_uniform(PTSIM_SCHEDULE_1F1B, 4, 8, 1, 0, 1, 2, 0, &s, &r),
                  ==, PTSIM_SCHEDULE_ERR_CAPACITY);
  s.finish_len += 1;
  s.order_stride -= 1;
  g_assert_cmpint(ptsim_schedule_simulate_uniform(PTSIM_SCHEDULE_1F1B, 4, 8, 1, 0, 1, 2, 0, &s, &r),
                  ==, PTSIM_SCHEDULE_ERR_CAPACITY);
  s.order_stride += 1;
  g_assert_cmpint(ptsim_schedule_simulate_uniform(PTSIM_SCHEDULE_1F1B, 4, 8, 1, 0, -1, 2, 0, &s,
                                                  &r),
                  ==, PTSIM_SCHEDULE_ERR_ARGS);
  scratch_free(&s);
}

static void test_deadlock_detected(void) {
  g_test_summary("A hand-made order that waits on itself is reported, not looped on");
  /* p=2 m=1: stage 0 wants B0 before F0, but B0 needs stage 1's B0, which
   * needs F0 on stage 1, which needs F0 on stage 0. */
  PtsimScheduleItem orders[4];
  int32_t counts[2] = {2, 2};
  PtsimTime finish[6];
  PtsimScheduleSimResult r;
  PtsimVstages placement;
  g_assert_cmpint(ptsim_schedule_vstages(PTSIM_SCHEDULE_1F1B, 2, 1, &placement), ==, 0);
  memset(orders, 0, sizeof orders);
  orders[0].kind = PTSIM_SCHEDULE_ITEM_BACKWARD;
  orders[1].kind = PTSIM_SCHEDULE_ITEM_FORWARD;
  orders[2].kind = PTSIM_SCHEDULE_ITEM_FORWARD;
  orders[3].kind = PTSIM_SCHEDULE_ITEM_BACKWARD;
  g_assert_cmpint(ptsim_schedule_simulate_orders(&placement, 1, orders, 2, counts, 1, 2, 0, finish,
                                                 6, &r),
                  ==, PTSIM_SCHEDULE_ERR_DEADLOCK);
  /* the right order runs: F0 B0 on both stages, step = 2 F + 2 B */
  orders[0].kind = PTSIM_SCHEDULE_ITEM_FORWARD;
  orders[1].kind = PTSIM_SCHEDULE_ITEM_BACKWARD;
  g_assert_cmpint(ptsim_schedule_simulate_orders(&placement, 1, orders, 2, counts, 1, 2, 0, finish,
                                                 6, &r),
                  ==, 0);
  g_assert_cmpint(r.step_time, ==, 6);
  /* an item out of range is an argument error */
  orders[3].microbatch = 1;
  g_assert_cmpint(ptsim_schedule_simulate_orders(&placement, 1, orders, 2, counts, 1, 2, 0, finish,
                                                 6, &r),
                  ==, PTSIM_SCHEDULE_ERR_ARGS);
}

static void test_largest(void) {
  g_test_summary("The largest shapes simulate quickly (O(items), no quadratic pass)");
  struct {
    PtsimSchedule kind;
    int p, m, v;
  } shapes[] = {{PTSIM_SCHEDULE_1F1B, 128, 4096, 1},
                {PTSIM_SCHEDULE_ZB_H1, 128, 4096, 1},
                {PTSIM_SCHEDULE_INTERLEAVED, 64, 1024, 4},
                {PTSIM_SCHEDULE_GPIPE, 128, 4096, 1}};
  for (guint i = 0; i < G_N_ELEMENTS(shapes); i++) {
    PtsimScheduleScratch s = scratch_new(shapes[i].kind, shapes[i].p, shapes[i].m, shapes[i].v, 0);
    PtsimScheduleSimResult r;
    gint64 t0 = g_get_monotonic_time();
    g_assert_cmpint(ptsim_schedule_simulate_uniform(shapes[i].kind, shapes[i].p, shapes[i].m,
                                                    shapes[i].v, 0, 1000, 2000, 0, &s, &r),
                    ==, 0);
    gint64 us = g_get_monotonic_time() - t0;
    g_test_message("kind %d p=%d m=%d v=%d: %d items/stage, %.1f ms, bubble %.4f",
                   (int)shapes[i].kind, shapes[i].p, shapes[i].m, shapes[i].v, s.order_stride,
                   (double)us / 1000.0, r.bubble_fraction);
    if (shapes[i].kind == PTSIM_SCHEDULE_1F1B || shapes[i].kind == PTSIM_SCHEDULE_GPIPE)
      g_assert_cmpint(r.step_time, ==, (PtsimTime)(shapes[i].m + shapes[i].p - 1) * 3000);
    scratch_free(&s);
  }
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/schedule/hand/1f1b-p2-m4", test_hand_1f1b);
  g_test_add_func("/schedule/hand/gpipe-p2-m4", test_hand_gpipe);
  g_test_add_func("/schedule/hand/interleaved-p2-v2-m4", test_hand_interleaved);
  g_test_add_func("/schedule/hand/interleaved-groups", test_hand_groups);
  g_test_add_func("/schedule/hand/zb-h1-p2-m4", test_hand_zb_h1);
  g_test_add_func("/schedule/each-item-once", test_each_item_once);
  g_test_add_func("/schedule/no-deadlock", test_no_deadlock);
  g_test_add_func("/schedule/closed-form", test_closed_form);
  g_test_add_func("/schedule/steady-repeats", test_steady_repeats);
  g_test_add_func("/schedule/streams-in-order", test_streams_in_order);
  g_test_add_func("/schedule/bubble/1f1b-gpipe", test_bubble_1f1b_gpipe);
  g_test_add_func("/schedule/bubble/interleaved", test_bubble_interleaved);
  g_test_add_func("/schedule/bubble/zb-h1", test_bubble_zb_h1);
  g_test_add_func("/schedule/inflight", test_inflight);
  g_test_add_func("/schedule/errors", test_errors);
  g_test_add_func("/schedule/deadlock-detected", test_deadlock_detected);
  g_test_add_func("/schedule/largest", test_largest);
  return g_test_run();
}
