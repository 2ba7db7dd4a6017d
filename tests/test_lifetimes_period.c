/* test_lifetimes_period.c — the allocator replay's periodic shortcut is
 * exact: over random layouts of every schedule and recompute variant (and
 * mixture-of-experts models with their dispatch and MTP layers, PyTorch's
 * layers with torch's per-op checkpointing),
 * under PyTorch's default allocator and under every option the emulation
 * has (max_split_size, power-2 rounding, GC with a memory fraction,
 * expandable segments), and at capacities that make allocations fail at
 * every point of a step, and under every data-parallel mode (ZeRO-1/2/3,
 * FSDP and HSDP with their gathered units, gradients and reduce-scatter
 * buffers), the replay that skips repeats gives the same
 * PtsimStageAlloc, byte for byte (peaks, fragmentation, where the peak was
 * reached, OOM point and tensor), as the replay of every item.  Also: it
 * does skip, its cost stops growing with the microbatches, and a timeline
 * or `--no-shortcut` replays every item. */
#include <glib.h>
#include <string.h>
#include "job_fixture.h"
#include "config.h"
#include "jobgen.h"
#include "job_validate.h"
#include "lifetimes.h"
#include "plan.h"
#include "simulate.h"

#define GIB (1024.0 * 1024.0 * 1024.0)
#define MIB ((int64_t)1048576)

typedef struct {
  guint layouts, jumped;
  guint64 items, replayed;
} Tally;

static const char *const schedule_names[] = {"1f1b", "gpipe", "interleaved", "zb-h1"};

/* The option sets the emulation knows (lifetimes.h: opts NULL = PyTorch's defaults). */
static void draw_options(GRand *rand, PtsimAllocOptions *o) {
  ptsim_alloc_options_init(o);
  switch (g_rand_int_range(rand, 0, 6)) {
  case 0:
  case 1:
    break; /* defaults, the sweep's */
  case 2:
    o->max_split_size_bytes = 200 * MIB;
    break;
  case 3:
    ptsim_alloc_options_set_divisions(o, 4);
    break;
  case 4:
    o->memory_fraction = 0.95;
    o->garbage_collection_threshold = 0.6;
    break;
  default:
    o->expandable_segments = 1;
    break;
  }
}

/* Recompute variants beyond jobgen's kinds: Megatron's uniform groups and
 * block method, unfused attention (the s x s scores kept), and past
 * Megatron-LM releases. */
static void draw_variant(GRand *rand, PtsimJob *job) {
  PtsimSettings *run = &job->settings;
  PtsimProvenance *src = &job->source;
  if (run->recompute == PTSIM_RECOMPUTE_FULL && g_rand_boolean(rand)) {
    run->recompute_method = g_rand_boolean(rand) ? PTSIM_RECOMPUTE_METHOD_BLOCK
                                                 : PTSIM_RECOMPUTE_METHOD_UNIFORM;
    run->recompute_num_layers = g_rand_int_range(rand, 1, 4);
  }
  if (g_rand_int_range(rand, 0, 5) == 0) run->flash_attention = 0;
  if (g_rand_int_range(rand, 0, 5) == 0) src->hidden_dropout = 0.1;
  /* Megatron-LM releases whose loss or unfused attention kept more
   * (lifetimes.h, "Releases"); 0 is the current one */
  static const int32_t dates[] = {0, 20200101, 20221201, 20230801};
  src->megatron_date = dates[g_rand_int_range(rand, 0, 4)];
  /* PyTorch's layers (torchtitan), a third of them checkpointed per op:
   * the layer's slots hold what the checkpoint keeps (dense models; what
   * validation refuses is redrawn) */
  if (g_rand_int_range(rand, 0, 5) == 0) {
    run->torch_layers = g_rand_boolean(rand) ? PTSIM_TORCH_LAYERS_EAGER
                                             : PTSIM_TORCH_LAYERS_COMPILED;
    run->transformer_engine = 0;
    src->megatron_date = 0;
    if (run->recompute == PTSIM_RECOMPUTE_SELECTIVE || g_rand_int_range(rand, 0, 3) == 0) {
      run->recompute = PTSIM_RECOMPUTE_SELECTIVE_OP;
      run->flash_attention = 1;
    }
  }
}

