#!/usr/bin/env bash
# Writes what a refactor must not change into one folder: the sweep CSV and
# `predict --format json` of the default job and of varied jobs (dense and
# MoE, every schedule, sharded data parallelism, fp8, context parallelism,
# Megatron-LM and torchtitan inputs), `memory --format json`, and the
# validation of the published suite and of Megatron-LM's test cases.  Two
# builds are behaviour-identical when their folders are:
#
#   bash bench/outputs_snapshot.sh build-before /tmp/before
#   bash bench/outputs_snapshot.sh build        /tmp/after
#   diff -r /tmp/before /tmp/after && echo identical
#
# The sweeps run on the CPU path (--device cpu) so that a build with and
# one without CUDA compare.  Exit 1 when a command fails.
set -euo pipefail
build=${1:?usage: outputs_snapshot.sh BUILD_DIR OUT_DIR}
out=${2:?usage: outputs_snapshot.sh BUILD_DIR OUT_DIR}
here=$(cd "$(dirname "$0")/.." && pwd)
ptsim=$(cd "$build" && pwd)/ptsim
[ -x "$ptsim" ] || { echo "outputs_snapshot: no $ptsim" >&2; exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
# Paths in messages stay the same from any checkout: run from the
# repository with relative names; the sweeps from $out (their CSV names).
cd "$here"
export PTSIM_DATA_DIR=.
scripts=tests/data/megatron_scripts
titan=tests/data/torchtitan

# name|arguments of predict and memory (one job each)
jobs=(
  "default|"
  "llama70b_interleaved|--model llama3-70b --gpus 64 --tp 8 --pp 4 --vp 5 --gbs 64 --seq 4096"
  "llama70b_a100_full|--model llama3-70b --hw a100-80g --gpus 128 --tp 8 --pp 8 --mbs 1 --gbs 512 --recompute full --recompute-method block --recompute-num-layers 2"
  "gpt175b_gpipe|--model gpt3-175b --gpus 256 --tp 8 --pp 16 --gbs 256 --seq 2048 --schedule gpipe"
  "llama8b_zb|--model llama3-8b --gpus 16 --tp 2 --pp 4 --gbs 128 --schedule zb-h1 --recompute selective"
  "mixtral_ep|--model mixtral-8x7b --gpus 16 --pp 2 --ep 8 --gbs 64 --seq 4096"
  "dsv3_uneven|--model deepseek-v3 --gpus 256 --tp 2 --pp 8 --ep 16 --gbs 512 --seq 4096 --decoder-first-pipeline-num-layers 7 --decoder-last-pipeline-num-layers 6 --moe-token-dispatcher-type flex"
  "llama8b_fsdp_cp|--model llama3-8b --gpus 32 --cp 4 --sharding fsdp --gbs 64 --seq 32768"
  "llama70b_hsdp|--model llama3-70b --gpus 128 --tp 4 --sharding hsdp --hsdp-shard-size 8 --gbs 256 --fsdp-impl torch"
  "llama8b_fp8_b200|--model llama3-8b --hw b200-180g --gpus 8 --tp 1 --gbs 64 --precision fp8 --fp8-recipe tensorwise"
  "qwen3_accounted|--model qwen3-30b-a3b --gpus 40 --pp 5 --vp 2 --ep 8 --gbs 240 --account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split"
  "megatron_script|--megatron-args-file $scripts/train_llama3_8b_h100_fp8.sh"
  "megatron_gpt3|--megatron-args-file $scripts/train_gpt3_175b_distributed.sh --gpus 1024"
  "titan_fsdp_pp|--torchtitan $titan/llama3_8b_fsdp_pp.toml --gpus 16"
  "titan_hsdp_cp|--torchtitan $titan/llama3_8b_hsdp_cp.toml --gpus 16"
)
for entry in "${jobs[@]}"; do
  name=${entry%%|*}
  # shellcheck disable=SC2206
  args=(${entry#*|})
  for command in predict memory; do
    rc=0
    "$ptsim" $command --format json "${args[@]}" >"$out/${command}_$name.json" \
      2>"$out/${command}_$name.err" || rc=$?
    [ $rc -eq 0 ] || { echo "outputs_snapshot: $command $name: exit $rc" >&2; exit 1; }
  done
done
read -r -a args <<<"${jobs[1]#*|}"
"$ptsim" predict "${args[@]}" >"$out/predict_text.txt" 2>&1

"$ptsim" validate --suite published >"$out/validate_published.txt" 2>&1
if [ -d tests/data/megatron_cases ]; then
  "$ptsim" validate --megatron-cases tests/data/megatron_cases --format csv \
    >"$out/validate_megatron_cases.csv" 2>&1
fi

# sweeps: the default scenario, a MoE one, the sharding modes
export PTSIM_DATA_DIR="$here"
cd "$out"
"$ptsim" sweep --device cpu --csv "sweep_default.csv" >"$out/sweep_default.txt" 2>&1
"$ptsim" sweep --device cpu --model mixtral-8x7b --gpus 16,32 --gbs 64 --seq 4096 --ep 2,4,8 \
  --csv "sweep_moe.csv" >"$out/sweep_moe.txt" 2>&1
"$ptsim" sweep --device cpu --model llama3-8b --gpus 64 --sharding zero1,zero2,fsdp,hsdp \
  --hsdp-shard-size 8,16 --csv "sweep_sharding.csv" >"$out/sweep_sharding.txt" 2>&1
"$ptsim" sweep --device cpu --model llama3-70b --gpus 64 --seq 4096 --gbs 256 --vp 2,4 --cp 1,2 \
  --samples 8 --jitter 0.05 --csv "sweep_mc.csv" >"$out/sweep_mc.txt" 2>&1

echo "outputs_snapshot: $(ls "$out" | wc -l) files in $out"
