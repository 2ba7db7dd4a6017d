"""Jobs and their predictions: ``Job(model, hw, gpus=64, tp=8, ...)`` is the
job ``ptsim predict --model ... --gpus 64 --tp 8 ...`` builds, and
``job.predict()`` gives the numbers of ``ptsim predict --format json``."""

from __future__ import annotations

import json as _json
import os
from typing import Any, Dict, List, Optional, Tuple, Union

from . import _ptsim
from ._flags import check_words, to_flags
from ._inputs import Hardware, Model, PathLike

ModelArg = Union[Model, PathLike, None]
HardwareArg = Union[Hardware, PathLike, None]


class Result:
    """A prediction (``Job.predict``) or a memory estimate (``Job.memory``);
    immutable.

    ``json`` is the whole document ``ptsim predict --format json`` (or
    ``ptsim memory --format json``) prints, parsed on first use: the same
    keys, the same numbers (``json_text``: the very bytes).  The attributes
    are its main numbers, ``None`` where the result has none (no time in a
    memory estimate, no allocator verdict with ``allocator=False``):

    - ``step_s``: time.step_s, one training step in seconds
    - ``tokens_per_s``: the whole job's tokens per second
    - ``tflops_per_gpu``, ``mfu`` (model FLOPs utilisation, 0..1)
    - ``memory``: memory.total_bytes, the analytical estimate of the
      fullest stage; ``capacity``: memory.capacity_bytes, one GPU's
    - ``device_peak``: memory.allocator.device_peak_bytes, the allocator
      emulation's peak with the CUDA context and NCCL buffers
    - ``fits``: memory.fits (the estimate within the memory threshold);
      ``runs``: memory.allocator.runs (the emulation's verdict)
    """

    __slots__ = ("step_s", "tokens_per_s", "tflops_per_gpu", "mfu", "memory", "capacity",
                 "device_peak", "fits", "runs", "json_text", "_json")
    _FIELDS = __slots__[:9]

    step_s: Optional[float]
    tokens_per_s: Optional[float]
    tflops_per_gpu: Optional[float]
    mfu: Optional[float]
    memory: Optional[float]
    capacity: Optional[float]
    device_peak: Optional[float]
    fits: Optional[bool]
    runs: Optional[bool]
    json_text: str

    def __init__(self, raw: Dict[str, Any]) -> None:
        init = object.__setattr__
        for name, key in zip(self._FIELDS, ("step_s", "tokens_per_s", "tflops_per_gpu", "mfu",
                                            "memory_bytes", "capacity_bytes", "device_peak_bytes",
                                            "fits", "runs")):
            init(self, name, raw[key])
        init(self, "json_text", raw["json"])
        init(self, "_json", None)

    @property
    def json(self) -> Dict[str, Any]:
        """The document, parsed (once; a fresh copy is ``json.loads(r.json_text)``)."""
        doc = self._json
        if doc is None:
            doc = _json.loads(self.json_text)
            object.__setattr__(self, "_json", doc)
        return doc

    def asdict(self) -> Dict[str, Any]:
        """The main numbers as a dict (a row of a table)."""
        return {name: getattr(self, name) for name in self._FIELDS}

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError("ptsim.Result is immutable")

    def __delattr__(self, key: str) -> None:
        raise AttributeError("ptsim.Result is immutable")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Result) and other.json_text == self.json_text

    def __hash__(self) -> int:
        return hash(self.json_text)

    def __repr__(self) -> str:
        return "Result(%s)" % ", ".join(f"{n}={getattr(self, n)!r}" for n in self._FIELDS)


def _input_arg(value: Any, kind: type, flag: str, flags: List[str]) -> Any:
    """A loaded object's handle, or a name/path added to FLAGS as FLAG."""
    if value is None:
        return None
    if isinstance(value, kind):
        return value._handle
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, str):
        flags += [flag, value]
        return None
    raise TypeError(
        f"{flag[2:]} must be a ptsim.{kind.__name__}, a name or a path, not {type(value).__name__}"
    )


