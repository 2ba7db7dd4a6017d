#!/usr/bin/env bash
# What a sweep answers: uneven first/last stages for layer counts pp does not divide, given
# tp/pp lists, the best layout per model/hardware/GPU count, and a sweep in which nothing runs
# (a headline, exit 0) or nothing is valid (exit 2).
set -u
. "$(dirname "$0")/common.bash" "$1"

# DeepSeek-V3's 61 layers on 64 GPUs at tp 1, cp 1: pp divides 64 as 1, 2, 4, ..., 64.  Megatron's
# uneven ends (middles ceil(61/pp), ends the rest, the last the lighter) split 61 over pp 2
# (31 + 30), 4 (15, 16, 16, 14), 8 (7, 8 x 6, 6) and 16 (3, 4 x 14, 2); pp 32 leaves one
# layer for the two ends (none) and pp 64 is more than the layers.
"$ptsim" sweep --model deepseek-v3 --gpus 64 --tp 1 --cp 1 --seq 4096 --gbs 1024 --ep 4 \
  --recompute none --schedule 1f1b --mbs 1 --top 1 --csv "$tmp/d.csv" >"$tmp/d.txt"
check "61 layers: pp 1, 2, 4, 8 and 16 are enumerated" \
  test "$(cut -d, -f8 "$tmp/d.csv" | tail -n +2 | sort -n | uniq | tr '\n' ' ')" = "1 2 4 8 16 "

# --tp and --pp lists: only those sizes; one that does not divide the GPUs is a counted
# rejection.  Llama-3-70B on 64 GPUs, --tp 4,8,3 --pp 2,4,3: tp 3 does not divide 64 (once),
# pp 3 does not divide 64 / (tp cp) for any of tp 4 and 8 with each of their cps.
"$ptsim" sweep --model llama3-70b --gpus 64 --tp 4,8,3 --pp 2,4,3 --top 1 --csv "$tmp/l.csv" \
  >"$tmp/l.txt"
check "--tp 4,8: only tp 4 and 8" test "$(cut -d, -f7 "$tmp/l.csv" | tail -n +2 | sort -n | uniq | tr '\n' ' ')" = "4 8 "
check "--pp 2,4: only pp 2 and 4" test "$(cut -d, -f8 "$tmp/l.csv" | tail -n +2 | sort -n | uniq | tr '\n' ' ')" = "2 4 "
check "--tp 3 on 64 GPUs: one rejection" grep -Eq '^ +1  --tp N does not divide the GPUs N$' "$tmp/l.txt"
check "--pp 3: rejected by reason" grep -q -- '--pp N does not divide the GPUs tp x cp leave N' "$tmp/l.txt"
run 2 sweep --model llama3-70b --gpus 8 --tp 3
check "no valid layout (--tp 3 on 8 GPUs): exit 2 with the reason" grep -q -- '--tp N does not divide the GPUs N' "$tmp/err"

# The best per model, hardware and GPU count: 2 profiles x 2 GPU counts, 4 rows.
"$ptsim" sweep --model llama3-8b --hw a100-80g,h100-80g --gpus 8,16 --seq 4096 --mbs 1 \
  --cp 1 --top 1 >"$tmp/b.txt"
check "best per hardware and GPU count: 4 rows" \
  test "$(sed -n '/^the best layout that runs per model/,$p' "$tmp/b.txt" | grep -c '^llama3-8b ')" -eq 4

# Nothing runs: Llama 3.1 405B on 8 GPUs holds at least its 18 bytes a parameter over 8 GPUs
# (405e9 x 18 / 8 bytes = 849 GiB a GPU): valid layouts, none runs: exit 0, a headline, the
# closest layouts with what would make them run and the command lines.
run 0 sweep --model llama3.1-405b --gpus 8 --seq 8192 --gbs 64 --top 3
check "nothing runs: exit 0 with a headline first" bash -c "grep -v '^overlap\|^settings' '$tmp/out' | head -1 | grep -q '^NOTHING RUNS: none of the [0-9]* valid layouts is predicted to run'"
check "nothing runs: the closest layouts, each with what would make it run" \
  test "$(grep -c '^what would make it run' "$tmp/out")" -eq 2
