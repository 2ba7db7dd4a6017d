/* memory.h — the analytical per-GPU memory estimate, per pipeline stage.
 *
 * This is the seed estimator (Fujii, Watanabe, Yokota 2024; formulas in
 * shared/reference/memory_estimate_fujii2024.md) generalised to non-Llama
 * models (GELU MLP, biases, LayerNorm, tied embeddings, dropout), to every
 * pipeline schedule's in-flight microbatch count, and to selective and full
 * recomputation.  It counts what the model states and saved activations
 * need; it does not emulate the caching allocator (that is alloc.h), so
 * fragmentation is left to the memory threshold (the 80% rule).
 *
 * Core module: pure C, PTSIM_HD, no allocation, no I/O. */
#ifndef PTSIM_MEMORY_H
#define PTSIM_MEMORY_H

#include "hd.h"
#include "job.h"
#include "plan.h"

/* Where the cross-entropy (fp32 logits) term is charged. */
typedef enum {
  /* On the stage holding the LM head (the last; the only one when pp = 1).
   * This is the author's estimator and ptsim's default. */
  PTSIM_CE_LAST_STAGE = 0,
  /* On every stage, as the paper's closed form prints it; for reproducing
   * the paper's worked examples only. */
  PTSIM_CE_EVERY_STAGE = 1
} PtsimCrossEntropyConvention;

/* One pipeline stage (one GPU of it).  Bytes are per GPU. */
typedef struct {
  int64_t first_layer, num_layers;   /* transformer layers on this stage */
  int has_embedding, has_lm_head;    /* input embedding / output layer here */
  double parameters;                 /* parameter count held by this GPU */
  double expert_parameters;          /* of them the local routed experts' (MoE) */
  double parameters_bytes;           /* weights (2 B/param bf16/fp16) */
  double gradients_bytes;            /* main grads (4 B fp32 or 2 B) */
  double optimizer_bytes;            /* master weights + Adam m, v (12 B, sharded) */
  double activations_bytes;          /* saved activations, all in-flight
                                      * microbatches (includes the
                                      * embedding dropout mask on stage 0) */
  double activation_bytes_per_layer; /* one (dense) layer, one microbatch,
                                      * stored in full (no full recompute;
                                      * per-op checkpointing: its kept set);
                                      * a hybrid model's: the mean of the
                                      * stage's layers by their kinds */
  double embedding_dropout_bytes;    /* stage 0, hidden dropout > 0: 1-byte
                                      * mask of the embedding output, all
                                      * in-flight microbatches (part of
                                      * activations_bytes) */
  double inflight_microbatches;      /* microbatches whose activations are held */
  double input_ids_bytes;            /* int64 input ids for in-flight microbatches */
  double logits_bytes;               /* fp32 logits / cross-entropy buffers */
  double workspace_bytes;            /* GEMM workspaces (ptsim_memory_workspace_bytes) */
  double graph_bytes;                /* CUDA graphs' static buffers (ptsim_memory_graph_bytes) */
  double host_bytes;  /* pinned host memory of offloaded activations (not in the total) */
  double other_bytes; /* input_ids + logits + workspaces + graph buffers */
  /* ZeRO-2/3: the units gathered at once and the unsharded gradients of
   * the units in backward (0 otherwise; plan.c "Sharding") */
  double unsharded_bytes;
  double total_bytes;
  /* After the optimizer step (a step's steady state, before the next
   * step's zero_grad): the model states, the workspaces and, with 2-byte
   * gradients, the optimizer's fp32 copies of its gradient shards
   * (shard.float(), 4 B a sharded parameter; none when the optimizer reads
   * them in place: plan lazy_masters) */
  double steady_bytes;
} PtsimStageMemory;

typedef struct {
  int64_t num_stages;
  PtsimStageMemory stages[PTSIM_MAX_STAGES];
  int64_t peak_stage;      /* index of the stage with the largest total */
  double parameters_bytes; /* the peak stage's terms, for reporting */
  double gradients_bytes;
  double optimizer_bytes;
  double activations_bytes;
  double other_bytes;
  double unsharded_bytes;
  double total_bytes;
  double capacity_bytes; /* the GPU's memory */
  double usage_fraction; /* total / capacity */
  int fits;              /* usage_fraction <= settings.memory_threshold */
  int closed_form;       /* 1: the seed's closed form (memory_fujii2024.h), 0: ptsim's */
} PtsimMemoryEstimate;

