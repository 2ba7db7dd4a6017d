/* test_lifetimes.c — tensor lifetimes through the allocator emulation:
 * consistency with the analytical estimate, OOM detection with its place,
 * determinism, and the what-ifs moving the way the rules say. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include "config.h"
#include "job_validate.h"
#include "job_fixture.h"
#include "lifetimes.h"
#include "memory.h"
#include "simulate.h"
#include "plan_of.h"

static void load_job(PtsimJob *job, const char *model, const char *hw, gint64 gpus, gint64 tp,
                     gint64 pp, gint64 mbs, gint64 gbs, gint64 seq, PtsimRecompute recompute) {
  FixtureLayout l = {gpus, tp, pp, 1, mbs, gbs, seq, recompute};
  fixture_job(job, model, hw, l);
}

static void run(const PtsimJob *job, const PtsimAllocOptions *opts, PtsimAllocResult *out) {
  g_autoptr(GError) error = NULL;
  gboolean ok = simulate_allocator_of(job, 2, opts, NULL, 0.0, NULL, out, &error);
  g_assert_no_error(error);
  g_assert_true(ok);
}

static void test_agrees_with_estimate(void) {
  g_test_summary(
      "allocated peak holds the estimate's states and activations; reserved >= allocated");
  PtsimJob job;
  load_job(&job, "llama3-8b", "h100-80g", 8, 2, 2, 1, 64, 4096, PTSIM_RECOMPUTE_NONE);
  g_autofree PtsimMemoryEstimate *m = g_new0(PtsimMemoryEstimate, 1);
  g_autofree PtsimAllocResult *a = g_new0(PtsimAllocResult, 1);
  estimate_of(&job, PTSIM_CE_LAST_STAGE, m);
  run(&job, NULL, a);
  for (int64_t s = 0; s < a->num_stages; s++) {
    const PtsimStageMemory *e = &m->stages[s];
    const PtsimStageAlloc *r = &a->stages[s];
    double states = e->parameters_bytes + e->gradients_bytes + e->optimizer_bytes;
    g_assert_true(r->fits);
    /* Everything the estimate keeps is allocated (its input-ids term is the
     * seed's over-count, so it is left out) ... */
    g_assert_cmpfloat(r->allocated_peak_bytes, >=, states + e->activations_bytes);
    /* ... and the rest is transients and the logits, not a second copy. */
    g_assert_cmpfloat(r->allocated_peak_bytes, <=, 1.15 * e->total_bytes);
    g_assert_cmpfloat(r->reserved_peak_bytes, >=, r->allocated_peak_bytes);
    g_assert_cmpfloat(r->fragmentation, >=, 0.0);
    g_assert_cmpfloat(r->fragmentation, <, 0.5);
    g_assert_cmpfloat(r->device_peak_bytes, ==, r->reserved_peak_bytes + r->outside_bytes);
  }
}

static void test_outside_bytes(void) {
  g_test_summary("CUDA context + 0.5 GB per NCCL communicator the rank joins");
  PtsimJob job;
  load_job(&job, "llama3-8b", "h100-80g", 8, 1, 1, 1, 64, 4096, PTSIM_RECOMPUTE_NONE);
  double ctx = ptsim_lifetimes_outside_bytes(&job); /* dp only */
  load_job(&job, "llama3-8b", "h100-80g", 8, 2, 2, 1, 64, 4096, PTSIM_RECOMPUTE_NONE);
  g_assert_cmpfloat_with_epsilon(ptsim_lifetimes_outside_bytes(&job) - ctx, 2 * 0.5e9, 1.0);
}

