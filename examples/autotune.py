#!/usr/bin/env python3
"""ptsim as the cost model of a layout search: an auto-tuner.

    python examples/autotune.py [--model llama3-70b] [--gpus 64] [--trials 60]

Each trial is a layout (tp, pp, virtual stages, micro-batch size,
context parallelism, recomputation, schedule) that ptsim predicts in well under a second, without
a process per call; the objective is the predicted tokens/s of a layout the
allocator emulation says runs (0 otherwise).  Optuna's TPE sampler drives
the search when Optuna is installed, a plain seeded random search otherwise.
The exhaustive answer (ptsim.sweep) is printed beside it for comparison.
"""

import argparse
import random
import sys

import ptsim

SPACE = {
    "tp": [1, 2, 4, 8],
    "cp": [1, 2, 4],
    "pp": [1, 2, 4, 8],
    "vp": [1, 2, 4, 5],
    "mbs": [1, 2, 4],
    "recompute": ["none", "selective", "full"],
    "schedule": ["1f1b", "interleaved"],
}


def score(model, hw, args, layout):
    """Predicted tokens/s of LAYOUT, 0 when it is invalid or does not run."""
    if layout["schedule"] != "interleaved":
        layout = dict(layout, vp=1)
    elif layout["vp"] == 1:
        return 0.0, None
    try:
        r = ptsim.Job(model, hw, gpus=args.gpus, gbs=args.gbs, seq=args.seq, **layout).predict()
    except ptsim.InvalidJob:
        return 0.0, None
    return (r.tokens_per_s if r.runs else 0.0), r


def random_search(model, hw, args):
    rng = random.Random(args.seed)
    best = (0.0, None, None)
    for _ in range(args.trials):
        layout = {k: rng.choice(v) for k, v in SPACE.items()}
        s, r = score(model, hw, args, layout)
        if s > best[0]:
            best = (s, layout, r)
    return best


def optuna_search(optuna, model, hw, args):
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    found = {}

    def objective(trial):
        layout = {k: trial.suggest_categorical(k, v) for k, v in SPACE.items()}
        s, r = score(model, hw, args, layout)
        if s > found.get("score", 0.0):
            found.update(score=s, layout=layout, result=r)
        return s

    study = optuna.create_study(direction="maximize",
                                sampler=optuna.samplers.TPESampler(seed=args.seed))
    study.optimize(objective, n_trials=args.trials)
    return found.get("score", 0.0), found.get("layout"), found.get("result")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="llama3-70b")
    ap.add_argument("--hw", default="h100-80g")
    ap.add_argument("--gpus", type=int, default=64)
    ap.add_argument("--gbs", type=int, default=256)
    ap.add_argument("--seq", type=int, default=8192)
    ap.add_argument("--trials", type=int, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-optuna", action="store_true", help="random search even with Optuna")
    ap.add_argument("--threads", type=int, default=0, help="the exhaustive sweep's (0: all)")
    args = ap.parse_args(argv)

    model, hw = ptsim.Model.load(args.model), ptsim.Hardware.load(args.hw)
    try:
        if args.no_optuna:
            raise ImportError
        import optuna

        how = "Optuna TPE"
        best, layout, result = optuna_search(optuna, model, hw, args)
    except ImportError:
        how = "random search"
        best, layout, result = random_search(model, hw, args)
    if layout is None:
        print(f"{how}: no layout that runs in {args.trials} trials")
        return 1
    print(f"{how}, {args.trials} trials: {layout} -> {best:,.0f} tokens/s, "
          f"step {result.step_s:.3f} s, MFU {result.mfu:.3f}, "
          f"peak {result.device_peak / 2**30:.1f} GiB of {result.capacity / 2**30:.0f}")
    rows = ptsim.sweep(model=args.model, hw=args.hw, gpus=args.gpus, gbs=args.gbs, seq=args.seq,
                       threads=args.threads, top=1)
    top = next(r for r in rows if r["runs"] == 1)
    print(f"exhaustive sweep ({len(rows)} layouts): tp {top['tp']} pp {top['pp']} vp {top['vp']} "
          f"cp {top['cp']} mbs {top['mbs']} {top['recompute']} {top['schedule']} -> "
          f"{top['tokens_per_s']:,.0f} tokens/s ({best / top['tokens_per_s']:.1%} of it found)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
