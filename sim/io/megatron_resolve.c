/* megatron_resolve.c — Megatron-LM's defaults and rules (megatron/training/
 * arguments.py and the configs it fills) applied to what a command line
 * said: the model and the layout of megatron_args.h.  The tokens are read
 * in megatron_args.c. */
#include <string.h>

#include "config.h"
#include "job_validate.h"
#include "megatron_said.h"
#include "megatron_vocab.h"
#include "numbers.h"
#include "pipeline_layout.h"

#define parse_error(...) \
  (g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE, __VA_ARGS__), FALSE)
#define NOTE(s, ...) \
  ptsim_megatron_add((s)->diag ? (s)->diag->notes : NULL, g_strdup_printf(__VA_ARGS__))

/* ---- Megatron-LM's defaults ---- */

/* Index of WORD in CHOICES ("a|b"), or an error naming the flag. */
static gboolean pick(const char *flag, const char *word, const char *choices, int *out,
                     GError **error) {
  g_auto(GStrv) list = g_strsplit(choices, "|", -1);
  for (int i = 0; list[i] != NULL; i++) {
    if (strcmp(word, list[i]) == 0) {
      *out = i;
      return TRUE;
    }
  }
  return parse_error("%s '%s' is not allowed: expected %s", flag, word, choices);
}

/* "--a 1, --b, ..." of what was read, for errors about what is missing. */
static char *what_was_read(const Said *s) {
  g_autoptr(GString) out = g_string_new(NULL);
  if (s->read->len == 0) return g_strdup("no Megatron-LM flags were found");
  g_string_append_printf(out, "the command line gave %u flag%s: ", s->read->len,
                         s->read->len == 1 ? "" : "s");
  for (guint k = 0; k < s->read->len && k < 10; k++)
    g_string_append_printf(out, "%s%s", k ? " " : "", (const char *)s->read->pdata[k]);
  if (s->read->len > 10) g_string_append(out, " ...");
  return g_string_free(g_steal_pointer(&out), FALSE);
}

static gboolean resolve_vocab(const Said *s, int64_t tp, PtsimModel *m, GError **error) {
  if (GIVEN(s, F_PADDED_VOCAB)) {
    m->vocab_size = s->i[F_PADDED_VOCAB];
    return TRUE;
  }
  int64_t vocab = 0;
  g_autofree char *how = NULL;
  if (!ptsim_megatron_vocab(s->word[F_TOKENIZER_TYPE], s->word[F_TOKENIZER_MODEL],
                            GIVEN(s, F_VOCAB) ? s->i[F_VOCAB] : 0, &vocab, &how, error))
    return FALSE;
  int64_t divisible = GIVEN(s, F_VOCAB_DIVISIBLE) ? s->i[F_VOCAB_DIVISIBLE] : 128;
  if (vocab > ((int64_t)1 << 30) || divisible > ((int64_t)1 << 30) / tp)
    return parse_error("the vocabulary %" G_GINT64_FORMAT
                       " (padded to a multiple of %" G_GINT64_FORMAT " x tp) is too large",
                       (gint64)vocab, (gint64)divisible);
  m->vocab_size = GIVEN(s, F_NO_PAD_VOCAB) ? vocab : ptsim_megatron_vocab_pad(vocab, divisible, tp);
  if (!GIVEN(s, F_VOCAB))
    NOTE(s, "vocabulary from the tokenizer: %s, padded to %" G_GINT64_FORMAT, how,
         (gint64)m->vocab_size);
  return TRUE;
}

