/* test_job_validate.c — ptsim_job_validate() (sim/io/job_resolve.c, then
 * sim/io/job_validate.c): the layout's defaults, the dp / sp / schedule /
 * stage split it derives, the resolve step apart from the check that never
 * changes the job, the
 * layouts Megatron-LM would refuse (each refused in one line naming the flag,
 * the value and what is allowed), and every published run's layout accepted.
 * The model and hardware files themselves are test_config.c's.
 *
 * Shipped files via PTSIM_DATA_DIR (set by ctest). */
#include <math.h>
#include <string.h>

#include <glib.h>

#include "config.h"
#include "job_validate.h"
#include "plan_of.h"

static void make_job(PtsimJob *job, const char *model, int64_t gpus) {
  memset(job, 0, sizeof *job);
  g_assert_true(ptsim_model_load(model, &job->model, NULL));
  g_assert_true(ptsim_hardware_load("h100-80g", &job->hw, NULL));
  ptsim_job_init_defaults(job);
  job->layout.gpus = gpus;
  job->layout.gbs = 128;
  job->layout.seq = 8192;
}

static void validate_fails(PtsimJob *job, ...) {
  g_autoptr(GError) error = NULL;
  g_assert_false(ptsim_job_validate(job, &error));
  g_assert_nonnull(error);
  g_test_message("%s", error->message);
  g_assert_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID);
  g_assert_null(strchr(error->message, '\n'));
  va_list ap;
  va_start(ap, job);
  const char *needle;
  while ((needle = va_arg(ap, const char *)) != NULL)
    if (strstr(error->message, needle) == NULL) g_assert_cmpstr(error->message, ==, needle);
  va_end(ap);
}

static void test_layout_defaults(void) {
  g_test_summary("ptsim_job_init_defaults (the layout's, the settings' and the source's) as "
                 "job_validate.h documents");
  PtsimJob job;
  memset(&job, 0xab, sizeof job);
  ptsim_job_init_defaults(&job);
  const PtsimLayout *l = &job.layout;
  const PtsimSettings *run = &job.settings;
  const PtsimProvenance *src = &job.source;
  g_assert_cmpint(l->tp, ==, 1);
  g_assert_cmpint(l->pp, ==, 1);
  g_assert_cmpint(l->cp, ==, 1);
  g_assert_cmpint(l->vp, ==, 1);
  g_assert_cmpint(l->mbs, ==, 1);
  g_assert_cmpint(l->dp, ==, 0);
  g_assert_cmpint(l->sp, ==, -1);
  g_assert_cmpint(l->distributed_optimizer, ==, 1);
  g_assert_cmpint(run->fp32_grad_accumulation, ==, 1);
  g_assert_cmpint(run->flash_attention, ==, 1);
  g_assert_cmpint(run->recompute, ==, PTSIM_RECOMPUTE_NONE);
  g_assert_cmpint(run->precision, ==, PTSIM_PRECISION_BF16);
  g_assert_cmpint(l->schedule, ==, PTSIM_SCHEDULE_1F1B);
  g_assert_cmpfloat(run->memory_threshold, ==, 0.8);
  g_assert_cmpfloat(src->attention_dropout, ==, 0.0);
  g_assert_cmpfloat(src->hidden_dropout, ==, 0.0);
  g_assert_cmpint(l->gpus, ==, 0);
  g_assert_cmpint(l->gbs, ==, 0);
  g_assert_cmpint(l->seq, ==, 0);
  g_assert_cmpint(l->first_stage_layers, ==, 0);
}

