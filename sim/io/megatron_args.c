/* megatron_args.c — a Megatron-LM launch into a job (model, layout,
 * settings, source).
 *
 * What it is: the script run (shell_script.c) that yields the training
 * command, a token loop that consumes every flag with its arity from
 * Megatron-LM's table (megatron_flags.c) and records what the modelled
 * ones said (last occurrence wins, as with argparse); megatron_resolve.c
 * then applies Megatron-LM's defaults and checks (arguments.py) to what was
 * said.  The contract and the defaults are in megatron_args.h.
 *
 * What it is not: a validator of the job (job_validate.c), nor a full
 * argparse clone: prefixes are not expanded (Megatron-LM builds its parser
 * with allow_abbrev=False, so neither does it). */
#include "megatron_args.h"
#include "input.h"

#include <string.h>

#include "config.h"
#include "launcher.h"
#include "megatron_flags.h"
#include "megatron_said.h"
#include "numbers.h"
#include "shell_script.h"

/* ---- the modelled flags ---- */

static const struct {
  const char *name;
  FlagId id;
  FlagKind kind;
} flags[] = {
    {"--num-layers", F_NUM_LAYERS, KIND_INT},
    {"--encoder-num-layers", F_ENC_LAYERS, KIND_INT},
    {"--hidden-size", F_HIDDEN, KIND_INT},
    {"--ffn-hidden-size", F_FFN, KIND_INT},
    {"--num-attention-heads", F_HEADS, KIND_INT},
    {"--group-query-attention", F_GQA, KIND_SWITCH},
    {"--num-query-groups", F_QUERY_GROUPS, KIND_INT},
    {"--kv-channels", F_KV_CHANNELS, KIND_INT},
    {"--qk-layernorm", F_QK_NORM, KIND_SWITCH},
    {"--position-embedding-type", F_POS_TYPE, KIND_WORD},
    {"--use-rotary-position-embeddings", F_ROTARY, KIND_SWITCH},
    {"--no-position-embedding", F_NO_POS, KIND_SWITCH},
    {"--max-position-embeddings", F_MAX_POS, KIND_INT},
    {"--seq-length", F_SEQ, KIND_INT},
    {"--encoder-seq-length", F_ENC_SEQ, KIND_INT},
    {"--micro-batch-size", F_MBS, KIND_INT},
    {"--global-batch-size", F_GBS, KIND_INT},
    {"--tensor-model-parallel-size", F_TP, KIND_INT},
    {"--pipeline-model-parallel-size", F_PP, KIND_INT},
    {"--context-parallel-size", F_CP, KIND_INT},
    {"--num-layers-per-virtual-pipeline-stage", F_LAYERS_PER_VSTAGE, KIND_INT},
    {"--num-virtual-stages-per-pipeline-rank", F_VSTAGES_PER_RANK, KIND_INT},
    {"--pipeline-model-parallel-layout", F_PIPELINE_LAYOUT, KIND_WORD},
    {"--account-for-embedding-in-pipeline-split", F_ACCOUNT_EMB, KIND_SWITCH},
    {"--account-for-loss-in-pipeline-split", F_ACCOUNT_LOSS, KIND_SWITCH},
    {"--decoder-first-pipeline-num-layers", F_FIRST_LAYERS, KIND_INT},
    {"--decoder-last-pipeline-num-layers", F_LAST_LAYERS, KIND_INT},
    {"--microbatch-group-size-per-virtual-pipeline-stage", F_MICROBATCH_GROUP, KIND_INT},
    {"--sequence-parallel", F_SP, KIND_SWITCH},
    {"--use-distributed-optimizer", F_DIST_OPT, KIND_SWITCH},
    {"--num-distributed-optimizer-instances", F_INSTANCES, KIND_INT},
    {"--recompute-granularity", F_RECOMPUTE_GRANULARITY, KIND_WORD},
    {"--recompute-method", F_RECOMPUTE_METHOD, KIND_WORD},
    {"--activations-checkpoint-method", F_RECOMPUTE_METHOD, KIND_WORD},
    {"--recompute-num-layers", F_RECOMPUTE_NUM_LAYERS, KIND_INT},
    {"--activations-checkpoint-num-layers", F_RECOMPUTE_NUM_LAYERS, KIND_INT},
    {"--recompute-activations", F_RECOMPUTE_ACTIVATIONS, KIND_SWITCH},
    {"--recompute-modules", F_RECOMPUTE_MODULES, KIND_LIST},
    {"--swiglu", F_SWIGLU, KIND_SWITCH},
    {"--untie-embeddings-and-output-weights", F_UNTIE, KIND_SWITCH},
    {"--vocab-size", F_VOCAB, KIND_INT},
    {"--padded-vocab-size", F_PADDED_VOCAB, KIND_INT},
    {"--make-vocab-size-divisible-by", F_VOCAB_DIVISIBLE, KIND_INT},
    {"--no-pad-vocab-size", F_NO_PAD_VOCAB, KIND_SWITCH},
    {"--disable-pad-vocab-size", F_NO_PAD_VOCAB, KIND_SWITCH},
    {"--tokenizer-type", F_TOKENIZER_TYPE, KIND_WORD},
    {"--tokenizer-model", F_TOKENIZER_MODEL, KIND_WORD},
    {"--bf16", F_BF16, KIND_SWITCH},
    {"--fp16", F_FP16, KIND_SWITCH},
    {"--fp8-format", F_FP8_FORMAT, KIND_WORD},
    {"--fp8-e4m3", F_FP8_E4M3, KIND_SWITCH},
    {"--fp8-hybrid", F_FP8_HYBRID, KIND_SWITCH},
    {"--fp8-recipe", F_FP8_RECIPE, KIND_WORD},
    {"--fp8-param-gather", F_FP8_PARAM_GATHER, KIND_SWITCH},
    {"--use-flash-attn", F_FLASH, KIND_SWITCH},
    {"--use-legacy-models", F_LEGACY, KIND_SWITCH},
    {"--transformer-impl", F_TRANSFORMER_IMPL, KIND_WORD},
    {"--attention-backend", F_ATTENTION_BACKEND, KIND_WORD},
    {"--attention-dropout", F_ATTENTION_DROPOUT, KIND_DOUBLE},
    {"--attention-softmax-in-fp32", F_SOFTMAX_FP32, KIND_SWITCH},
    {"--apply-query-key-layer-scaling", F_QK_LAYER_SCALING, KIND_SWITCH},
    {"--hidden-dropout", F_HIDDEN_DROPOUT, KIND_DOUBLE},
    {"--normalization", F_NORMALIZATION, KIND_WORD},
    {"--disable-bias-linear", F_DISABLE_BIAS, KIND_SWITCH},
    {"--add-bias-linear", F_ADD_BIAS, KIND_SWITCH},
    {"--accumulate-allreduce-grads-in-fp32", F_ACCUMULATE_FP32, KIND_SWITCH},
    {"--grad-reduce-in-bf16", F_GRAD_BF16, KIND_SWITCH},
    {"--no-gradient-accumulation-fusion", F_NO_GRAD_FUSION, KIND_SWITCH},
    {"--cross-entropy-loss-fusion", F_CE_FUSION, KIND_SWITCH},
    {"--cross-entropy-fusion-impl", F_CE_FUSION_IMPL, KIND_WORD},
    {"--defer-embedding-wgrad-compute", F_DEFER_EMBEDDING_WGRAD, KIND_SWITCH},
    {"--wgrad-deferral-limit", F_WGRAD_DEFERRAL_LIMIT, KIND_WORD},
    {"--timing-log-level", F_TIMING_LOG_LEVEL, KIND_WORD},
    {"--no-bias-swiglu-fusion", F_NO_SWIGLU_FUSION, KIND_SWITCH},
    {"--no-masked-softmax-fusion", F_NO_MASKED_SOFTMAX, KIND_SWITCH},
    {"--overlap-grad-reduce", F_OVERLAP_GRAD, KIND_SWITCH},
    {"--overlap-param-gather", F_OVERLAP_PARAM, KIND_SWITCH},
    {"--tp-comm-overlap", F_TP_OVERLAP, KIND_SWITCH},
    {"--no-tp-comm-overlap-ag", F_TP_NO_AG, KIND_SWITCH},
    {"--disable-tp-comm-overlap-ag", F_TP_NO_AG, KIND_SWITCH},
    {"--no-tp-comm-overlap-rs", F_TP_NO_RS, KIND_SWITCH},
    {"--disable-tp-comm-overlap-rs", F_TP_NO_RS, KIND_SWITCH},
    {"--no-tp-comm-bulk-dgrad", F_TP_NO_BULK_DGRAD, KIND_SWITCH},
    {"--disable-tp-comm-bulk-dgrad", F_TP_NO_BULK_DGRAD, KIND_SWITCH},
    {"--tp-comm-overlap-rs-dgrad", F_TP_RS_DGRAD, KIND_SWITCH},
    {"--use-precision-aware-optimizer", F_PRECISION_AWARE, KIND_SWITCH},
    {"--main-grads-dtype", F_MAIN_GRADS_DTYPE, KIND_WORD},
    {"--main-params-dtype", F_MAIN_PARAMS_DTYPE, KIND_WORD},
    {"--exp-avg-dtype", F_EXP_AVG_DTYPE, KIND_WORD},
    {"--exp-avg-sq-dtype", F_EXP_AVG_SQ_DTYPE, KIND_WORD},
    {"--optimizer", F_OPTIMIZER, KIND_WORD},
    {"--manual-gc", F_MANUAL_GC, KIND_SWITCH},
    {"--deterministic-mode", F_DETERMINISTIC, KIND_SWITCH},
    {"--use-megatron-fsdp", F_MEGATRON_FSDP, KIND_SWITCH},
    {"--use-custom-fsdp", F_MEGATRON_FSDP, KIND_SWITCH},
    {"--use-torch-fsdp2", F_TORCH_FSDP2, KIND_SWITCH},
    {"--data-parallel-sharding-strategy", F_SHARDING_STRATEGY, KIND_WORD},
    {"--torch-fsdp2-no-reshard-after-forward", F_TORCH_FSDP2_NO_RESHARD, KIND_SWITCH},
    {"--num-experts", F_NUM_EXPERTS, KIND_WORD},
    {"--moe-router-topk", F_MOE_TOPK, KIND_INT},
    {"--moe-ffn-hidden-size", F_MOE_FFN, KIND_INT},
    {"--moe-shared-expert-intermediate-size", F_MOE_SHARED, KIND_INT},
    {"--moe-shared-expert-gate", F_MOE_SHARED_GATE, KIND_SWITCH},
    {"--moe-layer-freq", F_MOE_FREQ, KIND_WORD},
    {"--moe-router-score-function", F_MOE_SCORE, KIND_WORD},
    {"--moe-router-load-balancing-type", F_MOE_BALANCING, KIND_LIST},
    {"--moe-aux-loss-coeff", F_MOE_AUX_COEFF, KIND_LIST},
    {"--moe-router-enable-expert-bias", F_MOE_EXPERT_BIAS, KIND_SWITCH},
    {"--moe-router-num-groups", F_MOE_GROUPS, KIND_INT},
    {"--moe-router-group-topk", F_MOE_GROUP_TOPK, KIND_INT},
    {"--moe-expert-capacity-factor", F_MOE_CAPACITY, KIND_DOUBLE},
    {"--moe-pad-expert-input-to-capacity", F_MOE_PAD, KIND_SWITCH},
    {"--moe-token-dispatcher-type", F_MOE_DISPATCHER, KIND_WORD},
    {"--moe-enable-deepep", F_MOE_DEEPEP, KIND_SWITCH},
    {"--moe-flex-dispatcher-backend", F_MOE_FLEX_BACKEND, KIND_WORD},
    {"--moe-grouped-gemm", F_MOE_GROUPED_GEMM, KIND_SWITCH},
    {"--moe-permute-fusion", F_MOE_PERMUTE_FUSION, KIND_SWITCH},
    {"--moe-router-fusion", F_MOE_ROUTER_FUSION, KIND_SWITCH},
    {"--moe-router-dtype", F_MOE_ROUTER_DTYPE, KIND_WORD},
    {"--moe-shared-expert-overlap", F_MOE_SHARED_OVERLAP, KIND_SWITCH},
    {"--overlap-moe-expert-parallel-comm", F_MOE_EP_OVERLAP, KIND_SWITCH},
    {"--delay-wgrad-compute", F_DELAY_WGRAD, KIND_SWITCH},
    {"--moe-layer-recompute", F_MOE_LAYER_RECOMPUTE, KIND_SWITCH},
    {"--expert-model-parallel-size", F_EP, KIND_INT},
    {"--expert-tensor-parallel-size", F_ETP, KIND_INT},
    {"--multi-latent-attention", F_MLA, KIND_SWITCH},
    {"--q-lora-rank", F_Q_LORA, KIND_INT},
    {"--kv-lora-rank", F_KV_LORA, KIND_INT},
    {"--qk-head-dim", F_QK_HEAD_DIM, KIND_INT},
    {"--qk-pos-emb-head-dim", F_QK_POS_DIM, KIND_INT},
    {"--v-head-dim", F_V_HEAD_DIM, KIND_INT},
    {"--mtp-num-layers", F_MTP_LAYERS, KIND_WORD},
    {"--log-params-norm", F_LOG_PARAMS_NORM, KIND_SWITCH},
    {"--log-num-zeros-in-grad", F_LOG_ZEROS, KIND_SWITCH},
    {"--test-mode", F_TEST_MODE, KIND_SWITCH},
    {"--enable-cuda-graph", F_ENABLE_CUDA_GRAPH, KIND_SWITCH},
    {"--external-cuda-graph", F_EXTERNAL_CUDA_GRAPH, KIND_SWITCH},
    {"--cuda-graph-impl", F_CUDA_GRAPH_IMPL, KIND_WORD},
    {"--cuda-graph-scope", F_CUDA_GRAPH_SCOPE, KIND_LIST},
    {"--cuda-graph-modules", F_CUDA_GRAPH_MODULES, KIND_LIST},
    {"--log-interval", F_LOG_INTERVAL, KIND_INT},
    {"--fp4-format", F_FP4_FORMAT, KIND_WORD},
    {"--cp-comm-type", F_CP_COMM_TYPE, KIND_LIST},
    {"--window-size", F_WINDOW_SIZE, KIND_WORD},
    {"--window-attn-skip-freq", F_WINDOW_SKIP_FREQ, KIND_WORD},
    {"--fine-grained-activation-offloading", F_FG_OFFLOADING, KIND_SWITCH},
    {"--offload-modules", F_OFFLOAD_MODULES, KIND_LIST},
    {"--hybrid-layer-pattern", F_HYBRID_PATTERN, KIND_WORD},
    {"--hybrid-override-pattern", F_HYBRID_PATTERN, KIND_WORD},
    {"--mamba-state-dim", F_MAMBA_STATE_DIM, KIND_INT},
    {"--mamba-head-dim", F_MAMBA_HEAD_DIM, KIND_INT},
    {"--mamba-num-groups", F_MAMBA_NUM_GROUPS, KIND_INT},
    {"--mamba-num-heads", F_MAMBA_NUM_HEADS, KIND_INT},
    {"--squared-relu", F_SQUARED_RELU, KIND_SWITCH},
    {"--softmax-type", F_SOFTMAX_TYPE, KIND_WORD},
};

