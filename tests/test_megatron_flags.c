/* test_megatron_flags.c — Megatron-LM's flag table (sim/io/megatron_flags.c),
 * the launcher's GPU count (sim/io/launcher.c), the pipeline layout string
 * (sim/io/pipeline_layout.c), tokenizer vocabularies (sim/io/megatron_vocab.c),
 * and Megatron-LM's own example launch scripts read end to end. */
#include <string.h>

#include <glib.h>

#include "config.h"
#include "megatron_args.h"
#include "megatron_flags.h"
#include "megatron_vocab.h"
#include "pipeline_layout.h"
#include "plan.h"

static void test_table(void) {
  g_test_summary("sorted and unique; the MODELLED rows are exactly the flags megatron_args.c "
                 "reads; every UNMODELLED row says which way it moves time or memory");
  gsize n = 0;
  const PtsimMegatronFlag *t = ptsim_megatron_flags(&n);
  g_assert_cmpuint(n, >, 850);
  for (gsize i = 0; i < n; i++) {
    if (i > 0) g_assert_cmpint(strcmp(t[i - 1].name, t[i].name), <, 0);
    g_assert_true(g_str_has_prefix(t[i].name, "--"));
    g_assert_true(ptsim_megatron_flag_find(t[i].name, strlen(t[i].name)) == &t[i]);
    gboolean reads = ptsim_megatron_args_reads(t[i].name);
    if (reads != (t[i].klass == PTSIM_MEGATRON_MODELLED))
      g_error("%s: class %d, read by megatron_args.c: %d", t[i].name, t[i].klass, reads);
    if (t[i].klass == PTSIM_MEGATRON_UNMODELLED) {
      const char *e = t[i].effect;
      g_assert_nonnull(e);
      if (!strstr(e, "slower") && !strstr(e, "faster") && !strstr(e, "more") &&
          !strstr(e, "less") && !strstr(e, "either way"))
        g_error("%s: '%s' gives no direction", t[i].name, e);
    }
  }
  /* the ones the issue names */
  const char *const modelled[] = {"--overlap-grad-reduce",
                                  "--overlap-param-gather",
                                  "--tp-comm-overlap",
                                  "--no-tp-comm-overlap-ag",
                                  "--disable-tp-comm-overlap-rs",
                                  "--tp-comm-overlap-rs-dgrad",
                                  "--transformer-impl",
                                  "--use-flash-attn",
                                  "--attention-backend",
                                  "--grad-reduce-in-bf16",
                                  "--accumulate-allreduce-grads-in-fp32",
                                  "--no-gradient-accumulation-fusion",
                                  "--cross-entropy-loss-fusion",
                                  "--recompute-modules",
                                  "--fp8-recipe",
                                  "--fp8-param-gather",
                                  "--use-precision-aware-optimizer",
                                  "--main-grads-dtype",
                                  "--main-params-dtype",
                                  "--exp-avg-dtype",
                                  "--exp-avg-sq-dtype",
                                  "--num-distributed-optimizer-instances",
                                  "--account-for-embedding-in-pipeline-split",
                                  "--account-for-loss-in-pipeline-split",
                                  "--pipeline-model-parallel-layout",
                                  "--kv-channels",
                                  "--qk-layernorm",
                                  "--position-embedding-type",
                                  "--manual-gc",
                                  "--use-torch-fsdp2",
                                  "--use-megatron-fsdp",
                                  "--use-custom-fsdp",
                                  "--data-parallel-sharding-strategy",
                                  "--torch-fsdp2-no-reshard-after-forward"};
  for (size_t i = 0; i < G_N_ELEMENTS(modelled); i++) {
    const PtsimMegatronFlag *f = ptsim_megatron_flag_find(modelled[i], strlen(modelled[i]));
    g_assert_nonnull(f);
    g_assert_cmpint(f->klass, ==, PTSIM_MEGATRON_MODELLED);
  }
  const char *const moe[] = {"--num-experts",
                             "--moe-router-topk",
                             "--moe-layer-freq",
                             "--expert-model-parallel-size",
                             "--expert-tensor-parallel-size",
                             "--moe-token-dispatcher-type",
                             "--moe-shared-expert-overlap",
                             "--multi-latent-attention",
                             "--q-lora-rank",
                             "--mtp-num-layers"};
  for (size_t i = 0; i < G_N_ELEMENTS(moe); i++)
    g_assert_cmpint(ptsim_megatron_flag_find(moe[i], strlen(moe[i]))->klass, ==,
                    PTSIM_MEGATRON_MODELLED);
  g_assert_cmpint(ptsim_megatron_flag_find("--moe-anything-new", 18)->klass, ==,
                  PTSIM_MEGATRON_UNMODELLED);
  const char *const refused[] = {"--moe-latent-size", "--outer-dp-sharding-strategy"};
  for (size_t i = 0; i < G_N_ELEMENTS(refused); i++)
    g_assert_cmpint(ptsim_megatron_flag_find(refused[i], strlen(refused[i]))->klass, ==,
                    PTSIM_MEGATRON_REFUSED);
  /* arity decides how values are consumed */
  g_assert_cmpint(ptsim_megatron_flag_find("--recompute-modules", 19)->arity, ==,
                  PTSIM_MEGATRON_LIST);
  g_assert_cmpint(ptsim_megatron_flag_find("--rampup-batch-size", 19)->arity, ==,
                  PTSIM_MEGATRON_THREE);
  g_assert_cmpint(ptsim_megatron_flag_find("--manual-gc", 11)->arity, ==, PTSIM_MEGATRON_SWITCH);
  g_assert_null(ptsim_megatron_flag_find("--no-such-flag", 14));
  g_assert_nonnull(ptsim_megatron_flag_find("--bf16=", 6)); /* a prefix of the text */
}

