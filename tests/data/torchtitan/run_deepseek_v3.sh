#!/bin/bash
# ptsim test fixture: a multi-node torchtitan launch of the Python configuration form
# (torchtitan/config/README.md), DeepSeek-V3 671B with command-line overrides on top.
set -ex
NNODES=${NNODES:-32}
NGPU=8
CONFIG_FN=deepseek_v3_671b
EXTRA=(--parallelism.pipeline_parallel_degree 8 --parallelism.num_pp_microbatches 16)
if [ "$NNODES" -gt 16 ]; then
    EXTRA+=(--parallelism.expert_parallel_degree=8)
fi
srun torchrun --nnodes ${NNODES} --nproc_per_node ${NGPU} --rdzv_backend c10d \
    -m torchtitan.train --module deepseek_v3 --config ${CONFIG_FN} \
    "${EXTRA[@]}" --training.steps 50
