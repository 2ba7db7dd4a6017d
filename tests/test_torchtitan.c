/* test_torchtitan.c — sim/io/torchtitan.c: the fixtures (written from
 * torchtitan's documented options) mapped exactly, and FSDP / HSDP ones
 * resolving to the job ptsim's own flags give; the configs ptsim cannot
 * model (float32 TP/PP, stage splits it cannot express) read and then
 * refused with the reason; configs torchtitan itself refuses, unknown or renamed keys and
 * wrong types named at FILE:LINE; the stage split and recompute mappings
 * derived by hand.
 *
 * Fixtures: tests/data/torchtitan via G_TEST_SRCDIR; models/ and
 * hw_profiles/ via PTSIM_DATA_DIR. */
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "job_build.h"
#include "config.h"
#include "job_validate.h"
#include "plan.h"
#include "torchtitan.h"

static char *fixture(const char *name) {
  return g_test_build_filename(G_TEST_DIST, "data", "torchtitan", name, NULL);
}

/* Loads fixture NAME on GPUS; warnings into *warnings (transfer full). */
static void load(const char *name, int64_t gpus, PtsimTorchtitan *tt, GPtrArray **warnings) {
  g_autofree char *path = fixture(name);
  g_autoptr(GError) error = NULL;
  *warnings = g_ptr_array_new_with_free_func(g_free);
  g_assert_true(ptsim_torchtitan_load(path, gpus, tt, *warnings, &error));
  g_assert_no_error(error);
  for (guint i = 0; i < (*warnings)->len; i++)
    g_test_message("warning: %s", (char *)(*warnings)->pdata[i]);
}

/* The one warning containing NEEDLE, which must name FILE:LINE. */
static void has_warning(GPtrArray *warnings, const char *file, int line, const char *needle) {
  g_autofree char *path = fixture(file);
  g_autofree char *at = g_strdup_printf("%s:%d: ", path, line);
  for (guint i = 0; i < warnings->len; i++) {
    const char *w = warnings->pdata[i];
    if (strstr(w, needle) != NULL) {
      g_assert_true(g_str_has_prefix(w, at));
      g_assert_null(strchr(w, '\n'));
      return;
    }
  }
  g_error("no warning with '%s'", needle);
}

static void test_ddp_8b(void) {
  g_test_summary("pure DDP on 8 GPUs: the layout ptsim models, mapped field by field");
  g_auto(PtsimTorchtitan) tt = {0};
  g_autoptr(GPtrArray) warnings = NULL;
  load("llama3_8b_ddp.toml", -1, &tt, &warnings);
  const PtsimLayout *l = &tt.layout;
  const PtsimSettings *run = &tt.settings;
  g_assert_cmpstr(tt.model, ==, "llama3-8b");
  g_assert_null(tt.unmodelled);
  g_assert_cmpint(tt.dp_mode, ==, PTSIM_TORCHTITAN_DP_DDP);
  g_assert_cmpint(l->gpus, ==, 8); /* 8 x 1 x 1 x 1 x 1: the world from the degrees */
  g_assert_cmpint(l->dp, ==, 8);
  g_assert_cmpint(l->tp, ==, 1);
  g_assert_cmpint(l->pp, ==, 1);
  g_assert_cmpint(l->cp, ==, 1);
  g_assert_cmpint(l->mbs, ==, 1); /* local_batch_size without PP */
  g_assert_cmpint(l->gbs, ==, 32);
  g_assert_cmpint(l->seq, ==, 8192);
  g_assert_cmpint(tt.grad_accumulation, ==, 4); /* 32 / (1 x 8) */
  g_assert_cmpint(run->recompute, ==, PTSIM_RECOMPUTE_FULL);
  g_assert_cmpint(run->recompute_num_layers, ==, 0);
  g_assert_cmpint(run->precision, ==, PTSIM_PRECISION_BF16);
  g_assert_true(tt.mixed_precision); /* autocast under pure DDP */
  g_assert_cmpint(l->distributed_optimizer, ==, 0);
  g_assert_cmpint(run->overlap_grad_reduce, ==, 1);
  g_assert_cmpint(run->fp32_grad_accumulation, ==, 1);
  g_assert_cmpint(run->flash_attention, ==, 1);
  g_assert_true(tt.compile);
  g_assert_cmpint(run->transformer_engine, ==, 0); /* PyTorch's modules, fused by Inductor */
  g_assert_cmpint(run->torch_layers, ==, PTSIM_TORCH_LAYERS_COMPILED);
  g_assert_cmpuint(warnings->len, ==, 1);
  has_warning(warnings, "llama3_8b_ddp.toml", 43, "Inductor fuses RoPE");

  /* the job: model loaded, layout valid on an H100 node */
  PtsimJob job;
  memset(&job, 0, sizeof job);
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_hardware_load("h100-80g", &job.hw, &error));
  g_assert_true(ptsim_torchtitan_job(&tt, &job, &error));
  g_assert_no_error(error);
  g_assert_cmpint(job.model.num_layers, ==, 32);
  g_assert_true(ptsim_job_validate(&job, &error));
  g_assert_no_error(error);
  g_assert_cmpint(job.layout.dp, ==, 8);

  /* --gpus must agree with the degrees */
  g_autofree char *path = fixture("llama3_8b_ddp.toml");
  g_auto(PtsimTorchtitan) other = {0};
  g_assert_false(ptsim_torchtitan_load(path, 16, &other, NULL, &error));
  g_assert_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID);
  g_assert_nonnull(strstr(error->message, "--gpus is 16"));
}

/* The job of fixture NAME on GPUS as `ptsim --torchtitan` resolves it, and
 * the one NATIVE (ptsim's own flags) resolves: the same bytes. */
static void same_job_as_flags(const char *name, int64_t gpus, PtsimJobOptions *native,
                              PtsimJob *out) {
  PtsimJobOptions tt;
  PtsimJob a, b;
  g_autoptr(GError) error = NULL;
  ptsim_job_options_init(&tt);
  tt.torchtitan = fixture(name);
  tt.gpus = (PtsimOptionInt){TRUE, gpus};
  g_assert_true(ptsim_job_build(&tt, &a, NULL, &error));
  g_assert_no_error(error);
  native->gpus = (PtsimOptionInt){TRUE, gpus};
  native->hw = g_strdup("h100-80g");
  g_assert_true(ptsim_job_build(native, &b, NULL, &error));
  g_assert_no_error(error);
  if (memcmp(&a, &b, sizeof a) != 0) g_error("%s: the native flags give another job", name);
  *out = a;
  ptsim_job_options_clear(&tt);
  ptsim_job_options_clear(native);
}

