/* test_config.c — sim/io/config.c: the shipped models and hardware profiles
 * load, every malformed .ini is refused with one line naming file:line,
 * value and what is allowed, and ptsim_job_validate() derives dp / sp /
 * schedule / stage split and refuses every layout Megatron-LM would.
 *
 * Fixtures: tests/data/ fixtures via G_TEST_SRCDIR; shipped files via
 * PTSIM_DATA_DIR (both set by ctest). */
#include <math.h>
#include <string.h>

#include <glib.h>

#include "config.h"
#include "numbers.h"
#include "job_validate.h"
#include "plan_of.h"

/* ---- helpers ---- */

static char *fixture(const char *name) {
  return g_test_build_filename(G_TEST_DIST, "data", name, NULL);
}

/* ERROR is set, in CODE, one line, and contains every needle of AP (a
 * NULL-terminated list); with PATH, it also names the file. */
static void assert_error_va(const GError *error, const char *path, int code, va_list ap) {
  g_assert_nonnull(error);
  g_test_message("%s", error->message);
  if (path) g_assert_nonnull(strstr(error->message, path));
  g_assert_error(error, PTSIM_CONFIG_ERROR, code);
  g_assert_null(strchr(error->message, '\n'));
  const char *needle;
  while ((needle = va_arg(ap, const char *)) != NULL) {
    if (strstr(error->message, needle) == NULL)
      g_assert_cmpstr(error->message, ==, needle); /* shows both */
    g_assert_nonnull(strstr(error->message, needle));
  }
}

static void assert_error(const GError *error, int code, ...) {
  va_list ap;
  va_start(ap, code);
  assert_error_va(error, NULL, code, ap);
  va_end(ap);
}

static void load_model_fixture_fails(const char *file, int code, ...) {
  g_autofree char *path = fixture(file);
  g_autoptr(GError) error = NULL;
  PtsimModel m;
  g_assert_false(ptsim_model_load(path, &m, &error));
  va_list ap;
  va_start(ap, code);
  assert_error_va(error, path, code, ap);
  va_end(ap);
}

static void load_hw_fixture_fails(const char *file, ...) {
  g_autofree char *path = fixture(file);
  g_autoptr(GError) error = NULL;
  PtsimHardware hw;
  g_assert_false(ptsim_hardware_load(path, &hw, &error));
  va_list ap;
  va_start(ap, file);
  assert_error_va(error, path, PTSIM_CONFIG_ERROR_PARSE, ap);
  va_end(ap);
}

static GPtrArray *ini_names(const char *subdir) {
  g_autofree char *dir = g_build_filename(ptsim_config_data_dir(), subdir, NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GDir) d = g_dir_open(dir, 0, &error);
  g_assert_no_error(error);
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  const char *entry;
  while ((entry = g_dir_read_name(d)) != NULL)
    if (g_str_has_suffix(entry, ".ini"))
      g_ptr_array_add(names, g_strndup(entry, strlen(entry) - 4));
  return names;
}

/* ---- data dir, numbers ---- */

static void test_data_dir(void) {
  g_test_summary("PTSIM_DATA_DIR wins; without it the build's source dir");
  const char *env = g_getenv("PTSIM_DATA_DIR");
  g_assert_nonnull(env);
  g_autofree char *saved = g_strdup(env);
  g_assert_cmpstr(ptsim_config_data_dir(), ==, saved);
  g_unsetenv("PTSIM_DATA_DIR");
  g_assert_cmpstr(ptsim_config_data_dir(), ==, PTSIM_SOURCE_DIR);
  g_setenv("PTSIM_DATA_DIR", saved, TRUE);
  g_assert_cmpstr(ptsim_config_data_dir(), ==, saved);
}

