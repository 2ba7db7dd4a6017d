/* megatron_log.c — Megatron-LM training logs into PtsimMegatronLog.
 *
 * What it is: one pass over a private copy of the log (NULs replaced, lines
 * cut in place), a matcher per kind of line (arguments entry, iteration,
 * memory, out of memory) working on one NUL-terminated line with strstr
 * and hand-written scanners, and, after the pass, the arguments block
 * turned back into Megatron-LM flags for megatron_args.c.  The formats and
 * the failure behaviour are in megatron_log.h.
 *
 * What it is not: a regex engine or a tokenizer of every Megatron-LM line;
 * lines it does not recognise are dropped without a word.
 *
 * Invariant: every scanner moves forward only, so the work per line is
 * linear in its length (a 10 MB line of "iteration iteration ..." is one
 * strstr sweep, not one per candidate). */
#include "megatron_log.h"
#include "input.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "numbers.h"
#include "megatron_args.h"

/* The domain name keeps its dashes (clang-format 14 would space them). */
/* clang-format off */
G_DEFINE_QUARK(ptsim-megatron-log-error-quark, ptsim_megatron_log_error)
/* clang-format on */

#define TRUNCATED_MARK "[...truncated by store]"
#define ARGS_BEGIN "-- arguments --"
#define ARGS_END "-- end of arguments --"

/* ---- small scanners ---- */

static gboolean is_blank(char c) { return c == ' ' || c == '\t'; }

static gboolean is_digit(char c) { return c >= '0' && c <= '9'; }

/* [begin, end) with blanks stripped on both sides; returns the new length. */
static size_t trim(const char **begin, const char *end) {
  const char *b = *begin;
  while (b < end && is_blank(*b)) b++;
  while (end > b && is_blank(end[-1])) end--;
  *begin = b;
  return (size_t)(end - b);
}

/* The number in [text, text+len) (blanks allowed around), strictly: the
 * whole field must be one finite number.  Long fields are refused. */
static gboolean field_double(const char *text, size_t len, double *out) {
  char buf[64];
  len = trim(&text, text + len);
  if (len == 0 || len >= sizeof buf) return FALSE;
  memcpy(buf, text, len);
  buf[len] = '\0';
  return ptsim_number_parse_double(buf, out);
}

static gboolean field_int(const char *text, size_t len, int64_t *out) {
  char buf[32];
  len = trim(&text, text + len);
  if (len == 0 || len >= sizeof buf) return FALSE;
  memcpy(buf, text, len);
  buf[len] = '\0';
  return ptsim_number_parse_int64(buf, out);
}

/* Reads digits at *p (at most 18, so no overflow); FALSE when none. */
static gboolean scan_uint(const char **p, int64_t *out) {
  const char *s = *p;
  int64_t v = 0;
  int n = 0;
  while (is_digit(*s) && n < 18) {
    v = v * 10 + (*s - '0');
    s++;
    n++;
  }
  if (n == 0 || is_digit(*s)) return FALSE;
  *p = s;
  *out = v;
  return TRUE;
}

static gboolean key_is(const char *key, size_t len, const char *want) {
  return strlen(want) == len && memcmp(key, want, len) == 0;
}

/* ---- the result ---- */

void ptsim_megatron_log_free(PtsimMegatronLog *log) {
  if (log == NULL) return;
  g_free(log->path);
  g_array_unref(log->iterations);
  g_array_unref(log->memory);
  g_hash_table_unref(log->args);
  g_hash_table_unref(log->arg_lines);
  g_clear_error(&log->args_error);
  ptsim_megatron_diagnostics_free(log->args_diag);
  g_free(log->args_command);
  g_ptr_array_unref(log->warnings);
  g_free(log);
}

static PtsimMegatronLog *log_new(const char *name) {
  PtsimMegatronLog *log = g_new0(PtsimMegatronLog, 1);
  log->path = g_strdup(name != NULL ? name : "<log>");
  log->iterations = g_array_new(FALSE, TRUE, sizeof(PtsimLogIteration));
  log->memory = g_array_new(FALSE, TRUE, sizeof(PtsimLogMemory));
  log->args = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  log->arg_lines = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  log->args_diag = ptsim_megatron_diagnostics_new();
  log->warnings = g_ptr_array_new_with_free_func(g_free);
  log->oom_request_bytes = NAN;
  return log;
}

