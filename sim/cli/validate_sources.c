/* validate_sources.c — the published sources' table; see
 * validate_sources.h.  Each source counts FLOPs its own way
 * (shared/data/README.md; validate_cmd.c writes the formulas out). */
#include "validate_sources.h"

/* Megatron-LM in 2020-2021: no FlashAttention and no sequence parallelism yet, dropout 0.1,
 * gradients reduced in the parameter dtype, no overlap unless the source says so. */
#define ERA_2021                                                                                           \
  " --no-flash-attention --no-sp --attention-dropout 0.1 --hidden-dropout 0.1 --no-fp32-grad-accumulation" \
  " --no-overlap"
/* Megatron-Core GPT runs: Megatron's default dropout where the source is silent. */
#define GPT_DROPOUT " --attention-dropout 0.1 --hidden-dropout 0.1"
/* NeMo 24.03's optimizer: NeMo-Framework-Launcher @21657d24 llama2_7b.yaml runs Apex's
 * distributed_fused_adam (gradient buffer in grad_sync_dtype, shards read in place), its FP8
 * example llama2_7b_fp8.sh sets grad_sync_dtype=bf16, and NeMo's megatron_base_model.py
 * @9d86acd5eb sets store_param_remainders (fp32 master = bf16 weight + 16 bits).  Not
 * expressible: the embedding's and output layer's gradients stay fp32 (+2 B for those). */
#define NEMO_2403_ADAM " --no-fp32-grad-accumulation --use-precision-aware-optimizer"

