/* test_torchtitan_python.c — sim/io/torchtitan_python.c (torchtitan's Python
 * configuration form: --module M --config F and --section.option overrides,
 * the functions as models/torchtitan/configs.toml) and the mixture-of-experts
 * families of sim/io/torchtitan_model.c: a launch gives the same job as the
 * TOML form of the same settings (parity), overrides apply on top, unknown
 * modules, configs and options name the closest known; each family's flavor
 * has its published parameter total, derived by hand below.
 *
 * Fixtures: tests/data/torchtitan via G_TEST_SRCDIR; models/ and
 * hw_profiles/ via PTSIM_DATA_DIR. */
#include <string.h>

#include <glib.h>

#include "config.h"
#include "job_validate.h"
#include "plan.h"
#include "torchtitan.h"
#include "torchtitan_python.h"

static char *fixture(const char *name) {
  return g_test_build_filename(G_TEST_DIST, "data", "torchtitan", name, NULL);
}

static void load(const char *name, int64_t gpus, PtsimTorchtitan *tt) {
  g_autofree char *path = fixture(name);
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func(g_free);
  g_assert_true(ptsim_torchtitan_load(path, gpus, tt, warnings, &error));
  g_assert_no_error(error);
  for (guint i = 0; i < warnings->len; i++)
    g_test_message("warning: %s", (char *)warnings->pdata[i]);
}

/* A one-line launch: the words of LINE after "torchrun --nproc_per_node 8
 * -m torchtitan.train". */
static gboolean launch(const char *line, int64_t gpus, PtsimTorchtitan *tt, GError **error) {
  g_autofree char *text = g_strdup_printf("torchrun --nproc_per_node 8 -m torchtitan.train %s\n",
                                          line);
  int64_t launched = -1;
  g_autoptr(PtsimToml)
      toml = ptsim_torchtitan_python_parse("run.sh", text, strlen(text), &launched, NULL, error);
  if (toml == NULL) return FALSE;
  g_assert_cmpint(launched, ==, 8);
  return ptsim_torchtitan_parse(toml, gpus, tt, NULL, error);
}

static gboolean from_text(const char *text, int64_t gpus, PtsimTorchtitan *tt, GError **error) {
  g_autoptr(PtsimToml) toml = ptsim_toml_parse("x.toml", text, strlen(text), error);
  return toml != NULL && ptsim_torchtitan_parse(toml, gpus, tt, NULL, error);
}

/* Everything the job is made of is the same. */
static void assert_same(const PtsimTorchtitan *a, const PtsimTorchtitan *b) {
  g_assert_cmpstr(a->model, ==, b->model);
  g_assert_cmpmem(&a->model_def, sizeof a->model_def, &b->model_def, sizeof b->model_def);
  g_assert_cmpmem(&a->layout, sizeof a->layout, &b->layout, sizeof b->layout);
  g_assert_cmpmem(&a->settings, sizeof a->settings, &b->settings, sizeof b->settings);
  g_assert_cmpint(a->dp_mode, ==, b->dp_mode);
  g_assert_cmpint(a->dp_shard, ==, b->dp_shard);
  g_assert_cmpint(a->dp_replicate, ==, b->dp_replicate);
  g_assert_cmpint(a->grad_accumulation, ==, b->grad_accumulation);
  g_assert_cmpint(a->compile, ==, b->compile);
  g_assert_cmpint(a->fsdp_float8_all_gather, ==, b->fsdp_float8_all_gather);
  g_assert_cmpstr(a->unmodelled, ==, b->unmodelled);
}