/* What the command line said.  order[] is the token index of the last
 * occurrence (0: absent), so contradicting switches resolve as argparse
 * would: the later one wins. */
const char *ptsim_megatron_flag_name(FlagId id) {
  for (size_t k = 0; k < G_N_ELEMENTS(flags); k++)
    if (flags[k].id == id) return flags[k].name;
  return "?";
}

static int find_flag(const char *name, size_t len) {
  for (size_t k = 0; k < G_N_ELEMENTS(flags); k++)
    if (strlen(flags[k].name) == len && strncmp(flags[k].name, name, len) == 0) return (int)k;
  return -1;
}

#define parse_error(...) \
  (g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE, __VA_ARGS__), FALSE)

void ptsim_megatron_add(GPtrArray *list, char *text /* transfer full */) {
  if (list) {
    for (guint k = 0; k < list->len; k++)
      if (strcmp(list->pdata[k], text) == 0) {
        g_free(text);
        return;
      }
    g_ptr_array_add(list, text);
  } else {
    g_free(text);
  }
}

#define NOTE(s, ...) \
  ptsim_megatron_add((s)->diag ? (s)->diag->notes : NULL, g_strdup_printf(__VA_ARGS__))

static gboolean is_flag(const char *token) {
  return token[0] == '-' && token[1] == '-' && token[2] != '\0';
}

