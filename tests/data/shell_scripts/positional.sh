#!/bin/bash
# Written for ptsim's tests: a launch script that takes its paths as
# positional parameters and its node count from the environment (the shape
# of Megatron-LM's examples/mixtral/train_mixtral_8x7b_distributed.sh).

GPUS_PER_NODE=8
NNODES=${SLURM_NNODES:-"1"}
WORLD_SIZE=$(($GPUS_PER_NODE*$NNODES))

CHECKPOINT_PATH=$1
TOKENIZER_MODEL=$2
DATA_PATH=$3

DISTRIBUTED_ARGS=(
    --nproc_per_node $GPUS_PER_NODE
    --nnodes $NNODES
)

MODEL_ARGS=(
    --num-layers 8
    --hidden-size 1024
    --num-attention-heads 8
    --seq-length 2048
    --max-position-embeddings 2048
    --swiglu
    --normalization RMSNorm
)

DATA_ARGS=(
    --tokenizer-type HuggingFaceTokenizer
    --tokenizer-model ${TOKENIZER_MODEL}
    --data-path $DATA_PATH
)

TRAINING_ARGS=(
    --micro-batch-size 1
    --global-batch-size 64
    --bf16
    --save $CHECKPOINT_PATH
)

if [ -n "${WANDB_API_KEY}" ]; then
    TRAINING_ARGS+=(--wandb-project ${WANDB_PROJECT:-"ptsim"})
fi

torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py \
    ${MODEL_ARGS[@]} \
    ${DATA_ARGS[@]} \
    ${TRAINING_ARGS[@]}