static int64_t gpus_of(const char *command_line, char **how) {
  g_autoptr(GError) error = NULL;
  g_autoptr(PtsimMegatronDiagnostics) d = ptsim_megatron_diagnostics_new();
  PtsimJob job;
  memset(&job, 0, sizeof job);
  g_autofree char *line = g_strconcat(command_line,
                                      " --num-layers 2 --hidden-size 64 --num-attention-heads 4 "
                                      "--vocab-size 100 --bf16",
                                      NULL);
  ptsim_megatron_args_parse(line, &job, d, &error);
  g_assert_no_error(error);
  *how = g_strdup(d->gpus_from ? d->gpus_from : d->gpus_read);
  return job.layout.gpus;
}

static void check_gpus(const char *command_line, int64_t gpus, const char *how) {
  g_autofree char *said = NULL;
  int64_t got = gpus_of(command_line, &said);
  if (got != gpus || strcmp(said, how) != 0)
    g_error("'%s': %" G_GINT64_FORMAT " GPUs from '%s', expected %" G_GINT64_FORMAT " from '%s'",
            command_line, (gint64)got, said, (gint64)gpus, how);
}

static void test_launcher(void) {
  g_test_summary("the GPU count from torchrun, srun/#SBATCH, mpirun, deepspeed, WORLD_SIZE and "
                 "GPUS_PER_NODE x NNODES; never tp x pp x cp");
  check_gpus("torchrun --nproc_per_node 8 --nnodes 2 pretrain_gpt.py", 16,
             "torchrun --nproc_per_node 8 --nnodes 2");
  check_gpus("torchrun --nproc-per-node=4 pretrain_gpt.py", 4, "torchrun --nproc-per-node 4");
  check_gpus("python -m torch.distributed.run --standalone --nnodes 3 --nproc-per-node 8 "
             "pretrain_gpt.py",
             8, "torchrun --nproc-per-node 8 --nnodes 3");
  check_gpus("srun -N 4 --ntasks-per-node=8 python pretrain_gpt.py", 32,
             "srun -N 4 --ntasks-per-node 8");
  check_gpus("srun --nodes=2 --gpus-per-node 8 python pretrain_gpt.py", 16,
             "srun --nodes 2 --gpus-per-node 8");
  check_gpus("#SBATCH --nodes=2 --ntasks-per-node=8\nsrun python pretrain_gpt.py", 16,
             "srun --nodes 2 --ntasks-per-node 8");
  check_gpus("mpirun -np 16 python pretrain_gpt.py", 16, "mpirun -np 16");
  check_gpus("deepspeed --num_gpus 8 --num_nodes 2 pretrain_gpt.py", 16, "deepspeed --num_gpus 8");
  check_gpus("WORLD_SIZE=32 python pretrain_gpt.py", 32, "WORLD_SIZE=32");
  check_gpus("GPUS_PER_NODE=8\nNNODES=4\npython pretrain_gpt.py", 32, "GPUS_PER_NODE=8 x 4 nodes");
  check_gpus("python pretrain_gpt.py --tensor-model-parallel-size 2", 0,
             "launcher 'python' without a GPU count, no WORLD_SIZE, GPUS_PER_NODE or NNODES");
  check_gpus("", 0, "no launcher, no WORLD_SIZE, GPUS_PER_NODE or NNODES");
  /* srun -N alone counts no GPUs: the variables do (it said nothing at all
   * before, fuzz_launcher) */
  check_gpus("GPUS_PER_NODE=8\nsrun -N 2 python pretrain_gpt.py", 0,
             "launcher 'srun' without a GPU count, no WORLD_SIZE, GPUS_PER_NODE or NNODES");
  check_gpus("GPUS_PER_NODE=8\nNNODES=2\nsrun -N 2 python pretrain_gpt.py", 16,
             "GPUS_PER_NODE=8 x 2 nodes");
  /* sh -c with the command in one quoted word (the SC21 style) */
  check_gpus("srun -N 2 --ntasks-per-node 8 sh -c 'python -u pretrain_gpt.py --num-layers 2 "
             "--hidden-size 64 --num-attention-heads 4 --vocab-size 100 --bf16' --",
             16, "srun -N 2 --ntasks-per-node 8");
}

