/* test_job_build.c — a job built in the library from an argv-style array of
 * flags (sim/io/job_build.c, job_options.c) is the job `ptsim predict`
 * builds from the same flags, byte for byte: through the command's own path
 * (its option context with the command's entries, its parse, its build that
 * prints what the library found) and through options set field by field.
 * Also: what the argv-style parse refuses, and that the library returns its
 * warnings instead of printing them.
 *
 * Shipped files via PTSIM_DATA_DIR, fixtures via G_TEST_SRCDIR (ctest). */
#include <string.h>

#include <glib.h>

#include "cli_job.h"
#include "job_build.h"
#include "job_validate.h"
#include "torchtitan.h"

#define LLAMA70B_FLAGS                                                                           \
  "--model", "llama3-70b", "--tp", "8", "--pp", "4", "--vp", "5", "--gpus", "64", "--gbs", "64", \
      "--seq", "4096", "--recompute", "selective", "--no-overlap-param-gather",                  \
      "--memory-threshold=0.9"

/* FLAGS as `ptsim predict` reads them: the job options as its main group
 * with the command's own entries, argv[0] the command, its own flags
 * among the job's, the build that prints the library's diagnostics. */
static void build_as_predict(const char *const *flags, PtsimJob *job) {
  PtsimJobOptions o;
  ptsim_job_options_init(&o);
  char *format = NULL;
  const GOptionEntry entries[] = {{"format", 0, 0, G_OPTION_ARG_STRING, &format, "text|json|csv",
                                   "F"},
                                  {NULL, 0, 0, 0, NULL, NULL, NULL}};
  g_autoptr(GOptionContext) context = g_option_context_new(NULL);
  ptsim_job_options_add_to_context(context, &o, entries);
  g_autoptr(GPtrArray) argv = g_ptr_array_new();
  g_ptr_array_add(argv, "predict");
  g_ptr_array_add(argv, "--format");
  g_ptr_array_add(argv, "json");
  for (const char *const *f = flags; *f; f++) g_ptr_array_add(argv, (gpointer)*f);
  g_ptr_array_add(argv, NULL);
  int argc = (int)argv->len - 1;
  char **args = (char **)argv->pdata;
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_options_parse(context, &argc, &args, &error));
  g_assert_cmpint(argc, ==, 1);
  g_assert_cmpstr(format, ==, "json");
  g_assert_true(ptsim_cli_job_build("predict", &o, job, &error));
  g_assert_no_error(error);
  g_free(format);
  ptsim_job_options_clear(&o);
}

static void build_from_flags(const char *const *flags, PtsimJob *job) {
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_job_build_from_flags(flags, job, NULL, &error));
  g_assert_no_error(error);
}

static void test_flags_as_predict(void) {
  g_test_summary("--model llama3-70b --tp 8 --pp 4 ... through ptsim_job_build_from_flags is the "
                 "job of the command's path and of the options set by hand");
  const char *const flags[] = {LLAMA70B_FLAGS, NULL};
  PtsimJob lib, cli, by_hand;
  build_from_flags(flags, &lib);
  build_as_predict(flags, &cli);
  g_assert_cmpmem(&lib, sizeof lib, &cli, sizeof cli);

  PtsimJobOptions o;
  ptsim_job_options_init(&o);
  o.model = g_strdup("llama3-70b");
  o.tp = (PtsimOptionInt){TRUE, 8};
  o.pp = (PtsimOptionInt){TRUE, 4};
  o.vp = (PtsimOptionInt){TRUE, 5};
  o.gpus = (PtsimOptionInt){TRUE, 64};
  o.gbs = (PtsimOptionInt){TRUE, 64};
  o.seq = (PtsimOptionInt){TRUE, 4096};
  o.recompute = g_strdup("selective");
  o.no_overlap_param_gather = TRUE;
  o.threshold = (PtsimOptionDouble){TRUE, 0.9};
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_job_build(&o, &by_hand, NULL, &error));
  ptsim_job_options_clear(&o);
  g_assert_cmpmem(&lib, sizeof lib, &by_hand, sizeof by_hand);

  /* what the flags say, resolved: dp derived, sp on, interleaved, the
   * overlap default but the switch turned off */
  const PtsimLayout *l = &lib.layout;
  const PtsimSettings *run = &lib.settings;
  g_assert_cmpstr(lib.model.name, ==, "llama3-70b");
  g_assert_cmpstr(lib.hw.name, ==, PTSIM_JOB_DEFAULT_HW);
  g_assert_cmpint(l->dp, ==, 2);
  g_assert_cmpint(l->sp, ==, 1);
  g_assert_cmpint(l->schedule, ==, PTSIM_SCHEDULE_INTERLEAVED);
  g_assert_cmpint(run->recompute, ==, PTSIM_RECOMPUTE_SELECTIVE);
  g_assert_cmpint(run->overlap_grad_reduce, ==, 1);
  g_assert_cmpint(run->overlap_param_gather, ==, 0);
  g_assert_cmpfloat(run->memory_threshold, ==, 0.9);
}

