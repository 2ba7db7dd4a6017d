# Shared set-up of the CLI test scripts (tests/cli/*.sh), sourced by each with the binary as $1.
# Named .bash so CMake's tests/cli/*.sh glob does not take it for a test of its own.
# Gives: $ptsim (absolute), $tmp (removed on exit), $fails, and the helpers below; the
# scripts' own checks are theirs.
ptsim=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check() { # name, condition-command...
  local name=$1; shift
  if "$@"; then echo "ok - $name"; else echo "not ok - $name"; fails=$((fails + 1)); fi
}

run() { # code, args... : stdout in $tmp/out, stderr in $tmp/err
  local want=$1; shift
  "$ptsim" "$@" >"$tmp/out" 2>"$tmp/err"; local got=$?
  [ "$got" -eq "$want" ] || { echo "  exit $got, wanted $want for: $*" >&2; cat "$tmp/err" >&2; return 1; }
}

one_line() { # pattern: stderr is that one line
  [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q -- "$1" "$tmp/err"
}
