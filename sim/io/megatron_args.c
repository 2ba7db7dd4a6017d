/* megatron_args.c — Megatron-LM flags into PtsimModel + PtsimLayout.
 *
 * What it is: a table of the pretrain_gpt.py flags that decide memory and
 * time, a tokenizer loop that records what each one said (last occurrence
 * wins, as with argparse), and a resolve step that applies Megatron-LM's
 * defaults (megatron/training/arguments.py) to what was not said.  The
 * contract and the list of defaults are in megatron_args.h.
 *
 * What it is not: a validator (ptsim_job_validate() does that), nor a full
 * argparse clone: flags it does not know, and their values, are handed
 * back in IGNORED; prefixes ("--num-lay") are not expanded (Megatron-LM
 * builds its parser with allow_abbrev=False, so neither does it). */
#include "megatron_args.h"
#include "input.h"

#include <string.h>

#include "config.h"
#include "numbers.h"
#include "job_validate.h"

/* ---- the flags read ---- */

typedef enum {
  KIND_SWITCH, /* store_true: no value */
  KIND_INT,    /* a positive integer */
  KIND_DOUBLE, /* a number */
  KIND_WORD,   /* one of the choices, checked in resolve */
  KIND_SKIP    /* takes one value that is consumed silently */
} FlagKind;

typedef enum {
  F_NUM_LAYERS, F_HIDDEN, F_FFN, F_HEADS, F_GQA, F_QUERY_GROUPS, F_SEQ,
  F_MAX_POS, F_MBS, F_GBS, F_TP, F_PP, F_CP, F_LAYERS_PER_VSTAGE,
  F_VSTAGES_PER_RANK, F_SP, F_DIST_OPT, F_RECOMPUTE_GRANULARITY,
  F_RECOMPUTE_METHOD, F_RECOMPUTE_NUM_LAYERS, F_RECOMPUTE_ACTIVATIONS,
  F_SWIGLU, F_UNTIE, F_VOCAB, F_PADDED_VOCAB, F_VOCAB_DIVISIBLE, F_BF16,
  F_FP16, F_FP8_FORMAT, F_FLASH, F_ATTENTION_DROPOUT, F_HIDDEN_DROPOUT,
  F_NORMALIZATION, F_DISABLE_BIAS, F_ADD_BIAS, F_FIRST_LAYERS, F_LAST_LAYERS,
  F_ACCUMULATE_FP32,
  F_COUNT
} FlagId;

