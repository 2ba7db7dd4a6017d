#!/usr/bin/env bash
# The short-run harness builds here even without a GPU: gemm_bench.cu
# compiles with nvcc (skipped when there is none), train_small.py compiles,
# run_all.sh parses.  Nothing is run: that needs a GPU machine.
set -u
src=${SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
dir=$src/validate/short_run
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
bash -n "$dir/run_all.sh" && echo "ok - run_all.sh parses" || { echo "not ok - run_all.sh parses"; fails=1; }
if command -v python3 >/dev/null 2>&1; then
  cp "$dir/train_small.py" "$tmp/" && python3 -m py_compile "$tmp/train_small.py" &&
    echo "ok - train_small.py compiles" || { echo "not ok - train_small.py compiles"; fails=1; }
fi
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
if [ -x "$nvcc" ]; then
  if "$nvcc" -O2 -gencode arch=compute_90,code=sm_90 -Xcompiler -Wall,-Wextra -Werror all-warnings \
      -o "$tmp/gemm_bench" "$dir/gemm_bench.cu" -lcublas; then
    echo "ok - gemm_bench.cu compiles and links cuBLAS"
  else
    echo "not ok - gemm_bench.cu compiles"; fails=1
  fi
else
  echo "# SKIP no nvcc: gemm_bench.cu not compiled"
  [ "$fails" -eq 0 ] && exit 77
fi
exit $fails