static void test_numbers(void) {
  g_test_summary("strict integer and float parsing");
  int64_t i = 7;
  g_assert_true(ptsim_number_parse_int64(" 42 ", &i));
  g_assert_cmpint(i, ==, 42);
  g_assert_true(ptsim_number_parse_int64("-3", &i));
  g_assert_cmpint(i, ==, -3);
  const char *bad_ints[] = {"", "  ", "12abc", "1.5", "1e3", "0x10",
                            "99999999999999999999", NULL};
  for (int k = 0; bad_ints[k]; k++) {
    i = 7;
    g_assert_false(ptsim_number_parse_int64(bad_ints[k], &i));
    g_assert_cmpint(i, ==, 7);
  }
  double d = 0;
  g_assert_true(ptsim_number_parse_double("3.5e2", &d));
  g_assert_cmpfloat(d, ==, 350.0);
  g_assert_true(ptsim_number_parse_double("0", &d));
  g_assert_cmpfloat(d, ==, 0.0);
  const char *bad_doubles[] = {"", "1e999", "nan", "inf", "1.0x", "abc", NULL};
  for (int k = 0; bad_doubles[k]; k++)
    g_assert_false(ptsim_number_parse_double(bad_doubles[k], &d));
}

/* ---- models ---- */

static void test_model_all_shipped(void) {
  g_test_summary("every models/*.ini loads and is named after its file");
  g_autoptr(GPtrArray) names = ini_names("models");
  g_assert_cmpuint(names->len, >=, 32);
  for (guint k = 0; k < names->len; k++) {
    const char *name = names->pdata[k];
    g_autoptr(GError) error = NULL;
    PtsimModel m;
    g_assert_true(ptsim_model_load(name, &m, &error));
    g_assert_no_error(error);
    g_assert_cmpstr(m.name, ==, name);
    g_assert_true(ptsim_model_check(&m, &error));
    g_assert_no_error(error);
  }
}

static void test_model_values(void) {
  g_test_summary("llama3-8b, llama2-70b, gpt3-175b, sc21/mcore GPT-1.7B");
  g_autoptr(GError) error = NULL;
  PtsimModel m;
  g_assert_true(ptsim_model_load("llama3-8b", &m, &error));
  g_assert_no_error(error);
  g_assert_cmpint(m.num_layers, ==, 32);
  g_assert_cmpint(m.hidden_size, ==, 4096);
  g_assert_cmpint(m.ffn_hidden_size, ==, 14336);
  g_assert_cmpint(m.num_attention_heads, ==, 32);
  g_assert_cmpint(m.num_query_groups, ==, 8);
  g_assert_cmpint(m.vocab_size, ==, 128256);
  g_assert_cmpint(m.activation, ==, PTSIM_ACTIVATION_SWIGLU);
  g_assert_cmpint(m.norm, ==, PTSIM_NORM_RMSNORM);
  g_assert_cmpint(m.tied_embeddings, ==, 0);
  g_assert_cmpint(m.bias, ==, 0);

  g_assert_true(ptsim_model_load("llama2-70b", &m, &error));
  g_assert_cmpint(m.num_query_groups, ==, 8);
  g_assert_cmpint(m.vocab_size, ==, 32000);
  g_assert_true(ptsim_model_load("llama2-7b", &m, &error));
  g_assert_cmpint(m.num_query_groups, ==, 32);

  g_assert_true(ptsim_model_load("gpt3-175b", &m, &error));
  g_assert_cmpint(m.num_layers, ==, 96);
  g_assert_cmpint(m.hidden_size, ==, 12288);
  g_assert_cmpint(m.ffn_hidden_size, ==, 4 * 12288);
  g_assert_cmpint(m.vocab_size, ==, 51200);
  g_assert_cmpint(m.activation, ==, PTSIM_ACTIVATION_GELU);
  g_assert_cmpint(m.norm, ==, PTSIM_NORM_LAYERNORM);
  g_assert_cmpint(m.tied_embeddings, ==, 1);
  g_assert_cmpint(m.bias, ==, 1);

  g_assert_true(ptsim_model_load("sc21-gpt-1.7b", &m, &error));
  g_assert_cmpint(m.hidden_size, ==, 2304);
  g_assert_cmpint(m.vocab_size, ==, 51200);
  g_assert_true(ptsim_model_load("mcore-gpt-1.7b", &m, &error));
  g_assert_cmpint(m.hidden_size, ==, 2048);
  g_assert_cmpint(m.vocab_size, ==, 131072);
  g_assert_no_error(error);
}

