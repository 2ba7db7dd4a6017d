#!/usr/bin/env bash
# The sweep's splits as Megatron-LM's --pipeline-model-parallel-layout strings: the CSV's last
# column (pipeline_layout, empty for even splits), the table's list of them, and
# --pipeline-layout LAYOUT, which sweeps only the given splits.
set -u
. "$(dirname "$0")/common.bash" "$1"

# DeepSeek-V3: 61 layers and one MTP layer, on 64 GPUs at tp 1, cp 1 (as sweep_answers.sh).
# Megatron's uneven ends: pp 2 is 31 + 30; pp 8 is 7 + 6 x 8 + 6 (middles ceil(61/8) = 8, the
# ends the 13 left, the first the heavier); pp 16 is 3 + 14 x 4 + 2.  In the layout grammar: 'E'
# opens the first stage, the MTP layer 'm' and the loss 'L' close the last, equal middle stages
# are one group "(t*8|)*6".  pp 1 is one stage: even, no string.
"$ptsim" sweep --model deepseek-v3 --gpus 64 --tp 1 --cp 1 --seq 4096 --gbs 1024 --ep 4 \
  --recompute none --schedule 1f1b --mbs 1 --top 3 --csv "$tmp/d.csv" >"$tmp/d.txt"
layout_of() { awk -F, -v pp="$1" 'NR > 1 && $8 == pp { print $NF }' "$tmp/d.csv" | sort -u; }
check "header: pipeline_layout appended last" bash -c "head -1 '$tmp/d.csv' | grep -q ',mfu_bf16_peak,pipeline_layout$'"
check "pp 2: Et*31|t*30mL" test "$(layout_of 2)" = 'Et*31|t*30mL'
check "pp 8: Et*7|(t*8|)*6t*6mL" test "$(layout_of 8)" = 'Et*7|(t*8|)*6t*6mL'
check "pp 16: Et*3|(t*4|)*14t*2mL" test "$(layout_of 16)" = 'Et*3|(t*4|)*14t*2mL'
check "pp 1: one stage, no string" test -z "$(layout_of 1)"
check "the table lists the shown rows' strings" grep -q '^ rank pipeline layout of the uneven splits' "$tmp/d.txt"

# The best per GPU count gains a pipeline layout column when a best row is uneven (pp 16 of 61).
"$ptsim" sweep --model deepseek-v3 --gpus 512,1024 --tp 1 --cp 8 --seq 8192 --gbs 128 \
  --recompute none --schedule 1f1b --mbs 1 --pp 16 --top 1 >"$tmp/b.txt"
check "best per GPU count: a pipeline layout column" \
  grep -q ' MFU pipeline layout$' "$tmp/b.txt"
check "best per GPU count: each row's string" \
  test "$(grep -c '% Et\*3|(t\*4|)\*14t\*2mL$' "$tmp/b.txt")" -eq 2

# Llama-3-8B's 32 layers on pp 4 are even (8 each): the column is empty, the table has no list.
"$ptsim" sweep --model llama3-8b --gpus 8 --tp 2 --pp 4 --cp 1 --mbs 1 --recompute none \
  --schedule 1f1b --top 1 --csv "$tmp/e.csv" >"$tmp/e.txt"
check "an even split: empty pipeline_layout" test "$(tail -1 "$tmp/e.csv" | awk -F, '{ print $NF }')" = ""
check "an even split: no list under the table" bash -c "! grep -q 'pipeline layout' '$tmp/e.txt'"

# --pipeline-layout and predict's --pipeline-model-parallel-layout mean the same split: the same
# step time for the same layout (Llama-3-8B, 7 + 8 + 9 + 8 layers on pp 4, tp 2).
L='Et*7|t*8|t*9|t*8L'
"$ptsim" sweep --model llama3-8b --gpus 8 --tp 2 --cp 1 --mbs 1 --recompute none --schedule 1f1b \
  --pipeline-layout "$L" --top 1 --csv "$tmp/p.csv" >/dev/null
"$ptsim" predict --model llama3-8b --gpus 8 --tp 2 --pp 4 --cp 1 --mbs 1 --recompute none \
  --schedule 1f1b --pipeline-model-parallel-layout "$L" --format csv >"$tmp/predict.csv"
check "--pipeline-layout: pp 4 only (4 stages, vp 1), its string back" \
  test "$(tail -n +2 "$tmp/p.csv" | awk -F, '{ print $8 "/" $11 "/" $NF }' | sort -u)" = "4/1/$L"