static void test_oom_is_located(void) {
  g_test_summary("a layout over capacity fails at a named tensor, in a forward, at step 0");
  PtsimJob job;
  load_job(&job, "llama3-8b", "h100-80g", 8, 1, 1, 2, 64, 8192, PTSIM_RECOMPUTE_NONE);
  g_autofree PtsimAllocResult *a = g_new0(PtsimAllocResult, 1);
  run(&job, NULL, a);
  const PtsimStageAlloc *s = &a->stages[0];
  g_assert_false(s->fits);
  g_assert_cmpint(s->oom_step, ==, 0);
  g_assert_cmpint(s->oom_kind, ==, 0); /* forward */
  g_assert_cmpint(s->oom_microbatch, >=, 0);
  g_assert_cmpuint(strlen(s->oom_tensor), >, 0);
  g_assert_cmpfloat(s->oom_request_bytes, >, 0.0);
}

static void test_recompute_lowers_peak(void) {
  g_test_summary("full recompute allocates less at peak than none");
  PtsimJob job;
  g_autofree PtsimAllocResult *none = g_new0(PtsimAllocResult, 1);
  g_autofree PtsimAllocResult *full = g_new0(PtsimAllocResult, 1);
  load_job(&job, "llama3-8b", "a100-80g", 8, 2, 2, 1, 64, 4096, PTSIM_RECOMPUTE_NONE);
  run(&job, NULL, none);
  load_job(&job, "llama3-8b", "a100-80g", 8, 2, 2, 1, 64, 4096, PTSIM_RECOMPUTE_FULL);
  run(&job, NULL, full);
  g_assert_cmpfloat(full->stages[0].allocated_peak_bytes, <,
                    0.8 * none->stages[0].allocated_peak_bytes);
}

/* torch's per-op checkpointing (PyTorch layers): each layer keeps its kept
 * set (memory.c op_saved_bytes) from forward to backward, the rest of its
 * working set comes and goes in both; the replay holds what the estimate
 * counts, between full recompute's and none's. */
static void test_per_op_checkpointing(void) {
  g_test_summary("per-op checkpointing: the replay keeps the estimate's kept sets, between full "
                 "recompute and none");
  const PtsimRecompute kinds[3] = {PTSIM_RECOMPUTE_NONE, PTSIM_RECOMPUTE_SELECTIVE_OP,
                                   PTSIM_RECOMPUTE_FULL};
  double peak[3];
  for (int k = 0; k < 3; k++) {
    PtsimJob job;
    g_autoptr(GError) error = NULL;
    load_job(&job, "llama3-8b", "h100-80g", 8, 2, 2, 1, 64, 4096, PTSIM_RECOMPUTE_NONE);
    job.settings.transformer_engine = 0;
    job.settings.torch_layers = PTSIM_TORCH_LAYERS_EAGER;
    job.settings.recompute = kinds[k];
    g_assert_true(ptsim_job_validate(&job, &error));
    g_autofree PtsimMemoryEstimate *m = g_new0(PtsimMemoryEstimate, 1);
    g_autofree PtsimAllocResult *a = g_new0(PtsimAllocResult, 1);
    estimate_of(&job, PTSIM_CE_LAST_STAGE, m);
    run(&job, NULL, a);
    for (int64_t s = 0; s < a->num_stages; s++) {
      const PtsimStageMemory *e = &m->stages[s];
      double held = e->parameters_bytes + e->gradients_bytes + e->optimizer_bytes;
      double got = a->stages[s].allocated_peak_bytes;
      double est = e->total_bytes - e->input_ids_bytes;
      g_assert_cmpfloat(got, >=, held + e->activations_bytes);
      if (got < 0.9 * est || got > 1.1 * est)
        g_error("%d stage %" G_GINT64_FORMAT ": allocated %.4g vs estimate %.4g", k, s, got, est);
    }
    peak[k] = a->stages[0].allocated_peak_bytes;
  }
  g_assert_cmpfloat(peak[2], <, peak[1]);
  g_assert_cmpfloat(peak[1], <, peak[0]);
}

