/* test_engine.c — the step simulation against hand arithmetic and against
 * the schedule module's reference simulator, plus determinism and the
 * mechanisms the engine must show (last-stage imbalance, overlap). */
#include <glib.h>
#include <string.h>
#include "config.h"
#include "job_fixture.h"
#include "engine.h"
#include "memory.h"
#include <math.h>

#include "schedule.h"
#include "workload.h"
#include "plan_of.h"

static void load_job(PtsimJob *job, const char *model, const char *hw, gint64 gpus, gint64 tp,
                     gint64 pp, gint64 vp, gint64 mbs, gint64 gbs, gint64 seq) {
  FixtureLayout l = {gpus, tp, pp, vp, mbs, gbs, seq, PTSIM_RECOMPUTE_NONE};
  fixture_job(job, model, hw, l);
}

static int32_t run(const PtsimJob *job, const PtsimWorkload *w, PtsimTrace *trace,
                   PtsimTimeResult *out) {
  g_autofree PtsimPlan *plan = plan_of(job);
  int64_t bytes = ptsim_engine_scratch_bytes(plan);
  g_assert_cmpint(bytes, >, 0);
  g_autofree void *scratch = g_malloc(bytes);
  return ptsim_engine_run(plan, w, scratch, bytes, trace, out);
}

static PtsimTime ns(double s) { return (PtsimTime)(s * 1e9 + 0.5); }

/* One stage, one GPU: the step is m x (forward + backward) + optimizer. */
static void test_single_gpu_hand_arithmetic(void) {
  g_test_summary("pp=1, dp=1: step = m (F + B + W) + Adam, to the nanosecond");
  PtsimJob job;
  load_job(&job, "llama3-8b", "h100-80g", 1, 1, 1, 1, 1, 4, 2048);
  g_autofree PtsimWorkload *w = g_new0(PtsimWorkload, 1);
  workload_of(&job, NULL, w);
  PtsimWork chunk;
  ptsim_workload_chunk(w, 0, 0, &chunk);
  g_autofree PtsimTimeResult *t = g_new0(PtsimTimeResult, 1);
  g_assert_cmpint(run(&job, w, NULL, t), ==, 0);
  PtsimTime item = ns(chunk.forward_s) + ns(chunk.backward_input_s + chunk.backward_weight_s);
  PtsimTime want = 4 * item + ns(w->optimizer_s[0]);
  g_assert_cmpint(ns(t->step_s), ==, want);
  g_assert_cmpfloat_with_epsilon(t->bubble_fraction, 0.0, 1e-12);
  g_assert_cmpfloat(w->grad_sync_s[0], ==, 0.0); /* dp = 1: nothing to reduce */
  /* Megatron's FLOP formula: tokens/s and TFLOP/s follow from the step. */
  g_assert_cmpfloat_with_epsilon(t->tokens_per_s, 4.0 * 2048.0 / t->step_s, 1e-6);
  g_assert_cmpfloat_with_epsilon(t->tflops_per_gpu,
                                 ptsim_workload_megatron_flops(&job) / t->step_s / 1e12, 1e-9);
}

/* A workload whose every chunk costs the same and whose transfers are free
 * must reproduce the schedule module's uniform simulator exactly. */
static void uniform_workload(PtsimWorkload *w, int64_t p, int64_t v, int64_t m, int64_t layers,
                             double t_f, double t_b, double t_w) {
  memset(w, 0, sizeof *w);
  w->num_stages = p;
  w->num_chunks = v;
  w->num_microbatches = m;
  for (int64_t k = 0; k < p * v; k++) w->chunk_layers[k] = (int32_t)layers;
  w->layer.forward_s = t_f / (double)layers;
  w->layer.backward_input_s = t_b / (double)layers;
  w->layer.backward_weight_s = t_w / (double)layers;
}