static const struct {
  const char *name;
  FlagId id;
  FlagKind kind;
} flags[] = {
    {"--num-layers", F_NUM_LAYERS, KIND_INT},
    {"--hidden-size", F_HIDDEN, KIND_INT},
    {"--ffn-hidden-size", F_FFN, KIND_INT},
    {"--num-attention-heads", F_HEADS, KIND_INT},
    {"--group-query-attention", F_GQA, KIND_SWITCH},
    {"--num-query-groups", F_QUERY_GROUPS, KIND_INT},
    {"--seq-length", F_SEQ, KIND_INT},
    {"--max-position-embeddings", F_MAX_POS, KIND_SKIP},
    {"--micro-batch-size", F_MBS, KIND_INT},
    {"--global-batch-size", F_GBS, KIND_INT},
    {"--tensor-model-parallel-size", F_TP, KIND_INT},
    {"--pipeline-model-parallel-size", F_PP, KIND_INT},
    {"--context-parallel-size", F_CP, KIND_INT},
    {"--num-layers-per-virtual-pipeline-stage", F_LAYERS_PER_VSTAGE, KIND_INT},
    {"--num-virtual-stages-per-pipeline-rank", F_VSTAGES_PER_RANK, KIND_INT},
    {"--sequence-parallel", F_SP, KIND_SWITCH},
    {"--use-distributed-optimizer", F_DIST_OPT, KIND_SWITCH},
    {"--recompute-granularity", F_RECOMPUTE_GRANULARITY, KIND_WORD},
    {"--recompute-method", F_RECOMPUTE_METHOD, KIND_WORD},
    {"--recompute-num-layers", F_RECOMPUTE_NUM_LAYERS, KIND_INT},
    {"--recompute-activations", F_RECOMPUTE_ACTIVATIONS, KIND_SWITCH},
    {"--swiglu", F_SWIGLU, KIND_SWITCH},
    {"--untie-embeddings-and-output-weights", F_UNTIE, KIND_SWITCH},
    {"--vocab-size", F_VOCAB, KIND_INT},
    {"--padded-vocab-size", F_PADDED_VOCAB, KIND_INT},
    {"--make-vocab-size-divisible-by", F_VOCAB_DIVISIBLE, KIND_INT},
    {"--bf16", F_BF16, KIND_SWITCH},
    {"--fp16", F_FP16, KIND_SWITCH},
    {"--fp8-format", F_FP8_FORMAT, KIND_WORD},
    {"--use-flash-attn", F_FLASH, KIND_SWITCH},
    {"--attention-dropout", F_ATTENTION_DROPOUT, KIND_DOUBLE},
    {"--hidden-dropout", F_HIDDEN_DROPOUT, KIND_DOUBLE},
    {"--normalization", F_NORMALIZATION, KIND_WORD},
    {"--disable-bias-linear", F_DISABLE_BIAS, KIND_SWITCH},
    {"--add-bias-linear", F_ADD_BIAS, KIND_SWITCH},
    {"--decoder-first-pipeline-num-layers", F_FIRST_LAYERS, KIND_INT},
    {"--decoder-last-pipeline-num-layers", F_LAST_LAYERS, KIND_INT},
    {"--accumulate-allreduce-grads-in-fp32", F_ACCUMULATE_FP32, KIND_SWITCH},
};

/* What the command line said.  order[] is the token index of the last
 * occurrence (0: absent), so contradicting switches resolve as argparse
 * would: the later one wins. */
typedef struct {
  int order[F_COUNT];
  int64_t i[F_COUNT];
  double d[F_COUNT];
  const char *word[F_COUNT]; /* points into the argv */
} Said;

#define GIVEN(s, f) ((s)->order[(f)] > 0)

static const char *flag_name(FlagId id) {
  for (size_t k = 0; k < G_N_ELEMENTS(flags); k++)
    if (flags[k].id == id)
      return flags[k].name;
  return "?";
}

static int find_flag(const char *name, size_t len) {
  for (size_t k = 0; k < G_N_ELEMENTS(flags); k++)
    if (strlen(flags[k].name) == len && strncmp(flags[k].name, name, len) == 0)
      return (int)k;
  return -1;
}

#define parse_error(...)                                                       \
  (g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,            \
               __VA_ARGS__),                                                   \
   FALSE)

static void add_ignored(GPtrArray *ignored, char *text /* transfer full */) {
  if (ignored != NULL)
    g_ptr_array_add(ignored, text);
  else
    g_free(text);
}

static gboolean is_flag(const char *token) {
  return token[0] == '-' && token[1] == '-' && token[2] != '\0';
}

/* ---- tokens ---- */