static void test_job_valid(void) {
  g_test_summary("dp derived, sp auto, stages split evenly");
  PtsimJob job;
  make_job(&job, "llama3-8b", 64);
  job.layout.tp = 2;
  job.layout.pp = 4;
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_job_validate(&job, &error));
  g_assert_no_error(error);
  g_assert_cmpint(job.layout.dp, ==, 8);
  g_assert_cmpint(job.layout.sp, ==, 1);
  g_assert_cmpint(job.layout.schedule, ==, PTSIM_SCHEDULE_1F1B);
  for (int s = 0; s < 4; s++) g_assert_cmpint(stage_layers_of(&job, s), ==, 8);
  g_assert_cmpint(stage_layers_of(&job, 4), ==, 0);

  /* tp == 1: sp auto is off; sp = 1 with tp = 1 is accepted */
  make_job(&job, "llama3-8b", 8);
  g_assert_true(ptsim_job_validate(&job, &error));
  g_assert_cmpint(job.layout.sp, ==, 0);
  g_assert_cmpint(stage_layers_of(&job, 0), ==, 32);
  make_job(&job, "llama3-8b", 8);
  job.layout.sp = 1;
  g_assert_true(ptsim_job_validate(&job, &error));
  g_assert_cmpint(job.layout.sp, ==, 1);

  /* dp given and consistent; cp splits */
  make_job(&job, "llama3-8b", 32);
  job.layout.cp = 2;
  job.layout.tp = 2;
  job.layout.dp = 8;
  g_assert_true(ptsim_job_validate(&job, &error));
  g_assert_no_error(error);
  g_assert_cmpint(job.layout.dp, ==, 8);
}

static void test_job_dp(void) {
  g_test_summary("gpus must split into tp*pp*cp*dp");
  PtsimJob job;
  make_job(&job, "llama3-8b", 12);
  job.layout.tp = 8;
  validate_fails(&job, "--gpus 12 is not divisible by tp*pp*cp", "--tp 8 --pp 1 --cp 1", NULL);
  make_job(&job, "llama3-8b", 16);
  job.layout.tp = 2;
  job.layout.dp = 4;
  validate_fails(&job, "--dp 4 does not match --gpus 16", "dp would be 8", NULL);
}

static void test_job_tp(void) {
  g_test_summary("tp must divide heads, query groups, ffn");
  PtsimJob job;
  make_job(&job, "llama3-8b", 3);
  job.layout.tp = 3;
  validate_fails(&job,
                 "--tp 3 does not divide num_attention_heads 32 of model "
                 "llama3-8b",
                 NULL);
  make_job(&job, "llama3-8b", 16);
  job.layout.tp = 16;
  validate_fails(&job,
                 "--tp 16 does not divide num_query_groups 8 of model "
                 "llama3-8b",
                 NULL);
  make_job(&job, "llama3-8b", 2);
  job.layout.tp = 2;
  job.model.ffn_hidden_size = 14337;
  validate_fails(&job, "--tp 2 does not divide ffn_hidden_size 14337", NULL);
}

static void test_job_pp(void) {
  g_test_summary("pp must divide layers unless first/last stages are given");
  PtsimJob job;
  make_job(&job, "llama3-8b", 3);
  job.layout.pp = 3;
  validate_fails(&job, "--pp 3 does not divide num_layers 32",
                 "--decoder-first-pipeline-num-layers", NULL);
  make_job(&job, "llama3-8b", 130);
  job.layout.pp = 130;
  validate_fails(&job, "--pp 130 is more than ptsim's limit of 128", NULL);
  make_job(&job, "llama3-8b", 64);
  job.layout.pp = 64;
  validate_fails(&job, "--pp 64 is more than num_layers 32", NULL);

  /* uneven: 5 + 12 + 12 + 3 */
  make_job(&job, "llama3-8b", 4);
  job.layout.pp = 4;
  job.layout.first_stage_layers = 5;
  job.layout.last_stage_layers = 3;
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_job_validate(&job, &error));
  g_assert_no_error(error);
  const int64_t want[] = {5, 12, 12, 3};
  for (int s = 0; s < 4; s++) g_assert_cmpint(stage_layers_of(&job, s), ==, want[s]);
  /* only first given: 30 over 2 -> 2 + 15 + 15 */
  make_job(&job, "llama3-8b", 3);
  job.layout.pp = 3;
  job.layout.first_stage_layers = 2;
  g_assert_true(ptsim_job_validate(&job, &error));
  g_assert_cmpint(stage_layers_of(&job, 0), ==, 2);
  g_assert_cmpint(stage_layers_of(&job, 1), ==, 15);
  g_assert_cmpint(stage_layers_of(&job, 2), ==, 15);

  make_job(&job, "llama3-8b", 4);
  job.layout.pp = 4;
  job.layout.first_stage_layers = 5;
  job.layout.last_stage_layers = 4;
  validate_fails(&job, "--decoder-first-pipeline-num-layers 5",
                 "leave 23 of num_layers 32 for the 2 other stage(s)", NULL);
  make_job(&job, "llama3-8b", 1);
  job.layout.first_stage_layers = 4;
  validate_fails(&job, "--decoder-first-pipeline-num-layers 4 needs --pp > 1", NULL);
  make_job(&job, "llama3-8b", 2);
  job.layout.pp = 2;
  job.layout.first_stage_layers = 40;
  validate_fails(&job, "leave -8 of num_layers 32", NULL);
}

