"""Input checks shared by the protocols: scores, labels, domains, target FPRs.

Conventions (DESIGN.md): a score is a real number, higher = more machine-like;
a label is "human"/"machine" or 0/1 with 1 = machine. NaN scores are an error
here: a detector that could not score a text must say so, and a NaN silently
ranked anywhere would make every figure wrong. ``evaluate(..., nan_policy="omit")``
is the one explicit way to drop them.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import pandas as pd

LABEL_NAMES = ("human", "machine")


def _as_1d(values, what: str) -> np.ndarray:
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{what} must be a sequence, got a single {type(values).__name__}")
    if isinstance(values, (pd.Series, pd.Index)):
        values = values.to_numpy()
    if not hasattr(values, "__len__"):
        try:
            values = list(values)
        except TypeError:
            raise TypeError(f"{what} must be a sequence, got {type(values).__name__}") from None
    arr = np.asarray(values, dtype=object) if not isinstance(values, np.ndarray) else values
    if arr.ndim != 1:
        raise ValueError(f"{what} must be one-dimensional, got shape {arr.shape}")
    return arr


def as_scores(scores, what: str = "scores") -> np.ndarray:
    """Scores as a float64 array; TypeError for non-numbers, ValueError for NaN."""
    arr = _as_1d(scores, what)
    if arr.dtype.kind in "fiub":
        out = arr.astype(np.float64)
    else:
        out = np.empty(len(arr), dtype=np.float64)
        for i, v in enumerate(arr):
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (numbers.Real, np.number)):
                raise TypeError(f"{what}[{i}] is {v!r} ({type(v).__name__}); scores must be real numbers")
            out[i] = float(v)
    nan = np.flatnonzero(np.isnan(out))
    if len(nan):
        shown = ", ".join(str(i) for i in nan[:5]) + (", ..." if len(nan) > 5 else "")
        raise ValueError(
            f"{what} contain {len(nan)} NaN value(s) (at positions {shown}); drop those texts or, "
            "in evaluate(), pass nan_policy='omit'"
        )
    return out


def as_labels(labels, what: str = "labels") -> np.ndarray:
    """Labels as an int array with 1 = machine, from "human"/"machine" or 0/1."""
    arr = _as_1d(labels, what)
    fast = _labels_fast(arr)
    if fast is not None:
        return fast
    out = np.empty(len(arr), dtype=np.int64)
    for i, v in enumerate(arr):
        if isinstance(v, str):
            if v not in LABEL_NAMES:
                raise ValueError(f"{what}[{i}] is {v!r}; allowed: 'human', 'machine', 0, 1 (1 = machine)")
            out[i] = int(v == "machine")
        elif isinstance(v, (numbers.Integral, np.integer, bool, np.bool_)) and int(v) in (0, 1):
            out[i] = int(v)
        elif isinstance(v, (float, np.floating)) and v in (0.0, 1.0):
            out[i] = int(v)
        else:
            raise ValueError(f"{what}[{i}] is {v!r}; allowed: 'human', 'machine', 0, 1 (1 = machine)")
    return out


def _labels_fast(arr: np.ndarray) -> np.ndarray | None:
    """:func:`as_labels` without a Python loop when every value is valid (None: check one by one)."""
    if arr.dtype.kind in "biuf":
        return arr.astype(np.int64) if ((arr == 0) | (arr == 1)).all() else None
    if arr.dtype.kind in "OU":
        try:
            uniques = pd.unique(arr)
        except TypeError:  # unhashable values: the loop names the first bad one
            return None
        if all(isinstance(v, str) and v in LABEL_NAMES for v in uniques):
            return (arr == "machine").astype(np.int64)
    return None


def as_domains(domains, n: int) -> np.ndarray | None:
    """Domains as an object array of length ``n`` (None stays None)."""
    if domains is None:
        return None
    arr = _as_1d(domains, "domains").astype(object)
    if len(arr) != n:
        raise ValueError(f"got {len(arr)} domains for {n} scores")
    if pd.isna(arr).any():
        raise ValueError("domains contain missing values; every text needs a domain for per-domain thresholds")
    return arr


def check_fpr(fpr, what: str = "fpr") -> float:
    """A target false-positive rate strictly between 0 and 1."""
    if isinstance(fpr, (bool, np.bool_)) or not isinstance(fpr, (numbers.Real, np.number)):
        raise TypeError(f"{what} must be a number in (0, 1), got {type(fpr).__name__}")
    fpr = float(fpr)
    if not (0.0 < fpr < 1.0) or math.isnan(fpr):
        raise ValueError(f"{what} must be in (0, 1), got {fpr!r}")
    return fpr


def check_same_length(a: np.ndarray, b: np.ndarray, what_a: str, what_b: str) -> None:
    if len(a) != len(b):
        raise ValueError(f"{what_a} and {what_b} differ in length ({len(a)} vs {len(b)})")
