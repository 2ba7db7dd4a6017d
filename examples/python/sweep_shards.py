#!/usr/bin/env python3
"""A sweep too large for one machine, fanned out as shards over workers and
merged: Ray when it is installed (a cluster, or a local one), else Dask
(dask.distributed), else the standard library's process pool.

    python examples/python/sweep_shards.py [--engine auto|ray|dask|processes]
        [--shards 4] [--model llama3-70b] [--gpus 64,128] [--out DIR]

Each worker runs ``ptsim.sweep(..., shard=(k, n), csv=part-k.csv)``: the k-th
of n slices of the sweep's valid layouts, evaluated on the worker and
written as a shard file (the command's, byte for byte: ``ptsim sweep
--shard K/N`` and ``--merge`` take them too).  The driver then merges them
with ``ptsim.merge``: the one sweep, ranked as one run would rank it, and
its CSV.  The shard files must reach the driver: on one machine or a shared
file system the paths do (a cluster without one would return the files'
bytes instead).
"""

import argparse
import concurrent.futures
import os
import sys
import time

import ptsim


def run_shard(k: int, n: int, flags: dict, out_dir: str) -> str:
    """One worker's share: shard K of N, its file's path."""
    path = os.path.join(out_dir, f"part-{k}.csv")
    ptsim.sweep(**flags, shard=(k, n), csv=path)
    return path


def with_ray(n: int, flags: dict, out_dir: str) -> list:
    import ray

    ray.init(ignore_reinit_error=True)
    task = ray.remote(run_shard)
    return ray.get([task.remote(k, n, flags, out_dir) for k in range(1, n + 1)])


def with_dask(n: int, flags: dict, out_dir: str) -> list:
    from dask.distributed import Client

    with Client(processes=True) as client:
        futures = [client.submit(run_shard, k, n, flags, out_dir) for k in range(1, n + 1)]
        return client.gather(futures)


def with_processes(n: int, flags: dict, out_dir: str) -> list:
    with concurrent.futures.ProcessPoolExecutor(max_workers=min(n, os.cpu_count() or 1)) as pool:
        return list(pool.map(run_shard, range(1, n + 1), [n] * n, [flags] * n, [out_dir] * n))


def installed(module: str) -> bool:
    try:
        __import__(module)
        return True
    except ImportError:
        return False


def pick_engine(asked: str) -> str:
    if asked != "auto":
        return asked
    if installed("ray"):
        return "ray"
    if installed("dask.distributed"):
        return "dask"
    return "processes"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engine", default="auto", choices=["auto", "ray", "dask", "processes"])
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--model", default="llama3-70b")
    ap.add_argument("--hw", default="h100-80g")
    ap.add_argument("--gpus", default="64,128")
    ap.add_argument("--gbs", type=int, default=512)
    ap.add_argument("--threads", type=int, default=1, help="each worker's threads")
    ap.add_argument("--out", default="sweep-shards")
    args = ap.parse_args()

    flags = dict(model=args.model, hw=args.hw, gpus=[int(g) for g in args.gpus.split(",")],
                 gbs=args.gbs, threads=args.threads)
    os.makedirs(args.out, exist_ok=True)
    engine = pick_engine(args.engine)
    fan_out = {"ray": with_ray, "dask": with_dask, "processes": with_processes}[engine]
    start = time.perf_counter()
    parts = fan_out(args.shards, flags, os.path.abspath(args.out))
    merged = os.path.join(args.out, "sweep.csv")
    # the merge re-enumerates the sweep (cheap) and takes every result from
    # the shards: a shard of other flags or inputs is refused by name
    rows = ptsim.merge(parts, **flags, csv=merged)
    seconds = time.perf_counter() - start
    print(f"{len(rows)} layouts in {args.shards} shards on {engine} ({seconds:.1f} s), "
          f"merged into {merged}")
    best = rows[0]
    print(f"best: {best['model']} on {best['gpus']} x {best['hw']}: tp {best['tp']} pp {best['pp']} "
          f"cp {best['cp']} mbs {best['mbs']} {best['recompute']} {best['schedule']}, "
          f"{best['tokens_per_s']:.0f} tokens/s, mfu {best['mfu']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