static void test_job_vp(void) {
  g_test_summary("interleaving: pp >= 2, at most 514 virtual stages, layers % (pp*vp), "
                 "microbatches % pp");
  PtsimJob job;
  make_job(&job, "llama3-8b", 8);
  job.layout.vp = 2;
  validate_fails(&job, "--vp 2 (interleaved schedule) needs --pp >= 2", NULL);
  make_job(&job, "llama3-8b", 8);
  job.layout.pp = 2;
  job.layout.vp = 3;
  validate_fails(&job, "--pp 2 times --vp 3 = 6 does not divide num_layers 32", NULL);
  /* the plan's placement table holds PTSIM_MAX_VSTAGES = 514 virtual stages */
  make_job(&job, "llama3-8b", 8);
  job.layout.pp = 8;
  job.layout.vp = 65;
  validate_fails(&job, "--pp 8 x --vp 65 = 520 virtual stages is more than ptsim's limit of 514",
                 NULL);
  make_job(&job, "llama3-8b", 4);
  job.layout.pp = 4;
  job.layout.vp = 2;
  job.layout.gbs = 6;
  validate_fails(&job, "gbs/(mbs*dp) = 6 to be a multiple of --pp 4", NULL);

  make_job(&job, "llama3-8b", 8);
  job.layout.pp = 4;
  job.layout.vp = 2;
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_job_validate(&job, &error));
  g_assert_no_error(error);
  g_assert_cmpint(job.layout.schedule, ==, PTSIM_SCHEDULE_INTERLEAVED);

  make_job(&job, "llama3-8b", 8);
  job.layout.pp = 4;
  job.layout.vp = 2;
  job.layout.schedule = PTSIM_SCHEDULE_GPIPE;
  validate_fails(&job, "--schedule gpipe cannot run virtual stages (--vp 2)", NULL);
  make_job(&job, "llama3-8b", 8);
  job.layout.pp = 4;
  job.layout.vp = 2;
  job.layout.schedule = PTSIM_SCHEDULE_ZB_H1;
  validate_fails(&job, "--schedule zb-h1", NULL);
  make_job(&job, "llama3-8b", 8);
  job.layout.schedule = PTSIM_SCHEDULE_INTERLEAVED;
  validate_fails(&job, "--schedule interleaved needs --vp > 1", NULL);
  /* Uneven with virtual stages, as Megatron-LM's TransformerConfig allows:
   * 6 + 10 + 10 + 6, every stage divisible by vp 2 (chunks 3, 5, 5, 3) ... */
  make_job(&job, "llama3-8b", 4);
  job.layout.pp = 4;
  job.layout.vp = 2;
  job.layout.first_stage_layers = 6;
  job.layout.last_stage_layers = 6;
  g_clear_error(&error);
  g_assert_true(ptsim_job_validate(&job, &error));
  g_assert_no_error(error);
  g_autofree PtsimPlan *plan = plan_of(&job);
  const int64_t chunks[] = {3, 5, 5, 3};
  for (int s = 0; s < 4; s++) g_assert_cmpint(plan->chunk_layers[s], ==, chunks[s]);
  /* ... but not by vp 4 (6 % 4 = 2), nor a split that is uneven elsewhere. */
  job.layout.vp = 4;
  validate_fails(&job, "--vp 4 does not divide the 6 layers of a pipeline stage", NULL);
  job.layout.vp = 2;
  job.layout.first_stage_layers = 4;
  job.layout.last_stage_layers = 0;
  validate_fails(&job, "leave 28 of num_layers 32 for the 3 other stage(s)", NULL);
}

