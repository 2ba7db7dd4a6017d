/* test_sweep.c — enumeration counts against hand counts (sharding modes
 * included), rejected combinations counted by reason, and the thread pool agreeing with one
 * thread bit for bit. */
#include <glib.h>
#include <string.h>
#include "config.h"
#include "job_validate.h"
#include "names.h"
#include "lifetimes.h"
#include "plan.h"
#include "sweep.h"
#include "sweep_rows.h"

static PtsimSweepSpec *small_spec(const char *model) {
  PtsimSweepSpec *spec = ptsim_sweep_spec_new();
  const gint64 gpus = 8, seq = 4096, gbs = 64, one = 1;
  const int none = PTSIM_RECOMPUTE_NONE, f1b = PTSIM_SCHEDULE_1F1B;
  g_ptr_array_add(spec->models, g_strdup(model));
  g_ptr_array_add(spec->hws, g_strdup("h100-80g"));
  g_array_append_val(spec->gpus, gpus);
  g_array_append_val(spec->seqs, seq);
  g_array_append_val(spec->gbs, gbs);
  g_array_set_size(spec->mbs, 0);
  g_array_append_val(spec->mbs, one);
  g_array_set_size(spec->cps, 0);
  g_array_append_val(spec->cps, one);
  g_array_set_size(spec->recomputes, 0);
  g_array_append_val(spec->recomputes, none);
  g_array_set_size(spec->schedules, 0);
  g_array_append_val(spec->schedules, f1b);
  return spec;
}

static PtsimSweep *enumerate(const PtsimSweepSpec *spec) {
  g_autoptr(GError) error = NULL;
  PtsimSweep *sweep = ptsim_sweep_enumerate(spec, &error);
  g_assert_no_error(error);
  g_assert_nonnull(sweep);
  return sweep;
}

static void test_hand_count(void) {
  g_test_summary(
      "8 GPUs, tp <= 8: (tp, pp) = 4 + 3 + 2 + 1 = 10 layouts, all valid for Llama-3-8B");
  g_autoptr(PtsimSweepSpec) spec = small_spec("llama3-8b");
  g_autoptr(PtsimSweep) sweep = enumerate(spec);
  g_assert_cmpuint(sweep->candidates, ==, 10);
  g_assert_cmpuint(sweep->jobs->len, ==, 10);
  g_assert_cmpuint(g_hash_table_size(sweep->rejected), ==, 0);
}

/* The default tp_max is the NVLink domain, not the host: a GB200 NVL72
 * rack has hosts of 4 and one 72-GPU domain.  16 GPUs (4 hosts), Llama-3-8B
 * (32 heads, 8 query groups): tp 1, 2, 4, 8, 16 with pp dividing 16/tp:
 * 5 + 4 + 3 + 2 + 1 = 15 layouts; tp 16 does not divide the 8 query
 * groups, so 14 are valid (a limit of 4 GPUs per host gave 12). */
static void test_tp_up_to_nvlink_domain(void) {
  g_test_summary("GB200 NVL72: tp up to the 72-GPU NVLink domain (at most the heads), by hand");
  g_autoptr(GError) error = NULL;
  PtsimModel llama, gpt1b;
  PtsimHardware nvl72, h100;
  g_assert_true(ptsim_model_load("llama3-8b", &llama, &error));
  g_assert_true(ptsim_model_load("megatron2021-gpt-1b", &gpt1b, &error));
  g_assert_true(ptsim_hardware_load("gb200-nvl72", &nvl72, &error));
  g_assert_true(ptsim_hardware_load("h100-80g", &h100, &error));
  g_assert_no_error(error);
  g_assert_cmpint(ptsim_sweep_tp_max_default(&llama, &nvl72), ==, 32);
  g_assert_cmpint(ptsim_sweep_tp_max_default(&gpt1b, &nvl72), ==, 15);
  g_assert_cmpint(ptsim_sweep_tp_max_default(&llama, &h100), ==, 8);
  g_autoptr(PtsimSweepSpec) spec = small_spec("llama3-8b");
  const gint64 gpus = 16;
  g_ptr_array_set_size(spec->hws, 0);
  g_ptr_array_add(spec->hws, g_strdup("gb200-nvl72"));
  g_array_set_size(spec->gpus, 0);
  g_array_append_val(spec->gpus, gpus);
  g_autoptr(PtsimSweep) sweep = enumerate(spec);
  g_assert_cmpuint(sweep->candidates, ==, 15);
  g_assert_cmpuint(sweep->jobs->len, ==, 14);
  gint64 widest = 0;
  for (guint i = 0; i < sweep->jobs->len; i++)
    widest = MAX(widest, g_array_index(sweep->jobs, PtsimJob, i).layout.tp);
  g_assert_cmpint(widest, ==, 8);
}

