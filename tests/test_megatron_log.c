/* test_megatron_log.c — validate/megatron_log.c on the five real Megatron-LM
 * log excerpts (tests/data/megatron_logs/0N_*.log, verbatim), a hand-made
 * arguments block of a Llama-3-8B launch, and malformed logs built here
 * (truncated at every byte, binary garbage, NUL bytes, 10 MB lines, empty).
 *
 * Numbers are checked EXACTLY against what the log prints: the reader uses
 * strtod, so "5630.1" must come back as the double 5630.1. */
#include <math.h>
#include <string.h>

#include <glib.h>

#include "config.h"
#include "job_validate.h"
#include "megatron_args.h"
#include "lifetimes.h"
#include "megatron_log.h"
#include "megatron_log_date.h"
#include "plan_of.h"

#define MIB (1024.0 * 1024.0)
#define GIB (1024.0 * MIB)

/* ---- helpers ---- */

static char *fixture(const char *name) {
  return g_test_build_filename(G_TEST_DIST, "data", "megatron_logs", name, NULL);
}

static PtsimMegatronLog *read_fixture(const char *name) {
  g_autofree char *path = fixture(name);
  g_autoptr(GError) error = NULL;
  PtsimMegatronLog *log = ptsim_megatron_log_read_file(path, &error);
  g_assert_no_error(error);
  g_assert_nonnull(log);
  for (guint k = 0; k < log->warnings->len; k++)
    g_test_message("%s", (const char *)log->warnings->pdata[k]);
  return log;
}

static PtsimMegatronLog *parse_text(const char *text) {
  return ptsim_megatron_log_parse(text, strlen(text), "inline.log");
}

static const PtsimLogIteration *iter(const PtsimMegatronLog *log, guint k) {
  g_assert_cmpuint(k, <, log->iterations->len);
  return &g_array_index(log->iterations, PtsimLogIteration, k);
}

static const PtsimLogMemory *mem(const PtsimMegatronLog *log, guint k) {
  g_assert_cmpuint(k, <, log->memory->len);
  return &g_array_index(log->memory, PtsimLogMemory, k);
}

/* ---- the real excerpts ---- */

static void test_excerpt1_2020(void) {
  g_test_summary("2020 format: old 'after 5 iterations memory (MB)' line, "
                 "no global batch size; warm-up drops the 16.5 s first "
                 "iteration");
  g_autoptr(PtsimMegatronLog) log = read_fixture("01_issue60_gpt2_2020.log");
  g_assert_cmpint(log->lines, ==, 5);
  g_assert_cmpuint(log->iterations->len, ==, 2);
  g_assert_cmpint(iter(log, 0)->iteration, ==, 5);
  g_assert_cmpint(iter(log, 0)->train_iters, ==, 120000);
  g_assert_cmpfloat(iter(log, 0)->elapsed_ms, ==, 16491.5);
  g_assert_true(isnan(iter(log, 0)->tflops_per_gpu));
  g_assert_cmpint(iter(log, 0)->gbs, ==, -1);
  g_assert_cmpint(iter(log, 0)->skipped, ==, 5);
  g_assert_cmpint(iter(log, 0)->nan_iterations, ==, 0);
  g_assert_true(isnan(iter(log, 0)->timestamp_s));
  g_assert_cmpint(iter(log, 0)->line, ==, 1);
  g_assert_cmpint(iter(log, 1)->iteration, ==, 10);
  g_assert_cmpfloat(iter(log, 1)->elapsed_ms, ==, 1993.9);
  g_assert_cmpint(iter(log, 1)->line, ==, 4);

  g_assert_cmpuint(log->memory->len, ==, 1);
  g_assert_cmpint(mem(log, 0)->rank, ==, -1);
  g_assert_cmpint(mem(log, 0)->after_iterations, ==, 5);
  g_assert_cmpfloat(mem(log, 0)->allocated_mb, ==, 10250.5693359375);
  g_assert_cmpfloat(mem(log, 0)->max_allocated_mb, ==, 12606.06201171875);
  g_assert_cmpfloat(mem(log, 0)->reserved_mb, ==, 17482.0);
  g_assert_cmpfloat(mem(log, 0)->max_reserved_mb, ==, 17482.0);
  g_assert_cmpint(mem(log, 0)->line, ==, 2);

  g_assert_false(log->oom);
  g_assert_false(log->args_found);
  g_assert_cmpuint(log->warnings->len, ==, 0);

  PtsimMegatronLogSummary s;
  ptsim_megatron_log_summarize(log, &s);
  g_assert_cmpint(s.iterations_logged, ==, 2);
  g_assert_cmpint(s.iterations_used, ==, 1);
  g_assert_cmpint(s.first_used, ==, 10);
  g_assert_cmpfloat(s.step_time_ms, ==, 1993.9);
  g_assert_cmpfloat_with_epsilon(s.step_time_s, 1.9939, 1e-12);
  g_assert_true(isnan(s.tflops_per_gpu));
  g_assert_cmpfloat(s.max_allocated_mb, ==, 12606.06201171875);
  g_assert_cmpfloat(s.max_reserved_mb, ==, 17482.0);
}

