/* torchtitan_schema.c — JobConfig of pytorch/torchtitan@238fa99 as a table
 * of (section, key, type, choices); see torchtitan_schema.h.
 *
 * Transcribed field by field from torchtitan/config/job_config.py at that
 * commit (the dataclasses Job ... Debug, nested DataLoader, Float8Linear,
 * MXLinear, Float8GroupedMM, MXGroupedMM).  `module_fqns_per_model_part`
 * (list[list[str]]) is a non-empty array of arrays of strings. */
#include "torchtitan_schema.h"

#include <math.h>
#include <string.h>

#include "config.h"

#define K_STR PTSIM_TORCHTITAN_STR
#define K_INT PTSIM_TORCHTITAN_INT
#define K_FLOAT PTSIM_TORCHTITAN_FLOAT
#define K_BOOL PTSIM_TORCHTITAN_BOOL
#define K_STRS PTSIM_TORCHTITAN_STRS
#define K_STRS_STR PTSIM_TORCHTITAN_STRS_STR
#define K_NESTED PTSIM_TORCHTITAN_NESTED
typedef PtsimTorchtitanKind Kind;

typedef struct {
  const char *table;
  const char *key;
  Kind kind;
  const char *choices; /* "a|b|c" for Literal fields, else NULL */
} Field;