class Job:
    """A job: model, hardware, layout, batch and settings, resolved and
    checked as ``ptsim predict`` checks them.

    ``Job(model, hw, gpus=64, tp=8, pp=4, vp=5, gbs=64, seq=4096,
    recompute="selective", precision="fp8", sp=False, ...)``: MODEL and HW are
    loaded :class:`Model` / :class:`Hardware` objects, or names/paths (None:
    the command's defaults); every keyword is the flag of ``ptsim predict
    --help`` with ``_`` for ``-`` (``True``: the switch, ``False``: its
    ``--no-`` form, ``None``: left out).  Raises :class:`ptsim.InvalidJob`
    with the command's one-line message when the flags, values or layout are
    wrong, ``TypeError`` for a value of the wrong type.

    Immutable; ``diagnostics`` holds the warnings and notes the inputs gave
    (as the command prints them).  A job may be predicted on many threads at
    once.
    """

    __slots__ = ("_handle", "flags", "diagnostics")

    def __init__(self, model: ModelArg = None, hw: HardwareArg = None, **flags: Any) -> None:
        words: List[str] = []
        m = _input_arg(model, Model, "--model", words)
        h = _input_arg(hw, Hardware, "--hw", words)
        words += to_flags(flags)
        self._build(words, m, h)

    def _build(self, words: List[str], m: Any, h: Any) -> None:
        handle, diagnostics = _ptsim.job_new(words, m, h)
        object.__setattr__(self, "_handle", handle)
        object.__setattr__(self, "flags", tuple(words))
        object.__setattr__(self, "diagnostics", diagnostics)

    @classmethod
    def from_flags(cls, flags: List[str], model: Optional[Model] = None, hw: Optional[Hardware] = None) -> "Job":
        """The job of ``ptsim predict FLAGS`` (argv-style words, e.g.
        ``["--model", "llama3-70b", "--tp", "8"]``)."""
        for value, kind in ((model, Model), (hw, Hardware)):
            if value is not None and not isinstance(value, kind):
                raise TypeError(
                    f"from_flags takes a loaded ptsim.{kind.__name__} (or None; a name goes in "
                    f"the flags), not {type(value).__name__}"
                )
        self = object.__new__(cls)
        self._build(
            check_words(flags, "flags"),
            model._handle if model is not None else None,
            hw._handle if hw is not None else None,
        )
        return self

    @classmethod
    def from_megatron_args(cls, args: Union[str, "os.PathLike[str]"], hw: HardwareArg = None, **flags: Any) -> "Job":
        """The job of a Megatron-LM command line (a str with its launcher,
        e.g. ``"torchrun --nproc-per-node 8 pretrain_gpt.py
        --tensor-model-parallel-size 8 ..."``) or launch script (a path),
        read as ``--megatron-args`` / ``--megatron-args-file`` read them; more
        flags (``gpus=64``) on top."""
        if isinstance(args, os.PathLike):
            words = ["--megatron-args-file", os.fspath(args)]
        elif isinstance(args, str):
            looks_like_file = "\n" not in args and " " not in args.strip() and os.path.isfile(args)
            words = ["--megatron-args-file" if looks_like_file else "--megatron-args", args]
        else:
            raise TypeError(f"args must be a str or a path, not {type(args).__name__}")
        h = _input_arg(hw, Hardware, "--hw", words)
        words += to_flags(flags)
        self = object.__new__(cls)
        self._build(words, None, h)
        return self

    @classmethod
    def from_torchtitan(cls, config: PathLike, hw: HardwareArg = None, **flags: Any) -> "Job":
        """The job of a torchtitan job config (.toml), as ``--torchtitan``."""
        if isinstance(config, os.PathLike):
            config = os.fspath(config)
        if not isinstance(config, str):
            raise TypeError(f"config must be a path, not {type(config).__name__}")
        words = ["--torchtitan", config]
        h = _input_arg(hw, Hardware, "--hw", words)
        words += to_flags(flags)
        self = object.__new__(cls)
        self._build(words, None, h)
        return self

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError("ptsim.Job is immutable")

    def __repr__(self) -> str:
        return "ptsim.Job.from_flags(%r)" % (list(self.flags),)

    def predict(
        self,
        *,
        ce: Optional[str] = None,
        alloc_conf: Optional[str] = None,
        allocator: bool = True,
        trace: Optional[PathLike] = None,
        trace_steps: Optional[int] = None,
        memory_timeline: Optional[PathLike] = None,
        no_shortcut: bool = False,
    ) -> Result:
        """The prediction ``ptsim predict`` makes: memory estimate, caching-
        allocator emulation (``allocator=False``: none) and simulated step.
        ``trace=PATH`` also writes a Perfetto trace, ``memory_timeline=PATH``
        the allocator's timeline, as the command's flags do.  The GIL is
        released while it runs.  Raises :class:`ptsim.InvalidJob` for a
        layout the engine cannot schedule or a bad option."""
        opts = to_flags(
            {
                "ce": ce,
                "alloc_conf": alloc_conf,
                "trace": trace,
                "trace_steps": trace_steps,
                "memory_timeline": memory_timeline,
            }
        )
        if not allocator:
            opts.append("--no-allocator")
        if no_shortcut:
            opts.append("--no-shortcut")
        return Result(_ptsim.predict(self._handle, opts, False))

    def memory(self, *, ce: Optional[str] = None) -> Result:
        """The analytical memory estimate alone, as ``ptsim memory``."""
        return Result(_ptsim.predict(self._handle, to_flags({"ce": ce}), True))

    def trace(self, path: PathLike, steps: Optional[int] = None) -> Result:
        """Predicts and writes the Perfetto trace (JSON) to PATH."""
        return self.predict(trace=path, trace_steps=steps)