static void test_job_batch_and_seq(void) {
  g_test_summary("gbs multiple of mbs*dp; seq vs cp and sp; positives");
  PtsimJob job;
  make_job(&job, "llama3-8b", 4);
  job.layout.mbs = 3;
  job.layout.gbs = 100;
  validate_fails(&job, "--gbs 100 is not a multiple of mbs*dp", "--mbs 3 times dp 4", NULL);
  make_job(&job, "llama3-8b", 4);
  job.layout.cp = 2;
  job.layout.seq = 8190;
  validate_fails(&job, "--seq 8190 is not divisible by 2*cp = 4", NULL);
  make_job(&job, "llama3-8b", 8);
  job.layout.tp = 8;
  job.layout.seq = 8196;
  validate_fails(&job, "--seq 8196", "is not divisible by --tp 8", "sequence parallelism", NULL);
  make_job(&job, "llama3-8b", 8);
  job.layout.tp = 8;
  job.layout.seq = 8196;
  job.layout.sp = 0; /* without sp any length is fine */
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_job_validate(&job, &error));
  g_assert_no_error(error);

  make_job(&job, "llama3-8b", 0);
  validate_fails(&job, "--gpus is required", NULL);
  make_job(&job, "llama3-8b", 8);
  job.layout.gbs = 0;
  validate_fails(&job, "--gbs is required", NULL);
  make_job(&job, "llama3-8b", 8);
  job.layout.seq = 0;
  validate_fails(&job, "--seq is required", NULL);
  make_job(&job, "llama3-8b", 8);
  job.layout.mbs = -2;
  validate_fails(&job, "--mbs -2 is out of range", NULL);
  make_job(&job, "llama3-8b", 8);
  job.layout.tp = 0;
  validate_fails(&job, "--tp 0 is out of range", NULL);
}

static void test_job_ranges(void) {
  g_test_summary("threshold, dropouts, recompute layers, enums, model");
  PtsimJob job;
  make_job(&job, "llama3-8b", 8);
  job.settings.memory_threshold = 0;
  validate_fails(&job, "--memory-threshold 0 is out of range", "(0, 1]", NULL);
  make_job(&job, "llama3-8b", 8);
  job.settings.memory_threshold = 1.5;
  validate_fails(&job, "--memory-threshold 1.5", NULL);
  make_job(&job, "llama3-8b", 8);
  job.settings.memory_threshold = 1.0;
  g_assert_true(ptsim_job_validate(&job, NULL));
  make_job(&job, "llama3-8b", 8);
  job.source.attention_dropout = 1.0;
  validate_fails(&job, "--attention-dropout 1 is out of range", "[0, 1)", NULL);
  make_job(&job, "llama3-8b", 8);
  job.source.hidden_dropout = -0.1;
  validate_fails(&job, "--hidden-dropout -0.1", NULL);
  make_job(&job, "llama3-8b", 8);
  job.source.hidden_dropout = NAN;
  validate_fails(&job, "--hidden-dropout nan", NULL);

  make_job(&job, "llama3-8b", 8);
  job.layout.pp = 4;
  job.settings.recompute = PTSIM_RECOMPUTE_FULL;
  job.settings.recompute_method = PTSIM_RECOMPUTE_METHOD_BLOCK;
  job.settings.recompute_num_layers = 9;
  validate_fails(&job, "--recompute-num-layers 9 is more than the 8 layers", NULL);
  make_job(&job, "llama3-8b", 8);
  job.layout.pp = 4;
  job.settings.recompute = PTSIM_RECOMPUTE_FULL;
  job.settings.recompute_num_layers = 8;
  g_assert_true(ptsim_job_validate(&job, NULL));
  make_job(&job, "llama3-8b", 8);
  job.settings.recompute_num_layers = -1;
  validate_fails(&job, "--recompute-num-layers -1", NULL);

  make_job(&job, "llama3-8b", 8);
  job.layout.sp = 3;
  validate_fails(&job, "--sp 3 is out of range", NULL);
  make_job(&job, "llama3-8b", 8);
  job.layout.schedule = (PtsimSchedule)9;
  validate_fails(&job, "out of range", NULL);
  make_job(&job, "llama3-8b", 8);
  job.model.hidden_size = 0;
  validate_fails(&job, "model llama3-8b: hidden_size 0", NULL);
}