static const PtsimPublishedSource published_sources[] = {
    {"narayanan2021",
     "narayanan2021",
     "sc21-",
     NULL,
     {{"A100-80GB", "a100-80g"}, {NULL, NULL}, {NULL, NULL}},
     "no hardware profile for this GPU",
     PTSIM_MBS_COLUMN,
     0,
     TRUE,
     FALSE,
     TRUE,
     "--recompute full --precision fp16 --no-distributed-optimizer" ERA_2021,
     PTSIM_FLOPS_EQ3,
     "achieved_tflops_per_gpu",
     FALSE,
     PTSIM_LABEL_MODEL,
     "",
     FALSE,
     NULL},
    {"megatron_readme_gpt3",
     "megatron_readme_gpt3",
     NULL,
     "gpt3-175b",
     {{"A100-80GB", "a100-80g"}, {NULL, NULL}, {NULL, NULL}},
     "no hardware profile for this GPU",
     PTSIM_MBS_ONE,
     0,
     FALSE,
     FALSE,
     FALSE,
     "--recompute full --precision fp16 --no-distributed-optimizer" ERA_2021,
     PTSIM_FLOPS_EQ3,
     "achieved_tflops_per_gpu",
     FALSE,
     PTSIM_LABEL_MODEL,
     "mbs 1, full recompute, fp16, vocab 51200",
     FALSE,
     NULL},
    {"megatron_core_r080",
     "megatron_core_r080",
     "mcore-",
     NULL,
     {{"H100", "h100-80g"}, {NULL, NULL}, {NULL, NULL}},
     "no hardware profile for this GPU",
     PTSIM_MBS_ONE,
     0,
     FALSE,
     FALSE,
     FALSE,
     "--precision bf16 --overlap-grad-reduce --overlap-param-gather --tp-comm-overlap" GPT_DROPOUT,
     PTSIM_FLOPS_MEGATRON,
     "tflops_per_gpu",
     FALSE,
     PTSIM_LABEL_MODEL,
     "mbs 1, bf16, no recompute, 1F1B",
     FALSE,
     NULL},
    {"nemo_long_sequence_cp",
     "nemo_cp",
     NULL,
     "llama2-7b",
     {{"H100", "h100-80g"}, {NULL, NULL}, {NULL, NULL}},
     /* ptsim has a b200 profile; the source's B200 rows are what cannot be run */
     "the source's B200 rows list 4 x tp x pp x cp x dp GPUs on every row (8 GPUs at tp 1, "
     "pp 1, cp 1, dp 2) and gbs 4 on 1,024 GPUs at tp 4, cp 16: no layout matches them",
     PTSIM_MBS_ONE,
     0,
     FALSE,
     TRUE,
     FALSE,
     "--precision fp8 --overlap-grad-reduce --overlap-param-gather --tp-comm-overlap" NEMO_2403_ADAM,
     PTSIM_FLOPS_MEGATRON,
     "tflops_per_gpu_with_cp",
     FALSE,
     PTSIM_LABEL_MODEL_SEQ,
     "mbs 1, Megatron FLOP formula, NeMo 24.03's distributed Adam (bf16 gradients, fp32 masters "
     "as 16-bit remainders)",
     FALSE,
     NULL},
    {"megatron_readme_2021_tp",
     "megatron_readme_2021",
     "megatron2021-gpt-",
     NULL,
     {{"A100", "a100-40g"}, {NULL, NULL}, {NULL, NULL}},
     "no hardware profile for this GPU",
     PTSIM_MBS_GBS_OVER_DP,
     1024,
     FALSE,
     FALSE,
     FALSE,
     "--recompute full --precision fp16 --no-distributed-optimizer" ERA_2021,
     PTSIM_FLOPS_EQ3,
     "tflops_per_gpu",
     TRUE,
     PTSIM_LABEL_MODEL_GPUS,
     "seq 1024 (Eq. 3 reproduces the table's TFLOP/s with it), A100-40GB, mbs = gbs/dp",
     FALSE,
     NULL},
    {"moe_published",
     "moe_published",
     "",
     NULL,
     {{"GB200", "gb200-nvl72"}, {"H100", "h100-80g"}, {NULL, NULL}},
     "no hardware profile for this GPU",
     PTSIM_MBS_COLUMN,
     0,
     TRUE,
     TRUE,
     FALSE,
     "",
     PTSIM_FLOPS_MOE_ROW,
     "tflops_per_gpu",
     FALSE,
     PTSIM_LABEL_MODEL_GPUS,
     NULL,
     FALSE,
     NULL},
    /* PyTorch FSDP (FULL_SHARD, backward prefetch, rate limiter, activation
     * checkpointing, bf16) of minGPT: FSDP1's fp32 flat shards are the
     * master weights (fsdp-impl torch), the root unit stays gathered for
     * backward (reshard but-last); "hardware utilization" of 312: FLOPs
     * with the recompute pass, Eq. 3 */
    {"zhao2023_fsdp",
     "zhao2023_fsdp",
     NULL,
     "mingpt-175b",
     {{"A100-80GB", "a100-80g"}, {NULL, NULL}, {NULL, NULL}},
     "no hardware profile for this GPU",
     PTSIM_MBS_COLUMN,
     0,
     FALSE,
     FALSE,
     FALSE,
     "--recompute full --precision bf16 --transformer-impl local --attention-dropout 0.1"
     " --hidden-dropout 0.1 --sharding fsdp --fsdp-impl torch --reshard-after-forward but-last"
     " --no-fp32-grad-accumulation",
     PTSIM_FLOPS_EQ3,
     "tflops_per_gpu",
     FALSE,
     PTSIM_LABEL_MODEL_GPUS,
     "gbs = mbs x GPUs (no accumulation); gradients reduced in bf16 (FSDP's bf16 policy); "
     "minGPT's unfused attention and dropout 0.1; A100 nodes at a100-80g's 24 GB/s per GPU "
     "(the paper: 2 Tb/s RoCE per node); the TFLOP/s is the text's lower bound",
     TRUE,
     "tflops_bound"},
};

const PtsimPublishedSource *ptsim_published_source_for(const char *path) {
  g_autofree char *base = g_path_get_basename(path);
  for (size_t i = 0; i < G_N_ELEMENTS(published_sources); i++)
    if (g_str_has_prefix(base, published_sources[i].file_prefix)) return &published_sources[i];
  return NULL;
}
