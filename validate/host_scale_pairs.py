#!/usr/bin/env python3
"""host_scale_pairs.py — how much slower a DGX A100's host issues the same training step than a
DGX H100's, measured on the Megatron-LM test cases that ran on both (tests/data/megatron_cases).

host_overhead.ini's per-op and per-layer costs are a DGX H100 host's (Xeon Platinum 8480C).  The
same case (same flags, same 8 GPUs) was run on both platforms; where the step is host-bound, the
ratio of the two measured step times is the ratio of the two hosts' speeds, whatever ptsim gets
wrong about that step (a missed op, a fitted residual), because both platforms share it.  So for
each case pair this script finds the A100 host scale k at which ptsim's predicted ratio
A100(k) / H100 equals the measured ratio, over a grid of k (the profile's host_cpu_scale and
host_framework_scale both set to k in a scratch copy of the data folder), and reports:

- the median k over all pairs (what hw_profiles/a100-80g.ini and a100-40g.ini carry), with the
  pairs whose measured ratio lies outside the grid's predicted ratios counted, not dropped;
- two-fold cross-validation: k derived from one half of the cases (alternate cases in name
  order), the A100 median |error| of the other half's rows at that k, and the other way round.

    validate/host_scale_pairs.py [--ptsim build/ptsim] [--grid 1.0:2.0:0.05]

Python 3 standard library only; about a minute per grid point on a 2-core machine.
"""
import argparse
import csv
import io
import os
import statistics
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CASES = os.path.join(ROOT, "tests", "data", "megatron_cases", "cases")
A100_PROFILES = ("a100-80g.ini", "a100-40g.ini")


def scratch_data_dir(k, where):
    """The repository's data folder with the A100 profiles' host scales set to k."""
    os.makedirs(os.path.join(where, "hw_profiles"))
    for name in os.listdir(ROOT):
        if name != "hw_profiles":
            os.symlink(os.path.join(ROOT, name), os.path.join(where, name))
    src = os.path.join(ROOT, "hw_profiles")
    for name in os.listdir(src):
        dst = os.path.join(where, "hw_profiles", name)
        if name not in A100_PROFILES:
            os.symlink(os.path.join(src, name), dst)
            continue
        lines = []
        for line in open(os.path.join(src, name)):
            key = line.split("=")[0].strip()
            if key in ("host_cpu_scale", "host_framework_scale"):
                continue
            lines.append(line)
            if line.strip() == "[node]":
                lines.append("host_cpu_scale = %g\nhost_framework_scale = %g\n" % (k, k))
        with open(dst, "w") as f:
            f.writelines(lines)


def predictions(ptsim, k):
    """{(family/case, platform): (measured_s, predicted_s)} at A100 host scale k."""
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "data")
        scratch_data_dir(k, data)
        out = subprocess.run([ptsim, "validate", "--megatron-cases", CASES, "--format", "csv"],
                             check=True, stdout=subprocess.PIPE, text=True,
                             env=dict(os.environ, PTSIM_DATA_DIR=data)).stdout
    rows = {}
    for r in csv.DictReader(io.StringIO(out)):
        if r["status"] != "compared" or not r["measured_iteration_time_s"]:
            continue
        rows[(r["family"] + "/" + r["case"], r["platform"])] = (
            float(r["measured_iteration_time_s"]), float(r["predicted_iteration_time"]))
    return rows


def pair_scale(grid, by_k, case):
    """k at which predicted A100/H100 equals the measured ratio (linear between grid
    points); None with the side when the measured ratio is outside the grid's range."""
    meas_a, _ = by_k[grid[0]][(case, "dgx_a100")]
    meas_h, pred_h = by_k[grid[0]][(case, "dgx_h100")]
    want = meas_a / meas_h
    ratios = [by_k[k][(case, "dgx_a100")][1] / pred_h for k in grid]
    if want <= ratios[0]:
        return None, "below"
    if want >= ratios[-1]:
        return None, "above"
    for i in range(1, len(grid)):
        if ratios[i] >= want:
            lo, hi = ratios[i - 1], ratios[i]
            t = (want - lo) / (hi - lo) if hi > lo else 0.0
            return grid[i - 1] + t * (grid[i] - grid[i - 1]), None
    return None, "above"


def median_scale(grid, by_k, cases):
    ks, outside = [], {"below": 0, "above": 0}
    for c in cases:
        k, side = pair_scale(grid, by_k, c)
        if k is None:
            outside[side] += 1
            # outside the grid: the nearest end, so the median still counts the pair
            ks.append(grid[0] if side == "below" else grid[-1])
        else:
            ks.append(k)
    return statistics.median(ks), outside


def a100_median_error(grid, by_k, k, cases):
    """Median |error| of the cases' A100 rows at the grid point nearest k."""
    near = min(grid, key=lambda g: abs(g - k))
    errs = [abs(p - m) / m for (c, plat), (m, p) in by_k[near].items()
            if plat == "dgx_a100" and c.split("/", 1)[1] in cases]
    return near, statistics.median(errs), len(errs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ptsim", default=os.path.join(ROOT, "build", "ptsim"))
    ap.add_argument("--grid", default="1.0:2.0:0.05", help="first:last:step of k")
    a = ap.parse_args()
    first, last, step = (float(x) for x in a.grid.split(":"))
    n = int(round((last - first) / step))
    grid = [round(first + i * step, 6) for i in range(n + 1)]
    by_k = {}
    for k in grid:
        by_k[k] = predictions(a.ptsim, k)
        print("k = %.2f: %d rows" % (k, len(by_k[k])), flush=True)
    base = by_k[grid[0]]
    pairs = sorted(c for (c, plat) in base if plat == "dgx_a100" and (c, "dgx_h100") in base)
    k_all, outside = median_scale(grid, by_k, pairs)
    print("\n%d case pairs measured on both; median k = %.3f (measured ratio below the grid: %d, "
          "above: %d)" % (len(pairs), k_all, outside["below"], outside["above"]))
    for fam in ("gpt", "moe"):
        sub = [c for c in pairs if c.startswith(fam + "/")]
        if sub:
            kf, _ = median_scale(grid, by_k, sub)
            print("  %s pairs: %d, median k = %.3f" % (fam, len(sub), kf))
    names = sorted({c.split("/", 1)[1] for (c, plat) in base if plat == "dgx_a100"})
    halves = (set(names[0::2]), set(names[1::2]))
    print("\ntwo-fold cross-validation (k from one half's pairs, A100 error on the other half):")
    for i, (train, test) in enumerate((halves, halves[::-1])):
        ktrain, _ = median_scale(grid, by_k, [c for c in pairs if c.split("/", 1)[1] in train])
        near, err, rows = a100_median_error(grid, by_k, ktrain, test)
        _, err1, _ = a100_median_error(grid, by_k, grid[0], test)
        print("  fold %d: k = %.3f (grid %.2f); held-out A100 rows %d: median |error| %.1f%% "
              "(k = %.2f: %.1f%%)" % (i + 1, ktrain, near, rows, 100 * err, grid[0], 100 * err1))


if __name__ == "__main__":
    main()
