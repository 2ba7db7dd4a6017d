/* job_options.c — the job options' table (the one every front end
 * parses: the ptsim command adds it to its option context, library callers
 * hand it an argv-style array), and the flags that exclude each other; see
 * job_options.h. */
#include "job_options.h"

#include <string.h>
#include "job_build.h"
#include "job_validate.h"

void ptsim_job_options_init(PtsimJobOptions *o) { memset(o, 0, sizeof *o); }

void ptsim_job_options_clear(PtsimJobOptions *o) {
  char **strings[] = {&o->model,
                      &o->hw,
                      &o->recompute,
                      &o->schedule,
                      &o->recompute_method,
                      &o->recompute_modules,
                      &o->attention,
                      &o->transformer_impl,
                      &o->main_params_dtype,
                      &o->exp_avg_dtype,
                      &o->exp_avg_sq_dtype,
                      &o->precision,
                      &o->fp8_recipe,
                      &o->fp4_format,
                      &o->cp_comm_type,
                      &o->pipeline_layout,
                      &o->position_embedding,
                      &o->moe_dispatcher,
                      &o->moe_router_dtype,
                      &o->megatron_date,
                      &o->megatron_args,
                      &o->megatron_args_file,
                      &o->script_args,
                      &o->torchtitan,
                      &o->hf_config,
                      &o->sharding,
                      &o->fsdp_impl,
                      &o->reshard_after_forward,
                      &o->cublas_workspace_config,
                      &o->cross_entropy_fusion_impl,
                      &o->lora_target_modules,
                      &o->cuda_graph_impl,
                      &o->cuda_graph_scope,
                      &o->offload_modules};
  for (size_t i = 0; i < G_N_ELEMENTS(strings); i++) g_free(*strings[i]);
  g_strfreev(o->env);
  ptsim_job_options_init(o);
}

#define END \
  { NULL, 0, 0, 0, NULL, NULL, NULL }

/* The numeric flags, each with its range: GOption hands their text to
 * number_option, which parses it strictly into the PtsimJobOptions that is
 * the group's user data. */
#define FIELD(f) G_STRUCT_OFFSET(PtsimJobOptions, f)
#define COUNT(flag, f, hi)                               \
  {                                                      \
    flag, FIELD(f), FALSE, 1, hi, { 0, 0, FALSE, FALSE } \
  }
#define DECIMAL(flag, f, ...) \
  { flag, FIELD(f), TRUE, 0, 0, __VA_ARGS__ }
static const PtsimOptionNumber numbers[] = {
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
    COUNT("--microbatch-group-size", microbatch_group, PTSIM_CONFIG_INT_MAX),
    COUNT("--kv-channels", kv_channels, PTSIM_CONFIG_INT_MAX),
    COUNT("--ep", ep, PTSIM_JOB_GPUS_MAX),
    COUNT("--etp", etp, PTSIM_CONFIG_INT_MAX),
    {"--mtp-num-layers", FIELD(mtp_num_layers), FALSE, 0, 64, {0, 0, FALSE, FALSE}},
    {"--wgrad-deferral-limit",
     FIELD(wgrad_deferral_limit),
     FALSE,
     0,
     PTSIM_CONFIG_INT_MAX,
     {0, 0, FALSE, FALSE}},
    DECIMAL("--moe-expert-capacity-factor", moe_capacity_factor, {0.0, 1e6, FALSE, TRUE}),
    DECIMAL("--memory-threshold", threshold, {0.0, 1.0, FALSE, TRUE}),
    DECIMAL("--attention-dropout", attention_dropout, {0.0, 1.0, TRUE, FALSE}),
    DECIMAL("--hidden-dropout", hidden_dropout, {0.0, 1.0, TRUE, FALSE}),
    COUNT("--lora-rank", lora_rank, 65536),
    DECIMAL("--lora-alpha", lora_alpha, {0.0, 1e6, FALSE, TRUE}),
};