/* Every published run in shared/data/published/ (CSV files) (B200 rows aside: their
 * DP column is inconsistent in the source) is a layout the validator must
 * accept, on the model models/README.md maps its row to.  mbs is 1 where the
 * source does not state it. */
static void test_job_published_layouts(void) {
  g_test_summary("the published calibration runs validate on shipped models");
  static const struct {
    const char *model;
    int64_t gpus, tp, pp, dp, cp, vp, mbs, gbs, seq;
  } runs[] = {
      /* narayanan2021_table1_a100.csv */
      {"sc21-gpt-1.7b", 32, 1, 1, 32, 1, 1, 16, 512, 2048},
      {"sc21-gpt-3.6b", 64, 2, 1, 32, 1, 1, 16, 512, 2048},
      {"sc21-gpt-7.5b", 128, 4, 1, 32, 1, 1, 16, 512, 2048},
      {"sc21-gpt-18b", 256, 8, 1, 32, 1, 1, 8, 1024, 2048},
      {"sc21-gpt-39b", 512, 8, 2, 32, 1, 1, 4, 1536, 2048},
      {"sc21-gpt-76b", 1024, 8, 4, 32, 1, 3, 2, 1792, 2048},
      {"sc21-gpt-145b", 1536, 8, 8, 24, 1, 2, 2, 2304, 2048},
      {"sc21-gpt-310b", 1920, 8, 16, 15, 1, 2, 1, 2160, 2048},
      {"sc21-gpt-530b", 2520, 8, 35, 9, 1, 3, 1, 2520, 2048},
      {"sc21-gpt-1t", 3072, 8, 64, 6, 1, 1, 1, 3072, 2048},
      /* megatron_readme_gpt3_175b_a100.csv */
      {"gpt3-175b", 1024, 8, 16, 8, 1, 1, 1, 1536, 2048},
      /* megatron_core_r080_h100_weak_scaling.csv */
      {"mcore-gpt-1.7b", 48, 1, 1, 48, 1, 1, 1, 192, 4096},
      {"mcore-gpt-7.1b", 96, 2, 1, 48, 1, 1, 1, 192, 4096},
      {"mcore-gpt-16b", 192, 4, 1, 48, 1, 1, 1, 192, 4096},
      {"mcore-gpt-32b", 384, 8, 1, 48, 1, 1, 1, 192, 4096},
      {"mcore-gpt-70b", 768, 8, 2, 48, 1, 1, 1, 384, 4096},
      {"mcore-gpt-119b", 1536, 8, 4, 48, 1, 1, 1, 768, 4096},
      {"mcore-gpt-177b", 2304, 8, 6, 48, 1, 1, 1, 1152, 4096},
      {"mcore-gpt-314b", 3072, 8, 8, 48, 1, 1, 1, 1536, 4096},
      {"mcore-gpt-462b", 6144, 8, 16, 48, 1, 1, 1, 3072, 4096},
      /* megatron_readme_2021_tp_scaling.csv (A100 rows) */
      {"megatron2021-gpt-1b", 1, 1, 1, 1, 1, 1, 1, 16, 2048},
      {"megatron2021-gpt-8b", 8, 8, 1, 1, 1, 1, 1, 16, 2048},
      {"megatron2021-gpt-2b", 256, 2, 1, 128, 1, 1, 1, 2048, 2048},
      {"megatron2021-gpt-8b", 1024, 8, 1, 128, 1, 1, 1, 2048, 2048},
      /* nemo_long_sequence_cp.csv (H100 rows, with CP) */
      {"llama2-7b", 4, 1, 1, 4, 1, 1, 1, 1024, 4096},
      {"llama2-7b", 8, 1, 2, 4, 1, 1, 1, 512, 8192},
      {"llama2-7b", 32, 2, 1, 8, 2, 1, 1, 128, 32768},
      {"llama2-7b", 256, 4, 1, 8, 8, 1, 1, 16, 262144},
      {"llama2-7b", 1024, 8, 1, 4, 32, 1, 1, 4, 1048576},
  };
  for (size_t k = 0; k < G_N_ELEMENTS(runs); k++) {
    PtsimJob job;
    make_job(&job, runs[k].model, runs[k].gpus);
    job.layout.tp = runs[k].tp;
    job.layout.pp = runs[k].pp;
    job.layout.dp = runs[k].dp;
    job.layout.cp = runs[k].cp;
    job.layout.vp = runs[k].vp;
    job.layout.mbs = runs[k].mbs;
    job.layout.gbs = runs[k].gbs;
    job.layout.seq = runs[k].seq;
    job.settings.recompute = PTSIM_RECOMPUTE_FULL;
    g_autoptr(GError) error = NULL;
    if (!ptsim_job_validate(&job, &error)) g_test_message("%s (%s)", error->message, runs[k].model);
    g_assert_no_error(error);
    int64_t sum = 0;
    for (int64_t s = 0; s < job.layout.pp; s++) sum += stage_layers_of(&job, s);
    g_assert_cmpint(sum, ==, job.model.num_layers);
    if (runs[k].vp > 1) g_assert_cmpint(job.layout.schedule, ==, PTSIM_SCHEDULE_INTERLEAVED);
  }
}