static void test_deterministic(void) {
  g_test_summary("the same job twice gives identical allocator results");
  PtsimJob job;
  load_job(&job, "llama3-70b", "h100-80g", 64, 8, 4, 1, 64, 4096, PTSIM_RECOMPUTE_SELECTIVE);
  g_autofree PtsimAllocResult *a = g_new0(PtsimAllocResult, 1);
  g_autofree PtsimAllocResult *b = g_new0(PtsimAllocResult, 1);
  run(&job, NULL, a);
  run(&job, NULL, b);
  g_assert_cmpint(memcmp(a, b, sizeof *a), ==, 0);
}

static void test_expandable_segments_what_if(void) {
  g_test_summary("expandable segments reserve no more than the default, and split without slack");
  PtsimJob job;
  load_job(&job, "llama3-8b", "h100-80g", 8, 2, 2, 2, 64, 4096, PTSIM_RECOMPUTE_NONE);
  PtsimAllocOptions opts;
  ptsim_alloc_options_init(&opts);
  opts.expandable_segments = 1;
  g_autofree PtsimAllocResult *base = g_new0(PtsimAllocResult, 1);
  g_autofree PtsimAllocResult *exp = g_new0(PtsimAllocResult, 1);
  run(&job, NULL, base);
  run(&job, &opts, exp);
  for (int64_t s = 0; s < base->num_stages; s++) {
    g_assert_cmpfloat(exp->stages[s].reserved_peak_bytes, <=, base->stages[s].reserved_peak_bytes);
    /* Expandable blocks split whenever 512 B remain, so no unsplit slack
     * rides along in allocated blocks. */
    g_assert_cmpfloat(exp->stages[s].allocated_peak_bytes, <=,
                      base->stages[s].allocated_peak_bytes);
  }
}

/* The replay and the analytical estimate count the same saved tensors by
 * two separate routes (schedule order vs in-flight formula); they must
 * agree for every schedule and recompute variant, up to the transients and
 * the estimate's input-ids over-count. */
static void test_variants_agree(void) {
  g_test_summary(
      "1F1B, interleaved, ZB-H1, full recompute (uniform, block): replay within 10% of the estimate");
  struct {
    PtsimSchedule schedule;
    gint64 vp;
    PtsimRecompute recompute;
    PtsimRecomputeMethod method;
    gint64 layers;
  } variants[] = {
      {PTSIM_SCHEDULE_1F1B, 1, PTSIM_RECOMPUTE_NONE, PTSIM_RECOMPUTE_METHOD_UNIFORM, 0},
      {PTSIM_SCHEDULE_INTERLEAVED, 2, PTSIM_RECOMPUTE_NONE, PTSIM_RECOMPUTE_METHOD_UNIFORM, 0},
      {PTSIM_SCHEDULE_ZB_H1, 1, PTSIM_RECOMPUTE_NONE, PTSIM_RECOMPUTE_METHOD_UNIFORM, 0},
      {PTSIM_SCHEDULE_1F1B, 1, PTSIM_RECOMPUTE_FULL, PTSIM_RECOMPUTE_METHOD_UNIFORM, 2},
      {PTSIM_SCHEDULE_1F1B, 1, PTSIM_RECOMPUTE_FULL, PTSIM_RECOMPUTE_METHOD_BLOCK, 4},
  };
  for (gsize v = 0; v < G_N_ELEMENTS(variants); v++) {
    PtsimJob job;
    g_autoptr(GError) error = NULL;
    load_job(&job, "llama3-70b", "h100-80g", 64, 8, 4, 1, 64, 4096, variants[v].recompute);
    job.layout.schedule = variants[v].schedule;
    job.layout.vp = variants[v].vp;
    job.settings.recompute_method = variants[v].method;
    job.settings.recompute_num_layers = variants[v].layers;
    gboolean ok = ptsim_job_validate(&job, &error);
    g_assert_no_error(error);
    g_assert_true(ok);
    g_autofree PtsimMemoryEstimate *m = g_new0(PtsimMemoryEstimate, 1);
    g_autofree PtsimAllocResult *a = g_new0(PtsimAllocResult, 1);
    estimate_of(&job, PTSIM_CE_LAST_STAGE, m);
    run(&job, NULL, a);
    for (int64_t s = 0; s < a->num_stages; s++) {
      double est = m->stages[s].total_bytes - m->stages[s].input_ids_bytes;
      double got = a->stages[s].allocated_peak_bytes;
      if (got < 0.9 * est || got > 1.1 * est)
        g_error("variant %" G_GSIZE_FORMAT " stage %" G_GINT64_FORMAT
                ": allocated %.3g vs estimate %.3g",
                v, s, got, est);
    }
  }
}

