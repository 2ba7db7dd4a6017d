"""The examples run (small sizes): examples/sweep_and_plot.py writes its
figure's data, examples/autotune.py finds a layout that runs and never
claims more than the exhaustive sweep's best."""

import re
import shutil
import subprocess
import sys

from conftest import REPO


def run(script, *args):
    p = subprocess.run([sys.executable, str(REPO / "examples" / script), *args],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


def test_sweep_and_plot(tmp_path):
    out = run("sweep_and_plot.py", "--model", "llama3-8b", "--gpus", "8", "--gbs", "64",
              "--threads", "2", "--out", str(tmp_path))
    assert "valid layouts of llama3-8b on 8 x h100-80g" in out
    # the sweep's CSV holds every valid layout, one row each under its header
    lines = (tmp_path / "sweep.csv").read_text().splitlines()
    n = int(re.search(r"(\d+) valid layouts", out).group(1))
    assert len(lines) == n + 1
    if shutil.which("gnuplot"):
        assert (tmp_path / "pareto.png").stat().st_size > 0
        assert (tmp_path / "pareto.gp").exists() and (tmp_path / "pareto.tsv").exists()


def test_autotune():
    out = run("autotune.py", "--model", "llama3-8b", "--gpus", "8", "--gbs", "64", "--seq",
              "4096", "--trials", "12", "--threads", "2")
    found = float(re.search(r"\((\d+\.\d)% of it found\)", out).group(1))
    assert 0 < found <= 100.0, out


def test_sweep_shards(tmp_path):
    # the fallback (no Ray, no Dask needed): a process pool of 3 shards,
    # merged into the CSV of the one run
    p = subprocess.run([sys.executable, str(REPO / "examples" / "python" / "sweep_shards.py"),
                        "--engine", "processes", "--shards", "3", "--model", "llama3-8b",
                        "--gpus", "8", "--gbs", "64", "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "in 3 shards on processes" in p.stdout
    whole = tmp_path / "whole.csv"
    from conftest import run_cli

    run_cli("sweep", "--model", "llama3-8b", "--gpus", "8", "--gbs", "64", "--threads", "2",
            "--csv", str(whole))
    assert (tmp_path / "sweep.csv").read_bytes() == whole.read_bytes()
