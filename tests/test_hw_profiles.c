/* test_hw_profiles.c — the shipped profiles in hw_profiles/: each loads, every key
 * carries a source (or says it is a guess) on the comment lines above it,
 * the numbers of the new machines are the cited ones, every profile gives
 * the cost model its SM count and GEMM tile, and the NVLink domain
 * key (gpus_per_nvlink_domain) places groups as a 72-GPU GB200 NVL72 rack
 * does.  (The loader's error paths are in test_config.c.)
 *
 * Fixtures: shipped files via PTSIM_DATA_DIR, tests/data via G_TEST_SRCDIR. */
#include <string.h>

#include <glib.h>

#include "config.h"
#include "cost.h"
#include "job_validate.h"
#include "plan_of.h"

#define MIB (1024.0 * 1024.0)

static GPtrArray *profile_names(void) {
  g_autofree char *dir = g_build_filename(ptsim_config_data_dir(), "hw_profiles", NULL);
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

static PtsimHardware load(const char *name) {
  g_autoptr(GError) error = NULL;
  PtsimHardware hw;
  g_assert_true(ptsim_hardware_load(name, &hw, &error));
  g_assert_no_error(error);
  return hw;
}

static void test_all_load(void) {
  g_test_summary(
      "every shipped profile loads, its name is its file name, its numbers are physical");
  g_autoptr(GPtrArray) names = profile_names();
  const char *expected[] = {"a10-24g",     "a100-40g",    "a100-80g",  "b200-180g", "b300-288g",
                            "gb200-nvl72", "gb300-nvl72", "gh200-96g", "h100-80g",  "h100-nvl-94g",
                            "h200-141g",   "l40s-48g",    "v100-16g",  "v100-32g"};
  g_assert_cmpuint(names->len, >=, G_N_ELEMENTS(expected));
  for (size_t k = 0; k < G_N_ELEMENTS(expected); k++) {
    PtsimHardware hw = load(expected[k]);
    g_assert_cmpstr(hw.name, ==, expected[k]);
  }
  for (guint k = 0; k < names->len; k++) {
    PtsimHardware hw = load(names->pdata[k]);
    g_assert_cmpstr(hw.name, ==, names->pdata[k]);
    g_assert_cmpfloat(hw.memory_bytes, >, 8e9);
    g_assert_cmpfloat(hw.peak_bf16_flops, >=, 1e14);
    g_assert_true(hw.peak_fp8_flops == 0.0 || hw.peak_fp8_flops > hw.peak_bf16_flops);
    g_assert_cmpfloat(hw.hbm_bytes_per_s, >, 1e11);
    g_assert_cmpint(hw.gpus_per_nvlink_domain % hw.gpus_per_node, ==, 0);
    g_assert_cmpfloat(hw.nvlink_bytes_per_s, >, hw.nic_bytes_per_s);
  }
}

/* Words that name where a number comes from; `name` alone needs none. */
static gboolean names_a_source(const char *comment) {
  static const char *const marks[] = {"guess",    "nvidia-smi", "NCCL",   "[nccl]",  "[mleng]",
                                      "[mlperf]", "[gkw]",      "[dgx2]", "[v100]",  "[a10]",
                                      "[h100]",   "Fitted",     "fitted", "The fit", "B3",
                                      "B4",       "B5",         "C1",     "C2",      "C3",
                                      "http",     "notes",      "[aic]",  "[fi]",    "[nv]"};
  for (size_t i = 0; i < G_N_ELEMENTS(marks); i++)
    if (strstr(comment, marks[i]) != NULL) return TRUE;
  return FALSE;
}

static void test_every_key_cited(void) {
  g_test_summary("every key of every shipped profile has comment lines above it naming a source "
                 "or saying 'guess'");
  g_autoptr(GPtrArray) names = profile_names();
  for (guint k = 0; k < names->len; k++) {
    g_autofree char *file = g_strconcat(names->pdata[k], ".ini", NULL);
    g_autofree char *path = g_build_filename(ptsim_config_data_dir(), "hw_profiles", file, NULL);
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    g_autoptr(GString) comment = g_string_new("");
    int keys = 0;
    for (int i = 0; lines[i] != NULL; i++) {
      const char *s = g_strchug(lines[i]);
      if (s[0] == '#') {
        g_string_append(comment, s);
        g_string_append_c(comment, ' ');
      } else if (s[0] == '\0' || s[0] == '[') {
        g_string_truncate(comment, 0);
      } else {
        keys++;
        if (!g_str_has_prefix(s, "name ") && !names_a_source(comment->str))
          g_error("%s:%d: '%s' has no source above it (comment: '%s')", path, i + 1, s,
                  comment->str);
        g_string_truncate(comment, 0);
      }
    }
    g_assert_cmpint(keys, >=, 17); /* every required key */
  }
}

/* The comment lines right above KEY's line in TEXT (empty when none). */
static char *comment_above(const char *text, const char *key) {
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  g_autofree char *prefix = g_strconcat(key, " ", NULL);
  for (int i = 0; lines[i] != NULL; i++) {
    if (!g_str_has_prefix(lines[i], prefix)) continue;
    GString *comment = g_string_new("");
    for (int j = i - 1; j >= 0 && lines[j][0] == '#'; j--) g_string_prepend(comment, lines[j]);
    return g_string_free(comment, FALSE);
  }
  return NULL;
}

static void test_cost_model_keys(void) {
  g_test_summary("every shipped profile gives sm_count, gemm_tile_m and gemm_tile_n, each with a "
                 "source (or 'guess') on the lines above it, and the cost model uses them");
  static const char *const keys[] = {"sm_count", "gemm_tile_m", "gemm_tile_n"};
  g_autoptr(GPtrArray) names = profile_names();
  for (guint k = 0; k < names->len; k++) {
    g_autofree char *file = g_strconcat(names->pdata[k], ".ini", NULL);
    g_autofree char *path = g_build_filename(ptsim_config_data_dir(), "hw_profiles", file, NULL);
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    for (size_t i = 0; i < G_N_ELEMENTS(keys); i++) {
      g_autofree char *comment = comment_above(text, keys[i]);
      if (comment == NULL) g_error("%s: no %s", path, keys[i]);
      if (!names_a_source(comment)) g_error("%s: %s has no source above it", path, keys[i]);
    }
    PtsimHardware hw = load(names->pdata[k]);
    PtsimCostParams p;
    ptsim_cost_params_default(&hw, &p);
    g_assert_cmpint(p.sm_count, ==, hw.sm_count);
    g_assert_cmpint(p.gemm_tile_m, ==, hw.gemm_tile_m);
    g_assert_cmpint(p.gemm_tile_n, ==, hw.gemm_tile_n);
  }
}

static void test_sm_counts(void) {
  g_test_summary("SM counts of the datasheets and device queries, and the tile of each generation");
  static const struct {
    const char *name;
    int64_t sms, tile_n;
  } want[] = {{"a100-40g", 108, 128},  {"a100-80g", 108, 128},    {"h100-80g", 132, 256},
              {"h200-141g", 132, 256}, {"gh200-96g", 132, 256},   {"h100-nvl-94g", 132, 256},
              {"b200-180g", 148, 256}, {"gb200-nvl72", 152, 256}, {"l40s-48g", 142, 128},
              {"a10-24g", 72, 128},    {"v100-16g", 80, 128},     {"v100-32g", 80, 128},
              {"b300-288g", 148, 256}, {"gb300-nvl72", 152, 256}};
  for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
    PtsimHardware hw = load(want[i].name);
    g_assert_cmpint(hw.sm_count, ==, want[i].sms);
    g_assert_cmpint(hw.gemm_tile_m, ==, 128);
    g_assert_cmpint(hw.gemm_tile_n, ==, want[i].tile_n);
  }
}

