"""Watermark detectors: the statistic of a scheme (:mod:`humanize.watermarks`), from token ids alone.

They need the generator's tokenizer and the watermark's key, never a language model:

- ``kgw`` (:class:`KGWDetector`): the z-score of the green-token count (Kirchenbauer et al., ICML
  2023, §4), green lists as ``transformers.WatermarkLogitsProcessor`` draws them;
- ``unigram`` (:class:`UnigramDetector`): the same test against one fixed green list (Zhao et al.,
  ICLR 2024, §3.2);
- ``synthid`` (:class:`SynthIDDetector`): the Mean (or Weighted Mean) g-value score of SynthID-Text
  (Dathathri et al., Nature 2024), 0.5 expected without the watermark.

Higher = more machine-like (watermarked), as for every detector. Detection does not depend on
``delta`` (the bias changes how many tokens turn green, not which ones are). A text is tokenized
without special tokens; ``max_tokens`` scores only its first tokens (detection as a function of
the number of tokens scored); a text with no token to score gets the statistic's null value
(z = 0, mean g = 0.5). :meth:`statistics` gives the parts of each score (tokens scored, green
count or mean g, one-sided p-value). The key is a secret: shown, stored and fingerprinted only as
its digest (:mod:`humanize._secrets`).
"""
from __future__ import annotations

import math
import os
from numbers import Integral, Real
from typing import Any, Sequence

import numpy as np

from humanize.validation import MODEL, Interval, Options, check_texts
from humanize.watermarks.base import KEY, z_score

from .base import Detector

__all__ = ["KGWDetector", "UnigramDetector", "SynthIDDetector"]

_VOCAB = [Interval(Integral, 2, None), None]
_MAX_TOKENS = [Interval(Integral, 1, None), None]


class _WatermarkDetector(Detector):
    """What the three share: a tokenizer, a scheme built from the parameters, per-text statistics."""

    #: a tokenizer and the scheme's green lists are kept on long-lived workers (drawn once per process)
    needs_model = True
    _model_params = ("tokenizer",)
    _derived_state = ("_scheme_cache",)
    #: the scheme's class and which of this detector's parameters it takes
    _scheme_path: str = ""
    _scheme_params: tuple = ()

    @classmethod
    def for_watermark(cls, watermark, tokenizer: Any = "smollm2-135m-instruct", **params) -> "_WatermarkDetector":
        """The detector of ``watermark`` (a scheme object): its key and parameters, this ``tokenizer``."""
        shared = {k: v for k, v in watermark.get_params(deep=False).items() if k in cls._param_tuple()}
        return cls(tokenizer=tokenizer, **shared, **params)

    # -- what it reads ------------------------------------------------------------------------
    def _fingerprint_runtime(self, models: dict) -> dict:
        return {}  # a tokenizer runs on no device

    def loaded_tokenizer(self):
        """The tokenizer (loaded once per process when ``tokenizer`` names one)."""
        tok = self.tokenizer
        if isinstance(tok, (str, os.PathLike)):
            from humanize.models import load_tokenizer

            return load_tokenizer(os.fspath(tok)).tokenizer
        return getattr(tok, "tokenizer", tok)

    def scheme(self):
        """The watermark scheme these parameters describe."""
        found = self.__dict__.get("_scheme_cache")
        if found is None:
            import importlib

            module, _, name = self._scheme_path.partition(":")
            cls = getattr(importlib.import_module(module), name)
            found = cls(**{k: getattr(self, k) for k in self._scheme_params})
            self.__dict__["_scheme_cache"] = found
        return found

    def _processor(self, tok):
        size = self.vocab_size if self.vocab_size is not None else len(tok)
        return self.scheme().logits_processor(int(size))

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_scheme_cache", None)
        return state

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's token ids (no special tokens), cut to ``max_tokens``."""
        from humanize.models.text import model_input

        texts = check_texts(texts, type(self).__name__, "token_ids")
        if not texts:
            return []
        tok = self.loaded_tokenizer()
        clean, _ = model_input(texts, where=f"{type(self).__name__} tokenizer")
        ids = tok(clean, add_special_tokens=False, return_attention_mask=False)["input_ids"]
        cut = self.max_tokens
        return [list(row[:cut]) if cut is not None else list(row) for row in ids]

    # -- scoring --------------------------------------------------------------------------------
    def score(self, texts: Sequence[str]) -> np.ndarray:
        """The scheme's statistic per text (higher = watermarked)."""
        texts = check_texts(texts, type(self).__name__, "score")
        if not texts:
            return np.zeros(0, dtype=np.float64)
        return np.array([s["score"] for s in self.statistics(texts)], dtype=np.float64)

    def statistics(self, texts: Sequence[str]) -> list[dict]:
        """Per text: ``tokens`` scored, the scheme's counts, ``score`` and its one-sided ``p_value``."""
        texts = check_texts(texts, type(self).__name__, "statistics")
        if not texts:
            return []
        proc = self._processor(self.loaded_tokenizer())
        return [self._statistic(proc, ids) for ids in self.token_ids(texts)]

    def _statistic(self, proc, ids: list[int]) -> dict:
        raise NotImplementedError


def _p_value(z: float) -> float:
    """One-sided p-value of a standard-normal statistic."""
    return 0.5 * math.erfc(z / math.sqrt(2.0))


