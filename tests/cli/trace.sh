#!/usr/bin/env bash
# `ptsim predict --trace`: the Perfetto trace of a real 70B layout (tp 8 pp 4 vp 5 on 64
# GPUs) and of a 1-GPU job, checked by check_trace.py against the rules Perfetto's JSON
# importer applies and against the engine's own numbers; a broken trace must fail the
# checker; bad --trace-steps is bad input.  Needs python3 (skip 77).
set -u
. "$(dirname "$0")/common.bash" "$1"
here=$(cd "$(dirname "$0")" && pwd)

check "--trace-steps without --trace is bad input" bash -c "'$ptsim' predict --trace-steps 2 >/dev/null 2>&1; [ \$? -eq 2 ]"
check "--trace-steps 0 is bad input" bash -c "'$ptsim' predict --trace '$tmp/x.json' --trace-steps 0 >/dev/null 2>&1; [ \$? -eq 2 ] && [ ! -e '$tmp/x.json' ]"
command -v python3 >/dev/null 2>&1 || { echo "# SKIP no python3"; [ "$fails" -eq 0 ] && exit 77 || exit 1; }

big="--model llama3-70b --gpus 64 --tp 8 --pp 4 --vp 5 --gbs 64"
"$ptsim" predict $big --trace "$tmp/big.json" --trace-steps 3 --format json >"$tmp/big_pred.json"
check "70B, 3 steps: the trace follows Perfetto's JSON rules and the engine's numbers" \
  python3 "$here/check_trace.py" "$tmp/big.json" "$tmp/big_pred.json" 3
one="--model llama3-8b --gpus 1 --gbs 8 --seq 4096"
"$ptsim" predict $one --trace "$tmp/one.json" --format json >"$tmp/one_pred.json"
check "1 GPU, 1 step: the same" python3 "$here/check_trace.py" "$tmp/one.json" "$tmp/one_pred.json" 1
hsdp="--model llama3-8b --gpus 16 --pp 2 --vp 2 --gbs 64 --seq 4096 --sharding hsdp --hsdp-shard-size 4 --fsdp-impl torch"
"$ptsim" predict $hsdp --trace "$tmp/hsdp.json" --trace-steps 2 --format json >"$tmp/hsdp_pred.json"
check "HSDP x PP: the same, with its FSDP units" \
  python3 "$here/check_trace.py" "$tmp/hsdp.json" "$tmp/hsdp_pred.json" 2
fsdp="--model llama3-8b --gpus 16 --tp 2 --gbs 64 --seq 4096 --sharding fsdp"
"$ptsim" predict $fsdp --trace "$tmp/fsdp.json" --format json >"$tmp/fsdp_pred.json"
check "FSDP: the items' waits for their units are DP exposed" \
  bash -c "python3 '$here/check_trace.py' '$tmp/fsdp.json' '$tmp/fsdp_pred.json' 1 && grep -q '\"DP exposed\"' '$tmp/fsdp.json'"
moe="--model mixtral-8x7b --gpus 32 --pp 2 --ep 8 --gbs 64 --seq 4096 --sharding fsdp"
"$ptsim" predict $moe --trace "$tmp/moe.json" --format json >"$tmp/moe_pred.json"
check "MoE x FSDP: an item waits for its all-to-alls (EP exposed) and its units (DP exposed)" \
  bash -c "python3 '$here/check_trace.py' '$tmp/moe.json' '$tmp/moe_pred.json' 1 && grep -q '\"DP exposed\"' '$tmp/moe.json' && grep -q '\"EP exposed\"' '$tmp/moe.json'"
# the checker itself: a flow end without its bind point, a slice cut in half
python3 - "$tmp/big.json" "$tmp/broken.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for e in d["traceEvents"]:
    if e.get("ph") == "f":
        del e["bp"]
        break
for e in d["traceEvents"]:
    if e.get("ph") == "X" and e["name"] == "compute":
        e["dur"] *= 3   # now it runs past its parent item
        break
json.dump(d, open(sys.argv[2], "w"))
PY
check "a broken trace fails the checker" bash -c "! python3 '$here/check_trace.py' '$tmp/broken.json' '$tmp/big_pred.json' 3 >'$tmp/why'"
check "  naming the flow and the overlap" bash -c "grep -q 'bp' '$tmp/why' && grep -q 'overlaps' '$tmp/why'"
[ "$fails" -eq 0 ]
