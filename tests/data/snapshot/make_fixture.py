#!/usr/bin/env python3
"""Writes fixture.pickle: a HAND-MADE PyTorch memory snapshot (not recorded on a GPU).

The dict follows the structure documented for torch.cuda.memory._snapshot()
('segments', 'device_traces' of TraceEntry dicts with 'action', 'addr', 'size',
'stream'); the segment sizes follow the caching allocator's documented rules
(shared/reference/pytorch_caching_allocator.md A4): <= 1 MiB -> 2 MiB segment,
< 10 MiB -> 20 MiB, else rounded up to 2 MiB.  Run: python3 make_fixture.py
(rewrites fixture.pickle next to this script; protocol 4, deterministic).
"""
import os
import pickle

MiB = 1 << 20
S1, S2, S3, S4 = 0x7F0000000000, 0x7F0010000000, 0x7F0020000000, 0x7F0030000000
COMM = 94000000000000  # a second stream's cudaStream_t value


def ev(action, addr=None, size=0, stream=0, **extra):
    e = {"action": action, "size": size, "stream": stream, "frames": [], "time_us": 0}
    if addr is not None:
        e["addr"] = addr
    e.update(extra)
    return e


trace = [
    # 100 MiB + 1 B: rounded to 512 B, one 102 MiB segment (A4), split (A5).
    ev("segment_alloc", S1, 102 * MiB), ev("alloc", S1, 100 * MiB + 1),
    # 1000 B: small pool, a 2 MiB segment.
    ev("segment_alloc", S2, 2 * MiB), ev("alloc", S2, 1000),
    ev("free_requested", S1, 100 * MiB + 1), ev("free_completed", S1, 100 * MiB + 1),
    # reuse of the cached 102 MiB block at the same address: a new tensor
    ev("alloc", S1, 50 * MiB),
    # 4 MiB on another stream: never served from stream 0's cache; a 20 MiB segment
    ev("segment_alloc", S3, 20 * MiB, COMM), ev("alloc", S3, 4 * MiB, COMM),
    ev("snapshot"),
    ev("free_requested", S3, 4 * MiB, COMM), ev("free_completed", S3, 4 * MiB, COMM),
    ev("free_requested", S1, 50 * MiB), ev("free_completed", S1, 50 * MiB),
    ev("free_requested", S2, 1000), ev("free_completed", S2, 1000),
    # torch.cuda.empty_cache(): every segment is one free block, all go back
    ev("segment_free", S1, 102 * MiB), ev("segment_free", S2, 2 * MiB),
    ev("segment_free", S3, 20 * MiB, COMM),
    # the free of a tensor allocated before the history was turned on
    ev("free_requested", 0x7EFF00000000, 8 * MiB), ev("free_completed", 0x7EFF00000000, 8 * MiB),
    # 3 MiB, still live at the dump
    ev("segment_alloc", S4, 20 * MiB), ev("alloc", S4, 3 * MiB),
    ev("oom", None, 200 * 1024 * MiB, device_free=1024 * MiB),
]

snapshot = {
    "segments": [{
        "device": 0, "address": S4, "total_size": 20 * MiB, "stream": 0,
        "segment_type": "large", "segment_pool_id": (0, 0),
        "allocated_size": 3 * MiB, "active_size": 3 * MiB, "requested_size": 3 * MiB,
        "blocks": [
            {"address": S4, "size": 3 * MiB, "requested_size": 3 * MiB,
             "state": "active_allocated", "frames": []},
            {"address": S4 + 3 * MiB, "size": 17 * MiB, "requested_size": 0,
             "state": "inactive", "frames": []},
        ],
    }],
    "device_traces": [trace],
    "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": None},
}

if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "fixture.pickle"), "wb") as f:
        pickle.dump(snapshot, f, protocol=4)
