/* torchtitan_python.c — a launch of torchtitan's Python configuration form
 * as the job-config TOML it stands for; see torchtitan_python.h.
 *
 * Order: the command's words (module, config, overrides, world size), the
 * function's fields from the data file (its base first), the overrides on
 * top, then one translation into the TOML form's words (the only place
 * that knows how current torchtitan renamed a field). */
#include "torchtitan_python.h"

#include <string.h>

#include "config.h"
#include "edit_distance.h"
#include "input.h"
#include "shell_script.h"
#include "torchtitan_schema.h"

/* The commit the field table and the data file were read at. */
#define COMMIT "b5bcd76"

typedef enum {
  R_SAME,    /* the TOML form's field of the same name */
  R_RENAME,  /* the TOML form's TO_TABLE.TO_KEY */
  R_BATCH,   /* token counts: translated with the others (batch()) */
  R_DROP,    /* no effect on step time or memory */
  R_REMOVED, /* a TOML-form field current torchtitan does not have; TO_KEY: where it went */
  R_DATA     /* set by the function (model_spec, the AC class): not a command-line option */
} Role;

/* Trainer.Config's fields where the TOML form's differ (config/configs.py,
 * trainer.py, distributed/activation_checkpoint.py at b5bcd76); every other
 * field of the TOML schema keeps its name. */
static const struct {
  const char *table, *key;
  Role role;
  PtsimTorchtitanKind kind; /* R_BATCH, R_DROP: the field's type */
  const char *to_table, *to_key;
} fields[] = {
    {"training", "num_tokens_per_microbatch_per_dp_rank", R_BATCH, PTSIM_TORCHTITAN_INT, NULL,
     NULL},
    {"training", "num_tokens_per_train_step", R_BATCH, PTSIM_TORCHTITAN_INT, NULL, NULL},
    {"training", "max_context_length", R_BATCH, PTSIM_TORCHTITAN_INT, NULL, NULL},
    {"parallelism", "num_pp_microbatches", R_BATCH, PTSIM_TORCHTITAN_INT, NULL, NULL},
    {"compile", "enable_async_tensor_parallel", R_RENAME, 0, "parallelism",
     "enable_async_tensor_parallel"},
    {"activation_checkpoint", "force_recompute_mm_shapes_by_fqns", R_RENAME, 0,
     "activation_checkpoint", "per_op_sac_force_recompute_mm_shapes_by_fqns"},
    {"profiler", "enable_profiling", R_RENAME, 0, "profiling", "enable_profiling"},
    {"profiler", "profile_freq", R_RENAME, 0, "profiling", "profile_freq"},
    {"profiler", "enable_memory_snapshot", R_RENAME, 0, "profiling", "enable_memory_snapshot"},
    {"training", "disable_cuda_graphs", R_DROP, PTSIM_TORCHTITAN_BOOL, NULL, NULL},
    {"parallelism", "spmd_backend", R_DROP, PTSIM_TORCHTITAN_STR, NULL, NULL},
    {"parallelism", "enable_fsdp_symm_mem", R_DROP, PTSIM_TORCHTITAN_BOOL, NULL, NULL},
    {"parallelism", "context_parallel_ptrr_mask_key", R_DROP, PTSIM_TORCHTITAN_STR, NULL, NULL},
    {"debug", "print_config", R_DROP, PTSIM_TORCHTITAN_BOOL, NULL, NULL},
    {"debug", "save_config_file", R_DROP, PTSIM_TORCHTITAN_STR, NULL, NULL},
    {"", "hf_assets_path", R_DROP, PTSIM_TORCHTITAN_STR, NULL, NULL},
    {"", "dump_folder", R_DROP, PTSIM_TORCHTITAN_STR, NULL, NULL},
    {"training", "local_batch_size", R_REMOVED, 0, NULL,
     "training.num_tokens_per_microbatch_per_dp_rank (tokens, not sequences)"},
    {"training", "global_batch_size", R_REMOVED, 0, NULL,
     "training.num_tokens_per_train_step (tokens, not sequences)"},
    {"training", "seq_len", R_REMOVED, 0, NULL, "training.max_context_length"},
    {"parallelism", "pipeline_parallel_microbatch_size", R_REMOVED, 0, NULL,
     "parallelism.num_pp_microbatches (microbatches per data-parallel rank)"},
    {"parallelism", "enable_async_tensor_parallel", R_REMOVED, 0, NULL,
     "compile.enable_async_tensor_parallel"},
    {"model", "name", R_DATA, 0, NULL, NULL},
    {"model", "flavor", R_DATA, 0, NULL, NULL},
    {"model", "converters", R_DATA, 0, NULL, NULL},
    {"activation_checkpoint", "mode", R_DATA, 0, NULL, NULL},
    {"activation_checkpoint", "selective_ac_option", R_DATA, 0, NULL, NULL},
};

