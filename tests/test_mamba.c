/* test_mamba.c — Mamba-2 layers and hybrid patterns (sim/core/mamba.c,
 * plan.c's hybrid parameters, sim/io/hybrid_pattern.c).  Every expected
 * value is derived in the comments from Nemotron-H-8B's shape
 * (models/nemotron-h-8b.ini: h 4096; Mamba: 128 heads of 64, d_inner
 * 8192, 8 groups, state 128, conv kernel 4, chunk 128; attention 32 heads
 * of 128, 8 KV groups; MLP 21504 non-gated; vocabulary 131072, untied). */
#include <glib.h>
#include <string.h>
#include "config.h"
#include "hybrid_pattern.h"
#include "job_fixture.h"
#include "mamba.h"
#include "megatron_args.h"
#include "job_resolve.h"
#include "lifetimes.h"
#include "schedule.h"
#include "job_validate.h"
#include "plan.h"
#include "plan_of.h"
#include "prediction.h"
#include "workload.h"

static void load(PtsimModel *m) {
  g_autoptr(GError) error = NULL;
  gboolean ok = ptsim_model_load("nemotron-h-8b", m, &error);
  g_assert_no_error(error);
  g_assert_true(ok);
}

/* in_proj 4096 x (2 x 8192 + 2 x 8 x 128 + 128 = 18560) = 76021760
 * conv1d over 8192 + 2048 = 10240 channels: 10240 x 4 + 10240  =    51200
 * A_log, D, dt_bias: 3 x 128                                   =      384
 * gated RMSNorm over d_inner                                   =     8192
 * out_proj 8192 x 4096                                         = 33554432
 * together 109635968 split by tp, plus the pre-norm 4096 (replicated):
 * tp 1: 109640064, tp 2: 54817984 + 4096 = 54822080. */
static void test_layer_parameters(void) {
  g_test_summary("a Mamba-2 layer's parameters, hand-counted, and their TP split");
  PtsimModel m;
  PtsimMambaDims d;
  load(&m);
  ptsim_mamba_dims(&m, &d);
  g_assert_cmpint(d.d_inner, ==, 8192);
  g_assert_cmpint(d.in_proj_width, ==, 18560);
  g_assert_cmpint(d.conv_dim, ==, 10240);
  g_assert_cmpfloat(ptsim_mamba_layer_parameters(&m, 1), ==, 109640064.0);
  g_assert_cmpfloat(ptsim_mamba_layer_parameters(&m, 2), ==, 54822080.0);
  /* without mamba_num_heads: d_inner = 2 h = 8192, 8192 / 64 = 128 heads */
  m.mamba_num_heads = 0;
  g_assert_cmpfloat(ptsim_mamba_layer_parameters(&m, 1), ==, 109640064.0);
}

/* 24 Mamba layers 24 x 109640064                      = 2631361536
 * 24 MLP layers 24 x (2 x 4096 x 21504 + 4096)        = 4227956736
 * 4 attention layers 4 x (4096 x (4096 + 2 x 1024)
 *                         + 4096 x 4096 + 4096)       =  167788544
 * embedding and LM head 2 x 131072 x 4096             = 1073741824
 * final norm                                          =       4096
 * total 8100852736: the published "8B" (8.1B). */
static void test_model_total(void) {
  g_test_summary("Nemotron-H-8B's parameter count from its pattern matches the published 8B");
  PtsimModel m;
  double total = 0.0, active = 0.0;
  load(&m);
  g_assert_cmpint(m.num_layers, ==, 52);
  g_assert_cmpint(ptsim_hybrid_count(&m, 0, 52, PTSIM_HYBRID_MAMBA), ==, 24);
  g_assert_cmpint(ptsim_hybrid_count(&m, 0, 52, PTSIM_HYBRID_MLP), ==, 24);
  g_assert_cmpint(ptsim_hybrid_count(&m, 0, 52, PTSIM_HYBRID_ATTENTION), ==, 4);
  ptsim_plan_model_parameters(&m, 8192, &total, &active);
  g_assert_cmpfloat(total, ==, 8100852736.0);
  g_assert_cmpfloat(active, ==, total);
  g_assert_cmpfloat(total / 1e9, >=, 7.95);
  g_assert_cmpfloat(total / 1e9, <, 8.15);
}