static gboolean read_tokens(char **argv, int argc, Said *said,
                            GPtrArray *ignored, GError **error) {
  /* Skip the launcher: everything up to the first "*.py", else everything
   * before the first --flag. */
  int start = 0;
  for (int t = 0; t < argc; t++) {
    if (g_str_has_suffix(argv[t], ".py")) {
      start = t + 1;
      break;
    }
  }
  while (start < argc && !is_flag(argv[start]))
    start++;

  for (int t = start; t < argc;) {
    const char *token = argv[t];
    if (!is_flag(token)) { /* a stray word: hand it back */
      add_ignored(ignored, g_strdup(token));
      t++;
      continue;
    }
    const char *eq = strchr(token, '=');
    size_t name_len = eq ? (size_t)(eq - token) : strlen(token);
    int k = find_flag(token, name_len);
    if (k < 0) { /* unknown: the flag and the values that follow it */
      g_autoptr(GString) text = g_string_new(token);
      t++;
      if (eq == NULL)
        for (; t < argc && !is_flag(argv[t]); t++)
          g_string_append_printf(text, " %s", argv[t]);
      add_ignored(ignored, g_string_free(g_steal_pointer(&text), FALSE));
      continue;
    }
    FlagId id = flags[k].id;
    const char *name = flags[k].name;
    t++;
    if (flags[k].kind == KIND_SWITCH) {
      if (eq != NULL)
        return parse_error("%s takes no value (got '%s')", name, token);
      said->order[id] = t;
      continue;
    }
    const char *value = NULL;
    if (eq != NULL) {
      value = eq + 1;
    } else if (t < argc && !is_flag(argv[t])) {
      value = argv[t++];
    }
    if (value == NULL || value[0] == '\0')
      return parse_error("%s needs a value", name);
    said->order[id] = t;
    switch (flags[k].kind) {
    case KIND_INT:
      /* bounded like an .ini size, so products such as tp*pp*cp and 4h
       * cannot overflow before job validation sees them */
      if (!ptsim_number_int64(name, value, 1, PTSIM_CONFIG_INT_MAX, &said->i[id],
                              error))
        return FALSE;
      break;
    case KIND_DOUBLE:
      if (!ptsim_number_parse_double(value, &said->d[id]))
        return parse_error("%s '%s' is not a number", name, value);
      break;
    case KIND_WORD:
      said->word[id] = value;
      break;
    case KIND_SKIP:
    case KIND_SWITCH:
      break;
    }
  }
  return TRUE;
}

/* ---- Megatron-LM's defaults ---- */

/* Index of WORD in CHOICES ("a|b"), or an error naming the flag. */
static gboolean pick(const char *flag, const char *word, const char *choices,
                     int *out, GError **error) {
  g_auto(GStrv) list = g_strsplit(choices, "|", -1);
  for (int i = 0; list[i] != NULL; i++) {
    if (strcmp(word, list[i]) == 0) {
      *out = i;
      return TRUE;
    }
  }
  return parse_error("%s '%s' is not allowed: expected %s", flag, word,
                     choices);
}