static gboolean number_option(const char *flag, const char *text, gpointer opts, GError **error) {
  return ptsim_option_number_set(numbers, G_N_ELEMENTS(numbers), flag, text, opts, error);
}

#define NUMBER(name, help, arg) \
  { name, 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)number_option, help, arg }

static GOptionEntry *dimension_entries(PtsimJobOptions *o) {
  const GOptionEntry entries[] = {
      {"model", 0, 0, G_OPTION_ARG_FILENAME, &o->model,
       "Model: a name in models/, an .ini path, or hf:PATH, a Hugging Face config.json "
       "(default " PTSIM_JOB_DEFAULT_MODEL ")",
       "NAME|FILE"},
      {"hf-config", 0, 0, G_OPTION_ARG_FILENAME, &o->hf_config,
       "Model: a Hugging Face config.json (Llama, Mistral, Mixtral, Qwen2/3 and their MoE, "
       "DeepSeek-V2/V3, GPT-OSS, Llama 4; the same as --model hf:PATH)",
       "PATH"},
      {"hw", 0, 0, G_OPTION_ARG_FILENAME, &o->hw,
       "Hardware profile: a name in hw_profiles/ or an .ini path (default " PTSIM_JOB_DEFAULT_HW
       ")",
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
             "as etp x ep x edp",
             "N"),
      NUMBER("etp",
             "Expert tensor-parallel size (MoE models; default: tp, or 1 with --ep > 1 under "
             "--sharding fsdp|hsdp --fsdp-impl torch, as torchtitan)",
             "N"),
      NUMBER("mbs", "Micro-batch size (default 1)", "N"),
      NUMBER("gbs", "Global batch size in sequences (default 128)", "N"),
      NUMBER("seq", "Sequence length (default 8192)", "N"),
      {"recompute", 0, 0, G_OPTION_ARG_STRING, &o->recompute,
       "Activation recomputation: none|selective|full|selective-op (default none; selective-op: "
       "PyTorch's per-op checkpointing as torchtitan's selective_ac_option 'op', needs "
       "--transformer-impl torch|torch-compile)",
       "KIND"},
      {"schedule", 0, 0, G_OPTION_ARG_STRING, &o->schedule,
       "Pipeline schedule: 1f1b|gpipe|interleaved|zb-h1|zbv|dualpipev (default 1f1b; interleaved "
       "when vp > 1; zbv and dualpipev, PyTorch's V-shaped ScheduleZBVZeroBubble and "
       "ScheduleDualPipeV, run 2 chunks per stage)",
       "S"},
      {"sharding", 0, 0, G_OPTION_ARG_STRING, &o->sharding,
       "Data parallelism: ddp (states replicated) | zero1 (the distributed optimizer, default) | "
       "zero2 (+ gradients sharded) | fsdp (+ parameters: ZeRO-3) | hsdp (fsdp inside a shard "
       "group, replicated across)",
       "MODE"},
      NUMBER("hsdp-shard-size",
             "Ranks of one shard group (divides dp x cp; default for hsdp: one NVLink domain / tp)",
             "N"),
      {"megatron-args", 0, 0, G_OPTION_ARG_STRING, &o->megatron_args,
       "A Megatron-LM command line (with its launcher: the GPU count) giving the model and layout",
       "\"FLAGS\""},
      {"megatron-args-file", 0, 0, G_OPTION_ARG_FILENAME, &o->megatron_args_file,
       "A Megatron-LM launch script (e.g. its examples/*.sh, as they are)", "FILE"},
      {"script-args", 0, 0, G_OPTION_ARG_STRING, &o->script_args,
       "The arguments the launch script is run with: $1, $2, ... (quoted as in a shell)",
       "\"ARGS\""},
      {"env", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o->env,
       "A variable the launch script starts with, as its environment would set it "
       "(repeatable; the script starts with no other unless --env-from-process)",
       "NAME=VALUE"},
      {"env-from-process", 0, 0, G_OPTION_ARG_NONE, &o->env_from_process,
       "The launch script starts in ptsim's own environment (--env entries win)", NULL},
      {"torchtitan", 0, 0, G_OPTION_ARG_FILENAME, &o->torchtitan,
       "A torchtitan job config (llama3, qwen3, deepseek_v3, gpt_oss, llama4 flavors; the world "
       "size from --gpus when data_parallel_shard_degree = -1), or a launch of its Python form "
       "(--module M --config F with --section.option overrides; configs from "
       "models/torchtitan/configs.toml)",
       "CONFIG.toml|LAUNCH"},
      END};
  return g_memdup2(entries, sizeof entries);
}

