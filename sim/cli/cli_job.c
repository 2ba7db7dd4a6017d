/* cli_job.c — shared job options; see cli_job.h. */
#include <stdio.h>
#include <string.h>
#include "cli_job.h"
#include "config.h"
#include "job_validate.h"
#include "megatron_args.h"
#include "names.h"
#include "pipeline_layout.h"
#include "topology.h"
#include "torchtitan.h"

#define DEFAULT_MODEL "llama3-8b"
#define DEFAULT_HW "h100-80g"
#define DEFAULT_GPUS 8
#define DEFAULT_GBS 128
#define DEFAULT_SEQ 8192

void ptsim_cli_job_init(PtsimCliJob *o) { memset(o, 0, sizeof *o); }

void ptsim_cli_job_clear(PtsimCliJob *o) {
  char **strings[] = {&o->model, &o->hw, &o->recompute, &o->schedule, &o->recompute_method,
                      &o->recompute_modules, &o->attention, &o->transformer_impl,
                      &o->main_params_dtype, &o->exp_avg_dtype, &o->exp_avg_sq_dtype,
                      &o->precision, &o->fp8_recipe, &o->pipeline_layout, &o->position_embedding,
                      &o->moe_dispatcher, &o->moe_router_dtype, &o->megatron_date,
                      &o->megatron_args, &o->megatron_args_file, &o->torchtitan,
                      &o->sharding, &o->fsdp_impl, &o->reshard_after_forward};
  for (size_t i = 0; i < G_N_ELEMENTS(strings); i++) g_free(*strings[i]);
  ptsim_cli_job_init(o);
}

#define END {NULL, 0, 0, 0, NULL, NULL, NULL}

/* The numeric flags, each with its range: GOption hands their text to
 * number_option, which parses it strictly into the PtsimCliJob that is the
 * group's user data. */
#define FIELD(f) G_STRUCT_OFFSET(PtsimCliJob, f)
#define COUNT(flag, f, hi) {flag, FIELD(f), FALSE, 1, hi, {0, 0, FALSE, FALSE}}
#define DECIMAL(flag, f, ...) {flag, FIELD(f), TRUE, 0, 0, __VA_ARGS__}
static const PtsimCliNumber numbers[] = {
    COUNT("--gpus", gpus, PTSIM_JOB_GPUS_MAX),
    COUNT("--nodes", nodes, PTSIM_JOB_GPUS_MAX),
    COUNT("--tp", tp, PTSIM_CONFIG_INT_MAX),
    COUNT("--pp", pp, PTSIM_CONFIG_INT_MAX),
    COUNT("--cp", cp, PTSIM_CONFIG_INT_MAX),
    COUNT("--dp", dp, PTSIM_JOB_GPUS_MAX),
    COUNT("--vp", vp, PTSIM_CONFIG_INT_MAX),
    COUNT("--mbs", mbs, PTSIM_CONFIG_INT_MAX),
    COUNT("--gbs", gbs, PTSIM_CONFIG_INT_MAX),
    COUNT("--seq", seq, PTSIM_CONFIG_INT_MAX),
    COUNT("--recompute-num-layers", recompute_num_layers, PTSIM_CONFIG_INT_MAX),
    COUNT("--num-distributed-optimizer-instances", optimizer_instances, PTSIM_JOB_GPUS_MAX),
    COUNT("--hsdp-shard-size", hsdp_shard_size, PTSIM_JOB_GPUS_MAX),
    COUNT("--decoder-first-pipeline-num-layers", first_stage_layers, PTSIM_CONFIG_INT_MAX),
    COUNT("--decoder-last-pipeline-num-layers", last_stage_layers, PTSIM_CONFIG_INT_MAX),
    COUNT("--kv-channels", kv_channels, PTSIM_CONFIG_INT_MAX),
    COUNT("--ep", ep, PTSIM_JOB_GPUS_MAX),
    COUNT("--etp", etp, PTSIM_CONFIG_INT_MAX),
    {"--mtp-num-layers", FIELD(mtp_num_layers), FALSE, 0, 64, {0, 0, FALSE, FALSE}},
    DECIMAL("--moe-expert-capacity-factor", moe_capacity_factor, {0.0, 1e6, FALSE, TRUE}),
    DECIMAL("--memory-threshold", threshold, {0.0, 1.0, FALSE, TRUE}),
    DECIMAL("--attention-dropout", attention_dropout, {0.0, 1.0, TRUE, FALSE}),
    DECIMAL("--hidden-dropout", hidden_dropout, {0.0, 1.0, TRUE, FALSE}),
};

static gboolean number_option(const char *flag, const char *text, gpointer opts,
                              GError **error) {
  return ptsim_cli_number_set(numbers, G_N_ELEMENTS(numbers), flag, text, opts, error);
}

#define NUMBER(name, help, arg) \
  {name, 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)number_option, help, arg}

