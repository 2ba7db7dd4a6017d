#!/bin/bash
# Written for ptsim's tests: a script that builds its training command as a
# string and submits it through an sbatch here-document, where srun runs it
# with bash -c (the shape of Megatron-LM's
# examples/megatron_fsdp/sbatch_mfsdp_deepseek_v3.sh).

export NCCL_IB_TIMEOUT=19
MEGATRON_PATH=${MEGATRON_PATH:-"/opt/megatron"}
OUTPUT_PATH=${OUTPUT_PATH:-"/tmp/out"}
USE_FSDP=${USE_FSDP:-0}
PROFILE=${PROFILE:-0}
TP=${TP:-2}
MBS=${MBS:-1}

PRETRAIN_ARGS=(
    --tensor-model-parallel-size ${TP}
    --num-layers 4
    --hidden-size 512
    --num-attention-heads 8
    --seq-length 1024
    --max-position-embeddings 1024
    --micro-batch-size ${MBS}
    --global-batch-size 32
    --moe-layer-freq [0]*1+[1]*3
    --bf16
)

if [ "${USE_FSDP}" = 1 ]; then
    unset CUDA_DEVICE_MAX_CONNECTIONS
    PRETRAIN_ARGS=(
        "${PRETRAIN_ARGS[@]}"
        --use-megatron-fsdp
    )
fi

if [ "${PROFILE}" = 1 ]; then
    PROFILE_CMD="nsys profile -o ${OUTPUT_PATH}/nsys"
else
    PROFILE_CMD=""
fi

TRAINING_CMD="
cd ${MEGATRON_PATH};
export PYTHONPATH=${MEGATRON_PATH}:${PYTHONPATH};
${PROFILE_CMD} python ${MEGATRON_PATH}/pretrain_gpt.py ${PRETRAIN_ARGS[@]}"

LOGS="${OUTPUT_PATH}/logs"
mkdir -p ${LOGS} || {
    echo "cannot create ${LOGS}"
    exit 1
}

set +e
sbatch <<EOF
#!/bin/bash
#SBATCH --job-name=ptsim
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=8

srun \
    --mpi=pmix -l \
    --container-workdir=${MEGATRON_PATH} \
    bash -x -c "${TRAINING_CMD}" 2>&1 | tee ${LOGS}/\${SLURM_JOB_ID}.log

EOF
set -e