static void check_against_reference(PtsimSchedule kind, int32_t p, int32_t m, int32_t v,
                                    int32_t group) {
  PtsimJob job;
  g_autoptr(GError) error = NULL;
  load_job(&job, "sc21-gpt-1.7b", "a100-80g", 8 * p, 1, p, v, 1, 8 * p, 1024);
  job.layout.schedule = kind;
  job.layout.microbatch_group = group;
  job.layout.gbs = 8 * m; /* dp 8: m microbatches */
  g_assert_true(ptsim_job_validate(&job, &error));
  g_autofree PtsimWorkload *w = g_new0(PtsimWorkload, 1);
  uniform_workload(w, p, v, m, 24 / (p * v), 1e-3, 2e-3, 1e-3);
  g_autofree PtsimTimeResult *t = g_new0(PtsimTimeResult, 1);
  g_assert_cmpint(run(&job, w, NULL, t), ==, 0);

  int32_t items = ptsim_schedule_num_items(kind, p, m, v, group);
  PtsimScheduleScratch scratch;
  g_autofree PtsimScheduleItem *orders = g_new0(PtsimScheduleItem, (gsize)p * items);
  g_autofree PtsimTime *finish = g_new0(PtsimTime, (gsize)3 * p * m * v);
  scratch.orders = orders;
  scratch.order_stride = items;
  scratch.finish = finish;
  scratch.finish_len = (int64_t)3 * p * m * v;
  PtsimScheduleSimResult ref;
  g_assert_cmpint(ptsim_schedule_simulate_uniform(kind, p, m, v, group, 1000000, 2000000, 1000000,
                                                  &scratch, &ref),
                  ==, 0);
  g_assert_cmpint(ns(t->pipeline_s), ==, ref.step_time);
  g_assert_cmpfloat_with_epsilon(t->bubble_fraction, ref.bubble_fraction, 1e-9);
}

static void test_matches_schedule_reference(void) {
  g_test_summary("uniform chunks, free transfers: engine == schedule reference simulator");
  for (int32_t p = 2; p <= 4; p++)
    for (int32_t m = 4; m <= 8; m += 4) {
      check_against_reference(PTSIM_SCHEDULE_1F1B, p, m, 1, 0);
      check_against_reference(PTSIM_SCHEDULE_GPIPE, p, m, 1, 0);
      check_against_reference(PTSIM_SCHEDULE_ZB_H1, p, m, 1, 0);
    }
  check_against_reference(PTSIM_SCHEDULE_INTERLEAVED, 2, 4, 2, 0);
  check_against_reference(PTSIM_SCHEDULE_INTERLEAVED, 4, 8, 2, 0);
  /* microbatch groups (schedule.h): m = 5 at p = 4 in one group of 5;
   * m = 8 at p = 2 in groups of 3, 3 and a last one of 2 */
  check_against_reference(PTSIM_SCHEDULE_INTERLEAVED, 4, 5, 2, 5);
  check_against_reference(PTSIM_SCHEDULE_INTERLEAVED, 2, 8, 2, 3);
  /* the V-shaped schedules: their placement and orders (schedule_vshape.c) */
  for (int32_t p = 2; p <= 4; p++) {
    check_against_reference(PTSIM_SCHEDULE_ZBV, p, 2 * p - 1, 2, 0);
    check_against_reference(PTSIM_SCHEDULE_ZBV, p, 4 * p, 2, 0);
    check_against_reference(PTSIM_SCHEDULE_DUALPIPEV, p, 2 * p, 2, 0);
    check_against_reference(PTSIM_SCHEDULE_DUALPIPEV, p, 3 * p + 1, 2, 0);
  }
}

static void test_dualpipev_overlap(void) {
  g_test_summary("DualPipeV's overlapped F + B pairs hide each half's expert all-to-all behind "
                 "the other's compute: p=2 m=4 by hand");
  /* Per chunk: F = 1 ms of which a = 0.3 ms all-to-all, B (input grad) =
   * 2 ms of which a' = 0.3 ms, W = 1 ms.  A pair hides min(a, B - a' + W)
   * + min(a', F - a) = 0.3 + 0.3 = 0.6 ms.  Each stage runs 3 overlapped
   * pairs (test_schedule_vshape's orders: stage 0 two in the steady
   * repetition and one after it; stage 1 four in its two steady
   * repetitions less the last stage's first, which PyTorch runs apart), so
   * its busy time is 2 chunks x 4 microbatches x 4 ms - 3 x 0.6 ms =
   * 30.2 ms, and its exposed all-to-all 8 x 0.6 - 1.8 = 3.0 ms. */
  const int32_t p = 2, m = 4, layers = 6;
  PtsimJob job;
  g_autoptr(GError) error = NULL;
  load_job(&job, "sc21-gpt-1.7b", "a100-80g", 8 * p, 1, p, 2, 1, 8 * m, 1024);
  job.layout.schedule = PTSIM_SCHEDULE_DUALPIPEV;
  g_assert_true(ptsim_job_validate(&job, &error));
  g_autofree PtsimWorkload *w = g_new0(PtsimWorkload, 1);
  uniform_workload(w, p, 2, m, layers, 1e-3, 2e-3, 1e-3);
  w->layer.forward_comm_s[PTSIM_COMM_EP] = 0.3e-3 / layers;
  w->layer.backward_comm_s[PTSIM_COMM_EP] = 0.3e-3 / layers;
  g_autofree PtsimTimeResult *t = g_new0(PtsimTimeResult, 1);
  g_assert_cmpint(run(&job, w, NULL, t), ==, 0);
  for (int s = 0; s < p; s++) {
    g_assert_cmpfloat_with_epsilon(t->stages[s].busy_s, 30.2e-3, 1e-8);
    g_assert_cmpfloat_with_epsilon(t->stages[s].exposed_comm_s[PTSIM_COMM_EP], 3.0e-3, 1e-8);
  }
  /* ZBV runs the same items with no overlapped pair: 32 ms busy */
  job.layout.schedule = PTSIM_SCHEDULE_ZBV;
  g_assert_cmpint(run(&job, w, NULL, t), ==, 0);
  g_assert_cmpfloat_with_epsilon(t->stages[0].busy_s, 32e-3, 1e-8);
}