/* Per token, tp 1:
 *   in_proj  2 x 4096 x 18560 = 152043520, out_proj 2 x 8192 x 4096 = 67108864
 *   conv     2 x 4 x 10240 = 81920
 *   SSD      8 groups x 2 x 128 x 128 (C B^T)                  =  262144
 *          + 128 heads x (2 x 128 x 64 + 4 x 128 x 64)          = 6291456
 *            together 6553600 (Dao & Gu 2024, section 6). */
static void test_forward_flops(void) {
  g_test_summary("a Mamba-2 layer's GEMM, conv and SSD FLOPs per token, hand-derived");
  PtsimModel m;
  PtsimMambaFlops f;
  load(&m);
  ptsim_mamba_forward_flops(&m, 1, 1.0, &f);
  g_assert_cmpfloat(f.in_proj, ==, 152043520.0);
  g_assert_cmpfloat(f.out_proj, ==, 67108864.0);
  g_assert_cmpfloat(f.conv, ==, 81920.0);
  g_assert_cmpfloat(f.ssd, ==, 6553600.0);
  ptsim_mamba_forward_flops(&m, 4, 1000.0, &f);
  g_assert_cmpfloat(f.ssd, ==, 6553600.0 * 1000.0 / 4.0);
}

/* Per token, bf16: in_proj's input and norm output 2 x 2 x 4096 + rstd 4
 * = 16388; [z x B C dt] 2 x 18560 = 37120; out_x 16384; the gated norm's
 * input 16384 + rstd 4 x 8 groups = 16416; out_proj's input 16384:
 * 102692.  tp 2 with SP: 8196 + 18560 + 8192 + (8192 + 16) + 8192 = 51348;
 * hidden dropout adds a byte per h / tp: 51348 + 2048 = 53396. */
static void test_saved_bytes(void) {
  g_test_summary("what a Mamba-2 layer keeps for backward (Megatron's mem-efficient path)");
  PtsimModel m;
  load(&m);
  g_assert_cmpfloat(ptsim_mamba_saved_bytes(&m, 1, 0, 1.0, 0), ==, 102692.0);
  g_assert_cmpfloat(ptsim_mamba_saved_bytes(&m, 2, 1, 1.0, 0), ==, 51348.0);
  g_assert_cmpfloat(ptsim_mamba_saved_bytes(&m, 2, 1, 4096.0, 1), ==, 53396.0 * 4096.0);
}

static void refused(const char *text, const char *expected) {
  PtsimModel m;
  g_autoptr(GError) error = NULL;
  memset(&m, 0, sizeof m);
  g_assert_false(ptsim_hybrid_pattern_parse(text, "--hybrid-layer-pattern", &m, &error));
  g_assert_nonnull(error);
  g_assert_nonnull(strstr(error->message, expected));
}

static void test_pattern_parse(void) {
  g_test_summary("a pattern's symbols become the layers and their kinds; others refused by name");
  PtsimModel m;
  g_autoptr(GError) error = NULL;
  memset(&m, 0, sizeof m);
  g_assert_true(ptsim_hybrid_pattern_parse("M-M*EM", "--hybrid-layer-pattern", &m, &error));
  g_assert_no_error(error);
  g_assert_cmpint(m.num_layers, ==, 6);
  g_assert_cmpint(ptsim_hybrid_count(&m, 0, 6, PTSIM_HYBRID_MAMBA), ==, 3);
  g_assert_cmpint(ptsim_hybrid_count(&m, 2, 3, PTSIM_HYBRID_MAMBA), ==, 1);
  g_assert_cmpint(ptsim_plan_moe_layers_in(&m, 0, 6), ==, 0); /* no experts: no MoE layer */
  g_assert_cmpuint(m.moe_layers[0], ==, (guint64)1 << 4);     /* the E symbol's bit */
  refused("M-|M-", "'|' at position 3 of the hybrid pattern: | (pipeline stage boundaries)");
  refused("M-M-/MM", "'/' at position 5");
  refused("MGM", "G (a gated delta net layer) is not modelled");
  refused("MxM", "expected M (Mamba), * (attention), - (MLP) or E (MoE)");
  refused("", "a hybrid pattern of 0 layers");
}