static const Field fields[] = {
    {"job", "config_file", K_STR, NULL},
    {"job", "dump_folder", K_STR, NULL},
    {"job", "description", K_STR, NULL},
    {"job", "print_config", K_BOOL, NULL},
    {"job", "save_config_file", K_STR, NULL},
    {"job", "custom_config_module", K_STR, NULL},
    {"profiling", "enable_profiling", K_BOOL, NULL},
    {"profiling", "save_traces_folder", K_STR, NULL},
    {"profiling", "profile_freq", K_INT, NULL},
    {"profiling", "profiler_active", K_INT, NULL},
    {"profiling", "profiler_warmup", K_INT, NULL},
    {"profiling", "enable_memory_snapshot", K_BOOL, NULL},
    {"profiling", "save_memory_snapshot_folder", K_STR, NULL},
    {"metrics", "log_freq", K_INT, NULL},
    {"metrics", "enable_tensorboard", K_BOOL, NULL},
    {"metrics", "disable_color_printing", K_BOOL, NULL},
    {"metrics", "save_tb_folder", K_STR, NULL},
    {"metrics", "save_for_all_ranks", K_BOOL, NULL},
    {"metrics", "enable_wandb", K_BOOL, NULL},
    {"model", "name", K_STR, NULL},
    {"model", "flavor", K_STR, NULL},
    {"model", "hf_assets_path", K_STR, NULL},
    {"model", "tokenizer_path", K_STR, NULL},
    {"model", "converters", K_STRS, NULL},
    {"model", "print_after_conversion", K_BOOL, NULL},
    {"optimizer", "name", K_STR, NULL},
    {"optimizer", "lr", K_FLOAT, NULL},
    {"optimizer", "beta1", K_FLOAT, NULL},
    {"optimizer", "beta2", K_FLOAT, NULL},
    {"optimizer", "eps", K_FLOAT, NULL},
    {"optimizer", "weight_decay", K_FLOAT, NULL},
    {"optimizer", "implementation", K_STR, "for-loop|foreach|fused"},
    {"optimizer", "early_step_in_backward", K_BOOL, NULL},
    {"lr_scheduler", "warmup_steps", K_INT, NULL},
    {"lr_scheduler", "total_steps", K_INT, NULL},
    {"lr_scheduler", "decay_ratio", K_FLOAT, NULL},
    {"lr_scheduler", "decay_type", K_STR, "linear|sqrt|cosine"},
    {"lr_scheduler", "min_lr_factor", K_FLOAT, NULL},
    {"training", "dataset", K_STR, NULL},
    {"training", "dataset_path", K_STR, NULL},
    {"training", "local_batch_size", K_INT, NULL},
    {"training", "global_batch_size", K_INT, NULL},
    {"training", "seq_len", K_INT, NULL},
    {"training", "max_norm", K_FLOAT, NULL},
    {"training", "steps", K_INT, NULL},
    {"training", "enable_cpu_offload", K_BOOL, NULL},
    {"training", "dtype", K_STR, "bfloat16|float32"},
    {"training", "mixed_precision_param", K_STR, "bfloat16|float32"},
    {"training", "mixed_precision_reduce", K_STR, "float32"},
    {"training", "gc_freq", K_INT, NULL},
    {"training", "gc_debug", K_BOOL, NULL},
    {"training.dataloader", "num_workers", K_INT, NULL},
    {"training.dataloader", "persistent_workers", K_BOOL, NULL},
    {"training.dataloader", "pin_memory", K_BOOL, NULL},
    {"training.dataloader", "prefetch_factor", K_INT, NULL},
    {"parallelism", "data_parallel_replicate_degree", K_INT, NULL},
    {"parallelism", "data_parallel_shard_degree", K_INT, NULL},
    {"parallelism", "fsdp_reshard_after_forward", K_STR, "default|always|never"},
    {"parallelism", "tensor_parallel_degree", K_INT, NULL},
    {"parallelism", "disable_loss_parallel", K_BOOL, NULL},
    {"parallelism", "enable_async_tensor_parallel", K_BOOL, NULL},
    {"parallelism", "pipeline_parallel_degree", K_INT, NULL},
    {"parallelism", "module_fqns_per_model_part", K_NESTED, NULL},
    {"parallelism", "pipeline_parallel_first_stage_less_layers", K_INT, NULL},
    {"parallelism", "pipeline_parallel_last_stage_less_layers", K_INT, NULL},
    {"parallelism", "pipeline_parallel_layers_per_stage", K_INT, NULL},
    {"parallelism", "pipeline_parallel_schedule", K_STR, NULL},
    {"parallelism", "pipeline_parallel_schedule_csv", K_STR, NULL},
    {"parallelism", "pipeline_parallel_microbatch_size", K_INT, NULL},
    {"parallelism", "pipeline_parallel_expert_parallel_overlap", K_BOOL, NULL},
    {"parallelism", "context_parallel_degree", K_INT, NULL},
    {"parallelism", "context_parallel_load_balancer", K_STR, NULL},
    {"parallelism", "context_parallel_rotate_method", K_STR, "allgather|alltoall"},
    {"parallelism", "expert_parallel_degree", K_INT, NULL},
    {"parallelism", "expert_tensor_parallel_degree", K_INT, NULL},
    {"parallelism", "expert_parallel_comm_backend", K_STR, "standard|deepep"},
    {"checkpoint", "enable", K_BOOL, NULL},
    {"checkpoint", "enable_ft_dataloader_checkpoints", K_BOOL, NULL},
    {"checkpoint", "folder", K_STR, NULL},
    {"checkpoint", "interval", K_INT, NULL},
    {"checkpoint", "initial_load_path", K_STR, NULL},
    {"checkpoint", "initial_load_model_only", K_BOOL, NULL},
    {"checkpoint", "initial_load_in_hf", K_BOOL, NULL},
    {"checkpoint", "initial_load_in_hf_quantized", K_BOOL, NULL},
    {"checkpoint", "last_save_model_only", K_BOOL, NULL},
    {"checkpoint", "last_save_in_hf", K_BOOL, NULL},
    {"checkpoint", "export_dtype", K_STR, "float16|bfloat16|float32"},
    {"checkpoint", "async_mode", K_STR, "disabled|async|async_with_pinned_mem"},
    {"checkpoint", "keep_latest_k", K_INT, NULL},
    {"checkpoint", "load_step", K_INT, NULL},
    {"checkpoint", "exclude_from_loading", K_STRS, NULL},
    {"checkpoint", "enable_first_step_checkpoint", K_BOOL, NULL},
    {"checkpoint", "create_seed_checkpoint", K_BOOL, NULL},
    {"checkpoint", "load_only", K_BOOL, NULL},
    {"activation_checkpoint", "mode", K_STR, "selective|full|memory_budget|none"},
    {"activation_checkpoint", "selective_ac_option", K_STR, NULL},
    {"activation_checkpoint", "per_op_sac_force_recompute_mm_shapes_by_fqns", K_STRS, NULL},
    {"activation_checkpoint", "early_stop", K_BOOL, NULL},
    {"activation_checkpoint", "memory_budget", K_FLOAT, NULL},
    {"activation_checkpoint", "visualize_memory_budget_pareto", K_BOOL, NULL},
    {"activation_checkpoint", "preserve_rng_state", K_BOOL, NULL},
    {"activation_checkpoint", "determinism_check", K_STR, NULL},
    {"activation_checkpoint", "debug", K_BOOL, NULL},
    {"compile", "enable", K_BOOL, NULL},
    {"compile", "components", K_STRS, NULL},
    {"compile", "backend", K_STR, NULL},
    {"quantize.linear.float8", "enable_fsdp_float8_all_gather", K_BOOL, NULL},
    {"quantize.linear.float8", "precompute_float8_dynamic_scale_for_fsdp", K_BOOL, NULL},
    {"quantize.linear.float8", "recipe_name", K_STR, "tensorwise|rowwise|rowwise_with_gw_hp"},
    {"quantize.linear.float8", "filter_fqns", K_STRS, NULL},
    {"quantize.linear.float8", "emulate", K_BOOL, NULL},
    {"quantize.linear.mx", "mxfp8_dim1_cast_kernel_choice", K_STR, "triton|cuda|torch"},
    {"quantize.linear.mx", "recipe_name", K_STR, NULL},
    {"quantize.linear.mx", "filter_fqns", K_STRS, NULL},
    {"quantize.grouped_mm.float8", "fqns", K_STRS_STR, NULL},
    {"quantize.grouped_mm.mx", "recipe_name", K_STR, "mxfp8"},
    {"quantize.grouped_mm.mx", "fqns", K_STRS_STR, NULL},
    {"comm", "init_timeout_seconds", K_INT, NULL},
    {"comm", "train_timeout_seconds", K_INT, NULL},
    {"comm", "trace_buf_size", K_INT, NULL},
    {"comm", "save_traces_folder", K_STR, NULL},
    {"comm", "save_traces_file_prefix", K_STR, NULL},
    {"comm", "mode", K_STR, "default|fake_backend|local_tensor"},
    {"memory_estimation", "enable", K_BOOL, NULL},
    {"memory_estimation", "disable_fake_mode", K_BOOL, NULL},
    {"fault_tolerance", "enable", K_BOOL, NULL},
    {"fault_tolerance", "process_group", K_STR, NULL},
    {"fault_tolerance", "process_group_timeout_ms", K_INT, NULL},
    {"fault_tolerance", "replica_id", K_INT, NULL},
    {"fault_tolerance", "group_size", K_INT, NULL},
    {"fault_tolerance", "min_replica_size", K_INT, NULL},
    {"fault_tolerance", "semi_sync_method", K_STR, NULL},
    {"experimental", "custom_import", K_STR, NULL},
    {"experimental", "custom_args_module", K_STR, NULL},
    {"validation", "enable", K_BOOL, NULL},
    {"validation", "dataset", K_STR, NULL},
    {"validation", "dataset_path", K_STR, NULL},
    {"validation", "local_batch_size", K_INT, NULL},
    {"validation", "seq_len", K_INT, NULL},
    {"validation", "freq", K_INT, NULL},
    {"validation", "steps", K_INT, NULL},
    {"validation.dataloader", "num_workers", K_INT, NULL},
    {"validation.dataloader", "persistent_workers", K_BOOL, NULL},
    {"validation.dataloader", "pin_memory", K_BOOL, NULL},
    {"validation.dataloader", "prefetch_factor", K_INT, NULL},
    {"debug", "seed", K_INT, NULL},
    {"debug", "deterministic", K_BOOL, NULL},
    {"debug", "deterministic_warn_only", K_BOOL, NULL},
    {"debug", "moe_force_load_balance", K_BOOL, NULL},
};

