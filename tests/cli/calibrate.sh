#!/usr/bin/env bash
# ptsim calibrate: measured [efficiency] values replace the profile's, the
# result loads, bad measurements write nothing.
set -u
ptsim=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
check() { local name=$1; shift; if "$@"; then echo "ok - $name"; else echo "not ok - $name"; fails=$((fails + 1)); fi; }
printf '[efficiency]\ngemm_efficiency_max = 0.7\ngemm_half_gflops = 5\nmemory_efficiency = 0.8\n' >"$tmp/m.ini"
check "calibrate runs" "$ptsim" calibrate --hw h100-80g --out "$tmp/c.ini" "$tmp/m.ini"
check "measured value lands" grep -q "^gemm_efficiency_max *= *0.7$" "$tmp/c.ini"
check "untouched keys stay" grep -q "^attention_efficiency *=" "$tmp/c.ini"
check "result is a usable profile" "$ptsim" memory --hw "$tmp/c.ini"
printf '[efficiency]\ngemm_efficiency_max = 7\n' >"$tmp/bad.ini"
"$ptsim" calibrate --hw h100-80g --out "$tmp/bad-out.ini" "$tmp/bad.ini" 2>/dev/null
check "invalid measurement is bad input" test $? -eq 2
check "and nothing is written" test ! -e "$tmp/bad-out.ini"
printf '[gpu]\nname = x\n' >"$tmp/none.ini"
"$ptsim" calibrate --hw h100-80g --out "$tmp/n.ini" "$tmp/none.ini" 2>/dev/null
check "no [efficiency] group is bad input" test $? -eq 2
"$ptsim" calibrate --hw h100-80g "$tmp/m.ini" 2>/dev/null
check "missing --out is bad input" test $? -eq 2
[ "$fails" -eq 0 ] && echo "all calibrate checks passed"
exit $((fails > 0))