static void test_rejections_counted_by_reason(void) {
  g_test_summary(
      "15 heads: tp 2 (pp 1, 2, 4), 4 (pp 1, 2), 8 (pp 1) rejected, one reason, count 6");
  g_autoptr(PtsimSweepSpec) spec = small_spec("megatron2021-gpt-1b");
  g_autoptr(PtsimSweep) sweep = enumerate(spec);
  g_assert_cmpuint(sweep->candidates, ==, 10);
  g_assert_cmpuint(sweep->jobs->len, ==, 4);
  g_assert_cmpuint(g_hash_table_size(sweep->rejected), ==, 1);
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init(&it, sweep->rejected);
  g_assert_true(g_hash_table_iter_next(&it, &key, &value));
  g_assert_nonnull(strstr(key, "does not divide num_attention_heads"));
  g_assert_cmpuint(GPOINTER_TO_UINT(value), ==, 6);
}

static void test_uneven_split(void) {
  g_test_summary("30 layers on 8 GPUs: pp 4 and 8 split with lighter ends (7+8+8+7, 3+6x4+3)");
  g_autoptr(PtsimSweepSpec) spec = small_spec("sc21-gpt-3.6b");
  g_autoptr(PtsimSweep) sweep = enumerate(spec);
  g_assert_cmpuint(sweep->jobs->len, ==, 10);
  for (guint i = 0; i < sweep->jobs->len; i++) {
    const PtsimLayout *l = &g_array_index(sweep->jobs, PtsimJob, i).layout;
    gint64 want = l->pp == 4 ? 7 : l->pp == 8 ? 3 : 0;
    g_assert_cmpint(l->first_stage_layers, ==, want);
    g_assert_cmpint(l->last_stage_layers, ==, want);
  }
}

static void test_expert_parallel_count(void) {
  g_test_summary("Mixtral 8x7B on 8 GPUs: every ep dividing the 8 experts and the GPUs a stage "
                 "folds as etp x ep x edp (etp = tp): 10 + 6 + 3 + 1 = 20 layouts; etp 1: 30; "
                 "--ep 16 is rejected for each (tp, pp), one reason");
  g_autoptr(PtsimSweepSpec) spec = small_spec("mixtral-8x7b");
  g_autoptr(PtsimSweep) sweep = enumerate(spec);
  /* tp 1: pp 1, 2, 4, 8 with ep 1-8, 1-4, 1-2, 1: 4 + 3 + 2 + 1; tp 2:
   * (8/pp) % (2 ep): 3 + 2 + 1; tp 4: 2 + 1; tp 8: 1 */
  g_assert_cmpuint(sweep->candidates, ==, 20);
  g_assert_cmpuint(sweep->jobs->len, ==, 20);
  const gint64 one = 1, sixteen = 16;
  g_array_append_val(spec->etps, one);
  g_autoptr(PtsimSweep) etp1 = enumerate(spec);
  /* tp 1: 10; tp 2: 4 + 3 + 2; tp 4: 4 + 3; tp 8: 4 */
  g_assert_cmpuint(etp1->jobs->len, ==, 30);
  g_array_set_size(spec->etps, 0);
  g_array_append_val(spec->eps, sixteen);
  g_autoptr(PtsimSweep) bad = enumerate(spec);
  g_assert_cmpuint(bad->candidates, ==, 10);
  g_assert_cmpuint(bad->jobs->len, ==, 0);
  g_assert_cmpuint(g_hash_table_size(bad->rejected), ==, 1);
  /* a dense model ignores the lists: ep 1 */
  g_autoptr(PtsimSweepSpec) dense = small_spec("llama3-8b");
  g_array_append_val(dense->eps, sixteen);
  g_autoptr(PtsimSweep) d = enumerate(dense);
  g_assert_cmpuint(d->jobs->len, ==, 10);
}

static void test_interleaved_adds_vp(void) {
  g_test_summary("adding interleaved with vp 2: every pp > 1 layout gains one more (10 + 6)");
  g_autoptr(PtsimSweepSpec) spec = small_spec("llama3-8b");
  const int interleaved = PTSIM_SCHEDULE_INTERLEAVED;
  const gint64 two = 2;
  g_array_append_val(spec->schedules, interleaved);
  g_array_set_size(spec->vps, 0);
  g_array_append_val(spec->vps, two);
  g_autoptr(PtsimSweep) sweep = enumerate(spec);
  g_assert_cmpuint(sweep->jobs->len, ==, 16);
}

static void test_pool_equals_single_thread(void) {
  g_test_summary("the thread pool's results equal one thread's, bit for bit");
  g_autoptr(PtsimSweepSpec) spec = small_spec("llama3-8b");
  const gint64 two = 2, cp2 = 2;
  const int full = PTSIM_RECOMPUTE_FULL;
  g_array_append_val(spec->mbs, two);
  g_array_append_val(spec->cps, cp2);
  g_array_append_val(spec->recomputes, full);
  g_autoptr(PtsimSweep) one = enumerate(spec);
  g_autoptr(PtsimSweep) many = enumerate(spec);
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_sweep_evaluate(one, PTSIM_DEVICE_CPU, 1, NULL, NULL, &error));
  g_assert_true(ptsim_sweep_evaluate(many, PTSIM_DEVICE_CPU, 4, NULL, NULL, &error));
  g_assert_no_error(error);
  g_assert_cmpuint(one->results->len, ==, many->results->len);
  g_assert_cmpuint(one->results->len, >, 20);
  g_assert_cmpint(memcmp(one->results->data, many->results->data,
                         sizeof(PtsimBatchResult) * one->results->len),
                  ==, 0);
}