/* models/README.md's table agrees with the files it describes. */
static void test_model_readme_table(void) {
  g_test_summary("models/README.md rows match the .ini files");
  g_autofree char *path =
      g_build_filename(ptsim_config_data_dir(), "models", "README.md", NULL);
  g_autofree char *text = NULL;
  g_autoptr(GError) error = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, &error));
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  guint rows = 0;
  for (int k = 0; lines[k]; k++) {
    if (!g_str_has_prefix(lines[k], "| ") || strstr(lines[k], "---") ||
        g_str_has_prefix(lines[k], "| name"))
      continue;
    g_auto(GStrv) cells = g_strsplit(lines[k] + 1, "|", -1);
    if (g_strv_length(cells) < 7)
      continue;
    for (int c = 0; cells[c]; c++)
      g_strstrip(cells[c]);
    PtsimModel m;
    if (!ptsim_model_load(cells[0], &m, NULL))
      continue; /* another table (keys) */
    int64_t want[6];
    for (int c = 0; c < 6; c++)
      g_assert_true(ptsim_number_parse_int64(cells[c + 1], &want[c]));
    g_assert_cmpint(m.num_layers, ==, want[0]);
    g_assert_cmpint(m.hidden_size, ==, want[1]);
    g_assert_cmpint(m.ffn_hidden_size, ==, want[2]);
    g_assert_cmpint(m.num_attention_heads, ==, want[3]);
    g_assert_cmpint(m.num_query_groups, ==, want[4]);
    g_assert_cmpint(m.vocab_size, ==, want[5]);
    rows++;
  }
  g_autoptr(GPtrArray) names = ini_names("models");
  g_assert_cmpuint(rows, ==, names->len);
}

static void test_model_path_and_default_name(void) {
  g_test_summary("a path loads; without a name key the basename is the name");
  g_autofree char *path = fixture("model_tiny.ini");
  g_autoptr(GError) error = NULL;
  PtsimModel m;
  g_assert_true(ptsim_model_load(path, &m, &error));
  g_assert_no_error(error);
  g_assert_cmpstr(m.name, ==, "model_tiny");
  g_assert_cmpint(m.num_layers, ==, 4);
}

static void test_model_unknown_name(void) {
  g_test_summary("unknown model name lists the available ones");
  g_autoptr(GError) error = NULL;
  PtsimModel m;
  g_assert_false(ptsim_model_load("llama9-1b", &m, &error));
  assert_error(error, PTSIM_CONFIG_ERROR_NOT_FOUND, "unknown model 'llama9-1b'",
               "available:", "llama3-8b", "gpt3-175b", "sc21-gpt-1t", NULL);
  g_clear_error(&error);
  g_assert_false(ptsim_model_load("no/such/file.ini", &m, &error));
  assert_error(error, PTSIM_CONFIG_ERROR_NOT_FOUND, "no/such/file.ini",
               "no such file", NULL);
  g_clear_error(&error);
  g_assert_false(ptsim_model_load("", &m, &error));
  assert_error(error, PTSIM_CONFIG_ERROR_NOT_FOUND, "no model given", NULL);
}

static void test_model_unknown_key(void) {
  g_test_summary("a typo in a key is an error at its line, with a suggestion");
  load_model_fixture_fails("bad_model_typo.ini", PTSIM_CONFIG_ERROR_PARSE,
                           ".ini:3:", "unknown key 'num_layer' in [model]",
                           "did you mean num_layers?", "known keys: name, ",
                           NULL);
}

static void test_model_moe_keys(void) {
  g_test_summary("MoE keys: the layer pattern's length at its line; an moe_ key without experts");
  load_model_fixture_fails("bad_model_moe_freq.ini", PTSIM_CONFIG_ERROR_PARSE, ".ini:13:",
                           "moe_layer_freq '([0]*1+[1]*2)' lists 3 layers",
                           "expected num_layers = 4", NULL);
  load_model_fixture_fails("bad_model_moe_key.ini", PTSIM_CONFIG_ERROR_PARSE, ".ini:12:",
                           "moe_router_topk needs num_experts", NULL);
}

static void test_model_unknown_group(void) {
  g_test_summary("unknown group");
  load_model_fixture_fails("bad_model_group.ini", PTSIM_CONFIG_ERROR_PARSE,
                           ".ini:14:", "unknown group [sauce]",
                           "allowed groups: [model], [source]", NULL);
}

