/* test_engine_period.c — the engine's periodic shortcut is exact: over
 * thousands of random layouts of every schedule (tests/jobgen.h, with
 * microbatch counts up to a few hundred; dense and mixture-of-experts
 * models, whose MoE layers add the ep kind of exposed communication) and
 * over synthetic workloads whose integer-nanosecond durations tie
 * everywhere, ptsim_engine_run gives the same PtsimTimeResult, byte for
 * byte (the event count included), as ptsim_engine_run_full, which
 * simulates every event.  Also: the shortcut does skip the middle, and its
 * cost stops growing with the microbatches.  And the recorded-order replay
 * (ptsim_engine_run_replayed) gives the same bytes on every layout, its
 * table recorded with one layout's costs and replayed with others'. */
#include <glib.h>
#include <string.h>
#include "engine.h"
#include "jobgen.h"
#include "plan.h"
#include "schedule.h"
#include "workload.h"

typedef struct {
  guint layouts, jumped;
  guint64 events, simulated;
  guint64 items, computed; /* the recurrence: items in all, items computed */
} Tally;

static const char *const schedule_names[] = {"1f1b", "gpipe", "interleaved", "zb-h1"};

/* The replay's cache, shared by every check (shapes recur with other
 * costs), in the mode that replays every shape that fits. */
static void *replay_cache(void) {
  static void *cache;
  if (!cache) {
    cache = g_malloc(16 * 1024 * 1024);
    g_assert_cmpint(ptsim_engine_cache_init(cache, 16 * 1024 * 1024), ==, 0);
    ptsim_engine_cache_replay_always(cache);
  }
  return cache;
}

/* Runs the plan every way — every event, the event loop's shortcut, the
 * recurrence with its shortcut, the recorded-order replay — and asserts the results are the same
 * bytes (the recurrence counts no events); the shortcut's result in *out. */
static void check_same(const PtsimPlan *plan, const PtsimWorkload *w, PtsimTimeResult *out,
                       Tally *tally) {
  int64_t bytes = ptsim_engine_scratch_bytes(plan);
  g_assert_cmpint(bytes, >, 0);
  g_autofree void *scratch = g_malloc(bytes);
  g_autofree PtsimTimeResult *full = g_new0(PtsimTimeResult, 1);
  memset(out, 0, sizeof *out);
  g_assert_cmpint(ptsim_engine_run_full(plan, w, scratch, bytes, NULL, full), ==, 0);
  memset(scratch, 0xa5, (size_t)bytes); /* nothing may leak from one run to the next */
  g_assert_cmpint(ptsim_engine_run(plan, w, scratch, bytes, NULL, out), ==, 0);
  g_autofree PtsimTimeResult *recur = g_new0(PtsimTimeResult, 1);
  memset(scratch, 0x5a, (size_t)bytes);
  g_assert_cmpint(ptsim_engine_run_recurrence(plan, w, scratch, bytes, recur), ==, 0);
  g_assert_cmpint(recur->events, ==, 0);
  g_autofree PtsimTimeResult *replayed = g_new0(PtsimTimeResult, 1);
  memset(scratch, 0x33, (size_t)bytes);
  g_assert_cmpint(ptsim_engine_run_replayed(plan, w, replay_cache(), scratch, bytes, replayed), ==,
                  0);
  replayed->events = full->events;
  replayed->events_simulated = 0;
  tally->items += (guint64)plan->num_stages * (guint64)plan->schedule_items;
  tally->computed += (guint64)recur->events_simulated;
  g_assert_cmpint(full->events_simulated, ==, full->events);
  g_assert_cmpint(out->events, ==, full->events);
  g_assert_cmpint(out->events_simulated, <=, out->events);
  tally->layouts++;
  tally->jumped += out->events_simulated < out->events;
  tally->events += (guint64)out->events;
  tally->simulated += (guint64)out->events_simulated;
  out->events_simulated = full->events_simulated = 0;
  recur->events = full->events;
  recur->events_simulated = 0;
  if (memcmp(out, full, sizeof *out) != 0 || memcmp(recur, full, sizeof *out) != 0 ||
      memcmp(replayed, full, sizeof *out) != 0) {
    g_test_message("differs: schedule %d p %" G_GINT64_FORMAT " v %" G_GINT64_FORMAT
                   " m %" G_GINT64_FORMAT ": step %.9f vs %.9f s, pipeline %.9f vs %.9f s",
                   (int)plan->job.layout.schedule, plan->num_stages, plan->num_chunks,
                   plan->num_microbatches, out->step_s, full->step_s, out->pipeline_s,
                   full->pipeline_s);
    g_assert_not_reached();
  }
}

