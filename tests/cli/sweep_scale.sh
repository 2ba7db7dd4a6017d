#!/usr/bin/env bash
# Sweeps at scale: the engine's periodic shortcut changes no byte of any
# output (--no-shortcut simulates every event), a sweep split into shards
# and merged is the same sweep, and progress goes to a terminal only.
set -u
ptsim=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
fails=0
check() { # name, condition-command...
  local name=$1; shift
  if "$@"; then echo "ok - $name"; else echo "not ok - $name"; fails=$((fails + 1)); fi
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

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

[ "$fails" -eq 0 ] && echo "all sweep-scale checks passed" || echo "$fails sweep-scale checks failed"
exit $((fails > 0))
