/* plan.h — everything derived from one validated job, computed once.
 *
 * A PtsimJob says what the user asked for (model, hardware, layout as
 * given); a PtsimPlan adds what every core module needs and would otherwise
 * re-derive: the microbatch count, the per-stage layer split and its flags,
 * which stage runs each virtual stage (the placement, one table), the
 * tokens of a microbatch, the activations each stage holds under its
 * schedule (the one in-flight rule), the parameters each stage owns, the
 * communicator groups and whether they stay inside a node.
 * The core's data flow is one-way:
 *
 *     job --ptsim_plan_build--> plan --> memory estimate
 *                                    --> workload --> engine
 *                                    --> lifetimes --> allocator
 *
 * and no module below the plan recomputes a quantity the plan holds.
 *
 * Plain data: fixed size, no pointers (it embeds a copy of the job), so the
 * GPU batch evaluator builds one per thread in its scratch.  Not here: the
 * validation of the job (job_validate.h in the shell; the plan trusts it),
 * costs (cost.h), timing (engine.h).
 *
 * Core module: pure C, PTSIM_HD, no allocation, no I/O.  Sibling: plan.c. */
#ifndef PTSIM_PLAN_H
#define PTSIM_PLAN_H

#include <stdint.h>
#include "hd.h"
#include "job.h"
#include "schedule.h"
#include "topology.h"

/* The units sharded data parallelism gathers and reduces one at a time
 * (one fully_shard / FSDP unit each): a (dense) transformer layer; the
 * input embedding (first chunk of stage 0); the output unit, final norm
 * and LM head, with the multi-token-prediction block (last chunk of the
 * last stage); an MoE layer, its routed experts included. */
#define PTSIM_UNIT_LAYER 0
#define PTSIM_UNIT_EMBEDDING 1
#define PTSIM_UNIT_HEAD 2
#define PTSIM_UNIT_MOE_LAYER 3
#define PTSIM_UNIT_KINDS 4

