"""Humanizing attacks: text in, text plus exact edits out.

>>> from humanize import attacks
>>> attacks.Homoglyph(seed=1)("Hello world")  # doctest: +SKIP
>>> attacks.get("whitespace", rate=0.3, seed=2).apply("a b c d")  # doctest: +SKIP

Attack classes are imported on first access, so ``import humanize.attacks`` is cheap.
"""

from __future__ import annotations

from humanize._lazy import lazy_getattr

from ._stream import DocumentRandom
from .base import (Attack, AttackResult, Edit, SiteAttack, apply_edits, check_edits, document_random, document_rng,
                   document_seed)
from .pipeline import Pipeline, compose_edits
from .registry import RULE_BASED, available, get, register, resolve

_CLASSES = {
    "AlternativeSpelling": "alternative_spelling",
    "ArticleDeletion": "article_deletion",
    "Homoglyph": "homoglyph",
    "InsertParagraphs": "insert_paragraphs",
    "Misspelling": "misspelling",
    "NumberSwap": "number_swap",
    "UpperLower": "upper_lower",
    "Whitespace": "whitespace",
    "ZeroWidthSpace": "zero_width_space",
    "StripFormat": "format",
    "ImposeFormat": "format",
    "FormatProfile": "format",
    "is_admissible": "format",
    "InadmissibleTransform": "format",
}

__all__ = [
    "Attack",
    "AttackResult",
    "DocumentRandom",
    "Edit",
    "Pipeline",
    "RULE_BASED",
    "SiteAttack",
    "apply_edits",
    "available",
    "check_edits",
    "compose_edits",
    "document_random",
    "document_rng",
    "document_seed",
    "get",
    "register",
    "resolve",
    *_CLASSES,
]


__getattr__ = lazy_getattr(__name__, _CLASSES)


def __dir__():
    return sorted(set(globals()) | set(_CLASSES))