static gboolean resolve_model(const Said *s, int64_t tp, PtsimModel *m,
                              GPtrArray *ignored, GError **error) {
  memset(m, 0, sizeof *m);
  g_strlcpy(m->name, "megatron-args", sizeof m->name);
  const FlagId required[] = {F_NUM_LAYERS, F_HIDDEN, F_HEADS};
  for (size_t r = 0; r < G_N_ELEMENTS(required); r++)
    if (!GIVEN(s, required[r]))
      return parse_error("%s is missing (Megatron-LM requires it)",
                         flag_name(required[r]));
  m->num_layers = s->i[F_NUM_LAYERS];
  m->hidden_size = s->i[F_HIDDEN];
  m->num_attention_heads = s->i[F_HEADS];
  m->activation = GIVEN(s, F_SWIGLU) ? PTSIM_ACTIVATION_SWIGLU
                                     : PTSIM_ACTIVATION_GELU;
  if (GIVEN(s, F_FFN))
    m->ffn_hidden_size = s->i[F_FFN];
  else if (m->activation == PTSIM_ACTIVATION_SWIGLU)
    m->ffn_hidden_size = (4 * m->hidden_size * 2 / 3) / 64 * 64;
  else
    m->ffn_hidden_size = 4 * m->hidden_size;
  if (m->ffn_hidden_size < 1)
    return parse_error("--hidden-size %" G_GINT64_FORMAT " is too small for "
                       "the --swiglu default ffn size; pass --ffn-hidden-size",
                       (gint64)m->hidden_size);

  if (GIVEN(s, F_GQA)) {
    m->num_query_groups = GIVEN(s, F_QUERY_GROUPS) ? s->i[F_QUERY_GROUPS] : 1;
  } else {
    m->num_query_groups = m->num_attention_heads;
    if (GIVEN(s, F_QUERY_GROUPS))
      add_ignored(ignored,
                  g_strdup_printf("note: --num-query-groups %" G_GINT64_FORMAT
                                  " has no effect without "
                                  "--group-query-attention (Megatron-LM uses "
                                  "multi-head attention)",
                                  (gint64)s->i[F_QUERY_GROUPS]));
  }

  if (GIVEN(s, F_PADDED_VOCAB)) {
    m->vocab_size = s->i[F_PADDED_VOCAB];
  } else if (GIVEN(s, F_VOCAB)) {
    int64_t divisible =
        GIVEN(s, F_VOCAB_DIVISIBLE) ? s->i[F_VOCAB_DIVISIBLE] : 128;
    if (divisible > ((int64_t)1 << 30) / tp)
      return parse_error("--make-vocab-size-divisible-by %" G_GINT64_FORMAT
                         " is too large", (gint64)divisible);
    int64_t multiple = divisible * tp;
    int64_t v = s->i[F_VOCAB];
    if (v > ((int64_t)1 << 30))
      return parse_error("--vocab-size %" G_GINT64_FORMAT " is too large",
                         (gint64)v);
    m->vocab_size = (v + multiple - 1) / multiple * multiple;
  } else {
    return parse_error(
        "vocab size unknown: pass --vocab-size or --padded-vocab-size");
  }

  int norm = 0;
  if (GIVEN(s, F_NORMALIZATION) &&
      !pick("--normalization", s->word[F_NORMALIZATION], "LayerNorm|RMSNorm",
            &norm, error))
    return FALSE;
  m->norm = norm == 1 ? PTSIM_NORM_RMSNORM : PTSIM_NORM_LAYERNORM;
  m->bias = s->order[F_DISABLE_BIAS] > s->order[F_ADD_BIAS] ? 0 : 1;
  m->tied_embeddings = GIVEN(s, F_UNTIE) ? 0 : 1;
  return TRUE;
}

