/* test_megatron_args.c — sim/io/megatron_args.c: a realistic Llama-3-8B launch
 * line gives the llama3-8b model and its layout, Megatron-LM's defaults fill
 * what is absent, unknown flags come back in IGNORED, --flag=value and the
 * file form work, and every malformed line is one error naming the flag. */
#include <string.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "config.h"
#include "job_validate.h"
#include "megatron_args.h"
#include "megatron_flags.h"
#include "plan_of.h"

#define LLAMA3_8B_ARGS                                                         \
  "torchrun --nproc_per_node 8 --nnodes 1 pretrain_gpt.py "                    \
  "--num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336 "                \
  "--num-attention-heads 32 --group-query-attention --num-query-groups 8 "     \
  "--seq-length 8192 --max-position-embeddings 8192 "                          \
  "--micro-batch-size 1 --global-batch-size 128 "                              \
  "--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 "           \
  "--context-parallel-size 1 --sequence-parallel --use-distributed-optimizer " \
  "--swiglu --untie-embeddings-and-output-weights --normalization RMSNorm "    \
  "--disable-bias-linear --position-embedding-type rope "                      \
  "--rotary-base 500000 --vocab-size 128256 --bf16 --use-flash-attn "          \
  "--attention-dropout 0.0 --hidden-dropout 0.0 "                              \
  "--recompute-granularity full --recompute-method uniform "                   \
  "--recompute-num-layers 1 --lr 3e-4 --min-lr 3e-5 "                          \
  "--data-path '/data/my corpus_text_document' "                               \
  "--tokenizer-type HuggingFaceTokenizer"

/* ---- helpers ---- */

typedef PtsimMegatronDiagnostics Diag;

static gboolean has_entry(GPtrArray *list, const char *text) {
  for (guint k = 0; k < list->len; k++)
    if (strcmp(list->pdata[k], text) == 0) return TRUE;
  return FALSE;
}

static gboolean has_note(const Diag *d, const char *needle) {
  for (guint k = 0; k < d->notes->len; k++)
    if (strstr(d->notes->pdata[k], needle) != NULL) return TRUE;
  return FALSE;
}

static void diag_reset(Diag *d) {
  g_ptr_array_set_size(d->unmodelled, 0);
  g_ptr_array_set_size(d->unknown, 0);
  g_ptr_array_set_size(d->notes, 0);
}

static void parse_ok(const char *line, PtsimJob *job, Diag *d) {
  g_autoptr(GError) error = NULL;
  memset(job, 0, sizeof *job);
  if (d) diag_reset(d);
  g_assert_true(ptsim_megatron_args_parse(line, job, d, &error));
  g_assert_no_error(error);
}

static void parse_fails(const char *line, const char *needle) {
  g_autoptr(GError) error = NULL;
  PtsimJob job;
  memset(&job, 0, sizeof job);
  g_assert_false(ptsim_megatron_args_parse(line, &job, NULL, &error));
  g_assert_nonnull(error);
  g_test_message("%s", error->message);
  g_assert_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE);
  g_assert_null(strchr(error->message, '\n'));
  if (strstr(error->message, needle) == NULL) g_assert_cmpstr(error->message, ==, needle);
  g_assert_nonnull(strstr(error->message, needle));
}

/* Megatron-LM without --bf16 / --fp16 trains in fp32, which ptsim refuses. */
#define MINIMAL_FP32                                             \
  "--num-layers 24 --hidden-size 2048 --num-attention-heads 16 " \
  "--vocab-size 50257 --seq-length 2048 "
#define MINIMAL MINIMAL_FP32 "--bf16 "

/* ---- tests ---- */

static void check_llama3_8b(const PtsimJob *job) {
  const PtsimModel *m = &job->model;
  const PtsimLayout *l = &job->layout;
  const PtsimSettings *run = &job->settings;
  const PtsimProvenance *src = &job->source;
  PtsimModel shipped;
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_model_load("llama3-8b", &shipped, &error));
  g_assert_no_error(error);
  g_assert_cmpstr(m->name, ==, "megatron-args");
  g_assert_cmpint(m->num_layers, ==, shipped.num_layers);
  g_assert_cmpint(m->hidden_size, ==, shipped.hidden_size);
  g_assert_cmpint(m->ffn_hidden_size, ==, shipped.ffn_hidden_size);
  g_assert_cmpint(m->num_attention_heads, ==, shipped.num_attention_heads);
  g_assert_cmpint(m->num_query_groups, ==, shipped.num_query_groups);
  /* 128256 is a multiple of 128 * tp(2) already */
  g_assert_cmpint(m->vocab_size, ==, shipped.vocab_size);
  g_assert_cmpint(m->activation, ==, shipped.activation);
  g_assert_cmpint(m->norm, ==, shipped.norm);
  g_assert_cmpint(m->tied_embeddings, ==, shipped.tied_embeddings);
  g_assert_cmpint(m->bias, ==, shipped.bias);

  g_assert_cmpint(l->gpus, ==, 8); /* torchrun --nproc_per_node 8 --nnodes 1 */
  g_assert_cmpint(l->tp, ==, 2);
  g_assert_cmpint(l->pp, ==, 2);
  g_assert_cmpint(l->cp, ==, 1);
  g_assert_cmpint(l->dp, ==, 0);
  g_assert_cmpint(l->vp, ==, 1);
  g_assert_cmpint(l->mbs, ==, 1);
  g_assert_cmpint(l->gbs, ==, 128);
  g_assert_cmpint(l->seq, ==, 8192);
  g_assert_cmpint(l->sp, ==, 1);
  g_assert_cmpint(l->distributed_optimizer, ==, 1);
  g_assert_cmpint(run->fp32_grad_accumulation, ==, 1);
  g_assert_cmpint(run->flash_attention, ==, 1);
  g_assert_cmpint(run->recompute, ==, PTSIM_RECOMPUTE_FULL);
  g_assert_cmpint(run->recompute_method, ==, PTSIM_RECOMPUTE_METHOD_UNIFORM);
  g_assert_cmpint(run->recompute_num_layers, ==, 1);
  g_assert_cmpint(run->precision, ==, PTSIM_PRECISION_BF16);
  g_assert_cmpint(l->schedule, ==, PTSIM_SCHEDULE_1F1B);
  g_assert_cmpfloat(src->attention_dropout, ==, 0.0);
  g_assert_cmpfloat(src->hidden_dropout, ==, 0.0);
  g_assert_cmpfloat(run->memory_threshold, ==, 0.8);
  g_assert_cmpint(l->first_stage_layers, ==, 0);
  g_assert_cmpint(l->last_stage_layers, ==, 0);
}

