#!/usr/bin/env bash
# End-to-end checks of `ptsim alloc-replay` and validate/snapshot_to_trace.py: the
# hand-made snapshot fixture (tests/data/snapshot) converted and replayed, its numbers
# against values worked by hand from the documented allocator rules, the observed-vs-
# emulated comparison, and bad input exiting 2 with file:line.  Needs python3 (skip 77).
set -u
. "$(dirname "$0")/common.bash" "$1"
src=${SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }
MiB=1048576
# json FILE EXPR: evaluates EXPR with d = the parsed JSON document, true -> exit 0
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1"; }

check "alloc-replay --help" "$ptsim" alloc-replay --help
check "converter runs" python3 "$src/validate/snapshot_to_trace.py" \
  "$src/tests/data/snapshot/fixture.pickle" -o "$tmp/f.trace"
check "converter infers the empty_cache" grep -q '^empty_cache' "$tmp/f.trace"
check "reused address is a new id" grep -q '^alloc a7f0000000000\.1 ' "$tmp/f.trace"
check "second stream is stream 1" grep -q '^alloc a7f0020000000 4194304 1$' "$tmp/f.trace"
check "pre-history free skipped" bash -c "! grep -q a7eff00000000 '$tmp/f.trace'"

"$ptsim" alloc-replay --format json "$tmp/f.trace" >"$tmp/f.json"
check "replay runs" test -s "$tmp/f.json"
# 100 MiB + 1 B -> a 102 MiB segment (A4); the 1000 B small alloc a 2 MiB one; the
# 4 MiB alloc on the second stream a 20 MiB one: 102 + 2 + 20 = 124 MiB.
check "peak reserved 124 MiB" json "$tmp/f.json" "d['peak_reserved_bytes'] == 124*$MiB"
# (100 MiB + 1) rounded to 512 B, plus 1000 rounded to 1024.
check "peak allocated" json "$tmp/f.json" "d['peak_allocated_bytes'] == 100*$MiB + 512 + 1024"
check "fragmentation" json "$tmp/f.json" "abs(d['fragmentation'] - (1 - (100*$MiB+1536)/(124*$MiB))) < 1e-12"
check "event counts" json "$tmp/f.json" "(d['events'], d['allocs'], d['frees'], d['empty_caches']) == (10, 5, 4, 1)"
check "no OOM unlimited" json "$tmp/f.json" "d['ooms'] == 0 and d['first_oom'] is None"
# after empty_cache the 3 MiB alloc splits a fresh 20 MiB segment: 17 MiB inactive split
check "inactive split at end" json "$tmp/f.json" "d['inactive_split_bytes'] == 17*$MiB"
check "observed peak 124 MiB" json "$tmp/f.json" "d['observed']['peak_reserved_bytes'] == 124*$MiB"
check "emulation matches the documented rules exactly" json "$tmp/f.json" \
  "d['observed']['events'] == 10 and d['observed']['max_abs_difference_bytes'] == 0"

# Capacity 0.1 GiB (102.4 MiB): the 102 MiB segment fits, the next 2 MiB does not.
line=$(grep -n '^alloc a7f0010000000 ' "$tmp/f.trace" | cut -d: -f1)
"$ptsim" alloc-replay --format json --capacity-gib 0.1 "$tmp/f.trace" >"$tmp/oom.json"
check "first OOM at the small alloc" json "$tmp/oom.json" \
  "d['first_oom']['line'] == $line and d['first_oom']['size_bytes'] == 1000 and d['first_oom']['reserved_bytes'] == 102*$MiB"
"$ptsim" alloc-replay --capacity-gib 0.1 "$tmp/f.trace" >"$tmp/oom.txt"
check "text names the OOM line" grep -q "first OOM *line $line:" "$tmp/oom.txt"

# Comparison arithmetic on a hand-written trace: observed 102 MiB then 0 (wrong on
# purpose: 1 MiB off at the second event), emulated 102 MiB then 102 MiB.
cat >"$tmp/cmp.trace" <<'T'
# a plain comment; "# reserved for later" is plain text too
alloc x 104857601 0  # reserved 106954752
alloc y 1000 0
# reserved 108003328
free x
T
"$ptsim" alloc-replay --format json "$tmp/cmp.trace" >"$tmp/cmp.json"
check "observations attach to their events" json "$tmp/cmp.json" "d['observed']['events'] == 2"
check "max difference 1 MiB at line 3" json "$tmp/cmp.json" \
  "d['observed']['max_abs_difference_bytes'] == $MiB and d['observed']['max_difference_line'] == 3"