/* Llama-3-8B on 8 H100s at seq 8192: mbs 1, 2, 4, cp 1, 2, every
 * recompute, 1F1B, interleaved (vp 2), ZB-H1: layouts on both sides of the
 * 80% rule and of the GPU's memory. */
static PtsimSweepSpec *verdict_spec(void) {
  PtsimSweepSpec *spec = small_spec("llama3-8b");
  const gint64 seq = 8192, two = 2, four = 4;
  const int selective = PTSIM_RECOMPUTE_SELECTIVE, full = PTSIM_RECOMPUTE_FULL;
  const int interleaved = PTSIM_SCHEDULE_INTERLEAVED, zb = PTSIM_SCHEDULE_ZB_H1;
  g_array_index(spec->seqs, gint64, 0) = seq;
  g_array_append_val(spec->mbs, two);
  g_array_append_val(spec->mbs, four);
  g_array_append_val(spec->cps, two);
  g_array_append_val(spec->recomputes, selective);
  g_array_append_val(spec->recomputes, full);
  g_array_append_val(spec->schedules, interleaved);
  g_array_append_val(spec->schedules, zb);
  g_array_set_size(spec->vps, 0);
  g_array_append_val(spec->vps, two);
  return spec;
}

static PtsimSweep *evaluated(const PtsimSweepSpec *spec) {
  g_autoptr(GError) error = NULL;
  PtsimSweep *sweep = enumerate(spec);
  g_assert_true(ptsim_sweep_evaluate(sweep, PTSIM_DEVICE_CPU, 2, NULL, NULL, &error));
  g_assert_no_error(error);
  return sweep;
}

/* The floor is what every replay allocates for sure (weights, gradients,
 * optimizer states, saved activations), so the emulation's device peak is
 * never below it plus the context and NCCL buffers; a layout the floor
 * rejects cannot run. */
static void test_floor_below_emulation(void) {
  g_test_summary(
      "held floor + context/NCCL <= the emulated device peak, on every layout that fits");
  g_autoptr(PtsimSweepSpec) spec = verdict_spec();
  spec->allocator = TRUE;
  g_autoptr(PtsimSweep) sweep = evaluated(spec);
  guint over = 0;
  for (guint i = 0; i < sweep->jobs->len; i++) {
    const PtsimJob *job = &g_array_index(sweep->jobs, PtsimJob, i);
    const PtsimBatchResult *r = &g_array_index(sweep->results, PtsimBatchResult, i);
    double floor = r->held_floor_bytes + ptsim_lifetimes_outside_bytes(job);
    g_assert_cmpint(r->status, ==, 0);
    g_assert_cmpint(r->runs_from, ==, PTSIM_RUNS_FROM_ALLOCATOR);
    if (!r->alloc_oom) g_assert_cmpfloat(r->alloc_device_peak_bytes, >=, floor);
    if (floor > job->hw.memory_bytes) {
      g_assert_cmpint(r->runs, ==, 0);
      over++;
    }
  }
  g_assert_cmpuint(over, >, 0);
}

/* Settling only the contention gives the same top as emulating every
 * layout: the fastest layouts that may run are all emulated. */
static void test_settle_top_equals_full(void) {
  g_test_summary(
      "the top 8 after settling the contention equal the top 8 with every layout emulated");
  const guint top = 8;
  g_autoptr(PtsimSweepSpec) spec = verdict_spec();
  g_autoptr(PtsimSweep) lazy = evaluated(spec);
  spec->allocator = TRUE;
  g_autoptr(PtsimSweep) full = evaluated(spec);
  PtsimBatchResult *rl = (PtsimBatchResult *)lazy->results->data;
  const PtsimBatchResult *rf = (const PtsimBatchResult *)full->results->data;
  const PtsimJob *jobs = (const PtsimJob *)lazy->jobs->data;
  guint n = lazy->jobs->len, emulated = ptsim_sweep_settle_top(jobs, rl, n, top, 2, FALSE);
  g_assert_cmpuint(emulated, >=, top);
  g_assert_cmpuint(emulated, <, n / 4);
  /* The best `top` by (class, tokens/s per GPU) in each. */
  for (int pass = 0; pass < 2; pass++) {
    const PtsimBatchResult *r = pass ? rf : rl;
    guint taken = 0;
    double last = G_MAXDOUBLE;
    for (guint k = 0; k < top; k++) {
      guint best = G_MAXUINT;
      for (guint i = 0; i < n; i++) {
        double key = ptsim_sweep_rank_key(&jobs[i], &r[i]);
        if (r[i].runs != 1 || key >= last) continue;
        if (best == G_MAXUINT || key > ptsim_sweep_rank_key(&jobs[best], &r[best])) best = i;
      }
      g_assert_cmpuint(best, !=, G_MAXUINT);
      g_assert_cmpint(r[best].runs_from, ==, PTSIM_RUNS_FROM_ALLOCATOR);
      /* Same layout, same verdict and peak in both. */
      g_assert_cmpint(rl[best].runs, ==, rf[best].runs);
      g_assert_cmpfloat(rl[best].alloc_device_peak_bytes, ==, rf[best].alloc_device_peak_bytes);
      last = ptsim_sweep_rank_key(&jobs[best], &r[best]);
      taken++;
    }
    g_assert_cmpuint(taken, ==, top);
  }
}

