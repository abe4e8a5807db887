"""Detectors by name, so configs and the CLI can build them.

Adding a detector is one new module plus one line in ``_REGISTRY`` (an import
path, resolved on first use).
"""

from __future__ import annotations

import importlib

from .base import Detector

_REGISTRY: dict[str, "str | type[Detector]"] = {
}


def register(name: str, target: "str | type[Detector]") -> None:
    if not isinstance(name, str) or not name:
        raise TypeError(f"detector name must be a non-empty str, got {name!r}")
    if not isinstance(target, str):
        if not (isinstance(target, type) and issubclass(target, Detector)):
            raise TypeError(f"register expects a Detector subclass or 'module:Class', got {target!r}")
    _REGISTRY[name] = target


def available() -> list[str]:
    return sorted(_REGISTRY)


def resolve(name: str) -> type[Detector]:
    if not isinstance(name, str):
        raise TypeError(f"detector name must be a str, got {type(name).__name__}")
    try:
        target = _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown detector {name!r}; available: {', '.join(available())}") from None
    if isinstance(target, type):
        return target
    module, _, cls = target.partition(":")
    return getattr(importlib.import_module(module), cls)


def get(name: str, **params) -> Detector:
    cls = resolve(name)
    valid = cls._param_names()
    unknown = sorted(set(params) - set(valid))
    if unknown:
        raise ValueError(f"detector {name!r} has no parameter(s) {', '.join(unknown)}; valid: {', '.join(valid)}")
    return cls(**params)