/* Both replays of every stage; asserts the same bytes (but for
 * items_replayed, the count the shortcut exists to lower). */
static void check_same(const PtsimPlan *plan, const PtsimAllocOptions *opts, Tally *tally) {
  g_autofree PtsimAllocResult *fast = g_new0(PtsimAllocResult, 1);
  g_autofree PtsimAllocResult *full = g_new0(PtsimAllocResult, 1);
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_simulate_allocator_with(plan, PTSIM_LIFETIMES_STEPS, opts, TRUE, NULL, 0.0,
                                              NULL, full, &error));
  g_assert_true(ptsim_simulate_allocator_with(plan, PTSIM_LIFETIMES_STEPS, opts, FALSE, NULL, 0.0,
                                              NULL, fast, &error));
  g_assert_no_error(error);
  int64_t all = (int64_t)PTSIM_LIFETIMES_STEPS * plan->schedule_items;
  gboolean jumped = FALSE;
  for (int64_t s = 0; s < plan->num_stages; s++) {
    g_assert_cmpint(full->stages[s].items_replayed, <=, all);
    g_assert_cmpint(fast->stages[s].items_replayed, <=, full->stages[s].items_replayed);
    jumped |= fast->stages[s].items_replayed < full->stages[s].items_replayed;
    tally->items += (guint64)full->stages[s].items_replayed;
    tally->replayed += (guint64)fast->stages[s].items_replayed;
    fast->stages[s].items_replayed = full->stages[s].items_replayed = 0;
  }
  tally->layouts++;
  tally->jumped += jumped;
  if (memcmp(fast, full, sizeof *fast) != 0) {
    for (int64_t s = 0; s < plan->num_stages; s++) {
      const PtsimStageAlloc *a = &fast->stages[s], *b = &full->stages[s];
      if (memcmp(a, b, sizeof *a) == 0) continue;
      g_test_message("stage %" G_GINT64_FORMAT " differs: schedule %d p %" G_GINT64_FORMAT
                     " v %" G_GINT64_FORMAT " m %" G_GINT64_FORMAT ": reserved %.0f vs %.0f, "
                     "allocated %.0f vs %.0f, fits %d vs %d, oom item %d vs %d",
                     s, (int)plan->job.layout.schedule, plan->num_stages, plan->num_chunks,
                     plan->num_microbatches, a->reserved_peak_bytes, b->reserved_peak_bytes,
                     a->allocated_peak_bytes, b->allocated_peak_bytes, a->fits, b->fits,
                     a->oom_item, b->oom_item);
    }
    g_assert_not_reached();
  }
}

static void report(const Tally *by_schedule) {
  for (int k = 0; k < 4; k++) {
    const Tally *t = &by_schedule[k];
    if (t->layouts == 0) continue;
    g_test_message("%-11s %4u layouts, %4u took the shortcut; items %" G_GUINT64_FORMAT
                   ", replayed %" G_GUINT64_FORMAT " (%.1f%%)",
                   schedule_names[k], t->layouts, t->jumped, t->items, t->replayed,
                   100.0 * (double)t->replayed / (double)MAX(t->items, 1));
  }
}

typedef struct {
  JobgenDraws d;
  Tally tally[4];
} Fixture;

static void fixture_set_up(Fixture *f, guint32 seed) {
  memset(f, 0, sizeof *f);
  jobgen_draws_open(&f->d, seed);
}

static void fixture_tear_down(Fixture *f) {
  report(f->tally);
  jobgen_draws_close(&f->d);
}

/* A random valid layout with m up to max_m; FALSE when the draw failed. */
static gboolean draw_layout(Fixture *f, int max_m, PtsimJob *job) {
  g_autoptr(GError) error = NULL;
  if (!jobgen_try_long(&f->d.pool, f->d.rand, job, max_m)) return FALSE;
  draw_variant(f->d.rand, job);
  if (!ptsim_job_validate(job, &error)) return FALSE;
  ptsim_plan_build(job, f->d.plan);
  return f->d.plan->schedule_items > 0;
}