static void check_llama3_8b_diag(const Diag *d) {
  /* --lr, --data-path, --rotary-base: Megatron-LM flags without an effect
   * on time or memory, accepted silently; the rest is read */
  g_assert_cmpuint(d->unmodelled->len, ==, 0);
  g_assert_cmpuint(d->unknown->len, ==, 0);
  g_assert_cmpuint(d->notes->len, ==, 0);
  g_assert_cmpstr(d->gpus_from, ==, "torchrun --nproc_per_node 8 --nnodes 1");
}

static void test_llama3_8b(void) {
  g_test_summary("a realistic Llama-3-8B launch: every field, then validate");
  g_autoptr(PtsimMegatronDiagnostics) d = ptsim_megatron_diagnostics_new();
  PtsimJob job;
  memset(&job, 0, sizeof job);
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_megatron_args_parse(LLAMA3_8B_ARGS, &job, d, &error));
  g_assert_no_error(error);
  check_llama3_8b(&job);
  check_llama3_8b_diag(d);

  g_assert_true(ptsim_hardware_load("h100-80g", &job.hw, &error));
  g_assert_true(ptsim_job_validate(&job, &error));
  g_assert_no_error(error);
  g_assert_cmpint(job.layout.dp, ==, 2);
  g_assert_cmpint(stage_layers_of(&job, 0), ==, 16);
  g_assert_cmpint(stage_layers_of(&job, 1), ==, 16);
}

static void test_file(void) {
  g_test_summary("file form: arrays, torchrun prefix, backslash continuations, #");
  g_autofree char *path = g_test_build_filename(G_TEST_DIST, "data", "megatron_llama3_8b.sh", NULL);
  g_autoptr(PtsimMegatronDiagnostics) d = ptsim_megatron_diagnostics_new();
  PtsimJob job;
  memset(&job, 0, sizeof job);
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_megatron_args_parse_file(path, &job, d, &error));
  g_assert_no_error(error);
  check_llama3_8b(&job);
  check_llama3_8b_diag(d);

  g_assert_false(ptsim_megatron_args_parse_file("/no/such/args.sh", &job, NULL, &error));
  g_assert_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_NOT_FOUND);
  g_assert_nonnull(strstr(error->message, "/no/such/args.sh"));
  g_clear_error(&error);

  /* errors inside a file name the file */
  g_autofree char *bad = NULL;
  int fd = g_file_open_tmp("ptsim-args-XXXXXX.sh", &bad, &error);
  g_assert_no_error(error);
  close(fd);
  g_assert_true(g_file_set_contents(bad, "pretrain_gpt.py \\\n --num-layers x\n", -1, &error));
  g_assert_false(ptsim_megatron_args_parse_file(bad, &job, NULL, &error));
  g_assert_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE);
  g_assert_true(g_str_has_prefix(error->message, bad));
  g_assert_nonnull(strstr(error->message, "--num-layers 'x'"));
  g_clear_error(&error);
  /* a comment line inside a continued command ends it, as in bash */
  g_assert_true(g_file_set_contents(bad,
                                    "torchrun --nproc_per_node 8 pretrain_gpt.py \\\n"
                                    "  --num-layers 2 \\\n  # layout\n  --tp 2\n",
                                    -1, &error));
  g_assert_false(ptsim_megatron_args_parse_file(bad, &job, NULL, &error));
  g_assert_nonnull(strstr(error->message, ":4: a command starting with '--tp' follows"));
  g_unlink(bad);
}

