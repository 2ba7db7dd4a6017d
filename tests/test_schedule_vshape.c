/* test_schedule_vshape.c — the V-shaped schedules ZBV and DualPipeV
 * (schedule_vshape.c): their placement, their orders against PyTorch's
 * ScheduleZBVZeroBubble and ScheduleDualPipeV written out by hand, the
 * bubble and the in-flight peak the papers state, and properties over
 * random (p, m): every order finishes, its closed form is its order. */
#include <string.h>
#include <glib.h>
#include "plan.h"
#include "schedule.h"

/* "F0c0 I1c1* W1c1 ...": F forward, I input-gradient backward (PyTorch's
 * I), W weight gradient; * marks the backward of an overlapped pair. */
static char *order_string(PtsimSchedule kind, int p, int m, int stage) {
  PtsimScheduleItem items[512];
  PtsimScheduleShape sh;
  int n = ptsim_schedule_build(kind, p, m, 2, 0, stage, items, 512);
  g_assert_cmpint(n, ==, 6 * m);
  g_assert_cmpint(ptsim_schedule_shape(kind, p, m, 2, 0, stage, &sh), ==, 0);
  GString *out = g_string_new(NULL);
  for (int i = 0; i < n; i++) {
    static const char letters[] = "FBIW";
    g_string_append_printf(out, "%s%c%dc%d%s", i ? " " : "", letters[items[i].kind],
                           items[i].microbatch, items[i].chunk,
                           ptsim_schedule_overlapped(&sh, i) ? "*" : "");
  }
  return g_string_free(out, FALSE);
}

static void check_order(PtsimSchedule kind, int p, int m, int stage, const char *expected) {
  g_autofree char *got = order_string(kind, p, m, stage);
  g_assert_cmpstr(got, ==, expected);
}

static void test_placement(void) {
  g_test_summary("the V: chunk 0 of stage s is virtual stage s, chunk 1 is 2p-1-s; stage 0 "
                 "holds the embedding and the loss");
  PtsimVstages t;
  g_assert_cmpint(ptsim_schedule_vstages(PTSIM_SCHEDULE_ZBV, 4, 2, &t), ==, 0);
  g_assert_cmpint(t.count, ==, 8);
  g_assert_cmpint(t.first_stage, ==, 0);
  g_assert_cmpint(t.last_stage, ==, 0);
  for (int s = 0; s < 4; s++) {
    g_assert_cmpint(ptsim_schedule_vstage_of(&t, s, 0), ==, s);
    g_assert_cmpint(ptsim_schedule_vstage_of(&t, s, 1), ==, 7 - s);
  }
  /* the bottom of the V: stage 3's chunk 0 feeds its own chunk 1 */
  g_assert_cmpint(ptsim_schedule_word_stage(t.next[3 * 2 + 0]), ==, 3);
  g_assert_cmpint(ptsim_schedule_word_chunk(t.next[3 * 2 + 0]), ==, 1);
  /* chunk 1 of stage 1 (virtual stage 6) comes after stage 2's (5), goes
   * to stage 0's (7, the last) */
  g_assert_cmpint(ptsim_schedule_word_stage(t.prev[1 * 2 + 1]), ==, 2);
  g_assert_cmpint(ptsim_schedule_word_stage(t.next[1 * 2 + 1]), ==, 0);
  g_assert_cmpint(t.next[0 * 2 + 1], ==, PTSIM_VSTAGE_NONE);
  g_assert_cmpint(t.prev[0 * 2 + 0], ==, PTSIM_VSTAGE_NONE);
  PtsimVstages d;
  g_assert_cmpint(ptsim_schedule_vstages(PTSIM_SCHEDULE_DUALPIPEV, 4, 2, &d), ==, 0);
  g_assert_cmpint(d.last_stage, ==, 0);
  for (int k = 0; k < 8; k++) { /* the same table: the placement is the V's, not the order's */
    g_assert_cmpint(d.vstage[k], ==, t.vstage[k]);
    g_assert_cmpint(d.prev[k], ==, t.prev[k]);
    g_assert_cmpint(d.next[k], ==, t.next[k]);
  }
}