static void test_random_layouts(void) {
  g_test_summary("600 random layouts (every schedule and recompute variant, m up to 160, every "
                 "allocator option set): the shortcut's result == every item's, byte for byte");
  Fixture f;
  Tally per_op;
  memset(&per_op, 0, sizeof per_op);
  fixture_set_up(&f, 29);
  for (int n = 0; n < 600;) {
    PtsimJob job;
    PtsimAllocOptions opts;
    if (!draw_layout(&f, 160, &job)) continue;
    draw_options(f.d.rand, &opts);
    check_same(f.d.plan, &opts,
               job.settings.recompute == PTSIM_RECOMPUTE_SELECTIVE_OP
                   ? &per_op
                   : &f.tally[job.layout.schedule]);
    n++;
  }
  report(f.tally);
  g_test_message("torch's per-op checkpointing: %u layouts, %u took the shortcut", per_op.layouts,
                 per_op.jumped);
  g_assert_cmpuint(per_op.layouts, >, 20);
  g_assert_cmpuint(per_op.jumped, >, 0);
  for (int k = 0; k < 4; k++) g_assert_cmpuint(f.tally[k].layouts, >, 80);
  /* The shortcut is taken: the allocator settles into a repeating state
   * within a step often under 1F1B and ZB-H1; under the interleaved
   * schedule it takes many periods to (test_lifetimes_period's report). */
  g_assert_cmpuint(f.tally[PTSIM_SCHEDULE_1F1B].jumped, >,
                   f.tally[PTSIM_SCHEDULE_1F1B].layouts / 10);
  g_assert_cmpuint(f.tally[PTSIM_SCHEDULE_ZB_H1].jumped, >,
                   f.tally[PTSIM_SCHEDULE_ZB_H1].layouts / 10);
  g_assert_cmpuint(f.tally[PTSIM_SCHEDULE_INTERLEAVED].jumped, >, 0);
  fixture_tear_down(&f);
}

static void test_failures_anywhere(void) {
  g_test_summary("Capacities from 40% of the GPU to all of it, so that allocations fail "
                 "in the warm-up, the steady state and the cool-down of either step: the OOM "
                 "point and tensor are the same with and without the shortcut");
  Fixture f;
  fixture_set_up(&f, 31);
  guint failed = 0, by_step[2] = {0, 0};
  for (int n = 0; n < 300;) {
    PtsimJob job;
    PtsimAllocOptions opts;
    if (!draw_layout(&f, 120, &job)) continue;
    /* what the replay holds sits between these: the failure lands anywhere */
    job.hw.memory_bytes *= g_rand_double_range(f.d.rand, 0.4, 1.0);
    ptsim_plan_build(&job, f.d.plan);
    draw_options(f.d.rand, &opts);
    check_same(f.d.plan, &opts, &f.tally[job.layout.schedule]);
    g_autofree PtsimAllocResult *a = g_new0(PtsimAllocResult, 1);
    g_assert_true(
        ptsim_simulate_allocator(f.d.plan, PTSIM_LIFETIMES_STEPS, &opts, NULL, 0.0, NULL, a, NULL));
    for (int64_t s = 0; s < a->num_stages; s++)
      if (!a->stages[s].fits) by_step[a->stages[s].oom_step > 0]++;
    failed += !a->fits;
    n++;
  }
  g_test_message("%u of 300 layouts ran out of memory; stages failing in step 0: %u, in the "
                 "steady step: %u",
                 failed, by_step[0], by_step[1]);
  g_assert_cmpuint(failed, >, 30);
  g_assert_cmpuint(failed, <, 270);
  g_assert_cmpuint(by_step[0], >, 0);
  g_assert_cmpuint(by_step[1], >, 0);
  fixture_tear_down(&f);
}

/* A data-parallel mode as --sharding spells it (ddp, zero1, zero2, fsdp,
 * hsdp with a shard group drawn among the sizes that divide dp x cp), each
 * FSDP implementation, reshard policy and prefetch setting; FALSE when the
 * draw has no such mode (hsdp without a smaller shard group). */
