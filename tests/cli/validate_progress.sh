#!/usr/bin/env bash
# validate's progress (sim/cli/progress.c, the sweep's rule): on stderr, only when it is a
# terminal, only past the first second, never in stdout (whose bytes are the same with and
# without a terminal), closed by a line with every row or case done.
set -u
. "$(dirname "$0")/common.bash" "$1"

pub="$SRCDIR/validate/data/published"
# the published suite four times over: several seconds of rows, more than a second anywhere
inputs=$(for i in 1 2 3 4; do ls "$pub"/*.csv; done | tr '\n' ' ')

"$ptsim" validate $inputs --format csv >"$tmp/plain.csv" 2>"$tmp/plain.err"
check "no terminal: no progress on stderr" bash -c "! grep -q 'validate: \[' '$tmp/plain.err'"
rows=$(($(wc -l <"$tmp/plain.csv") - 1)) # one CSV row per run

if command -v script >/dev/null 2>&1; then
  start=$SECONDS
  script -qc "'$ptsim' validate $inputs --format csv >'$tmp/tty.csv'" "$tmp/tty" >/dev/null 2>&1
  seconds=$((SECONDS - start))
  check "a terminal: stdout byte-identical" cmp -s "$tmp/plain.csv" "$tmp/tty.csv"
  tr '\r' '\n' <"$tmp/tty" | grep -E '^validate: ' >"$tmp/progress"
  check "a terminal: the rows done of all ($rows), their rate and the time left" \
    grep -Eq "^validate: \[[# ]+\] [0-9]+/$rows rows, [0-9]+/s(, ETA [0-9]+ (s|min))?" "$tmp/progress"
  check "a terminal: the last line has every row" \
    bash -c "tail -1 '$tmp/progress' | grep -Eq '^validate: \[#+\] $rows/$rows rows'"
  check "a terminal: no more than a line a second, plus the last" \
    test "$(wc -l <"$tmp/progress")" -le "$((seconds + 2))"

  # --megatron-cases: cases done of all, the report unchanged
  "$ptsim" validate --megatron-cases "$SRCDIR/tests/data/megatron_cases" >"$tmp/cases.txt" 2>/dev/null
  script -qc "'$ptsim' validate --megatron-cases '$SRCDIR/tests/data/megatron_cases' >'$tmp/cases_tty.txt'" \
    "$tmp/ctty" >/dev/null 2>&1
  check "--megatron-cases on a terminal: stdout byte-identical" cmp -s "$tmp/cases.txt" "$tmp/cases_tty.txt"
  check "--megatron-cases: a progress line, if any, counts cases" \
    bash -c "! tr '\r' '\n' <'$tmp/ctty' | grep -q '^validate: ' ||
             tr '\r' '\n' <'$tmp/ctty' | grep -Eq '^validate: \[[# ]+\] [0-9]+/[0-9]+ cases'"
else
  echo "ok - # SKIP script(1) is missing: no terminal to test the progress on"
fi

[ "$fails" -eq 0 ]