static void report(const Tally *by_schedule) {
  for (int k = 0; k < 4; k++) {
    const Tally *t = &by_schedule[k];
    if (t->layouts == 0) continue;
    g_test_message("%-11s %5u layouts, %5u took the shortcut; events %" G_GUINT64_FORMAT
                   ", simulated %" G_GUINT64_FORMAT " (%.1f%%); recurrence: %.1f%% of the items",
                   schedule_names[k], t->layouts, t->jumped, t->events, t->simulated,
                   100.0 * (double)t->simulated / (double)MAX(t->events, 1),
                   100.0 * (double)t->computed / (double)MAX(t->items, 1));
  }
}

/* What every check needs: the models and profiles, a random stream, a
 * plan, a workload and a result. */
typedef struct {
  JobgenDraws d;
  PtsimWorkload *w;
  PtsimTimeResult *out;
  Tally tally[4];
} Fixture;

static void fixture_set_up(Fixture *f, guint32 seed) {
  memset(f, 0, sizeof *f);
  jobgen_draws_open(&f->d, seed);
  f->w = g_new0(PtsimWorkload, 1);
  f->out = g_new0(PtsimTimeResult, 1);
}

static void fixture_tear_down(Fixture *f) {
  report(f->tally);
  jobgen_draws_close(&f->d);
  g_free(f->w);
  g_free(f->out);
}

static void test_random_layouts(void) {
  g_test_summary("4,000 random layouts (every schedule, m up to 300): shortcut == every event, "
                 "byte for byte");
  Fixture f;
  fixture_set_up(&f, 13);
  for (int n = 0; n < 4000;) {
    PtsimJob job;
    if (!jobgen_try_long(&f.d.pool, f.d.rand, &job, 300)) continue;
    ptsim_plan_build(&job, f.d.plan);
    if (f.d.plan->schedule_items < 0) continue;
    ptsim_workload_build(f.d.plan, NULL, f.w);
    check_same(f.d.plan, f.w, f.out, &f.tally[job.layout.schedule]);
    n++;
  }
  for (int k = 0; k < 4; k++) g_assert_cmpuint(f.tally[k].layouts, >, 500);
  /* the pipelines that repeat are the common case: 1F1B, interleaved and
   * ZB-H1 layouts with a steady state mostly skip it */
  for (int k = 0; k < 4; k++)
    if (k != PTSIM_SCHEDULE_GPIPE) g_assert_cmpuint(f.tally[k].jumped, >, f.tally[k].layouts / 2);
  fixture_tear_down(&f);
}

static void test_random_moe_layouts(void) {
  g_test_summary("1,500 random mixture-of-experts layouts (Mixtral, Qwen3, DeepSeek-V2-Lite and "
                 "V3; every schedule and dispatcher, ZeRO-2/3 with experts over edp, m up to "
                 "300): shortcut == every event, byte for byte, and the ep kind is exposed");
  Fixture f;
  guint with_ep = 0, sharded = 0;
  fixture_set_up(&f, 15);
  for (int n = 0; n < 1500;) {
    PtsimJob job;
    if (!jobgen_try_moe(&f.d.pool, f.d.rand, &job, 300)) continue;
    ptsim_plan_build(&job, f.d.plan);
    if (f.d.plan->schedule_items < 0) continue;
    ptsim_workload_build(f.d.plan, NULL, f.w);
    check_same(f.d.plan, f.w, f.out, &f.tally[job.layout.schedule]);
    with_ep += f.out->exposed_comm_s[PTSIM_COMM_EP] > 0.0;
    sharded += f.d.plan->zero_stage >= 2;
    n++;
  }
  for (int k = 0; k < 4; k++) g_assert_cmpuint(f.tally[k].layouts, >, 100);
  for (int k = 0; k < 4; k++)
    if (k != PTSIM_SCHEDULE_GPIPE) g_assert_cmpuint(f.tally[k].jumped, >, f.tally[k].layouts / 2);
  /* ep > 1 layouts wait for their all-to-alls */
  g_assert_cmpuint(with_ep, >, 500);
  g_assert_cmpuint(sharded, >, 100);
  fixture_tear_down(&f);
}

