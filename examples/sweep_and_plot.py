#!/usr/bin/env python3
"""Sweep a model's layouts from Python and plot them, notebook style.

    python examples/sweep_and_plot.py [--model llama3-70b] [--gpus 64] [--out DIR]

Every valid layout of llama3-70b on 64 H100s is evaluated by ptsim (the
library, its threads, the GIL released); the ten fastest that run are
printed, and ptsim's own Pareto figure (tokens/s per GPU against the memory
each layout holds, as `ptsim plot pareto` draws it with gnuplot) is drawn from
the sweep's CSV.
"""

import argparse
import os
import sys

import ptsim
import ptsim.plot


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="llama3-70b")
    ap.add_argument("--hw", default="h100-80g")
    ap.add_argument("--gpus", type=int, default=64)
    ap.add_argument("--gbs", type=int, default=256)
    ap.add_argument("--seq", type=int, default=8192)
    ap.add_argument("--threads", type=int, default=0, help="0: every core")
    ap.add_argument("--out", default="ptsim-out/sweep_and_plot")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)

    rows = ptsim.sweep(model=args.model, hw=args.hw, gpus=args.gpus, gbs=args.gbs, seq=args.seq,
                       threads=args.threads)
    runs = [r for r in rows if r["runs"] == 1]
    print(f"{len(rows)} valid layouts of {args.model} on {args.gpus} x {args.hw}, "
          f"{len(runs)} predicted to run")
    print(f"{'rank':>4} {'tp':>3} {'pp':>3} {'vp':>3} {'cp':>3} {'dp':>4} {'mbs':>3} "
          f"{'recompute':>10} {'schedule':>11} {'step s':>8} {'MFU':>6} {'GiB':>6}")
    for r in runs[:10]:
        print(f"{r['rank']:>4} {r['tp']:>3} {r['pp']:>3} {r['vp']:>3} {r['cp']:>3} {r['dp']:>4} "
              f"{r['mbs']:>3} {r['recompute']:>10} {r['schedule']:>11} {r['step_s']:>8.3f} "
              f"{r['mfu']:>6.3f} {r['total_bytes'] / 2**30:>6.1f}")

    # ptsim's own Pareto figure (what `ptsim plot pareto` draws) from the
    # sweep's CSV: the sweep as one shard, merged into the CSV the command's
    # `--csv` writes
    flags = dict(model=args.model, hw=args.hw, gpus=args.gpus, gbs=args.gbs, seq=args.seq,
                 threads=args.threads)
    part = os.path.join(args.out, "sweep.shard")
    csv = os.path.join(args.out, "sweep.csv")
    ptsim.sweep(shard=(1, 1), csv=part, **flags)
    ptsim.merge([part], csv=csv, **flags)
    try:
        fig = ptsim.plot.pareto(csv, os.path.join(args.out, "pareto.png"))
        print(f"figure: {fig.figure} (its data {fig.data}, its gnuplot script {fig.script})")
    except ptsim.plot.GnuplotNotFound:
        print(f"no gnuplot on PATH: the sweep is in {csv}, draw it with ptsim plot pareto")
    return 0


if __name__ == "__main__":
    sys.exit(main())
