/* workload_int.h — what workload.c (the dense layer, embedding, head, the
 * once-per-step work), workload_moe.c (the MoE layer, multi-latent
 * attention, multi-token prediction), workload_torch.c (the dense layer of
 * PyTorch's modules) and workload_shard.c (ZeRO-2/3's units) share: the
 * context the op builders read and the builders themselves.  Private to
 * those four files; the contract is workload.h.
 *
 * Every builder adds one op's forward and backward to a PtsimWork: GEMMs
 * as forward + dgrad (B) + wgrad (W), memory-bound ops as forward + twice
 * the bytes backward, communication that blocks the compute stream by kind
 * (ptsim_work_comm).  Core module: pure C, PTSIM_HD. */
#ifndef PTSIM_WORKLOAD_INT_H
#define PTSIM_WORKLOAD_INT_H

#include "cost.h"
#include "hd.h"
#include "plan.h"
#include "workload.h"

#define ELEM 2.0 /* bytes of a bf16/fp16 activation */

/* Everything the op builders need, computed once. */
typedef struct {
  const PtsimPlan *plan;
  const PtsimJob *job; /* &plan->job */
  const PtsimCostParams *params;
  const PtsimGroup *tp_group, *cp_group, *pp_group, *dp_group; /* the plan's */
  int64_t tokens;                                              /* T */
  double tokens_sp;                                            /* T_sp */
  int64_t t, c;
  int64_t d, q, kv; /* head dim; query and key (= value) projection widths */
  PtsimPrecision precision;
  PtsimGemmFormat format;         /* the format of the job's FP8 (or 16-bit) GEMMs */
  PtsimAttentionKernel attention; /* the flash-attention kernel the framework runs */
  /* Mixture-of-experts models count FLOPs with Megatron-LM's current
   * formula, whose attention core is causal (half the scores): 0.5 there,
   * 1 for dense models (workload.c's header). */
  double attention_flop_share;
  double expert_load; /* the busiest EP rank's routed tokens over the balanced share */
} PtsimWorkCtx;

/* Whether an FP8 GEMM's input has a cast kernel of its own (input_cast):
 * yes, or it comes quantized from the norm fused into TE's LayerNormLinear,
 * or another GEMM's cast of the same input serves it (PyTorch layers). */
#define INPUT_CAST 1
#define INPUT_QUANTIZED_BY_NORM 0
#define INPUT_QUANTIZED 2

PTSIM_HD void ptsim_work_zero(PtsimWork *w);
PTSIM_HD void ptsim_work_add(PtsimWork *acc, const PtsimWork *w, double times);
/* 1 when the job's GEMMs run in FP8 (fp8 precision on a GPU with an fp8 peak). */
PTSIM_HD int ptsim_work_in_fp8(const PtsimWorkCtx *x);
/* The precision of what runs outside Transformer Engine's FP8 layers
 * (attention, Megatron's LM head, the router): bf16 under FP8, else the
 * job's. */
PTSIM_HD PtsimPrecision ptsim_work_outside_fp8(const PtsimWorkCtx *x);
/* A GEMM of forward shape (m, n, k) at `precision` (and its FP8 casts,
 * workload.c), outside Transformer Engine's layers (torch.matmul: no
 * deterministic fill of its output). */
PTSIM_HD void ptsim_work_gemm_at(const PtsimWorkCtx *x, PtsimWork *w, PtsimPrecision precision,
                                 int64_t m, int64_t n, int64_t k, int input_cast);
/* The same at the job's precision: a Transformer Engine layer's GEMM. */
PTSIM_HD void ptsim_work_gemm(const PtsimWorkCtx *x, PtsimWork *w, int64_t m, int64_t n, int64_t k,
                              int input_cast);
/* `groups` GEMMs of one shape at the job's precision, their inputs cast
 * (an MoE layer's local experts, TE's GroupedLinear): one grouped kernel
 * per pass with --moe-grouped-gemm, else one GEMM each (SequentialMLP). */