check "mean difference 0.5 MiB" json "$tmp/cmp.json" "d['observed']['mean_abs_difference_bytes'] == $MiB/2"
check "expandable segments what-if" bash -c \
  "'$ptsim' alloc-replay --format json --alloc-conf expandable_segments:True '$tmp/f.trace' >'$tmp/x.json'"
check "expandable maps 20 MiB pages" json "$tmp/x.json" "d['peak_reserved_bytes'] % (2*$MiB) == 0"
printf 'alloc a 1 0\n' >"$tmp/plain.trace"
check "no observations: no comparison" bash -c \
  "'$ptsim' alloc-replay '$tmp/plain.trace' | grep -q 'nothing to compare'"

# Errors: exit 2, one line naming file:line.
printf 'alloc a 10 0\n\nfree b\n' >"$tmp/bad.trace"
"$ptsim" alloc-replay "$tmp/bad.trace" >/dev/null 2>"$tmp/err"; rc=$?
check "bad line exits 2" test "$rc" -eq 2
check "bad line names file:line" grep -q "bad.trace:3: " "$tmp/err"
check "error is one line" test "$(wc -l <"$tmp/err")" -eq 1
"$ptsim" alloc-replay "$tmp/none.trace" >/dev/null 2>"$tmp/err"; rc=$?
check "missing file exits 2" test "$rc" -eq 2
check "missing file named" grep -q "none.trace" "$tmp/err"
"$ptsim" alloc-replay >/dev/null 2>&1; check "no TRACE exits 2" test $? -eq 2
"$ptsim" alloc-replay --capacity-gib -1 "$tmp/f.trace" >/dev/null 2>&1
check "bad capacity exits 2" test $? -eq 2
for bad in nan inf 0 1e999; do
  "$ptsim" alloc-replay --capacity-gib "$bad" "$tmp/f.trace" >/dev/null 2>"$tmp/err"
  check "capacity $bad exits 2 naming the flag" test $? -eq 2 -a "$(grep -c -- "--capacity-gib '$bad'" "$tmp/err")" -eq 1
done
printf '# nothing but comments\n\n' >"$tmp/empty.trace"
"$ptsim" alloc-replay "$tmp/empty.trace" >/dev/null 2>"$tmp/err"
check "a trace without events exits 2" test $? -eq 2
check "and says so" grep -q "empty.trace: no events" "$tmp/err"
printf 'alloc a 1048576 0\n# reserved -5\n' >"$tmp/neg.trace"
"$ptsim" alloc-replay "$tmp/neg.trace" >/dev/null 2>"$tmp/err"
check "'# reserved -5' is a bad line" grep -q "neg.trace:2: " "$tmp/err"
"$ptsim" alloc-replay --alloc-conf max_split_size_mb:8796093022208 "$tmp/f.trace" >/dev/null 2>"$tmp/err"
check "huge max_split_size_mb blames the flag, not the trace" \
  grep -q -- "--alloc-conf max_split_size_mb '8796093022208' is not allowed" "$tmp/err"
"$ptsim" alloc-replay --alloc-conf max_split_size_mb:1 "$tmp/f.trace" >/dev/null 2>&1
check "bad alloc-conf exits 2" test $? -eq 2
"$ptsim" alloc-replay --format csv "$tmp/f.trace" >/dev/null 2>&1
check "csv refused" test $? -eq 2
# The converter refuses pickles that name any class (no code runs on load).
python3 -c "import pickle,collections,sys; pickle.dump(collections.OrderedDict(a=1), open(sys.argv[1],'wb'))" "$tmp/cls.pickle"
python3 "$src/validate/snapshot_to_trace.py" "$tmp/cls.pickle" >/dev/null 2>"$tmp/err"; rc=$?
check "class in pickle refused, exit 2" test "$rc" -eq 2
check "refusal names the class" grep -q "refusing to load collections.OrderedDict" "$tmp/err"
python3 "$src/validate/snapshot_to_trace.py" "$tmp/none.pickle" >/dev/null 2>&1
check "converter: missing file exits 2" test $? -eq 2

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