static gboolean draw_sharding(GRand *rand, PtsimJob *job, int *mode) {
  PtsimLayout *l = &job->layout;
  PtsimSettings *run = &job->settings;
  int64_t ranks = l->dp * l->cp, sizes[8], n = 0;
  *mode = g_rand_int_range(rand, PTSIM_SHARDING_MODE_DDP, PTSIM_SHARDING_MODE_HSDP + 1);
  for (int64_t size = l->cp; size < ranks && n < 8; size *= 2)
    if (ranks % size == 0) sizes[n++] = size;
  if (*mode == PTSIM_SHARDING_MODE_HSDP && n == 0) return FALSE;
  if (!ptsim_layout_set_sharding(l, 8, *mode,
                                 *mode == PTSIM_SHARDING_MODE_HSDP
                                     ? sizes[g_rand_int_range(rand, 0, (gint32)n)]
                                     : -1,
                                 NULL))
    return FALSE;
  run->fsdp_impl = g_rand_boolean(rand) ? PTSIM_FSDP_TORCH : PTSIM_FSDP_MEGATRON;
  run->reshard_after_forward = g_rand_int_range(rand, PTSIM_RESHARD_AUTO, PTSIM_RESHARD_ALWAYS + 1);
  run->fsdp_prefetch = g_rand_int_range(rand, 0, 3) != 0;
  run->overlap_param_gather = l->distributed_optimizer && run->overlap_param_gather;
  return TRUE;
}

static void test_sharded_layouts(void) {
  g_test_summary("600 random layouts, dense and mixture-of-experts, under each data-parallel "
                 "mode (ddp, zero1, zero2, fsdp, hsdp; Megatron's and torch's FSDP; reshard "
                 "after forward always, but the last, never; prefetch or not), a quarter at "
                 "capacities that fail: the shortcut's result == every item's, byte for byte");
  static const char *const modes[] = {"ddp", "zero1", "zero2", "fsdp", "hsdp"};
  Fixture f;
  Tally by_mode[5], by_reshard[3];
  memset(by_mode, 0, sizeof by_mode);
  memset(by_reshard, 0, sizeof by_reshard);
  fixture_set_up(&f, 37);
  guint moe = 0, torch = 0, no_prefetch = 0, sync_once = 0;
  for (int n = 0; n < 600;) {
    PtsimJob job;
    PtsimAllocOptions opts;
    g_autoptr(GError) error = NULL;
    int mode;
    gboolean is_moe = g_rand_boolean(f.d.rand);
    if (!(is_moe ? jobgen_try_moe(&f.d.pool, f.d.rand, &job, 120)
                 : jobgen_try_long(&f.d.pool, f.d.rand, &job, 120)))
      continue;
    draw_variant(f.d.rand, &job);
    if (!draw_sharding(f.d.rand, &job, &mode) || !ptsim_job_validate(&job, &error)) continue;
    if (g_rand_int_range(f.d.rand, 0, 4) == 0)
      job.hw.memory_bytes *= g_rand_double_range(f.d.rand, 0.4, 1.0);
    ptsim_plan_build(&job, f.d.plan);
    if (f.d.plan->schedule_items <= 0) continue;
    draw_options(f.d.rand, &opts);
    guint jumped = f.tally[job.layout.schedule].jumped;
    check_same(f.d.plan, &opts, &f.tally[job.layout.schedule]);
    jumped = f.tally[job.layout.schedule].jumped - jumped;
    by_mode[mode].layouts++;
    by_mode[mode].jumped += jumped;
    if (f.d.plan->zero_stage == 3) {
      by_reshard[job.settings.reshard_after_forward].layouts++;
      by_reshard[job.settings.reshard_after_forward].jumped += jumped;
      torch += job.settings.fsdp_impl == PTSIM_FSDP_TORCH;
      no_prefetch += !job.settings.fsdp_prefetch;
      sync_once += f.d.plan->sync_once;
    }
    moe += is_moe;
    n++;
  }
  for (int k = 0; k < 5; k++)
    g_test_message("%-5s %3u layouts, %3u took the shortcut", modes[k], by_mode[k].layouts,
                   by_mode[k].jumped);
  for (int k = 0; k < 3; k++)
    g_test_message("ZeRO-3 reshard %d: %3u layouts, %3u took the shortcut", k,
                   by_reshard[k].layouts, by_reshard[k].jumped);
  g_test_message("mixture-of-experts %u; ZeRO-3 torch %u, without prefetch %u, sync_once %u", moe,
                 torch, no_prefetch, sync_once);
  for (int k = 0; k < 5; k++) {
    g_assert_cmpuint(by_mode[k].layouts, >, 40);
    g_assert_cmpuint(by_mode[k].jumped, >, 0);
  }
  /* the gathered units stay between items (never, but the last) or come
   * and go within one (always): the shortcut is taken under each */
  for (int k = 0; k < 3; k++) g_assert_cmpuint(by_reshard[k].jumped, >, 0);
  g_assert_cmpuint(moe, >, 100);
  g_assert_cmpuint(torch, >, 20);
  g_assert_cmpuint(no_prefetch, >, 20);
  g_assert_cmpuint(sync_once, >, 5);
  fixture_tear_down(&f);
}