/* ---- tokens ---- */

/* The family a refused flag belongs to, for its message. */
static const char *refused_feature(const char *name) {
  if (strstr(name, "moe-latent")) return "latent mixture-of-experts projections are";
  if (strstr(name, "expert")) return "expert weight sharding is";
  if (strstr(name, "fsdp") || strstr(name, "sharding-strategy")) return "FSDP is";
  return "this feature is";
}

/* A flag ptsim does not read: consumes its values by its arity, and files
 * it by its class. */
static gboolean other_flag(Said *s, const char *token, const char *eq, size_t len, int *t, int argc,
                           GError **error) {
  const PtsimMegatronFlag *f = ptsim_megatron_flag_find(token, len);
  int launcher_values = 0;
  gboolean launcher = !f && ptsim_launcher_flag(token, len, &launcher_values);
  gboolean allowed = !f && s->diag && s->diag->unknown_allowed;
  if (!f && !launcher && !allowed) {
    g_autofree char *closest = ptsim_megatron_flag_closest(token, len);
    return parse_error(
        "%.*s is not a Megatron-LM flag (Megatron-LM refuses unknown arguments)%s%s%s", (int)len,
        token, closest ? "; did you mean " : "", closest ? closest : "", closest ? "?" : "");
  }
  char **argv = s->argv;
  g_autoptr(GString) values = g_string_new(NULL);
  const char *first = eq ? eq + 1 : NULL;
  int max = allowed                             ? argc
            : launcher                          ? launcher_values
            : f->arity == PTSIM_MEGATRON_SWITCH ? 0
            : f->arity == PTSIM_MEGATRON_VALUE  ? 1
            : f->arity == PTSIM_MEGATRON_THREE  ? 3
                                                : argc;
  if (eq) g_string_append_printf(values, "=%s", eq + 1), max = 0;
  for (int n = 0; n < max && *t < argc && !is_flag(argv[*t]); n++, (*t)++) {
    if (!first) first = argv[*t];
    g_string_append_printf(values, " %s", argv[*t]);
  }
  g_autofree char *name = g_strndup(token, len);
  if (!f) { /* a launcher's or wrapper's option among the script's: named, skipped */
    ptsim_megatron_add(s->diag ? s->diag->unknown : NULL, g_strconcat(name, values->str, NULL));
    return TRUE;
  }
  g_ptr_array_add(s->read, g_strdup(name));
  if (f->klass == PTSIM_MEGATRON_UNMODELLED)
    ptsim_megatron_add(s->diag ? s->diag->unmodelled : NULL,
                       g_strdup_printf("%s (%s)", name, f->effect));
  if (f->klass == PTSIM_MEGATRON_REFUSED && !(f->effect && first && strcmp(first, f->effect) == 0))
    return parse_error("%s%s: %s not modelled yet (ptsim would predict a different model)%s%s%s",
                       name, values->str, refused_feature(name), f->effect ? "; only " : "",
                       f->effect ? f->effect : "", f->effect ? " is accepted" : "");
  return TRUE;
}