static void test_fsdp_8b(void) {
  g_test_summary("FSDP (shard -1 on 8 GPUs): FSDP2 over all 8 ranks, the output unit kept for "
                 "backward; == --sharding fsdp --fsdp-impl torch");
  g_auto(PtsimTorchtitan) tt = {0};
  g_autoptr(GPtrArray) warnings = NULL;
  load("llama3_8b_fsdp.toml", 8, &tt, &warnings);
  const PtsimLayout *l = &tt.layout;
  const PtsimSettings *run = &tt.settings;
  g_assert_cmpint(tt.dp_mode, ==, PTSIM_TORCHTITAN_DP_FSDP);
  g_assert_cmpint(tt.dp_shard, ==, 8);
  g_assert_cmpint(tt.fsdp_degree, ==, 8);
  g_assert_null(tt.unmodelled);
  g_assert_cmpint(l->dp, ==, 8);
  g_assert_cmpint(l->mbs, ==, 2);
  g_assert_cmpint(l->gbs, ==, 16);
  g_assert_cmpint(tt.grad_accumulation, ==, 1);
  g_assert_cmpint(run->recompute, ==, PTSIM_RECOMPUTE_SELECTIVE_OP); /* per-op, torch's policy */
  g_assert_cmpint(run->torch_layers, ==, PTSIM_TORCH_LAYERS_EAGER);  /* no [compile] */
  g_assert_cmpint(l->sharding, ==, PTSIM_SHARDING_PARAMS);
  g_assert_cmpint(run->fsdp_impl, ==, PTSIM_FSDP_TORCH);
  g_assert_cmpint(l->distributed_optimizer, ==, 1);
  g_assert_cmpint(l->optimizer_instances, ==, 1);
  g_assert_cmpint(run->reshard_after_forward, ==, PTSIM_RESHARD_AUTO);
  g_assert_cmpint(run->main_params_bytes, ==, 4);      /* the fp32 shards */
  g_assert_cmpint(run->fp32_grad_accumulation, ==, 1); /* mixed_precision_reduce float32 */
  g_assert_cmpint(run->fp8_param_gather, ==, 0);
  g_assert_cmpuint(warnings->len, ==, 0); /* everything it says is modelled */

  PtsimJobOptions o;
  PtsimJob job;
  ptsim_job_options_init(&o);
  o.model = g_strdup("llama3-8b");
  o.mbs = (PtsimOptionInt){TRUE, 2};
  o.gbs = (PtsimOptionInt){TRUE, 16};
  o.seq = (PtsimOptionInt){TRUE, 8192};
  o.recompute = g_strdup("selective-op");
  o.transformer_impl = g_strdup("torch");
  o.sharding = g_strdup("fsdp");
  o.fsdp_impl = g_strdup("torch");
  o.no_overlap = TRUE;
  same_job_as_flags("llama3_8b_fsdp.toml", 8, &o, &job);
  g_assert_cmpint(job.settings.reshard_after_forward, ==, PTSIM_RESHARD_BUT_LAST);

  /* shard -1 without a world size */
  g_autofree char *path = fixture("llama3_8b_fsdp.toml");
  g_autofree char *at = g_strdup_printf("%s:19: ", path);
  g_autoptr(GError) error = NULL;
  g_auto(PtsimTorchtitan) other = {0};
  g_assert_false(ptsim_torchtitan_load(path, -1, &other, NULL, &error));
  g_assert_true(g_str_has_prefix(error->message, at));
  g_assert_nonnull(strstr(error->message, "give --gpus"));
}

static void test_hsdp_70b(void) {
  g_test_summary("HSDP 2 x 4 x TP 8 with float8 all-gather, async TP and compile: every degree "
                 "and switch; == --sharding hsdp --hsdp-shard-size 4 --fsdp-impl torch");
  g_auto(PtsimTorchtitan) tt = {0};
  g_autoptr(GPtrArray) warnings = NULL;
  load("llama3_70b_hsdp_tp.toml", 64, &tt, &warnings);
  const PtsimLayout *l = &tt.layout;
  const PtsimSettings *run = &tt.settings;
  g_assert_cmpstr(tt.model, ==, "llama3-70b");
  g_assert_cmpint(tt.dp_mode, ==, PTSIM_TORCHTITAN_DP_HSDP);
  g_assert_cmpint(tt.dp_replicate, ==, 2);
  g_assert_cmpint(tt.dp_shard, ==, 4);
  g_assert_cmpint(l->gpus, ==, 64);
  g_assert_cmpint(l->tp, ==, 8);
  g_assert_cmpint(l->dp, ==, 8);
  g_assert_cmpint(l->mbs, ==, 4);
  g_assert_cmpint(l->gbs, ==, 32); /* global -1: 4 x dp 8 */
  g_assert_cmpint(run->precision, ==, PTSIM_PRECISION_FP8);
  g_assert_cmpint(run->tp_comm_overlap, ==, 1); /* async TP with compile */
  g_assert_cmpint(run->recompute, ==, PTSIM_RECOMPUTE_FULL);
  g_assert_cmpint(tt.reshard_after_forward, ==, PTSIM_TORCHTITAN_RESHARD_ALWAYS);
  g_assert_true(tt.fsdp_float8_all_gather);
  g_assert_true(tt.mixed_precision);
  g_assert_null(tt.unmodelled);
  g_assert_cmpint(l->sharding, ==, PTSIM_SHARDING_PARAMS);
  g_assert_cmpint(l->optimizer_instances, ==, 2);
  g_assert_cmpint(run->reshard_after_forward, ==, PTSIM_RESHARD_ALWAYS);
  g_assert_cmpint(run->fp8_param_gather, ==, 1);
  g_assert_cmpint(run->fp8_recipe, ==, PTSIM_FP8_TENSORWISE); /* torchao's default, dynamic */
  g_assert_cmpint(run->torch_layers, ==, PTSIM_TORCH_LAYERS_COMPILED);
  /* filter_fqns = ["output"]: the LM head stays bf16, as ptsim prices it */
  g_assert_cmpuint(warnings->len, ==, 2);
  has_warning(warnings, "llama3_70b_hsdp_tp.toml", 23, "Inductor fuses RoPE");
  has_warning(warnings, "llama3_70b_hsdp_tp.toml", 28, "scale computation");

  PtsimJobOptions o;
  PtsimJob job;
  ptsim_job_options_init(&o);
  o.model = g_strdup("llama3-70b");
  o.tp = (PtsimOptionInt){TRUE, 8};
  o.mbs = (PtsimOptionInt){TRUE, 4};
  o.gbs = (PtsimOptionInt){TRUE, 32};
  o.seq = (PtsimOptionInt){TRUE, 8192};
  o.recompute = g_strdup("full");
  o.precision = g_strdup("fp8");
  o.fp8_recipe = g_strdup("tensorwise");
  o.transformer_impl = g_strdup("torch-compile");
  o.fp8_param_gather = TRUE;
  o.sharding = g_strdup("hsdp");
  o.hsdp_shard_size = (PtsimOptionInt){TRUE, 4};
  o.fsdp_impl = g_strdup("torch");
  o.reshard_after_forward = g_strdup("always");
  o.no_overlap = TRUE;
  o.tp_comm_overlap = TRUE;
  same_job_as_flags("llama3_70b_hsdp_tp.toml", 64, &o, &job);
  /* the shard group: 4 dp ranks 8 apart (tp 8); the replicas 32 apart */
  g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
  ptsim_plan_build(&job, plan);
  g_assert_cmpint(plan->zero_stage, ==, 3);
  g_assert_cmpint(plan->shard_group.size, ==, 4);
  g_assert_cmpint(plan->shard_group.stride, ==, 8);
  g_assert_cmpint(plan->replicate_group.size, ==, 2);
  g_assert_cmpint(plan->replicate_group.stride, ==, 32);
  g_assert_true(plan->replicate_backward); /* FSDP2 all-reduces every micro-step */
}

