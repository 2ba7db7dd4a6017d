/* host_overhead.c — the host's per-call costs; see host_overhead.h. */
#include "host_overhead.h"

#include <stddef.h>
#include <string.h>

#include "config.h"
#include "config_int.h"
#include "input.h"
#include "units.h"

#define S_PER_US 1e-6 /* microseconds, as the file gives them */

static const PtsimRange RANGE_US = {0.0, 1e6, FALSE, TRUE};
static const PtsimRange RANGE_COUNT = {1.0, 1e9, TRUE, TRUE};

typedef struct {
  const char *key;
  gboolean microseconds; /* else a count */
  size_t offset;
} HostKey;

static const HostKey host_keys[] = {
    {"op_us", TRUE, offsetof(PtsimHostCosts, op_s)},
    {"te_module_us", TRUE, offsetof(PtsimHostCosts, te_module_s)},
    {"graph_launch_us", TRUE, offsetof(PtsimHostCosts, graph_launch_s)},
    {"graph_node_us", TRUE, offsetof(PtsimHostCosts, graph_node_s)},
    {"layer_module_us", TRUE, offsetof(PtsimHostCosts, layer_module_s)},
    {"step_log_us", TRUE, offsetof(PtsimHostCosts, step_log_s)},
    {"mta_chunk_elements", FALSE, offsetof(PtsimHostCosts, mta_chunk_elements)},
    {"mta_blocks", FALSE, offsetof(PtsimHostCosts, mta_blocks)},
    {"mta_tensors_norm", FALSE, offsetof(PtsimHostCosts, mta_tensors_norm)},
    {"mta_tensors_copy", FALSE, offsetof(PtsimHostCosts, mta_tensors_copy)},
    {"mta_tensors_adam", FALSE, offsetof(PtsimHostCosts, mta_tensors_adam)},
    {"sync_us", TRUE, offsetof(PtsimHostCosts, sync_s)},
    {"sinkhorn_iterations", FALSE, offsetof(PtsimHostCosts, sinkhorn_iterations)},
};

/* Every key of GROUP is one of host_keys. */
static gboolean known_keys(const PtsimIniFile *ini, const char *group, GError **error) {
  g_auto(GStrv) keys = g_key_file_get_keys(ini->kf, group, NULL, NULL);
  for (gsize i = 0; keys && keys[i]; i++) {
    gboolean known = FALSE;
    for (size_t k = 0; k < G_N_ELEMENTS(host_keys); k++)
      known |= strcmp(keys[i], host_keys[k].key) == 0;
    if (!known) {
      g_autofree char *where = ptsim_ini_where(ini, group, keys[i]);
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                  "%s: unknown key '%s' in [%s]", where, keys[i], group);
      return FALSE;
    }
  }
  return TRUE;
}

static gboolean costs_from_ini(const PtsimIniFile *ini, PtsimHostCosts *out, GError **error) {
  PtsimHostCosts c;
  memset(&c, 0, sizeof c);
  if (!known_keys(ini, "host", error) || !known_keys(ini, "source", error)) return FALSE;
  for (size_t k = 0; k < G_N_ELEMENTS(host_keys); k++) {
    const HostKey *hk = &host_keys[k];
    double v = 0.0;
    if (!ptsim_ini_double(ini, "host", hk->key, hk->microseconds ? RANGE_US : RANGE_COUNT, TRUE,
                          NULL, &v, error))
      return FALSE;
    g_autofree char *source = g_key_file_get_string(ini->kf, "source", hk->key, NULL);
    if (!source || !*g_strstrip(source)) {
      g_autofree char *where = ptsim_ini_where(ini, "host", hk->key);
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                  "%s: '%s' has no source: every value needs one under [source]", where, hk->key);
      return FALSE;
    }
    *(double *)((char *)&c + hk->offset) = hk->microseconds ? v * S_PER_US : v;
  }
  *out = c;
  return TRUE;
}

gboolean ptsim_host_costs_load_data(const char *text, gsize len, const char *label,
                                    PtsimHostCosts *out, GError **error) {
  g_auto(PtsimIniFile) ini = {0};
  ini.path = label;
  ini.no_lines = TRUE;
  return ptsim_ini_parse(&ini, g_strndup(text, len), len, error) &&
         costs_from_ini(&ini, out, error);
}

static gboolean load_file(const char *path, PtsimHostCosts *out, GError **error) {
  g_auto(PtsimIniFile) ini = {0};
  char *contents = NULL;
  gsize len = 0;
  g_autoptr(GError) local = NULL;
  ini.path = path;
  if (!ptsim_input_read(path, "host overhead file", PTSIM_INPUT_MAX_TEXT, &contents, &len,
                        &local)) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_NOT_FOUND, "%s", local->message);
    return FALSE;
  }
  return ptsim_ini_parse(&ini, contents, len, error) && costs_from_ini(&ini, out, error);
}

gboolean ptsim_host_costs_load(PtsimHostCosts *out, GError **error) {
  static gsize once = 0;
  static PtsimHostCosts cached;
  static char *failure = NULL;
  static char *path = NULL;
  if (g_once_init_enter(&once)) {
    path = g_build_filename(ptsim_config_data_dir(), PTSIM_HOST_OVERHEAD_FILE, NULL);
    g_autoptr(GError) local = NULL;
    if (!load_file(path, &cached, &local)) failure = g_strdup(local->message);
    g_once_init_leave(&once, 1);
  }
  /* read once for the process, and an input of every caller */
  ptsim_input_capture_note(path);
  if (failure) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_NOT_FOUND, "%s", failure);
    return FALSE;
  }
  *out = cached;
  return TRUE;
}