typedef struct {
  PtsimJob job;             /* the validated job this plan was built from */
  int64_t num_stages;       /* p = pp */
  int64_t num_chunks;       /* v: model chunks per stage (vp; 1 when vp < 1; validation
                               makes vp > 1 the interleaved schedule's alone) */
  int64_t num_microbatches; /* m = gbs / (mbs * dp); 0 when mbs * dp <= 0 */
  int32_t microbatch_group; /* the interleaved schedule's group size g: the
                               layout's, or pp (Megatron's default) */
  int32_t schedule_items;   /* items per stage of the schedule's order, or a
                               negative PTSIM_SCHEDULE_ERR_* when the
                               schedule cannot be built for (p, m, v, g) */
  /* Where the pp x vp virtual stages run (schedule.h): per chunk of each
   * stage its virtual stage and the stages and chunks of the ones before
   * and after it; the stages of the first and the last.  The one placement
   * the engine, the workload, the allocator replay and the plan's own
   * per-stage sums read.  Its arrays are filled when pp x vp <=
   * PTSIM_MAX_VSTAGES (else schedule_items says so and nothing runs a
   * schedule); p, v and the ends' stages always. */
  PtsimVstages vstages;
  int64_t tokens;          /* T = mbs * seq / cp: one microbatch on one CP rank */
  int64_t local_seq;       /* s / cp: one sequence's tokens on one CP rank */
  double tokens_sp;        /* T / tp with sequence parallelism, else T */
  double layer_parameters; /* one transformer layer on one TP rank */
  /* The group of each PtsimGroupKind holding rank 0 (topology.h), placed in
   * Megatron-LM's rank order on the profile's nodes.  The expert groups
   * (PTSIM_GROUP_ETP and after) are all zero for a model with neither
   * experts nor multi-latent attention: nothing reads them, and placing
   * them is a tenth of a dense sweep's time. */
  PtsimGroup groups[PTSIM_GROUP_KIND_COUNT];
  /* Per pipeline stage [0, num_stages): */
  int64_t stage_layers[PTSIM_MAX_STAGES];      /* transformer layers (sum: num_layers) */
  int64_t stage_first_layer[PTSIM_MAX_STAGES]; /* index of its first layer */
  int64_t chunk_layers[PTSIM_MAX_STAGES];      /* the most layers a chunk of the stage
                                                  holds (each one's, when equal) */
  /* Per virtual stage in model order (vstages says where each runs), the
   * first pp x vp of them (all of a validated job's): its transformer
   * layers (ptsim_plan_split_vstages: equal ones, fewer in the first and
   * the last under --account-for-embedding/loss-in-pipeline-split, or what
   * a pipeline layout gives) and the index of its first layer. */
  int32_t vstage_layers[PTSIM_MAX_VSTAGES];
  int32_t vstage_first_layer[PTSIM_MAX_VSTAGES];
  int64_t head_dim; /* d: kv_channels, or h / a */
  /* Bytes per parameter of the model states on one GPU (precision and
   * optimizer options resolved once): the main-grad buffer, the master
   * weights and Adam's two moments; the optimizer states are sharded over
   * optimizer_shards ranks (dp*cp / instances with the distributed
   * optimizer, 1 without). */
  double grad_bytes, master_bytes, exp_avg_bytes, exp_avg_sq_bytes;
  double optimizer_shards;
  /* Sharded data parallelism (plan.c "Sharding"), resolved once.  The
   * shard group is the optimizer's: dp*cp ranks, or dp*cp / instances
   * consecutive ones with the replicas (HSDP, or Megatron's distributed-
   * optimizer instances) in replicate_group (size 1 without). */
  int32_t zero_stage;          /* 0 replicated, 1 optimizer states sharded, 2 + gradients,
                                  3 + parameters */
  double weight_shards;        /* ranks the persistent weights are split over (1: whole) */
  double grad_shards;          /* ranks the kept gradients are split over (1: whole) */
  int32_t sync_once;           /* 1: gradients reduced after the last micro-batch only and
                                  parameters kept gathered all step (torch under PP) */
  int32_t grad_sync_overlap;   /* 1: the step-end gradient reduction starts at each chunk's
                                  last backward (else after the stage's last item) */
  int32_t param_gather_hidden; /* 1: the step-end parameter all-gather overlaps the next
                                  forward (Megatron's --overlap-param-gather) */
  /* What every schedule item does with its units' collectives: */
  int32_t gather_forward;       /* a forward all-gathers each unit first */
  int32_t gather_backward;      /* a backward all-gathers each unit (resharded after forward) */
  int32_t gather_backward_head; /* ... the output unit too (not under RESHARD_BUT_LAST) */
  int32_t reduce_backward;      /* a backward reduce-scatters each unit's gradients */
  int32_t replicate_backward;   /* ... and all-reduces the shard over the replicas */
  double unit_parameters[PTSIM_UNIT_KINDS];   /* one GPU's share before sharding (TP split) */
  double unit_gather_bytes[PTSIM_UNIT_KINDS]; /* gathered unit, as its all-gather moves it */
  double unit_reduce_bytes[PTSIM_UNIT_KINDS]; /* its unsharded gradient, in the reduce dtype */
  /* Of a unit, its local routed experts' share (MoE layer; the head's MTP
   * layers when they are MoE): those go over the expert groups below, the
   * rest over shard_group and replicate_group. */
  double unit_expert_parameters[PTSIM_UNIT_KINDS];
  double unit_expert_gather_bytes[PTSIM_UNIT_KINDS];
  /* Bytes of unsharded gradient buffers per parameter of a unit in backward:
   * the reduce-scatter input (megatron), plus autograd's bf16 gradient (torch). */
  double unit_grad_buffer_bytes;
  double stage_gather_bytes[PTSIM_MAX_STAGES]; /* all of a stage's units gathered */
  PtsimGroup shard_group, replicate_group;
  /* The routed experts' (the expert data-parallel group, edp / instances
   * consecutive ranks of it, replicated over the instances: Megatron-
   * FSDP's expt_dp, torchtitan's efsdp x dp_replicate); their weights and kept gradients are split
   * over expert_weight_shards and expert_grad_shards ranks. */
  PtsimGroup expert_shard_group, expert_replicate_group;
  double expert_weight_shards, expert_grad_shards;
  /* 1: Transformer Engine's FusedAdam holds the master weights
   * (--use-precision-aware-optimizer, unless fp8 runs a recipe other than
   * delayed with fp32 masters: Megatron's
   * use_precision_aware_optimizer_no_fp8_or_ds_fp8).  It creates them in
   * its first step with Adam's states, and reads the gradients in place
   * (decoupled_grad) instead of from fp32 copies. */
  int lazy_masters;
  double stage_parameters[PTSIM_MAX_STAGES]; /* parameters one GPU of it holds */
  /* LoRA (settings lora_rank > 0, plan.c "LoRA"): the adapters of one
   * transformer layer on one TP rank, r (in + out) / tp per targeted linear
   * (0 without LoRA), part of stage_parameters; of a stage's parameters the
   * ones that train (ptsim_plan_trainable): all of them, or with LoRA its
   * layers' adapters alone. */
  double lora_layer_parameters;
  double stage_trainable_parameters[PTSIM_MAX_STAGES];
  /* Bytes of model weights one GPU of it holds: 2 per parameter (bf16/fp16),
   * plus under fp8 Transformer Engine's fp8 copy and its transpose of every
   * transformer-layer weight matrix (see plan.c); under ZeRO-3 only the
   * persistent shard (stage_gather_bytes / shards; none with torch, whose
   * fp32 shards are the master weights). */
  double stage_weight_bytes[PTSIM_MAX_STAGES];
  /* Microbatches whose activations the stage holds at its peak, in units of
   * "all of this stage's layers for one microbatch" (fractional under the
   * interleaved schedule): ptsim_plan_inflight_chunks() over the chunks of
   * a stage; with chunks of unequal layers, the most layers its held
   * chunks have at once over its order, over the stage's layers (plan.c);
   * what the memory estimate multiplies by. */
  double inflight_microbatches[PTSIM_MAX_STAGES];
  /* Mixture of experts (all 0 for a dense model, whose every layer is
   * layer_parameters).  The expert part of a GPU's parameters is sharded
   * over etp x ep and its optimizer states over edp (expert_optimizer_shards),
   * the rest as a dense model's (over tp, and dp x cp). */
  int64_t local_experts;          /* E / ep */
  double moe_layer_parameters;    /* one MoE layer on one GPU, experts included */
  double moe_expert_parameters;   /* of which its local routed experts */
  double expert_optimizer_shards; /* edp / instances (distributed optimizer), else 1 */
  /* The busiest EP rank's routed tokens over the balanced share, which the
   * slowest rank's grouped GEMMs and all-to-alls scale with: 1 when
   * dropless (the balanced load the router's balancing aims at), the
   * capacity factor when one bounds every expert (deterministic mode; the
   * Monte-Carlo mode samples it, workload.h). */
  double expert_load;
  int64_t stage_moe_layers[PTSIM_MAX_STAGES];       /* MoE layers of each stage */
  double stage_expert_parameters[PTSIM_MAX_STAGES]; /* routed-expert parameters of one GPU */
  /* MoE layers of each virtual stage (vstages says where it runs), for
   * the first min(pp*vp, PTSIM_MAX_VSTAGES) of them: all of an MoE model's
   * (schedule.h); 0 for a dense model. */
  int16_t vstage_moe_layers[PTSIM_MAX_VSTAGES];
  /* Multi-token prediction: the block's parameters on one GPU of the last
   * stage (its layer is an MoE layer when the decoder's last is). */
  double mtp_parameters;
  int mtp_layer_is_moe;
  /* Where the MTP layers run: the last virtual stage (chunk v-1 of
   * vstages.last_stage), or with the layout's MTP stage apart (job.h
   * mtp_apart) the one before it; the loss's stage computes their output
   * heads and losses either way (Megatron's process_mtp_loss). */
  int32_t mtp_stage, mtp_chunk;
} PtsimPlan;

