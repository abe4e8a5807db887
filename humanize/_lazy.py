"""Lazy attribute exports for subpackages whose classes import heavy dependencies."""

from __future__ import annotations

import importlib
import sys
from typing import Callable


def lazy_getattr(package: str, names: dict[str, str]) -> Callable[[str], object]:
    """A module ``__getattr__`` importing ``package.<names[attr]>`` on first access and caching the value."""

    def __getattr__(name: str):
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