/* Sections that only hold other sections (a header is allowed, keys not). */
static const char *const parent_tables[] = {"quantize", "quantize.linear", "quantize.grouped_mm"};

/* Keys and sections of older torchtitan configs, and where they went
 * (dates from the repository's history). */
static const struct {
  const char *table, *key, *hint;
} renamed[] = {
    {"training", "batch_size", "renamed [training] local_batch_size (2025-06)"},
    {"training", "data_parallel_degree",
     "split into [parallelism] data_parallel_replicate_degree and data_parallel_shard_degree"},
    {"training", "data_parallel_shard_degree", "moved to [parallelism] (2025-03)"},
    {"training", "data_parallel_replicate_degree", "moved to [parallelism] (2025-03)"},
    {"training", "tensor_parallel_degree", "moved to [parallelism] (2025-03)"},
    {"training", "enable_async_tensor_parallel", "moved to [parallelism] (2025-03)"},
    {"training", "compile", "moved to [compile] enable (2025-08)"},
    {"training", "warmup_steps", "moved to [lr_scheduler] (2025-03)"},
    {"experimental", "pipeline_parallel_degree", "moved to [parallelism] (2025-03)"},
    {"experimental", "context_parallel_degree", "moved to [parallelism] (2025-03)"},
    {"parallelism", "pipeline_parallel_microbatches",
     "replaced by pipeline_parallel_microbatch_size (2025-04)"},
    {"float8", NULL,
     "renamed [quantize.linear.float8] (2025-09), with the converter \"quantize.linear.float8\""},
};