static gboolean read_tokens(Said *said, int start, int argc, GError **error) {
  char **argv = said->argv;
  for (int t = start; t < argc;) {
    const char *token = argv[t];
    if (!is_flag(token)) { /* a stray word: argparse would refuse it */
      ptsim_megatron_add(said->diag ? said->diag->unknown : NULL, g_strdup(token));
      t++;
      continue;
    }
    const char *eq = strchr(token, '=');
    size_t name_len = eq ? (size_t)(eq - token) : strlen(token);
    int k = find_flag(token, name_len);
    t++;
    if (k < 0) {
      if (!other_flag(said, token, eq, name_len, &t, argc, error)) return FALSE;
      continue;
    }
    FlagId id = flags[k].id;
    const char *name = flags[k].name;
    g_ptr_array_add(said->read, g_strdup(name));
    if (flags[k].kind == KIND_SWITCH) {
      if (eq != NULL) return parse_error("%s takes no value (got '%s')", name, token);
      said->order[id] = t;
      continue;
    }
    if (flags[k].kind == KIND_LIST) {
      said->list_at[id] = eq ? -1 : t;
      said->list_len[id] = 0;
      if (eq) said->word[id] = eq + 1;
      for (; !eq && t < argc && !is_flag(argv[t]); t++) said->list_len[id]++;
      if (!eq && said->list_len[id] == 0) return parse_error("%s needs at least one value", name);
      said->order[id] = t;
      continue;
    }
    const char *value = NULL;
    if (eq != NULL)
      value = eq + 1;
    else if (t < argc && !is_flag(argv[t]))
      value = argv[t++];
    if (value == NULL || value[0] == '\0') return parse_error("%s needs a value", name);
    said->order[id] = t;
    switch (flags[k].kind) {
    case KIND_INT:
      /* bounded like an .ini size, so products such as tp*pp*cp and 4h
       * cannot overflow before job validation sees them */
      if (!ptsim_number_int64(name, value, 1, PTSIM_CONFIG_INT_MAX, &said->i[id], error))
        return FALSE;
      break;
    case KIND_DOUBLE: {
      /* the dropouts are probabilities; a capacity factor is 0 (dropless)
       * to job validation's bound */
      const PtsimRange probability = {0.0, 1.0, TRUE, FALSE}, capacity = {0.0, 1e6, TRUE, TRUE};
      if (!ptsim_number_double(name, value, id == F_MOE_CAPACITY ? capacity : probability,
                               &said->d[id], error))
        return FALSE;
      break;
    }
    default:
      said->word[id] = value;
      break;
    }
  }
  return TRUE;
}

