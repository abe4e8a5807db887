"""Targets from dataset names: what the attack layer cannot load itself.

An attack that learns (HMGC's surrogate, RAFT's target) may name its training set:

- a dataset name (``"demo"``): its clean human and machine texts in the *train*
  part of the source-document split (:func:`humanize._split.in_train_split` with
  the attack's seed and ``fraction`` 0.5), the runner's own rule: with the run's
  seed and ``train_fraction`` the detector never sees a document the run tests
  on (TH-Bench's "matched" setting when it is the run's dataset, "mismatched"
  when another);
- a table ``{"dataset": "demo", "fraction": 0.5, "split": "train" | "all", "n": 200, **loader filters}``
  (``n`` texts per label, sampled with the seed).

The attacks live below the benchmarks and import nothing from them, so
:func:`dataset_training_set` reaches them through the core hook
:func:`humanize._providers.set_training_sets`, installed when
:mod:`humanize.benchmarks` is imported (the packaged demo set needs no hook: the
core reads it, by the same rule, :func:`humanize._providers.training_texts`). :func:`build_target` builds a
:class:`~humanize.detectors.target.Target` from a detector and a dataset name,
here, above the attack layer.
"""
from __future__ import annotations

from typing import Any

from humanize._providers import training_spec, training_texts
from humanize.detectors.target import Target

__all__ = ["build_target", "dataset_training_set"]


def dataset_training_set(train: Any, seed: int, owner: str = "attack") -> tuple[list[str], list[str]]:
    """``(texts, labels)`` of a dataset-named training set (a name or a table, see the module docstring)."""
    from humanize.attacks.targets import check_train_spec

    from ..data import available_datasets, load_dataset

    check_train_spec(owner, train)
    if not isinstance(train, (str, dict)):
        raise TypeError(f"{owner}: a dataset-named training set is a name or a table {{dataset = ...}}, "
                        f"got {type(train).__name__}")
    dataset, fraction, split, n, filters = training_spec(train)
    if dataset not in available_datasets():
        raise ValueError(f"{owner}: unknown train dataset {dataset!r}; available: {', '.join(available_datasets())}")
    try:
        df = load_dataset(dataset, **filters)
    except TypeError as err:
        raise TypeError(f"{owner}: train dataset {dataset!r}: {err}") from None
    return training_texts(df, dataset, fraction, split, n, seed, owner)


def build_target(detector: Any, train: Any = None, *, seed: int = 0) -> Target:
    """A :class:`~humanize.detectors.target.Target` of ``detector`` fitted (lazily) on ``train``.

    ``detector``: a registered name, a table ``{name = ..., **params}`` or a Detector (a
    caller's object is never fitted in place); ``train``: None, a dataset name or table
    (resolved here with ``seed``: the texts an attack naming it would train on) or
    ``(texts, labels)``. A zero-shot detector ignores ``train``. The same Target handed to
    an attack (``RAFT(target=t)``, ``HMGC(surrogate=t)``) and to scoring queries one fit.
    """
    from humanize.attacks.targets import build_detector, check_train_spec

    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"build_target: seed must be an int, got {type(seed).__name__}")
    if isinstance(detector, Target):
        if train is not None:
            raise ValueError("build_target: detector is already a Target (it holds its own training set); "
                             "pass train=None or the Target's detector")
        return detector
    det = build_detector(detector, "build_target", "detector")
    check_train_spec("build_target", train)
    if not det.learnable or train is None:
        return Target(det)
    pair = dataset_training_set(train, seed, "build_target") if isinstance(train, (str, dict)) else train
    texts, labels = list(pair[0]), list(pair[1])
    return Target._owning(det, (texts, labels)) if det is not detector else Target(det, (texts, labels))
