/* job_options_apply.c — the job options' values onto a job: the
 * dimensions, the settings, the model-shape settings and the sharding
 * mode, each word checked against what its flag allows; see
 * job_options.h. */
#include "job_options.h"

#include <string.h>
#include "job_validate.h"
#include "names.h"
#include "topology.h"

#define invalid(...) \
  (g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID, __VA_ARGS__), FALSE)

/* Index of WORD in CHOICES ("a|b"), or an error naming the flag. */
static gboolean choose(const char *flag, const char *word, const char *choices, int *out,
                       GError **error) {
  g_auto(GStrv) list = g_strsplit(choices, "|", -1);
  for (int i = 0; list[i]; i++)
    if (strcmp(word, list[i]) == 0) return *out = i, TRUE;
  return invalid("%s '%s': allowed values are %s", flag, word, choices);
}

static gboolean parse_enum(PtsimNamesKind kind, const char *flag, const char *word, int *value,
                           GError **error) {
  if (ptsim_names_parse(kind, word, value)) return TRUE;
  return invalid("%s '%s': allowed values are %s", flag, word, ptsim_names_allowed(kind));
}

/* NAME=VALUE with NAME a shell variable's name. */
static gboolean env_entry(const char *e) {
  const char *eq = strchr(e, '=');
  gboolean name = eq && eq > e && (g_ascii_isalpha(*e) || *e == '_');
  for (const char *c = e; name && c < eq; c++) name = g_ascii_isalnum(*c) || *c == '_';
  return name;
}

gboolean ptsim_job_options_shell_inputs(const PtsimJobOptions *o, char ***args, char ***env,
                                        GError **error) {
  *args = *env = NULL;
  if (o->script_args) {
    g_autofree char *trimmed = g_strstrip(g_strdup(o->script_args));
    g_autoptr(GError) local = NULL;
    if (trimmed[0] != '\0' && !g_shell_parse_argv(trimmed, NULL, args, &local)) {
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID, "--script-args '%s': %s",
                  o->script_args, local->message);
      return FALSE;
    }
  }
  GStrvBuilder *b = g_strv_builder_new();
  if (o->env_from_process) { /* the names a shell could hold; BASH_FUNC_x%% and the like not */
    g_auto(GStrv) process = g_get_environ();
    for (char **e = process; *e; e++)
      if (env_entry(*e)) g_strv_builder_add(b, *e);
  }
  for (char **e = o->env; e && *e; e++) {
    if (!env_entry(*e)) {
      g_strv_builder_unref(b);
      g_strfreev(*args);
      *args = NULL;
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                  "--env '%s': expected NAME=VALUE (NAME of letters, digits and _, not starting "
                  "with a digit)",
                  *e);
      return FALSE;
    }
    g_strv_builder_add(b, *e);
  }
  *env = g_strv_builder_end(b);
  g_strv_builder_unref(b);
  return TRUE;
}

/* Both factors are bounded, so the product cannot overflow. */
gboolean ptsim_job_options_nodes_gpus(const PtsimJobOptions *o, const PtsimHardware *hw,
                                      int64_t *gpus, GError **error) {
  *gpus = o->nodes.value * hw->gpus_per_node;
  if (*gpus <= PTSIM_JOB_GPUS_MAX) return TRUE;
  return invalid("--nodes %" G_GINT64_FORMAT ": %" G_GINT64_FORMAT " x %" G_GINT64_FORMAT
                 " GPUs per node (%s) = %" G_GINT64_FORMAT " GPUs, more than the %" G_GINT64_FORMAT
                 " allowed",
                 (gint64)o->nodes.value, (gint64)o->nodes.value, (gint64)hw->gpus_per_node,
                 hw->name, (gint64)*gpus, (gint64)PTSIM_JOB_GPUS_MAX);
}