static void test_excerpt2_2024(void) {
  g_test_summary("2024 format: [Rank 1] (after 1 iterations) memory, "
                 "timestamps, TFLOP/s/GPU, a line cut by the store");
  g_autoptr(PtsimMegatronLog) log = read_fixture("02_issue756_mixtral_2024.log");
  g_assert_cmpuint(log->memory->len, ==, 1);
  g_assert_cmpint(mem(log, 0)->rank, ==, 1);
  g_assert_cmpint(mem(log, 0)->after_iterations, ==, 1);
  g_assert_cmpfloat(mem(log, 0)->allocated_mb, ==, 54250.97802734375);
  g_assert_cmpfloat(mem(log, 0)->max_allocated_mb, ==, 54250.98583984375);
  g_assert_cmpfloat(mem(log, 0)->reserved_mb, ==, 61480.0);
  g_assert_cmpfloat(mem(log, 0)->max_reserved_mb, ==, 61480.0);

  g_assert_cmpuint(log->iterations->len, ==, 3);
  const PtsimLogIteration *a = iter(log, 0);
  g_assert_cmpint(a->iteration, ==, 2);
  g_assert_cmpint(a->train_iters, ==, 100);
  g_assert_cmpfloat(a->elapsed_ms, ==, 5630.1);
  g_assert_cmpfloat(a->tflops_per_gpu, ==, 231.9);
  g_assert_cmpint(a->gbs, ==, 128);
  g_assert_cmpint(a->consumed_samples, ==, 256);
  g_assert_cmpint(a->skipped, ==, 0);
  g_assert_cmpint(a->nan_iterations, ==, 0);
  /* [2024-04-06 02:55:45] */
  g_assert_cmpfloat(a->timestamp_s, ==, 1712372145.0);
  g_assert_cmpfloat(iter(log, 1)->elapsed_ms, ==, 5410.6);
  g_assert_cmpfloat(iter(log, 1)->tflops_per_gpu, ==, 241.4);
  g_assert_cmpfloat(iter(log, 1)->timestamp_s, ==, 1712372150.0);
  /* iteration 4 is cut inside "number o[f skipped iterations]": the
   * fields before the cut are read, the cut one is not. */
  const PtsimLogIteration *c = iter(log, 2);
  g_assert_cmpint(c->iteration, ==, 4);
  g_assert_cmpfloat(c->elapsed_ms, ==, 5364.1);
  g_assert_cmpfloat(c->tflops_per_gpu, ==, 243.5);
  g_assert_cmpint(c->gbs, ==, 128);
  g_assert_cmpint(c->skipped, ==, -1);
  g_assert_cmpint(c->nan_iterations, ==, -1);

  PtsimMegatronLogSummary s;
  ptsim_megatron_log_summarize(log, &s);
  g_assert_cmpint(s.iterations_used, ==, 2);
  g_assert_cmpint(s.first_used, ==, 3);
  g_assert_cmpfloat(s.step_time_ms, ==, 0.5 * (5410.6 + 5364.1));
  g_assert_cmpfloat(s.tflops_per_gpu, ==, 0.5 * (241.4 + 243.5));
  g_assert_cmpint(s.gbs, ==, 128);
}

static void test_excerpt3_2026(void) {
  g_test_summary("2026 format: microsecond timestamp without a leading "
                 "blank, [Rank 0] (after 20 iterations) memory with 2 "
                 "decimals; one logged iteration leaves no steady state");
  g_autoptr(PtsimMegatronLog) log = read_fixture("03_pr5662_2026.log");
  g_assert_cmpuint(log->iterations->len, ==, 1);
  const PtsimLogIteration *a = iter(log, 0);
  g_assert_cmpint(a->iteration, ==, 20);
  g_assert_cmpint(a->train_iters, ==, 20);
  g_assert_cmpfloat(a->elapsed_ms, ==, 744.0);
  g_assert_cmpint(a->gbs, ==, 16);
  g_assert_cmpint(a->consumed_samples, ==, 320);
  g_assert_true(isnan(a->tflops_per_gpu));
  /* [2026-07-10 05:46:31.627699] */
  g_assert_cmpfloat_with_epsilon(a->timestamp_s, 1783662391.627699, 1e-5);
  g_assert_cmpfloat(a->timestamp_s - 1783662391.0, !=, 0.0);

  g_assert_cmpuint(log->memory->len, ==, 1);
  g_assert_cmpint(mem(log, 0)->rank, ==, 0);
  g_assert_cmpint(mem(log, 0)->after_iterations, ==, 20);
  g_assert_cmpfloat(mem(log, 0)->allocated_mb, ==, 3270.16);
  g_assert_cmpfloat(mem(log, 0)->max_allocated_mb, ==, 5670.39);
  g_assert_cmpfloat(mem(log, 0)->reserved_mb, ==, 6406.00);
  g_assert_cmpfloat(mem(log, 0)->max_reserved_mb, ==, 6406.00);

  PtsimMegatronLogSummary s;
  ptsim_megatron_log_summarize(log, &s);
  g_assert_cmpint(s.iterations_logged, ==, 1);
  g_assert_cmpint(s.iterations_used, ==, 0);
  g_assert_cmpint(s.first_used, ==, -1);
  g_assert_true(isnan(s.step_time_ms));
  g_assert_true(isnan(s.step_time_s));
  g_assert_cmpint(s.gbs, ==, 16);
  g_assert_cmpfloat(s.max_allocated_mb, ==, 5670.39);
}

static void test_excerpt4_2022(void) {
  g_test_summary("2022 format among setup lines and timers; the second "
                 "iteration line is cut by the store");
  g_autoptr(PtsimMegatronLog) log = read_fixture("04_nccl743_bert_2022.log");
  g_assert_cmpint(log->lines, ==, 8);
  g_assert_cmpuint(log->iterations->len, ==, 2);
  g_assert_cmpint(iter(log, 0)->iteration, ==, 10);
  g_assert_cmpint(iter(log, 0)->train_iters, ==, 1000000);
  g_assert_cmpfloat(iter(log, 0)->elapsed_ms, ==, 356.2);
  g_assert_cmpint(iter(log, 0)->gbs, ==, 4);
  g_assert_cmpint(iter(log, 0)->consumed_samples, ==, 40);
  g_assert_cmpint(iter(log, 0)->skipped, ==, 10);
  g_assert_cmpint(iter(log, 0)->line, ==, 6);
  g_assert_cmpfloat(iter(log, 1)->elapsed_ms, ==, 140.6);
  g_assert_cmpint(iter(log, 1)->gbs, ==, 4);
  g_assert_cmpint(iter(log, 1)->skipped, ==, -1); /* "number of skipp" cut */
  g_assert_cmpuint(log->memory->len, ==, 0);
  PtsimMegatronLogSummary s;
  ptsim_megatron_log_summarize(log, &s);
  g_assert_cmpfloat(s.step_time_ms, ==, 140.6);
  g_assert_cmpint(s.first_used, ==, 20);
  g_assert_true(isnan(s.max_allocated_mb));
}