/* Sections of the TOML form current torchtitan moved or made classes. */
static const struct {
  const char *table, *hint;
} moved[] = {
    {"job", "its fields are Trainer.Config's own (--dump_folder) or debug.*"},
    {"profiling", "renamed profiler"},
    {"validation", "renamed validator"},
    {"quantize.linear.float8", "a converter of the config's model_spec, not a command-line option"},
    {"quantize.linear.mx", "a converter of the config's model_spec, not a command-line option"},
};

typedef struct {
  char *table, *key;
  PtsimTomlValue value;
} Setting;

static void setting_free(gpointer data) {
  Setting *s = data;
  g_free(s->table);
  g_free(s->key);
  ptsim_toml_value_clear(&s->value);
  g_free(s);
}

/* TABLE.KEY = VALUE (copied), replacing an earlier one. */
static void set(GPtrArray *settings, const char *table, const char *key,
                const PtsimTomlValue *value) {
  for (guint i = 0; i < settings->len; i++) {
    Setting *s = settings->pdata[i];
    if (strcmp(s->table, table) == 0 && strcmp(s->key, key) == 0) {
      ptsim_toml_value_clear(&s->value);
      ptsim_toml_value_copy(&s->value, value);
      return;
    }
  }
  Setting *s = g_new0(Setting, 1);
  s->table = g_strdup(table);
  s->key = g_strdup(key);
  ptsim_toml_value_copy(&s->value, value);
  g_ptr_array_add(settings, s);
}

static const PtsimTomlValue *get(GPtrArray *settings, const char *table, const char *key) {
  for (guint i = 0; i < settings->len; i++) {
    const Setting *s = settings->pdata[i];
    if (strcmp(s->table, table) == 0 && strcmp(s->key, key) == 0) return &s->value;
  }
  return NULL;
}

static int field_index(const char *table, const char *key) {
  for (size_t i = 0; i < G_N_ELEMENTS(fields); i++)
    if (strcmp(fields[i].table, table) == 0 && strcmp(fields[i].key, key) == 0) return (int)i;
  return -1;
}

/* ---- messages ---- */

/* The candidate closest to WORD ("" when none is near). */
static const char *closest(const char *word, const char *const *candidates) {
  const char *best = "";
  size_t best_d = strlen(word) / 3 + 2;
  for (const char *const *c = candidates; *c; c++) {
    size_t d = ptsim_edit_distance(word, *c, FALSE);
    if (d < best_d) {
      best = *c;
      best_d = d;
    }
  }
  return best;
}

/* Every command-line option: the TOML schema's fields that kept their
 * names, and this table's.  (transfer full) */
static GPtrArray *option_names(void) {
  GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
  g_auto(GStrv) schema = ptsim_torchtitan_field_list();
  for (char **f = schema; *f; f++) {
    const char *dot = strrchr(*f, '.');
    g_autofree char *table = g_strndup(*f, (gsize)(dot - *f));
    int k = field_index(table, dot + 1);
    gboolean gone = k >= 0 && (fields[k].role == R_REMOVED || fields[k].role == R_DATA);
    for (size_t m = 0; m < G_N_ELEMENTS(moved); m++)
      gone = gone || strcmp(moved[m].table, table) == 0;
    if (!gone) g_ptr_array_add(out, g_strdup(*f));
  }
  for (size_t i = 0; i < G_N_ELEMENTS(fields); i++)
    if (fields[i].role != R_REMOVED && fields[i].role != R_DATA)
      g_ptr_array_add(out, fields[i].table[0]
                               ? g_strdup_printf("%s.%s", fields[i].table, fields[i].key)
                               : g_strdup(fields[i].key));
  g_ptr_array_add(out, NULL);
  return out;
}

/* ---- the data file ---- */

static const char *config_meta(const PtsimToml *data, const char *module, const char *config,
                               const char *key) {
  g_autofree char *table = g_strdup_printf("%s.%s", module, config);
  const PtsimTomlEntry *e = ptsim_toml_lookup(data, table, key);
  return e && e->value.type == PTSIM_TOML_STRING ? e->value.string : NULL;
}