static void test_v_split_by_hand(void) {
  g_test_summary("V-shaped splits: even when 2pp divides the layers, else the extra layers one "
                 "per stage, stage 0 (embedding, output, loss) last");
  PtsimLayout l;
  memset(&l, 0, sizeof l);
  g_assert_true(ptsim_sweep_v_split(32, 4, &l)); /* 4 per virtual stage */
  g_assert_cmpint(l.vstage_runs, ==, 0);
  /* DeepSeek-V3's 61 layers on pp 4: 8 virtual stages of 7, 5 extra: 5 >=
   * pp, so virtual stages 0..4 take 8: stage s holds s and 7-s, stages
   * 0..3 hold 8+7, 8+7, 8+7, 8+8 = 15, 15, 15, 16 (61 / 4 = 15.25) */
  g_assert_true(ptsim_sweep_v_split(61, 4, &l));
  g_assert_cmpint(l.vstage_runs, ==, 2);
  g_assert_cmpint(l.vstage_run_count[0], ==, 5);
  g_assert_cmpint(l.vstage_run_layers[0], ==, 8);
  g_assert_cmpint(l.vstage_run_count[1], ==, 3);
  g_assert_cmpint(l.vstage_run_layers[1], ==, 7);
  /* Llama 3 70B's 80 layers on pp 3: 6 virtual stages of 13, 2 extra < pp:
   * virtual stages 1, 2 (chunk 0 of stages 1, 2): stages 13+13, 14+13,
   * 14+13 = 26, 27, 27 */
  g_assert_true(ptsim_sweep_v_split(80, 3, &l));
  g_assert_cmpint(l.vstage_runs, ==, 3);
  g_assert_cmpint(l.vstage_run_count[0], ==, 1);
  g_assert_cmpint(l.vstage_run_layers[0], ==, 13);
  g_assert_cmpint(l.vstage_run_count[1], ==, 2);
  g_assert_cmpint(l.vstage_run_layers[1], ==, 14);
  g_assert_cmpint(l.vstage_run_count[2], ==, 3);
  g_assert_cmpint(l.vstage_run_layers[2], ==, 13);
  g_assert_false(ptsim_sweep_v_split(7, 4, &l)); /* fewer layers than virtual stages */
  /* the plan reads them through the V: stage loads as above */
  PtsimJob job;
  memset(&job, 0, sizeof job);
  g_assert_true(ptsim_model_load("deepseek-v3", &job.model, NULL));
  job.layout.pp = 4;
  job.layout.vp = 2;
  job.layout.schedule = PTSIM_SCHEDULE_DUALPIPEV;
  g_assert_true(ptsim_sweep_v_split(job.model.num_layers, 4, &job.layout));
  int32_t counts[PTSIM_MAX_VSTAGES];
  g_assert_cmpint(ptsim_plan_split_vstages(&job.layout, job.model.num_layers, counts), ==, 0);
  PtsimVstages t;
  g_assert_cmpint(ptsim_schedule_vstages(PTSIM_SCHEDULE_DUALPIPEV, 4, 2, &t), ==, 0);
  static const int want[4] = {15, 15, 15, 16};
  for (int s = 0; s < 4; s++)
    g_assert_cmpint(counts[ptsim_schedule_vstage_of(&t, s, 0)] +
                        counts[ptsim_schedule_vstage_of(&t, s, 1)],
                    ==, want[s]);
}

