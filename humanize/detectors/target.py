"""What a guided attack queries: a detector, fitted once on a training set, that counts its queries.

In the spirit of TextAttack's goal function (Morris et al. 2020, §3: the attack
sees the victim only through a query interface that counts what it asks), a
:class:`Target` wraps a :class:`~humanize.detectors.base.Detector`:

>>> from humanize.detectors import Target, TfidfLogReg
>>> t = Target(TfidfLogReg(), train=(texts, labels))  # doctest: +SKIP
>>> t.score(["some text"]), t.queries, t.calls  # doctest: +SKIP

A learnable detector that is not fitted yet is fitted on ``train`` on the first
:meth:`~Target.score` (a copy of it: ``sklearn.base.clone``, so the caller's
object never changes), once, and is then reused; a fitted one (or a zero-shot
one) is queried as is. The same Target can be handed to an attack (RAFT's
``target``, HMGC's ``surrogate``) and to the scoring of its outputs: both query
one fitted detector. Its :meth:`~Target.provenance` names the detector and a
digest of the training set, never the texts.
"""
from __future__ import annotations

import threading
from typing import Any

import numpy as np

from humanize._canonical import canonical_json, digest
from humanize.params import ParamsMixin
from humanize.validation import InstanceOf, check_texts

from .base import Detector, check_labels

__all__ = ["Target", "is_fitted"]


def is_fitted(detector: Any) -> bool:
    """Whether ``detector`` holds fitted state (scikit-learn's convention: public attributes ending in ``_``)."""
    return any(k.endswith("_") and not k.startswith("_") for k in vars(detector))


