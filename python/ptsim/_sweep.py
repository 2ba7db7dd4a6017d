"""Sweeps: every valid layout of the scenarios given, evaluated by the
library (its threads or the GPU, with the GIL released), as the rows of
``ptsim sweep --csv FILE``."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Union

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


def sweep(
    *,
    callback: Optional[Callable[[Record], Optional[bool]]] = None,
    as_dataframe: bool = False,
    raw: bool = False,
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
    """
    if not isinstance(as_dataframe, bool) or not isinstance(raw, bool):
        raise TypeError("as_dataframe and raw must be bool")
    if "shard" in flags:
        raise NotImplementedError(
            "shard=(k, n) is not available from Python yet: run `ptsim sweep --shard K/N --csv FILE`"
        )
    # the cells become numbers in the extension (an int where the CSV has
    # digits, a float where it has a decimal number, else the word)
    typed = not raw
    words = sweep_flags(dict(flags))
    if callback is not None:
        if not callable(callback):
            raise TypeError(f"callback must be callable, not {type(callback).__name__}")

        def on_row(names: Sequence[str], cells: Sequence[Any]) -> Optional[bool]:
            return callback(dict(zip(names, cells)))

        _ptsim.sweep(words, on_row, typed)
        return None
    names, rows = _ptsim.sweep(words, None, typed)
    if as_dataframe:
        import pandas  # optional: pip install ptsim[pandas]

        return pandas.DataFrame(rows, columns=list(names or ()))
    if names is None:
        return []
    return [dict(zip(names, row)) for row in rows]
