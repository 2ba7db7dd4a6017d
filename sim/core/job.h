/* job.h — the plain-data description of one training job: the model, the
 * hardware, the parallel layout (where the ranks go: PtsimLayout), the
 * run's settings (how they run: PtsimSettings) and what the source says
 * about itself (PtsimProvenance).  These structs are the input to every
 * core module (memory, cost, schedule, engine, alloc) and are filled in by
 * the shell (config.c from .ini files, job_build.c from flags,
 * megatron_args.c from Megatron-LM command lines, torchtitan.c from
 * torchtitan configs).  Which field is whose: the layout is what places
 * ranks and shapes their groups, and what a sweep enumerates (the
 * data-parallel sharding mode included); the settings everything a rank
 * does with its place (recompute included, although a sweep enumerates
 * it); the provenance the Megatron-LM date and the dropouts.  Each struct's
 * comment says why.
 *
 * Fixed-size, no pointers, so a job can be copied to a GPU as is.  It holds
 * what was asked for; what follows from it (microbatches, the per-stage
 * split, group placement) is derived once into a PtsimPlan (plan.h).
 * Validation lives in the shell (io/job_validate.c, through GError); the
 * core trusts a job that ptsim_job_validate() accepted.
 *
 * Units: counts are int64_t, bytes and rates are double with the unit in the
 * name (_bytes, _flops, _bytes_per_s, _s). */
#ifndef PTSIM_JOB_H
#define PTSIM_JOB_H

#include <stdint.h>
#include "host.h"
#include "hd.h"

#define PTSIM_NAME_MAX 64
/* Largest pipeline depth a job may have; GPT-1T in Narayanan et al. uses 64. */
#define PTSIM_MAX_STAGES 128
/* Most transformer layers a mixture-of-experts model may have: its layer
 * pattern is a bitmap of this many bits (dense models have no such limit).
 * DeepSeek-V3 has 61, Qwen3-235B-A22B 94. */
#define PTSIM_MAX_LAYERS 512
#define PTSIM_LAYER_WORDS (PTSIM_MAX_LAYERS / 64)
/* Runs of equal virtual stages a pipeline layout may have (PtsimLayout). */
#define PTSIM_LAYOUT_RUNS 16

/* RELU2: squared ReLU, relu(x)^2 (Megatron-LM's --squared-relu; Nemotron-H):
 * two MLP matrices like GELU, but Megatron fuses no bias into it. */
typedef enum {
  PTSIM_ACTIVATION_SWIGLU = 0,
  PTSIM_ACTIVATION_GELU = 1,
  PTSIM_ACTIVATION_RELU2 = 2
} PtsimActivation;

/* Megatron-LM's --softmax-type (Transformer Engine's softmax_type): OFF_BY_ONE
 * adds 1 to the softmax's denominator (a zero-logit sink), LEARNABLE one
 * learned sink logit per head (GPT-OSS's attention sinks: a parameter per
 * head and layer, split over TP with the heads). */
typedef enum {
  PTSIM_SOFTMAX_VANILLA = 0,
  PTSIM_SOFTMAX_OFF_BY_ONE = 1,
  PTSIM_SOFTMAX_LEARNABLE = 2
} PtsimSoftmaxType;

typedef enum { PTSIM_NORM_RMSNORM = 0, PTSIM_NORM_LAYERNORM = 1 } PtsimNorm;

/* Megatron-LM's --position-embedding-type.  AUTO decides by family, as
 * a model file without the key always did: GELU + LayerNorm models are
 * GPT-style (learned absolute), everything else RoPE (plan.h). */
typedef enum {
  PTSIM_POSITION_AUTO = 0,
  PTSIM_POSITION_LEARNED = 1, /* a max_position_embeddings x h table on stage 0 */
  PTSIM_POSITION_ROPE = 2,    /* no parameters; a rotary pass over q and k */
  PTSIM_POSITION_NONE = 3
} PtsimPositionEmbedding;

/* Megatron-LM's --moe-router-score-function. */
typedef enum {
  PTSIM_ROUTER_SOFTMAX = 0,
  PTSIM_ROUTER_SIGMOID = 1,
  PTSIM_ROUTER_SQRTSOFTPLUS = 2
} PtsimRouterScore;

/* Megatron-LM's --moe-router-load-balancing-type. */
typedef enum {
  PTSIM_BALANCE_AUX_LOSS = 0,        /* GShard/Switch, per micro-batch */
  PTSIM_BALANCE_SEQ_AUX_LOSS = 1,    /* DeepSeek, per sequence */
  PTSIM_BALANCE_GLOBAL_AUX_LOSS = 2, /* over the global batch */
  PTSIM_BALANCE_SINKHORN = 3,
  PTSIM_BALANCE_QUANTILE = 4, /* quantile_balancing: a per-expert bias */
  PTSIM_BALANCE_NONE = 5
} PtsimLoadBalancing;

