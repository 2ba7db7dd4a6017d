#!/usr/bin/env bash
# replay.sh BUILD — the ctest test `fuzz_regressions`: every fuzz target of
# the normal build (fuzz_TARGET_replay) over its seeds and over every crash
# kept in tests/data/fuzz_regressions/TARGET/.  A crash that comes back
# fails the test.
set -u
build=$1
cd "$(dirname "$0")/../.."
. tests/fuzz/seeds.sh
fails=0
total=0
for t in $fuzz_targets; do
  total=$((total + 1))
  bin="$build/fuzz_${t}_replay"
  inputs=$(seeds "$t")
  [ -d "tests/data/fuzz_regressions/$t" ] && inputs="$inputs tests/data/fuzz_regressions/$t"
  # shellcheck disable=SC2086
  if out=$("$bin" $inputs 2>&1); then
    echo "ok - $t: $out"
  else
    echo "not ok - $t"
    echo "$out" | tail -20 | sed 's/^/    /'
    fails=$((fails + 1))
  fi
done
echo "$((total - fails)) passed, $fails failed"
[ "$fails" -eq 0 ]
