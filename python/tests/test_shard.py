"""A sweep split into shards from Python and merged, against the command's
--shard K/N and --merge: the same shard files byte for byte, each side
merging the other's, the merged CSV the one run's, and a tampered shard
refused with the command's message."""

import pathlib

import pytest

import ptsim
from conftest import run_cli

# 654 valid layouts (llama3-8b on one 8-GPU node, the sweep's defaults)
FLAGS = dict(model="llama3-8b", hw="h100-80g", gpus=8, gbs=64)
CLI_FLAGS = ["--model", "llama3-8b", "--hw", "h100-80g", "--gpus", "8", "--gbs", "64"]


def cli_shards(tmp: pathlib.Path, n: int) -> list:
    paths = []
    for k in range(1, n + 1):
        path = tmp / f"cli-{k}.csv"
        run_cli("sweep", *CLI_FLAGS, "--threads", "2", "--shard", f"{k}/{n}", "--csv", str(path))
        paths.append(path)
    return paths


def py_shards(tmp: pathlib.Path, n: int) -> list:
    paths = []
    for k in range(1, n + 1):
        path = tmp / f"py-{k}.csv"
        written = ptsim.sweep(**FLAGS, threads=2, shard=(k, n), csv=path)
        assert isinstance(written, int) and written > 0
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("shards")
    # a model read before, in this process, is no input of the shards: their
    # headers name what the sweep read, as the command's do
    ptsim.Model.load("llama3-70b")
    return tmp, cli_shards(tmp, 3), py_shards(tmp, 3)


def test_shard_files_are_the_commands(shards):
    _, cli, py = shards
    for c, p in zip(cli, py):
        assert p.read_bytes() == c.read_bytes(), f"{p.name} differs from {c.name}"
    # the slices cover the sweep: 654 layouts, split 218 each (654 / 3)
    rows = [len(p.read_text().splitlines()) for p in py]
    header = rows[0] - 218
    assert rows == [header + 218] * 3


def test_merges_agree_both_ways(shards):
    tmp, cli, py = shards
    whole = tmp / "whole.csv"
    run_cli("sweep", *CLI_FLAGS, "--threads", "2", "--csv", str(whole))
    # the command merges Python's shards, Python the command's
    cli_merge = tmp / "cli-merge.csv"
    run_cli("sweep", *CLI_FLAGS, "--csv", str(cli_merge), "--merge", *map(str, py))
    py_merge = tmp / "py-merge.csv"
    records = ptsim.merge(list(reversed(cli)), **FLAGS, threads=2, csv=py_merge)
    assert py_merge.read_bytes() == cli_merge.read_bytes() == whole.read_bytes()
    # the records are the CSV's rows, ranked
    assert len(records) == len(whole.read_text().splitlines()) - 1
    assert [r["rank"] for r in records[:3]] == [1, 2, 3]
    assert records == ptsim.sweep(**FLAGS, threads=2)


def test_streamed_merge(shards):
    # past --in-memory-max the merge streams (rank 0, enumeration order)
    # as the command's does
    tmp, _, py = shards
    cli_merge = tmp / "cli-stream.csv"
    run_cli(
        "sweep", *CLI_FLAGS, "--in-memory-max", "100", "--csv", str(cli_merge), "--merge",
        *map(str, py),
    )
    py_merge = tmp / "py-stream.csv"
    records = ptsim.merge(py, **FLAGS, in_memory_max=100, csv=py_merge)
    assert py_merge.read_bytes() == cli_merge.read_bytes()
    assert {r["rank"] for r in records} == {0}


def cli_error(*args: str) -> str:
    done = run_cli("sweep", *args, check=False)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("ptsim sweep: ")
    return done.stderr[len("ptsim sweep: "):].rstrip("\n")


def test_tampered_shard_refused_with_the_commands_message(shards):
    tmp, _, py = shards
    # another sweep's setting in the header (line 4: "# setting --gpus 8")
    text = py[1].read_text().replace("# setting --gpus 8\n", "# setting --gpus 16\n")
    bad = tmp / "tampered.csv"
    bad.write_text(text)
    parts = [py[0], bad, py[2]]
    expected = cli_error(*CLI_FLAGS, "--merge", *map(str, parts))
    assert "tampered.csv" in expected and "--gpus 16" in expected
    with pytest.raises(ptsim.InputError) as e:
        ptsim.merge(parts, **FLAGS)
    assert str(e.value) == expected
    assert e.value.exit_status == 2
    # a missing shard: the gap named, as the command names it
    expected = cli_error(*CLI_FLAGS, "--merge", str(py[0]), str(py[2]))
    with pytest.raises(ptsim.InputError) as e:
        ptsim.merge([py[0], py[2]], **FLAGS)
    assert str(e.value) == expected
    # other flags than the shards'
    with pytest.raises(ptsim.InputError, match="not a shard of this sweep"):
        ptsim.merge(py, **dict(FLAGS, gbs=128))


def test_shard_arguments():
    with pytest.raises(ptsim.InputError, match="--shard '3/2'"):
        ptsim.sweep(**FLAGS, shard=(3, 2), csv="/tmp/never.csv")
    with pytest.raises(ptsim.InputError, match="needs --csv"):
        ptsim.sweep(**FLAGS, shard=(1, 2))
    with pytest.raises(TypeError):
        ptsim.sweep(**FLAGS, shard="1/2", csv="/tmp/never.csv")
    with pytest.raises(TypeError):
        ptsim.merge("part-1.csv", **FLAGS)
    with pytest.raises(ptsim.InputError, match="name the shard files"):
        ptsim.merge([], **FLAGS)
    with pytest.raises(ptsim.InputError, match="no-such-shard.csv"):
        ptsim.merge(["/nonexistent/no-such-shard.csv"], **FLAGS)