/* A Megatron-style decoder-only transformer. */
typedef struct {
  char name[PTSIM_NAME_MAX];   /* short name, e.g. "llama3-8b" */
  int64_t num_layers;          /* L */
  int64_t hidden_size;         /* h */
  int64_t ffn_hidden_size;     /* h_ffn (per MLP, before TP split) */
  int64_t num_attention_heads; /* a */
  int64_t num_query_groups;    /* k (GQA groups; == a for MHA) */
  int64_t vocab_size;          /* v (padded, as the embedding is allocated) */
  PtsimActivation activation;  /* swiglu: 3 MLP matrices; gelu, relu2: 2 */
  PtsimNorm norm;              /* rmsnorm: weight only; layernorm: weight+bias */
  int tied_embeddings;         /* 1: LM head shares the embedding matrix */
  int bias;                    /* 1: linear layers carry biases (GPT-style) */
  /* Megatron-LM's --kv-channels: the head dimension d (0: h / a).  The
   * query projection is a*d wide, key and value k*d each (may differ from h). */
  int64_t kv_channels;
  int qk_layernorm; /* 1: a norm over each head of q and of k (--qk-layernorm) */
  PtsimPositionEmbedding position_embedding;
  int64_t max_position_embeddings; /* rows of a learned table (0: seq) */
  /* Mixture of experts (Megatron-LM's --num-experts and --moe-*).  With
   * num_experts 0 the model is dense and the fields below up to the
   * attention's are unused.  An MoE layer replaces the MLP by a router
   * (h x E), E routed experts of width f (each a SwiGLU/GELU MLP like the
   * dense one) of which each token uses k, and shared experts every token
   * uses (one MLP of width fs, the sum of their widths). */
  int64_t num_experts;            /* E */
  int64_t moe_router_topk;        /* k */
  int64_t moe_ffn_hidden_size;    /* f */
  int64_t moe_shared_expert_size; /* fs (--moe-shared-expert-intermediate-size; 0: none) */
  int moe_shared_expert_gate;     /* 1: a sigmoid gate (h -> 1) on the shared output */
  /* Which layers are MoE: bit i of word i / 64 for layer i (--moe-layer-freq:
   * every N-th layer, or a list such as "([0]*3+[1]*58)"); num_layers <=
   * PTSIM_MAX_LAYERS.  A bitmap rather than first-k-dense + frequency: it
   * holds any pattern Megatron's list syntax can write, and a stage's count
   * is a popcount over its range. */
  uint64_t moe_layers[PTSIM_LAYER_WORDS];
  PtsimRouterScore moe_router_score;
  PtsimLoadBalancing moe_load_balancing;
  double moe_aux_loss_coeff;  /* 0: no auxiliary loss term */
  int moe_router_expert_bias; /* aux-loss-free balancing bias (--moe-router-enable-expert-bias) */
  int64_t moe_router_groups;  /* group-limited routing: groups (0: none) ... */
  int64_t moe_router_group_topk; /* ... of which each token may use this many */
  /* Multi-head latent attention (DeepSeek-V2/V3, --multi-latent-attention):
   * q from a rank-q_lora latent (0: straight from h), k and v from a
   * rank-kv_lora latent plus a shared rope key of qk_pos_emb_head_dim;
   * query/key heads are qk_head_dim + qk_pos_emb_head_dim wide, value heads
   * v_head_dim.  kv_channels and num_query_groups do not apply. */
  int multi_latent_attention;
  int64_t q_lora_rank, kv_lora_rank;
  int64_t qk_head_dim, qk_pos_emb_head_dim, v_head_dim;
  /* Multi-token prediction (--mtp-num-layers): layers after the decoder,
   * each a transformer layer of the last layer's kind plus two norms and a
   * 2h -> h projection, sharing the embedding and the output head. */
  int64_t mtp_num_layers;
  /* Sliding-window attention (--window-size W,0; a config.json's
   * sliding_window): in window_layers of the num_layers each query attends
   * to itself and the window_size tokens before it (--window-attn-skip-freq
   * N: every N-th layer attends to the whole prefix).  0: none. */
  int64_t window_size;
  int64_t window_layers;
  PtsimSoftmaxType softmax_type; /* attention sinks (vanilla: none) */
  /* A hybrid model (Megatron-LM's --hybrid-layer-pattern, formerly
   * --hybrid-override-pattern; Nemotron-H): layer i is one sub-layer of
   * kind hybrid_pattern[i], each with its own pre-norm and residual --
   * PTSIM_HYBRID_MAMBA a Mamba-2 mixer, _ATTENTION self-attention alone,
   * _MLP the MLP alone, _MOE the MoE block alone (mamba.h).  A NUL-ended
   * string of num_layers symbols; "" : a transformer (attention + MLP per
   * layer).  The Mamba-2 sizes are Megatron's --mamba-* flags (defaults
   * state 128, head 64, groups 8; heads 0: 2 h / head). */
  char hybrid_pattern[PTSIM_MAX_LAYERS + 1];
  int64_t mamba_state_dim, mamba_head_dim, mamba_num_groups, mamba_num_heads;
} PtsimModel;

