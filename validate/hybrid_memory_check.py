#!/usr/bin/env python3
"""hybrid_memory_check.py — ptsim's analytical memory estimate (`ptsim memory`) of
Megatron-LM's hybrid (Mamba) functional-test cases against their golden values, until
`validate --megatron-cases` can run them (their step time and allocator replay are not
modelled yet, so they are out of its scope).

    validate/hybrid_memory_check.py MEGATRON [--ptsim build/ptsim]

MEGATRON is a Megatron-LM git checkout (read with `git show HEAD:...`).  Only the
golden_values_dev_dgx_{a100,h100}.json files are opened: never the GB200 / GB300 ones
(held out).  Per case and platform: the measured mem-allocated-bytes of the last step
(steady) and the largest mem-max-allocated-bytes, against the estimate of the logging
rank's stage (world_size - 1: the last pipeline stage) -- its weights, gradients,
optimizer states and workspaces (steady) and its total (peak).  Needs PyYAML.
"""
import argparse
import json
import subprocess

import yaml

CASES = [
    "hybrid_mr_mcore_te_tp1_pp1_cp1_dgx_a100_1N8G",
    "hybrid_mr_mcore_te_tp1_pp2_vpp2_cp1_dgx_a100_1N8G",
    "hybrid_mr_mcore_te_tp1_pp4_cp1_dgx_a100_1N8G",
    "hybrid_mr_mcore_te_tp2_pp1_cp1_dgx_a100_1N8G",
    "hybrid_mr_mcore_te_tp2_pp1_cp4_dgx_a100_1N8G",
]
PROFILES = {"h100": "h100-80g", "a100": "a100-80g"}


def show(repo, path):
    r = subprocess.run(["git", "-C", repo, "show", "HEAD:" + path], capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else ""


def command_line(model_args):
    """The case's MODEL_ARGS as a pretrain_hybrid.py line (paths dropped)."""
    words = ["pretrain_hybrid.py"]
    for flag, value in model_args.items():
        if isinstance(value, bool):
            if value:
                words.append(flag)
            continue
        value = str(value)
        if "${" in value:
            continue
        words += [flag, "'" + value + "'"]
    return " ".join(words)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("megatron")
    ap.add_argument("--ptsim", default="build/ptsim")
    args = ap.parse_args()
    print("case platform: steady measured estimate error | peak measured estimate error")
    for case in CASES:
        base = "tests/functional_tests/test_cases/hybrid/%s/" % case
        config = yaml.safe_load(show(args.megatron, base + "model_config.yaml"))
        line = command_line(config["MODEL_ARGS"])
        for platform, profile in PROFILES.items():
            text = show(args.megatron, base + "golden_values_dev_dgx_%s.json" % platform)
            if not text:
                continue
            golden = json.loads(text)
            steady = golden.get("mem-allocated-bytes", {}).get("values", {})
            peak = golden.get("mem-max-allocated-bytes", {}).get("values", {})
            if not steady or not peak:
                print("%s %s: no memory values" % (case, platform))
                continue
            measured_steady = steady[max(steady, key=int)]
            measured_peak = max(peak.values())
            r = subprocess.run([args.ptsim, "memory", "--megatron-args", line, "--gpus", "8",
                                "--hw", profile, "--format", "json"], capture_output=True,
                               text=True)
            if r.returncode != 0:
                print("%s %s: ptsim: %s" % (case, platform, r.stderr.strip()))
                continue
            stage = json.loads(r.stdout)["memory"]["stages"][-1]
            est_steady = (stage["parameters_bytes"] + stage["gradients_bytes"] +
                          stage["optimizer_bytes"] + stage["workspace_bytes"])
            est_peak = stage["total_bytes"]
            print("%s %s: %.4g %.4g %+.1f%% | %.4g %.4g %+.1f%%" % (
                case, platform, measured_steady, est_steady, 100 * (est_steady / measured_steady - 1),
                measured_peak, est_peak, 100 * (est_peak / measured_peak - 1)))


if __name__ == "__main__":
    main()