static void test_combined_1f1b(void) {
  g_test_summary("Megatron-LM's combined 1F1B: each steady backward paired with the next "
                 "forward, the first forward and last backward alone; p=1 m=4 by hand");
  /* One MoE layer a chunk (test_moe's pair-period parts, ms): F = 5 of
   * which 3 all-to-all (dispatch 1.5, combine 1.5), B = 5 of which 3, W =
   * 2; the experts 1 + 1 + 1.  A pair runs 7 instead of 12 (no delay: 5
   * hidden) or 6 (with --delay-wgrad-compute: 6 hidden).  Order F0 B0 F1
   * B1 F2 B2 F3 B3: B0, B1, B2 are paired (Megatron's phases 1-3), F0 and
   * B3 run alone.  Busy 4 x 12 = 48 ms without the overlap, 48 - 3 x 5 =
   * 33 with it, 48 - 3 x 6 = 30 delayed; exposed all-to-all 4 x 6 = 24,
   * 24 - 15 = 9 (F0's 3, B3's 3, 1 a pair), 24 - 18 = 6 (F0's and B3's). */
  PtsimJob job;
  load_job(&job, "sc21-gpt-1.7b", "a100-80g", 8, 1, 1, 1, 1, 32, 1024);
  g_autofree PtsimWorkload *w = g_new0(PtsimWorkload, 1);
  uniform_workload(w, 1, 1, 4, 1, 5e-3, 5e-3, 2e-3);
  w->moe_layer = w->layer;
  memset(&w->layer, 0, sizeof w->layer);
  w->chunk_moe_layers[0] = 1;
  w->moe_layer.forward_comm_s[PTSIM_COMM_EP] = 3e-3;
  w->moe_layer.backward_comm_s[PTSIM_COMM_EP] = 3e-3;
  w->moe_mlp.forward_s = w->moe_mlp.backward_input_s = w->moe_mlp.backward_weight_s = 1e-3;
  w->moe_mlp.forward_comm_s[PTSIM_COMM_EP] = 1.5e-3;
  w->moe_mlp.backward_comm_s[PTSIM_COMM_EP] = 1.5e-3;
  w->moe_layer_gpu_s[0] = 5e-3; /* GPU-bound: the host raised nothing */
  w->moe_layer_gpu_s[1] = 7e-3;
  g_autofree PtsimTimeResult *t = g_new0(PtsimTimeResult, 1);
  const double busy[3] = {48e-3, 33e-3, 30e-3}, exposed[3] = {24e-3, 9e-3, 6e-3};
  for (int k = 0; k < 3; k++) {
    job.settings.moe_ep_comm_overlap = k > 0;
    job.settings.delay_wgrad_compute = k > 1;
    g_assert_cmpint(run(&job, w, NULL, t), ==, 0);
    g_assert_cmpfloat_with_epsilon(t->stages[0].busy_s, busy[k], 1e-8);
    g_assert_cmpfloat_with_epsilon(t->stages[0].exposed_comm_s[PTSIM_COMM_EP], exposed[k], 1e-8);
  }
  /* both passes host-bound (raised above their GPU 4 and 6 ms): the CPU
   * issues the pair's two, 5 + 7 = 12 ms, so nothing hides: 48 ms */
  w->moe_layer_gpu_s[0] = 4e-3;
  w->moe_layer_gpu_s[1] = 6e-3;
  g_assert_cmpint(run(&job, w, NULL, t), ==, 0);
  g_assert_cmpfloat_with_epsilon(t->stages[0].busy_s, 48e-3, 1e-8);
}