/* "a, b, c": the modules (MODULE NULL) or MODULE's configs. */
static GPtrArray *names_in(const PtsimToml *data, const char *module) {
  GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
  for (guint i = 0; i < data->entries->len; i++) {
    const PtsimTomlEntry *e = data->entries->pdata[i];
    if (strcmp(e->key, "commit") != 0) continue;
    g_auto(GStrv) parts = g_strsplit(e->table, ".", 2);
    if (parts[0] == NULL || parts[1] == NULL) continue;
    const char *name = module ? parts[1] : parts[0];
    if (module && strcmp(parts[0], module) != 0) continue;
    gboolean seen = FALSE;
    for (guint j = 0; j < out->len && !seen; j++) seen = strcmp(out->pdata[j], name) == 0;
    if (!seen) g_ptr_array_add(out, g_strdup(name));
  }
  g_ptr_array_add(out, NULL);
  return out;
}

/* The function's fields into SETTINGS, its base's first. */
static gboolean apply_config(const PtsimToml *data, const char *label, const char *module,
                             const char *config, int depth, GPtrArray *settings, GError **error) {
  if (config_meta(data, module, config, "commit") == NULL) {
    g_autoptr(GPtrArray) known = names_in(data, module);
    g_autofree char *list = g_strjoinv(", ", (char **)known->pdata);
    const char *near = closest(config, (const char *const *)known->pdata);
    return ptsim_config_fail(
        error, PTSIM_CONFIG_ERROR_INVALID,
        "%s: --config %s: no such function in torchtitan's %s config registry as ptsim "
        "has it (%s, torchtitan %s)%s%s%s; known: %s",
        label, config, module, data->path, COMMIT, near[0] ? "; did you mean " : "", near,
        near[0] ? "?" : "", list);
  }
  const char *base = config_meta(data, module, config, "base");
  if (base && (depth > 8 || !apply_config(data, label, module, base, depth + 1, settings, error)))
    return depth > 8 ? ptsim_config_fail(error, PTSIM_CONFIG_ERROR_PARSE,
                                         "%s: base configs nest too deep", data->path)
                     : FALSE;
  g_autofree char *prefix = g_strdup_printf("%s.%s.", module, config);
  for (guint i = 0; i < data->entries->len; i++) {
    const PtsimTomlEntry *e = data->entries->pdata[i];
    if (g_str_has_prefix(e->table, prefix))
      set(settings, e->table + strlen(prefix), e->key, &e->value);
  }
  return TRUE;
}

/* ---- the command line ---- */

/* --module's forms: llama3, torchtitan.models.llama3[.config_registry], and
 * torchtitan_recipes.llama3, where torchtitan/config/README.md (b5bcd76)
 * says the model-size baselines move under the same function names. */
static char *short_module(const char *module) {
  const char *m = g_str_has_prefix(module, "torchtitan.models.")    ? module + 18
                  : g_str_has_prefix(module, "torchtitan_recipes.") ? module + 19
                                                                    : module;
  if (g_str_has_suffix(m, ".config_registry")) return g_strndup(m, strlen(m) - 16);
  return g_strdup(m);
}

/* One `--NAME [VALUE]` override (NAME without the dashes) into SETTINGS. */
/* OLD: the job-config TOML's own words (a --job.config_file launch), none
 * of current torchtitan's. */
