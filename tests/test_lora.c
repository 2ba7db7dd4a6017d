/* test_lora.c — LoRA fine-tuning (settings lora_rank; plan.c "LoRA",
 * workload_lora.c): the adapters' parameters, the states only they have,
 * their saved intermediates, the replay's Adam states, and the base's
 * weight-gradient GEMMs that backward no longer runs.  Every expected
 * value is derived in the comments from Llama-3-8B's shape (h 4096, 32
 * heads of 128, 8 KV groups: q 4096, kv 1024; SwiGLU f 14336; 32 layers;
 * P = 8030261248 parameters, test_lifetimes.c) and rank r = 16. */
#include <glib.h>
#include <string.h>
#include "error_bands.h"
#include "job_fixture.h"
#include "job_options.h"
#include "job_validate.h"
#include "memory.h"
#include "plan_of.h"
#include "simulate.h"

#define P 8030261248.0
/* One layer's adapters, r (in + out) per linear, tp 1:
 *   linear_qkv  16 (4096 + 4096 + 2 x 1024) = 163840
 *   linear_proj 16 (4096 + 4096)            = 131072
 *   linear_fc1  16 (4096 + 2 x 14336)       = 524288
 *   linear_fc2  16 (14336 + 4096)           = 294912
 * together 1114112; 32 layers: A = 35651584. */
#define LAYER_ADAPTERS 1114112.0
#define A (32.0 * LAYER_ADAPTERS)

static void lora_job(PtsimJob *job, int64_t tp, int64_t rank, int targets) {
  FixtureLayout l = {8, tp, 1, 1, 1, 8, 4096, PTSIM_RECOMPUTE_NONE};
  g_autoptr(GError) error = NULL;
  fixture_job(job, "llama3-8b", "h100-80g", l);
  job->settings.lora_rank = rank;
  job->settings.lora_alpha = 32.0;
  job->settings.lora_targets = targets;
  g_assert_true(ptsim_job_validate(job, &error));
  g_assert_no_error(error);
}

static void test_adapter_parameters(void) {
  g_test_summary("r (in + out) per targeted linear, split over TP (hand-worked)");
  PtsimJob job;
  lora_job(&job, 1, 16, PTSIM_LORA_ALL);
  g_assert_cmpfloat(ptsim_plan_lora_layer_parameters(&job.model, 1, 16, PTSIM_LORA_ALL), ==,
                    LAYER_ADAPTERS);
  g_assert_cmpfloat(ptsim_plan_lora_layer_parameters(&job.model, 1, 16, PTSIM_LORA_QKV), ==,
                    163840.0);
  g_assert_cmpfloat(ptsim_plan_lora_layer_parameters(&job.model, 2, 16, PTSIM_LORA_ALL), ==,
                    LAYER_ADAPTERS / 2.0);
  g_assert_cmpfloat(ptsim_plan_lora_layer_parameters(&job.model, 1, 0, PTSIM_LORA_ALL), ==, 0.0);
  g_autofree PtsimPlan *plan = plan_of(&job);
  g_assert_cmpfloat(plan->stage_parameters[0], ==, P + A);
  g_assert_cmpfloat(plan->stage_trainable_parameters[0], ==, A);
}

/* tp 1, dp 8, the distributed optimizer, fp32 main grads: the weights are
 * the base's and the adapters' in bf16, 2 (P + A); the main grads 4 A (the
 * base has none); Adam's master, m and v 12 A over the 8 data-parallel
 * ranks.  A layer saves per targeted linear B's input, A's r-wide output:
 * 2 B x T r with T = 4096 tokens, 4 x 2 x 4096 x 16 = 524288 bytes more. */
