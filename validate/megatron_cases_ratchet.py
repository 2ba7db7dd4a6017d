#!/usr/bin/env python3
"""megatron_cases_ratchet.py — records where ptsim stands on the Megatron-LM test cases
(tests/data/megatron_cases/cases) into tests/data/megatron_cases/ratchet.csv, which the
ctest test_megatron_cases holds ptsim to: per platform and quantity, the compared rows
may not become fewer and the median |error| may not grow past the recorded value plus
the tolerance; the rows predicted not to run (a false out-of-memory: every case ran)
may not become more.

    validate/megatron_cases_ratchet.py [--ptsim build/ptsim] [--tolerance 0.0025]

Run it when a change makes ptsim better on the cases (the test says so when a median
has dropped by more than the tolerance), and commit the file with the change; making
it looser needs a reason in the commit message.  Python 3 standard library only.
"""
import argparse
import json
import math
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = os.path.join(ROOT, "tests", "data", "megatron_cases")
QUANTITIES = ["peak_emulation", "peak_estimate", "steady_emulation", "steady_estimate",
              "iteration_time"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ptsim", default=os.path.join(ROOT, "build", "ptsim"))
    ap.add_argument("--tolerance", type=float, default=0.0025,
                    help="allowed growth of a median |error| (a fraction; 0.0025 = 0.25 points)")
    a = ap.parse_args()
    out = subprocess.run([a.ptsim, "validate", "--megatron-cases", os.path.join(DATA, "cases"),
                          "--format", "json"], check=True, stdout=subprocess.PIPE,
                         env=dict(os.environ, PTSIM_DATA_DIR=ROOT)).stdout
    report = json.loads(out)
    lines = [
        "# Where ptsim stands on the Megatron-LM test cases of cases/ (README.md), written by",
        "# validate/megatron_cases_ratchet.py; tests/test_megatron_cases.c fails when a platform's",
        "# compared rows become fewer than `rows`, its median |error| grows past",
        "# median_abs_error + tolerance (fractions: 0.05 = 5%), or the rows predicted not to run",
        "# (not_run: every case ran) become more than `rows`.",
        "quantity,platform,rows,median_abs_error,tolerance",
    ]
    for platform, stats in sorted(report["statistics"]["by_platform"].items()):
        for q in QUANTITIES:
            s = stats[q]
            # rounded up to 1e-4, so that the recorded run itself passes
            recorded = math.ceil(s["median_abs_error"] * 1e4) / 1e4
            lines.append("%s,%s,%d,%.4f,%.4f" % (q, platform, s["n"], recorded, a.tolerance))
    lines.append("not_run,all,%d,," % report["counts"]["predicted_not_to_run"])
    with open(os.path.join(DATA, "ratchet.csv"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote %s" % os.path.join(DATA, "ratchet.csv"))


if __name__ == "__main__":
    main()
