#!/bin/bash
# ptsim test fixture: a torchtitan launch of the Python configuration form
# (torchtitan/config/README.md: --module M --config F, CLI overrides on top).
NGPU=${NGPU:-8}
torchrun --nproc_per_node=${NGPU} --rdzv_backend c10d --rdzv_endpoint="localhost:0" \
    -m torchtitan.train --module llama3 --config llama3_8b \
    --parallelism.tensor_parallel_degree 2
