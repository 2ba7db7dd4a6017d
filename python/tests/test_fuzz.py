"""The Python boundary fuzzed: random types and values into the
constructors, the loaders, predict and sweep's flags raise exceptions
(ptsim.Error, TypeError, ValueError) and never crash the interpreter."""

import math
import os
import random

import ptsim

FLAGS = ["gpus", "tp", "pp", "vp", "cp", "ep", "etp", "mbs", "gbs", "seq", "recompute",
         "precision", "schedule", "sharding", "fp8_recipe", "sp", "hw", "model", "no_overlap",
         "alloc_conf", "memory_threshold", "tp_comm_overlap", "decoder_first_pipeline_num_layers",
         "megatron_args", "torchtitan", "format", "device", "threads", "seed"]


class Weird:
    def __str__(self):
        raise RuntimeError("str() of a weird object")

    def __fspath__(self):
        return 42


def value(rng):
    pool = [
        None, True, False, 0, -1, 1, 8, 3, 2**31, 2**64 + 1, -(2**70),
        0.0, -0.0, 1e308, math.inf, -math.inf, math.nan, 0.5,
        "", "8", "-8", "llama3-8b", "h100-80g", "fp8", "full", "\0", "a\0b", "\ud800", "é" * 50,
        "x" * 5000, "../../etc/passwd", "/dev/null", "/tmp", "--tp", "8,16", " ", "\n",
        b"bytes", bytearray(b"8"), [], [8, 16], [None], (1, "a"), {"a": 1}, {8}, object(),
        Weird(), ptsim, type, lambda: 0, 1j,
    ]
    if rng.random() < 0.3:
        return "".join(chr(rng.randrange(1, 0x3000)) for _ in range(rng.randrange(0, 12)))
    if rng.random() < 0.2:
        return rng.randrange(-10, 2**20)
    return rng.choice(pool)


ALLOWED = (ptsim.Error, TypeError, ValueError)


def test_fuzz_constructors():
    rng = random.Random(int(os.environ.get("PTSIM_FUZZ_SEED", "27")))
    built = 0
    for _ in range(600):
        kw = {rng.choice(FLAGS): value(rng) for _ in range(rng.randrange(0, 4))}
        if rng.random() < 0.5:
            kw.setdefault("model", "llama3-8b")
        args = [value(rng) for _ in range(rng.randrange(0, 3))]
        try:
            job = ptsim.Job(*args, **kw)
        except ALLOWED:
            continue
        built += 1
        try:
            job.memory()
            if "gpus" not in kw or (isinstance(kw["gpus"], int) and kw["gpus"] <= 64):
                job.predict(allocator=rng.random() < 0.3)
        except ALLOWED:
            pass
    assert built > 0  # some random jobs were valid


def test_fuzz_loaders_and_options():
    rng = random.Random(28)
    job = ptsim.Job("llama3-8b")
    for _ in range(300):
        for call in (
            lambda: ptsim.Model.load(value(rng)),
            lambda: ptsim.Model.load(hf_config=value(rng)),
            lambda: ptsim.Hardware.load(value(rng)),
            lambda: ptsim.Job.from_megatron_args(value(rng), hw=value(rng)),
            lambda: ptsim.Job.from_torchtitan(value(rng)),
            lambda: ptsim.Job.from_flags([value(rng), value(rng)]),
            lambda: job.predict(ce=value(rng), alloc_conf=value(rng), allocator=False),
            lambda: job.memory(ce=value(rng)),
        ):
            try:
                call()
            except ALLOWED:
                pass


def test_fuzz_sweep_flags():
    rng = random.Random(29)
    for _ in range(60):
        kw = {k: value(rng) for k in rng.sample(["tp", "pp", "mbs", "recompute", "schedule", "top",
                                                  "samples", "seed", "hw", "model"], 2)}
        kw.update(gpus=8, gbs=16, seq=1024, threads=1)
        if not isinstance(kw.get("model"), str):
            kw["model"] = "llama3-8b"
        try:
            ptsim.sweep(**kw)
        except ALLOWED:
            pass


def test_fuzz_extension_directly():
    from ptsim import _ptsim

    rng = random.Random(30)
    for _ in range(300):
        fn = rng.choice([_ptsim.model_load, _ptsim.hardware_load, _ptsim.model_name,
                         _ptsim.hardware_name, _ptsim.job_new, _ptsim.predict, _ptsim.sweep])
        args = [value(rng) for _ in range(rng.randrange(0, 4))]
        try:
            fn(*args)
        except ALLOWED:
            pass


def test_fuzz_shards_merge_and_plots(tmp_path, monkeypatch):
    # in a scratch folder: whatever a random path names is written there
    monkeypatch.chdir(tmp_path)
    import ptsim.plot
    from ptsim import _ptsim

    rng = random.Random(31)
    small = dict(model="llama3-8b", gpus=8, gbs=16, seq=1024, threads=1, tp=[1, 2], pp=1)
    for _ in range(40):
        for call in (
            lambda: ptsim.sweep(**small, shard=value(rng), csv=tmp_path / "s.csv"),
            lambda: ptsim.sweep(**small, shard=(1, 2), csv=value(rng)),
            lambda: ptsim.merge(value(rng), **small),
            lambda: ptsim.merge([value(rng), value(rng)], **small, csv=value(rng)),
            lambda: ptsim.plot.heatmap(value(rng), tmp_path / "h.png", facet=value(rng)),
            lambda: ptsim.plot.scaling(value(rng), value(rng), y=value(rng)),
            lambda: ptsim.plot.validation(value(rng), tmp_path / "v.png", held_out=value(rng)),
            lambda: _ptsim.plot(*[value(rng) for _ in range(rng.randrange(0, 5))]),
            lambda: _ptsim.sweep_shard(*[value(rng) for _ in range(rng.randrange(0, 3))]),
        ):
            try:
                call()
            except ALLOWED:
                pass