static void test_hand_zbv(void) {
  g_test_summary("ZBV p=2 m=4, PyTorch's ScheduleZBVZeroBubble written out by hand");
  /* Stage 0: warm-up 2(p-s)-1 = 3 forwards of chunk 0; no (F1, F0) pairs
   * (s = 0); p-s = 2 triples F1 I1 W1 (microbatches 0, 1); steady while
   * f1 < f0 or f0 < m: F3c0 I0c0 W0c0 F2c1 I2c1 W2c1, then (f0 = m) I1c0
   * W1c0 F3c1 I3c1 W3c1; cool-down: no (I0, I1) pairs, p-s = 2 pairs
   * (I0 b0, W0 w0) from b0 = w0 = 2. */
  check_order(PTSIM_SCHEDULE_ZBV, 2, 4, 0,
              "F0c0 F1c0 F2c0 F0c1 I0c1 W0c1 F1c1 I1c1 W1c1 "
              "F3c0 I0c0 W0c0 F2c1 I2c1 W2c1 I1c0 W1c0 F3c1 I3c1 W3c1 "
              "I2c0 W2c0 I3c0 W3c0");
  /* Stage 1: 1 warm-up F0; one pair F0c1 F1c0; one triple F1c1 I0c1 W0c1;
   * steady twice (F2c0 .. W1c1, F3c0 .. W2c1); cool-down: s = 1 pair
   * I2c0 I3c1 (W's deferred), p-s = 1 pair I3c0 W2c0, then the W's left:
   * chunk 1's W3, chunk 0's W3. */
  check_order(PTSIM_SCHEDULE_ZBV, 2, 4, 1,
              "F0c0 F0c1 F1c0 F1c1 I0c1 W0c1 "
              "F2c0 I0c0 W0c0 F2c1 I1c1 W1c1 F3c0 I1c0 W1c0 F3c1 I2c1 W2c1 "
              "I2c0 I3c1 I3c0 W2c0 W3c1 W3c0");
}

static void test_hand_dualpipev(void) {
  g_test_summary("DualPipeV p=2 m=4, PyTorch's ScheduleDualPipeV written out by hand");
  /* Stage 0 (steps of PyTorch's _calculate_single_rank_operations):
   * 1: 2(p-s-1) = 2 F0; 2: s+1 = 1 pair F0 F1; 3: p-s-1 = 1 of I1, the
   * queued W1, F1; 4: m-2p+s+1 = 1 of (F0, full B1) (F1, full B0), each an
   * overlapped pair; 5: p-s-1 = 1 of full B1, (F1, full B0); 6: s+1 = 1:
   * repetition h = 0 of an even stage: B1 full, B0 alone (its W queued);
   * 7: p-s-1 = 1 of the queued W, B0 alone; 8: s+1 = 1 queued W. */
  check_order(PTSIM_SCHEDULE_DUALPIPEV, 2, 4, 0,
              "F0c0 F1c0 F2c0 F0c1 I0c1 W0c1 F1c1 "
              "F3c0 I1c1* W1c1 F2c1 I0c0* W0c0 "
              "I2c1 W2c1 F3c1 I1c0* W1c0 "
              "I3c1 W3c1 I2c0 W2c0 I3c0 W3c0");
  /* Stage 1 (the last): 1: none; 2: two pairs; 3: none; 4: two
   * repetitions, the first F0 and full B1 not overlapped ("to further
   * reduce bubble size"); 5: none; 6: h = 1: both full, then (odd stage)
   * both alone; 7: none; 8: the two queued W's. */
  check_order(PTSIM_SCHEDULE_DUALPIPEV, 2, 4, 1,
              "F0c0 F0c1 F1c0 F1c1 "
              "F2c0 I0c1 W0c1 F2c1 I0c0* W0c0 F3c0 I1c1* W1c1 F3c1 I1c0* W1c0 "
              "I2c1 W2c1 I2c0 W2c0 I3c1 I3c0 W3c1 W3c0");
}

