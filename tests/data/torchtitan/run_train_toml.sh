#!/bin/bash
# ptsim test fixture: a launch of the job-config TOML form (torchtitan up to 238fa99):
# run_train.sh with CONFIG_FILE and --section.option overrides in JobConfig's words.
NGPU=8 CONFIG_FILE="llama3_8b_fsdp.toml" ./run_train.sh \
    --parallelism.tensor_parallel_degree 2 --training.seq_len=4096 --activation_checkpoint.mode full
