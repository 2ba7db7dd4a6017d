/* config.c — models/NAME.ini and hw_profiles/NAME.ini into PtsimModel and
 * PtsimHardware, and the model invariants.  The layout's checks are in
 * job_validate.c.
 *
 * What it is: the shell's reader and validator (GLib: GKeyFile, GError).
 * Every failure is ONE line in PTSIM_CONFIG_ERROR naming the file and line
 * (lines found by scanning the text, since GKeyFile does not report them
 * for keys) or the layout flag, the offending value, and what is allowed.
 * Files are strict: unknown groups and keys are errors (typos must not pass
 * silently), numbers are parsed in full by hand ("12abc" and "1e999" are
 * refused), booleans are exactly true|false.
 *
 * What it is not: the Megatron-LM command-line reader (megatron_args.c),
 * the command line (main.c), or any modelling.
 *
 * Units: .ini keys carry their unit in the name (_gib, _tflops, _gbps with
 * GB = 1e9 B, _us); the structs are SI (bytes, FLOP/s, bytes/s, seconds). */
#include "config.h"
#include "hf_config.h"
#include "units.h"
#include "config_int.h"
#include "data_dir.h"
#include "edit_distance.h"
#include "hybrid_pattern.h"
#include "moe_layers.h"

#include <stdlib.h>
#include <string.h>

#include "ini_text.h"
#include "input.h"
#include "numbers.h"

/* The domain name keeps its dashes (clang-format 14 would space them). */
/* clang-format off */
G_DEFINE_QUARK(ptsim-config-error-quark, ptsim_config_error)

gboolean ptsim_config_fail(GError **error, PtsimConfigError code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *what = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error_literal(error, PTSIM_CONFIG_ERROR, (gint)code, what);
  return FALSE;
}
/* clang-format on */

#define INT_VALUE_MAX PTSIM_CONFIG_INT_MAX

/* ---- data dir and lookup ---- */

const char *ptsim_config_data_dir(void) {
  const char *env = g_getenv("PTSIM_DATA_DIR");
  if (env != NULL && env[0] != '\0') return env;
  const char *installed = ptsim_data_dir_installed();
  return installed ? installed : PTSIM_SOURCE_DIR;
}

/* g_ptr_array_sort hands over pointers to the elements. */
static gint compare_names(gconstpointer a, gconstpointer b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorted, comma-separated names of the .ini files in DIR ("none" if none). */
static char *list_available(const char *dir) {
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
  if (d != NULL) {
    const char *entry;
    while ((entry = g_dir_read_name(d)) != NULL) {
      if (g_str_has_suffix(entry, ".ini"))
        g_ptr_array_add(names, g_strndup(entry, strlen(entry) - 4));
    }
  }
  if (names->len == 0) return g_strdup("none");
  g_ptr_array_sort(names, compare_names);
  g_ptr_array_add(names, NULL);
  return g_strjoinv(", ", (char **)names->pdata);
}

/* Resolves NAME_OR_FILE in SUBDIR; returns the path (transfer full) or NULL
 * with PTSIM_CONFIG_ERROR_NOT_FOUND. */
static char *resolve(const char *name_or_file, const char *subdir, const char *what,
                     GError **error) {
  if (name_or_file == NULL || name_or_file[0] == '\0') {
    g_autofree char *dir = g_build_filename(ptsim_config_data_dir(), subdir, NULL);
    g_autofree char *names = list_available(dir);
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_NOT_FOUND,
                "no %s given; available in %s: %s", what, dir, names);
    return NULL;
  }
  gboolean is_path = strchr(name_or_file, '/') != NULL || g_str_has_suffix(name_or_file, ".ini");
  if (is_path) /* read by ini_open, which names a missing file or a folder */
    return g_strdup(name_or_file);
  g_autofree char *file = g_strconcat(name_or_file, ".ini", NULL);
  g_autofree char *dir = g_build_filename(ptsim_config_data_dir(), subdir, NULL);
  char *path = g_build_filename(dir, file, NULL);
  if (!g_file_test(path, G_FILE_TEST_IS_REGULAR)) {
    g_autofree char *names = list_available(dir);
    if (g_file_test(name_or_file, G_FILE_TEST_IS_DIR))
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_NOT_FOUND,
                  "%s '%s' is a directory here and no name in %s; give an .ini "
                  "file or one of: %s",
                  what, name_or_file, dir, names);
    else
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_NOT_FOUND,
                  "unknown %s '%s' (no %s); available: %s", what, name_or_file, path, names);
    g_free(path);
    return NULL;
  }
  return path;
}

/* ---- reading one .ini ---- */

typedef PtsimIniFile IniFile;

void ptsim_ini_file_clear(IniFile *ini) {
  g_clear_pointer(&ini->contents, g_free);
  g_clear_pointer(&ini->kf, g_key_file_unref);
}