check "the closest hold at least 849 GiB" bash -c "grep -E '^   holds at least' '$tmp/out' | awk '{ if (\$4 + 0 < 849) bad = 1 } END { exit bad }'"
check "their remedies need more GPUs, with a predict command line" \
  bash -c "grep -q '^nothing on 8 GPUs runs with up to 3 changes; [0-9]* GPUs do:' '$tmp/out' && grep -Eq '^     ptsim predict --model llama3.1-405b .*--gpus [0-9]+' '$tmp/out'"

# Layouts that cannot be scheduled are rejections, never ranked: gbs 10^9 on 8 GPUs gives
# every layout more than 65,536 microbatches a stage (10^9 / (mbs dp) with dp <= 8): none
# can be scheduled, so no valid layout (exit 2), the reason counted.  With gbs 128 beside
# it, the table ranks gbs 128's only and counts the others with the rejections.
run 2 sweep --gbs 1000000000 --top 3
check "gbs 1e9: nothing schedulable is no valid layout (exit 2), the reason counted" \
  grep -Eq '^ +[0-9]+  could not be scheduled: ' "$tmp/err"
run 0 sweep --gbs 1000000000,128 --top 400
n=$(sed -n 's/.* \([0-9]*\) could not be scheduled (counted with the rejections, not ranked)$/\1/p' "$tmp/out")
check "gbs 1e9,128: the unscheduled are counted as rejections" \
  grep -Eq "^ +$n  could not be scheduled: pipeline too large" "$tmp/out"
check "gbs 1e9,128: none of them ranked" bash -c "grep -E '^ +[0-9]+ llama3-8b' '$tmp/out' | grep -q . && ! grep -E '^ +[0-9]+ llama3-8b' '$tmp/out' | grep -q 'unscheduled\| 0\.000 '"

# Per-GPU and precision columns: tokens_per_s is the job's, tokens_per_s_per_gpu its share per
# GPU; an fp8 run's MFU against the fp8 peak is the bf16-peak MFU x 989.4 / 1979 (h100-80g.ini's
# peaks, NVIDIA's H100 SXM datasheet: 0.49997)
"$ptsim" sweep --precision fp8 --gpus 8 --mbs 1 --cp 1 --csv "$tmp/fp8.csv" >/dev/null
check "per-GPU tokens/s x GPUs = the job's, both MFUs in their ratio" awk -F, '
  NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
  $c["step_s"] > 0 { n++
    d = $c["tokens_per_s_per_gpu"] * $c["gpus"] / $c["tokens_per_s"] - 1; if (d > 1e-6 || d < -1e-6) bad++
    r = $c["mfu_precision_peak"] / $c["mfu_bf16_peak"] - 989.4 / 1979; if (r > 2e-5 || r < -2e-5) bad++
    if ($c["mfu"] != $c["mfu_bf16_peak"]) bad++ }
  END { exit !(n > 0 && bad == 0) }' "$tmp/fp8.csv"

# Progress on a terminal: the enumeration's line (scenarios, the layouts so far, the total
# they suggest) comes before any evaluation, once the enumeration has taken a second (on a
# fast machine it may not: then the evaluation's line is the first); none when stderr is a
# file (sweep_scale.sh).
if command -v script >/dev/null 2>&1; then
  script -qc "'$ptsim' sweep --model llama3-70b --hw a100-80g,h100-80g --gpus 64,128,256,512,1024 --seq 4096,8192 --gbs 1024 --top 1 --threads 2 >/dev/null" "$tmp/tty" >/dev/null 2>&1
  tr '\r' '\n' <"$tmp/tty" | grep -E 'enumerating: scenario|layouts, [0-9]+/s' >"$tmp/progress"
  check "progress on a terminal: the evaluation's line, with the layouts and their rate" \
    grep -Eq '^\[[# ]+\] [0-9]+/[0-9]+ layouts, [0-9]+/s' "$tmp/progress"
  # (the estimate needs a finished scenario: a loaded machine may show the first
  # scenario's line before it has one)
  check "progress on a terminal: an enumeration line comes first, with an estimate once a scenario is done" \
    bash -c "! grep -q '^enumerating' '$tmp/progress' || { head -1 '$tmp/progress' | grep -q '^enumerating: scenario [0-9]*/20, [0-9]* valid layouts so far' && ! grep -E '^enumerating: scenario ([2-9]|1[0-9])/20' '$tmp/progress' | grep -vq 'about [0-9]* in all'; }"
fi

exit $((fails > 0))