/* Warnings are capped so a garbage log cannot grow them without bound. */
#define MAX_WARNINGS 1000

static void warn(PtsimMegatronLog *log, int64_t line, const char *what, const char *text,
                 size_t len) {
  if (log->warnings->len >= MAX_WARNINGS) return;
  len = trim(&text, text + len);
  if (len > 80) len = 80;
  g_autofree char *shown = g_utf8_make_valid(text, (gssize)len);
  g_ptr_array_add(log->warnings, g_strdup_printf("%s:%" G_GINT64_FORMAT ": %s: '%s'", log->path,
                                                 (gint64)line, what, shown));
}

/* ---- iteration lines ---- */

/* "[YYYY-MM-DD HH:MM:SS]" or "[YYYY-MM-DD HH:MM:SS.ffffff]" somewhere in
 * [line, end): seconds since 1970 (as UTC), or NAN. */
static double find_timestamp(const char *line, const char *end) {
  for (const char *b = memchr(line, '[', (size_t)(end - line)); b != NULL;
       b = memchr(b + 1, '[', (size_t)(end - b - 1))) {
    const char *q = b + 1;
    int64_t f[6];
    static const char sep[6] = {'-', '-', ' ', ':', ':', '\0'};
    static const int width[6] = {4, 2, 2, 2, 2, 2};
    gboolean ok = TRUE;
    for (int k = 0; k < 6 && ok; k++) {
      const char *start = q;
      ok = scan_uint(&q, &f[k]) && q - start == width[k] && (k == 5 || *q++ == sep[k]);
    }
    if (!ok) continue;
    double frac = 0.0;
    if (*q == '.') {
      const char *start = q;
      q++;
      while (is_digit(*q)) q++;
      if (!field_double(start, (size_t)(q - start), &frac)) continue;
    }
    if (*q != ']') continue;
    g_autoptr(GDateTime) t = g_date_time_new_utc((gint)f[0], (gint)f[1], (gint)f[2], (gint)f[3],
                                                 (gint)f[4], (gdouble)f[5]);
    if (t == NULL) continue;
    return (double)g_date_time_to_unix(t) + frac;
  }
  return NAN;
}

/* Finds "iteration" + blanks + N + "/" + blanks + M in LINE; returns the
 * position after M, or NULL. */
static const char *find_iteration(const char *line, const char **at, int64_t *n, int64_t *m) {
  const char *p = line;
  while ((p = strstr(p, "iteration")) != NULL) {
    *at = p;
    const char *q = p + strlen("iteration");
    p = q;
    if (!is_blank(*q)) continue;
    while (is_blank(*q)) q++;
    if (!scan_uint(&q, n) || *q != '/') continue;
    q++;
    while (is_blank(*q)) q++;
    if (!scan_uint(&q, m)) continue;
    return q;
  }
  return NULL;
}

static void read_iteration(PtsimMegatronLog *log, int64_t line_no, const char *line, const char *at,
                           const char *rest, int64_t n, int64_t m) {
  PtsimLogIteration it = {.iteration = n,
                          .train_iters = m,
                          .elapsed_ms = NAN,
                          .tflops_per_gpu = NAN,
                          .gbs = -1,
                          .consumed_samples = -1,
                          .skipped = -1,
                          .nan_iterations = -1,
                          .timestamp_s = find_timestamp(line, at),
                          .line = line_no};
  /* Fields are "key: value |"; the text after the last '|' is cut off. */
  const char *seg = rest;
  const char *bar;
  while ((bar = strchr(seg, '|')) != NULL) {
    const char *colon = memchr(seg, ':', (size_t)(bar - seg));
    if (colon != NULL) {
      const char *key = seg;
      size_t key_len = trim(&key, colon);
      const char *value = colon + 1;
      size_t value_len = (size_t)(bar - value);
      gboolean ok = TRUE;
      if (key_is(key, key_len, "elapsed time per iteration (ms)"))
        ok = field_double(value, value_len, &it.elapsed_ms);
      else if (key_is(key, key_len, "throughput per GPU (TFLOP/s/GPU)"))
        ok = field_double(value, value_len, &it.tflops_per_gpu);
      else if (key_is(key, key_len, "global batch size"))
        ok = field_int(value, value_len, &it.gbs);
      else if (key_is(key, key_len, "consumed samples"))
        ok = field_int(value, value_len, &it.consumed_samples);
      else if (key_is(key, key_len, "number of skipped iterations"))
        ok = field_int(value, value_len, &it.skipped);
      else if (key_is(key, key_len, "number of nan iterations"))
        ok = field_int(value, value_len, &it.nan_iterations);
      if (!ok) {
        warn(log, line_no, "iteration field not read", seg, (size_t)(bar - seg));
        /* a refused value stays "absent" */
        if (key_is(key, key_len, "elapsed time per iteration (ms)"))
          it.elapsed_ms = NAN;
        else if (key_is(key, key_len, "throughput per GPU (TFLOP/s/GPU)"))
          it.tflops_per_gpu = NAN;
      }
    }
    seg = bar + 1;
  }
  if (isnan(it.elapsed_ms) && strstr(seg, "elapsed time per iteration") != NULL)
    warn(log, line_no, "elapsed time cut off", seg, strlen(seg));
  g_array_append_val(log->iterations, it);
}