gboolean ptsim_job_options_apply_dimensions(const PtsimJobOptions *o, PtsimJob *job,
                                            GError **error) {
  PtsimLayout *l = &job->layout;
  PtsimSettings *run = &job->settings;
  int v;
  const struct {
    const PtsimOptionInt *flag;
    int64_t *value;
  } counts[] = {{&o->tp, &l->tp},   {&o->pp, &l->pp},   {&o->cp, &l->cp},    {&o->dp, &l->dp},
                {&o->vp, &l->vp},   {&o->ep, &l->ep},   {&o->etp, &l->etp},  {&o->mbs, &l->mbs},
                {&o->gbs, &l->gbs}, {&o->seq, &l->seq}, {&o->gpus, &l->gpus}};
  for (size_t i = 0; i < G_N_ELEMENTS(counts); i++)
    if (counts[i].flag->given) *counts[i].value = counts[i].flag->value;
  if (o->nodes.given && !ptsim_job_options_nodes_gpus(o, &job->hw, &l->gpus, error)) return FALSE;
  if (o->recompute) {
    if (!parse_enum(PTSIM_NAMES_RECOMPUTE, "--recompute", o->recompute, &v, error)) return FALSE;
    run->recompute = (PtsimRecompute)v;
  }
  if (o->schedule) {
    if (!parse_enum(PTSIM_NAMES_SCHEDULE, "--schedule", o->schedule, &v, error)) return FALSE;
    l->schedule = (PtsimSchedule)v;
  }
  return TRUE;
}

/* The MoE settings (mixture-of-experts models only read them). */
static gboolean apply_moe_settings(const PtsimJobOptions *o, PtsimSettings *run, GError **error) {
  int v;
  if (o->moe_dispatcher) {
    if (!parse_enum(PTSIM_NAMES_DISPATCHER, "--moe-token-dispatcher-type", o->moe_dispatcher, &v,
                    error))
      return FALSE;
    run->moe_dispatcher = (PtsimDispatcher)v;
  }
  if (o->moe_capacity_factor.given) run->moe_capacity_factor = o->moe_capacity_factor.value;
  if (o->moe_pad_to_capacity) run->moe_pad_to_capacity = 1;
  if (o->moe_grouped_gemm) run->moe_grouped_gemm = 1;
  if (o->no_moe_grouped_gemm) run->moe_grouped_gemm = 0;
  if (o->moe_permute_fusion) run->moe_permute_fusion = 1;
  if (o->moe_router_fusion) run->moe_router_fusion = 1;
  if (o->moe_router_dtype) {
    if (!choose("--moe-router-dtype", o->moe_router_dtype, "fp32", &v, error)) return FALSE;
    run->moe_router_fp32 = 1;
  }
  if (o->moe_shared_expert_overlap) run->moe_shared_expert_overlap = 1;
  if (o->moe_ep_comm_overlap) run->moe_ep_comm_overlap = 1;
  if (o->delay_wgrad_compute) run->delay_wgrad_compute = 1;
  return TRUE;
}

/* An overlap switch: the specific flag, else --no-overlap, else *value. */
static void overlap_switch(int *value, gboolean on, gboolean off, gboolean all_off) {
  if (all_off) *value = 0;
  if (on) *value = 1;
  if (off) *value = 0;
}

/* N digits of TEXT as a number, or -1 when they are not all digits. */
static int digits(const char *text, int n) {
  int v = 0;
  for (int i = 0; i < n; i++) {
    if (!g_ascii_isdigit(text[i])) return -1;
    v = v * 10 + (text[i] - '0');
  }
  return v;
}

/* "YYYY-MM-DD" or "YYYY-MM" (the 1st), or "current" (0), as YYYYMMDD:
 * exactly those digits (no sign, blank or wider field). */