/* Llama-3-8B on 8 GPUs (tp 1, pp 1, dp 8), one microbatch, seq 4096, on
 * an H200 (so that nothing runs out).  By hand: P = embedding + head
 * 2 x 128256 x 4096 = 1,050,673,152; per layer QKV 4096 x (4096 + 2 x
 * 1024) = 25,165,824, O 16,777,216, MLP 3 x 4096 x 14336 = 176,160,768,
 * two RMSNorms 8,192: 218,112,000, x 32 = 6,979,584,000; final norm 4,096:
 * P = 8,030,261,248.  Adam's exp_avg and exp_avg_sq are fp32 and sharded
 * over dp 8 by the distributed optimizer: 2 x 4 B x P / 8 = P bytes, asked
 * for at step 0's optimizer step.  Step 0's forward and backward run
 * without them and step 1's with them, the activations being the same, so
 * the requested peaks differ by exactly P bytes. */
static void test_first_step_without_adam(void) {
  g_test_summary("step 0 peaks without Adam's states; the steady state holds them (hand-worked)");
  PtsimJob job;
  load_job(&job, "llama3-8b", "h200-141g", 8, 1, 1, 1, 8, 4096, PTSIM_RECOMPUTE_NONE);
  g_autofree PtsimPlan *plan = plan_of(&job);
  g_assert_cmpfloat(plan->stage_parameters[0], ==, 8030261248.0);
  g_autofree PtsimAllocResult *a = g_new0(PtsimAllocResult, 1);
  run(&job, NULL, a);
  const PtsimStageAlloc *s = &a->stages[0];
  g_assert_true(s->fits);
  g_assert_cmpfloat(s->steady_state.requested_peak_bytes - s->first_step.requested_peak_bytes, ==,
                    8030261248.0);
  /* Allocated blocks are rounded, so at least that much more is handed out;
   * the overall peak is the steady state's, reached in step 1. */
  g_assert_cmpfloat(s->steady_state.allocated_peak_bytes - s->first_step.allocated_peak_bytes, >=,
                    8030261248.0);
  g_assert_cmpfloat(s->allocated_peak_bytes, ==, s->steady_state.allocated_peak_bytes);
  g_assert_cmpfloat(s->device_peak_bytes, ==, s->steady_state.device_peak_bytes);
  g_assert_cmpint(s->peak_step, ==, 1);
}

/* The same layout under --use-precision-aware-optimizer: Transformer
 * Engine's FusedAdam holds the masters (Megatron's distributed optimizer
 * makes none, distrib_optimizer.py) and creates them in its first step
 * with Adam's states (FusedAdam.initialize_state), as 16-bit remainders of
 * the bf16 weights (store_param_remainders): 2 B x P / 8.  By hand against
 * the default run: step 0's forward and backward lack the default's fp32
 * masters, 4 B x P / 8 = P / 2 bytes; the steady state holds 2-byte
 * masters instead of 4-byte ones, P / 4 bytes fewer. */