static gboolean resolve_layout(const Said *s, const PtsimModel *m,
                               PtsimLayout *l, GPtrArray *ignored,
                               GError **error) {
  int64_t gpus = l->gpus;
  ptsim_layout_init_defaults(l);
  l->gpus = gpus;
  l->tp = GIVEN(s, F_TP) ? s->i[F_TP] : 1;
  l->pp = GIVEN(s, F_PP) ? s->i[F_PP] : 1;
  l->cp = GIVEN(s, F_CP) ? s->i[F_CP] : 1;

  if (GIVEN(s, F_LAYERS_PER_VSTAGE) && GIVEN(s, F_VSTAGES_PER_RANK))
    return parse_error("--num-layers-per-virtual-pipeline-stage and "
                       "--num-virtual-stages-per-pipeline-rank cannot both be "
                       "given");
  if (GIVEN(s, F_LAYERS_PER_VSTAGE)) {
    int64_t n = s->i[F_LAYERS_PER_VSTAGE];
    if (m->num_layers % l->pp != 0 || (m->num_layers / l->pp) % n != 0)
      return parse_error("--num-layers-per-virtual-pipeline-stage %"
                         G_GINT64_FORMAT " does not divide the %"
                         G_GINT64_FORMAT " layers per pipeline stage "
                         "(--num-layers %" G_GINT64_FORMAT
                         " / --pipeline-model-parallel-size %" G_GINT64_FORMAT
                         ")",
                         (gint64)n, (gint64)(m->num_layers / l->pp),
                         (gint64)m->num_layers, (gint64)l->pp);
    l->vp = m->num_layers / l->pp / n;
  } else if (GIVEN(s, F_VSTAGES_PER_RANK)) {
    l->vp = s->i[F_VSTAGES_PER_RANK];
  }

  if (GIVEN(s, F_MBS)) {
    l->mbs = s->i[F_MBS];
  } else {
    l->mbs = 1;
    add_ignored(ignored, g_strdup("note: no --micro-batch-size (Megatron-LM "
                                  "requires it); using 1"));
  }
  if (GIVEN(s, F_GBS)) {
    l->gbs = s->i[F_GBS];
  } else {
    int64_t model_ranks = l->tp * l->pp * l->cp;
    if (l->gpus > 0 && l->gpus % model_ranks == 0) {
      l->gbs = l->mbs * (l->gpus / model_ranks);
      add_ignored(ignored,
                  g_strdup_printf("note: no --global-batch-size; using "
                                  "mbs*dp = %" G_GINT64_FORMAT
                                  " as Megatron-LM does",
                                  (gint64)l->gbs));
    } else {
      l->gbs = 0;
      add_ignored(ignored, g_strdup("note: no --global-batch-size; "
                                    "Megatron-LM uses mbs*dp, which needs the "
                                    "GPU count"));
    }
  }
  if (GIVEN(s, F_SEQ))
    l->seq = s->i[F_SEQ];
  else
    add_ignored(ignored, g_strdup("note: no --seq-length"));

  l->sp = GIVEN(s, F_SP) && l->tp > 1 ? 1 : 0;
  if (GIVEN(s, F_SP) && l->tp == 1)
    add_ignored(ignored, g_strdup("note: --sequence-parallel is switched off "
                                  "with tensor-model-parallel-size 1, as "
                                  "Megatron-LM does"));
  l->distributed_optimizer = GIVEN(s, F_DIST_OPT) ? 1 : 0;
  l->flash_attention = 1;

  if (GIVEN(s, F_BF16) && GIVEN(s, F_FP16))
    return parse_error("--bf16 and --fp16 cannot both be given");
  if (GIVEN(s, F_FP8_FORMAT)) {
    int fp8 = 0;
    if (!pick("--fp8-format", s->word[F_FP8_FORMAT], "e4m3|hybrid", &fp8,
              error))
      return FALSE;
    l->precision = PTSIM_PRECISION_FP8;
  } else if (GIVEN(s, F_FP16)) {
    l->precision = PTSIM_PRECISION_FP16;
  } else {
    l->precision = PTSIM_PRECISION_BF16;
  }
  if (!GIVEN(s, F_BF16) && !GIVEN(s, F_FP16))
    add_ignored(ignored, g_strdup("note: neither --bf16 nor --fp16: "
                                  "Megatron-LM would train in fp32, which "
                                  "ptsim does not model; using bf16"));
  /* bf16 (and fp32) keep fp32 main grads; fp16 only when asked. */
  l->fp32_grad_accumulation =
      GIVEN(s, F_ACCUMULATE_FP32) || !GIVEN(s, F_FP16) ? 1 : 0;

  int granularity = -1;
  if (GIVEN(s, F_RECOMPUTE_GRANULARITY) &&
      !pick("--recompute-granularity", s->word[F_RECOMPUTE_GRANULARITY],
            "full|selective", &granularity, error))
    return FALSE;
  if (GIVEN(s, F_RECOMPUTE_ACTIVATIONS))
    granularity = 1; /* arguments.py: --recompute-activations = selective */
  l->recompute = granularity == 0   ? PTSIM_RECOMPUTE_FULL
                 : granularity == 1 ? PTSIM_RECOMPUTE_SELECTIVE
                                    : PTSIM_RECOMPUTE_NONE;
  int method = 0;
  if (GIVEN(s, F_RECOMPUTE_METHOD)) {
    if (!pick("--recompute-method", s->word[F_RECOMPUTE_METHOD], "uniform|block",
              &method, error))
      return FALSE;
    if (l->recompute == PTSIM_RECOMPUTE_SELECTIVE)
      return parse_error("--recompute-method %s is not supported with "
                         "selective recomputation (Megatron-LM refuses it)",
                         s->word[F_RECOMPUTE_METHOD]);
  }
  l->recompute_method = method == 1 ? PTSIM_RECOMPUTE_METHOD_BLOCK
                                    : PTSIM_RECOMPUTE_METHOD_UNIFORM;
  l->recompute_num_layers =
      GIVEN(s, F_RECOMPUTE_NUM_LAYERS) ? s->i[F_RECOMPUTE_NUM_LAYERS] : 0;
  if (l->recompute == PTSIM_RECOMPUTE_FULL &&
      (!GIVEN(s, F_RECOMPUTE_METHOD) || !GIVEN(s, F_RECOMPUTE_NUM_LAYERS)))
    add_ignored(ignored, g_strdup("note: --recompute-granularity full without "
                                  "--recompute-method and "
                                  "--recompute-num-layers (Megatron-Core asks "
                                  "for both); recomputing every layer"));

  l->attention_dropout =
      GIVEN(s, F_ATTENTION_DROPOUT) ? s->d[F_ATTENTION_DROPOUT] : 0.1;
  l->hidden_dropout = GIVEN(s, F_HIDDEN_DROPOUT) ? s->d[F_HIDDEN_DROPOUT] : 0.1;
  l->first_stage_layers = GIVEN(s, F_FIRST_LAYERS) ? s->i[F_FIRST_LAYERS] : 0;
  l->last_stage_layers = GIVEN(s, F_LAST_LAYERS) ? s->i[F_LAST_LAYERS] : 0;
  l->schedule = PTSIM_SCHEDULE_1F1B; /* interleaved when vp > 1: validate */
  return TRUE;
}

