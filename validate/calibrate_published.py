#!/usr/bin/env python3
"""Runs ptsim on every row of the published measurements (validate/data/published/,
copied unchanged from shared/data/published/) that ptsim can express, and reports the
step-time error per row and the MAPE.

Each source counts FLOPs its own way (shared/data/README.md); each published TFLOP/s is
turned back into a step time with that source's own formula, and step times are compared:
  narayanan2021, megatron_readme_*:  Narayanan et al. Eq. 3 (counts the recompute pass)
      F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h))
  megatron_core_r080, nemo:  Megatron-LM's num_floating_point_operations (model FLOPs)
      F = 12 B s l h^2 ((1 + k/a + s/h) + (ffn/h)*gated + V/(2 l h))
  megatron_readme_2021_tp_scaling: the iteration time is given directly.

Usage: validate/calibrate_published.py [--ptsim build/ptsim] [--out validate/CALIBRATION.md]
                                      [--csv FILE]
--csv FILE also writes the rows as the input of `ptsim plot validation`: the header
source,run,measured_s,predicted_s,fit and one line per row (seconds; commas in a run name
become ';', since that reader does not unquote).  fit is in-sample for every row but those of
VALIDATION_ONLY: the shipped hardware profiles' efficiency parameters were fitted on all the
other runs (validate/fit_efficiency.py; CROSS_VALIDATION.md has the held-out checks).  The
VALIDATION_ONLY sources (the mixture-of-experts rows) are never fitted on, by
fit_efficiency.py or error_bands.py: they check the MoE model on top of the fitted hardware,
and are reported apart from the in-sample statistics.
Layout facts a source does not state are filled with the documented assumption in the
`assumed` column; nothing is fitted per row.  Which row maps to which model, profile,
layout and FLOP formula is defined once, by `ptsim validate --suite published`.
"""
import argparse, csv, json, os, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))

# Sources that are validation only: never fitted on (fit_efficiency.py, error_bands.py),
# reported apart.  moe_published: the mixture-of-experts rows.
VALIDATION_ONLY = {"moe_published"}


def megatron_flops(B, s, l, h, a, k, ffn, V, gated):
    """Megatron-LM's num_floating_point_operations (for the one-MFU baseline)."""
    return 12.0 * B * s * l * h * h * ((1 + k / a + s / h) + ffn / h * (1.5 if gated else 1.0)
                                        + V / (2.0 * l * h))


DEFAULT_PTSIM = os.path.join(HERE, "..", "build", "ptsim")