static void test_excerpt5_2023(void) {
  g_test_summary("2023 fork: four steady iterations, median of the last "
                 "three; consumed samples advance by the batch size");
  g_autoptr(PtsimMegatronLog) log = read_fixture("05_epfllm11_2023.log");
  g_assert_cmpuint(log->iterations->len, ==, 4);
  const double elapsed[] = {126995.3, 125553.7, 127804.5, 130554.9};
  for (guint k = 0; k < 4; k++) {
    g_assert_cmpint(iter(log, k)->iteration, ==, 182 + k);
    g_assert_cmpint(iter(log, k)->train_iters, ==, 250000);
    g_assert_cmpfloat(iter(log, k)->elapsed_ms, ==, elapsed[k]);
    g_assert_cmpint(iter(log, k)->gbs, ==, 1024);
    g_assert_cmpint(iter(log, k)->consumed_samples, ==, 186368 + 1024 * (int64_t)k);
  }
  PtsimMegatronLogSummary s;
  ptsim_megatron_log_summarize(log, &s);
  g_assert_cmpint(s.iterations_used, ==, 3);
  g_assert_cmpfloat(s.step_time_ms, ==, 127804.5);
}

/* ---- the arguments block ---- */

static void test_args_llama3_8b(void) {
  g_test_summary("a hand-made arguments block of a Llama-3-8B launch "
                 "reconstructs the same model and layout as its command "
                 "line, and validates as TP2 PP2 DP4 on 16 GPUs");
  g_autoptr(PtsimMegatronLog) log = read_fixture("args_llama3_8b_handmade.log");
  g_assert_true(log->args_found);
  g_assert_true(log->args_complete);
  g_assert_cmpint(log->args_line, ==, 1);
  g_assert_no_error(log->args_error);
  g_assert_true(log->args_ok);
  g_assert_cmpstr(ptsim_megatron_log_arg(log, "data_path"), ==,
                  "['/data/my corpus_text_document']");
  g_assert_cmpstr(ptsim_megatron_log_arg(log, "lr"), ==, "0.0003");
  g_assert_null(ptsim_megatron_log_arg(log, "no_such_arg"));
  g_assert_cmpuint(log->iterations->len, ==, 0);

  const PtsimModel *m = &log->job.model;
  g_assert_cmpint(m->num_layers, ==, 32);
  g_assert_cmpint(m->hidden_size, ==, 4096);
  g_assert_cmpint(m->ffn_hidden_size, ==, 14336);
  g_assert_cmpint(m->num_attention_heads, ==, 32);
  g_assert_cmpint(m->num_query_groups, ==, 8);
  g_assert_cmpint(m->vocab_size, ==, 128256);
  g_assert_cmpint(m->activation, ==, PTSIM_ACTIVATION_SWIGLU);
  g_assert_cmpint(m->norm, ==, PTSIM_NORM_RMSNORM);
  g_assert_cmpint(m->tied_embeddings, ==, 0);
  g_assert_cmpint(m->bias, ==, 0);

  const PtsimLayout *l = &log->job.layout;
  const PtsimSettings *run = &log->job.settings;
  const PtsimProvenance *src = &log->job.source;
  g_assert_cmpint(l->gpus, ==, 16);
  g_assert_cmpint(l->tp, ==, 2);
  g_assert_cmpint(l->pp, ==, 2);
  g_assert_cmpint(l->cp, ==, 1);
  g_assert_cmpint(l->vp, ==, 1);
  g_assert_cmpint(l->mbs, ==, 1);
  g_assert_cmpint(l->gbs, ==, 128);
  g_assert_cmpint(l->seq, ==, 8192);
  g_assert_cmpint(l->sp, ==, 1);
  g_assert_cmpint(l->distributed_optimizer, ==, 1);
  g_assert_cmpint(run->recompute, ==, PTSIM_RECOMPUTE_FULL);
  g_assert_cmpint(run->recompute_method, ==, PTSIM_RECOMPUTE_METHOD_UNIFORM);
  g_assert_cmpint(run->recompute_num_layers, ==, 1);
  g_assert_cmpint(run->precision, ==, PTSIM_PRECISION_BF16);
  g_assert_cmpfloat(src->attention_dropout, ==, 0.0);
  g_assert_cmpfloat(src->hidden_dropout, ==, 0.0);

  /* Same as the command line it stands for. */
  g_autofree char *sh = g_test_build_filename(G_TEST_DIST, "data", "megatron_llama3_8b.sh", NULL);
  PtsimJob j2;
  memset(&j2, 0, sizeof j2);
  j2.layout.gpus = 16;
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_megatron_args_parse_file(sh, &j2, NULL, &error));
  g_assert_no_error(error);
  g_assert_cmpint(memcmp(m, &j2.model, sizeof j2.model), ==, 0);
  g_assert_cmpint(run->fp32_grad_accumulation, ==, j2.settings.fp32_grad_accumulation);
  g_assert_cmpint(run->flash_attention, ==, j2.settings.flash_attention);
  g_assert_cmpint(l->schedule, ==, j2.layout.schedule);

  PtsimJob job = log->job; /* its hw zero until loaded */
  g_assert_true(ptsim_hardware_load("h100-80g", &job.hw, &error));
  g_assert_no_error(error);
  g_assert_true(ptsim_job_validate(&job, &error));
  g_assert_no_error(error);
  g_assert_cmpint(job.layout.dp, ==, 4);
  g_assert_cmpint(stage_layers_of(&job, 0), ==, 16);
  g_assert_cmpint(stage_layers_of(&job, 1), ==, 16);
}