static void test_estimate_states_and_activations(void) {
  g_test_summary("estimate: 2 (P + A) weights, 4 A grads, 12 A / 8 optimizer, 8 T r a layer");
  PtsimJob job;
  PtsimMemoryEstimate base, lora;
  lora_job(&job, 1, 0, 0);
  estimate_of(&job, PTSIM_CE_LAST_STAGE, &base);
  lora_job(&job, 1, 16, PTSIM_LORA_ALL);
  estimate_of(&job, PTSIM_CE_LAST_STAGE, &lora);
  const PtsimStageMemory *b = &base.stages[0], *s = &lora.stages[0];
  g_assert_cmpfloat(b->gradients_bytes, ==, 4.0 * P);
  g_assert_cmpfloat(s->parameters, ==, P + A);
  g_assert_cmpfloat(s->parameters_bytes, ==, 2.0 * (P + A));
  g_assert_cmpfloat(s->gradients_bytes, ==, 4.0 * A);
  g_assert_cmpfloat(s->optimizer_bytes, ==, 12.0 * A / 8.0);
  g_assert_cmpfloat(s->activation_bytes_per_layer - b->activation_bytes_per_layer, ==, 524288.0);
  /* linear_qkv alone: one intermediate, 2 x 4096 x 16 = 131072 B, and the
   * frozen fc1 and fc2 keep no input (Transformer Engine saves a linear's
   * input for its weight gradient only): fc1's 2 T h = 33554432 B, fc2's
   * 2 T f = 117440512 B; proj's bf16 input is the attention kernel's output,
   * kept */
  lora_job(&job, 1, 16, PTSIM_LORA_QKV);
  estimate_of(&job, PTSIM_CE_LAST_STAGE, &lora);
  g_assert_cmpfloat(lora.stages[0].activation_bytes_per_layer - b->activation_bytes_per_layer, ==,
                    131072.0 - 33554432.0 - 117440512.0);
  /* selective recompute of the MLP drops fc1's and fc2's intermediates too */
  lora_job(&job, 1, 16, PTSIM_LORA_ALL);
  job.settings.recompute = PTSIM_RECOMPUTE_SELECTIVE;
  job.settings.recompute_modules = PTSIM_RECOMPUTE_MLP;
  g_autofree PtsimPlan *plan = plan_of(&job);
  g_assert_cmpfloat(ptsim_memory_lora_activation_bytes(plan, 0), ==, 2.0 * 2.0 * 4096.0 * 16.0);
}

/* The replay: step 0 runs before Adam's states exist; the steady state
 * holds them, for the adapters alone: m and v, 8 B x A over 8 ranks = A
 * bytes requested more (the full run's is P, test_lifetimes.c). */
static void test_replay_adam_states(void) {
  g_test_summary("replay: the steady state's Adam states are the adapters' alone, A bytes");
  PtsimJob job;
  g_autoptr(GError) error = NULL;
  lora_job(&job, 1, 16, PTSIM_LORA_ALL);
  g_autofree PtsimAllocResult *a = g_new0(PtsimAllocResult, 1);
  g_assert_true(simulate_allocator_of(&job, 2, NULL, NULL, 0.0, NULL, a, &error));
  g_assert_no_error(error);
  const PtsimStageAlloc *s = &a->stages[0];
  g_assert_cmpfloat(s->steady_state.requested_peak_bytes - s->first_step.requested_peak_bytes, ==,
                    A);
}

/* The time: backward runs no weight-gradient GEMM of the frozen base.  A
 * layer's W is the adapters' wgrads alone, (k, n, m) for a forward (m, n,
 * k) GEMM: A of a column-parallel linear (T, r, h), B (T, out, r); of a
 * row-parallel one A (T, r, in), B (T, h, r).  The output layer's W is
 * empty, and the data-parallel reduce-scatter moves the adapters' 4 A
 * bytes. */
static void test_no_base_wgrad(void) {
  g_test_summary("time: W is the adapters' wgrads; the head's W is 0; dp reduces 4 A bytes");
  PtsimJob job;
  PtsimCostParams params;
  lora_job(&job, 1, 16, PTSIM_LORA_ALL);
  ptsim_cost_params_default(&job.hw, &params);
  g_autofree PtsimWorkload *w = g_new0(PtsimWorkload, 1);
  workload_of(&job, &params, w);
  const int64_t T = 4096, r = 16;
  const int64_t shapes[8][3] = {{T, r, 4096},  {T, 6144, r},  /* linear_qkv: A, B */
                                {T, r, 4096},  {T, 4096, r},  /* linear_proj */
                                {T, r, 4096},  {T, 28672, r}, /* linear_fc1 */
                                {T, r, 14336}, {T, 4096, r}}; /* linear_fc2 */
  double wgrad = 0.0;
  for (int i = 0; i < 8; i++)
    wgrad += ptsim_cost_gemm_s(&job.hw, &params, PTSIM_PRECISION_BF16, shapes[i][2], shapes[i][1],
                               shapes[i][0]);
  g_assert_cmpfloat_with_epsilon(w->layer.backward_weight_s, wgrad, 1e-12);
  /* Forward: the base's GEMMs as before, plus the adapters' (m, n, k) and,
   * per linear, the scale and the add, 5 passes of 2 B over its output
   * (T x out: 6144, 4096, 28672, 4096 wide) */
  g_autofree PtsimWorkload *b = g_new0(PtsimWorkload, 1);
  PtsimJob base;
  lora_job(&base, 1, 0, 0);
  workload_of(&base, &params, b);
  const double outs[4] = {6144.0, 4096.0, 28672.0, 4096.0};
  double extra = 0.0;
  for (int i = 0; i < 8; i++)
    extra += ptsim_cost_gemm_s(&job.hw, &params, PTSIM_PRECISION_BF16, shapes[i][0], shapes[i][1],
                               shapes[i][2]);
  for (int i = 0; i < 4; i++)
    extra += ptsim_cost_memory_bound_at_s(&job.hw, &params, 5.0 * 2.0 * (double)T * outs[i]);
  g_assert_cmpfloat_with_epsilon(w->layer.forward_s - b->layer.forward_s, extra, 1e-12);
  g_assert_cmpfloat(w->head.backward_weight_s, ==, 0.0);
  g_autofree PtsimPlan *plan = plan_of(&job);
  double sync = ptsim_cost_collective_s(&job.hw, &params, PTSIM_COLL_REDUCE_SCATTER, 4.0 * A,
                                        &plan->shard_group);
  g_assert_cmpfloat_with_epsilon(w->grad_sync_s[0], sync, 1e-15);
}