static void test_1f1b_bubble(void) {
  g_test_summary("1F1B with uniform chunks: bubble = (p-1)/(m+p-1)");
  const int32_t p = 4, m = 8;
  PtsimJob job;
  load_job(&job, "llama2-7b", "a100-80g", 8 * p, 1, p, 1, 1, 8 * m, 1024);
  g_autofree PtsimWorkload *w = g_new0(PtsimWorkload, 1);
  uniform_workload(w, p, 1, m, 8, 1e-3, 2e-3, 0.0);
  g_autofree PtsimTimeResult *t = g_new0(PtsimTimeResult, 1);
  g_assert_cmpint(run(&job, w, NULL, t), ==, 0);
  g_assert_cmpfloat_with_epsilon(t->bubble_fraction, (double)(p - 1) / (double)(m + p - 1), 1e-9);
}

static void test_deterministic(void) {
  g_test_summary("same input, bit-identical output (results and trace)");
  PtsimJob job;
  load_job(&job, "llama3-70b", "h100-80g", 64, 8, 4, 2, 1, 64, 4096);
  g_autofree PtsimWorkload *w = g_new0(PtsimWorkload, 1);
  workload_of(&job, NULL, w);
  g_autofree PtsimTimeResult *a = g_new0(PtsimTimeResult, 1);
  g_autofree PtsimTimeResult *b = g_new0(PtsimTimeResult, 1);
  PtsimTrace ta = {g_new0(PtsimTraceRecord, 4096), 4096, 0};
  PtsimTrace tb = {g_new0(PtsimTraceRecord, 4096), 4096, 0};
  g_assert_cmpint(run(&job, w, &ta, a), ==, 0);
  g_assert_cmpint(run(&job, w, &tb, b), ==, 0);
  g_assert_cmpint(memcmp(a, b, sizeof *a), ==, 0);
  g_assert_cmpint(ta.count, ==, tb.count);
  g_assert_cmpint(memcmp(ta.records, tb.records, sizeof(PtsimTraceRecord) * (gsize)ta.count), ==,
                  0);
  g_free(ta.records);
  g_free(tb.records);
}

static void test_last_stage_imbalance(void) {
  g_test_summary("a 128k vocabulary makes the last stage the busiest");
  PtsimJob job;
  load_job(&job, "llama3-8b", "h100-80g", 8, 1, 4, 1, 1, 32, 4096);
  g_autofree PtsimWorkload *w = g_new0(PtsimWorkload, 1);
  workload_of(&job, NULL, w);
  g_autofree PtsimTimeResult *t = g_new0(PtsimTimeResult, 1);
  g_assert_cmpint(run(&job, w, NULL, t), ==, 0);
  g_assert_cmpint(t->busiest_stage, ==, 3);
  g_assert_cmpfloat(t->stages[3].busy_s, >, 1.05 * t->stages[1].busy_s);
  g_assert_cmpfloat(t->stages[1].idle_s, >, t->stages[3].idle_s);
}

static void test_overlap_switches(void) {
  g_test_summary("--overlap-grad-reduce and --tp-comm-overlap only ever shorten the step");
  PtsimJob job;
  load_job(&job, "llama3-70b", "h100-80g", 128, 8, 4, 1, 1, 128, 4096);
  g_autofree PtsimWorkload *w = g_new0(PtsimWorkload, 1);
  g_autofree PtsimTimeResult *base = g_new0(PtsimTimeResult, 1);
  g_autofree PtsimTimeResult *grad = g_new0(PtsimTimeResult, 1);
  g_autofree PtsimTimeResult *tp = g_new0(PtsimTimeResult, 1);
  workload_of(&job, NULL, w);
  g_assert_cmpint(run(&job, w, NULL, base), ==, 0);
  g_assert_cmpfloat(base->exposed_comm_s[PTSIM_COMM_DP], >, 0.0);
  g_assert_cmpfloat(base->exposed_comm_s[PTSIM_COMM_TP], >, 0.0);
  job.settings.overlap_grad_reduce = 1;
  g_assert_cmpint(run(&job, w, NULL, grad), ==, 0);
  g_assert_cmpfloat(grad->step_s, <, base->step_s);
  g_assert_cmpfloat(grad->exposed_comm_s[PTSIM_COMM_DP], <, base->exposed_comm_s[PTSIM_COMM_DP]);
  job.settings.tp_comm_overlap = 1;
  workload_of(&job, NULL, w);
  g_assert_cmpint(run(&job, w, NULL, tp), ==, 0);
  g_assert_cmpfloat(tp->exposed_comm_s[PTSIM_COMM_TP], <, grad->exposed_comm_s[PTSIM_COMM_TP]);
  g_assert_cmpfloat(tp->step_s, <, grad->step_s);
}