static void test_precision_aware_masters_at_first_step(void) {
  g_test_summary(
      "precision-aware optimizer: masters created at step 0's optimizer step (hand-worked)");
  const double P = 8030261248.0;
  PtsimJob job;
  load_job(&job, "llama3-8b", "h200-141g", 8, 1, 1, 1, 8, 4096, PTSIM_RECOMPUTE_NONE);
  g_autofree PtsimAllocResult *plain = g_new0(PtsimAllocResult, 1);
  run(&job, NULL, plain);
  job.settings.precision_aware_optimizer = 1;
  g_autofree PtsimPlan *plan = plan_of(&job);
  g_assert_cmpint(plan->lazy_masters, ==, 1);
  g_assert_cmpfloat(plan->master_bytes, ==, 2.0);
  g_autofree PtsimAllocResult *aware = g_new0(PtsimAllocResult, 1);
  run(&job, NULL, aware);
  const PtsimStageAlloc *a = &aware->stages[0], *b = &plain->stages[0];
  g_assert_true(a->fits);
  g_assert_cmpfloat(b->first_step.requested_peak_bytes - a->first_step.requested_peak_bytes, ==,
                    P / 2.0);
  g_assert_cmpfloat(b->steady_state.requested_peak_bytes - a->steady_state.requested_peak_bytes, ==,
                    P / 4.0);
}

/* The same layout on an 80 GB H100: step 0 fits, and once Adam's states
 * take 7.5 GiB of what the allocator had cached, step 1's first forward
 * runs out: OOM is the worse of the two phases, and it says where. */
static void test_oom_in_steady_state(void) {
  g_test_summary("a layout whose first step fits runs out in step 1, and the report says so");
  PtsimJob job;
  load_job(&job, "llama3-8b", "h100-80g", 8, 1, 1, 1, 8, 4096, PTSIM_RECOMPUTE_NONE);
  g_autofree PtsimAllocResult *a = g_new0(PtsimAllocResult, 1);
  run(&job, NULL, a);
  const PtsimStageAlloc *s = &a->stages[0];
  g_assert_false(s->fits);
  g_assert_false(a->fits);
  g_assert_false(a->runs);
  g_assert_cmpint(s->oom_step, ==, 1);
  g_assert_cmpint(s->oom_kind, ==, PTSIM_SCHEDULE_ITEM_FORWARD);
  g_assert_cmpfloat(s->first_step.device_peak_bytes, <, job.hw.memory_bytes);
}

/* The `runs` verdict beside the 80% rule, one layout each side. */
static void test_runs_verdict(void) {
  g_test_summary("above the 80% rule: seq 2048 runs, seq 3584 leaves no margin, seq 4096 runs out");
  static const struct {
    gint64 seq;
    gboolean runs, fits;
  } cases[] = {{2048, TRUE, TRUE}, {3584, FALSE, TRUE}, {4096, FALSE, FALSE}};
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    PtsimJob job;
    load_job(&job, "llama3-8b", "h100-80g", 8, 1, 1, 1, 8, cases[i].seq, PTSIM_RECOMPUTE_NONE);
    g_autofree PtsimMemoryEstimate *m = g_new0(PtsimMemoryEstimate, 1);
    g_autofree PtsimAllocResult *a = g_new0(PtsimAllocResult, 1);
    estimate_of(&job, PTSIM_CE_LAST_STAGE, m);
    run(&job, NULL, a);
    const PtsimStageAlloc *s = &a->stages[0];
    /* Every one is over the 80% rule: the seed's verdict rejects all. */
    g_assert_false(m->fits);
    g_assert_cmpint(a->runs, ==, cases[i].runs);
    g_assert_cmpint(a->fits, ==, cases[i].fits);
    g_assert_cmpfloat(s->runs_margin_bytes, ==,
                      PTSIM_LIFETIMES_OUTSIDE_ERROR_BYTES +
                          PTSIM_LIFETIMES_RESERVED_ERROR * s->reserved_peak_bytes);
    if (cases[i].fits) /* runs exactly when the margin fits beside the peak */
      g_assert_cmpint(s->device_peak_bytes + s->runs_margin_bytes <= job.hw.memory_bytes, ==,
                      cases[i].runs);
  }
}

/* The first step's requested peak of megatron2021-gpt-1b (L 24, h 1920, 15 heads, no GQA,
 * vocab 51200) on one GPU, unfused attention, mbs 4 seq 1024, run by a Megatron-LM of DATE. */