static gboolean parse_megatron_date(const char *word, int32_t *date, GError **error) {
  size_t len = strlen(word);
  if (strcmp(word, "current") == 0) return *date = 0, TRUE;
  int year = digits(word, 4), month = len >= 7 ? digits(word + 5, 2) : -1;
  int day = len == 10 ? digits(word + 8, 2) : 1;
  if ((len == 7 || (len == 10 && word[7] == '-')) && word[4] == '-' && year >= 2019 &&
      year <= 2100 && month >= 1 && month <= 12 && day >= 1 && day <= 31)
    return *date = (int32_t)(year * 10000 + month * 100 + day), TRUE;
  return invalid("--megatron-date '%s': allowed values are a date YYYY-MM-DD or YYYY-MM "
                 "(2019 to 2100) of the Megatron-LM source, or current",
                 word);
}

static int dtype_size(const char *word) {
  return strcmp(word, "fp32") == 0 ? 4 : strcmp(word, "fp8") == 0 ? 1 : 2;
}

/* The layout's options that are not dimensions: sequence parallelism, the
 * distributed optimizer and its instances, the uneven split, the
 * interleaved schedule's microbatch group. */
/* LoRA: --lora-rank R, --lora-alpha, --lora-target-modules (Megatron-
 * Bridge's target_modules names; its defaults: alpha 32, all four). */
static gboolean apply_lora(const PtsimJobOptions *o, PtsimSettings *run, GError **error) {
  const char *without = o->lora_alpha.given              ? "--lora-alpha"
                        : o->lora_target_modules != NULL ? "--lora-target-modules"
                                                         : NULL;
  int v;
  if (!o->lora_rank.given) {
    if (!without) return TRUE;
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                "%s needs --lora-rank R (LoRA's adapters)", without);
    return FALSE;
  }
  run->lora_rank = o->lora_rank.value;
  run->lora_alpha = o->lora_alpha.given ? o->lora_alpha.value : 32.0;
  run->lora_targets = PTSIM_LORA_ALL;
  if (o->lora_target_modules) {
    g_auto(GStrv) names = g_strsplit(o->lora_target_modules, ",", -1);
    run->lora_targets = 0;
    for (char **n = names; *n; n++) {
      if (!choose("--lora-target-modules", g_strstrip(*n),
                  "linear_qkv|linear_proj|linear_fc1|linear_fc2", &v, error))
        return FALSE;
      run->lora_targets |= 1 << v; /* PTSIM_LORA_QKV, _PROJ, _FC1, _FC2 */
    }
  }
  return TRUE;
}

/* CUDA graphs: --cuda-graph-impl and --cuda-graph-scope as Megatron-LM
 * reads them (megatron_resolve.c resolve_host: each layer by default; its
 * attention alone for attn without mlp; the whole step for
 * full_iteration; an MoE layer's experts for moe). */
static gboolean apply_cuda_graphs(const PtsimJobOptions *o, PtsimHost *host, GError **error) {
  static const char *const scopes =
      "full|attn|mlp|moe|moe_router|moe_preprocess|mamba|full_iteration";
  int impl, v, named = 0;
  if (!o->cuda_graph_impl) {
    if (o->cuda_graph_scope) return invalid("--cuda-graph-scope needs --cuda-graph-impl");
    return TRUE;
  }
  if (!choose("--cuda-graph-impl", o->cuda_graph_impl, "none|local|transformer_engine", &impl,
              error))
    return FALSE;
  host->graphs = PTSIM_GRAPH_NONE;
  host->graph_moe = 0;
  host->graph_impl = PTSIM_GRAPH_IMPL_NONE;
  if (impl == 0) {
    if (o->cuda_graph_scope)
      return invalid("--cuda-graph-scope needs graphs (--cuda-graph-impl none)");
    return TRUE;
  }
  host->graph_impl = impl == 1 ? PTSIM_GRAPH_IMPL_LOCAL : PTSIM_GRAPH_IMPL_TE;
  host->graphs = PTSIM_GRAPH_LAYER;
  if (!o->cuda_graph_scope) return TRUE;
  g_auto(GStrv) names = g_strsplit(o->cuda_graph_scope, ",", -1);
  for (char **n = names; *n; n++) {
    if (!choose("--cuda-graph-scope", g_strstrip(*n), scopes, &v, error)) return FALSE;
    named |= 1 << v;
  }
  if (named & 1) return TRUE; /* full: each layer */
  if (named & (1 << 7))
    host->graphs = PTSIM_GRAPH_ITERATION;
  else if ((named & 2) && !(named & 4))
    host->graphs = PTSIM_GRAPH_ATTN;
  host->graph_moe = (named & 8) != 0;
  return TRUE;
}