static void check_unresolved(const PtsimJob *job, const char *field) {
  g_autoptr(GError) error = NULL;
  g_assert_false(ptsim_job_check(job, &error));
  g_assert_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID);
  g_autofree char *want = g_strdup_printf("layout: %s is not resolved", field);
  if (!g_str_has_prefix(error->message, want)) g_assert_cmpstr(error->message, ==, want);
}

static void test_job_resolve_then_check(void) {
  g_test_summary("resolve fills every derived field; check changes nothing and refuses a job "
                 "that was not resolved; validate is resolve then check");
  PtsimJob job, copy;
  make_job(&job, "mixtral-8x7b", 64);
  job.layout.tp = 2;
  job.layout.pp = 4;
  job.layout.vp = 2;
  job.layout.ep = 4;
  job.layout.gbs = 64;
  job.layout.seq = 4096;
  g_assert_true(ptsim_layout_set_sharding(&job.layout, 8, PTSIM_SHARDING_MODE_FSDP, -1, NULL));
  check_unresolved(&job, "dp 0");
  ptsim_job_resolve(&job);
  g_assert_cmpint(job.layout.dp, ==, 8);
  g_assert_cmpint(job.layout.sp, ==, 1);
  g_assert_cmpint(job.layout.etp, ==, 2);
  g_assert_cmpint(job.layout.edp, ==, 2);
  g_assert_cmpint(job.layout.schedule, ==, PTSIM_SCHEDULE_INTERLEAVED);
  g_assert_cmpint(job.settings.reshard_after_forward, ==, PTSIM_RESHARD_ALWAYS);
  copy = job;
  ptsim_job_resolve(&copy);
  g_assert_cmpmem(&copy, sizeof copy, &job, sizeof job); /* resolving twice: the same */
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_job_check(&job, &error));
  g_assert_no_error(error);
  g_assert_cmpmem(&copy, sizeof copy, &job, sizeof job);

  /* each derived field left underived is named */
  PtsimJob bad = job;
  bad.layout.sp = -1;
  check_unresolved(&bad, "sp -1 (auto)");
  bad = job;
  bad.layout.etp = 0;
  check_unresolved(&bad, "etp 0");
  bad = job;
  bad.layout.edp = 0;
  check_unresolved(&bad, "edp");
  bad = job;
  bad.layout.schedule = PTSIM_SCHEDULE_1F1B;
  check_unresolved(&bad, "schedule 1f1b with --vp > 1");
  bad = job;
  bad.settings.reshard_after_forward = PTSIM_RESHARD_AUTO;
  check_unresolved(&bad, "reshard_after_forward auto");

  /* a refused job: the check's message, the job unchanged by it */
  make_job(&job, "llama3-8b", 12);
  job.layout.tp = 8;
  ptsim_job_resolve(&job);
  copy = job;
  g_assert_false(ptsim_job_check(&job, &error));
  g_assert_true(g_str_has_prefix(error->message, "--gpus 12 is not divisible by tp*pp*cp"));
  g_assert_cmpmem(&copy, sizeof copy, &job, sizeof job);
}