static void layout_ok(const char *text, int64_t pp, int64_t layers, int64_t vp, int64_t first,
                      int64_t last, int emb, int loss) {
  g_autoptr(GError) error = NULL;
  PtsimPipelineLayout p;
  ptsim_pipeline_layout_parse(text, pp, layers, 0, &p, &error);
  g_assert_no_error(error);
  g_assert_cmpint(p.runs, ==, 0);
  g_assert_cmpint(p.vp, ==, vp);
  g_assert_cmpint(p.first_stage_layers, ==, first);
  g_assert_cmpint(p.last_stage_layers, ==, last);
  g_assert_cmpint(p.account_embedding, ==, emb);
  g_assert_cmpint(p.account_loss, ==, loss);
}

static void layout_fails_mtp(const char *text, int64_t pp, int64_t layers, int64_t mtp,
                             const char *needle) {
  g_autoptr(GError) error = NULL;
  PtsimPipelineLayout p;
  g_assert_false(ptsim_pipeline_layout_parse(text, pp, layers, mtp, &p, &error));
  g_assert_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE);
  if (!strstr(error->message, needle)) g_error("'%s' lacks '%s'", error->message, needle);
}

static void layout_fails(const char *text, int64_t pp, int64_t layers, const char *needle) {
  layout_fails_mtp(text, pp, layers, 0, needle);
}

/* TEXT applied to a layout of PP ranks, LAYERS layers and MTP MTP layers:
 * its vp, and the layers of each virtual stage (the plan's split) as
 * "n,n,...". */
static void layout_vstages(const char *text, int64_t pp, int64_t layers, int64_t mtp, int64_t vp,
                           const char *want) {
  g_autoptr(GError) error = NULL;
  PtsimLayout l;
  int32_t counts[PTSIM_MAX_VSTAGES];
  memset(&l, 0, sizeof l);
  l.pp = pp;
  g_assert_true(ptsim_pipeline_layout_apply(text, layers, mtp, &l, &error));
  g_assert_no_error(error);
  g_assert_cmpint(l.vp, ==, vp);
  g_assert_cmpint(ptsim_plan_split_vstages(&l, layers, counts), ==, 0);
  g_autoptr(GString) got = g_string_new(NULL);
  for (int64_t i = 0; i < pp * vp; i++)
    g_string_append_printf(got, "%s%d", i ? "," : "", counts[i]);
  g_assert_cmpstr(got->str, ==, want);
}