static void test_defaults(void) {
  g_test_summary("Megatron-LM's defaults for every absent flag");
  g_autoptr(PtsimMegatronDiagnostics) d = ptsim_megatron_diagnostics_new();
  PtsimJob job;
  parse_ok(MINIMAL "--micro-batch-size 2 --global-batch-size 64", &job, d);
  g_assert_cmpint(job.model.ffn_hidden_size, ==, 4 * 2048);
  g_assert_cmpint(job.model.num_query_groups, ==, 16);
  g_assert_cmpint(job.model.vocab_size, ==, 50304); /* 50257 up to 128 * 1 */
  g_assert_cmpint(job.model.activation, ==, PTSIM_ACTIVATION_GELU);
  g_assert_cmpint(job.model.norm, ==, PTSIM_NORM_LAYERNORM);
  g_assert_cmpint(job.model.bias, ==, 1);
  g_assert_cmpint(job.model.tied_embeddings, ==, 1);
  g_assert_cmpint(job.model.position_embedding, ==, PTSIM_POSITION_LEARNED);
  g_assert_cmpint(job.model.kv_channels, ==, 0);
  g_assert_cmpint(job.layout.tp, ==, 1);
  g_assert_cmpint(job.layout.pp, ==, 1);
  g_assert_cmpint(job.layout.cp, ==, 1);
  g_assert_cmpint(job.layout.vp, ==, 1);
  g_assert_cmpint(job.layout.mbs, ==, 2);
  g_assert_cmpint(job.layout.gbs, ==, 64);
  g_assert_cmpint(job.layout.gpus, ==, 0); /* no launcher: unknown */
  g_assert_cmpint(job.layout.sp, ==, 0);
  g_assert_cmpint(job.layout.distributed_optimizer, ==, 0);
  g_assert_cmpint(job.settings.recompute, ==, PTSIM_RECOMPUTE_NONE);
  g_assert_cmpint(job.settings.recompute_modules, ==, PTSIM_RECOMPUTE_CORE_ATTN);
  g_assert_cmpint(job.settings.precision, ==, PTSIM_PRECISION_BF16);
  g_assert_cmpint(job.settings.fp32_grad_accumulation, ==, 1);
  g_assert_cmpfloat(job.source.attention_dropout, ==, 0.1);
  g_assert_cmpfloat(job.source.hidden_dropout, ==, 0.1);
  g_assert_cmpint(job.layout.schedule, ==, PTSIM_SCHEDULE_1F1B);
  /* Megatron-Core: TE layers with fused attention, no overlap, fusion on */
  g_assert_cmpint(job.settings.transformer_engine, ==, 1);
  g_assert_cmpint(job.settings.flash_attention, ==, 1);
  g_assert_cmpint(job.settings.overlap_grad_reduce + job.settings.overlap_param_gather +
                      job.settings.tp_comm_overlap,
                  ==, 0);
  g_assert_cmpint(job.settings.grad_accumulation_fusion, ==, 1);
  g_assert_cmpint(job.settings.cross_entropy_fusion, ==, 0);
  g_assert_cmpint(job.settings.main_params_bytes + job.settings.exp_avg_bytes +
                      job.settings.exp_avg_sq_bytes,
                  ==, 12);
  /* the position table is the note */
  g_assert_true(has_note(d, "no --max-position-embeddings"));
  g_assert_cmpuint(d->notes->len, ==, 1);

  /* no mbs, no gbs, no GPU count: notes, gbs left 0 */
  parse_ok(MINIMAL "--bf16 --max-position-embeddings 2048", &job, d);
  g_assert_cmpint(job.layout.mbs, ==, 1);
  g_assert_cmpint(job.layout.gbs, ==, 0);
  g_assert_true(has_note(d, "no --micro-batch-size"));
  g_assert_true(has_note(d, "needs the GPU count"));
  g_assert_cmpuint(d->notes->len, ==, 2);

  /* with the launcher's GPU count, gbs = mbs * dp */
  parse_ok("torchrun --nproc-per-node=16 x.py " MINIMAL
           "--bf16 --micro-batch-size 2 --tensor-model-parallel-size 2",
           &job, d);
  g_assert_cmpint(job.layout.gpus, ==, 16);
  g_assert_cmpint(job.layout.gbs, ==, 16);
  g_assert_true(has_note(d, "mbs*dp = 16"));

  /* no seq length: a note, validation will ask for it */
  parse_ok("--num-layers 2 --hidden-size 64 --num-attention-heads 4 "
           "--vocab-size 100 --bf16 --micro-batch-size 1",
           &job, d);
  g_assert_cmpint(job.layout.seq, ==, 0);
  g_assert_true(has_note(d, "no --seq-length"));
}

static void test_swiglu_ffn(void) {
  g_test_summary("--swiglu without --ffn-hidden-size: int(8h/3/64)*64");
  PtsimJob job;
  parse_ok("--num-layers 32 --hidden-size 4096 --num-attention-heads 32 "
           "--vocab-size 32000 --swiglu --bf16",
           &job, NULL);
  g_assert_cmpint(job.model.activation, ==, PTSIM_ACTIVATION_SWIGLU);
  g_assert_cmpint(job.model.ffn_hidden_size, ==, 10880);
}

static void test_vocab_padding(void) {
  g_test_summary("vocab padded to divisible-by * tp; padded size wins");
  PtsimJob job;
  parse_ok(MINIMAL "--tensor-model-parallel-size 8 --bf16", &job, NULL);
  g_assert_cmpint(job.model.vocab_size, ==, 51200);
  parse_ok(MINIMAL "--make-vocab-size-divisible-by 1 --bf16", &job, NULL);
  g_assert_cmpint(job.model.vocab_size, ==, 50257);
  parse_ok(MINIMAL "--make-vocab-size-divisible-by 64 --bf16", &job, NULL);
  g_assert_cmpint(job.model.vocab_size, ==, 50304);
  parse_ok(MINIMAL "--padded-vocab-size 50432 --bf16", &job, NULL);
  g_assert_cmpint(job.model.vocab_size, ==, 50432);
  parse_ok("--num-layers 2 --hidden-size 64 --num-attention-heads 4 "
           "--padded-vocab-size 1000 --bf16",
           &job, NULL);
  g_assert_cmpint(job.model.vocab_size, ==, 1000);
}

static void test_equals_form(void) {
  g_test_summary("--flag=value is the same as --flag value");
  PtsimJob a, b;
  parse_ok("--num-layers=24 --hidden-size=2048 --num-attention-heads=16 "
           "--vocab-size=50257 --seq-length=2048 --micro-batch-size=4 "
           "--global-batch-size=512 --tensor-model-parallel-size=2 "
           "--attention-dropout=0.05 --normalization=RMSNorm "
           "--recompute-granularity=selective --bf16",
           &a, NULL);
  parse_ok("--num-layers 24 --hidden-size 2048 --num-attention-heads 16 "
           "--vocab-size 50257 --seq-length 2048 --micro-batch-size 4 "
           "--global-batch-size 512 --tensor-model-parallel-size 2 "
           "--attention-dropout 0.05 --normalization RMSNorm "
           "--recompute-granularity selective --bf16",
           &b, NULL);
  g_assert_cmpmem(&a.model, sizeof a.model, &b.model, sizeof b.model);
  g_assert_cmpmem(&a.layout, sizeof a.layout, &b.layout, sizeof b.layout);
  g_assert_cmpmem(&a.settings, sizeof a.settings, &b.settings, sizeof b.settings);
  g_assert_cmpmem(&a.source, sizeof a.source, &b.source, sizeof b.source);
  g_assert_cmpint(a.layout.mbs, ==, 4);
  g_assert_cmpint(a.layout.tp, ==, 2);
  g_assert_cmpfloat(a.source.attention_dropout, ==, 0.05);
  g_assert_cmpint(a.model.norm, ==, PTSIM_NORM_RMSNORM);
  g_assert_cmpint(a.settings.recompute, ==, PTSIM_RECOMPUTE_SELECTIVE);
}

