#!/usr/bin/env bash
# run.sh BUILD SECONDS [TARGET...] — runs each libFuzzer target of a
# PTSIM_FUZZ build for SECONDS, from a corpus seeded with the fixtures
# (seeds.sh) and grown in BUILD/fuzz/corpus/TARGET, with the shared
# dictionary.  A crash leaves BUILD/fuzz/crashes/TARGET/crash-* and the run
# fails: copy the file into tests/data/fuzz_regressions/TARGET/ with the
# fix, and the normal build replays it from then on.  Prints, per target,
# the executions and the corpus size; exits 1 if any target crashed.
set -u
build=$1
seconds=$2
shift 2
cd "$(dirname "$0")/../.."
. tests/fuzz/seeds.sh
targets=${*:-$fuzz_targets}
failed=0
for t in $targets; do
  bin="$build/fuzz_$t"
  [ -x "$bin" ] || { echo "fuzz: $bin missing (build with -DPTSIM_FUZZ=ON)"; exit 2; }
  corpus="$build/fuzz/corpus/$t"
  crashes="$build/fuzz/crashes/$t"
  mkdir -p "$corpus" "$crashes"
  seeds "$t" | while read -r f; do cp -f "$f" "$corpus/seed-$(basename "$f")"; done
  [ -d "tests/data/fuzz_regressions/$t" ] && cp -f tests/data/fuzz_regressions/"$t"/* "$corpus"/ 2>/dev/null
  log="$build/fuzz/$t.log"
  # -rss_limit_mb: a parser must not need more; -timeout: nor hang on one input.
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$bin" "$corpus" -dict=tests/fuzz/ptsim.dict -max_total_time="$seconds" \
      -rss_limit_mb=2048 -timeout=10 -max_len=65536 -print_final_stats=1 \
      -artifact_prefix="$crashes/" >"$log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  echo "fuzz $t: ${runs:-?} executions in ${seconds}s, corpus $(ls "$corpus" | wc -l) inputs, exit $rc"
  if [ "$rc" -ne 0 ]; then
    failed=1
    grep -m 5 -E "ERROR|SUMMARY|runtime error|Assertion|ERROR:" "$log" | sed 's/^/    /'
    ls "$crashes" | sed 's/^/    artifact: /'
  fi
done
exit $failed
