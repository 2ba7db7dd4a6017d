#!/usr/bin/env bash
# `--torchtitan CONFIG.toml`: a DDP config is predicted (with its warnings on stderr), an
# FSDP config is refused with the reason at FILE:LINE, malformed TOML names FILE:LINE.
set -u
ptsim=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
data=${SRCDIR:-$(dirname "$0")/../..}/tests/data/torchtitan
fails=0
check() { # name, condition-command...
  local name=$1; shift
  if "$@"; then echo "ok - $name"; else echo "not ok - $name"; fails=$((fails + 1)); fi
}
run() { # code, args... : stdout in $tmp/out, stderr in $tmp/err
  local want=$1; shift
  "$ptsim" "$@" >"$tmp/out" 2>"$tmp/err"; local got=$?
  [ "$got" -eq "$want" ] || { echo "  exit $got, wanted $want for: $*" >&2; cat "$tmp/err" >&2; return 1; }
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

check "DDP config predicts" run 0 predict --torchtitan "$data/llama3_8b_ddp.toml" --format json
check "its layout is the config's" grep -q '"dp": 8' "$tmp/out"
check "compile is warned at its line" grep -q 'llama3_8b_ddp.toml:43: \[compile\] enable' "$tmp/err"
check "flags still override the config" run 0 memory --torchtitan "$data/llama3_8b_ddp.toml" --gbs 64 --format json
check "gbs overridden" grep -q '"gbs": 64' "$tmp/out"
check "FSDP is refused" run 2 predict --torchtitan "$data/llama3_8b_fsdp.toml" --gpus 8
check "with its reason and line" grep -q 'llama3_8b_fsdp.toml:19: .*FSDP not modelled yet' "$tmp/err"
check "shard -1 needs the world size" run 2 predict --torchtitan "$data/llama3_8b_fsdp.toml"
check "malformed TOML names file:line" run 2 memory --torchtitan "$data/bad_syntax.toml"
check "line 7" grep -q 'bad_syntax.toml:7: an unterminated string' "$tmp/err"
check "not with --megatron-args" run 2 memory --torchtitan "$data/llama3_8b_ddp.toml" --megatron-args "--tensor-model-parallel-size 2"
check "missing file" run 2 memory --torchtitan "$tmp/none.toml"
[ "$fails" -eq 0 ]