static void test_split_by_hand(void) {
  g_test_summary(
      "stage splits: even when pp divides the layers, else Megatron's lighter first/last ends");
  gint64 f, l;
  g_assert_true(ptsim_sweep_split(80, 4, 5, &f, &l)); /* 20 per stage, 4 per chunk */
  g_assert_cmpint(f, ==, 0);
  g_assert_cmpint(l, ==, 0);
  g_assert_true(ptsim_sweep_split(96, 8, 12, &f, &l)); /* GPT-3 175B: 12 per stage, 1 per chunk */
  g_assert_false(ptsim_sweep_split(80, 4, 3, &f, &l)); /* 20 % 3 */
  /* 126 layers (Llama 3.1 405B) on 8 stages: ends f, six middles (126 - 2f)/6,
   * f <= 15: f = 15 gives 16 in the middle; with vp the ends and the middle
   * must both divide: (9, 18) for vp 3 and 9, none for vp 2 or 7. */
  g_assert_true(ptsim_sweep_split(126, 8, 1, &f, &l));
  g_assert_cmpint(f, ==, 15);
  g_assert_cmpint(l, ==, 15);
  g_assert_true(ptsim_sweep_split(126, 8, 3, &f, &l));
  g_assert_cmpint(f, ==, 9);
  g_assert_true(ptsim_sweep_split(126, 8, 9, &f, &l));
  g_assert_cmpint(f, ==, 9);
  /* vp 2: 63 two-layer units, the middles ceil(63/8) = 8 units (16 layers),
   * the ends 63 - 6 x 8 = 15 units: 8 first (16 layers), 7 last (14).  vp 7:
   * 18 units, middles 3, ends 18 - 18 = 0: none. */
  g_assert_true(ptsim_sweep_split(126, 8, 2, &f, &l));
  g_assert_cmpint(f, ==, 16);
  g_assert_cmpint(l, ==, 14);
  g_assert_false(ptsim_sweep_split(126, 8, 7, &f, &l));
  /* DeepSeek-V3's 61 layers: equal ends never split them over 8 stages
   * (61 - 2f is odd, the six middles even); the middles take ceil(61/8) =
   * 8, the ends 61 - 48 = 13: 7 first, 6 last.  16 stages: middles 4, ends
   * 61 - 56 = 5: 3 and 2.  32 stages: middles 2, ends 61 - 60 = 1, one
   * layer for two ends: none.  Qwen3-235B's 94 on 8: middles 12, ends 22:
   * 11 and 11.  27 on 5: middles 6, ends 27 - 18 = 9: 5 and 4 (equal ends
   * gave 3, 7, 7, 7, 3, a heavier middle). */
  g_assert_true(ptsim_sweep_split(61, 8, 1, &f, &l));
  g_assert_cmpint(f, ==, 7);
  g_assert_cmpint(l, ==, 6);
  g_assert_true(ptsim_sweep_split(61, 16, 1, &f, &l));
  g_assert_cmpint(f, ==, 3);
  g_assert_cmpint(l, ==, 2);
  g_assert_false(ptsim_sweep_split(61, 32, 1, &f, &l));
  g_assert_true(ptsim_sweep_split(94, 8, 1, &f, &l));
  g_assert_cmpint(f, ==, 11);
  g_assert_cmpint(l, ==, 11);
  g_assert_true(ptsim_sweep_split(27, 5, 1, &f, &l));
  g_assert_cmpint(f, ==, 5);
  g_assert_cmpint(l, ==, 4);
  /* Closed form: a billion and seven layers split at once (the search over
   * end sizes took a billion steps). 1000000007 on 7: middles 142857144,
   * ends 1000000007 - 5 x 142857144 = 285714287: 142857144 and 142857143. */
  g_assert_true(ptsim_sweep_split(1000000007, 7, 1, &f, &l));
  g_assert_cmpint(f, ==, 142857144);
  g_assert_cmpint(l, ==, 142857143);
  /* Two stages, odd layers: 17 + 16. */
  g_assert_true(ptsim_sweep_split(33, 2, 1, &f, &l));
  g_assert_cmpint(f, ==, 17);
  g_assert_cmpint(l, ==, 16);
}

/* Llama-3-70B (80 layers) on 8 GPUs at tp 1, interleaved only, mbs 1:
 * pp 1 (one 1F1B layout), pp 2 (40 per stage: vp 2, 4, 5, 8, 10, 20, 40),
 * pp 4 (20: 2, 4, 5, 10, 20), pp 8 (10: 2, 5, 10): 1 + 7 + 5 + 3 = 16. */
static void test_vp_counts_by_hand(void) {
  g_test_summary(
      "default vp: every size dividing the layers per stage, 16 layouts counted by hand");
  g_autoptr(PtsimSweepSpec) spec = small_spec("llama3-70b");
  const int interleaved = PTSIM_SCHEDULE_INTERLEAVED;
  g_array_index(spec->schedules, int, 0) = interleaved;
  spec->tp_max = 1;
  g_autoptr(PtsimSweep) sweep = enumerate(spec);
  g_assert_cmpuint(sweep->jobs->len, ==, 16);
  g_assert_cmpuint(g_hash_table_size(sweep->rejected), ==, 0);
}

/* DeepSeek-V3: 61 layers (prime) and one MTP layer.  No first/last split
 * divides by vp > 1 (every stage a multiple of vp makes vp divide 61), so
 * the interleaved schedule gets the accounted split: the embedding one
 * layer's slot, the loss one and the MTP layer one, 61 + 1 + 2 = 64 units.
 * On pp 8, 8 vp must divide 64: vp 2 (16 chunks of 4: the first 3 layers,
 * the last 2 with m and L) and vp 4 (32 chunks of 2: "Et|(tt|)*30mL", as
 * Megatron-LM runs it); vp 8 leaves the first chunk only the embedding
 * (64 / 64 = 1) and the last chunk no room for m and L; vp 3, 5, 6, 7:
 * 24, 40, 48, 56 divide none of 64, 62 (embedding alone: 61 + 1) or 63
 * (loss side alone: 61 + 2).  Without MTP the same 61 layers on pp 8 have
 * none (63 and 62 are not multiples of 8).  Llama 3.1 405B's 126 on pp 8:
 * vp 4 (128 = 32 x 4, ends 3) and vp 8 (64 x 2, ends 1), where no
 * first/last split divides by 4 or 8 (126 % 4, 126 % 8). */