static double first_step_requested(int32_t date) {
  PtsimJob job;
  load_job(&job, "megatron2021-gpt-1b", "a100-80g", 1, 1, 1, 4, 8, 1024, PTSIM_RECOMPUTE_NONE);
  job.settings.flash_attention = 0;
  job.source.megatron_date = date;
  g_autofree PtsimAllocResult *a = g_new0(PtsimAllocResult, 1);
  run(&job, NULL, a);
  g_assert_true(a->fits);
  return a->stages[0].first_step.requested_peak_bytes;
}

static void test_megatron_release(void) {
  g_test_summary("the release's tensors, by hand: K and V copied to every head in 2023-07-21.."
                 "2023-11-01 (2 x 2 T h bytes a layer), the cross entropy's second fp32 copy of "
                 "the logits in 2022-11-02..2024-06-12");
  const double T = 4.0 * 1024, h = 1920, V = 51200, L = 24;
  double no_copies = first_step_requested(20230601); /* CE copy, no K/V copies */
  double kv = first_step_requested(20230801);        /* both */
  double now = first_step_requested(0);              /* neither: in place, no K/V copies */
  /* The peak stays in the first forward's cross entropy: every layer's copies are alive. */
  g_assert_cmpfloat(kv - no_copies, ==, L * 2 * 2 * T * h);
  /* With the copy the peak is the cross entropy (16-bit logits + fp32 + fp32 minus max);
   * without it, the backward's first tensor (the kept softmax, the loss, the 16-bit
   * gradient): 4 T V more, less the fp32 loss (4 T). */
  g_assert_cmpfloat(no_copies - now, ==, 4 * T * V - 4 * T);
  g_assert_cmpfloat(first_step_requested(20211001), ==, now); /* in place in 2021 too */
  g_assert_cmpfloat(first_step_requested(20240701), ==, now);
}

static void test_fused_cross_entropy(void) {
  g_test_summary("Megatron's native fused cross entropy, compiled, holds a second fp32 copy of "
                 "the logits while it runs: the steady step's peak 4 T V higher; TE's does not");
  /* megatron2021-gpt-1b on one GPU, mbs 4, seq 1024: T 4096, V 51200 */
  const double T = 4.0 * 1024, V = 51200;
  PtsimJob job;
  load_job(&job, "megatron2021-gpt-1b", "a100-80g", 1, 1, 1, 4, 8, 1024, PTSIM_RECOMPUTE_NONE);
  g_autofree PtsimAllocResult *a = g_new0(PtsimAllocResult, 1);
  run(&job, NULL, a);
  double unfused = a->stages[0].steady_state.requested_peak_bytes;
  job.settings.cross_entropy_fusion = 1;
  run(&job, NULL, a);
  g_assert_cmpfloat(a->stages[0].steady_state.requested_peak_bytes - unfused, ==, 4 * T * V);
  job.settings.cross_entropy_te = 1;
  run(&job, NULL, a);
  g_assert_cmpfloat(a->stages[0].steady_state.requested_peak_bytes, ==, unfused);
}

/* Allocated bytes of STAGE in the replay's last sample (after the second
 * step's optimizer step) and, in *before, in the one before it (after the
 * step's last item). */
