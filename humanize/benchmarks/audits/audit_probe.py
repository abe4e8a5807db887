"""Cross-validated probes of one balanced subset and their bootstrap intervals (artifact-reliance
paper, §4.1 and Appendix A "Surface probe").

Every probe is a scikit-learn pipeline evaluated by the same seeded ``StratifiedKFold``: its
out-of-fold P(machine) gives the AUROC, and its out-of-fold decisions (P > 0.5, the logistic
regression's own rule) the macro-F1. Intervals are percentile intervals over bootstrap
replicates of those out-of-fold predictions, documents redrawn with replacement within each
class (:mod:`humanize.benchmarks.evaluation.bootstrap`), every probe on the same replicates so a
difference between two probes gets a paired interval.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..evaluation.bootstrap import CHUNK_CELLS, percentile_interval, stratified_counts, weighted_auroc

#: TF-IDF reference settings of the paper's Appendix A.
TFIDF_SETTINGS = dict(ngram_range=(1, 2), max_features=50_000, min_df=2, sublinear_tf=True)


def probe_model():
    """Standardised features -> L2 logistic regression (max_iter=5000, default C), as the paper."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    return Pipeline([("scale", StandardScaler()), ("logreg", LogisticRegression(max_iter=5000))])


def tfidf_model():
    """TF-IDF word 1-2 grams (50k features, min_df=2, sublinear tf) -> the same logistic regression.

    TF-IDF rows are already L2-normalised and sparse, so no scaler; the vectoriser is fitted
    inside each training fold (no vocabulary leaks from the held-out fold)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline

    return Pipeline([("tfidf", TfidfVectorizer(**TFIDF_SETTINGS)), ("logreg", LogisticRegression(max_iter=5000))])


def out_of_fold(model, X, y: np.ndarray, folds: int, random_state: int) -> np.ndarray:
    """Out-of-fold P(machine) of ``model`` under a shuffled ``StratifiedKFold`` (seeded)."""
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    cv = StratifiedKFold(n_splits=folds, shuffle=True, random_state=random_state)
    return cross_val_predict(model, X, y, cv=cv, method="predict_proba")[:, 1].astype(np.float64)


def macro_f1(y: np.ndarray, proba: np.ndarray) -> float:
    """Macro-F1 of the decisions P(machine) > 0.5 (scikit-learn, zero_division=0)."""
    from sklearn.metrics import f1_score

    return float(f1_score(y, (proba > 0.5).astype(np.int64), average="macro", labels=[0, 1], zero_division=0))


def auroc(y: np.ndarray, proba: np.ndarray) -> float:
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(y, proba))


def _weighted_macro_f1(W: np.ndarray, y: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """Macro-F1 per replicate (row of the count matrix ``W``), 0 where a class's F1 is 0/0."""
    pos, hit = y == 1, pred == 1
    tp, fp = W[:, pos & hit].sum(axis=1), W[:, ~pos & hit].sum(axis=1)
    fn, tn = W[:, pos & ~hit].sum(axis=1), W[:, ~pos & ~hit].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        f_machine = np.where(2 * tp + fp + fn > 0, 2 * tp / (2 * tp + fp + fn), 0.0)
        f_human = np.where(2 * tn + fn + fp > 0, 2 * tn / (2 * tn + fn + fp), 0.0)
    return (f_machine + f_human) / 2


def bootstrap_figures(y: np.ndarray, f1_of: dict, auroc_of: dict, diffs: dict, *, n_boot: int, confidence: float,
                      rng: np.random.Generator) -> dict[str, tuple[float, float, float]]:
    """``{name: (value, lo, hi)}`` for the macro-F1 of each ``f1_of`` prediction vector, the AUROC
    of each ``auroc_of`` one, and each paired difference ``diffs[name] = (f1 name a, f1 name b)``
    (a - b). ``n_boot`` = 0 gives NaN intervals."""
    out = {}
    point = {}
    for name, proba in f1_of.items():
        point[name] = macro_f1(y, proba)
    for name, proba in auroc_of.items():
        point[name] = auroc(y, proba)
    for name, (a, b) in diffs.items():
        point[name] = point[a] - point[b]
    reps = {name: [] for name in point}
    if n_boot:
        pos = y == 1
        step = max(1, CHUNK_CELLS // max(1, len(y)))
        for start in range(0, n_boot, step):
            W = stratified_counts(rng, y, min(step, n_boot - start))
            f1s = {name: _weighted_macro_f1(W, y, proba > 0.5) for name, proba in f1_of.items()}
            for name, values in f1s.items():
                reps[name].append(values)
            for name, proba in auroc_of.items():
                reps[name].append(weighted_auroc(proba[pos], W[:, pos], proba[~pos], W[:, ~pos]))
            for name, (a, b) in diffs.items():
                reps[name].append(f1s[a] - f1s[b])
    for name, value in point.items():
        lo, hi = (percentile_interval(np.concatenate(reps[name]), confidence) if reps[name]
                  else (math.nan, math.nan))
        out[name] = (value, lo, hi)
    return out


def univariate_aurocs(X: pd.DataFrame, y: np.ndarray, groups: dict[str, str]) -> pd.DataFrame:
    """Per feature: AUROC of the raw value for machine vs human (0.5 for a constant feature),
    ``separation`` = |AUROC - 0.5|, ``direction`` and ``rank`` (1 = separates best)."""
    from humanize.detectors.surface import column_aucs

    rows = []
    for name, auc in column_aucs(X, y).items():
        direction = ("higher in machine" if auc > 0.5 else "higher in human" if auc < 0.5 else "no difference")
        rows.append({"feature": name, "group": groups[name], "auroc": auc, "separation": abs(auc - 0.5),
                     "direction": direction})
    frame = pd.DataFrame(rows).sort_values("separation", ascending=False, kind="stable").reset_index(drop=True)
    frame["rank"] = np.arange(1, len(frame) + 1)
    return frame