/* ---- entry points ---- */

gboolean ptsim_megatron_args_parse(const char *command_line, PtsimModel *model,
                                   PtsimLayout *layout, GPtrArray *ignored,
                                   GError **error) {
  g_return_val_if_fail(command_line != NULL, FALSE);
  g_return_val_if_fail(model != NULL && layout != NULL, FALSE);
  g_return_val_if_fail(error == NULL || *error == NULL, FALSE);
  g_auto(GStrv) argv = NULL;
  int argc = 0;
  g_autoptr(GError) local = NULL;
  if (!g_shell_parse_argv(command_line, &argc, &argv, &local)) {
    if (g_error_matches(local, G_SHELL_ERROR, G_SHELL_ERROR_EMPTY_STRING))
      return parse_error("no Megatron-LM flags given");
    /* GLib quotes the text, which may span lines: keep the error one line */
    g_autofree char *reason = g_strdelimit(g_strdup(local->message), "\r\n", ' ');
    return parse_error("cannot split the Megatron-LM command line: %s", reason);
  }
  Said said;
  memset(&said, 0, sizeof said);
  if (!read_tokens(argv, argc, &said, ignored, error))
    return FALSE;
  int64_t tp = GIVEN(&said, F_TP) ? said.i[F_TP] : 1;
  if (tp > ((int64_t)1 << 20))
    return parse_error("--tensor-model-parallel-size %" G_GINT64_FORMAT
                       " is too large", (gint64)tp);
  return resolve_model(&said, tp, model, ignored, error) &&
         resolve_layout(&said, model, layout, ignored, error);
}

gboolean ptsim_megatron_args_parse_file(const char *path, PtsimModel *model,
                                        PtsimLayout *layout, GPtrArray *ignored,
                                        GError **error) {
  g_return_val_if_fail(path != NULL, FALSE);
  g_return_val_if_fail(error == NULL || *error == NULL, FALSE);
  g_autofree char *text = NULL;
  g_autoptr(GError) local = NULL;
  if (!ptsim_input_read(path, "Megatron-LM arguments file", PTSIM_INPUT_MAX_TEXT,
                        &text, NULL, &local)) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_NOT_FOUND, "%s",
                local->message);
    return FALSE;
  }
  if (!ptsim_megatron_args_parse(text, model, layout, ignored, error)) {
    g_prefix_error(error, "%s: ", path);
    return FALSE;
  }
  return TRUE;
}
