"""Detectors inside an attack: RAFT's black-box target, HMGC's surrogate, Adversarial Paraphrasing's guide.

Shared by the word-level attacks (:mod:`.wordsub`) and the rewriting ones (:mod:`.generation`).

A detector is given as a :class:`~humanize.detectors.target.Target` (queried as
is: the attack never refits it, and the caller's object is the one queried, so
the same Target can score the attack's outputs), a registered name
(``"log_likelihood"``), a table ``{"name": "tfidf_lr", **params}`` or a
:class:`~humanize.detectors.base.Detector`. A learnable one given otherwise
than as a Target is fit on ``train``:

- an explicit ``(texts, labels)`` pair;
- a dataset name (``"demo"``) or a table ``{"dataset": "demo", "fraction": 0.5,
  "split": "train" | "all", "n": 200, **loader filters}``: the clean texts of the
  dataset's train split with the attack's seed, through the core hook
  :func:`humanize._providers.training_set`: the packaged demo set is read there, any other
  dataset by the benchmarks layer once it is imported (this layer imports nothing from the
  benchmarks: without ``import humanize.benchmarks`` another dataset name is a clear error).

Fitted detectors are kept per process (as Targets), keyed on the detector's
fingerprint, the training set and the seed, so the θ values of a sweep share one fit.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any

from humanize.detectors.target import Target, is_fitted

import math as math
from numbers import Real

from humanize.validation import Interval

__all__ = ["build_detector", "training_set", "ready_target", "ready_detector", "check_detector_spec",
           "check_train_spec", "THRESHOLD", "check_ready", "QueriesDetector"]

_FITTED: "OrderedDict[str, Target]" = OrderedDict()
_MAX_FITTED = 8


def check_detector_spec(owner: str, what: str, spec: Any) -> None:
    """A detector spec's shape, in the one spec grammar (:func:`humanize._registry.parse_spec`: a name,
    ``NAME:K=V,...``, a table or an object); the name is checked against the registry."""
    parsed = _detector_spec(owner, what, spec)
    if parsed.obj is not None:
        return
    from humanize import detectors

    try:
        detectors.resolve(parsed.name)  # a registry key, an entry point or an import path (a plug-in's class)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{owner}: {what}: {err}") from None


def _detector_spec(owner: str, what: str, spec: Any):
    from humanize._registry import parse_spec
    from humanize.detectors.base import Detector

    if not isinstance(spec, (str, dict, Detector, Target)):
        raise TypeError(f"{owner}: {what} must be a detector name (NAME or NAME:K=V,...), a table {{name = ..., "
                        f"params...}}, a Detector or a Target, got {type(spec).__name__}")
    try:
        return parse_spec(spec, "detector", TypeError, objects=(Detector, Target))
    except TypeError as err:
        raise TypeError(f"{owner}: {what}: {err}") from None


def build_detector(spec: Any, owner: str = "attack", what: str = "detector"):
    """The detector a spec names (a new, unfitted instance for names and tables; a Target's detector)."""
    from humanize import detectors

    check_detector_spec(owner, what, spec)
    parsed = _detector_spec(owner, what, spec)
    if isinstance(parsed.obj, Target):
        return parsed.obj.detector
    if parsed.obj is not None:
        return parsed.obj
    try:
        return detectors.get(parsed.name, **parsed.params)
    except (TypeError, ValueError) as err:
        raise type(err)(f"{owner}: {what} {parsed.name!r}: {err}") from None


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
    """``(texts, labels)`` of a train spec: a pair as given; a dataset name or table through the
    benchmarks' resolver (:func:`humanize._providers.training_set`, the module docstring)."""
    from humanize import _providers

    check_train_spec(owner, train)
    if train is None:
        raise ValueError(f"{owner}: no training set (train is None)")
    if isinstance(train, (list, tuple)):
        return list(train[0]), list(train[1])
    return _providers.training_set(train, seed, owner)


def _needs_train(owner: str, what: str, name: str) -> ValueError:
    return ValueError(f"{owner}: {what} {name!r} learns, so it needs a training set: pass train= a dataset name "
                      f"(e.g. 'demo'), a table {{dataset = ..., n = ...}}, (texts, labels), or a fitted Target")


def check_ready(owner: str, what: str, spec: Any, train: Any, train_name: str = "train") -> None:
    """At construction: a learnable detector needs ``train``, a fitted state or a Target (which checks its own)."""
    if train is not None or isinstance(spec, Target):
        return
    det = build_detector(spec, owner, what)  # cheap: detectors load models on first use
    if det.learnable and not is_fitted(det):
        raise ValueError(f"{owner}: {what} {det.name!r} learns, so it needs {train_name}= a dataset name "
                         f"(e.g. 'demo'), a table {{dataset = ..., n = ...}}, (texts, labels), or a fitted Target")


def ready_target(spec: Any, train: Any, seed: int, owner: str = "attack", what: str = "detector") -> Target:
    """The :class:`Target` an attack queries for ``spec``: a Target as given (``train`` is then unused);
    otherwise one of the detector, fit on ``train`` when it learns (cached per process)."""
    from humanize._canonical import canonical_json, digest

    if isinstance(spec, Target):
        return spec
    detector = build_detector(spec, owner, what)
    if not detector.learnable:
        return Target(detector)
    if train is None:
        if is_fitted(detector):
            return Target(detector)
        raise _needs_train(owner, what, detector.name)
    if isinstance(train, (list, tuple)):
        train_key = digest(canonical_json([list(train[0]), [str(x) for x in train[1]]]))
    else:
        train_key = canonical_json(train)
    key = f"{detector.fingerprint()}|{train_key}|{int(seed)}"
    hit = _FITTED.get(key)
    if hit is not None:
        _FITTED.move_to_end(key)
        return hit
    texts, labels = training_set(train, seed, owner)
    if detector is spec:  # the caller's object: the Target fits a copy (a fitted one is refit on train, as given)
        from sklearn.base import clone

        target = Target(clone(spec), (texts, labels))
    else:  # built here from a name or table: fitted in place, no copy
        target = Target._owning(detector, (texts, labels))
    _FITTED[key] = target
    while len(_FITTED) > _MAX_FITTED:
        _FITTED.popitem(last=False)
    return target


def ready_detector(spec: Any, train: Any, seed: int, owner: str = "attack", what: str = "detector"):
    """The fitted detector of :func:`ready_target` (fitted now if it was not)."""
    return ready_target(spec, train, seed, owner, what).fitted_detector()


#: A score threshold (a declared parameter constraint): None or a real number, not a bool, not NaN.
THRESHOLD = [Interval(Real, -math.inf, math.inf), None]


class QueriesDetector:
    """Mixin for a part that queries a detector: ``target()`` gives the :class:`Target` it scores with,
    ``ready()`` the fitted detector (for a gradient or a model's attributes), fitted on ``train`` with ``seed``.

    ``_detector_param`` names the attribute holding the detector spec. A Target given there is the
    one queried (its counts see every query); otherwise the Target comes from :func:`ready_target`'s
    per-process cache (a ranker and a search naming the same surrogate share one fit) and is dropped
    when a parameter changes.
    """

    _detector_param = "detector"

    def target(self) -> Target:
        tgt = self.__dict__.get("_ready")
        if tgt is None:
            what = self._detector_param
            tgt = self.__dict__["_ready"] = ready_target(getattr(self, what), self.train, int(self.seed),
                                                         type(self).__name__, what)
        return tgt

    def ready(self):
        return self.target().fitted_detector()

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if name[:1] != "_":
            self.__dict__.pop("_ready", None)