/* The symbols of a hybrid pattern (Megatron-LM's
 * megatron/core/models/hybrid/hybrid_layer_allocation.py Symbols). */
#define PTSIM_HYBRID_MAMBA 'M'
#define PTSIM_HYBRID_ATTENTION '*'
#define PTSIM_HYBRID_MLP '-'
#define PTSIM_HYBRID_MOE 'E'

/* One GPU type inside one kind of node, on one kind of fabric. */
typedef struct {
  char name[PTSIM_NAME_MAX];
  double memory_bytes;    /* HBM capacity per GPU */
  double peak_bf16_flops; /* dense tensor-core bf16, FLOP/s */
  double peak_fp8_flops;  /* dense tensor-core fp8, FLOP/s (0: none) */
  double peak_fp4_flops;  /* dense tensor-core NVFP4, FLOP/s (0: none; Blackwell has it) */
  int mxfp8;              /* 1: MXFP8 block-scaled tensor cores (Blackwell), 0: none */
  double peak_fp32_flops; /* non-tensor fp32, FLOP/s */
  double hbm_bytes_per_s; /* HBM bandwidth */
  /* Streaming multiprocessors, and the GEMM tile (m x n output elements)
   * that one SM computes at a time: what the cost model's wave and tile
   * quantization counts (cost.h).  0 in a hand-made struct: no wave
   * quantization (one SM), a 128 x 128 tile. */
  int64_t sm_count;
  int64_t gemm_tile_m, gemm_tile_n;
  int64_t gpus_per_node; /* GPUs in one host (what --nodes counts) */
  /* GPUs whose traffic stays on NVLink: a multiple of gpus_per_node (equal
   * on HGX/DGX, 72 on GB200 NVL72); 0 in a hand-made struct means
   * gpus_per_node (topology.h ptsim_topology_domain_size). */
  int64_t gpus_per_nvlink_domain;
  double nvlink_bytes_per_s; /* per GPU, per direction, usable, inside the
                                NVLink domain (PCIe on cards without NVLink) */
  double nvlink_latency_s;   /* per collective step inside the domain */
  double nic_bytes_per_s;    /* per GPU, per direction, achievable */
  double net_latency_s;      /* per collective step across domains */
  int nvls;                  /* 1: NVLink SHARP all-reduce (Hopper+) */
  /* Efficiency parameters (the engine's cost model); see hw_profiles/README. */
  double gemm_efficiency_max;  /* best-shape GEMM fraction of peak */
  double gemm_half_flops;      /* GEMM size (FLOPs) reaching half of max */
  double attention_efficiency; /* flash-attention fraction of peak, long seq */
  double memory_efficiency;    /* fraction of HBM bandwidth memory-bound ops get */
  double kernel_launch_s;      /* fixed cost per kernel */
  /* The host CPU's time per issued op (Python, PyTorch's dispatcher, a
   * Transformer Engine module) relative to the x86 host the costs of
   * hw_profiles/software/host_overhead.ini are for (a DGX H100's Xeon
   * 8480C); 0 in a hand-made struct: 1.  Grace hosts (GH200, GB200) run
   * that work 2.5-2.8x slower. */
  double host_cpu_scale;
  /* The same for the framework's fitted per-layer and per-logged-step
   * Python (host_overhead.ini's layer_module_us, step_log_us): known only
   * where whole host-bound steps were measured on both hosts (DGX A100
   * against DGX H100); 0 in a hand-made struct: 1. */
  double host_framework_scale;
  /* The measured kernel and collective tables (hw_profiles/kernels/) the
   * profile's [kernels] group names: the 1-based index of its merged
   * PtsimKernelTable among those the shell registered
   * (sim/io/kernel_registry.h); 0: none, the constants above price every
   * kernel.  An index rather than a pointer keeps the job plain data: the
   * tables travel beside a batch of jobs (batch.h), and the cost model reads
   * the one it is given (PtsimCostParams.kernels, cost.h). */
  int32_t kernel_table;
  /* The GPU's link to its host's memory, per direction (PCIe, or NVLink-C2C
   * on Grace boards): what offloaded activations cross; 0: not known (the
   * profile's optional [node] host_link_gbps), offloading is refused. */
  double host_link_bytes_per_s;
} PtsimHardware;