gboolean ptsim_ini_parse(IniFile *ini, char *contents, gsize len, GError **error) {
  g_autoptr(GError) local = NULL;
  ini->contents = contents;
  ini->kf = g_key_file_new();
  if (!ptsim_ini_text_check(ini->path, contents, len, error)) return FALSE;
  if (!g_key_file_load_from_data(ini->kf, ini->contents, len, G_KEY_FILE_NONE, &local)) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE, "%s: %s", ini->path,
                local->message);
    return FALSE;
  }
  return TRUE;
}

static gboolean ini_open(IniFile *ini, const char *path, const char *what, GError **error) {
  gsize len = 0;
  char *contents = NULL;
  g_autoptr(GError) local = NULL;
  ini->path = path;
  if (!ptsim_input_read(path, what, PTSIM_INPUT_MAX_TEXT, &contents, &len, &local)) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_NOT_FOUND, "%s", local->message);
    return FALSE;
  }
  return ptsim_ini_parse(ini, contents, len, error);
}

static gboolean ini_open_data(IniFile *ini, const char *data, gsize len, const char *label,
                              GError **error) {
  ini->path = label;
  ini->no_lines = TRUE;
  return ptsim_ini_parse(ini, g_strndup(data, len), len, error);
}

/* 1-based line of "[group]" (KEY == NULL) or of "key =" inside [group]
 * (the last one, which is the one GKeyFile keeps); 0 if not found. */
static int ini_line(const IniFile *ini, const char *group, const char *key) {
  int line_no = 0, found = 0;
  gboolean in_group = FALSE;
  size_t key_len = key ? strlen(key) : 0;
  const char *p = ini->contents;
  while (p != NULL && *p != '\0') {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    line_no++;
    const char *s = p;
    while (s < p + len && g_ascii_isspace(*s)) s++;
    if (s < p + len && *s == '[') {
      const char *close = memchr(s, ']', (size_t)(p + len - s));
      in_group = close != NULL && (size_t)(close - s - 1) == strlen(group) &&
                 strncmp(s + 1, group, strlen(group)) == 0;
      if (in_group && key == NULL) return line_no;
    } else if (in_group && key != NULL && (size_t)(p + len - s) > key_len &&
               strncmp(s, key, key_len) == 0) {
      const char *t = s + key_len;
      while (t < p + len && (*t == ' ' || *t == '\t')) t++;
      if (t < p + len && *t == '=') found = line_no;
    }
    p = nl ? nl + 1 : NULL;
  }
  return found;
}

/* "path:line" or "path" when the line is unknown.  (transfer full) */
char *ptsim_ini_where(const IniFile *ini, const char *group, const char *key) {
  if (ini->no_lines) return g_strdup(ini->path);
  int line = ini_line(ini, group, key);
  if (line > 0) return g_strdup_printf("%s:%d", ini->path, line);
  return g_strdup(ini->path);
}

static gboolean fail_value(const IniFile *ini, const char *group, const char *key,
                           const char *value, const char *allowed, GError **error) {
  g_autofree char *where = ptsim_ini_where(ini, group, key);
  g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
              "%s: [%s] %s = '%s' is not allowed: expected %s", where, group, key, value, allowed);
  return FALSE;
}

/* The groups a file may have; KEYS NULL means free-form (any key). */
typedef struct {
  const char *group;
  const char *const *keys;
  gboolean required;
} GroupSpec;

/* Every group in the file is known, every key in a known group is known,
 * and every required group is present. */
static gboolean ini_check_layout(const IniFile *ini, const GroupSpec *specs, size_t n_specs,
                                 GError **error) {
  gsize n_groups = 0;
  g_auto(GStrv) groups = g_key_file_get_groups(ini->kf, &n_groups);
  for (gsize g = 0; g < n_groups; g++) {
    const GroupSpec *spec = NULL;
    for (size_t s = 0; s < n_specs; s++)
      if (strcmp(groups[g], specs[s].group) == 0) spec = &specs[s];
    if (spec == NULL) {
      g_autoptr(GString) allowed = g_string_new(NULL);
      for (size_t s = 0; s < n_specs; s++)
        g_string_append_printf(allowed, "%s[%s]", s ? ", " : "", specs[s].group);
      g_autofree char *where = ptsim_ini_where(ini, groups[g], NULL);
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                  "%s: unknown group [%s]; allowed groups: %s", where, groups[g], allowed->str);
      return FALSE;
    }
    if (spec->keys == NULL) continue;
    g_autoptr(GError) local = NULL;
    gsize n_keys = 0;
    g_auto(GStrv) keys = g_key_file_get_keys(ini->kf, groups[g], &n_keys, &local);
    if (keys == NULL) {
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE, "%s: [%s]: %s", ini->path,
                  groups[g], local->message);
      return FALSE;
    }
    for (gsize k = 0; k < n_keys; k++) {
      gboolean known = FALSE;
      const char *closest = NULL;
      size_t closest_d = (size_t)-1;
      for (const char *const *kn = spec->keys; *kn != NULL; kn++) {
        if (strcmp(keys[k], *kn) == 0) known = TRUE;
        size_t d = ptsim_edit_distance(keys[k], *kn, FALSE);
        if (d < closest_d) {
          closest_d = d;
          closest = *kn;
        }
      }
      if (known) continue;
      g_autoptr(GString) allowed = g_string_new(NULL);
      for (const char *const *kn = spec->keys; *kn != NULL; kn++)
        g_string_append_printf(allowed, "%s%s", allowed->len ? ", " : "", *kn);
      g_autofree char *where = ptsim_ini_where(ini, groups[g], keys[k]);
      g_autofree char *hint = closest != NULL && closest_d <= 3
                                  ? g_strdup_printf(" (did you mean %s?)", closest)
                                  : g_strdup("");
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                  "%s: unknown key '%s' in [%s]%s; known keys: %s", where, keys[k], groups[g], hint,
                  allowed->str);
      return FALSE;
    }
  }
  for (size_t s = 0; s < n_specs; s++) {
    if (specs[s].required && !g_key_file_has_group(ini->kf, specs[s].group)) {
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE, "%s: missing group [%s]",
                  ini->path, specs[s].group);
      return FALSE;
    }
  }
  return TRUE;
}

