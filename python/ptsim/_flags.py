"""Keyword arguments to the command's flags: the one mapping every entry
point (Job, sweep) uses, so that ``Job(m, hw, tp=8, sp=False)`` is
``ptsim predict --tp 8 --no-sp``."""

from __future__ import annotations

import os
from typing import Any, Iterable, List


def flag_name(key: str) -> str:
    """``no_overlap`` -> ``--no-overlap``."""
    if not isinstance(key, str) or not key.isidentifier():
        raise TypeError(f"a flag keyword must be an identifier, not {key!r}")
    return "--" + key.replace("_", "-")


def _word(key: str, value: Any, allow_list: bool) -> str:
    if isinstance(value, bool):  # handled by the caller; never a value
        raise TypeError(f"{key}: a bool is not a value here")
    if isinstance(value, (int, float, str)):
        return str(value) if not isinstance(value, float) else repr(value)
    if isinstance(value, os.PathLike):
        return os.fspath(value) if isinstance(os.fspath(value), str) else os.fsdecode(value)
    if allow_list and isinstance(value, (list, tuple, range, set, frozenset)):
        items = sorted(value, key=str) if isinstance(value, (set, frozenset)) else list(value)
        if not items:
            raise ValueError(f"{key}: an empty list")
        return ",".join(_word(key, v, False) for v in items)
    raise TypeError(
        f"{key} must be int, float, str or a path{' or a list of them' if allow_list else ''}, "
        f"not {type(value).__name__}"
    )


def to_flags(kwargs: dict, allow_lists: bool = False) -> List[str]:
    """The flag words of KWARGS: ``True`` gives ``--name``, ``False``
    ``--no-name``, ``None`` nothing, a value ``--name VALUE`` (a list, where
    ALLOW_LISTS: comma-separated, as ``ptsim sweep`` takes lists)."""
    out: List[str] = []
    for key, value in kwargs.items():
        name = flag_name(key)
        if value is None:
            continue
        if value is True:
            out.append(name)
        elif value is False:
            out.append("--no-" + name[2:] if not name.startswith("--no-") else "--" + name[5:])
        else:
            out += [name, _word(key, value, allow_lists)]
    return out


def check_words(words: Iterable[Any], what: str) -> List[str]:
    """A list of str (the words given as they are), or TypeError."""
    if isinstance(words, (str, bytes)):
        raise TypeError(f"{what} must be a list of str, not a single string")
    out = list(words)
    for w in out:
        if not isinstance(w, str):
            raise TypeError(f"{what} must be str, not {type(w).__name__}")
    return out