static void test_hfu_not_below_mfu(void) {
  g_test_summary("executed FLOPs are counted as Megatron's formula counts them (attention "
                 "without causal halving): HFU = MFU without recompute, HFU > MFU with it");
  PtsimJob job;
  load_job(&job, "llama3-8b", "h100-80g", 8, 1, 1, 1, 1, 128, 8192);
  g_autofree PtsimWorkload *w = g_new0(PtsimWorkload, 1);
  g_autofree PtsimTimeResult *t = g_new0(PtsimTimeResult, 1);
  const PtsimRecompute kinds[] = {PTSIM_RECOMPUTE_NONE, PTSIM_RECOMPUTE_SELECTIVE,
                                  PTSIM_RECOMPUTE_FULL};
  for (int cp = 1; cp <= 2; cp++)
    for (size_t k = 0; k < G_N_ELEMENTS(kinds); k++) {
      job.layout.cp = cp;
      job.layout.dp = 8 / cp;
      job.settings.recompute = kinds[k];
      workload_of(&job, NULL, w);
      g_assert_cmpint(run(&job, w, NULL, t), ==, 0);
      if (kinds[k] == PTSIM_RECOMPUTE_NONE)
        g_assert_cmpfloat(fabs(t->hfu - t->mfu), <, 1e-12 * t->mfu);
      else
        g_assert_cmpfloat(t->hfu, >, t->mfu);
    }
}

static void test_trace_records_every_item(void) {
  g_test_summary("the trace holds one record per schedule item plus the step tail");
  PtsimJob job;
  load_job(&job, "llama2-7b", "a100-80g", 16, 2, 2, 1, 1, 32, 2048);
  g_autofree PtsimWorkload *w = g_new0(PtsimWorkload, 1);
  workload_of(&job, NULL, w);
  g_autofree PtsimTimeResult *t = g_new0(PtsimTimeResult, 1);
  PtsimTrace trace = {g_new0(PtsimTraceRecord, 1024), 1024, 0};
  g_assert_cmpint(run(&job, w, &trace, t), ==, 0);
  int64_t items = 0;
  for (int64_t i = 0; i < trace.count; i++) {
    const PtsimTraceRecord *r = &trace.records[i];
    g_assert_cmpint(r->end_ns, >=, r->start_ns);
    g_assert_cmpint(r->end_ns, <=, ns(t->step_s));
    if (r->kind <= PTSIM_TRACE_BACKWARD_WEIGHT) items++;
  }
  g_autofree PtsimPlan *plan = plan_of(&job);
  int64_t m = plan->num_microbatches;
  g_assert_cmpint(items, ==, 2 * 2 * m);
  g_free(trace.records);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/engine/single-gpu-hand-arithmetic", test_single_gpu_hand_arithmetic);
  g_test_add_func("/engine/matches-schedule-reference", test_matches_schedule_reference);
  g_test_add_func("/engine/dualpipev-overlap", test_dualpipev_overlap);
  g_test_add_func("/engine/1f1b-bubble", test_1f1b_bubble);
  g_test_add_func("/engine/combined-1f1b", test_combined_1f1b);
  g_test_add_func("/engine/deterministic", test_deterministic);
  g_test_add_func("/engine/last-stage-imbalance", test_last_stage_imbalance);
  g_test_add_func("/engine/overlap-switches", test_overlap_switches);
  g_test_add_func("/engine/trace-records-every-item", test_trace_records_every_item);
  g_test_add_func("/engine/hfu-not-below-mfu", test_hfu_not_below_mfu);
  return g_test_run();
}