def rows(ptsim=DEFAULT_PTSIM):
    """Yields (source, label, ptsim args, measured step s, assumptions) for every published
    row ptsim can express whose measurement is a value (a lower bound is left out).  The mapping of rows to models, profiles, layouts and FLOP
    conventions lives in one place, `ptsim validate --suite published` (sim/cli/validate_sources.c);
    this reads it from there."""
    p = subprocess.run([ptsim, "validate", "--suite", "published", "--format", "json"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("calibrate_published: ptsim validate failed: " + p.stderr.strip())
    for r in json.loads(p.stdout)["runs"]:
        if r.get("measured_bound"):  # "more than" a TFLOP/s: a bound, nothing to fit to
            continue
        yield (r["source"], r["label"], r["command"].split(), r["measured"]["step_s"],
               r["assumed"] or "")


def baseline_flops(config):
    """Megatron's FLOP count of the job, for the one-constant-MFU baseline."""
    m, l = config["model"], config["layout"]
    return megatron_flops(l["gbs"], l["seq"], m["num_layers"], m["hidden_size"],
                          m["num_attention_heads"], m["num_query_groups"], m["ffn_hidden_size"],
                          m["vocab_size"], m["activation"] == "swiglu")


def one_mfu_baseline(results):
    """The mechanism-free guess: one MFU per GPU type (fitted on these very rows, by
    grid search on MAPE) times Megatron's FLOP count.  Returns {gpu: (mfu, [errors])}."""
    by_gpu = {}
    for r in results:
        by_gpu.setdefault(r[5]["gpu"], []).append(r)
    out = {}
    for gpu, rs in by_gpu.items():
        best = None
        for i in range(100, 900):
            mfu = i / 1000.0
            errs = [(rr[5]["baseline_flops"] / (rr[5]["gpus"] * rr[5]["peak"] * mfu) - rr[2]) / rr[2]
                    for rr in rs]
            mape = sum(abs(e) for e in errs) / len(errs)
            if best is None or mape < best[0]:
                best = (mape, mfu, errs)
        out[gpu] = (best[1], best[2])
    return out


def plain_cell(text):
    """A cell for ptsim's unquoted CSV reader: no separator, quote or line break."""
    return str(text).replace(",", ";").replace('"', "'").replace("\n", " ").strip()


def write_validation_csv(path, results):
    """The small format `ptsim plot validation` reads (see its --help)."""
    with open(path + ".tmp", "w") as f:
        f.write("source,run,measured_s,predicted_s,fit\n")
        for source, label, measured, pred, *_ in results:
            # the shipped profiles were fitted on every published row but the validation-only
            fit = "held-out" if source in VALIDATION_ONLY else "in-sample"
            f.write("%s,%s,%.6g,%.6g,%s\n" % (plain_cell(source), plain_cell(label),
                                               measured, pred, fit))
    os.replace(path + ".tmp", path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ptsim", default=DEFAULT_PTSIM)
    ap.add_argument("--out", default=os.path.join(HERE, "CALIBRATION.md"))
    ap.add_argument("--csv", help="also write source,run,measured_s,predicted_s,fit for "
                    "`ptsim plot validation --from FILE`")
    opts = ap.parse_args()
    results, failures = [], []
    for source, label, args, measured, assumed in rows(opts.ptsim):
        p = subprocess.run([opts.ptsim, "predict", "--format", "json"] + args,
                           capture_output=True, text=True)
        if p.returncode != 0:
            failures.append((source, label, p.stderr.strip()))
            continue
        doc = json.loads(p.stdout)
        t = doc["time"]
        t["baseline_flops"] = baseline_flops(doc["config"])
        t["gpu"] = doc["config"]["hw"]["name"][:4]
        t["gpus"] = doc["config"]["layout"]["gpus"]
        t["peak"] = doc["config"]["hw"]["peak_bf16_flops_per_s"]
        err = (t["step_s"] - measured) / measured
        results.append((source, label, measured, t["step_s"], err, t, " ".join(args), assumed))
    lines = ["# Calibration against published runs", "",
             "Generated by `validate/calibrate_published.py` (run `make calibrate`). Step times: measured",
             "(from each source's own FLOP formula) vs ptsim's simulated step. Efficiency parameters are",
             "per hardware profile, never per row.", "",
             "| source | run | measured s | ptsim s | error | MFU | bubble | exposed tp/cp/pp/dp s |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    fitted = [r for r in results if r[0] not in VALIDATION_ONLY]
    checked = [r for r in results if r[0] in VALIDATION_ONLY]
    for source, label, measured, pred, err, t, args, assumed in fitted:
        c = t["exposed_comm_s"]
        lines.append("| %s | %s | %.3f | %.3f | %+.1f%% | %.1f%% | %.1f%% | %.3f/%.3f/%.3f/%.3f |" % (
            source, label, measured, pred, 100 * err, 100 * t["mfu"], 100 * t["bubble_fraction"],
            c["tp"], c["cp"], c["pp"], c["dp"]))
    if fitted:
        errs = [abs(r[4]) for r in fitted]
        lines += ["", "Rows: %d, MAPE %.1f%%, max |error| %.1f%%, bias %+.1f%%." % (
            len(fitted), 100 * sum(errs) / len(errs), 100 * max(errs),
            100 * sum(r[4] for r in fitted) / len(fitted))]
        by = {}
        for r in fitted:
            by.setdefault(r[0], []).append(abs(r[4]))
        lines += ["", "| source | rows | MAPE |", "| --- | ---: | ---: |"]
        for k, v in by.items():
            lines.append("| %s | %d | %.1f%% |" % (k, len(v), 100 * sum(v) / len(v)))
    if checked:
        errs = [abs(r[4]) for r in checked]
        lines += ["", "Validation only, never fitted on (%s: mixture-of-experts runs; their exposed "
                  "communication adds the expert-parallel all-to-all, ep): %d rows, MAPE %.1f%%, "
                  "max |error| %.1f%%, bias %+.1f%%." % (
                      ", ".join(sorted({r[0] for r in checked})), len(checked),
                      100 * sum(errs) / len(errs), 100 * max(errs),
                      100 * sum(r[4] for r in checked) / len(checked)), "",
                  "| source | run | measured s | ptsim s | error | MFU | bubble | exposed tp/cp/pp/dp/ep s |",
                  "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
        for source, label, measured, pred, err, t, args, assumed in checked:
            c = t["exposed_comm_s"]
            lines.append("| %s | %s | %.3f | %.3f | %+.1f%% | %.1f%% | %.1f%% | "
                         "%.3f/%.3f/%.3f/%.3f/%.3f |" % (
                             source, label, measured, pred, 100 * err, 100 * t["mfu"],
                             100 * t["bubble_fraction"], c["tp"], c["cp"], c["pp"], c["dp"],
                             c["ep"]))
    if fitted:
        base = one_mfu_baseline(fitted)
        all_errs = [abs(e) for _, errs in base.values() for e in errs]
        lines += ["", "Baseline for comparison: one constant MFU per GPU type, fitted on these rows, "
                  "times Megatron's FLOP count: MAPE %.1f%%, max %.1f%% (%s)." % (
                      100 * sum(all_errs) / len(all_errs), 100 * max(all_errs),
                      ", ".join("%s MFU %.3f" % (g, v[0]) for g, v in sorted(base.items())))]
    if failures:
        lines += ["", "Rows ptsim refused:", ""] + ["- %s %s: %s" % f for f in failures]
    lines += ["", "Commands (ptsim predict ...) and assumptions per row:", ""]
    for source, label, measured, pred, err, t, args, assumed in results:
        lines.append("- %s %s: `%s`%s" % (source, label, args, (" — assumed: " + assumed) if assumed else ""))
    text = "\n".join(lines) + "\n"
    with open(opts.out + ".tmp", "w") as f:
        f.write(text)
    os.replace(opts.out + ".tmp", opts.out)
    if opts.csv:
        write_validation_csv(opts.csv, results)
    print("\n".join(lines[:len(fitted) + 16]))
    return 0 if results else 1


if __name__ == "__main__":
    sys.exit(main())