/* Step and per-stage ends of the uniform simulation, costs per chunk. */
static void simulate(PtsimSchedule kind, int p, int m, PtsimTime t_f, PtsimTime t_b, PtsimTime t_w,
                     PtsimScheduleSimResult *r) {
  int n = ptsim_schedule_num_items(kind, p, m, 2, 0);
  g_assert_cmpint(n, ==, 6 * m);
  PtsimScheduleScratch s;
  s.order_stride = n;
  s.orders = g_new(PtsimScheduleItem, (gsize)p * (gsize)n);
  s.finish_len = 3 * (int64_t)p * m * 2;
  s.finish = g_new(PtsimTime, (gsize)s.finish_len);
  g_assert_cmpint(ptsim_schedule_simulate_uniform(kind, p, m, 2, 0, t_f, t_b, t_w, &s, r), ==, 0);
  g_free(s.orders);
  g_free(s.finish);
}

static void test_bubble_zbv(void) {
  g_test_summary("ZBV with t_f = t_b = t_w: zero bubble once a stage has started (the paper's "
                 "parallelogram): stage s ends at (6m + s) t");
  /* Qi et al. 2024, sec. 6: ZB-V has no bubble when T_F = T_B = T_W; with
   * free transfers, stage s cannot start before its F0 of microbatch 0 has
   * crossed stages 0..s-1 (s t), and it runs 2 chunks x m x (F + B + W) =
   * 6m t of work from there without idling, so it ends at (6m + s) t and
   * the step is (6m + p - 1) t. */
  const PtsimTime t = 1000;
  for (int p = 2; p <= 8; p++)
    for (int m = 2 * p - 1; m <= 3 * p + 3; m++) {
      PtsimScheduleSimResult r;
      simulate(PTSIM_SCHEDULE_ZBV, p, m, t, t, t, &r);
      for (int s = 0; s < p; s++) g_assert_cmpint(r.stage_end[s], ==, (6 * m + s) * t);
      g_assert_cmpint(r.step_time, ==, (6 * m + p - 1) * t);
      g_assert_cmpint(r.busy_time, ==, 6 * m * t);
    }
}

static void test_bubble_dualpipev(void) {
  g_test_summary("DualPipeV with t_f = t_b = t_w, no overlap gain: p=2 m=4 by hand (25 t), and "
                 "the ramp's lower bound (6m + p - 1) t reached for p 2..8");
  /* p=2 m=4, unit t, the orders of test_hand_dualpipev; virtual stages
   * 0 = (s0, c0), 1 = (s1, c0), 2 = (s1, c1), 3 = (s0, c1: the loss).
   * s0: F0c0 [0,1] F1c0 [1,2] F2c0 [2,3]; F0c1 waits for s1's F0c1 (3):
   *     [3,4]; I0c1 (its own loss) [4,5] W [5,6]; F1c1 needs s1's F1c1
   *     (5): [6,7]; F3c0 [7,8]; I1c1 [8,9] W [9,10]; F2c1 needs s1's F2c1
   *     (9): [10,11]; I0c0 needs s1's I0c0 (10): [11,12] W [12,13];
   *     I2c1 [13,14] W [14,15]; F3c1 needs s1's (15): [15,16]; I1c0 needs
   *     s1's (16): [16,17] W [17,18]; I3c1 [18,19] W [19,20]; I2c0 needs
   *     s1's (20): [20,21] W [21,22]; I3c0 needs s1's (23): [23,24];
   *     W [24,25].
   * s1: F0c0 [1,2] F0c1 [2,3] F1c0 [3,4] F1c1 [4,5] F2c0 [5,6]; I0c1
   *     needs s0's I0c1 (5): [6,7] W [7,8]; F2c1 [8,9]; I0c0 [9,10] W
   *     [10,11]; F3c0 needs s0's (8): [11,12]; I1c1 needs s0's (9):
   *     [12,13] W [13,14]; F3c1 [14,15]; I1c0 [15,16] W [16,17]; I2c1
   *     needs s0's (14): [17,18] W [18,19]; I2c0 [19,20] W [20,21]; I3c1
   *     needs s0's (19): [21,22]; I3c0 [22,23]; W3c1 [23,24]; W3c0 [24,25].
   * Both end at 25: 24 busy, one idle. */
  const PtsimTime t = 1000;
  PtsimScheduleSimResult r;
  simulate(PTSIM_SCHEDULE_DUALPIPEV, 2, 4, t, t, t, &r);
  g_assert_cmpint(r.step_time, ==, 25 * t);
  g_assert_cmpint(r.stage_end[0], ==, 25 * t);
  g_assert_cmpint(r.stage_end[1], ==, 25 * t);
  /* The last stage cannot start before (p-1) t and has 6m t of work: the
   * step is at least (6m + p - 1) t; DualPipeV's orders reach it (the last
   * stage never idles once started). */
  for (int p = 2; p <= 8; p++)
    for (int m = 2 * p; m <= 3 * p + 3; m++) {
      simulate(PTSIM_SCHEDULE_DUALPIPEV, p, m, t, t, t, &r);
      g_assert_cmpint(r.step_time, ==, (6 * m + p - 1) * t);
    }
}