static void test_model_missing(void) {
  g_test_summary("missing key and missing group");
  load_model_fixture_fails("bad_model_missing.ini", PTSIM_CONFIG_ERROR_PARSE,
                           ".ini:2:", "[model] is missing key vocab_size",
                           "an integer from 1", NULL);
  load_model_fixture_fails("bad_model_nogroup.ini", PTSIM_CONFIG_ERROR_PARSE,
                           "missing group [model]", NULL);
}

static void test_model_bad_numbers(void) {
  g_test_summary("non-number, overflow, too large, zero, negative");
  load_model_fixture_fails("bad_model_nonnumber.ini", PTSIM_CONFIG_ERROR_PARSE,
                           ".ini:4:", "hidden_size = '12abc'",
                           "expected an integer from 1 to 1073741824", NULL);
  load_model_fixture_fails("bad_model_overflow.ini", PTSIM_CONFIG_ERROR_PARSE,
                           ".ini:3:", "num_layers = '99999999999999999999999'",
                           "expected an integer", NULL);
  load_model_fixture_fails("bad_model_toolarge.ini", PTSIM_CONFIG_ERROR_PARSE,
                           ".ini:8:", "vocab_size = '2000000000'",
                           "to 1073741824", NULL);
  load_model_fixture_fails("bad_model_zero.ini", PTSIM_CONFIG_ERROR_PARSE,
                           ".ini:3:", "num_layers = '0'", "from 1", NULL);
  load_model_fixture_fails("bad_model_negative.ini", PTSIM_CONFIG_ERROR_PARSE,
                           ".ini:5:", "ffn_hidden_size = '-1024'", NULL);
}

static void test_model_inconsistent(void) {
  g_test_summary("query groups must divide heads; heads must divide hidden");
  load_model_fixture_fails("bad_model_groups.ini", PTSIM_CONFIG_ERROR_PARSE,
                           ".ini:7:", "num_query_groups = 3",
                           "does not divide num_attention_heads = 8", NULL);
  load_model_fixture_fails("bad_model_heads.ini", PTSIM_CONFIG_ERROR_PARSE,
                           ".ini:4:", "hidden_size = 256",
                           "not divisible by num_attention_heads = 6", NULL);
}

static void test_model_bad_words(void) {
  g_test_summary("enum and boolean values, name length, GKeyFile syntax");
  load_model_fixture_fails("bad_model_activation.ini", PTSIM_CONFIG_ERROR_PARSE,
                           ".ini:9:", "activation = 'relu'",
                           "expected swiglu|gelu", NULL);
  load_model_fixture_fails("bad_model_norm.ini", PTSIM_CONFIG_ERROR_PARSE,
                           "norm = 'batchnorm'", "expected rmsnorm|layernorm",
                           NULL);
  load_model_fixture_fails("bad_model_bool.ini", PTSIM_CONFIG_ERROR_PARSE,
                           ".ini:12:", "bias = 'yes'", "expected true or false",
                           NULL);
  load_model_fixture_fails("bad_model_name.ini", PTSIM_CONFIG_ERROR_PARSE,
                           ".ini:3:", "a name of 1 to 63 characters", NULL);
  load_model_fixture_fails("bad_model_syntax.ini", PTSIM_CONFIG_ERROR_PARSE,
                           "this line is garbage", NULL);
}

static void test_model_check(void) {
  g_test_summary("ptsim_model_check on models built in code");
  g_autoptr(GError) error = NULL;
  PtsimModel m;
  g_assert_true(ptsim_model_load("llama3-8b", &m, &error));
  PtsimModel bad = m;
  bad.num_layers = 0;
  g_assert_false(ptsim_model_check(&bad, &error));
  assert_error(error, PTSIM_CONFIG_ERROR_INVALID,
               "model llama3-8b: num_layers 0 is out of range", NULL);
  g_clear_error(&error);
  bad = m;
  bad.num_query_groups = 5;
  g_assert_false(ptsim_model_check(&bad, &error));
  assert_error(error, PTSIM_CONFIG_ERROR_INVALID,
               "num_query_groups 5 does not divide num_attention_heads 32",
               NULL);
  g_clear_error(&error);
  bad = m;
  bad.num_attention_heads = 24;
  bad.num_query_groups = 8;
  g_assert_false(ptsim_model_check(&bad, &error));
  assert_error(error, PTSIM_CONFIG_ERROR_INVALID,
               "hidden_size 4096 is not divisible by num_attention_heads 24",
               NULL);
  g_clear_error(&error);
  bad = m;
  bad.activation = (PtsimActivation)7;
  g_assert_false(ptsim_model_check(&bad, &error));
  assert_error(error, PTSIM_CONFIG_ERROR_INVALID, "out of range", NULL);
}