static void test_parity(void) {
  g_test_summary("a Python-form launch and the TOML form of the same settings give the same job");
  /* llama3_8b (b5bcd76): 1 x 8192 tokens per microbatch, max_context_length
   * 8192 -> 1 sequence of 8192; SelectiveAC -> per-op; profiling on; with
   * --parallelism.tensor_parallel_degree 2 on top */
  g_auto(PtsimTorchtitan) py = {0};
  load("run_llama3_8b.sh", -1, &py); /* the world from NGPU=8 */
  g_auto(PtsimTorchtitan) toml = {0};
  g_autoptr(GError) error = NULL;
  g_assert_true(from_text("[model]\nname = \"llama3\"\nflavor = \"8B\"\n[training]\n"
                          "local_batch_size = 1\nseq_len = 8192\n[parallelism]\n"
                          "tensor_parallel_degree = 2\n[activation_checkpoint]\nmode = "
                          "\"selective\"\nselective_ac_option = \"op\"\n[profiling]\n"
                          "enable_profiling = true\nprofile_freq = 100\n",
                          8, &toml, &error));
  g_assert_no_error(error);
  assert_same(&py, &toml);
  g_assert_cmpint(py.layout.tp, ==, 2);
  g_assert_cmpint(py.dp_shard, ==, 4); /* 8 / tp 2 */
  g_assert_cmpint(py.settings.recompute, ==, PTSIM_RECOMPUTE_SELECTIVE_OP);
  /* llama3_405b (TP 8, float8 without the LM head, compile with async TP,
   * full AC) + PP 8 Interleaved1F1B with 16 pipeline microbatches of 2 x
   * 8192 tokens: local_batch_size 2 x 16 = 32, microbatch 2 */
  g_auto(PtsimTorchtitan) p405 = {0};
  load("run_llama3_405b.sh", -1, &p405); /* --nnodes=64 x --nproc_per_node=8 */
  g_auto(PtsimTorchtitan) t405 = {0};
  load("llama3_405b_interleaved.toml", 512, &t405);
  assert_same(&p405, &t405);
  g_assert_cmpint(p405.layout.gpus, ==, 512);
  g_assert_cmpint(p405.layout.mbs, ==, 2);
  g_assert_cmpint(p405.layout.gbs, ==, 32 * 8); /* local 32 x dp 8 (512 / tp 8 / pp 8) */
  g_assert_cmpint(p405.settings.tp_comm_overlap, ==, 1);
  /* the 405B split: 16 virtual stages of (126 + 2) / 16 = 8 slots, the
   * first less the embedding, the last less the output: 7, 8 x 14, 7 */
  g_assert_cmpint(p405.layout.vp, ==, 2);
  g_assert_cmpint(p405.layout.schedule, ==, PTSIM_SCHEDULE_INTERLEAVED);
  g_assert_cmpint(p405.layout.vstage_runs, ==, 3);
  g_assert_cmpint(p405.layout.vstage_run_layers[0], ==, 7);
  g_assert_cmpint(p405.layout.vstage_run_count[1], ==, 14);
  g_assert_cmpint(p405.layout.vstage_run_layers[1], ==, 8);
  g_assert_cmpint(p405.layout.vstage_run_layers[2], ==, 7);
}

static void test_overrides(void) {
  g_test_summary("--section.option overrides on top of the function's fields, in tyro's syntax");
  /* run_train_qwen3.sh: qwen3_0_6b (4 x 4096 tokens, max_context_length
   * 4096) with max_context_length 2048: 16384 / 2048 = 8 sequences; TP 2 on
   * NGPU=4 leaves shard 2; --compile.enable and components=model */
  g_auto(PtsimTorchtitan) a = {0};
  load("run_train_qwen3.sh", -1, &a);
  g_assert_cmpstr(a.model, ==, "qwen3-0.6b");
  g_assert_cmpint(a.layout.gpus, ==, 4);
  g_assert_cmpint(a.layout.tp, ==, 2);
  g_assert_cmpint(a.dp_shard, ==, 2);
  g_assert_cmpint(a.layout.seq, ==, 2048);
  g_assert_cmpint(a.layout.mbs, ==, 8);
  g_assert_true(a.compile);
  g_assert_cmpint(a.settings.torch_layers, ==, PTSIM_TORCH_LAYERS_COMPILED);
  /* a later override wins; --compile.no-enable; --x=V; True/False */
  g_auto(PtsimTorchtitan) b = {0};
  g_autoptr(GError) error = NULL;
  g_assert_true(launch("--module llama3 --config llama3_405b --parallelism.tensor_parallel_degree "
                       "4 --parallelism.tensor_parallel_degree=2 --compile.no-enable "
                       "--training.num_tokens_per_train_step 131072 --debug.deterministic False",
                       8, &b, &error));
  g_assert_no_error(error);
  g_assert_cmpint(b.layout.tp, ==, 2);
  g_assert_false(b.compile);
  g_assert_cmpint(b.layout.gbs, ==, 16);              /* 131072 / 8192 */
  g_assert_cmpint(b.grad_accumulation, ==, 2);        /* 16 / (2 sequences x dp 4) */
  g_assert_cmpint(b.settings.tp_comm_overlap, ==, 0); /* async TP needs compile */
}