static void test_peak(void) {
  g_test_summary("in-flight chunks (forwards whose W has not run): ZBV 2p on every stage (the "
                 "paper's 1F1B peak), DualPipeV 2p + 1 (DeepSeek-V3's PP + 1)");
  /* ZBV, stage s: 2(p-s)-1 warm-up F0's, s pairs (F1, F0): 2p - 1 held;
   * the first triple's F1 makes 2p before its W1 frees one, and every
   * later F is followed by its chunk's B and W: 2p.  DualPipeV: steps 1-2
   * hold 2(p-s-1) + 2(s+1) = 2p; step 3 frees one (B1 W1) per F1; the
   * steady F0 comes before its overlapped backward: 2p + 1. */
  PtsimScheduleItem items[6 * 64];
  for (int p = 2; p <= 8; p++)
    for (int s = 0; s < p; s++) {
      int b, w, m = 4 * p;
      int n = ptsim_schedule_build(PTSIM_SCHEDULE_ZBV, p, m, 2, 0, s, items, 6 * 64);
      ptsim_schedule_count_inflight(items, n, &b, &w);
      g_assert_cmpint(w, ==, 2 * p);
      g_assert_cmpint(ptsim_schedule_vshape_peak(PTSIM_SCHEDULE_ZBV, p, m, s, 1, 1), ==, 2 * p);
      g_assert_cmpint(ptsim_plan_inflight_chunks(PTSIM_SCHEDULE_ZBV, p, m, 2, 0, s), ==, 2 * p);
      n = ptsim_schedule_build(PTSIM_SCHEDULE_DUALPIPEV, p, m, 2, 0, s, items, 6 * 64);
      ptsim_schedule_count_inflight(items, n, &b, &w);
      g_assert_cmpint(w, ==, 2 * p + 1);
      g_assert_cmpint(ptsim_plan_inflight_chunks(PTSIM_SCHEDULE_DUALPIPEV, p, m, 2, 0, s), ==,
                      2 * p + 1);
    }
}

static void test_peak_weighted(void) {
  g_test_summary("the peak with chunks of unequal layers: ZBV p=2 m=4, chunk 0 of 3 layers and "
                 "chunk 1 of 5, by hand; against a scan of the order for random weights");
  /* ZBV's peak (test_peak) holds 2p-1-s forwards of chunk 0 and s+1 of
   * chunk 1 (the warm-up, then the first F1 before its W): stage 0:
   * 3 x 3 + 1 x 5 = 14, stage 1: 2 x 3 + 2 x 5 = 16 */
  g_assert_cmpint(ptsim_schedule_vshape_peak(PTSIM_SCHEDULE_ZBV, 2, 4, 0, 3, 5), ==, 14);
  g_assert_cmpint(ptsim_schedule_vshape_peak(PTSIM_SCHEDULE_ZBV, 2, 4, 1, 3, 5), ==, 16);
  GRand *rand = g_rand_new_with_seed(28);
  g_autofree PtsimScheduleItem *items = g_new(PtsimScheduleItem, 6 * 200);
  for (int n = 0; n < 300; n++) {
    PtsimSchedule kind = n % 2 ? PTSIM_SCHEDULE_DUALPIPEV : PTSIM_SCHEDULE_ZBV;
    int p = g_rand_int_range(rand, 1, 12), m = g_rand_int_range(rand, 2 * p, 200);
    int s = g_rand_int_range(rand, 0, p);
    int64_t w[2] = {g_rand_int_range(rand, 0, 9), g_rand_int_range(rand, 0, 9)}, held = 0, most = 0;
    int len = ptsim_schedule_build(kind, p, m, 2, 0, s, items, 6 * 200);
    for (int i = 0; i < len; i++) {
      if (items[i].kind == PTSIM_SCHEDULE_ITEM_FORWARD) held += w[items[i].chunk];
      if (items[i].kind == PTSIM_SCHEDULE_ITEM_BACKWARD_WEIGHT) held -= w[items[i].chunk];
      if (held > most) most = held;
    }
    g_assert_cmpint(ptsim_schedule_vshape_peak(kind, p, m, s, w[0], w[1]), ==, most);
  }
  g_rand_free(rand);
}