static void test_hsdp_cp(void) {
  g_test_summary("HSDP over shard 4 x cp 2: the shard group holds the CP ranks (8 consecutive), "
                 "2 replicas 8 apart; reshard never; == --sharding hsdp --hsdp-shard-size 8");
  g_auto(PtsimTorchtitan) tt = {0};
  g_autoptr(GPtrArray) warnings = NULL;
  load("llama3_8b_hsdp_cp.toml", -1, &tt, &warnings);
  g_assert_null(tt.unmodelled);
  g_assert_cmpint(tt.fsdp_degree, ==, 8);
  g_assert_cmpint(tt.layout.gpus, ==, 16);
  g_assert_cmpint(tt.layout.cp, ==, 2);
  g_assert_cmpint(tt.layout.dp, ==, 8);
  g_assert_cmpint(tt.grad_accumulation, ==, 2);
  g_assert_cmpint(tt.settings.reshard_after_forward, ==, PTSIM_RESHARD_NEVER);
  PtsimJobOptions o;
  PtsimJob job;
  ptsim_job_options_init(&o);
  o.model = g_strdup("llama3-8b");
  o.cp = (PtsimOptionInt){TRUE, 2};
  o.mbs = (PtsimOptionInt){TRUE, 1};
  o.gbs = (PtsimOptionInt){TRUE, 16};
  o.seq = (PtsimOptionInt){TRUE, 16384};
  o.recompute = g_strdup("full");
  o.transformer_impl = g_strdup("torch");
  o.sharding = g_strdup("hsdp");
  o.hsdp_shard_size = (PtsimOptionInt){TRUE, 8};
  o.fsdp_impl = g_strdup("torch");
  o.reshard_after_forward = g_strdup("never");
  o.no_overlap = TRUE;
  o.cp_comm_type = g_strdup("allgather"); /* context_parallel_rotate_method's default */
  same_job_as_flags("llama3_8b_hsdp_cp.toml", 16, &o, &job);
  g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
  ptsim_plan_build(&job, plan);
  g_assert_cmpint(plan->shard_group.size, ==, 8);
  g_assert_cmpint(plan->shard_group.stride, ==, 1);
  g_assert_cmpint(plan->shard_group.nodes, ==, 1);
  g_assert_cmpint(plan->replicate_group.size, ==, 2);
  g_assert_cmpint(plan->replicate_group.stride, ==, 8);
  g_assert_false(plan->gather_backward); /* kept from forward to backward */
}

static void test_fsdp_pp(void) {
  g_test_summary("FSDP 4 x PP 2: torch.distributed.pipelining reduces once per step and keeps "
                 "the units gathered (sync_once); == --sharding fsdp --fsdp-impl torch --pp 2");
  g_auto(PtsimTorchtitan) tt = {0};
  g_autoptr(GPtrArray) warnings = NULL;
  load("llama3_8b_fsdp_pp.toml", 8, &tt, &warnings);
  g_assert_null(tt.unmodelled);
  g_assert_cmpint(tt.dp_shard, ==, 4);
  g_assert_cmpint(tt.layout.pp, ==, 2);
  g_assert_cmpint(tt.layout.mbs, ==, 1);
  g_assert_cmpint(tt.layout.gbs, ==, 32);
  PtsimJobOptions o;
  PtsimJob job;
  ptsim_job_options_init(&o);
  o.model = g_strdup("llama3-8b");
  o.pp = (PtsimOptionInt){TRUE, 2};
  o.mbs = (PtsimOptionInt){TRUE, 1};
  o.gbs = (PtsimOptionInt){TRUE, 32};
  o.seq = (PtsimOptionInt){TRUE, 4096};
  o.recompute = g_strdup("full");
  o.transformer_impl = g_strdup("torch");
  o.sharding = g_strdup("fsdp");
  o.fsdp_impl = g_strdup("torch");
  o.no_overlap = TRUE;
  same_job_as_flags("llama3_8b_fsdp_pp.toml", 8, &o, &job);
  g_assert_cmpint(job.settings.reshard_after_forward, ==, PTSIM_RESHARD_NEVER);
  g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
  ptsim_plan_build(&job, plan);
  g_assert_true(plan->sync_once);
  g_assert_false(plan->gather_forward);
  g_assert_false(plan->reduce_backward);
  g_assert_cmpfloat(plan->grad_shards, ==, 1.0); /* accumulated unsharded */
}

static void test_pp_405b(void) {
  g_test_summary(
      "FSDP x TP 8 x PP 4, Interleaved1F1B, 8 layers per stage: vp 4, mbs, accumulation");
  g_auto(PtsimTorchtitan) tt = {0};
  g_autoptr(GPtrArray) warnings = NULL;
  load("llama3_405b_pp.toml", 512, &tt, &warnings);
  const PtsimLayout *l = &tt.layout;
  g_assert_cmpstr(tt.model, ==, "llama3.1-405b");
  g_assert_cmpint(tt.dp_shard, ==, 16); /* 512 / (8 x 4) */
  g_assert_cmpint(l->pp, ==, 4);
  g_assert_cmpint(l->vp, ==, 4); /* ceil((126 + 1 + 1) / 8) = 16 stages / 4 ranks */
  g_assert_cmpint(l->schedule, ==, PTSIM_SCHEDULE_INTERLEAVED);
  g_assert_cmpint(l->mbs, ==, 1); /* pipeline_parallel_microbatch_size */
  g_assert_cmpint(l->gbs, ==, 512);
  g_assert_cmpint(tt.grad_accumulation, ==, 2);
  has_warning(warnings, "llama3_405b_pp.toml", 9, "own pipeline schedule");
  g_assert_cmpint(l->sharding, ==, PTSIM_SHARDING_PARAMS);
  /* 126 layers + embedding + output = 128 slots, 8 per virtual stage: the
   * first and the last give one slot each to the embedding and the
   * output, so the 16 virtual stages hold 7, 8 x 14, 7 layers: three runs */
  g_assert_null(tt.unmodelled);
  g_assert_cmpint(l->vstage_runs, ==, 3);
  g_assert_cmpint(l->vstage_run_count[0], ==, 1);
  g_assert_cmpint(l->vstage_run_layers[0], ==, 7);
  g_assert_cmpint(l->vstage_run_count[1], ==, 14);
  g_assert_cmpint(l->vstage_run_layers[1], ==, 8);
  g_assert_cmpint(l->vstage_run_count[2], ==, 1);
  g_assert_cmpint(l->vstage_run_layers[2], ==, 7);
}

