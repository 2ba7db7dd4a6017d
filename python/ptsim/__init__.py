"""ptsim: a simulator of parallel LLM training, from Python.

The step time and memory of a training layout (tensor, pipeline, context,
data and expert parallelism, recomputation, precision...) on a hardware
profile, from the library the ``ptsim`` command is built on: the same
numbers as ``ptsim predict --format json``, without a process per call.

    >>> import ptsim
    >>> model = ptsim.Model.load("llama3-70b")
    >>> hw = ptsim.Hardware.load("h100-80g")
    >>> r = ptsim.Job(model, hw, gpus=64, tp=8, pp=4, gbs=128).predict()
    >>> r.step_s, r.mfu, r.fits
    >>> rows = ptsim.sweep(model="llama3-8b", gpus=8, threads=2)

Errors are exceptions carrying the command's one-line message:
:class:`InputError` (bad input), its subclass :class:`InvalidJob` (a job
that cannot be built or predicted), :class:`GPUUnavailableError`,
:class:`InternalError`; all are :class:`Error`.
"""

from . import _ptsim
from . import plot
from ._inputs import Hardware, Model
from ._job import Job, Result
from ._sweep import merge, sweep
from ._ptsim import (
    Error,
    GPUUnavailableError,
    InputError,
    InternalError,
    InvalidJob,
)

__version__ = _ptsim.version()
"""The version of the libptsim loaded."""

__all__ = [
    "Model",
    "Hardware",
    "Job",
    "Result",
    "sweep",
    "merge",
    "plot",
    "Error",
    "InputError",
    "InvalidJob",
    "GPUUnavailableError",
    "InternalError",
    "__version__",
]
