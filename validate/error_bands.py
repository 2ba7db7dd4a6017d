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
neither fitted on nor in a band: the bands are of dense runs.

A fold's training rows need not pin every parameter down: on H100 the Megatron-Core rows
(bf16, seq 4096) fit as well with an attention efficiency of 0.30 as of 0.75, and the
held-out NeMo rows (fp8, up to 1M tokens) are dominated by attention.  Such a parameter is
not fitted at all (fit_efficiency.MEASURED: attention_efficiency is the measured kernel's
level, the same in every fold); the others are, and which of the equally
good fits one search lands on is an accident of its path, so no single fit is scored.  Each
fold is searched from several starts (the source values, START below, and START with each
parameter moved to either end of its bounds), and every point the searches score is kept.
A fit is "as good as" the best one when its training MAPE exceeds the best's by no more than
one standard error of the difference: the one-standard-error rule of model selection
(Breiman et al., CART, 1984; Hastie, Tibshirani and Friedman, The Elements of Statistical
Learning, sec. 7.10), on the paired per-row differences |error of the fit| - |error of the
best| over the fold's training rows (sd / sqrt(n)), since both fits are scored on the same
rows.  Fits closer than that are not told apart by these rows; a fit that is worse on every
row by a little is.  The fold is scored with the one of them whose held-out MAPE is largest:
a band must hold whichever of them the profile ends up with.

The held-out errors are then grouped by family and precision class (16-bit: bf16 and fp16,
which run on the same tensor cores; fp8), and each group's band is:

  mean_abs_error   the mean absolute held-out step-time error (each fold's worst equally
                   good fit): the +/- ptsim prints
  max_abs_error    the largest one
  bias             the mean signed error (+: ptsim too slow)
  runs, sources    how many held-out runs, from which sources, fitted on which
  best_fit_mean_abs_error  the same mean with each fold's single best training fit (what the
                   band would be without the robustness step; for comparison)
  fits             how many fits as good as the best the folds had, in all
  *_min / *_max    the range the rows cover (model parameters, GPUs, sequence length);
                   predict says when a job is outside it
Each fold's fit starts from the profiles' source values (START below), not from the shipped
profiles, which were fitted on every row, held-out ones included.