/* ---- building blocks (exposed for tests and for the lifetimes module) ---- */

/* The b x (a/t) x s x s tensors unfused attention keeps for its backward
 * (s the local sequence, s/cp), in bytes per element of that shape; all
 * zero with flash attention.  Attention is
 *   scores = baddbmm(Q, K^T)          16-bit, not kept (the batched GEMM
 *                                      keeps Q and K)
 *   probs  = softmax(scores)          kept by the softmax's backward
 *   probs' = dropout(probs)           p > 0: a 1-byte mask kept, and a new
 *                                      16-bit tensor; p = 0: PyTorch's
 *                                      dropout returns its input
 *   out    = bmm(probs', V)           keeps probs'
 * The softmax is Transformer Engine's or Megatron's fused scale-mask-
 * softmax kernel (16-bit output) where its size limits allow (TE: 16 < s
 * < 16384, s % 8 == 0; Megatron's local layers: 16 < s <= 4096, s % 4 ==
 * 0, and not with --no-masked-softmax-fusion), else PyTorch's, in fp32 when asked (TE always;
 * Megatron with
 * --attention-softmax-in-fp32 or --apply-query-key-layer-scaling): a 4-byte
 * output kept and a 16-bit cast of it, which is what bmm keeps when p = 0
 * (memory.c, "Unfused attention", cites the sources). */
typedef struct {
  int kept;        /* 1: the layer keeps them (unfused, not recomputed by core_attn) */
  int fused;       /* 1: the fused softmax kernel runs */
  int te;          /* 1: Transformer Engine's UnfusedDotProductAttention (a fresh
                    * scores buffer per call); 0: Megatron's DotProductAttention
                    * (its global buffer) */
  double probs;    /* the softmax output: 2, or 4 from the fp32 fallback */
  double mask;     /* the dropout mask: 1 when p > 0 */
  double applied;  /* the 16-bit input bmm keeps when it is not the softmax
                    * output: dropout's output (p > 0) or the fp32 cast */
  double elements; /* b (a/t) s^2 on one GPU */
} PtsimAttentionCore;

/* Fills *out for the plan's job (the per-element bytes when the layer
 * keeps nothing are still filled: selective recompute re-creates them). */
PTSIM_HD void ptsim_memory_attention_core(const PtsimPlan *plan, PtsimAttentionCore *out);

/* Megatron-LM's fused SwiGLU (megatron/core/fusions/fused_bias_swiglu.py,
 * merged into main 2024-01-19 as 640af6b3b5): before it a SwiGLU MLP ran
 * silu(x1) * x2 as PyTorch ops. */
#define PTSIM_MEGATRON_SWIGLU_FUSED_FROM 20240119

/* 1 when the job's SwiGLU keeps the SiLU output besides fc1's (separate
 * ops: --no-bias-swiglu-fusion, PyTorch's own layers, a Megatron-LM source
 * older than the fused kernel), 0 when the fused kernel saves its input
 * alone (memory.c, swiglu_rest_bytes). */
PTSIM_HD int ptsim_memory_swiglu_unfused(const PtsimJob *job);

/* Bytes one transformer layer saves for one microbatch on one GPU, stored in
 * full (as without full recompute).  keep_scores: 1 to count everything
 * the layer keeps; 0 as under selective recompute: the modules of
 * settings.recompute_modules are not kept (core_attn: the s x s attention
 * tensors when flash attention is off; mlp: the MLP's intermediates;
 * layernorm: the norm outputs of Megatron's local layers). */
PTSIM_HD double ptsim_memory_layer_activation_bytes(const PtsimPlan *plan, int keep_scores);

/* Of those, what LoRA's adapters keep (settings lora_rank > 0; 0 without):
 * each targeted linear's r-wide intermediate, in_bytes T r on each GPU. */
PTSIM_HD double ptsim_memory_lora_activation_bytes(const PtsimPlan *plan, int keep_scores);