gboolean ptsim_megatron_resolve_model(const Said *s, int64_t tp, PtsimModel *m, GError **error) {
  memset(m, 0, sizeof *m);
  g_strlcpy(m->name, "megatron-args", sizeof m->name);
  const FlagId required[] = {F_NUM_LAYERS, F_HIDDEN, F_HEADS};
  for (size_t r = 0; r < G_N_ELEMENTS(required); r++)
    if (!GIVEN(s, required[r]) && !(required[r] == F_NUM_LAYERS && GIVEN(s, F_ENC_LAYERS)) &&
        !(required[r] == F_NUM_LAYERS && GIVEN(s, F_HYBRID_PATTERN))) {
      g_autofree char *read = what_was_read(s);
      return parse_error("%s is missing (Megatron-LM requires it); %s",
                         ptsim_megatron_flag_name(required[r]), read);
    }
  m->num_layers = GIVEN(s, F_NUM_LAYERS) ? s->i[F_NUM_LAYERS] : s->i[F_ENC_LAYERS];
  /* a hybrid pattern's length is the layer count (Megatron ignores
   * --num-layers beside it; megatron_hybrid.c reads the pattern) */
  if (GIVEN(s, F_HYBRID_PATTERN)) {
    const char *c;
    m->num_layers = 0;
    for (c = s->word[F_HYBRID_PATTERN]; *c; c++) m->num_layers += *c != '|';
  }
  m->hidden_size = s->i[F_HIDDEN];
  m->num_attention_heads = s->i[F_HEADS];
  m->activation = GIVEN(s, F_SWIGLU) ? PTSIM_ACTIVATION_SWIGLU : PTSIM_ACTIVATION_GELU;
  /* --squared-relu: arguments.py asserts it is not beside --swiglu */
  if (GIVEN(s, F_SQUARED_RELU) && GIVEN(s, F_SWIGLU))
    return parse_error("--squared-relu and --swiglu together: Megatron-LM refuses the pair "
                       "(core_transformer_config_from_args: assert not args.swiglu); give one");
  if (GIVEN(s, F_SQUARED_RELU)) m->activation = PTSIM_ACTIVATION_RELU2;
  if (GIVEN(s, F_SOFTMAX_TYPE)) {
    int softmax = 0;
    if (!pick("--softmax-type", s->word[F_SOFTMAX_TYPE], "vanilla|off-by-one|learnable", &softmax,
              error))
      return FALSE;
    m->softmax_type = (PtsimSoftmaxType)softmax;
  }
  if (GIVEN(s, F_FFN))
    m->ffn_hidden_size = s->i[F_FFN];
  else if (m->activation == PTSIM_ACTIVATION_SWIGLU)
    m->ffn_hidden_size = (4 * m->hidden_size * 2 / 3) / 64 * 64;
  else
    m->ffn_hidden_size = 4 * m->hidden_size;
  if (m->ffn_hidden_size < 1)
    return parse_error("--hidden-size %" G_GINT64_FORMAT " is too small for the --swiglu default "
                       "ffn size; pass --ffn-hidden-size",
                       (gint64)m->hidden_size);
  if (GIVEN(s, F_KV_CHANNELS))
    m->kv_channels = s->i[F_KV_CHANNELS];
  else if (m->hidden_size % m->num_attention_heads != 0)
    return parse_error("--hidden-size %" G_GINT64_FORMAT " is not divisible by "
                       "--num-attention-heads %" G_GINT64_FORMAT " (Megatron-LM asserts it "
                       "unless --kv-channels is given)",
                       (gint64)m->hidden_size, (gint64)m->num_attention_heads);
  m->qk_layernorm = GIVEN(s, F_QK_NORM);

  if (GIVEN(s, F_GQA)) {
    m->num_query_groups = GIVEN(s, F_QUERY_GROUPS) ? s->i[F_QUERY_GROUPS] : 1;
  } else {
    m->num_query_groups = m->num_attention_heads;
    if (GIVEN(s, F_QUERY_GROUPS))
      NOTE(s,
           "--num-query-groups %" G_GINT64_FORMAT " has no effect without "
           "--group-query-attention (Megatron-LM uses multi-head attention)",
           (gint64)s->i[F_QUERY_GROUPS]);
  }

  int pos = 0; /* arguments.py: learned_absolute unless said */
  if (GIVEN(s, F_POS_TYPE) && !pick("--position-embedding-type", s->word[F_POS_TYPE],
                                    "learned_absolute|rope|yarn|mrope|relative|none", &pos, error))
    return FALSE;
  if (GIVEN(s, F_ROTARY) && s->order[F_ROTARY] > s->order[F_POS_TYPE]) pos = 1;
  if (GIVEN(s, F_NO_POS) && pos != 1)
    return parse_error("--no-position-embedding is allowed only with rope position embeddings "
                       "(Megatron-LM refuses it otherwise)");
  static const PtsimPositionEmbedding positions[] = {PTSIM_POSITION_LEARNED, PTSIM_POSITION_ROPE,
                                                     PTSIM_POSITION_ROPE,    PTSIM_POSITION_ROPE,
                                                     PTSIM_POSITION_NONE,    PTSIM_POSITION_NONE};
  m->position_embedding = positions[pos];
  if (pos == 4)
    ptsim_megatron_add(
        s->diag ? s->diag->unmodelled : NULL,
        g_strdup("--position-embedding-type relative (a relative position bias: slightly more "
                 "memory and time)"));
  if (GIVEN(s, F_MAX_POS))
    m->max_position_embeddings = s->i[F_MAX_POS];
  else if (m->position_embedding == PTSIM_POSITION_LEARNED)
    NOTE(s, "no --max-position-embeddings (Megatron-LM requires it); the learned position "
            "table is taken as --seq-length rows");

  if (!resolve_vocab(s, tp, m, error)) return FALSE;
  int norm = 0;
  if (GIVEN(s, F_NORMALIZATION) &&
      !pick("--normalization", s->word[F_NORMALIZATION], "LayerNorm|RMSNorm", &norm, error))
    return FALSE;
  m->norm = norm == 1 ? PTSIM_NORM_RMSNORM : PTSIM_NORM_LAYERNORM;
  m->bias = s->order[F_DISABLE_BIAS] > s->order[F_ADD_BIAS] ? 0 : 1;
  m->tied_embeddings = GIVEN(s, F_UNTIE) ? 0 : 1;
  return TRUE;
}

/* Virtual stages and the stage split: --num-layers-per-virtual-pipeline-
 * stage (counting the embedding and loss under --account-for-*),
 * --num-virtual-stages-per-pipeline-rank, --pipeline-model-parallel-layout,
 * the uneven first/last stage. */