static void model_refused(const char *text, const char *expected) {
  PtsimModel m;
  g_autoptr(GError) error = NULL;
  g_assert_false(ptsim_model_load_data(text, strlen(text), "t.ini", &m, &error));
  g_assert_nonnull(error);
  if (!strstr(error->message, expected)) g_error("%s", error->message);
}

#define DENSE                                                                       \
  "[model]\nhidden_size = 1024\nffn_hidden_size = 4096\nnum_attention_heads = 16\n" \
  "num_query_groups = 16\nvocab_size = 32000\nactivation = gelu\nnorm = rmsnorm\n"  \
  "tied_embeddings = false\nbias = false\n"

static void test_model_keys(void) {
  g_test_summary("the .ini keys: num_layers must match the pattern; Mamba sizes need a pattern");
  model_refused(DENSE "num_layers = 6\nhybrid_override_pattern = M-M*-\n",
                "5 layers, num_layers = 6: expected one symbol per layer");
  model_refused(DENSE "num_layers = 4\nmamba_state_dim = 64\n",
                "t.ini: [model] mamba_state_dim needs hybrid_override_pattern");
  model_refused(DENSE "num_layers = 3\nhybrid_override_pattern = MEM\n",
                "layer 1 of the hybrid pattern is E (MoE) but the model has no experts");
  model_refused(DENSE "num_layers = 2\nhybrid_override_pattern = M-\nmamba_num_groups = 3\n",
                "32 Mamba heads are not a multiple of its 3 groups");
}

/* tp must divide the 128 heads and 8 groups (Megatron asserts it); what
 * the hybrid layers' time and replay do not model is refused by name
 * (LoRA's targets are a transformer layer's linears). */
static void test_job_refused(void) {
  g_test_summary("tp must divide the Mamba groups; what hybrid layers do not model is refused");
  PtsimJob job;
  g_autoptr(GError) error = NULL;
  memset(&job, 0, sizeof job);
  g_assert_true(ptsim_model_load("nemotron-h-8b", &job.model, &error) &&
                ptsim_hardware_load("h100-80g", &job.hw, &error));
  ptsim_job_init_defaults(&job);
  job.layout.gpus = 16;
  job.layout.tp = 16;
  job.layout.mbs = 1;
  job.layout.gbs = 16;
  job.layout.seq = 8192;
  g_assert_false(ptsim_job_validate(&job, &error));
  g_assert_nonnull(strstr(error->message, "--tp 16 does not divide the 128 Mamba heads and 8"));
  g_clear_error(&error);
  job.layout.tp = 8;
  job.layout.dp = 0; /* derived again */
  g_assert_true(ptsim_job_validate(&job, &error));
  g_assert_no_error(error);
  job.settings.lora_rank = 8;
  job.settings.lora_alpha = 16.0;
  job.settings.lora_targets = PTSIM_LORA_QKV;
  g_assert_false(ptsim_job_validate(&job, &error));
  if (!strstr(error->message, "LoRA adapters: their targets are a transformer layer's linears is "
                              "not modelled with its Mamba layers"))
    g_error("%s", error->message);
}

/* Nemotron-H-8B on 8 H100s at tp 2, pp 2, its first stage 10 layers,
 * mbs 1, gbs 16, seq 8192 (the layout of the tests below), before
 * resolving. */
static void split_job(PtsimJob *job) {
  g_autoptr(GError) error = NULL;
  memset(job, 0, sizeof *job);
  g_assert_true(ptsim_model_load("nemotron-h-8b", &job->model, &error) &&
                ptsim_hardware_load("h100-80g", &job->hw, &error));
  ptsim_job_init_defaults(job);
  job->layout.gpus = 8;
  job->layout.tp = 2;
  job->layout.pp = 2;
  job->layout.vp = 1;
  job->layout.mbs = 1;
  job->layout.gbs = 16;
  job->layout.seq = 8192;
  job->layout.first_stage_layers = 10;
}