static void test_defaults_and_megatron(void) {
  g_test_summary("no flags: ptsim's default job; a Megatron-LM command line as a flag: the "
                 "command's job, its diagnostics returned");
  const char *const none[] = {NULL};
  PtsimJob lib, cli;
  build_from_flags(none, &lib);
  build_as_predict(none, &cli);
  g_assert_cmpmem(&lib, sizeof lib, &cli, sizeof cli);
  g_assert_cmpstr(lib.model.name, ==, PTSIM_JOB_DEFAULT_MODEL);
  g_assert_cmpint(lib.layout.gpus, ==, PTSIM_JOB_DEFAULT_GPUS);
  g_assert_cmpint(lib.layout.gbs, ==, PTSIM_JOB_DEFAULT_GBS);
  g_assert_cmpint(lib.layout.seq, ==, PTSIM_JOB_DEFAULT_SEQ);

  const char *const megatron[] = {
      "--megatron-args",
      "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 8 --hidden-size 1024 "
      "--num-attention-heads 16 --seq-length 4096 --micro-batch-size 1 --global-batch-size 64 "
      "--tensor-model-parallel-size 2 --bf16 --vocab-size 50257 --master_port 6000",
      "--pp", "2", NULL};
  g_autoptr(PtsimJobDiagnostics) diag = ptsim_job_diagnostics_new();
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_job_build_from_flags(megatron, &lib, diag, &error));
  g_assert_no_error(error);
  build_as_predict(megatron, &cli);
  g_assert_cmpmem(&lib, sizeof lib, &cli, sizeof cli);
  g_assert_cmpint(lib.layout.gpus, ==, 8);
  g_assert_cmpint(lib.layout.tp, ==, 2);
  g_assert_cmpint(lib.layout.pp, ==, 2);
  g_assert_cmpuint(diag->megatron->unknown->len, ==, 1);
  g_assert_cmpstr(diag->megatron->unknown->pdata[0], ==, "--master_port 6000"); /* torchrun's */
  g_assert_cmpuint(diag->warnings->len, ==, 0);
}

static void test_native_overrides_script(void) {
  g_test_summary("--tp 1 --pp 4 over a tp-4 Megatron-LM command: the expert tp and the padded "
                 "vocabulary that followed the command's tp follow ptsim's");
  const char *const flags[] = {
      "--megatron-args",
      "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 8 --hidden-size 1024 "
      "--num-attention-heads 16 --seq-length 4096 --micro-batch-size 1 --global-batch-size 64 "
      "--tensor-model-parallel-size 4 --bf16 --vocab-size 50257",
      "--tp",
      "1",
      "--pp",
      "4",
      NULL};
  PtsimJob job;
  build_from_flags(flags, &job);
  g_assert_cmpint(job.layout.tp, ==, 1);
  g_assert_cmpint(job.layout.pp, ==, 4);
  g_assert_cmpint(job.layout.etp, ==, 1);           /* was the command's 4: refused */
  g_assert_cmpint(job.model.vocab_size, ==, 50304); /* 50257 up to 128 x 1, not 128 x 4 */
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_job_validate(&job, &error));
  g_assert_no_error(error);
  /* no --global-batch-size: Megatron-LM's mbs x dp of the GPUs it runs on,
   * --gpus 16 over torchrun's 8: dp 16 / (tp 2) = 8, gbs 8 (4 at 8 GPUs) */
  const char *const wider[] = {
      "--megatron-args",
      "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 8 --hidden-size 1024 "
      "--num-attention-heads 16 --seq-length 4096 --micro-batch-size 1 "
      "--tensor-model-parallel-size 2 --bf16 --vocab-size 50257",
      "--gpus", "16", NULL};
  build_from_flags(wider, &job);
  g_assert_cmpint(job.layout.gpus, ==, 16);
  g_assert_cmpint(job.layout.gbs, ==, 8);
  const char *const launcher[] = {wider[0], wider[1], NULL};
  build_from_flags(launcher, &job);
  g_assert_cmpint(job.layout.gbs, ==, 4);
}