class Target(ParamsMixin):
    """A detector as an attack queries it: ``score(texts)``, fitted lazily once, queries counted.

    - ``detector``: a :class:`~humanize.detectors.base.Detector`, fitted or not;
    - ``train``: None or ``(texts, labels)`` (labels "human"/"machine" or 0/1, 1 = machine).
      A learnable detector that is not fitted needs it; it is fitted on a copy of the
      detector at the first query. A fitted detector is used as is, and ``train`` then
      records what it was fitted on (the fingerprint's only record of it). A zero-shot
      detector takes no ``train``.

    ``queries`` counts the texts scored, ``calls`` the ``score`` calls (:meth:`reset_counts`);
    a pickled Target carries its fitted detector, if fitted, and its counts.
    """

    version = "1"
    _parameter_constraints = {
        "detector": [InstanceOf(Detector, name="a Detector object (e.g. humanize.detectors.get('tfidf_lr'); "
                                               "to build one from a name and a dataset, "
                                               "humanize.benchmarks.build_target)")],
    }

    def __init__(self, detector: Any, train: Any = None):
        self._init_params(locals())

    # -- parameters -------------------------------------------------------------------
    def _check(self) -> None:
        det = self.detector
        if self.train is not None:
            if not det.learnable:
                raise ValueError(f"Target: detector {det.name!r} does not learn (zero-shot), so train must be None")
            self._check_train(self.train)
        elif det.learnable and not is_fitted(det):
            raise ValueError(self._needs_train_message())
        self.__dict__.pop("_fitted", None)
        self.__dict__.setdefault("queries", 0)
        self.__dict__.setdefault("calls", 0)
        self.__dict__.setdefault("_lock", threading.Lock())

    def _needs_train_message(self) -> str:
        return (f"Target: detector {self.detector.name!r} learns and is not fitted, so it needs train=(texts, labels) "
                f"or a fitted detector")

    @staticmethod
    def _check_train(train: Any) -> None:
        if not isinstance(train, (list, tuple)) or len(train) != 2:
            raise TypeError(f"Target: train must be None or a (texts, labels) pair, got {type(train).__name__}")
        texts, labels = train
        if isinstance(texts, (str, bytes, dict)) or not hasattr(texts, "__len__") or not hasattr(texts, "__iter__"):
            raise TypeError(f"Target: train texts must be a sequence of str (a list, tuple, array or Series), "
                            f"got {type(texts).__name__}")
        texts = list(texts)
        bad = next((i for i, t in enumerate(texts) if not isinstance(t, str)), None)
        if bad is not None:
            raise TypeError(f"Target: train text {bad} is {type(texts[bad]).__name__}, not str")
        if isinstance(labels, (str, bytes)):
            raise TypeError("Target: train labels must be a sequence of labels, got a single str")
        try:
            y = check_labels(labels, len(texts))
        except ValueError as err:
            raise ValueError(f"Target: train {err}") from None
        if len(set(y.tolist())) < 2:
            have = "machine" if len(y) and y[0] == 1 else "human"
            raise ValueError(f"Target: train needs both human and machine texts to fit on, got only {have!r} "
                             f"({len(y)} texts)")

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if name in ("detector", "train"):
            self.__dict__.pop("_fitted", None)  # a new detector or training set: fit again
            if name == "detector":
                self.__dict__.pop("_owns_detector", None)  # a caller's detector is never fitted in place

    # -- what an attack reads ------------------------------------------------------------
    @property
    def name(self) -> str:
        """The detector's name (its registry key)."""
        return self.detector.name

    @property
    def learnable(self) -> bool:
        """Whether the detector learns (then it is fitted on ``train``, or was fitted before)."""
        return bool(self.detector.learnable)

    @property
    def fitted(self) -> bool:
        """Whether :meth:`fitted_detector` would return without fitting."""
        return (not self.learnable or self.__dict__.get("_fitted") is not None
                or is_fitted(self.detector))

    def fitted_detector(self) -> Detector:
        """The detector queried: the given one when zero-shot or fitted, else a copy fitted on ``train`` (once)."""
        det = self.detector
        if not det.learnable:
            return det
        fitted = self.__dict__.get("_fitted")
        if fitted is not None:
            return fitted
        with self._lock:
            fitted = self.__dict__.get("_fitted")
            if fitted is None:
                if is_fitted(det):
                    fitted = det
                elif self.train is None:
                    raise ValueError(self._needs_train_message())
                else:
                    own = det if self.__dict__.get("_owns_detector") else _clone(det)
                    texts, labels = self.train
                    fitted = own.fit(list(texts), list(labels))
                self.__dict__["_fitted"] = fitted
        return fitted

    def score(self, texts) -> np.ndarray:
        """The detector's scores of ``texts`` (higher = more machine-like), counted in ``queries`` and ``calls``."""
        texts = check_texts(texts, "Target", "score")
        scores = np.asarray(self.fitted_detector().score(texts), dtype=float)
        with self._lock:
            self.queries += len(texts)
            self.calls += 1
        return scores

    def incremental_scorer(self):
        """The detector's :class:`~humanize.detectors.lm_incremental.IncrementalScorer` (a causal-LM
        detector's scores of growing texts on key/value caches), its texts counted in ``queries`` and its
        scoring calls in ``calls`` as :meth:`score`'s; None when the detector offers none."""
        make = getattr(self.fitted_detector(), "incremental_scorer", None)
        if not callable(make):
            return None
        scorer = make()
        scorer.on_query = self._count
        return scorer

    def _count(self, n_texts: int) -> None:
        with self._lock:
            self.queries += int(n_texts)
            self.calls += 1

    def reset_counts(self) -> None:
        """Set ``queries`` and ``calls`` back to 0."""
        with self._lock:
            self.queries = 0
            self.calls = 0

    # -- identity -------------------------------------------------------------------
    def train_digest(self) -> str | None:
        """BLAKE2b of the training texts and their 0/1 labels (None without ``train``)."""
        if self.train is None:
            return None
        texts, labels = self.train
        return digest([list(texts), check_labels(labels, len(texts)).tolist()], "Target.train")

    def provenance(self) -> dict:
        """Class, version, the detector's provenance and the training set's digest and size (no texts).

        A learnable detector fitted outside the Target without ``train`` has no record of what it
        learned: ``TypeError`` (as :mod:`humanize._canonical` refuses a fitted estimator), so no
        stored result can be matched to another fit.
        """
        cls = type(self)
        out = {"class": f"{cls.__module__}.{cls.__qualname__}", "version": str(self.version),
               "detector": self.detector.provenance()}
        if self.learnable:
            if self.train is None:
                raise TypeError(f"Target: detector {self.name!r} was fitted outside the Target and train is None, so "
                                f"its fingerprint cannot name what it learned; pass train=(texts, labels) (what it "
                                f"was, or is to be, fitted on)")
            texts, labels = self.train
            out["train"] = {"digest": self.train_digest(), "n": len(texts),
                            "n_machine": int(check_labels(labels, len(texts)).sum())}
        return out

    def _detector_key(self) -> str:
        try:
            return canonical_json(self.detector.provenance(), "Target.detector")
        except TypeError:
            return f"{type(self.detector).__module__}.{type(self.detector).__qualname__}"

    def __eq__(self, other: object) -> bool:
        """Same class, an equally configured detector and the same training set (a detector fitted outside
        without ``train`` equals only itself)."""
        if self is other:
            return True
        if type(other) is not type(self):
            return False
        if self.detector is not other.detector:  # type: ignore[attr-defined]
            if self._detector_key() != other._detector_key():  # type: ignore[attr-defined]
                return False
            if self.learnable and (self.train is None or other.train is None):  # type: ignore[attr-defined]
                return False
        return self.train_digest() == other.train_digest()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self), self._detector_key(), self.train_digest()))

    def __repr__(self) -> str:
        train = "None"
        if self.train is not None:
            train = f"<{len(self.train[0])} texts, digest {self.train_digest()[:12]}>"
        return f"Target(detector={self.detector!r}, train={train})"

    # -- pickling (Ray workers): the fitted detector and counts travel, the lock does not ----------
    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_lock", None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.__dict__["_lock"] = threading.Lock()

    @classmethod
    def _owning(cls, detector: Detector, train: Any = None) -> "Target":
        """A Target of a detector built for it (by name): fitted in place, no copy."""
        target = cls(detector, train)
        target.__dict__["_owns_detector"] = True
        return target


def _clone(detector: Detector) -> Detector:
    from sklearn.base import clone

    return clone(detector)
