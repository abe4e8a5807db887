"""Zero-shot metric detectors from one causal LM: log-likelihood, rank, log-rank, entropy, GLTR, LRR.

The metrics are those of TH-Bench Section 2.1 (after MGTBench, He et al., 2023)
and RAID Appendix F.1 (GLTR). Each is a reduction over the scored tokens of the
shared :class:`~humanize.detectors.lm_stats.TextStatistics`, so all of them
(and Fast-DetectGPT and :class:`~humanize.detectors.metric_lr.MetricFeaturesLR`)
cost one forward pass per text when they use the same scoring model and
``max_tokens``. Signs are chosen so that higher = more machine-like:

=============== ======================================== =============================================
detector        score                                    source
=============== ======================================== =============================================
LogLikelihood   mean log p(x_t | x_<t)                   Solaiman et al. 2019; TH-Bench 2.1
Rank            -mean rank (1-based)                     Gehrmann et al. 2019 (GLTR); TH-Bench 2.1
LogRank         -mean log rank                           Mitchell et al. 2023; TH-Bench 2.1
Entropy         -mean entropy of p(. | x_<t)             Gehrmann et al. 2019; TH-Bench 2.1 ("lower = MGT")
GLTR            fraction of tokens of rank <= 10         RAID F.1 (GLTR repository default, cutoff 10)
LRR             -mean log p / mean log rank              Su et al. 2023 (DetectLLM), Eq. 1
=============== ======================================== =============================================

GLTR's trained form (TH-Bench, "Test-2" features of Gehrmann et al.) uses the
four fractions of tokens with rank in [1, 10], (10, 100], (100, 1000] and
above 1000: ``GLTR().feature_matrix(texts)`` or ``MetricFeaturesLR(features=["gltr"])``.
A text with no token to score (the empty text) gets NaN, with a warning.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from humanize.validation import MODEL, check_texts

from .base import Detector
from .lm_incremental import DEFAULT_HOLD, IncrementalScorer, IncrementalStatistics
from .lm_stats import (DEFAULT_MAX_TOKENS, LMStatistics, TextStatistics, LM_CONSTRAINTS,
                       describe_lm, load_lm, warn_unscored)

__all__ = ["CausalLMMetricDetector", "LogLikelihood", "Rank", "LogRank", "Entropy", "GLTR", "LRR",
           "FEATURES", "feature_columns", "reduce_statistics", "GLTR_BUCKETS", "LRR_MIN_LOG_RANK"]

#: GLTR's rank buckets (upper bounds, inclusive, 1-based ranks); the last bucket is "above 1000".
GLTR_BUCKETS = (10, 100, 1000)
#: LRR's denominator floor: a text whose every token has rank 1 (mean log-rank 0) gets -mean log p / this.
LRR_MIN_LOG_RANK = 1e-6


def _log_likelihood(s: TextStatistics) -> np.ndarray:
    return np.array([s.logprob.mean()])


def _rank(s: TextStatistics) -> np.ndarray:
    return np.array([-s.rank.mean()])


def _log_rank(s: TextStatistics) -> np.ndarray:
    return np.array([-np.log(s.rank).mean()])


def _entropy(s: TextStatistics) -> np.ndarray:
    return np.array([-s.entropy.mean()])


def _gltr(s: TextStatistics) -> np.ndarray:
    edges = np.searchsorted(np.asarray(GLTR_BUCKETS), s.rank, side="left")  # 0: <=10, 1: <=100, 2: <=1000, 3: rest
    return np.bincount(edges, minlength=len(GLTR_BUCKETS) + 1) / s.n_tokens


def _lrr(s: TextStatistics) -> np.ndarray:
    return np.array([-s.logprob.mean() / max(np.log(s.rank).mean(), LRR_MIN_LOG_RANK)])


def _fast_detectgpt(s: TextStatistics) -> np.ndarray:
    """Analytic sampling discrepancy (Bao et al., 2024, Eq. 5 with the analytic mean/variance)."""
    var = s.logprob_var.sum()
    if not var > 0:
        return np.array([np.nan])
    return np.array([(s.logprob.sum() - s.expected_logprob.sum()) / np.sqrt(var)])


#: feature name -> (column names, reducer over TextStatistics). Every reducer needs only one model's pass.
FEATURES: dict[str, tuple[tuple[str, ...], Callable[[TextStatistics], np.ndarray]]] = {
    "log_likelihood": (("log_likelihood",), _log_likelihood),
    "rank": (("rank",), _rank),
    "log_rank": (("log_rank",), _log_rank),
    "entropy": (("entropy",), _entropy),
    "gltr": (("gltr_rank_le_10", "gltr_rank_le_100", "gltr_rank_le_1000", "gltr_rank_gt_1000"), _gltr),
    "lrr": (("lrr",), _lrr),
    "fast_detectgpt": (("fast_detectgpt",), _fast_detectgpt),
}


def feature_columns(features: Sequence[str]) -> list[str]:
    """Column names of the feature matrix for these feature names (GLTR gives four)."""
    return [c for f in features for c in FEATURES[f][0]]


def reduce_statistics(stats: Sequence[TextStatistics], features: Sequence[str]) -> np.ndarray:
    """An ``(n_texts, n_columns)`` float array; rows of texts with no scored token are NaN."""
    width = len(feature_columns(features))
    out = np.full((len(stats), width), np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i, s in enumerate(stats):
            if s.n_tokens:
                out[i] = np.concatenate([FEATURES[f][1](s) for f in features])
    return out


class CausalLMMetricDetector(Detector):
    """Base of the detectors that reduce the shared statistics of one scoring model to a score.

    ``model``: packaged alias, hub id, model directory or a loaded
    :class:`humanize.models.LoadedModel` (default ``smollm2-135m-instruct``);
    ``max_tokens``: how many tokens of each text are scored (the first ones);
    ``batch_tokens``: rows x padded length of one forward batch (None: about
    512 MiB of logits); ``device``/``dtype``: passed to ``load_causal_lm``; ``dtype="auto"`` (the default):
    bfloat16 on a CPU with bfloat16 instructions, else float32 (:mod:`humanize.models.precision`; the resolved
    precision is in the fingerprint and the manifest).
    """

    #: the entry of :data:`FEATURES` this detector reduces to.
    feature: str = ""
    #: which column of that feature is the zero-shot score.
    score_column: int = 0
    _model_params = ("model",)
    _parameter_constraints = {"model": [MODEL], **LM_CONSTRAINTS}

    def __init__(self, model="smollm2-135m-instruct", *, max_tokens: int = DEFAULT_MAX_TOKENS,
                 batch_tokens=None, device=None, dtype="auto"):
        self._init_params(locals())

    def _scoring_lm(self):
        lm = load_lm(self.model, self.device, self.dtype)
        self.scoring_model_ = describe_lm(lm)
        return lm

    def _statistics_models(self) -> tuple:
        """``(scoring model, reference model or None)`` of the statistics (loaded)."""
        return self._scoring_lm(), None

    def statistics(self, texts: Sequence[str]) -> list[TextStatistics]:
        """The shared per-text statistics (cached; one forward pass per uncached text)."""
        texts = check_texts(texts, type(self).__name__, "score")
        self._validate()
        lm, ref = self._statistics_models()
        return LMStatistics(lm, reference=ref, max_tokens=self.max_tokens, batch_tokens=self.batch_tokens)(texts)

    def _reduce(self, stats: Sequence[TextStatistics]) -> np.ndarray:
        """The scores of texts with these statistics (NaN where undefined), no warnings."""
        return reduce_statistics(stats, self._feature_list())[:, self.score_column]

    def incremental_scorer(self, hold: int = DEFAULT_HOLD) -> IncrementalScorer:
        """Scores of growing texts on key/value caches (:mod:`~humanize.detectors.lm_incremental`): what
        token-mode guided decoding queries instead of :meth:`score`; the same scores up to rounding."""
        self._validate()
        lm, ref = self._statistics_models()
        return IncrementalScorer(IncrementalStatistics(lm, reference=ref, max_tokens=self.max_tokens, hold=hold),
                                 self._reduce, self.name)

    def _feature_list(self) -> list[str]:
        return [self.feature]

    def feature_matrix(self, texts: Sequence[str]) -> np.ndarray:
        """The feature columns, ``(n_texts, k)`` (``feature_columns`` names them; GLTR has 4)."""
        return reduce_statistics(self.statistics(texts), self._feature_list())

    def score(self, texts: Sequence[str]) -> np.ndarray:
        stats = self.statistics(texts)
        warn_unscored(type(self).__name__, stats)
        scores = self._reduce(stats)
        undefined = [i for i, s in enumerate(stats) if s.n_tokens and not np.isfinite(scores[i])]
        if undefined:
            import warnings

            warnings.warn(f"{type(self).__name__}: the score is undefined for {len(undefined)} text(s) (e.g. zero "
                          f"variance for Fast-DetectGPT); NaN at indices {undefined[:10]}", RuntimeWarning,
                          stacklevel=2)
        return scores

    def describe(self) -> dict:
        out = super().describe()
        out["scoring_model"] = getattr(self, "scoring_model_", None) or {"name": str(self.model), "loaded": False}
        out["max_tokens"] = self.max_tokens
        return out


class LogLikelihood(CausalLMMetricDetector):
    """Mean token log-probability under the scoring model (TH-Bench 2.1; higher = more machine-like)."""

    name = "log_likelihood"
    feature = "log_likelihood"


class Rank(CausalLMMetricDetector):
    """Minus the mean 1-based rank of each token in the model's prediction (GLTR; TH-Bench 2.1)."""

    name = "rank"
    feature = "rank"


class LogRank(CausalLMMetricDetector):
    """Minus the mean log of each token's 1-based rank (Mitchell et al., 2023; TH-Bench 2.1)."""

    name = "log_rank"
    feature = "log_rank"


class Entropy(CausalLMMetricDetector):
    """Minus the mean entropy (nats) of the next-token distribution: low entropy = machine (TH-Bench 2.1)."""

    name = "entropy"
    feature = "entropy"


class GLTR(CausalLMMetricDetector):
    """GLTR (Gehrmann et al., 2019): zero-shot score = fraction of tokens of rank <= 10 (RAID F.1).

    ``feature_matrix(texts)`` gives the four Test-2 bucket fractions (rank <= 10,
    <= 100, <= 1000, > 1000) that TH-Bench/MGTBench feed a logistic regression.
    """

    name = "gltr"
    feature = "gltr"
    score_column = 0


class LRR(CausalLMMetricDetector):
    """Log-likelihood log-rank ratio (Su et al., 2023, DetectLLM): -mean log p / mean log rank.

    When every scored token has rank 1 the mean log-rank is 0; the denominator
    is floored at :data:`LRR_MIN_LOG_RANK` so such texts get very high scores.
    """

    name = "lrr"
    feature = "lrr"