/* A plan and workload for (schedule, p, v, m) with durations of a few
 * nanoseconds, so that events tie all the time; per-stage layer counts and
 * the embedding and head make the stages unequal, and so do MoE layers
 * (with ep communication) in some virtual stages. */
static void synthetic(GRand *rand, const PtsimJob *base, PtsimSchedule schedule, int p, int v,
                      int m, int g, PtsimPlan *plan, PtsimWorkload *w) {
  ptsim_plan_build(base, plan);
  plan->job.layout.schedule = schedule;
  plan->job.layout.pp = p;
  plan->job.layout.vp = v;
  plan->job.layout.microbatch_group = g;
  plan->microbatch_group = g > 0 ? g : p;
  plan->job.settings.overlap_grad_reduce = g_rand_boolean(rand);
  plan->job.settings.overlap_param_gather = g_rand_boolean(rand);
  plan->num_stages = p;
  plan->num_chunks = v;
  plan->num_microbatches = m;
  plan->schedule_items = ptsim_schedule_num_items(schedule, p, m, v, g);
  ptsim_schedule_vstages(schedule, p, v, &plan->vstages);
  memset(w, 0, sizeof *w);
  w->num_stages = p;
  w->num_chunks = v;
  w->num_microbatches = m;
  w->first_stage = plan->vstages.first_stage;
  w->last_stage = plan->vstages.last_stage;
  PtsimWork *works[4] = {&w->layer, &w->embedding, &w->head, &w->moe_layer};
  for (int k = 0; k < 4; k++) {
    works[k]->forward_s = g_rand_int_range(rand, k == 0, 4) * 1e-9;
    works[k]->backward_input_s = g_rand_int_range(rand, k == 0, 5) * 1e-9;
    works[k]->backward_weight_s = g_rand_int_range(rand, 0, 3) * 1e-9;
    works[k]->forward_comm_s[PTSIM_COMM_TP] = g_rand_int_range(rand, 0, 2) * 1e-9;
  }
  /* an MoE layer: its dispatch and combine block the compute stream */
  double ep_f = g_rand_int_range(rand, 0, 3) * 1e-9, ep_b = g_rand_int_range(rand, 0, 3) * 1e-9;
  w->moe_layer.forward_s += ep_f;
  w->moe_layer.backward_input_s += ep_b;
  w->moe_layer.forward_comm_s[PTSIM_COMM_EP] = ep_f;
  w->moe_layer.backward_comm_s[PTSIM_COMM_EP] = ep_b;
  for (int s = 0; s < p; s++) {
    /* chunks of unequal layers, as a pipeline layout gives them; the first
     * and the last virtual stage none some of the time, the others some
     * MoE ones */
    for (int c = 0; c < v; c++) {
      int vs = c * p + s;
      w->chunk_layers[s * v + c] = g_rand_int_range(rand, (vs == 0 || vs == p * v - 1) ? 0 : 1, 4);
      w->chunk_moe_layers[s * v + c] = (int16_t)g_rand_int_range(rand, 0,
                                                                 w->chunk_layers[s * v + c] + 1);
    }
    w->grad_sync_s[s] = g_rand_int_range(rand, 0, 40) * 1e-9;
    w->param_gather_s[s] = g_rand_int_range(rand, 0, 20) * 1e-9;
    w->optimizer_s[s] = g_rand_int_range(rand, 0, 20) * 1e-9;
  }
  w->pp_transfer_s = g_rand_int_range(rand, 0, 4) * 1e-9;
  w->model_flops = 1e12;
}