static void test_pipeline_layout(void) {
  g_test_summary("--pipeline-model-parallel-layout: Megatron's grammar into the split ptsim "
                 "models");
  layout_ok("Et*8|t*8|t*8|t*8L", 4, 32, 1, 0, 0, 0, 0);  /* even */
  layout_ok("Et*7|t*8|t*8|t*9,L", 4, 32, 1, 7, 9, 0, 0); /* first/last */
  layout_ok("E(tt|)*7,ttL", 8, 16, 1, 0, 0, 0, 0);       /* groups */
  layout_ok("Et|(tt|)*6,tL", 8, 14, 1, 1, 1, 0, 0);
  /* 2 chunks per rank, 126 layers + E + L over 16 virtual stages of 8 */
  layout_ok("Et*7|(t*8|)*14,t*7L", 8, 126, 2, 0, 0, 1, 1);
  layout_fails("Et*8|t*8|t*8|t*8L", 4, 30, "32 transformer layers ('t'), but --num-layers is 30");
  layout_fails("Et*8|t*8|t*8L", 4, 24, "3 stages are not a multiple of the 4 pipeline ranks");
  layout_fails("Et*8|t*8m|L", 3, 16,
               "1 multi-token-prediction layers ('m'), but --mtp-num-layers "
               "is 0");
  layout_fails_mtp("Et*8|t*8L", 2, 16, 1,
                   "0 multi-token-prediction layers ('m'), but "
                   "--mtp-num-layers is 1");
  layout_fails_mtp("Et*8|t*7mtL", 2, 16, 1, "a transformer layer ('t') after a multi-token");
  layout_fails_mtp("Et*4|t*4|t*4m|t*4L", 2, 16, 1, "a transformer layer ('t') after");
  /* MTP layers apart: on the virtual stage before the loss's, the last of
   * its rank (Megatron's validate_layer_layout); else refused */
  layout_fails_mtp("Et*4|t*4m|t*4|t*4L", 2, 16, 1, "a transformer layer ('t') after");
  layout_fails_mtp("Et*8|t*8m||L", 2, 16, 1, "not the last of its pipeline rank");
  layout_fails_mtp("Et*8|t*8m||L", 4, 16, 1, "empty virtual stages between them and the loss");
  layout_fails_mtp("Et*8m|mL", 2, 8, 2, "on two virtual stages");
  layout_fails("Et*8|t*8||L", 2, 16, "virtual stage 2 has no transformer layer");
  layout_fails("t*8|Et*8L", 2, 16, "'E' must open the first stage");
  layout_fails("E(t|tt|)*9tL", 1, 28, "more than 16 runs of equal virtual stages");
  layout_fails("Et*8|t*8Lx", 2, 16, "expected E, t, m, L");
  /* no stages at all: a NULL dereference before (fuzz_pipeline_layout) */
  layout_fails("", 1, 1, "an empty layout");
  layout_fails(" , ", 4, 32, "an empty layout");
  /* repeats are bounded by the unrolled length, and need something to repeat */
  layout_fails("E(t|)*1048577L", 1, 1, "'*1048577': expected a repeat count from 1 to 1048576");
  layout_fails("Et*99999999999999999999L", 1, 1, "expected a repeat count");
  layout_fails("E( , )*1048576tL", 1, 1, "an empty group '()'");
  layout_fails("E(tttt|)*1048576L", 1, 1, "too long once unrolled");
  /* 442,495 '|' (it took seconds to split under ASan: fuzz_pipeline_layout) */
  layout_fails("Ett(*2418|)*184", 6, 117, "442496 stages for 117 transformer layers");
}

