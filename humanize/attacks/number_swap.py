"""Number swap: replace θ of the digits of numbers by other digits (RAID §3.6, App. E.4; θ = 0.5).

Numbers are found with RAID's pattern ``\\d+\\.?\\d*``; each chosen digit becomes a
different digit drawn uniformly, from the same script (a Devanagari digit stays
Devanagari).
"""

from __future__ import annotations

import unicodedata

import numpy as np
import regex

from ._sampling import choose_sites
from .base import Attack, Edit

_NUMBER_RE = regex.compile(r"\d+\.?\d*")


class NumberSwap(Attack):
    """Replace θ of the digits inside numbers by a different random digit."""

    name = "number_swap"

    def __init__(self, rate: float = 0.5, seed: int = 0):
        self.rate = rate
        self.seed = seed
        self._validate()

    def propose(self, text: str, rng: np.random.Generator) -> list[Edit]:
        sites = []
        for m in _NUMBER_RE.finditer(text):
            for i in range(m.start(), m.end()):
                if unicodedata.decimal(text[i], None) is not None:
                    sites.append(i)
        edits = []
        for j in choose_sites(len(sites), self.rate, rng):
            i = sites[j]
            value = unicodedata.decimal(text[i])
            zero = ord(text[i]) - value
            new = (value + 1 + int(rng.integers(9))) % 10  # uniform over the nine other digits
            edits.append(Edit(i, i + 1, chr(zero + new)))
        return edits
