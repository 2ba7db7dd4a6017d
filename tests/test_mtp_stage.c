/* test_mtp_stage.c — the multi-token-prediction layers on a virtual stage
 * of their own (a --pipeline-model-parallel-layout "...m|L", Megatron-LM's
 * standalone MTP stage; job.h mtp_apart): what the plan puts on that stage
 * and on the loss's, the workload of each, the memory estimate, and the
 * allocator replay, on a small model derived by hand. */
#include <math.h>
#include <string.h>

#include <glib.h>

#include "config.h"
#include "job_build.h"
#include "job_validate.h"
#include "pipeline_layout.h"
#include "plan_of.h"

/* 8 layers, h 1024, 16 heads, ffn 4096 (SwiGLU), RMSNorm, no biases,
 * GPT-2's vocabulary (pretrain_gpt.py's default tokenizer: 50257, padded
 * to a multiple of 128 x tp = 256: 50432), untied, one
 * MTP layer, tp 2 x pp 4 on one 8 x H100 node (dp 1). */
#define SMALL                                                                                           \
  "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 8 --hidden-size 1024 "                      \
  "--num-attention-heads 16 --ffn-hidden-size 4096 --seq-length 4096 "                                  \
  "--max-position-embeddings 4096 --micro-batch-size 1 --global-batch-size 16 "                         \
  "--tensor-model-parallel-size 2 --pipeline-model-parallel-size 4 --sequence-parallel "                \
  "--use-distributed-optimizer --bf16 --swiglu --normalization RMSNorm --position-embedding-type rope " \
  "--disable-bias-linear --untie-embeddings-and-output-weights --attention-dropout 0 "                  \
  "--hidden-dropout 0 --mtp-num-layers 1 "

static void resolve(const char *megatron, const char *native_layout, PtsimJob *job) {
  PtsimJobOptions o;
  ptsim_job_options_init(&o);
  o.megatron_args = g_strdup(megatron);
  o.hw = g_strdup("h100-80g");
  if (native_layout) o.pipeline_layout = g_strdup(native_layout);
  g_autoptr(GError) error = NULL;
  gboolean ok = ptsim_job_build(&o, job, NULL, &error);
  if (!ok) g_error("'%s': %s", megatron, error->message);
  ptsim_job_options_clear(&o);
}

static void refused(const char *megatron, const char *says) {
  PtsimJobOptions o;
  PtsimJob job;
  ptsim_job_options_init(&o);
  o.megatron_args = g_strdup(megatron);
  o.hw = g_strdup("h100-80g");
  g_autoptr(GError) error = NULL;
  g_assert_false(ptsim_job_build(&o, &job, NULL, &error));
  if (!strstr(error->message, says)) g_error("'%s' lacks '%s'", error->message, says);
  ptsim_job_options_clear(&o);
}

/* One transformer layer on one TP rank (h 1024, ffn 4096, SwiGLU, no
 * biases, RMSNorm): q, k, v 3h^2 + the projection h^2 + fc1 2 h ffn + fc2
 * ffn h = 3145728 + 1048576 + 8388608 + 4194304 = 16777216, over tp 2:
 * 8388608, + the two norms 2h = 2048: 8390656.  The MTP block (plan.c
 * plan_mtp_parameters; multi_token_prediction.py: enorm, hnorm, eh_proj
 * 2h -> h column-parallel, the layer, its final norm): 8390656 + 3h
 * (3072) + 2h^2 / tp (1048576) = 9442304.  The word embedding's copy its
 * virtual stage builds (gpt_model.py: pre_process or mtp_process): h v /
 * tp = 1024 x 50432 / 2 = 25821184. */
#define LAYER 8390656.0
#define MTP_BLOCK 9442304.0
#define EMBEDDING 25821184.0