static void test_values(void) {
  g_test_summary("the new profiles carry the cited numbers, in SI units");
  PtsimHardware b = load("b200-180g");
  g_assert_cmpfloat(b.memory_bytes, ==, 183359 * MIB); /* nvidia-smi memory.total */
  g_assert_cmpfloat_with_epsilon(b.peak_bf16_flops, 2250e12, 1e3);
  g_assert_cmpfloat_with_epsilon(b.peak_fp8_flops, 4500e12, 1e3);
  g_assert_cmpfloat_with_epsilon(b.hbm_bytes_per_s, 8000e9, 1);
  g_assert_cmpint(b.gpus_per_node, ==, 8);
  g_assert_cmpint(b.gpus_per_nvlink_domain, ==, 8);                     /* absent: the host */
  g_assert_cmpfloat_with_epsilon(b.nvlink_bytes_per_s, 40.1e9 * 18, 1); /* SM100_NVLINK_BW x 18 */
  g_assert_cmpint(b.nvls, ==, 1);
  g_assert_cmpfloat(b.gemm_efficiency_max, <, 1745.0 / 2250.0); /* below the MAMF */

  PtsimHardware g = load("gb200-nvl72");
  g_assert_cmpfloat(g.memory_bytes, ==, 189471 * MIB);
  g_assert_cmpfloat_with_epsilon(g.peak_bf16_flops, 2500e12, 1e3);
  g_assert_cmpint(g.gpus_per_node, ==, 4);
  g_assert_cmpint(g.gpus_per_nvlink_domain, ==, 72);
  g_assert_cmpfloat(g.gemm_efficiency_max, <, 1822.0 / 2500.0);

  /* Blackwell Ultra: the HGX part has the B200's 8-GPU host and dense BF16/FP8, more memory and
   * more FP4; the NVL72 part the GB200's 4-GPU trays and 72-GPU domain.  FP4 from the sources:
   * GB300 15000 TFLOP/s (1.08 EF per rack / 72) against GB200's 10000; B300's 12600 against
   * B200's 9000.  Memory: nvidia-smi's 275040 and 284208 MiB.  NIC: 800 Gb/s = 100 GB/s line,
   * at NDR's achieved 48 of 50: 96 GB/s. */
  PtsimHardware b3 = load("b300-288g");
  g_assert_cmpfloat(b3.memory_bytes, ==, 275040 * MIB);
  g_assert_cmpfloat_with_epsilon(b3.peak_bf16_flops, 2250e12, 1e3);
  g_assert_cmpfloat_with_epsilon(b3.peak_fp8_flops, 4500e12, 1e3);
  g_assert_cmpfloat(b3.peak_fp4_flops, >, b.peak_fp4_flops);
  g_assert_true(b3.mxfp8);
  g_assert_cmpint(b3.gpus_per_node, ==, 8);
  g_assert_cmpint(b3.gpus_per_nvlink_domain, ==, 8);
  g_assert_cmpfloat_with_epsilon(b3.nvlink_bytes_per_s, 40.1e9 * 18, 1);
  g_assert_cmpfloat_with_epsilon(b3.nic_bytes_per_s, 100e9 * 48 / 50, 1);
  g_assert_cmpfloat(b3.host_cpu_scale, ==, 1.0);                 /* x86 host: the key is absent */
  g_assert_cmpfloat(b3.gemm_efficiency_max, <, 1769.0 / 2250.0); /* below B300's MAMF */

  PtsimHardware g3 = load("gb300-nvl72");
  g_assert_cmpfloat(g3.memory_bytes, ==, 284208 * MIB);
  g_assert_cmpfloat_with_epsilon(g3.peak_bf16_flops, 2500e12, 1e3);
  g_assert_cmpfloat_with_epsilon(g3.peak_fp4_flops, 1080e15 / 72, 1e3);
  g_assert_cmpfloat(g3.peak_fp4_flops, >, 1.4 * g.peak_fp4_flops);
  g_assert_true(g3.mxfp8);
  g_assert_cmpint(g3.gpus_per_node, ==, 4);
  g_assert_cmpint(g3.gpus_per_nvlink_domain, ==, 72);
  g_assert_cmpfloat_with_epsilon(g3.nic_bytes_per_s, 100e9 * 48 / 50, 1);
  g_assert_cmpfloat(g3.host_cpu_scale, ==, g.host_cpu_scale); /* the same Grace */
  g_assert_cmpfloat(g3.gemm_efficiency_max, <, 1822.0 / 2500.0);

  PtsimHardware l = load("l40s-48g"); /* PCIe only: the intra-node link is PCIe Gen4 x16 */
  g_assert_cmpfloat(l.memory_bytes, ==, 46068 * MIB);
  g_assert_cmpfloat_with_epsilon(l.peak_fp8_flops, 733e12, 1e3);
  g_assert_cmpfloat_with_epsilon(l.nvlink_bytes_per_s, 16 * 120 / 80.0 * 1e9, 1);
  g_assert_cmpfloat_with_epsilon(l.nvlink_latency_s, 5.7e-6, 1e-12); /* NCCL PCI ring/simple */
  g_assert_cmpint(l.nvls, ==, 0);

  PtsimHardware v = load("v100-32g");
  g_assert_cmpfloat(v.memory_bytes, ==, 32510 * MIB); /* what CUDA hands out, not 32 GiB */
  g_assert_cmpfloat(load("v100-16g").memory_bytes, ==, 16160 * MIB);
  g_assert_cmpfloat(v.peak_fp8_flops, ==, 0.0);
  g_assert_cmpfloat_with_epsilon(v.nvlink_bytes_per_s, 20.0e9 * 6, 1); /* SM70_NVLINK_BW x 6 */
  g_assert_cmpint(v.gpus_per_node, ==, 16);
  g_assert_cmpfloat_with_epsilon(v.nic_bytes_per_s, 8 * 12e9 / 16, 1); /* 8 EDR for 16 GPUs */

  PtsimHardware a = load("a10-24g");
  g_assert_cmpfloat(a.memory_bytes, ==, 23028 * MIB);
  g_assert_cmpfloat(a.peak_fp8_flops, ==, 0.0);
}

