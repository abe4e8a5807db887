"""The detector interface: ``score(texts) -> array``, higher = more machine-like.

Every detector has a ``name`` (its registry key) and its constructor
parameters (scikit-learn style, stored as given, read back by ``get_params``).
Learnable detectors also implement ``fit(texts, labels)``; labels are
"human"/"machine" strings or 0/1 with 1 = machine.
"""

from __future__ import annotations

import inspect
from typing import Sequence

import numpy as np


class NotFittedError(RuntimeError):
    """A learnable detector was asked to score before ``fit``."""


def check_texts(detector: "Detector", texts) -> list[str]:
    """Validate a batch of texts: a sequence of str (a single str is a mistake)."""
    name = type(detector).__name__
    if isinstance(texts, str):
        raise TypeError(f"{name}.score expects a sequence of str, got a single str (wrap it in a list)")
    try:
        texts = list(texts)
    except TypeError:
        raise TypeError(f"{name}.score expects a sequence of str, got {type(texts).__name__}") from None
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise TypeError(f"{name}.score expects str items, item {i} is {type(t).__name__}")
    return texts


def check_labels(labels, n: int) -> np.ndarray:
    """Labels as a 0/1 int array (1 = machine), from "human"/"machine" strings or 0/1."""
    arr = np.asarray(list(labels), dtype=object)
    if len(arr) != n:
        raise ValueError(f"got {len(arr)} labels for {n} texts")
    out = np.empty(n, dtype=np.int64)
    for i, v in enumerate(arr):
        if isinstance(v, str):
            if v not in ("human", "machine"):
                raise ValueError(f"label {i} is {v!r}; use 'human'/'machine' or 0/1 (1 = machine)")
            out[i] = int(v == "machine")
        elif isinstance(v, (int, np.integer, bool, np.bool_)) and int(v) in (0, 1):
            out[i] = int(v)
        else:
            raise ValueError(f"label {i} is {v!r}; use 'human'/'machine' or 0/1 (1 = machine)")
    return out


class Detector:
    """Base class for detectors. Subclasses implement ``score``; learnable ones ``fit`` too."""

    name: str = "detector"
    #: True for detectors that must be ``fit`` before ``score``.
    learnable: bool = False

    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return [
            p.name
            for p in sig.parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]

    def get_params(self) -> dict:
        return {k: getattr(self, k) for k in self._param_names()}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    def fit(self, texts: Sequence[str], labels) -> "Detector":
        if not self.learnable:
            return self  # zero-shot detectors have nothing to learn
        raise NotImplementedError

    def score(self, texts: Sequence[str]) -> np.ndarray:
        raise NotImplementedError

    def describe(self) -> dict:
        """What produced the scores: name, parameters, and the models actually used."""
        return {"detector": self.name, "params": {k: repr(v) for k, v in self.get_params().items()}}
