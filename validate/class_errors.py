#!/usr/bin/env python3
"""The cross-validated step-time error per workload class, from validate/error_rows.csv.

Usage: validate/class_errors.py [validate/error_rows.csv]

validate/error_bands.py writes error_rows.csv: every published run predicted by parameters
fitted without it (leave one source out; the validation-only runs with the shipped profiles,
which were never fitted on them). This prints, for each workload class of issue 22 (dense
Megatron, torchtitan, MoE, long context, FP8, Blackwell), the held-out runs of that class and
their error, as a markdown table for validate/REPORT.md. A run belongs to every class it fits
(a NeMo FP8 run at 128K tokens is FP8 and long context). A class with no held-out run says
"uncalibrated": ptsim has no measurement of its error there, and a band from another class
would not be one.
"""
import csv, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
BLACKWELL = {"b200-180g", "gb200-nvl72", "b300-288g", "gb300-nvl72"}
LONG_SEQ = 16384  # tokens: long context from here (or any context parallelism)

CLASSES = [
    ("dense Megatron", lambda r: r["framework"] == "megatron" and int(r["experts"]) == 0),
    ("torchtitan", lambda r: r["framework"] == "torchtitan"),
    ("MoE", lambda r: int(r["experts"]) > 0),
    ("long context (seq >= 16K or cp > 1)",
     lambda r: int(r["seq"]) >= LONG_SEQ or int(r["cp"]) > 1),
    ("FP8", lambda r: r["precision"] == "fp8"),
    ("Blackwell (B200, GB200, B300, GB300)", lambda r: r["hw"] in BLACKWELL),
    # no published run uses them (the rows carry no schedule yet): uncalibrated
    ("V-shaped pipeline (zbv, dualpipev)",
     lambda r: r.get("schedule", "") in ("zbv", "dualpipev")),
    # the memory techniques of issue 28: no published run measures them yet
    ("LoRA / PEFT (--lora-rank)", lambda r: int(r.get("lora_rank") or 0) > 0),
    ("activation offloading", lambda r: (r.get("offload_modules") or "") not in ("", "0")),
    # issue 28 item 2: no held-out run measures combined 1F1B's all-to-all overlap
    ("MoE all-to-all overlap (combined 1F1B)",
     lambda r: (r.get("moe_ep_comm_overlap") or "") not in ("", "0")),
    # issue 28 item 7: no held-out run measures PyTorch FSDP2 with experts
    ("FSDP2 with experts (torch)",
     lambda r: r.get("fsdp_impl", "") == "torch" and int(r["experts"]) > 0),
]


def table(rows):
    out = ["| class | held-out runs | sources | fitted on | MAPE | largest | bias |",
           "| --- | ---: | --- | --- | ---: | ---: | ---: |"]
    for name, member in CLASSES:
        mine = [r for r in rows if member(r)]
        if not mine:
            out.append("| %s | 0 | - | - | uncalibrated | - | - |" % name)
            continue
        errs = [float(r["error"]) for r in mine]
        fitted = sorted({r["fitted_on"] for r in mine})
        out.append("| %s | %d | %s | %s | %.1f%% | %.1f%% | %+.1f%% |" % (
            name, len(mine), " + ".join(sorted({r["source"] for r in mine})),
            "; ".join(fitted), 100 * sum(abs(e) for e in errs) / len(errs),
            100 * max(abs(e) for e in errs), 100 * sum(errs) / len(errs)))
    return "\n".join(out)


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "error_rows.csv")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