static gboolean resolve_split(const Said *s, const PtsimModel *m, PtsimLayout *l, GError **error) {
  int given = GIVEN(s, F_LAYERS_PER_VSTAGE) + GIVEN(s, F_VSTAGES_PER_RANK) +
              GIVEN(s, F_PIPELINE_LAYOUT);
  if (given > 1)
    return parse_error("--num-layers-per-virtual-pipeline-stage, --num-virtual-stages-per-"
                       "pipeline-rank and --pipeline-model-parallel-layout: give at most one");
  l->account_embedding = GIVEN(s, F_ACCOUNT_EMB);
  l->account_loss = GIVEN(s, F_ACCOUNT_LOSS);
  l->first_stage_layers = GIVEN(s, F_FIRST_LAYERS) ? s->i[F_FIRST_LAYERS] : 0;
  /* ModelParallelConfig: None is pp, which the interleaved schedule alone reads */
  l->microbatch_group = GIVEN(s, F_MICROBATCH_GROUP) ? s->i[F_MICROBATCH_GROUP] : 0;
  l->last_stage_layers = GIVEN(s, F_LAST_LAYERS) ? s->i[F_LAST_LAYERS] : 0;
  if ((l->account_embedding || l->account_loss) && (l->first_stage_layers || l->last_stage_layers))
    return parse_error("--account-for-embedding/loss-in-pipeline-split cannot be combined with "
                       "--decoder-first/last-pipeline-num-layers (Megatron-LM refuses it)");
  if (GIVEN(s, F_LAYERS_PER_VSTAGE)) {
    int64_t n = s->i[F_LAYERS_PER_VSTAGE];
    int64_t units = m->num_layers + l->account_embedding + l->account_loss;
    if (units % l->pp != 0 || (units / l->pp) % n != 0)
      return parse_error("--num-layers-per-virtual-pipeline-stage %" G_GINT64_FORMAT " does not "
                         "divide the %" G_GINT64_FORMAT " layers per pipeline stage (--num-layers "
                         "%" G_GINT64_FORMAT "%s / --pipeline-model-parallel-size %" G_GINT64_FORMAT
                         ")",
                         (gint64)n, (gint64)(units / l->pp), (gint64)m->num_layers,
                         units > m->num_layers ? " with the embedding/loss counted" : "",
                         (gint64)l->pp);
    l->vp = units / l->pp / n;
  } else if (GIVEN(s, F_VSTAGES_PER_RANK)) {
    l->vp = s->i[F_VSTAGES_PER_RANK];
  } else if (GIVEN(s, F_PIPELINE_LAYOUT)) {
    if (l->account_embedding || l->account_loss || l->first_stage_layers || l->last_stage_layers)
      return parse_error("--pipeline-model-parallel-layout gives the split: drop "
                         "--account-for-* and --decoder-first/last-pipeline-num-layers");
    return ptsim_pipeline_layout_apply(s->word[F_PIPELINE_LAYOUT], m->num_layers, m->mtp_num_layers,
                                       l, error);
  }
  return TRUE;
}

static gboolean resolve_batch(const Said *s, PtsimLayout *l) {
  if (GIVEN(s, F_MBS)) {
    l->mbs = s->i[F_MBS];
  } else {
    l->mbs = 1;
    NOTE(s, "no --micro-batch-size (Megatron-LM requires it); using 1");
  }
  if (GIVEN(s, F_GBS)) {
    l->gbs = s->i[F_GBS];
  } else {
    int64_t dp = ptsim_layout_data_parallel(l->gpus, l->tp, l->pp, l->cp);
    if (s->diag) s->diag->gbs_from_dp = TRUE;
    if (dp > 0) {
      l->gbs = l->mbs * dp; /* at most 2^30 x 2^22 */
      NOTE(s, "no --global-batch-size; using mbs*dp = %" G_GINT64_FORMAT " as Megatron-LM does",
           (gint64)l->gbs);
    } else {
      l->gbs = 0;
      NOTE(s, "no --global-batch-size; Megatron-LM uses mbs*dp, which needs the GPU count");
    }
  }
  if (GIVEN(s, F_SEQ) || GIVEN(s, F_ENC_SEQ))
    l->seq = GIVEN(s, F_SEQ) ? s->i[F_SEQ] : s->i[F_ENC_SEQ];
  else
    NOTE(s, "no --seq-length");
  return TRUE;
}

/* Bytes of an optimizer dtype flag's word. */
static gboolean dtype_bytes(const Said *s, FlagId id, const char *choices, int *bytes,
                            GError **error) {
  static const int sizes[] = {4, 2, 2, 1}; /* fp32 fp16 bf16 fp8 */
  static const char *const words[] = {"fp32", "fp16", "bf16", "fp8"};
  int k;
  *bytes = 4;
  if (!GIVEN(s, id)) return TRUE;
  if (!pick(ptsim_megatron_flag_name(id), s->word[id], choices, &k, error)) return FALSE;
  for (int w = 0; w < 4; w++)
    if (strcmp(s->word[id], words[w]) == 0) *bytes = sizes[w];
  return TRUE;
}

