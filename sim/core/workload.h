/* workload.h — what one training step asks of each pipeline stage: the
 * durations of one microbatch's forward, input-gradient (B) and
 * weight-gradient (W) work per model chunk, the communication each needs,
 * and the once-per-step work (gradient reduction, parameter gather,
 * optimizer).
 *
 * A Megatron-style transformer layer is the sequence of ops written out in
 * workload.c (norm, QKV GEMM, RoPE, flash attention, output projection,
 * residual, norm, MLP GEMMs, activation, residual) with the tensor-parallel
 * collectives at Megatron's points (all-reduce without SP; all-gather +
 * reduce-scatter with SP) and the context-parallel K/V ring.  Every op is
 * priced by cost.h; this module only decides which ops exist and their
 * shapes.  A model has at most two kinds of layer, dense and MoE
 * (workload_moe.c: router, all-to-all dispatch and combine, grouped expert
 * GEMMs, shared experts; and multi-latent attention), so a chunk's cost is
 * its dense layers x one dense layer + its MoE layers x one MoE layer (the
 * plan counts them per chunk), plus the embedding on the first virtual
 * stage and the LM head + cross-entropy (and the MTP layers) on the last:
 * that is where the last-stage imbalance of large vocabularies comes from.
 *
 * Core module: pure C, PTSIM_HD, no allocation, no I/O.
 * Not here: when things run (schedule.h, engine.h). */
#ifndef PTSIM_WORKLOAD_H
#define PTSIM_WORKLOAD_H

#include "cost.h"
#include "hd.h"
#include "job.h"
#include "plan.h"
#include "rng.h"

/* Communication kinds, for exposed-time accounting. */
typedef enum {
  PTSIM_COMM_TP = 0,
  PTSIM_COMM_CP = 1,
  PTSIM_COMM_PP = 2,
  PTSIM_COMM_DP = 3,
  PTSIM_COMM_EP = 4 /* expert parallel: token dispatch and combine */
} PtsimCommKind;
#define PTSIM_COMM_KINDS 5

/* One piece of per-microbatch work on the compute stream.  Durations
 * include the communication that blocks the compute stream (TP collectives,
 * the part of the CP ring not hidden behind attention); that part is also
 * given by kind so the engine can report it as exposed. */
typedef struct {
  double forward_s;
  double backward_input_s;  /* B: activation gradients (+ recomputation) */
  double backward_weight_s; /* W: weight gradients */
  double forward_comm_s[PTSIM_COMM_KINDS];
  double backward_comm_s[PTSIM_COMM_KINDS]; /* inside B */
  double recompute_s;                       /* inside B: forward work re-run */
  double flops;                             /* executed FLOPs (fwd + bwd + recompute) */
} PtsimWork;

typedef struct {
  PtsimWork layer;     /* one (dense) transformer layer */
  PtsimWork moe_layer; /* one MoE layer (zero for a dense model) */
  /* Of one MoE layer, the local experts' compute, and in the comm slots
   * the dispatch all-to-all (forward) and its gradient (backward): what
   * combined 1F1B splits a layer at (ptsim_work_moe_pair_s). */
  PtsimWork moe_mlp;
  /* One MoE layer's forward and backward (B + W) on the GPU, before the
   * host's issue time raises them (host_time.c): a raised pass is
   * host-bound, and a combined 1F1B pair of such passes takes at least
   * their issue time, the CPU issuing both. */
  double moe_layer_gpu_s[2];
  /* A hybrid model's layers (mamba.h, workload_mamba.c), each its own
   * sub-layer with its pre-norm and residual: a Mamba-2 mixer, attention
   * alone, the MLP alone, the MoE block alone (zero for other models); a
   * chunk's of each kind: chunk_mamba_layers, chunk_attention_layers,
   * chunk_moe_layers, the rest MLP ones (the plan's layer ranges and the
   * model's pattern).  hybrid: 1 when the model has a pattern. */
  PtsimWork mamba_layer, attention_layer, mlp_layer, moe_block_layer;
  int16_t chunk_mamba_layers[PTSIM_MAX_VSTAGES];
  int16_t chunk_attention_layers[PTSIM_MAX_VSTAGES];
  int32_t hybrid;
  PtsimWork embedding; /* first virtual stage */
  PtsimWork head;      /* final norm + LM head + cross-entropy, last virtual stage */
  PtsimWork mtp;       /* the multi-token prediction layers, last virtual stage */
  /* With the MTP stage apart (job.h mtp_apart): the MTP layers without
   * their heads, on chunk mtp_chunk of mtp_stage (the plan's), and their
   * output heads and losses, on the last virtual stage; each with the
   * transfer of the D more activations its link carries (the forward's
   * to the loss's stage, the backward's from it). */
  PtsimWork mtp_body, mtp_heads;
  int32_t mtp_apart;
  int64_t mtp_stage, mtp_chunk;
  int64_t num_stages, num_chunks, num_microbatches;
  /* The first virtual stage (the embedding's) is chunk 0 of first_stage,
   * the last (the output layer's) chunk num_chunks-1 of last_stage (the
   * plan's vstages). */
  int64_t first_stage, last_stage;
  /* A chunk's layers (the plan's vstage_layers), and of them the MoE ones:
   * chunk c of stage s at s * num_chunks + c, for the first
   * PTSIM_MAX_VSTAGES (plan.h). */
  int32_t chunk_layers[PTSIM_MAX_VSTAGES];
  int16_t chunk_moe_layers[PTSIM_MAX_VSTAGES];
  double pp_transfer_s; /* one activation (or its gradient) to a neighbour */
  /* Once per step, per stage (one GPU of it): */
  double grad_sync_s[PTSIM_MAX_STAGES];    /* reduce-scatter (dist. opt.) or all-reduce */
  double param_gather_s[PTSIM_MAX_STAGES]; /* all-gather of updated bf16 params (dist. opt.) */
  double optimizer_s[PTSIM_MAX_STAGES];    /* Adam on the local shard (memory-bound) */
  /* A tied word embedding's gradient all-reduced between the first and the
   * last stage (Megatron-LM's embedding group) after the pipeline flush and
   * the data-parallel reduction, before the optimizer: every stage waits
   * for it (the gradient-norm all-reduce follows); 0 when untied, pp = 1 or
   * the embedding is frozen. */
  double embedding_grad_sync_s;
  /* Sharded data parallelism (plan.h units): one unit's all-gather over the
   * shard group, reduce-scatter of its gradient, all-reduce of that shard
   * over the replicas; and which of them the items run (the plan's flags).
   * ptsim_workload_chunk then times a chunk's units as sharding.h says and
   * adds what the compute waits for as exposed dp communication. */
  double unit_gather_s[PTSIM_UNIT_KINDS];
  double unit_reduce_s[PTSIM_UNIT_KINDS];
  double unit_replicate_s[PTSIM_UNIT_KINDS];
  int32_t gather_forward, gather_backward, gather_backward_head, reduce_backward,
      replicate_backward, prefetch;
  /* Megatron-LM's num_floating_point_operations for the whole step (all
   * GPUs): the FLOPs its logs turn into "TFLOP/s/GPU". */
  double model_flops;
  double expert_load; /* the expert load this workload was built for (plan.h) */
} PtsimWorkload;

