"""Name -> class registries for attacks and detectors, resolved lazily.

Entries are ``"module:Class"`` import paths (imported on first use, so importing
a subpackage stays cheap) or classes registered at run time.
"""

from __future__ import annotations

import importlib


class Registry:
    """The ``kind`` objects (subclasses of ``base``) known by name; ``entries`` is the live dict."""

    def __init__(self, kind: str, base: type, entries: dict):
        self.kind = kind
        self.base = base
        self.entries = entries

    def register(self, name: str, target) -> None:
        """Add a class (or an ``"module:Class"`` path) under ``name``."""
        if not isinstance(name, str) or not name:
            raise TypeError(f"{self.kind} name must be a non-empty str, got {name!r}")
        if not isinstance(target, str) and not (isinstance(target, type) and issubclass(target, self.base)):
            raise TypeError(f"register expects a subclass of {self.base.__name__} or 'module:Class', got {target!r}")
        if isinstance(target, str) and target.count(":") != 1:
            raise ValueError(f"register expects an import path 'module:Class', got {target!r}")
        if isinstance(target, type):
            self._check_name(name, target)
        self.entries[name] = target

    def _check_name(self, name: str, cls: type) -> None:
        """A class's ``name`` is its registry key: results, reports and random streams are keyed by it."""
        own = getattr(cls, "name", None)
        if own != name:
            raise ValueError(
                f"cannot register {cls.__qualname__} as {self.kind} {name!r}: its name attribute is {own!r}; "
                f"set {cls.__qualname__}.name = {name!r} (outputs, reports and random streams are keyed by it)"
            )

    def available(self) -> list[str]:
        """Registered names, sorted."""
        return sorted(self.entries)

    def resolve(self, name: str) -> type:
        """The class registered under ``name``."""
        if not isinstance(name, str):
            raise TypeError(f"{self.kind} name must be a str, got {type(name).__name__}")
        try:
            target = self.entries[name]
        except KeyError:
            raise ValueError(f"unknown {self.kind} {name!r}; available: {', '.join(self.available())}") from None
        if isinstance(target, type):
            return target
        module, _, attr = target.partition(":")
        cls = getattr(importlib.import_module(module), attr)
        if not (isinstance(cls, type) and issubclass(cls, self.base)):
            raise TypeError(f"{self.kind} {name!r} is registered as {target!r}, which is not a {self.base.__name__}")
        self._check_name(name, cls)
        return cls

    def get(self, name: str, **params):
        """Build the object registered under ``name`` with ``params``."""
        cls = self.resolve(name)
        valid = cls._param_names()
        unknown = sorted(set(params) - set(valid))
        if unknown:
            raise ValueError(f"{self.kind} {name!r} has no parameter(s) {', '.join(unknown)}; valid: {', '.join(valid)}")
        return cls(**params)