static void test_domain_key(void) {
  g_test_summary("gpus_per_nvlink_domain must be whole hosts: file:line, value, what is allowed");
  g_autofree char *path = g_test_build_filename(G_TEST_DIST, "data", "bad_hw_nvlink_domain.ini",
                                                NULL);
  g_autoptr(GError) error = NULL;
  PtsimHardware hw;
  g_assert_false(ptsim_hardware_load(path, &hw, &error));
  g_assert_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE);
  g_test_message("%s", error->message);
  g_autofree char *where = g_strdup_printf("%s:24:", path);
  g_assert_nonnull(strstr(error->message, where));
  g_assert_nonnull(strstr(error->message, "gpus_per_nvlink_domain = 6"));
  g_assert_nonnull(strstr(error->message, "gpus_per_node = 4"));
  g_assert_null(strchr(error->message, '\n'));
}

/* The DP group's placement in the plan of llama3-8b, tp 8, on `hw`. */
static PtsimGroup dp_group(const char *hw, int64_t gpus) {
  PtsimJob job;
  memset(&job, 0, sizeof job);
  g_assert_true(ptsim_model_load("llama3-8b", &job.model, NULL));
  job.hw = load(hw);
  ptsim_job_init_defaults(&job);
  job.layout.gpus = gpus;
  job.layout.tp = 8;
  job.layout.gbs = gpus;
  job.layout.seq = 8192;
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_job_validate(&job, &error));
  g_autofree PtsimPlan *plan = plan_of(&job);
  return plan->groups[PTSIM_GROUP_DP];
}