static GOptionEntry *dimension_entries(PtsimCliJob *o) {
  const GOptionEntry entries[] = {
      {"model", 0, 0, G_OPTION_ARG_FILENAME, &o->model,
       "Model: a name in models/ or an .ini path (default " DEFAULT_MODEL ")", "NAME|FILE"},
      {"hw", 0, 0, G_OPTION_ARG_FILENAME, &o->hw,
       "Hardware profile: a name in hw_profiles/ or an .ini path (default " DEFAULT_HW ")",
       "NAME|FILE"},
      NUMBER("gpus", "Total GPUs (default 8; with --megatron-args: the launcher's count)", "N"),
      NUMBER("nodes", "Nodes (gpus = nodes x GPUs per node)", "N"),
      NUMBER("tp", "Tensor-parallel size (default 1)", "N"),
      NUMBER("pp", "Pipeline-parallel size (default 1)", "N"),
      NUMBER("cp", "Context-parallel size (default 1)", "N"),
      NUMBER("dp", "Data-parallel size (default: gpus / (tp pp cp); checked when given)", "N"),
      NUMBER("vp", "Virtual pipeline stages per rank (interleaved 1F1B when > 1)", "N"),
      NUMBER("ep",
             "Expert-parallel size (MoE models; default 1): the expert layers regroup the GPUs "
             "as etp x ep x edp", "N"),
      NUMBER("etp", "Expert tensor-parallel size (MoE models; default: tp)", "N"),
      NUMBER("mbs", "Micro-batch size (default 1)", "N"),
      NUMBER("gbs", "Global batch size in sequences (default 128)", "N"),
      NUMBER("seq", "Sequence length (default 8192)", "N"),
      {"recompute", 0, 0, G_OPTION_ARG_STRING, &o->recompute,
       "Activation recomputation: none|selective|full|selective-op (default none; selective-op: "
       "PyTorch's per-op checkpointing as torchtitan's selective_ac_option 'op', needs "
       "--transformer-impl torch|torch-compile)", "KIND"},
      {"schedule", 0, 0, G_OPTION_ARG_STRING, &o->schedule,
       "Pipeline schedule: 1f1b|gpipe|interleaved|zb-h1 (default 1f1b; interleaved when vp > 1)",
       "S"},
      {"sharding", 0, 0, G_OPTION_ARG_STRING, &o->sharding,
       "Data parallelism: ddp (states replicated) | zero1 (the distributed optimizer, default) | "
       "zero2 (+ gradients sharded) | fsdp (+ parameters: ZeRO-3) | hsdp (fsdp inside a shard "
       "group, replicated across)", "MODE"},
      NUMBER("hsdp-shard-size",
             "Ranks of one shard group (divides dp x cp; default for hsdp: one NVLink domain / tp)",
             "N"),
      {"megatron-args", 0, 0, G_OPTION_ARG_STRING, &o->megatron_args,
       "A Megatron-LM command line (with its launcher: the GPU count) giving the model and layout",
       "\"FLAGS\""},
      {"megatron-args-file", 0, 0, G_OPTION_ARG_FILENAME, &o->megatron_args_file,
       "A Megatron-LM launch script (e.g. its examples/*.sh, as they are)", "FILE"},
      {"torchtitan", 0, 0, G_OPTION_ARG_FILENAME, &o->torchtitan,
       "A torchtitan job config (llama3 flavors; the world size from --gpus when "
       "data_parallel_shard_degree = -1)", "CONFIG.toml"},
      END};
  return g_memdup2(entries, sizeof entries);
}