/* Layers per pipeline stage as Megatron-LM splits them: evenly, or with
 * --decoder-first/last-pipeline-num-layers (`first`, `last`; 0: even) taking
 * their layers off the ends and the rest split evenly over the middle
 * stages.  Writes out[0..pp) and returns 0, or -1 when the split is not
 * possible (pp outside [1, PTSIM_MAX_STAGES], negative sizes, a remainder
 * that does not divide evenly, an uneven end with pp < 2); out is then
 * unspecified.  The shell's validator names the flags; this only splits. */
PTSIM_HD int32_t ptsim_plan_split_stages(int64_t pp, int64_t layers, int64_t first, int64_t last,
                                         int64_t *out);

/* 1 when that split is possible (for any pp >= 1) and every stage's layers
 * divide into its vp model chunks, as Megatron-LM needs virtual stages to
 * split an even or uneven pipeline; else 0. */
PTSIM_HD int ptsim_plan_split_fits(int64_t pp, int64_t vp, int64_t layers, int64_t first,
                                   int64_t last);

/* The split of --account-for-embedding/loss-in-pipeline-split: the layers
 * plus `embedding` and `loss` units (1 each with those flags; a
 * --pipeline-model-parallel-layout may give the loss's stage more, e.g.
 * "Et|(tt|)*30L": 1 and 2) split evenly over pp x vp virtual stages; the
 * first (last) virtual stage builds that many layers fewer.
 * Writes out[0..pp) (layers per stage) and *chunk (units per virtual
 * stage); -1 when the units do not divide or a virtual stage would have
 * fewer than 0 layers. */