static GOptionEntry *setting_entries(PtsimJobOptions *o) {
  const GOptionEntry entries[] = {
      {"sp", 0, 0, G_OPTION_ARG_NONE, &o->sp, "Sequence parallelism on (default when tp > 1)",
       NULL},
      {"no-sp", 0, 0, G_OPTION_ARG_NONE, &o->no_sp, "Sequence parallelism off", NULL},
      {"recompute-method", 0, 0, G_OPTION_ARG_STRING, &o->recompute_method,
       "Full recompute method: uniform|block (default uniform)", "METHOD"},
      NUMBER("recompute-num-layers",
             "Full recompute: layers per group (uniform) or recomputed layers (block)", "N"),
      {"recompute-modules", 0, 0, G_OPTION_ARG_STRING, &o->recompute_modules,
       "Selective recompute: core_attn,mlp,layernorm,moe_act,moe,shared_experts,mla_up_proj "
       "(default core_attn)",
       "M[,M...]"},
      {"distributed-optimizer", 0, 0, G_OPTION_ARG_NONE, &o->distributed_optimizer,
       "Shard optimizer states over dp x cp (default)", NULL},
      {"no-distributed-optimizer", 0, 0, G_OPTION_ARG_NONE, &o->no_distributed_optimizer,
       "Replicate optimizer states (18 bytes per parameter)", NULL},
      NUMBER("num-distributed-optimizer-instances",
             "Distributed-optimizer instances: states sharded over dp x cp / N (default 1)", "N"),
      {"fsdp-impl", 0, 0, G_OPTION_ARG_STRING, &o->fsdp_impl,
       "Whose ZeRO-2/3: megatron (Megatron-FSDP, DeepSpeed: bf16 weights + fp32 main params, "
       "default) | torch (PyTorch FSDP2 as torchtitan: fp32 sharded params)",
       "IMPL"},
      {"reshard-after-forward", 0, 0, G_OPTION_ARG_STRING, &o->reshard_after_forward,
       "FSDP units freed after forward, gathered again in backward: default (torch: but-last, "
       "never under pp; megatron: always) | always | but-last (not the output unit) | never",
       "WHEN"},
      {"no-fsdp-prefetch", 0, 0, G_OPTION_ARG_NONE, &o->no_fsdp_prefetch,
       "FSDP: the next unit's all-gather waits for this unit's compute", NULL},
      {"attention", 0, 0, G_OPTION_ARG_STRING, &o->attention,
       "flash (fused kernels, default) | unfused (s x s scores kept, Megatron's local or "
       "unfused backend)",
       "KIND"},
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
       "grad_sync_dtype=bf16), not fp32",
       NULL},
      {"no-gradient-accumulation-fusion", 0, 0, G_OPTION_ARG_NONE,
       &o->no_gradient_accumulation_fusion,
       "wgrad GEMMs write a gradient that is then added into main_grad", NULL},
      {"cross-entropy-loss-fusion", 0, 0, G_OPTION_ARG_NONE, &o->cross_entropy_loss_fusion,
       "Megatron's fused vocab-parallel cross entropy", NULL},
      {"defer-embedding-wgrad-compute", 0, 0, G_OPTION_ARG_NONE, &o->defer_embedding_wgrad,
       "The last stage keeps each microbatch's output-layer input and logits gradient until the "
       "pipeline flush computes the embedding's weight gradient (pp > 1, needs gradient "
       "accumulation fusion)",
       NULL},
      NUMBER("wgrad-deferral-limit",
             "With --defer-embedding-wgrad-compute: the microbatches deferred, 0 (all) to 2^30 "
             "(default 0)",
             "N"),
      {"cross-entropy-fusion-impl", 0, 0, G_OPTION_ARG_STRING, &o->cross_entropy_fusion_impl,
       "The fused cross entropy's: native (Megatron's, under torch.compile; default) or te "
       "(Transformer Engine's Triton kernel)",
       "IMPL"},
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
      {"cp-comm-type", 0, 0, G_OPTION_ARG_STRING, &o->cp_comm_type,
       "p2p|a2a|allgather: context parallelism's K/V ring, Ulysses all-to-all or K/V all-gather "
       "(default p2p)",
       "T"},
      {"fp4-format", 0, 0, G_OPTION_ARG_STRING, &o->fp4_format,
       "e2m1: NVFP4 layers where fp8 would run (Blackwell profiles: peak_fp4_tflops)", "F"},
      {"fp8-param-gather", 0, 0, G_OPTION_ARG_NONE, &o->fp8_param_gather,
       "fp8 model weights, gathered in fp8 (needs the distributed optimizer)", NULL},
      NUMBER("memory-threshold",
             "Memory fraction a layout may use and still count as fitting, in (0, 1] "
             "(default 0.8)",
             "F"),
      NUMBER("attention-dropout", "Attention dropout probability, in [0, 1) (default 0)", "P"),
      NUMBER("hidden-dropout", "Hidden dropout probability, in [0, 1) (default 0)", "P"),
      NUMBER("decoder-first-pipeline-num-layers",
             "Layers on the first pipeline stage (uneven split)", "N"),
      NUMBER("decoder-last-pipeline-num-layers", "Layers on the last pipeline stage (uneven split)",
             "N"),
      {"account-for-embedding-in-pipeline-split", 0, 0, G_OPTION_ARG_NONE, &o->account_embedding,
       "The embedding counts as a layer in the split (first chunk: one layer fewer)", NULL},
      {"account-for-loss-in-pipeline-split", 0, 0, G_OPTION_ARG_NONE, &o->account_loss,
       "The loss counts as a layer in the split (last chunk: one layer fewer)", NULL},
      {"pipeline-model-parallel-layout", 0, 0, G_OPTION_ARG_STRING, &o->pipeline_layout,
       "Megatron's layout string, e.g. \"Et*3|(tt|)*14,tL\" or \"Et|(tt|)*30mL\" (sets vp "
       "and the split; virtual stages may differ; 'm': the MTP layers, with the loss or on "
       "the virtual stage before it, \"...m|L\")",
       "LAYOUT"},
      NUMBER("microbatch-group-size",
             "Interleaved schedule: microbatches each virtual stage runs in a row, from pp "
             "(default) to the microbatches, leaving a last group of 0 or pp at least "
             "(Megatron's --microbatch-group-size-per-virtual-pipeline-stage)",
             "N"),
      NUMBER("kv-channels", "Head dimension (default hidden / heads)", "N"),
      {"qk-layernorm", 0, 0, G_OPTION_ARG_NONE, &o->qk_layernorm,
       "A norm over each query and key head", NULL},
      {"position-embedding-type", 0, 0, G_OPTION_ARG_STRING, &o->position_embedding,
       "learned_absolute|rope|none (default: the model's)", "T"},
      {"manual-gc", 0, 0, G_OPTION_ARG_NONE, &o->manual_gc,
       "Python GC only at chosen steps (Megatron --manual-gc; ptsim models no GC stalls)", NULL},
      {"deterministic-mode", 0, 0, G_OPTION_ARG_NONE, &o->deterministic,
       "PyTorch's deterministic algorithms (Megatron --deterministic-mode): every output "
       "Transformer Engine allocates is filled (NaN) before it is written",
       NULL},
      {"moe-token-dispatcher-type", 0, 0, G_OPTION_ARG_STRING, &o->moe_dispatcher,
       "MoE token dispatch: alltoall|allgather|flex (default alltoall)", "D"},
      NUMBER("moe-expert-capacity-factor",
             "Tokens an expert takes over its balanced share, in (0, 10^6]; the rest are dropped "
             "(default: dropless)",
             "F"),
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
      {"delay-wgrad-compute", 0, 0, G_OPTION_ARG_NONE, &o->delay_wgrad_compute,
       "With --overlap-moe-expert-parallel-comm: weight gradients after the data gradients, "
       "so the dispatch's gradient hides behind them",
       NULL},
      NUMBER("mtp-num-layers",
             "Multi-token prediction layers, 0 to 64 (default: the model's; 0: none)", "N"),
      {"megatron-date", 0, 0, G_OPTION_ARG_STRING, &o->megatron_date,
       "Date of the Megatron-LM source (YYYY-MM-DD or YYYY-MM; default current): memory that "
       "releases allocate differently follows it (validate: a log's arguments date it)",
       "DATE"},
      {"attention-softmax-in-fp32", 0, 0, G_OPTION_ARG_NONE, &o->attention_softmax_fp32,
       "Unfused attention's softmax in fp32 where the fused kernel does not apply (local layers "
       "past 4096 tokens; Megatron's flag, also set by --apply-query-key-layer-scaling)",
       NULL},
      {"cublas-workspace-config", 0, 0, G_OPTION_ARG_STRING, &o->cublas_workspace_config,
       "PyTorch's CUBLAS_WORKSPACE_CONFIG, :SIZE:COUNT KiB (\":4096:8\" is 32 MiB per thread "
       "that calls cuBLAS; default: the GPU's, hw_profiles/software/workspaces.ini)",
       "CONFIG"},
      NUMBER("lora-rank",
             "LoRA fine-tuning: frozen base weights, rank-R adapters on the targeted linears "
             "(Megatron-Bridge's peft=LoRA(dim=R)): only the adapters have gradients and "
             "optimizer states; backward skips the base's weight gradients (1 to 65536)",
             "R"),
      NUMBER("lora-alpha", "With --lora-rank: the adapters' scale alpha / R (default 32)", "A"),
      {"lora-target-modules", 0, 0, G_OPTION_ARG_STRING, &o->lora_target_modules,
       "With --lora-rank: the linears adapted, linear_qkv,linear_proj,linear_fc1,linear_fc2 "
       "(default all four, as Megatron-Bridge)",
       "M[,M...]"},
      {"cuda-graph-impl", 0, 0, G_OPTION_ARG_STRING, &o->cuda_graph_impl,
       "CUDA graphs as Megatron-LM captures them: none (default) | local (a graph per layer, and "
       "per microbatch with pp > 1) | transformer_engine (TE's make_graphed_callables); fewer "
       "launches, and the graphs' static buffers kept",
       "IMPL"},
      {"cuda-graph-scope", 0, 0, G_OPTION_ARG_STRING, &o->cuda_graph_scope,
       "With --cuda-graph-impl: what is captured, Megatron-LM's words: full (each layer, default) "
       "| attn | mlp | moe | moe_router | moe_preprocess | full_iteration (local: the whole step)",
       "S[,S...]"},
      {"fine-grained-activation-offloading", 0, 0, G_OPTION_ARG_NONE, &o->fine_grained_offloading,
       "Megatron-LM's activation offloading: the inputs --offload-modules names go to pinned host "
       "memory after the forward and come back before the backward, over the profile's host link "
       "(host_link_gbps), beside the compute",
       NULL},
      {"offload-modules", 0, 0, G_OPTION_ARG_STRING, &o->offload_modules,
       "With --fine-grained-activation-offloading: whose inputs, attn_norm,qkv_linear,core_attn,"
       "attn_proj,mlp_norm,expert_fc1,moe_act",
       "M[,M...]"},
      END};
  return g_memdup2(entries, sizeof entries);
}