static gboolean table_known(const char *table) {
  for (size_t i = 0; i < G_N_ELEMENTS(fields); i++)
    if (strcmp(fields[i].table, table) == 0) return TRUE;
  for (size_t i = 0; i < G_N_ELEMENTS(parent_tables); i++)
    if (strcmp(parent_tables[i], table) == 0) return TRUE;
  return FALSE;
}

static const Field *field_of(const char *table, const char *key) {
  for (size_t i = 0; i < G_N_ELEMENTS(fields); i++)
    if (strcmp(fields[i].table, table) == 0 && strcmp(fields[i].key, key) == 0) return &fields[i];
  return NULL;
}

static const char *hint_of(const char *table, const char *key) {
  for (size_t i = 0; i < G_N_ELEMENTS(renamed); i++)
    if (strcmp(renamed[i].table, table) == 0 &&
        (renamed[i].key == NULL || (key != NULL && strcmp(renamed[i].key, key) == 0)))
      return renamed[i].hint;
  return NULL;
}

/* "a, b, c": the keys of TABLE, or the sections when TABLE is NULL. */
static char *known_names(const char *table) {
  GString *s = g_string_new("");
  const char *last = "";
  for (size_t i = 0; i < G_N_ELEMENTS(fields); i++) {
    const char *name = table ? fields[i].key : fields[i].table;
    if (table ? strcmp(fields[i].table, table) != 0 : strcmp(name, last) == 0) continue;
    g_string_append_printf(s, "%s%s%s%s", s->len ? ", " : "", table ? "" : "[", name,
                           table ? "" : "]");
    last = name;
  }
  return g_string_free(s, FALSE);
}

static gboolean unknown(const PtsimToml *toml, int line, const char *table, const char *key,
                        GError **error) {
  const char *hint = hint_of(table, key);
  g_autofree char *names = known_names(key ? table : NULL);
  if (key == NULL || !table_known(table))
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                "%s:%d: unknown section [%s] in a torchtitan config (JobConfig at torchtitan "
                "238fa99); %s%s",
                toml->path, line, table, hint ? hint : "allowed: ", hint ? "" : names);
  else
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                "%s:%d: unknown key '%s' in [%s] (JobConfig at torchtitan 238fa99); %s%s",
                toml->path, line, key, table, hint ? hint : "allowed: ", hint ? "" : names);
  return FALSE;
}

static gboolean kind_ok(Kind kind, const PtsimTomlValue *v) {
  gboolean strings = v->type == PTSIM_TOML_ARRAY && v->item_type == PTSIM_TOML_STRING;
  switch (kind) {
  case K_STR:
    return v->type == PTSIM_TOML_STRING;
  case K_INT:
    return v->type == PTSIM_TOML_INTEGER;
  case K_FLOAT:
    return v->type == PTSIM_TOML_FLOAT || v->type == PTSIM_TOML_INTEGER;
  case K_BOOL:
    return v->type == PTSIM_TOML_BOOL;
  case K_STRS:
    return strings;
  case K_STRS_STR:
    return strings || v->type == PTSIM_TOML_STRING;
  case K_NESTED:
    if (v->type != PTSIM_TOML_ARRAY || v->items->len == 0 || v->item_type != PTSIM_TOML_ARRAY)
      return FALSE;
    for (guint i = 0; i < v->items->len; i++)
      if (((const PtsimTomlValue *)v->items->pdata[i])->item_type != PTSIM_TOML_STRING)
        return FALSE;
    return TRUE;
  case PTSIM_TORCHTITAN_UNKNOWN:
    return FALSE;
  }
  return FALSE;
}

static const char *kind_name(Kind kind) {
  switch (kind) {
  case K_STR:
    return "a string";
  case K_INT:
    return "an integer";
  case K_FLOAT:
    return "a number";
  case K_BOOL:
    return "true or false";
  case K_STRS:
    return "an array of strings";
  case K_STRS_STR:
    return "a string or an array of strings";
  case K_NESTED:
    return "an array of arrays of strings (each model part's module names)";
  case PTSIM_TORCHTITAN_UNKNOWN:
    return "no field";
  }
  return "?";
}

static gboolean choice_ok(const char *choices, const char *word) {
  g_auto(GStrv) options = g_strsplit(choices, "|", -1);
  return g_strv_contains((const char *const *)options, word);
}

