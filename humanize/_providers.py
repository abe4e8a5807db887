"""Hooks the upper layers fill for the lower ones (dependency inversion).

An attack that learns (HMGC's surrogate, RAFT's target) may be given its
training set by *name*: ``train="demo"`` or ``{dataset = "demo", n = 200}``.
Datasets are loaded by :mod:`humanize.benchmarks`, which the attack layer must
not import (layers point down only). So the benchmarks layer installs the
function that turns such a spec into ``(texts, labels)`` here, when it is
imported (:func:`set_training_sets`), and the attacks call
:func:`training_set`. Without it, naming a dataset is a clear error; passing
``(texts, labels)`` or a fitted :class:`~humanize.detectors.target.Target`
needs nothing above the attacks.
"""
from __future__ import annotations

from typing import Any, Callable, Optional
from humanize.exceptions import ProviderMissing

__all__ = ["ProviderMissing", "set_training_sets", "training_sets_installed", "training_set"]

#: ``fn(spec, seed, owner) -> (texts, labels)`` for a dataset-named spec (a str or a table), or None.
_TRAINING_SETS: Optional[Callable[[Any, int, str], tuple]] = None


def set_training_sets(fn: Optional[Callable[[Any, int, str], tuple]]) -> Optional[Callable]:
    """Install ``fn(spec, seed, owner) -> (texts, labels)`` as the resolver of dataset-named training sets.

    Returns the one it replaces (None: none was installed), so a caller can put it back.
    """
    global _TRAINING_SETS
    if fn is not None and not callable(fn):
        raise TypeError(f"set_training_sets: expects a callable fn(spec, seed, owner) or None, "
                        f"got {type(fn).__name__}")
    old, _TRAINING_SETS = _TRAINING_SETS, fn
    return old


def training_sets_installed() -> bool:
    """Whether a resolver of dataset-named training sets is installed."""
    return _TRAINING_SETS is not None


def training_set(spec: Any, seed: int, owner: str = "attack", what: str = "train") -> tuple[list, list]:
    """``(texts, labels)`` of a dataset-named training set (``"demo"`` or ``{dataset = ..., ...}``).

    ``owner`` and ``what`` (the parameter's name) are for the messages.
    """
    if _TRAINING_SETS is None:
        raise ProviderMissing(
            f"{owner}: {what}={spec!r} names a dataset, loaded by humanize.benchmarks, which is not imported: "
            f"`import humanize.benchmarks` first, or pass {what}=(texts, labels) or a fitted Target")
    texts, labels = _TRAINING_SETS(spec, int(seed), owner)
    return list(texts), list(labels)
