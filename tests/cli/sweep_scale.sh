#!/usr/bin/env bash
# Sweeps at scale: the engine's periodic shortcut changes no byte of any
# output (--no-shortcut simulates every event), a sweep split into shards
# and merged is the same sweep, and progress goes to a terminal only.
set -u
. "$(dirname "$0")/common.bash" "$1"

# --no-shortcut: the same CSV and table, byte for byte, on every schedule
# with microbatch counts up to 512 (long steady states).
sweep=(--model llama3-8b --gpus 8,16 --gbs 512 --seq 4096 --mbs 1,2 --cp 1
       --schedule 1f1b,gpipe,interleaved,zb-h1 --device cpu --top 5)
"$ptsim" sweep "${sweep[@]}" --csv "$tmp/fast.csv" >"$tmp/fast.txt"
"$ptsim" sweep "${sweep[@]}" --no-shortcut --csv "$tmp/full.csv" >"$tmp/full.txt"
check "sweep --no-shortcut: the same CSV bytes" cmp -s "$tmp/fast.csv" "$tmp/full.csv"
check "sweep --no-shortcut: the same table" \
  cmp -s <(grep -v "^all " "$tmp/fast.txt") <(grep -v "^all " "$tmp/full.txt")
check "sweep --no-shortcut: a real sweep" test "$(wc -l <"$tmp/fast.csv")" -gt 100
for s in "--schedule 1f1b" "--schedule gpipe" "--schedule interleaved --vp 2" "--schedule zb-h1"; do
  # shellcheck disable=SC2086
  "$ptsim" predict --format json --gpus 16 --tp 2 --pp 4 --gbs 256 $s >"$tmp/p1.json"
  # shellcheck disable=SC2086
  "$ptsim" predict --format json --gpus 16 --tp 2 --pp 4 --gbs 256 $s --no-shortcut >"$tmp/p2.json"
  check "predict --no-shortcut $s: the same JSON (event count included)" cmp -s "$tmp/p1.json" "$tmp/p2.json"
done

# --shard K/N + --merge: four shards merged are the one run, byte for byte
# (CSV; the table names the shards instead of the device), held in memory
# and streamed, with Monte-Carlo samples and the allocator columns too.
expect_exit2() { # args...: exit 2 with one line on stderr
  "$ptsim" "$@" >/dev/null 2>"$tmp/err"; local got=$?
  [ "$got" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] ||
    { echo "  exit $got for: $*" >&2; cat "$tmp/err" >&2; return 1; }
}
for mode in held streamed; do
  extra=(); [ "$mode" = streamed ] && extra=(--in-memory-max 0)
  split=(--model llama3-8b --gpus 8,16 --gbs 16 --mbs 1,2 --recompute none
         --samples 3 --jitter 0.05 --allocator --device cpu --top 7 "${extra[@]}")
  "$ptsim" sweep "${split[@]}" --csv "$tmp/one.csv" >"$tmp/one.txt"
  for k in 1 2 3 4; do
    "$ptsim" sweep "${split[@]}" --shard "$k/4" --csv "$tmp/part-$k.csv" >/dev/null
  done
  # any order of the files
  "$ptsim" sweep "${split[@]}" --merge "$tmp/part-3.csv" "$tmp/part-1.csv" "$tmp/part-4.csv" \
    "$tmp/part-2.csv" --csv "$tmp/merged.csv" >"$tmp/merged.txt"
  check "$mode: 4 shards merged == one run (CSV bytes)" cmp -s "$tmp/one.csv" "$tmp/merged.csv"
  check "$mode: 4 shards merged == one run (table, top K)" \
    cmp -s <(sed -e 's/evaluated on .*[;,] \([0-9]* fit\)/\1/' -e '/^all /d' "$tmp/one.txt") \
           <(sed -e 's/evaluated on .*[;,] \([0-9]* fit\)/\1/' -e '/^all /d' "$tmp/merged.txt")
  check "$mode: the shards split the layouts" \
    test "$(cat "$tmp"/part-?.csv | grep -vc '^layout_index\|^#')" -eq "$(($(wc -l <"$tmp/one.csv") - 1))"
done
# Without --allocator the shards keep their layouts as evaluated and the merge
# settles the `runs` verdict of the top K as the one run does.
for mode in held streamed; do
  extra=(); [ "$mode" = streamed ] && extra=(--in-memory-max 0)
  plain=(--model llama3-8b --gpus 8,16 --gbs 64 --seq 8192 --device cpu --top 7 "${extra[@]}")
  "$ptsim" sweep "${plain[@]}" --csv "$tmp/one.csv" >"$tmp/one.txt"
  for k in 1 2 3; do
    "$ptsim" sweep "${plain[@]}" --shard "$k/3" --csv "$tmp/plain-$k.csv" >/dev/null
  done
  "$ptsim" sweep "${plain[@]}" --merge "$tmp"/plain-?.csv --csv "$tmp/merged.csv" >"$tmp/merged.txt"
  check "$mode, runs verdict settled at the merge: the same CSV bytes" \
    cmp -s "$tmp/one.csv" "$tmp/merged.csv"
  check "$mode, runs verdict settled at the merge: some rows by the allocator" \
    grep -q ',allocator,' "$tmp/merged.csv"
done
check "merge: a missing shard is bad input" \
  expect_exit2 sweep "${split[@]}" --merge "$tmp/part-1.csv" "$tmp/part-2.csv" "$tmp/part-4.csv"
check "merge: a shard twice is bad input" expect_exit2 sweep "${split[@]}" --merge \
  "$tmp/part-1.csv" "$tmp/part-2.csv" "$tmp/part-2.csv" "$tmp/part-3.csv" "$tmp/part-4.csv"
check "merge: shards of other flags are bad input" expect_exit2 sweep "${split[@]}" --gbs 128 \
  --merge "$tmp"/part-?.csv
check "merge: a plain CSV is bad input" expect_exit2 sweep "${split[@]}" --merge "$tmp/one.csv"
check "shard: K > N is bad input" expect_exit2 sweep --shard 3/2 --csv "$tmp/x.csv"
check "shard: no --csv is bad input" expect_exit2 sweep --shard 1/2

# Progress goes to a terminal only: with stderr a file, nothing at all.
"$ptsim" sweep "${sweep[@]}" >/dev/null 2>"$tmp/progress.err"
check "no progress line when stderr is not a terminal" test ! -s "$tmp/progress.err"

[ "$fails" -eq 0 ] && echo "all sweep-scale checks passed" || echo "$fails sweep-scale checks failed"
exit $((fails > 0))