static void test_pipeline_layout_vstages(void) {
  g_test_summary("--pipeline-model-parallel-layout with 'm' and with unequal virtual stages: "
                 "the layers of each virtual stage, as Megatron-LM builds them");
  /* Megatron-LM's test cases (pp 2): unrolled, "Et*3|(tt|)*6L" is
   * "Ettt|tt|tt|tt|tt|tt|tt|L": 8 virtual stages (vp 4) of 3, six of 2
   * and 0 (the loss alone): 3 + 12 = 15 layers; rank 0 runs virtual stages
   * 0, 2, 4, 6 (3 + 2 + 2 + 2 = 9 layers), rank 1 1, 3, 5, 7 (6). */
  layout_vstages("Et*3|(tt|)*6L", 2, 15, 0, 4, "3,2,2,2,2,2,2,0");
  /* "Et*3|(tt|)*6tmL" (16 layers, one MTP layer): the last virtual stage
   * holds a layer, the MTP layer and the loss: 3, six of 2, 1 */
  layout_vstages("Et*3|(tt|)*6tmL", 2, 16, 1, 4, "3,2,2,2,2,2,2,1");
  layout_vstages("Et*3|(tt|)*6mL", 2, 15, 1, 4, "3,2,2,2,2,2,2,0");
  /* the MTP layer apart, alone on its virtual stage (Megatron's docstring
   * example "Ettt|(tt|)*29,m|L" at pp 16 x vp 2: rank 14's second chunk
   * the MTP layer, rank 15's the loss), or after two layers */
  layout_vstages("Ettt|(tt|)*29,m|L", 16, 61, 1, 2,
                 "3,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,0,0");
  layout_vstages("Et*8|t*6|ttm|L", 4, 16, 1, 1, "8,6,2,0");
  /* Megatron-LM's own (tests/unit_tests/pipeline_parallel/
   * test_pipeline_layout.py test_forward_vpp, pp 4 x vp 2, 8 layers): the
   * MTP layer in the second last virtual stage with a layer, or alone */
  layout_vstages("E|t*3|(t|)*4tm|L", 4, 8, 1, 2, "0,3,1,1,1,1,1,0");
  layout_vstages("E|t*3|(t|)*3tt|m|L", 4, 8, 1, 2, "0,3,1,1,1,2,0,0");
  /* "Et|(tt|)*6mL" (13 layers): 1, six of 2, 0 -- equal stages of 2 but
   * the ends, as --account-for-embedding/loss-in-pipeline-split would
   * split 13 + 1 + 2 units over 8 (the embedding's one slot, the loss's
   * two) */
  layout_ok("Et|(tt|)*6L", 2, 13, 4, 0, 0, 1, 2);
  layout_vstages("Et|(tt|)*6mL", 2, 13, 1, 4, "1,2,2,2,2,2,2,0");
  /* one chunk per rank: middle ranks that differ, an empty first rank */
  layout_vstages("Et*4|t*8|t*12|t*8L", 4, 32, 0, 1, "4,8,12,8");
  layout_vstages("E|t*8|t*8|L", 4, 16, 0, 1, "0,8,8,0");
  layout_vstages("Et*2|t*4|t*4|t*5|t*4|t*4|t*4|t*5L", 4, 32, 0, 2, "2,4,4,5,4,4,4,5");
}

static void check_vocab(const char *type, const char *model, int64_t flag, int64_t want) {
  g_autoptr(GError) error = NULL;
  g_autofree char *how = NULL;
  int64_t v = 0;
  g_assert_true(ptsim_megatron_vocab(type, model, flag, &v, &how, &error));
  g_assert_cmpint(v, ==, want);
}

static void test_vocab(void) {
  g_test_summary("tokenizer vocabularies and Megatron's padding (multiple of divisible x tp)");
  check_vocab(NULL, NULL, 0, 50257);
  check_vocab("GPT2BPETokenizer", NULL, 0, 50257);
  check_vocab("Llama2Tokenizer", "/models/tokenizer.model", 0, 32000);
  check_vocab("HuggingFaceTokenizer", "meta-llama/Meta-Llama-3-8B", 0, 128256);
  check_vocab("HuggingFaceTokenizer", "meta-llama/Llama-2-7b-hf", 0, 32000);
  check_vocab("HuggingFaceTokenizer", "/my/own/tokenizer", 151936, 151936);
  check_vocab("NullTokenizer", NULL, 128256, 128256);
  check_vocab("TikTokenizer", NULL, 0, 131072);
  /* the padding of real logs (50257 -> 50304 | 50432 | 50688 | 51200) */
  g_assert_cmpint(ptsim_megatron_vocab_pad(50257, 128, 1), ==, 50304);
  g_assert_cmpint(ptsim_megatron_vocab_pad(50257, 128, 2), ==, 50432);
  g_assert_cmpint(ptsim_megatron_vocab_pad(50257, 128, 4), ==, 50688);
  g_assert_cmpint(ptsim_megatron_vocab_pad(50257, 128, 8), ==, 51200);
  g_assert_cmpint(ptsim_megatron_vocab_pad(128256, 128, 8), ==, 129024);
}

