#!/usr/bin/env bash
# run_all.sh — the one script for a session with a GPU machine (minutes only):
# builds ptsim and gemm_bench, measures cuBLAS GEMMs at the shapes of a small
# layout and the HBM copy rate, trains 3 small Llama configs with
# train_small.py, merges the calibration into a hardware profile, and runs
# `ptsim validate` on the measurements (shipped profile and calibrated one).
# Everything lands in $RESULTS (default validate/short_run/results) and is
# copied to $OUT when set.  Each stage is time-boxed and a failure is logged,
# not fatal, so a partial run still returns what it measured.
#   bash validate/short_run/run_all.sh            # from the repository root
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
results=${RESULTS:-$here/results}
mkdir -p "$results"
log=$results/run_all.log
: >"$log"
say() { echo "[run_all $(date +%H:%M:%S)] $*" | tee -a "$log"; }
step() { # name, timeout_s, command...
  local name=$1 limit=$2; shift 2
  say "start $name"
  timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?
  say "end $name: exit $rc"
  return $rc
}
finish() {
  if [ -n "${OUT:-}" ]; then
    mkdir -p "$OUT/short_run"
    cp -r "$results"/. "$OUT/short_run/" 2>/dev/null
    say "copied results to $OUT/short_run"
  fi
}
trap finish EXIT

command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version \
  --format=csv >"$results/gpu.txt" 2>&1
build=$root/build-short-run
step "build ptsim" 300 bash -c "cmake -S '$root' -B '$build' -DCMAKE_BUILD_TYPE=Release -DPTSIM_CUDA=OFF >/dev/null && cmake --build '$build' -j \$(nproc) --target ptsim"
ptsim=$build/ptsim
step "build gemm_bench" 180 make -C "$here" gemm_bench

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
case "$gpu" in
  *H200*) hw=h200-141g ;;
  *H100*) hw=h100-80g ;;
  *A100*40GB*) hw=a100-40g ;;
  *A100*) hw=a100-80g ;;
  *) hw=h100-80g; say "unknown GPU '$gpu': comparing against h100-80g" ;;
esac
say "GPU '$gpu' -> profile $hw"

# GEMM shapes of a Llama-3-8B layer at TP 1 and TP 4 (seq 4096), plus the small
# configs trained below; one bench over all of them.
shapes=$results/gemm_shapes.txt
: >"$shapes"
for spec in "--model llama3-8b --tp 1 --seq 4096 --gbs 8 --gpus 8" \
            "--model llama3-8b --tp 4 --seq 4096 --gbs 8 --gpus 8"; do
  # shellcheck disable=SC2086
  "$ptsim" validate --emit-gemm-shapes "$results/tmp_shapes.txt" $spec --hw "$hw" >>"$log" 2>&1 &&
    cat "$results/tmp_shapes.txt" >>"$shapes"
done
rm -f "$results/tmp_shapes.txt"
step "gemm_bench" 180 "$here/gemm_bench" "$shapes" --out "$results/calibration.ini" --iters 20
cp "$log" "$results/gemm_bench.log" 2>/dev/null

# A hardware profile with the measured [efficiency] keys merged in.
if [ -s "$results/calibration.ini" ] &&
   "$ptsim" calibrate --hw "$hw" --out "$results/$hw-calibrated.ini" "$results/calibration.ini" >>"$log" 2>&1; then
  say "calibrated profile: $results/$hw-calibrated.ini"
fi

# Three small Llama configs: fits easily, larger, and one at long sequence.
runs=$results/runs.csv
rm -f "$runs"
step "train small-a" 150 python3 "$here/train_small.py" --out-dir "$results" --name small-a \
  --mbs 4 --seq 2048 --hidden 1024 --layers 8 --heads 16 --kv-heads 4 --ffn 2816 --vocab 32000 --steps 8
step "train small-b" 150 python3 "$here/train_small.py" --out-dir "$results" --name small-b \
  --mbs 2 --seq 4096 --hidden 2048 --layers 8 --heads 16 --kv-heads 8 --ffn 5632 --vocab 32000 --steps 8
step "train small-c" 150 python3 "$here/train_small.py" --out-dir "$results" --name small-c \
  --mbs 1 --seq 8192 --hidden 2048 --layers 12 --heads 16 --kv-heads 4 --ffn 5632 --vocab 50304 --steps 6

if [ -s "$runs" ]; then
  # AMP over fp32 weights keeps 16 B/param (fp32 weight, grad, Adam m, v);
  # --no-distributed-optimizer is moot at dp 1.
  for fmt in text json csv; do
    "$ptsim" validate "$runs" --hw "$hw" --format "$fmt" >"$results/validate_$hw.$fmt" 2>>"$log"
    [ -s "$results/$hw-calibrated.ini" ] &&
      "$ptsim" validate "$runs" --hw "$results/$hw-calibrated.ini" --format "$fmt" \
        >"$results/validate_calibrated.$fmt" 2>>"$log"
  done
  cat "$results/validate_$hw.text" | tee -a "$log"
fi
"$ptsim" validate --suite published >"$results/validate_published.text" 2>>"$log"
say "done; results in $results"
