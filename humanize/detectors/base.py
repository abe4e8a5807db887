"""The detector interface: ``score(texts) -> array``, higher = more machine-like.

Every detector has a ``name`` (its registry key) and its constructor
parameters (scikit-learn style, stored as given, read back by ``get_params``).
Learnable detectors also implement ``fit(texts, labels)``; labels are
"human"/"machine" strings or 0/1 with 1 = machine.
"""

from __future__ import annotations

from numbers import Integral
from typing import Sequence

import numpy as np

from humanize.params import ParamsMixin
from humanize.validation import Interval


#: ``random_state`` of a learned detector: None or an int in [0, 2**32) (a ``RandomState`` object has
#: no exact fingerprint, so cached scores could not be keyed on it).
RANDOM_STATE = [Interval(Integral, 0, 2**32, closed="left"), None]


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


class Detector(ParamsMixin):
    """Base class for detectors. Subclasses implement ``score``; learnable ones ``fit`` too.

    Parameters follow :class:`humanize.params.ParamsMixin`: stored as given,
    declared in ``_parameter_constraints`` (cross-parameter rules in ``_check()``), read back by
    ``get_params``, set by ``set_params``.
    ``fingerprint()`` identifies the configuration (class, ``version``, parameters,
    resolved models, library version) for the results store.
    """

    name: str = "detector"
    #: True for detectors that must be ``fit`` before ``score``.
    learnable: bool = False
    #: Whether scoring loads a model; the runner keeps a model detector on long-lived workers
    #: (actor pools) and runs a model-free one (a function, an HTTP endpoint) as plain tasks.
    needs_model: bool = True
    #: The scores' version for given parameters and models: bump it when they change.
    version: str = "1"
    #: Scores depend on the library's code (model loading, scoring), so its version is in the fingerprint.
    _library_version = True

    def fit(self, texts: Sequence[str], labels) -> "Detector":
        if not self.learnable:
            return self  # zero-shot detectors have nothing to learn
        raise NotImplementedError

    def score(self, texts: Sequence[str]) -> np.ndarray:
        raise NotImplementedError

    def describe(self) -> dict:
        """What produced the scores: name, parameters, and the models actually used."""
        return {"detector": self.name, "params": {k: repr(v) for k, v in self.get_params(deep=False).items()}}