/* ---- entry points ---- */

PtsimMegatronDiagnostics *ptsim_megatron_diagnostics_new(void) {
  PtsimMegatronDiagnostics *d = g_new0(PtsimMegatronDiagnostics, 1);
  d->unmodelled = g_ptr_array_new_with_free_func(g_free);
  d->unknown = g_ptr_array_new_with_free_func(g_free);
  d->notes = g_ptr_array_new_with_free_func(g_free);
  return d;
}

void ptsim_megatron_diagnostics_free(PtsimMegatronDiagnostics *d) {
  if (!d) return;
  g_ptr_array_unref(d->unmodelled);
  g_ptr_array_unref(d->unknown);
  g_ptr_array_unref(d->notes);
  g_free(d->gpus_from);
  g_free(d->gpus_read);
  g_free(d);
}

/* `srun ... sh -c "python .../pretrain_gpt.py FLAGS"`: the quoted command
 * becomes words of its own. */
static GPtrArray *unwrap_shell_c(GPtrArray *words, const char *name, GError **error) {
  for (guint i = 0; i + 1 < words->len; i++) {
    const char *w = words->pdata[i + 1];
    if (strcmp(words->pdata[i], "-c") != 0 || !strstr(w, ".py")) continue;
    g_autoptr(PtsimShellScript) inner = ptsim_shell_script_run(w, strlen(w), name, error);
    if (!inner) return NULL;
    GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
    for (guint k = 0; k + 1 < i; k++) g_ptr_array_add(out, g_strdup(words->pdata[k])); /* not sh */
    for (guint k = 0; inner->command && k < inner->command->len; k++)
      g_ptr_array_add(out, g_strdup(inner->command->pdata[k]));
    return out;
  }
  return g_ptr_array_ref(words);
}

