"""Attacks by name, so configs and the CLI can build them.

Adding an attack is one new module plus one line in ``_REGISTRY``. Entries are
import paths, resolved on first use, so importing :mod:`humanize.attacks` stays cheap.
"""

from __future__ import annotations

import importlib

from .base import Attack

_REGISTRY: dict[str, "str | type[Attack]"] = {
    # RAID (Dugan et al., 2024), Table 11 / Appendix E.4
    "alternative_spelling": "humanize.attacks.alternative_spelling:AlternativeSpelling",
    "article_deletion": "humanize.attacks.article_deletion:ArticleDeletion",
    "homoglyph": "humanize.attacks.homoglyph:Homoglyph",
    "insert_paragraphs": "humanize.attacks.insert_paragraphs:InsertParagraphs",
    "misspelling": "humanize.attacks.misspelling:Misspelling",
    "number_swap": "humanize.attacks.number_swap:NumberSwap",
    "upper_lower": "humanize.attacks.upper_lower:UpperLower",
    "whitespace": "humanize.attacks.whitespace:Whitespace",
    "zero_width_space": "humanize.attacks.zero_width_space:ZeroWidthSpace",
    # Format counterfactuals (artifact-reliance paper, Section 5.1)
    "strip_format": "humanize.attacks.format:StripFormat",
    "impose_format": "humanize.attacks.format:ImposeFormat",
}

#: Attacks that need no model: the demo and the rule-based benchmark use these.
RULE_BASED = (
    "alternative_spelling",
    "article_deletion",
    "homoglyph",
    "insert_paragraphs",
    "misspelling",
    "number_swap",
    "upper_lower",
    "whitespace",
    "zero_width_space",
)


def register(name: str, target: "str | type[Attack]") -> None:
    """Add an attack class (or an ``"module:Class"`` path) under ``name``."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"attack name must be a non-empty str, got {name!r}")
    if not isinstance(target, str):
        if not (isinstance(target, type) and issubclass(target, Attack)):
            raise TypeError(f"register expects an Attack subclass or 'module:Class', got {target!r}")
    _REGISTRY[name] = target


def available() -> list[str]:
    """Registered attack names, sorted."""
    return sorted(_REGISTRY)


def resolve(name: str) -> type[Attack]:
    """The attack class registered under ``name``."""
    if not isinstance(name, str):
        raise TypeError(f"attack name must be a str, got {type(name).__name__}")
    try:
        target = _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown attack {name!r}; available: {', '.join(available())}") from None
    if isinstance(target, type):
        return target
    module, _, cls = target.partition(":")
    return getattr(importlib.import_module(module), cls)


def get(name: str, **params) -> Attack:
    """Build the attack registered under ``name`` with ``params`` (e.g. ``get("homoglyph", rate=0.5)``)."""
    cls = resolve(name)
    valid = cls._param_names()
    unknown = sorted(set(params) - set(valid))
    if unknown:
        raise ValueError(f"attack {name!r} has no parameter(s) {', '.join(unknown)}; valid: {', '.join(valid)}")
    return cls(**params)