static void test_args_variants(void) {
  g_test_summary("launcher prefixes on the block, a block cut before its "
                 "end, virtual stages, and a block without a vocabulary");
  g_autoptr(PtsimMegatronLog)
      a = parse_text("[default0]:------------------------ arguments ------------------------\n"
                     "[default0]:  hidden_size ..................................... 1024\n"
                     "[default0]:  num_attention_heads ............................. 16\n"
                     "[default0]:  num_layers ...................................... 24\n"
                     "[default0]:  num_layers_per_virtual_pipeline_stage ........... 3\n"
                     "[default0]:  padded_vocab_size ............................... 51200\n"
                     "[default0]:  pipeline_model_parallel_size .................... 4\n"
                     "[default0]:  virtual_pipeline_model_parallel_size ............ 2\n"
                     "[default0]:  world_size ...................................... 8\n"
                     "[default0]:  bf16 ............................................ True\n"
                     "[default0]:-------------------- end of arguments ---------------------\n");
  g_assert_true(a->args_ok);
  g_assert_true(a->args_complete);
  g_assert_cmpint(a->job.model.num_layers, ==, 24);
  g_assert_cmpint(a->job.model.vocab_size, ==, 51200);
  g_assert_cmpint(a->job.layout.pp, ==, 4);
  g_assert_cmpint(a->job.layout.vp, ==, 2);
  g_assert_cmpint(a->job.layout.gpus, ==, 8);

  /* cut before "end of arguments", with an iteration line after it */
  g_autoptr(PtsimMegatronLog)
      b = parse_text("------------------------ arguments ------------------------\n"
                     "  bf16 ............................................ True\n"
                     "  hidden_size ..................................... 1024\n"
                     "  num_attention_heads ............................. 16\n"
                     "  num_layers ...................................... 24\n"
                     "  vocab_size ...................................... 50257\n"
                     " iteration       10/     100 | elapsed time per iteration (ms): 12.5 |\n"
                     "  world_size ................................");
  g_assert_true(b->args_found);
  g_assert_false(b->args_complete);
  g_assert_true(b->args_ok);
  g_assert_cmpint(b->job.model.vocab_size, ==, 50304); /* padded to 128 */
  g_assert_cmpint(b->job.layout.gpus, ==, 0);          /* "world_size ...." */
  g_assert_cmpuint(b->iterations->len, ==, 1);
  g_assert_cmpfloat(iter(b, 0)->elapsed_ms, ==, 12.5);

  /* no vocabulary and no tokenizer: pretrain_gpt.py's GPT2BPETokenizer,
   * 50257 tokens padded to a multiple of 128 x tp */
  g_autoptr(PtsimMegatronLog)
      c = parse_text("some setup line\n"
                     "------------------------ arguments ------------------------\n"
                     "  hidden_size ..................................... 1024\n"
                     "  num_attention_heads ............................. 16\n"
                     "  num_layers ...................................... 24\n"
                     "  padded_vocab_size ............................... None\n"
                     "  tensor_model_parallel_size ...................... 2\n"
                     "  vocab_size ...................................... None\n"
                     "  bf16 ............................................ True\n"
                     "-------------------- end of arguments ---------------------\n");
  g_assert_true(c->args_found);
  g_assert_true(c->args_ok);
  g_assert_cmpint(c->job.model.vocab_size, ==, 50432);
  /* a tokenizer whose size is not known: an error saying so */
  g_autoptr(PtsimMegatronLog)
      c2 = parse_text("some setup line\n"
                      "------------------------ arguments ------------------------\n"
                      "  hidden_size ..................................... 1024\n"
                      "  num_attention_heads ............................. 16\n"
                      "  num_layers ...................................... 24\n"
                      "  tokenizer_type .................................. NullTokenizer\n"
                      "  vocab_size ...................................... None\n"
                      "  bf16 ............................................ True\n"
                      "-------------------- end of arguments ---------------------\n");
  g_assert_false(c2->args_ok);
  g_assert_error(c2->args_error, PTSIM_MEGATRON_LOG_ERROR, PTSIM_MEGATRON_LOG_ERROR_ARGS);
  g_test_message("%s", c2->args_error->message);
  g_assert_true(g_str_has_prefix(c2->args_error->message, "inline.log:2: "));
  g_assert_nonnull(strstr(c2->args_error->message, "vocab size unknown: tokenizer NullTokenizer"));

  g_autoptr(PtsimMegatronLog)
      d = parse_text("------------------------ arguments ------------------------\n"
                     "  num_layers ...................................... 24\n"
                     "  world_size ...................................... many\n"
                     "  bf16 ............................................ True\n"
                     "-------------------- end of arguments ---------------------\n");
  g_assert_false(d->args_ok);
  /* the line of the bad value, not of the block's header */
  g_assert_true(g_str_has_prefix(d->args_error->message, "inline.log:3: "));
  g_assert_nonnull(strstr(d->args_error->message, "world_size 'many'"));

  g_autoptr(PtsimMegatronLog)
      e = parse_text("------------------------ arguments ------------------------\n"
                     "  hidden_size ..................................... 1024\n"
                     "  num_attention_heads ............................. 16\n"
                     "  num_layers ...................................... 4611686018427387904\n"
                     "  vocab_size ...................................... 50257\n"
                     "  bf16 ............................................ True\n"
                     "-------------------- end of arguments ---------------------\n");
  g_assert_false(e->args_ok);
  g_test_message("%s", e->args_error->message);
  g_assert_true(g_str_has_prefix(e->args_error->message, "inline.log:4: "));
  g_assert_nonnull(strstr(e->args_error->message, "--num-layers '4611686018427387904'"));
}

/* ---- out of memory ---- */

static void test_oom(void) {
  g_test_summary("torch.OutOfMemoryError / torch.cuda.OutOfMemoryError / "
                 "RuntimeError: CUDA out of memory, with the request size");
  g_autoptr(PtsimMegatronLog)
      a = parse_text(" iteration        1/     100 | elapsed time per iteration (ms): 9.0 |\n"
                     "Traceback (most recent call last):\n"
                     "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
                     "GPU 0 has a total capacity of 79.11 GiB of which 1.06 GiB is free.\n"
                     "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
                     "4.00 GiB.\n");
  g_assert_true(a->oom);
  g_assert_cmpint(a->oom_count, ==, 2);
  g_assert_cmpint(a->oom_line, ==, 3);
  g_assert_cmpfloat(a->oom_request_bytes, ==, 2.0 * 1073741824.0);
  PtsimMegatronLogSummary s;
  ptsim_megatron_log_summarize(a, &s);
  g_assert_true(s.oom);

  g_autoptr(PtsimMegatronLog)
      b = parse_text("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate "
                     "20.00 MiB (GPU 0; 15.90 GiB total capacity; 14.2 GiB already "
                     "allocated)\n");
  g_assert_cmpfloat(b->oom_request_bytes, ==, 20.0 * 1048576.0);
  g_autoptr(PtsimMegatronLog)
      c = parse_text("RuntimeError: CUDA out of memory. Tried to allocate 512 "
                     "bytes\n");
  g_assert_cmpfloat(c->oom_request_bytes, ==, 512.0);
  g_autoptr(PtsimMegatronLog) d = parse_text("torch.OutOfMemoryError: out of memory on device 0\n");
  g_assert_true(d->oom);
  g_assert_true(isnan(d->oom_request_bytes));
  g_autoptr(PtsimMegatronLog) e = parse_text("CUDA out of memory. Tried to allocate lots\n");
  g_assert_true(e->oom);
  g_assert_true(isnan(e->oom_request_bytes));
  g_autoptr(PtsimMegatronLog) f = parse_text("all fine\n");
  g_assert_false(f->oom);
  g_assert_cmpint(f->oom_line, ==, 0);
}

