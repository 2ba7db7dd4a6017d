"""ptsim.plot against `ptsim plot`: for the same input each writes the
command's figure script and data, byte for byte, and the figure; without
gnuplot each raises GnuplotNotFound before any work."""

import os
import pathlib

import pytest

import ptsim
import ptsim.plot
from conftest import run_cli

needs_gnuplot = pytest.mark.skipif(
    __import__("shutil").which("gnuplot") is None, reason="gnuplot is not on PATH"
)


@pytest.fixture(scope="module")
def sweep_csv(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("plot")
    path = tmp / "sweep.csv"
    run_cli("sweep", "--model", "llama3-8b", "--gpus", "8,16", "--gbs", "64", "--threads", "2",
            "--csv", str(path))
    return path


@pytest.fixture(scope="module")
def runs_csv(tmp_path_factory):
    # two sources, predicted within a few percent of measured
    path = tmp_path_factory.mktemp("runs") / "runs.csv"
    path.write_text(
        "source,run,measured_s,predicted_s,fit\n"
        "paper-a,llama-8b-64,1.00,1.05,in-sample\n"
        "paper-a,llama-70b-256,4.00,3.70,in-sample\n"
        "paper-b,gpt-175b-1024,10.0,10.8,held-out\n"
    )
    return path


def same_files(py: ptsim.plot.Figure, cli_dir: pathlib.Path) -> None:
    assert py.figure.stat().st_size > 0
    for p in (py.script, py.data):
        c = cli_dir / p.name
        assert p.read_bytes() == c.read_bytes(), f"{p.name} differs from the command's"


CASES = [
    ("heatmap", "sweep", dict(gpus=8), ["--gpus", "8"]),
    ("heatmap", "sweep", dict(gpus=16, facet="mbs"), ["--gpus", "16", "--facet", "mbs"]),
    ("pareto", "sweep", dict(gpus=8, size="column"), ["--gpus", "8", "--size", "column"]),
    ("scaling", "sweep", dict(y="step"), ["--y", "step"]),
    ("validation", "runs", dict(view="parity", held_out=["paper-a"]),
     ["--view", "parity", "--held-out", "paper-a"]),
]


@needs_gnuplot
@pytest.mark.parametrize("kind,source,kwargs,flags", CASES)
def test_figure_is_the_commands(tmp_path, sweep_csv, runs_csv, kind, source, kwargs, flags):
    src = sweep_csv if source == "sweep" else runs_csv
    (tmp_path / "py").mkdir()
    (tmp_path / "cli").mkdir()
    fig = getattr(ptsim.plot, kind)(src, tmp_path / "py" / f"{kind}.png", **kwargs)
    assert fig.figure == tmp_path / "py" / f"{kind}.png"
    run_cli("plot", kind, "--from", str(src), "--out", str(tmp_path / "cli" / f"{kind}.png"),
            *flags)
    same_files(fig, tmp_path / "cli")


@needs_gnuplot
def test_plot_errors(tmp_path, sweep_csv):
    # two scenarios (8 and 16 GPUs): the command's message lists them
    with pytest.raises(ptsim.InputError) as e:
        ptsim.plot.heatmap(sweep_csv, tmp_path / "h.png")
    done = run_cli("plot", "heatmap", "--from", str(sweep_csv), "--out", str(tmp_path / "c.png"),
                   check=False)
    assert done.returncode == e.value.exit_status == 2
    assert done.stderr == f"ptsim plot: {e.value}\n"
    with pytest.raises(ptsim.InputError, match="allowed values are cp\\|mbs"):
        ptsim.plot.heatmap(sweep_csv, tmp_path / "h.png", gpus=8, facet="tp")
    with pytest.raises(ptsim.InputError, match=".pdf"):
        ptsim.plot.pareto(sweep_csv, tmp_path / "h.jpeg", gpus=8)
    with pytest.raises(ptsim.InputError, match="no-such.csv"):
        ptsim.plot.scaling(tmp_path / "no-such.csv", tmp_path / "s.png")
    with pytest.raises(TypeError):
        ptsim.plot.scaling(42, tmp_path / "s.png")


def test_no_gnuplot(tmp_path, sweep_csv, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no gnuplot there
    with pytest.raises(ptsim.plot.GnuplotNotFound, match="gnuplot"):
        ptsim.plot.heatmap(sweep_csv, tmp_path / "h.png", gpus=8)
    assert not (tmp_path / "h.png").exists()
    assert issubclass(ptsim.plot.GnuplotNotFound, ptsim.Error)
