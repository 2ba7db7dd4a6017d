"""Sweeps: every valid layout of the scenarios given, evaluated by the
library (its threads or the GPU, with the GIL released), as the rows of
``ptsim sweep --csv FILE``."""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from . import _ptsim
from ._flags import to_flags
from ._inputs import Hardware, Model

Record = Dict[str, Union[int, float, str]]


def _names(value: Any) -> Any:
    """Model / Hardware objects (or lists of them) as the names or paths the
    sweep's flags take."""
    if isinstance(value, (Model, Hardware)):
        return value.source
    if isinstance(value, (list, tuple)):
        return [_names(v) for v in value]
    return value


def sweep_flags(kwargs: Dict[str, Any]) -> List[str]:
    """The ``ptsim sweep`` flags of KWARGS (lists comma-separated)."""
    for key in ("model", "hw"):
        if key in kwargs:
            kwargs[key] = _names(kwargs[key])
    return to_flags(kwargs, allow_lists=True)


def _path(value: Any, what: str) -> str:
    """A str or os.PathLike path as str, or TypeError naming WHAT."""
    if isinstance(value, (str, os.PathLike)):
        path = os.fspath(value)
        return path if isinstance(path, str) else os.fsdecode(path)
    raise TypeError(f"{what} must be a str or os.PathLike path, not {type(value).__name__}")


def _shard(shard: Any) -> Tuple[int, int]:
    """shard=(k, n): two ints (their range is the library's to check, with
    the command's message)."""
    if (
        not isinstance(shard, (tuple, list))
        or len(shard) != 2
        or not all(isinstance(x, int) and not isinstance(x, bool) for x in shard)
    ):
        raise TypeError(f"shard must be a pair of ints (k, n), not {shard!r}")
    k, n = shard
    if not (0 <= k < 2**32 and 0 <= n < 2**32):
        # the library's check and message, for numbers C cannot hold
        from ._ptsim import InputError

        raise InputError(f"--shard '{k}/{n}': expected K/N, the K-th of N slices, 1 <= K <= N")
    return k, n


def _rows(
    names: Any, rows: List[Any], as_dataframe: bool
) -> Union[List[Record], Any]:
    if as_dataframe:
        import pandas  # optional: pip install ptsim[pandas]

        return pandas.DataFrame(rows, columns=list(names or ()))
    if names is None:
        return []
    return [dict(zip(names, row)) for row in rows]


def _run(
    words: List[str],
    callback: Optional[Callable[[Record], Optional[bool]]],
    as_dataframe: bool,
    raw: bool,
    shards: Optional[List[str]] = None,
    csv: Optional[str] = None,
) -> Any:
    if not isinstance(as_dataframe, bool) or not isinstance(raw, bool):
        raise TypeError("as_dataframe and raw must be bool")
    # the cells become numbers in the extension (an int where the CSV has
    # digits, a float where it has a decimal number, else the word)
    typed = not raw
    if callback is not None:
        if not callable(callback):
            raise TypeError(f"callback must be callable, not {type(callback).__name__}")

        def on_row(names: Sequence[str], cells: Sequence[Any]) -> Optional[bool]:
            return callback(dict(zip(names, cells)))

        _ptsim.sweep(words, on_row, typed, shards, csv)
        return None
    names, rows = _ptsim.sweep(words, None, typed, shards, csv)
    return _rows(names, rows, as_dataframe)


def sweep(
    *,
    callback: Optional[Callable[[Record], Optional[bool]]] = None,
    as_dataframe: bool = False,
    raw: bool = False,
    shard: Optional[Tuple[int, int]] = None,
    csv: Union[str, "os.PathLike[str]", None] = None,
    **flags: Any,
) -> Any:
    """Every valid layout of the scenarios FLAGS name, evaluated and ranked,
    as ``ptsim sweep FLAGS --csv FILE`` writes them.

    FLAGS are ``ptsim sweep``'s with ``_`` for ``-``; lists are lists
    (``model=["llama3-8b", "llama3-70b"], gpus=[64, 128], tp=[4, 8]``), a
    :class:`Model` / :class:`Hardware` stands for its name or path.  E.g.
    ``ptsim.sweep(model="llama3-70b", hw="h100-80g", gpus=64, gbs=512,
    seq=8192, threads=2)``.

    Returns a list of records (one dict per row, the CSV's columns, numbers as
    numbers; ``raw=True``: the cells as the CSV's text), or a pandas DataFrame
    with ``as_dataframe=True`` (pandas needed: ``pip install ptsim[pandas]``).
    With ``callback``, each record is handed to ``callback(record)`` as it
    comes instead (return ``False`` to stop the sweep early) and the sweep
    returns ``None``.  The GIL is released while layouts are evaluated, so
    other threads run.  Raises :class:`ptsim.InputError` with the command's
    message (a bad flag; no valid layout, with the reasons), or what the
    callback raised.

    ``shard=(k, n)`` with ``csv=PATH``: a sweep split over machines (a Slurm
    array, Ray or Dask workers): evaluates only the k-th of n slices of the
    valid layouts and writes the shard file PATH, byte for byte the file of
    ``ptsim sweep FLAGS --shard K/N --csv PATH``; returns the number of
    layouts it holds.  :func:`merge` (or ``ptsim sweep FLAGS --merge``)
    turns the shards back into the one sweep.
    """
    if shard is None:
        # csv= alone is the command's output: the library says so
        return _run(sweep_flags(dict(flags, csv=csv)), callback, as_dataframe, raw)
    words = sweep_flags(dict(flags))
    k, n = _shard(shard)
    if callback is not None or as_dataframe or raw:
        raise TypeError("a shard writes its file: callback, as_dataframe and raw do not apply")
    if csv is None:
        from ._ptsim import InputError

        raise InputError(
            "--shard K/N: needs --csv FILE (the shard file), and goes with neither "
            "--format csv, --figures nor --merge"
        )
    return _ptsim.sweep_shard(words, k, n, _path(csv, "csv"))


def merge(
    shards: Iterable[Union[str, "os.PathLike[str]"]],
    *,
    csv: Union[str, "os.PathLike[str]", None] = None,
    callback: Optional[Callable[[Record], Optional[bool]]] = None,
    as_dataframe: bool = False,
    raw: bool = False,
    **flags: Any,
) -> Any:
    """The sweep FLAGS name, with every layout's result read from the shard
    files SHARDS (any order; written by ``sweep(..., shard=(k, n), csv=...)``
    or by ``ptsim sweep --shard K/N --csv``) instead of evaluated: the rows
    the one run gives, ranked, as :func:`sweep` returns them (records, a
    DataFrame, or each to ``callback``).  ``csv=PATH`` also writes the CSV of
    ``ptsim sweep FLAGS --merge SHARDS --csv PATH``, byte for byte.

    FLAGS must be the shards' own (the threads and device aside): a shard
    made by other flags, an edited model or profile or another ptsim raises
    :class:`ptsim.InputError` with the command's message (the file, its
    line, the first line that differs), as does a missing, repeated or
    edited layout.
    """
    if isinstance(shards, (str, bytes, os.PathLike)):
        raise TypeError("shards must be a list of paths, not a single path")
    paths = [_path(p, "a shard file") for p in shards]
    out = None if csv is None else _path(csv, "csv")
    return _run(sweep_flags(dict(flags)), callback, as_dataframe, raw, paths, out)