static GOptionEntry *setting_entries(PtsimCliJob *o) {
  const GOptionEntry entries[] = {
      {"sp", 0, 0, G_OPTION_ARG_NONE, &o->sp, "Sequence parallelism on (default when tp > 1)", NULL},
      {"no-sp", 0, 0, G_OPTION_ARG_NONE, &o->no_sp, "Sequence parallelism off", NULL},
      {"recompute-method", 0, 0, G_OPTION_ARG_STRING, &o->recompute_method,
       "Full recompute method: uniform|block (default uniform)", "METHOD"},
      NUMBER("recompute-num-layers",
             "Full recompute: layers per group (uniform) or recomputed layers (block)", "N"),
      {"recompute-modules", 0, 0, G_OPTION_ARG_STRING, &o->recompute_modules,
       "Selective recompute: core_attn,mlp,layernorm,moe_act,moe,shared_experts,mla_up_proj "
       "(default core_attn)", "M[,M...]"},
      {"distributed-optimizer", 0, 0, G_OPTION_ARG_NONE, &o->distributed_optimizer,
       "Shard optimizer states over dp x cp (default)", NULL},
      {"no-distributed-optimizer", 0, 0, G_OPTION_ARG_NONE, &o->no_distributed_optimizer,
       "Replicate optimizer states (18 bytes per parameter)", NULL},
      NUMBER("num-distributed-optimizer-instances",
             "Distributed-optimizer instances: states sharded over dp x cp / N (default 1)", "N"),
      {"fsdp-impl", 0, 0, G_OPTION_ARG_STRING, &o->fsdp_impl,
       "Whose ZeRO-2/3: megatron (Megatron-FSDP, DeepSpeed: bf16 weights + fp32 main params, "
       "default) | torch (PyTorch FSDP2 as torchtitan: fp32 sharded params)", "IMPL"},
      {"reshard-after-forward", 0, 0, G_OPTION_ARG_STRING, &o->reshard_after_forward,
       "FSDP units freed after forward, gathered again in backward: default (torch: but-last, "
       "never under pp; megatron: always) | always | but-last (not the output unit) | never",
       "WHEN"},
      {"no-fsdp-prefetch", 0, 0, G_OPTION_ARG_NONE, &o->no_fsdp_prefetch,
       "FSDP: the next unit's all-gather waits for this unit's compute", NULL},
      {"attention", 0, 0, G_OPTION_ARG_STRING, &o->attention,
       "flash (fused kernels, default) | unfused (s x s scores kept, Megatron's local or "
       "unfused backend)", "KIND"},
      {"no-flash-attention", 0, 0, G_OPTION_ARG_NONE, &o->no_flash_attention,
       "Same as --attention unfused", NULL},
      {"transformer-impl", 0, 0, G_OPTION_ARG_STRING, &o->transformer_impl,
       "transformer_engine (default: norms fused into the linear layers) | local (Megatron's "
       "own layers; implies --attention unfused) | torch (PyTorch's modules as torchtitan builds "
       "a Llama block, run eagerly: separate q/k/v and gate/up GEMMs, RoPE and SwiGLU as "
       "kernels of their own; SDPA flash) | torch-compile (the same fused by torch.compile)",
       "IMPL"},
      {"overlap-grad-reduce", 0, 0, G_OPTION_ARG_NONE, &o->overlap_grad_reduce,
       "Reduce gradients during the backward pass (default on)", NULL},
      {"no-overlap-grad-reduce", 0, 0, G_OPTION_ARG_NONE, &o->no_overlap_grad_reduce,
       "Reduce gradients after the backward pass", NULL},
      {"overlap-param-gather", 0, 0, G_OPTION_ARG_NONE, &o->overlap_param_gather,
       "Gather updated parameters during the next forward (default on)", NULL},
      {"no-overlap-param-gather", 0, 0, G_OPTION_ARG_NONE, &o->no_overlap_param_gather,
       "Gather updated parameters after the optimizer step", NULL},
      {"tp-comm-overlap", 0, 0, G_OPTION_ARG_NONE, &o->tp_comm_overlap,
       "Overlap TP collectives with GEMMs (TE userbuffers; default off)", NULL},
      {"no-tp-comm-overlap", 0, 0, G_OPTION_ARG_NONE, &o->no_tp_comm_overlap,
       "TP collectives block the GEMMs", NULL},
      {"no-overlap", 0, 0, G_OPTION_ARG_NONE, &o->no_overlap,
       "All three overlaps off (Megatron-LM's own default)", NULL},
      {"no-tp-comm-overlap-ag", 0, 0, G_OPTION_ARG_NONE, &o->no_tp_comm_overlap_ag,
       "With --tp-comm-overlap: no all-gather/GEMM pipelining", NULL},
      {"no-tp-comm-overlap-rs", 0, 0, G_OPTION_ARG_NONE, &o->no_tp_comm_overlap_rs,
       "With --tp-comm-overlap: no GEMM/reduce-scatter pipelining", NULL},
      {"no-tp-comm-bulk-dgrad", 0, 0, G_OPTION_ARG_NONE, &o->no_tp_comm_bulk_dgrad,
       "With --tp-comm-overlap: the dgrad reduce-scatter is not hidden behind the wgrad GEMM",
       NULL},
      {"tp-comm-overlap-rs-dgrad", 0, 0, G_OPTION_ARG_NONE, &o->tp_comm_overlap_rs_dgrad,
       "With --tp-comm-overlap: pipeline the dgrad reduce-scatter with the dgrad GEMM", NULL},
      {"no-fp32-grad-accumulation", 0, 0, G_OPTION_ARG_NONE, &o->no_fp32_grad_accumulation,
       "Gradients kept and reduced in 2 bytes (Megatron --grad-reduce-in-bf16, NeMo "
       "grad_sync_dtype=bf16), not fp32", NULL},
      {"no-gradient-accumulation-fusion", 0, 0, G_OPTION_ARG_NONE,
       &o->no_gradient_accumulation_fusion,
       "wgrad GEMMs write a gradient that is then added into main_grad", NULL},
      {"cross-entropy-loss-fusion", 0, 0, G_OPTION_ARG_NONE, &o->cross_entropy_loss_fusion,
       "Megatron's fused vocab-parallel cross entropy", NULL},
      {"use-precision-aware-optimizer", 0, 0, G_OPTION_ARG_NONE, &o->precision_aware_optimizer,
       "TE FusedAdam: fp32 masters of bf16 weights kept as 16-bit remainders", NULL},
      {"main-params-dtype", 0, 0, G_OPTION_ARG_STRING, &o->main_params_dtype,
       "Master weights: fp32|fp16 (default fp32)", "T"},
      {"exp-avg-dtype", 0, 0, G_OPTION_ARG_STRING, &o->exp_avg_dtype,
       "Adam first moment: fp32|fp16|bf16|fp8 (default fp32)", "T"},
      {"exp-avg-sq-dtype", 0, 0, G_OPTION_ARG_STRING, &o->exp_avg_sq_dtype,
       "Adam second moment: fp32|fp16|bf16|fp8 (default fp32)", "T"},
      {"precision", 0, 0, G_OPTION_ARG_STRING, &o->precision,
       "bf16|fp16|fp8 (default bf16; fp8 needs a profile with FP8)", "P"},
      {"fp8-recipe", 0, 0, G_OPTION_ARG_STRING, &o->fp8_recipe,
       "delayed|tensorwise|blockwise|mxfp8 (default delayed)", "R"},
      {"fp8-param-gather", 0, 0, G_OPTION_ARG_NONE, &o->fp8_param_gather,
       "fp8 model weights, gathered in fp8 (needs the distributed optimizer)", NULL},
      NUMBER("memory-threshold",
             "Memory fraction a layout may use and still count as fitting, in (0, 1] "
             "(default 0.8)", "F"),
      NUMBER("attention-dropout", "Attention dropout probability, in [0, 1) (default 0)", "P"),
      NUMBER("hidden-dropout", "Hidden dropout probability, in [0, 1) (default 0)", "P"),
      NUMBER("decoder-first-pipeline-num-layers", "Layers on the first pipeline stage (uneven split)",
             "N"),
      NUMBER("decoder-last-pipeline-num-layers", "Layers on the last pipeline stage (uneven split)",
             "N"),
      {"account-for-embedding-in-pipeline-split", 0, 0, G_OPTION_ARG_NONE, &o->account_embedding,
       "The embedding counts as a layer in the split (first chunk: one layer fewer)", NULL},
      {"account-for-loss-in-pipeline-split", 0, 0, G_OPTION_ARG_NONE, &o->account_loss,
       "The loss counts as a layer in the split (last chunk: one layer fewer)", NULL},
      {"pipeline-model-parallel-layout", 0, 0, G_OPTION_ARG_STRING, &o->pipeline_layout,
       "Megatron's layout string, e.g. \"Et*3|(tt|)*14,tL\" (sets vp and the split)", "LAYOUT"},
      NUMBER("kv-channels", "Head dimension (default hidden / heads)", "N"),
      {"qk-layernorm", 0, 0, G_OPTION_ARG_NONE, &o->qk_layernorm,
       "A norm over each query and key head", NULL},
      {"position-embedding-type", 0, 0, G_OPTION_ARG_STRING, &o->position_embedding,
       "learned_absolute|rope|none (default: the model's)", "T"},
      {"manual-gc", 0, 0, G_OPTION_ARG_NONE, &o->manual_gc,
       "Python GC only at chosen steps (Megatron --manual-gc; ptsim models no GC stalls)", NULL},
      {"moe-token-dispatcher-type", 0, 0, G_OPTION_ARG_STRING, &o->moe_dispatcher,
       "MoE token dispatch: alltoall|allgather|flex (default alltoall)", "D"},
      NUMBER("moe-expert-capacity-factor",
             "Tokens an expert takes over its balanced share, in (0, 10^6]; the rest are dropped "
             "(default: dropless)", "F"),
      {"moe-pad-expert-input-to-capacity", 0, 0, G_OPTION_ARG_NONE, &o->moe_pad_to_capacity,
       "Pad every expert to its capacity", NULL},
      {"moe-grouped-gemm", 0, 0, G_OPTION_ARG_NONE, &o->moe_grouped_gemm,
       "One grouped GEMM for a GPU's experts (default)", NULL},
      {"no-moe-grouped-gemm", 0, 0, G_OPTION_ARG_NONE, &o->no_moe_grouped_gemm,
       "One GEMM per expert (Megatron's SequentialMLP)", NULL},
      {"moe-permute-fusion", 0, 0, G_OPTION_ARG_NONE, &o->moe_permute_fusion,
       "Fused token permute/unpermute kernels", NULL},
      {"moe-router-fusion", 0, 0, G_OPTION_ARG_NONE, &o->moe_router_fusion,
       "Fused router top-k/score/aux-loss kernels", NULL},
      {"moe-router-dtype", 0, 0, G_OPTION_ARG_STRING, &o->moe_router_dtype,
       "fp32: router and expert probabilities in fp32 (default: the model's dtype)", "T"},
      {"moe-shared-expert-overlap", 0, 0, G_OPTION_ARG_NONE, &o->moe_shared_expert_overlap,
       "Shared experts on a side stream, beside the token dispatch", NULL},
      {"overlap-moe-expert-parallel-comm", 0, 0, G_OPTION_ARG_NONE, &o->moe_ep_comm_overlap,
       "Hide the expert-parallel all-to-alls behind another microbatch's compute", NULL},
      NUMBER("mtp-num-layers",
             "Multi-token prediction layers, 0 to 64 (default: the model's; 0: none)", "N"),
      {"megatron-date", 0, 0, G_OPTION_ARG_STRING, &o->megatron_date,
       "Date of the Megatron-LM source (YYYY-MM-DD or YYYY-MM; default current): memory that "
       "releases allocate differently follows it (validate: a log's arguments date it)",
       "DATE"},
      END};
  return g_memdup2(entries, sizeof entries);
}