PTSIM_HD int32_t ptsim_plan_split_accounted(int64_t pp, int64_t vp, int64_t layers, int embedding,
                                            int loss, int64_t *out, int64_t *chunk);

/* The transformer layers of each of the pp x vp virtual stages, in model
 * order, as Megatron-LM builds them from layout `l` (the split above,
 * each stage's layers over its vp chunks evenly; the accounted split; or
 * the layout's runs of virtual stages): writes out[0 .. pp*vp) and
 * returns 0, or -1 when the layout does not split `layers` (pp*vp >
 * PTSIM_MAX_VSTAGES, runs that do not add up, a stage's layers that vp
 * does not divide). */
PTSIM_HD int32_t ptsim_plan_split_vstages(const PtsimLayout *l, int64_t layers, int32_t *out);

/* The model's position embedding with AUTO resolved by family: GELU +
 * LayerNorm models are GPT-style (Megatron's default learned_absolute,
 * max_position_embeddings taken as seq when not given); everything else
 * uses RoPE (no parameters). */
PTSIM_HD PtsimPositionEmbedding ptsim_plan_position_embedding(const PtsimModel *model);

/* 1: the model has a learned absolute position table (on stage 0,
 * replicated over TP). */
PTSIM_HD int ptsim_plan_has_learned_positions(const PtsimModel *model);

/* Elements one dense MLP's activation moves in the forward per element of
 * fc2's input (read + written, bf16): SwiGLU reads gate and up and writes
 * one (3); GELU, fused with fc1's bias (bias_gelu_impl), reads one and
 * writes one (2); squared ReLU, Megatron-LM's squared_relu (torch.pow(
 * F.relu(x), 2) under torch.compile: one kernel), 2, and with biases 2 more
 * for the bias add Megatron runs before it (mlp.py: no fused bias for
 * it; megatron/core/activations.py, transformer/mlp.py at d98e8a64). */
PTSIM_HD double ptsim_plan_activation_elements(const PtsimModel *model);