static gboolean apply_override(const char *label, const char *name, const char *value, gboolean old,
                               gboolean *used_value, GPtrArray *settings, GError **error) {
  g_autofree char *norm = g_strdup(name);
  for (char *c = norm; *c; c++)
    if (*c == '-') *c = '_';
  const char *dot = strrchr(norm, '.');
  g_autofree char *table = dot ? g_strndup(norm, (gsize)(dot - norm)) : g_strdup("");
  const char *key = dot ? dot + 1 : norm;
  gboolean negated = FALSE;
  int k = old ? -1 : field_index(table, key);
  const char *choices = NULL;
  PtsimTorchtitanKind kind = ptsim_torchtitan_field_kind(table, key, &choices);
  if (k < 0 && kind == PTSIM_TORCHTITAN_UNKNOWN && g_str_has_prefix(key, "no_")) {
    /* tyro's negated boolean flag: --compile.no-enable */
    int kn = old ? -1 : field_index(table, key + 3);
    PtsimTorchtitanKind kk = ptsim_torchtitan_field_kind(table, key + 3, NULL);
    if ((kn >= 0 && fields[kn].kind == PTSIM_TORCHTITAN_BOOL && fields[kn].role != R_REMOVED) ||
        (kn < 0 && kk == PTSIM_TORCHTITAN_BOOL)) {
      key += 3;
      k = kn;
      kind = kk;
      negated = TRUE;
    }
  }
  for (size_t m = 0; m < G_N_ELEMENTS(moved) && !old; m++)
    if (k < 0 && strcmp(moved[m].table, table) == 0)
      return ptsim_config_fail(
          error, PTSIM_CONFIG_ERROR_PARSE,
          "%s: --%s: [%s] is not a section of current torchtitan's Trainer.Config "
          "(%s): %s",
          label, name, table, COMMIT, moved[m].hint);
  if (k >= 0 && fields[k].role == R_REMOVED)
    return ptsim_config_fail(
        error, PTSIM_CONFIG_ERROR_PARSE,
        "%s: --%s is the job-config TOML's field; current torchtitan (%s) has %s", label, name,
        COMMIT, fields[k].to_key);
  if (k >= 0 && fields[k].role == R_DATA)
    return ptsim_config_fail(
        error, PTSIM_CONFIG_ERROR_PARSE,
        "%s: --%s: not a command-line option (the model and the activation-"
        "checkpointing class are the config function's: Trainer.Config.model_spec is "
        "off the command line); name a --config that sets it",
        label, name);
  if (k >= 0 && fields[k].role == R_RENAME)
    kind = ptsim_torchtitan_field_kind(fields[k].to_table, fields[k].to_key, &choices);
  else if (k >= 0)
    kind = fields[k].kind;
  if (kind == PTSIM_TORCHTITAN_UNKNOWN || (table[0] == '\0' && k < 0)) {
    g_autoptr(GPtrArray) known = option_names();
    g_auto(GStrv) schema = ptsim_torchtitan_field_list();
    const char *near = closest(norm, old ? (const char *const *)schema
                                         : (const char *const *)known->pdata);
    return ptsim_config_fail(error, PTSIM_CONFIG_ERROR_PARSE,
                             "%s: --%s: no such option of %s%s%s%s", label, name,
                             old ? "torchtitan's JobConfig (238fa99)"
                                 : "torchtitan's Trainer.Config (" COMMIT ")",
                             near[0] ? "; did you mean --" : "", near, near[0] ? "?" : "");
  }
  if (kind == PTSIM_TORCHTITAN_NESTED)
    return ptsim_config_fail(error, PTSIM_CONFIG_ERROR_PARSE, "%s: --%s takes %s", label, name,
                             ptsim_torchtitan_kind_name(kind));
  PtsimTomlValue v;
  *used_value = FALSE;
  if (kind == PTSIM_TORCHTITAN_BOOL &&
      (value == NULL ||
       (g_ascii_strcasecmp(value, "true") != 0 && g_ascii_strcasecmp(value, "false") != 0))) {
    memset(&v, 0, sizeof v);
    v.type = PTSIM_TOML_BOOL;
    v.boolean = !negated;
  } else if (negated) {
    return ptsim_config_fail(error, PTSIM_CONFIG_ERROR_PARSE, "%s: --%s takes no value", label,
                             name);
  } else if (value == NULL) {
    return ptsim_config_fail(error, PTSIM_CONFIG_ERROR_PARSE, "%s: --%s needs a value (%s)", label,
                             name, ptsim_torchtitan_kind_name(kind));
  } else if (!ptsim_torchtitan_value_parse(kind, value, &v)) {
    return ptsim_config_fail(error, PTSIM_CONFIG_ERROR_PARSE, "%s: --%s %s: expected %s", label,
                             name, value, ptsim_torchtitan_kind_name(kind));
  } else {
    *used_value = TRUE;
  }
  if (choices && v.type == PTSIM_TOML_STRING) {
    g_auto(GStrv) options = g_strsplit(choices, "|", -1);
    if (!g_strv_contains((const char *const *)options, v.string)) {
      g_autofree char *got = g_strdup(v.string);
      ptsim_toml_value_clear(&v);
      return ptsim_config_fail(error, PTSIM_CONFIG_ERROR_PARSE, "%s: --%s %s: expected one of %s",
                               label, name, got, choices);
    }
  }
  set(settings, table, key, &v);
  ptsim_toml_value_clear(&v);
  return TRUE;
}