/* ---- hardware ---- */

static void test_hw_all_shipped(void) {
  g_test_summary("every hw_profiles/*.ini loads with sane SI values");
  g_autoptr(GPtrArray) names = ini_names("hw_profiles");
  g_assert_cmpuint(names->len, >=, 4);
  for (guint k = 0; k < names->len; k++) {
    g_autoptr(GError) error = NULL;
    PtsimHardware hw;
    g_assert_true(ptsim_hardware_load(names->pdata[k], &hw, &error));
    g_assert_no_error(error);
    g_assert_cmpstr(hw.name, ==, names->pdata[k]);
    g_assert_cmpfloat(hw.memory_bytes, >, 8e9);
    g_assert_cmpfloat(hw.peak_bf16_flops, >=, 1e14);
    g_assert_cmpfloat(hw.hbm_bytes_per_s, >, 1e11);
    g_assert_cmpfloat(hw.nvlink_bytes_per_s, >, hw.nic_bytes_per_s);
    g_assert_cmpfloat(hw.net_latency_s, <, 1e-3);
    g_assert_cmpfloat(hw.gemm_efficiency_max, <=, 1.0);
    g_assert_cmpfloat(hw.gemm_half_flops, >=, 1e8);
  }
  const char *expected[] = {"a100-40g", "a100-80g", "h100-80g", "h200-141g"};
  for (size_t k = 0; k < G_N_ELEMENTS(expected); k++) {
    PtsimHardware hw;
    g_assert_true(ptsim_hardware_load(expected[k], &hw, NULL));
  }
}

static void test_hw_values(void) {
  g_test_summary("h100-80g and a100-80g convert to SI units");
  g_autoptr(GError) error = NULL;
  PtsimHardware hw;
  g_assert_true(ptsim_hardware_load("h100-80g", &hw, &error));
  g_assert_no_error(error);
  g_assert_cmpfloat(hw.memory_bytes, ==, 81559.0 * 1048576.0); /* nvidia-smi memory.total */
  g_assert_cmpfloat_with_epsilon(hw.peak_bf16_flops, 989.4e12, 1e3);
  g_assert_cmpfloat_with_epsilon(hw.peak_fp8_flops, 1979e12, 1e3);
  g_assert_cmpfloat_with_epsilon(hw.peak_fp32_flops, 66.9e12, 1e3);
  g_assert_cmpfloat_with_epsilon(hw.hbm_bytes_per_s, 3350e9, 1);
  g_assert_cmpint(hw.gpus_per_node, ==, 8);
  g_assert_cmpfloat_with_epsilon(hw.nvlink_bytes_per_s, 370.8e9, 1);
  g_assert_cmpfloat_with_epsilon(hw.nvlink_latency_s, 3.4e-6, 1e-12);
  g_assert_cmpfloat_with_epsilon(hw.nic_bytes_per_s, 48e9, 1);
  g_assert_cmpfloat_with_epsilon(hw.net_latency_s, 14e-6, 1e-12);
  g_assert_cmpint(hw.nvls, ==, 1);

  g_assert_true(ptsim_hardware_load("a100-80g", &hw, &error));
  g_assert_cmpfloat_with_epsilon(hw.nvlink_bytes_per_s, 240e9, 1);
  g_assert_cmpfloat_with_epsilon(hw.nic_bytes_per_s, 24e9, 1);
  g_assert_cmpfloat(hw.peak_fp8_flops, ==, 0.0);
  g_assert_cmpint(hw.nvls, ==, 0);

  /* The [efficiency] group converts too (a fixture, since the shipped values
   * are refitted by validate/fit_efficiency.py). */
  g_autofree char *path = fixture("hw_memory_bytes.ini");
  g_assert_true(ptsim_hardware_load(path, &hw, &error));
  g_assert_no_error(error);
  g_assert_cmpfloat(hw.memory_bytes, ==, 85899345920.0);
  g_assert_cmpfloat_with_epsilon(hw.gemm_efficiency_max, 0.801, 1e-12);
  g_assert_cmpfloat_with_epsilon(hw.gemm_half_flops, 3e9, 1e-3);
  g_assert_cmpfloat_with_epsilon(hw.attention_efficiency, 0.55, 1e-12);
  g_assert_cmpfloat_with_epsilon(hw.memory_efficiency, 0.85, 1e-12);
  g_assert_cmpfloat_with_epsilon(hw.kernel_launch_s, 4e-6, 1e-12);
}

