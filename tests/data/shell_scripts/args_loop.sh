#!/bin/bash
# Written for ptsim's tests: a launch script that parses its own options in
# a while/case loop (the shape of Megatron-LM's examples/gptoss/02_train.sh),
# checks paths with file tests, and builds its data flags as quoted strings.

export CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-1}

CKPT="none"
TOKENIZER="MOCK"
LAYERS=4
EXTRA=()

while [[ $# -gt 0 ]]; do
    case $1 in
        --ckpt)
            CKPT="$2"
            shift 2
            ;;
        --tokenizer|-t)
            TOKENIZER="$2"
            shift 2
            ;;
        --layers=*)
            LAYERS="${1#*=}"
            shift
            ;;
        --)
            shift
            EXTRA+=("$@")
            break
            ;;
        -h|--help)
            echo "Usage: $0 [--ckpt PATH] [--tokenizer PATH|MOCK] [--layers=N] [-- FLAGS]"
            exit 0
            ;;
        *)
            echo "Unknown option: $1"
            exit 1
            ;;
    esac
done

if [ ! -d "$CKPT" ]; then
    echo "no checkpoint folder: $CKPT"
fi

GPUS_PER_NODE=${GPUS_PER_NODE:-4}
NUM_NODES=${NUM_NODES:-1}
WORLD_SIZE=$(($GPUS_PER_NODE*$NUM_NODES))

DATA_ARGS=()
if [[ "$TOKENIZER" == "MOCK" ]] || [[ -z "$TOKENIZER" ]]; then
    DATA_ARGS+=(
        "--mock-data"
        "--tokenizer-type NullTokenizer"
        "--vocab-size 32000"
    )
else
    DATA_ARGS+=(
        "--tokenizer-type HuggingFaceTokenizer"
        "--tokenizer-model $TOKENIZER"
    )
fi

for i in $(seq 1 3); do
    echo "never run: command substitution is empty"
done

PARALLEL_ARGS=()
for flag in tensor pipeline; do
    case $flag in
        tensor) PARALLEL_ARGS+=(--tensor-model-parallel-size 2) ;;
        pipeline) PARALLEL_ARGS+=(--pipeline-model-parallel-size $((WORLD_SIZE / 2))) ;;
    esac
done

python -m torch.distributed.run --nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES \
    pretrain_gpt.py \
    --num-layers ${LAYERS} --hidden-size 256 --num-attention-heads 4 \
    --seq-length 1024 --max-position-embeddings 1024 --micro-batch-size 1 --bf16 \
    ${DATA_ARGS[@]} \
    ${PARALLEL_ARGS[@]} \
    "${EXTRA[@]}"
