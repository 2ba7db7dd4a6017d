/* fuzz_launcher.c — the GPU count of a launch command (sim/io/launcher.c):
 * the input is a script or a command line; the words of its training
 * command in front of the Python script (torchrun, srun, mpirun, deepspeed
 * and their count options), the #SBATCH directives and the variables go to
 * ptsim_launcher_gpus.  A count is positive and bounded (products of two
 * counts must not overflow), or the run is refused. */
#include "fuzz_common.h"
#include "config.h"
#include "launcher.h"
#include "shell_script.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > FUZZ_MAX_INPUT) return 0;
  g_autoptr(GError) error = NULL;
  g_autoptr(PtsimShellScript)
      s = ptsim_shell_script_run((const char *)data, size, "fuzz.sh", &error);
  if (!s) return 0;
  g_autoptr(GPtrArray) launcher = g_ptr_array_new();
  for (guint i = 0; s->command && i < s->command->len; i++) {
    if (g_str_has_suffix(s->command->pdata[i], ".py")) break;
    g_ptr_array_add(launcher, s->command->pdata[i]);
  }
  int64_t gpus = -1;
  g_autofree char *how = NULL;
  if (!ptsim_launcher_gpus(launcher, s, &gpus, &how, &error)) {
    g_assert_nonnull(error);
    return 0;
  }
  g_assert_nonnull(how);
  g_assert_true(gpus >= 0 && gpus <= PTSIM_CONFIG_INT_MAX * PTSIM_CONFIG_INT_MAX);
  return 0;
}
