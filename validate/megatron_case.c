/* megatron_case.c — a Megatron-LM functional test case, from its folder or
 * from ptsim's record of it; see megatron_case.h. */
#include "megatron_case.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "input.h"

/* What tests/functional_tests/shell_test_utils/_run_training.sh exports
 * before the case's own ENV_VARS (`export X="${X:-default}"`), at the
 * Megatron-LM commit the records name. */
const char *const ptsim_megatron_harness_env[PTSIM_MEGATRON_HARNESS_ENV][2] = {
    {"NCCL_PROTO", "simple"},     {"NCCL_ALGO", "Ring"},
    {"NCCL_COLLNET_ENABLE", "0"}, {"NCCL_NVLS_ENABLE", "0"},
    {"NCCL_BUFFSIZE", "4194304"}, {"TORCH_NCCL_AVOID_RECORD_STREAMS", "1"}};

/* The platforms read; golden values of any other (GB200 and GB300 above
 * all: held out) are never opened. */
static const char *const platforms[] = {"dgx_a100", "dgx_h100"};

static gint compare_names(gconstpointer a, gconstpointer b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

gboolean ptsim_megatron_case_held_out(const char *name) {
  g_autofree char *lower = g_ascii_strdown(name, -1);
  return strstr(lower, "gb200") != NULL || strstr(lower, "gb300") != NULL;
}

GPtrArray *ptsim_megatron_case_list_dir(const char *dir, GError **error) {
  g_autoptr(GDir) d = g_dir_open(dir, 0, error);
  if (!d) return NULL;
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  const char *name;
  while ((name = g_dir_read_name(d)))
    if (!ptsim_megatron_case_held_out(name)) g_ptr_array_add(names, g_strdup(name));
  g_ptr_array_sort(names, compare_names);
  return names;
}

static void measured_free(gpointer p) {
  PtsimMegatronMeasured *m = p;
  g_free(m->platform);
  g_free(m->environment);
  g_free(m->source);
  g_free(m);
}

static PtsimMegatronMeasured *measured_new(const char *platform, const char *environment,
                                           const char *source) {
  PtsimMegatronMeasured *m = g_new0(PtsimMegatronMeasured, 1);
  m->platform = g_strdup(platform);
  m->environment = g_strdup(environment);
  m->source = g_strdup(source);
  m->peak_allocated_bytes = m->steady_allocated_bytes = m->iteration_time_s = NAN;
  return m;
}

static PtsimMegatronCase *case_new(void) {
  PtsimMegatronCase *c = g_new0(PtsimMegatronCase, 1);
  c->flags = g_ptr_array_new_with_free_func(g_free);
  c->values = g_ptr_array_new_with_free_func(g_free);
  c->env_keys = g_ptr_array_new_with_free_func(g_free);
  c->env_values = g_ptr_array_new_with_free_func(g_free);
  c->measured = g_ptr_array_new_with_free_func(measured_free);
  c->test_type = g_strdup("");
  c->mode = g_strdup("pretraining");
  c->gpus = -1;
  return c;
}

void ptsim_megatron_case_free(PtsimMegatronCase *c) {
  if (!c) return;
  g_free(c->family);
  g_free(c->name);
  g_free(c->config);
  g_free(c->commit);
  g_free(c->test_type);
  g_free(c->mode);
  g_ptr_array_unref(c->flags);
  g_ptr_array_unref(c->values);
  g_ptr_array_unref(c->env_keys);
  g_ptr_array_unref(c->env_values);
  g_free(c->gpus_from);
  g_free(c->unread);
  g_ptr_array_unref(c->measured);
  g_free(c);
}

static void set_unread(PtsimMegatronCase *c, char *why /* transfer full */) {
  if (!c->unread)
    c->unread = why;
  else
    g_free(why);
}

/* ---- golden values ---- */

/* A JSON number (not "nan", not text): *out, TRUE. */
static gboolean finite_number(const char *text, double *out) {
  if (!text || !*text) return FALSE;
  char *end = NULL;
  double v = g_ascii_strtod(text, &end);
  if (*end != '\0' || !isfinite(v)) return FALSE;
  *out = v;
  return TRUE;
}

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median_of(GArray *v) {
  if (v->len == 0) return NAN;
  qsort(v->data, v->len, sizeof(double), compare_double);
  guint n = v->len;
  double *d = (double *)(void *)v->data;
  return n % 2 ? d[n / 2] : 0.5 * (d[n / 2 - 1] + d[n / 2]);
}

typedef struct {
  int64_t step;
  double value;
} StepValue;

static int compare_step(const void *a, const void *b) {
  int64_t x = ((const StepValue *)a)->step, y = ((const StepValue *)b)->step;
  return (x > y) - (x < y);
}

/* The metric's numeric values by step, in step order. */
static GArray *metric_values(const PtsimYamlDoc *doc, const char *metric) {
  GArray *out = g_array_new(FALSE, FALSE, sizeof(StepValue));
  int values = ptsim_yaml_get(doc, ptsim_yaml_get(doc, ptsim_yaml_root(doc), metric), "values");
  for (int i = 0; i < ptsim_yaml_count(doc, values); i++) {
    int k, v;
    ptsim_yaml_pair(doc, values, i, &k, &v);
    double step, value;
    if (!finite_number(ptsim_yaml_text(doc, k), &step) ||
        !finite_number(ptsim_yaml_text(doc, v), &value))
      continue;
    StepValue sv = {(int64_t)step, value};
    g_array_append_val(out, sv);
  }
  if (out->len > 1) qsort(out->data, out->len, sizeof(StepValue), compare_step);
  return out;
}

void ptsim_megatron_golden_summarize(const PtsimYamlDoc *doc, int64_t log_interval,
                                     PtsimMegatronMeasured *out) {
  g_autoptr(GArray) peak = metric_values(doc, "mem-max-allocated-bytes");
  out->peak_allocated_bytes = NAN;
  for (guint i = 0; i < peak->len; i++) {
    double v = g_array_index(peak, StepValue, i).value;
    if (!(v <= out->peak_allocated_bytes)) out->peak_allocated_bytes = v;
  }
  g_autoptr(GArray) steady = metric_values(doc, "mem-allocated-bytes");
  g_autoptr(GArray) each = g_array_new(FALSE, FALSE, sizeof(double));
  for (guint i = 0; i < steady->len; i++)
    g_array_append_val(each, g_array_index(steady, StepValue, i).value);
  out->steady_allocated_bytes = median_of(each);
  /* warm-up: a value averages the log_interval steps up to its own, and
   * steps 1 and 2 are warm-up (megatron_log.h) */
  g_autoptr(GArray) time = metric_values(doc, "iteration-time");
  g_array_set_size(each, 0);
  for (guint i = 0; i < time->len; i++) {
    const StepValue *sv = &g_array_index(time, StepValue, i);
    if (sv->step - (log_interval > 0 ? log_interval : 1) + 1 >= 3)
      g_array_append_val(each, sv->value);
  }
  out->time_steps = each->len;
  out->iteration_time_s = median_of(each);
}

/* Quantities a summary has (0-3). */
static int known(const PtsimMegatronMeasured *m) {
  return !isnan(m->peak_allocated_bytes) + !isnan(m->steady_allocated_bytes) +
         !isnan(m->iteration_time_s);
}

/* --log-interval of C (Megatron-LM's default 100). */
static int64_t log_interval(const PtsimMegatronCase *c) {
  for (guint i = c->flags->len; i-- > 0;) {
    guint64 v;
    if (strcmp(c->flags->pdata[i], "--log-interval") == 0 && c->values->pdata[i] &&
        g_ascii_string_to_unsigned(c->values->pdata[i], 10, 1, G_MAXINT32, &v, NULL))
      return (int64_t)v;
  }
  return 100;
}

/* ---- the case folder ---- */

static gboolean plain_true(const PtsimYamlDoc *doc, int node) {
  const char *t = ptsim_yaml_text(doc, node);
  return ptsim_yaml_plain(doc, node) && t &&
         (strcmp(t, "true") == 0 || strcmp(t, "True") == 0 || strcmp(t, "TRUE") == 0);
}

/* MODEL_ARGS into c->flags / c->values, as the harness turns them into a
 * command line. */
static void read_model_args(PtsimMegatronCase *c, const PtsimYamlDoc *doc, int args) {
  if (ptsim_yaml_kind(doc, args) != PTSIM_YAML_MAPPING) {
    set_unread(c, g_strdup("no MODEL_ARGS mapping (not a Megatron-LM training case)"));
    return;
  }
  for (int i = 0; i < ptsim_yaml_count(doc, args); i++) {
    int k, v;
    ptsim_yaml_pair(doc, args, i, &k, &v);
    const char *flag = ptsim_yaml_text(doc, k);
    if (!flag || !g_str_has_prefix(flag, "--") || !flag[2]) {
      set_unread(c,
                 g_strdup_printf("MODEL_ARGS key '%s' (line %" G_GINT64_FORMAT ") is not a --flag",
                                 flag ? flag : "?", ptsim_yaml_line(doc, k)));
      return;
    }
    const char *value = ptsim_yaml_text(doc, v);
    if (!value) {
      set_unread(c, g_strdup_printf("MODEL_ARGS %s (line %" G_GINT64_FORMAT
                                    "): a list or mapping value is not read",
                                    flag, ptsim_yaml_line(doc, v)));
      return;
    }
    if (!*value) continue; /* the harness drops empty values */
    g_ptr_array_add(c->flags, g_strdup(flag));
    g_ptr_array_add(c->values, plain_true(doc, v) ? NULL : g_strdup(value));
  }
}

static void read_env(PtsimMegatronCase *c, const PtsimYamlDoc *doc, int env) {
  for (int i = 0; i < ptsim_yaml_count(doc, env); i++) {
    int k, v;
    ptsim_yaml_pair(doc, env, i, &k, &v);
    const char *key = ptsim_yaml_text(doc, k), *value = ptsim_yaml_text(doc, v);
    if (!key || !value) continue;
    g_ptr_array_add(c->env_keys, g_strdup(key));
    g_ptr_array_add(c->env_values, g_strdup(value));
  }
}

static char *scalar_or(const PtsimYamlDoc *doc, int map, const char *key, const char *fallback) {
  const char *t = ptsim_yaml_text(doc, ptsim_yaml_get(doc, map, key));
  return g_strdup(t ? t : fallback);
}

/* A model_config.yaml document: TEST_TYPE, MODE, ENV_VARS, MODEL_ARGS. */
static void read_config(PtsimMegatronCase *c, const PtsimYamlDoc *doc) {
  int root = ptsim_yaml_root(doc);
  if (ptsim_yaml_kind(doc, root) != PTSIM_YAML_MAPPING) {
    set_unread(c, g_strdup("model_config.yaml is not a mapping"));
    return;
  }
  g_free(c->test_type);
  c->test_type = scalar_or(doc, root, "TEST_TYPE", "");
  g_free(c->mode);
  c->mode = scalar_or(doc, root, "MODE", "pretraining");
  read_env(c, doc, ptsim_yaml_get(doc, root, "ENV_VARS"));
  read_model_args(c, doc, ptsim_yaml_get(doc, root, "MODEL_ARGS"));
}

/* golden_values_<env>_<platform>.json: its platform and environment. */
static gboolean golden_name(const char *name, const char **platform, const char **env) {
  for (size_t p = 0; p < G_N_ELEMENTS(platforms); p++)
    for (int e = 0; e < 2; e++) {
      const char *envs[] = {"dev", "lts"};
      g_autofree char *want = g_strdup_printf("golden_values_%s_%s.json", envs[e], platforms[p]);
      if (strcmp(name, want) == 0) {
        *platform = platforms[p];
        *env = envs[e];
        return TRUE;
      }
    }
  return FALSE;
}

/* Per platform, the file with more of the three quantities; dev wins a
 * tie (Megatron-LM's current container). */
static gboolean read_golden(PtsimMegatronCase *c, const char *dir, GError **error) {
  g_autoptr(GPtrArray) names = ptsim_megatron_case_list_dir(dir, error); /* dev before lts */
  if (!names) return FALSE;
  PtsimMegatronMeasured *chosen[G_N_ELEMENTS(platforms)] = {NULL, NULL};
  for (guint i = 0; i < names->len; i++) {
    const char *platform, *env;
    if (!golden_name(names->pdata[i], &platform, &env)) continue;
    size_t p = strcmp(platform, platforms[0]) == 0 ? 0 : 1;
    g_autofree char *path = g_build_filename(dir, names->pdata[i], NULL);
    g_autoptr(PtsimYamlDoc) doc = ptsim_yaml_load_file(path, error);
    if (!doc) {
      for (size_t p2 = 0; p2 < G_N_ELEMENTS(platforms); p2++)
        if (chosen[p2]) measured_free(chosen[p2]);
      return FALSE;
    }
    PtsimMegatronMeasured *m = measured_new(platforms[p], env, path);
    ptsim_megatron_golden_summarize(doc, log_interval(c), m);
    if (!chosen[p] || known(m) > known(chosen[p])) {
      if (chosen[p]) measured_free(chosen[p]);
      chosen[p] = m;
    } else {
      measured_free(m);
    }
  }
  for (size_t p = 0; p < G_N_ELEMENTS(platforms); p++)
    if (chosen[p]) g_ptr_array_add(c->measured, chosen[p]);
  return TRUE;
}

PtsimMegatronCase *ptsim_megatron_case_read_dir(const char *given, GError **error) {
  g_autoptr(PtsimMegatronCase) c = case_new();
  g_autofree char *dir = g_strdup(given);
  for (size_t n = strlen(dir); n > 1 && dir[n - 1] == G_DIR_SEPARATOR; n--) dir[n - 1] = '\0';
  g_autofree char *parent = g_path_get_dirname(dir);
  c->family = g_path_get_basename(parent);
  c->name = g_path_get_basename(dir);
  c->config = g_build_filename(dir, "model_config.yaml", NULL);
  if (ptsim_megatron_case_held_out(dir)) { /* the caller's filter should have caught it */
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_ACCES, "%s: held out (GB200 / GB300)", dir);
    return NULL;
  }
  g_autoptr(PtsimYamlDoc) doc = ptsim_yaml_load_file(c->config, error);
  if (!doc) return NULL;
  read_config(c, doc);
  if (!read_golden(c, dir, error)) return NULL;
  return g_steal_pointer(&c);
}