/* --fine-grained-activation-offloading with --offload-modules (Megatron-
 * LM's names, PTSIM_OFFLOAD_* bits in their order). */
static gboolean apply_offloading(const PtsimJobOptions *o, PtsimSettings *run, GError **error) {
  int v;
  if (!o->fine_grained_offloading) {
    if (o->offload_modules)
      return invalid("--offload-modules needs --fine-grained-activation-offloading");
    return TRUE;
  }
  if (!o->offload_modules)
    return invalid(
        "--fine-grained-activation-offloading needs --offload-modules (what to offload)");
  run->offload_modules = 0;
  g_auto(GStrv) names = g_strsplit(o->offload_modules, ",", -1);
  for (char **n = names; *n; n++) {
    if (!choose("--offload-modules", g_strstrip(*n),
                "attn_norm|qkv_linear|core_attn|attn_proj|mlp_norm|expert_fc1|moe_act", &v, error))
      return FALSE;
    run->offload_modules |= 1 << v;
  }
  return TRUE;
}

static void apply_layout_settings(const PtsimJobOptions *o, PtsimLayout *l) {
  if (o->sp) l->sp = 1;
  if (o->no_sp) l->sp = 0;
  if (o->distributed_optimizer) l->distributed_optimizer = 1;
  if (o->no_distributed_optimizer) l->distributed_optimizer = 0;
  if (o->optimizer_instances.given) l->optimizer_instances = o->optimizer_instances.value;
  if (o->first_stage_layers.given) l->first_stage_layers = o->first_stage_layers.value;
  if (o->last_stage_layers.given) l->last_stage_layers = o->last_stage_layers.value;
  if (o->microbatch_group.given) l->microbatch_group = o->microbatch_group.value;
  if (o->account_embedding) l->account_embedding = 1;
  if (o->account_loss) l->account_loss = 1;
}

