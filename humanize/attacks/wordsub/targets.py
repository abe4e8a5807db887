"""Detectors inside an attack: RAFT's black-box target and HMGC's surrogate.

A detector is given as a registered name (``"log_likelihood"``), a table
``{"name": "tfidf_lr", **params}`` or a :class:`~humanize.detectors.base.Detector`.
A learnable one is fit on ``train``:

- a dataset name (``"demo"``): its clean human and machine texts in the *train*
  part of the source-document split (:func:`humanize.benchmarks.datasets.split.in_train_split`
  with the attack's seed and ``fraction`` 0.5), the runner's own rule: with the
  run's seed and ``train_fraction`` the detector never sees a document the run
  tests on (TH-Bench's "matched" setting when it is the run's dataset,
  "mismatched" when another);
- a table ``{"dataset": "demo", "fraction": 0.5, "split": "train" | "all", "n": 200, **loader filters}``
  (``n`` texts per label, sampled with the seed);
- an explicit ``(texts, labels)`` pair.

Fitted detectors are kept per process, keyed on the detector's fingerprint, the
training set and the seed, so the θ values of a sweep share one fit.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any

__all__ = ["build_detector", "training_set", "ready_detector", "check_detector_spec", "check_train_spec",
           "check_threshold", "QueriesDetector"]

_FITTED: "OrderedDict[str, Any]" = OrderedDict()
_MAX_FITTED = 8
_TRAIN_KEYS = ("dataset", "fraction", "split", "n")


def check_detector_spec(owner: str, what: str, spec: Any) -> None:
    """A detector spec's shape (the name is checked against the registry)."""
    from humanize import detectors
    from humanize.detectors.base import Detector

    if isinstance(spec, Detector):
        return
    if isinstance(spec, dict):
        name = spec.get("name")
        if not isinstance(name, str):
            raise TypeError(f"{owner}: {what} table needs a 'name' (a registered detector), got {spec!r}")
    elif isinstance(spec, str):
        name = spec
    else:
        raise TypeError(f"{owner}: {what} must be a detector name, a table {{name = ..., params...}} or a "
                        f"Detector, got {type(spec).__name__}")
    if name not in detectors.available():
        raise ValueError(f"{owner}: unknown {what} detector {name!r}; available: {', '.join(detectors.available())}")


def build_detector(spec: Any, owner: str = "attack", what: str = "detector"):
    """The detector a spec names (a new, unfitted instance for names and tables)."""
    from humanize import detectors

    check_detector_spec(owner, what, spec)
    if isinstance(spec, str):
        return detectors.get(spec)
    if isinstance(spec, dict):
        params = {k: v for k, v in spec.items() if k != "name"}
        try:
            return detectors.get(spec["name"], **params)
        except (TypeError, ValueError) as err:
            raise type(err)(f"{owner}: {what} {spec['name']!r}: {err}") from None
    return spec


def check_train_spec(owner: str, train: Any) -> None:
    """``train``'s shape: None, a dataset name, a table with ``dataset``, or ``(texts, labels)``."""
    if train is None or isinstance(train, str):
        return
    if isinstance(train, dict):
        if not isinstance(train.get("dataset"), str):
            raise TypeError(f"{owner}: train table needs 'dataset' (a dataset name), got {train!r}")
        frac = train.get("fraction", 0.5)
        if isinstance(frac, bool) or not isinstance(frac, (int, float)) or not 0 < frac <= 1:
            raise ValueError(f"{owner}: train fraction must be a number in (0, 1], got {frac!r}")
        if train.get("split", "train") not in ("train", "all"):
            raise ValueError(f"{owner}: train split must be 'train' or 'all', got {train.get('split')!r}")
        n = train.get("n")
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
            raise ValueError(f"{owner}: train n must be an int >= 1 (texts per label) or absent, got {n!r}")
        return
    if isinstance(train, (list, tuple)) and len(train) == 2:
        texts, labels = train
        if isinstance(texts, str) or not all(isinstance(t, str) for t in texts):
            raise TypeError(f"{owner}: train (texts, labels) needs a sequence of str texts")
        if len(list(labels)) != len(list(texts)):
            raise ValueError(f"{owner}: train has {len(list(texts))} texts but {len(list(labels))} labels")
        return
    raise TypeError(f"{owner}: train must be None, a dataset name, a table {{dataset = ..., n = ...}} or a "
                    f"(texts, labels) pair, got {type(train).__name__}")


def training_set(train: Any, seed: int, owner: str = "attack") -> tuple[list[str], list[str]]:
    """``(texts, labels)`` of a train spec (see the module docstring)."""
    from humanize.benchmarks.config import sampling_seed
    from humanize.benchmarks.datasets import available_datasets, load_dataset
    from humanize.benchmarks.datasets.split import in_train_split

    check_train_spec(owner, train)
    if isinstance(train, (list, tuple)):
        return list(train[0]), list(train[1])
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
        df = df[[in_train_split(str(s), seed, fraction) for s in df["source_id"]]]
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


def _is_fitted(detector) -> bool:
    return any(k.endswith("_") and not k.startswith("_") for k in vars(detector))


def ready_detector(spec: Any, train: Any, seed: int, owner: str = "attack", what: str = "detector"):
    """The detector of ``spec``, fit on ``train`` when it learns (cached per process)."""
    from humanize._canonical import canonical_json, digest

    detector = build_detector(spec, owner, what)
    if not detector.learnable:
        return detector
    if train is None:
        if _is_fitted(detector):
            return detector
        raise ValueError(f"{owner}: {what} {detector.name!r} learns, so it needs a training set: pass train= "
                         f"a dataset name (e.g. 'demo'), a table {{dataset = ..., n = ...}} or (texts, labels)")
    if isinstance(train, (list, tuple)):
        train_key = digest(canonical_json([list(train[0]), [str(x) for x in train[1]]]))
    else:
        train_key = canonical_json(train)
    if detector is spec:  # never fit the caller's own object in place
        from sklearn.base import clone

        detector = clone(spec)
    key = f"{detector.fingerprint()}|{train_key}|{int(seed)}"
    hit = _FITTED.get(key)
    if hit is not None:
        _FITTED.move_to_end(key)
        return hit
    texts, labels = training_set(train, seed, owner)
    fitted = detector.fit(texts, labels)
    _FITTED[key] = fitted
    while len(_FITTED) > _MAX_FITTED:
        _FITTED.popitem(last=False)
    return fitted


def check_threshold(owner: str, name: str, value: Any) -> None:
    """A score threshold: None or a real number (not a bool, not NaN)."""
    import numpy as np

    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating))
                              or value != value):
        raise TypeError(f"{owner}: {name} must be None or a number, got {type(value).__name__} {value!r}")


class QueriesDetector:
    """Mixin for a part that queries a detector: ``ready()`` gives it, fitted on ``train`` with ``seed``.

    ``_detector_param`` names the attribute holding the detector spec. The fitted
    detector comes from :func:`ready_detector`'s per-process cache (a ranker and a
    search naming the same surrogate share one fit) and is dropped when a
    parameter changes.
    """

    _detector_param = "detector"

    def ready(self):
        det = self.__dict__.get("_ready")
        if det is None:
            what = self._detector_param
            det = self.__dict__["_ready"] = ready_detector(getattr(self, what), self.train, int(self.seed),
                                                           type(self).__name__, what)
        return det

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if name[:1] != "_":
            self.__dict__.pop("_ready", None)