/* The pattern's layers split over pp 2 as Megatron splits them, the first
 * stage given 10 (--decoder-first-pipeline-num-layers 10): stage 0 holds
 * "M-M-M-M*-M", 5 Mamba, 4 MLP, 1 attention; stage 1 the other 42: 19
 * Mamba, 20 MLP, 3 attention.  At tp 2 a Mamba layer is 54822080 (above),
 * an MLP layer 2 x 4096 x 21504 / 2 + 4096 = 88084480, an attention layer
 * 41943040 / 2 + 4096 = 20975616; the embedding and the LM head 4096 x
 * 131072 / 2 = 268435456 each, the final norm 4096:
 *   stage 0: 5 x 54822080 + 4 x 88084480 + 20975616 + 268435456 = 915859392
 *   stage 1: 19 x 54822080 + 20 x 88084480 + 3 x 20975616 + 4096
 *            + 268435456 = 3134675520. */
static void test_stage_split(void) {
  g_test_summary("a pattern's per-stage split: each stage's layers by kind, hand-counted");
  PtsimJob job;
  split_job(&job);
  ptsim_job_resolve(&job); /* the plan of a job the shell refuses to simulate yet */
  g_autofree PtsimPlan *plan = plan_of(&job);
  g_assert_cmpint(plan->stage_layers[0], ==, 10);
  g_assert_cmpint(plan->stage_layers[1], ==, 42);
  g_assert_cmpint(ptsim_hybrid_count(&job.model, 0, 10, PTSIM_HYBRID_MAMBA), ==, 5);
  g_assert_cmpint(ptsim_hybrid_count(&job.model, 10, 42, PTSIM_HYBRID_ATTENTION), ==, 3);
  g_assert_cmpfloat(plan->stage_parameters[0], ==, 915859392.0);
  g_assert_cmpfloat(plan->stage_parameters[1], ==, 3134675520.0);
}

/* The workload of the layout above (tp 2, pp 2, stage 0 "M-M-M-M*-M"):
 * a Mamba layer's FLOPs as Megatron-LM's hybrid formula counts them
 * (training.py mamba_layer_flops, d_in = 2 h = 8192), per token forward:
 *   in_proj 2 x 4096 x (2 x 8192 + 2 x 8 x 128 + 128) = 152043520
 *   scan    7 x 8192 x 128                            =   7340032
 *   out_proj 2 x 8192 x 4096                          =  67108864
 *   together 226492416; forward and backward (x 3) over 8192 tokens on
 *   one of 2 TP ranks: 226492416 x 3 x 8192 / 2 = 2783138807808.
 * Chunk 0 of stage 0 (the embedding's) sums 5 Mamba, 4 MLP and 1
 * attention layer and the embedding; stage 1's 19, 20, 3 and the head. */
static void test_workload_layers(void) {
  g_test_summary("a Mamba layer's FLOPs in the workload, and a chunk's sum by the pattern");
  PtsimJob job;
  PtsimWork c0, c1;
  split_job(&job);
  ptsim_job_resolve(&job);
  g_autofree PtsimPlan *plan = plan_of(&job);
  g_autofree PtsimWorkload *w = g_new0(PtsimWorkload, 1);
  ptsim_workload_build(plan, NULL, w);
  g_assert_true(w->hybrid);
  g_assert_cmpfloat_with_epsilon(w->mamba_layer.flops, 2783138807808.0, 1.0);
  g_assert_cmpfloat(w->mamba_layer.forward_s, >, 0.0);
  g_assert_cmpfloat(w->mamba_layer.backward_input_s, >, w->mamba_layer.forward_s);
  ptsim_workload_chunk(w, 0, 0, &c0);
  ptsim_workload_chunk(w, 1, 0, &c1);
  g_assert_cmpfloat_with_epsilon(c0.flops,
                                 5.0 * w->mamba_layer.flops + 4.0 * w->mlp_layer.flops +
                                     w->attention_layer.flops + w->embedding.flops,
                                 1e-6 * c0.flops);
  g_assert_cmpfloat_with_epsilon(c1.flops,
                                 19.0 * w->mamba_layer.flops + 20.0 * w->mlp_layer.flops +
                                     3.0 * w->attention_layer.flops + w->head.flops,
                                 1e-6 * c1.flops);
  /* an MLP sub-layer is a transformer layer's MLP half: fc1 and fc2,
   * 2 x 6 x 8192 x 4096 x 21504 / 2 = 4329327034368 */
  g_assert_cmpfloat(w->mlp_layer.flops, ==, 4329327034368.0);
}

