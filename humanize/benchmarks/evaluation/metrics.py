"""Detection figures from scores: AUROC, TPR at a fixed FPR, classification at the
calibrated threshold, and attack success rate.

Scores are higher = more machine-like; labels 1/"machine" and 0/"human".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from sklearn.metrics import roc_auc_score

from ._inputs import as_domains, as_labels, as_scores, check_fpr, check_same_length
from .thresholds import DEFAULT_TOLERANCE, Calibration, ThresholdResult, calibrate


def auroc(scores, labels) -> float:
    """Area under the ROC curve (scikit-learn), machine = positive class (TH-Bench's AUC)."""
    s = as_scores(scores)
    y = as_labels(labels)
    check_same_length(s, y, "scores", "labels")
    present = set(np.unique(y).tolist())
    if present != {0, 1}:
        missing = "human" if 0 not in present else "machine"
        raise ValueError(f"AUROC needs both human and machine texts; no {missing} texts were given")
    return float(roc_auc_score(y, s))


def _split(scores, labels, domains):
    s = as_scores(scores)
    y = as_labels(labels)
    check_same_length(s, y, "scores", "labels")
    d = as_domains(domains, len(s))
    return s, y, d


@dataclass(frozen=True)
class TPRAtFPRResult:
    """TPR on machine text at thresholds calibrated on human text.

    ``value`` is NaN when the target FPR was not reached (ties among human
    scores, or ``underpowered``: too few humans in a domain to resolve the
    target, ``fpr * n_human < 1``); ``tpr_at_achieved_fpr`` is the TPR at the conservative threshold
    actually used, whose FPR is ``achieved_fpr``.
    """

    value: float
    tpr_at_achieved_fpr: float
    target_fpr: float
    achieved_fpr: float
    reached: bool
    n_machine: int
    n_human: int
    calibration: Calibration
    underpowered: bool = False


class TPRAtFPR:
    """TPR at a fixed FPR (RAID's "accuracy at FPR"; Section 5.2, Appendix C).

    The threshold is the exact empirical quantile of the human scores (see
    :mod:`.thresholds`), per domain when ``per_domain`` and domains are given.
    Call it: ``TPRAtFPR(fpr=0.05)(scores, labels, domains)`` -> :class:`TPRAtFPRResult`.
    """

    def __init__(self, fpr: float = 0.05, per_domain: bool = True, tolerance: float = DEFAULT_TOLERANCE):
        self.fpr = fpr
        self.per_domain = per_domain
        self.tolerance = tolerance
        check_fpr(self.fpr)

    def get_params(self) -> dict:
        return {"fpr": self.fpr, "per_domain": self.per_domain, "tolerance": self.tolerance}

    def __repr__(self) -> str:
        return "TPRAtFPR(" + ", ".join(f"{k}={v!r}" for k, v in self.get_params().items()) + ")"

    def __call__(self, scores, labels, domains=None) -> TPRAtFPRResult:
        s, y, d = _split(scores, labels, domains)
        human, machine = y == 0, y == 1
        if not machine.any():
            raise ValueError("TPR needs machine texts; none were given")
        cal = calibrate(s[human], self.fpr, None if d is None else d[human],
                        per_domain=self.per_domain, tolerance=self.tolerance)
        return tpr_at_calibration(s[machine], cal, None if d is None else d[machine])


def tpr_at_calibration(machine_scores, calibration: Calibration, domains=None) -> TPRAtFPRResult:
    """TPR of ``machine_scores`` at an existing calibration (e.g. thresholds from clean text)."""
    s = as_scores(machine_scores, "machine_scores")
    if len(s) == 0:
        raise ValueError("TPR needs machine texts; none were given")
    tpr = float(np.mean(calibration.predict(s, domains)))
    reached = calibration.reached
    return TPRAtFPRResult(tpr if reached else math.nan, tpr, calibration.target_fpr, calibration.achieved_fpr,
                          reached, len(s), calibration.n_human, calibration, calibration.underpowered)


def binary_metrics(labels, predictions) -> dict:
    """Accuracy, precision, recall and F1, machine = positive class.

    The values of scikit-learn's ``accuracy_score`` and ``precision_score`` / ``recall_score`` /
    ``f1_score`` with ``zero_division=np.nan`` (precision NaN when nothing is flagged, recall NaN
    without machine texts, F1 NaN when both are), computed from the confusion counts: the four
    scorers validate their inputs on every call (milliseconds each), which dominated :func:`evaluate`.
    """
    y = as_labels(labels)
    p = np.asarray(predictions, dtype=bool)
    if p.ndim != 1:
        raise ValueError(f"predictions must be one-dimensional, got shape {p.shape}")
    check_same_length(y, p, "labels", "predictions")
    if len(y) == 0:
        raise ValueError("binary_metrics needs at least one text; got empty labels and predictions")
    return _binary_figures(y.astype(bool), p)


def _binary_figures(y: np.ndarray, p: np.ndarray) -> dict:
    """:func:`binary_metrics` on validated, non-empty boolean arrays (True = machine)."""
    n = len(y)
    tp = int(np.count_nonzero(y & p))
    n_pos, n_flag = int(np.count_nonzero(y)), int(np.count_nonzero(p))
    correct = n - n_pos - n_flag + 2 * tp  # tp + tn, with tn = n - (tp + fp + fn)
    return {
        "accuracy": correct / n,
        "precision": tp / n_flag if n_flag else math.nan,
        "recall": tp / n_pos if n_pos else math.nan,
        "f1": 2 * tp / (n_pos + n_flag) if n_pos + n_flag else math.nan,
    }


def classification_at_fpr(scores, labels, domains=None, fpr: float = 0.05, per_domain: bool = True,
                          tolerance: float = DEFAULT_TOLERANCE) -> dict:
    """TH-Bench's accuracy / precision / recall / F1 at the threshold calibrated on the
    human scores to ``fpr`` (per domain as in RAID App. C).

    Returns those four plus ``reached``, ``underpowered`` and ``achieved_fpr``; the four are NaN when
    the target FPR was not reached. Precision is NaN when nothing is flagged.
    """
    s, y, d = _split(scores, labels, domains)
    human = y == 0
    cal = calibrate(s[human], fpr, None if d is None else d[human], per_domain=per_domain, tolerance=tolerance)
    out = binary_metrics(y, cal.predict(s, d))
    if not cal.reached:
        out = {k: math.nan for k in out}
    return {**out, "reached": cal.reached, "underpowered": cal.underpowered, "achieved_fpr": cal.achieved_fpr}


def _predict(scores, threshold, domains) -> np.ndarray:
    if isinstance(threshold, Calibration):
        return threshold.predict(scores, domains)
    if isinstance(threshold, ThresholdResult):
        return threshold.predict(scores)
    if isinstance(threshold, (bool, np.bool_)) or not isinstance(threshold, (int, float, np.number)):
        raise TypeError(
            f"threshold must be a number, a ThresholdResult or a Calibration, got {type(threshold).__name__}"
        )
    if math.isnan(threshold):
        raise ValueError("threshold is NaN")
    return as_scores(scores) > float(threshold)


def attack_success_rate(clean_scores, attacked_scores, threshold, domains=None) -> float:
    """Fraction of machine texts detected before the attack that are missed after it.

    ``clean_scores[i]`` and ``attacked_scores[i]`` are the same machine text before
    and after the attack; a text is detected iff ``score > threshold`` (a number,
    a :class:`ThresholdResult`, or a :class:`Calibration` with the texts'
    ``domains``), the threshold being calibrated on clean human text. NaN when
    no clean text was detected (the rate is undefined).
    """
    c = as_scores(clean_scores, "clean_scores")
    a = as_scores(attacked_scores, "attacked_scores")
    check_same_length(c, a, "clean_scores", "attacked_scores")
    before = _predict(c, threshold, domains)
    after = _predict(a, threshold, domains)
    n_before = int(before.sum())
    if n_before == 0:
        return math.nan
    return float(np.count_nonzero(before & ~after) / n_before)
