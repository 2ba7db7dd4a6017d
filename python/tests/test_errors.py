"""Bad input gives Python exceptions carrying the command's one-line message
and exit status (the same words `ptsim predict` prints after "ptsim
predict: "), never a crash."""

import re

import pytest

import ptsim
from conftest import run_cli


def cli_error(*flags):
    p = run_cli("predict", *flags, check=False)
    assert p.returncode == 2
    line = p.stderr.splitlines()[-1]
    assert line.startswith("ptsim predict: ")
    return line[len("ptsim predict: "):]


def same_folder(message):
    return re.sub(r"\(no \S*/models/", "(no DATA/models/", message)


@pytest.mark.parametrize(
    "kw,flags",
    [
        (dict(model="llama3-8b", gpus=8, tp=3), ["--model", "llama3-8b", "--gpus", "8", "--tp", "3"]),
        (dict(model="llama3-8b", gpus=8, recompute="sometimes"),
         ["--model", "llama3-8b", "--gpus", "8", "--recompute", "sometimes"]),
        (dict(model="no-such-model"), ["--model", "no-such-model"]),
        (dict(model="llama3-8b", precision="fp8", hw="a100-80g"),
         ["--model", "llama3-8b", "--precision", "fp8", "--hw", "a100-80g"]),
        (dict(model="llama3-8b", no_such_flag=1), ["--model", "llama3-8b", "--no-such-flag", "1"]),
    ],
)
def test_invalid_job_message_is_the_commands(kw, flags):
    with pytest.raises(ptsim.InvalidJob) as e:
        ptsim.Job(**kw).predict()
    # the same words; an unknown model's names its data folder: the
    # package's own (site-packages/ptsim/share/ptsim), the command's tree's
    assert same_folder(str(e.value)) == same_folder(cli_error(*flags))
    assert e.value.exit_status == 2
    assert isinstance(e.value, ptsim.InputError) and isinstance(e.value, ValueError)
    assert isinstance(e.value, ptsim.Error)


def test_load_errors():
    with pytest.raises(ptsim.InputError, match="unknown model 'nope'"):
        ptsim.Model.load("nope")
    with pytest.raises(ptsim.InputError, match="nope"):
        ptsim.Hardware.load("nope")
    with pytest.raises(ptsim.InputError):
        ptsim.Model.load("/no/such/file.ini")
    with pytest.raises(ptsim.InputError):
        ptsim.Model.load(hf_config="/no/such/config.json")
    with pytest.raises(TypeError):
        ptsim.Model.load()
    with pytest.raises(TypeError):
        ptsim.Model.load(3)
    with pytest.raises(TypeError):
        ptsim.Model()


def test_model_and_flag_both_is_an_error():
    m = ptsim.Model.load("llama3-8b")
    with pytest.raises(ptsim.InvalidJob):
        ptsim.Job.from_flags(["--model", "llama3-8b"], model=m)


def test_bad_types():
    with pytest.raises(TypeError):
        ptsim.Job("llama3-8b", gpus=[8, 16])  # a list is a sweep's
    with pytest.raises(TypeError):
        ptsim.Job("llama3-8b", gpus=object())
    with pytest.raises(TypeError):
        ptsim.Job(42)
    with pytest.raises(TypeError):
        ptsim.Job.from_flags("--tp 8")
    with pytest.raises(TypeError):
        ptsim.Job.from_flags([b"--tp"])
    with pytest.raises(TypeError):
        ptsim.Job.from_flags([], model="llama3-8b")
    with pytest.raises(ValueError):
        ptsim.Job("llama3-8b\0evil")
    with pytest.raises(TypeError):
        ptsim.Job("llama3-8b").predict(trace_steps=[1])


def test_immutable():
    job = ptsim.Job("llama3-8b")
    r = job.predict(allocator=False)
    with pytest.raises(AttributeError):
        job.flags = ()
    with pytest.raises(AttributeError):
        r.step_s = 1.0
    with pytest.raises(AttributeError):
        ptsim.Model.load("llama3-8b").name = "x"


def test_output_refused_is_input_error(tmp_path):
    with pytest.raises(ptsim.InputError):
        ptsim.Job("llama3-8b").predict(trace=str(tmp_path / "no" / "such" / "dir" / "t.json"))


def test_trace_written(tmp_path):
    path = tmp_path / "trace.json"
    r = ptsim.Job("llama3-8b", gpus=8, tp=2).trace(path)
    assert path.stat().st_size > 0 and r.step_s > 0


def test_diagnostics_of_megatron_args():
    line = ("torchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
            "--num-attention-heads 32 --seq-length 4096 --max-position-embeddings 4096 "
            "--micro-batch-size 1 --global-batch-size 64 --bf16 frobnicate")
    job = ptsim.Job.from_megatron_args(line)
    assert "not Megatron-LM flags, ignored: frobnicate" in job.diagnostics
    assert any(d.startswith("note: vocabulary from the tokenizer") for d in job.diagnostics)
    with pytest.raises(ptsim.InvalidJob, match="--frobnicate-widgets is not a Megatron-LM flag"):
        ptsim.Job.from_megatron_args(line + " --frobnicate-widgets")
