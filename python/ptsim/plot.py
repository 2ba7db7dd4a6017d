"""ptsim's figures, from Python: the ones ``ptsim plot`` draws from a file,
by the same code (the library's plots, through ``ptsim_api_plot``), so that
each writes the command's very files: the figure (``.pdf``, ``.png`` or
``.svg``, by its ending), its gnuplot script (``.gp``) and its data
(``.tsv``) beside it.

    >>> import ptsim, ptsim.plot
    >>> ptsim.merge(["part-1.csv", "part-2.csv"], model="llama3-8b", gpus=8, csv="sweep.csv")
    >>> ptsim.plot.heatmap("sweep.csv", "heatmap.png")
    >>> ptsim.plot.pareto("sweep.csv", "pareto.pdf", size="column")

A sweep CSV is the one ``ptsim sweep --csv FILE`` writes (or
:func:`ptsim.merge` with ``csv=``).  Drawing needs gnuplot on PATH
(Debian/Ubuntu: ``apt-get install gnuplot-nox``): without it every function
raises :class:`GnuplotNotFound` before any work.
"""

from __future__ import annotations

import os
import pathlib
import shutil
from typing import Any, NamedTuple, Optional, Sequence, Union

from . import _ptsim
from ._flags import to_flags
from ._ptsim import InternalError

PathLike = Union[str, "os.PathLike[str]"]

__all__ = ["heatmap", "pareto", "scaling", "validation", "Figure", "GnuplotNotFound"]


class GnuplotNotFound(InternalError):
    """gnuplot is not on PATH: no figure can be drawn (the command exits 1)."""

    exit_status = 1
    diagnostics: tuple = ()


class Figure(NamedTuple):
    """The files a figure wrote: the figure, its gnuplot script (rerun it
    with ``cd DIR && gnuplot NAME.gp``) and its data."""

    figure: pathlib.Path
    script: pathlib.Path
    data: pathlib.Path


def _path(value: Any, what: str) -> str:
    if isinstance(value, (str, os.PathLike)):
        path = os.fspath(value)
        return path if isinstance(path, str) else os.fsdecode(path)
    raise TypeError(f"{what} must be a str or os.PathLike path, not {type(value).__name__}")


def _draw(kind: str, source: PathLike, out: PathLike, options: dict) -> Figure:
    src = _path(source, "source")
    dst = _path(out, "out")
    if shutil.which("gnuplot") is None:
        raise GnuplotNotFound(
            "gnuplot is not on PATH: no figure can be drawn (Debian/Ubuntu: apt-get install "
            "gnuplot-nox)"
        )
    _ptsim.plot(kind, src, dst, to_flags(options))
    figure = pathlib.Path(dst)
    return Figure(figure, figure.with_suffix(".gp"), figure.with_suffix(".tsv"))


def heatmap(
    source: PathLike,
    out: PathLike,
    *,
    facet: Optional[str] = None,
    size: Optional[str] = None,
    model: Optional[str] = None,
    hw: Optional[str] = None,
    gpus: Optional[int] = None,
    seq: Optional[int] = None,
    gbs: Optional[int] = None,
) -> Figure:
    """``ptsim plot heatmap --from SOURCE --out OUT``: tokens/s per GPU over
    tp x pp, the best fitting layout per cell, one panel per cp
    (``facet="mbs"``: per mbs).  A CSV of several scenarios needs model, hw,
    gpus, seq or gbs to pick one.  ``size``: "column", "page" or "WxH"
    ("12x8cm")."""
    return _draw(
        "heatmap", source, out,
        dict(facet=facet, size=size, model=model, hw=hw, gpus=gpus, seq=seq, gbs=gbs),
    )


def pareto(
    source: PathLike,
    out: PathLike,
    *,
    size: Optional[str] = None,
    model: Optional[str] = None,
    hw: Optional[str] = None,
    gpus: Optional[int] = None,
    seq: Optional[int] = None,
    gbs: Optional[int] = None,
) -> Figure:
    """``ptsim plot pareto --from SOURCE --out OUT``: memory per GPU against
    tokens/s per GPU of every layout, the Pareto front of those that fit."""
    return _draw(
        "pareto", source, out, dict(size=size, model=model, hw=hw, gpus=gpus, seq=seq, gbs=gbs)
    )


def scaling(
    source: PathLike, out: PathLike, *, y: Optional[str] = None, size: Optional[str] = None
) -> Figure:
    """``ptsim plot scaling --from SOURCE --out OUT``: tokens/s per GPU
    (``y="step"``: step time) of the best fitting layout against the GPU
    count, one line per hardware (a sweep of several ``gpus``)."""
    return _draw("scaling", source, out, dict(y=y, size=size))


def validation(
    source: PathLike,
    out: PathLike,
    *,
    view: Optional[str] = None,
    held_out: Optional[Sequence[str]] = None,
    size: Optional[str] = None,
) -> Figure:
    """``ptsim plot validation --from SOURCE --out OUT``: the predicted step
    time's error against the measured one (``view="parity"``: predicted
    against measured), from a runs CSV (source,run,measured_s,predicted_s
    [,fit]); ``held_out``: the sources not used in the fit."""
    if held_out is not None and not isinstance(held_out, str):
        held_out = ",".join(_path(h, "held_out") for h in held_out)
    return _draw("validation", source, out, dict(view=view, held_out=held_out, size=size))
