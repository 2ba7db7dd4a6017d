#!/usr/bin/env bash
# Runs the benchmarks against a Release build (default build/) and appends
# the results, with the machine named, to bench/RESULTS.md.
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
{
  echo "## $(date -u +%Y-%m-%d) on ${cpu} ($(nproc) cores), one core"
  echo
  for schedule in 1f1b interleaved zb-h1; do
    echo "- $(PTSIM_DATA_DIR="$here/.." "$build/bench_engine" "$schedule")"
  done
  echo
} | tee -a "$here/RESULTS.md"