/* The same layout's analytical activations on stage 0 (1F1B, pp 2: 2
 * microbatches in flight; tp 2 with SP, 8192 tokens, no dropout):
 *   a Mamba layer 51348 B per token (above) x 8192        = 420642816
 *   an MLP layer: input and norm output 4 T h / 2 = 67108864, fc1's
 *     output and the activation's 4 T f / 2 = 352321536     = 419430400
 *   attention: 67108864 + (2 q + 4 kv + 2 q) / 2, q = T x 32 x 128 =
 *     33554432, kv = T x 8 x 128 = 8388608: + 83886080      = 150994944
 *   5 x 420642816 + 4 x 419430400 + 150994944 = 3931930624, x 2 in flight
 *   = 7863861248. */
static void test_stage_activations(void) {
  g_test_summary("a hybrid stage's saved activations by layer kind, hand-derived");
  PtsimJob job;
  PtsimMemoryEstimate est;
  split_job(&job);
  job.source.hidden_dropout = 0.0;
  job.source.attention_dropout = 0.0;
  ptsim_job_resolve(&job);
  g_assert_true(job.layout.sp);
  g_autofree PtsimPlan *plan = plan_of(&job);
  g_assert_cmpfloat(plan->inflight_microbatches[0], ==, 2.0);
  g_assert_cmpfloat(ptsim_memory_hybrid_layer_bytes(plan, PTSIM_HYBRID_MAMBA), ==, 420642816.0);
  g_assert_cmpfloat(ptsim_memory_hybrid_layer_bytes(plan, PTSIM_HYBRID_MLP), ==, 419430400.0);
  g_assert_cmpfloat(ptsim_memory_hybrid_layer_bytes(plan, PTSIM_HYBRID_ATTENTION), ==, 150994944.0);
  estimate_of(&job, PTSIM_CE_LAST_STAGE, &est);
  g_assert_cmpfloat(est.stages[0].activations_bytes, ==, 7863861248.0);
}

/* The allocator replay of a tiny hybrid stage: Megatron-LM's flags, h
 * 1024, 16 heads of 64 (no GQA), fc 4096 (GELU), vocabulary 32000, seq
 * 1024, mbs 1, one microbatch, tp = pp = 1, pattern "M*-", no dropout.
 * Mamba defaults: head dim 64, d = 2 h = 2048 (32 heads), 8 groups, state
 * 128: W = 2 x 2048 + 2 x 8 x 128 + 32 = 6176.  The forward keeps, T =
 * 1024 tokens:
 *   Mamba  per token 2 h + 2 h + 4 (in_proj's input, norm output, rstd)
 *          + 2 W + 3 x 2 d (out_x, the gated norm's input, out_proj's
 *          input) + 4 x 8 (rstd per group) = 28772, x 1024   = 29462528
 *   attention 4 T h (input, norm output) + 2 q + 4 kv + 2 q, q = kv =
 *          T x 16 x 64 = 1048576                              = 12582912
 *   MLP    4 T h + 2 T f + 2 T f = 4194304 + 16777216         = 20971520
 *   the fp32 logits kept as the softmax 4 x 1024 x 32000       = 131072000
 *   the loss 4 x 1024                                         =      4096
 * together 194093056 bytes allocated by the forward item beyond what the
 * stage held before it, each of its 17 tensors (6 + 6 + 4 kept of the
 * layers, the logits, the loss) rounded up to the allocator's 512-byte
 * blocks (17 x 512 = 8704 bytes), and a large cached block handed out
 * whole when less than 1 MiB would remain after a split (PyTorch's
 * caching allocator, alloc.h): within 8704 + 1048576 bytes above; its
 * transients (the conv output, the fp32 chunk states) come and go inside
 * it. */
