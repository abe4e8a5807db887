"""Defenses: rewrites applied to a text before a detector scores it (issue #12 §3).

>>> from humanize.defenses import get
>>> get("normalize")("Hеllo\u200b  world")  # a Cyrillic е and a zero-width space
'Hello world'

A defense returns, like an attack, an :class:`~humanize.attacks.AttackResult` with
exact edits over the original (``apply``), or only the text (``__call__``). Adding a
defense is one module and one line in ``_REGISTRY``.
"""

from __future__ import annotations

from humanize._lazy import lazy_getattr
from humanize._lazy import registry_exports as _registry_exports
from humanize._registry import Registry

from .base import Defense

_REGISTRY: dict = {
    "normalize": "humanize.defenses.normalize:Normalize",  # homoglyphs, invisibles, whitespace, quotes, NFKC
}

_registry = Registry("defense", Defense, _REGISTRY, group="humanize.defenses")
register, available, resolve, get, origin = _registry.functions()

_CLASSES = _registry_exports(_REGISTRY)

__all__ = ["Defense", "available", "get", "origin", "register", "resolve", *_CLASSES]

__getattr__ = lazy_getattr(__name__, _CLASSES, _REGISTRY)