/* Every (microbatch, chunk) once as F, B and W, W after B; item_at is the
 * order, index_of its inverse, last_index the last F and B. */
static void check_closed_form(PtsimSchedule kind, int p, int m, int s, PtsimScheduleItem *items,
                              int cap) {
  PtsimScheduleShape sh;
  int n = ptsim_schedule_build(kind, p, m, 2, 0, s, items, cap), last_f = -1, last_b = -1;
  g_assert_cmpint(n, ==, 6 * m);
  g_assert_cmpint(ptsim_schedule_shape(kind, p, m, 2, 0, s, &sh), ==, 0);
  for (int i = 0; i < n; i++) {
    PtsimScheduleItem it;
    ptsim_schedule_item_at(&sh, i, &it);
    g_assert_cmpmem(&it, sizeof it, &items[i], sizeof it);
    g_assert_cmpint(ptsim_schedule_index_of(&sh, it.kind, it.microbatch, it.chunk), ==, i);
    if (it.kind == PTSIM_SCHEDULE_ITEM_FORWARD) last_f = i;
    if (it.kind == PTSIM_SCHEDULE_ITEM_BACKWARD_INPUT) {
      last_b = i;
      g_assert_cmpint(ptsim_schedule_index_of(&sh, PTSIM_SCHEDULE_ITEM_BACKWARD, it.microbatch,
                                              it.chunk),
                      ==, i);
      g_assert_cmpint(ptsim_schedule_index_of(&sh, PTSIM_SCHEDULE_ITEM_BACKWARD_WEIGHT,
                                              it.microbatch, it.chunk),
                      >, i);
    }
    /* an overlapped backward follows its pair's forward, of the other chunk */
    if (ptsim_schedule_overlapped(&sh, i)) {
      g_assert_cmpint(kind, ==, PTSIM_SCHEDULE_DUALPIPEV);
      g_assert_cmpint(it.kind, ==, PTSIM_SCHEDULE_ITEM_BACKWARD_INPUT);
      g_assert_cmpint(items[i - 1].kind, ==, PTSIM_SCHEDULE_ITEM_FORWARD);
      g_assert_cmpint(items[i - 1].chunk, ==, 1 - it.chunk);
      g_assert_cmpint(items[i + 1].kind, ==, PTSIM_SCHEDULE_ITEM_BACKWARD_WEIGHT);
    }
  }
  g_assert_cmpint(ptsim_schedule_last_index(&sh, PTSIM_SCHEDULE_ITEM_FORWARD), ==, last_f);
  g_assert_cmpint(ptsim_schedule_last_index(&sh, PTSIM_SCHEDULE_ITEM_BACKWARD), ==, last_b);
  g_assert_cmpint(ptsim_schedule_index_of(&sh, PTSIM_SCHEDULE_ITEM_FORWARD, m, 0), ==, -1);
  PtsimScheduleSteady st;
  ptsim_schedule_steady(&sh, 0, &st);
  g_assert_cmpint(st.lo, >=, st.hi); /* no shortcut stretch */
}

