"""Constraints on the changed text, checked per sentence (TH-Bench QPA, Appendix G; HMGC's similarity floor).

Shared by the word-level attacks (:mod:`.wordsub`) and the rewriting ones (:mod:`.generation`), neither of
which imports the other.

A :class:`TextConstraint` compares sentences of the original with the same
sentences after some swaps, a batch at a time: ``values(originals, variants)``
gives the measured quantity, ``check`` whether each pair passes. TH-Bench's QPA
constraints (:func:`sentence_constraints`): perplexity and Flesch reading ease of the
sentence change by less than 5%, semantic similarity above 0.95. The measures
are the library's quality meters, so a test can recompute them from scratch.

:class:`MaxWordsChanged` is a budget rather than a check: at most a share of the
document's words change.
"""
from __future__ import annotations

import math
from numbers import Real
from typing import Any

import numpy as np

from humanize.params import ParamsMixin
from humanize.validation import Interval
from humanize.models import DEFAULT_CAUSAL_LM, DEFAULT_SENTENCE_ENCODER


__all__ = ["TextConstraint", "SentenceSimilarity", "SentenceEntailment", "PerplexityChange", "FleschChange", "MaxWordsChanged",
           "sentence_constraints", "relative_change"]


def relative_change(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """``|after - before| / max(|before|, 1)``: the relative change, with a floor on the denominator.

    The floor keeps a Flesch score near 0 from making every change "infinite".
    """
    before, after = np.asarray(before, dtype=float), np.asarray(after, dtype=float)
    return np.abs(after - before) / np.maximum(np.abs(before), 1.0)


class TextConstraint(ParamsMixin):
    """Base class: ``check(originals, variants, doc=None) -> bool array``."""

    def values(self, originals: list[str], variants: list[str], doc=None) -> np.ndarray:
        raise NotImplementedError

    def passes(self, values: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def check(self, originals: list[str], variants: list[str], doc=None) -> np.ndarray:
        if not variants:
            return np.zeros(0, dtype=bool)
        v = self.values(originals, variants, doc)
        return np.asarray(self.passes(v), dtype=bool) & ~np.isnan(v)


class SentenceSimilarity(TextConstraint):
    """Cosine of sentence embeddings (all-MiniLM-L6-v2) between original and changed sentence >= ``min_similarity``."""

    _model_params = ("encoder",)

    _parameter_constraints = {"min_similarity": [Interval(Real, -1, 1)]}

    def __init__(self, min_similarity: float = 0.95, encoder: Any = DEFAULT_SENTENCE_ENCODER, device: Any = None):
        self._init_params(locals())

    def values(self, originals, variants, doc=None):
        from humanize.quality.similarity import semantic_similarity

        if doc is not None:
            doc.add_cost(queries=len(set(originals) | set(variants)), forward_passes=1)
        return np.asarray(semantic_similarity(list(originals), list(variants), self.encoder, device=self.device))

    def passes(self, values):
        return values >= self.min_similarity


class SentenceEntailment(TextConstraint):
    """Bidirectional entailment between original and changed sentence >= ``min_entailment`` (issue #19 §3).

    The value is :func:`humanize.quality.entailment.entailment`'s: the smaller of the NLI model's
    entailment probabilities in the two directions, so a swap that adds or drops a fact fails
    as surely as one that contradicts. ``model`` is an NLI cross-encoder (default
    ``cross-encoder/nli-deberta-v3-base``, from the hub) or a local directory.
    """

    _model_params = ("model",)

    _parameter_constraints = {"min_entailment": [Interval(Real, 0, 1)]}

    def __init__(self, min_entailment: float = 0.5, model: Any = None, device: Any = None):
        self._init_params(locals())

    def values(self, originals, variants, doc=None):
        from humanize.quality.entailment import DEFAULT_NLI_MODEL, entailment

        model = DEFAULT_NLI_MODEL if self.model is None else self.model
        if doc is not None:
            doc.add_cost(queries=2 * len(variants), forward_passes=1)
        return np.asarray(entailment(list(originals), list(variants), model, device=self.device), dtype=float)

    def passes(self, values):
        return values >= self.min_entailment


class PerplexityChange(TextConstraint):
    """Relative change of the sentence's perplexity under a causal LM < ``max_change`` (QPA: 5%)."""

    _model_params = ("lm",)

    _parameter_constraints = {"max_change": [Interval(Real, 0, math.inf)]}

    def __init__(self, max_change: float = 0.05, lm: Any = DEFAULT_CAUSAL_LM, device: Any = None):
        self._init_params(locals())

    def values(self, originals, variants, doc=None):
        from humanize.quality.perplexity import perplexity

        memo = doc.memo.setdefault(("perplexity", id(self)), {}) if doc is not None else {}
        need = [t for t in dict.fromkeys(list(originals) + list(variants)) if t not in memo]
        if need:
            memo.update(zip(need, perplexity(need, self.lm, device=self.device, batch_size=8)))
            if doc is not None:
                doc.add_cost(queries=len(need), forward_passes=-(-len(need) // 8))
        ppl = memo
        return relative_change([ppl[t] for t in originals], [ppl[t] for t in variants])

    def passes(self, values):
        return values < self.max_change


class FleschChange(TextConstraint):
    """Relative change of the sentence's Flesch reading ease (textstat) < ``max_change`` (QPA: 5%)."""

    _parameter_constraints = {"max_change": [Interval(Real, 0, math.inf)]}

    def __init__(self, max_change: float = 0.05):
        self._init_params(locals())

    def values(self, originals, variants, doc=None):
        from humanize.quality.lexical import flesch_reading_ease

        return relative_change([flesch_reading_ease(t) for t in originals],
                               [flesch_reading_ease(t) for t in variants])

    def passes(self, values):
        return values < self.max_change


class MaxWordsChanged(ParamsMixin):
    """At most ``max_share`` of the document's words are changed (HMGC: 0.4)."""

    _parameter_constraints = {"max_share": [Interval(Real, 0, 1)]}

    def __init__(self, max_share: float = 0.4):
        self._init_params(locals())

    def limit(self, n_words: int) -> int:
        return int(math.floor(self.max_share * n_words + 1e-9))


def sentence_constraints(max_ppl_change: float = 0.05, max_flesch_change: float = 0.05,
                         min_similarity: float = 0.95, lm: Any = DEFAULT_CAUSAL_LM,
                         encoder: Any = DEFAULT_SENTENCE_ENCODER) -> list:
    """TH-Bench's three QPA constraints on a changed sentence (Appendix G), cheapest first: Flesch reading ease
    and perplexity change by less than 5%, MiniLM similarity above 0.95. QPA adds the validity of each word
    swap (:func:`humanize.attacks.wordsub.qpa_constraints`); a paraphrase (``constraints="qpa"`` of the guided
    rewrite) is checked with these three alone."""
    return [FleschChange(max_flesch_change), SentenceSimilarity(min_similarity, encoder),
            PerplexityChange(max_ppl_change, lm)]