static void test_accounted_split_by_hand(void) {
  g_test_summary("vp where the layers do not divide: 61 layers + 1 MTP on pp 8 get vp 2 and 4 "
                 "with the embedding, the loss and the MTP layer counted as layers");
  int e, l;
  g_assert_true(ptsim_sweep_split_accounted(61, 1, 8, 2, &e, &l));
  g_assert_cmpint(e, ==, 1);
  g_assert_cmpint(l, ==, 2);
  g_assert_true(ptsim_sweep_split_accounted(61, 1, 8, 4, &e, &l));
  g_assert_cmpint(e, ==, 1);
  g_assert_cmpint(l, ==, 2);
  for (gint64 vp = 3; vp <= 8; vp++)
    if (vp != 4) g_assert_false(ptsim_sweep_split_accounted(61, 1, 8, vp, &e, &l));
  g_assert_false(ptsim_sweep_split_accounted(61, 0, 8, 2, &e, &l));
  g_assert_true(ptsim_sweep_split_accounted(126, 0, 8, 4, &e, &l));
  g_assert_cmpint(e, ==, 1);
  g_assert_cmpint(l, ==, 1);
  g_assert_true(ptsim_sweep_split_accounted(126, 0, 8, 8, &e, &l));
  /* 63 layers on pp 8, vp 2: 65 (both) is odd, 64 (the embedding alone)
   * gives 16 chunks of 4, the first 3 layers, the last 4 */
  g_assert_true(ptsim_sweep_split_accounted(63, 0, 8, 2, &e, &l));
  g_assert_cmpint(e, ==, 1);
  g_assert_cmpint(l, ==, 0);

  /* the sweep: DeepSeek-V3 on 8 GPUs, pp 8 (tp 1, ep 1), interleaved:
   * exactly vp 2 and vp 4, their splits written as Megatron-LM's layout */
  g_autoptr(PtsimSweepSpec) spec = small_spec("deepseek-v3");
  const int interleaved = PTSIM_SCHEDULE_INTERLEAVED;
  const gint64 eight = 8;
  g_array_index(spec->schedules, int, 0) = interleaved;
  g_array_append_val(spec->pps, eight);
  spec->tp_max = 1;
  g_autoptr(PtsimSweep) sweep = enumerate(spec);
  g_assert_cmpuint(sweep->jobs->len, ==, 2);
  static const char *const want[2] = {"Et*3|(t*4|)*14t*2mL", "Et|(t*2|)*30mL"};
  for (guint i = 0; i < 2; i++) {
    const PtsimJob *j = &g_array_index(sweep->jobs, PtsimJob, i);
    g_assert_cmpint(j->layout.vp, ==, 2 * (gint64)(i + 1));
    g_autofree char *text = ptsim_sweep_layout_string(j);
    g_assert_cmpstr(text, ==, want[i]);
  }
}

/* The default enumeration holds the layouts NVIDIA publishes for these
 * models: Llama-3-70B at pp 4 with vp 5 and GPT-3 175B at pp 8 with vp 12
 * (one layer per virtual stage). */
static gboolean has_layout(const PtsimSweep *sweep, gint64 tp, gint64 pp, gint64 vp) {
  for (guint i = 0; i < sweep->jobs->len; i++) {
    const PtsimLayout *l = &g_array_index(sweep->jobs, PtsimJob, i).layout;
    if (l->tp == tp && l->pp == pp && l->vp == vp) return TRUE;
  }
  return FALSE;
}

static void test_expert_layouts(void) {
  g_test_summary("the default vp list reaches llama3-70b pp 4 vp 5 and gpt3-175b pp 8 vp 12");
  g_autoptr(PtsimSweepSpec) a = small_spec("llama3-70b");
  g_autoptr(PtsimSweepSpec) b = small_spec("gpt3-175b");
  const int interleaved = PTSIM_SCHEDULE_INTERLEAVED;
  g_array_index(a->gpus, gint64, 0) = 64;
  g_array_index(a->schedules, int, 0) = interleaved;
  g_array_index(b->gpus, gint64, 0) = 128;
  g_array_index(b->gbs, gint64, 0) = 256;
  g_array_index(b->schedules, int, 0) = interleaved;
  g_autoptr(PtsimSweep) sa = enumerate(a);
  g_autoptr(PtsimSweep) sb = enumerate(b);
  g_assert_true(has_layout(sa, 8, 4, 5));
  g_assert_true(has_layout(sb, 4, 8, 12));
  g_assert_true(has_layout(sb, 8, 8, 12));
}