static gboolean resolve_precision(const Said *s, PtsimSettings *run, GError **error) {
  if (GIVEN(s, F_BF16) && GIVEN(s, F_FP16))
    return parse_error("--bf16 and --fp16 cannot both be given");
  if (GIVEN(s, F_FP8_FORMAT) || GIVEN(s, F_FP8_E4M3) || GIVEN(s, F_FP8_HYBRID)) {
    int fp8 = 0;
    if (GIVEN(s, F_FP8_FORMAT) &&
        !pick("--fp8-format", s->word[F_FP8_FORMAT], "e4m3|hybrid", &fp8, error))
      return FALSE;
    run->precision = PTSIM_PRECISION_FP8;
  } else {
    run->precision = GIVEN(s, F_FP16) ? PTSIM_PRECISION_FP16 : PTSIM_PRECISION_BF16;
  }
  /* Without either flag Megatron-LM keeps fp32 weights, gradients and
   * activations (FP32Optimizer, no master copy; with --fp8-format only the
   * GEMMs' inputs are cast): twice the activation memory and fp32 kernels,
   * which priced as bf16 would be a different run. */
  if (!GIVEN(s, F_BF16) && !GIVEN(s, F_FP16))
    return parse_error("neither --bf16 nor --fp16: Megatron-LM would train with fp32 weights and "
                       "activations%s, which ptsim does not model; add --bf16 (or --fp16) to "
                       "predict the mixed-precision run",
                       run->precision == PTSIM_PRECISION_FP8 ? " (fp8 only inside the GEMMs)" : "");
  int recipe = 0;
  if (GIVEN(s, F_FP8_RECIPE) && !pick("--fp8-recipe", s->word[F_FP8_RECIPE],
                                      "delayed|tensorwise|blockwise|mxfp8|custom", &recipe, error))
    return FALSE;
  if (recipe == 4) {
    ptsim_megatron_add(
        s->diag ? s->diag->unmodelled : NULL,
        g_strdup("--fp8-recipe custom (a custom quantizer: fp8 costs differ from the delayed "
                 "recipe modelled, either way)"));
    recipe = 0;
  }
  run->fp8_recipe = (PtsimFp8Recipe)recipe;
  if (GIVEN(s, F_FP4_FORMAT)) {
    /* --fp4-format e2m1: Transformer Engine's NVFP4 recipe on the layers FP8 would take */
    int fp4 = 0;
    if (!pick("--fp4-format", s->word[F_FP4_FORMAT], "e2m1", &fp4, error)) return FALSE;
    if (run->precision == PTSIM_PRECISION_FP8)
      return parse_error("--fp4-format and --fp8-format cannot both be given (one low-precision "
                         "recipe per run)");
    run->precision = PTSIM_PRECISION_FP8;
    run->fp8_recipe = PTSIM_FP8_NVFP4;
  }
  if (recipe == PTSIM_FP8_BLOCKWISE && run->precision == PTSIM_PRECISION_FP8)
    ptsim_megatron_add(s->diag ? s->diag->unmodelled : NULL,
                       g_strdup("--fp8-recipe blockwise (slower: Hopper runs block-scaled FP8 "
                                "GEMMs slower than per-tensor ones; ptsim prices them alike)"));
  run->fp8_param_gather = GIVEN(s, F_FP8_PARAM_GATHER);
  if (run->fp8_param_gather && !GIVEN(s, F_DIST_OPT) && !GIVEN(s, F_MEGATRON_FSDP) &&
      !GIVEN(s, F_TORCH_FSDP2))
    return parse_error("--fp8-param-gather needs --use-distributed-optimizer, --use-megatron-fsdp "
                       "or --use-torch-fsdp2 (Megatron-LM asserts it)");

  /* The main-grad buffer (arguments.py): bf16 forces fp32 accumulation
   * unless --grad-reduce-in-bf16 or --main-grads-dtype bf16. */
  int main_grads, bytes;
  run->precision_aware_optimizer = GIVEN(s, F_PRECISION_AWARE);
  if (!dtype_bytes(s, F_MAIN_GRADS_DTYPE, "fp32|bf16", &main_grads, error) ||
      !dtype_bytes(s, F_MAIN_PARAMS_DTYPE, "fp32|fp16", &run->main_params_bytes, error) ||
      !dtype_bytes(s, F_EXP_AVG_DTYPE, "fp32|fp16|bf16|fp8", &run->exp_avg_bytes, error) ||
      !dtype_bytes(s, F_EXP_AVG_SQ_DTYPE, "fp32|fp16|bf16|fp8", &bytes, error))
    return FALSE;
  run->exp_avg_sq_bytes = bytes;
  if (!run->precision_aware_optimizer &&
      (main_grads != 4 || run->main_params_bytes != 4 || run->exp_avg_bytes != 4 || bytes != 4))
    return parse_error("--main-grads-dtype, --main-params-dtype, --exp-avg-dtype and "
                       "--exp-avg-sq-dtype other than fp32 need --use-precision-aware-optimizer "
                       "(Megatron-LM asserts it)");
  gboolean fp32_grads = GIVEN(s, F_ACCUMULATE_FP32);
  if (run->precision != PTSIM_PRECISION_FP16) {
    if (GIVEN(s, F_GRAD_BF16))
      fp32_grads = FALSE;
    else if (main_grads == 4)
      fp32_grads = TRUE;
  }
  run->fp32_grad_accumulation = fp32_grads ? 1 : 0;
  run->grad_accumulation_fusion = !GIVEN(s, F_NO_GRAD_FUSION);
  run->cross_entropy_fusion = GIVEN(s, F_CE_FUSION);
  int ce_impl = 0; /* ModelParallelConfig.cross_entropy_fusion_impl: 'native' */
  if (GIVEN(s, F_CE_FUSION_IMPL) &&
      !pick("--cross-entropy-fusion-impl", s->word[F_CE_FUSION_IMPL], "native|te", &ce_impl, error))
    return FALSE;
  run->cross_entropy_te = ce_impl == 1;
  run->swiglu_unfused = GIVEN(s, F_NO_SWIGLU_FUSION);
  if (run->swiglu_unfused && GIVEN(s, F_SWIGLU))
    NOTE(s, "--no-bias-swiglu-fusion: its memory is modelled (the SiLU output kept besides fc1's, "
            "2 s b f / t bytes a layer), the time of its separate kernels is not (slower)");
  run->defer_embedding_wgrad = GIVEN(s, F_DEFER_EMBEDDING_WGRAD);
  run->wgrad_deferral_limit = 0; /* ModelParallelConfig: all microbatches */
  if (GIVEN(s, F_WGRAD_DEFERRAL_LIMIT) &&
      !ptsim_number_int64("--wgrad-deferral-limit", s->word[F_WGRAD_DEFERRAL_LIMIT], 0,
                          PTSIM_CONFIG_INT_MAX, &run->wgrad_deferral_limit, error))
    return FALSE;

  int optimizer = 0;
  if (GIVEN(s, F_OPTIMIZER)) {
    const char *o = s->word[F_OPTIMIZER];
    if (strcmp(o, "adam") == 0)
      optimizer = 0;
    else if (strcmp(o, "sgd") == 0)
      optimizer = 1;
    else
      ptsim_megatron_add(
          s->diag ? s->diag->unmodelled : NULL,
          g_strdup_printf("--optimizer %s (other optimizer states and step: memory and time "
                          "differ from Adam's, either way)",
                          o));
  }
  if (optimizer == 1) run->exp_avg_sq_bytes = 0; /* SGD keeps one momentum buffer */
  return TRUE;
}