/* The flags: --lora-rank with its alpha and targets; the others without a
 * rank, an unknown module, and the models LoRA is not modelled for are
 * refused by name. */
static void test_flags(void) {
  g_test_summary("--lora-rank, --lora-alpha, --lora-target-modules read; misuse refused by name");
  PtsimJobOptions o;
  PtsimSettings run;
  PtsimLayout l;
  PtsimProvenance src;
  const char *ok[] = {"--lora-rank",           "8", "--lora-alpha", "16", "--lora-target-modules",
                      "linear_qkv,linear_fc2", NULL};
  g_autoptr(GError) error = NULL;
  ptsim_job_options_init(&o);
  g_assert_true(ptsim_job_options_parse(&o, ok, &error));
  ptsim_settings_init_defaults(&run);
  ptsim_layout_init_defaults(&l);
  memset(&src, 0, sizeof src);
  g_assert_true(ptsim_job_options_apply_settings(&o, &l, &run, &src, NULL, &error));
  g_assert_no_error(error);
  g_assert_cmpint(run.lora_rank, ==, 8);
  g_assert_cmpfloat(run.lora_alpha, ==, 16.0);
  g_assert_cmpint(run.lora_targets, ==, PTSIM_LORA_QKV | PTSIM_LORA_FC2);
  ptsim_job_options_clear(&o);
  const char *bad[][5] = {{"--lora-alpha", "16", NULL},
                          {"--lora-rank", "8", "--lora-target-modules", "q_proj", NULL},
                          {"--lora-rank", "0", NULL}};
  const char *says[] = {"--lora-alpha needs --lora-rank", "--lora-target-modules 'q_proj'",
                        "--lora-rank"};
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_autoptr(GError) e = NULL;
    ptsim_job_options_init(&o);
    ptsim_settings_init_defaults(&run);
    gboolean done = ptsim_job_options_parse(&o, bad[i], &e) &&
                    ptsim_job_options_apply_settings(&o, &l, &run, &src, NULL, &e);
    g_assert_false(done);
    g_assert_nonnull(strstr(e->message, says[i]));
    ptsim_job_options_clear(&o);
  }
  PtsimJob job;
  FixtureLayout fl = {8, 1, 1, 1, 1, 8, 4096, PTSIM_RECOMPUTE_NONE};
  fixture_job(&job, "mixtral-8x7b", "h100-80g", fl);
  job.settings.lora_rank = 8;
  job.settings.lora_alpha = 32.0;
  job.settings.lora_targets = PTSIM_LORA_ALL;
  g_autoptr(GError) e = NULL;
  g_assert_false(ptsim_job_validate(&job, &e));
  g_assert_nonnull(strstr(e->message, "--lora-rank"));
  g_assert_nonnull(strstr(e->message, "mixture-of-experts"));
}

/* No published run measures LoRA: its band is "uncalibrated", whatever
 * band covers the same profile and precision (here one that would). */
static void test_uncalibrated_band(void) {
  g_test_summary("the step time's error band says uncalibrated under LoRA");
  static const char bands[] = "[h100 bf16]\nprofiles = h100-80g\nprecisions = bf16\n"
                              "mean_abs_error = 0.09\nmax_abs_error = 0.19\nruns = 9\n";
  PtsimJob job;
  PtsimErrorBand band;
  lora_job(&job, 1, 0, 0);
  ptsim_error_band_lookup_data(&job, bands, sizeof bands - 1, &band);
  g_assert_true(band.found);
  lora_job(&job, 1, 16, PTSIM_LORA_ALL);
  ptsim_error_band_lookup_data(&job, bands, sizeof bands - 1, &band);
  g_assert_false(band.found);
  g_assert_nonnull(strstr(band.note, "uncalibrated"));
  g_assert_nonnull(strstr(band.note, "--lora-rank"));
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/lora/adapter-parameters", test_adapter_parameters);
  g_test_add_func("/lora/estimate", test_estimate_states_and_activations);
  g_test_add_func("/lora/replay-adam-states", test_replay_adam_states);
  g_test_add_func("/lora/no-base-wgrad", test_no_base_wgrad);
  g_test_add_func("/lora/flags", test_flags);
  g_test_add_func("/lora/uncalibrated-band", test_uncalibrated_band);
  return g_test_run();
}
