#!/usr/bin/env bash
# What predict says about a layout that does not run: the sizes that did not fit at set-up,
# and the changes that would make it run, each re-predicted (sim/run/remedies.c).
set -u
. "$(dirname "$0")/common.bash" "$1"

# Llama-3-70B (70,553,706,496 parameters) at tp 8 on 8 GPUs, one data-parallel rank: a GPU
# holds 70,553,706,496 / 8 = 8.82e9 parameters, with bf16 weights (2 bytes), fp32 main
# gradients (4) and Adam's fp32 master + two moments (12): 18 bytes each, 158.8e9 bytes =
# 147.85 GiB, where the GPU has 79.65 GiB: the set-up fails, before any step.
"$ptsim" predict --model llama3-70b --gpus 8 --tp 8 >"$tmp/oom.txt"
check "a set-up OOM says so, with the stage's real sizes" \
  grep -q "^runs: no (stage 0 runs out of memory at set-up, before the first step: its weights, gradients and optimizer states, 147.8[5-9] GiB" "$tmp/oom.txt"
check "a set-up OOM prints no allocated 0.00 row" bash -c "! grep -q 'allocated 0.00\|device peak 0.95' '$tmp/oom.txt'"
check "the set-up failure line gives weights + gradients + optimizer states" \
  grep -q "weights 16.43 + gradients 32.86 + optimizer states 98.58 = 147.8[5-9] GiB" "$tmp/oom.txt"
# No change on 8 GPUs can run it: tp, pp, cp and ZeRO/FSDP spread the 18 bytes per
# parameter over at most the 8 GPUs (147.85 GiB each at best).  On 16 the fully sharded
# states are 73.9 GiB a GPU, and the runs margin (0.72 GiB + 5% of the reserved peak,
# 3.7 GiB) with the 0.95 GiB of context and NCCL leaves nothing for the activations of
# 80 layers (1.25 GiB even with full recompute: 8192 x 8192 x 2 bytes / 8 a layer): 32 GPUs
# are the fewest.
check "no change on 8 GPUs runs: the fewest GPUs that do, 32" \
  grep -q "^nothing on 8 GPUs runs with up to 3 changes; 32 GPUs do:" "$tmp/oom.txt"
# Every suggested command line of FILE, run as printed, runs, with the step time listed.
reruns() { # file
  grep -E '^     ptsim predict ' "$1" | sed 's/^ *ptsim //' >"$tmp/cmds"
  grep -E '^ +[0-9]+\. ' "$1" | sed -E 's/.*: step ([0-9.]+) s,.*/\1/' >"$tmp/steps"
  local ok=1
  [ -s "$tmp/cmds" ] && [ "$(wc -l <"$tmp/cmds")" -eq "$(wc -l <"$tmp/steps")" ] || ok=0
  while IFS= read -r cmd && IFS= read -r step <&3; do
    eval "\"\$ptsim\" $cmd" >"$tmp/re.txt" 2>&1 || ok=0
    grep -q "^runs: yes" "$tmp/re.txt" || ok=0
    grep -q "^step $step s:" "$tmp/re.txt" || ok=0
  done <"$tmp/cmds" 3<"$tmp/steps"
  test "$ok" -eq 1
}
check "five suggestions, ranked by step time, fastest first" bash -c \
  "test \$(grep -cE '^     ptsim predict ' '$tmp/oom.txt') -eq 5 && grep -E '^ +[0-9]+\\. ' '$tmp/oom.txt' | sed -E 's/.*: step ([0-9.]+) s,.*/\\1/' | sort -n -c"