static void test_nvl72_plan(void) {
  g_test_summary(
      "the plan of 72 GPUs keeps dp on NVLink on a GB200 NVL72 rack, not on 9 B200 hosts");
  PtsimGroup g = dp_group("gb200-nvl72", 72); /* tp 8, dp 9: one domain */
  g_assert_cmpint(g.size, ==, 9);
  g_assert_cmpint(g.nodes, ==, 1);
  g_assert_cmpint(g.node_size, ==, 72);
  g = dp_group("b200-180g", 72); /* tp 8 per host: dp crosses 9 hosts, one member each */
  g_assert_cmpint(g.nodes, ==, 9);
  g_assert_cmpint(g.gpus_per_node, ==, 1);
  g = dp_group("gb200-nvl72", 144); /* two racks: 9 members per domain, crossing once */
  g_assert_cmpint(g.nodes, ==, 2);
  g_assert_cmpint(g.gpus_per_node, ==, 9);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/hw-profiles/all-load", test_all_load);
  g_test_add_func("/hw-profiles/every-key-cited", test_every_key_cited);
  g_test_add_func("/hw-profiles/values", test_values);
  g_test_add_func("/hw-profiles/cost-model-keys", test_cost_model_keys);
  g_test_add_func("/hw-profiles/sm-counts", test_sm_counts);
  g_test_add_func("/hw-profiles/domain-key", test_domain_key);
  g_test_add_func("/hw-profiles/nvl72-plan", test_nvl72_plan);
  return g_test_run();
}