GOptionGroup *ptsim_job_options_group(PtsimJobOptions *o) {
  g_autofree GOptionEntry *dims = dimension_entries(o);
  g_autofree GOptionEntry *settings = setting_entries(o);
  /* o is the user data that number_option receives */
  GOptionGroup *group = g_option_group_new("job", "Job options (model, hardware, layout):",
                                           "Show job options", o, NULL);
  g_option_group_add_entries(group, dims);
  g_option_group_add_entries(group, settings);
  return group;
}

void ptsim_job_options_add_to_context(GOptionContext *context, PtsimJobOptions *opts,
                                      const GOptionEntry *command_entries) {
  GOptionGroup *group = ptsim_job_options_group(opts);
  if (command_entries) g_option_group_add_entries(group, command_entries);
  g_option_context_set_main_group(context, group);
}

void ptsim_job_options_add_settings_to_context(GOptionContext *context, PtsimJobOptions *opts,
                                               const GOptionEntry *command_entries) {
  g_autofree GOptionEntry *settings = setting_entries(opts);
  GOptionGroup *group = g_option_group_new("job", "Job settings:", "Show job settings", opts, NULL);
  if (command_entries) g_option_group_add_entries(group, command_entries);
  g_option_group_add_entries(group, settings);
  g_option_context_set_main_group(context, group);
}