static void test_v_shape(void) {
  g_test_summary("--schedule zbv|dualpipev: vp 2 follows, another vp, too few microbatches and "
                 "Megatron-style sharding are refused by name");
  PtsimJob job;
  g_autoptr(GError) error = NULL;
  make_job(&job, "llama3-8b", 8); /* dp 2 x pp 4, mbs 1: 64 microbatches */
  job.layout.pp = 4;
  job.layout.schedule = PTSIM_SCHEDULE_ZBV;
  g_assert_true(ptsim_job_validate(&job, &error));
  g_assert_no_error(error);
  g_assert_cmpint(job.layout.vp, ==, 2);
  make_job(&job, "llama3-8b", 8);
  job.layout.pp = 4;
  job.layout.vp = 4;
  job.layout.schedule = PTSIM_SCHEDULE_DUALPIPEV;
  validate_fails(&job, "--schedule dualpipev runs 2 chunks per stage (a V), not --vp 4", NULL);
  /* 7 microbatches (gbs 14 over dp 2): ZBV needs 2 pp - 1 = 7, DualPipeV 8 */
  make_job(&job, "llama3-8b", 8);
  job.layout.pp = 4;
  job.layout.gbs = 14;
  job.layout.schedule = PTSIM_SCHEDULE_ZBV;
  g_assert_true(ptsim_job_validate(&job, &error));
  make_job(&job, "llama3-8b", 8);
  job.layout.pp = 4;
  job.layout.gbs = 14;
  job.layout.schedule = PTSIM_SCHEDULE_DUALPIPEV;
  validate_fails(&job, "--schedule dualpipev needs at least 8 microbatches (2 pp), got", NULL);
  make_job(&job, "llama3-8b", 8);
  job.layout.pp = 4;
  job.layout.schedule = PTSIM_SCHEDULE_ZBV;
  job.layout.sharding = PTSIM_SHARDING_GRADS;
  validate_fails(&job, "--schedule zbv with --sharding zero2 is modelled only as PyTorch runs it",
                 NULL);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/config/layout/defaults", test_layout_defaults);
  g_test_add_func("/config/job/valid", test_job_valid);
  g_test_add_func("/config/job/v-shape", test_v_shape);
  g_test_add_func("/config/job/dp", test_job_dp);
  g_test_add_func("/config/job/resolve-then-check", test_job_resolve_then_check);
  g_test_add_func("/config/job/tp", test_job_tp);
  g_test_add_func("/config/job/pp", test_job_pp);
  g_test_add_func("/config/job/vp", test_job_vp);
  g_test_add_func("/config/job/batch-and-seq", test_job_batch_and_seq);
  g_test_add_func("/config/job/ranges", test_job_ranges);
  g_test_add_func("/config/job/published-layouts", test_job_published_layouts);
  return g_test_run();
}
