/* megatron_said.h — what megatron_args.c (tokens, entry points) and
 * megatron_resolve.c (Megatron-LM's defaults and rules) share: the flags
 * ptsim reads and what a command line said about them.  Private to those
 * two files. */
#ifndef PTSIM_MEGATRON_SAID_H
#define PTSIM_MEGATRON_SAID_H

#include <glib.h>
#include <stdint.h>

#include "megatron_args.h"

typedef enum {
  KIND_SWITCH, /* no value */
  KIND_INT,    /* a positive integer */
  KIND_DOUBLE, /* a number */
  KIND_WORD,   /* one word, checked in resolve */
  KIND_LIST    /* every word up to the next --flag */
} FlagKind;

typedef enum {
  F_NUM_LAYERS,
  F_ENC_LAYERS,
  F_HIDDEN,
  F_FFN,
  F_HEADS,
  F_GQA,
  F_QUERY_GROUPS,
  F_KV_CHANNELS,
  F_QK_NORM,
  F_POS_TYPE,
  F_ROTARY,
  F_NO_POS,
  F_MAX_POS,
  F_SEQ,
  F_ENC_SEQ,
  F_MBS,
  F_GBS,
  F_TP,
  F_PP,
  F_CP,
  F_LAYERS_PER_VSTAGE,
  F_VSTAGES_PER_RANK,
  F_PIPELINE_LAYOUT,
  F_ACCOUNT_EMB,
  F_ACCOUNT_LOSS,
  F_FIRST_LAYERS,
  F_LAST_LAYERS,
  F_MICROBATCH_GROUP,
  F_SP,
  F_DIST_OPT,
  F_INSTANCES,
  F_RECOMPUTE_GRANULARITY,
  F_RECOMPUTE_METHOD,
  F_RECOMPUTE_NUM_LAYERS,
  F_RECOMPUTE_ACTIVATIONS,
  F_RECOMPUTE_MODULES,
  F_SWIGLU,
  F_UNTIE,
  F_VOCAB,
  F_PADDED_VOCAB,
  F_VOCAB_DIVISIBLE,
  F_NO_PAD_VOCAB,
  F_TOKENIZER_TYPE,
  F_TOKENIZER_MODEL,
  F_BF16,
  F_FP16,
  F_FP8_FORMAT,
  F_FP8_E4M3,
  F_FP8_HYBRID,
  F_FP8_RECIPE,
  F_FP8_PARAM_GATHER,
  F_FLASH,
  F_LEGACY,
  F_TRANSFORMER_IMPL,
  F_ATTENTION_BACKEND,
  F_ATTENTION_DROPOUT,
  F_HIDDEN_DROPOUT,
  F_NORMALIZATION,
  F_DISABLE_BIAS,
  F_ADD_BIAS,
  F_ACCUMULATE_FP32,
  F_GRAD_BF16,
  F_NO_GRAD_FUSION,
  F_CE_FUSION,
  F_OVERLAP_GRAD,
  F_OVERLAP_PARAM,
  F_TP_OVERLAP,
  F_TP_NO_AG,
  F_TP_NO_RS,
  F_TP_NO_BULK_DGRAD,
  F_TP_RS_DGRAD,
  F_PRECISION_AWARE,
  F_MAIN_GRADS_DTYPE,
  F_MAIN_PARAMS_DTYPE,
  F_EXP_AVG_DTYPE,
  F_EXP_AVG_SQ_DTYPE,
  F_OPTIMIZER,
  F_MANUAL_GC,
  F_DETERMINISTIC,
  F_MEGATRON_FSDP,
  F_TORCH_FSDP2,
  F_SHARDING_STRATEGY,
  F_TORCH_FSDP2_NO_RESHARD,
  /* mixture of experts, multi-latent attention, multi-token prediction */
  F_NUM_EXPERTS,
  F_MOE_TOPK,
  F_MOE_FFN,
  F_MOE_SHARED,
  F_MOE_SHARED_GATE,
  F_MOE_FREQ,
  F_MOE_SCORE,
  F_MOE_BALANCING,
  F_MOE_AUX_COEFF,
  F_MOE_EXPERT_BIAS,
  F_MOE_GROUPS,
  F_MOE_GROUP_TOPK,
  F_MOE_CAPACITY,
  F_MOE_PAD,
  F_MOE_DISPATCHER,
  F_MOE_DEEPEP,
  F_MOE_FLEX_BACKEND,
  F_MOE_GROUPED_GEMM,
  F_MOE_PERMUTE_FUSION,
  F_MOE_ROUTER_FUSION,
  F_MOE_ROUTER_DTYPE,
  F_MOE_SHARED_OVERLAP,
  F_MOE_EP_OVERLAP,
  F_DELAY_WGRAD,
  F_MOE_LAYER_RECOMPUTE,
  F_EP,
  F_ETP,
  F_MLA,
  F_Q_LORA,
  F_KV_LORA,
  F_QK_HEAD_DIM,
  F_QK_POS_DIM,
  F_V_HEAD_DIM,
  F_MTP_LAYERS,
  F_LOG_PARAMS_NORM,
  F_LOG_ZEROS,
  F_TEST_MODE,
  F_ENABLE_CUDA_GRAPH,
  F_EXTERNAL_CUDA_GRAPH,
  F_CUDA_GRAPH_IMPL,
  F_CUDA_GRAPH_SCOPE,
  F_CUDA_GRAPH_MODULES,
  F_SOFTMAX_FP32,
  F_QK_LAYER_SCALING,
  F_CE_FUSION_IMPL,
  F_DEFER_EMBEDDING_WGRAD,
  F_WGRAD_DEFERRAL_LIMIT,
  F_TIMING_LOG_LEVEL,
  F_NO_SWIGLU_FUSION,
  F_NO_MASKED_SOFTMAX,
  F_LOG_INTERVAL,
  F_FP4_FORMAT,
  F_CP_COMM_TYPE,
  F_WINDOW_SIZE,
  F_WINDOW_SKIP_FREQ,
  F_FG_OFFLOADING,
  F_OFFLOAD_MODULES,
  F_HYBRID_PATTERN,
  F_MAMBA_STATE_DIM,
  F_MAMBA_HEAD_DIM,
  F_MAMBA_NUM_GROUPS,
  F_MAMBA_NUM_HEADS,
  F_SQUARED_RELU,
  F_SOFTMAX_TYPE,
  F_COUNT
} FlagId;