static void parse_script(const char *name, PtsimJob *job, PtsimMegatronDiagnostics *d) {
  g_autofree char *path = g_test_build_filename(G_TEST_DIST, "data", "megatron_scripts", name,
                                                NULL);
  g_autoptr(GError) error = NULL;
  memset(job, 0, sizeof *job);
  g_assert_true(ptsim_megatron_args_parse_file(path, job, d, &error));
  g_assert_no_error(error);
}

static void test_example_llama3_8b_fp8(void) {
  g_test_summary("examples/llama/train_llama3_8b_h100_fp8.sh as it is");
  g_autoptr(PtsimMegatronDiagnostics) d = ptsim_megatron_diagnostics_new();
  PtsimJob job;
  parse_script("train_llama3_8b_h100_fp8.sh", &job, d);
  g_assert_cmpint(job.model.num_layers, ==, 32);
  g_assert_cmpint(job.model.hidden_size, ==, 4096);
  g_assert_cmpint(job.model.ffn_hidden_size, ==, 14336);
  g_assert_cmpint(job.model.num_query_groups, ==, 8);
  g_assert_cmpint(job.model.kv_channels, ==, 128);
  g_assert_cmpint(job.model.vocab_size, ==, 128256); /* NullTokenizer --vocab-size 128256, tp 1 */
  g_assert_cmpint(job.model.position_embedding, ==, PTSIM_POSITION_ROPE);
  g_assert_cmpint(job.model.tied_embeddings, ==, 0);
  g_assert_cmpint(job.model.bias, ==, 0);
  g_assert_cmpint(job.layout.gpus, ==, 8);
  g_assert_cmpstr(d->gpus_from, ==, "torchrun --nproc_per_node 8 --nnodes 1");
  g_assert_cmpint(job.layout.mbs, ==, 1);
  g_assert_cmpint(job.layout.gbs, ==, 128);
  g_assert_cmpint(job.layout.seq, ==, 8192);
  g_assert_cmpint(job.settings.precision, ==, PTSIM_PRECISION_FP8); /* DTYPE=fp8: the if-block */
  g_assert_cmpint(job.settings.fp8_param_gather, ==, 1);
  g_assert_cmpint(job.settings.fp8_recipe, ==, PTSIM_FP8_DELAYED);
  g_assert_cmpint(job.settings.fp32_grad_accumulation, ==, 0); /* --grad-reduce-in-bf16 */
  g_assert_cmpint(job.settings.cross_entropy_fusion, ==, 1);
  g_assert_cmpint(job.settings.manual_gc, ==, 1);
  g_assert_cmpint(job.layout.distributed_optimizer, ==, 1);
  g_assert_cmpint(job.settings.overlap_grad_reduce, ==, 1);
  g_assert_cmpint(job.settings.overlap_param_gather, ==, 1);
  g_assert_cmpint(job.settings.tp_comm_overlap, ==, 0);
  g_assert_cmpint(job.settings.flash_attention, ==, 1); /* --attention-backend fused */
  g_assert_cmpfloat(job.source.attention_dropout, ==, 0.0);
  g_assert_cmpuint(d->unmodelled->len, ==, 1);
  g_assert_true(g_str_has_prefix(d->unmodelled->pdata[0], "--empty-unused-memory-level (slower"));
  g_assert_cmpuint(d->unknown->len, ==, 0);
}

static void test_example_gpt3_175b(void) {
  g_test_summary("examples/gpt3/train_gpt3_175b_distributed.sh as it is: GPT-2 BPE vocabulary "
                 "padded for tp 8, one 8-GPU node as the script says");
  g_autoptr(PtsimMegatronDiagnostics) d = ptsim_megatron_diagnostics_new();
  PtsimJob job;
  parse_script("train_gpt3_175b_distributed.sh", &job, d);
  g_assert_cmpint(job.model.num_layers, ==, 96);
  g_assert_cmpint(job.model.hidden_size, ==, 12288);
  g_assert_cmpint(job.model.vocab_size, ==, 51200); /* 50257 up to 128 x 8 */
  g_assert_cmpint(job.model.position_embedding, ==, PTSIM_POSITION_LEARNED);
  g_assert_cmpint(job.model.max_position_embeddings, ==, 2048);
  g_assert_cmpint(job.layout.gpus, ==, 8);
  g_assert_cmpint(job.layout.tp, ==, 8);
  g_assert_cmpint(job.layout.pp, ==, 16);
  g_assert_cmpint(job.layout.gbs, ==, 1536);
  g_assert_cmpint(job.settings.precision, ==, PTSIM_PRECISION_FP16);
  g_assert_cmpint(job.settings.flash_attention, ==, 1); /* --attention-backend auto */
  /* the split schedule words are left over, not read */
  g_assert_cmpuint(d->unknown->len, ==, 5);
}