/* ---- into the TOML form ---- */

static int64_t int_of(GPtrArray *settings, const char *table, const char *key, int64_t fallback) {
  const PtsimTomlValue *v = get(settings, table, key);
  return v && v->type == PTSIM_TOML_INTEGER ? v->integer : fallback;
}

static void add_int(PtsimToml *toml, const char *table, const char *key, int64_t value) {
  PtsimTomlValue v;
  memset(&v, 0, sizeof v);
  v.type = PTSIM_TOML_INTEGER;
  v.integer = value;
  ptsim_toml_add(toml, table, key, 0, &v);
}

static void add_str(PtsimToml *toml, const char *table, const char *key, const char *value) {
  PtsimTomlValue v;
  memset(&v, 0, sizeof v);
  v.type = PTSIM_TOML_STRING;
  v.string = (char *)value;
  ptsim_toml_add(toml, table, key, 0, &v);
}

/* Token counts as sequences: a microbatch of num_tokens_per_microbatch_
 * per_dp_rank / max_context_length sequences (torchtitan packs documents
 * into max_context_length-token rows). */
static gboolean batch(const char *label, GPtrArray *settings, PtsimToml *toml, GError **error) {
  const char *T = "training";
  int64_t seq = int_of(settings, T, "max_context_length", 2048);
  int64_t tokens = int_of(settings, T, "num_tokens_per_microbatch_per_dp_rank", 16384);
  int64_t step = int_of(settings, T, "num_tokens_per_train_step", -1);
  int64_t pp_mbs = int_of(settings, "parallelism", "num_pp_microbatches", 1);
  int64_t pp = int_of(settings, "parallelism", "pipeline_parallel_degree", 1);
  if (seq < 1 || seq > PTSIM_CONFIG_INT_MAX)
    return ptsim_config_fail(error, PTSIM_CONFIG_ERROR_INVALID,
                             "%s: training.max_context_length = %" G_GINT64_FORMAT
                             ": expected >= 1",
                             label, (gint64)seq);
  if (tokens < seq || tokens % seq != 0 || tokens > PTSIM_CONFIG_INT_MAX)
    return ptsim_config_fail(
        error, PTSIM_CONFIG_ERROR_INVALID,
        "%s: training.num_tokens_per_microbatch_per_dp_rank = %" G_GINT64_FORMAT
        " is not a whole number of max_context_length = %" G_GINT64_FORMAT
        "-token sequences; ptsim models whole sequences per microbatch",
        label, (gint64)tokens, (gint64)seq);
  if (pp > 1 && (pp_mbs < 1 || pp_mbs > PTSIM_CONFIG_INT_MAX / (tokens / seq)))
    return ptsim_config_fail(error, PTSIM_CONFIG_ERROR_INVALID,
                             "%s: parallelism.num_pp_microbatches = %" G_GINT64_FORMAT
                             ": expected >= 1",
                             label, (gint64)pp_mbs);
  int64_t mb = tokens / seq;
  add_int(toml, T, "seq_len", seq);
  add_int(toml, T, "local_batch_size", pp > 1 ? mb * pp_mbs : mb);
  if (pp > 1) add_int(toml, "parallelism", "pipeline_parallel_microbatch_size", mb);
  if (step != -1) {
    if (step < seq || step % seq != 0)
      return ptsim_config_fail(error, PTSIM_CONFIG_ERROR_INVALID,
                               "%s: training.num_tokens_per_train_step = %" G_GINT64_FORMAT
                               " is not a whole number of max_context_length = %" G_GINT64_FORMAT
                               "-token sequences",
                               label, (gint64)step, (gint64)seq);
    add_int(toml, T, "global_batch_size", step / seq);
  }
  return TRUE;
}

