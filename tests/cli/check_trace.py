#!/usr/bin/env python3
"""Checks a `ptsim predict --trace` file against the rules Perfetto's JSON importer
(trace_processor's json_trace_tokenizer / json_trace_parser) and the Chrome trace-event
format apply, and against the step it traces.

Usage: check_trace.py TRACE.json PREDICT.json STEPS
PREDICT.json is `ptsim predict --format json` of the same job.  Exits 0 when every rule
holds, else prints each broken rule (at most 20) and exits 1.

Rules:
  file      a JSON object with a "traceEvents" array (displayTimeUnit "ms" or "ns")
  phases    every event has "ph" in X (complete), M (metadata), s/f (flow v1)
  ids       pid and tid are integers; X, s and f events have both
  X         "name" a non-empty string, "cat" a string, "ts" and "dur" numbers >= 0, in
            microseconds: the last slice ends at STEPS x step_s x 1e6 (0.1%)
  nesting   on one thread, two slices are disjoint or one holds the other (the importer
            drops a slice that ends inside another's middle); 1 ns slack for rounding
  M         process_name / thread_name carry a non-empty args.name; every pid with
            slices has a process_name, every (pid, tid) a thread_name
  flows     each id has one "s" and one "f" with the same cat and name (the importer
            keys v1 flows on id + cat + name); "f" has "bp": "e"; each point lies inside
            a slice of its own thread (what it binds to)
  content   one process per pipeline stage; tracks compute, PP send and PP recv (pp > 1),
            TP comm (tp > 1), DP comm (dp > 1); the waits "bubble" / "PP wait" (pp > 1)
            and "DP wait" or, with FSDP units, "DP exposed" (dp > 1) appear;
            args.step covers 0..STEPS-1; per stage, step 0's "TP exposed" adds up to the
            engine's exposed TP seconds and "PP wait" to its pp_wait_s (2 ns per item)
"""
import json, sys
from collections import defaultdict


