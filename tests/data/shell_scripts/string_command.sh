#!/bin/bash
# Written for ptsim's tests: a command kept in a string variable and handed
# to a helper that ptsim does not follow (a program of the cluster's).

NODES=2
CMD="torchrun --nproc_per_node 8 --nnodes ${NODES} pretrain_gpt.py \
  --num-layers 4 --hidden-size 512 --num-attention-heads 8 \
  --seq-length 1024 --max-position-embeddings 1024 --micro-batch-size 1 --bf16"

/opt/cluster/submit --queue gpu "$CMD"