/* ---- memory lines ---- */

static void read_memory(PtsimMegatronLog *log, int64_t line_no, const char *line,
                        const char *marker, gboolean cut) {
  PtsimLogMemory mem = {.rank = -1,
                        .after_iterations = -1,
                        .allocated_mb = NAN,
                        .max_allocated_mb = NAN,
                        .reserved_mb = NAN,
                        .max_reserved_mb = NAN,
                        .line = line_no};
  size_t prefix_len = (size_t)(marker - line);
  const char *r = g_strstr_len(line, (gssize)prefix_len, "[Rank ");
  if (r != NULL) {
    const char *q = r + strlen("[Rank ");
    int64_t v;
    if (scan_uint(&q, &v) && *q == ']') mem.rank = v;
  }
  /* "after N iterations" (2020) or "(after N iterations)" (core_r0.6+) */
  const char *a = line;
  while ((a = g_strstr_len(a, (gssize)(marker - a), "after ")) != NULL) {
    const char *q = a + strlen("after ");
    a = q;
    int64_t v;
    if (scan_uint(&q, &v) && strncmp(q, " iteration", 10) == 0) {
      mem.after_iterations = v;
      break;
    }
  }
  int fields = 0;
  const char *seg = marker + strlen("memory (MB)");
  while (*seg != '\0') {
    const char *bar = strchr(seg, '|');
    const char *end = bar != NULL ? bar : seg + strlen(seg);
    if (bar == NULL && cut) break; /* the last field was cut off */
    const char *colon = memchr(seg, ':', (size_t)(end - seg));
    if (colon != NULL) {
      const char *key = seg;
      size_t key_len = trim(&key, colon);
      double *slot = NULL;
      if (key_is(key, key_len, "allocated"))
        slot = &mem.allocated_mb;
      else if (key_is(key, key_len, "max allocated"))
        slot = &mem.max_allocated_mb;
      else if (key_is(key, key_len, "reserved"))
        slot = &mem.reserved_mb;
      else if (key_is(key, key_len, "max reserved"))
        slot = &mem.max_reserved_mb;
      if (slot != NULL) {
        if (field_double(colon + 1, (size_t)(end - colon - 1), slot))
          fields++;
        else
          warn(log, line_no, "memory field not read", seg, (size_t)(end - seg));
      }
    }
    if (bar == NULL) break;
    seg = bar + 1;
  }
  if (fields == 0) {
    warn(log, line_no, "memory line without values", line, strlen(line));
    return;
  }
  g_array_append_val(log->memory, mem);
}

/* ---- out of memory ---- */

static void read_oom(PtsimMegatronLog *log, int64_t line_no, const char *line) {
  log->oom = TRUE;
  log->oom_count++;
  if (log->oom_line == 0) log->oom_line = line_no;
  if (!isnan(log->oom_request_bytes)) return;
  const char *t = strstr(line, "Tried to allocate ");
  if (t == NULL) return;
  t += strlen("Tried to allocate ");
  const char *unit = t;
  while (is_digit(*unit) || *unit == '.') unit++;
  double v;
  if (!field_double(t, (size_t)(unit - t), &v) || *unit != ' ') return;
  unit++;
  static const struct {
    const char *word;
    double scale;
  } units[] = {{"bytes", 1.0},           {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0},
               {"TiB", 1099511627776.0}, {"KB", 1024.0},  {"MB", 1048576.0},  {"GB", 1073741824.0}};
  for (size_t k = 0; k < G_N_ELEMENTS(units); k++) {
    size_t n = strlen(units[k].word);
    if (strncmp(unit, units[k].word, n) == 0 && !g_ascii_isalpha(unit[n])) {
      log->oom_request_bytes = v * units[k].scale;
      return;
    }
  }
  warn(log, line_no, "out-of-memory request size not read", t, strlen(t));
}

