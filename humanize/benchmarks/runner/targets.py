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
:mod:`humanize.benchmarks` is imported. :func:`build_target` builds a
:class:`~humanize.detectors.target.Target` from a detector and a dataset name,
here, above the attack layer.
"""
from __future__ import annotations

from typing import Any

from humanize._split import group_split, sampling_seed
from humanize.detectors.target import Target

__all__ = ["build_target", "dataset_training_set"]


def dataset_training_set(train: Any, seed: int, owner: str = "attack") -> tuple[list[str], list[str]]:
    """``(texts, labels)`` of a dataset-named training set (a name or a table, see the module docstring)."""
    from humanize.attacks.wordsub.targets import check_train_spec

    from ..data import available_datasets, load_dataset

    check_train_spec(owner, train)
    if not isinstance(train, (str, dict)):
        raise TypeError(f"{owner}: a dataset-named training set is a name or a table {{dataset = ...}}, "
                        f"got {type(train).__name__}")
    spec = {"dataset": train} if isinstance(train, str) else dict(train)
    dataset = spec.pop("dataset")
    fraction = spec.pop("fraction", 0.5)
    split = spec.pop("split", "train")
    n = spec.pop("n", None)
    if dataset not in available_datasets():
        raise ValueError(f"{owner}: unknown train dataset {dataset!r}; available: {', '.join(available_datasets())}")
    try:
        df = load_dataset(dataset, **spec)
    except TypeError as err:
        raise TypeError(f"{owner}: train dataset {dataset!r}: {err}") from None
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


def build_target(detector: Any, train: Any = None, *, seed: int = 0) -> Target:
    """A :class:`~humanize.detectors.target.Target` of ``detector`` fitted (lazily) on ``train``.

    ``detector``: a registered name, a table ``{name = ..., **params}`` or a Detector (a
    caller's object is never fitted in place); ``train``: None, a dataset name or table
    (resolved here with ``seed``: the texts an attack naming it would train on) or
    ``(texts, labels)``. A zero-shot detector ignores ``train``. The same Target handed to
    an attack (``RAFT(target=t)``, ``HMGC(surrogate=t)``) and to scoring queries one fit.
    """
    from humanize.attacks.wordsub.targets import build_detector, check_train_spec

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