typedef enum {
  PTSIM_RECOMPUTE_NONE = 0,
  PTSIM_RECOMPUTE_SELECTIVE = 1, /* Megatron's --recompute-modules */
  PTSIM_RECOMPUTE_FULL = 2,
  /* PyTorch's per-op selective checkpointing as torchtitan applies it to
   * each transformer block (selective_ac_option 'op'): the block's input,
   * the outputs of every other matmul in call order (the 1st, 3rd, ...),
   * of SDPA and of TP's reduce-scatters are kept; backward re-runs the
   * rest of the block.  Needs PyTorch layers (torch_layers) and flash
   * attention; dense models only (workload_torch.c, memory.c). */
  PTSIM_RECOMPUTE_SELECTIVE_OP = 3
} PtsimRecompute;

typedef enum {
  PTSIM_RECOMPUTE_METHOD_UNIFORM = 0,
  PTSIM_RECOMPUTE_METHOD_BLOCK = 1
} PtsimRecomputeMethod;

typedef enum {
  PTSIM_PRECISION_BF16 = 0,
  PTSIM_PRECISION_FP16 = 1,
  PTSIM_PRECISION_FP8 = 2
} PtsimPrecision;

/* Transformer Engine's FP8 scaling recipes (Megatron-LM --fp8-recipe). */
typedef enum {
  PTSIM_FP8_DELAYED = 0,    /* scale from the amax history: one read per cast */
  PTSIM_FP8_TENSORWISE = 1, /* current scaling: an amax pass, then the cast */
  PTSIM_FP8_BLOCKWISE = 2,  /* 1x128 / 128x128 block scales (Hopper) */
  PTSIM_FP8_MXFP8 = 3,      /* 32-element E8M0 scales (Blackwell only) */
  /* --fp4-format (Megatron-LM, Transformer Engine's NVFP4BlockScaling):
   * the same layers in NVFP4, e2m1 values with an E4M3 scale per 16
   * elements and one FP32 scale per tensor (Blackwell only) */
  PTSIM_FP8_NVFP4 = 4
} PtsimFp8Recipe;

/* How context-parallel attention exchanges the sequence (Megatron-LM
 * --cp-comm-type, Transformer Engine's cp_comm_type; torchtitan's
 * context_parallel_rotate_method). */
typedef enum {
  PTSIM_CP_P2P = 0,      /* a ring of K/V blocks, each send overlapping a block's attention */
  PTSIM_CP_A2A = 1,      /* Ulysses: all-to-all of Q, K, V to heads / cp heads, and of O back */
  PTSIM_CP_ALLGATHER = 2 /* all-gather of K and V before attention, reduce-scatter of dK, dV */
} PtsimCpComm;

/* Bytes one element of a quantized copy takes in RECIPE's format, its
 * share of the block scales included: FP8 1, MXFP8 1 + 1/32 (an E8M0
 * scale per 32 elements), NVFP4 1/2 + 1/16 (an E4M3 scale per 16; the one
 * FP32 scale per tensor is nothing).  The weight copies (plan.c) and the
 * casts (workload.c) count with it. */
static inline PTSIM_HD double ptsim_fp8_element_bytes(PtsimFp8Recipe recipe) {
  if (recipe == PTSIM_FP8_MXFP8) return 1.0 + 1.0 / 32.0;
  if (recipe == PTSIM_FP8_NVFP4) return 0.5 + 1.0 / 16.0;
  return 1.0;
}

/* Whose modules build a layer when transformer_engine is 0. */
typedef enum {
  PTSIM_TORCH_LAYERS_NONE = 0, /* Megatron's local layers (fused QKV and fc1, fused kernels) */
  /* PyTorch's own modules as torchtitan builds a Llama block (separate q,
   * k, v and gate/up projections, SDPA), run eagerly: RoPE, SiLU and the
   * SwiGLU product are kernels of their own, and autograd sums the
   * gradients of the projections that share an input (workload_torch.c) */
  PTSIM_TORCH_LAYERS_EAGER = 1,
  /* the same under torch.compile (Inductor): norms and elementwise ops
   * fused, priced as Megatron's fused kernels are */
  PTSIM_TORCH_LAYERS_COMPILED = 2
} PtsimTorchLayers;

