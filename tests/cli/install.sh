#!/usr/bin/env bash
# The installed ptsim: `cmake --install BUILD --prefix DIR` puts bin/ptsim,
# lib/libptsim.so*, include/ptsim.h and the data the command reads
# (share/ptsim) into DIR; the installed command runs from anywhere without
# PTSIM_DATA_DIR and prints what the build tree's prints; a C program
# compiles against the installed header and library alone and gets the
# same JSON (skipped, exit 77, when there is no C compiler; $CFLAGS: a
# sanitized build's, which its library needs in the program too).
set -u
. "$(dirname "$0")/common.bash" "$1"
src=${SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BUILDDIR:-$(dirname "$ptsim")}
cmake=${CMAKE_COMMAND:-cmake}
prefix="$tmp/prefix with space"
elsewhere="$tmp/elsewhere"
mkdir -p "$elsewhere"

if ! "$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1; then
  cat "$tmp/install.log" >&2
  echo "not ok - cmake --install"
  exit 1
fi
echo "ok - cmake --install $build --prefix DIR"
for f in bin/ptsim lib/libptsim.so include/ptsim.h share/ptsim/models/llama3-70b.ini \
    share/ptsim/hw_profiles/h100-80g.ini share/ptsim/validate/error_bands.ini \
    share/ptsim/validate/data/published/README.md; do
  check "installed: $f" test -e "$prefix/$f"
done
check "the library's SONAME is libptsim.so.MAJOR" bash -c \
  "ls '$prefix'/lib/libptsim.so.[0-9]* >/dev/null && readelf -d '$prefix/lib/libptsim.so' 2>/dev/null | grep -q 'SONAME.*libptsim\.so\.[0-9]*\]' || ! command -v readelf >/dev/null"

# The installed command, from another folder, without PTSIM_DATA_DIR: the
# same bytes as the build tree's with the source tree's data.
installed() { (cd "$elsewhere" && env -u PTSIM_DATA_DIR "$prefix/bin/ptsim" "$@"); }
flags=(--model llama3-70b --gpus 64 --tp 8 --pp 4 --vp 5 --gbs 64 --seq 4096)
PTSIM_DATA_DIR="$src" "$ptsim" predict --format json "${flags[@]}" >"$tmp/build.json"
installed predict --format json "${flags[@]}" >"$tmp/installed.json" 2>"$tmp/installed.err"
check "installed predict runs without PTSIM_DATA_DIR" test -s "$tmp/installed.json"
check "installed predict --format json == the build tree's" cmp -s "$tmp/build.json" "$tmp/installed.json"
PTSIM_DATA_DIR="$src" "$ptsim" memory --format json --model mixtral-8x7b --gpus 16 --ep 8 >"$tmp/build_m.json"
installed memory --format json --model mixtral-8x7b --gpus 16 --ep 8 >"$tmp/installed_m.json"
check "installed memory --format json == the build tree's" cmp -s "$tmp/build_m.json" "$tmp/installed_m.json"
installed predict --model no-such-model >/dev/null 2>"$tmp/unknown.err"
check "an unknown model names the installed data folder" \
  grep -q "share/ptsim/models/no-such-model.ini" "$tmp/unknown.err"
check "the published suite is installed with it" bash -c \
  "cd '$elsewhere' && env -u PTSIM_DATA_DIR '$prefix/bin/ptsim' validate --suite published >/dev/null"
check "installed --version" bash -c "cd '$elsewhere' && '$prefix/bin/ptsim' --version | grep -q '^ptsim [0-9]'"

[ "$fails" -eq 0 ] || exit 1

# A program of its own: the installed header and library, nothing else.
cc=${CC:-cc}
if ! command -v "$cc" >/dev/null 2>&1; then
  echo "# SKIP no C compiler ($cc): the installed header and library not compiled against"
  exit 77
fi
cat >"$tmp/prog.c" <<'C'
#include <ptsim.h>
#include <stdio.h>

/* Predicts the job argv names and prints its JSON; exit 2 on bad input. */
int main(int argc, char **argv) {
  (void)argc;
  if (ptsim_api_version() / 10000 != PTSIM_VERSION_MAJOR) {
    fprintf(stderr, "libptsim %s is not this header's major version\n", ptsim_api_version_string());
    return 1;
  }
  PtsimApiError *error = NULL;
  PtsimApiJob *job = ptsim_api_job_new((const char *const *)argv + 1, NULL, NULL, &error);
  PtsimApiResult *result = job ? ptsim_api_predict(job, NULL, &error) : NULL;
  if (!result) {
    fprintf(stderr, "prog: %s\n", ptsim_api_error_message(error));
    int status = ptsim_api_error_exit_status(error);
    ptsim_api_error_free(error);
    ptsim_api_job_free(job);
    return status;
  }
  fputs(ptsim_api_result_json(result, NULL), stdout);
  ptsim_api_result_free(result);
  ptsim_api_job_free(job);
  return 0;
}
C
compile() { # the linker's notes (a sanitizer runtime's) shown only on failure
  "$cc" ${CFLAGS:-} -I"$prefix/include" "$tmp/prog.c" -L"$prefix/lib" -lptsim -o "$tmp/prog" \
    2>"$tmp/cc.err" || { cat "$tmp/cc.err" >&2; return 1; }
}
check "a C program compiles: cc -I PREFIX/include prog.c -L PREFIX/lib -lptsim" compile
if [ -x "$tmp/prog" ]; then
  (cd "$elsewhere" && env -u PTSIM_DATA_DIR LD_LIBRARY_PATH="$prefix/lib" "$tmp/prog" "${flags[@]}") \
    >"$tmp/prog.json" 2>"$tmp/prog.err"
  check "it runs and prints the command's JSON" cmp -s "$tmp/build.json" "$tmp/prog.json"
  rc=0
  (cd "$elsewhere" && env -u PTSIM_DATA_DIR LD_LIBRARY_PATH="$prefix/lib" "$tmp/prog" --tp 3) \
    >/dev/null 2>"$tmp/prog.err" || rc=$?
  check "bad input: its message and exit 2" bash -c \
    "[ $rc -eq 2 ] && grep -q '^prog: .*--tp 3' '$tmp/prog.err'"
fi
[ "$fails" -eq 0 ]
