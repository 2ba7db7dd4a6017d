#!/usr/bin/env bash
# End-to-end checks of `ptsim plot`: exit codes and the files it leaves.
# Skips (77) when gnuplot is not installed, except for the bad-input checks.
set -u
ptsim=$1
fails=0
check() { # name, condition-command...
  local name=$1; shift
  if "$@"; then echo "ok - $name"; else echo "not ok - $name"; fails=$((fails + 1)); fi
}
expect_exit() { # code, args...
  local want=$1; shift
  "$ptsim" "$@" >"$tmp/out" 2>"$tmp/err"; local got=$?
  [ "$got" -eq "$want" ] || { echo "  exit $got, wanted $want for: $*" >&2; cat "$tmp/err" >&2; return 1; }
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

check "plot --help runs" expect_exit 0 plot --help
check "no kind is bad input" expect_exit 2 plot --out "$tmp/x.png"
check "unknown kind is bad input" expect_exit 2 plot frobnicate --out "$tmp/x.png"
check "missing --out is bad input" expect_exit 2 plot memory
check "bad extension is bad input" expect_exit 2 plot memory --out "$tmp/x.jpg"
check "bad job option is bad input" expect_exit 2 plot memory --tp 3 --out "$tmp/x.png"
check "missing output folder is bad input" expect_exit 2 plot memory --out "$tmp/no/such/x.png"
check "gnuplot missing exits 1" bash -c "PATH=/nonexistent '$ptsim' plot memory --out '$tmp/np.png' 2>&1 >/dev/null | grep -q 'apt-get install gnuplot-nox'; [ \${PIPESTATUS[0]} -eq 1 ]"

if ! command -v gnuplot >/dev/null; then
  echo "# SKIP gnuplot not installed"; [ "$fails" -eq 0 ] && exit 77 || exit 1
fi
check "memory png" expect_exit 0 plot memory --pp 4 --out "$tmp/m.png"
check "memory leaves tsv + gp" test -s "$tmp/m.tsv" -a -s "$tmp/m.gp"
check "stdout names the figure" grep -q "$tmp/m.png" "$tmp/out"
check "timeline pdf" expect_exit 0 plot timeline --pp 4 --gbs 8 --gpus 4 --out "$tmp/t.pdf"
check "timeline is a PDF" bash -c "head -c 4 '$tmp/t.pdf' | grep -q '%PDF'"
check "the .gp reruns from its folder" bash -c "rm '$tmp/t.pdf' && cd '$tmp' && gnuplot t.gp && test -s t.pdf"
[ "$fails" -eq 0 ]