PTSIM_HD void ptsim_work_grouped_gemm(const PtsimWorkCtx *x, PtsimWork *w, int64_t groups,
                                      int64_t m, int64_t n, int64_t k);
/* A memory-bound op moving `bytes` forward (about twice that backward). */
PTSIM_HD void ptsim_work_elementwise(const PtsimWorkCtx *x, PtsimWork *w, double bytes);
/* Blocking communication: forward time `fwd`, backward time `bwd`. */
PTSIM_HD void ptsim_work_comm(PtsimWork *w, PtsimCommKind kind, double fwd, double bwd);
/* The TP collective entering a column-parallel GEMM / leaving a row-parallel
 * one, for `bytes` of bf16 activations (T x h for a transformer layer's);
 * te_layer: the GEMM is a Transformer Engine layer's (workload.c). */
PTSIM_HD void ptsim_work_tp_enter(const PtsimWorkCtx *x, PtsimWork *w, double gemm_s, int te_layer,
                                  double bytes);
PTSIM_HD void ptsim_work_tp_leave(const PtsimWorkCtx *x, PtsimWork *w, double gemm_s);
PTSIM_HD double ptsim_work_gemm_fwd_s(const PtsimWorkCtx *x, int64_t m, int64_t n, int64_t k);
/* Flash (or unfused) attention of `heads` local heads of dimension d (the
 * mean of the q/k and v head dims when they differ), with the CP ring
 * moving `kv_width` values per token (K and V); recompute_into (may be
 * NULL) receives its forward for selective recompute. */
PTSIM_HD void ptsim_work_attention(const PtsimWorkCtx *x, PtsimWork *w, PtsimWork *recompute_into,
                                   int64_t heads, int64_t d, double kv_width);
PTSIM_HD void ptsim_work_grad_accumulation(const PtsimWorkCtx *x, PtsimWork *w, double params);
/* Selective recomputation re-runs `redo`'s forward inside B. */
PTSIM_HD void ptsim_work_redo(PtsimWork *w, const PtsimWork *redo);
/* Full recomputation of `w` (the share of a chunk's layers recomputed). */
PTSIM_HD void ptsim_work_full_recompute(const PtsimWorkCtx *x, PtsimWork *w);

/* Layers, MoE layers of them, and whether it is the first (embedding) or
 * the last (output unit) chunk: chunk `chunk` of stage `stage`. */
PTSIM_HD void ptsim_work_chunk_shape(const PtsimWorkload *w, int64_t stage, int64_t chunk,
                                     int64_t *layers, int64_t *moe, int *first, int *last);

/* ---- workload_lora.c ---- */

/* A transformer layer's linear of forward shape (m, n, k) on one TP rank
 * (a GEMM at the job's precision, as ptsim_work_gemm) and, with LoRA
 * (settings lora_rank > 0), its frozen base's wgrad left out and, when
 * `target` (a PTSIM_LORA_* bit) is one the adapters target, the adapter's
 * GEMMs; column_parallel: the base splits its output (n is per rank), else
 * its input (k is per rank, n whole). */
PTSIM_HD void ptsim_work_linear(const PtsimWorkCtx *x, PtsimWork *w, int64_t m, int64_t n,
                                int64_t k, int input_cast, int target, int column_parallel);

/* ---- workload_offload.c ---- */

/* Activation offloading: a layer's (an MoE layer's: moe 1) forward and
 * backward wait for what its host copies take beyond them (the copies run
 * on a stream of their own). */
PTSIM_HD void ptsim_work_offload(const PtsimWorkCtx *x, PtsimWork *w, int moe);

/* ---- workload_shard.c (ZeRO-2/3) ---- */

