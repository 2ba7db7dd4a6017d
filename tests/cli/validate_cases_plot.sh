#!/usr/bin/env bash
# Every CSV ptsim writes is read by the commands that take one: plot validation reads
# validate --megatron-cases --format csv (family as the source, case as the run, the
# iteration times), one point per compared case that has an iteration time (the
# memory-only cases have none and are left out).
set -u
. "$(dirname "$0")/common.bash" "$1"

"$ptsim" validate --megatron-cases "$SRCDIR/tests/data/megatron_cases" --format csv >"$tmp/c.csv" 2>/dev/null
# the compared rows with both iteration times, counted by the header's names
want=$(python3 - "$tmp/c.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
timed = [r for r in rows if r["status"] == "compared" and r["measured_iteration_time_s"]
         and r["predicted_iteration_time"]]
print(len(timed), " ".join(sorted({r["family"] for r in timed})) + " ")
PY
)
families=${want#* }
want=${want%% *}
check "some cases have an iteration time" test "$want" -gt 0
if command -v gnuplot >/dev/null 2>&1; then
  run 0 plot validation --from "$tmp/c.csv" --out "$tmp/c.png"
  check "plot validation reads validate --megatron-cases --format csv" test -s "$tmp/c.png"
  check "one point per compared case with a time ($want)" test "$(grep -vc '^#' "$tmp/c.tsv")" -eq "$want"
  check "the families are the sources" \
    test "$(grep -v '^#' "$tmp/c.tsv" | cut -f2 | sort -u | tr '\n' ' ')" = "$families"
else
  echo "ok - # SKIP gnuplot is missing"
fi
# a CSV with none of the three sets of names is refused naming the columns
printf 'a,b\n1,2\n' >"$tmp/bad.csv"
run 2 plot validation --from "$tmp/bad.csv" --out "$tmp/b.png"
check "no known columns: exit 2 naming the first missing" grep -q "the header has no column 'source'" "$tmp/err"

exit $((fails > 0))