/* The raw, stripped value of a key; NULL (and *present FALSE) when absent.
 * A missing key is an error only when REQUIRED.  (transfer full) */
static char *ini_value(const IniFile *ini, const char *group, const char *key, const char *allowed,
                       gboolean required, gboolean *present, GError **error) {
  g_autoptr(GError) local = NULL;
  *present = FALSE;
  gboolean has = g_key_file_has_key(ini->kf, group, key, &local);
  if (local != NULL) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE, "%s: [%s] %s: %s", ini->path,
                group, key, local->message);
    return NULL;
  }
  if (!has) {
    if (required) {
      g_autofree char *where = ptsim_ini_where(ini, group, NULL);
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                  "%s: [%s] is missing key %s (%s)", where, group, key, allowed);
    }
    return NULL;
  }
  char *value = g_key_file_get_value(ini->kf, group, key, &local);
  if (value == NULL) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE, "%s: [%s] %s: %s", ini->path,
                group, key, local->message);
    return NULL;
  }
  *present = TRUE;
  return g_strstrip(value);
}

/* Integer in [lo, hi].  Absent and not required: *out unchanged, TRUE. */
gboolean ptsim_ini_int(const IniFile *ini, const char *group, const char *key, int64_t lo,
                       int64_t hi, gboolean required, int64_t *out, GError **error) {
  g_autofree char *allowed = ptsim_number_int64_allowed(lo, hi);
  gboolean present = FALSE;
  g_autoptr(GError) local = NULL;
  g_autofree char *value = ini_value(ini, group, key, allowed, required, &present, &local);
  if (local != NULL) {
    g_propagate_error(error, g_steal_pointer(&local));
    return FALSE;
  }
  if (!present) return TRUE;
  int64_t v = 0;
  if (!ptsim_number_parse_int64(value, &v) || v < lo || v > hi)
    return fail_value(ini, group, key, value, allowed, error);
  *out = v;
  return TRUE;
}

/* Finite number in RANGE.  Absent and not required: *out unchanged, TRUE. */
gboolean ptsim_ini_double(const IniFile *ini, const char *group, const char *key, PtsimRange range,
                          gboolean required, gboolean *present_out, double *out, GError **error) {
  g_autofree char *allowed = ptsim_number_range_allowed(range);
  gboolean present = FALSE;
  g_autoptr(GError) local = NULL;
  g_autofree char *value = ini_value(ini, group, key, allowed, required, &present, &local);
  if (local != NULL) {
    g_propagate_error(error, g_steal_pointer(&local));
    return FALSE;
  }
  if (present_out != NULL) *present_out = present;
  if (!present) return TRUE;
  double v = 0;
  if (!ptsim_number_parse_double(value, &v) || !(range.lo_closed ? v >= range.lo : v > range.lo) ||
      !(range.hi_closed ? v <= range.hi : v < range.hi))
    return fail_value(ini, group, key, value, allowed, error);
  *out = v;
  return TRUE;
}

gboolean ptsim_ini_bool(const IniFile *ini, const char *group, const char *key, int *out,
                        GError **error) {
  gboolean present = FALSE;
  g_autoptr(GError) local = NULL;
  g_autofree char *value = ini_value(ini, group, key, "true or false", TRUE, &present, &local);
  if (local != NULL) {
    g_propagate_error(error, g_steal_pointer(&local));
    return FALSE;
  }
  if (strcmp(value, "true") == 0)
    *out = 1;
  else if (strcmp(value, "false") == 0)
    *out = 0;
  else
    return fail_value(ini, group, key, value, "true or false", error);
  return TRUE;
}