/* One unit's collectives (unit_*_s) and which of them the items run. */
PTSIM_HD void ptsim_work_units(const PtsimWorkCtx *x, PtsimWorkload *out);
/* Adds to a chunk's work what its passes wait for on their units'
 * collectives, as exposed dp communication. */
PTSIM_HD void ptsim_work_unit_waits(const PtsimWorkload *w, int64_t stage, int64_t chunk,
                                    PtsimWork *out);
/* What is left once per step for stage `stage` of `dense` parameters and
 * `experts` routed-expert ones: megatron's replica all-reduce, ZeRO-2's
 * gather of the updated weights; under sync_once every unit's reduction
 * and the first forward's exposed gathers. */
PTSIM_HD void ptsim_work_sharded_step_comm(const PtsimWorkCtx *x, const PtsimWorkload *w,
                                           int64_t stage, double dense, double experts,
                                           double *sync_s, double *gather_s);

/* ---- workload_torch.c ---- */

/* A dense layer built from PyTorch's modules (torch_layers): its ops,
 * their backward and torch's per-op or full recomputation, into w. */
PTSIM_HD void ptsim_work_torch_layer(const PtsimWorkCtx *x, PtsimWork *w);

/* ---- workload_moe.c ---- */

/* Multi-head latent attention (from the input norm to the output
 * projection's reduction), into w; selective recompute of core_attn and
 * mla_up_proj into redo. */
PTSIM_HD void ptsim_work_mla(const PtsimWorkCtx *x, PtsimWork *w, PtsimWork *redo);
/* The MoE block of an MoE layer: pre-MLP norm, router, dispatch, experts,
 * combine, shared experts (the residual is the caller's); selective
 * recompute of moe, moe_act and shared_experts into redo. */
PTSIM_HD void ptsim_work_moe_block(const PtsimWorkCtx *x, PtsimWork *w, PtsimWork *redo);
/* Of an MoE layer, the local experts' compute and the dispatch (its
 * forward and backward in the comm slots): PtsimWorkload.moe_mlp. */
PTSIM_HD void ptsim_work_moe_a2a_parts(const PtsimWorkCtx *x, PtsimWork *mlp);
/* The MTP layers around a transformer layer of work `layer` each: the
 * embedding of the shifted tokens, two norms, the 2h -> h projection, the
 * layer, the output head and its loss (`embedding`, `head`), into *w; the
 * same without the heads into *body and the heads alone into *heads (an
 * MTP stage apart runs the body, the loss's stage the heads). */
PTSIM_HD void ptsim_work_mtp(const PtsimWorkCtx *x, const PtsimWork *layer,
                             const PtsimWork *embedding, const PtsimWork *head, PtsimWork *w,
                             PtsimWork *body, PtsimWork *heads);
/* Megatron-LM's num_floating_point_operations for MoE, MLA and MTP models. */
PTSIM_HD double ptsim_workload_moe_flops(const PtsimJob *job);

/* ---- workload_mamba.c ---- */

/* One Mamba-2 layer of a hybrid model (its pre-norm to its residual, its
 * gradient accumulation and recomputation), into w. */
PTSIM_HD void ptsim_work_mamba_layer(const PtsimWorkCtx *x, PtsimWork *w);
/* Megatron-LM's num_floating_point_operations for a hybrid model. */
PTSIM_HD double ptsim_workload_hybrid_flops(const PtsimJob *job);

/* Context-parallel attention (cp > 1) of one layer by the job's
 * --cp-comm-type (workload_cp.c): its exposed CP communication into W (and
 * RECOMPUTE_INTO's forward, may be NULL); the attention kernels' forward
 * and backward times into *FWD and *BWD. */
PTSIM_HD void ptsim_work_cp_attention(const PtsimWorkCtx *x, PtsimWork *w,
                                      PtsimWork *recompute_into, int64_t heads, int64_t head_dim,
                                      double kv_width, double *fwd, double *bwd);

#endif /* PTSIM_WORKLOAD_INT_H */