static void test_replay_tiny_stage(void) {
  g_test_summary("a tiny hybrid stage's forward in the allocator replay, hand-derived");
  PtsimJob job;
  g_autoptr(GError) error = NULL;
  memset(&job, 0, sizeof job);
  gboolean ok = ptsim_megatron_args_parse(
      "pretrain_hybrid.py --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 "
      "--max-position-embeddings 1024 --micro-batch-size 1 --global-batch-size 1 "
      "--padded-vocab-size 32000 --bf16 --hybrid-layer-pattern 'M*-'",
      &job, NULL, &error);
  g_assert_no_error(error);
  g_assert_true(ok);
  job.layout.gpus = 1;
  g_assert_true(ptsim_hardware_load("h100-80g", &job.hw, &error));
  job.source.hidden_dropout = 0.0;
  job.source.attention_dropout = 0.0;
  g_assert_true(ptsim_job_validate(&job, &error));
  g_assert_no_error(error);
  g_autofree PtsimPlan *plan = plan_of(&job);
  g_assert_cmpint(plan->num_microbatches, ==, 1);
  int32_t n = plan->schedule_items;
  g_autofree PtsimScheduleItem *items = g_new(PtsimScheduleItem, n);
  ptsim_schedule_build(job.layout.schedule, 1, 1, 1, (int32_t)plan->microbatch_group, 0, items, n);
  int64_t bytes = ptsim_lifetimes_scratch_bytes(plan, 0);
  g_autofree void *scratch = g_malloc(bytes);
  PtsimAllocTimeline tl = {NULL, ptsim_lifetimes_timeline_samples(n, 2), 0};
  g_autofree PtsimAllocSample *samples = g_new(PtsimAllocSample, tl.capacity);
  tl.samples = samples;
  g_autofree PtsimStageAlloc *out = g_new0(PtsimStageAlloc, 1);
  g_assert_cmpint(n, ==, 2); /* forward, backward */
  g_assert_cmpint(ptsim_lifetimes_replay(plan, 0, items, n, 2, NULL, 1, scratch, bytes, &tl, out),
                  ==, 0);
  g_assert_true(out->fits);
  g_assert_cmpint(tl.count, ==, 7);
  /* samples: at start, after the forward, after the backward, after the
   * optimizer step; then step 1's forward, backward, optimizer step */
  double kept = samples[1].allocated_bytes - samples[0].allocated_bytes;
  g_assert_cmpfloat(kept, >=, 194093056.0);
  g_assert_cmpfloat(kept, <=, 194093056.0 + 8704.0 + 1048576.0);
  g_assert_cmpfloat(samples[4].allocated_bytes - samples[3].allocated_bytes, ==, kept);
  /* the backward frees what the forward kept */
  g_assert_cmpfloat(samples[2].allocated_bytes, ==, samples[0].allocated_bytes);
  /* the peak: the forward's kept set on top of the steady state's states,
   * plus the largest transient of the step at least */
  g_assert_cmpfloat(out->steady_state.allocated_peak_bytes, >=, samples[3].allocated_bytes + kept);
}

/* Unfused attention (--attention-backend unfused) in an attention
 * sub-layer keeps its s x s softmax output as a transformer layer's does:
 * the tiny model above (16 heads, seq 1024, mbs 1, tp 1), attention
 * dropout 0, Transformer Engine's fused softmax (16 < s < 16384, s % 8 =
 * 0: a 16-bit output): 2 x 16 x 1024 x 1024 = 33554432 bytes beyond the
 * flash layer's 12582912 = 46137344. */