static void test_unknown_flags(void) {
  g_test_summary("flags are consumed by their arity: a launcher's options and stray words are "
                 "listed, unmodelled ones warned with their direction, neither fatal");
  g_autoptr(PtsimMegatronDiagnostics) d = ptsim_megatron_diagnostics_new();
  PtsimJob job;
  parse_ok(MINIMAL "--bf16 --rampup-batch-size 16 8 300000 --seed=1234 "
                   "--no-masked-softmax-fusion --master_port 6000 --adam-beta2 "
                   "0.95 --override-opt_param-scheduler stray --deterministic-mode",
           &job, d);
  /* --rampup-batch-size takes 3 values, --adam-beta2 one, and
   * --override-opt_param-scheduler is a switch: "stray" is left over;
   * torchrun's --master_port takes one */
  g_assert_true(has_entry(d->unknown, "--master_port 6000"));
  g_assert_true(has_entry(d->unknown, "stray"));
  g_assert_cmpuint(d->unknown->len, ==, 2);
  g_assert_true(has_entry(d->unmodelled, "--no-masked-softmax-fusion (slower with unfused "
                                         "attention: the softmax is not fused)"));
  g_assert_true(has_entry(d->unmodelled, "--deterministic-mode (slower: deterministic attention "
                                         "backward and index kernels; its filled outputs are "
                                         "modelled)"));
  g_assert_cmpuint(d->unmodelled->len, ==, 2);
  /* --no-masked-softmax-fusion is read for its memory (its time is the
   * warning) */
  g_assert_cmpint(job.settings.masked_softmax_unfused, ==, 1);
  /* --no-bias-swiglu-fusion: the SiLU output kept (its memory), noted */
  parse_ok(MINIMAL "--bf16 --swiglu", &job, d);
  g_assert_cmpint(job.settings.swiglu_unfused, ==, 0);
  parse_ok(MINIMAL "--bf16 --swiglu --no-bias-swiglu-fusion", &job, d);
  g_assert_cmpint(job.settings.swiglu_unfused, ==, 1);
  g_assert_true(has_note(d, "--no-bias-swiglu-fusion: its memory is modelled"));
  /* --timing-log-level: 0 is Megatron's default (no barriers), silent; 1
   * and 2 add synchronising timers, warned; 3 is not a choice */
  parse_ok(MINIMAL "--bf16 --timing-log-level 0", &job, d);
  g_assert_cmpuint(d->unmodelled->len, ==, 0);
  parse_ok(MINIMAL "--bf16 --timing-log-level=2", &job, d);
  g_assert_true(
      has_entry(d->unmodelled, "--timing-log-level 2 (slightly slower: its timers add barriers)"));
  g_assert_cmpuint(d->unmodelled->len, ==, 1);
  {
    g_autoptr(GError) error = NULL;
    g_assert_false(
        ptsim_megatron_args_parse(MINIMAL "--bf16 --timing-log-level 3", &job, d, &error));
    g_assert_nonnull(error);
    g_assert_nonnull(strstr(error->message, "--timing-log-level"));
  }
  /* a stray word after a read flag's value is handed back too */
  parse_ok(MINIMAL "--bf16 --micro-batch-size 2 extra", &job, d);
  g_assert_true(has_entry(d->unknown, "extra"));
  g_assert_cmpint(job.layout.mbs, ==, 2);
  /* a value flag before another flag takes no value (--data-path $EMPTY) */
  parse_ok(MINIMAL "--bf16 --data-path --micro-batch-size 3", &job, d);
  g_assert_cmpint(job.layout.mbs, ==, 3);
  /* no script named: the launcher's options among the flags still give the GPU count */
  parse_ok("torchrun --nproc_per_node 4 --nnodes=2 " MINIMAL "--bf16 --micro-batch-size 1", &job,
           d);
  g_assert_cmpint(job.layout.gpus, ==, 8);
  g_assert_true(has_entry(d->unknown, "--nproc_per_node 4"));
  /* NULL is allowed for the diagnostics */
  parse_ok(MINIMAL "--bf16 --lr 1e-4", &job, NULL);
}

static void test_refused(void) {
  g_test_summary("FSDP, latent MoE and other architectures: 'not modelled yet', unless the value "
                 "leaves the feature off; MoE flags are read");
  PtsimJob job;
  parse_fails(MINIMAL "--moe-latent-size 512",
              "--moe-latent-size 512: latent mixture-of-experts projections are not modelled yet");
  parse_fails(MINIMAL "--expert-tensor-parallel-num-weight-shards 2",
              "expert weight sharding is not modelled yet");
  parse_fails(MINIMAL "--expert-model-parallel-size 4",
              "--expert-model-parallel-size 4 needs --num-experts");
  parse_fails(MINIMAL "--use-megatron-fsdp --outer-dp-sharding-strategy optim",
              "--outer-dp-sharding-strategy optim: FSDP is not modelled yet (ptsim would predict "
              "a different model); only no_shard is accepted");
  parse_ok(MINIMAL "--bf16 --num-experts 0 --expert-model-parallel-size 1 "
                   "--outer-dp-sharding-strategy no_shard",
           &job, NULL);
}