/* ---- malformed logs ---- */

static void test_truncated_everywhere(void) {
  g_test_summary("an iteration line and a memory line cut at every byte: "
                 "each field is either exact or absent, never a partial "
                 "number");
  g_autofree char *path = fixture("02_issue756_mixtral_2024.log");
  g_autofree char *text = NULL;
  gsize len = 0;
  g_assert_true(g_file_get_contents(path, &text, &len, NULL));
  char *nl = strchr(text, '\n');
  g_assert_nonnull(nl);
  const char *memory_line = text;
  size_t memory_len = (size_t)(nl - text);
  const char *iter_line = nl + 1;
  size_t iter_len = (size_t)(strchr(iter_line, '\n') - iter_line);

  for (size_t cut = 0; cut <= iter_len; cut++) {
    g_autoptr(PtsimMegatronLog) log = ptsim_megatron_log_parse(iter_line, cut, "cut.log");
    g_assert_cmpuint(log->iterations->len, <=, 1);
    if (log->iterations->len == 0) continue;
    const PtsimLogIteration *it = iter(log, 0);
    g_assert_cmpint(it->iteration, ==, 2);
    g_assert_true(isnan(it->elapsed_ms) || it->elapsed_ms == 5630.1);
    g_assert_true(isnan(it->tflops_per_gpu) || it->tflops_per_gpu == 231.9);
    g_assert_true(it->gbs == -1 || it->gbs == 128);
    g_assert_true(it->consumed_samples == -1 || it->consumed_samples == 256);
  }
  for (size_t cut = 0; cut <= memory_len; cut++) {
    /* with the store's mark: the cut field is dropped too */
    g_autofree char *marked = g_strdup_printf("%.*s [...truncated by store]", (int)cut,
                                              memory_line);
    g_autoptr(PtsimMegatronLog) log = parse_text(marked);
    g_assert_cmpuint(log->memory->len, <=, 1);
    if (log->memory->len == 0) continue;
    const PtsimLogMemory *m = mem(log, 0);
    g_assert_cmpint(m->rank, ==, 1);
    g_assert_true(isnan(m->allocated_mb) || m->allocated_mb == 54250.97802734375);
    g_assert_true(isnan(m->max_allocated_mb) || m->max_allocated_mb == 54250.98583984375);
    g_assert_true(isnan(m->reserved_mb) || m->reserved_mb == 61480.0);
    g_assert_true(isnan(m->max_reserved_mb) || m->max_reserved_mb == 61480.0);
    /* plain cut: no crash; the last value may be partial (nothing in the
     * format tells), the ones before it are exact */
    g_autoptr(PtsimMegatronLog) plain = ptsim_megatron_log_parse(memory_line, cut, "cut.log");
    g_assert_cmpuint(plain->memory->len, <=, 1);
  }
  /* the cut iteration of excerpt 4 says why its field was not read */
  g_autoptr(PtsimMegatronLog)
      w = parse_text(" iteration 5/ 10 | elapsed time per iteration (ms): 56");
  g_assert_cmpuint(w->iterations->len, ==, 1);
  g_assert_true(isnan(iter(w, 0)->elapsed_ms));
  g_assert_cmpuint(w->warnings->len, ==, 1);
  g_assert_true(g_str_has_prefix(w->warnings->pdata[0], "inline.log:1: "));
}

static void test_bad_values(void) {
  g_test_summary("values that are not numbers are warnings naming "
                 "file:line and read as absent");
  g_autoptr(PtsimMegatronLog)
      log = parse_text("ok\n"
                       " iteration 3/ 10 | elapsed time per iteration (ms): 12abc | "
                       "throughput per GPU (TFLOP/s/GPU): nan | global batch size: -x |\n"
                       "[Rank 2] memory (MB) | allocated: lots | max allocated: 5.5\n"
                       "memory (MB) | nothing here\n");
  g_assert_cmpuint(log->iterations->len, ==, 1);
  g_assert_true(isnan(iter(log, 0)->elapsed_ms));
  g_assert_true(isnan(iter(log, 0)->tflops_per_gpu));
  g_assert_cmpint(iter(log, 0)->gbs, ==, -1);
  g_assert_cmpuint(log->memory->len, ==, 1);
  g_assert_cmpint(mem(log, 0)->rank, ==, 2);
  g_assert_cmpint(mem(log, 0)->after_iterations, ==, -1);
  g_assert_true(isnan(mem(log, 0)->allocated_mb));
  g_assert_cmpfloat(mem(log, 0)->max_allocated_mb, ==, 5.5);
  /* a TFLOP/s of "nan" is a number no run measured: the log's value_error,
   * not a warning */
  g_assert_cmpuint(log->warnings->len, ==, 4);
  for (guint k = 0; k < log->warnings->len; k++)
    g_test_message("%s", (const char *)log->warnings->pdata[k]);
  g_assert_true(g_str_has_prefix(log->warnings->pdata[0], "inline.log:2: "));
  g_assert_true(g_str_has_prefix(log->warnings->pdata[2], "inline.log:3: "));
  g_assert_true(g_str_has_prefix(log->warnings->pdata[3], "inline.log:4: "));
  g_assert_error(log->value_error, PTSIM_MEGATRON_LOG_ERROR, PTSIM_MEGATRON_LOG_ERROR_VALUE);
  g_assert_true(g_str_has_prefix(log->value_error->message,
                                 "inline.log:2: throughput per GPU (TFLOP/s/GPU) 'nan'"));
}

