"""TF-IDF + logistic regression: the lexical reference of the artifact-reliance paper
(Section 4.1, Table 1 "TF-IDF"; Appendix A: word 1-2 grams, 50,000 features, min_df=2,
sublinear tf, logistic regression with max_iter=5000, L2, default C).

A cheap learned baseline: it reads words, so it can exploit topic and vocabulary,
which the content-free :mod:`surface probe <humanize.detectors.surface>` cannot.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Sequence

import numpy as np

from humanize.validation import Interval, check_texts, describe_value
from humanize.exceptions import InvalidParameterError, NotFittedError

from .base import RANDOM_STATE, Detector, check_labels


class TfidfLogReg(Detector):
    """scikit-learn ``Pipeline(TfidfVectorizer, LogisticRegression)``; score = P(machine)."""

    name = "tfidf_lr"
    learnable = True
    _parameter_constraints = {
        "max_features": [Interval(Integral, 1, None), None],
        "min_df": [Interval(Integral, 0, None), Interval(Real, 0.0, 1.0)],  # documents, or a share of them
        "sublinear_tf": ["boolean"],
        "C": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None)],
        "random_state": RANDOM_STATE,
    }

    def __init__(self, ngram_range: tuple = (1, 2), max_features: "int | None" = 50_000, min_df: "int | float" = 2,
                 sublinear_tf: bool = True, C: float = 1.0, max_iter: int = 5000, random_state: int = 0):
        self._init_params(locals())

    def _check(self) -> None:
        ng = self.ngram_range
        if (not isinstance(ng, (tuple, list)) or len(ng) != 2
                or not all(Interval(Integral, 1, None).is_satisfied_by(v) for v in ng) or ng[0] > ng[1]):
            raise InvalidParameterError(f"{type(self).__name__}: ngram_range must be a pair of ints (min_n, max_n) "
                                        f"with 1 <= min_n <= max_n, got {describe_value('ngram_range', ng)}")

    def _pipeline(self):
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import Pipeline

        return Pipeline([
            ("tfidf", TfidfVectorizer(ngram_range=tuple(self.ngram_range), max_features=self.max_features,
                                      min_df=self.min_df, sublinear_tf=bool(self.sublinear_tf))),
            ("logreg", LogisticRegression(C=float(self.C), max_iter=int(self.max_iter),
                                          random_state=self.random_state)),
        ])

    def fit(self, texts: Sequence[str], labels) -> "TfidfLogReg":
        texts = check_texts(texts, type(self).__name__, "fit")
        y = check_labels(labels, len(texts))
        if len(np.unique(y)) < 2:
            raise ValueError(f"fit needs both human and machine texts, got only "
                             f"{'machine' if len(y) and y[0] else 'human'} ({len(y)} texts)")
        pipeline = self._pipeline()
        try:
            pipeline.fit(texts, y)
        except ValueError as exc:
            if "no terms remain" in str(exc) or "empty vocabulary" in str(exc):
                raise ValueError(f"{type(self).__name__}: no n-gram occurs in at least min_df={self.min_df!r} of the "
                                 f"{len(texts)} training texts; lower min_df or give more text") from None
            raise
        self.pipeline_ = pipeline
        self.vocabulary_size_ = len(pipeline.named_steps["tfidf"].vocabulary_)
        return self

    def score(self, texts: Sequence[str]) -> np.ndarray:
        """P(machine) from the logistic regression, in [0, 1]."""
        texts = check_texts(texts, type(self).__name__, "score")
        if not hasattr(self, "pipeline_"):
            raise NotFittedError(f"{type(self).__name__} is not fitted yet: call fit(texts, labels) before score")
        if not texts:
            return np.zeros(0, dtype=np.float64)
        return self.pipeline_.predict_proba(texts)[:, 1].astype(np.float64)

    def top_features(self, k: int = 20) -> "dict[str, list[tuple[str, float]]]":
        """The ``k`` n-grams with the largest weights towards each class (an attribution)."""
        if not hasattr(self, "pipeline_"):
            raise NotFittedError(f"{type(self).__name__} is not fitted yet: call fit(texts, labels) first")
        names = self.pipeline_.named_steps["tfidf"].get_feature_names_out()
        coef = self.pipeline_.named_steps["logreg"].coef_[0]
        order = np.argsort(coef)
        return {"machine": [(str(names[i]), float(coef[i])) for i in order[::-1][:k]],
                "human": [(str(names[i]), float(coef[i])) for i in order[:k]]}

    def describe(self) -> dict:
        info = super().describe()
        if hasattr(self, "pipeline_"):
            info["vocabulary_size"] = self.vocabulary_size_
        return info