static void test_sharding(void) {
  g_test_summary("Megatron-FSDP's strategies are ZeRO 0-3 (its CLI default optim_grads_params); "
                 "--use-torch-fsdp2 is ZeRO-3 with bf16 gradients, refused where Megatron-LM "
                 "asserts");
  g_autoptr(PtsimMegatronDiagnostics) d = ptsim_megatron_diagnostics_new();
  PtsimJob job;
  static const struct {
    const char *strategy;
    int distributed, sharding;
  } strategies[] = {{"", 1, PTSIM_SHARDING_PARAMS},
                    {"--data-parallel-sharding-strategy optim_grads_params", 1,
                     PTSIM_SHARDING_PARAMS},
                    {"--data-parallel-sharding-strategy optim_grads", 1, PTSIM_SHARDING_GRADS},
                    {"--data-parallel-sharding-strategy optim", 1, PTSIM_SHARDING_NONE},
                    {"--data-parallel-sharding-strategy no_shard", 0, PTSIM_SHARDING_NONE}};
  for (size_t i = 0; i < G_N_ELEMENTS(strategies); i++) {
    g_autofree char *line = g_strdup_printf(MINIMAL "--bf16 --use-megatron-fsdp %s",
                                            strategies[i].strategy);
    parse_ok(line, &job, NULL);
    g_assert_cmpint(job.layout.distributed_optimizer, ==, strategies[i].distributed);
    g_assert_cmpint(job.layout.sharding, ==, strategies[i].sharding);
    g_assert_cmpint(job.settings.fsdp_impl, ==, PTSIM_FSDP_MEGATRON);
    g_assert_cmpint(job.settings.reshard_after_forward, ==,
                    PTSIM_RESHARD_AUTO); /* validation: ALWAYS */
  }
  /* the deprecated spelling, and HSDP replicas through the instances */
  parse_ok(MINIMAL "--bf16 --use-custom-fsdp --num-distributed-optimizer-instances 2", &job, NULL);
  g_assert_cmpint(job.layout.sharding, ==, PTSIM_SHARDING_PARAMS);
  g_assert_cmpint(job.layout.optimizer_instances, ==, 2);
  /* Megatron-FSDP may overlap the parameter gather without the flag */
  parse_ok(MINIMAL "--bf16 --use-megatron-fsdp --overlap-grad-reduce --overlap-param-gather", &job,
           NULL);
  g_assert_true(job.settings.overlap_param_gather);
  parse_ok(MINIMAL "--bf16 --data-parallel-sharding-strategy optim_grads", &job, d);
  g_assert_cmpint(job.layout.sharding, ==, PTSIM_SHARDING_NONE);
  g_assert_true(has_note(d, "--data-parallel-sharding-strategy optim_grads has no effect "
                            "without --use-megatron-fsdp"));
  /* torch FSDP2 */
  parse_ok(MINIMAL "--bf16 --use-torch-fsdp2 --no-gradient-accumulation-fusion "
                   "--untie-embeddings-and-output-weights",
           &job, NULL);
  g_assert_cmpint(job.layout.sharding, ==, PTSIM_SHARDING_PARAMS);
  g_assert_cmpint(job.settings.fsdp_impl, ==, PTSIM_FSDP_MEGATRON);
  g_assert_true(job.layout.distributed_optimizer);
  g_assert_false(job.settings.fp32_grad_accumulation);
  g_assert_cmpint(job.settings.reshard_after_forward, ==, PTSIM_RESHARD_ALWAYS);
  parse_ok(MINIMAL "--bf16 --use-torch-fsdp2 --no-gradient-accumulation-fusion "
                   "--untie-embeddings-and-output-weights --torch-fsdp2-no-reshard-after-forward",
           &job, NULL);
  g_assert_cmpint(job.settings.reshard_after_forward, ==, PTSIM_RESHARD_NEVER);
  parse_fails(MINIMAL "--bf16 --use-torch-fsdp2 --untie-embeddings-and-output-weights",
              "add --no-gradient-accumulation-fusion (Megatron-LM asserts it)");
  parse_fails(MINIMAL "--bf16 --use-torch-fsdp2 --no-gradient-accumulation-fusion",
              "--use-torch-fsdp2 requires --untie-embeddings-and-output-weights");
  parse_fails(MINIMAL "--bf16 --use-torch-fsdp2 --no-gradient-accumulation-fusion "
                      "--untie-embeddings-and-output-weights --pipeline-model-parallel-size 2",
              "--use-torch-fsdp2 is not supported with pipeline parallelism");
  parse_fails(MINIMAL "--bf16 --use-torch-fsdp2 --no-gradient-accumulation-fusion "
                      "--untie-embeddings-and-output-weights --use-distributed-optimizer",
              "--use-torch-fsdp2 is not supported with --use-distributed-optimizer");
  parse_fails(MINIMAL "--bf16 --use-torch-fsdp2 --use-megatron-fsdp", "give one");
  parse_fails(MINIMAL "--bf16 --use-megatron-fsdp --data-parallel-sharding-strategy zero3",
              "--data-parallel-sharding-strategy 'zero3' is not allowed");
}

static void test_attention_groups(void) {
  g_test_summary("--num-query-groups needs --group-query-attention");
  g_autoptr(PtsimMegatronDiagnostics) ignored = ptsim_megatron_diagnostics_new();
  PtsimJob job;
  parse_ok(MINIMAL "--bf16 --num-query-groups 4", &job, ignored);
  g_assert_cmpint(job.model.num_query_groups, ==, 16);
  g_assert_true(has_note(ignored, "--num-query-groups 4 has no effect"));
  parse_ok(MINIMAL "--bf16 --group-query-attention", &job, NULL);
  g_assert_cmpint(job.model.num_query_groups, ==, 1); /* Megatron-LM's default */
  parse_ok(MINIMAL "--bf16 --group-query-attention --num-query-groups 4", &job, NULL);
  g_assert_cmpint(job.model.num_query_groups, ==, 4);
}

static void test_precision(void) {
  g_test_summary("bf16 / fp16 / fp8 and fp32 grad accumulation");
  PtsimJob job;
  /* fp32 weights and activations (no --bf16 / --fp16, fp8 or not): refused */
  parse_fails(MINIMAL_FP32, "neither --bf16 nor --fp16: Megatron-LM would train with fp32");
  parse_fails(MINIMAL_FP32 "--fp8-format e4m3", "(fp8 only inside the GEMMs)");
  parse_ok(MINIMAL_FP32 "--fp16", &job, NULL);
  g_assert_cmpint(job.settings.precision, ==, PTSIM_PRECISION_FP16);
  g_assert_cmpint(job.settings.fp32_grad_accumulation, ==, 0);
  parse_ok(MINIMAL_FP32 "--fp16 --accumulate-allreduce-grads-in-fp32", &job, NULL);
  g_assert_cmpint(job.settings.fp32_grad_accumulation, ==, 1);
  parse_ok(MINIMAL "--bf16 --fp8-format hybrid", &job, NULL);
  g_assert_cmpint(job.settings.precision, ==, PTSIM_PRECISION_FP8);
  g_assert_cmpint(job.settings.fp32_grad_accumulation, ==, 1);
  parse_ok(MINIMAL "--bf16 --fp8-format=e4m3", &job, NULL);
  g_assert_cmpint(job.settings.precision, ==, PTSIM_PRECISION_FP8);
  parse_fails(MINIMAL "--bf16 --fp8-format e5m2",
              "--fp8-format 'e5m2' is not allowed: expected e4m3|hybrid");
  parse_fails(MINIMAL "--bf16 --fp16", "--bf16 and --fp16 cannot both be given");
}