/* Megatron-LM's --recompute-modules (selective recomputation), as bits. */
#define PTSIM_RECOMPUTE_CORE_ATTN 1       /* the attention core (s x s scores) */
#define PTSIM_RECOMPUTE_MLP 2             /* the whole MLP: only its input is kept */
#define PTSIM_RECOMPUTE_LAYERNORM 4       /* the two norms: their outputs are not kept */
#define PTSIM_RECOMPUTE_MOE_ACT 8         /* the experts' activation: its output is not kept */
#define PTSIM_RECOMPUTE_MOE 16            /* the whole MoE layer: only its input is kept */
#define PTSIM_RECOMPUTE_SHARED_EXPERTS 32 /* the shared experts: only their input is kept */
#define PTSIM_RECOMPUTE_MLA_UP_PROJ 64    /* MLA's q/k/v up-projections: outputs not kept */
#define PTSIM_RECOMPUTE_ALL_MODULES 127

/* Megatron-LM's --moe-token-dispatcher-type. */
typedef enum {
  PTSIM_DISPATCH_ALLGATHER = 0, /* all-gather of every token over etp x ep (Megatron's default) */
  PTSIM_DISPATCH_ALLTOALL = 1,  /* all-to-all of each token's k copies over ep */
  PTSIM_DISPATCH_FLEX = 2       /* DeepEP / HybridEP: one copy per destination rank */
} PtsimDispatcher;

typedef enum {
  PTSIM_SCHEDULE_1F1B = 0,
  PTSIM_SCHEDULE_GPIPE = 1,
  PTSIM_SCHEDULE_INTERLEAVED = 2,
  PTSIM_SCHEDULE_ZB_H1 = 3,
  PTSIM_SCHEDULE_ZBV = 4,      /* PyTorch's ScheduleZBVZeroBubble (V placement, v = 2) */
  PTSIM_SCHEDULE_DUALPIPEV = 5 /* PyTorch's ScheduleDualPipeV (V placement, v = 2) */
} PtsimSchedule;

/* Sharded data parallelism beyond the distributed optimizer: what the
 * dp x cp ranks (or, with optimizer_instances R > 1, each group of
 * dp x cp / R consecutive ones: HSDP) split besides the optimizer states.
 * ZeRO-1 is distributed_optimizer with NONE; GRADS and PARAMS shard the
 * optimizer states too (validation requires distributed_optimizer). */
typedef enum {
  PTSIM_SHARDING_NONE = 0,  /* parameters and gradients replicated (DDP / ZeRO-1) */
  PTSIM_SHARDING_GRADS = 1, /* ZeRO-2: gradients reduce-scattered per unit, every micro-batch */
  PTSIM_SHARDING_PARAMS = 2 /* ZeRO-3 / FSDP: parameters gathered per unit before use */
} PtsimSharding;

/* Whose sharded data parallelism: what the persistent states are and when
 * gradients are synchronised (plan.c "Sharding"). */
typedef enum {
  /* Megatron-FSDP, DeepSpeed ZeRO, Megatron's --use-torch-fsdp2: bf16 model
   * weights sharded next to separate fp32 main parameters; replicas of an
   * HSDP group all-reduce their gradient shards once per step. */
  PTSIM_FSDP_MEGATRON = 0,
  /* PyTorch FSDP2 as torchtitan applies it (MixedPrecisionPolicy bf16 /
   * fp32): the fp32 sharded parameters are the optimizer's, bf16 copies
   * exist only gathered; HSDP replicas all-reduce every micro-batch; under
   * pipeline parallelism (torch.distributed.pipelining) gradients are
   * reduced once after the last micro-batch and parameters stay gathered. */
  PTSIM_FSDP_TORCH = 1
} PtsimFsdpImpl;

/* When a unit's gathered parameters are freed after its forward
 * (PtsimSettings.reshard_after_forward). */
#define PTSIM_RESHARD_AUTO (-1)  /* torch: NEVER under PP, else BUT_LAST; megatron: ALWAYS */
#define PTSIM_RESHARD_NEVER 0    /* kept to the unit's backward: no backward all-gather */
#define PTSIM_RESHARD_BUT_LAST 1 /* every unit but the output one, needed first in backward */
#define PTSIM_RESHARD_ALWAYS 2   /* every unit */

/* The parallel layout: how the GPUs are split (tensor, pipeline, context,
 * data and expert parallel), how the global batch is cut into
 * micro-batches, how the layers are placed on pipeline stages (the
 * schedule, virtual stages, the uneven split), and how the data-parallel
 * ranks share the model's states (the sharding mode).  It places the ranks
 * and shapes their groups (topology.h, plan.h), and it is what a sweep
 * enumerates (sim/run/sweep.h), recompute aside (PtsimSettings).  dp is
 * always filled in (derived from gpus / (tp*pp*cp) when not given).
 *
 * The data-parallel sharding mode (distributed_optimizer, sharding,
 * optimizer_instances) is here rather than in the settings: it decides the
 * shard and replica groups (the plan's shard_group / replicate_group), and
 * a sweep enumerates it (--sharding).  How the shards are gathered and
 * freed (fsdp_impl, reshard_after_forward, fsdp_prefetch) is a setting. */