static void test_measured_ranges(void) {
  g_test_summary("measured values that are numbers but no run's (inf, -5 ms, 1e300, -inf MB) "
                 "are the log's value_error naming file:line, and read as absent; the first "
                 "one is kept");
  g_autoptr(PtsimMegatronLog)
      log = parse_text(" iteration 3/ 10 | elapsed time per iteration (ms): 1e300 |\n"
                       " iteration 4/ 10 | elapsed time per iteration (ms): -5 |\n"
                       "[Rank 0] memory (MB) | allocated: 1.0 | max allocated: -inf\n");
  g_assert_cmpuint(log->iterations->len, ==, 2);
  g_assert_true(isnan(iter(log, 0)->elapsed_ms));
  g_assert_true(isnan(iter(log, 1)->elapsed_ms));
  g_assert_cmpuint(log->memory->len, ==, 1);
  g_assert_true(isnan(mem(log, 0)->max_allocated_mb));
  g_assert_cmpfloat(mem(log, 0)->allocated_mb, ==, 1.0);
  g_assert_error(log->value_error, PTSIM_MEGATRON_LOG_ERROR, PTSIM_MEGATRON_LOG_ERROR_VALUE);
  g_assert_true(g_str_has_prefix(log->value_error->message,
                                 "inline.log:1: elapsed time per iteration (ms) '1e300' is not "
                                 "allowed: expected a finite number in (0, 1e+09]"));
  /* the edges: 1e9 ms and 0 TFLOP/s are allowed */
  g_autoptr(PtsimMegatronLog)
      edge = parse_text(" iteration 3/ 10 | elapsed time per iteration (ms): 1e9 | "
                        "throughput per GPU (TFLOP/s/GPU): 0 |\n");
  g_assert_null(edge->value_error);
  g_assert_cmpfloat(iter(edge, 0)->elapsed_ms, ==, 1e9);
}

static void test_garbage(void) {
  g_test_summary("binary garbage with NUL bytes around real lines: the "
                 "real lines are still read, nothing crashes");
  GRand *rand = g_rand_new_with_seed(42);
  GString *buf = g_string_new(NULL);
  for (int k = 0; k < 1 << 20; k++) g_string_append_c(buf, (char)g_rand_int_range(rand, 0, 256));
  g_string_append(buf, "\n iteration 7/ 9 | elapsed time per iteration "
                       "(ms): 42.5 | global batch size: 8 |\n");
  for (int k = 0; k < 1 << 16; k++) g_string_append_c(buf, (char)g_rand_int_range(rand, 0, 256));
  /* NULs inside a real line: read as '?', the fields still parse */
  static const char with_nul[] =
      "\n iteration 8/ 9 |\0\0| elapsed time per iteration (ms): 41.5 |\n";
  g_string_append_len(buf, with_nul, sizeof with_nul - 1);
  g_rand_free(rand);
  g_autoptr(PtsimMegatronLog) log = ptsim_megatron_log_parse(buf->str, buf->len, "garbage.log");
  gboolean found7 = FALSE, found8 = FALSE;
  for (guint k = 0; k < log->iterations->len; k++) {
    const PtsimLogIteration *it = iter(log, k);
    if (it->iteration == 7 && it->train_iters == 9) {
      g_assert_cmpfloat(it->elapsed_ms, ==, 42.5);
      g_assert_cmpint(it->gbs, ==, 8);
      found7 = TRUE;
    }
    if (it->iteration == 8 && it->train_iters == 9) {
      g_assert_cmpfloat(it->elapsed_ms, ==, 41.5);
      found8 = TRUE;
    }
  }
  g_assert_true(found7);
  g_assert_true(found8);
  g_assert_cmpuint(log->warnings->len, <=, 1000);
  g_string_free(buf, TRUE);
}

static void test_huge_lines(void) {
  g_test_summary("a 10 MB single line is skipped and counted; a 900 KB "
                 "line of near-matches is read in linear time");
  gsize n = 10u << 20;
  g_autofree char *big = g_malloc(n);
  memset(big, 'x', n);
  gint64 t0 = g_get_monotonic_time();
  g_autoptr(PtsimMegatronLog) a = ptsim_megatron_log_parse(big, n, "big.log");
  g_assert_cmpint(a->lines, ==, 1);
  g_assert_cmpint(a->long_lines, ==, 1);
  g_assert_cmpuint(a->iterations->len, ==, 0);

  /* just under the limit: patterns that start to match and fail */
  GString *s = g_string_new(NULL);
  while (s->len < 900000)
    g_string_append(s, "iteration 1/x [Rank 1 after 3 memory (MB) | "
                       "allocated: 1 | [2024-01-01 00:00 iteration 12");
  g_string_append(s, "\n");
  g_autoptr(PtsimMegatronLog) b = ptsim_megatron_log_parse(s->str, s->len, "near.log");
  g_assert_cmpint(b->long_lines, ==, 0);
  g_assert_cmpuint(b->memory->len, ==, 1);
  g_string_free(s, TRUE);

  /* many lines, each a near-match: linear overall */
  GString *many = g_string_new(NULL);
  for (int k = 0; k < 200000; k++)
    g_string_append(many, " iteration 5/ 10 | elapsed time per iteration "
                          "(ms): 1.5 |\n");
  g_autoptr(PtsimMegatronLog) c = ptsim_megatron_log_parse(many->str, many->len, "many.log");
  g_assert_cmpuint(c->iterations->len, ==, 200000);
  g_string_free(many, TRUE);
  gint64 elapsed_us = g_get_monotonic_time() - t0;
  g_test_message("huge-line inputs took %.3f s", (double)elapsed_us / 1e6);
}