static void test_unfused_attention_layer(void) {
  g_test_summary("an attention sub-layer keeps unfused attention's s x s probabilities");
  PtsimJob job;
  g_autoptr(GError) error = NULL;
  memset(&job, 0, sizeof job);
  gboolean ok = ptsim_megatron_args_parse(
      "pretrain_hybrid.py --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 "
      "--max-position-embeddings 1024 --micro-batch-size 1 --global-batch-size 1 "
      "--padded-vocab-size 32000 --bf16 --hybrid-layer-pattern 'M*-' "
      "--attention-backend unfused --attention-dropout 0 --hidden-dropout 0",
      &job, NULL, &error);
  g_assert_no_error(error);
  g_assert_true(ok);
  job.layout.gpus = 1;
  g_assert_true(ptsim_hardware_load("h100-80g", &job.hw, &error));
  g_assert_true(ptsim_job_validate(&job, &error));
  g_assert_false(job.settings.flash_attention);
  g_autofree PtsimPlan *plan = plan_of(&job);
  g_assert_cmpfloat(ptsim_memory_hybrid_layer_bytes(plan, PTSIM_HYBRID_ATTENTION), ==, 46137344.0);
  /* the MLP and Mamba sub-layers keep no scores */
  g_assert_cmpfloat(ptsim_memory_hybrid_layer_bytes(plan, PTSIM_HYBRID_MLP), ==, 20971520.0);
}

/* `ptsim memory` builds and estimates a hybrid job (the same stage 0 as
 * above); `ptsim predict` simulates its step and replays its allocator. */
static void test_memory_command(void) {
  g_test_summary("a hybrid job's analytical estimate, step simulation and replay run");
  static const char *const flags[] = {"--model",
                                      "nemotron-h-8b",
                                      "--hw",
                                      "h100-80g",
                                      "--gpus",
                                      "8",
                                      "--tp",
                                      "2",
                                      "--pp",
                                      "2",
                                      "--mbs",
                                      "1",
                                      "--gbs",
                                      "16",
                                      "--seq",
                                      "8192",
                                      "--decoder-first-pipeline-num-layers",
                                      "10",
                                      NULL};
  PtsimJob job;
  PtsimPredictOptions o;
  PtsimPrediction p;
  g_autoptr(GError) error = NULL;
  gboolean ok = ptsim_job_build_from_flags(flags, &job, NULL, &error);
  g_assert_no_error(error);
  g_assert_true(ok);
  job.source.hidden_dropout = 0.0;
  job.source.attention_dropout = 0.0;
  ptsim_predict_options_init(&o);
  ok = ptsim_prediction_run(&job, &o, FALSE, &p, &error);
  g_assert_no_error(error);
  g_assert_true(ok);
  g_assert_cmpfloat(p.memory->stages[0].activations_bytes, ==, 7863861248.0);
  ptsim_prediction_clear(&p);
  ok = ptsim_prediction_run(&job, &o, TRUE, &p, &error);
  g_assert_no_error(error);
  g_assert_true(ok && p.time && p.allocator);
  g_assert_cmpfloat(p.step->step_s, >, 0.0);
  /* the replay holds at least the estimate's activations on stage 0 */
  g_assert_cmpfloat(p.alloc->stages[0].steady_state.allocated_peak_bytes, >=,
                    p.memory->stages[0].activations_bytes);
  ptsim_prediction_clear(&p);
  ptsim_predict_options_clear(&o);
}

/* Megatron-LM's flags for Nemotron-H-8B (Megatron-Bridge's
 * NemotronHModel8BProvider as a command line) give the model file's
 * fields: the pattern, its 52 layers, the Mamba sizes, the same total. */
#define NEMOTRON_H_8B                                                                          \
  "torchrun --nproc_per_node 8 pretrain_mamba.py --is-hybrid-model "                           \
  "--hybrid-override-pattern M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M- "            \
  "--hidden-size 4096 --ffn-hidden-size 21504 --num-attention-heads 32 "                       \
  "--group-query-attention --num-query-groups 8 --kv-channels 128 --mamba-num-heads 128 "      \
  "--mamba-head-dim 64 --mamba-num-groups 8 --mamba-state-dim 128 --padded-vocab-size 131072 " \
  "--untie-embeddings-and-output-weights --normalization RMSNorm --disable-bias-linear "       \
  "--position-embedding-type none --seq-length 8192 --max-position-embeddings 8192 "           \
  "--micro-batch-size 1 --global-batch-size 64 --tensor-model-parallel-size 2 --bf16 "