/* Bytes torch's per-op selective checkpointing (PTSIM_RECOMPUTE_SELECTIVE_OP)
 * keeps of one dense layer for one microbatch on one GPU: the block's
 * input, the outputs of the matmuls its policy keeps, SDPA's output and
 * logsumexp, TP's reduce-scatter outputs (memory.c). */
PTSIM_HD double ptsim_memory_layer_op_saved_bytes(const PtsimPlan *plan);

/* The same for one MoE layer of a mixture-of-experts model, at the plan's
 * expert load (its experts' rows scale with it). */
PTSIM_HD double ptsim_memory_moe_layer_activation_bytes(const PtsimPlan *plan, int keep_scores);

/* The GEMM workspaces a stage keeps in the caching allocator all run (job.h
 * cublas_workspace_bytes, te_workspace_bytes; memory.c, "Workspaces", says
 * which and how many), each one allocation. */
typedef struct {
  int32_t torch;          /* PyTorch's cuBLAS workspaces (one per thread) */
  int32_t te;             /* Transformer Engine's (one, and one per grouped-GEMM stream) */
  int32_t te_userbuffers; /* TE's userbuffers' one (PTSIM_MEMORY_TE_USERBUFFERS_SIZES
                           * x its size), 0 or 1 */
} PtsimWorkspaces;

/* Transformer Engine's userbuffers' workspace: _NUM_MAX_UB_STREAMS = 3
 * workspaces in one tensor (cpp_extensions/gemm.py, get_cublas_workspace). */
#define PTSIM_MEMORY_TE_USERBUFFERS_SIZES 3.0

PTSIM_HD void ptsim_memory_workspaces(const PtsimPlan *plan, int64_t stage, PtsimWorkspaces *out);

/* Their bytes. */
PTSIM_HD double ptsim_memory_workspace_bytes(const PtsimPlan *plan, int64_t stage);

/* The static buffers the CUDA graphs of stage `stage` keep for the run
 * (settings.host.graphs, graph_impl; memory.c, "CUDA graphs"): 0 without
 * graphs or with one graph of the whole iteration. */
PTSIM_HD double ptsim_memory_graph_bytes(const PtsimPlan *plan, int64_t stage);

/* Activation offloading (settings.offload_modules; memory.c, "Activation
 * offloading"): the bytes one layer (an MoE layer: moe 1) offloads per
 * microbatch on one GPU, and what stage `stage`'s in-flight microbatches
 * keep in host memory. */
PTSIM_HD double ptsim_memory_offload_layer_bytes(const PtsimPlan *plan, int moe);
/* What crosses the host link for that layer and microbatch each way: the
 * bytes above and the copies that free nothing (memory.c). */
PTSIM_HD double ptsim_memory_offload_copy_bytes(const PtsimPlan *plan, int moe);
PTSIM_HD double ptsim_memory_offload_host_bytes(const PtsimPlan *plan, int64_t stage);

/* Copies the peak stage's figures (out->peak_stage) into the job-wide ones. */
PTSIM_HD void ptsim_memory_take_peak_stage(PtsimMemoryEstimate *out);

/* What a replay of the job through the caching-allocator emulation must
 * hold at once on the stage holding the most (lifetimes.h): its weights,
 * gradients, optimizer states and saved activations, i.e. the stage total
 * without the input-ids, logits and embedding-dropout terms (which the
 * replay allocates differently).  A floor of the emulation's allocated
 * peak, whatever the schedule, recompute or allocator options. */
PTSIM_HD double ptsim_memory_held_floor_bytes(const PtsimMemoryEstimate *m);

/* Fills *out from the plan of a validated job (the per-stage layers,
 * parameters and in-flight microbatches are the plan's).  Never fails. */
PTSIM_HD void ptsim_memory_estimate(const PtsimPlan *plan, PtsimCrossEntropyConvention ce,
                                    PtsimMemoryEstimate *out);

/* Bytes one layer of kind KIND (a PTSIM_HYBRID_* symbol) of a hybrid
 * model keeps for backward per microbatch on one GPU (memory.c "Hybrid
 * models"). */
PTSIM_HD double ptsim_memory_hybrid_layer_bytes(const PtsimPlan *plan, char kind);

#endif /* PTSIM_MEMORY_H */