/* The work of chunk `chunk` on stage `stage`: layers + embedding/head,
 * with its units' sharded-data-parallel collectives where the compute
 * waits for them (workload.h above). */
PTSIM_HD void ptsim_workload_chunk(const PtsimWorkload *w, int64_t stage, int64_t chunk,
                                   PtsimWork *out);

/* Megatron-LM's FLOP count of one step (see model_flops).  Dense models:
 * its formula before core_v0.12 (the attention core without causal
 * halving, which the published dense measurements ptsim validates against
 * used).  MoE, MLA and MTP models: its current formula (core_v0.12 on,
 * d98e8a64: first-k-dense, active experts, shared experts, MLA, MTP, the
 * attention core causal), the first release that counts them at all. */
PTSIM_HD double ptsim_workload_megatron_flops(const PtsimJob *job);

/* Fills *out from a validated job's plan.  params may be NULL (defaults). */
PTSIM_HD void ptsim_workload_build(const PtsimPlan *plan, const PtsimCostParams *params,
                                   PtsimWorkload *out);

/* The same with the busiest EP rank's load `expert_load` (routed tokens
 * over the balanced share) instead of the plan's deterministic one: a
 * Monte-Carlo sample's (ptsim_workload_sample_expert_load). */
PTSIM_HD void ptsim_workload_build_loaded(const PtsimPlan *plan, const PtsimCostParams *params,
                                          double expert_load, PtsimWorkload *out);

/* A Monte-Carlo sample of the step's expert load: the mean over a few MoE
 * layers of the busiest EP rank's routed tokens over the balanced share,
 * each rank's count drawn from the token distribution of uniform routing
 * (binomial, by its normal approximation) and bounded by the capacity
 * factor (exactly it when padded).  Uniform routing is the router's
 * balanced target; the skew of a trained router is not modelled.  The
 * plan's expert_load when nothing varies (no experts, ep 1). */
PTSIM_HD double ptsim_workload_sample_expert_load(const PtsimPlan *plan, PtsimRng *rng);

/* One MoE layer of a forward + backward pair in Megatron-LM's combined
 * 1F1B (--overlap-moe-expert-parallel-comm), seconds: the forward's
 * compute before the dispatch (attention, norm, router, shared experts,
 * permute), its dispatch, the experts, its combine; the backward's
 * combine gradient, the experts' data and weight gradients, the
 * dispatch's gradient, and the rest's data and weight gradients. */
typedef struct {
  double attn_f, dispatch_f, mlp_f, combine_f;
  double combine_b, mlp_b, mlp_w, dispatch_b, attn_b, attn_w;
} PtsimMoePairParts;

/* How long the pair runs a layer in the steady state, on the compute and
 * the communication stream (workload_moe.c); with delay_wgrad
 * (--delay-wgrad-compute) the weight gradients after the data ones. */
PTSIM_HD double ptsim_work_moe_pair_s(const PtsimMoePairParts *p, int delay_wgrad);

#endif /* PTSIM_WORKLOAD_H */