/* Which attention and which layers: Transformer Engine (flash/fused
 * attention unless --attention-backend unfused|local) or Megatron's local
 * layers (unfused DotProductAttention); the legacy models of older
 * releases honour --use-flash-attn, Megatron-Core ignores it. */
static gboolean resolve_attention(const Said *s, PtsimSettings *run, GError **error) {
  int impl = 0, backend = 4;
  if (GIVEN(s, F_TRANSFORMER_IMPL) &&
      !pick("--transformer-impl", s->word[F_TRANSFORMER_IMPL],
            "transformer_engine|local|inference_optimized", &impl, error))
    return FALSE;
  if (GIVEN(s, F_ATTENTION_BACKEND) && !pick("--attention-backend", s->word[F_ATTENTION_BACKEND],
                                             "flash|fused|unfused|local|auto", &backend, error))
    return FALSE;
  /* TransformerConfig.__post_init__: query-key layer scaling turns the
   * fp32 softmax on */
  run->attention_softmax_fp32 = GIVEN(s, F_SOFTMAX_FP32) || GIVEN(s, F_QK_LAYER_SCALING);
  /* TransformerConfig.masked_softmax_fusion: off, Megatron's local attention
   * takes PyTorch's softmax (its memory is modelled, its time is not) */
  run->masked_softmax_unfused = GIVEN(s, F_NO_MASKED_SOFTMAX);
  if (run->masked_softmax_unfused)
    ptsim_megatron_add(s->diag ? s->diag->unmodelled : NULL,
                       g_strdup("--no-masked-softmax-fusion (slower with unfused attention: the "
                                "softmax is not fused)"));
  if (GIVEN(s, F_LEGACY)) {
    run->transformer_engine = 0;
    run->flash_attention = GIVEN(s, F_FLASH);
    return TRUE;
  }
  run->transformer_engine = impl != 1;
  run->flash_attention = impl != 1 && backend != 2 && backend != 3;
  if (GIVEN(s, F_FLASH) && !run->flash_attention)
    NOTE(s,
         "--use-flash-attn has no effect on Megatron-Core's %s (it keeps the s x s scores); "
         "it applies to --use-legacy-models only",
         impl == 1 ? "local layers" : "unfused attention backend");
  return TRUE;
}

static gboolean resolve_recompute(const Said *s, PtsimSettings *run, GError **error) {
  int granularity = -1;
  if (GIVEN(s, F_RECOMPUTE_GRANULARITY) &&
      !pick("--recompute-granularity", s->word[F_RECOMPUTE_GRANULARITY], "full|selective",
            &granularity, error))
    return FALSE;
  if (GIVEN(s, F_RECOMPUTE_ACTIVATIONS)) granularity = 1; /* = selective */
  run->recompute = granularity == 0   ? PTSIM_RECOMPUTE_FULL
                   : granularity == 1 ? PTSIM_RECOMPUTE_SELECTIVE
                                      : PTSIM_RECOMPUTE_NONE;
  int method = 0;
  if (GIVEN(s, F_RECOMPUTE_METHOD)) {
    if (!pick("--recompute-method", s->word[F_RECOMPUTE_METHOD], "uniform|block", &method, error))
      return FALSE;
    if (run->recompute == PTSIM_RECOMPUTE_SELECTIVE)
      return parse_error("--recompute-method %s is not supported with selective recomputation "
                         "(Megatron-LM refuses it)",
                         s->word[F_RECOMPUTE_METHOD]);
  }
  run->recompute_method = method == 1 ? PTSIM_RECOMPUTE_METHOD_BLOCK
                                      : PTSIM_RECOMPUTE_METHOD_UNIFORM;
  run->recompute_num_layers = GIVEN(s, F_RECOMPUTE_NUM_LAYERS) ? s->i[F_RECOMPUTE_NUM_LAYERS] : 0;
  if (run->recompute == PTSIM_RECOMPUTE_FULL &&
      (!GIVEN(s, F_RECOMPUTE_METHOD) || !GIVEN(s, F_RECOMPUTE_NUM_LAYERS)))
    NOTE(s, "--recompute-granularity full without --recompute-method and --recompute-num-layers "
            "(Megatron-Core asks for both); recomputing every layer");
  if (GIVEN(s, F_RECOMPUTE_MODULES)) {
    /* the GDN and mHC modules have nothing to recompute in the models
     * ptsim builds */
    static const char *const known = "core_attn|mlp|layernorm|moe_act|moe|shared_experts|"
                                     "mla_up_proj|gdn_norm_out|gdp_in_proj|gdp_qkv|mhc";
    int at = s->list_at[F_RECOMPUTE_MODULES], n = s->list_len[F_RECOMPUTE_MODULES];
    g_auto(GStrv) eq = at < 0 ? g_strsplit(s->word[F_RECOMPUTE_MODULES], ",", -1) : NULL;
    run->recompute_modules = 0;
    for (int k = 0; at < 0 ? eq[k] != NULL : k < n; k++) {
      int m;
      if (!pick("--recompute-modules", at < 0 ? eq[k] : s->argv[at + k], known, &m, error))
        return FALSE;
      if (m < 7) run->recompute_modules |= 1 << m; /* names.h: PTSIM_NAMES_RECOMPUTE_MODULE */
    }
  }
  return TRUE;
}