/* The head dimension d: kv_channels, or hidden / heads. */
PTSIM_HD int64_t ptsim_plan_head_dim(const PtsimModel *model);

/* The matmuls of a layer built from PyTorch's modules (torch_layers), in
 * the order the layer calls them: the q, k and v projections, the output
 * projection, then the MLP's w1 (gate), w3 (up; SwiGLU only) and w2. */
typedef enum {
  PTSIM_TORCH_WQ = 0,
  PTSIM_TORCH_WK,
  PTSIM_TORCH_WV,
  PTSIM_TORCH_WO,
  PTSIM_TORCH_W1,
  PTSIM_TORCH_W3,
  PTSIM_TORCH_W2,
  PTSIM_TORCH_GEMMS
} PtsimTorchGemm;

/* 1 when torch's per-op checkpointing (PTSIM_RECOMPUTE_SELECTIVE_OP) keeps
 * the output of matmul `gemm` (PtsimTorchGemm): its policy counts the
 * block's aten.mm calls and keeps every other one, the 1st, 3rd, ... --
 * wq, wv, w1 and w2 of a SwiGLU block, wq, wv and w1 of a GELU one (no
 * w3).  A projection with a bias runs aten.addmm, which the policy
 * neither counts nor keeps.  0 for a w3 the model does not have. */
PTSIM_HD int ptsim_plan_torch_gemm_saved(const PtsimModel *model, int32_t gemm);

/* Parameters of one transformer layer held by one TP rank (t = tp); for
 * an MoE model, one of its dense layers. */
PTSIM_HD double ptsim_plan_layer_parameters(const PtsimModel *model, int64_t tp);

/* The LoRA adapters of one transformer layer on one TP rank (tp): rank
 * r (in + out) / tp for each linear `targets` names (PTSIM_LORA_* bits;
 * both adapter matrices split over TP as the base layer's parallel
 * dimension is); 0 when rank is 0. */
PTSIM_HD double ptsim_plan_lora_layer_parameters(const PtsimModel *model, int64_t tp, int64_t rank,
                                                 int targets);

/* The parameters of stage `stage` that have gradients and optimizer
 * states, split as the optimizer shards them: the dense ones (*dense, over
 * optimizer_shards) and the local routed experts (*experts, over
 * expert_optimizer_shards).  Without LoRA every parameter; with LoRA the
 * adapters alone (all dense), the frozen base having neither. */
PTSIM_HD void ptsim_plan_trainable(const PtsimPlan *plan, int64_t stage, double *dense,
                                   double *experts);

/* 1 when layer `layer` of the model is an MoE layer. */
PTSIM_HD int ptsim_plan_is_moe_layer(const PtsimModel *model, int64_t layer);

/* MoE layers among layers [first, first + count). */
PTSIM_HD int64_t ptsim_plan_moe_layers_in(const PtsimModel *model, int64_t first, int64_t count);

/* The whole model's parameters (one copy, no parallelism): layers, word
 * embedding (and the LM head when untied), final norm, the learned
 * position table when the model has one (max_position_embeddings rows, or
 * seq); and those one token uses (top-k routed experts of E; the
 * embedding and the output layer both counted, as Mistral and Qwen count;
 * DeepSeek leaves the input embedding out).  The MTP block is in *total
 * and *active as Megatron's memory estimator counts it.  Either pointer
 * may be NULL. */
PTSIM_HD void ptsim_plan_model_parameters(const PtsimModel *model, int64_t seq, double *total,
                                          double *active);

/* Parameters of one layer of kind KIND (a PTSIM_HYBRID_* symbol) of a
 * hybrid model on one GPU of tp (ep, etp for an MoE layer's routed
 * experts, whose part *experts receives; may be NULL). */
PTSIM_HD double ptsim_plan_hybrid_layer_parameters(const PtsimModel *model, char kind, int64_t tp,
                                                   int64_t ep, int64_t etp, double *experts);