static void test_hw_unknown_name(void) {
  g_test_summary("unknown profile lists the available ones");
  g_autoptr(GError) error = NULL;
  PtsimHardware hw;
  g_assert_false(ptsim_hardware_load("tpu-v5", &hw, &error));
  assert_error(error, PTSIM_CONFIG_ERROR_NOT_FOUND,
               "unknown hardware profile 'tpu-v5'", "a100-40g", "h100-80g",
               "h200-141g", NULL);
}

static void test_hw_errors(void) {
  g_test_summary("every malformed profile names file:line, value, allowed");
  load_hw_fixture_fails("bad_hw_typo.ini", "unknown key 'nvlink_gbs' in [node]",
                        "did you mean nvlink_gbps?", NULL);
  load_hw_fixture_fails("bad_hw_both_memory.ini",
                        "exactly one of memory_bytes or memory_gib",
                        "found both", NULL);
  load_hw_fixture_fails("bad_hw_no_memory.ini", "found neither", NULL);
  load_hw_fixture_fails("bad_hw_huge.ini", "hbm_gbps = '1e999'",
                        "expected a number in [0.01, 1000000]", NULL);
  load_hw_fixture_fails("bad_hw_nan.ini", "peak_fp32_tflops = 'nan'", NULL);
  load_hw_fixture_fails("bad_hw_efficiency.ini", "gemm_efficiency_max = '1.5'",
                        "expected a number in (0, 1]", NULL);
  load_hw_fixture_fails("bad_hw_zero_nic.ini", "nic_gbps = '0'",
                        "a number in [0.01, 1000000]", NULL);
  load_hw_fixture_fails("bad_hw_negative_latency.ini", "net_latency_us = '-1'",
                        "a number in [0, 1000000]", NULL);
  load_hw_fixture_fails("bad_hw_nvls.ini", "nvls = '1'", "true or false", NULL);
  load_hw_fixture_fails("bad_hw_gpus_per_node.ini", "gpus_per_node = '8.5'",
                        "an integer", NULL);
  load_hw_fixture_fails("bad_hw_missing_group.ini", "unknown group [fabrik]",
                        "[gpu], [node], [fabric], [efficiency], [source]", NULL);
  load_hw_fixture_fails("bad_hw_no_fabric.ini", "missing group [fabric]", NULL);

  /* line numbers: the typo sits on line 25 of its fixture */
  g_autofree char *path = fixture("bad_hw_typo.ini");
  g_autoptr(GError) error = NULL;
  PtsimHardware hw;
  g_assert_false(ptsim_hardware_load(path, &hw, &error));
  g_autofree char *where = g_strdup_printf("%s:25:", path);
  assert_error(error, PTSIM_CONFIG_ERROR_PARSE, where, NULL);
}

/* ---- layout and job ---- */

static void make_job(PtsimJob *job, const char *model, int64_t gpus) {
  memset(job, 0, sizeof *job);
  g_assert_true(ptsim_model_load(model, &job->model, NULL));
  g_assert_true(ptsim_hardware_load("h100-80g", &job->hw, NULL));
  ptsim_layout_init_defaults(&job->layout);
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
    if (strstr(error->message, needle) == NULL)
      g_assert_cmpstr(error->message, ==, needle);
  va_end(ap);
}