/* Index of the script in WORDS (a *.py, or python's -m MODULE that is not
 * torch's launcher), or -1. */
static int script_index(GPtrArray *words) {
  for (guint i = 0; i < words->len; i++) {
    const char *w = words->pdata[i];
    if (g_str_has_suffix(w, ".py")) return (int)i;
    if (strcmp(w, "-m") == 0 && i + 1 < words->len &&
        !g_str_has_prefix(words->pdata[i + 1], "torch.distributed"))
      return (int)i + 1;
  }
  return -1;
}

/* Training scripts of other model families: ptsim models decoder-only GPT
 * training (pretrain_gpt.py and scripts of other names that pass its
 * flags). */
static const char *const other_families[] = {"pretrain_t5",    "pretrain_bert",
                                             "pretrain_mamba", "pretrain_hybrid",
                                             "pretrain_vlm",   "pretrain_mimo",
                                             "pretrain_ict",   "pretrain_retro",
                                             "pretrain_vision"};

/* 1 when WORDS from START give a hybrid layer pattern: pretrain_mamba.py
 * and pretrain_hybrid.py then train a decoder-only hybrid model ptsim
 * reads (megatron_hybrid.c); without one, Megatron builds its layers from
 * ratios, which is not modelled. */
static gboolean hybrid_pattern_given(GPtrArray *words, int start) {
  for (guint i = (guint)start; i < words->len; i++)
    if (g_str_has_prefix(words->pdata[i], "--hybrid-layer-pattern") ||
        g_str_has_prefix(words->pdata[i], "--hybrid-override-pattern"))
      return TRUE;
  return FALSE;
}

