/* test_error_bands.c — the step-time band of a job from an error-bands
 * file (sim/io/error_bands.c): which section applies, the range notes, and
 * the reasons when none does.  The file is the hand-made fixture in
 * tests/data/error_bands/validate/error_bands.ini. */
#include <glib.h>
#include <string.h>
#include "error_bands.h"
#include "job_fixture.h"

static void job_of(PtsimJob *job, const char *model, const char *hw, gint64 gpus, gint64 seq,
                   PtsimPrecision precision) {
  FixtureLayout l = {gpus, 1, 1, 1, 1, 4 * gpus, seq, PTSIM_RECOMPUTE_NONE};
  fixture_job(job, model, hw, l);
  job->settings.precision = precision;
}

/* Looks the job up in the fixture's data dir (models were loaded before). */
static void lookup(const PtsimJob *job, const char *data_dir, PtsimErrorBand *band) {
  g_autofree char *saved = g_strdup(g_getenv("PTSIM_DATA_DIR"));
  g_autofree char *dir = g_test_build_filename(G_TEST_DIST, "data", data_dir, NULL);
  g_setenv("PTSIM_DATA_DIR", dir, TRUE);
  ptsim_error_band_lookup(job, band);
  g_setenv("PTSIM_DATA_DIR", saved, TRUE);
}

static void test_in_range(void) {
  g_test_summary("Llama 2 7B (6.74B) in fp8 on H100, seq 4096 on 4 GPUs: the fp8 band, no note");
  PtsimJob job;
  PtsimErrorBand b;
  job_of(&job, "llama2-7b", "h100-80g", 4, 4096, PTSIM_PRECISION_FP8);
  lookup(&job, "error_bands", &b);
  g_assert_true(b.found);
  g_assert_cmpstr(b.group, ==, "h100 fp8");
  g_assert_cmpfloat(b.mean_abs_error, ==, 0.05);
  g_assert_cmpfloat(b.max_abs_error, ==, 0.12);
  g_assert_cmpfloat(b.bias, ==, 0.03);
  g_assert_cmpint(b.runs, ==, 9);
  g_assert_cmpstr(b.sources, ==, "nemo_cp");
  g_assert_cmpstr(b.note, ==, "");
}

static void test_out_of_range(void) {
  g_test_summary("Llama 3 8B (8.03B) in fp8 at seq 2048: the band, with both range notes");
  PtsimJob job;
  PtsimErrorBand b;
  job_of(&job, "llama3-8b", "h100-80g", 8, 2048, PTSIM_PRECISION_FP8);
  lookup(&job, "error_bands", &b);
  g_assert_true(b.found);
  g_assert_cmpstr(b.note, ==,
                  "fp8 with 8.03B parameters is outside the calibrated range (6.74-6.74B); "
                  "seq 2048 is outside the calibrated range (4096-1048576)");
}

static void test_profile_list(void) {
  g_test_summary("fp16 on a100-40g falls in the 16-bit band listing a100-40g,a100-80g");
  PtsimJob job;
  PtsimErrorBand b;
  job_of(&job, "sc21-gpt-1.7b", "a100-40g", 32, 2048, PTSIM_PRECISION_FP16);
  lookup(&job, "error_bands", &b);
  g_assert_true(b.found);
  g_assert_cmpstr(b.group, ==, "a100 16-bit");
  g_assert_cmpstr(b.note, ==, "");
}

static void test_moe(void) {
  g_test_summary("Mixtral 8x7B (46.7B) in fp8 on H100: the fp8 band, its range note, and that its "
                 "runs are dense");
  PtsimJob job;
  PtsimErrorBand b;
  job_of(&job, "mixtral-8x7b", "h100-80g", 4, 4096, PTSIM_PRECISION_FP8);
  lookup(&job, "error_bands", &b);
  g_assert_true(b.found);
  g_assert_cmpstr(b.group, ==, "h100 fp8");
  g_assert_cmpstr(b.note, ==,
                  "fp8 with 46.7B parameters is outside the calibrated range (6.74-6.74B); "
                  "a mixture-of-experts model: the band's runs are all dense, its "
                  "expert-parallel (ep) all-to-all is not behind it");
}

static void test_v_shape(void) {
  g_test_summary("the V-shaped schedules: no band (uncalibrated), though the job's profile and "
                 "precision have one");
  PtsimJob job;
  PtsimErrorBand b;
  job_of(&job, "llama2-7b", "h100-80g", 4, 4096, PTSIM_PRECISION_FP8); /* in range: a band */
  job.layout.schedule = PTSIM_SCHEDULE_DUALPIPEV;
  lookup(&job, "error_bands", &b);
  g_assert_false(b.found);
  g_assert_cmpstr(b.note, ==,
                  "uncalibrated: no published run of the V-shaped schedule dualpipev was held "
                  "out, so ptsim cannot quote its error");
  job.layout.schedule = PTSIM_SCHEDULE_ZBV;
  lookup(&job, "error_bands", &b);
  g_assert_false(b.found);
  g_assert_nonnull(strstr(b.note, "schedule zbv"));
}