static void test_empty_and_missing(void) {
  g_test_summary("an empty log is an empty result; a missing file is a "
                 "GError naming it");
  g_autoptr(PtsimMegatronLog) a = ptsim_megatron_log_parse("", 0, "e.log");
  g_assert_cmpint(a->lines, ==, 0);
  g_assert_cmpuint(a->iterations->len, ==, 0);
  g_assert_cmpuint(a->memory->len, ==, 0);
  g_assert_false(a->args_found);
  g_assert_false(a->oom);
  PtsimMegatronLogSummary s;
  ptsim_megatron_log_summarize(a, &s);
  g_assert_cmpint(s.iterations_logged, ==, 0);
  g_assert_true(isnan(s.step_time_ms));
  g_assert_true(isnan(s.max_reserved_mb));
  g_assert_cmpint(s.gbs, ==, -1);

  g_autoptr(PtsimMegatronLog) nl = parse_text("\n\n\r\n");
  g_assert_cmpint(nl->lines, ==, 3);

  g_autoptr(GError) error = NULL;
  g_autofree char *path = fixture("no_such.log");
  PtsimMegatronLog *none = ptsim_megatron_log_read_file(path, &error);
  g_assert_null(none);
  g_assert_error(error, PTSIM_MEGATRON_LOG_ERROR, PTSIM_MEGATRON_LOG_ERROR_NOT_FOUND);
  g_assert_nonnull(strstr(error->message, "no_such.log"));
}

static void test_warmup_rule(void) {
  g_test_summary("warm-up: the first logged iteration and iterations 1-2 "
                 "are dropped; skipped/NaN-counted iterations are kept");
  g_autoptr(PtsimMegatronLog)
      log = parse_text(" iteration        1/ 10 | elapsed time per iteration (ms): 900.0 |\n"
                       " iteration        2/ 10 | elapsed time per iteration (ms): 300.0 |\n"
                       " iteration        3/ 10 | elapsed time per iteration (ms): 100.0 | "
                       "number of skipped iterations:   1 | number of nan iterations:   1 |\n"
                       " iteration        4/ 10 | elapsed time per iteration (ms): 120.0 |\n"
                       " iteration        5/ 10 | elapsed time per iteration (ms): 110.0 |\n");
  PtsimMegatronLogSummary s;
  ptsim_megatron_log_summarize(log, &s);
  g_assert_cmpint(s.iterations_used, ==, 3);
  g_assert_cmpint(s.first_used, ==, 3);
  g_assert_cmpfloat(s.step_time_ms, ==, 110.0);
}

static void test_prefixes(void) {
  g_test_summary("launcher labels before the timestamp and the memory line "
                 "(torchrun --tee, srun --label) do not hide the fields");
  g_autoptr(PtsimMegatronLog)
      log = parse_text("[default7]: [2024-04-06 02:55:45] iteration        2/     100 | "
                       "elapsed time per iteration (ms): 5630.1 | global batch size:   128 |\n"
                       "7:  iteration        3/     100 | elapsed time per iteration (ms): "
                       "5410.6 |\n"
                       "[default1]:[Rank 1] (after 3 iterations) memory (MB) | allocated: 1.5"
                       " | max allocated: 2.5 | reserved: 4.0 | max reserved: 4.0\n");
  g_assert_cmpuint(log->iterations->len, ==, 2);
  g_assert_cmpfloat(iter(log, 0)->elapsed_ms, ==, 5630.1);
  g_assert_cmpfloat(iter(log, 0)->timestamp_s, ==, 1712372145.0);
  g_assert_cmpint(iter(log, 0)->gbs, ==, 128);
  g_assert_cmpfloat(iter(log, 1)->elapsed_ms, ==, 5410.6);
  g_assert_cmpuint(log->memory->len, ==, 1);
  g_assert_cmpint(mem(log, 0)->rank, ==, 1);
  g_assert_cmpint(mem(log, 0)->after_iterations, ==, 3);
  g_assert_cmpfloat(mem(log, 0)->max_reserved_mb, ==, 4.0);
}

static void test_issue525_774m(void) {
  g_test_summary("a real 2023 log with its arguments block (GPT-2 774M, V100, transformer_impl "
                 "local): the tokenizer's vocabulary, unfused attention, the log's own parameter "
                 "count, and its out-of-memory line");
  g_autoptr(PtsimMegatronLog) log = read_fixture("06_issue525_gpt2_774m_v100_oom.log");
  g_assert_true(log->args_found && log->args_complete);
  g_assert_true(log->args_ok);
  const PtsimModel *m = &log->job.model;
  const PtsimLayout *l = &log->job.layout;
  const PtsimSettings *run = &log->job.settings;
  /* GPT2BPETokenizer: 50257 padded to 50304 (the log: "with 47 dummy tokens") */
  g_assert_cmpint(m->vocab_size, ==, 50304);
  g_assert_cmpint(m->position_embedding, ==, PTSIM_POSITION_LEARNED);
  g_assert_cmpint(m->max_position_embeddings, ==, 1024);
  g_assert_cmpint(l->gpus, ==, 1);
  g_assert_cmpint(l->mbs, ==, 4);
  g_assert_cmpint(l->gbs, ==, 16);
  g_assert_cmpint(run->precision, ==, PTSIM_PRECISION_FP16);
  g_assert_cmpint(run->transformer_engine, ==, 0);
  g_assert_cmpint(run->flash_attention, ==, 0); /* local layers, use_flash_attn False */
  g_assert_cmpint(run->fp32_grad_accumulation, ==, 0);
  g_assert_true(log->oom);
  PtsimJob job = log->job; /* its hw zero until loaded */
  g_autoptr(GError) error = NULL;
  g_autofree char *hw = g_test_build_filename(G_TEST_DIST, "data", "hw_v100_32g_test.ini", NULL);
  g_assert_true(ptsim_hardware_load(hw, &job.hw, &error));
  g_assert_true(ptsim_job_validate(&job, &error));
  g_assert_no_error(error);
  /* " > number of parameters on ...: 771201024" */
  g_autofree PtsimPlan *plan = plan_of(&job);
  g_assert_cmpfloat(plan->stage_parameters[0], ==, 771201024.0);
}

/* The arguments that change what attention and the MLP keep: store_false
 * destinations printed False become their --no- flags, fp32 softmax
 * switches printed True their flags. */
static void test_memory_fusion_args(void) {
  g_test_summary("masked_softmax_fusion / bias_swiglu_fusion False and "
                 "apply_query_key_layer_scaling True reach the job");
  g_autoptr(PtsimMegatronLog)
      log = parse_text("------------------------ arguments ------------------------\n"
                       "  apply_query_key_layer_scaling ................... True\n"
                       "  bias_swiglu_fusion .............................. False\n"
                       "  hidden_size ..................................... 1024\n"
                       "  masked_softmax_fusion ........................... False\n"
                       "  num_attention_heads ............................. 16\n"
                       "  num_layers ...................................... 24\n"
                       "  swiglu .......................................... True\n"
                       "  vocab_size ...................................... 50257\n"
                       "  bf16 ............................................ True\n"
                       "-------------------- end of arguments ---------------------\n");
  g_assert_true(log->args_ok);
  g_assert_cmpint(log->job.settings.masked_softmax_unfused, ==, 1);
  g_assert_cmpint(log->job.settings.swiglu_unfused, ==, 1);
  g_assert_cmpint(log->job.settings.attention_softmax_fp32, ==, 1);
}