/* One of CHOICES ("a|b"), returned as its index. */
gboolean ptsim_ini_choice(const IniFile *ini, const char *group, const char *key,
                          const char *choices, int *out, GError **error) {
  gboolean present = FALSE;
  g_autoptr(GError) local = NULL;
  g_autofree char *value = ini_value(ini, group, key, choices, TRUE, &present, &local);
  if (local != NULL) {
    g_propagate_error(error, g_steal_pointer(&local));
    return FALSE;
  }
  g_auto(GStrv) list = g_strsplit(choices, "|", -1);
  for (int i = 0; list[i] != NULL; i++) {
    if (strcmp(value, list[i]) == 0) {
      *out = i;
      return TRUE;
    }
  }
  return fail_value(ini, group, key, value, choices, error);
}

/* Optional name key, else the file's basename without ".ini" (as text: a
 * file name need not be UTF-8, a name printed in JSON and figures must). */
static gboolean ini_name(const IniFile *ini, const char *group, char *out, GError **error) {
  g_autoptr(GError) local = NULL;
  g_autofree char *name = NULL;
  gboolean has_name = g_key_file_has_key(ini->kf, group, "name", &local);
  if (local != NULL) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE, "%s: [%s] name: %s", ini->path,
                group, local->message);
    return FALSE;
  }
  if (has_name) {
    name = g_key_file_get_string(ini->kf, group, "name", &local);
    if (name == NULL) {
      g_autofree char *where = ptsim_ini_where(ini, group, "name");
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE, "%s: [%s] name: %s", where,
                  group, local->message);
      return FALSE;
    }
    g_strstrip(name);
  } else {
    g_autofree char *base = g_filename_display_basename(ini->path);
    if (g_str_has_suffix(base, ".ini")) base[strlen(base) - 4] = '\0';
    name = g_steal_pointer(&base);
  }
  if (name[0] == '\0' || strlen(name) >= PTSIM_NAME_MAX) {
    g_autofree char *allowed = g_strdup_printf("a name of 1 to %d characters", PTSIM_NAME_MAX - 1);
    return fail_value(ini, group, "name", name, allowed, error);
  }
  g_strlcpy(out, name, PTSIM_NAME_MAX);
  return TRUE;
}

/* ---- models ---- */

gboolean ptsim_model_check(const PtsimModel *m, GError **error) {
  g_return_val_if_fail(m != NULL, FALSE);
  const struct {
    const char *key;
    int64_t value;
  } sizes[] = {
      {"num_layers", m->num_layers},
      {"hidden_size", m->hidden_size},
      {"ffn_hidden_size", m->ffn_hidden_size},
      {"num_attention_heads", m->num_attention_heads},
      {"num_query_groups", m->num_query_groups},
      {"vocab_size", m->vocab_size},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
    if (sizes[i].value < 1 || sizes[i].value > INT_VALUE_MAX) {
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                  "model %s: %s %" G_GINT64_FORMAT
                  " is out of range: expected 1 to %" G_GINT64_FORMAT,
                  m->name, sizes[i].key, (gint64)sizes[i].value, (gint64)INT_VALUE_MAX);
      return FALSE;
    }
  }
  /* the head dimension is h / heads unless kv_channels gives it */
  if (m->kv_channels < 0 || m->kv_channels > INT_VALUE_MAX ||
      (m->kv_channels == 0 && !m->multi_latent_attention &&
       m->hidden_size % m->num_attention_heads != 0)) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                "model %s: hidden_size %" G_GINT64_FORMAT
                " is not divisible by num_attention_heads %" G_GINT64_FORMAT
                " and no kv_channels (head dimension) is given",
                m->name, (gint64)m->hidden_size, (gint64)m->num_attention_heads);
    return FALSE;
  }
  if (m->num_attention_heads % m->num_query_groups != 0) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                "model %s: num_query_groups %" G_GINT64_FORMAT
                " does not divide num_attention_heads %" G_GINT64_FORMAT,
                m->name, (gint64)m->num_query_groups, (gint64)m->num_attention_heads);
    return FALSE;
  }
  if ((unsigned)m->activation > PTSIM_ACTIVATION_RELU2 ||
      (unsigned)m->softmax_type > PTSIM_SOFTMAX_LEARNABLE ||
      (m->norm != PTSIM_NORM_RMSNORM && m->norm != PTSIM_NORM_LAYERNORM) ||
      (m->tied_embeddings != 0 && m->tied_embeddings != 1) || (m->bias != 0 && m->bias != 1) ||
      (m->qk_layernorm != 0 && m->qk_layernorm != 1) ||
      (unsigned)m->position_embedding > PTSIM_POSITION_NONE || m->max_position_embeddings < 0 ||
      m->max_position_embeddings > INT_VALUE_MAX) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                "model %s: activation/norm/tied_embeddings/bias out of range", m->name);
    return FALSE;
  }
  return ptsim_moe_model_check(m, error) && ptsim_hybrid_model_check(m, error);
}