/* SETTINGS (current torchtitan's names) as the TOML form's entries. */
static PtsimToml *translate(const char *label, GPtrArray *settings, GError **error) {
  g_autoptr(PtsimToml) toml = ptsim_toml_new(label);
  for (guint i = 0; i < settings->len; i++) {
    const Setting *s = settings->pdata[i];
    int k = field_index(s->table, s->key);
    Role role = k >= 0 ? fields[k].role : R_SAME;
    if (role == R_BATCH || role == R_DROP || role == R_REMOVED) continue;
    const char *table = role == R_RENAME ? fields[k].to_table : s->table;
    const char *key = role == R_RENAME ? fields[k].to_key : s->key;
    if (strcmp(key, "filter_fqns") == 0 && s->value.type == PTSIM_TOML_ARRAY) {
      /* the LM head's module: 'lm_head' now, 'output' at 238fa99 */
      PtsimTomlValue v;
      ptsim_toml_value_copy(&v, &s->value);
      for (guint j = 0; j < v.items->len; j++) {
        PtsimTomlValue *item = v.items->pdata[j];
        if (strcmp(item->string, "lm_head") == 0) {
          g_free(item->string);
          item->string = g_strdup("output");
        }
      }
      ptsim_toml_add(toml, table, key, 0, &v);
      ptsim_toml_value_clear(&v);
      continue;
    }
    ptsim_toml_add(toml, table, key, 0, &s->value);
  }
  /* Trainer.Config's activation_checkpoint defaults to SelectiveAC, which
   * is per-op (the TOML form's selective_ac_option 'op') */
  const PtsimTomlValue *mode = get(settings, "activation_checkpoint", "mode");
  if (mode == NULL) add_str(toml, "activation_checkpoint", "mode", "selective");
  if ((mode == NULL ||
       (mode->type == PTSIM_TOML_STRING && strcmp(mode->string, "selective") == 0)) &&
      get(settings, "activation_checkpoint", "selective_ac_option") == NULL)
    add_str(toml, "activation_checkpoint", "selective_ac_option", "op");
  if (!batch(label, settings, toml, error)) return NULL;
  return g_steal_pointer(&toml);
}

/* ---- the launch ---- */

static gboolean is_int_word(const char *w, int64_t *out) {
  gint64 v = 0;
  if (!g_ascii_string_to_signed(w, 10, 1, PTSIM_CONFIG_INT_MAX, &v, NULL)) return FALSE;
  *out = v;
  return TRUE;
}

/* The TOML file of an older launch (--job.config_file PATH) with its
 * overrides, in the TOML form's words, replacing or adding entries: PATH as
 * given, else beside the launch (DIR). */
static PtsimToml *old_form(const char *label, const char *dir, const char *path,
                           GPtrArray *overrides, GError **error) {
  g_autofree char *beside = dir && !g_path_is_absolute(path) ? g_build_filename(dir, path, NULL)
                                                             : NULL;
  gboolean here = g_file_test(path, G_FILE_TEST_EXISTS) || beside == NULL;
  g_autoptr(PtsimToml) toml = ptsim_toml_load(here ? path : beside, error);
  if (toml == NULL) return NULL;
  g_autoptr(GPtrArray) settings = g_ptr_array_new_with_free_func(setting_free);
  for (guint i = 0; i < overrides->len; i += 2) {
    gboolean used = FALSE;
    if (!apply_override(label, overrides->pdata[i], overrides->pdata[i + 1], TRUE, &used, settings,
                        error))
      return NULL;
    if (!used && overrides->pdata[i + 1] != NULL) {
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                  "%s: --%s is a boolean flag; '%s' after it is not a torchtitan option", label,
                  (char *)overrides->pdata[i], (char *)overrides->pdata[i + 1]);
      return NULL;
    }
  }
  for (guint i = 0; i < settings->len; i++) {
    const Setting *o = settings->pdata[i];
    PtsimTomlEntry *e = NULL;
    for (guint j = 0; j < toml->entries->len && e == NULL; j++) {
      PtsimTomlEntry *c = toml->entries->pdata[j];
      if (strcmp(c->table, o->table) == 0 && strcmp(c->key, o->key) == 0) e = c;
    }
    if (e == NULL) {
      ptsim_toml_add(toml, o->table, o->key, 0, &o->value);
    } else {
      ptsim_toml_value_clear(&e->value);
      ptsim_toml_value_copy(&e->value, &o->value);
      e->line = 0; /* the command line's now: messages name the section */
    }
  }
  return g_steal_pointer(&toml);
}

static PtsimToml *words_in(const char *label, const char *dir, const char *const *words,
                           const char *configs, int64_t *gpus, GError **error);

PtsimToml *ptsim_torchtitan_python_words(const char *label, const char *const *words,
                                         const char *configs, int64_t *gpus, GError **error) {
  return words_in(label, NULL, words, configs, gpus, error);
}

