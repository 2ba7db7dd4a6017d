"""A sweep from Python is `ptsim sweep FLAGS --csv FILE`: the same rows, in
the same order, cell for cell (ranked in memory, and streamed past
--in-memory-max); records, a DataFrame, a callback."""

import pytest

import ptsim
from conftest import run_cli

SWEEPS = [
    dict(model="llama3-8b", gpus=8, threads=2),
    dict(model=["llama3-8b", "mixtral-8x7b"], hw=["h100-80g", "a100-80g"], gpus=16, gbs=64,
         seq=4096, threads=2),
    dict(model="llama3-8b", gpus=8, threads=2, in_memory_max=100),  # streamed: unranked
    dict(model="llama3-70b", hw="b200-180g", gpus=[32, 64], tp=[4, 8], precision="fp8", gbs=256,
         threads=2),
]


def cli_csv(kw, tmp_path):
    from ptsim._sweep import sweep_flags

    out = tmp_path / "sweep.csv"
    run_cli("sweep", *sweep_flags(dict(kw)), "--csv", str(out))
    lines = out.read_text().splitlines()
    return lines[0].split(","), [line.split(",") for line in lines[1:]]


@pytest.mark.parametrize("kw", SWEEPS, ids=range(len(SWEEPS)))
def test_sweep_rows_same_as_csv(kw, tmp_path):
    header, rows = cli_csv(kw, tmp_path)
    records = ptsim.sweep(raw=True, **kw)
    assert len(records) == len(rows) > 0
    for i, (rec, row) in enumerate(zip(records, rows)):
        assert list(rec) == header
        assert list(rec.values()) == row, f"row {i + 1}"


def as_python(cell):
    """A CSV cell as Python reads it: int, else float, else the word."""
    for kind in (int, float):
        try:
            return kind(cell)
        except ValueError:
            pass
    return cell


@pytest.mark.parametrize("kw", SWEEPS[:2], ids=range(2))
def test_sweep_records_typed(kw, tmp_path):
    header, rows = cli_csv(kw, tmp_path)
    records = ptsim.sweep(**kw)
    assert [list(r.values()) for r in records] == [[as_python(c) for c in row] for row in rows]
    for r in records[:50]:
        for v, c in zip(r.values(), rows[records.index(r)]):
            assert type(v) is type(as_python(c))
    first = records[0]
    assert first["rank"] == 1 and first["model"] in ("llama3-8b", "mixtral-8x7b")
    assert isinstance(first["step_s"], float) and first["step_s"] == float(rows[0][header.index("step_s")])
    assert isinstance(first["tp"], int)


def test_sweep_model_objects():
    m, hw = ptsim.Model.load("llama3-8b"), ptsim.Hardware.load("h100-80g")
    assert ptsim.sweep(model=m, hw=[hw], gpus=8, threads=2, raw=True) == ptsim.sweep(
        raw=True, **SWEEPS[0]
    )


def test_sweep_callback_streams_and_stops():
    seen = []
    assert ptsim.sweep(callback=seen.append, **SWEEPS[0]) is None
    assert seen == ptsim.sweep(**SWEEPS[0])
    first_three = []

    def three(rec):
        first_three.append(rec)
        return len(first_three) < 3

    ptsim.sweep(callback=three, **SWEEPS[0])
    assert first_three == seen[:3]


def test_sweep_callback_exception_propagates():
    class Boom(Exception):
        pass

    def boom(rec):
        raise Boom(rec["rank"])

    with pytest.raises(Boom):
        ptsim.sweep(callback=boom, **SWEEPS[0])


def test_sweep_dataframe(tmp_path):
    pandas = pytest.importorskip("pandas")
    header, rows = cli_csv(SWEEPS[0], tmp_path)
    df = ptsim.sweep(as_dataframe=True, **SWEEPS[0])
    assert list(df.columns) == header and len(df) == len(rows)
    expected = pandas.read_csv(tmp_path / "sweep.csv", keep_default_na=False)
    pandas.testing.assert_frame_equal(df, expected, check_dtype=False)


def test_sweep_errors():
    with pytest.raises(ptsim.InputError, match="--gpus"):
        ptsim.sweep(model="llama3-8b", gpus=0)
    with pytest.raises(ptsim.InputError) as e:
        ptsim.sweep(model="no-such-model")
    assert e.value.exit_status == 2
    with pytest.raises(ptsim.InputError, match="--csv"):
        ptsim.sweep(model="llama3-8b", csv="/tmp/x.csv")
    with pytest.raises(TypeError):
        ptsim.sweep(model="llama3-8b", callback=42)
    with pytest.raises(TypeError):
        ptsim.sweep(model={"a": 1})