typedef struct {
  const char *model;
  gint64 gpus, tp, pp, ep, vp, first, last; /* first/last: uneven stage ends */
} MoeCase;

static void test_moe_layouts(void) {
  g_test_summary("Mixture-of-experts models (expert layers among dense ones, the dispatch's "
                 "transients, DeepSeek-V3's MTP layer on the last stage) under 1F1B, ZB-H1 and "
                 "the interleaved schedule: the shortcut's result == every item's");
  static const MoeCase cases[] = {
      {"mixtral-8x7b", 64, 2, 4, 8, 2, 0, 0},
      {"deepseek-v2-lite", 24, 1, 3, 8, 3, 0, 0},
      {"qwen3-30b-a3b", 64, 2, 4, 8, 2, 0, 0},
      {"deepseek-v3", 256, 1, 8, 32, 1, 5, 8},
  };
  static const PtsimSchedule schedules[] = {PTSIM_SCHEDULE_1F1B, PTSIM_SCHEDULE_ZB_H1,
                                            PTSIM_SCHEDULE_INTERLEAVED};
  g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
  Tally tally[4];
  memset(tally, 0, sizeof tally);
  for (gsize c = 0; c < G_N_ELEMENTS(cases); c++)
    for (gsize k = 0; k < G_N_ELEMENTS(schedules); k++) {
      const MoeCase *mc = &cases[c];
      if (schedules[k] == PTSIM_SCHEDULE_INTERLEAVED && mc->vp < 2) continue;
      PtsimJob job;
      g_autoptr(GError) error = NULL;
      memset(&job, 0, sizeof job);
      g_assert_true(ptsim_model_load(mc->model, &job.model, &error));
      g_assert_true(ptsim_hardware_load("h200-141g", &job.hw, &error));
      ptsim_job_init_defaults(&job);
      PtsimLayout *l = &job.layout;
      l->gpus = mc->gpus, l->tp = mc->tp, l->pp = mc->pp, l->ep = mc->ep;
      l->first_stage_layers = mc->first, l->last_stage_layers = mc->last;
      l->schedule = schedules[k];
      l->vp = schedules[k] == PTSIM_SCHEDULE_INTERLEAVED ? mc->vp : 1;
      l->seq = 4096;
      l->dp = mc->gpus / (mc->tp * mc->pp);
      l->gbs = 24 * mc->pp * l->dp; /* 24 pp microbatches: a steady state */
      if (!ptsim_job_validate(&job, &error)) {
        g_test_message("%s %d: %s", mc->model, (int)schedules[k], error->message);
        g_assert_not_reached();
      }
      ptsim_plan_build(&job, plan);
      check_same(plan, NULL, &tally[schedules[k]]);
    }
  report(tally);
}

