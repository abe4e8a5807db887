"""Misspelling: swap θ of the misspellable words for a common misspelling (RAID §3.6, App. E.4; θ = 0.2).

Candidates are the words that have an entry in the misspelling dictionary
(RAID's list of commonly misspelled English words by default). Without a
language model, θ of the candidates are sampled at random. With one, RAID
(following Gagiano et al., 2021) misspells the θ most LM-likely candidates: a
word's likelihood is the sum of the log-probabilities of the LM tokens that
overlap it. (RAID's paper uses GPT-2 small; the offline default here is
``smollm2-135m-instruct``, and ``result.info["lm"]`` records which model ranked.)
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from ._casing import match_case
from ._lexicon import LexiconMatcher
from humanize.validation import Options

from ._resources import MISSPELLING_DICTIONARIES, misspelling_table
from ._sampling import choose_sites, stochastic_count
from .base import Attack, Edit, apply_edits


@lru_cache(maxsize=4)
def _matcher(dictionary: str):
    table = misspelling_table(dictionary)
    lower = {k.lower(): v for k, v in table.items() if v}
    return LexiconMatcher(lower), lower


def word_logprobs(spans: list[tuple[int, int]], offsets: np.ndarray, logprobs: np.ndarray) -> np.ndarray:
    """Sum of the log-probabilities of the tokens overlapping each (start, end) span."""
    offsets = np.asarray(offsets, dtype=np.int64).reshape(-1, 2)
    logprobs = np.asarray(logprobs, dtype=np.float64)
    out = np.zeros(len(spans))
    if len(offsets) == 0:
        return out
    starts, ends = offsets[:, 0], offsets[:, 1]
    # tokens are in text order: binary-search the first token ending after s and the first starting at/after e
    for i, (s, e) in enumerate(spans):
        lo = int(np.searchsorted(ends, s, side="right"))
        hi = int(np.searchsorted(starts, e, side="left"))
        out[i] = logprobs[lo:hi].sum()
    return out


class Misspelling(Attack):
    """Misspell θ of the candidate words: the most LM-likely ones when ``lm`` is given.

    ``lm`` is ``None`` (random choice), a model name for :func:`humanize.models.load_causal_lm`,
    a loaded model, or a callable ``text -> (offsets, logprobs)`` over the LM's tokens.
    ``dictionary`` is ``"common"`` (RAID's 192 words) or ``"wikipedia"`` (3,266 words).
    """

    name = "misspelling"
    _model_params = ("lm",)  # fingerprinted by the model's identity (a callable cannot be: TypeError)

    _parameter_constraints = {
        "dictionary": [Options(str, tuple(MISSPELLING_DICTIONARIES))],
        "lm": ["model", "callable", None],
    }

    def __init__(self, rate: float = 0.2, seed: int = 0, dictionary: str = "common", lm: Any = None):
        self._init_params(locals())

    @property
    def needs_model(self) -> bool:
        """RAID's misspelling is rule-based; with an ``lm`` it ranks the words with a model."""
        return self.lm is not None

    def _scorer(self):
        """A callable text -> (offsets, logprobs), and the name of the model behind it."""
        lm = self.lm
        if callable(lm) and not hasattr(lm, "model"):
            return lm, getattr(lm, "__name__", type(lm).__name__)
        from humanize.models import load_causal_lm, token_logprobs

        loaded = load_causal_lm(lm) if isinstance(lm, str) else lm
        return (lambda text: token_logprobs(loaded, text)), loaded.resolved

    def _run(self, text: str):
        matcher, table = _matcher(self.dictionary)
        spans = [(s, e) for s, e, _ in matcher.finditer(text)]
        info: dict = {}
        if not spans:
            return text, [], info
        rnd = self.random(text)
        if self.lm is None:
            chosen = choose_sites(len(spans), self.rate, rnd)
        else:
            k = stochastic_count(self.rate, len(spans), rnd)
            scorer, model_name = self._scorer()
            info["lm"] = model_name
            if 0 < k < len(spans):
                offsets, logprobs = scorer(text)
                info["lm_tokens"] = int(len(logprobs))
                scores = word_logprobs(spans, offsets, logprobs)
                ties = [rnd.random() for _ in spans]
                order = sorted(range(len(spans)), key=lambda j: (-scores[j], ties[j]))  # most likely first
                chosen = sorted(order[:k])
            else:
                chosen = range(k)
        edits = []
        for j in chosen:
            s, e = spans[j]
            word = text[s:e]
            options = table[word.lower()]
            pick = options[0] if len(options) == 1 else options[rnd.randbelow(len(options))]
            edits.append(Edit(s, e, match_case(word, pick)))
        return apply_edits(text, edits), edits, info