def main():
    trace_path, predict_path, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
    errors = []

    def bad(msg):
        errors.append(msg)

    with open(trace_path) as f:
        doc = json.load(f)
    with open(predict_path) as f:
        pred = json.load(f)
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        print("not a JSON object with a traceEvents array")
        return 1
    if doc.get("displayTimeUnit", "ms") not in ("ms", "ns"):
        bad("displayTimeUnit must be ms or ns")
    events = doc["traceEvents"]
    slices = defaultdict(list)          # (pid, tid) -> [(start, end, name)]
    process_names, thread_names = {}, {}
    flows = defaultdict(list)           # id -> [event]
    steps_seen = set()
    names = defaultdict(set)            # pid -> slice names
    for i, e in enumerate(events):
        ph = e.get("ph")
        if ph not in ("X", "M", "s", "f"):
            bad("event %d: ph %r is not X, M, s or f" % (i, ph))
            continue
        for key in ("pid",) + (("tid",) if ph != "M" else ()):
            if not isinstance(e.get(key), int):
                bad("event %d: %s is not an integer" % (i, key))
        if ph == "M":
            args = e.get("args", {})
            if e.get("name") == "process_name":
                if not isinstance(args.get("name"), str) or not args["name"]:
                    bad("event %d: process_name without args.name" % i)
                process_names[e["pid"]] = args.get("name")
            elif e.get("name") == "thread_name":
                if not isinstance(args.get("name"), str) or not args["name"]:
                    bad("event %d: thread_name without args.name" % i)
                if not isinstance(e.get("tid"), int):
                    bad("event %d: thread_name without tid" % i)
                thread_names[(e["pid"], e.get("tid"))] = args.get("name")
            elif e.get("name") not in ("process_labels", "process_sort_index",
                                       "thread_sort_index"):
                bad("event %d: unknown metadata %r" % (i, e.get("name")))
            continue
        if ph == "X":
            if not isinstance(e.get("name"), str) or not e["name"]:
                bad("event %d: X without a name" % i)
            if not isinstance(e.get("cat"), str):
                bad("event %d: X without a cat" % i)
            ts, dur = e.get("ts"), e.get("dur")
            if not isinstance(ts, (int, float)) or not isinstance(dur, (int, float)) or ts < 0 or dur < 0:
                bad("event %d: X needs ts, dur >= 0 (us)" % i)
                continue
            slices[(e["pid"], e["tid"])].append((ts, ts + dur, e["name"]))
            names[e["pid"]].add(e["name"])
            steps_seen.add(e.get("args", {}).get("step"))
            continue
        if "id" not in e or not isinstance(e.get("cat"), str) or not isinstance(e.get("name"), str):
            bad("event %d: flow %s needs id, cat and name" % (i, ph))
            continue
        if ph == "f" and e.get("bp") != "e":
            bad("event %d: flow end without \"bp\": \"e\"" % i)
        flows[e["id"]].append(e)

    # nesting on each thread
    for key, xs in slices.items():
        xs.sort(key=lambda x: (x[0], -x[1]))
        stack = []
        for start, end, name in xs:
            while stack and stack[-1][1] <= start + 1e-3:
                stack.pop()
            if stack and end > stack[-1][1] + 1e-3:
                bad("pid %d tid %d: %s [%.3f, %.3f] overlaps %s [%.3f, %.3f]" %
                    (key[0], key[1], name, start, end, stack[-1][2], stack[-1][0], stack[-1][1]))
            stack.append((start, end, name))
        if key[0] not in process_names:
            bad("pid %d has slices but no process_name" % key[0])
        if key not in thread_names:
            bad("pid %d tid %d has slices but no thread_name" % key)

    # flows: one s and one f per id, same cat and name, each inside a slice of its thread
    def inside(e):
        ts = e.get("ts")
        return any(a - 1e-3 <= ts <= b + 1e-3 for a, b, _ in slices.get((e["pid"], e["tid"]), []))
    for fid, es in flows.items():
        phs = sorted(x["ph"] for x in es)
        if phs != ["f", "s"]:
            bad("flow %r: phases %s, wanted one s and one f" % (fid, phs))
            continue
        if len({(x["cat"], x["name"]) for x in es}) != 1:
            bad("flow %r: s and f differ in cat or name" % fid)
        for x in es:
            if not inside(x):
                bad("flow %r: %s at %.3f binds to no slice on pid %d tid %d" %
                    (fid, x["ph"], x["ts"], x["pid"], x["tid"]))

    # content, against the engine's numbers
    t = pred["time"]
    layout = pred["config"]["layout"] if "config" in pred else {}
    stages = t["stages"]
    if sorted(process_names) != list(range(len(stages))):
        bad("processes %s, wanted one per stage 0..%d" % (sorted(process_names), len(stages) - 1))
    end = max((b for xs in slices.values() for _, b, _ in xs), default=0)
    want_end = steps * t["step_s"] * 1e6
    if abs(end - want_end) > 1e-3 * want_end:
        bad("last slice ends at %.1f us, wanted %d x step_s = %.1f us" % (end, steps, want_end))
    if steps_seen != set(range(steps)):
        bad("args.step covers %s, wanted 0..%d" % (sorted(steps_seen), steps - 1))
    tracks = set(thread_names.values())
    want = {"compute"} | ({"DP comm"} if layout.get("dp", 1) > 1 else set())
    if len(stages) > 1:
        want |= {"PP send", "PP recv"}
    if layout.get("tp", 1) > 1:
        want.add("TP comm")
    if not want <= tracks:
        bad("tracks %s lack %s" % (sorted(tracks), sorted(want - tracks)))
    all_names = set().union(*names.values()) if names else set()
    for w in ["bubble", "PP wait"] if len(stages) > 1 else []:
        if w not in all_names:
            bad("no %r slice: the waits are not visible" % w)
    # the step waits for the reduction ("DP wait"), or with FSDP units the
    # items wait for their collectives ("DP exposed")
    if layout.get("dp", 1) > 1 and not ({"DP wait", "DP exposed"} & all_names):
        bad("no 'DP wait' or 'DP exposed' slice: the waits are not visible")
    # the slices round to ns, one rounding per item: 2 m v items per step
    items = 2 * layout.get("num_microbatches", 1) * max(layout.get("vp", 1), 1) + 10
    for s, st in enumerate(stages):
        for name, value in (("TP exposed", st["exposed_comm_s"]["tp"]),
                            ("PP wait", st["pp_wait_s"] if "pp_wait_s" in st else st["exposed_comm_s"]["pp"])):
            got = 0.0
            for e in events:
                if e.get("ph") == "X" and e["pid"] == s and e["name"] == name and e["args"].get("step") == 0:
                    got += e["dur"] * 1e-6
            if abs(got - value) > 2e-9 * items + 1e-9:
                bad("stage %d: %s adds up to %.6f s, the engine says %.6f s" % (s, name, got, value))
    for msg in errors[:20]:
        print(msg)
    if len(errors) > 20:
        print("... %d more" % (len(errors) - 20))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
