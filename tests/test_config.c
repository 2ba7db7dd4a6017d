/* test_config.c — sim/io/config.c: the shipped models and hardware profiles
 * load, every malformed .ini is refused with one line naming file:line,
 * value and what is allowed (the job's validation is test_job_validate.c's).
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
  const char *bad_ints[] = {"", "  ", "12abc", "1.5", "1e3", "0x10", "99999999999999999999", NULL};
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
  g_autofree char *path = g_build_filename(ptsim_config_data_dir(), "models", "README.md", NULL);
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
    if (g_strv_length(cells) < 7) continue;
    for (int c = 0; cells[c]; c++) g_strstrip(cells[c]);
    PtsimModel m;
    if (!ptsim_model_load(cells[0], &m, NULL)) continue; /* another table (keys) */
    int64_t want[6];
    for (int c = 0; c < 6; c++) g_assert_true(ptsim_number_parse_int64(cells[c + 1], &want[c]));
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
  assert_error(error, PTSIM_CONFIG_ERROR_NOT_FOUND, "no/such/file.ini", "no such file", NULL);
  g_clear_error(&error);
  g_assert_false(ptsim_model_load("", &m, &error));
  assert_error(error, PTSIM_CONFIG_ERROR_NOT_FOUND, "no model given", NULL);
}

static void test_model_unknown_key(void) {
  g_test_summary("a typo in a key is an error at its line, with a suggestion");
  load_model_fixture_fails("bad_model_typo.ini", PTSIM_CONFIG_ERROR_PARSE,
                           ".ini:3:", "unknown key 'num_layer' in [model]",
                           "did you mean num_layers?", "known keys: name, ", NULL);
}

static void test_model_moe_keys(void) {
  g_test_summary("MoE keys: the layer pattern's length at its line; an moe_ key without experts");
  load_model_fixture_fails("bad_model_moe_freq.ini", PTSIM_CONFIG_ERROR_PARSE,
                           ".ini:13:", "moe_layer_freq '([0]*1+[1]*2)' lists 3 layers",
                           "expected num_layers = 4", NULL);
  load_model_fixture_fails("bad_model_moe_key.ini", PTSIM_CONFIG_ERROR_PARSE,
                           ".ini:12:", "moe_router_topk needs num_experts", NULL);
}

static void test_model_unknown_group(void) {
  g_test_summary("unknown group");
  load_model_fixture_fails("bad_model_group.ini", PTSIM_CONFIG_ERROR_PARSE,
                           ".ini:14:", "unknown group [sauce]", "allowed groups: [model], [source]",
                           NULL);
}

static void test_model_missing(void) {
  g_test_summary("missing key and missing group");
  load_model_fixture_fails("bad_model_missing.ini", PTSIM_CONFIG_ERROR_PARSE,
                           ".ini:2:", "[model] is missing key vocab_size", "an integer from 1",
                           NULL);
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
                           ".ini:8:", "vocab_size = '2000000000'", "to 1073741824", NULL);
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
                           ".ini:9:", "activation = 'relu'", "expected swiglu|gelu|relu2", NULL);
  load_model_fixture_fails("bad_model_norm.ini", PTSIM_CONFIG_ERROR_PARSE, "norm = 'batchnorm'",
                           "expected rmsnorm|layernorm", NULL);
  load_model_fixture_fails("bad_model_bool.ini", PTSIM_CONFIG_ERROR_PARSE,
                           ".ini:12:", "bias = 'yes'", "expected true or false", NULL);
  load_model_fixture_fails("bad_model_name.ini", PTSIM_CONFIG_ERROR_PARSE,
                           ".ini:3:", "a name of 1 to 63 characters", NULL);
  load_model_fixture_fails("bad_model_syntax.ini", PTSIM_CONFIG_ERROR_PARSE, "this line is garbage",
                           NULL);
}