/* ---- the arguments block ---- */

/* "  name ........ value" (after the block's common prefix): stores
 * name -> value and returns TRUE, or FALSE when LINE is not of that form. */
static gboolean read_arg(PtsimMegatronLog *log, int64_t line_no, const char *line) {
  const char *p = line;
  while (is_blank(*p)) p++;
  const char *name = p;
  while (g_ascii_isalnum(*p) || *p == '_') p++;
  size_t name_len = (size_t)(p - name);
  if (name_len == 0 || *p != ' ') return FALSE;
  p++;
  if (*p == '.') { /* the dots: 48 - len(name) of them (none when longer) */
    while (*p == '.') p++;
    if (*p != ' ' && *p != '\0') return FALSE;
  } else if (*p != ' ' || name_len < 48) {
    return FALSE; /* no dots only for names of 48 characters or more */
  }
  const char *value = p;
  size_t value_len = trim(&value, value + strlen(value));
  g_hash_table_replace(log->args, g_strndup(name, name_len),
                       g_utf8_make_valid(value, (gssize)value_len));
  g_hash_table_replace(log->arg_lines, g_strndup(name, name_len),
                       GINT_TO_POINTER((gint)MIN(line_no, (int64_t)G_MAXINT)));
  return TRUE;
}

typedef enum {
  A_VALUE,  /* --flag VALUE unless "None" */
  A_SWITCH, /* --flag when "True" */
  A_NOT,    /* --flag when "False" (store_false destinations) */
  A_ENUM,   /* "AttnBackend.auto" -> --flag auto */
  A_DTYPE,  /* "torch.bfloat16" -> --flag bf16 */
  A_LIST    /* "['core_attn', 'mlp']" -> --flag core_attn mlp */
} ArgKind;

/* Argument names as Megatron-LM prints them (argparse destinations) and
 * the flags megatron_args.c reads.  Virtual stages are handled apart. */
