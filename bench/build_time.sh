#!/usr/bin/env bash
# build_time.sh — what a new user waits for: `make test` in a fresh clone
# of REV (default HEAD), wall time, with the CUDA architectures of the
# default build (this machine's GPUs, else sm_90), and the CUDA part's
# share.  Appends the result, with the machine named, to bench/RESULTS.md.
#
#   bash bench/build_time.sh [REV]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
rev=${1:-HEAD}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git -C "$here" worktree add -q --detach "$work/clone" "$rev"
trap 'git -C "$here" worktree remove --force "$work/clone"; rm -rf "$work"' EXIT
cd "$work/clone"
start=$(date +%s.%N)
make test >"$work/log" 2>&1 || { tail -20 "$work/log"; exit 1; }
end=$(date +%s.%N)
cuda_start=$(date +%s.%N)
find build/CMakeFiles/ptsim_cuda.dir -name '*.o' -delete 2>/dev/null || true
rm -f build/libptsim_cuda.a
cmake --build build --target ptsim_cuda -j "$(nproc)" >/dev/null 2>&1 || true
cuda_end=$(date +%s.%N)
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
archs=$(sed -n 's/.*CUDA part ON, architectures \(.*\)/\1/p' "$work/log")
tests=$(sed -n 's/^Total Test time (real) = *\(.*\)/\1/p' "$work/log")
line=$(python3 -c "print('fresh clone of %s, make test: %.0f s wall (tests %s; CUDA architectures %s, the CUDA part alone %.0f s)' % ('$(git rev-parse --short "$rev")', $end - $start, '$tests', '${archs:-none}', $cuda_end - $cuda_start))")
echo "$line"
printf '\n## %s on %s (%s cores): build time\n\n- %s\n' "$(date +%F)" "$cpu" "$(nproc)" "$line" \
  >>"$here/bench/RESULTS.md"
