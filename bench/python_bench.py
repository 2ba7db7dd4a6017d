#!/usr/bin/env python3
"""The Python package's speed against the command (not a test; numbers for
bench/RESULTS.md).

    python bench/python_bench.py [--ptsim build/ptsim] [--threads 2] [--n 10000]

1. The same sweep through ptsim.sweep (records; raw cells) and through
   `ptsim sweep ... --csv FILE`: layouts per second, best of 3.
2. A loop of N Job.predict() on one job; beside it the extension's own call
   (_ptsim.predict: the library's prediction and JSON, no Python result),
   so that the difference is what the Python layer costs per call (the
   Result object; its JSON is parsed on first use), and the
   command's time for the same prediction (a process per call).
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import ptsim
from ptsim import _ptsim

SWEEP = dict(model=["llama3-70b", "llama3-8b"], gpus=[64, 128, 256], seq=[4096, 8192],
             hw=["a100-80g", "h100-80g"], gbs=512, device="cpu")


def best_of(n, fn):
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--ptsim", default=os.path.join(here, "..", "build", "ptsim"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--n", type=int, default=10000)
    args = ap.parse_args()
    env = dict(os.environ, PTSIM_DATA_DIR=os.path.join(here, ".."))
    from ptsim._sweep import sweep_flags

    flags = sweep_flags(dict(SWEEP, threads=args.threads))
    print(f"ptsim {ptsim.__version__}, Python {sys.version.split()[0]}, {os.cpu_count()} cores")
    print(f"sweep: ptsim sweep {' '.join(flags)}")
    with tempfile.TemporaryDirectory() as tmp:
        csv = os.path.join(tmp, "s.csv")
        t_cli, _ = best_of(3, lambda: subprocess.run([args.ptsim, "sweep", *flags, "--csv", csv],
                                                     env=env, check=True, capture_output=True))
        with open(csv) as f:
            n_cli = sum(1 for _ in f) - 1
    t_raw, rows_raw = best_of(3, lambda: ptsim.sweep(raw=True, **SWEEP, threads=args.threads))
    t_rec, rows = best_of(3, lambda: ptsim.sweep(**SWEEP, threads=args.threads))
    assert len(rows) == len(rows_raw) == n_cli
    print(f"- command, --csv FILE: {n_cli} layouts in {t_cli:.2f} s: {n_cli / t_cli:.0f} layouts/s")
    print(f"- ptsim.sweep(raw=True): {t_raw:.2f} s: {n_cli / t_raw:.0f} layouts/s")
    print(f"- ptsim.sweep() (typed records): {t_rec:.2f} s: {n_cli / t_rec:.0f} layouts/s")

    kw = dict(gpus=8, tp=2, gbs=64, seq=4096)
    job = ptsim.Job("llama3-8b", "h100-80g", **kw)
    n = args.n
    t0 = time.perf_counter()
    for _ in range(n):
        job.predict()
    t_py = (time.perf_counter() - t0) / n
    t0 = time.perf_counter()
    for _ in range(n):
        _ptsim.predict(job._handle, [], False)
    t_ext = (time.perf_counter() - t0) / n
    cli = [args.ptsim, "predict", "--format", "json", "--model", "llama3-8b", "--hw", "h100-80g"]
    cli += [w for k, v in kw.items() for w in (f"--{k}", str(v))]
    runs = []
    for _ in range(20):
        t0 = time.perf_counter()
        subprocess.run(cli, env=env, check=True, capture_output=True)
        runs.append(time.perf_counter() - t0)
    t_cli1 = statistics.median(runs)
    print(f"predict: llama3-8b h100-80g {' '.join(f'{k}={v}' for k, v in kw.items())}")
    print(f"- {n} x Job.predict(): {t_py * 1e6:.0f} us per call ({1 / t_py:.0f} predictions/s)")
    print(f"- {n} x _ptsim.predict (library + JSON text, no Python result): {t_ext * 1e6:.0f} us "
          f"per call; the Python layer (the Result) adds {(t_py - t_ext) * 1e6:.0f} us")
    print(f"- the command, a process per prediction: {t_cli1 * 1e3:.1f} ms (median of 20)")


if __name__ == "__main__":
    main()
