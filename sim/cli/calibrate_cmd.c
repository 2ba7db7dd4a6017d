/* calibrate_cmd.c — see calibrate_cmd.h.  Shell module: GKeyFile in and
 * out, comments of the base profile kept, the result validated by
 * ptsim_hardware_load before it is written. */
#include <stdio.h>
#include <string.h>
#include "calibrate_cmd.h"
#include "config.h"
#include "input.h"
#include "output.h"

static gboolean calibrate(const char *hw, const char *measured_path, const char *out_path,
                          const char *name, GError **error) {
  PtsimHardware check;
  if (!ptsim_hardware_load(hw, &check, error)) return FALSE; /* the base must be valid */
  g_autofree char *base_path = strchr(hw, '/') || g_str_has_suffix(hw, ".ini")
                                   ? g_strdup(hw)
                                   : g_strdup_printf("%s/hw_profiles/%s.ini",
                                                     ptsim_config_data_dir(), hw);
  g_autoptr(GKeyFile) profile = g_key_file_new();
  g_autoptr(GKeyFile) measured = g_key_file_new();
  g_autofree char *base_text = NULL, *measured_text = NULL;
  gsize base_len = 0, measured_len = 0;
  if (!ptsim_input_read(base_path, "hardware profile", PTSIM_INPUT_MAX_TEXT, &base_text, &base_len,
                        error) ||
      !ptsim_input_read(measured_path, "measured efficiency file", PTSIM_INPUT_MAX_TEXT,
                        &measured_text, &measured_len, error))
    return FALSE;
  if (!g_key_file_load_from_data(profile, base_text, base_len, G_KEY_FILE_KEEP_COMMENTS, error)) {
    g_prefix_error(error, "%s: ", base_path);
    return FALSE;
  }
  if (!g_key_file_load_from_data(measured, measured_text, measured_len, G_KEY_FILE_NONE, error)) {
    g_prefix_error(error, "%s: ", measured_path);
    return FALSE;
  }
  /* The output must be writable before anything is computed. */
  if (!ptsim_output_check(out_path, error)) return FALSE;
  if (!g_key_file_has_group(measured, "efficiency")) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                "%s: no [efficiency] group (expected the output of gemm_bench)", measured_path);
    return FALSE;
  }
  gsize n = 0;
  g_auto(GStrv) keys = g_key_file_get_keys(measured, "efficiency", &n, error);
  if (!keys) return FALSE;
  for (gsize i = 0; i < n; i++) {
    g_autofree char *value = g_key_file_get_value(measured, "efficiency", keys[i], error);
    if (!value) return FALSE;
    g_key_file_set_value(profile, "efficiency", keys[i], value);
    g_autofree char *note = g_strdup_printf(" measured: %s (ptsim calibrate)", measured_path);
    g_key_file_set_comment(profile, "efficiency", keys[i], note, NULL);
  }
  g_key_file_set_string(profile, "gpu", "name", name);
  gsize len = 0;
  g_autofree char *text = g_key_file_to_data(profile, &len, error);
  if (!text) return FALSE;
  /* Check the result loads before anything is written; a bad value is
   * named with the measured file it came from. */
  g_autofree char *label = g_strdup_printf("%s merged into %s", measured_path, base_path);
  if (!ptsim_hardware_load_data(text, len, label, &check, error)) {
    g_prefix_error(error, "%s gives an invalid profile: ", measured_path);
    return FALSE;
  }
  return ptsim_output_write(out_path, text, len, error);
}

int ptsim_calibrate_main(int argc, char **argv) {
  g_autofree char *hw = NULL, *out = NULL, *name = NULL;
  const GOptionEntry entries[] = {{"hw", 0, 0, G_OPTION_ARG_FILENAME, &hw,
                                   "Base profile: a name in hw_profiles/ or an .ini", "NAME|FILE"},
                                  {"out", 0, 0, G_OPTION_ARG_FILENAME, &out,
                                   "The calibrated profile to write", "FILE.ini"},
                                  {"name", 0, 0, G_OPTION_ARG_STRING, &name,
                                   "Its [gpu] name (default: BASE-calibrated)", "NAME"},
                                  {NULL, 0, 0, 0, NULL, NULL, NULL}};
  g_autoptr(GOptionContext)
      context = g_option_context_new("MEASURED.ini - a profile with measured efficiency");
  g_option_context_set_summary(context,
                               "MEASURED.ini is what validate/short_run/gemm_bench writes: an "
                               "[efficiency] group\n(gemm_efficiency_max, gemm_half_gflops, "
                               "memory_efficiency, ...). Its keys replace the\nbase profile's; use "
                               "the result with --hw FILE.ini.");
  g_option_context_add_main_entries(context, entries, NULL);
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(context, &argc, &argv, &error)) {
    fprintf(stderr, "ptsim calibrate: %s\n", error->message);
    return 2;
  }
  if (argc != 2 || !hw || !out) {
    fprintf(stderr,
            "ptsim calibrate: give --hw BASE, --out FILE.ini and one MEASURED.ini (see --help)\n");
    return 2;
  }
  g_autofree char *default_name = g_strdup_printf("%s-calibrated", hw);
  if (!calibrate(hw, argv[1], out, name ? name : default_name, &error)) {
    fprintf(stderr, "ptsim calibrate: %s\n", error->message);
    return ptsim_output_exit_code(error);
  }
  printf("ptsim calibrate: wrote %s (use it with --hw %s)\n", out, out);
  return 0;
}