static void refused(const char *line, int code, const char *needle) {
  g_auto(PtsimTorchtitan) tt = {0};
  g_autoptr(GError) error = NULL;
  g_assert_false(launch(line, 8, &tt, &error));
  g_test_message("%s", error->message);
  g_assert_error(error, PTSIM_CONFIG_ERROR, code);
  g_assert_true(g_str_has_prefix(error->message, "run.sh:1: "));
  if (strstr(error->message, needle) == NULL) g_assert_cmpstr(error->message, ==, needle);
}

static void test_errors(void) {
  g_test_summary("unknown modules, configs and options exit 2 naming the closest known");
  const int P = PTSIM_CONFIG_ERROR_PARSE, I = PTSIM_CONFIG_ERROR_INVALID;
  refused("--module lama3 --config llama3_8b", I, "did you mean llama3?; known: llama3, qwen3");
  refused("--module torchtitan_recipes.tests.features --config llama3_8b", I,
          "ptsim has no config registry of that module");
  refused("--module llama3 --config llama3_8", I, "did you mean llama3_8b?");
  refused("--module llama3 --config llama3_8b --parallelism.tensor_paralel_degree 2", P,
          "did you mean --parallelism.tensor_parallel_degree?");
  refused("--module llama3 --config llama3_8b --training.seq_len 4096", P,
          "current torchtitan (b5bcd76) has training.max_context_length");
  refused("--module llama3 --config llama3_8b --model.flavor 70B", P, "not a command-line option");
  refused("--module llama3 --config llama3_8b --parallelism.tensor_parallel_degree two", P,
          "expected an integer");
  refused("--module llama3 --config llama3_8b --compile.enable yes", P, "is a boolean flag");
  refused("--module llama3 --config llama3_8b --training.max_context_length 3000", I,
          "not a whole number of max_context_length = 3000-token sequences");
  refused("--module llama3 --config llama3_8b --parallelism.fsdp_reshard_after_forward sometimes",
          P, "expected one of default|always|never");
  refused("--module llama3 --parallelism.tensor_parallel_degree 2", P,
          "needs --module and --config");
  refused("--module llama3 --config llama3_8b stray", P, "'stray'");
  /* the schema's own checks still apply, at the launch's line */
  refused("--module llama3 --config llama3_8b --parallelism.pipeline_parallel_degree 2 "
          "--parallelism.pipeline_parallel_schedule 2F2B",
          I, "not a PyTorch schedule");
}