/* A config from TEXT on GPUS (warnings dropped); FALSE with *error. */
static gboolean from_text(const char *text, int64_t gpus, PtsimTorchtitan *tt, GError **error) {
  g_autoptr(PtsimToml) toml = ptsim_toml_parse("x.toml", text, strlen(text), error);
  return toml != NULL && ptsim_torchtitan_parse(toml, gpus, tt, NULL, error);
}

static void test_qwen3(void) {
  g_test_summary("torchtitan's dense qwen3 flavors built from its flavor args; the mixture-of-"
                 "experts families refused by name");
  g_auto(PtsimTorchtitan) tt = {0};
  g_autoptr(GPtrArray) warnings = NULL;
  load("qwen3_8b_fsdp_tp.toml", 8, &tt, &warnings);
  g_assert_cmpstr(tt.model, ==, "qwen3-8b");
  g_assert_cmpint(tt.layout.tp, ==, 2);
  g_assert_cmpint(tt.dp_shard, ==, 4); /* 8 / tp 2 */
  /* 36 x (41,943,040 attention + 256 q/k norms + 3 x 4096 x 12288 MLP +
   * 8192 norms) + 2 x 151936 x 4096 + 4096: Qwen3-8B's 8.19B */
  double total = 0;
  ptsim_plan_model_parameters(&tt.model_def, 4096, &total, NULL);
  g_assert_cmpfloat(total, ==, 8190735360.0);
  g_assert_cmpint(tt.model_def.qk_layernorm, ==, 1);
  PtsimJob job;
  memset(&job, 0, sizeof job);
  g_assert_true(ptsim_hardware_load("h100-80g", &job.hw, NULL));
  g_assert_true(ptsim_torchtitan_job(&tt, &job, NULL));
  g_assert_cmpmem(&job.model, sizeof job.model, &tt.model_def, sizeof tt.model_def);
  /* 0.6B, tied: 28 x (q 1024 x 2048 + k, v 2 x 1024 x 1024 + o 2048 x 1024
   * + 256 + 3 x 1024 x 3072 + 2048) + 151936 x 1024 + 1024 (0.44B without
   * the embedding, as published) */
  g_auto(PtsimTorchtitan) small = {0};
  g_autoptr(GError) error = NULL;
  g_assert_true(from_text("[model]\nname = \"qwen3\"\nflavor = \"0.6B\"\n[parallelism]\n"
                          "data_parallel_shard_degree = 8\n",
                          -1, &small, &error));
  ptsim_plan_model_parameters(&small.model_def, 4096, &total, NULL);
  g_assert_cmpfloat(total, ==, 596049920.0);
  g_assert_cmpint(small.model_def.tied_embeddings, ==, 1);
  g_auto(PtsimTorchtitan) moe = {0};
  g_assert_false(from_text("[model]\nname = \"qwen3\"\nflavor = \"30B\"\n", 8, &moe, &error));
  g_assert_nonnull(strstr(error->message, "allowed: 0.6B, 1.7B, 4B, 8B, 14B, 32B, 30B-A3B"));
}

/* FSDP over 2 ranks x TP 2 x PP `pp` of FLAVOR with the extra [parallelism] lines. */
static void split_of(const char *flavor, int pp, const char *extra, PtsimTorchtitan *tt) {
  g_autofree char *text =
      g_strdup_printf("[model]\nflavor = \"%s\"\n[training]\nlocal_batch_size = 8\nseq_len = 4096\n"
                      "[parallelism]\ndata_parallel_shard_degree = 2\ntensor_parallel_degree = 2\n"
                      "pipeline_parallel_degree = %d\n%s",
                      flavor, pp, extra);
  g_autoptr(GError) error = NULL;
  g_assert_true(from_text(text, -1, tt, &error));
  g_assert_no_error(error);
}

static void test_stage_split(void) {
  g_test_summary(
      "torchtitan's stage split (embedding and output count as one layer each) in ptsim's terms");
  g_auto(PtsimTorchtitan) a = {0};
  split_of("8B", 2, "", &a); /* (32+2)/2 = 17 each, minus 1 at both ends: 16, 16 */
  g_assert_cmpint(a.layout.first_stage_layers, ==, 0);
  g_assert_cmpint(a.layout.last_stage_layers, ==, 0);
  g_assert_cmpint(a.layout.vp, ==, 1);
  g_auto(PtsimTorchtitan) b = {0};
  split_of("405B", 4, "", &b); /* 128/4 = 32: 31, 32, 32, 31: Megatron's uneven ends */
  g_assert_cmpint(b.layout.first_stage_layers, ==, 31);
  g_assert_cmpint(b.layout.last_stage_layers, ==, 31);
  g_auto(PtsimTorchtitan) c = {0};
  split_of("8B", 2,
           "pipeline_parallel_first_stage_less_layers = 0\n"
           "pipeline_parallel_last_stage_less_layers = 2\n",
           &c); /* 17, 15 */
  g_assert_cmpint(c.layout.first_stage_layers, ==, 17);
  g_assert_cmpint(c.layout.last_stage_layers, ==, 15);
  g_auto(PtsimTorchtitan) d = {0};
  split_of("70B", 4, "", &d); /* 82/4 = 20 r 2: 21, 21, 20, 20 slots; less the embedding and the
                               * output: 20, 21, 20, 19 layers, four runs of one stage */
  g_assert_cmpint(d.layout.first_stage_layers, ==, 0);
  g_assert_cmpint(d.layout.last_stage_layers, ==, 0);
  g_assert_cmpint(d.layout.vstage_runs, ==, 4);
  g_assert_cmpint(d.layout.vstage_run_layers[0], ==, 20);
  g_assert_cmpint(d.layout.vstage_run_layers[1], ==, 21);
  g_assert_cmpint(d.layout.vstage_run_layers[2], ==, 20);
  g_assert_cmpint(d.layout.vstage_run_layers[3], ==, 19);
  g_auto(PtsimTorchtitan) e = {0};
  split_of("8B", 2, "pipeline_parallel_schedule = \"Interleaved1F1B\"\n", &e); /* 2 per rank */
  g_assert_cmpint(e.layout.vp, ==, 2);
  g_assert_cmpint(e.layout.schedule, ==, PTSIM_SCHEDULE_INTERLEAVED);
  g_auto(PtsimTorchtitan) f = {0};
  split_of("8B", 2, "pipeline_parallel_schedule = \"ZBVZeroBubble\"\n", &f);
  g_assert_null(f.unmodelled); /* the V: 2 stages per rank */
  g_assert_cmpint(f.layout.vp, ==, 2);
  g_assert_cmpint(f.layout.schedule, ==, PTSIM_SCHEDULE_ZBV);
  /* torchtitan's own refusals */
  g_autoptr(GError) error = NULL;
  g_auto(PtsimTorchtitan) g = {0};
  g_assert_false(
      from_text("[model]\nflavor = \"8B\"\n[parallelism]\ndata_parallel_shard_degree = 1\n"
                "pipeline_parallel_degree = 2\npipeline_parallel_layers_per_stage = 8\n",
                -1, &g, &error)); /* ceil(34/8) = 5 stages on 2 ranks */
  g_assert_true(g_str_has_prefix(error->message, "x.toml:6: "));
  g_assert_nonnull(strstr(error->message, "5 virtual stages"));
  g_clear_error(&error);
  g_assert_false(
      from_text("[model]\nflavor = \"8B\"\n[parallelism]\ndata_parallel_shard_degree = 1\n"
                "pipeline_parallel_degree = 2\npipeline_parallel_schedule = \"2F2B\"\n",
                -1, &g, &error));
  g_assert_nonnull(strstr(error->message, "not a PyTorch schedule"));
}