static void test_example_mixtral(void) {
  g_test_summary("examples/mixtral/train_mixtral_8x7b_distributed.sh as it is: Mixtral 8x7B, "
                 "ep 8 pp 4, the alltoall dispatcher with grouped GEMMs; T5 is another family");
  g_autoptr(PtsimMegatronDiagnostics) d = ptsim_megatron_diagnostics_new();
  g_autofree char *mixtral = g_test_build_filename(G_TEST_DIST, "data", "megatron_scripts",
                                                   "train_mixtral_8x7b_distributed.sh", NULL);
  g_autofree char *text = NULL;
  g_autoptr(GError) error = NULL;
  PtsimJob job;
  memset(&job, 0, sizeof job);
  /* as it is, the script needs its arguments: $2 is the tokenizer model */
  g_assert_false(ptsim_megatron_args_parse_file(mixtral, &job, d, &error));
  g_assert_nonnull(strstr(error->message, "--tokenizer-model needs a value"));
  g_clear_error(&error);
  g_assert_true(g_file_get_contents(mixtral, &text, NULL, NULL));
  g_autoptr(GString) given = g_string_new(text);
  g_string_replace(given, "TOKENIZER_MODEL=$2", "TOKENIZER_MODEL=tokenizer.model", 1);
  memset(&job, 0, sizeof job);
  g_assert_true(ptsim_megatron_args_parse(given->str, &job, d, &error));
  g_assert_no_error(error);
  g_assert_cmpint(job.model.num_layers, ==, 32);
  g_assert_cmpint(job.model.num_experts, ==, 8);
  g_assert_cmpint(job.model.moe_router_topk, ==, 2);
  g_assert_cmpint(job.model.moe_ffn_hidden_size, ==,
                  14336); /* --ffn-hidden-size: Megatron's default */
  g_assert_cmpuint(job.model.moe_layers[0], ==, 0xffffffffu); /* --moe-layer-freq 1: every layer */
  g_assert_cmpint(job.model.num_query_groups, ==, 8);
  g_assert_cmpint(job.model.vocab_size, ==, 32000); /* Llama2Tokenizer, a multiple of 128 */
  g_assert_cmpfloat(job.model.moe_aux_loss_coeff, ==, 1e-2);
  g_assert_cmpint(job.layout.ep, ==, 8);
  g_assert_cmpint(job.layout.etp, ==, 1); /* = tp */
  g_assert_cmpint(job.layout.pp, ==, 4);
  g_assert_cmpint(job.settings.moe_dispatcher, ==, PTSIM_DISPATCH_ALLTOALL);
  g_assert_true(job.settings.moe_grouped_gemm);
  g_autofree char *path = g_test_build_filename(G_TEST_DIST, "data", "megatron_scripts",
                                                "train_t5_220m_distributed.sh", NULL);
  memset(&job, 0, sizeof job);
  g_assert_false(ptsim_megatron_args_parse_file(path, &job, NULL, &error));
  g_assert_nonnull(strstr(error->message, "pretrain_t5.py trains another kind of model"));
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/megatron-flags/table", test_table);
  g_test_add_func("/megatron-flags/launcher", test_launcher);
  g_test_add_func("/megatron-flags/pipeline-layout", test_pipeline_layout);
  g_test_add_func("/megatron-flags/pipeline-layout-vstages", test_pipeline_layout_vstages);
  g_test_add_func("/megatron-flags/vocab", test_vocab);
  g_test_add_func("/megatron-flags/example-llama3-8b-fp8", test_example_llama3_8b_fp8);
  g_test_add_func("/megatron-flags/example-gpt3-175b", test_example_gpt3_175b);
  g_test_add_func("/megatron-flags/example-mixtral-t5", test_example_mixtral);
  return g_test_run();
}