static void test_window(void) {
  g_test_summary("--window-size LEFT,0 windows every layer; --window-attn-skip-freq N leaves each "
                 "N-th (1-indexed) whole, a list names the windowed ones; bad pairs are refused");
  PtsimJob job;
  parse_ok(MINIMAL "--bf16 --window-size 128,0", &job, NULL);
  g_assert_cmpint(job.model.window_size, ==, 128);
  g_assert_cmpint(job.model.window_layers, ==, 24);
  /* every 2nd of 24 layers whole: 12 windowed */
  parse_ok(MINIMAL "--bf16 --window-size '(128, 0)' --window-attn-skip-freq 2", &job, NULL);
  g_assert_cmpint(job.model.window_layers, ==, 12);
  /* every 5th whole: layers 5, 10, 15, 20 -> 20 windowed */
  parse_ok(MINIMAL "--bf16 --window-size 4096,0 --window-attn-skip-freq 5", &job, NULL);
  g_assert_cmpint(job.model.window_layers, ==, 20);
  /* three windowed, one whole, six times: 18 */
  parse_ok(MINIMAL "--bf16 --window-size 128,0 --window-attn-skip-freq [1,1,1,0]*6", &job, NULL);
  g_assert_cmpint(job.model.window_layers, ==, 18);
  /* unbounded on the left: no window */
  parse_ok(MINIMAL "--bf16 --window-size -1,0", &job, NULL);
  g_assert_cmpint(job.model.window_size, ==, 0);
  parse_ok(MINIMAL "--bf16", &job, NULL);
  g_assert_cmpint(job.model.window_size, ==, 0);
  parse_fails(MINIMAL "--bf16 --window-size 128,4", "RIGHT must be 0");
  parse_fails(MINIMAL "--bf16 --window-size 128", "expected two integers LEFT,RIGHT");
  parse_fails(MINIMAL "--bf16 --window-size 128,0 --window-attn-skip-freq 0",
              "expected a positive integer N");
  parse_fails(MINIMAL "--bf16 --window-size 128,0 --window-attn-skip-freq [1,0]*3",
              "expected num_layers = 24");
}

/* The same model as a model file: MINIMAL's shape (24 layers, 2048, 16
 * heads, GELU and LayerNorm and biases by Megatron's defaults; the
 * vocabulary 50257 padded to 50304) and EXTRA's keys. */
static void model_text(const char *extra, PtsimModel *m) {
  g_autoptr(GError) error = NULL;
  g_autofree char *text =
      g_strdup_printf("[model]\nnum_layers = 24\nhidden_size = 2048\nffn_hidden_size = 8192\n"
                      "num_attention_heads = 16\nnum_query_groups = 16\nvocab_size = 50304\n"
                      "norm = layernorm\ntied_embeddings = true\nbias = true\n%s",
                      extra);
  g_assert_true(ptsim_model_load_data(text, strlen(text), "parity.ini", m, &error));
  g_assert_no_error(error);
}

static void test_attention_variant_parity(void) {
  g_test_summary("--softmax-type and a model file's softmax_type, --squared-relu and activation = "
                 "relu2 mean the same model (the same parameters per layer); --squared-relu "
                 "beside --swiglu and an unknown softmax are refused, naming the flag");
  static const struct {
    const char *flag, *key;
    PtsimSoftmaxType softmax;
    PtsimActivation activation;
  } cases[] = {
      {"", "activation = gelu\n", PTSIM_SOFTMAX_VANILLA, PTSIM_ACTIVATION_GELU},
      {"--softmax-type vanilla", "activation = gelu\nsoftmax_type = vanilla\n",
       PTSIM_SOFTMAX_VANILLA, PTSIM_ACTIVATION_GELU},
      {"--softmax-type off-by-one", "activation = gelu\nsoftmax_type = off-by-one\n",
       PTSIM_SOFTMAX_OFF_BY_ONE, PTSIM_ACTIVATION_GELU},
      {"--softmax-type learnable", "activation = gelu\nsoftmax_type = learnable\n",
       PTSIM_SOFTMAX_LEARNABLE, PTSIM_ACTIVATION_GELU},
      {"--squared-relu", "activation = relu2\n", PTSIM_SOFTMAX_VANILLA, PTSIM_ACTIVATION_RELU2},
      {"--squared-relu --softmax-type learnable", "activation = relu2\nsoftmax_type = learnable\n",
       PTSIM_SOFTMAX_LEARNABLE, PTSIM_ACTIVATION_RELU2},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    PtsimJob job;
    PtsimModel file;
    g_autofree char *line = g_strdup_printf(MINIMAL "%s", cases[i].flag);
    parse_ok(line, &job, NULL);
    model_text(cases[i].key, &file);
    g_assert_cmpint(job.model.softmax_type, ==, cases[i].softmax);
    g_assert_cmpint(file.softmax_type, ==, cases[i].softmax);
    g_assert_cmpint(job.model.activation, ==, cases[i].activation);
    g_assert_cmpint(file.activation, ==, cases[i].activation);
    g_assert_cmpint(job.model.vocab_size, ==, file.vocab_size);
    g_assert_cmpfloat(ptsim_plan_layer_parameters(&job.model, 2), ==,
                      ptsim_plan_layer_parameters(&file, 2));
  }
  parse_fails(MINIMAL "--swiglu --squared-relu", "--squared-relu and --swiglu together");
  parse_fails(MINIMAL "--softmax-type sink", "--softmax-type 'sink' is not allowed: expected "
                                             "vanilla|off-by-one|learnable");
}

