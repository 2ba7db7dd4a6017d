#!/usr/bin/env bash
# gpu_check.sh — the one prepared check for a machine with a CUDA device.
#
#   bench/gpu_check.sh [BUILD_DIR (build-gpu)]
#
# 1. configures and builds Release with the CUDA part (fails if nvcc is not
#    found: the point is to test the GPU path);
# 2. runs ctest; test_gpu must PASS here, not be skipped (its --verbose run
#    prints how many results are bit-identical, and checks that the GPU
#    batch gives the same bytes with and without the periodic shortcut);
# 3. CPU == GPU bit for bit in deterministic mode: bench_batch on 100,000
#    random layouts (layouts/s on one CPU thread and on the GPU; exit 2 when
#    a result is not the same bytes), and the default Llama-3-70B sweep
#    of issues 13 and 29 (the sweep's default lists: 98,464 layouts) on the
#    CPU and on the GPU: the same CSV bytes;
# 4. Monte-Carlo samples/s: bench_batch 2,000 layouts x 64 samples;
# 5. layouts/s of a streamed sweep of 9,837,408 layouts on the GPU (about
#    10^7: enumeration on the CPU, evaluation on the GPU, end to end);
# 6. appends all of it, with nvidia-smi's GPU name, to bench/RESULTS-gpu.md
#    (and copies that file to $OUT when $OUT is set, so a remote run brings
#    it back).
# Exit status: 0 when everything passed, else the first failing step's.
# About 5 minutes on 16 cores: 2-3 of them nvcc, 1-2 the 10^7 sweep.  Set
# GPU_CHECK_QUICK=1 to skip step 5.
# shellcheck disable=SC2317,SC2054  # functions run through step; flag values hold commas
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${1:-$root/build-gpu}
jobs=$(nproc 2>/dev/null || echo 4)
log=$(mktemp)
work=$(mktemp -d)
status=0
export PTSIM_DATA_DIR="$root"
step() { # name, command...
  local name=$1; shift
  echo "### $name" | tee -a "$log"
  echo '```' >>"$log"
  local t0 t1
  t0=$(date +%s.%N)
  "$@" 2>&1 | tee -a "$log"
  local rc=${PIPESTATUS[0]}
  t1=$(date +%s.%N)
  echo '```' >>"$log"
  echo "(exit $rc, $(python3 -c "print('%.1f' % ($t1 - $t0))") s)" | tee -a "$log"
  echo >>"$log"
  if [ "$rc" -ne 0 ] && [ "$status" -eq 0 ]; then status=$rc; fi
  return "$rc"
}
# layouts/s of a ptsim sweep: the count from its table, over its wall time
sweep_rate() { # label, sweep args...
  local label=$1 t0 t1 n; shift
  t0=$(date +%s.%N)
  "$build/ptsim" sweep "$@" >"$work/sweep.txt" 2>"$work/sweep.err" || { cat "$work/sweep.err"; return 1; }
  t1=$(date +%s.%N)
  n=$(sed -n 's/.*: \([0-9]*\) valid layouts.*/\1/p' "$work/sweep.txt")
  head -1 "$work/sweep.txt"
  python3 -c "print('$label: %d layouts in %.2f s: %.0f layouts/s' % ($n, $t1 - $t0, $n / ($t1 - $t0)))"
}
# the same sweep on the CPU and on the GPU: the same CSV bytes
same_csv() { # sweep args...
  "$build/ptsim" sweep "$@" --device cpu --csv "$work/cpu.csv" >/dev/null &&
    "$build/ptsim" sweep "$@" --device gpu --csv "$work/gpu.csv" >/dev/null &&
    cmp "$work/cpu.csv" "$work/gpu.csv" && echo "same bytes: $(wc -l <"$work/cpu.csv") lines"
}

gpu=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)
[ -n "$gpu" ] || gpu="(nvidia-smi found no GPU)"
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
issue=(--model llama3-70b --hw a100-80g,h100-80g --gpus 64,128,256,512,1024 --seq 4096,8192
       --gbs 1024 --top 3)