static void test_model_check(void) {
  g_test_summary("ptsim_model_check on models built in code");
  g_autoptr(GError) error = NULL;
  PtsimModel m;
  g_assert_true(ptsim_model_load("llama3-8b", &m, &error));
  PtsimModel bad = m;
  bad.num_layers = 0;
  g_assert_false(ptsim_model_check(&bad, &error));
  assert_error(error, PTSIM_CONFIG_ERROR_INVALID, "model llama3-8b: num_layers 0 is out of range",
               NULL);
  g_clear_error(&error);
  bad = m;
  bad.num_query_groups = 5;
  g_assert_false(ptsim_model_check(&bad, &error));
  assert_error(error, PTSIM_CONFIG_ERROR_INVALID,
               "num_query_groups 5 does not divide num_attention_heads 32", NULL);
  g_clear_error(&error);
  bad = m;
  bad.num_attention_heads = 24;
  bad.num_query_groups = 8;
  g_assert_false(ptsim_model_check(&bad, &error));
  assert_error(error, PTSIM_CONFIG_ERROR_INVALID,
               "hidden_size 4096 is not divisible by num_attention_heads 24", NULL);
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
  g_assert_cmpint(hw.sm_count, ==, 132);
  g_assert_cmpint(hw.gemm_tile_m, ==, 128);
  g_assert_cmpint(hw.gemm_tile_n, ==, 256);

  g_assert_true(ptsim_hardware_load("a100-80g", &hw, &error));
  g_assert_cmpfloat_with_epsilon(hw.nvlink_bytes_per_s, 240e9, 1);
  g_assert_cmpfloat_with_epsilon(hw.nic_bytes_per_s, 24e9, 1);
  g_assert_cmpfloat(hw.peak_fp8_flops, ==, 0.0);
  g_assert_cmpint(hw.nvls, ==, 0);
  g_assert_cmpint(hw.sm_count, ==, 108);
  g_assert_cmpint(hw.gemm_tile_m, ==, 128);
  g_assert_cmpint(hw.gemm_tile_n, ==, 128);

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
  assert_error(error, PTSIM_CONFIG_ERROR_NOT_FOUND, "unknown hardware profile 'tpu-v5'", "a100-40g",
               "h100-80g", "h200-141g", NULL);
}

static void test_hw_errors(void) {
  g_test_summary("every malformed profile names file:line, value, allowed");
  load_hw_fixture_fails("bad_hw_typo.ini", "unknown key 'nvlink_gbs' in [node]",
                        "did you mean nvlink_gbps?", NULL);
  load_hw_fixture_fails("bad_hw_both_memory.ini", "exactly one of memory_bytes or memory_gib",
                        "found both", NULL);
  load_hw_fixture_fails("bad_hw_no_memory.ini", "found neither", NULL);
  load_hw_fixture_fails("bad_hw_huge.ini", "hbm_gbps = '1e999'",
                        "expected a number in [0.01, 1000000]", NULL);
  load_hw_fixture_fails("bad_hw_nan.ini", "peak_fp32_tflops = 'nan'", NULL);
  load_hw_fixture_fails("bad_hw_efficiency.ini", "gemm_efficiency_max = '1.5'",
                        "expected a number in (0, 1]", NULL);
  load_hw_fixture_fails("bad_hw_zero_nic.ini", "nic_gbps = '0'", "a number in [0.01, 1000000]",
                        NULL);
  load_hw_fixture_fails("bad_hw_negative_latency.ini", "net_latency_us = '-1'",
                        "a number in [0, 1000000]", NULL);
  load_hw_fixture_fails("bad_hw_nvls.ini", "nvls = '1'", "true or false", NULL);
  load_hw_fixture_fails("bad_hw_gpus_per_node.ini", "gpus_per_node = '8.5'", "an integer", NULL);
  load_hw_fixture_fails("bad_hw_missing_group.ini", "unknown group [fabrik]",
                        "[gpu], [node], [fabric], [efficiency], [kernels], [source]", NULL);
  load_hw_fixture_fails("bad_hw_no_fabric.ini", "missing group [fabric]", NULL);
  /* what the cost model's wave quantization needs is required, never guessed */
  load_hw_fixture_fails("bad_hw_tile.ini", "gemm_tile_n = '256000'", "an integer from 8 to 1024",
                        NULL);

  /* line numbers: the typo sits on line 25 of its fixture */
  g_autofree char *path = fixture("bad_hw_typo.ini");
  g_autoptr(GError) error = NULL;
  PtsimHardware hw;
  g_assert_false(ptsim_hardware_load(path, &hw, &error));
  g_autofree char *where = g_strdup_printf("%s:25:", path);
  assert_error(error, PTSIM_CONFIG_ERROR_PARSE, where, NULL);

  /* a missing required key names the group's line, the key and what is allowed */
  g_autofree char *no_sm = fixture("bad_hw_no_sm_count.ini");
  g_autoptr(GError) missing = NULL;
  g_assert_false(ptsim_hardware_load(no_sm, &hw, &missing));
  g_autofree char *gpu_line = g_strdup_printf("%s:6:", no_sm);
  assert_error(missing, PTSIM_CONFIG_ERROR_PARSE, gpu_line, "[gpu] is missing key sm_count",
               "an integer from 1 to 1024", NULL);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/config/data-dir", test_data_dir);
  g_test_add_func("/config/numbers", test_numbers);
  g_test_add_func("/config/model/all-shipped", test_model_all_shipped);
  g_test_add_func("/config/model/values", test_model_values);
  g_test_add_func("/config/model/readme-table", test_model_readme_table);
  g_test_add_func("/config/model/path-and-default-name", test_model_path_and_default_name);
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
  return g_test_run();
}
