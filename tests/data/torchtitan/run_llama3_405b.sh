#!/bin/bash
# ptsim test fixture: llama3_405b (TP 8, float8, compile with async TP, full AC) with a
# pipeline of 8 Interleaved1F1B ranks added on the command line, on 64 nodes.
torchrun --nnodes=64 --nproc_per_node=8 -m torchtitan.train \
    --module torchtitan.models.llama3 --config llama3_405b \
    --parallelism.pipeline_parallel_degree 8 \
    --parallelism.pipeline_parallel_schedule Interleaved1F1B \
    --parallelism.num_pp_microbatches 16
