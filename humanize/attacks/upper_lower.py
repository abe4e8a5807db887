"""Upper-lower: swap the case of the first letter of θ of the words (RAID §3.6, App. E.4; θ = 0.05)."""

from __future__ import annotations

import numpy as np

from ._sampling import choose_sites
from ._text import WORD_RE
from .base import Attack, Edit


def _swapped(ch: str) -> str | None:
    """The case-swapped letter, or None when the swap is not a one-letter case change."""
    out = ch.lower() if ch.isupper() else ch.upper()
    if len(out) != 1 or out == ch:
        return None
    return out


class UpperLower(Attack):
    """Flip the case of the first letter of θ of the words that have a cased first letter."""

    name = "upper_lower"

    def __init__(self, rate: float = 0.05, seed: int = 0):
        self.rate = rate
        self.seed = seed
        self._validate()

    def propose(self, text: str, rng: np.random.Generator) -> list[Edit]:
        sites = []
        for m in WORD_RE.finditer(text):
            i = m.start()
            new = _swapped(text[i])
            if new is not None:
                sites.append((i, new))
        return [Edit(sites[j][0], sites[j][0] + 1, sites[j][1]) for j in choose_sites(len(sites), self.rate, rng)]
