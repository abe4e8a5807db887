"""The trained protocol for metric detectors: logistic regression on metric features.

TH-Bench (Section 4, "Detectors") and MGTBench (He et al., 2023) extract each
metric with a base LM and train a logistic regression on a training split;
GLTR's trained form uses its four rank-bucket fractions. ``MetricFeaturesLR``
does that for any subset of the one-pass metrics (see
:data:`humanize.detectors.metric.FEATURES`), from the same shared statistics
as the zero-shot detectors, so scoring it after them costs no forward pass.
Scores are the classifier's probability of "machine".
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import Sequence

import numpy as np

from humanize.validation import Interval, check_texts
from humanize.exceptions import NotFittedError

from .base import check_labels
from .lm_stats import DEFAULT_MAX_TOKENS
from .metric import FEATURES, CausalLMMetricDetector, feature_columns, reduce_statistics

__all__ = ["MetricFeaturesLR", "DEFAULT_FEATURES"]

DEFAULT_FEATURES = ("log_likelihood", "rank", "log_rank", "entropy", "gltr", "lrr", "fast_detectgpt")


class MetricFeaturesLR(CausalLMMetricDetector):
    """Standardized metric features -> scikit-learn ``LogisticRegression`` (TH-Bench/MGTBench protocol).

    ``features``: names from :data:`~humanize.detectors.metric.FEATURES`
    (``["rank"]`` reproduces TH-Bench's trained Rank detector, ``["gltr"]`` its
    GLTR); ``C``/``max_iter``: passed to ``LogisticRegression``. The other
    parameters are those of :class:`~humanize.detectors.metric.CausalLMMetricDetector`.
    After ``fit``: ``classifier_`` (a fitted sklearn Pipeline) and ``feature_names_``.
    """

    name = "metric_lr"
    learnable = True
    _parameter_constraints = {"C": [Interval(Real, 0, None, closed="neither")],
                              "max_iter": [Interval(Integral, 1, None)]}

    def __init__(self, features: Sequence[str] = DEFAULT_FEATURES, model="smollm2-135m-instruct", *,
                 max_tokens: int = DEFAULT_MAX_TOKENS, batch_tokens=None, device=None, dtype="auto",
                 C: float = 1.0, max_iter: int = 1000):
        self.features = features
        self.C = C
        self.max_iter = max_iter
        super().__init__(model, max_tokens=max_tokens, batch_tokens=batch_tokens, device=device, dtype=dtype)

    def _check(self) -> None:
        super()._check()
        self._feature_list()

    def _feature_list(self) -> list[str]:
        feats = self.features
        if isinstance(feats, str):
            raise TypeError(f"features must be a list of names, got the str {feats!r} (wrap it in a list)")
        try:
            feats = list(feats)
        except TypeError:
            raise TypeError(f"features must be a list of names, got {type(feats).__name__}") from None
        if not feats:
            raise ValueError(f"features is empty; choose from {', '.join(FEATURES)}")
        for f in feats:
            if f not in FEATURES:
                raise ValueError(f"unknown metric feature {f!r}; available: {', '.join(FEATURES)}")
        if len(set(feats)) != len(feats):
            raise ValueError(f"features lists a name twice: {feats}")
        return feats

    def fit(self, texts: Sequence[str], labels) -> "MetricFeaturesLR":
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        texts = check_texts(texts, type(self).__name__, "fit")
        y = check_labels(labels, len(texts))
        if len(np.unique(y)) < 2:
            raise ValueError(f"fit needs both human and machine texts, got only {'machine' if y[0] else 'human'} "
                             f"({len(y)} texts)")
        X = self.feature_matrix(texts)
        bad = np.flatnonzero(~np.isfinite(X).all(axis=1))
        if len(bad):
            raise ValueError(f"cannot fit on texts without finite features (empty or unscorable texts at indices "
                             f"{bad[:10].tolist()}); drop them from the training split")
        clf = make_pipeline(StandardScaler(), LogisticRegression(C=float(self.C), max_iter=int(self.max_iter)))
        clf.fit(X, y)
        self.classifier_ = clf
        self.feature_names_ = feature_columns(self._feature_list())
        return self

    def score(self, texts: Sequence[str]) -> np.ndarray:
        texts = check_texts(texts, type(self).__name__, "score")  # the batch rule first, as for every detector
        clf = getattr(self, "classifier_", None)
        if clf is None:
            raise NotFittedError(f"{type(self).__name__} must be fit(texts, labels) before score")
        names = feature_columns(self._feature_list())
        if names != self.feature_names_:
            raise ValueError(f"features changed since fit ({self.feature_names_} -> {names}); fit again")
        X = self.feature_matrix(texts)
        ok = np.isfinite(X).all(axis=1)
        out = self._proba(X)
        if not ok.all():
            bad = np.flatnonzero(~ok)
            warnings.warn(f"{type(self).__name__}: {len(bad)} of {len(X)} texts have no finite features (empty "
                          f"text); their scores are NaN (indices {bad[:10].tolist()})", RuntimeWarning, stacklevel=2)
        return out

    def _proba(self, X: np.ndarray) -> np.ndarray:
        """P(machine) of each row of finite features, NaN elsewhere."""
        clf = self.classifier_
        ok = np.isfinite(X).all(axis=1)
        out = np.full(len(X), np.nan)
        if ok.any():
            out[ok] = clf.predict_proba(X[ok])[:, list(clf.classes_).index(1)]
        return out

    def _reduce(self, stats) -> np.ndarray:
        if getattr(self, "classifier_", None) is None:
            raise NotFittedError(f"{type(self).__name__} must be fit(texts, labels) before score")
        return self._proba(reduce_statistics(stats, self._feature_list()))

    def describe(self) -> dict:
        out = super().describe()
        out["features"] = feature_columns(self._feature_list())
        out["fitted"] = getattr(self, "classifier_", None) is not None
        return out