static void test_parameters(void) {
  g_test_summary("\"Et*4|t*4|m|L\": the MTP stage holds the MTP block and a copy of the word "
                 "embedding, the loss's the final norm and the output layer (bytes by hand)");
  PtsimJob job;
  resolve(SMALL "--pipeline-model-parallel-layout 'Et*4|t*4|m|L'", NULL, &job);
  g_assert_cmpint(job.layout.mtp_apart, ==, 1);
  g_autofree PtsimPlan *plan = plan_of(&job);
  g_assert_cmpint(plan->mtp_stage, ==, 2);
  g_assert_cmpint(plan->mtp_chunk, ==, 0);
  g_assert_cmpfloat(plan->layer_parameters, ==, LAYER);
  g_assert_cmpint(plan->stage_layers[2], ==, 0);
  g_assert_cmpint(plan->stage_layers[3], ==, 0);
  /* stage 2: 9442304 + 25821184 = 35263488 parameters */
  g_assert_cmpfloat(plan->stage_parameters[2], ==, MTP_BLOCK + EMBEDDING);
  /* stage 3: the final norm h (ptsim keeps it with the loss; Megatron moves
   * it to the last decoder layer's stage with MTP: transformer_block.py
   * has_final_layernorm_in_this_stage) + the output layer h v / tp */
  g_assert_cmpfloat(plan->stage_parameters[3], ==, 1024.0 + EMBEDDING);
  /* stage 1: its four layers alone; stage 0 theirs and the embedding */
  g_assert_cmpfloat(plan->stage_parameters[1], ==, 4.0 * LAYER);
  g_assert_cmpfloat(plan->stage_parameters[0], ==, 4.0 * LAYER + EMBEDDING);
  /* bytes: bf16 weights 2 B, fp32 main grads 4 B each (dp 1: unsharded) */
  PtsimMemoryEstimate m;
  ptsim_memory_estimate(plan, PTSIM_CE_LAST_STAGE, &m);
  g_assert_cmpfloat(m.stages[2].parameters_bytes, ==, 2.0 * 35263488.0);
  g_assert_cmpfloat(m.stages[2].gradients_bytes, ==, 4.0 * 35263488.0);
  /* "Et*8m|L" on pp 2: the MTP layers share the embedding's virtual stage,
   * which needs no copy (pre_process builds the one embedding) */
  g_autofree char *two = g_strconcat(SMALL,
                                     "--pipeline-model-parallel-size 2 "
                                     "--pipeline-model-parallel-layout 'Et*8m|L'",
                                     NULL);
  resolve(two, NULL, &job);
  g_autofree PtsimPlan *p2 = plan_of(&job);
  g_assert_cmpint(p2->mtp_stage, ==, 0);
  g_assert_cmpfloat(p2->stage_parameters[0], ==, 8.0 * LAYER + EMBEDDING + MTP_BLOCK);
  g_assert_cmpfloat(p2->stage_parameters[1], ==, 1024.0 + EMBEDDING);
}

static void test_positions(void) {
  g_test_summary("with learned absolute positions the MTP stage's embedding has its own "
                 "position table (LanguageModelEmbedding), replicated over TP");
  PtsimJob job;
  resolve(SMALL "--position-embedding-type learned_absolute "
                "--pipeline-model-parallel-layout 'Et*4|t*4|m|L'",
          NULL, &job);
  g_autofree PtsimPlan *plan = plan_of(&job);
  /* 35263488 + max_position_embeddings x h = 4096 x 1024 = 4194304 */
  g_assert_cmpfloat(plan->stage_parameters[2], ==, MTP_BLOCK + EMBEDDING + 4194304.0);
  g_assert_cmpfloat(plan->stage_parameters[0], ==, 4.0 * LAYER + EMBEDDING + 4194304.0);
}

static void test_parity(void) {
  g_test_summary("the layout through --megatron-args and through ptsim's own flag: one job");
  PtsimJob a, b;
  resolve(SMALL "--pipeline-model-parallel-layout 'Et*4|t*4|m|L'", NULL, &a);
  resolve(SMALL, "Et*4|t*4|m|L", &b);
  g_assert_true(memcmp(&a, &b, sizeof a) == 0);
}

