/* hw_kernels.c — a hardware profile's optional [kernels] group: which
 * measured kernel tables (hw_profiles/kernels/) price its kernels.
 *
 *   [kernels]
 *   gpu = h200-sxm, h100-sxm5, h800-sxm5     the data files' GPU names: the
 *                                            profile's own first, then the
 *                                            parts it falls back on
 *   kinds = gemm, attention, collectives     what the profile's own GPU's rows
 *                                            give (data file names; default:
 *                                            all)
 *   transfer = gemm, attention               what the fallbacks may give
 *                                            (data file names; default: gemm,
 *                                            attention)
 *   transfer_compute_scale = 1.111           the fallbacks' GEMM and attention
 *                                            TFLOP/s times this (their
 *                                            efficiency on this GPU's peak;
 *                                            default 1)
 *
 * The merged table is registered once per process (kernel_registry.h) and
 * the profile keeps its index.  Without the group the profile has no
 * table: every kernel by the formulas of cost.h.  hw_profiles/kernels/
 * README.md ("Profiles and GPU names") says which rows transfer.
 * Shell module; errors name file:line and the key (PTSIM_CONFIG_ERROR). */
#include <string.h>
#include "config.h"
#include "config_int.h"
#include "kernel_registry.h"
#include "kernel_tables.h"

/* The word of a kind: its data file's name without ".csv". */
static char *kind_word(int kind) {
  const char *file = ptsim_kernel_tables_file((PtsimKernelKind)kind);
  return g_strndup(file, strlen(file) - strlen(".csv"));
}

/* KEY's comma-separated words, trimmed; NULL (and an error) when a word is
 * empty.  (transfer full) */
static char **words_of(const PtsimIniFile *ini, const char *key, GError **error) {
  g_autoptr(GError) local = NULL;
  g_autofree char *value = g_key_file_get_string(ini->kf, "kernels", key, &local);
  if (value == NULL) {
    g_autofree char *where = ptsim_ini_where(ini, "kernels", key);
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE, "%s: [kernels] %s: %s", where,
                key, local->message);
    return NULL;
  }
  g_auto(GStrv) words = g_strsplit(value, ",", -1);
  for (int i = 0; words[i]; i++) {
    g_strstrip(words[i]);
    if (words[i][0] == '\0') {
      g_autofree char *where = ptsim_ini_where(ini, "kernels", key);
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                  "%s: [kernels] %s = '%s': an empty name; expected names separated by commas",
                  where, key, value);
      return NULL;
    }
  }
  return g_steal_pointer(&words);
}

/* KEY's kinds (data file names) as bits 1 << kind into *OUT; absent:
 * *OUT unchanged. */
static gboolean kinds_of(const PtsimIniFile *ini, const char *key, int32_t *out, GError **error) {
  if (!g_key_file_has_key(ini->kf, "kernels", key, NULL)) return TRUE;
  g_auto(GStrv) kinds = words_of(ini, key, error);
  if (kinds == NULL) return FALSE;
  int32_t bits = 0;
  for (int i = 0; kinds[i]; i++) {
    int found = -1;
    g_autoptr(GString) allowed = g_string_new(NULL);
    for (int k = 0; k < PTSIM_KERNEL_KIND_COUNT; k++) {
      g_autofree char *word = kind_word(k);
      if (strcmp(word, kinds[i]) == 0) found = k;
      g_string_append_printf(allowed, "%s%s", k ? ", " : "", word);
    }
    if (found < 0) {
      g_autofree char *where = ptsim_ini_where(ini, "kernels", key);
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                  "%s: [kernels] %s: '%s' is not a kernel table; allowed: %s", where, key, kinds[i],
                  allowed->str);
      return FALSE;
    }
    bits |= 1 << found;
  }
  *out = bits;
  return TRUE;
}

gboolean ptsim_hardware_kernels_load(const PtsimIniFile *ini, PtsimHardware *hw, GError **error) {
  hw->kernel_table = 0;
  if (!g_key_file_has_group(ini->kf, "kernels")) return TRUE;
  if (!g_key_file_has_key(ini->kf, "kernels", "gpu", NULL)) {
    g_autofree char *where = ptsim_ini_where(ini, "kernels", NULL);
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                "%s: [kernels] needs a gpu key: the data files' GPU names (hw_profiles/kernels/"
                "README.md), the profile's own first",
                where);
    return FALSE;
  }
  g_auto(GStrv) gpus = words_of(ini, "gpu", error);
  if (gpus == NULL) return FALSE;
  int32_t kinds = PTSIM_KERNEL_KINDS_ALL, transfer = PTSIM_KERNEL_TRANSFER_DEFAULT;
  if (!kinds_of(ini, "kinds", &kinds, error) || !kinds_of(ini, "transfer", &transfer, error))
    return FALSE;
  double scale = 1.0;
  const PtsimRange scale_range = {0.01, 100.0, TRUE, TRUE};
  if (!ptsim_ini_double(ini, "kernels", "transfer_compute_scale", scale_range, FALSE, NULL, &scale,
                        error))
    return FALSE;
  int32_t id = 0;
  g_autoptr(GError) local = NULL;
  if (!ptsim_kernel_registry_add((const char *const *)gpus, kinds, transfer, scale, &id, &local)) {
    g_autofree char *where = ptsim_ini_where(ini, "kernels", "gpu");
    g_set_error(error, PTSIM_CONFIG_ERROR,
                local->domain == PTSIM_CONFIG_ERROR ? local->code : PTSIM_CONFIG_ERROR_PARSE,
                "%s: [kernels] gpu: %s", where, local->message);
    return FALSE;
  }
  hw->kernel_table = id;
  return TRUE;
}
