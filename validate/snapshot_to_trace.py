#!/usr/bin/env python3
"""Converts a PyTorch CUDA memory snapshot to ptsim's plain allocator trace.

The snapshot is the pickle that torch.cuda.memory._dump_snapshot() writes after
torch.cuda.memory._record_memory_history(); its 'device_traces' hold, per device,
the allocator's actions in order.  Written, per device trace entry:

  alloc            -> alloc ID SIZE STREAM   (ID from the address, with a generation
                                             suffix, so a reused address is a new ID)
  free_completed   -> free ID                (free_requested when the trace has no
                                             free_completed at all)
  empty_cache      -> empty_cache            (when the trace records it; otherwise a
                                             run of segment_free not followed by a
                                             segment_alloc / oom is taken as one,
                                             unless --no-infer-empty-cache)
  segment_alloc/_map, segment_free/_unmap    -> the running reserved bytes
  oom              -> a comment

After every event a comment "# reserved N" gives the real allocator's reserved bytes
at that point (cumulative segment bytes since the trace began), which
`ptsim alloc-replay` compares with the emulation.

Safety: the pickle is read with an unpickler that refuses every class, so loading a
file cannot run code; a snapshot holds only dicts, lists, tuples, strings and numbers.
Python 3 standard library only.

Usage: validate/snapshot_to_trace.py SNAPSHOT.pickle [-o TRACE] [--device N]
                                     [--no-infer-empty-cache]
Exit status: 0 ok, 2 bad input (one line naming the file).
"""
import argparse
import io
import pickle
import sys