static void test_sharding_modes(void) {
  g_test_summary("--sharding ddp,zero2,fsdp,hsdp --hsdp-shard-size 2 on 8 GPUs: 10 layouts each; "
                 "hsdp needs dp > 2 and even (dp 8, 4: 3 layouts), by hand");
  g_autoptr(PtsimSweepSpec) spec = small_spec("llama3-8b");
  const int modes[] = {PTSIM_SHARDING_MODE_DDP, PTSIM_SHARDING_MODE_ZERO2, PTSIM_SHARDING_MODE_FSDP,
                       PTSIM_SHARDING_MODE_HSDP};
  const gint64 two = 2;
  g_array_append_vals(spec->shardings, modes, G_N_ELEMENTS(modes));
  g_array_append_val(spec->shard_sizes, two);
  g_autoptr(PtsimSweep) sweep = enumerate(spec);
  g_assert_cmpuint(sweep->candidates, ==, 40);
  g_assert_cmpuint(sweep->jobs->len, ==, 33);
  guint count[5] = {0};
  for (guint i = 0; i < sweep->jobs->len; i++) {
    const PtsimLayout *l = &g_array_index(sweep->jobs, PtsimJob, i).layout;
    const char *word = ptsim_layout_sharding_word(l);
    int mode = -1;
    g_assert_true(ptsim_names_parse(PTSIM_NAMES_SHARDING, word, &mode));
    count[mode]++;
    if (mode == PTSIM_SHARDING_MODE_HSDP) g_assert_cmpint(l->optimizer_instances, ==, l->dp / 2);
    if (mode == PTSIM_SHARDING_MODE_DDP) g_assert_false(l->distributed_optimizer);
  }
  g_assert_cmpuint(count[PTSIM_SHARDING_MODE_DDP], ==, 10);
  g_assert_cmpuint(count[PTSIM_SHARDING_MODE_ZERO1], ==, 0);
  g_assert_cmpuint(count[PTSIM_SHARDING_MODE_ZERO2], ==, 10);
  g_assert_cmpuint(count[PTSIM_SHARDING_MODE_FSDP], ==, 10);
  g_assert_cmpuint(count[PTSIM_SHARDING_MODE_HSDP], ==, 3);
  g_assert_cmpuint(g_hash_table_size(sweep->rejected), ==, 2); /* no replicas; does not divide */
}

/* What the enumeration's progress callback saw. */
typedef struct {
  guint calls;
  guint64 done, scenarios, valid;
  gboolean monotonic;
} Seen;

static void seen_progress(guint64 done, guint64 scenarios, guint64 valid, gpointer data) {
  Seen *s = data;
  s->monotonic &= done >= s->done && valid >= s->valid;
  s->calls++;
  s->done = done;
  s->scenarios = scenarios;
  s->valid = valid;
}

static void test_enumeration_progress(void) {
  g_test_summary("enumeration progress: 2 GPU counts x 2 seqs x 2 profiles = 8 scenarios, one "
                 "call after each, ending at 8/8 with the sweep's valid count");
  g_autoptr(PtsimSweepSpec) spec = small_spec("llama3-8b");
  const gint64 sixteen = 16, seq = 8192;
  g_array_append_val(spec->gpus, sixteen);
  g_array_append_val(spec->seqs, seq);
  g_ptr_array_add(spec->hws, g_strdup("a100-80g"));
  Seen seen = {0, 0, 0, 0, TRUE};
  spec->enumerate_progress = seen_progress;
  spec->enumerate_progress_data = &seen;
  g_autoptr(PtsimSweep) sweep = enumerate(spec);
  /* fewer than PTSIM_SWEEP_PROGRESS_EVERY combinations: only the 8 calls */
  g_assert_cmpuint(sweep->candidates, <, PTSIM_SWEEP_PROGRESS_EVERY);
  g_assert_cmpuint(seen.calls, ==, 8);
  g_assert_cmpuint(seen.done, ==, 8);
  g_assert_cmpuint(seen.scenarios, ==, 8);
  g_assert_cmpuint(seen.valid, ==, sweep->valid);
  g_assert_true(seen.monotonic);
}

/* The best per group emulates each group's candidates in doubt one after
 * another, all groups' walks as one stream on the threads: the verdicts
 * come in another order on 4 threads than on 1, but each group's walk
 * depends on its own verdicts only, so the same layouts are emulated, with
 * the same results, and the same best. */