GOptionGroup *ptsim_cli_job_option_group(PtsimCliJob *o) {
  g_autofree GOptionEntry *dims = dimension_entries(o);
  g_autofree GOptionEntry *settings = setting_entries(o);
  /* o is the user data that number_option receives */
  GOptionGroup *group = g_option_group_new(
      "job", "Job options (model, hardware, layout):", "Show job options", o, NULL);
  g_option_group_add_entries(group, dims);
  g_option_group_add_entries(group, settings);
  return group;
}

void ptsim_cli_job_add_to_context(GOptionContext *context, PtsimCliJob *opts,
                                  const GOptionEntry *command_entries) {
  GOptionGroup *group = ptsim_cli_job_option_group(opts);
  if (command_entries) g_option_group_add_entries(group, command_entries);
  g_option_context_set_main_group(context, group);
}

void ptsim_cli_job_add_settings_to_context(GOptionContext *context, PtsimCliJob *opts,
                                           const GOptionEntry *command_entries) {
  g_autofree GOptionEntry *settings = setting_entries(opts);
  GOptionGroup *group = g_option_group_new("job", "Job settings:", "Show job settings", opts,
                                           NULL);
  if (command_entries) g_option_group_add_entries(group, command_entries);
  g_option_group_add_entries(group, settings);
  g_option_context_set_main_group(context, group);
}