static double steady_allocated_before(const PtsimJob *job, int64_t stage, double *before) {
  g_autofree PtsimPlan *plan = plan_of(job);
  int32_t n = plan->schedule_items;
  g_autofree PtsimScheduleItem *items = g_new(PtsimScheduleItem, n);
  ptsim_schedule_build(job->layout.schedule, (int32_t)plan->num_stages,
                       (int32_t)plan->num_microbatches, (int32_t)plan->num_chunks,
                       (int32_t)plan->microbatch_group, (int32_t)stage, items, n);
  int64_t bytes = ptsim_lifetimes_scratch_bytes(plan, stage);
  g_autofree void *scratch = g_malloc(bytes);
  PtsimAllocTimeline tl = {NULL, ptsim_lifetimes_timeline_samples(n, 2), 0};
  g_autofree PtsimAllocSample *samples = g_new(PtsimAllocSample, tl.capacity);
  tl.samples = samples;
  g_autofree PtsimStageAlloc *out = g_new0(PtsimStageAlloc, 1);
  g_assert_cmpint(ptsim_lifetimes_replay(plan, stage, items, n, 2, NULL, 1, scratch, bytes, &tl,
                                         out),
                  ==, 0);
  g_assert_cmpint(tl.count, ==, tl.capacity);
  if (before) *before = samples[tl.count - 2].allocated_bytes;
  return samples[tl.count - 1].allocated_bytes;
}

static double steady_allocated(const PtsimJob *job, int64_t stage) {
  return steady_allocated_before(job, stage, NULL);
}

/* --memory-timeline keeps every sample: llama3-8b on 8 GPUs, tp 2 pp 2 (dp
 * 2), mbs 1, gbs 8: m = 8 / (1 x 2) = 4 microbatches, 1F1B runs 2 m = 8
 * items a stage; two steps sample once before the first, after each item
 * and after each optimizer step: 1 + 2 x (8 + 1) = 19 rows a stage (a
 * buffer of items x steps + 1 = 17 lost the second step's last item and its
 * optimizer step), the last of them step 1's, after the optimizer step. */
static void test_timeline_keeps_every_sample(void) {
  g_test_summary("--memory-timeline: 1 + steps x (items + 1) rows a stage, the last one after "
                 "the second optimizer step");
  PtsimJob job;
  g_autoptr(GError) error = NULL;
  g_autofree PtsimAllocResult *a = g_new0(PtsimAllocResult, 1);
  g_autofree char *dir = g_dir_make_tmp("ptsim-timeline-XXXXXX", &error);
  g_assert_no_error(error);
  g_autofree char *path = g_build_filename(dir, "t.tsv", NULL);
  g_autofree char *text = NULL;
  load_job(&job, "llama3-8b", "h100-80g", 8, 2, 2, 1, 8, 1024, PTSIM_RECOMPUTE_NONE);
  g_assert_true(simulate_allocator_of(&job, 2, NULL, NULL, 0.0, path, a, &error));
  g_assert_no_error(error);
  g_assert_true(g_file_get_contents(path, &text, NULL, &error));
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  int rows[2] = {0, 0}, step1[2] = {0, 0};
  double last[2] = {0.0, 0.0};
  for (int i = 0; lines[i]; i++) {
    int stage, step;
    double t, allocated;
    if (sscanf(lines[i], "%d\t%d\t%lf\t%lf", &stage, &step, &t, &allocated) != 4) continue;
    g_assert_true(stage == 0 || stage == 1);
    rows[stage]++;
    step1[stage] += step == 1;
    last[stage] = allocated;
  }
  for (int s = 0; s < 2; s++) {
    g_assert_cmpint(rows[s], ==, 19);
    g_assert_cmpint(step1[s], ==, 9);
    g_assert_cmpfloat(last[s], ==, steady_allocated(&job, s));
  }
  g_remove(path);
  g_rmdir(dir);
}