static const char *const model_keys[] = {"name",
                                         "num_layers",
                                         "hidden_size",
                                         "ffn_hidden_size",
                                         "num_attention_heads",
                                         "num_query_groups",
                                         "vocab_size",
                                         "activation",
                                         "norm",
                                         "tied_embeddings",
                                         "bias",
                                         "kv_channels",
                                         "qk_layernorm",
                                         "num_experts",
                                         "moe_router_topk",
                                         "moe_ffn_hidden_size",
                                         "moe_shared_expert_intermediate_size",
                                         "moe_shared_expert_gate",
                                         "moe_layer_freq",
                                         "moe_router_score_function",
                                         "moe_router_load_balancing_type",
                                         "moe_aux_loss_coeff",
                                         "moe_router_enable_expert_bias",
                                         "moe_router_num_groups",
                                         "moe_router_group_topk",
                                         "multi_latent_attention",
                                         "q_lora_rank",
                                         "kv_lora_rank",
                                         "qk_head_dim",
                                         "qk_pos_emb_head_dim",
                                         "v_head_dim",
                                         "mtp_num_layers",
                                         "window_size",
                                         "window_layers",
                                         "softmax_type",
                                         "hybrid_override_pattern",
                                         "mamba_state_dim",
                                         "mamba_head_dim",
                                         "mamba_num_groups",
                                         "mamba_num_heads",
                                         NULL};

static gboolean model_from_ini(const IniFile *ini, PtsimModel *out, GError **error);

gboolean ptsim_model_load(const char *name_or_file, PtsimModel *out, GError **error) {
  g_return_val_if_fail(out != NULL, FALSE);
  g_return_val_if_fail(error == NULL || *error == NULL, FALSE);
  if (name_or_file && g_str_has_prefix(name_or_file, "hf:")) /* a Hugging Face config.json */
    return ptsim_hf_config_load(name_or_file + 3, out, NULL, error);
  g_autofree char *path = resolve(name_or_file, "models", "model", error);
  if (path == NULL) return FALSE;
  g_auto(PtsimIniFile) ini = {0};
  return ini_open(&ini, path, "model file", error) && model_from_ini(&ini, out, error);
}

gboolean ptsim_model_load_data(const char *data, gsize len, const char *label, PtsimModel *out,
                               GError **error) {
  g_return_val_if_fail(data != NULL && label != NULL && out != NULL, FALSE);
  g_auto(PtsimIniFile) ini = {0};
  return ini_open_data(&ini, data, len, label, error) && model_from_ini(&ini, out, error);
}

/* window_size (tokens before each query) and window_layers (how many
 * layers have it; default all of them). */
static gboolean window_from_ini(const IniFile *ini, PtsimModel *m, GError **error) {
  const char *g = "model";
  if (!ptsim_ini_int(ini, g, "window_size", 1, INT_VALUE_MAX, FALSE, &m->window_size, error) ||
      !ptsim_ini_int(ini, g, "window_layers", 0, m->num_layers, FALSE, &m->window_layers, error))
    return FALSE;
  gboolean layers_given = g_key_file_has_key(ini->kf, g, "window_layers", NULL);
  if (layers_given && m->window_size == 0) {
    g_autofree char *where = ptsim_ini_where(ini, g, "window_layers");
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                "%s: [model] window_layers without window_size: give the window's width in "
                "tokens too",
                where);
    return FALSE;
  }
  if (m->window_size > 0 && !layers_given) m->window_layers = m->num_layers;
  return TRUE;
}