static void test_refused(void) {
  g_test_summary("what is not modelled is refused, naming the flag");
  /* empty virtual stages between the MTP layers and the loss (Megatron
   * accepts it: 'm' on rank 1's last virtual stage) */
  refused(SMALL "--pipeline-model-parallel-layout 'Et*4|t*4m||L'", "empty virtual stages");
  /* not on its rank's last virtual stage (Megatron refuses it too) */
  refused(SMALL "--pipeline-model-parallel-size 2 "
                "--pipeline-model-parallel-layout 'Et*4|t*4m||L'",
          "not the last of its pipeline rank");
  /* apart with ZeRO-2/3: their units hold the MTP layers with the output
   * layer */
  PtsimJob job;
  g_autoptr(GError) error = NULL;
  resolve(SMALL "--pipeline-model-parallel-layout 'Et*4|t*4|m|L'", NULL, &job);
  job.layout.sharding = PTSIM_SHARDING_GRADS;
  g_assert_false(ptsim_job_validate(&job, &error));
  g_assert_nonnull(strstr(error->message, "the MTP layers on a virtual stage of their own ('m|L') "
                                          "need no ZeRO-2/3 sharding"));
}

static void test_time(void) {
  g_test_summary("\"Et*4|t*4|m|L\": the MTP stage runs the MTP layer, the loss's stage the "
                 "output heads of both; with a 256k vocabulary the loss's is the slowest");
  PtsimJob job;
  g_autofree char *big = g_strconcat(SMALL,
                                     "--padded-vocab-size 262144 "
                                     "--pipeline-model-parallel-layout 'Et*4|t*4|m|L'",
                                     NULL);
  resolve(big, NULL, &job);
  g_autofree PtsimPlan *plan = plan_of(&job);
  PtsimWorkload w;
  PtsimWork chunk[4];
  ptsim_workload_build(plan, NULL, &w);
  for (int s = 0; s < 4; s++) ptsim_workload_chunk(&w, s, 0, &chunk[s]);
  /* stage 2: the MTP layer's body alone (no head: process_mtp_loss runs
   * on the loss's stage); stage 3: the main head and the MTP's */
  g_assert_cmpfloat(chunk[2].forward_s, ==, w.mtp_body.forward_s);
  g_assert_cmpfloat(fabs(chunk[3].forward_s - 2.0 * w.head.forward_s), <=,
                    1e-12 * chunk[3].forward_s);
  /* nothing lost or counted twice: body + heads is the MTP work with the
   * loss, but for the link between them, which carries the decoder's
   * hidden states and the MTP layer's (2 activations, one more than a
   * link's pp_transfer_s: forward there, the gradients back) */
  g_assert_cmpfloat(fabs(w.mtp_body.flops + w.mtp_heads.flops - w.mtp.flops), <=,
                    1e-9 * w.mtp.flops);
  g_assert_cmpfloat(w.pp_transfer_s, >, 0.0);
  g_assert_cmpfloat(fabs(w.mtp_body.forward_s + w.mtp_heads.forward_s - w.pp_transfer_s -
                         w.mtp.forward_s),
                    <=, 1e-9 * w.mtp.forward_s);
  g_assert_cmpfloat(chunk[2].forward_comm_s[PTSIM_COMM_PP], ==, w.pp_transfer_s);
  g_assert_cmpfloat(chunk[3].backward_comm_s[PTSIM_COMM_PP], ==, w.pp_transfer_s);
  /* FLOPs per token forward: a layer 2 x 16.8M + attention ~ 42M, four
   * of them ~ 0.17G; a head 2 h v = 2 x 1024 x 262144 = 0.54G, two of
   * them 1.07G: the loss's stage bounds the pipeline */
  for (int s = 0; s < 3; s++) g_assert_cmpfloat(chunk[s].forward_s, <, chunk[3].forward_s);
  g_autofree PtsimTimeResult *t = g_new0(PtsimTimeResult, 1);
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_simulate(plan, NULL, t, &error));
  g_assert_cmpfloat(t->step_s, >, 0.0);
}