static void test_best_per_group_threads(void) {
  g_test_summary("the best per group and every result equal on 1 and 4 threads");
  g_autoptr(PtsimSweepSpec) spec = verdict_spec();
  const gint64 sixteen = 16;
  g_array_append_val(spec->gpus, sixteen);
  g_ptr_array_add(spec->hws, g_strdup("a100-80g"));
  g_autoptr(PtsimSweep) one = evaluated(spec);
  g_autoptr(PtsimSweep) many = evaluated(spec);
  g_autoptr(GArray) groups_one = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) groups_many = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) best_one = ptsim_sweep_best_per_group(one, 1, groups_one);
  g_autoptr(GArray) best_many = ptsim_sweep_best_per_group(many, 4, groups_many);
  g_assert_cmpuint(groups_one->len, ==, 4); /* 2 profiles x 2 GPU counts */
  g_assert_cmpuint(best_one->len, ==, best_many->len);
  g_assert_cmpmem(best_one->data, best_one->len * sizeof(guint), best_many->data,
                  best_many->len * sizeof(guint));
  g_assert_cmpmem(one->results->data, one->results->len * sizeof(PtsimBatchResult),
                  many->results->data, many->results->len * sizeof(PtsimBatchResult));
  /* and each best is its group's fastest that runs: every layout of the
   * group faster than it (tokens/s per GPU) does not run (the walk passed
   * it, with or without an emulation) */
  const PtsimJob *jobs = (const PtsimJob *)one->jobs->data;
  const PtsimBatchResult *r = (const PtsimBatchResult *)one->results->data;
  guint emulated = 0;
  for (guint g = 0; g < best_one->len; g++) {
    guint b = g_array_index(best_one, guint, g);
    g_assert_cmpuint(b, !=, G_MAXUINT);
    g_assert_cmpint(r[b].runs, ==, 1);
    for (guint i = 0; i < one->jobs->len; i++) {
      if (jobs[i].layout.gpus != jobs[b].layout.gpus ||
          strcmp(jobs[i].hw.name, jobs[b].hw.name) != 0 || r[i].status != 0)
        continue;
      if (ptsim_sweep_rank_key(&jobs[i], &r[i]) > ptsim_sweep_rank_key(&jobs[b], &r[b]))
        g_assert_cmpint(r[i].runs, ==, 0);
      emulated += r[i].runs_from == PTSIM_RUNS_FROM_ALLOCATOR;
    }
  }
  g_assert_cmpuint(emulated, >, best_one->len); /* some walks went past one in doubt */
}

/* Chunks handed to the threads while enumeration goes on
 * (evaluate_threads) give the results of evaluating after it, bit for bit:
 * each layout's evaluation depends on the layout and its index only. */
static void test_evaluate_while_enumerating(void) {
  g_test_summary("evaluating chunks while enumerating equals evaluating after, bit for bit");
  g_autoptr(PtsimSweepSpec) spec = verdict_spec();
  const gint64 sixteen = 16;
  g_array_append_val(spec->gpus, sixteen); /* > 256 layouts: several chunks, one partial */
  g_autoptr(PtsimSweep) after = evaluated(spec);
  spec->evaluate_threads = 3;
  g_autoptr(GError) error = NULL;
  g_autoptr(PtsimSweep) early = ptsim_sweep_enumerate_at_most(spec, 100000, &error);
  g_assert_no_error(error);
  g_assert_nonnull(early->early); /* held at most 100,000: the jobs stay put */
  g_assert_true(ptsim_sweep_evaluate(early, PTSIM_DEVICE_CPU, 3, NULL, NULL, &error));
  g_assert_no_error(error);
  g_assert_null(early->early);
  g_assert_cmpuint(after->jobs->len, >, 256);
  g_assert_cmpuint(after->jobs->len % 256, !=, 0);
  g_assert_cmpmem(after->jobs->data, after->jobs->len * sizeof(PtsimJob), early->jobs->data,
                  early->jobs->len * sizeof(PtsimJob));
  g_assert_cmpmem(after->results->data, after->results->len * sizeof(PtsimBatchResult),
                  early->results->data, early->results->len * sizeof(PtsimBatchResult));
  /* and a sweep freed before its evaluation stops its threads */
  g_autoptr(PtsimSweep) dropped = ptsim_sweep_enumerate_at_most(spec, 100000, &error);
  g_assert_nonnull(dropped->early);
  /* unbounded, the array would move: evaluated after */
  g_autoptr(PtsimSweep) unbounded = enumerate(spec);
  g_assert_null(unbounded->early);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/sweep/hand-count", test_hand_count);
  g_test_add_func("/sweep/tp-up-to-nvlink-domain", test_tp_up_to_nvlink_domain);
  g_test_add_func("/sweep/rejections-counted-by-reason", test_rejections_counted_by_reason);
  g_test_add_func("/sweep/uneven-split", test_uneven_split);
  g_test_add_func("/sweep/interleaved-adds-vp", test_interleaved_adds_vp);
  g_test_add_func("/sweep/expert-parallel-count", test_expert_parallel_count);
  g_test_add_func("/sweep/pool-equals-single-thread", test_pool_equals_single_thread);
  g_test_add_func("/sweep/split-by-hand", test_split_by_hand);
  g_test_add_func("/sweep/v-split-by-hand", test_v_split_by_hand);
  g_test_add_func("/sweep/vp-counts-by-hand", test_vp_counts_by_hand);
  g_test_add_func("/sweep/accounted-split-by-hand", test_accounted_split_by_hand);
  g_test_add_func("/sweep/expert-layouts", test_expert_layouts);
  g_test_add_func("/sweep/sharding-modes", test_sharding_modes);
  g_test_add_func("/sweep/floor-below-emulation", test_floor_below_emulation);
  g_test_add_func("/sweep/settle-top-equals-full", test_settle_top_equals_full);
  g_test_add_func("/sweep/best-per-group-threads", test_best_per_group_threads);
  g_test_add_func("/sweep/evaluate-while-enumerating", test_evaluate_while_enumerating);
  g_test_add_func("/sweep/enumeration-progress", test_enumeration_progress);
  return g_test_run();
}
