"""Adapted detectors (TH-Bench Section 4, Figure 4): train on attack A, test on attack B.

A learnable detector is adversarially trained on texts attacked by a known
attack A and evaluated on texts attacked by another (possibly unknown) attack B.
The result is the A x B matrix of AUROC (and TPR at a fixed FPR).
"""

from __future__ import annotations

from typing import Callable, Mapping

import numpy as np
import pandas as pd

from ._inputs import as_labels, as_scores, check_fpr
from .metrics import TPRAtFPR, auroc
from .thresholds import DEFAULT_TOLERANCE

TEXT_COLUMNS = ("generation", "text")


def _as_set(name: str, data, what: str):
    """(texts, labels, domains) from a DataFrame (generation/text, label[, domain]) or a (texts, labels) pair."""
    if isinstance(data, pd.DataFrame):
        col = next((c for c in TEXT_COLUMNS if c in data.columns), None)
        if col is None or "label" not in data.columns:
            raise ValueError(
                f"{what} {name!r}: a DataFrame needs a text column ({' or '.join(TEXT_COLUMNS)}) and 'label'; "
                f"it has {list(data.columns)}"
            )
        texts, labels = data[col].tolist(), data["label"].tolist()
        domains = data["domain"].tolist() if "domain" in data.columns else None
    elif isinstance(data, tuple) and len(data) in (2, 3):
        texts, labels = list(data[0]), list(data[1])
        domains = list(data[2]) if len(data) == 3 and data[2] is not None else None
    else:
        raise TypeError(
            f"{what} {name!r} must be a DataFrame or a (texts, labels) tuple, got {type(data).__name__}"
        )
    bad = next((i for i, t in enumerate(texts) if not isinstance(t, str)), None)
    if bad is not None:
        raise TypeError(f"{what} {name!r}: text {bad} is {type(texts[bad]).__name__}, expected str")
    y = as_labels(labels, f"{what} {name!r} labels")
    if len(y) != len(texts):
        raise ValueError(f"{what} {name!r}: {len(texts)} texts but {len(y)} labels")
    if set(np.unique(y).tolist()) != {0, 1}:
        raise ValueError(f"{what} {name!r} needs both human and machine texts")
    return texts, y, domains


def adapted_detector_matrix(factory: Callable[[], object], train_sets: Mapping[str, object],
                            eval_sets: Mapping[str, object], *, fpr: float = 0.05, per_domain: bool = False,
                            tolerance: float = DEFAULT_TOLERANCE) -> pd.DataFrame:
    """Train a fresh detector on each ``train_sets[A]`` and score every ``eval_sets[B]``.

    ``factory()`` must return an unfitted object with ``fit(texts, labels)`` and
    ``score(texts)`` (higher = more machine-like); labels reach ``fit`` as 0/1 ints
    (1 = machine). Each set is a DataFrame with a ``generation`` (or ``text``)
    column and ``label`` (and optionally ``domain``), or a ``(texts, labels)`` tuple;
    it holds human texts and the machine texts attacked by that attack.

    Returns a DataFrame indexed by train attack with column blocks ``auroc``,
    ``tpr@<fpr>`` and ``reached@<fpr>`` over eval attacks: ``m["auroc"]`` is the A x B
    AUROC matrix. TPR is NaN where the target FPR was not reached (ties).
    """
    if not callable(factory):
        raise TypeError(f"factory must be a callable returning a detector, got {type(factory).__name__}")
    fpr = check_fpr(fpr)
    for what, sets in (("train_sets", train_sets), ("eval_sets", eval_sets)):
        if not isinstance(sets, Mapping) or not sets:
            raise TypeError(f"{what} must be a non-empty dict of attack name -> data, got {type(sets).__name__}")
    train = {a: _as_set(a, d, "train set") for a, d in train_sets.items()}
    evals = {b: _as_set(b, d, "eval set") for b, d in eval_sets.items()}
    metric = TPRAtFPR(fpr=fpr, per_domain=per_domain, tolerance=tolerance)
    tpr_col, reached_col = f"tpr@{fpr:g}", f"reached@{fpr:g}"
    records = []
    for a, (texts, y, _) in train.items():
        detector = factory()
        for method in ("fit", "score"):
            if not callable(getattr(detector, method, None)):
                raise TypeError(f"factory() returned {type(detector).__name__}, which has no {method}() method")
        detector.fit(texts, y)
        for b, (etexts, ey, edoms) in evals.items():
            scores = as_scores(detector.score(etexts), f"scores of the detector trained on {a!r} for {b!r}")
            if len(scores) != len(etexts):
                raise ValueError(f"detector returned {len(scores)} scores for {len(etexts)} texts")
            res = metric(scores, ey, edoms)
            records.append({"train_attack": a, "eval_attack": b, "auroc": auroc(scores, ey),
                            tpr_col: res.value, reached_col: res.reached})
    long = pd.DataFrame(records)
    blocks = {m: long.pivot(index="train_attack", columns="eval_attack", values=m)
              .reindex(index=list(train), columns=list(evals)) for m in ("auroc", tpr_col, reached_col)}
    out = pd.concat(blocks, axis=1, names=["metric", "eval_attack"])
    out.index.name = "train_attack"
    return out


__all__ = ["adapted_detector_matrix"]