static void test_memory(void) {
  g_test_summary("the MTP layer's activations on its own stage, its logits on the loss's; the "
                 "allocator replay holds them there too");
  PtsimJob job;
  resolve(SMALL "--pipeline-model-parallel-layout 'Et*4|t*4|m|L'", NULL, &job);
  g_autofree PtsimPlan *plan = plan_of(&job);
  PtsimMemoryEstimate m;
  ptsim_memory_estimate(plan, PTSIM_CE_LAST_STAGE, &m);
  /* 1F1B, stage 2 of 4: p - s = 2 microbatches in flight; each the MTP
   * layer's saved set plus its inputs, 8 s b h / tp = 8 x 4096 x 1024 / 2
   * = 16777216 B (sequence parallel) */
  double layer = ptsim_memory_layer_activation_bytes(plan, 1);
  g_assert_cmpfloat(plan->inflight_microbatches[2], ==, 2.0);
  g_assert_cmpfloat(m.stages[2].activations_bytes, ==, 2.0 * (layer + 16777216.0));
  g_assert_cmpfloat(m.stages[3].activations_bytes, ==, 0.0);
  /* the loss's stage: fp32 logits 4 s b (h + v) / tp, + the 16-bit ones
   * 2 s b v / tp, for the main head and the MTP's: x 2 */
  g_assert_cmpfloat(m.stages[3].logits_bytes, ==,
                    2.0 * (4.0 * 4096.0 * (1024.0 + 50432.0) / 2.0 + 2.0 * 4096.0 * 50432.0 / 2.0));
  g_assert_cmpfloat(m.stages[2].logits_bytes, ==, 0.0);
  /* the replay: stage 2 holds its two microbatches' MTP tensors at its
   * peak, beyond its weights and gradients */
  g_autofree PtsimAllocResult *a = g_new0(PtsimAllocResult, 1);
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_simulate_allocator(plan, 2, NULL, NULL, 1.0, NULL, a, &error));
  g_assert_true(a->stages[2].fits);
  double states = m.stages[2].parameters_bytes + m.stages[2].gradients_bytes;
  g_assert_cmpfloat(a->stages[2].first_step.allocated_peak_bytes - states, >=,
                    2.0 * 4.0 * 4096.0 * 1024.0 / 2.0 * 2.0); /* two mtp_inputs at least */
}

static void test_format(void) {
  g_test_summary("the sweep's string of a split with the MTP stage apart reads back the same");
  PtsimLayout l;
  memset(&l, 0, sizeof l);
  l.pp = 4;
  l.vp = 1;
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_pipeline_layout_apply("Et*4|t*4|m|L", 8, 1, &l, &error));
  g_autofree char *s = ptsim_pipeline_layout_format(&l, 8, 1);
  g_assert_cmpstr(s, ==, "Et*4|t*4|m|L");
  g_assert_true(ptsim_pipeline_layout_apply("Et*3|t*3|t*2m|L", 8, 1, &l, &error));
  g_autofree char *t = ptsim_pipeline_layout_format(&l, 8, 1);
  g_assert_cmpstr(t, ==, "Et*3|t*3|t*2m|L");
  l.pp = 2;
  g_assert_true(ptsim_pipeline_layout_apply("Et*8m|L", 8, 1, &l, &error));
  g_autofree char *u = ptsim_pipeline_layout_format(&l, 8, 1);
  g_assert_cmpstr(u, ==, "Et*8m|L");
  /* Megatron's docstring example (pipeline_parallel_layer_layout.py
   * parse_str_to_list): pp 16 x vp 2, 61 layers */
  l.pp = 16;
  g_assert_true(ptsim_pipeline_layout_apply("Ettt|(tt|)*29,m|L", 61, 1, &l, &error));
  g_assert_cmpint(l.vp, ==, 2);
  g_assert_cmpint(l.mtp_apart, ==, 1);
  g_autofree char *v = ptsim_pipeline_layout_format(&l, 61, 1);
  g_assert_cmpstr(v, ==, "Et*3|(t*2|)*29m|L");
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/mtp-stage/parameters", test_parameters);
  g_test_add_func("/mtp-stage/positions", test_positions);
  g_test_add_func("/mtp-stage/parity", test_parity);
  g_test_add_func("/mtp-stage/refused", test_refused);
  g_test_add_func("/mtp-stage/time", test_time);
  g_test_add_func("/mtp-stage/memory", test_memory);
  g_test_add_func("/mtp-stage/format", test_format);
  return g_test_run();
}