static const struct {
  const char *name;
  const char *flag;
  ArgKind kind;
} arg_map[] = {
    {"num_layers", "--num-layers", A_VALUE},
    {"hidden_size", "--hidden-size", A_VALUE},
    {"ffn_hidden_size", "--ffn-hidden-size", A_VALUE},
    {"num_attention_heads", "--num-attention-heads", A_VALUE},
    {"group_query_attention", "--group-query-attention", A_SWITCH},
    {"num_query_groups", "--num-query-groups", A_VALUE},
    {"seq_length", "--seq-length", A_VALUE},
    {"micro_batch_size", "--micro-batch-size", A_VALUE},
    {"global_batch_size", "--global-batch-size", A_VALUE},
    {"tensor_model_parallel_size", "--tensor-model-parallel-size", A_VALUE},
    {"pipeline_model_parallel_size", "--pipeline-model-parallel-size", A_VALUE},
    {"context_parallel_size", "--context-parallel-size", A_VALUE},
    {"sequence_parallel", "--sequence-parallel", A_SWITCH},
    {"use_distributed_optimizer", "--use-distributed-optimizer", A_SWITCH},
    {"recompute_granularity", "--recompute-granularity", A_VALUE},
    {"recompute_method", "--recompute-method", A_VALUE},
    {"recompute_num_layers", "--recompute-num-layers", A_VALUE},
    {"swiglu", "--swiglu", A_SWITCH},
    {"untie_embeddings_and_output_weights", "--untie-embeddings-and-output-weights", A_SWITCH},
    {"vocab_size", "--vocab-size", A_VALUE},
    {"padded_vocab_size", "--padded-vocab-size", A_VALUE},
    {"make_vocab_size_divisible_by", "--make-vocab-size-divisible-by", A_VALUE},
    {"bf16", "--bf16", A_SWITCH},
    {"fp16", "--fp16", A_SWITCH},
    {"fp8", "--fp8-format", A_VALUE},
    {"use_flash_attn", "--use-flash-attn", A_SWITCH},
    {"attention_dropout", "--attention-dropout", A_VALUE},
    {"hidden_dropout", "--hidden-dropout", A_VALUE},
    {"normalization", "--normalization", A_VALUE},
    {"add_bias_linear", "--disable-bias-linear", A_NOT},
    {"decoder_first_pipeline_num_layers", "--decoder-first-pipeline-num-layers", A_VALUE},
    {"decoder_last_pipeline_num_layers", "--decoder-last-pipeline-num-layers", A_VALUE},
    {"accumulate_allreduce_grads_in_fp32", "--accumulate-allreduce-grads-in-fp32", A_SWITCH},
    {"kv_channels", "--kv-channels", A_VALUE},
    {"qk_layernorm", "--qk-layernorm", A_SWITCH},
    {"position_embedding_type", "--position-embedding-type", A_VALUE},
    {"max_position_embeddings", "--max-position-embeddings", A_VALUE},
    {"tokenizer_type", "--tokenizer-type", A_VALUE},
    {"tokenizer_model", "--tokenizer-model", A_VALUE},
    {"transformer_impl", "--transformer-impl", A_VALUE},
    {"attention_backend", "--attention-backend", A_ENUM},
    {"overlap_grad_reduce", "--overlap-grad-reduce", A_SWITCH},
    {"overlap_param_gather", "--overlap-param-gather", A_SWITCH},
    {"tp_comm_overlap", "--tp-comm-overlap", A_SWITCH},
    {"tp_comm_overlap_ag", "--no-tp-comm-overlap-ag", A_NOT},
    {"tp_comm_overlap_rs", "--no-tp-comm-overlap-rs", A_NOT},
    {"tp_comm_bulk_dgrad", "--no-tp-comm-bulk-dgrad", A_NOT},
    {"tp_comm_overlap_rs_dgrad", "--tp-comm-overlap-rs-dgrad", A_SWITCH},
    {"grad_reduce_in_bf16", "--grad-reduce-in-bf16", A_SWITCH},
    {"gradient_accumulation_fusion", "--no-gradient-accumulation-fusion", A_NOT},
    {"cross_entropy_loss_fusion", "--cross-entropy-loss-fusion", A_SWITCH},
    {"masked_softmax_fusion", "--no-masked-softmax-fusion", A_NOT},
    {"bias_swiglu_fusion", "--no-bias-swiglu-fusion", A_NOT},
    {"attention_softmax_in_fp32", "--attention-softmax-in-fp32", A_SWITCH},
    {"apply_query_key_layer_scaling", "--apply-query-key-layer-scaling", A_SWITCH},
    {"recompute_modules", "--recompute-modules", A_LIST},
    {"fp8_recipe", "--fp8-recipe", A_VALUE},
    {"fp8_param_gather", "--fp8-param-gather", A_SWITCH},
    {"use_precision_aware_optimizer", "--use-precision-aware-optimizer", A_SWITCH},
    {"main_grads_dtype", "--main-grads-dtype", A_DTYPE},
    {"main_params_dtype", "--main-params-dtype", A_DTYPE},
    {"exp_avg_dtype", "--exp-avg-dtype", A_DTYPE},
    {"exp_avg_sq_dtype", "--exp-avg-sq-dtype", A_DTYPE},
    {"optimizer", "--optimizer", A_VALUE},
    {"num_distributed_optimizer_instances", "--num-distributed-optimizer-instances", A_VALUE},
    {"account_for_embedding_in_pipeline_split", "--account-for-embedding-in-pipeline-split",
     A_SWITCH},
    {"account_for_loss_in_pipeline_split", "--account-for-loss-in-pipeline-split", A_SWITCH},
    {"manual_gc", "--manual-gc", A_SWITCH},
    {"num_experts", "--num-experts", A_VALUE},
    {"expert_model_parallel_size", "--expert-model-parallel-size", A_VALUE},
};

/* Megatron prints dtypes as torch's names; the flags take short ones. */
static const char *dtype_word(const char *v) {
  static const char *const map[][2] = {{"torch.float32", "fp32"},
                                       {"torch.float16", "fp16"},
                                       {"torch.bfloat16", "bf16"},
                                       {"torch.uint8", "fp8"}};
  for (size_t k = 0; k < G_N_ELEMENTS(map); k++)
    if (strcmp(v, map[k][0]) == 0) return map[k][1];
  return v;
}