/* module_fqns_per_model_part = [[PART], ...]: each part "a-b" (layers a
 * to b), the embedding in front of the first, the norm and output after
 * the last. */
static char *fqns_line(const char *const *parts) {
  GString *s = g_string_new("module_fqns_per_model_part = [");
  guint n = g_strv_length((char **)parts);
  for (guint p = 0; p < n; p++) {
    int a = 0, b = 0;
    g_assert_cmpint(sscanf(parts[p], "%d-%d", &a, &b), ==, 2);
    g_string_append_printf(s, "%s[%s", p ? ", " : "", p == 0 ? "\"tok_embeddings\", " : "");
    for (int l = a; l <= b; l++) g_string_append_printf(s, "%s\"layers.%d\"", l > a ? ", " : "", l);
    g_string_append_printf(s, "%s]", p == n - 1 ? ", \"norm\", \"output\"" : "");
  }
  g_string_append(s, "]\n");
  return g_string_free(s, FALSE);
}

static void test_fqns_split(void) {
  g_test_summary("a hand-made stage split (module_fqns_per_model_part) in ptsim's terms");
  static const char *const two[] = {"0-19", "20-31", NULL};
  g_autofree char *a_line = fqns_line(two);
  g_auto(PtsimTorchtitan) a = {0};
  split_of("8B", 2, a_line, &a); /* 20 and 12 layers: Megatron's uneven ends */
  g_assert_null(a.unmodelled);
  g_assert_cmpint(a.layout.vp, ==, 1);
  g_assert_cmpint(a.layout.first_stage_layers, ==, 20);
  g_assert_cmpint(a.layout.last_stage_layers, ==, 12);
  static const char *const four[] = {"0-6", "7-14", "15-22", "23-31", NULL};
  g_autofree char *b_line = fqns_line(four);
  g_autofree char *b_extra = g_strconcat("pipeline_parallel_schedule = \"Interleaved1F1B\"\n",
                                         b_line, NULL);
  g_auto(PtsimTorchtitan) b = {0};
  split_of("8B", 2, b_extra, &b); /* 4 parts on 2 ranks: 7, 8, 8, 9 as runs */
  g_assert_null(b.unmodelled);
  g_assert_cmpint(b.layout.vp, ==, 2);
  g_assert_cmpint(b.layout.vstage_runs, ==, 3);
  g_assert_cmpint(b.layout.vstage_run_layers[0], ==, 7);
  g_assert_cmpint(b.layout.vstage_run_count[1], ==, 2);
  g_assert_cmpint(b.layout.vstage_run_layers[1], ==, 8);
  g_assert_cmpint(b.layout.vstage_run_layers[2], ==, 9);
  /* layers out of order: read, then refused by name */
  g_auto(PtsimTorchtitan) c = {0};
  split_of("8B", 2,
           "module_fqns_per_model_part = [[\"tok_embeddings\", \"layers.1\"], "
           "[\"layers.0\", \"layers.2\", \"layers.3\", \"layers.4\", \"layers.5\", "
           "\"layers.6\", \"layers.7\", \"layers.8\", \"layers.9\", \"layers.10\", "
           "\"layers.11\", \"layers.12\", \"layers.13\", \"layers.14\", \"layers.15\", "
           "\"layers.16\", \"layers.17\", \"layers.18\", \"layers.19\", \"layers.20\", "
           "\"layers.21\", \"layers.22\", \"layers.23\", \"layers.24\", \"layers.25\", "
           "\"layers.26\", \"layers.27\", \"layers.28\", \"layers.29\", \"layers.30\", "
           "\"layers.31\", \"norm\", \"output\"]]\n",
           &c);
  g_assert_nonnull(strstr(c.unmodelled, "layers.1 in model part 0: ptsim's stages hold "
                                        "consecutive layers in order (expected layers.0)"));
  /* torchtitan's own refusals: a module the model does not have, layers
   * left out, parts that do not divide among the ranks */
  g_autoptr(GError) error = NULL;
  g_auto(PtsimTorchtitan) d = {0};
  static const char *const bad[] = {"0-19", "20-32", NULL};
  g_autofree char *d_line = fqns_line(bad);
  g_autofree char *d_text =
      g_strdup_printf("[model]\nflavor = \"8B\"\n[parallelism]\ndata_parallel_shard_degree = 1\n"
                      "pipeline_parallel_degree = 2\n%s",
                      d_line);
  g_assert_false(from_text(d_text, -1, &d, &error));
  g_assert_nonnull(strstr(error->message, "'layers.32' is not a module of llama3-8b"));
  g_clear_error(&error);
  static const char *const short_[] = {"0-19", "20-30", NULL};
  g_autofree char *e_line = fqns_line(short_);
  g_autofree char *e_text =
      g_strdup_printf("[model]\nflavor = \"8B\"\n[parallelism]\ndata_parallel_shard_degree = 1\n"
                      "pipeline_parallel_degree = 2\n%s",
                      e_line);
  g_assert_false(from_text(e_text, -1, &d, &error));
  g_assert_nonnull(strstr(error->message, "the model parts hold 31 of llama3-8b's 32 layers"));
  g_clear_error(&error);
  static const char *const three[] = {"0-9", "10-19", "20-31", NULL};
  g_autofree char *f_line = fqns_line(three);
  g_autofree char *f_text =
      g_strdup_printf("[model]\nflavor = \"8B\"\n[parallelism]\ndata_parallel_shard_degree = 1\n"
                      "pipeline_parallel_degree = 2\n%s",
                      f_line);
  g_assert_false(from_text(f_text, -1, &d, &error));
  g_assert_nonnull(strstr(error->message, "3 model parts are not divisible by "
                                          "pipeline_parallel_degree 2"));
  g_clear_error(&error);
  g_assert_false(from_text("[model]\nflavor = \"8B\"\n[parallelism]\n"
                           "module_fqns_per_model_part = [\"layers.0\"]\n",
                           -1, &d, &error));
  g_assert_nonnull(strstr(error->message, "expected an array of arrays of strings"));
}

/* The V-shaped schedules by torchtitan's names: the same job as ptsim's
 * --schedule zbv|dualpipev (with the FSDP-under-PP flags of test_fsdp_pp). */