static void test_layout_flags(void) {
  g_test_summary("vp, sp, bias order, recompute, uneven stages");
  g_autoptr(PtsimMegatronDiagnostics) ignored = ptsim_megatron_diagnostics_new();
  PtsimJob job;
  parse_ok("--num-layers 32 --hidden-size 4096 --num-attention-heads 32 "
           "--vocab-size 32000 --bf16 --pipeline-model-parallel-size 4 "
           "--num-layers-per-virtual-pipeline-stage 2",
           &job, NULL);
  g_assert_cmpint(job.layout.vp, ==, 4);
  parse_ok(MINIMAL "--bf16 --pipeline-model-parallel-size 2 "
                   "--num-virtual-stages-per-pipeline-rank 3",
           &job, NULL);
  g_assert_cmpint(job.layout.vp, ==, 3);
  parse_fails("--num-layers 32 --hidden-size 4096 --num-attention-heads 32 "
              "--vocab-size 32000 --pipeline-model-parallel-size 4 "
              "--num-layers-per-virtual-pipeline-stage 3",
              "--num-layers-per-virtual-pipeline-stage 3 does not divide the "
              "8 layers per pipeline stage");
  parse_fails(MINIMAL "--pipeline-model-parallel-size 2 "
                      "--num-layers-per-virtual-pipeline-stage 2 "
                      "--num-virtual-stages-per-pipeline-rank 2",
              "give at most one");

  parse_ok(MINIMAL "--bf16 --sequence-parallel", &job, ignored);
  g_assert_cmpint(job.layout.sp, ==, 0);
  g_assert_true(has_note(ignored, "--sequence-parallel is switched off"));

  parse_ok(MINIMAL "--disable-bias-linear --add-bias-linear", &job, NULL);
  g_assert_cmpint(job.model.bias, ==, 1);
  parse_ok(MINIMAL "--add-bias-linear --disable-bias-linear", &job, NULL);
  g_assert_cmpint(job.model.bias, ==, 0);

  parse_ok(MINIMAL "--recompute-activations", &job, NULL);
  g_assert_cmpint(job.settings.recompute, ==, PTSIM_RECOMPUTE_SELECTIVE);
  parse_ok(MINIMAL "--recompute-granularity full", &job, ignored);
  g_assert_cmpint(job.settings.recompute, ==, PTSIM_RECOMPUTE_FULL);
  g_assert_cmpint(job.settings.recompute_num_layers, ==, 0);
  g_assert_true(has_note(ignored, "recomputing every layer"));
  parse_ok(MINIMAL "--recompute-granularity full --recompute-method block "
                   "--recompute-num-layers 3",
           &job, NULL);
  g_assert_cmpint(job.settings.recompute_method, ==, PTSIM_RECOMPUTE_METHOD_BLOCK);
  g_assert_cmpint(job.settings.recompute_num_layers, ==, 3);
  parse_fails(MINIMAL "--recompute-granularity selective "
                      "--recompute-method uniform",
              "--recompute-method uniform is not supported with selective");
  parse_fails(MINIMAL "--recompute-granularity partial",
              "--recompute-granularity 'partial' is not allowed: expected "
              "full|selective");
  parse_fails(MINIMAL "--recompute-granularity full --recompute-method all",
              "--recompute-method 'all' is not allowed: expected uniform|block");

  parse_ok(MINIMAL "--pipeline-model-parallel-size 4 "
                   "--decoder-first-pipeline-num-layers 3 "
                   "--decoder-last-pipeline-num-layers 5",
           &job, NULL);
  g_assert_cmpint(job.layout.first_stage_layers, ==, 3);
  g_assert_cmpint(job.layout.last_stage_layers, ==, 5);
  parse_ok(MINIMAL "--context-parallel-size 2 --hidden-dropout 0", &job, NULL);
  g_assert_cmpint(job.layout.cp, ==, 2);
  g_assert_cmpfloat(job.source.hidden_dropout, ==, 0.0);
}

static void test_errors(void) {
  g_test_summary("missing values, non-numbers, missing sizes, bad syntax");
  parse_fails(MINIMAL "--micro-batch-size", "--micro-batch-size needs a value");
  parse_fails("--num-layers --hidden-size 5", "--num-layers needs a value");
  parse_fails(MINIMAL "--global-batch-size=", "--global-batch-size needs a value");
  parse_fails("--num-layers abc", "--num-layers 'abc' is not allowed: expected "
                                  "an integer from 1 to 1073741824");
  /* past the range: refused before tp*pp*cp or 4h could overflow */
  parse_fails(MINIMAL "--context-parallel-size 4611686018427387904",
              "--context-parallel-size '4611686018427387904' is not allowed: "
              "expected an integer from 1 to 1073741824");
  parse_fails("--num-layers 2 --hidden-size 4611686018427387904",
              "--hidden-size '4611686018427387904' is not allowed");
  parse_fails("--num-layers 12abc", "--num-layers '12abc'");
  parse_fails("--num-layers 0", "--num-layers '0'");
  parse_fails("--num-layers 99999999999999999999", "--num-layers '9999");
  parse_fails(MINIMAL "--hidden-dropout x",
              "--hidden-dropout 'x' is not allowed: expected a number in [0, 1)");
  parse_fails(MINIMAL "--attention-dropout 1e999", "--attention-dropout '1e999'");
  parse_fails(MINIMAL "--bf16=true", "--bf16 takes no value");
  parse_fails("--hidden-size 64 --num-attention-heads 4 --vocab-size 10",
              "--num-layers is missing");
  parse_fails("--num-layers 2 --num-attention-heads 4 --vocab-size 10", "--hidden-size is missing");
  parse_fails("--num-layers 2 --hidden-size 64 --vocab-size 10",
              "--num-attention-heads is missing");
  parse_fails("--num-layers 2 --hidden-size 64 --num-attention-heads 4 --tokenizer-type "
              "NullTokenizer",
              "vocab size unknown: tokenizer NullTokenizer has no size ptsim knows; add "
              "--vocab-size N or --padded-vocab-size N to the Megatron-LM flags");
  parse_fails("--hidden-size 64 --lr 1 --num-attention-heads 4",
              "--num-layers is missing (Megatron-LM requires it); the command line gave 3 flags: "
              "--hidden-size --lr --num-attention-heads");
  parse_fails(MINIMAL "--normalization rmsnorm",
              "--normalization 'rmsnorm' is not allowed: expected "
              "LayerNorm|RMSNorm");
  parse_fails("", "no Megatron-LM flags given");
  parse_fails("--num-layers '2", "--megatron-args:1: unterminated single quote");
  parse_fails("--num-layers \\\n '2 \n --hidden-size 4\n",
              "--megatron-args:2: unterminated single quote");
  parse_fails("torchrun --nnodes=1:4 --nproc_per_node 8 x.py " MINIMAL,
              "launcher --nnodes 1:4: an elastic node range; give --gpus");
  parse_fails("--num-layers 2 --hidden-size 2 --num-attention-heads 1 "
              "--vocab-size 10 --swiglu",
              "pass --ffn-hidden-size");
}