static void test_deferred_embedding_wgrad(void) {
  g_test_summary("--defer-embedding-wgrad-compute: the last stage keeps every microbatch's "
                 "logits gradient and output-layer input until the flush, then two all-gather "
                 "buffers");
  /* llama3-8b, tp 2 pp 2 dp 2, mbs 1, gbs 8: m = 4 microbatches of T 1024
   * tokens, T_sp 512 with SP; vocab 128256 / 2 = 64128; h 4096 */
  const double T = 1024, h = 4096, v = 64128, m = 4;
  PtsimJob job;
  load_job(&job, "llama3-8b", "h100-80g", 8, 2, 2, 1, 8, 1024, PTSIM_RECOMPUTE_NONE);
  double before0, before1, after0, after1;
  after0 = steady_allocated_before(&job, 1, &before0);
  job.settings.defer_embedding_wgrad = 1;
  after1 = steady_allocated_before(&job, 1, &before1);
  /* after the flush and the optimizer step: the two gather buffers, 2 T h each */
  const double gather = 2 * 2 * T * h;
  g_assert_cmpfloat(after1 - after0, ==, gather);
  /* after the last backward (the step-0 flush's buffers held): m x (2 T v +
   * 2 T_sp h) bytes more, to the allocator's rounding (a cached block handed
   * out whole when what would be left is under 1 MiB: alloc.h) */
  g_assert_cmpfloat_with_epsilon(before1 - before0, gather + m * (2 * T * v + 2 * (T / 2) * h),
                                 1048576.0);
  /* a limit of 2 keeps two */
  job.settings.wgrad_deferral_limit = 2;
  steady_allocated_before(&job, 1, &before1);
  g_assert_cmpfloat_with_epsilon(before1 - before0, gather + 2 * (2 * T * v + 2 * (T / 2) * h),
                                 1048576.0);
}

static void test_unfused_attention_buffers(void) {
  g_test_summary("unfused attention: Megatron's local layers keep their global scores buffer "
                 "(2 b a s^2), Transformer Engine's makes a fresh one per call (none kept)");
  /* megatron2021-gpt-1b on one A100: b 4, a 15, s 1024 -> 62914560 scores;
   * the buffer 125829120 B; TE keeps its own 4 MiB GEMM workspace instead
   * (both run PyTorch's batched GEMMs: the same two cuBLAS workspaces) */
  PtsimJob te, local;
  load_job(&te, "megatron2021-gpt-1b", "a100-80g", 1, 1, 1, 4, 8, 1024, PTSIM_RECOMPUTE_NONE);
  te.settings.flash_attention = 0;
  te.settings.cublas_workspace_bytes = 8519680.0;
  te.settings.te_workspace_bytes = 4194304.0;
  local = te;
  local.settings.transformer_engine = 0;
  g_assert_cmpfloat(steady_allocated(&local, 0) - steady_allocated(&te, 0), ==,
                    2.0 * 4 * 15 * 1024.0 * 1024.0 - 4194304.0);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/lifetimes/agrees-with-estimate", test_agrees_with_estimate);
  g_test_add_func("/lifetimes/outside-bytes", test_outside_bytes);
  g_test_add_func("/lifetimes/oom-is-located", test_oom_is_located);
  g_test_add_func("/lifetimes/recompute-lowers-peak", test_recompute_lowers_peak);
  g_test_add_func("/lifetimes/per-op-checkpointing", test_per_op_checkpointing);
  g_test_add_func("/lifetimes/deterministic", test_deterministic);
  g_test_add_func("/lifetimes/expandable-segments-what-if", test_expandable_segments_what_if);
  g_test_add_func("/lifetimes/variants-agree", test_variants_agree);
  g_test_add_func("/lifetimes/first-step-without-adam", test_first_step_without_adam);
  g_test_add_func("/lifetimes/precision-aware-masters-at-first-step",
                  test_precision_aware_masters_at_first_step);
  g_test_add_func("/lifetimes/oom-in-steady-state", test_oom_in_steady_state);
  g_test_add_func("/lifetimes/runs-verdict", test_runs_verdict);
  g_test_add_func("/lifetimes/megatron-release", test_megatron_release);
  g_test_add_func("/lifetimes/unfused-attention-buffers", test_unfused_attention_buffers);
  g_test_add_func("/lifetimes/fused-cross-entropy", test_fused_cross_entropy);
  g_test_add_func("/lifetimes/deferred-embedding-wgrad", test_deferred_embedding_wgrad);
  g_test_add_func("/lifetimes/timeline-keeps-every-sample", test_timeline_keeps_every_sample);
  return g_test_run();
}