static void v_shape_parity(const char *fixture_name, const char *native, PtsimSchedule kind) {
  g_auto(PtsimTorchtitan) tt = {0};
  g_autoptr(GPtrArray) warnings = NULL;
  load(fixture_name, 8, &tt, &warnings);
  g_assert_null(tt.unmodelled);
  g_assert_cmpint(tt.layout.schedule, ==, kind);
  g_assert_cmpint(tt.layout.vp, ==, 2); /* exactly two stages per rank, as PyTorch asks */
  PtsimJobOptions o;
  PtsimJob job;
  ptsim_job_options_init(&o);
  o.model = g_strdup("llama3-8b");
  o.pp = (PtsimOptionInt){TRUE, 2};
  o.mbs = (PtsimOptionInt){TRUE, 1};
  o.gbs = (PtsimOptionInt){TRUE, 32};
  o.seq = (PtsimOptionInt){TRUE, 4096};
  o.recompute = g_strdup("full");
  o.transformer_impl = g_strdup("torch");
  o.sharding = g_strdup("fsdp");
  o.fsdp_impl = g_strdup("torch");
  o.no_overlap = TRUE;
  o.schedule = g_strdup(native); /* vp 2 follows from the schedule */
  same_job_as_flags(fixture_name, 8, &o, &job);
  g_assert_cmpint(job.layout.vp, ==, 2);
  g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
  ptsim_plan_build(&job, plan);
  /* the V: stage 0 holds virtual stages 0 and 3, stage 1 holds 1 and 2 */
  g_assert_cmpint(plan->vstages.first_stage, ==, 0);
  g_assert_cmpint(plan->vstages.last_stage, ==, 0);
  g_assert_cmpint(ptsim_schedule_vstage_of(&plan->vstages, 0, 1), ==, 3);
  g_assert_cmpint(ptsim_schedule_vstage_of(&plan->vstages, 1, 1), ==, 2);
  g_assert_true(plan->sync_once); /* one reduction per step, after the last W */
  /* the analytical estimate's in-flight microbatches (of a whole stage):
   * 2p = 4 half-stage chunks for ZBV, 2p + 1 = 5 for DualPipeV */
  for (int s = 0; s < 2; s++)
    g_assert_cmpfloat(plan->inflight_microbatches[s], ==, kind == PTSIM_SCHEDULE_ZBV ? 2.0 : 2.5);
}

static void test_v_shape(void) {
  g_test_summary("ZBVZeroBubble and DualPipeV (PyTorch's V-shaped schedules) == --schedule zbv "
                 "and --schedule dualpipev");
  v_shape_parity("llama3_8b_fsdp_zbv.toml", "zbv", PTSIM_SCHEDULE_ZBV);
  v_shape_parity("llama3_8b_fsdp_dualpipev.toml", "dualpipev", PTSIM_SCHEDULE_DUALPIPEV);
  /* PyTorch asks for exactly two stages per rank */
  g_autoptr(GError) error = NULL;
  g_auto(PtsimTorchtitan) g = {0};
  g_assert_false(from_text("[model]\nflavor = \"8B\"\n[parallelism]\ndata_parallel_shard_degree = "
                           "1\npipeline_parallel_degree = 2\npipeline_parallel_schedule = "
                           "\"DualPipeV\"\npipeline_parallel_layers_per_stage = 4\n",
                           -1, &g, &error)); /* ceil(34/4) = 9 stages: not divisible by 2 */
  g_clear_error(&error);
  g_auto(PtsimTorchtitan) h = {0};
  g_assert_false(from_text("[model]\nflavor = \"8B\"\n[parallelism]\ndata_parallel_shard_degree = "
                           "1\npipeline_parallel_degree = 2\npipeline_parallel_schedule = "
                           "\"ZBVZeroBubble\"\npipeline_parallel_layers_per_stage = 5\n",
                           -1, &h, &error)); /* ceil(34/5) = 7 stages: not divisible by 2 */
  g_clear_error(&error);
  g_auto(PtsimTorchtitan) i = {0};
  g_assert_false(from_text("[model]\nflavor = \"8B\"\n[parallelism]\ndata_parallel_shard_degree = "
                           "1\npipeline_parallel_degree = 2\npipeline_parallel_schedule = "
                           "\"ZBVZeroBubble\"\npipeline_parallel_layers_per_stage = 6\n",
                           -1, &i, &error)); /* ceil(34/6) = 6 stages: 3 per rank */
  g_assert_nonnull(strstr(error->message, "exactly 2 stages per rank"));
}

static void test_recompute(void) {
  g_test_summary(
      "activation_checkpoint modes and selective options, by hand on 8B (32 layers, pp 1)");
  static const struct {
    const char *lines;
    PtsimRecompute kind;
    PtsimRecomputeMethod method;
    int64_t layers;
  } cases[] = {
      {"mode = \"none\"\n", PTSIM_RECOMPUTE_NONE, PTSIM_RECOMPUTE_METHOD_UNIFORM, 0},
      {"mode = \"full\"\n", PTSIM_RECOMPUTE_FULL, PTSIM_RECOMPUTE_METHOD_UNIFORM, 0},
      {"", PTSIM_RECOMPUTE_FULL, PTSIM_RECOMPUTE_METHOD_BLOCK, 16}, /* default: selective '2' */
      {"selective_ac_option = '3'\n", PTSIM_RECOMPUTE_FULL, PTSIM_RECOMPUTE_METHOD_BLOCK, 10},
      {"selective_ac_option = '1'\n", PTSIM_RECOMPUTE_FULL, PTSIM_RECOMPUTE_METHOD_UNIFORM, 0},
      {"selective_ac_option = '0'\n", PTSIM_RECOMPUTE_FULL, PTSIM_RECOMPUTE_METHOD_UNIFORM, 0},
      {"selective_ac_option = '64'\n", PTSIM_RECOMPUTE_NONE, PTSIM_RECOMPUTE_METHOD_UNIFORM, 0},
      {"selective_ac_option = 'op'\n", PTSIM_RECOMPUTE_SELECTIVE_OP, PTSIM_RECOMPUTE_METHOD_UNIFORM,
       0},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *text =
        g_strdup_printf("[model]\nflavor = \"8B\"\n[parallelism]\ndata_parallel_shard_degree = 1\n"
                        "[activation_checkpoint]\n%s",
                        cases[i].lines);
    g_auto(PtsimTorchtitan) tt = {0};
    g_autoptr(GError) error = NULL;
    g_assert_true(from_text(text, -1, &tt, &error));
    g_assert_null(tt.unmodelled); /* one GPU: autocast bf16 */
    g_assert_cmpint(tt.settings.recompute, ==, cases[i].kind);
    g_assert_cmpint(tt.settings.recompute_method, ==, cases[i].method);
    g_assert_cmpint(tt.settings.recompute_num_layers, ==, cases[i].layers);
  }
  g_auto(PtsimTorchtitan) tt = {0};
  g_assert_true(
      from_text("[model]\nflavor = \"8B\"\n[parallelism]\ndata_parallel_shard_degree = 1\n"
                "[activation_checkpoint]\nmode = \"memory_budget\"\n",
                -1, &tt, NULL));
  g_assert_true(g_str_has_prefix(tt.unmodelled, "x.toml:6: "));
  g_autoptr(GError) error = NULL;
  g_auto(PtsimTorchtitan) bad = {0};
  g_assert_false(from_text(
      "[model]\nflavor = \"8B\"\n[activation_checkpoint]\nselective_ac_option = 'layer'\n", 1, &bad,
      &error));
  g_assert_true(g_str_has_prefix(error->message, "x.toml:4: "));
}