static void test_moe_a2a_overlap(void) {
  g_test_summary("combined 1F1B's all-to-all overlap: no band (uncalibrated)");
  PtsimJob job;
  PtsimErrorBand b;
  job_of(&job, "llama2-7b", "h100-80g", 4, 4096, PTSIM_PRECISION_FP8); /* in range: a band */
  job.settings.moe_ep_comm_overlap = 1;
  lookup(&job, "error_bands", &b);
  g_assert_false(b.found);
  g_assert_cmpstr(b.note, ==,
                  "uncalibrated: no published run measures combined 1F1B's expert all-to-all "
                  "overlap (--overlap-moe-expert-parallel-comm), so ptsim has no error band for "
                  "it");
}

static void test_torch_fsdp_experts(void) {
  g_test_summary("PyTorch FSDP2 with experts: no band (uncalibrated); Megatron-FSDP's keeps one");
  PtsimJob job;
  PtsimErrorBand b;
  job_of(&job, "mixtral-8x7b", "h100-80g", 4, 4096, PTSIM_PRECISION_FP8);
  job.layout.sharding = PTSIM_SHARDING_PARAMS;
  job.settings.fsdp_impl = PTSIM_FSDP_TORCH;
  lookup(&job, "error_bands", &b);
  g_assert_false(b.found);
  g_assert_cmpstr(b.note, ==,
                  "uncalibrated: no published run measures PyTorch FSDP2 with experts "
                  "(--fsdp-impl torch, a mixture-of-experts model), so ptsim has no error band "
                  "for it");
  job.settings.fsdp_impl = PTSIM_FSDP_MEGATRON;
  lookup(&job, "error_bands", &b);
  g_assert_true(b.found);
}

static void test_none(void) {
  g_test_summary("no band: a profile without published runs, and a missing file, say why");
  PtsimJob job;
  PtsimErrorBand b;
  job_of(&job, "llama3-8b", "h200-141g", 8, 4096, PTSIM_PRECISION_BF16);
  lookup(&job, "error_bands", &b);
  g_assert_false(b.found);
  g_assert_cmpstr(b.note, ==,
                  "no error band: no published bf16 runs on h200-141g were held out "
                  "(validate/error_bands.ini)");
  lookup(&job, "megatron_logs", &b); /* a data dir without the file */
  g_assert_false(b.found);
  g_assert_true(g_str_has_prefix(b.note, "no error band: error bands file "));
  g_assert_true(g_str_has_suffix(b.note, "/validate/error_bands.ini: no such file"));
}

static void test_strict_numbers(void) {
  g_test_summary("a covering section's numbers are parsed strictly with their ranges: nan, a "
                 "negative band, 0 runs or a trailing word leave no band, citing file:line");
  static const char head[] = "[h100 fp8]\nprofiles = h100-80g\nprecisions = fp8\n";
  static const struct {
    const char *body, *note;
  } cases[] = {
      {"runs = 9\nmean_abs_error = nan\nmax_abs_error = 0.1\n",
       "no error band: validate/error_bands.ini:5: [h100 fp8] mean_abs_error = 'nan' is not "
       "allowed: expected a number in [0, 10]"},
      {"runs = 9\nmean_abs_error = -0.05\nmax_abs_error = 0.1\n",
       "no error band: validate/error_bands.ini:5: [h100 fp8] mean_abs_error = '-0.05' is not "
       "allowed: expected a number in [0, 10]"},
      {"runs = 0\nmean_abs_error = 0.05\nmax_abs_error = 0.1\n",
       "no error band: validate/error_bands.ini:4: [h100 fp8] runs = '0' is not allowed: "
       "expected an integer from 1 to 1000000"},
      {"runs = 9\nmean_abs_error = 0.05\nmax_abs_error = 0.1\nseq_max = 4096 tokens\n",
       "no error band: validate/error_bands.ini:7: [h100 fp8] seq_max = '4096 tokens' is not "
       "allowed: expected an integer from 1 to 1073741824"},
  };
  PtsimJob job;
  PtsimErrorBand b;
  job_of(&job, "llama2-7b", "h100-80g", 4, 4096, PTSIM_PRECISION_FP8);
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *text = g_strconcat(head, cases[i].body, NULL);
    ptsim_error_band_lookup_data(&job, text, strlen(text), &b);
    g_assert_false(b.found);
    g_assert_cmpstr(b.note, ==, cases[i].note);
  }
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/error-bands/in-range", test_in_range);
  g_test_add_func("/error-bands/out-of-range", test_out_of_range);
  g_test_add_func("/error-bands/profile-list", test_profile_list);
  g_test_add_func("/error-bands/moe", test_moe);
  g_test_add_func("/error-bands/none", test_none);
  g_test_add_func("/error-bands/v-shape", test_v_shape);
  g_test_add_func("/error-bands/moe-a2a-overlap", test_moe_a2a_overlap);
  g_test_add_func("/error-bands/torch-fsdp-experts", test_torch_fsdp_experts);
  g_test_add_func("/error-bands/strict-numbers", test_strict_numbers);
  return g_test_run();
}