static void test_old_form(void) {
  g_test_summary("a launch of the job-config TOML (--job.config_file, or run_train.sh's "
                 "CONFIG_FILE) with overrides in JobConfig's words == the edited TOML");
  g_auto(PtsimTorchtitan) launched = {0};
  load("run_train_toml.sh", -1, &launched);
  g_autofree char *path = fixture("llama3_8b_fsdp.toml");
  g_autofree char *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  /* the three overrides, edited into the file's own lines */
  static const char *const edits[][2] = {{"seq_len = 8192", "seq_len = 4096"},
                                         {"tensor_parallel_degree = 1",
                                          "tensor_parallel_degree = 2"},
                                         {"mode = \"selective\"", "mode = \"full\""}};
  for (size_t i = 0; i < G_N_ELEMENTS(edits); i++) {
    char *at = strstr(text, edits[i][0]);
    g_assert_nonnull(at);
    g_autofree char *head = g_strndup(text, (gsize)(at - text));
    char *edited = g_strconcat(head, edits[i][1], at + strlen(edits[i][0]), NULL);
    g_free(text);
    text = edited;
  }
  g_auto(PtsimTorchtitan) edited = {0};
  g_autoptr(GError) error = NULL;
  g_assert_true(from_text(text, 8, &edited, &error));
  g_assert_no_error(error);
  assert_same(&launched, &edited);
  g_assert_cmpint(launched.layout.tp, ==, 2);
  g_assert_cmpint(launched.layout.seq, ==, 4096);
  g_assert_cmpint(launched.settings.recompute, ==, PTSIM_RECOMPUTE_FULL);
  /* the TOML form's words only: current torchtitan's are unknown there */
  g_auto(PtsimTorchtitan) bad = {0};
  g_autofree char *dir = fixture("");
  g_autofree char *line =
      g_strdup_printf("--job.config_file %s/llama3_8b_fsdp.toml --training.max_context_length 4096",
                      dir);
  g_assert_false(launch(line, 8, &bad, &error));
  g_assert_nonnull(strstr(error->message, "no such option of torchtitan's JobConfig (238fa99)"));
}

/* A mixture-of-experts flavor's model: its parameter total. */
static void check_total(const char *name, const char *flavor, const char *model, double total) {
  g_autofree char *text = g_strdup_printf("[model]\nname = \"%s\"\nflavor = \"%s\"\n"
                                          "[parallelism]\ndata_parallel_shard_degree = 1\n"
                                          "[activation_checkpoint]\nmode = \"full\"\n",
                                          name, flavor);
  g_auto(PtsimTorchtitan) tt = {0};
  g_autoptr(GError) error = NULL;
  g_assert_true(from_text(text, 1, &tt, &error));
  g_assert_no_error(error);
  g_assert_cmpstr(tt.model, ==, model);
  double got = 0;
  ptsim_plan_model_parameters(&tt.model_def, 4096, &got, NULL);
  g_assert_cmpfloat(got, ==, total);
  g_assert_cmpint(tt.model_def.mtp_num_layers, ==, 0);
  g_assert_cmpint(tt.settings.torch_layers, ==, PTSIM_TORCH_LAYERS_NONE);
}

static void test_moe_totals(void) {
  g_test_summary("torchtitan's mixture-of-experts flavors: the published parameter totals");
  /* 16B: the DeepSeek-V2-Lite shape, test_moe.c's count (15.7B published) */
  check_total("deepseek_v3", "16B", "deepseek-v2-lite", 15706484224.0);
  /* 671B without the MTP block (num_mtp_layers 0): test_moe.c's count */
  check_total("deepseek_v3", "671B", "deepseek-v3", 671026404352.0);
  /* 30B-A3B: 30.5B published (test_hf_config.c's count) */
  check_total("qwen3", "30B-A3B", "qwen3-30b-a3b", 30532122624.0);
  /* 235B-A22B per layer: q 4096 x 8192 + k, v 2 x 4096 x 512 + o 8192 x
   * 4096 = 71,303,168, q/k norms 256, experts 128 x 3 x 4096 x 1536 =
   * 2,415,919,104, router 128 x 4096 = 524,288, norms 8192: 2,487,755,008 x
   * 94 = 233,848,970,752; 2 x 151936 x 4096 = 1,244,659,712; 4096 (235B) */
  check_total("qwen3", "235B-A22B", "qwen3-235b-a22b", 235093634560.0);
  /* 20b per layer: attention 26,542,080 + biases 8000, experts 32 x (2880 x
   * 5760 + 2880 x 2880) = 796,262,400 + their biases 32 x 8640 = 276,480,
   * router 32 x 2880 = 92,160, norms 5760: 823,186,880 x 24 =
   * 19,756,485,120; 2 x 201088 x 2880 = 1,158,266,880; 2880; the sinks
   * (torchtitan's Attention.sinks) 24 x 64 = 1536.  Published 20.91B
   * (20,914,757,184 with the router's biases 24 x 32, which ptsim does not
   * count) */
  check_total("gpt_oss", "20b", "gpt-oss-20b", 20914756416.0);
  /* 120b: test_hf_config.c's count of the same shape (116.83B) */
  check_total("gpt_oss", "120b", "gpt-oss-120b", 116829152064.0);
  /* 17bx16e: test_hf_config.c's Scout, 107,769,873,408, less its q/k L2
   * norms (2 x 128 x 48 = 12,288), which torchtitan's llama4 does not have */
  check_total("llama4", "17bx16e", "llama4-17bx16e", 107769861120.0);
  /* 17bx128e: attention 62,914,560 + norms 10240 in 48 layers =
   * 3,020,390,400; 24 MoE layers of 128 x 3 x 5120 x 8192 + the shared
   * 125,829,120 + router 655,360 = 16,232,611,840 -> 389,582,684,160; 24
   * dense of 3 x 5120 x 16384 = 251,658,240 -> 6,039,797,760; 2 x 202048 x
   * 5120 = 2,068,971,520; 5120: Maverick's 400B */
  check_total("llama4", "17bx128e", "llama4-17bx128e", 400711848960.0);
}

