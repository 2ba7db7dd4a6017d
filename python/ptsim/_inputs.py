"""Models and hardware profiles, loaded once and shared by many jobs."""

from __future__ import annotations

import os
from typing import Optional, Union

from . import _ptsim

PathLike = Union[str, "os.PathLike[str]"]


def _source(name_or_path: PathLike, what: str) -> str:
    if isinstance(name_or_path, os.PathLike):
        name_or_path = os.fspath(name_or_path)
    if not isinstance(name_or_path, str):
        raise TypeError(f"{what} must be a name or a path (str), not {type(name_or_path).__name__}")
    return name_or_path


class Model:
    """A model, as ``--model`` reads it: a name in the data folder's models/
    (``"llama3-70b"``), an ``.ini`` file, or a Hugging Face config.json.

    Load with :meth:`Model.load`; the object is immutable and may serve many
    jobs on many threads at once.
    """

    __slots__ = ("_handle", "source", "name")

    def __init__(self) -> None:
        raise TypeError("use ptsim.Model.load(name_or_path) or Model.load(hf_config=path)")

    @classmethod
    def load(cls, name_or_path: Optional[PathLike] = None, *, hf_config: Optional[PathLike] = None) -> "Model":
        """Loads a model by name (``"llama3-70b"``), from an .ini path, or
        from a Hugging Face config.json (``hf_config=path``).  Raises
        :class:`ptsim.InputError` with the command's message when it cannot
        (unknown name, missing file, a bad key naming file:line)."""
        if (name_or_path is None) == (hf_config is None):
            raise TypeError("Model.load takes a name or path, or hf_config=path (one of them)")
        source = (
            _source(name_or_path, "the model")
            if name_or_path is not None
            else "hf:" + _source(hf_config, "hf_config")
        )
        self = object.__new__(cls)
        object.__setattr__(self, "_handle", _ptsim.model_load(source))
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "name", _ptsim.model_name(self._handle))
        return self

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError("ptsim.Model is immutable")

    def __repr__(self) -> str:
        return f"ptsim.Model.load({self.source!r})  # {self.name}"


class Hardware:
    """A hardware profile, as ``--hw`` reads it: a name in hw_profiles/
    (``"h100-80g"``) or an ``.ini`` file.  Load with :meth:`Hardware.load`."""

    __slots__ = ("_handle", "source", "name")

    def __init__(self) -> None:
        raise TypeError("use ptsim.Hardware.load(name_or_path)")

    @classmethod
    def load(cls, name_or_path: PathLike) -> "Hardware":
        """Loads a profile by name (``"h100-80g"``, ``"a100-80g"``,
        ``"b200"``...) or from an .ini path; :class:`ptsim.InputError` when it
        cannot."""
        source = _source(name_or_path, "the hardware profile")
        self = object.__new__(cls)
        object.__setattr__(self, "_handle", _ptsim.hardware_load(source))
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "name", _ptsim.hardware_name(self._handle))
        return self

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError("ptsim.Hardware is immutable")

    def __repr__(self) -> str:
        return f"ptsim.Hardware.load({self.source!r})  # {self.name}"