typedef struct {
  int64_t gpus;           /* total GPUs */
  int64_t tp, pp, cp, dp; /* tensor, pipeline, context, data parallel */
  /* Expert layers fold the same GPUs as etp x ep x edp x pp (Megatron-Core's
   * MoE parallel folding): ep experts groups, etp splitting each expert's
   * width (0 before validation: tp, Megatron's default), edp derived as
   * gpus / (etp ep pp). */
  int64_t ep, etp, edp;
  int64_t vp;            /* virtual stages per pipeline rank (1: none) */
  int64_t mbs, gbs, seq; /* micro-batch, global batch (sequences), length */
  int sp;                /* sequence parallelism (-1 before validation: on when tp > 1) */
  PtsimSchedule schedule;
  /* Uneven split as Megatron's --decoder-first/last-pipeline-num-layers:
   * layers on the first / last stage (0: split evenly). */
  int64_t first_stage_layers, last_stage_layers;
  /* --account-for-embedding/loss-in-pipeline-split: the embedding / the
   * loss counts as one layer when the layers are split over the stages (a
   * --pipeline-model-parallel-layout may give more: the layer slots the
   * first / last virtual stage leaves empty; 0: none). */
  int account_embedding, account_loss;
  /* A --pipeline-model-parallel-layout whose split the fields above cannot
   * say (unequal virtual stages): the transformer layers of the pp x vp
   * virtual stages in model order, as runs of equal ones -- run r is
   * vstage_run_count[r] virtual stages of vstage_run_layers[r] layers
   * each; vstage_runs runs, 0: none (the fields above give the split). */
  int32_t vstage_runs;
  int32_t vstage_run_count[PTSIM_LAYOUT_RUNS], vstage_run_layers[PTSIM_LAYOUT_RUNS];
  /* 1: the multi-token-prediction layers run on a virtual stage of their
   * own, the one before the loss's, which holds the loss alone (a layout's
   * "...m|L": Megatron's standalone MTP stage); 0: with the loss, on the
   * last virtual stage. */
  int mtp_apart;
  /* The interleaved schedule's microbatch group: microbatches each virtual
   * stage runs in a row (--microbatch-group-size-per-virtual-pipeline-
   * stage; 0: Megatron-LM's default, pp). */
  int64_t microbatch_group;
  int distributed_optimizer;   /* shard optimizer states over dp*cp */
  PtsimSharding sharding;      /* ZeRO-2/3 (NONE: as distributed_optimizer says) */
  int64_t optimizer_instances; /* --num-distributed-optimizer-instances (1); with
                                  sharding: the HSDP replicas */
} PtsimLayout;

/* The run's settings: how each rank runs its part of the layout -- the
 * precision, what backward recomputes, which communication overlaps the
 * compute, the attention and the layers' implementation, gradient
 * accumulation, the optimizer's state dtypes, how FSDP gathers and frees
 * its units, how an MoE layer dispatches and computes, garbage collection,
 * and the memory threshold of the fit verdict.  None of it moves a rank or
 * changes a group.
 *
 * recompute is here although a sweep enumerates it (sim/run/sweep.h): like
 * the other settings it trades memory for time on the same ranks (a
 * layer's saved activations for a second forward); the sweep writes each
 * candidate's into its settings. */
