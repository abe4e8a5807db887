"""The content-free surface probe of the artifact-reliance paper (Section 4.1, Appendix A).

27 features per document, none of which reads a word's identity, so the probe cannot
use topic or vocabulary -- only the shape of the text:

- size (4): characters, words, sentences, mean sentence length (words per sentence);
- word shape (4): mean and standard deviation of word length, type-token ratio, hapax rate;
- punctuation (10): per-character rates of ``,`` ``.`` ``;`` ``:`` ``(`` ``[`` ``"`` ``-`` ``!`` ``?``;
- formatting (4): per-character rates of newlines, runs of 2+ spaces/tabs, curly quotes
  (U+2018/2019/201C/201D) and en/em dashes -- the four the paper's "fmt-only" column uses;
- other markers (5): non-ASCII, digit and uppercase character rates, numeric tokens and
  LaTeX commands per word.

Words are whitespace-separated tokens (lower-cased for the type-token and hapax counts);
sentences are the non-blank stretches between runs of ``.``, ``!`` or ``?``. The probe
standardises the features and fits an L2 logistic regression (max_iter=5000, default C),
as the paper does. :func:`feature_aucs` gives the paper's per-feature attribution.
"""

from __future__ import annotations

import re
from collections import Counter
from numbers import Integral, Real
from typing import Sequence

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin

from humanize.validation import Interval, check_texts
from humanize.exceptions import NotFittedError

from .base import RANDOM_STATE, Detector, check_labels

FEATURE_GROUPS: dict[str, tuple[str, ...]] = {
    "size": ("n_chars", "n_words", "n_sents", "mean_sent_len"),
    "word_shape": ("mean_word_len", "std_word_len", "ttr", "hapax_rate"),
    "punctuation": ("r_comma", "r_period", "r_semicolon", "r_colon", "r_paren", "r_bracket", "r_ascii_quote",
                    "r_hyphen", "r_exclam", "r_question"),
    "formatting": ("r_newline", "r_ws_run", "r_curly_quote", "r_fancy_dash"),
    "markers": ("r_nonascii", "r_digit", "r_upper", "r_number_tok", "r_latex"),
}
FEATURE_NAMES: tuple[str, ...] = tuple(name for group in FEATURE_GROUPS.values() for name in group)
FORMATTING_FEATURES: tuple[str, ...] = FEATURE_GROUPS["formatting"]

# Single characters counted per character of text, by feature name.
_PUNCTUATION = {"r_comma": ",", "r_period": ".", "r_semicolon": ";", "r_colon": ":", "r_paren": "(",
                "r_bracket": "[", "r_ascii_quote": '"', "r_hyphen": "-", "r_exclam": "!", "r_question": "?"}
_SENTENCE_END = re.compile(r"[.!?]+")
_SPACE_RUN = re.compile(r"[ \t]{2,}")
_CURLY_QUOTE = re.compile("[\u2018\u2019\u201c\u201d]")
_FANCY_DASH = re.compile("[\u2013\u2014]")
_NUMBER = re.compile(r"\b\d+(?:[.,]\d+)*\b")
_LATEX = re.compile(r"\\[A-Za-z]+")


def surface_features(text: str) -> dict[str, float]:
    """The 27 features of one text (all 0 for an empty text)."""
    n_chars = len(text)
    words = text.split()
    n_words = len(words)
    n_sents = sum(1 for part in _SENTENCE_END.split(text) if part.strip())
    per_char = 1.0 / n_chars if n_chars else 0.0
    per_word = 1.0 / n_words if n_words else 0.0
    lengths = np.array([len(w) for w in words], dtype=np.float64)
    counts = Counter(w.lower() for w in words)
    row = {
        "n_chars": float(n_chars),
        "n_words": float(n_words),
        "n_sents": float(n_sents),
        "mean_sent_len": n_words / n_sents if n_sents else 0.0,
        "mean_word_len": float(lengths.mean()) if n_words else 0.0,
        "std_word_len": float(lengths.std()) if n_words else 0.0,
        "ttr": len(counts) * per_word,
        "hapax_rate": sum(1 for c in counts.values() if c == 1) * per_word,
    }
    for name, char in _PUNCTUATION.items():
        row[name] = text.count(char) * per_char
    row["r_newline"] = text.count("\n") * per_char
    row["r_ws_run"] = len(_SPACE_RUN.findall(text)) * per_char
    row["r_curly_quote"] = len(_CURLY_QUOTE.findall(text)) * per_char
    row["r_fancy_dash"] = len(_FANCY_DASH.findall(text)) * per_char
    row["r_nonascii"] = sum(1 for c in text if ord(c) > 127) * per_char
    row["r_digit"] = sum(1 for c in text if c.isdigit()) * per_char
    row["r_upper"] = sum(1 for c in text if c.isupper()) * per_char
    row["r_number_tok"] = len(_NUMBER.findall(text)) * per_word
    row["r_latex"] = len(_LATEX.findall(text)) * per_word
    return {name: row[name] for name in FEATURE_NAMES}


