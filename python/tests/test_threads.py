"""The GIL is released while the library predicts and sweeps: another
Python thread keeps running meanwhile (were it held, the other thread would
stand still for the whole call), and predictions on several threads give
the same answers as one after another."""

import threading
import time

import ptsim

# about a second of work on one core
BIG_SWEEP = dict(model=["llama3-8b", "mixtral-8x7b"], hw=["h100-80g", "a100-80g"], gpus=16,
                 gbs=64, seq=4096, threads=1)
SLOW_JOB = dict(model="gpt3-175b", hw="a100-80g", gpus=512, tp=8, pp=16, gbs=1536, seq=2048,
                schedule="interleaved", vp=2)


def longest_stall(call):
    """Runs CALL on a thread while this one counts; returns (how long CALL
    took, the longest time this thread did not get to run meanwhile)."""
    span = {}

    def work():
        span["start"] = time.perf_counter()
        call()
        span["end"] = time.perf_counter()

    t = threading.Thread(target=work)
    t.start()
    stamps = []
    while t.is_alive():
        stamps.append(time.perf_counter())
    t.join()
    inside = [s for s in stamps if span["start"] <= s <= span["end"]]
    edges = [span["start"], *inside, span["end"]]
    return span["end"] - span["start"], max(b - a for a, b in zip(edges, edges[1:]))


def test_sweep_releases_the_gil():
    took, stall = longest_stall(lambda: ptsim.sweep(**BIG_SWEEP))
    assert took > 0.2, "the sweep was too short to tell"
    assert stall < took / 2, f"this thread stood still {stall:.3f} s of the sweep's {took:.3f} s"


def test_predict_releases_the_gil():
    job = ptsim.Job(**SLOW_JOB)
    took, stall = longest_stall(lambda: [job.predict() for _ in range(3)])
    assert took > 0.2, "the predictions were too short to tell"
    assert stall < took / 2, f"this thread stood still {stall:.3f} s of {took:.3f} s"


def test_threads_share_a_job():
    job = ptsim.Job("llama3-70b", "h100-80g", gpus=64, tp=8, pp=4, vp=5, gbs=64)
    expected = job.predict().json_text
    results = []

    def run():
        for _ in range(5):
            results.append(job.predict().json_text)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [expected] * 20