static const char *arg_value(const PtsimMegatronLog *log, const char *name) {
  const char *v = g_hash_table_lookup(log->args, name);
  return v != NULL && strcmp(v, "None") != 0 && v[0] != '\0' ? v : NULL;
}

static void append_flag(GString *cmd, const char *flag, const char *value) {
  g_string_append_printf(cmd, " %s", flag);
  if (value != NULL) {
    g_autofree char *quoted = g_shell_quote(value);
    g_string_append_printf(cmd, " %s", quoted);
  }
}

/* The line an argument was printed on, so an error points at the bad
 * value rather than the block's header; the header when unknown. */
static int64_t arg_line(const PtsimMegatronLog *log, const char *name) {
  gpointer line = g_hash_table_lookup(log->arg_lines, name);
  return line != NULL ? (int64_t)GPOINTER_TO_INT(line) : log->args_line;
}

/* The line of the argument a megatron_args.c message starts with
 * ("--num-layers 'abc' is not allowed ..."). */
static int64_t flag_line(const PtsimMegatronLog *log, const char *message) {
  if (!g_str_has_prefix(message, "--")) return log->args_line;
  size_t len = strcspn(message, " =");
  g_autofree char *flag = g_strndup(message, len);
  for (size_t k = 0; k < G_N_ELEMENTS(arg_map); k++)
    if (strcmp(arg_map[k].flag, flag) == 0) return arg_line(log, arg_map[k].name);
  g_autofree char *name = g_strdelimit(g_strdup(flag + 2), "-", '_');
  return arg_line(log, name);
}

/* The block as a pretrain_gpt.py command line, then megatron_args.c. */
static void reconstruct_args(PtsimMegatronLog *log) {
  g_autoptr(GString) cmd = g_string_new("pretrain_gpt.py");
  for (size_t k = 0; k < G_N_ELEMENTS(arg_map); k++) {
    const char *v = arg_value(log, arg_map[k].name);
    if (v == NULL) continue;
    switch (arg_map[k].kind) {
    case A_VALUE:
      append_flag(cmd, arg_map[k].flag, v);
      break;
    case A_SWITCH:
      if (strcmp(v, "True") == 0) append_flag(cmd, arg_map[k].flag, NULL);
      break;
    case A_NOT:
      if (strcmp(v, "False") == 0) append_flag(cmd, arg_map[k].flag, NULL);
      break;
    case A_ENUM:
      append_flag(cmd, arg_map[k].flag, strchr(v, '.') ? strchr(v, '.') + 1 : v);
      break;
    case A_DTYPE:
      append_flag(cmd, arg_map[k].flag, dtype_word(v));
      break;
    case A_LIST: {
      g_auto(GStrv) items = g_strsplit_set(v, "[]', ", -1);
      g_string_append_printf(cmd, " %s", arg_map[k].flag);
      for (char **i = items; *i; i++)
        if (**i) g_string_append_printf(cmd, " %s", *i);
      break;
    }
    }
  }
  /* Blocks of releases before Megatron-Core's --transformer-impl come from
   * the legacy model code, where --use-flash-attn decides the attention. */
  if (arg_value(log, "transformer_impl") == NULL ||
      g_strcmp0(arg_value(log, "use_legacy_models"), "True") == 0)
    append_flag(cmd, "--use-legacy-models", NULL);
  /* Virtual stages: validate_args() derives virtual_pipeline_model_parallel_
   * size from the layers-per-stage flag, so the dump holds both; read one. */
  const char *v;
  if ((v = arg_value(log, "num_layers_per_virtual_pipeline_stage")) != NULL)
    append_flag(cmd, "--num-layers-per-virtual-pipeline-stage", v);
  else if ((v = arg_value(log, "num_virtual_stages_per_pipeline_rank")) != NULL)
    append_flag(cmd, "--num-virtual-stages-per-pipeline-rank", v);
  else if ((v = arg_value(log, "virtual_pipeline_model_parallel_size")) != NULL)
    append_flag(cmd, "--num-virtual-stages-per-pipeline-rank", v);

  /* The world size: world_size, else data_parallel_size x tp x pp x cp;
   * given to megatron_args.c as the launcher's WORLD_SIZE. */
  memset(&log->job, 0, sizeof log->job);
  int64_t world = 0;
  if ((v = arg_value(log, "world_size")) != NULL) {
    if (!ptsim_number_parse_int64(v, &world) || world < 1) {
      g_set_error(&log->args_error, PTSIM_MEGATRON_LOG_ERROR, PTSIM_MEGATRON_LOG_ERROR_ARGS,
                  "%s:%" G_GINT64_FORMAT ": arguments block: world_size '%s' "
                  "is not a positive integer",
                  log->path, (gint64)arg_line(log, "world_size"), v);
      return;
    }
  } else if ((v = arg_value(log, "data_parallel_size")) != NULL &&
             ptsim_number_parse_int64(v, &world) && world > 0) {
    const char *const sizes[] = {"tensor_model_parallel_size", "pipeline_model_parallel_size",
                                 "context_parallel_size"};
    for (size_t k = 0; k < G_N_ELEMENTS(sizes); k++) {
      int64_t n = 1;
      const char *w = arg_value(log, sizes[k]);
      if (!w || !ptsim_number_parse_int64(w, &n) || n < 1) continue;
      if (world > G_MAXINT64 / n) { /* no world size: the arguments' own checks speak */
        world = 0;
        break;
      }
      world *= n;
    }
  }
  if (world > 0) {
    g_autofree char *env = g_strdup_printf("WORLD_SIZE=%" G_GINT64_FORMAT " ", (gint64)world);
    g_string_prepend(cmd, env);
  }
  g_free(log->args_command);
  log->args_command = g_strdup(cmd->str);
  g_autoptr(GError) local = NULL;
  if (!ptsim_megatron_args_parse(cmd->str, &log->job, log->args_diag, &local)) {
    g_set_error(&log->args_error, PTSIM_MEGATRON_LOG_ERROR, PTSIM_MEGATRON_LOG_ERROR_ARGS,
                "%s:%" G_GINT64_FORMAT ": arguments block: %s", log->path,
                (gint64)flag_line(log, local->message), local->message);
    return;
  }
  log->args_ok = TRUE;
}