/* --cp-comm-type: one word, or one per layer; p2p, a2a and allgather are
 * modelled, a2a+p2p (hierarchical, --hierarchical-context-parallel-sizes)
 * is priced as the p2p ring, and per-layer types that differ as the
 * first's, each with a note. */
static gboolean resolve_cp_comm(const Said *s, PtsimSettings *run, GError **error) {
  if (!GIVEN(s, F_CP_COMM_TYPE)) return TRUE;
  int at = s->list_at[F_CP_COMM_TYPE], n = at < 0 ? 1 : s->list_len[F_CP_COMM_TYPE];
  int first = -1;
  for (int k = 0; k < n; k++) {
    int v;
    if (!pick("--cp-comm-type", at < 0 ? s->word[F_CP_COMM_TYPE] : s->argv[at + k],
              "p2p|a2a|allgather|a2a+p2p", &v, error))
      return FALSE;
    if (first < 0)
      first = v;
    else if (v != first) {
      ptsim_megatron_add(s->diag ? s->diag->unmodelled : NULL,
                         g_strdup("--cp-comm-type per layer (the first layer's type is priced "
                                  "for every layer; either way)"));
      break;
    }
  }
  if (first == 3) {
    ptsim_megatron_add(s->diag ? s->diag->unmodelled : NULL,
                       g_strdup("--cp-comm-type a2a+p2p (hierarchical: priced as the p2p ring "
                                "over the whole CP group; either way)"));
    first = 0;
  }
  run->cp_comm = (PtsimCpComm)first;
  return TRUE;
}

static gboolean resolve_overlap(const Said *s, PtsimLayout *l, PtsimSettings *run, GError **error) {
  run->overlap_grad_reduce = GIVEN(s, F_OVERLAP_GRAD);
  run->overlap_param_gather = GIVEN(s, F_OVERLAP_PARAM);
  if (run->overlap_param_gather &&
      ((!l->distributed_optimizer && !GIVEN(s, F_MEGATRON_FSDP)) || !run->overlap_grad_reduce))
    return parse_error("--overlap-param-gather needs --use-distributed-optimizer (or "
                       "--use-megatron-fsdp) and --overlap-grad-reduce (Megatron-LM asserts it)");
  run->tp_comm_overlap = GIVEN(s, F_TP_OVERLAP);
  if (run->tp_comm_overlap && l->tp > 1 && !l->sp)
    return parse_error("--tp-comm-overlap needs --sequence-parallel (Megatron-LM asserts it)");
  if (run->tp_comm_overlap && l->tp == 1)
    NOTE(s, "--tp-comm-overlap has nothing to overlap with tensor-model-parallel-size 1");
  run->tp_comm_overlap_ag = !GIVEN(s, F_TP_NO_AG);
  run->tp_comm_overlap_rs = !GIVEN(s, F_TP_NO_RS);
  run->tp_comm_bulk_dgrad = !GIVEN(s, F_TP_NO_BULK_DGRAD);
  run->tp_comm_overlap_rs_dgrad = GIVEN(s, F_TP_RS_DGRAD);
  l->optimizer_instances = GIVEN(s, F_INSTANCES) ? s->i[F_INSTANCES] : 1;
  return TRUE;
}

/* --timing-log-level (arguments.py: int, choices 0-2, default 0): at 0,
 * Megatron's default, only the step's own timer runs; from 1 on the
 * per-phase timers synchronise (a barrier each), which ptsim does not price:
 * warned then, and only then. */
static gboolean resolve_timers(const Said *s, GError **error) {
  int64_t level = 0;
  if (GIVEN(s, F_TIMING_LOG_LEVEL) &&
      !ptsim_number_int64("--timing-log-level", s->word[F_TIMING_LOG_LEVEL], 0, 2, &level, error))
    return FALSE;
  if (level >= 1)
    ptsim_megatron_add(s->diag ? s->diag->unmodelled : NULL,
                       g_strdup_printf("--timing-log-level %" G_GINT64_FORMAT
                                       " (slightly slower: its timers add barriers)",
                                       level));
  return TRUE;
}

/* Sharded data parallelism (arguments.py, the FSDP adapters of
 * megatron/core/distributed):
 *   --use-megatron-fsdp (--use-custom-fsdp)   Megatron-FSDP; v1 turns the
 *       distributed optimizer on; --data-parallel-sharding-strategy (its
 *       CLI default optim_grads_params) is no_shard | optim (ZeRO-1) |
 *       optim_grads (ZeRO-2) | optim_grads_params (ZeRO-3), with
 *       --num-distributed-optimizer-instances replicas (HSDP); it reshards
 *       every unit after forward and reduces gradients every backward
 *   --use-torch-fsdp2   fully_shard on each layer, the embedding and the
 *       output layer of the bf16 model, without a MixedPrecisionPolicy:
 *       gradients are reduced in bf16; Megatron's optimizer keeps fp32
 *       main parameters of the shards (ptsim's megatron states);
 *       --torch-fsdp2-no-reshard-after-forward keeps the units gathered */