/* The run's settings, in the order their words are checked. */
static gboolean apply_run_settings(const PtsimJobOptions *o, PtsimSettings *run, GError **error) {
  int v;
  if (o->recompute_method) {
    if (!parse_enum(PTSIM_NAMES_RECOMPUTE_METHOD, "--recompute-method", o->recompute_method, &v,
                    error))
      return FALSE;
    run->recompute_method = (PtsimRecomputeMethod)v;
  }
  if (o->recompute_num_layers.given) run->recompute_num_layers = o->recompute_num_layers.value;
  if (o->recompute_modules) {
    g_auto(GStrv) names = g_strsplit(o->recompute_modules, ",", -1);
    run->recompute_modules = 0;
    for (char **n = names; *n; n++) {
      if (!parse_enum(PTSIM_NAMES_RECOMPUTE_MODULE, "--recompute-modules", g_strstrip(*n), &v,
                      error))
        return FALSE;
      run->recompute_modules |= 1 << v; /* PTSIM_RECOMPUTE_CORE_ATTN, _MLP, ... (names.h) */
    }
  }
  if (o->fsdp_impl) {
    if (!parse_enum(PTSIM_NAMES_FSDP_IMPL, "--fsdp-impl", o->fsdp_impl, &v, error)) return FALSE;
    run->fsdp_impl = (PtsimFsdpImpl)v;
  }
  if (o->reshard_after_forward) {
    if (!parse_enum(PTSIM_NAMES_RESHARD, "--reshard-after-forward", o->reshard_after_forward, &v,
                    error))
      return FALSE;
    run->reshard_after_forward = v - 1; /* the table starts at AUTO */
  }
  if (o->no_fsdp_prefetch) run->fsdp_prefetch = 0;
  if (o->transformer_impl) {
    if (!choose("--transformer-impl", o->transformer_impl,
                "transformer_engine|local|torch|torch-compile", &v, error))
      return FALSE;
    run->transformer_engine = v == 0;
    run->torch_layers = v == 2   ? PTSIM_TORCH_LAYERS_EAGER
                        : v == 3 ? PTSIM_TORCH_LAYERS_COMPILED
                                 : PTSIM_TORCH_LAYERS_NONE;
    if (v == 1) run->flash_attention = 0; /* Megatron-Core's local layers: unfused */
    if (v >= 2) run->flash_attention = 1; /* SDPA's flash / cuDNN kernels */
  }
  if (o->attention) {
    if (!choose("--attention", o->attention, "flash|unfused", &v, error)) return FALSE;
    run->flash_attention = v == 0;
  }
  if (o->no_flash_attention) run->flash_attention = 0;
  overlap_switch(&run->overlap_grad_reduce, o->overlap_grad_reduce, o->no_overlap_grad_reduce,
                 o->no_overlap);
  overlap_switch(&run->overlap_param_gather, o->overlap_param_gather, o->no_overlap_param_gather,
                 o->no_overlap);
  overlap_switch(&run->tp_comm_overlap, o->tp_comm_overlap, o->no_tp_comm_overlap, o->no_overlap);
  if (o->no_tp_comm_overlap_ag) run->tp_comm_overlap_ag = 0;
  if (o->no_tp_comm_overlap_rs) run->tp_comm_overlap_rs = 0;
  if (o->no_tp_comm_bulk_dgrad) run->tp_comm_bulk_dgrad = 0;
  if (o->tp_comm_overlap_rs_dgrad) run->tp_comm_overlap_rs_dgrad = 1;
  if (o->no_fp32_grad_accumulation) run->fp32_grad_accumulation = 0;
  if (o->no_gradient_accumulation_fusion) run->grad_accumulation_fusion = 0;
  if (o->cross_entropy_loss_fusion) run->cross_entropy_fusion = 1;
  if (o->attention_softmax_fp32) run->attention_softmax_fp32 = 1;
  if (o->defer_embedding_wgrad) run->defer_embedding_wgrad = 1;
  if (o->wgrad_deferral_limit.given) run->wgrad_deferral_limit = o->wgrad_deferral_limit.value;
  if (o->cross_entropy_fusion_impl) {
    if (!choose("--cross-entropy-fusion-impl", o->cross_entropy_fusion_impl, "native|te", &v,
                error))
      return FALSE;
    run->cross_entropy_te = v == 1;
  }
  if (o->precision_aware_optimizer) run->precision_aware_optimizer = 1;
  const struct {
    const char *flag, *word, *choices;
    int *bytes;
  } dtypes[] = {{"--main-params-dtype", o->main_params_dtype, "fp32|fp16", &run->main_params_bytes},
                {"--exp-avg-dtype", o->exp_avg_dtype, "fp32|fp16|bf16|fp8", &run->exp_avg_bytes},
                {"--exp-avg-sq-dtype", o->exp_avg_sq_dtype, "fp32|fp16|bf16|fp8",
                 &run->exp_avg_sq_bytes}};
  for (size_t i = 0; i < G_N_ELEMENTS(dtypes); i++) {
    if (!dtypes[i].word) continue;
    if (!choose(dtypes[i].flag, dtypes[i].word, dtypes[i].choices, &v, error)) return FALSE;
    *dtypes[i].bytes = dtype_size(dtypes[i].word);
  }
  if (o->precision) {
    if (!parse_enum(PTSIM_NAMES_PRECISION, "--precision", o->precision, &v, error)) return FALSE;
    run->precision = (PtsimPrecision)v;
  }
  if (o->fp8_recipe) {
    if (!choose("--fp8-recipe", o->fp8_recipe, "delayed|tensorwise|blockwise|mxfp8", &v, error))
      return FALSE;
    run->fp8_recipe = (PtsimFp8Recipe)v;
  }
  if (o->cp_comm_type) {
    if (!choose("--cp-comm-type", o->cp_comm_type, "p2p|a2a|allgather", &v, error)) return FALSE;
    run->cp_comm = (PtsimCpComm)v;
  }
  if (o->fp4_format) {
    if (!choose("--fp4-format", o->fp4_format, "e2m1", &v, error)) return FALSE;
    if (o->fp8_recipe || (o->precision && run->precision != PTSIM_PRECISION_FP8)) {
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                  "--fp4-format: not with --fp8-recipe or --precision %s (one low-precision "
                  "recipe per run)",
                  o->fp8_recipe ? "fp8" : o->precision);
      return FALSE;
    }
    run->precision = PTSIM_PRECISION_FP8;
    run->fp8_recipe = PTSIM_FP8_NVFP4;
  }
  if (o->fp8_param_gather) run->fp8_param_gather = 1;
  if (!apply_lora(o, run, error) || !apply_cuda_graphs(o, &run->host, error) ||
      !apply_offloading(o, run, error))
    return FALSE;
  if (o->threshold.given) run->memory_threshold = o->threshold.value;
  if (o->manual_gc) run->manual_gc = 1;
  if (o->deterministic) run->deterministic = 1;
  return apply_moe_settings(o, run, error);
}