/* ---- the pass ---- */

typedef struct {
  gboolean in_args;  /* between the arguments header and its end */
  char *args_prefix; /* text before the header's dashes (launcher label) */
} PassState;

static void read_line(PtsimMegatronLog *log, PassState *st, int64_t line_no, char *line) {
  gboolean cut = FALSE;
  char *mark = strstr(line, TRUNCATED_MARK);
  if (mark != NULL) {
    *mark = '\0';
    cut = TRUE;
  }

  if (st->in_args) {
    if (strstr(line, ARGS_END) != NULL) {
      st->in_args = FALSE;
      log->args_complete = TRUE;
      return;
    }
    const char *body = line;
    if (st->args_prefix[0] != '\0' && g_str_has_prefix(line, st->args_prefix))
      body = line + strlen(st->args_prefix);
    if (!cut && read_arg(log, line_no, body)) return;
    /* not an entry: another process's line; read it as any other */
  } else if (strstr(line, ARGS_BEGIN) != NULL && strstr(line, ARGS_END) == NULL) {
    if (log->args_found) {
      warn(log, line_no, "second arguments block ignored", line, strlen(line));
      return;
    }
    log->args_found = TRUE;
    log->args_line = line_no;
    st->in_args = TRUE;
    const char *dash = strchr(line, '-');
    g_free(st->args_prefix);
    st->args_prefix = g_strndup(line, (gsize)(dash - line));
    return;
  }

  int64_t n, m;
  const char *at = NULL;
  const char *rest = find_iteration(line, &at, &n, &m);
  if (rest != NULL && strchr(rest, '|') != NULL) read_iteration(log, line_no, line, at, rest, n, m);

  const char *memory = strstr(line, "memory (MB)");
  if (memory != NULL) read_memory(log, line_no, line, memory, cut);

  if (strstr(line, "CUDA out of memory") != NULL || strstr(line, "OutOfMemoryError") != NULL)
    read_oom(log, line_no, line);
}

