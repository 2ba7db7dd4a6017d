# Llama-3-8B pre-training launch, in the style of Megatron-LM's example
# scripts (test fixture for tests/test_megatron_args.c).
torchrun --nproc_per_node 8 --nnodes 1 --node_rank 0 \
    pretrain_gpt.py \
    --num-layers 32 \
    --hidden-size 4096 \
    --ffn-hidden-size 14336 \
    --num-attention-heads 32 \
    --group-query-attention \
    --num-query-groups 8 \
    --seq-length 8192 \
    --max-position-embeddings 8192 \
    --micro-batch-size 1 \
    --global-batch-size 128 \
    # parallel layout
    --tensor-model-parallel-size 2 \
    --pipeline-model-parallel-size 2 \
    --context-parallel-size 1 \
    --sequence-parallel \
    --use-distributed-optimizer \
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
    --lr 3e-4 --min-lr 3e-5 # schedule
    --data-path "/data/my corpus_text_document" \
    --tokenizer-type HuggingFaceTokenizer
