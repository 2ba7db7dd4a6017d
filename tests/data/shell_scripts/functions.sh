#!/bin/bash
# Written for ptsim's tests: functions with their own arguments, a C-style
# loop, a job file written with cat and a quoted here-document, then
# submitted with sbatch --wrap and sbatch FILE.

add_flag() {
    local name=$1
    FLAGS+=("--$name" "$2")
}

function layers_for {
    local pp=$1
    echo "$((pp * 2))"
    return 0
}

FLAGS=()
add_flag num-layers 8
add_flag hidden-size 512
add_flag num-attention-heads 8
add_flag seq-length 1024

SIZES=""
for ((i = 1; i <= 3; i++)); do
    SIZES+="$i "
    [[ $i -ge 2 ]] && break
done
FLAGS+=(--micro-batch-size "${#SIZES}")

cat > job.sh <<'EOF'
#!/bin/bash
#SBATCH --nodes=4
#SBATCH --gpus-per-node=8
srun python pretrain_gpt.py "$@"
EOF

sbatch --wrap "echo warming up"
sbatch --job-name=ptsim job.sh "${FLAGS[@]}" --max-position-embeddings 1024 --bf16