static void test_synthetic_ties(void) {
  g_test_summary("3,000 synthetic pipelines whose ns durations tie everywhere (p 1..8, v 1..4, "
                 "m up to 200, interleaved in microbatch groups of pp up to m, chunks of "
                 "unequal layers): shortcut == every event, byte for byte");
  Fixture f;
  fixture_set_up(&f, 1313);
  PtsimJob base;
  while (!jobgen_try(&f.d.pool, f.d.rand, &base)) {
  }
  for (int n = 0; n < 3000;) {
    PtsimSchedule schedule = (PtsimSchedule)g_rand_int_range(f.d.rand, 0, 4);
    int p = g_rand_int_range(f.d.rand, 1, 9);
    int v = schedule == PTSIM_SCHEDULE_INTERLEAVED ? g_rand_int_range(f.d.rand, 1, 5) : 1;
    int m = g_rand_int_range(f.d.rand, 1, 201), g = 0;
    /* interleaved: half in groups of pp (m a multiple), half in groups of
     * g up to 3 pp, m any count that Megatron-LM accepts with it */
    if (schedule == PTSIM_SCHEDULE_INTERLEAVED && g_rand_boolean(f.d.rand))
      m = p * MAX(1, m / p);
    else if (schedule == PTSIM_SCHEDULE_INTERLEAVED)
      g = p + g_rand_int_range(f.d.rand, 0, 2 * p + 1);
    if (ptsim_schedule_check(schedule, p, m, v, g) != 0) continue;
    synthetic(f.d.rand, &base, schedule, p, v, m, g, f.d.plan, f.w);
    check_same(f.d.plan, f.w, f.out, &f.tally[schedule]);
    n++;
  }
  fixture_tear_down(&f);
}

static void test_v_shape_ties(void) {
  g_test_summary("1,000 synthetic ZBV and DualPipeV pipelines (p 1..8, m from the least PyTorch "
                 "runs to 200, ns durations that tie, MoE chunks whose all-to-alls DualPipeV's "
                 "overlapped pairs hide): shortcut == every event, byte for byte");
  Fixture f;
  Tally tally;
  memset(&tally, 0, sizeof tally);
  fixture_set_up(&f, 2828);
  PtsimJob base;
  while (!jobgen_try(&f.d.pool, f.d.rand, &base)) {
  }
  for (int n = 0; n < 1000;) {
    PtsimSchedule schedule = n % 2 ? PTSIM_SCHEDULE_DUALPIPEV : PTSIM_SCHEDULE_ZBV;
    int p = g_rand_int_range(f.d.rand, 1, 9);
    int m = g_rand_int_range(f.d.rand, 2 * p, 201);
    if (ptsim_schedule_check(schedule, p, m, 2, 0) != 0) continue;
    synthetic(f.d.rand, &base, schedule, p, 2, m, 0, f.d.plan, f.w);
    check_same(f.d.plan, f.w, f.out, &tally);
    n++;
  }
  g_assert_cmpuint(tally.layouts, ==, 1000);
  fixture_tear_down(&f);
}

static void test_replay_other_costs(void) {
  g_test_summary("600 synthetic shapes of every schedule (p 1..8, m up to 120), each recorded "
                 "once and replayed with 4 draws of its costs: replay == every event, byte for "
                 "byte");
  Fixture f;
  Tally tally;
  memset(&tally, 0, sizeof tally);
  fixture_set_up(&f, 4242);
  PtsimJob base;
  while (!jobgen_try(&f.d.pool, f.d.rand, &base)) {
  }
  for (int n = 0; n < 600;) {
    PtsimSchedule schedule = (PtsimSchedule)(n % 6);
    int p = g_rand_int_range(f.d.rand, 1, 9);
    int v = schedule == PTSIM_SCHEDULE_INTERLEAVED ? g_rand_int_range(f.d.rand, 1, 5)
            : schedule == PTSIM_SCHEDULE_ZBV || schedule == PTSIM_SCHEDULE_DUALPIPEV ? 2
                                                                                     : 1;
    int m = g_rand_int_range(f.d.rand, 1, 121);
    if (schedule == PTSIM_SCHEDULE_INTERLEAVED) m = p * MAX(1, m / p);
    if (ptsim_schedule_check(schedule, p, m, v, 0) != 0) continue;
    for (int k = 0; k < 4; k++) { /* the same shape, other costs: one table */
      synthetic(f.d.rand, &base, schedule, p, v, m, 0, f.d.plan, f.w);
      check_same(f.d.plan, f.w, f.out, &tally);
    }
    n++;
  }
  g_assert_cmpuint(tally.layouts, ==, 2400);
  fixture_tear_down(&f);
}