static void test_random(void) {
  g_test_summary("600 random (p, m, costs): every order is complete, its closed form exact, "
                 "and the pipeline finishes (no deadlock)");
  GRand *rand = g_rand_new_with_seed(2828);
  g_autofree PtsimScheduleItem *items = g_new(PtsimScheduleItem, 6 * 400);
  for (int n = 0; n < 600; n++) {
    PtsimSchedule kind = n % 2 ? PTSIM_SCHEDULE_DUALPIPEV : PTSIM_SCHEDULE_ZBV;
    int p = g_rand_int_range(rand, 1, 17);
    int least = kind == PTSIM_SCHEDULE_ZBV ? 2 * p - 1 : 2 * p;
    int m = g_rand_int_range(rand, least, 400);
    for (int s = 0; s < p; s += 1 + p / 4) check_closed_form(kind, p, m, s, items, 6 * 400);
    /* each (microbatch, chunk) once per kind on a stage */
    int s = g_rand_int_range(rand, 0, p);
    int len = ptsim_schedule_build(kind, p, m, 2, 0, s, items, 6 * 400);
    g_autofree int *seen = g_new0(int, 3 * 2 * m);
    for (int i = 0; i < len; i++) {
      int k = items[i].kind == PTSIM_SCHEDULE_ITEM_FORWARD          ? 0
              : items[i].kind == PTSIM_SCHEDULE_ITEM_BACKWARD_INPUT ? 1
                                                                    : 2;
      g_assert_cmpint(items[i].kind, !=, PTSIM_SCHEDULE_ITEM_BACKWARD);
      seen[(k * 2 + items[i].chunk) * m + items[i].microbatch] += 1;
    }
    for (int k = 0; k < 3 * 2 * m; k++) g_assert_cmpint(seen[k], ==, 1);
    PtsimScheduleSimResult r;
    simulate(kind, p, m, g_rand_int_range(rand, 1, 50), g_rand_int_range(rand, 1, 50),
             g_rand_int_range(rand, 0, 50), &r);
    g_assert_cmpint(r.busy_time, >, 0);
  }
  g_rand_free(rand);
}

static void test_errors(void) {
  g_test_summary("two chunks per stage, and PyTorch's least microbatches: 2p-1 (ZBV), 2p "
                 "(DualPipeV)");
  g_assert_cmpint(ptsim_schedule_check(PTSIM_SCHEDULE_ZBV, 4, 7, 2, 0), ==, 0);
  g_assert_cmpint(ptsim_schedule_check(PTSIM_SCHEDULE_ZBV, 4, 6, 2, 0), ==,
                  PTSIM_SCHEDULE_ERR_V_SHAPE);
  g_assert_cmpint(ptsim_schedule_check(PTSIM_SCHEDULE_DUALPIPEV, 4, 8, 2, 0), ==, 0);
  g_assert_cmpint(ptsim_schedule_check(PTSIM_SCHEDULE_DUALPIPEV, 4, 7, 2, 0), ==,
                  PTSIM_SCHEDULE_ERR_V_SHAPE);
  g_assert_cmpint(ptsim_schedule_check(PTSIM_SCHEDULE_ZBV, 4, 16, 1, 0), ==,
                  PTSIM_SCHEDULE_ERR_V_SHAPE);
  g_assert_cmpint(ptsim_schedule_check(PTSIM_SCHEDULE_DUALPIPEV, 4, 16, 3, 0), ==,
                  PTSIM_SCHEDULE_ERR_V_SHAPE);
  g_assert_cmpint(ptsim_schedule_num_items(PTSIM_SCHEDULE_ZBV, 4, 16, 2, 0), ==, 96);
  g_assert_nonnull(strstr(ptsim_schedule_strerror(PTSIM_SCHEDULE_ERR_V_SHAPE), "2 pp"));
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/schedule-vshape/placement", test_placement);
  g_test_add_func("/schedule-vshape/hand/zbv-p2-m4", test_hand_zbv);
  g_test_add_func("/schedule-vshape/hand/dualpipev-p2-m4", test_hand_dualpipev);
  g_test_add_func("/schedule-vshape/bubble/zbv", test_bubble_zbv);
  g_test_add_func("/schedule-vshape/bubble/dualpipev", test_bubble_dualpipev);
  g_test_add_func("/schedule-vshape/peak", test_peak);
  g_test_add_func("/schedule-vshape/peak-weighted", test_peak_weighted);
  g_test_add_func("/schedule-vshape/random", test_random);
  g_test_add_func("/schedule-vshape/errors", test_errors);
  return g_test_run();
}
