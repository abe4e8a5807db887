"""Lazy attribute exports for subpackages whose classes import heavy dependencies.

The exported class names of :mod:`humanize.attacks` and :mod:`humanize.detectors` are
derived from their registries (one line per class there, no second table to keep in
step), plus a few helpers that are not registered objects (``extras``).
"""

from __future__ import annotations

import importlib
import sys
from typing import Callable


def _split(target: str) -> tuple[str, str]:
    module, _, attr = target.partition(":")
    return module, attr


def registry_exports(entries: dict) -> dict[str, str]:
    """``{class name: "module:Class"}`` for every registry entry given as an import path.

    Several registry keys may point at one class; a class is exported once, under its own name.
    """
    out: dict[str, str] = {}
    for target in entries.values():
        if isinstance(target, str):
            out[_split(target)[1]] = target
    return out


def lazy_getattr(package: str, names: dict[str, str], registry_entries: dict | None = None) -> Callable[[str], object]:
    """A module ``__getattr__`` that imports an exported name on first access and caches it.

    ``names`` maps an attribute to a submodule of ``package`` (``"format"``) or to a full
    ``"module:Attr"`` path. ``registry_entries`` (the live registry dict) adds every class
    registered there, including those registered at run time, under its class name.
    """

    def __getattr__(name: str):
        target = names.get(name)
        if target is None and registry_entries is not None:
            for entry in list(registry_entries.values()):
                if isinstance(entry, type) and entry.__name__ == name:
                    return entry  # registered at run time: not cached, the registry is the truth
                if isinstance(entry, str) and _split(entry)[1] == name:
                    target = entry
                    break
        if target is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attr = _split(target) if ":" in target else (f"{package}.{target}", name)
        value = getattr(importlib.import_module(module), attr)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