static void test_misspelt_flags(void) {
  g_test_summary("an unknown --flag is refused as Megatron-LM refuses it, with the closest "
                 "known flags: one letter off, '_' for '-', abbreviated parts");
  parse_fails(MINIMAL "--tensor-model-paralel-size 2",
              "--tensor-model-paralel-size is not a Megatron-LM flag (Megatron-LM refuses unknown "
              "arguments); did you mean --tensor-model-parallel-size?");
  parse_fails(MINIMAL "--tensor_model_parallel_size=2",
              "did you mean --tensor-model-parallel-size?");
  parse_fails(MINIMAL "--use-dist-optimizer", "did you mean --use-distributed-optimizer?");
  parse_fails(MINIMAL "--seq-len 4096", "did you mean --seq-length?");
  /* nothing close: no guess ("--world-size" is no flag of Megatron-LM's parser) */
  parse_fails(MINIMAL "--world-size 64",
              "--world-size is not a Megatron-LM flag (Megatron-LM refuses unknown arguments)");
  /* a command that ran under its own release (validate's test cases): listed */
  g_autoptr(PtsimMegatronDiagnostics) d = ptsim_megatron_diagnostics_new();
  d->unknown_allowed = TRUE;
  PtsimJob job;
  parse_ok(MINIMAL "--bf16 --flag-of-a-later-release 3 --micro-batch-size 2", &job, d);
  g_assert_true(has_entry(d->unknown, "--flag-of-a-later-release 3"));
  g_assert_cmpint(job.layout.mbs, ==, 2);
}

static void test_memory_time_flags(void) {
  g_test_summary("flags that change memory or time are warned about with their direction: "
                 "NCCL user buffers, Megatron-FSDP double buffers; DeepEP is modelled");
  g_autoptr(PtsimMegatronDiagnostics) d = ptsim_megatron_diagnostics_new();
  PtsimJob job;
  parse_ok(MINIMAL "--bf16 --use-nccl-ub --fsdp-double-buffer --keep-fp8-transpose-cache "
                   "--mla-down-proj-fusion",
           &job, d);
  g_assert_cmpuint(d->unmodelled->len, ==, 4);
  g_assert_true(has_entry(d->unmodelled, "--use-nccl-ub (faster DP/FSDP collectives (NCCL user "
                                         "buffers: fewer SMs), more memory: registered buffers)"));
  g_assert_true(has_entry(d->unmodelled, "--fsdp-double-buffer (more memory, possibly faster: "
                                         "Megatron-FSDP's communication buffers held twice)"));
  g_assert_true(ptsim_megatron_args_reads("--moe-enable-deepep"));
}

static void test_appended_flags(void) {
  g_test_summary("flags appended after the command's win, with what Megatron-LM derives from "
                 "them: expert tp and the vocabulary's padding follow tp");
  g_autoptr(PtsimMegatronDiagnostics) d = ptsim_megatron_diagnostics_new();
  PtsimJob job;
  memset(&job, 0, sizeof job);
  const char *over[] = {"--tensor-model-parallel-size", "1", "--pipeline-model-parallel-size", "4",
                        NULL};
  g_autoptr(GError) error = NULL;
  g_assert_true(
      ptsim_megatron_args_parse_with("torchrun --nproc_per_node 8 pretrain_gpt.py " MINIMAL
                                     "--bf16 --micro-batch-size 1 --tensor-model-parallel-size 4",
                                     NULL, over, &job, d, &error));
  g_assert_no_error(error);
  g_assert_cmpint(job.layout.tp, ==, 1);
  g_assert_cmpint(job.layout.pp, ==, 4);
  g_assert_cmpint(job.layout.etp, ==, 1); /* arguments.py: etp defaults to tp, the new one */
  /* 50257 padded to a multiple of 128 x tp: 50304 at tp 1 (51200 at the script's tp 4) */
  g_assert_cmpint(job.model.vocab_size, ==, 50304);
  g_assert_true(has_note(d, "--tensor-model-parallel-size 1 read after the command's "
                            "--tensor-model-parallel-size 4"));
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/megatron-args/llama3-8b", test_llama3_8b);
  g_test_add_func("/megatron-args/file", test_file);
  g_test_add_func("/megatron-args/defaults", test_defaults);
  g_test_add_func("/megatron-args/swiglu-ffn", test_swiglu_ffn);
  g_test_add_func("/megatron-args/vocab-padding", test_vocab_padding);
  g_test_add_func("/megatron-args/equals-form", test_equals_form);
  g_test_add_func("/megatron-args/unknown-flags", test_unknown_flags);
  g_test_add_func("/megatron-args/misspelt-flags", test_misspelt_flags);
  g_test_add_func("/megatron-args/appended-flags", test_appended_flags);
  g_test_add_func("/megatron-args/memory-time-flags", test_memory_time_flags);
  g_test_add_func("/megatron-args/refused", test_refused);
  g_test_add_func("/megatron-args/sharding", test_sharding);
  g_test_add_func("/megatron-args/attention-groups", test_attention_groups);
  g_test_add_func("/megatron-args/precision", test_precision);
  g_test_add_func("/megatron-args/layout-flags", test_layout_flags);
  g_test_add_func("/megatron-args/window", test_window);
  g_test_add_func("/megatron-args/attention-variant-parity", test_attention_variant_parity);
  g_test_add_func("/megatron-args/errors", test_errors);
  return g_test_run();
}
