#!/usr/bin/env python3
"""Sweep a model's layouts from Python and plot them, notebook style.

    python examples/sweep_and_plot.py [--model llama3-70b] [--gpus 64] [--out DIR]

Every valid layout of llama3-70b on 64 H100s is evaluated by ptsim (the
library, its threads, the GIL released); the ten fastest that run are
printed, and the sweep's Pareto figure (tokens/s per GPU against the memory
each layout holds) is drawn with matplotlib when it is installed, else with
gnuplot (the tool ptsim's own figures use), else written as a TSV only.
"""

import argparse
import os
import shutil
import subprocess
import sys

import ptsim


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

    # the figure's data: one point per layout
    tsv = os.path.join(args.out, "pareto.tsv")
    with open(tsv, "w") as f:
        f.write("# memory_gib\ttokens_per_s_per_gpu\truns\n")
        for r in rows:
            f.write(f"{r['total_bytes'] / 2**30:.3f}\t{r['tokens_per_s'] / r['gpus']:.3f}\t{r['runs']}\n")
    png = os.path.join(args.out, "pareto.png")
    title = f"{args.model} on {args.gpus} x {args.hw}: every valid layout"
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7, 4.5))
        for ok, colour, label in ((1, "tab:green", "runs"), (0, "tab:red", "does not run")):
            pts = [r for r in rows if (r["runs"] == 1) == bool(ok)]
            ax.scatter([r["total_bytes"] / 2**30 for r in pts],
                       [r["tokens_per_s"] / r["gpus"] for r in pts], s=6, c=colour, label=label)
        ax.set(xlabel="memory of the fullest stage, GiB", ylabel="tokens/s per GPU", title=title)
        ax.legend()
        fig.savefig(png, dpi=120)
        print(f"figure: {png} (matplotlib)")
    except ImportError:
        if shutil.which("gnuplot"):
            gp = os.path.join(args.out, "pareto.gp")
            with open(gp, "w") as f:
                f.write(f'set terminal pngcairo size 900,560\nset output "{png}"\n'
                        f'set title "{title}"\nset xlabel "memory of the fullest stage, GiB"\n'
                        'set ylabel "tokens/s per GPU"\nset key bottom right\n'
                        f'plot "{tsv}" using 1:($3==1?$2:1/0) with points pt 7 ps 0.4 '
                        'lc rgb "#2ca02c" title "runs", '
                        f'"{tsv}" using 1:($3!=1?$2:1/0) with points pt 7 ps 0.4 '
                        'lc rgb "#d62728" title "does not run"\n')
            try:
                subprocess.run(["gnuplot", gp], check=True, capture_output=True)
                print(f"figure: {png} (gnuplot)")
            except subprocess.CalledProcessError as e:
                print(f"gnuplot failed ({e.stderr.decode().strip()[:200]}); data in {tsv}")
        else:
            print(f"no matplotlib or gnuplot: the figure's data is in {tsv}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