PtsimMegatronCase *ptsim_megatron_case_parse_config(const char *text, gsize len, const char *name,
                                                    GError **error) {
  g_autoptr(PtsimMegatronCase) c = case_new();
  c->family = g_strdup("");
  c->name = g_strdup(name);
  c->config = g_strdup(name);
  g_autoptr(PtsimYamlDoc) doc = ptsim_yaml_load_data(text, len, name, error);
  if (!doc) return NULL;
  read_config(c, doc);
  return g_steal_pointer(&c);
}

/* ---- ptsim's record of a case ---- */

static double record_number(GKeyFile *kf, const char *group, const char *key, GError **error) {
  if (!g_key_file_has_key(kf, group, key, NULL)) return NAN;
  return g_key_file_get_double(kf, group, key, error);
}

static gboolean read_record_measured(PtsimMegatronCase *c, GKeyFile *kf, const char *group,
                                     GError **error) {
  const char *platform = group + strlen("measured ");
  g_autofree char *env = g_key_file_get_string(kf, group, "environment", error);
  g_autofree char *source = env ? g_key_file_get_string(kf, group, "golden_values", error) : NULL;
  if (!source) return FALSE;
  PtsimMegatronMeasured *m = measured_new(platform, env, source);
  g_ptr_array_add(c->measured, m);
  GError *e = NULL;
  m->peak_allocated_bytes = record_number(kf, group, "peak_allocated_bytes", &e);
  if (!e) m->steady_allocated_bytes = record_number(kf, group, "steady_allocated_bytes", &e);
  if (!e) m->iteration_time_s = record_number(kf, group, "iteration_time_s", &e);
  if (!e && g_key_file_has_key(kf, group, "iteration_time_steps", NULL))
    m->time_steps = g_key_file_get_int64(kf, group, "iteration_time_steps", &e);
  if (e) g_propagate_error(error, e);
  return e == NULL;
}

