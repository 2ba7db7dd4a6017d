#!/usr/bin/env bash
# gpu_check.sh — the one prepared check for a machine with a CUDA device.
#
#   bench/gpu_check.sh [BUILD_DIR (build-gpu)]
#
# 1. configures and builds Release with the CUDA part (fails if nvcc is not
#    found: the point is to test the GPU path);
# 2. runs ctest; test_gpu must PASS here, not be skipped (then it prints the
#    per-field GPU-vs-CPU differences with --verbose);
# 3. runs bench/bench_batch on 10,000 random valid layouts: layouts/s on one
#    CPU thread and on the GPU, max relative difference per field;
# 4. appends all of it, with nvidia-smi's GPU name, to bench/RESULTS-gpu.md
#    (and copies that file to $OUT when $OUT is set, so a remote run brings
#    it back).
# Exit status: 0 when everything passed, else the first failing step's.
# Takes about a minute on 16 cores, most of it nvcc.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${1:-$root/build-gpu}
jobs=$(nproc 2>/dev/null || echo 4)
log=$(mktemp)
status=0
step() { # name, command...
  local name=$1; shift
  echo "### $name" | tee -a "$log"
  echo '```' >>"$log"
  "$@" 2>&1 | tee -a "$log"
  local rc=${PIPESTATUS[0]}
  echo '```' >>"$log"
  echo "(exit $rc)" | tee -a "$log"
  echo >>"$log"
  if [ "$rc" -ne 0 ] && [ "$status" -eq 0 ]; then status=$rc; fi
  return "$rc"
}

gpu=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)
[ -n "$gpu" ] || gpu="(nvidia-smi found no GPU)"
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')

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
  (cd "$build" && step "test_gpu --verbose (must not SKIP)" \
     env PTSIM_DATA_DIR="$root" ./test_gpu --verbose)
  rc=$?; [ "$rc" -ne 0 ] && [ "$status" -eq 0 ] && status=$rc
  if grep -q '# SKIP' "$log"; then
    echo "gpu_check: test_gpu was skipped: the device was not usable" | tee -a "$log"
    [ "$status" -eq 0 ] && status=1
  fi
  step "bench_batch 10000" env PTSIM_DATA_DIR="$root" "$build/bench_batch" 10000
  rc=$?; [ "$rc" -ne 0 ] && [ "$status" -eq 0 ] && status=$rc
fi

{
  echo "## $(date -u +%Y-%m-%dT%H:%MZ): GPU check on ${gpu}"
  echo
  echo "Host CPU: ${cpu} (${jobs} cores); commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?');"
  echo "result: $([ "$status" -eq 0 ] && echo PASS || echo "FAIL (exit $status)")"
  echo
  cat "$log"
} >>"$here/RESULTS-gpu.md"
rm -f "$log"
if [ -n "${OUT:-}" ] && [ -d "$OUT" ]; then cp "$here/RESULTS-gpu.md" "$OUT/"; fi
echo "gpu_check: $([ "$status" -eq 0 ] && echo PASS || echo "FAIL (exit $status)"); see bench/RESULTS-gpu.md"
exit "$status"