/* APPENDED after the command's words; a note for each flag whose value the
 * command gave otherwise. */
static void append_flags(GPtrArray *words, int start, const char *const *appended,
                         PtsimMegatronDiagnostics *diag) {
  for (const char *const *a = appended; a && *a; a++) {
    const char *value = is_flag(*a) && a[1] && !is_flag(a[1]) ? a[1] : NULL;
    for (guint k = (guint)start; value && diag && k + 1 < words->len; k++)
      if (strcmp(words->pdata[k], *a) == 0 && strcmp(words->pdata[k + 1], value) != 0)
        ptsim_megatron_add(diag->notes,
                           g_strdup_printf("%s %s read after the command's %s %s: ptsim's own "
                                           "option wins, with what Megatron-LM derives from it",
                                           *a, value, *a, (const char *)words->pdata[k + 1]));
    g_ptr_array_add(words, g_strdup(*a));
  }
}

static gboolean parse_text(const char *text, gsize len, const char *name,
                           const PtsimShellInputs *inputs, const char *const *appended,
                           PtsimJob *job, PtsimMegatronDiagnostics *diag, GError **error) {
  g_autoptr(PtsimShellScript) script = ptsim_shell_script_run_with(text, len, name, inputs, error);
  if (!script) return FALSE;
  if (!script->command)
    return parse_error("no Megatron-LM command found: no line runs a Python script or passes "
                       "--flags");
  g_autoptr(GPtrArray) words = unwrap_shell_c(script->command, name, error);
  if (!words) return FALSE;
  int at = script_index(words);
  int start = at + 1;
  if (at < 0)
    for (start = 0; start < (int)words->len && !is_flag(words->pdata[start]); start++) {
    }
  if (at >= 0) {
    g_autofree char *base = g_path_get_basename(words->pdata[at]);
    for (size_t k = 0; k < G_N_ELEMENTS(other_families); k++)
      if (g_str_has_prefix(base, other_families[k]) &&
          !(k >= 2 && k <= 3 && hybrid_pattern_given(words, start)))
        return parse_error("%s trains another kind of model: ptsim models decoder-only GPT "
                           "training (pretrain_gpt.py)",
                           (const char *)words->pdata[at]);
  }
  g_autoptr(GPtrArray) launcher = g_ptr_array_new();
  for (int k = 0; k < (at < 0 ? 0 : at); k++) g_ptr_array_add(launcher, words->pdata[k]);
  if (at < 0) /* no script: the launcher's words and its options among the flags */
    for (int k = 0; k < (int)words->len; k++) {
      const char *w = words->pdata[k], *eq = strchr(w, '=');
      int values = 0;
      if (k < start) {
        g_ptr_array_add(launcher, words->pdata[k]);
      } else if (is_flag(w) && ptsim_launcher_flag(w, eq ? (gsize)(eq - w) : strlen(w), &values)) {
        g_ptr_array_add(launcher, words->pdata[k]);
        for (; !eq && values > 0 && k + 1 < (int)words->len; values--)
          g_ptr_array_add(launcher, words->pdata[++k]);
      }
    }
  int64_t gpus = 0;
  g_autofree char *how = NULL;
  if (!ptsim_launcher_gpus(launcher, script, &gpus, &how, error)) return FALSE;
  if (gpus > 0) job->layout.gpus = gpus;
  if (diag) {
    g_clear_pointer(&diag->gpus_from, g_free);
    g_clear_pointer(&diag->gpus_read, g_free);
    diag->gbs_from_dp = FALSE;
    if (gpus > 0)
      diag->gpus_from = g_steal_pointer(&how);
    else
      diag->gpus_read = g_steal_pointer(&how);
    for (guint k = 0; k < script->notes->len; k++)
      if (!strstr(script->notes->pdata[k], "substitution") &&
          !strstr(script->notes->pdata[k], "file test"))
        ptsim_megatron_add(diag->notes, g_strdup(script->notes->pdata[k]));
  }
  append_flags(words, start, appended, diag);
  g_ptr_array_add(words, NULL);
  Said said;
  memset(&said, 0, sizeof said);
  said.argv = (char **)words->pdata;
  said.diag = diag;
  said.read = g_ptr_array_new_with_free_func(g_free);
  gboolean ok = read_tokens(&said, start, (int)words->len - 1, error);
  int64_t tp = GIVEN(&said, F_TP) ? said.i[F_TP] : 1;
  if (ok && tp > ((int64_t)1 << 20))
    ok = parse_error("--tensor-model-parallel-size %" G_GINT64_FORMAT " is too large", (gint64)tp);
  ok = ok && ptsim_megatron_resolve_model(&said, tp, &job->model, error) &&
       ptsim_megatron_resolve_moe_model(&said, &job->model, error) &&
       ptsim_megatron_resolve_hybrid(&said, &job->model, error) &&
       ptsim_megatron_resolve_window(&said, &job->model, error) &&
       ptsim_megatron_resolve_job(&said, job, error) &&
       ptsim_megatron_resolve_moe_job(&said, job, error) &&
       ptsim_megatron_resolve_hybrid_job(&said, job, error);
  g_ptr_array_unref(said.read);
  return ok;
}

