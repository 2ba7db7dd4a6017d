#!/bin/bash
# ptsim test fixture: torchtitan's run_train.sh with the module and config from the
# environment (MODULE, CONFIG, NGPU) and overrides after it.
export NGPU=4
MODULE=qwen3 CONFIG=qwen3_0_6b ./run_train.sh \
    --parallelism.tensor_parallel_degree 2 --compile.enable --compile.components=model \
    --training.max_context_length 2048