static void test_flag_parity(void) {
  g_test_summary("--hybrid-override-pattern and --mamba-* give the model file's hybrid model");
  PtsimModel file;
  PtsimJob job;
  double from_file = 0.0, from_flags = 0.0;
  g_autoptr(GError) error = NULL;
  load(&file);
  memset(&job, 0, sizeof job);
  gboolean ok = ptsim_megatron_args_parse(NEMOTRON_H_8B, &job, NULL, &error);
  g_assert_no_error(error);
  g_assert_true(ok);
  g_assert_cmpint(job.model.num_layers, ==, 52); /* from the pattern: no --num-layers */
  g_assert_cmpstr(job.model.hybrid_pattern, ==, file.hybrid_pattern);
  g_assert_cmpint(job.model.mamba_num_heads, ==, file.mamba_num_heads);
  g_assert_cmpint(job.model.mamba_head_dim, ==, file.mamba_head_dim);
  g_assert_cmpint(job.model.mamba_num_groups, ==, file.mamba_num_groups);
  g_assert_cmpint(job.model.mamba_state_dim, ==, file.mamba_state_dim);
  ptsim_plan_model_parameters(&file, 8192, &from_file, NULL);
  ptsim_plan_model_parameters(&job.model, 8192, &from_flags, NULL);
  g_assert_cmpfloat(from_flags, ==, from_file);
  /* --hybrid-layer-pattern is the same flag; its '|' segments are the
   * pipeline split: 4 equal segments over pp 2 are 2 virtual stages each
   * (as Megatron derives them); unequal ones are refused by name */
#define SMALL_HYBRID                                                                  \
  "pretrain_hybrid.py --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 " \
  "--max-position-embeddings 1024 --micro-batch-size 1 --global-batch-size 8 "        \
  "--vocab-size 32000 --pipeline-model-parallel-size 2 --bf16 "
  memset(&job, 0, sizeof job);
  ok = ptsim_megatron_args_parse(SMALL_HYBRID "--hybrid-layer-pattern 'M-|M*|M-|M-'", &job, NULL,
                                 &error);
  g_assert_no_error(error);
  g_assert_true(ok);
  g_assert_cmpint(job.model.num_layers, ==, 8);
  g_assert_cmpstr(job.model.hybrid_pattern, ==, "M-M*M-M-");
  g_assert_cmpint(job.layout.vp, ==, 2);
  memset(&job, 0, sizeof job);
  g_assert_false(ptsim_megatron_args_parse(SMALL_HYBRID "--hybrid-layer-pattern 'M-M-|M-'", &job,
                                           NULL, &error));
  if (!strstr(error->message, "pipeline segments of 4 and 2 layers")) g_error("%s", error->message);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/mamba/layer-parameters", test_layer_parameters);
  g_test_add_func("/mamba/model-total", test_model_total);
  g_test_add_func("/mamba/forward-flops", test_forward_flops);
  g_test_add_func("/mamba/saved-bytes", test_saved_bytes);
  g_test_add_func("/mamba/pattern-parse", test_pattern_parse);
  g_test_add_func("/mamba/model-keys", test_model_keys);
  g_test_add_func("/mamba/job-refused", test_job_refused);
  g_test_add_func("/mamba/flag-parity", test_flag_parity);
  g_test_add_func("/mamba/stage-split", test_stage_split);
  g_test_add_func("/mamba/stage-activations", test_stage_activations);
  g_test_add_func("/mamba/workload-layers", test_workload_layers);
  g_test_add_func("/mamba/replay-tiny-stage", test_replay_tiny_stage);
  g_test_add_func("/mamba/unfused-attention-layer", test_unfused_attention_layer);
  g_test_add_func("/mamba/memory-command", test_memory_command);
  return g_test_run();
}