static gboolean resolve_sharding(const Said *s, const PtsimModel *m, PtsimLayout *l,
                                 PtsimSettings *run, GError **error) {
  int strategy = 3;
  if (GIVEN(s, F_MEGATRON_FSDP) && GIVEN(s, F_TORCH_FSDP2))
    return parse_error("--use-megatron-fsdp and --use-torch-fsdp2 are two FSDP implementations; "
                       "give one");
  if (GIVEN(s, F_SHARDING_STRATEGY) &&
      !pick("--data-parallel-sharding-strategy", s->word[F_SHARDING_STRATEGY],
            "no_shard|optim|optim_grads|optim_grads_params", &strategy, error))
    return FALSE;
  if (GIVEN(s, F_TORCH_FSDP2_NO_RESHARD) && !GIVEN(s, F_TORCH_FSDP2))
    NOTE(s, "--torch-fsdp2-no-reshard-after-forward has no effect without --use-torch-fsdp2");
  if (GIVEN(s, F_MEGATRON_FSDP)) {
    run->fsdp_impl = PTSIM_FSDP_MEGATRON; /* reshards every unit: RESHARD_AUTO's */
    l->distributed_optimizer = strategy != 0;
    l->sharding = strategy == 3   ? PTSIM_SHARDING_PARAMS
                  : strategy == 2 ? PTSIM_SHARDING_GRADS
                                  : PTSIM_SHARDING_NONE;
    if (strategy == 0)
      NOTE(s, "--use-megatron-fsdp with --data-parallel-sharding-strategy no_shard keeps every "
              "state replicated: modelled as DDP");
    return TRUE;
  }
  if (GIVEN(s, F_SHARDING_STRATEGY))
    NOTE(s, "--data-parallel-sharding-strategy %s has no effect without --use-megatron-fsdp",
         s->word[F_SHARDING_STRATEGY]);
  if (!GIVEN(s, F_TORCH_FSDP2)) return TRUE;
  if (l->pp > 1)
    return parse_error("--use-torch-fsdp2 is not supported with pipeline parallelism (Megatron-LM "
                       "asserts it)");
  if (GIVEN(s, F_DIST_OPT))
    return parse_error("--use-torch-fsdp2 is not supported with --use-distributed-optimizer "
                       "(Megatron-LM asserts it)");
  if (run->grad_accumulation_fusion)
    return parse_error("--use-torch-fsdp2 is not supported with gradient accumulation fusion, "
                       "Megatron-LM's default: add --no-gradient-accumulation-fusion (Megatron-LM "
                       "asserts it)");
  if (m->tied_embeddings)
    return parse_error("--use-torch-fsdp2 requires --untie-embeddings-and-output-weights "
                       "(Megatron-LM asserts it)");
  if (run->precision == PTSIM_PRECISION_FP16)
    return parse_error("--use-torch-fsdp2 is not supported with --fp16 (Megatron-LM asserts it)");
  if (l->optimizer_instances > 1)
    return parse_error("--use-torch-fsdp2 shards over all data-parallel ranks: "
                       "--num-distributed-optimizer-instances must be 1");
  if (GIVEN(s, F_EP) && s->i[F_EP] > 1)
    return parse_error("--use-torch-fsdp2 is not supported with expert parallelism (Megatron-LM "
                       "asserts it)");
  /* with ep 1 the experts' data-parallel group is dp x cp, the group
   * fully_shard uses, only when etp is tp */
  if (m->num_experts > 0 && GIVEN(s, F_ETP) && s->i[F_ETP] != l->tp)
    return parse_error("--use-torch-fsdp2 with --expert-tensor-parallel-size %" G_GINT64_FORMAT
                       " (not --tensor-model-parallel-size %" G_GINT64_FORMAT ") is not modelled "
                       "yet",
                       (gint64)s->i[F_ETP], (gint64)l->tp);
  run->fsdp_impl = PTSIM_FSDP_MEGATRON;
  l->sharding = PTSIM_SHARDING_PARAMS;
  l->distributed_optimizer = 1;    /* the optimizer's states are the shards' */
  run->fp32_grad_accumulation = 0; /* reduced in the bf16 parameter dtype */
  run->reshard_after_forward = GIVEN(s, F_TORCH_FSDP2_NO_RESHARD) ? PTSIM_RESHARD_NEVER
                                                                  : PTSIM_RESHARD_ALWAYS;
  return TRUE;
}

/* Does list flag ID (a list, "a,b", or "[a b]" as YAML writes it) name
 * WORD? */
static gboolean list_names(const Said *s, FlagId id, const char *word) {
  int n = s->list_at[id] < 0 ? 1 : s->list_len[id];
  for (int k = 0; k < n; k++) {
    const char *text = s->list_at[id] < 0 ? s->word[id] : s->argv[s->list_at[id] + k];
    g_auto(GStrv) parts = g_strsplit_set(text ? text : "", "[], '\"", -1);
    for (int i = 0; parts[i]; i++)
      if (strcmp(parts[i], word) == 0) return TRUE;
  }
  return FALSE;
}

/* What the host issues: the norms logged every step, and CUDA graphs
 * (--cuda-graph-impl local|transformer_engine, the older
 * --enable-cuda-graph and --external-cuda-graph; --cuda-graph-scope, or
 * its older name --cuda-graph-modules: a layer by default, its attention
 * part alone for attn without mlp, the whole forward-backward for
 * full_iteration; an MoE layer's dispatch and experts only for moe: its
 * token counts vary, and moe_router / moe_preprocess capture the router
 * alone). */
