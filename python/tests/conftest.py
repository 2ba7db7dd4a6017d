"""Shared fixtures: the ptsim command the package is compared with
($PTSIM_BIN, e.g. build/ptsim, which `make test` sets; else the command
installed inside the package), and the repository's folders."""

import os
import pathlib
import subprocess

import pytest

import ptsim

REPO = pathlib.Path(__file__).resolve().parents[2]


def ptsim_bin() -> str:
    given = os.environ.get("PTSIM_BIN")
    if given:
        return given
    return str(pathlib.Path(ptsim.__file__).parent / "bin" / "ptsim")


def run_cli(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    """`ptsim ARGS...` with the repository's data (as ctest runs it)."""
    env = dict(os.environ, PTSIM_DATA_DIR=str(REPO))
    return subprocess.run(
        [ptsim_bin(), *args], capture_output=True, text=True, env=env, check=check, timeout=300
    )


@pytest.fixture(scope="session")
def repo() -> pathlib.Path:
    return REPO
