#!/usr/bin/env bash
# python/run_tests.sh BUILD — the Python part of `make test`: a virtual
# environment in BUILD/pyenv with the build backend and pytest (pandas when
# it installs: its DataFrame test is skipped otherwise), the package
# installed there from python/ (built by scikit-build-core in BUILD/pyext,
# incrementally on later runs), then its tests against BUILD's ptsim command.
# Skipped, saying so, when there is no python3.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-build}" && pwd)
py=${PYTHON:-python3}
if ! command -v "$py" >/dev/null 2>&1; then
  echo "ptsim python: SKIPPED: no $py on PATH, so the Python package is neither built nor tested"
  exit 0
fi
venv=$build/pyenv
if [ ! -x "$venv/bin/python" ]; then
  echo "ptsim python: creating $venv"
  "$py" -m venv "$venv"
fi
pip=("$venv/bin/python" -m pip --disable-pip-version-check -q)
if ! "$venv/bin/python" -c 'import scikit_build_core, pytest' 2>/dev/null; then
  echo "ptsim python: installing the build backend and pytest into $venv"
  "${pip[@]}" install "scikit-build-core>=0.8" pytest
  "${pip[@]}" install pandas >/dev/null 2>&1 ||
    echo "ptsim python: pandas did not install; the DataFrame test will be skipped"
fi
echo "ptsim python: building and installing the package (python/) into $venv"
CMAKE_BUILD_PARALLEL_LEVEL=${JOBS:-2} "${pip[@]}" install --no-build-isolation \
  --config-settings=build-dir="$build/pyext" "$src/python"
cd "$src/python/tests"
PTSIM_BIN=$build/ptsim exec "$venv/bin/python" -m pytest -q -p no:cacheprovider