/* The most (microbatch, chunk) pairs stage `stage` of p holds under
 * `schedule` with m microbatches and v chunks per stage (vp; the schedule's
 * own chunks: one per stage but when interleaved with v > 1) in groups of
 * `group` (interleaved; <= 0: p): its forwards
 * whose backward (ZB-H1: whose W) has not run yet, at the peak, in closed
 * form; schedule.h draws the orders it counts.  m <= 0, an unknown batch:
 * as many as enough microbatches give.  The one in-flight rule: the plan's
 * inflight_microbatches and the allocator replay's live pairs are it. */
PTSIM_HD int64_t ptsim_plan_inflight_chunks(PtsimSchedule schedule, int64_t p, int64_t m, int64_t v,
                                            int64_t group, int64_t stage);

/* First layer and layer count of model chunk `chunk` of stage `stage` (its
 * virtual stage's place in the model; vp > 1 needs the plan's vstages
 * filled). */
PTSIM_HD void ptsim_plan_chunk_range(const PtsimPlan *plan, int64_t stage, int64_t chunk,
                                     int64_t *first, int64_t *count);

/* Adds to *n the parameters of the first virtual stage beyond its layers
 * (the word embedding, vocabulary-parallel, and a learned position table,
 * replicated over TP), or of the last one (the final norm, the LM head or
 * with pp > 1 a tied embedding's copy, the MTP block unless it is apart,
 * whose virtual stage holds mtp_parameters): one GPU's. */
PTSIM_HD void ptsim_plan_add_first_extras(const PtsimPlan *plan, double *n);
PTSIM_HD void ptsim_plan_add_last_extras(const PtsimPlan *plan, double *n);

/* ---- plan_buckets.c: Megatron DDP's gradient buckets ---- */

/* 1 when the step-end gradient reduction runs in Megatron DDP's buckets as
 * they fill (--overlap-grad-reduce, replicated or ZeRO-1; not under
 * PyTorch's FSDP/DDP, whose units and buckets are their own). */
PTSIM_HD int ptsim_plan_dp_buckets(const PtsimPlan *plan);

/* Parameters per bucket: max(40M, 1M x dp) (distributed_data_parallel.py). */
PTSIM_HD double ptsim_plan_bucket_params(const PtsimJob *job);

/* The trainable parameters of model chunk `chunk` of stage `stage` on one
 * GPU (the stage's, summed over its chunks), in the order its backward
 * makes their gradients; *at_end: of them, the ones whose gradient comes
 * only as the backward ends (the first virtual stage's embedding, whose
 * backward is a scatter of no compute).  The rest come in proportion to
 * the compute through the backward (the head first, then the layers from
 * the last). */
PTSIM_HD double ptsim_plan_chunk_grad_params(const PtsimPlan *plan, int64_t stage, int64_t chunk,
                                             double *at_end);

/* Buckets of a chunk of `params` parameters: Megatron closes a bucket once
 * it holds bucket_params, so all are full but the last (the chunk's first
 * layers); at most PTSIM_PLAN_MAX_BUCKETS (a layout past that is served
 * in that many equal ones: 40M x 2^12 parameters per chunk of one GPU). */
#define PTSIM_PLAN_MAX_BUCKETS 4096
PTSIM_HD int32_t ptsim_plan_chunk_buckets(const PtsimPlan *plan, double params, double *size);

/* Only the counts of the plan — num_stages, num_chunks, num_microbatches,
 * microbatch_group, schedule_items, exactly as ptsim_plan_build sets them — leaving every
 * other field as it was: what sizing a layout's scratch needs, at a
 * fraction of the cost of the whole plan. */
PTSIM_HD void ptsim_plan_counts(const PtsimJob *job, PtsimPlan *out);

/* Builds the plan of a validated job (ptsim_job_validate() accepted it).
 * Never fails: a schedule that cannot be built is recorded in
 * schedule_items for the engine to report. */
PTSIM_HD void ptsim_plan_build(const PtsimJob *job, PtsimPlan *out);

#endif /* PTSIM_PLAN_H */
