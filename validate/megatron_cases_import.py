#!/usr/bin/env python3
"""megatron_cases_import.py — regenerates tests/data/megatron_cases/cases/ from a
Megatron-LM checkout: ptsim's record (one INI file per case) of every functional test
case in scope (GPT and mixture-of-experts pretraining from scratch, validate/
megatron_cases.h) with golden values measured on dgx_a100 or dgx_h100.

    validate/megatron_cases_import.py MEGATRON [--ptsim build/ptsim] [--out DIR]

MEGATRON is a Megatron-LM checkout or its git directory (a clone without a work tree
does).  Its HEAD's tests/functional_tests/test_cases and tests/test_utils/recipes are
exported with `git archive`, EXCLUDING every path that names GB200 or GB300: those
golden values are held out (the independent test of hardware ptsim was not tuned on),
so they never reach the disk, and ptsim's reader skips such names again before it
opens anything.  `ptsim validate --megatron-cases` reads the export (the same reader
that reads the records: one summary of the golden values, validate/megatron_case.h)
and this script writes what it read, case by case, with the commit and the paths.
Cases ptsim refuses are written too (their reason is not stored: ptsim says it again);
every other case of the checkout is listed in excluded.csv beside cases/ with its
status (out_of_scope, unmeasured, refused) and reason, so none is dropped silently.
Python 3 standard library only.
"""
import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PATHS = ["tests/functional_tests/test_cases", "tests/test_utils/recipes"]
# held out: never exported (git pathspecs; icase: any spelling)
HELD_OUT = [":(exclude,icase,glob)**/*%s*%s" % (name, tail)
            for name in ("gb200", "gb300") for tail in ("", "/**")]


def git(megatron, *args, **kw):
    if os.path.isdir(os.path.join(megatron, ".git")):
        cmd = ["git", "-C", megatron]
    else:
        cmd = ["git", "--git-dir=" + megatron]
    return subprocess.run(cmd + list(args), check=True, stdout=subprocess.PIPE, **kw).stdout


def export(megatron, dest):
    """HEAD's test cases and recipes into dest, without the held-out paths."""
    tar = git(megatron, "archive", "--format=tar", "HEAD", "--", *PATHS, *HELD_OUT)
    subprocess.run(["tar", "-x", "-C", dest], input=tar, check=True)
    for dirpath, dirnames, filenames in os.walk(dest):
        for name in dirnames + filenames:
            low = name.lower()
            if "gb200" in low or "gb300" in low:
                sys.exit("megatron_cases_import: held-out path exported: %s"
                         % os.path.join(dirpath, name))


def escape(value):
    """A GKeyFile string value (g_key_file_get_string reverses it)."""
    out = value.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")
    return "\\s" + out[1:] if out.startswith(" ") else out


def relative(path, base):
    return os.path.relpath(path, base) if path else ""


def record(rows, commit, date, base):
    first = rows[0]
    lines = [
        "# ptsim's record of Megatron-LM functional test case %s/%s" % (first["family"], first["case"]),
        "# written by validate/megatron_cases_import.py from Megatron-LM %s (%s);" % (commit[:12], date),
        "# do not edit by hand (tests/data/megatron_cases/README.md)",
        "[case]",
        "name = %s" % first["case"],
        "family = %s" % first["family"],
        "test_type = %s" % first["test_type"],
        "mode = %s" % first["mode"],
        "megatron_commit = %s" % commit,
        "config = %s" % relative(first["config"], base),
    ]
    if first["gpus_from"]:  # else ptsim assumes 8 and says so
        lines += ["gpus = %d" % first["gpus"], "gpus_from = %s" % escape(first["gpus_from"])]
    lines += ["", "[env_vars]"]
    lines += ["%s = %s" % (k, escape(v)) for k, v in first["env_vars"]]
    lines += ["", "[model_args]", "# --flag = value; an empty value is a bare flag (YAML true)"]
    for flag, value in first["model_args"]:
        lines.append("%s = %s" % (flag[2:], "" if value is None else escape(value)))
    for r in rows:
        m = r["measured"]
        lines += ["", "[measured %s]" % r["platform"],
                  "environment = %s" % r["environment"],
                  "golden_values = %s" % relative(r["golden_values"], base)]
        for key in ("peak_allocated_bytes", "steady_allocated_bytes"):
            if m[key] is not None:
                lines.append("%s = %d" % (key, round(m[key])))
        if m["iteration_time_s"] is not None:
            lines.append("iteration_time_s = %r" % m["iteration_time_s"])
            lines.append("iteration_time_steps = %d" % m["iteration_time_steps"])
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("megatron", help="a Megatron-LM checkout or git directory")
    ap.add_argument("--ptsim", default=os.path.join(ROOT, "build", "ptsim"))
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "data", "megatron_cases", "cases"))
    a = ap.parse_args()
    commit = git(a.megatron, "rev-parse", "HEAD").decode().strip()
    date = git(a.megatron, "show", "-s", "--format=%cs", "HEAD").decode().strip()
    tmp = tempfile.mkdtemp(prefix="megatron_cases.")
    try:
        export(a.megatron, tmp)
        out = subprocess.run(
            [a.ptsim, "validate", "--megatron-cases", os.path.join(tmp, PATHS[0]),
             "--recipes", os.path.join(tmp, PATHS[1]), "--format", "json"],
            check=True, stdout=subprocess.PIPE, env=dict(os.environ, PTSIM_DATA_DIR=ROOT)).stdout
        report = json.loads(out)
        by_case, left = {}, []
        for r in report["rows"]:
            if r["platform"] and r["status"] in ("compared", "refused"):
                by_case.setdefault((r["family"], r["case"]), []).append(r)
            else:
                left.append(r)
        if os.path.isdir(a.out):
            shutil.rmtree(a.out)
        for (family, case), rows in sorted(by_case.items()):
            os.makedirs(os.path.join(a.out, family), exist_ok=True)
            with open(os.path.join(a.out, family, case + ".ini"), "w") as f:
                f.write(record(rows, commit, date, tmp))
        excluded = os.path.join(os.path.dirname(a.out), "excluded.csv")
        with open(excluded, "w", newline="") as f:
            f.write("# The cases of Megatron-LM %s (%s) not in cases/, each with why "
                    "(validate/megatron_cases_import.py)\n" % (commit, date))
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["family", "case", "status", "reason"])
            for r in sorted(left, key=lambda r: (r["family"], r["case"])):
                w.writerow([r["family"], r["case"], r["status"], r["reason"]])
        print("wrote %d cases (%d platform rows) from Megatron-LM %s into %s; %d left out, "
              "with their reasons, in %s" % (len(by_case), sum(len(v) for v in by_case.values()),
                                             commit, a.out, len(left), excluded))
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
