#!/usr/bin/env python3
"""Derives the step-time error bands `ptsim predict` reports from cross-validation on the
published runs, and writes them with their provenance to validate/error_bands.ini.

The question a band answers: how far off is ptsim on a run it has never seen?  So the errors
are held out, never in-sample.  For each GPU family of validate/fit_efficiency.py (a100,
h100) and each published source with rows on it, the family's [efficiency] parameters are
fitted (fit_efficiency.fit, the same coordinate search `make calibrate` documents) on the
family's OTHER sources only, and the held-out source's rows are predicted with them.  A
family with a single source has no held-out estimate and gets no band.  The validation-only
sources (calibrate_published.VALIDATION_ONLY: the mixture-of-experts rows) take no part,
neither fitted on nor in a band: the bands are of dense runs.  The held-out errors
are then grouped by family and precision class (16-bit: bf16 and fp16, which run on the same
tensor cores; fp8), and each group's band is:

  mean_abs_error   the mean absolute held-out step-time error: the +/- ptsim prints
  max_abs_error    the largest one
  bias             the mean signed error (+: ptsim too slow)
  runs, sources    how many held-out runs, from which sources, fitted on which
  *_min / *_max    the range the rows cover (model parameters, GPUs, sequence length);
                   predict says when a job is outside it
Each fold's fit starts from the profiles' source values (START below), not from the shipped
profiles, which were fitted on every row, held-out ones included.

Usage: validate/error_bands.py [--ptsim build/ptsim] [--rounds 3] [--out validate/error_bands.ini]
Run it after changing the engine or the published-run mapping; it rewrites the file.
"""
import argparse, datetime, json, os, shutil, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import calibrate_published  # noqa: E402
import fit_efficiency  # noqa: E402

CLASSES = {"bf16": "16-bit", "fp16": "16-bit", "fp8": "fp8"}

# Where each fold's fit starts: the values the profiles had from their sources before any
# calibration (commit 6a37c00), so that no held-out row reaches a fold through the shipped,
# all-rows fit.  gemm_efficiency_max: the MAMF best shape (C2); attention_efficiency:
# FlashAttention-2 on A100 (C3, 50-73%) and FA3 fwd+bwd on H100 (C3, 0.55); the GEMM ramp
# and memory efficiency were starting guesses.
START = {
    "a100": {"gemm_efficiency_max": 0.859, "gemm_half_gflops": 1.0, "memory_efficiency": 0.85,
             "attention_efficiency": 0.6},
    "h100": {"gemm_efficiency_max": 0.801, "gemm_half_gflops": 3.0, "memory_efficiency": 0.85,
             "attention_efficiency": 0.55},
}


def precision_of(args):
    return args[args.index("--precision") + 1] if "--precision" in args else "bf16"


def held_out(ptsim, data_dir, rows):
    """(row, signed error, config) for each row, with the profiles in data_dir."""
    out = []
    env = dict(os.environ, PTSIM_DATA_DIR=data_dir)
    for row in rows:
        source, label, args, measured, _ = row
        p = subprocess.run([ptsim, "predict", "--format", "json"] + args, capture_output=True,
                           text=True, env=env)
        if p.returncode != 0:
            sys.exit("error_bands: %s %s: ptsim predict failed: %s" % (source, label, p.stderr.strip()))
        result = json.loads(p.stdout)
        out.append((row, (result["time"]["step_s"] - measured) / measured, result["config"]))
    return out


def git_commit():
    p = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                       text=True)
    return p.stdout.strip() if p.returncode == 0 else "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ptsim", default=os.path.join(ROOT, "build", "ptsim"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(HERE, "error_bands.ini"))
    ap.add_argument("--family", default="", help="only this GPU family (a100, h100)")
    opts = ap.parse_args()
    rows = list(calibrate_published.rows(opts.ptsim))
    groups = {}  # (family, class) -> list of (row, error, config, trained_on)
    for fam in fit_efficiency.FAMILIES:
        if opts.family and fam != opts.family:
            continue
        # the validation-only rows (mixture of experts) are neither fitted on nor in a band
        family = [r for r in rows if fit_efficiency.family_of(r[2]) == fam
                  and r[0] not in fit_efficiency.HELD_OUT]
        sources = sorted({r[0] for r in family})
        if len(sources) < 2:
            continue
        for source in sources:
            train = [r for r in family if r[0] != source]
            test = [r for r in family if r[0] == source]
            data_dir = fit_efficiency.scratch_data_dir()
            try:
                fit_efficiency.fit(opts.ptsim, data_dir, fam, train, opts.rounds,
                                   log=lambda m: print(m, file=sys.stderr), start=START[fam])
                for row, err, config in held_out(opts.ptsim, data_dir, test):
                    cls = CLASSES[precision_of(row[2])]
                    trained = ",".join(sorted({r[0] for r in train}))
                    groups.setdefault((fam, cls), []).append((row, err, config, trained))
                    print("%s held out (fitted on %s): %s %+.1f%%" % (source, trained, row[1],
                                                                       100 * err), file=sys.stderr)
            finally:
                shutil.rmtree(data_dir)
    lines = [
        "# Step-time error bands of ptsim predict: held-out errors on the published runs.",
        "# GENERATED by validate/error_bands.py (do not edit by hand); its docstring says how.",
        "",
        "[provenance]",
        "generated = %s" % datetime.date.today().isoformat(),
        "commit = %s" % git_commit(),
        "command = validate/error_bands.py --rounds %d" % opts.rounds,
        "method = leave one published source out: fit the GPU family's efficiency parameters on "
        "its other sources (validate/fit_efficiency.py), predict the held-out source's rows",
        "data = validate/data/published (rows as ptsim validate --suite published maps them)",
        "",
    ]
    for (fam, cls), items in sorted(groups.items()):
        errs = [e for _, e, _, _ in items]
        configs = [c for _, _, c, _ in items]
        params = [c["model"]["parameters"] / 1e9 for c in configs]
        gpus = [c["layout"]["gpus"] for c in configs]
        seqs = [c["layout"]["seq"] for c in configs]
        lines += [
            "[%s %s]" % (fam, cls),
            "profiles = %s" % ",".join(fit_efficiency.FAMILIES[fam]),
            "precisions = %s" % ",".join(p for p, c in CLASSES.items() if c == cls),
            "runs = %d" % len(errs),
            "mean_abs_error = %.4f" % (sum(abs(e) for e in errs) / len(errs)),
            "max_abs_error = %.4f" % max(abs(e) for e in errs),
            "bias = %+.4f" % (sum(errs) / len(errs)),
            "sources = %s" % ",".join(sorted({i[0][0] for i in items})),
            "trained_on = %s" % ";".join(sorted({"%s<-%s" % (i[0][0], i[3]) for i in items})),
            "params_b_min = %.4g" % min(params),
            "params_b_max = %.4g" % max(params),
            "gpus_min = %d" % min(gpus),
            "gpus_max = %d" % max(gpus),
            "seq_min = %d" % min(seqs),
            "seq_max = %d" % max(seqs),
            "",
        ]
    with open(opts.out, "w") as f:
        f.write("\n".join(lines))
    print("wrote %s" % opts.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