static void test_layout_defaults(void) {
  g_test_summary("ptsim_layout_init_defaults as job_validate.h documents");
  PtsimLayout l;
  memset(&l, 0xab, sizeof l);
  ptsim_layout_init_defaults(&l);
  g_assert_cmpint(l.tp, ==, 1);
  g_assert_cmpint(l.pp, ==, 1);
  g_assert_cmpint(l.cp, ==, 1);
  g_assert_cmpint(l.vp, ==, 1);
  g_assert_cmpint(l.mbs, ==, 1);
  g_assert_cmpint(l.dp, ==, 0);
  g_assert_cmpint(l.sp, ==, -1);
  g_assert_cmpint(l.distributed_optimizer, ==, 1);
  g_assert_cmpint(l.fp32_grad_accumulation, ==, 1);
  g_assert_cmpint(l.flash_attention, ==, 1);
  g_assert_cmpint(l.recompute, ==, PTSIM_RECOMPUTE_NONE);
  g_assert_cmpint(l.precision, ==, PTSIM_PRECISION_BF16);
  g_assert_cmpint(l.schedule, ==, PTSIM_SCHEDULE_1F1B);
  g_assert_cmpfloat(l.memory_threshold, ==, 0.8);
  g_assert_cmpfloat(l.attention_dropout, ==, 0.0);
  g_assert_cmpfloat(l.hidden_dropout, ==, 0.0);
  g_assert_cmpint(l.gpus, ==, 0);
  g_assert_cmpint(l.gbs, ==, 0);
  g_assert_cmpint(l.seq, ==, 0);
  g_assert_cmpint(l.first_stage_layers, ==, 0);
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
  for (int s = 0; s < 4; s++)
    g_assert_cmpint(stage_layers_of(&job, s), ==, 8);
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
  validate_fails(&job, "--gpus 12 is not divisible by tp*pp*cp",
                 "--tp 8 --pp 1 --cp 1", NULL);
  make_job(&job, "llama3-8b", 16);
  job.layout.tp = 2;
  job.layout.dp = 4;
  validate_fails(&job, "--dp 4 does not match --gpus 16", "dp would be 8",
                 NULL);
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
  for (int s = 0; s < 4; s++)
    g_assert_cmpint(stage_layers_of(&job, s), ==, want[s]);
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
  validate_fails(&job, "--decoder-first-pipeline-num-layers 4 needs --pp > 1",
                 NULL);
  make_job(&job, "llama3-8b", 2);
  job.layout.pp = 2;
  job.layout.first_stage_layers = 40;
  validate_fails(&job, "leave -8 of num_layers 32", NULL);
}