gboolean ptsim_torchtitan_check_schema(const PtsimToml *toml, GError **error) {
  for (guint i = 0; i < toml->tables->len; i++) {
    const PtsimTomlTable *t = g_ptr_array_index(toml->tables, i);
    if (!table_known(t->name)) return unknown(toml, t->line, t->name, NULL, error);
  }
  for (guint i = 0; i < toml->entries->len; i++) {
    const PtsimTomlEntry *e = g_ptr_array_index(toml->entries, i);
    if (e->table[0] == '\0') {
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                  "%s:%d: key '%s' before any [section]; a torchtitan config puts every key "
                  "in a section such as [training] or [parallelism]",
                  toml->path, e->line, e->key);
      return FALSE;
    }
    const Field *f = field_of(e->table, e->key);
    if (f == NULL) return unknown(toml, e->line, e->table, e->key, error);
    if (!kind_ok(f->kind, &e->value)) {
      const char *got = e->value.type == PTSIM_TOML_ARRAY && e->value.items->len > 0
                            ? ptsim_toml_type_name(e->value.item_type)
                            : ptsim_toml_type_name(e->value.type);
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                  "%s:%d: [%s] %s is %s %s%s; expected %s", toml->path, e->line, e->table, e->key,
                  e->value.type == PTSIM_TOML_ARRAY ? "an array of" : "a", got,
                  e->value.type == PTSIM_TOML_ARRAY ? "s" : "", kind_name(f->kind));
      return FALSE;
    }
    if (f->choices && !choice_ok(f->choices, e->value.string)) {
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                  "%s:%d: [%s] %s = '%s' is not allowed: expected one of %s", toml->path, e->line,
                  e->table, e->key, e->value.string, f->choices);
      return FALSE;
    }
  }
  return TRUE;
}

PtsimTorchtitanKind ptsim_torchtitan_field_kind(const char *table, const char *key,
                                                const char **choices) {
  const Field *f = field_of(table, key);
  if (choices) *choices = f ? f->choices : NULL;
  return f ? f->kind : PTSIM_TORCHTITAN_UNKNOWN;
}

static void item_free(gpointer data) {
  ptsim_toml_value_clear(data);
  g_free(data);
}

/* A command-line word as tyro reads it for the field's type: integers in
 * decimal, floats as strtod, booleans True/False (either case), lists
 * comma-separated (torchtitan's list_str_rule). */
gboolean ptsim_torchtitan_value_parse(PtsimTorchtitanKind kind, const char *text,
                                      PtsimTomlValue *out) {
  memset(out, 0, sizeof *out);
  switch (kind) {
  case K_STR:
    out->type = PTSIM_TOML_STRING;
    out->string = g_strdup(text);
    return TRUE;
  case K_INT: {
    gint64 v = 0;
    if (!g_ascii_string_to_signed(text, 10, G_MININT64, G_MAXINT64, &v, NULL)) return FALSE;
    out->type = PTSIM_TOML_INTEGER;
    out->integer = v;
    return TRUE;
  }
  case K_FLOAT: {
    char *end = NULL;
    double v = g_ascii_strtod(text, &end);
    if (text[0] == '\0' || *end != '\0' || !isfinite(v)) return FALSE;
    out->type = PTSIM_TOML_FLOAT;
    out->number = v;
    return TRUE;
  }
  case K_BOOL:
    if (g_ascii_strcasecmp(text, "true") != 0 && g_ascii_strcasecmp(text, "false") != 0)
      return FALSE;
    out->type = PTSIM_TOML_BOOL;
    out->boolean = g_ascii_strcasecmp(text, "true") == 0;
    return TRUE;
  case K_STRS:
  case K_STRS_STR: {
    out->type = PTSIM_TOML_ARRAY;
    out->item_type = PTSIM_TOML_STRING;
    out->items = g_ptr_array_new_with_free_func(item_free);
    g_auto(GStrv) parts = g_strsplit(text, ",", -1);
    for (char **p = parts; text[0] != '\0' && *p; p++) {
      PtsimTomlValue *item = g_new0(PtsimTomlValue, 1);
      item->type = PTSIM_TOML_STRING;
      item->string = g_strdup(*p);
      g_ptr_array_add(out->items, item);
    }
    return TRUE;
  }
  case K_NESTED:
  case PTSIM_TORCHTITAN_UNKNOWN:
    return FALSE;
  }
  return FALSE;
}

const char *ptsim_torchtitan_kind_name(PtsimTorchtitanKind kind) { return kind_name(kind); }

char **ptsim_torchtitan_field_list(void) {
  GPtrArray *out = g_ptr_array_new();
  for (size_t i = 0; i < G_N_ELEMENTS(fields); i++)
    g_ptr_array_add(out, g_strdup_printf("%s.%s", fields[i].table, fields[i].key));
  g_ptr_array_add(out, NULL);
  return (char **)g_ptr_array_free(out, FALSE);
}