static gboolean read_record_pairs(GKeyFile *kf, const char *group, const char *prefix,
                                  GPtrArray *keys, GPtrArray *values, gboolean empty_is_bare,
                                  GError **error) {
  if (!g_key_file_has_group(kf, group)) return TRUE;
  g_auto(GStrv) names = g_key_file_get_keys(kf, group, NULL, error);
  if (!names) return FALSE;
  for (char **k = names; *k; k++) {
    g_autofree char *v = g_key_file_get_string(kf, group, *k, error);
    if (!v) return FALSE;
    g_ptr_array_add(keys, g_strconcat(prefix, *k, NULL));
    g_ptr_array_add(values, empty_is_bare && !*v ? NULL : g_steal_pointer(&v));
  }
  return TRUE;
}

static gboolean read_record(PtsimMegatronCase *c, GKeyFile *kf, GError **error) {
  char **strings[] = {&c->name, &c->family, &c->config, &c->commit, &c->test_type};
  const char *keys[] = {"name", "family", "config", "megatron_commit", "test_type"};
  for (size_t i = 0; i < G_N_ELEMENTS(keys); i++) {
    g_free(*strings[i]);
    if (!(*strings[i] = g_key_file_get_string(kf, "case", keys[i], error))) return FALSE;
  }
  if (g_key_file_has_key(kf, "case", "mode", NULL)) {
    g_free(c->mode);
    if (!(c->mode = g_key_file_get_string(kf, "case", "mode", error))) return FALSE;
  }
  if (g_key_file_has_key(kf, "case", "gpus", NULL)) {
    GError *e = NULL;
    c->gpus = g_key_file_get_int64(kf, "case", "gpus", &e);
    if (e) {
      g_propagate_error(error, e);
      return FALSE;
    }
    c->gpus_from = g_key_file_get_string(kf, "case", "gpus_from", NULL);
  }
  if (!read_record_pairs(kf, "env_vars", "", c->env_keys, c->env_values, FALSE, error) ||
      !read_record_pairs(kf, "model_args", "--", c->flags, c->values, TRUE, error))
    return FALSE;
  g_auto(GStrv) groups = g_key_file_get_groups(kf, NULL);
  for (char **g = groups; *g; g++)
    if (g_str_has_prefix(*g, "measured ") && !read_record_measured(c, kf, *g, error)) return FALSE;
  return TRUE;
}