/* The model of a parsed file, checked. */
static gboolean model_from_ini(const IniFile *ini, PtsimModel *out, GError **error) {
  const char *path = ini->path;
  const GroupSpec specs[] = {{"model", model_keys, TRUE}, {"source", NULL, FALSE}};
  if (!ini_check_layout(ini, specs, G_N_ELEMENTS(specs), error)) return FALSE;

  PtsimModel m;
  memset(&m, 0, sizeof m);
  const char *g = "model";
  int activation = 0, norm = 0;
  if (!ini_name(ini, g, m.name, error) ||
      !ptsim_ini_int(ini, g, "num_layers", 1, INT_VALUE_MAX, TRUE, &m.num_layers, error) ||
      !ptsim_ini_int(ini, g, "hidden_size", 1, INT_VALUE_MAX, TRUE, &m.hidden_size, error) ||
      !ptsim_ini_int(ini, g, "ffn_hidden_size", 1, INT_VALUE_MAX, TRUE, &m.ffn_hidden_size,
                     error) ||
      !ptsim_ini_int(ini, g, "num_attention_heads", 1, INT_VALUE_MAX, TRUE, &m.num_attention_heads,
                     error) ||
      !ptsim_ini_int(ini, g, "num_query_groups", 1, INT_VALUE_MAX, TRUE, &m.num_query_groups,
                     error) ||
      !ptsim_ini_int(ini, g, "vocab_size", 1, INT_VALUE_MAX, TRUE, &m.vocab_size, error) ||
      !ptsim_ini_choice(ini, g, "activation", "swiglu|gelu|relu2", &activation, error) ||
      !ptsim_ini_choice(ini, g, "norm", "rmsnorm|layernorm", &norm, error) ||
      !ptsim_ini_bool(ini, g, "tied_embeddings", &m.tied_embeddings, error) ||
      !ptsim_ini_bool(ini, g, "bias", &m.bias, error))
    return FALSE;
  m.activation = (PtsimActivation)activation; /* the order of the choices */
  m.norm = norm == 0 ? PTSIM_NORM_RMSNORM : PTSIM_NORM_LAYERNORM;
  if (g_key_file_has_key(ini->kf, g, "softmax_type", NULL)) {
    int softmax = 0;
    if (!ptsim_ini_choice(ini, g, "softmax_type", "vanilla|off-by-one|learnable", &softmax, error))
      return FALSE;
    m.softmax_type = (PtsimSoftmaxType)softmax;
  }
  if (!ptsim_moe_model_load(ini, &m, error) || !window_from_ini(ini, &m, error) ||
      !ptsim_hybrid_model_load(ini, &m, error))
    return FALSE;

  /* Cross-key rules, reported at the line of the key that breaks them. */
  if (m.kv_channels == 0 && !m.multi_latent_attention &&
      m.hidden_size % m.num_attention_heads != 0) {
    g_autofree char *where = ptsim_ini_where(ini, g, "hidden_size");
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                "%s: [model] hidden_size = %" G_GINT64_FORMAT
                " is not divisible by num_attention_heads = %" G_GINT64_FORMAT
                "; expected a multiple of the head count (or a kv_channels key)",
                where, (gint64)m.hidden_size, (gint64)m.num_attention_heads);
    return FALSE;
  }
  if (m.num_attention_heads % m.num_query_groups != 0) {
    g_autofree char *where = ptsim_ini_where(ini, g, "num_query_groups");
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                "%s: [model] num_query_groups = %" G_GINT64_FORMAT
                " does not divide num_attention_heads = %" G_GINT64_FORMAT
                "; expected a divisor (= heads for MHA, 1 for MQA)",
                where, (gint64)m.num_query_groups, (gint64)m.num_attention_heads);
    return FALSE;
  }
  g_autoptr(GError) local = NULL;
  if (!ptsim_model_check(&m, &local)) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE, "%s: %s", path,
                local->message);
    return FALSE;
  }
  *out = m;
  return TRUE;
}

/* ---- hardware profiles ---- */

/* Physical ranges.  Wide enough for any accelerator built or announced
 * (an A100 has 312 bf16 TFLOP/s, a B200 2250; HBM 1.5-8 TB/s; NICs 12.5-100
 * GB/s), narrow enough that a typo by a factor of 1e3 or a denormal such
 * as 1e-300 is refused instead of turning into an MFU of 1e302 %.
 * Latencies and launch costs may be 0 (an idealised machine). */
static const PtsimRange RANGE_MEMORY_BYTES = {1048576.0, 1125899906842624.0, TRUE, TRUE};
static const PtsimRange RANGE_MEMORY_GIB = {0.001, 1048576.0, TRUE, TRUE};
static const PtsimRange RANGE_TFLOPS = {0.01, 1e6, TRUE, TRUE};
static const PtsimRange RANGE_TFLOPS_OR_NONE = {0.0, 1e6, TRUE, TRUE}; /* 0: none */
static const PtsimRange RANGE_GBPS = {0.01, 1e6, TRUE, TRUE};
static const PtsimRange RANGE_LATENCY_US = {0.0, 1e6, TRUE, TRUE};
static const PtsimRange RANGE_FRACTION = {0.0, 1.0, FALSE, TRUE};
static const PtsimRange RANGE_HALF_GFLOPS = {1e-6, 1e9, TRUE, TRUE};
/* a host 100x slower or faster per op than a DGX H100's is no training host */
static const PtsimRange RANGE_HOST_SCALE = {0.01, 100.0, TRUE, TRUE};
#define GPUS_PER_NODE_MAX 4096
/* SMs: an A10 has 72, a B200 148, a GB202 192; a tile edge: cuBLAS and
 * CUTLASS tiles run from 8 to 256 elements (512 across a 2-SM pair). */
#define SM_COUNT_MAX 1024
#define GEMM_TILE_MIN 8
#define GEMM_TILE_MAX 1024

static const char *const gpu_keys[] = {"name",
                                       "memory_bytes",
                                       "memory_gib",
                                       "peak_bf16_tflops",
                                       "peak_fp8_tflops",
                                       "peak_fp32_tflops",
                                       "hbm_gbps",
                                       "sm_count",
                                       "peak_fp4_tflops",
                                       "mxfp8",
                                       NULL};
static const char *const node_keys[] = {"gpus_per_node",
                                        "gpus_per_nvlink_domain",
                                        "nvlink_gbps",
                                        "nvlink_latency_us",
                                        "nvls",
                                        "host_cpu_scale",
                                        "host_framework_scale",
                                        "host_link_gbps",
                                        NULL};