static void resolve_host(const Said *s, PtsimHost *host) {
  FlagId scope = GIVEN(s, F_CUDA_GRAPH_SCOPE) ? F_CUDA_GRAPH_SCOPE : F_CUDA_GRAPH_MODULES;
  gboolean graphs = GIVEN(s, F_ENABLE_CUDA_GRAPH) || GIVEN(s, F_EXTERNAL_CUDA_GRAPH);
  if (GIVEN(s, F_CUDA_GRAPH_IMPL)) graphs = strcmp(s->word[F_CUDA_GRAPH_IMPL], "none") != 0;
  host->log_params_norm = GIVEN(s, F_LOG_PARAMS_NORM);
  host->log_num_zeros = GIVEN(s, F_LOG_ZEROS);
  host->test_mode = GIVEN(s, F_TEST_MODE);
  /* Megatron-LM's default --log-interval is 100 (arguments.py) */
  host->log_interval = GIVEN(s, F_LOG_INTERVAL) ? s->i[F_LOG_INTERVAL] : 100;
  host->graphs = PTSIM_GRAPH_NONE;
  host->graph_moe = 0;
  host->graph_impl = PTSIM_GRAPH_IMPL_NONE;
  if (!graphs) return;
  host->graphs = PTSIM_GRAPH_LAYER;
  /* arguments.py: --enable-cuda-graph means local, --external-cuda-graph
   * transformer_engine */
  host->graph_impl = (GIVEN(s, F_CUDA_GRAPH_IMPL) ? strcmp(s->word[F_CUDA_GRAPH_IMPL], "local") == 0
                                                  : GIVEN(s, F_ENABLE_CUDA_GRAPH))
                         ? PTSIM_GRAPH_IMPL_LOCAL
                         : PTSIM_GRAPH_IMPL_TE;
  if (!GIVEN(s, scope) || list_names(s, scope, "full")) return;
  if (list_names(s, scope, "full_iteration"))
    host->graphs = PTSIM_GRAPH_ITERATION;
  else if (list_names(s, scope, "attn") && !list_names(s, scope, "mlp"))
    host->graphs = PTSIM_GRAPH_ATTN;
  host->graph_moe = list_names(s, scope, "moe");
}

/* --fine-grained-activation-offloading with --offload-modules (its
 * choices in arguments.py, in PTSIM_OFFLOAD_* order; memory.c, "Activation
 * offloading"). */
static gboolean resolve_offloading(const Said *s, PtsimSettings *run, GError **error) {
  static const char *const modules[] = {"attn_norm", "qkv_linear", "core_attn", "attn_proj",
                                        "mlp_norm",  "expert_fc1", "moe_act"};
  run->offload_modules = 0;
  if (!GIVEN(s, F_FG_OFFLOADING)) return TRUE;
  for (int i = 0; i < (int)G_N_ELEMENTS(modules); i++)
    if (GIVEN(s, F_OFFLOAD_MODULES) && list_names(s, F_OFFLOAD_MODULES, modules[i]))
      run->offload_modules |= 1 << i;
  if (run->offload_modules == 0) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                "--fine-grained-activation-offloading: no --offload-modules ptsim knows "
                "(attn_norm, qkv_linear, core_attn, attn_proj, mlp_norm, expert_fc1, moe_act)");
    return FALSE;
  }
  return TRUE;
}

gboolean ptsim_megatron_resolve_job(const Said *s, PtsimJob *job, GError **error) {
  const PtsimModel *m = &job->model;
  PtsimLayout *l = &job->layout;
  PtsimSettings *run = &job->settings;
  PtsimProvenance *src = &job->source;
  int64_t gpus = l->gpus;
  ptsim_job_init_defaults(job);
  l->gpus = gpus;
  l->tp = GIVEN(s, F_TP) ? s->i[F_TP] : 1;
  l->pp = GIVEN(s, F_PP) ? s->i[F_PP] : 1;
  l->cp = GIVEN(s, F_CP) ? s->i[F_CP] : 1;
  l->sp = GIVEN(s, F_SP) && l->tp > 1 ? 1 : 0;
  if (GIVEN(s, F_SP) && l->tp == 1)
    NOTE(s, "--sequence-parallel is switched off with tensor-model-parallel-size 1, as "
            "Megatron-LM does");
  l->distributed_optimizer = GIVEN(s, F_DIST_OPT) ? 1 : 0;
  src->attention_dropout = GIVEN(s, F_ATTENTION_DROPOUT) ? s->d[F_ATTENTION_DROPOUT] : 0.1;
  src->hidden_dropout = GIVEN(s, F_HIDDEN_DROPOUT) ? s->d[F_HIDDEN_DROPOUT] : 0.1;
  run->manual_gc = GIVEN(s, F_MANUAL_GC);
  run->deterministic = GIVEN(s, F_DETERMINISTIC);
  if (run->deterministic) /* the filled outputs are modelled (workload.c), not the kernels */
    ptsim_megatron_add(s->diag ? s->diag->unmodelled : NULL,
                       g_strdup("--deterministic-mode (slower: deterministic attention backward "
                                "and index kernels; its filled outputs are modelled)"));
  resolve_host(s, &run->host);
  l->schedule = PTSIM_SCHEDULE_1F1B; /* interleaved when vp > 1: validate */
  return resolve_split(s, m, l, error) && resolve_batch(s, l) && resolve_precision(s, run, error) &&
         resolve_cp_comm(s, run, error) && resolve_attention(s, run, error) &&
         resolve_recompute(s, run, error) && resolve_overlap(s, l, run, error) &&
         resolve_sharding(s, m, l, run, error) && resolve_timers(s, error) &&
         resolve_offloading(s, run, error);
}