static void refused(const char *const *flags, GQuark domain, const char *message) {
  PtsimJob job;
  g_autoptr(GError) error = NULL;
  g_assert_false(ptsim_job_build_from_flags(flags, &job, NULL, &error));
  g_assert_true(error != NULL && error->domain == domain);
  g_assert_cmpstr(error->message, ==, message);
}

static void test_flags_refused(void) {
  g_test_summary("a stray word, a bad value, flags that exclude each other, a flag that is no "
                 "job option, a layout that does not divide: each refused by name");
  const char *const stray[] = {"--tp", "8", "stray", NULL};
  refused(stray, G_OPTION_ERROR, "unexpected argument 'stray'");
  const char *const bad[] = {"--tp", "eight", NULL};
  PtsimJob job;
  g_autoptr(GError) error = NULL;
  g_assert_false(ptsim_job_build_from_flags(bad, &job, NULL, &error));
  g_assert_true(g_str_has_prefix(error->message, "--tp 'eight'"));
  const char *const both[] = {"--sp", "--no-sp", NULL};
  refused(both, PTSIM_CONFIG_ERROR, "--sp and --no-sp: give at most one");
  const char *const help[] = {"--help", NULL};
  refused(help, G_OPTION_ERROR, "Unknown option --help");
  const char *const sweep_only[] = {"--tp-max", "4", NULL};
  refused(sweep_only, G_OPTION_ERROR, "Unknown option --tp-max");
  const char *const odd[] = {"--gpus", "12", "--tp", "8", NULL};
  refused(odd, PTSIM_CONFIG_ERROR, "--gpus 12 is not divisible by tp*pp*cp (--tp 8 --pp 1 --cp 1)");
}

static char *titan_fixture(const char *name) {
  return g_test_build_filename(G_TEST_DIST, "data", "torchtitan", name, NULL);
}

static void test_warnings_returned(void) {
  g_test_summary("a torchtitan config's warnings come back in the diagnostics, in order, and the "
                 "library prints nothing; the command prints them as before");
  g_autofree char *path = titan_fixture("llama3_70b_hsdp_tp.toml");
  if (g_test_subprocess()) {
    const char *const flags[] = {"--torchtitan", path, "--gpus", "64", NULL};
    g_autoptr(PtsimJobDiagnostics) diag = ptsim_job_diagnostics_new();
    PtsimJob job;
    g_autoptr(GError) error = NULL;
    ptsim_job_build_from_flags(flags, &job, diag, &error);
    g_auto(PtsimTorchtitan) tt = {0};
    g_autoptr(GPtrArray) direct = g_ptr_array_new_with_free_func(g_free);
    g_assert_true(ptsim_torchtitan_load(path, 64, &tt, direct, NULL));
    g_assert_cmpuint(diag->warnings->len, ==, direct->len);
    g_assert_cmpuint(diag->warnings->len, ==, 2);
    for (guint i = 0; i < direct->len; i++)
      g_assert_cmpstr(diag->warnings->pdata[i], ==, direct->pdata[i]);
    /* the command's path: the same lines on stderr, "ptsim: warning: " each */
    PtsimJobOptions o;
    ptsim_job_options_init(&o);
    o.torchtitan = g_strdup(path);
    o.gpus = (PtsimOptionInt){TRUE, 64};
    g_clear_error(&error);
    ptsim_cli_job_build("predict", &o, &job, &error);
    ptsim_job_options_clear(&o);
    return;
  }
  g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed();
  /* one pair of lines, from ptsim_cli_job_build alone */
  g_test_trap_assert_stderr("ptsim: warning: *llama3_70b_hsdp_tp.toml:23*\n"
                            "ptsim: warning: *llama3_70b_hsdp_tp.toml:28*\n");
  g_test_trap_assert_stderr_unmatched("*warning*warning*warning*");
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/job-build/flags-as-predict", test_flags_as_predict);
  g_test_add_func("/job-build/defaults-and-megatron", test_defaults_and_megatron);
  g_test_add_func("/job-build/native-overrides-script", test_native_overrides_script);
  g_test_add_func("/job-build/flags-refused", test_flags_refused);
  g_test_add_func("/job-build/warnings-returned", test_warnings_returned);
  return g_test_run();
}