static void test_random_pipelines(void) {
  g_test_summary("300 random interleaved layouts, dense and mixture-of-experts (DeepSeek-V3's MTP "
                 "layers on the last virtual stage included), in microbatch groups of pp up to m "
                 "with m no multiple of pp, half with virtual stages of unequal layers (the last "
                 "sometimes empty), every recompute variant and allocator option set, a quarter "
                 "at capacities that fail: the shortcut's result == every item's, byte for byte");
  Fixture f;
  guint grouped = 0, uneven = 0, moe = 0;
  fixture_set_up(&f, 41);
  for (int n = 0; n < 300;) {
    PtsimJob job;
    PtsimAllocOptions opts;
    g_autoptr(GError) error = NULL;
    gboolean is_moe = n % 3 == 2;
    if (!jobgen_try_pipeline(&f.d.pool, f.d.rand, &job, is_moe, 120)) continue;
    draw_variant(f.d.rand, &job);
    if (!ptsim_job_validate(&job, &error)) continue;
    if (g_rand_int_range(f.d.rand, 0, 4) == 0)
      job.hw.memory_bytes *= g_rand_double_range(f.d.rand, 0.4, 1.0);
    ptsim_plan_build(&job, f.d.plan);
    if (f.d.plan->schedule_items <= 0) continue;
    draw_options(f.d.rand, &opts);
    check_same(f.d.plan, &opts, &f.tally[job.layout.schedule]);
    grouped += f.d.plan->microbatch_group != job.layout.pp;
    uneven += job.layout.vstage_runs > 0;
    moe += is_moe;
    n++;
  }
  g_test_message("%u in groups other than pp, %u with unequal virtual stages, %u MoE", grouped,
                 uneven, moe);
  g_assert_cmpuint(grouped, >, 100);
  g_assert_cmpuint(uneven, >, 100);
  g_assert_cmpuint(f.tally[PTSIM_SCHEDULE_INTERLEAVED].jumped, >, 0);
  fixture_tear_down(&f);
}

static void test_interleaved_stored_states(void) {
  g_test_summary("Interleaved Llama-3-70B (pp 4, vp 4, 256 microbatches): the allocator comes "
                 "back to a state only tens of periods later, which the states stored along the "
                 "stretch find (most stages skip), with the same bytes as every item");
  PtsimJob job;
  FixtureLayout l = {64, 4, 4, 4, 1, 1024, 4096, PTSIM_RECOMPUTE_NONE};
  fixture_job(&job, "llama3-70b", "h100-80g", l);
  g_assert_cmpint(job.layout.schedule, ==, PTSIM_SCHEDULE_INTERLEAVED);
  g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
  g_autofree PtsimAllocResult *a = g_new0(PtsimAllocResult, 1);
  g_autoptr(GError) error = NULL;
  Tally tally[4];
  memset(tally, 0, sizeof tally);
  ptsim_plan_build(&job, plan);
  g_assert_cmpint(plan->num_microbatches, ==, 256);
  check_same(plan, NULL, &tally[PTSIM_SCHEDULE_INTERLEAVED]);
  g_assert_true(ptsim_simulate_allocator_with(plan, PTSIM_LIFETIMES_STEPS, NULL, FALSE, NULL, 0.0,
                                              NULL, a, &error));
  int skipped = 0;
  for (int64_t s = 0; s < plan->num_stages; s++) {
    g_test_message("stage %" G_GINT64_FORMAT ": %" G_GINT64_FORMAT " of %" G_GINT64_FORMAT
                   " items replayed",
                   s, a->stages[s].items_replayed,
                   (int64_t)PTSIM_LIFETIMES_STEPS * plan->schedule_items);
    skipped += a->stages[s].items_replayed < (int64_t)PTSIM_LIFETIMES_STEPS * plan->schedule_items;
  }
  g_assert_cmpint(skipped, >=, 3);
}

/* Items the shortcut replays for a 1F1B Llama-3-70B layout (pp 8) with m
 * microbatches, all stages, both steps. */
static int64_t replayed_at(int64_t m, gboolean every_item) {
  PtsimJob job;
  g_autoptr(GError) error = NULL;
  FixtureLayout l = {64, 8, 8, 1, 1, m, 4096, PTSIM_RECOMPUTE_NONE};
  fixture_job(&job, "llama3-70b", "h100-80g", l);
  g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
  g_autofree PtsimAllocResult *a = g_new0(PtsimAllocResult, 1);
  ptsim_plan_build(&job, plan);
  g_assert_true(ptsim_simulate_allocator_with(plan, PTSIM_LIFETIMES_STEPS, NULL, every_item, NULL,
                                              0.0, NULL, a, &error));
  g_assert_true(a->fits);
  int64_t n = 0;
  GString *per = g_string_new(NULL);
  for (int64_t s = 0; s < plan->num_stages; s++) {
    n += a->stages[s].items_replayed;
    g_string_append_printf(per, " %" G_GINT64_FORMAT, a->stages[s].items_replayed);
  }
  g_test_message("m %" G_GINT64_FORMAT ":%s", m, per->str);
  g_string_free(per, TRUE);
  return n;
}