static void test_precision(void) {
  g_test_summary("float32 regimes are refused with the reason; float8 needs an fp8 GPU");
  g_auto(PtsimTorchtitan) tp = {0}; /* TP without FSDP: torchtitan trains in float32 */
  g_assert_true(
      from_text("[model]\nflavor = \"8B\"\n[parallelism]\ndata_parallel_shard_degree = 1\n"
                "tensor_parallel_degree = 2\n",
                -1, &tp, NULL));
  g_assert_true(g_str_has_prefix(tp.unmodelled, "x.toml:5: "));
  g_assert_nonnull(strstr(tp.unmodelled, "float32"));
  g_auto(PtsimTorchtitan) bf = {0};
  g_assert_true(from_text("[model]\nflavor = \"8B\"\n[training]\ndtype = \"bfloat16\"\n"
                          "[parallelism]\ndata_parallel_shard_degree = 1\n",
                          -1, &bf, NULL));
  g_assert_true(g_str_has_prefix(bf.unmodelled, "x.toml:4: "));
  g_auto(PtsimTorchtitan) f8 = {0};
  g_assert_true(from_text("[model]\nflavor = \"8B\"\nconverters = [\"quantize.linear.float8\"]\n"
                          "[parallelism]\ndata_parallel_shard_degree = 1\n",
                          -1, &f8, NULL));
  g_assert_null(f8.unmodelled);
  g_assert_cmpint(f8.settings.precision, ==, PTSIM_PRECISION_FP8);
  PtsimJob job;
  memset(&job, 0, sizeof job);
  g_assert_true(ptsim_hardware_load("a100-80g", &job.hw, NULL));
  g_autoptr(GError) error = NULL;
  g_assert_false(ptsim_torchtitan_job(&f8, &job, &error));
  g_assert_nonnull(strstr(error->message, "SM89"));
  g_clear_error(&error);
  g_assert_true(ptsim_hardware_load("l40s-48g", &job.hw, NULL));
  g_assert_true(ptsim_torchtitan_job(&f8, &job, &error));
  g_auto(PtsimTorchtitan) old = {0};
  g_assert_false(
      from_text("[model]\nflavor = \"8B\"\nconverters = [\"float8\"]\n", 1, &old, &error));
  g_assert_nonnull(strstr(error->message, "renamed 'quantize.linear.float8'"));
}

/* A config from TEXT on one GPU that loads; its warnings joined by '\n'. */
static char *warnings_of(const char *text, PtsimTorchtitan *tt) {
  g_autoptr(GError) error = NULL;
  g_autoptr(PtsimToml) toml = ptsim_toml_parse("x.toml", text, strlen(text), &error);
  g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func(g_free);
  g_assert_nonnull(toml);
  g_assert_true(ptsim_torchtitan_parse(toml, 1, tt, warnings, &error));
  g_ptr_array_add(warnings, NULL);
  return g_strjoinv("\n", (char **)warnings->pdata);
}

#define ONE_GPU "[model]\nflavor = \"8B\"\nconverters = [\"quantize.linear.float8\"]\n"

static void test_float8(void) {
  g_test_summary("float8: torchao's default is dynamic tensorwise scaling; rowwise recipes and "
                 "MX scale in their casts (ptsim's blockwise); what is not modelled is warned");
  g_auto(PtsimTorchtitan) d = {0};
  g_autofree char *dw = warnings_of(ONE_GPU, &d);
  g_assert_cmpint(d.settings.fp8_recipe, ==, PTSIM_FP8_TENSORWISE);
  g_assert_nonnull(strstr(dw, "x.toml:3: [model] converters: eager float8")); /* no compile */
  g_assert_nonnull(strstr(dw, "output projection is converted too"));         /* filter_fqns = [] */
  g_auto(PtsimTorchtitan) r = {0};
  g_autofree char *rw =
      warnings_of(ONE_GPU "[compile]\nenable = true\n[quantize.linear.float8]\n"
                          "recipe_name = \"rowwise_with_gw_hp\"\nfilter_fqns = [\"output\"]\n",
                  &r);
  g_assert_cmpint(r.settings.fp8_recipe, ==, PTSIM_FP8_BLOCKWISE);
  g_assert_nonnull(
      strstr(rw, "x.toml:7: [quantize.linear.float8] recipe_name: 'rowwise_with_gw_hp'"));
  g_assert_nonnull(strstr(rw, "weight-gradient GEMMs run in bf16"));
  g_assert_null(strstr(rw, "eager float8"));
  g_assert_null(strstr(rw, "filter_fqns"));
  g_auto(PtsimTorchtitan) mx = {0};
  g_autofree char *mw =
      warnings_of("[model]\nflavor = \"8B\"\nconverters = [\"quantize.linear.mx\"]\n", &mx);
  g_assert_cmpint(mx.settings.precision, ==, PTSIM_PRECISION_FP8);
  g_assert_cmpint(mx.settings.fp8_recipe, ==, PTSIM_FP8_BLOCKWISE);
  g_assert_nonnull(strstr(mw, "MXFP8"));
  g_assert_null(strstr(mw, "filter_fqns")); /* its default keeps 'output' in bf16 */
  g_autoptr(GError) error = NULL;
  g_auto(PtsimTorchtitan) bad = {0};
  const char *both = ONE_GPU "[quantize.linear.float8]\nrecipe_name = \"rowwise\"\n"
                             "enable_fsdp_float8_all_gather = true\n";
  g_assert_false(from_text(both, 1, &bad, &error));
  g_assert_true(g_str_has_prefix(error->message, "x.toml:5: "));
  g_assert_nonnull(strstr(error->message, "torchtitan asserts"));
}