sweep_step=$(tail -1 "$tmp/p.csv" | cut -d, -f22)
predict_step=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "step_s") c = i } NR == 2 { print $c }' "$tmp/predict.csv")
check "parity with predict --pipeline-model-parallel-layout: step $sweep_step s = $predict_step s" \
  test "$sweep_step" = "$predict_step"

# DeepSeek-V3's own 32-stage layout: every pp dividing 32 that the GPUs allow, vp = 32 / pp
# (interleaved when vp > 1), each row's string the given one.
"$ptsim" sweep --model deepseek-v3 --gpus 64 --tp 1 --cp 1 --seq 4096 --gbs 1024 --ep 4 \
  --recompute none --mbs 1 --pipeline-layout 'Et|(tt|)*30mL' --top 1 --csv "$tmp/v.csv" >/dev/null
check "pp x vp = 32 stages on every row" \
  test "$(tail -n +2 "$tmp/v.csv" | awk -F, '{ print $8 * $11 }' | sort -u)" = 32
check "vp > 1 only with the interleaved schedule" \
  test "$(tail -n +2 "$tmp/v.csv" | awk -F, '$11 > 1 && $15 != "interleaved"' | wc -l)" -eq 0
check "each row's string is the layout given" \
  test "$(tail -n +2 "$tmp/v.csv" | awk -F, '{ print $NF }' | sort -u)" = 'Et|(t*2|)*30mL'

# Nothing runs (Llama-3-70B on 8 GPUs, tp 2, pp 4: weights, gradients and optimizer states alone
# are ~1.1 TB over 8 GPUs): the closest layouts' predict command lines carry the given split,
# which --decoder-first/last-pipeline-num-layers cannot say (a middle stage of 21, one of 20),
# and predict reads it back as the same layout.
N='Et*19|t*21|t*20|t*20L'
"$ptsim" sweep --model llama3-70b --gpus 8 --tp 2 --cp 1 --mbs 1 --recompute none --schedule 1f1b \
  --pipeline-layout "$N" --top 1 >"$tmp/n.txt"
check "nothing runs: a headline" grep -q '^NOTHING RUNS' "$tmp/n.txt"
grep -m1 '^1\. ptsim predict ' "$tmp/n.txt" | sed 's/^1\. ptsim //' >"$tmp/n.cmd"
check "its command line carries the split, shell-quoted" grep -qF -- "--pipeline-model-parallel-layout '$N'" "$tmp/n.cmd"
eval "cmd=($(cat "$tmp/n.cmd"))" # as a shell reads it
"$ptsim" "${cmd[@]}" --format csv >"$tmp/n.csv" 2>/dev/null
check "predict takes that command line, the same split (19, 21, 20, 20 layers)" \
  test "$(tail -n +2 "$tmp/n.csv" | awk -F, '{ print $16 }' | tr '\n' ' ')" = "19 21 20 20 "

# Refused, exit 2, one line naming the flag: a bad string, one that does not hold the model's
# layers (59 of 61), one beside --vp.
run 2 sweep --model deepseek-v3 --gpus 64 --pipeline-layout 'Et|(tx|)*30mL'
check "a bad string: exit 2 naming --pipeline-layout" one_line '^ptsim sweep: --pipeline-layout: '
run 2 sweep --model deepseek-v3 --gpus 64 --pipeline-layout 'Et|(tt|)*29mL'
check "59 layers of 61: exit 2 naming --pipeline-layout and the model" \
  one_line "^ptsim sweep: --pipeline-layout, model deepseek-v3: .*59 transformer layers ('t'), but --num-layers is 61"
run 2 sweep --pipeline-layout 'Et*15|t*17L' --vp 2
check "--vp beside it: exit 2" one_line '^ptsim sweep: --pipeline-layout gives vp'

# A layout that no layout of the sweep takes says why (exit 2, no valid layout): 3 stages on 8
# GPUs are pp 1 x vp 3 only (pp 3 divides no GPU count left), and the interleaved schedule needs
# two stages or more; with --pp 2, no pp tried divides 3.
run 2 sweep --model llama3-8b --gpus 8 --pipeline-layout 'Et*10|t*11|t*11L'
check "3 stages on pp 1: rejected, by reason" \
  grep -q -- '--pipeline-layout: vp N at pp N runs under none of the sweep.s schedules' "$tmp/err"
run 2 sweep --model llama3-8b --gpus 8 --pp 2 --pipeline-layout 'Et*10|t*11|t*11L'
check "3 stages, --pp 2: rejected, by reason" \
  grep -q -- '--pipeline-layout: N stages, a multiple of no pp tried' "$tmp/err"

exit $((fails > 0))