class SurfaceFeatures(TransformerMixin, BaseEstimator):
    """Texts -> DataFrame of the 27 named surface features (a stateless sklearn transformer)."""

    def fit(self, texts=None, y=None) -> "SurfaceFeatures":
        return self

    def transform(self, texts: Sequence[str]) -> pd.DataFrame:
        texts = check_texts(texts, "SurfaceFeatures", "transform")
        rows = [surface_features(t) for t in texts]
        return pd.DataFrame(rows, columns=list(FEATURE_NAMES), dtype=np.float64)

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        return np.array(FEATURE_NAMES, dtype=object)


def _check_feature_names(features) -> tuple[str, ...]:
    if features is None:
        return FEATURE_NAMES
    if isinstance(features, str):
        if features in FEATURE_GROUPS:
            return FEATURE_GROUPS[features]
        features = [features]
    try:
        names = tuple(features)
    except TypeError:
        raise TypeError(f"features must be None, a group name or a list of feature names, "
                        f"got {type(features).__name__}") from None
    unknown = [f for f in names if f not in FEATURE_NAMES]
    if unknown or not names:
        raise ValueError(f"unknown surface feature(s) {unknown or names!r}; groups: {sorted(FEATURE_GROUPS)}; "
                         f"features: {', '.join(FEATURE_NAMES)}")
    return names


def column_aucs(frame: pd.DataFrame, y: np.ndarray) -> dict[str, float]:
    """Univariate AUROC of each column's raw value for ``y`` (1 = machine); 0.5 for a constant column."""
    from sklearn.metrics import roc_auc_score

    out = {}
    for name in frame.columns:
        values = frame[name].to_numpy()
        out[name] = float(roc_auc_score(y, values)) if np.ptp(values) > 0 else 0.5
    return out


def feature_aucs(texts: Sequence[str], labels) -> pd.DataFrame:
    """Univariate AUROC of each feature for machine vs human (the paper's attribution).

    Columns: ``feature``, ``group``, ``auc`` (>0.5: higher in machine text) and ``separation``
    = max(auc, 1 - auc); sorted by ``separation``, strongest first.
    """
    frame = SurfaceFeatures().transform(texts)
    y = check_labels(labels, len(frame))
    if len(np.unique(y)) < 2:
        raise ValueError("feature_aucs needs both human and machine texts")
    group_of = {f: g for g, names in FEATURE_GROUPS.items() for f in names}
    aucs = column_aucs(frame[list(FEATURE_NAMES)], y)
    rows = [{"feature": name, "group": group_of[name], "auc": auc, "separation": max(auc, 1 - auc)}
            for name, auc in aucs.items()]
    out = pd.DataFrame(rows).sort_values("separation", ascending=False, kind="stable")
    return out.reset_index(drop=True)


class SurfaceProbe(Detector):
    """Standardised surface features -> logistic regression; score = P(machine).

    ``features`` selects a subset (a group name such as ``"formatting"`` for the paper's
    fmt-only probe, or a list of names); ``None`` uses all 27.
    """

    name = "surface_probe"
    learnable = True
    _parameter_constraints = {"C": [Interval(Real, 0, None, closed="neither")],
                              "max_iter": [Interval(Integral, 1, None)],
                              "random_state": RANDOM_STATE}

    def __init__(self, features: "str | Sequence[str] | None" = None, C: float = 1.0, max_iter: int = 5000,
                 random_state: int = 0):
        self._init_params(locals())

    def _check(self) -> None:
        _check_feature_names(self.features)

    def fit(self, texts: Sequence[str], labels) -> "SurfaceProbe":
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import Pipeline
        from sklearn.preprocessing import StandardScaler

        texts = check_texts(texts, type(self).__name__, "fit")
        y = check_labels(labels, len(texts))
        if len(np.unique(y)) < 2:
            raise ValueError(f"fit needs both human and machine texts, got only "
                             f"{'machine' if len(y) and y[0] else 'human'} ({len(y)} texts)")
        names = list(_check_feature_names(self.features))
        X = SurfaceFeatures().transform(texts)[names]
        model = Pipeline([("scale", StandardScaler()),
                          ("logreg", LogisticRegression(C=float(self.C), max_iter=int(self.max_iter),
                                                        random_state=self.random_state))])
        model.fit(X, y)
        self.feature_names_ = names
        self.model_ = model
        return self

    def score(self, texts: Sequence[str]) -> np.ndarray:
        """P(machine) from the logistic regression, in [0, 1]."""
        texts = check_texts(texts, type(self).__name__, "score")
        if not hasattr(self, "model_"):
            raise NotFittedError(f"{type(self).__name__} is not fitted yet: call fit(texts, labels) before score")
        if not texts:
            return np.zeros(0, dtype=np.float64)
        X = SurfaceFeatures().transform(texts)[self.feature_names_]
        return self.model_.predict_proba(X)[:, 1].astype(np.float64)

    def coefficients(self) -> pd.Series:
        """Logistic-regression weight of each standardised feature (positive = machine)."""
        if not hasattr(self, "model_"):
            raise NotFittedError(f"{type(self).__name__} is not fitted yet: call fit(texts, labels) first")
        coef = self.model_.named_steps["logreg"].coef_[0]
        return pd.Series(coef, index=self.feature_names_, name="coefficient")