/* ---- an argv-style array ---- */

gboolean ptsim_job_options_parse(PtsimJobOptions *o, const char *const *flags, GError **error) {
  g_return_val_if_fail(o != NULL && flags != NULL, FALSE);
  g_autoptr(GOptionContext) context = g_option_context_new(NULL);
  g_option_context_set_help_enabled(context, FALSE);
  ptsim_job_options_add_to_context(context, o, NULL);
  return ptsim_options_parse_flags(context, flags, error);
}

/* ---- flags that exclude each other ---- */

#define invalid(...) \
  (g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID, __VA_ARGS__), FALSE)

gboolean ptsim_job_options_check(const PtsimJobOptions *o, GError **error) {
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
      {o->model != NULL, o->hf_config != NULL, "--model and --hf-config"},
      {o->torchtitan != NULL, o->megatron_args != NULL || o->megatron_args_file != NULL,
       "--torchtitan and --megatron-args(-file)"},
      {o->overlap_grad_reduce, o->no_overlap_grad_reduce,
       "--overlap-grad-reduce and --no-overlap-grad-reduce"},
      {o->overlap_param_gather, o->no_overlap_param_gather,
       "--overlap-param-gather and --no-overlap-param-gather"},
      {o->tp_comm_overlap, o->no_tp_comm_overlap, "--tp-comm-overlap and --no-tp-comm-overlap"},
      {o->moe_grouped_gemm, o->no_moe_grouped_gemm, "--moe-grouped-gemm and --no-moe-grouped-gemm"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(pairs); i++)
    if (pairs[i].a && pairs[i].b) return invalid("%s: give at most one", pairs[i].names);
  const char *input = o->script_args        ? "--script-args"
                      : o->env              ? "--env"
                      : o->env_from_process ? "--env-from-process"
                                            : NULL;
  if (input && !o->megatron_args && !o->megatron_args_file)
    return invalid("%s is for a launch script: give --megatron-args-file FILE (or "
                   "--megatron-args)",
                   input);
  return TRUE;
}

const char *ptsim_job_options_overlap_source(const PtsimJobOptions *o) {
  if (o->overlap_grad_reduce || o->no_overlap_grad_reduce || o->overlap_param_gather ||
      o->no_overlap_param_gather || o->tp_comm_overlap || o->no_tp_comm_overlap || o->no_overlap)
    return "flags";
  if (o->megatron_args || o->megatron_args_file) return "megatron-args";
  if (o->torchtitan) return "torchtitan";
  return "default";
}