static const char *const fabric_keys[] = {"nic_gbps", "net_latency_us", NULL};
static const char *const efficiency_keys[] = {"gemm_efficiency_max",  "gemm_half_gflops",
                                              "gemm_tile_m",          "gemm_tile_n",
                                              "attention_efficiency", "memory_efficiency",
                                              "kernel_launch_us",     NULL};

static const char *const kernel_keys[] = {"gpu", "kinds", "transfer", "transfer_compute_scale",
                                          NULL};

static gboolean hardware_from_ini(const IniFile *ini, PtsimHardware *out, GError **error);

gboolean ptsim_hardware_load(const char *name_or_file, PtsimHardware *out, GError **error) {
  g_return_val_if_fail(out != NULL, FALSE);
  g_return_val_if_fail(error == NULL || *error == NULL, FALSE);
  g_autofree char *path = resolve(name_or_file, "hw_profiles", "hardware profile", error);
  if (path == NULL) return FALSE;
  g_auto(PtsimIniFile) ini = {0};
  return ini_open(&ini, path, "hardware profile", error) && hardware_from_ini(&ini, out, error);
}

gboolean ptsim_hardware_load_data(const char *data, gsize len, const char *label,
                                  PtsimHardware *out, GError **error) {
  g_return_val_if_fail(data != NULL && label != NULL && out != NULL, FALSE);
  g_auto(PtsimIniFile) ini = {0};
  return ini_open_data(&ini, data, len, label, error) && hardware_from_ini(&ini, out, error);
}

