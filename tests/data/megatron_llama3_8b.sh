# Llama-3-8B pre-training launch, in the style of Megatron-LM's example
# scripts (test fixture for tests/test_megatron_args.c; hand-written).
# Comments sit inside the arrays: in a backslash-continued command a
# comment line would end the command (bash).
GPUS_PER_NODE=8
DISTRIBUTED_ARGS=(--nproc_per_node $GPUS_PER_NODE --nnodes 1 --node_rank 0)
MODEL_ARGS=(
    --num-layers 32
    --hidden-size 4096
    --ffn-hidden-size 14336
    --num-attention-heads 32
    --group-query-attention
    --num-query-groups 8
    --seq-length 8192
    --max-position-embeddings 8192
)
PARALLEL_ARGS=(
    # parallel layout
    --tensor-model-parallel-size 2
    --pipeline-model-parallel-size 2
    --context-parallel-size 1
    --sequence-parallel
    --use-distributed-optimizer
)
torchrun ${DISTRIBUTED_ARGS[@]} \
    pretrain_gpt.py \
    ${MODEL_ARGS[@]} \
    --micro-batch-size 1 \
    --global-batch-size 128 \
    ${PARALLEL_ARGS[@]} \
    --swiglu \
    --untie-embeddings-and-output-weights \
    --normalization RMSNorm \
    --disable-bias-linear \
    --position-embedding-type rope \
    --rotary-base 500000 \
    --vocab-size 128256 \
    --bf16 \
    --use-flash-attn \
    --attention-dropout 0.0 \
    --hidden-dropout 0.0 \
    --recompute-granularity full \
    --recompute-method uniform \
    --recompute-num-layers 1 \
    --lr 3e-4 --min-lr 3e-5 \
    --data-path "/data/my corpus_text_document" \
    --tokenizer-type HuggingFaceTokenizer