/* What the command line said.  order[] is the token index of the last
 * occurrence (0: absent), so contradicting switches resolve as argparse
 * would: the later one wins. */
typedef struct {
  char **argv;
  int order[F_COUNT];
  int64_t i[F_COUNT];
  double d[F_COUNT];
  const char *word[F_COUNT]; /* points into argv */
  int list_at[F_COUNT], list_len[F_COUNT];
  GPtrArray *read; /* every flag given, in order (for "what was read") */
  PtsimMegatronDiagnostics *diag;
} Said;

#define GIVEN(s, f) ((s)->order[(f)] > 0)

/* The spelling of a modelled flag ("--num-layers"). */
const char *ptsim_megatron_flag_name(FlagId id);

/* Appends TEXT to LIST unless it is there (LIST may be NULL). */
void ptsim_megatron_add(GPtrArray *list, char *text /* transfer full */);

/* The model, then the rest of the job from what was said
 * (megatron_resolve.c): its layout, settings and source, reset to their
 * defaults first (the layout's GPU count kept), for JOB->model; JOB->hw is
 * not touched.  TP pads the vocabulary. */
gboolean ptsim_megatron_resolve_model(const Said *s, int64_t tp, PtsimModel *m, GError **error);
gboolean ptsim_megatron_resolve_job(const Said *s, PtsimJob *job, GError **error);

/* The MoE, MLA and MTP parts (megatron_moe.c): of the model, once its
 * layers are known, and of the rest of the job (expert parallelism in the
 * layout, MoE execution in the settings), once it is resolved. */
gboolean ptsim_megatron_resolve_moe_model(const Said *s, PtsimModel *m, GError **error);
gboolean ptsim_megatron_resolve_moe_job(const Said *s, PtsimJob *job, GError **error);

/* Sliding-window attention (megatron_window.c): the model's window_size
 * and window_layers, once its layers are known. */
gboolean ptsim_megatron_resolve_window(const Said *s, PtsimModel *m, GError **error);

/* A hybrid model (megatron_hybrid.c): --hybrid-layer-pattern (or the
 * deprecated --hybrid-override-pattern) and the --mamba-* sizes, after the
 * MoE part (the pattern's E layers are the MoE layers). */
gboolean ptsim_megatron_resolve_hybrid(const Said *s, PtsimModel *m, GError **error);
gboolean ptsim_megatron_resolve_hybrid_job(const Said *s, PtsimJob *job, GError **error);

#endif /* PTSIM_MEGATRON_SAID_H */