/* The job validated on H100s, or the validation error. */
static gboolean validated(const PtsimTorchtitan *tt, GError **error) {
  PtsimJob job;
  memset(&job, 0, sizeof job);
  g_assert_true(ptsim_hardware_load("h100-80g", &job.hw, NULL));
  return ptsim_torchtitan_job(tt, &job, error) && ptsim_job_validate(&job, error);
}

static void test_moe_jobs(void) {
  g_test_summary("expert parallelism 1 predicts; so does FSDP2 over experts (torchtitan's efsdp)");
  g_autoptr(GError) error = NULL;
  g_auto(PtsimTorchtitan) one = {0};
  load("qwen3_30b_a3b.toml", 1, &one);
  g_assert_cmpint(one.layout.ep, ==, 1);
  g_assert_true(validated(&one, &error));
  g_assert_no_error(error);
  g_auto(PtsimTorchtitan) ep = {0};
  load("gpt_oss_20b.toml", 8, &ep);
  g_assert_cmpint(ep.layout.ep, ==, 4);
  g_assert_cmpint(ep.layout.etp, ==, 1);
  g_assert_true(validated(&ep, &error));
  g_assert_no_error(error);
  /* the Python form of the same: gpt_oss_20b with expert parallelism 4 */
  g_auto(PtsimTorchtitan) py = {0};
  g_assert_true(launch("--module gpt_oss --config gpt_oss_20b "
                       "--parallelism.expert_parallel_degree 4",
                       8, &py, &error));
  g_assert_cmpint(py.layout.ep, ==, 4);
  g_assert_true(validated(&py, &error));
  g_assert_no_error(error);
  /* deepseek_v3_671b's SelectiveAC (per-op) on a mixture of experts */
  g_auto(PtsimTorchtitan) ds = {0};
  load("run_deepseek_v3.sh", -1, &ds);
  g_assert_cmpint(ds.layout.gpus, ==, 256); /* NNODES 32 x 8 */
  g_assert_cmpint(ds.layout.ep, ==, 8);     /* NNODES > 16 */
  g_assert_cmpint(ds.layout.pp, ==, 8);
  g_assert_cmpint(ds.layout.vp, ==, 2); /* Interleaved1F1B */
  g_assert_nonnull(strstr(ds.unmodelled, "run_deepseek_v3.sh:12: selective_ac_option = 'op'"));
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/torchtitan-python/parity", test_parity);
  g_test_add_func("/torchtitan-python/overrides", test_overrides);
  g_test_add_func("/torchtitan-python/errors", test_errors);
  g_test_add_func("/torchtitan-python/old-form", test_old_form);
  g_test_add_func("/torchtitan-python/moe-totals", test_moe_totals);
  g_test_add_func("/torchtitan-python/moe-jobs", test_moe_jobs);
  return g_test_run();
}
