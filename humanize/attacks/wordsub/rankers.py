"""Word rankers: which words to attack first (RAFT's proxy-LM predictability, HMGC's importance).

A :class:`WordRanker` orders a document's eligible words, most worth attacking
first. The engine offers the search the first ``k`` of that order (``k`` = θ x
eligible words, capped by :class:`~.text_constraints.MaxWordsChanged`; RAFT) or
the whole order with ``k`` capping the kept swaps (``offer="all"``; HMGC), asks
the candidate generators only for the offered words, and hands the order to the
search, which tries them in turn. Without a ranker the engine proposes candidates for
every eligible word and the search orders them by candidate score (RAID synonym).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from numbers import Integral

from humanize.params import ParamsMixin
from humanize.validation import Interval, Options
from humanize.models import DEFAULT_RANKING_LM

from ._doc import Doc

__all__ = ["WordRanker", "Predictability"]


class WordRanker(ParamsMixin):
    """Base class: ``rank(doc, positions) -> [word index]``, best first (a permutation of ``positions``).

    Implementations do their model work for the whole document at once and add
    it to ``doc.cost`` (``forward_passes``, ``queries``, ``lm_tokens``,
    ``detector_queries``). Ties are broken by word position, so the order is
    deterministic.
    """

    def rank(self, doc: Doc, positions: list[int]) -> list[int]:
        raise NotImplementedError


class Predictability(WordRanker):
    """Most predictable words first under a proxy causal LM (RAFT, Wang et al. 2024, §3.1; TH-Bench §2.2).

    A word's predictability is the proxy's log-probability of the word given the
    text before it, read from one scoring pass over the document (strided
    windows of the model's context, at most ``max_windows``, for long texts, as
    the perplexity meter does). ``reduce``: ``"first"`` (RAFT's code: the
    probability of the word's first token, the one that starts it), ``"sum"``
    (the whole word's log-probability) or ``"mean"`` (per token). Words past the
    scored prefix, or whose first token has no prediction, rank last; ties by
    position. Offline proxy SmolLM2-135M; RAFT and TH-Bench use OPT-2.7B / GPT-2.
    """

    _model_params = ("lm",)

    _parameter_constraints = {
        "lm": ["model"],
        "reduce": [Options(str, ("first", "sum", "mean"))],
        "max_windows": [Interval(Integral, 1, None)],
    }

    def __init__(self, lm: Any = DEFAULT_RANKING_LM, device: Any = None, reduce: str = "first", max_windows: int = 8):
        self._init_params(locals())


    def loaded(self):
        from humanize.quality.perplexity import get_lm

        return get_lm(self.lm, self.device)

    def word_logprobs(self, doc: Doc, positions: list[int]) -> dict[int, float]:
        """``{word index: log-probability}`` (``-inf`` where there is none), one scoring pass over the document."""
        from humanize.models.scoring import _window_params, encode_for_scoring, sequence_logprobs

        out = {i: -math.inf for i in positions}
        if not positions:
            return out
        lm = self.loaded()
        length, stride = _window_params(lm, None, None)
        cap = length + (int(self.max_windows) - 1) * stride
        ids, spans, has_bos = encode_for_scoring(lm, [doc.text], offsets=True, max_tokens=cap - 1)
        ids, spans = ids[0][:cap], spans[0]
        n = len(ids)
        if n < 2:
            return out
        lps = sequence_logprobs(lm, [ids], max_length=length, stride=stride, batch_size=1)[0]
        lps = np.concatenate([[np.nan] * (1 - int(has_bos)), lps])[: len(spans)]  # lps[t]: token t of the text
        windows, tokens, b = 0, 0, 0
        while True:  # the windows sequence_logprobs runs (one forward pass each)
            windows, tokens = windows + 1, tokens + min(b + length, n) - b
            if b + length >= n:
                break
            b += stride
        doc.add_cost(forward_passes=windows, queries=1, lm_tokens=tokens)
        ends = spans[:, 1]
        for i in positions:
            s, e = doc.words[i]
            t = int(np.searchsorted(ends, s, side="right"))  # the token holding the word's first character
            if t >= len(lps):
                continue
            u = t
            while u + 1 < len(lps) and spans[u + 1][0] < e:
                u += 1
            vals = lps[t: u + 1] if self.reduce != "first" else lps[t: t + 1]
            if np.isnan(vals).any():
                continue
            out[i] = float(vals.sum() if self.reduce != "mean" else vals.mean())
        return out

    def rank(self, doc: Doc, positions: list[int]) -> list[int]:
        scores = self.word_logprobs(doc, list(positions))
        return sorted(positions, key=lambda i: (-scores[i], i))