class KGWDetector(_WatermarkDetector):
    """Kirchenbauer et al. (2023) z-score. ``ignore_repeated_ngrams``: count each distinct (context, token)
    n-gram once (their reliability study's rule, §2; transformers' ``ignore_repeated_ngrams``)."""

    name = "kgw"
    _scheme_path = "humanize.watermarks.kgw:KGW"
    _scheme_params = ("key", "gamma", "seeding_scheme", "context_width")
    _parameter_constraints = {
        "tokenizer": [MODEL],
        "key": KEY,
        "gamma": [Interval(Real, 0, 1, closed="neither")],
        "seeding_scheme": [Options(str, {"lefthash", "selfhash"})],
        "context_width": [Interval(Integral, 1, None)],
        "ignore_repeated_ngrams": ["boolean"],
        "vocab_size": _VOCAB,
        "max_tokens": _MAX_TOKENS,
    }

    def __init__(self, tokenizer: Any = "smollm2-135m-instruct", key: "int | str" = 15485863, gamma: float = 0.25,
                 seeding_scheme: str = "lefthash", context_width: int = 1, ignore_repeated_ngrams: bool = False,
                 vocab_size: "int | None" = None, max_tokens: "int | None" = None):
        self._init_params(locals())

    def _check(self) -> None:
        self.__dict__.pop("_scheme_cache", None)
        from humanize.watermarks.kgw import KGW

        KGW(key=self.key, gamma=self.gamma, seeding_scheme=self.seeding_scheme, context_width=self.context_width)

    def _statistic(self, proc, ids: list[int]) -> dict:
        scored, green = proc.counts(ids, bool(self.ignore_repeated_ngrams))
        z = z_score(green, scored, float(self.gamma))
        return {"tokens": scored, "green": green, "score": z, "p_value": _p_value(z)}


class UnigramDetector(_WatermarkDetector):
    """Zhao et al. (2024) z-score against the fixed green list. ``ignore_repeated_tokens``: each distinct
    token once (the released code's ``unidetect``)."""

    name = "unigram"
    _scheme_path = "humanize.watermarks.unigram:Unigram"
    _scheme_params = ("key", "gamma")
    _parameter_constraints = {
        "tokenizer": [MODEL],
        "key": KEY,
        "gamma": [Interval(Real, 0, 1, closed="neither")],
        "ignore_repeated_tokens": ["boolean"],
        "vocab_size": _VOCAB,
        "max_tokens": _MAX_TOKENS,
    }

    def __init__(self, tokenizer: Any = "smollm2-135m-instruct", key: "int | str" = 0, gamma: float = 0.5,
                 ignore_repeated_tokens: bool = False, vocab_size: "int | None" = None,
                 max_tokens: "int | None" = None):
        self._init_params(locals())

    def _check(self) -> None:
        self.__dict__.pop("_scheme_cache", None)

    def _statistic(self, proc, ids: list[int]) -> dict:
        scored, green = proc.counts(ids, bool(self.ignore_repeated_tokens))
        z = z_score(green, scored, float(self.gamma))
        return {"tokens": scored, "green": green, "score": z, "p_value": _p_value(z)}


class SynthIDDetector(_WatermarkDetector):
    """SynthID-Text's Mean score (``aggregation="mean"``) or Weighted Mean (``"weighted_mean"``: layer
    weights 10 down to 1), over the n-grams whose context is new in the text. The p-value treats the
    g-values as fair coins (an approximation: neighbouring n-grams share tokens)."""

    name = "synthid"
    _scheme_path = "humanize.watermarks.synthid:SynthID"
    _scheme_params = ("key", "ngram_len", "depth", "sampling_table_size")
    _parameter_constraints = {
        "tokenizer": [MODEL],
        "key": KEY,
        "ngram_len": [Interval(Integral, 2, None)],
        "depth": [Interval(Integral, 1, None)],
        "sampling_table_size": [Interval(Integral, 2, None)],
        "aggregation": [Options(str, {"mean", "weighted_mean"})],
        "vocab_size": _VOCAB,
        "max_tokens": _MAX_TOKENS,
    }

    def __init__(self, tokenizer: Any = "smollm2-135m-instruct", key: "int | str" = 0, ngram_len: int = 5,
                 depth: int = 30, sampling_table_size: int = 2**16, aggregation: str = "mean",
                 vocab_size: "int | None" = None, max_tokens: "int | None" = None):
        self._init_params(locals())

    def _check(self) -> None:
        self.__dict__.pop("_scheme_cache", None)

    def _statistic(self, proc, ids: list[int]) -> dict:
        g, mask = proc.g_values(ids)
        n = int(mask.sum())
        if n == 0:
            return {"tokens": 0, "mean_g": 0.5, "score": 0.5, "p_value": 1.0}
        kept = g[mask]
        if self.aggregation == "weighted_mean":
            w = np.linspace(10.0, 1.0, g.shape[1])
            score = float((kept * w).sum() / (n * w.sum()))
            sd = 0.5 * math.sqrt(float((w ** 2).sum())) / (math.sqrt(n) * float(w.sum()))
        else:
            score = float(kept.mean())
            sd = 0.5 / math.sqrt(n * g.shape[1])
        return {"tokens": n, "mean_g": float(kept.mean()), "score": score, "p_value": _p_value((score - 0.5) / sd)}