static PtsimToml *words_in(const char *label, const char *dir, const char *const *words,
                           const char *configs, int64_t *gpus, GError **error) {
  *gpus = -1;
  int64_t nproc = -1, nnodes = 1;
  guint n = g_strv_length((char **)words);
  /* the trainer's words follow `-m MODULE` or a .py script; torchrun's come before */
  guint start = 0;
  for (guint i = 0; i < n; i++) {
    if (strcmp(words[i], "-m") == 0 && i + 1 < n) {
      start = i + 2;
      break;
    }
    if (g_str_has_suffix(words[i], ".py") || g_str_has_suffix(words[i], "run_train.sh")) {
      start = i + 1;
      break;
    }
  }
  for (guint i = 0; i < start; i++) {
    const char *w = words[i];
    const char *eq = strchr(w, '=');
    g_autofree char *flag = eq ? g_strndup(w, (gsize)(eq - w)) : g_strdup(w);
    const char *value = eq ? eq + 1 : (i + 1 < start ? words[i + 1] : "");
    if (strcmp(flag, "--nproc_per_node") == 0 || strcmp(flag, "--nproc-per-node") == 0)
      (void)is_int_word(value, &nproc);
    else if (strcmp(flag, "--nnodes") == 0 && !is_int_word(value, &nnodes))
      nnodes = -1; /* a range "1:4" or a variable left unset */
  }
  if (nproc > 0 && nnodes > 0 && nproc <= PTSIM_CONFIG_INT_MAX / nnodes) *gpus = nproc * nnodes;
  const char *module = NULL, *config = NULL, *config_file = NULL;
  /* name, value-or-NULL pairs (owned copies) */
  g_autoptr(GPtrArray) overrides = g_ptr_array_new_with_free_func(g_free);
  for (guint i = start; i < n; i++) {
    const char *w = words[i];
    if (!g_str_has_prefix(w, "--") || w[2] == '\0') {
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                  "%s: '%s': torchtitan's trainer takes --module, --config and --section.option "
                  "flags only",
                  label, w);
      return NULL;
    }
    const char *eq = strchr(w, '=');
    char *name = eq ? g_strndup(w + 2, (gsize)(eq - w - 2)) : g_strdup(w + 2);
    const char *value =
        eq ? eq + 1 : (i + 1 < n && !g_str_has_prefix(words[i + 1], "--") ? words[i + 1] : NULL);
    if (strcmp(name, "job.config-file") == 0) name[10] = '_';
    if (strcmp(name, "module") == 0 || strcmp(name, "config") == 0 ||
        strcmp(name, "job.config_file") == 0) {
      if (value == NULL) {
        g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE, "%s: --%s needs a value",
                    label, name);
        g_free(name);
        return NULL;
      }
      if (strcmp(name, "module") == 0)
        module = value;
      else if (strcmp(name, "config") == 0)
        config = value;
      else
        config_file = value;
      g_free(name);
      if (!eq) i++;
      continue;
    }
    g_ptr_array_add(overrides, name);
    g_ptr_array_add(overrides, g_strdup(value));
    if (!eq && value) i++; /* taken back below when a boolean flag does not use it */
  }
  if (config_file != NULL && module == NULL && config == NULL) {
    /* torchtitan up to 238fa99: the job-config TOML named on the command line */
    return old_form(label, dir, config_file, overrides, error);
  }
  if (module == NULL || config == NULL) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                "%s: a torchtitan launch needs --module and --config (torchtitan's config "
                "manager requires both; e.g. --module llama3 --config llama3_8b), or, before "
                "2026, --job.config_file with a job-config TOML",
                label);
    return NULL;
  }
  g_autofree char *default_path = g_build_filename(ptsim_config_data_dir(), "models", "torchtitan",
                                                   "configs.toml", NULL);
  g_autoptr(PtsimToml) data = ptsim_toml_load(configs ? configs : default_path, error);
  g_autoptr(GPtrArray) settings = g_ptr_array_new_with_free_func(setting_free);
  g_autofree char *mod = short_module(module);
  gboolean ok = data != NULL;
  if (ok && config_meta(data, mod, config, "commit") == NULL) {
    g_autoptr(GPtrArray) modules = names_in(data, NULL);
    gboolean known = g_strv_contains((const char *const *)modules->pdata, mod);
    if (!known) {
      g_autofree char *list = g_strjoinv(", ", (char **)modules->pdata);
      const char *near = closest(mod, (const char *const *)modules->pdata);
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                  "%s: --module %s: ptsim has no config registry of that module (%s)%s%s%s; "
                  "known: %s",
                  label, module, data->path, near[0] ? "; did you mean " : "", near,
                  near[0] ? "?" : "", list);
      ok = FALSE;
    }
  }
  ok = ok && apply_config(data, label, mod, config, 0, settings, error);
  /* overrides: a boolean flag followed by a non-boolean word leaves it to
   * the next flag, which is then an error of its own */
  for (guint i = 0; ok && i < overrides->len; i += 2) {
    gboolean used = FALSE;
    ok = apply_override(label, overrides->pdata[i], overrides->pdata[i + 1], FALSE, &used, settings,
                        error);
    if (ok && !used && overrides->pdata[i + 1] != NULL) {
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                  "%s: --%s is a boolean flag; '%s' after it is not a torchtitan option", label,
                  (char *)overrides->pdata[i], (char *)overrides->pdata[i + 1]);
      ok = FALSE;
    }
  }
  if (!ok) return NULL;
  return translate(label, settings, error);
}

