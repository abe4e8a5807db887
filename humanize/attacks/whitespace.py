"""Whitespace: add extra spaces between words (RAID §3.6, App. E.4).

θ = 0.2 of the inter-word gaps receive one extra space each, sampled with
replacement as RAID does, so one gap can receive several. A gap is a run of
whitespace between two non-space tokens; the extra spaces go at its start.
"""

from __future__ import annotations

import numpy as np
import regex

from ._sampling import stochastic_count
from .base import Attack, Edit

_GAP_RE = regex.compile(r"(?<=\S)\s+(?=\S)")


class Whitespace(Attack):
    """Insert θ·(number of gaps) extra spaces at gaps drawn with replacement."""

    name = "whitespace"

    def __init__(self, rate: float = 0.2, seed: int = 0):
        self.rate = rate
        self.seed = seed
        self._validate()

    def propose(self, text: str, rng: np.random.Generator) -> list[Edit]:
        gaps = [m.start() for m in _GAP_RE.finditer(text)]
        k = stochastic_count(self.rate, len(gaps), rng)
        if k == 0:
            return []
        counts = np.bincount(rng.integers(0, len(gaps), size=k), minlength=len(gaps))
        return [Edit(gaps[i], gaps[i], " " * int(c)) for i, c in enumerate(counts) if c]
