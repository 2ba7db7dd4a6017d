"""Same numbers as the command: each job's Python result is the document
`ptsim predict --format json` prints for the same flags, byte for byte and
key by key (dense, MoE, pipeline and interleaved schedules, context
parallelism, fp8 and MXFP8, FSDP, A100/H100/H200/B200, a Megatron-LM command
line), and `ptsim memory --format json` for the memory estimate."""

import json

import pytest

import ptsim
from conftest import REPO, run_cli

# (keyword arguments of ptsim.Job) -- the model and hw as names
JOBS = [
    dict(model="llama3-8b", gpus=8),
    dict(model="llama3-70b", gpus=64, tp=8, pp=4, gbs=128),
    dict(model="llama3-70b", gpus=64, tp=8, pp=4, vp=5, gbs=64, seq=4096),
    dict(model="llama3-70b", hw="a100-80g", gpus=64, tp=8, pp=8, recompute="full", gbs=256, seq=4096),
    dict(model="llama3-8b", hw="a100-40g", gpus=16, tp=4, pp=2, recompute="selective", seq=4096),
    dict(model="llama3-8b", hw="b200-180g", gpus=8, tp=1, precision="fp8"),
    dict(model="llama3-70b", hw="b200-180g", gpus=64, tp=4, pp=2, precision="fp8", fp8_recipe="mxfp8"),
    dict(model="llama3-70b", gpus=64, tp=8, pp=2, precision="fp8", gbs=128),
    dict(model="llama3-8b", gpus=16, tp=2, cp=4, seq=32768, gbs=32),
    dict(model="llama3-70b", gpus=128, tp=8, cp=2, pp=4, seq=16384, gbs=64),
    dict(model="mixtral-8x7b", gpus=16, ep=8),
    dict(model="mixtral-8x7b", gpus=64, tp=2, pp=4, ep=8, gbs=256),
    dict(model="qwen3-30b-a3b", gpus=32, ep=8, pp=2, seq=4096),
    dict(model="deepseek-v2-lite", gpus=16, ep=8, seq=4096),
    dict(model="gpt3-175b", hw="a100-80g", gpus=512, tp=8, pp=16, gbs=1536, seq=2048,
         schedule="interleaved", vp=2),
    dict(model="llama3-8b", gpus=8, sharding="fsdp", no_overlap=True),
    dict(model="llama3-8b", gpus=8, tp=2, mbs=2, sp=False, recompute="full",
         recompute_method="block", recompute_num_layers=4),
    dict(model="llama3.1-405b", gpus=1024, tp=8, pp=16, cp=2, gbs=2048, precision="fp8",
         decoder_first_pipeline_num_layers=6, decoder_last_pipeline_num_layers=8),
    dict(model="llama3-8b", hw="h200-141g", gpus=8, schedule="zb-h1", pp=2, gbs=64),
    dict(model="llama2-7b", hw="a100-40g", gpus=8, tp=2, pp=2, schedule="gpipe", seq=4096, gbs=64),
    dict(model="llama3-8b", gpus=8, tp=2, tp_comm_overlap=True, precision="fp8", fp8_recipe="blockwise"),
]


def cli_flags(kw):
    from ptsim._flags import to_flags

    return to_flags(kw)


def assert_same(py, cli, path="$"):
    """Key by key, naming the first path that differs."""
    assert type(py) is type(cli), f"{path}: {type(py).__name__} != {type(cli).__name__}"
    if isinstance(cli, dict):
        assert list(py) == list(cli), f"{path}: keys differ"
        for k in cli:
            assert_same(py[k], cli[k], f"{path}.{k}")
    elif isinstance(cli, list):
        assert len(py) == len(cli), f"{path}: lengths differ"
        for i, (a, b) in enumerate(zip(py, cli)):
            assert_same(a, b, f"{path}[{i}]")
    else:
        assert py == cli, f"{path}: {py!r} != {cli!r}"


@pytest.mark.parametrize("kw", JOBS, ids=lambda kw: " ".join(cli_flags(kw)))
def test_predict_same_as_cli(kw):
    cli = run_cli("predict", "--format", "json", *cli_flags(kw)).stdout
    kw = dict(kw)
    # half the jobs with loaded objects, half with names: the same job
    if len(cli) % 2:
        model, hw = ptsim.Model.load(kw.pop("model")), ptsim.Hardware.load(kw.pop("hw", "h100-80g"))
    else:
        model, hw = kw.pop("model"), kw.pop("hw", None)
    r = ptsim.Job(model, hw, **kw).predict()
    assert r.json_text == cli
    doc = json.loads(cli)
    assert_same(r.json, doc)
    # the attributes are the document's numbers
    assert r.step_s == doc["time"]["step_s"]
    assert r.memory == doc["memory"]["total_bytes"]
    assert r.capacity == doc["memory"]["capacity_bytes"]
    assert r.fits == doc["memory"]["fits"]
    assert r.runs == doc["memory"]["allocator"]["runs"]
    assert r.device_peak == doc["memory"]["allocator"]["device_peak_bytes"]


@pytest.mark.parametrize("kw", JOBS[:6] + JOBS[10:12], ids=lambda kw: " ".join(cli_flags(kw)))
def test_memory_same_as_cli(kw):
    cli = run_cli("memory", "--format", "json", *cli_flags(kw)).stdout
    r = ptsim.Job(**kw).memory()
    assert r.json_text == cli
    assert r.step_s is None


def test_predict_options_same_as_cli():
    kw = dict(model="llama3-8b", gpus=8, tp=2)
    cli = run_cli("predict", "--format", "json", "--ce", "every-stage", "--no-allocator",
                  *cli_flags(kw)).stdout
    r = ptsim.Job(**kw).predict(ce="every-stage", allocator=False)
    assert r.json_text == cli
    assert r.runs is None and r.device_peak is None


def test_megatron_args_same_as_cli():
    script = REPO / "tests" / "data" / "megatron_llama3_8b.sh"
    cli = run_cli("predict", "--format", "json", "--megatron-args-file", str(script)).stdout
    assert ptsim.Job.from_megatron_args(script).predict().json_text == cli
    line = ("torchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
            "--num-attention-heads 32 --seq-length 4096 --max-position-embeddings 4096 "
            "--micro-batch-size 1 --global-batch-size 64 --tensor-model-parallel-size 2 --bf16")
    cli = run_cli("predict", "--format", "json", "--megatron-args", line, "--hw", "a100-80g").stdout
    job = ptsim.Job.from_megatron_args(line, hw="a100-80g")
    assert job.predict().json_text == cli


def test_from_flags_same_as_keywords():
    a = ptsim.Job.from_flags(["--model", "llama3-70b", "--gpus", "64", "--tp", "8", "--pp", "4"])
    b = ptsim.Job("llama3-70b", gpus=64, tp=8, pp=4)
    assert a.flags == b.flags
    assert a.predict().json_text == b.predict().json_text