/* The profile of a parsed file, checked against the physical ranges. */
static gboolean hardware_from_ini(const IniFile *ini, PtsimHardware *out, GError **error) {
  const GroupSpec specs[] = {{"gpu", gpu_keys, TRUE},         {"node", node_keys, TRUE},
                             {"fabric", fabric_keys, TRUE},   {"efficiency", efficiency_keys, TRUE},
                             {"kernels", kernel_keys, FALSE}, {"source", NULL, FALSE}};
  if (!ini_check_layout(ini, specs, G_N_ELEMENTS(specs), error)) return FALSE;

  PtsimHardware hw;
  memset(&hw, 0, sizeof hw);
  double mem_bytes = 0, mem_gib = 0, bf16 = 0, fp8 = 0, fp32 = 0, hbm = 0;
  gboolean has_bytes = FALSE, has_gib = FALSE;
  if (!ini_name(ini, "gpu", hw.name, error) ||
      !ptsim_ini_double(ini, "gpu", "memory_bytes", RANGE_MEMORY_BYTES, FALSE, &has_bytes,
                        &mem_bytes, error) ||
      !ptsim_ini_double(ini, "gpu", "memory_gib", RANGE_MEMORY_GIB, FALSE, &has_gib, &mem_gib,
                        error))
    return FALSE;
  if (has_bytes == has_gib) {
    g_autofree char *where = ptsim_ini_where(ini, "gpu", has_gib ? "memory_gib" : NULL);
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                "%s: [gpu] needs exactly one of memory_bytes or memory_gib "
                "(a number > 0), found %s",
                where, has_bytes ? "both" : "neither");
    return FALSE;
  }
  hw.memory_bytes = has_bytes ? mem_bytes : mem_gib * PTSIM_GIB_BYTES;
  if (!ptsim_ini_double(ini, "gpu", "peak_bf16_tflops", RANGE_TFLOPS, TRUE, NULL, &bf16, error) ||
      !ptsim_ini_double(ini, "gpu", "peak_fp8_tflops", RANGE_TFLOPS_OR_NONE, TRUE, NULL, &fp8,
                        error) ||
      !ptsim_ini_double(ini, "gpu", "peak_fp32_tflops", RANGE_TFLOPS, TRUE, NULL, &fp32, error) ||
      !ptsim_ini_double(ini, "gpu", "hbm_gbps", RANGE_GBPS, TRUE, NULL, &hbm, error) ||
      !ptsim_ini_int(ini, "gpu", "sm_count", 1, SM_COUNT_MAX, TRUE, &hw.sm_count, error))
    return FALSE;
  hw.peak_bf16_flops = bf16 * PTSIM_FLOPS_PER_TFLOPS;
  hw.peak_fp8_flops = fp8 * PTSIM_FLOPS_PER_TFLOPS;
  hw.peak_fp32_flops = fp32 * PTSIM_FLOPS_PER_TFLOPS;
  hw.hbm_bytes_per_s = hbm * 1e9;
  /* Optional Blackwell capabilities: NVFP4 and MXFP8 tensor cores (absent:
   * none, and --fp4-format / --fp8-recipe mxfp8 are refused) */
  double fp4 = 0;
  if (!ptsim_ini_double(ini, "gpu", "peak_fp4_tflops", RANGE_TFLOPS_OR_NONE, FALSE, NULL, &fp4,
                        error))
    return FALSE;
  hw.peak_fp4_flops = fp4 * PTSIM_FLOPS_PER_TFLOPS;
  hw.mxfp8 = 0;
  if (g_key_file_has_key(ini->kf, "gpu", "mxfp8", NULL) &&
      !ptsim_ini_bool(ini, "gpu", "mxfp8", &hw.mxfp8, error))
    return FALSE;

  double nvlink = 0, nvlink_lat = 0, nic = 0, net_lat = 0;
  if (!ptsim_ini_int(ini, "node", "gpus_per_node", 1, GPUS_PER_NODE_MAX, TRUE, &hw.gpus_per_node,
                     error) ||
      !ptsim_ini_double(ini, "node", "nvlink_gbps", RANGE_GBPS, TRUE, NULL, &nvlink, error) ||
      !ptsim_ini_double(ini, "node", "nvlink_latency_us", RANGE_LATENCY_US, TRUE, NULL, &nvlink_lat,
                        error) ||
      !ptsim_ini_bool(ini, "node", "nvls", &hw.nvls, error) ||
      !ptsim_ini_double(ini, "fabric", "nic_gbps", RANGE_GBPS, TRUE, NULL, &nic, error) ||
      !ptsim_ini_double(ini, "fabric", "net_latency_us", RANGE_LATENCY_US, TRUE, NULL, &net_lat,
                        error))
    return FALSE;
  /* Optional: an NVLink domain larger than a host (GB200 NVL72) is whole
   * hosts; absent, it is the host. */
  hw.gpus_per_nvlink_domain = hw.gpus_per_node;
  if (!ptsim_ini_int(ini, "node", "gpus_per_nvlink_domain", 1, GPUS_PER_NODE_MAX, FALSE,
                     &hw.gpus_per_nvlink_domain, error))
    return FALSE;
  if (hw.gpus_per_nvlink_domain % hw.gpus_per_node != 0) {
    g_autofree char *where = ptsim_ini_where(ini, "node", "gpus_per_nvlink_domain");
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                "%s: [node] gpus_per_nvlink_domain = %" G_GINT64_FORMAT
                " is not a multiple of gpus_per_node = %" G_GINT64_FORMAT
                "; expected whole hosts (the host itself or several hosts)",
                where, (gint64)hw.gpus_per_nvlink_domain, (gint64)hw.gpus_per_node);
    return FALSE;
  }
  /* Optional: the host CPU's per-op time against host_overhead.ini's x86
   * host; absent, that host's. */
  hw.host_cpu_scale = 1.0;
  if (!ptsim_ini_double(ini, "node", "host_cpu_scale", RANGE_HOST_SCALE, FALSE, NULL,
                        &hw.host_cpu_scale, error))
    return FALSE;
  hw.host_framework_scale = 1.0;
  if (!ptsim_ini_double(ini, "node", "host_framework_scale", RANGE_HOST_SCALE, FALSE, NULL,
                        &hw.host_framework_scale, error))
    return FALSE;
  /* Optional: the GPU's host link, what offloaded activations cross (0:
   * not known; offloading is refused on the profile) */
  double host_link = 0;
  if (!ptsim_ini_double(ini, "node", "host_link_gbps", RANGE_GBPS, FALSE, NULL, &host_link, error))
    return FALSE;
  hw.host_link_bytes_per_s = host_link * 1e9;
  hw.nvlink_bytes_per_s = nvlink * 1e9;
  hw.nvlink_latency_s = nvlink_lat * 1e-6;
  hw.nic_bytes_per_s = nic * 1e9;
  hw.net_latency_s = net_lat * 1e-6;

  double half_gflops = 0, launch_us = 0;
  const char *e = "efficiency";
  if (!ptsim_ini_double(ini, e, "gemm_efficiency_max", RANGE_FRACTION, TRUE, NULL,
                        &hw.gemm_efficiency_max, error) ||
      !ptsim_ini_double(ini, e, "gemm_half_gflops", RANGE_HALF_GFLOPS, TRUE, NULL, &half_gflops,
                        error) ||
      !ptsim_ini_int(ini, e, "gemm_tile_m", GEMM_TILE_MIN, GEMM_TILE_MAX, TRUE, &hw.gemm_tile_m,
                     error) ||
      !ptsim_ini_int(ini, e, "gemm_tile_n", GEMM_TILE_MIN, GEMM_TILE_MAX, TRUE, &hw.gemm_tile_n,
                     error) ||
      !ptsim_ini_double(ini, e, "attention_efficiency", RANGE_FRACTION, TRUE, NULL,
                        &hw.attention_efficiency, error) ||
      !ptsim_ini_double(ini, e, "memory_efficiency", RANGE_FRACTION, TRUE, NULL,
                        &hw.memory_efficiency, error) ||
      !ptsim_ini_double(ini, e, "kernel_launch_us", RANGE_LATENCY_US, TRUE, NULL, &launch_us,
                        error))
    return FALSE;
  hw.gemm_half_flops = half_gflops * 1e9;
  hw.kernel_launch_s = launch_us * 1e-6;
  if (!ptsim_hardware_kernels_load(ini, &hw, error)) return FALSE;
  *out = hw;
  return TRUE;
}
