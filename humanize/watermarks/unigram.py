"""Unigram-Watermark (Zhao et al., ICLR 2024, "Provable Robust Watermarking for AI-Generated Text").

KGW with a context width of zero: ONE green list of ``gamma |V|`` tokens, drawn from the key, for
every position (§3, Algorithm 1), which makes the watermark provably robust to edits (an edit
changes the colour of at most one token, not of the next one too). Detection counts green tokens
(§3.2, the z-statistic); ``ignore_repeated_tokens`` scores each distinct token once (the released
code's ``unidetect``). transformers has no Unigram scheme: written from the paper.
"""
from __future__ import annotations

from numbers import Real
from typing import Sequence

from humanize.validation import Interval

from .base import KEY, Watermark, key_int

__all__ = ["Unigram"]


class Unigram(Watermark):
    """Zhao et al. 2024: a fixed green list (``gamma`` of the vocabulary, from ``key``), ``+delta`` on its
    logits at every step. Paper defaults: ``gamma=0.5``, ``delta=2.0``."""

    name = "unigram"
    _parameter_constraints = {
        "key": KEY,
        "gamma": [Interval(Real, 0, 1, closed="neither")],
        "delta": [Interval(Real, 0, None)],
    }

    def __init__(self, key: "int | str" = 0, gamma: float = 0.5, delta: float = 2.0):
        self._init_params(locals())

    def _make_processor(self, vocab_size: int) -> "FixedGreenList":
        return FixedGreenList(self, vocab_size)


class FixedGreenList:
    """The green list of one Unigram configuration over one vocabulary: a boolean mask, drawn once."""

    #: a logit bias, as KGW's (Zhao et al. build on its generation): applied before the temperature
    before_temperature = True

    def __init__(self, scheme: Unigram, vocab_size: int):
        import numpy as np

        self.gamma, self.delta, self.vocab_size = float(scheme.gamma), float(scheme.delta), vocab_size
        rng = np.random.default_rng(key_int(scheme.key, "unigram"))
        self.mask = np.zeros(vocab_size, dtype=bool)
        self.mask[rng.permutation(vocab_size)[: int(self.gamma * vocab_size)]] = True
        self._bias = None

    def apply(self, logits, context: Sequence[int], state: dict):
        import torch

        if self._bias is None:
            self._bias = torch.from_numpy(self.mask.astype("float32")) * self.delta
        out = logits.clone()
        out[: self.vocab_size] += self._bias.to(out.dtype)
        return out

    def counts(self, ids: Sequence[int], ignore_repeated_tokens: bool = False) -> tuple[int, int]:
        """``(tokens scored, green tokens)``: every token, or each distinct one once."""
        import numpy as np

        arr = np.asarray(list(set(ids)) if ignore_repeated_tokens else ids, dtype=np.int64)
        inside = arr[(arr >= 0) & (arr < self.vocab_size)]
        return len(arr), int(self.mask[inside].sum())
