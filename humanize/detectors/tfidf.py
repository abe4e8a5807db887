"""TF-IDF + logistic regression: the lexical reference of the artifact-reliance paper
(Section 4.1, Table 1 "TF-IDF"; Appendix A: word 1-2 grams, 50,000 features, min_df=2,
sublinear tf, logistic regression with max_iter=5000, L2, default C).

A cheap learned baseline: it reads words, so it can exploit topic and vocabulary,
which the content-free :mod:`surface probe <humanize.detectors.surface>` cannot.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .base import Detector, NotFittedError, check_bool, check_labels, check_random_state, check_texts


class TfidfLogReg(Detector):
    """scikit-learn ``Pipeline(TfidfVectorizer, LogisticRegression)``; score = P(machine)."""

    name = "tfidf_lr"
    learnable = True

    def __init__(self, ngram_range: tuple = (1, 2), max_features: "int | None" = 50_000, min_df: "int | float" = 2,
                 sublinear_tf: bool = True, C: float = 1.0, max_iter: int = 5000, random_state: int = 0):
        self.ngram_range = ngram_range
        self.max_features = max_features
        self.min_df = min_df
        self.sublinear_tf = sublinear_tf
        self.C = C
        self.max_iter = max_iter
        self.random_state = random_state
        self._validate()

    def _validate(self) -> None:
        cls = type(self).__name__
        ng = self.ngram_range
        if (not isinstance(ng, (tuple, list)) or len(ng) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) for v in ng)):
            raise TypeError(f"{cls}: ngram_range must be a pair of ints (min_n, max_n), got {ng!r}")
        if not 1 <= ng[0] <= ng[1]:
            raise ValueError(f"{cls}: ngram_range must satisfy 1 <= min_n <= max_n, got {tuple(ng)}")
        if self.max_features is not None and (isinstance(self.max_features, bool) or
                                              not isinstance(self.max_features, int) or self.max_features < 1):
            raise ValueError(f"{cls}: max_features must be a positive int or None, got {self.max_features!r}")
        if isinstance(self.C, bool) or not isinstance(self.C, (int, float)) or not self.C > 0:
            raise ValueError(f"{cls}: C must be a positive number, got {self.C!r}")
        if isinstance(self.max_iter, bool) or not isinstance(self.max_iter, int) or self.max_iter < 1:
            raise ValueError(f"{cls}: max_iter must be a positive int, got {self.max_iter!r}")
        min_df = self.min_df
        if isinstance(min_df, bool) or not isinstance(min_df, (int, float)):
            raise TypeError(f"{cls}: min_df must be an int (documents) or a float in [0, 1] (share of documents), "
                            f"got {type(min_df).__name__} {min_df!r}")
        if isinstance(min_df, int) and min_df < 0 or isinstance(min_df, float) and not 0.0 <= min_df <= 1.0:
            raise ValueError(f"{cls}: min_df must be an int >= 0 (documents) or a float in [0, 1] (share of "
                             f"documents), got {min_df!r}")
        check_bool(cls, "sublinear_tf", self.sublinear_tf)
        check_random_state(cls, self.random_state)

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
        texts = check_texts(self, texts, "fit")
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
        if not hasattr(self, "pipeline_"):
            raise NotFittedError(f"{type(self).__name__} is not fitted yet: call fit(texts, labels) before score")
        texts = check_texts(self, texts)
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