static void test_random_pipelines(void) {
  g_test_summary("1,500 random interleaved layouts, dense and mixture-of-experts (DeepSeek-V3's "
                 "MTP layers included), in microbatch groups of pp up to m with m no multiple of "
                 "pp, half with virtual stages of unequal layers (m up to 300): shortcut == "
                 "every event, byte for byte");
  Fixture f;
  guint grouped = 0, uneven = 0, partial = 0;
  fixture_set_up(&f, 17);
  for (int n = 0; n < 1500;) {
    PtsimJob job;
    if (!jobgen_try_pipeline(&f.d.pool, f.d.rand, &job, n % 3 == 2, 300)) continue;
    ptsim_plan_build(&job, f.d.plan);
    if (f.d.plan->schedule_items < 0) continue;
    ptsim_workload_build(f.d.plan, NULL, f.w);
    check_same(f.d.plan, f.w, f.out, &f.tally[job.layout.schedule]);
    grouped += f.d.plan->microbatch_group != job.layout.pp;
    partial += f.d.plan->num_microbatches % f.d.plan->microbatch_group != 0;
    uneven += job.layout.vstage_runs > 0;
    n++;
  }
  g_test_message("%u in groups other than pp, %u with a shorter last group, %u with unequal "
                 "virtual stages",
                 grouped, partial, uneven);
  g_assert_cmpuint(grouped, >, 500);
  g_assert_cmpuint(partial, >, 200);
  g_assert_cmpuint(uneven, >, 500);
  g_assert_cmpuint(f.tally[PTSIM_SCHEDULE_INTERLEAVED].jumped, >, 750);
  fixture_tear_down(&f);
}

static void test_cost_flat_in_m(void) {
  g_test_summary("Llama-3-70B tp 8 pp 8: the events simulated stop growing with m");
  static const PtsimSchedule kinds[] = {PTSIM_SCHEDULE_1F1B, PTSIM_SCHEDULE_INTERLEAVED,
                                        PTSIM_SCHEDULE_ZB_H1};
  Fixture f;
  g_autoptr(GError) error = NULL;
  fixture_set_up(&f, 1);
  for (guint k = 0; k < G_N_ELEMENTS(kinds); k++) {
    int64_t simulated[3];
    static const int64_t ms[3] = {256, 1024, 4096};
    for (int i = 0; i < 3; i++) {
      PtsimJob job;
      Tally tally;
      memset(&tally, 0, sizeof tally);
      memset(&job, 0, sizeof job);
      job.model = f.d.pool.models[1]; /* llama3-70b */
      job.hw = f.d.pool.hardware[1];  /* h100-80g */
      ptsim_job_init_defaults(&job);
      job.layout.tp = 8;
      job.layout.pp = 8;
      job.layout.dp = 1;
      job.layout.gpus = 64;
      job.layout.mbs = 1;
      job.layout.seq = 4096;
      job.layout.gbs = ms[i];
      job.layout.schedule = kinds[k];
      job.layout.vp = kinds[k] == PTSIM_SCHEDULE_INTERLEAVED ? 5 : 1;
      g_assert_true(ptsim_job_validate(&job, &error));
      ptsim_plan_build(&job, f.d.plan);
      ptsim_workload_build(f.d.plan, NULL, f.w);
      check_same(f.d.plan, f.w, f.out, &tally);
      g_assert_cmpuint(tally.jumped, ==, 1);
      simulated[i] = (int64_t)tally.simulated;
      g_test_message("%s m %" G_GINT64_FORMAT ": %" G_GUINT64_FORMAT " events, %" G_GINT64_FORMAT
                     " simulated",
                     schedule_names[kinds[k]], ms[i], tally.events, simulated[i]);
    }
    /* at most one more period of the schedule (2pv items on 8 stages) is
     * left after the jump, whatever m */
    int64_t period_events = 2 * 8 * 3 * (kinds[k] == PTSIM_SCHEDULE_INTERLEAVED ? 8 * 5 : 1);
    g_assert_cmpint(ABS(simulated[2] - simulated[0]), <=, period_events);
    g_assert_cmpint(ABS(simulated[1] - simulated[0]), <=, period_events);
  }
  fixture_tear_down(&f);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/engine-period/random-layouts", test_random_layouts);
  g_test_add_func("/engine-period/random-moe-layouts", test_random_moe_layouts);
  g_test_add_func("/engine-period/synthetic-ties", test_synthetic_ties);
  g_test_add_func("/engine-period/random-pipelines", test_random_pipelines);
  g_test_add_func("/engine-period/v-shape-ties", test_v_shape_ties);
  g_test_add_func("/engine-period/cost-flat-in-m", test_cost_flat_in_m);
  g_test_add_func("/engine-period/replay-other-costs", test_replay_other_costs);
  return g_test_run();
}