static void test_date_markers_out_of_order(void) {
  g_test_summary("a block printing a newer marker (group_query_attention, 2023-07-24) but not an "
                 "older one (max_tokens_to_oom) dates 2023-07-24 and is bounded by the next "
                 "missing one (manual_gc, 2023-10-30), never by a date before it");
  g_autoptr(PtsimMegatronLog)
      log = parse_text("------------------------ arguments ------------------------\n"
                       "  encoder_num_layers .............................. 2\n"
                       "  group_query_attention ........................... True\n"
                       "  bf16 ............................................ True\n"
                       "-------------------- end of arguments ---------------------\n");
  int32_t before = 0;
  g_assert_cmpint(ptsim_megatron_log_date(log, &before), ==, 20230724);
  g_assert_cmpint(before, ==, 20231030);
}

static void test_issue525_date_and_margin(void) {
  g_test_summary("Megatron-LM#525 from its own log: the block dates its source between the GQA "
                 "and manual-GC merges; with that release's tensors the first step's allocated "
                 "peak is what the run needed where it died, and the runs margin covers what the "
                 "emulation misses there");
  g_autoptr(PtsimMegatronLog) log = read_fixture("06_issue525_gpt2_774m_v100_oom.log");
  int32_t before = 0;
  /* group_query_attention printed, manual_gc and cross_entropy_loss_fusion not */
  g_assert_cmpint(ptsim_megatron_log_date(log, &before), ==, 20230724);
  g_assert_cmpint(before, ==, 20231030);
  PtsimJob job = log->job; /* its hw zero until loaded */
  job.source.megatron_date = 20230724;
  g_autoptr(GError) error = NULL;
  g_autofree char *hw = g_test_build_filename(G_TEST_DIST, "data", "hw_v100_32g_test.ini", NULL);
  g_assert_true(ptsim_hardware_load(hw, &job.hw, &error));
  g_assert_true(ptsim_job_validate(&job, &error));
  g_autofree PtsimAllocResult *a = g_new0(PtsimAllocResult, 1);
  g_assert_true(
      simulate_allocator_of(&job, PTSIM_LIFETIMES_STEPS, NULL, NULL, 0.0, NULL, a, &error));
  g_assert_no_error(error);
  const PtsimStageAlloc *s = &a->stages[0];
  /* The log: "Tried to allocate 786.00 MiB (... 31.74 GiB total capacity; 28.82 GiB already
   * allocated; 577.12 MiB free; 29.97 GiB reserved in total by PyTorch)", in the first
   * forward's cross entropy: 786 MiB = mbs 4 x seq 1024 x vocab 50304 x 4 B, the second fp32
   * copy of the logits. */
  g_assert_cmpfloat(4.0 * 1024 * 50304 * 4, ==, 786.0 * MIB);
  double needed = 28.82 * GIB + 786.0 * MIB;
  g_assert_cmpfloat(fabs(s->first_step.allocated_peak_bytes / needed - 1.0), <, 0.01);
  /* What the run held on the device there, at least: reserved + the request + what lay
   * outside the allocator (total - reserved - free). */
  double outside = 31.74 * GIB - 29.97 * GIB - 577.12 * MIB;
  double demand = 29.97 * GIB + 786.0 * MIB + outside;
  double margin = PTSIM_LIFETIMES_OUTSIDE_ERROR_BYTES +
                  PTSIM_LIFETIMES_RESERVED_ERROR * s->first_step.reserved_peak_bytes;
  g_assert_cmpfloat(s->first_step.device_peak_bytes + margin, >=, demand);
  /* So the verdict is "does not run" already at step 0, where the run died; the emulation's
   * own first failed allocation comes in step 1 (it keeps 0.72 GiB less outside the
   * allocator and fragments less than the run did: lifetimes.h). */
  g_assert_false(a->runs);
  g_assert_cmpint(s->runs_fail_step, ==, 0);
  g_assert_false(s->fits);
  g_assert_cmpint(s->oom_step, ==, 1);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/megatron-log/excerpt-1-2020", test_excerpt1_2020);
  g_test_add_func("/megatron-log/excerpt-2-2024", test_excerpt2_2024);
  g_test_add_func("/megatron-log/excerpt-3-2026", test_excerpt3_2026);
  g_test_add_func("/megatron-log/excerpt-4-2022", test_excerpt4_2022);
  g_test_add_func("/megatron-log/excerpt-5-2023", test_excerpt5_2023);
  g_test_add_func("/megatron-log/args-llama3-8b", test_args_llama3_8b);
  g_test_add_func("/megatron-log/args-variants", test_args_variants);
  g_test_add_func("/megatron-log/issue525-774m", test_issue525_774m);
  g_test_add_func("/megatron-log/issue525-date-and-margin", test_issue525_date_and_margin);
  g_test_add_func("/megatron-log/oom", test_oom);
  g_test_add_func("/megatron-log/truncated-everywhere", test_truncated_everywhere);
  g_test_add_func("/megatron-log/bad-values", test_bad_values);
  g_test_add_func("/megatron-log/measured-ranges", test_measured_ranges);
  g_test_add_func("/megatron-log/garbage", test_garbage);
  g_test_add_func("/megatron-log/huge-lines", test_huge_lines);
  g_test_add_func("/megatron-log/empty-and-missing", test_empty_and_missing);
  g_test_add_func("/megatron-log/warm-up", test_warmup_rule);
  g_test_add_func("/megatron-log/prefixes", test_prefixes);
  g_test_add_func("/megatron-log/date-markers-out-of-order", test_date_markers_out_of_order);
  g_test_add_func("/megatron-log/memory-fusion-args", test_memory_fusion_args);
  return g_test_run();
}