typedef struct {
  PtsimPrecision precision;
  PtsimFp8Recipe fp8_recipe; /* with precision fp8 */
  int fp8_param_gather;      /* 1: the model weights are fp8 (--fp8-param-gather) */
  PtsimRecompute recompute;
  PtsimRecomputeMethod recompute_method;
  int recompute_modules;        /* selective: PTSIM_RECOMPUTE_* bits (core_attn) */
  int64_t recompute_num_layers; /* full recompute: layers per stage (0: all) */
  /* Megatron-LM's overlap switches: --overlap-grad-reduce,
   * --overlap-param-gather, --tp-comm-overlap (Megatron's default is off;
   * ptsim's shell decides the default, see ptsim_settings_init_defaults). */
  int overlap_grad_reduce;
  int overlap_param_gather;
  int tp_comm_overlap;
  /* The parts of --tp-comm-overlap (Transformer Engine userbuffers), each 1
   * by default as in Megatron: the all-gather pipelined with qkv/fc1 fprop
   * and proj/fc2 dgrad (_ag), the reduce-scatter pipelined with proj/fc2
   * fprop (_rs), the qkv/fc1 dgrad reduce-scatter hidden in bulk behind
   * the wgrad GEMM (_bulk_dgrad); _rs_dgrad (0 by default) pipelines that
   * reduce-scatter with the dgrad GEMM instead. */
  int tp_comm_overlap_ag, tp_comm_overlap_rs, tp_comm_bulk_dgrad, tp_comm_overlap_rs_dgrad;
  int flash_attention; /* no s x s score tensors kept */
  /* 1: Transformer Engine layers (Megatron's default --transformer-impl):
   * each norm is fused into the linear layer after it; 0: Megatron's local
   * layers (separate norms, unfused attention unless flash is asked for). */
  int transformer_engine;
  PtsimTorchLayers
      torch_layers;           /* with transformer_engine 0: PyTorch's modules (NONE: Megatron's) */
  int fp32_grad_accumulation; /* 4-byte main grads (Megatron default) */
  int grad_accumulation_fusion; /* 1: wgrad GEMMs accumulate into main_grad */
  int cross_entropy_fusion;     /* 1: Megatron's fused vocab-parallel cross entropy */
  /* Optimizer state bytes per parameter (Megatron's precision-aware
   * optimizer: --main-params-dtype, --exp-avg-dtype, --exp-avg-sq-dtype;
   * 4 each by default).  main_params_bytes 2 is fp16 master weights, or
   * fp32 ones kept as 16-bit remainders next to bf16 weights. */
  int main_params_bytes, exp_avg_bytes, exp_avg_sq_bytes;
  /* --use-precision-aware-optimizer: Transformer Engine's FusedAdam keeps
   * the master weights; fp32 ones next to bf16 weights are then stored as
   * their 16 low bits only (store_param_remainders, plan.c). */
  int precision_aware_optimizer;
  PtsimFsdpImpl fsdp_impl;   /* with sharding */
  int reshard_after_forward; /* PTSIM_RESHARD_* (AUTO until validation) */
  int fsdp_prefetch;         /* 1: the next unit's all-gather is issued before this
                                unit's compute (FSDP's prefetch, 2 units gathered) */
  int manual_gc;             /* 1: no Python GC stalls (--manual-gc) */
  /* --deterministic-mode: torch.use_deterministic_algorithms(True), under
   * which PyTorch fills every tensor torch.empty allocates (NaN), so each
   * output Transformer Engine allocates is written twice (workload.c) */
  int deterministic;
  /* MoE execution (Megatron-LM's flags; unused for dense models). */
  PtsimDispatcher moe_dispatcher;
  double moe_capacity_factor; /* tokens an expert takes, over the balanced share (0: dropless) */
  int moe_pad_to_capacity;    /* every expert padded to its capacity */
  int moe_grouped_gemm;       /* 1: one grouped GEMM for the local experts; 0: one per expert */
  int moe_permute_fusion;     /* fused permute/unpermute kernels */
  int moe_router_fusion;      /* fused top-k / score / aux-loss kernels */
  int moe_router_fp32;        /* --moe-router-dtype fp32: router GEMM and probabilities in fp32 */
  int moe_shared_expert_overlap; /* shared experts on a side stream, beside the dispatch */
  int moe_ep_comm_overlap;       /* --overlap-moe-expert-parallel-comm (combined 1F1B) */
  int delay_wgrad_compute;       /* weight gradients after the data ones (combined 1F1B) */
  double memory_threshold;       /* fit verdict: usage <= threshold (0.8) */
  PtsimHost host; /* what issuing the work costs the host (host.h; all 0: not modelled) */
  /* The GEMM workspaces the run keeps in the caching allocator throughout
   * (memory.h ptsim_memory_workspace_bytes counts them per stage): PyTorch's
   * cuBLAS workspace, one per thread that calls cuBLAS, and Transformer
   * Engine's, in bytes; the shell fills them from the GPU profile
   * (hw_profiles/software/workspaces.ini, sim/io/workspaces.h) and
   * CUBLAS_WORKSPACE_CONFIG (--cublas-workspace-config).  0: none counted. */
  double cublas_workspace_bytes;
  double te_workspace_bytes;
  /* Megatron-LM's --attention-softmax-in-fp32 (which
   * --apply-query-key-layer-scaling turns on): where unfused attention
   * cannot use the fused softmax kernel, PyTorch's softmax runs in fp32
   * (memory.h PtsimAttentionCore; Transformer Engine's always does). */
  int attention_softmax_fp32;
  /* --no-masked-softmax-fusion: Megatron's local attention never runs its
   * fused scale-mask-softmax kernel (memory.h PtsimAttentionCore) */
  int masked_softmax_unfused;
  /* With cross_entropy_fusion: 1 Transformer Engine's Triton cross entropy
   * (--cross-entropy-fusion-impl te), 0 Megatron's native one under
   * torch.compile (the default); lifetimes.c keeps what each holds. */
  int cross_entropy_te;
  /* --defer-embedding-wgrad-compute: the last stage keeps each
   * microbatch's output-layer input and logits gradient until the
   * pipeline flush computes their weight gradients (lifetimes.c), for the
   * first wgrad_deferral_limit microbatches of a step (0: all). */
  int defer_embedding_wgrad;
  int64_t wgrad_deferral_limit;
  /* --no-bias-swiglu-fusion: Megatron's SwiGLU as separate PyTorch ops,
   * which keep the SiLU output besides fc1's (memory.c, "SwiGLU"). */
  int swiglu_unfused;
  PtsimCpComm cp_comm; /* how context parallelism exchanges K and V */
  /* LoRA (PEFT): the base weights are frozen and every targeted linear
   * layer of a transformer layer gets a rank-lora_rank adapter, A (in ->
   * r) then B (r -> out), scaled by lora_alpha / r (Megatron-Bridge's
   * peft=LoRA(dim, alpha, target_modules); its defaults: dim 32, alpha 32,
   * all four linears).  0: full training.  The adapters alone have
   * gradients and optimizer states (plan.c "LoRA"). */
  int64_t lora_rank;
  double lora_alpha;
  int lora_targets; /* PTSIM_LORA_* bits */
  /* Megatron-LM's --fine-grained-activation-offloading with
   * --offload-modules: the inputs of these modules (PTSIM_OFFLOAD_* bits)
   * go to host memory after the forward and come back before the
   * backward (memory.c, "Activation offloading"); 0: none. */
  int offload_modules;
} PtsimSettings;