check "each suggested command line runs, with the step listed" reruns "$tmp/oom.txt"
# The same through a Megatron-LM launch script (the flags go on top of its own; tp 1 -> 2
# says --sp, which the script leaves off) and with an accounted pipeline split; a change
# that adds to another suggestion's changes is not suggested.
export PTSIM_DATA_DIR=${PTSIM_DATA_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
"$ptsim" predict --megatron-args-file "$PTSIM_DATA_DIR/tests/data/megatron_scripts/train_llama3_8b_h100_fp8.sh" \
  >"$tmp/m.txt" 2>/dev/null
check "a Megatron-LM script's suggestions rerun as printed" reruns "$tmp/m.txt"
"$ptsim" predict --model qwen3-30b-a3b --gpus 40 --pp 5 --vp 2 --ep 8 --gbs 240 --seq 9216 \
  --account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split >"$tmp/q.txt"
check "an accounted split's suggestions rerun as printed" reruns "$tmp/q.txt"
check "no suggestion includes a smaller one (--cp 2 alone runs: not with more)" \
  bash -c "! grep -E '^ +[0-9]+\\. .+--cp 2: |^ +[0-9]+\\. --cp 2 .+: ' '$tmp/q.txt'"

# Llama-3-8B at seq 16384, mbs 4 on 8 GPUs given as --nodes 1 --dp 8: changes on the same
# GPUs make it run; --dp and --nodes are derived again (dropped from the command lines), and
# a flag changed twice (--tp 2 then 4) is one flag.
"$ptsim" predict --model llama3-8b --nodes 1 --dp 8 --mbs 4 --seq 16384 >"$tmp/s.txt"
check "same-GPU changes found" bash -c "grep -q '^what would make it run (the fewest changes that run' '$tmp/s.txt' && ! grep -q '^nothing on' '$tmp/s.txt'"
check "command lines drop --dp and --nodes when tp, pp or cp change" \
  bash -c "grep -E '^     ptsim predict .*--(tp|pp|cp) ' '$tmp/s.txt' | grep -vq -- '--dp\|--nodes' && ! grep -E '^     ptsim predict .*--(tp|pp|cp) ' '$tmp/s.txt' | grep -q -- '--dp 8'"
check "a flag appears once per command line" \
  bash -c "! grep -E '^     ptsim' '$tmp/s.txt' | grep -Eq -- '--tp .*--tp |--mbs .*--mbs '"
"$ptsim" predict --format json --model llama3-8b --nodes 1 --dp 8 --mbs 4 --seq 16384 >"$tmp/s.json"
if command -v python3 >/dev/null 2>&1; then
  check "json: the remedies, fastest first, on the job's GPUs" python3 - "$tmp/s.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["remedies"]
assert r["gpus"] == 8 and 1 <= len(r["layouts"]) <= 5, r
steps = [x["step_s"] for x in r["layouts"]]
assert steps == sorted(steps), steps
for x in r["layouts"]:
    assert x["device_peak_bytes"] < d["config"]["hw"]["memory_bytes"]
    assert abs(x["tokens_per_s"] - 128 * 16384 / x["step_s"]) < 1e-6 * x["tokens_per_s"]
PY
fi

# A layout that runs gets no remedies.
"$ptsim" predict --model llama3-8b --gpus 8 --tp 2 --format json >"$tmp/ok.json"
"$ptsim" predict --model llama3-8b --gpus 8 --tp 2 >"$tmp/ok.txt"
check "a layout that runs: no remedies" bash -c "! grep -q 'what would make it run' '$tmp/ok.txt' && ! grep -q '\"remedies\"' '$tmp/ok.json'"

# A sweep row whose emulation failed shows the least it needed, not the context alone: Llama
# 3.1 405B on 8 GPUs holds at least its bf16 weights, 405e9 x 2 / 8 bytes = 94 GiB a GPU
# even at tp 8, and at tp 1 pp 1 (dp 8) 405e9 x 2 bytes = 754 GiB.
"$ptsim" sweep --model llama3.1-405b --gpus 8 --seq 8192 --gbs 64 --top 5 >"$tmp/big.txt"
check "sweep OOM rows: alloc GiB is the least needed (> 94 GiB), not the 1 GiB of context" \
  bash -c "grep -E ' OOM no' '$tmp/big.txt' | awk '{for (i = 1; i <= NF; i++) if (\$i ~ /^>/) { v = substr(\$i, 2) + 0; if (v < 94) bad = 1; n++ } } END { exit bad || n != 5 }'"

exit $((fails > 0))