PtsimMegatronCase *ptsim_megatron_case_read_record(const char *path, GError **error) {
  if (ptsim_megatron_case_held_out(path)) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_ACCES, "%s: held out (GB200 / GB300)", path);
    return NULL;
  }
  g_autofree char *text = NULL;
  gsize len = 0;
  if (!ptsim_input_read(path, "Megatron-LM case record", PTSIM_INPUT_MAX_TEXT, &text, &len, error))
    return NULL;
  return ptsim_megatron_case_parse_record(text, len, path, error);
}

PtsimMegatronCase *ptsim_megatron_case_parse_record(const char *text, gsize len, const char *name,
                                                    GError **error) {
  g_autoptr(GKeyFile) kf = g_key_file_new();
  g_autoptr(PtsimMegatronCase) c = case_new();
  GError *e = NULL;
  if (!g_key_file_load_from_data(kf, text, len, G_KEY_FILE_NONE, &e) || !read_record(c, kf, &e)) {
    g_set_error(error, G_KEY_FILE_ERROR, e->code, "%s: %s", name, e->message);
    g_error_free(e);
    return NULL;
  }
  return g_steal_pointer(&c);
}

/* ---- the command line and the environment ---- */

/* Words the shell reads as they are: no quoting needed. */
static gboolean shell_safe(const char *s) {
  if (!*s) return FALSE;
  for (const char *p = s; *p; p++)
    if (!g_ascii_isalnum(*p) && !strchr("_.,:/=+-@%", *p)) return FALSE;
  return TRUE;
}