/* --offload-modules: the module whose saved input is offloaded. */
#define PTSIM_OFFLOAD_ATTN_NORM 1   /* the layer input (the input norm's) */
#define PTSIM_OFFLOAD_QKV_LINEAR 2  /* the norm output, QKV's input */
#define PTSIM_OFFLOAD_CORE_ATTN 4   /* q, k and v */
#define PTSIM_OFFLOAD_ATTN_PROJ 8   /* the attention output, the projection's input */
#define PTSIM_OFFLOAD_MLP_NORM 16   /* the residual after attention, the MLP norm's input */
#define PTSIM_OFFLOAD_EXPERT_FC1 32 /* the rows the local experts see (MoE layers) */
#define PTSIM_OFFLOAD_MOE_ACT 64    /* the experts' fc1 output, the activation's input */
#define PTSIM_OFFLOAD_ALL 127

/* The linear layers a LoRA adapter may target (Megatron-Bridge's
 * target_modules names: linear_qkv, linear_proj, linear_fc1, linear_fc2). */
#define PTSIM_LORA_QKV 1
#define PTSIM_LORA_PROJ 2
#define PTSIM_LORA_FC1 4
#define PTSIM_LORA_FC2 8
#define PTSIM_LORA_ALL 15

/* How many linears of a layer the PTSIM_LORA_* bits `targets` name. */
static inline PTSIM_HD int ptsim_lora_target_count(int targets) {
  return (targets & 1) + ((targets >> 1) & 1) + ((targets >> 2) & 1) + ((targets >> 3) & 1);
}

/* What the source the job came from (a Megatron-LM command line or log, a
 * torchtitan config, flags) says about itself: which Megatron-LM it runs
 * and the dropout probabilities of its training recipe.  Neither places a
 * rank nor chooses how one runs; each matters only for the memory it
 * costs (lifetimes.c, memory.c). */
typedef struct {
  double attention_dropout; /* probability; > 0 keeps a mask */
  double hidden_dropout;    /* probability; > 0 keeps masks */
  /* The Megatron-LM source the job runs, as the date YYYYMMDD of its commit
   * (--megatron-date; a log's arguments block dates itself); 0: the current
   * one.  Only memory that some releases allocate and others do not keys on
   * it (lifetimes.c). */
  int32_t megatron_date;
} PtsimProvenance;

/* One job: what is trained (model), on what (hw), where each rank goes
 * (layout), how the ranks run (settings) and what the source says about
 * itself (source). */
typedef struct {
  PtsimModel model;
  PtsimHardware hw;
  PtsimLayout layout;
  PtsimSettings settings;
  PtsimProvenance source;
} PtsimJob;

#endif /* PTSIM_JOB_H */