/* What the source says about itself: the dropouts, the Megatron-LM date. */
static gboolean apply_source(const PtsimJobOptions *o, PtsimProvenance *src, GError **error) {
  if (o->attention_dropout.given) src->attention_dropout = o->attention_dropout.value;
  if (o->hidden_dropout.given) src->hidden_dropout = o->hidden_dropout.value;
  return !o->megatron_date || parse_megatron_date(o->megatron_date, &src->megatron_date, error);
}

gboolean ptsim_job_options_apply_settings(const PtsimJobOptions *o, PtsimLayout *l,
                                          PtsimSettings *run, PtsimProvenance *src, PtsimModel *m,
                                          GError **error) {
  apply_layout_settings(o, l);
  return apply_run_settings(o, run, error) && apply_source(o, src, error) &&
         (!m || ptsim_job_options_apply_model_settings(o, m, error));
}

gboolean ptsim_job_options_apply_model_settings(const PtsimJobOptions *o, PtsimModel *m,
                                                GError **error) {
  int v;
  if (o->kv_channels.given) m->kv_channels = o->kv_channels.value;
  if (o->qk_layernorm) m->qk_layernorm = 1;
  if (o->mtp_num_layers.given) m->mtp_num_layers = o->mtp_num_layers.value;
  if (o->position_embedding) {
    static const PtsimPositionEmbedding kinds[] = {PTSIM_POSITION_LEARNED, PTSIM_POSITION_ROPE,
                                                   PTSIM_POSITION_NONE};
    if (!choose("--position-embedding-type", o->position_embedding, "learned_absolute|rope|none",
                &v, error))
      return FALSE;
    m->position_embedding = kinds[v];
  }
  return TRUE;
}

gboolean ptsim_job_options_apply_sharding(const PtsimJobOptions *o, PtsimJob *job, GError **error) {
  int mode = -1;
  if (o->sharding && !parse_enum(PTSIM_NAMES_SHARDING, "--sharding", o->sharding, &mode, error))
    return FALSE;
  if (mode < 0 && !o->hsdp_shard_size.given) return TRUE;
  return ptsim_layout_set_sharding(&job->layout, ptsim_topology_domain_size(&job->hw), mode,
                                   o->hsdp_shard_size.given ? o->hsdp_shard_size.value : -1, error);
}