huge=(--model llama3-8b,llama3-70b,llama2-7b,llama2-13b,llama2-70b,gpt3-175b,llama3.1-8b,llama3.1-70b
      --hw a100-80g,h100-80g,h200-141g,a100-40g --gpus 8,16,32,64,128,256,512,1024
      --seq 2048,4096,8192,16384 --gbs 128,256,512,1024,2048 --top 3)

step "configure" cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DPTSIM_CUDA=ON &&
step "build" cmake --build "$build" -j "$jobs" &&
step "ptsim --version" "$build/ptsim" --version
if ! "$build/ptsim" --version 2>/dev/null | grep -q 'compiled in'; then
  echo "gpu_check: the CUDA part was not built (nvcc not found?)" | tee -a "$log"
  [ "$status" -eq 0 ] && status=1
fi
if [ "$status" -eq 0 ]; then
  (cd "$build" && step "ctest" ctest --output-on-failure -j "$jobs")
  rc=$?; [ "$rc" -ne 0 ] && [ "$status" -eq 0 ] && status=$rc
  (cd "$build" && step "test_gpu --verbose (must not SKIP)" ./test_gpu --verbose)
  rc=$?; [ "$rc" -ne 0 ] && [ "$status" -eq 0 ] && status=$rc
  if grep -q '# SKIP' "$log"; then
    echo "gpu_check: test_gpu was skipped: the device was not usable" | tee -a "$log"
    [ "$status" -eq 0 ] && status=1
  fi
  step "CPU == GPU bit for bit, layouts/s: bench_batch 100000" "$build/bench_batch" 100000
  rc=$?; [ "$rc" -ne 0 ] && [ "$status" -eq 0 ] && status=$rc
  step "CPU == GPU bit for bit: the default Llama-3-70B sweep, CPU CSV vs GPU CSV" same_csv "${issue[@]}"
  rc=$?; [ "$rc" -ne 0 ] && [ "$status" -eq 0 ] && status=$rc
  step "the default Llama-3-70B sweep on all CPU threads: layouts/s" sweep_rate cpu "${issue[@]}" --device cpu
  rc=$?; [ "$rc" -ne 0 ] && [ "$status" -eq 0 ] && status=$rc
  step "the default Llama-3-70B sweep on the GPU: layouts/s" sweep_rate gpu "${issue[@]}" --device gpu
  rc=$?; [ "$rc" -ne 0 ] && [ "$status" -eq 0 ] && status=$rc
  step "Monte-Carlo samples/s: bench_batch 2000 layouts x 64 samples" \
    "$build/bench_batch" 2000 1 64
  rc=$?; [ "$rc" -ne 0 ] && [ "$status" -eq 0 ] && status=$rc
  if [ -z "${GPU_CHECK_QUICK:-}" ]; then
    step "a 9,837,408-layout sweep on the GPU, streamed: layouts/s end to end" \
      sweep_rate gpu "${huge[@]}" --device gpu
    rc=$?; [ "$rc" -ne 0 ] && [ "$status" -eq 0 ] && status=$rc
  fi
fi

{
  echo "## $(date -u +%Y-%m-%dT%H:%MZ): GPU check on ${gpu}"
  echo
  echo "Host CPU: ${cpu} (${jobs} cores); commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?');"
  echo "result: $([ "$status" -eq 0 ] && echo PASS || echo "FAIL (exit $status)")"
  echo
  cat "$log"
} >>"$here/RESULTS-gpu.md"
rm -rf "$log" "$work"
if [ -n "${OUT:-}" ] && [ -d "$OUT" ]; then cp "$here/RESULTS-gpu.md" "$OUT/"; fi
echo "gpu_check: $([ "$status" -eq 0 ] && echo PASS || echo "FAIL (exit $status)"); see bench/RESULTS-gpu.md"
exit "$status"