static void test_job_vp(void) {
  g_test_summary("interleaving: pp >= 2, layers % (pp*vp), microbatches % pp");
  PtsimJob job;
  make_job(&job, "llama3-8b", 8);
  job.layout.vp = 2;
  validate_fails(&job, "--vp 2 (interleaved schedule) needs --pp >= 2", NULL);
  make_job(&job, "llama3-8b", 8);
  job.layout.pp = 2;
  job.layout.vp = 3;
  validate_fails(&job, "--pp 2 times --vp 3 = 6 does not divide num_layers 32",
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
  validate_fails(&job, "--schedule gpipe cannot run virtual stages (--vp 2)",
                 NULL);
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
  validate_fails(&job, "--gbs 100 is not a multiple of mbs*dp",
                 "--mbs 3 times dp 4", NULL);
  make_job(&job, "llama3-8b", 4);
  job.layout.cp = 2;
  job.layout.seq = 8190;
  validate_fails(&job, "--seq 8190 is not divisible by 2*cp = 4", NULL);
  make_job(&job, "llama3-8b", 8);
  job.layout.tp = 8;
  job.layout.seq = 8196;
  validate_fails(&job, "--seq 8196", "is not divisible by --tp 8",
                 "sequence parallelism", NULL);
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
  job.layout.memory_threshold = 0;
  validate_fails(&job, "--memory-threshold 0 is out of range", "(0, 1]", NULL);
  make_job(&job, "llama3-8b", 8);
  job.layout.memory_threshold = 1.5;
  validate_fails(&job, "--memory-threshold 1.5", NULL);
  make_job(&job, "llama3-8b", 8);
  job.layout.memory_threshold = 1.0;
  g_assert_true(ptsim_job_validate(&job, NULL));
  make_job(&job, "llama3-8b", 8);
  job.layout.attention_dropout = 1.0;
  validate_fails(&job, "--attention-dropout 1 is out of range", "[0, 1)", NULL);
  make_job(&job, "llama3-8b", 8);
  job.layout.hidden_dropout = -0.1;
  validate_fails(&job, "--hidden-dropout -0.1", NULL);
  make_job(&job, "llama3-8b", 8);
  job.layout.hidden_dropout = NAN;
  validate_fails(&job, "--hidden-dropout nan", NULL);

  make_job(&job, "llama3-8b", 8);
  job.layout.pp = 4;
  job.layout.recompute = PTSIM_RECOMPUTE_FULL;
  job.layout.recompute_method = PTSIM_RECOMPUTE_METHOD_BLOCK;
  job.layout.recompute_num_layers = 9;
  validate_fails(&job, "--recompute-num-layers 9 is more than the 8 layers",
                 NULL);
  make_job(&job, "llama3-8b", 8);
  job.layout.pp = 4;
  job.layout.recompute = PTSIM_RECOMPUTE_FULL;
  job.layout.recompute_num_layers = 8;
  g_assert_true(ptsim_job_validate(&job, NULL));
  make_job(&job, "llama3-8b", 8);
  job.layout.recompute_num_layers = -1;
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
    job.layout.recompute = PTSIM_RECOMPUTE_FULL;
    g_autoptr(GError) error = NULL;
    if (!ptsim_job_validate(&job, &error))
      g_test_message("%s (%s)", error->message, runs[k].model);
    g_assert_no_error(error);
    int64_t sum = 0;
    for (int64_t s = 0; s < job.layout.pp; s++)
      sum += stage_layers_of(&job, s);
    g_assert_cmpint(sum, ==, job.model.num_layers);
    if (runs[k].vp > 1)
      g_assert_cmpint(job.layout.schedule, ==, PTSIM_SCHEDULE_INTERLEAVED);
  }
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/config/data-dir", test_data_dir);
  g_test_add_func("/config/numbers", test_numbers);
  g_test_add_func("/config/model/all-shipped", test_model_all_shipped);
  g_test_add_func("/config/model/values", test_model_values);
  g_test_add_func("/config/model/readme-table", test_model_readme_table);
  g_test_add_func("/config/model/path-and-default-name",
                  test_model_path_and_default_name);
  g_test_add_func("/config/model/unknown-name", test_model_unknown_name);
  g_test_add_func("/config/model/unknown-key", test_model_unknown_key);
  g_test_add_func("/config/model/unknown-group", test_model_unknown_group);
  g_test_add_func("/config/model/moe-keys", test_model_moe_keys);
  g_test_add_func("/config/model/missing", test_model_missing);
  g_test_add_func("/config/model/bad-numbers", test_model_bad_numbers);
  g_test_add_func("/config/model/inconsistent", test_model_inconsistent);
  g_test_add_func("/config/model/bad-words", test_model_bad_words);
  g_test_add_func("/config/model/check", test_model_check);
  g_test_add_func("/config/hw/all-shipped", test_hw_all_shipped);
  g_test_add_func("/config/hw/values", test_hw_values);
  g_test_add_func("/config/hw/unknown-name", test_hw_unknown_name);
  g_test_add_func("/config/hw/errors", test_hw_errors);
  g_test_add_func("/config/layout/defaults", test_layout_defaults);
  g_test_add_func("/config/job/valid", test_job_valid);
  g_test_add_func("/config/job/dp", test_job_dp);
  g_test_add_func("/config/job/tp", test_job_tp);
  g_test_add_func("/config/job/pp", test_job_pp);
  g_test_add_func("/config/job/vp", test_job_vp);
  g_test_add_func("/config/job/batch-and-seq", test_job_batch_and_seq);
  g_test_add_func("/config/job/ranges", test_job_ranges);
  g_test_add_func("/config/job/published-layouts", test_job_published_layouts);
  return g_test_run();
}
