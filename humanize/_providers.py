"""Hooks the upper layers fill for the lower ones (dependency inversion), and the training-set rule.

An attack that learns (HMGC's surrogate, RAFT's target) may be given its
training set by *name*: ``train="demo"`` or ``{dataset = "demo", n = 200}``.
The package's own demo set is read here, below the attacks (:func:`humanize._data.demo_rows`),
so ``attacks.get("hmgc").batch(texts)`` works from ``from humanize import attacks`` alone.
Every other dataset is loaded by :mod:`humanize.benchmarks`, which the attack layer must
not import (layers point down only): the benchmarks layer installs the function that
turns such a spec into ``(texts, labels)`` here when it is imported
(:func:`set_training_sets`), and the attacks call :func:`training_set`. Without it,
naming another dataset is a clear error. Both paths pick the texts by one rule
(:func:`training_texts`), so ``"demo"`` gives the same training set either way.
"""
from __future__ import annotations

from typing import Any, Callable, Optional
from humanize.exceptions import ProviderMissing

__all__ = ["ProviderMissing", "set_training_sets", "training_sets_installed", "training_set", "training_spec",
           "training_texts"]

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


def training_spec(train: Any) -> tuple[str, float, str, Any, dict]:
    """``(dataset, fraction, split, n, loader filters)`` of a dataset-named training set (a name or a table
    ``{dataset = ..., fraction = 0.5, split = "train" | "all", n = ..., **filters}``)."""
    spec = {"dataset": train} if isinstance(train, str) else dict(train)
    dataset = spec.pop("dataset")
    return dataset, spec.pop("fraction", 0.5), spec.pop("split", "train"), spec.pop("n", None), spec


def training_texts(df, dataset: str, fraction: float, split: str, n: Any, seed: int,
                   owner: str = "attack") -> tuple[list[str], list[str]]:
    """``(texts, labels)`` of a dataset's rows: its clean texts, in the *train* part of the source-document
    split (:func:`humanize._split.group_split` with ``seed`` and ``fraction``, the runner's own rule) unless
    ``split="all"``, human then machine, each sorted by id (``n`` per label sampled with the seed)."""
    from ._split import group_split, sampling_seed

    df = df[(df["attack"].fillna("none") == "none") & df["generation"].map(lambda t: isinstance(t, str))]
    if split == "train":
        df = df[[p == "train" for p in group_split(df["source_id"], df["generation"], seed, fraction).parts]]
    parts = []
    for label in ("human", "machine"):
        part = df[df["label"] == label].sort_values("id")
        if n is not None and len(part) > n:
            part = part.sample(n=n, random_state=sampling_seed(seed))
        parts.append(part)
    texts = [t for p in parts for t in p["generation"]]
    labels = [lab for p in parts for lab in p["label"]]
    if len(set(labels)) < 2:
        raise ValueError(f"{owner}: train dataset {dataset!r} ({split} split) has no "
                         f"{'human' if 'machine' in labels else 'machine'} texts to fit on")
    return texts, labels


#: The datasets that ship with the package, readable from here without the benchmarks layer.
PACKAGED = ("demo",)


def packaged_training_set(train: Any, seed: int, owner: str = "attack") -> tuple[list[str], list[str]]:
    """``(texts, labels)`` of a training set on the packaged demo set (no benchmarks layer needed)."""
    from ._data import demo_rows

    dataset, fraction, split, n, filters = training_spec(train)
    try:
        df = demo_rows(**filters)
    except TypeError as err:
        raise TypeError(f"{owner}: train dataset {dataset!r}: {err}") from None
    return training_texts(df, dataset, fraction, split, n, int(seed), owner)


def training_set(spec: Any, seed: int, owner: str = "attack", what: str = "train") -> tuple[list, list]:
    """``(texts, labels)`` of a dataset-named training set (``"demo"`` or ``{dataset = ..., ...}``).

    ``owner`` and ``what`` (the parameter's name) are for the messages.
    """
    if _TRAINING_SETS is None:
        dataset = spec if isinstance(spec, str) else spec.get("dataset") if isinstance(spec, dict) else None
        if dataset in PACKAGED:
            return packaged_training_set(spec, int(seed), owner)
        raise ProviderMissing(
            f"{owner}: {what}={spec!r} names a dataset, loaded by humanize.benchmarks, which is not imported: "
            f"`import humanize.benchmarks` first, or pass {what}=(texts, labels) or a fitted Target")
    texts, labels = _TRAINING_SETS(spec, int(seed), owner)
    return list(texts), list(labels)