Usage: validate/error_bands.py [--ptsim build/ptsim] [--rounds 3] [--out validate/error_bands.ini]
Run it after changing the engine or the published-run mapping; it rewrites the file.
"""
import argparse, csv, datetime, json, os, shutil, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import calibrate_published  # noqa: E402
import fit_efficiency  # noqa: E402

CLASSES = {"bf16": "16-bit", "fp16": "16-bit", "fp8": "fp8"}

# Where each fold's fit starts: the values the profiles had from their sources before any
# calibration (commit 6a37c00), so that no held-out row reaches a fold through the shipped,
# all-rows fit.  gemm_efficiency_max: the MAMF best shape (C2); the GEMM ramp and memory
# efficiency were starting guesses.  attention_efficiency is not here: it is measured, not
# fitted (fit_efficiency.MEASURED), and every fold runs with the profile's measured value.
START = {
    "a100": {"gemm_efficiency_max": 0.859, "gemm_half_gflops": 1.0, "memory_efficiency": 0.85},
    "h100": {"gemm_efficiency_max": 0.801, "gemm_half_gflops": 3.0, "memory_efficiency": 0.85},
}


def starts(fam):
    """The source values, and the source values with one parameter at either bound, of the
    parameters the family fits (fit_efficiency.keys_of)."""
    keys = fit_efficiency.keys_of(fam)
    start = {k: START[fam][k] for k in keys}
    out = [dict(start)]
    for key in keys:
        for bound in fit_efficiency.BOUNDS[key][fam]:
            if bound != start[key]:
                out.append(dict(start, **{key: bound}))
    return out


def standard_error(errors):
    """Standard error of the mean of `errors` (sample sd / sqrt(n)); 0 for one row."""
    n = len(errors)
    if n < 2:
        return 0.0
    mean = sum(errors) / n
    return (sum((e - mean) ** 2 for e in errors) / (n - 1)) ** 0.5 / n ** 0.5


def equally_good(ptsim, data_dir, fam, train, rounds, log):
    """(best training MAPE, the largest paired standard error admitted, the distinct fits as
    good as the best) over all starts: a fit is as good when its MAPE exceeds the best's by at
    most the standard error of their per-row differences (the docstring says why)."""
    scored = []
    for start in starts(fam):
        fit_efficiency.fit(ptsim, data_dir, fam, train, rounds, log=log, start=start,
                           record=scored)
    best = min(scored, key=lambda t: t[1])
    seen, good, widest = set(), [], 0.0
    for values, mape, _, errs in sorted(scored, key=lambda t: t[1]):
        key = tuple(round(values[k], 4) for k in sorted(values))
        paired = standard_error([a - b for a, b in zip(errs, best[3])])
        if mape - best[1] <= paired and key not in seen:
            seen.add(key)
            good.append((values, mape))
            widest = max(widest, mape - best[1])
    return best[1], widest, good


def write_values(data_dir, fam, values):
    for prof in fit_efficiency.FAMILIES[fam]:
        fit_efficiency.write_profile(data_dir, prof, values)


def precision_of(args):
    return args[args.index("--precision") + 1] if "--precision" in args else "bf16"


def held_out(ptsim, data_dir, rows):
    """(row, signed error, config) for each row, with the profiles in data_dir."""
    out = []
    env = dict(os.environ, PTSIM_DATA_DIR=data_dir)
    for row in rows:
        source, label, args, measured, _ = row
        p = subprocess.run([ptsim, "predict", "--no-allocator", "--format", "json"] + args,
                           capture_output=True, text=True, env=env)
        if p.returncode != 0:
            sys.exit("error_bands: %s %s: ptsim predict failed: %s" % (source, label, p.stderr.strip()))
        result = json.loads(p.stdout)
        out.append((row, (result["time"]["step_s"] - measured) / measured, result["config"]))
    return out


def write_rows(opts, rows, groups):
    """Every held-out row (validate/class_errors.py turns them into the error per workload
    class): the folds' rows with the worst of the equally good fits, and the validation-only
    rows (fit_efficiency.HELD_OUT: never fitted on) with the shipped profiles."""
    out = []
    for items in groups.values():
        for row, err, config, trained, _, _ in items:
            out.append((row, err, config, trained))
    validation = [r for r in rows if r[0] in fit_efficiency.HELD_OUT]
    for row, err, config in held_out(opts.ptsim, ROOT, validation):
        out.append((row, err, config, "none (validation only)"))
    with open(opts.rows_out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["source", "label", "hw", "precision", "seq", "cp", "experts", "framework",
                    "error", "fitted_on"])
        for row, err, config, trained in sorted(out, key=lambda t: (t[0][0], t[0][1])):
            args = row[2]
            w.writerow([row[0], row[1], args[args.index("--hw") + 1], precision_of(args),
                        config["layout"]["seq"], config["layout"].get("cp", 1),
                        config["model"].get("num_experts", 0),
                        "torchtitan" if "--torchtitan" in args else "megatron",
                        "%.4f" % err, trained.replace(",", "+")])
    print("wrote %s" % opts.rows_out)


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
    ap.add_argument("--rows-out", default=os.path.join(HERE, "error_rows.csv"),
                    help="every held-out row's error, for validate/class_errors.py")
    opts = ap.parse_args()
    rows = list(calibrate_published.rows(opts.ptsim))
    groups = {}  # (family, class) -> list of (row, error, config, trained_on, best-fit error,
    #                                           fits)
    folds = []  # per fold, for the table of CROSS_VALIDATION.md
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
            trained = ",".join(sorted({r[0] for r in train}))
            data_dir = fit_efficiency.scratch_data_dir()
            try:
                best, widest, good = equally_good(opts.ptsim, data_dir, fam, train,
                                                     opts.rounds,
                                                     lambda m: print(m, file=sys.stderr))
                scored = []  # (held-out MAPE, values, training MAPE, per-row results)
                for values, mape in good:
                    write_values(data_dir, fam, values)
                    res = held_out(opts.ptsim, data_dir, test)
                    scored.append((sum(abs(e) for _, e, _ in res) / len(res), values, mape, res))
                worst = max(scored, key=lambda t: t[0])
                first = min(scored, key=lambda t: t[2])  # the best training fit
                print("%s held out (fitted on %s): %d fits as good as the best (training MAPE "
                      "up to %.2f points above its %.2f%%); held-out MAPE %.2f%% (best fit) "
                      "to %.2f%% (worst, %s)"
                      % (source, trained, len(good), 100 * widest, 100 * best, 100 * first[0],
                         100 * worst[0], {k: round(v, 4) for k, v in worst[1].items()}),
                      file=sys.stderr)
                folds.append((fam, source, trained, len(good), best, widest, first, worst))
                for (row, err, config), (_, best_err, _) in zip(worst[3], first[3]):
                    cls = CLASSES[precision_of(row[2])]
                    groups.setdefault((fam, cls), []).append(
                        (row, err, config, trained, best_err, len(good)))
                    print("  %s %+.1f%% (best fit %+.1f%%)" % (row[1], 100 * err, 100 * best_err),
                          file=sys.stderr)
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
        "its other sources (validate/fit_efficiency.py, from %d starts), take every fit whose "
        "training MAPE exceeds the best one's by at most the standard error of their paired "
        "per-row differences, predict the held-out source's rows with each, keep the worst"
        % len(starts("h100")),
        "data = validate/data/published (rows as ptsim validate --suite published maps them)",
        "",
    ]
    for (fam, cls), items in sorted(groups.items()):
        errs = [i[1] for i in items]
        best_errs = [i[4] for i in items]
        configs = [i[2] for i in items]
        fits_by_source = {i[0][0]: i[5] for i in items}
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
            "best_fit_mean_abs_error = %.4f" % (sum(abs(e) for e in best_errs) / len(best_errs)),
            "fits = %d" % sum(fits_by_source.values()),
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
    write_rows(opts, rows, groups)
    # The per-fold table of CROSS_VALIDATION.md.
    print("| GPU, precision | held out | fitted on | runs | fits as good (training MAPE up to) | "
          "best fit: held-out MAPE | band: worst of them | largest | bias |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for fam, source, trained, n_good, best, widest, first, worst in folds:
        errs = [e for _, e, _ in worst[3]]
        cls = CLASSES[precision_of(worst[3][0][0][2])]
        print("| %s %s | %s | %s | %d | %d (+%.2f points) | %.1f%% | %.1f%% | %.1f%% | %+.1f%% |"
              % (fam.upper(), cls, source, trained.replace(",", " + "), len(errs), n_good,
                 100 * widest, 100 * first[0], 100 * worst[0],
                 100 * max(abs(e) for e in errs), 100 * sum(errs) / len(errs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