/* ---- resolution ---- */

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

static gboolean check_flags(const PtsimCliJob *o, GError **error) {
  const struct {
    gboolean a, b;
    const char *names;
  } pairs[] = {
      {o->sp, o->no_sp, "--sp and --no-sp"},
      {o->distributed_optimizer, o->no_distributed_optimizer,
       "--distributed-optimizer and --no-distributed-optimizer"},
      {o->gpus.given, o->nodes.given, "--gpus and --nodes"},
      {o->sharding != NULL, o->distributed_optimizer || o->no_distributed_optimizer,
       "--sharding and --(no-)distributed-optimizer"},
      {o->hsdp_shard_size.given, o->optimizer_instances.given,
       "--hsdp-shard-size and --num-distributed-optimizer-instances"},
      {o->megatron_args != NULL, o->megatron_args_file != NULL,
       "--megatron-args and --megatron-args-file"},
      {o->torchtitan != NULL, o->megatron_args != NULL || o->megatron_args_file != NULL,
       "--torchtitan and --megatron-args(-file)"},
      {o->overlap_grad_reduce, o->no_overlap_grad_reduce,
       "--overlap-grad-reduce and --no-overlap-grad-reduce"},
      {o->overlap_param_gather, o->no_overlap_param_gather,
       "--overlap-param-gather and --no-overlap-param-gather"},
      {o->tp_comm_overlap, o->no_tp_comm_overlap, "--tp-comm-overlap and --no-tp-comm-overlap"},
      {o->moe_grouped_gemm, o->no_moe_grouped_gemm,
       "--moe-grouped-gemm and --no-moe-grouped-gemm"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(pairs); i++)
    if (pairs[i].a && pairs[i].b) return invalid("%s: give at most one", pairs[i].names);
  return TRUE;
}

/* The MoE settings (mixture-of-experts models only read them). */
static gboolean apply_moe_settings(const PtsimCliJob *o, PtsimLayout *l, GError **error) {
  int v;
  if (o->moe_dispatcher) {
    if (!parse_enum(PTSIM_NAMES_DISPATCHER, "--moe-token-dispatcher-type", o->moe_dispatcher, &v,
                    error))
      return FALSE;
    l->moe_dispatcher = (PtsimDispatcher)v;
  }
  if (o->moe_capacity_factor.given) l->moe_capacity_factor = o->moe_capacity_factor.value;
  if (o->moe_pad_to_capacity) l->moe_pad_to_capacity = 1;
  if (o->moe_grouped_gemm) l->moe_grouped_gemm = 1;
  if (o->no_moe_grouped_gemm) l->moe_grouped_gemm = 0;
  if (o->moe_permute_fusion) l->moe_permute_fusion = 1;
  if (o->moe_router_fusion) l->moe_router_fusion = 1;
  if (o->moe_router_dtype) {
    if (!choose("--moe-router-dtype", o->moe_router_dtype, "fp32", &v, error)) return FALSE;
    l->moe_router_fp32 = 1;
  }
  if (o->moe_shared_expert_overlap) l->moe_shared_expert_overlap = 1;
  if (o->moe_ep_comm_overlap) l->moe_ep_comm_overlap = 1;
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

gboolean ptsim_cli_job_apply_settings(const PtsimCliJob *o, PtsimLayout *l, PtsimModel *m,
                                      GError **error) {
  int v;
  if (o->sp) l->sp = 1;
  if (o->no_sp) l->sp = 0;
  if (o->recompute_method) {
    if (!parse_enum(PTSIM_NAMES_RECOMPUTE_METHOD, "--recompute-method", o->recompute_method, &v,
                    error))
      return FALSE;
    l->recompute_method = (PtsimRecomputeMethod)v;
  }
  if (o->recompute_num_layers.given) l->recompute_num_layers = o->recompute_num_layers.value;
  if (o->recompute_modules) {
    g_auto(GStrv) names = g_strsplit(o->recompute_modules, ",", -1);
    l->recompute_modules = 0;
    for (char **n = names; *n; n++) {
      if (!parse_enum(PTSIM_NAMES_RECOMPUTE_MODULE, "--recompute-modules", g_strstrip(*n), &v,
                      error))
        return FALSE;
      l->recompute_modules |= 1 << v; /* PTSIM_RECOMPUTE_CORE_ATTN, _MLP, ... (names.h) */
    }
  }
  if (o->distributed_optimizer) l->distributed_optimizer = 1;
  if (o->no_distributed_optimizer) l->distributed_optimizer = 0;
  if (o->optimizer_instances.given) l->optimizer_instances = o->optimizer_instances.value;
  if (o->fsdp_impl) {
    if (!parse_enum(PTSIM_NAMES_FSDP_IMPL, "--fsdp-impl", o->fsdp_impl, &v, error)) return FALSE;
    l->fsdp_impl = (PtsimFsdpImpl)v;
  }
  if (o->reshard_after_forward) {
    if (!parse_enum(PTSIM_NAMES_RESHARD, "--reshard-after-forward", o->reshard_after_forward, &v,
                    error))
      return FALSE;
    l->reshard_after_forward = v - 1; /* the table starts at AUTO */
  }
  if (o->no_fsdp_prefetch) l->fsdp_prefetch = 0;
  if (o->transformer_impl) {
    if (!choose("--transformer-impl", o->transformer_impl,
                "transformer_engine|local|torch|torch-compile", &v, error))
      return FALSE;
    l->transformer_engine = v == 0;
    l->torch_layers = v == 2   ? PTSIM_TORCH_LAYERS_EAGER
                      : v == 3 ? PTSIM_TORCH_LAYERS_COMPILED
                               : PTSIM_TORCH_LAYERS_NONE;
    if (v == 1) l->flash_attention = 0; /* Megatron-Core's local layers: unfused */
    if (v >= 2) l->flash_attention = 1; /* SDPA's flash / cuDNN kernels */
  }
  if (o->attention) {
    if (!choose("--attention", o->attention, "flash|unfused", &v, error)) return FALSE;
    l->flash_attention = v == 0;
  }
  if (o->no_flash_attention) l->flash_attention = 0;
  overlap_switch(&l->overlap_grad_reduce, o->overlap_grad_reduce, o->no_overlap_grad_reduce,
                 o->no_overlap);
  overlap_switch(&l->overlap_param_gather, o->overlap_param_gather, o->no_overlap_param_gather,
                 o->no_overlap);
  overlap_switch(&l->tp_comm_overlap, o->tp_comm_overlap, o->no_tp_comm_overlap, o->no_overlap);
  if (o->no_tp_comm_overlap_ag) l->tp_comm_overlap_ag = 0;
  if (o->no_tp_comm_overlap_rs) l->tp_comm_overlap_rs = 0;
  if (o->no_tp_comm_bulk_dgrad) l->tp_comm_bulk_dgrad = 0;
  if (o->tp_comm_overlap_rs_dgrad) l->tp_comm_overlap_rs_dgrad = 1;
  if (o->no_fp32_grad_accumulation) l->fp32_grad_accumulation = 0;
  if (o->no_gradient_accumulation_fusion) l->grad_accumulation_fusion = 0;
  if (o->cross_entropy_loss_fusion) l->cross_entropy_fusion = 1;
  if (o->precision_aware_optimizer) l->precision_aware_optimizer = 1;
  const struct {
    const char *flag, *word, *choices;
    int *bytes;
  } dtypes[] = {{"--main-params-dtype", o->main_params_dtype, "fp32|fp16", &l->main_params_bytes},
                {"--exp-avg-dtype", o->exp_avg_dtype, "fp32|fp16|bf16|fp8", &l->exp_avg_bytes},
                {"--exp-avg-sq-dtype", o->exp_avg_sq_dtype, "fp32|fp16|bf16|fp8",
                 &l->exp_avg_sq_bytes}};
  for (size_t i = 0; i < G_N_ELEMENTS(dtypes); i++) {
    if (!dtypes[i].word) continue;
    if (!choose(dtypes[i].flag, dtypes[i].word, dtypes[i].choices, &v, error)) return FALSE;
    *dtypes[i].bytes = dtype_size(dtypes[i].word);
  }
  if (o->precision) {
    if (!parse_enum(PTSIM_NAMES_PRECISION, "--precision", o->precision, &v, error)) return FALSE;
    l->precision = (PtsimPrecision)v;
  }
  if (o->fp8_recipe) {
    if (!choose("--fp8-recipe", o->fp8_recipe, "delayed|tensorwise|blockwise|mxfp8", &v, error))
      return FALSE;
    l->fp8_recipe = (PtsimFp8Recipe)v;
  }
  if (o->fp8_param_gather) l->fp8_param_gather = 1;
  if (o->threshold.given) l->memory_threshold = o->threshold.value;
  if (o->attention_dropout.given) l->attention_dropout = o->attention_dropout.value;
  if (o->hidden_dropout.given) l->hidden_dropout = o->hidden_dropout.value;
  if (o->first_stage_layers.given) l->first_stage_layers = o->first_stage_layers.value;
  if (o->last_stage_layers.given) l->last_stage_layers = o->last_stage_layers.value;
  if (o->account_embedding) l->account_embedding = 1;
  if (o->account_loss) l->account_loss = 1;
  if (o->manual_gc) l->manual_gc = 1;
  if (!apply_moe_settings(o, l, error)) return FALSE;
  if (o->megatron_date && !parse_megatron_date(o->megatron_date, &l->megatron_date, error))
    return FALSE;
  return !m || ptsim_cli_job_model_settings(m, (gpointer)o, error);
}

gboolean ptsim_cli_job_model_settings(PtsimModel *m, gpointer opts, GError **error) {
  const PtsimCliJob *o = opts;
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

/* The MoE default: see cli_job.h. */
static void default_moe(PtsimLayout *l) {
  l->moe_dispatcher = PTSIM_DISPATCH_ALLTOALL;
  l->moe_grouped_gemm = 1;
}

/* The overlap default, and the MoE one: see cli_job.h. */
static void default_overlap(PtsimLayout *l) {
  l->overlap_grad_reduce = l->overlap_param_gather = 1;
  l->tp_comm_overlap = 0;
  default_moe(l);
}

gboolean ptsim_cli_job_sweep_base(const PtsimCliJob *o, PtsimLayout *base, GError **error) {
  ptsim_layout_init_defaults(base);
  default_overlap(base);
  if (!check_flags(o, error)) return FALSE;
  if (o->pipeline_layout)
    return invalid("--pipeline-model-parallel-layout fixes pp and vp, which the sweep enumerates; "
                   "use predict");
  return ptsim_cli_job_apply_settings(o, base, NULL, error);
}

/* --nodes x the profile's GPUs per node, refused by name past the GPU
 * bound (both factors are bounded, so the product cannot overflow). */
static gboolean nodes_gpus(const PtsimCliJob *o, const PtsimHardware *hw, int64_t *gpus,
                           GError **error) {
  *gpus = o->nodes.value * hw->gpus_per_node;
  if (*gpus <= PTSIM_JOB_GPUS_MAX) return TRUE;
  return invalid("--nodes %" G_GINT64_FORMAT ": %" G_GINT64_FORMAT " x %" G_GINT64_FORMAT
                 " GPUs per node (%s) = %" G_GINT64_FORMAT " GPUs, more than the %" G_GINT64_FORMAT
                 " allowed",
                 (gint64)o->nodes.value, (gint64)o->nodes.value, (gint64)hw->gpus_per_node,
                 hw->name, (gint64)*gpus, (gint64)PTSIM_JOB_GPUS_MAX);
}

/* The job a torchtitan config describes, on the profile already in JOB->hw;
 * its warnings go to stderr. */
static gboolean torchtitan_job(const PtsimCliJob *o, PtsimJob *job, GError **error) {
  int64_t world = o->gpus.given ? o->gpus.value : -1;
  if (o->nodes.given && !nodes_gpus(o, &job->hw, &world, error)) return FALSE;
  g_auto(PtsimTorchtitan) tt = {0};
  g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func(g_free);
  gboolean ok = ptsim_torchtitan_load(o->torchtitan, world, &tt, warnings, error);
  for (guint i = 0; i < warnings->len; i++)
    g_printerr("ptsim: warning: %s\n", (const char *)g_ptr_array_index(warnings, i));
  if (!ok || !ptsim_torchtitan_job(&tt, job, error)) return FALSE;
  default_moe(&job->layout); /* torchtitan's MoE dispatches all-to-all into grouped GEMMs too */
  return !o->model || ptsim_model_load(o->model, &job->model, error);
}

/* The base job: built-in defaults (with the overlap default), or what a
 * Megatron-LM command line or a torchtitan config says. */
static gboolean base_job(const PtsimCliJob *o, PtsimJob *job, PtsimMegatronDiagnostics *diag,
                         GError **error) {
  ptsim_layout_init_defaults(&job->layout);
  if (o->torchtitan)
    return ptsim_hardware_load(o->hw ? o->hw : DEFAULT_HW, &job->hw, error) &&
           torchtitan_job(o, job, error);
  if (o->megatron_args || o->megatron_args_file) {
    gboolean ok = o->megatron_args
                      ? ptsim_megatron_args_parse(o->megatron_args, &job->model, &job->layout,
                                                  diag, error)
                      : ptsim_megatron_args_parse_file(o->megatron_args_file, &job->model,
                                                       &job->layout, diag, error);
    if (!ok) return FALSE;
    if (o->model && !ptsim_model_load(o->model, &job->model, error)) return FALSE;
  } else {
    if (!ptsim_model_load(o->model ? o->model : DEFAULT_MODEL, &job->model, error)) return FALSE;
    job->layout.gpus = DEFAULT_GPUS;
    job->layout.gbs = DEFAULT_GBS;
    job->layout.seq = DEFAULT_SEQ;
    default_overlap(&job->layout);
  }
  return ptsim_hardware_load(o->hw ? o->hw : DEFAULT_HW, &job->hw, error);
}

static gboolean apply_dimensions(const PtsimCliJob *o, PtsimJob *job, GError **error) {
  PtsimLayout *l = &job->layout;
  int v;
  const struct {
    const PtsimCliInt *flag;
    int64_t *value;
  } counts[] = {{&o->tp, &l->tp},   {&o->pp, &l->pp},   {&o->cp, &l->cp},
                {&o->dp, &l->dp},   {&o->vp, &l->vp},   {&o->ep, &l->ep},
                {&o->etp, &l->etp}, {&o->mbs, &l->mbs},
                {&o->gbs, &l->gbs}, {&o->seq, &l->seq}, {&o->gpus, &l->gpus}};
  for (size_t i = 0; i < G_N_ELEMENTS(counts); i++)
    if (counts[i].flag->given) *counts[i].value = counts[i].flag->value;
  if (o->nodes.given && !nodes_gpus(o, &job->hw, &l->gpus, error)) return FALSE;
  if (o->recompute) {
    if (!parse_enum(PTSIM_NAMES_RECOMPUTE, "--recompute", o->recompute, &v, error)) return FALSE;
    l->recompute = (PtsimRecompute)v;
  }
  if (o->schedule) {
    if (!parse_enum(PTSIM_NAMES_SCHEDULE, "--schedule", o->schedule, &v, error)) return FALSE;
    l->schedule = (PtsimSchedule)v;
  }
  return TRUE;
}

gboolean ptsim_cli_job_resolve(const PtsimCliJob *o, PtsimJob *job,
                               PtsimMegatronDiagnostics *diag, GError **error) {
  g_autoptr(PtsimMegatronDiagnostics) own = diag ? NULL : ptsim_megatron_diagnostics_new();
  if (!diag) diag = own;
  memset(job, 0, sizeof *job);
  if (!check_flags(o, error) || !base_job(o, job, diag, error) || !apply_dimensions(o, job, error) ||
      !ptsim_cli_job_apply_settings(o, &job->layout, &job->model, error))
    return FALSE;
  PtsimLayout *l = &job->layout;
  if (l->gpus <= 0) /* a Megatron-LM command line without a launcher count */
    return invalid("the GPU count is unknown: give --gpus N or --nodes N (the Megatron-LM "
                   "command line gave %s)",
                   diag->gpus_read ? diag->gpus_read : "no launcher");
  /* Megatron-LM's default batch, mbs x dp, once the GPU count is known */
  int64_t dp = ptsim_layout_data_parallel(l->gpus, l->tp, l->pp, l->cp);
  if (l->gbs <= 0 && (o->megatron_args || o->megatron_args_file) && dp > 0 &&
      l->mbs <= PTSIM_CONFIG_INT_MAX)
    l->gbs = l->mbs * dp; /* at most 2^30 x 2^22 */
  if (o->pipeline_layout &&
      !ptsim_pipeline_layout_apply(o->pipeline_layout, job->model.num_layers, l, error))
    return FALSE;
  int mode = -1;
  if (o->sharding && !parse_enum(PTSIM_NAMES_SHARDING, "--sharding", o->sharding, &mode, error))
    return FALSE;
  if ((mode >= 0 || o->hsdp_shard_size.given) &&
      !ptsim_layout_set_sharding(l, ptsim_topology_domain_size(&job->hw), mode,
                                 o->hsdp_shard_size.given ? o->hsdp_shard_size.value : -1, error))
    return FALSE;
  if (!ptsim_job_validate(job, error)) {
    if (!o->gpus.given && !o->nodes.given && diag->gpus_from && error && *error) {
      char *said = g_strdup_printf("%s (%" G_GINT64_FORMAT " GPUs from the launcher: %s; "
                                   "--gpus N changes it)",
                                   (*error)->message, (gint64)l->gpus, diag->gpus_from);
      g_free((*error)->message);
      (*error)->message = said;
    }
    return FALSE;
  }
  return TRUE;
}

gboolean ptsim_cli_job_resolve_over(const PtsimCliJob *o, const char *megatron_base, PtsimJob *job,
                                    PtsimMegatronDiagnostics *diag, GError **error) {
  if (o->megatron_args_file)
    return invalid("--megatron-args-file replaces the Megatron-LM arguments; to add to the ones "
                   "given here, pass flags with --megatron-args");
  PtsimCliJob over = *o; /* shallow: only megatron_args differs, and it is freed here */
  g_autofree char *joined = g_strconcat(megatron_base, " ", o->megatron_args ? o->megatron_args : "",
                                        NULL);
  over.megatron_args = joined;
  return ptsim_cli_job_resolve(&over, job, diag, error);
}

const char *ptsim_cli_job_overlap_source(const PtsimCliJob *o) {
  if (o->overlap_grad_reduce || o->no_overlap_grad_reduce || o->overlap_param_gather ||
      o->no_overlap_param_gather || o->tp_comm_overlap || o->no_tp_comm_overlap || o->no_overlap)
    return "flags";
  if (o->megatron_args || o->megatron_args_file) return "megatron-args";
  if (o->torchtitan) return "torchtitan";
  return "default";
}

void ptsim_cli_job_warn(const char *command, const PtsimMegatronDiagnostics *d) {
  if (!d) return;
  if (d->unmodelled->len > 0) {
    fprintf(stderr, "ptsim %s: warning: not modelled, so the prediction may be off:", command);
    for (guint i = 0; i < d->unmodelled->len; i++)
      fprintf(stderr, "%s %s", i ? ";" : "", (const char *)d->unmodelled->pdata[i]);
    fputc('\n', stderr);
  }
  if (d->unknown->len > 0) {
    fprintf(stderr, "ptsim %s: not Megatron-LM flags, ignored:", command);
    for (guint i = 0; i < d->unknown->len; i++)
      fprintf(stderr, " %s", (const char *)d->unknown->pdata[i]);
    fputc('\n', stderr);
  }
  for (guint i = 0; i < d->notes->len; i++)
    fprintf(stderr, "ptsim %s: note: %s\n", command, (const char *)d->notes->pdata[i]);
}