class RefusingUnpickler(pickle.Unpickler):
    """An unpickler that builds only the built-in containers and scalars."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(
            "refusing to load %s.%s (a memory snapshot holds only dicts, lists, "
            "strings and numbers)" % (module, name))


def load_snapshot(path):
    with open(path, "rb") as f:
        data = f.read()
    return RefusingUnpickler(io.BytesIO(data)).load()


class BadInput(Exception):
    pass


def _int(entry, key, where):
    v = entry.get(key)
    if isinstance(v, bool) or not isinstance(v, int):
        raise BadInput("%s: '%s' is missing or not an integer" % (where, key))
    return v


def convert(snap, device=0, infer_empty_cache=True, name="snapshot"):
    """Returns (lines of the trace, summary dict)."""
    if not isinstance(snap, dict) or not isinstance(snap.get("device_traces"), list):
        raise BadInput("%s: not a memory snapshot (no 'device_traces' list; was "
                       "_record_memory_history() on?)" % name)
    traces = snap["device_traces"]
    if device < 0 or device >= len(traces):
        raise BadInput("%s: device %d not in the snapshot (it has %d device trace%s)"
                       % (name, device, len(traces), "" if len(traces) == 1 else "s"))
    trace = traces[device]
    if not isinstance(trace, list):
        raise BadInput("%s: device_traces[%d] is not a list" % (name, device))
    actions = set()
    for i, e in enumerate(trace):
        if not isinstance(e, dict) or not isinstance(e.get("action"), str):
            raise BadInput("%s: device_traces[%d][%d] has no 'action'" % (name, device, i))
        actions.add(e["action"])
    free_action = "free_completed" if "free_completed" in actions else "free_requested"
    explicit_empty = "empty_cache" in actions
    infer = infer_empty_cache and not explicit_empty

    out = []                      # trace lines after the header
    live = {}                     # address -> ID of the live tensor there
    generation = {}               # address -> allocations seen there
    streams = {}                  # raw stream -> dense index
    reserved = 0                  # segment bytes since the trace began
    s = {"events": 0, "allocs": 0, "frees": 0, "empty_caches": 0, "inferred_empty_caches": 0,
         "unmatched_frees": 0, "implied_frees": 0, "ooms": 0, "peak_reserved": 0,
         "free_action": free_action}

    def emit(line):
        out.append(line)
        out.append("# reserved %d" % reserved)
        s["events"] += 1

    def stream_of(e, where):
        raw = e.get("stream", 0)
        if isinstance(raw, bool) or not isinstance(raw, int):
            raise BadInput("%s: 'stream' is not an integer" % where)
        if raw not in streams:
            streams[raw] = len(streams)
        return streams[raw]

    n = len(trace)
    for i, e in enumerate(trace):
        where = "%s: device_traces[%d][%d] (%s)" % (name, device, i, e["action"])
        a = e["action"]
        if a in ("segment_alloc", "segment_map"):
            reserved += _int(e, "size", where)
            s["peak_reserved"] = max(s["peak_reserved"], reserved)
        elif a in ("segment_free", "segment_unmap"):
            reserved -= _int(e, "size", where)
            if infer:
                j = i + 1
                while j < n and trace[j]["action"] in ("segment_free", "segment_unmap"):
                    j += 1
                run_ends_here = j == i + 1
                nxt = trace[j]["action"] if j < n else None
                if run_ends_here and nxt not in ("segment_alloc", "segment_map", "oom"):
                    emit("empty_cache  # inferred from a run of segment_free")
                    s["empty_caches"] += 1
                    s["inferred_empty_caches"] += 1
        elif a == "alloc":
            addr, size = _int(e, "addr", where), _int(e, "size", where)
            stream = stream_of(e, where)
            if addr in live:  # its free was not recorded (skip_actions?)
                emit("free %s  # implied: address reused before a recorded free" % live.pop(addr))
                s["frees"] += 1
                s["implied_frees"] += 1
            g = generation.get(addr, 0)
            generation[addr] = g + 1
            ident = "a%x" % addr if g == 0 else "a%x.%d" % (addr, g)
            live[addr] = ident
            emit("alloc %s %d %d" % (ident, size, stream))
            s["allocs"] += 1
        elif a == free_action:
            addr = _int(e, "addr", where)
            if addr not in live:  # allocated before the history began (or dropped by
                s["unmatched_frees"] += 1  # the ring buffer)
                continue
            emit("free %s" % live.pop(addr))
            s["frees"] += 1
        elif a == "empty_cache":
            emit("empty_cache")
            s["empty_caches"] += 1
        elif a == "oom":
            out.append("# oom: the real allocator refused %s B (device_free %s B)"
                       % (e.get("size", "?"), e.get("device_free", "?")))
            s["ooms"] += 1
        # free_requested (when free_completed exists), snapshot, annotate, ...: nothing

    segs = snap.get("segments", [])
    dump_reserved = 0
    if isinstance(segs, list):
        for seg in segs:
            if isinstance(seg, dict) and seg.get("device", device) == device:
                dump_reserved += int(seg.get("total_size", 0))
    s["dump_reserved"] = dump_reserved
    s["trace_reserved_end"] = reserved
    s["before_trace"] = dump_reserved - reserved
    s["streams"] = streams
    s["live_at_end"] = len(live)
    return out, s


def header(s, name, device):
    h = ["# ptsim allocator trace, converted by validate/snapshot_to_trace.py",
         "# from %s, device %d; frees from '%s' entries" % (name, device, s["free_action"]),
         "# streams (snapshot value -> trace stream): " +
         (", ".join("%d -> %d" % (raw, d) for raw, d in s["streams"].items()) or "none"),
         "# %d events: %d allocs, %d frees (%d implied), %d empty_cache (%d inferred); "
         "%d frees of tensors allocated before the history began skipped; %d live at the end"
         % (s["events"], s["allocs"], s["frees"], s["implied_frees"], s["empty_caches"],
            s["inferred_empty_caches"], s["unmatched_frees"], s["live_at_end"]),
         "# observed reserved: cumulative segment bytes since the trace began; peak %d B"
         % s["peak_reserved"],
         "# segments at the dump: %d B; the trace accounts for %d B; reserved before the "
         "trace began: %d B" % (s["dump_reserved"], s["trace_reserved_end"], s["before_trace"])]
    if s["ooms"]:
        h.append("# the real allocator reported %d OOM(s); see the '# oom' comments" % s["ooms"])
    return h


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("snapshot", help="pickle from torch.cuda.memory._dump_snapshot()")
    ap.add_argument("-o", "--output", help="trace file to write (default: stdout)")
    ap.add_argument("--device", type=int, default=0, help="device index (default 0)")
    ap.add_argument("--no-infer-empty-cache", action="store_true",
                    help="do not turn a run of segment_free events into empty_cache")
    opts = ap.parse_args(argv)
    try:
        try:
            snap = load_snapshot(opts.snapshot)
        except OSError as err:
            raise BadInput("%s: cannot read: %s" % (opts.snapshot, err.strerror or err))
        except Exception as err:  # any malformed pickle: a bad input, not a crash
            raise BadInput("%s: not a readable snapshot pickle: %s" % (opts.snapshot, err))
        lines, s = convert(snap, opts.device, not opts.no_infer_empty_cache, opts.snapshot)
    except BadInput as err:
        print("snapshot_to_trace: %s" % err, file=sys.stderr)
        return 2
    text = "\n".join(header(s, opts.snapshot, opts.device) + lines) + "\n"
    if opts.output:
        with open(opts.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
