/* test_hw_kernels.c — a hardware profile's [kernels] group (sim/io/hw_kernels.c,
 * kernel_registry.c): it loads the named GPUs' rows into one registered
 * table whose index the profile keeps, the cost parameters then point at
 * it, the same group gets the same table, and a bad group is an error
 * naming the file, line and what is allowed.
 *
 * Fixtures: the shipped h100-80g profile with a [kernels] group appended;
 * the data files of hw_profiles/kernels via PTSIM_DATA_DIR. */
#include <string.h>

#include <glib.h>

#include "config.h"
#include "cost.h"
#include "kernel_registry.h"

/* h100-80g.ini followed by KERNELS (a [kernels] group, or ""). */
static char *profile_with(const char *kernels) {
  g_autofree char *path = g_build_filename(ptsim_config_data_dir(), "hw_profiles", "h100-80g.ini",
                                           NULL);
  g_autofree char *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  return g_strconcat(text, "\n", kernels, NULL);
}

static gboolean load(const char *kernels, PtsimHardware *hw, GError **error) {
  g_autofree char *text = profile_with(kernels);
  return ptsim_hardware_load_data(text, strlen(text), "h100-kernels.ini", hw, error);
}

static void test_group_registers(void) {
  g_test_summary("a [kernels] group gives the profile a table: H100's own rows, then H800's GEMM "
                 "and attention; the same group, the same table; none, no table");
  PtsimHardware hw, again, plain;
  g_autoptr(GError) error = NULL;
  g_assert_true(load("[kernels]\n# sources.csv\ngpu = h100-sxm5, h800-sxm5\n", &hw, &error));
  g_assert_no_error(error);
  g_assert_cmpint(hw.kernel_table, >=, 1);
  int32_t n = 0;
  const PtsimKernelTable *tables = ptsim_kernel_registry_tables(&n);
  g_assert_cmpint(hw.kernel_table, <=, n);
  const PtsimKernelTable *t = &tables[hw.kernel_table - 1];
  /* H100's HBM triad is its own row (Azure BabelStream, 2,970 GB/s: hbm.csv) */
  g_assert_cmpfloat(ptsim_cost_measured_hbm_bytes_per_s(t), >, 2.5e12);
  /* H800's GEMM rows (DeepGEMM's FP8 block-scaled GEMMs) come after H100's own:
   * more curves than H100's rows alone; and kinds = hbm keeps only that kind */
  PtsimHardware own, hbm_only;
  g_assert_true(load("[kernels]\n# sources.csv\ngpu = h100-sxm5\n", &own, &error));
  g_assert_true(
      load("[kernels]\n# sources.csv\ngpu = h100-sxm5\nkinds = hbm\n", &hbm_only, &error));
  g_assert_no_error(error);
  tables = ptsim_kernel_registry_tables(&n);
  g_assert_cmpint(tables[own.kernel_table - 1].curve_count, <, t->curve_count);
  const PtsimKernelTable *h = &tables[hbm_only.kernel_table - 1];
  g_assert_cmpint(h->curve_count, >, 0);
  for (int32_t i = 0; i < h->curve_count; i++)
    g_assert_cmpint(h->curves[i].kind, ==, PTSIM_KERNEL_HBM);
  PtsimCostParams p;
  ptsim_kernel_registry_params(&hw, &p);
  g_assert_true(p.kernels == t);
  g_assert_true(load("[kernels]\n# sources.csv\ngpu = h100-sxm5, h800-sxm5\n", &again, &error));
  g_assert_cmpint(again.kernel_table, ==, hw.kernel_table);
  g_assert_true(load("", &plain, &error));
  g_assert_cmpint(plain.kernel_table, ==, 0);
  ptsim_kernel_registry_params(&plain, &p);
  g_assert_null(p.kernels);
}

static void fails(const char *kernels, const char *want) {
  PtsimHardware hw;
  g_autoptr(GError) error = NULL;
  g_assert_false(load(kernels, &hw, &error));
  g_assert_error(error, PTSIM_CONFIG_ERROR, error->code);
  if (strstr(error->message, want) == NULL) g_error("'%s' does not say '%s'", error->message, want);
  g_assert_nonnull(strstr(error->message, "h100-kernels.ini:"));
}

static void test_group_errors(void) {
  g_test_summary("a [kernels] group without gpu, with an unknown GPU or kind, an empty name or a "
                 "scale out of range is an error naming the file, line and what is allowed");
  fails("[kernels]\nkinds = gemm\n", "needs a gpu key");
  fails("[kernels]\ngpu = h100-sxm6\n", "h100-sxm6");
  fails("[kernels]\ngpu = h100-sxm5,\n", "an empty name");
  fails("[kernels]\ngpu = h100-sxm5\nkinds = gemm, flops\n",
        "'flops' is not a kernel table; allowed: gemm, attention");
  fails("[kernels]\ngpu = h100-sxm5\ntransfer_compute_scale = 0\n", "transfer_compute_scale");
  fails("[kernels]\ngpu = h100-sxm5\nspeed = 2\n", "speed");
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/hw-kernels/group-registers", test_group_registers);
  g_test_add_func("/hw-kernels/group-errors", test_group_errors);
  return g_test_run();
}
