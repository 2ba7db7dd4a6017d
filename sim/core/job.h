/* job.h — the plain-data description of one training job: model, hardware,
 * parallel layout.  These structs are the input to every core module
 * (memory, cost, schedule, engine, alloc) and are filled in by the shell
 * (config.c from .ini files and flags, megatron_args.c from Megatron-LM
 * command lines).
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

#define PTSIM_NAME_MAX 64
/* Largest pipeline depth a job may have; GPT-1T in Narayanan et al. uses 64. */
#define PTSIM_MAX_STAGES 128

typedef enum {
  PTSIM_ACTIVATION_SWIGLU = 0,
  PTSIM_ACTIVATION_GELU = 1
} PtsimActivation;

typedef enum {
  PTSIM_NORM_RMSNORM = 0,
  PTSIM_NORM_LAYERNORM = 1
} PtsimNorm;

/* A Megatron-style decoder-only transformer. */
typedef struct {
  char name[PTSIM_NAME_MAX];   /* short name, e.g. "llama3-8b" */
  int64_t num_layers;          /* L */
  int64_t hidden_size;         /* h */
  int64_t ffn_hidden_size;     /* h_ffn (per MLP, before TP split) */
  int64_t num_attention_heads; /* a */
  int64_t num_query_groups;    /* k (GQA groups; == a for MHA) */
  int64_t vocab_size;          /* v (padded, as the embedding is allocated) */
  PtsimActivation activation;  /* swiglu: 3 MLP matrices; gelu: 2 */
  PtsimNorm norm;              /* rmsnorm: weight only; layernorm: weight+bias */
  int tied_embeddings;         /* 1: LM head shares the embedding matrix */
  int bias;                    /* 1: linear layers carry biases (GPT-style) */
} PtsimModel;

/* One GPU type inside one kind of node, on one kind of fabric. */
typedef struct {
  char name[PTSIM_NAME_MAX];
  double memory_bytes;          /* HBM capacity per GPU */
  double peak_bf16_flops;       /* dense tensor-core bf16, FLOP/s */
  double peak_fp8_flops;        /* dense tensor-core fp8, FLOP/s (0: none) */
  double peak_fp32_flops;       /* non-tensor fp32, FLOP/s */
  double hbm_bytes_per_s;       /* HBM bandwidth */
  int64_t gpus_per_node;        /* GPUs in one host (what --nodes counts) */
  /* GPUs whose traffic stays on NVLink: a multiple of gpus_per_node (equal
   * on HGX/DGX, 72 on GB200 NVL72); 0 in a hand-made struct means
   * gpus_per_node (topology.h ptsim_topology_domain_size). */
  int64_t gpus_per_nvlink_domain;
  double nvlink_bytes_per_s;    /* per GPU, per direction, usable, inside the
                                   NVLink domain (PCIe on cards without NVLink) */
  double nvlink_latency_s;      /* per collective step inside the domain */
  double nic_bytes_per_s;       /* per GPU, per direction, achievable */
  double net_latency_s;         /* per collective step across domains */
  int nvls;                     /* 1: NVLink SHARP all-reduce (Hopper+) */
  /* Efficiency parameters (the engine's cost model); see hw_profiles/README. */
  double gemm_efficiency_max;   /* best-shape GEMM fraction of peak */
  double gemm_half_flops;       /* GEMM size (FLOPs) reaching half of max */
  double attention_efficiency;  /* flash-attention fraction of peak, long seq */
  double memory_efficiency;     /* fraction of HBM bandwidth memory-bound ops get */
  double kernel_launch_s;       /* fixed cost per kernel */
} PtsimHardware;

typedef enum {
  PTSIM_RECOMPUTE_NONE = 0,
  PTSIM_RECOMPUTE_SELECTIVE = 1,
  PTSIM_RECOMPUTE_FULL = 2
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

typedef enum {
  PTSIM_SCHEDULE_1F1B = 0,
  PTSIM_SCHEDULE_GPIPE = 1,
  PTSIM_SCHEDULE_INTERLEAVED = 2,
  PTSIM_SCHEDULE_ZB_H1 = 3
} PtsimSchedule;

/* How the job is split and batched.  dp is always filled in (derived from
 * gpus / (tp*pp*cp) when not given). */
typedef struct {
  int64_t gpus;                 /* total GPUs */
  int64_t tp, pp, cp, dp;       /* tensor, pipeline, context, data parallel */
  int64_t vp;                   /* virtual stages per pipeline rank (1: none) */
  int64_t mbs, gbs, seq;        /* micro-batch, global batch (sequences), length */
  int sp;                       /* sequence parallelism (-1 before validation: on when tp > 1) */
  int distributed_optimizer;    /* shard optimizer states over dp*cp */
  int fp32_grad_accumulation;   /* 4-byte main grads (Megatron default) */
  int flash_attention;          /* no s x s score tensors kept */
  PtsimRecompute recompute;
  PtsimRecomputeMethod recompute_method;
  int64_t recompute_num_layers; /* full recompute: layers per stage (0: all) */
  PtsimPrecision precision;
  PtsimSchedule schedule;
  /* Megatron-LM's overlap switches (all off by default, as in Megatron):
   * --overlap-grad-reduce, --overlap-param-gather, --tp-comm-overlap. */
  int overlap_grad_reduce;
  int overlap_param_gather;
  int tp_comm_overlap;
  double attention_dropout;     /* probability; > 0 keeps a mask */
  double hidden_dropout;        /* probability; > 0 keeps masks */
  double memory_threshold;      /* fit verdict: usage <= threshold (0.8) */
  /* Uneven split as Megatron's --decoder-first/last-pipeline-num-layers:
   * layers on the first / last stage (0: split evenly). */
  int64_t first_stage_layers, last_stage_layers;
} PtsimLayout;

typedef struct {
  PtsimModel model;
  PtsimHardware hw;
  PtsimLayout layout;
} PtsimJob;

#endif /* PTSIM_JOB_H */