gboolean ptsim_torchtitan_python_detect(const char *text, gsize len) {
  if (memchr(text, '\0', len)) return FALSE;
  g_autofree char *s = g_strndup(text, len);
  return (strstr(s, "--module") && strstr(s, "--config")) || strstr(s, "--job.config") ||
         strstr(s, "run_train.sh");
}

PtsimToml *ptsim_torchtitan_python_parse(const char *path, const char *text, gsize len,
                                         int64_t *gpus, GPtrArray *warnings, GError **error) {
  *gpus = -1;
  g_autoptr(PtsimShellScript) script = ptsim_shell_script_run(text, len, path, error);
  if (script == NULL) return NULL;
  if (script->command_line == 0) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                "%s: no torchtitan command found (torchrun ... -m torchtitan.train --module M "
                "--config F, or run_train.sh)",
                path);
    return NULL;
  }
  g_autofree char *label = g_strdup_printf("%s:%" G_GINT64_FORMAT, path,
                                           (gint64)script->command_line);
  g_autoptr(GPtrArray) words = g_ptr_array_new_with_free_func(g_free);
  gboolean run_train = FALSE;
  for (guint i = 0; i < script->command->len; i++) {
    const char *w = script->command->pdata[i];
    g_ptr_array_add(words, g_strdup(w));
    if (!run_train && g_str_has_suffix(w, "run_train.sh")) {
      /* run_train.sh: MODULE and CONFIG from the environment (its defaults
       * llama3, llama3_debugmodel), NGPU processes (default 8) */
      run_train = TRUE;
      g_autofree char *m = ptsim_shell_script_var(script, "MODULE");
      g_autofree char *c = ptsim_shell_script_var(script, "CONFIG");
      g_autofree char *file = ptsim_shell_script_var(script, "CONFIG_FILE");
      if (file != NULL && m == NULL && c == NULL) {
        /* the run_train.sh of releases up to 238fa99 */
        g_ptr_array_add(words, g_strdup("--job.config_file"));
        g_ptr_array_add(words, g_steal_pointer(&file));
        continue;
      }
      g_ptr_array_add(words, g_strdup("--module"));
      g_ptr_array_add(words, g_strdup(m ? m : "llama3"));
      g_ptr_array_add(words, g_strdup("--config"));
      g_ptr_array_add(words, g_strdup(c ? c : "llama3_debugmodel"));
    }
  }
  g_ptr_array_add(words, NULL);
  g_autofree char *dir = g_path_get_dirname(path);
  PtsimToml *out = words_in(label, dir, (const char *const *)words->pdata, NULL, gpus, error);
  if (out && warnings && strcmp(out->path, label) == 0)
    /* a config function's model (not a --job.config_file TOML's) */
    g_ptr_array_add(warnings,
                    g_strdup_printf("%s: [model] attention: torchtitan's language models (%s) "
                                    "attend with FlexAttention or varlen and a block-causal, "
                                    "per-document mask; ptsim prices full causal attention over "
                                    "the whole max_context_length",
                                    label, COMMIT));
  if (out && run_train) {
    g_autofree char *ngpu = ptsim_shell_script_var(script, "NGPU");
    int64_t n = 8;
    if (ngpu == NULL || is_int_word(ngpu, &n)) *gpus = n;
  }
  return out;
}