PtsimMegatronLog *ptsim_megatron_log_parse(const char *data, gsize len, const char *name) {
  g_return_val_if_fail(data != NULL || len == 0, NULL);
  PtsimMegatronLog *log = log_new(name);
  /* A private copy: NULs become '?', lines are cut in place. */
  g_autofree char *text = g_malloc(len + 1);
  if (len > 0) memcpy(text, data, len);
  text[len] = '\0';
  for (char *z = memchr(text, '\0', len); z != NULL; z = memchr(z, '\0', len - (gsize)(z - text)))
    *z = '?';

  PassState st = {FALSE, g_strdup("")};
  char *p = text;
  char *end = text + len;
  int64_t line_no = 0;
  while (p < end) {
    char *nl = memchr(p, '\n', (size_t)(end - p));
    char *line_end = nl != NULL ? nl : end;
    *line_end = '\0';
    line_no++;
    size_t line_len = (size_t)(line_end - p);
    if (line_len > 0 && p[line_len - 1] == '\r') p[--line_len] = '\0';
    if (line_len > PTSIM_MEGATRON_LOG_MAX_LINE)
      log->long_lines++;
    else
      read_line(log, &st, line_no, p);
    p = line_end + 1;
  }
  log->lines = line_no;
  g_free(st.args_prefix);
  if (log->args_found) reconstruct_args(log);
  return log;
}

PtsimMegatronLog *ptsim_megatron_log_read_file(const char *path, GError **error) {
  g_return_val_if_fail(path != NULL, NULL);
  g_return_val_if_fail(error == NULL || *error == NULL, NULL);
  g_autofree char *data = NULL;
  gsize len = 0;
  g_autoptr(GError) local = NULL;
  if (!ptsim_input_read(path, "Megatron-LM log", PTSIM_INPUT_MAX_TABLE, &data, &len, &local)) {
    g_set_error(error, PTSIM_MEGATRON_LOG_ERROR, PTSIM_MEGATRON_LOG_ERROR_NOT_FOUND, "%s",
                local->message);
    return NULL;
  }
  return ptsim_megatron_log_parse(data, len, path);
}

const char *ptsim_megatron_log_arg(const PtsimMegatronLog *log, const char *name) {
  g_return_val_if_fail(log != NULL && name != NULL, NULL);
  return g_hash_table_lookup(log->args, name);
}

/* ---- summary ---- */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y ? 1 : 0;
}

static double median(GArray *values) {
  if (values->len == 0) return NAN;
  g_array_sort(values, cmp_double);
  const double *v = (const double *)values->data;
  guint n = values->len;
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void ptsim_megatron_log_summarize(const PtsimMegatronLog *log, PtsimMegatronLogSummary *out) {
  g_return_if_fail(log != NULL && out != NULL);
  memset(out, 0, sizeof *out);
  out->first_used = -1;
  out->gbs = -1;
  out->iterations_logged = log->iterations->len;
  g_autoptr(GArray) times = g_array_new(FALSE, FALSE, sizeof(double));
  g_autoptr(GArray) tflops = g_array_new(FALSE, FALSE, sizeof(double));
  for (guint k = 0; k < log->iterations->len; k++) {
    const PtsimLogIteration *it = &g_array_index(log->iterations, PtsimLogIteration, k);
    if (it->gbs > 0) out->gbs = it->gbs;
    /* warm-up: the first logged line, and iterations 1 and 2 */
    if (k == 0 || it->iteration < 3 || isnan(it->elapsed_ms)) continue;
    if (out->first_used < 0) out->first_used = it->iteration;
    out->iterations_used++;
    g_array_append_val(times, it->elapsed_ms);
    if (!isnan(it->tflops_per_gpu)) g_array_append_val(tflops, it->tflops_per_gpu);
  }
  out->step_time_ms = median(times);
  out->step_time_s = out->step_time_ms / 1000.0;
  out->tflops_per_gpu = median(tflops);
  out->max_allocated_mb = NAN;
  out->max_reserved_mb = NAN;
  for (guint k = 0; k < log->memory->len; k++) {
    const PtsimLogMemory *m = &g_array_index(log->memory, PtsimLogMemory, k);
    if (!isnan(m->max_allocated_mb) &&
        (isnan(out->max_allocated_mb) || m->max_allocated_mb > out->max_allocated_mb))
      out->max_allocated_mb = m->max_allocated_mb;
    if (!isnan(m->max_reserved_mb) &&
        (isnan(out->max_reserved_mb) || m->max_reserved_mb > out->max_reserved_mb))
      out->max_reserved_mb = m->max_reserved_mb;
  }
  out->oom = log->oom;
}