gboolean ptsim_megatron_args_parse(const char *command_line, PtsimJob *job,
                                   PtsimMegatronDiagnostics *diag, GError **error) {
  return ptsim_megatron_args_parse_with(command_line, NULL, NULL, job, diag, error);
}

gboolean ptsim_megatron_args_parse_with(const char *command_line, const PtsimShellInputs *inputs,
                                        const char *const *appended, PtsimJob *job,
                                        PtsimMegatronDiagnostics *diag, GError **error) {
  g_return_val_if_fail(command_line != NULL, FALSE);
  g_return_val_if_fail(job != NULL, FALSE);
  g_return_val_if_fail(error == NULL || *error == NULL, FALSE);
  g_autofree char *stripped = g_strstrip(g_strdup(command_line));
  if (stripped[0] == '\0') return parse_error("no Megatron-LM flags given");
  return parse_text(command_line, strlen(command_line), "--megatron-args", inputs, appended, job,
                    diag, error);
}

gboolean ptsim_megatron_args_parse_file(const char *path, PtsimJob *job,
                                        PtsimMegatronDiagnostics *diag, GError **error) {
  return ptsim_megatron_args_parse_file_with(path, NULL, NULL, job, diag, error);
}

gboolean ptsim_megatron_args_parse_file_with(const char *path, const PtsimShellInputs *inputs,
                                             const char *const *appended, PtsimJob *job,
                                             PtsimMegatronDiagnostics *diag, GError **error) {
  g_return_val_if_fail(path != NULL, FALSE);
  g_return_val_if_fail(error == NULL || *error == NULL, FALSE);
  g_autofree char *text = NULL;
  gsize len = 0;
  g_autoptr(GError) local = NULL;
  if (!ptsim_input_read(path, "Megatron-LM arguments file", PTSIM_INPUT_MAX_TEXT, &text, &len,
                        &local)) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_NOT_FOUND, "%s", local->message);
    return FALSE;
  }
  if (!parse_text(text, len, path, inputs, appended, job, diag, error)) {
    if (!g_str_has_prefix((*error)->message, path)) g_prefix_error(error, "%s: ", path);
    return FALSE;
  }
  return TRUE;
}

gboolean ptsim_megatron_args_reads(const char *flag) { return find_flag(flag, strlen(flag)) >= 0; }