static void test_cost_independent_of_m(void) {
  g_test_summary("Llama-3-70B, pp 8, 1F1B: once the allocator has settled (a few hundred items "
                 "per stage), 1024 and 4096 microbatches replay the same items but for a few; "
                 "every item without the shortcut");
  int64_t m1024 = replayed_at(1024, FALSE), m4096 = replayed_at(4096, FALSE);
  g_test_message("items replayed: m 1024 %" G_GINT64_FORMAT ", m 4096 %" G_GINT64_FORMAT, m1024,
                 m4096);
  /* every item: 2 steps x 8 stages x 2m items */
  g_assert_cmpint(replayed_at(1024, TRUE), ==, 2 * 8 * 2 * 1024);
  g_assert_cmpint(m1024, <, 2 * 8 * 2 * 1024 / 4);
  g_assert_cmpint(m4096, <=, m1024 + m1024 / 10);
}

static void test_timeline_replays_every_item(void) {
  g_test_summary("With a timeline every item is replayed (a sample after each)");
  PtsimJob job;
  FixtureLayout l = {8, 1, 4, 1, 1, 256, 4096, PTSIM_RECOMPUTE_NONE};
  fixture_job(&job, "llama3-8b", "h100-80g", l);
  g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
  ptsim_plan_build(&job, plan);
  int64_t items = plan->schedule_items;
  g_autofree PtsimScheduleItem *order = g_new(PtsimScheduleItem, items);
  int64_t bytes = ptsim_lifetimes_scratch_bytes(plan, 0);
  g_autofree void *scratch = g_malloc(bytes);
  g_autofree PtsimAllocSample *samples = g_new(PtsimAllocSample, 2 * items + 1);
  PtsimAllocTimeline tl = {samples, 2 * items + 1, 0};
  PtsimStageAlloc with, without;
  memset(&with, 0, sizeof with); /* the bytes a result leaves unwritten compare too */
  memset(&without, 0, sizeof without);
  ptsim_schedule_build(job.layout.schedule, 4, (int32_t)plan->num_microbatches, 1,
                       plan->microbatch_group, 0, order, (int32_t)items);
  g_assert_cmpint(ptsim_lifetimes_replay(plan, 0, order, (int32_t)items, 2, NULL, 0, scratch, bytes,
                                         &tl, &with),
                  ==, 0);
  g_assert_cmpint(ptsim_lifetimes_replay(plan, 0, order, (int32_t)items, 2, NULL, 0, scratch, bytes,
                                         NULL, &without),
                  ==, 0);
  g_assert_cmpint(with.items_replayed, ==, 2 * items);
  g_assert_cmpint(tl.count, ==, 1 + 2 * (items + 1));
  g_assert_cmpint(without.items_replayed, <, with.items_replayed);
  with.items_replayed = without.items_replayed = 0;
  g_assert_cmpmem(&with, sizeof with, &without, sizeof without);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/lifetimes-period/random-layouts", test_random_layouts);
  g_test_add_func("/lifetimes-period/failures-anywhere", test_failures_anywhere);
  g_test_add_func("/lifetimes-period/moe-layouts", test_moe_layouts);
  g_test_add_func("/lifetimes-period/sharded-layouts", test_sharded_layouts);
  g_test_add_func("/lifetimes-period/random-pipelines", test_random_pipelines);
  g_test_add_func("/lifetimes-period/interleaved-stored-states", test_interleaved_stored_states);
  g_test_add_func("/lifetimes-period/cost-independent-of-m", test_cost_independent_of_m);
  g_test_add_func("/lifetimes-period/timeline-replays-every-item",
                  test_timeline_replays_every_item);
  return g_test_run();
}
