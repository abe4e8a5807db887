"""Humanizing attacks: text in, text plus exact edits out.

>>> from humanize import attacks
>>> attacks.Homoglyph(seed=1)("Hello world")  # doctest: +SKIP
>>> attacks.get("whitespace", rate=0.3, seed=2).apply("a b c d")  # doctest: +SKIP

Attack classes are imported on first access, so ``import humanize.attacks`` is cheap.
"""

from __future__ import annotations

from humanize._lazy import lazy_getattr
from humanize._lazy import registry_exports as _registry_exports

from ._stream import DocumentRandom
from .base import (Attack, AttackResult, Edit, SiteAttack, apply_edits, check_edits, document_random, document_rng,
                   document_seed)
from .pipeline import Pipeline, compose_edits
from .registry import _REGISTRY, RULE_BASED, available, get, origin, register, resolve

#: Helpers of the format counterfactuals that are not registered attacks.
_EXTRAS = {
    "FormatProfile": "format_profile",
    "is_admissible": "format",
    "InadmissibleTransform": "humanize.exceptions:InadmissibleTransform",
    "Target": "humanize.detectors.target:Target",  # what a guided attack (RAFT, HMGC) queries
}
#: Every registered attack class under its class name, plus the extras: adding an attack is
#: one module and one registry line, and ``attacks.ClassName`` works without another edit.
_CLASSES = {**_registry_exports(_REGISTRY), **_EXTRAS}

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
    "origin",
    "register",
    "resolve",
    *_CLASSES,
]


__getattr__ = lazy_getattr(__name__, _CLASSES, _REGISTRY)


def __dir__():
    return sorted(set(globals()) | set(_CLASSES) | set(_registry_exports(_REGISTRY)))
