"""Binoculars (Hans et al., ICML 2024): perplexity over cross-perplexity of two related LMs.

For the scored tokens ``x_1..x_n``, performer ``M_p`` and observer ``M_o``
(two models that share a tokenizer)::

    log PPL   = -(1/n) sum_t log M_p(x_t | x_<t)
    log X-PPL = -(1/n) sum_t sum_v M_o(v | x_<t) log M_p(v | x_<t)
    B         = log PPL / log X-PPL          (low = machine-generated)

which is what the authors' released code computes (perplexity from the
performer, cross-entropy weighted by the observer's distribution). The score
returned is ``-B`` so that higher = more machine-like, as for every detector
here. Differences from that code: X-PPL averages over the same positions as
PPL (the released code also includes the position after the last token), and
the first token is scored given BOS when the tokenizer has one. Defaults are
the paper's and RAID's (Appendix F.1): observer ``tiiuae/falcon-7b``,
performer ``tiiuae/falcon-7b-instruct``, 512 tokens. They need the Hugging Face
hub; no offline pair sharing a tokenizer is packaged (MODELS.md).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from humanize.validation import MODEL, check_texts

from .base import Detector
from .lm_incremental import DEFAULT_HOLD, IncrementalScorer, IncrementalStatistics
from .lm_stats import (DEFAULT_MAX_TOKENS, LMStatistics, TextStatistics, LM_CONSTRAINTS,
                       check_same_tokenizer, describe_lm, load_lm, warn_unscored)

__all__ = ["Binoculars"]


def binoculars_ratio(stats: TextStatistics) -> float:
    """``log PPL / log X-PPL`` of one text (NaN when it has no scored token)."""
    if stats.n_tokens == 0:
        return float("nan")
    return float(-stats.logprob.mean() / -stats.expected_logprob.mean())


class Binoculars(Detector):
    """Binoculars with an observer/performer pair; ``score`` returns minus the Binoculars ratio.

    ``observer``/``performer``: packaged alias, hub id, model directory or a
    loaded :class:`humanize.models.LoadedModel`; the two must share a
    tokenizer (ValueError otherwise). ``max_tokens``, ``batch_tokens``,
    ``device``, ``dtype`` as for the other metric detectors. The performer's own
    statistics are cached too, so a metric detector using the performer as its
    scoring model afterwards costs no extra forward pass.
    """

    name = "binoculars"
    _model_params = ("observer", "performer")
    _parameter_constraints = {"observer": [MODEL], "performer": [MODEL], **LM_CONSTRAINTS}

    def __init__(self, observer="tiiuae/falcon-7b", performer="tiiuae/falcon-7b-instruct", *,
                 max_tokens: int = DEFAULT_MAX_TOKENS, batch_tokens=None, device=None, dtype=None):
        self._init_params(locals())

    def _models(self):
        observer = load_lm(self.observer, self.device, self.dtype)
        performer = load_lm(self.performer, self.device, self.dtype)
        check_same_tokenizer(observer, performer, what="Binoculars observer and performer")
        self.observer_model_, self.performer_model_ = describe_lm(observer), describe_lm(performer)
        return observer, performer

    def statistics(self, texts: Sequence[str]) -> list[TextStatistics]:
        """Performer statistics with ``expected_logprob`` taken under the observer's distribution."""
        texts = check_texts(texts, type(self).__name__, "score")
        self._validate()
        observer, performer = self._models()
        return LMStatistics(performer, reference=observer, max_tokens=self.max_tokens,
                            batch_tokens=self.batch_tokens)(texts)

    def score(self, texts: Sequence[str]) -> np.ndarray:
        stats = self.statistics(texts)
        warn_unscored(type(self).__name__, stats)
        return self._reduce(stats)

    @staticmethod
    def _reduce(stats: Sequence[TextStatistics]) -> np.ndarray:
        return -np.array([binoculars_ratio(s) for s in stats], dtype=float)

    def incremental_scorer(self, hold: int = DEFAULT_HOLD) -> IncrementalScorer:
        """Scores of growing texts on the performer's and observer's key/value caches
        (:mod:`~humanize.detectors.lm_incremental`); the same scores as :meth:`score` up to rounding."""
        self._validate()
        observer, performer = self._models()
        return IncrementalScorer(IncrementalStatistics(performer, reference=observer, max_tokens=self.max_tokens,
                                                       hold=hold), self._reduce, self.name)

    def describe(self) -> dict:
        out = super().describe()
        out["observer_model"] = getattr(self, "observer_model_", None) or {"name": str(self.observer), "loaded": False}
        out["performer_model"] = getattr(self, "performer_model_", None) or {"name": str(self.performer),
                                                                            "loaded": False}
        out["max_tokens"] = self.max_tokens
        out["score"] = "-(log PPL_performer / log X-PPL_observer,performer); higher = more machine-like"
        return out