static void test_layers(void) {
  g_test_summary("PyTorch's modules: eager, or fused when [compile] covers the model with "
                 "Inductor; per-op AC under CP warns of the ring's per-step outputs");
  const char *head = "[model]\nflavor = \"8B\"\n[parallelism]\ndata_parallel_shard_degree = 1\n"
                     "[activation_checkpoint]\nmode = \"none\"\n";
  static const struct {
    const char *lines;
    PtsimTorchLayers layers;
    const char *warning;
  } cases[] = {
      {"", PTSIM_TORCH_LAYERS_EAGER, NULL},
      {"[compile]\nenable = true\n", PTSIM_TORCH_LAYERS_COMPILED, "Inductor fuses"},
      {"[compile]\nenable = true\ncomponents = [\"loss\"]\n", PTSIM_TORCH_LAYERS_EAGER, NULL},
      {"[compile]\nenable = true\nbackend = \"aot_eager\"\n", PTSIM_TORCH_LAYERS_EAGER,
       "x.toml:9: [compile] backend: 'aot_eager'"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *text = g_strconcat(head, cases[i].lines, NULL);
    g_auto(PtsimTorchtitan) tt = {0};
    g_autofree char *w = warnings_of(text, &tt);
    g_assert_cmpint(tt.settings.transformer_engine, ==, 0);
    g_assert_cmpint(tt.settings.flash_attention, ==, 1);
    g_assert_cmpint(tt.settings.torch_layers, ==, cases[i].layers);
    if (cases[i].warning)
      g_assert_nonnull(strstr(w, cases[i].warning));
    else
      g_assert_cmpstr(w, ==, "");
  }
  g_auto(PtsimTorchtitan) cp = {0};
  g_autoptr(GError) error = NULL;
  const char *text =
      "[model]\nflavor = \"8B\"\n[parallelism]\ncontext_parallel_degree = 2\n"
      "[activation_checkpoint]\nmode = \"selective\"\nselective_ac_option = \"op\"\n";
  g_autoptr(PtsimToml) toml = ptsim_toml_parse("x.toml", text, strlen(text), &error);
  g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func(g_free);
  g_assert_true(ptsim_torchtitan_parse(toml, 2, &cp, warnings, &error));
  g_assert_cmpint(cp.settings.recompute, ==, PTSIM_RECOMPUTE_SELECTIVE_OP);
  g_assert_cmpuint(warnings->len, ==, 1); /* the rotate method is modelled: no warning */
  g_assert_nonnull(strstr(warnings->pdata[0],
                          "x.toml:7: [activation_checkpoint] "
                          "selective_ac_option: 'op' under context parallelism"));
}

static void check_fails(const char *text, int64_t gpus, int code, const char *prefix,
                        const char *needle) {
  g_auto(PtsimTorchtitan) tt = {0};
  g_autoptr(GError) error = NULL;
  g_assert_false(from_text(text, gpus, &tt, &error));
  g_test_message("%s", error->message);
  g_assert_error(error, PTSIM_CONFIG_ERROR, code);
  g_assert_true(g_str_has_prefix(error->message, prefix));
  if (strstr(error->message, needle) == NULL) g_assert_cmpstr(error->message, ==, needle);
  g_assert_null(strchr(error->message, '\n'));
}

static void test_errors(void) {
  g_test_summary("schema and torchtitan's own checks: FILE:LINE, the key, what is allowed");
  const int P = PTSIM_CONFIG_ERROR_PARSE, I = PTSIM_CONFIG_ERROR_INVALID;
  check_fails("[training]\nbatch_size = 8\n", 1, P,
              "x.toml:2: ", "renamed [training] local_batch_size");
  check_fails("[training]\nseq_lenn = 8\n", 1, P, "x.toml:2: ", "unknown key 'seq_lenn'");
  check_fails("[float8]\nenable_float8_linear = true\n", 1, P,
              "x.toml:1: ", "renamed [quantize.linear.float8]");
  check_fails("[mystery]\n", 1, P, "x.toml:1: ", "unknown section [mystery]");
  check_fails("seed = 1\n", 1, P, "x.toml:1: ", "before any [section]");
  check_fails("[training]\nseq_len = \"8192\"\n", 1, P, "x.toml:2: ", "expected an integer");
  check_fails("[training]\nseq_len = 8192.0\n", 1, P, "x.toml:2: ", "is a float");
  check_fails("[model]\nconverters = \"quantize.linear.float8\"\n", 1, P,
              "x.toml:2: ", "expected an array of strings");
  check_fails("[parallelism]\nmodule_fqns_per_model_part = [\"layers.0\"]\n", 1, P,
              "x.toml:2: ", "expected an array of arrays of strings");
  check_fails("[activation_checkpoint]\nmode = \"partial\"\n", 1, P,
              "x.toml:2: ", "expected one of selective|full|memory_budget|none");
  check_fails("[model]\nname = \"deepseek_v3\"\n", 1, I,
              "x.toml:1: ", "flavor = 'debugmodel' has no ptsim model; allowed: 16B, 671B");
  check_fails("[model]\nname = \"flux\"\n", 1, I, "x.toml:2: ",
              "ptsim reads torchtitan's llama3, qwen3, deepseek_v3 and gpt_oss configs");
  check_fails("[model]\nflavor = \"debugmodel\"\n", 1, I, "x.toml:2: ", "has no ptsim model");
  check_fails("[model]\nflavor = \"8B\"\n[parallelism]\ndata_parallel_replicate_degree = 2\n"
              "data_parallel_shard_degree = 1\ntensor_parallel_degree = 2\n",
              -1, I, "x.toml:4: ", "DDP has not supported");
  check_fails("[model]\nflavor = \"8B\"\n[training]\nlocal_batch_size = 3\nglobal_batch_size = 8\n"
              "[parallelism]\ndata_parallel_shard_degree = 1\n",
              -1, I, "x.toml:5: ", "not a multiple of local_batch_size 3");
  check_fails("[model]\nflavor = \"8B\"\n[training]\nseq_len = 4097\n[parallelism]\n"
              "data_parallel_shard_degree = 2\ntensor_parallel_degree = 2\n",
              -1, I, "x.toml:4: ", "not divisible by tp x 2 cp = 4");
  check_fails("[model]\nflavor = \"8B\"\n[parallelism]\ntensor_parallel_degree = 0\n", 8, I,
              "x.toml:4: ", "expected an integer >= 1");
  check_fails("[model]\nflavor = \"8B\"\n[parallelism]\ntensor_parallel_degree = 1073741824\n"
              "pipeline_parallel_degree = 1073741824\n",
              -1, I, "x.toml:5: ", "exceeds");
  check_fails("[model]\nflavor = \"8B\"\n[parallelism]\ntensor_parallel_degree = 3\n", 8, I,
              "x.toml:3: ", "not divisible by replicate x cp x tp x pp = 3");
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/torchtitan/ddp-8b", test_ddp_8b);
  g_test_add_func("/torchtitan/fsdp-8b", test_fsdp_8b);
  g_test_add_func("/torchtitan/hsdp-cp", test_hsdp_cp);
  g_test_add_func("/torchtitan/fsdp-pp", test_fsdp_pp);
  g_test_add_func("/torchtitan/hsdp-70b", test_hsdp_70b);
  g_test_add_func("/torchtitan/pp-405b", test_pp_405b);
  g_test_add_func("/torchtitan/qwen3", test_qwen3);
  g_test_add_func("/torchtitan/stage-split", test_stage_split);
  g_test_add_func("/torchtitan/fqns-split", test_fqns_split);
  g_test_add_func("/torchtitan/v-shape", test_v_shape);
  g_test_add_func("/torchtitan/recompute", test_recompute);
  g_test_add_func("/torchtitan/precision", test_precision);
  g_test_add_func("/torchtitan/float8", test_float8);
  g_test_add_func("/torchtitan/layers", test_layers);
  g_test_add_func("/torchtitan/errors", test_errors);
  return g_test_run();
}