/* One word of a value, quoted when the shell would read it otherwise. */
static void append_word(GString *s, const char *word) {
  if (shell_safe(word)) {
    g_string_append(s, word);
  } else {
    g_autofree char *q = g_shell_quote(word);
    g_string_append(s, q);
  }
}

char *ptsim_megatron_case_command(const PtsimMegatronCase *c) {
  g_autoptr(GString) s = g_string_new(NULL);
  for (guint i = 0; i < c->flags->len; i++) {
    const char *value = c->values->pdata[i];
    size_t n = value ? strlen(value) : 0;
    if (s->len) g_string_append_c(s, ' ');
    g_string_append(s, c->flags->pdata[i]);
    if (!value) continue;
    g_string_append_c(s, ' ');
    /* the harness (_run_training.sh) passes a value wrapped in [ ] as its
     * words, brackets stripped: "[moe_act mlp]" is --flag moe_act mlp */
    if (n > 2 && value[0] == '[' && value[n - 1] == ']' && !memchr(value + 1, ']', n - 2)) {
      g_autofree char *inner = g_strndup(value + 1, n - 2);
      g_auto(GStrv) words = g_strsplit_set(inner, " \t", -1);
      gboolean first = TRUE;
      for (char **w = words; *w; w++) {
        if (!**w) continue;
        if (!first) g_string_append_c(s, ' ');
        append_word(s, *w);
        first = FALSE;
      }
      continue;
    }
    append_word(s, value);
  }
  return g_string_free(g_steal_pointer(&s), FALSE);
}

const char *ptsim_megatron_case_effective_env(const PtsimMegatronCase *c, const char *key) {
  for (guint i = c->env_keys->len; i-- > 0;)
    if (strcmp(c->env_keys->pdata[i], key) == 0) return c->env_values->pdata[i];
  for (size_t i = 0; i < PTSIM_MEGATRON_HARNESS_ENV; i++)
    if (strcmp(ptsim_megatron_harness_env[i][0], key) == 0) return ptsim_megatron_harness_env[i][1];
  return NULL;
}
