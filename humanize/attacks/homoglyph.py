"""Homoglyph: swap Latin letters for Cyrillic/Greek look-alikes (RAID §3.6, App. E.4).

RAID uses θ = 1.0, every mappable character; a letter with several look-alikes
takes one at random. Table: RAID's, shipped as package data.
"""

from __future__ import annotations

import numpy as np

from ._resources import homoglyph_table
from ._sampling import choose_sites
from .base import Attack, Edit


class Homoglyph(Attack):
    """Replace θ of the mappable characters by a homoglyph."""

    name = "homoglyph"

    def __init__(self, rate: float = 1.0, seed: int = 0):
        self.rate = rate
        self.seed = seed
        self._validate()

    def propose(self, text: str, rng: np.random.Generator) -> list[Edit]:
        table = homoglyph_table()
        sites = [i for i, ch in enumerate(text) if ch in table]
        chosen = choose_sites(len(sites), self.rate, rng)
        edits = []
        for j in chosen:
            i = sites[j]
            options = table[text[i]]
            glyph = options[0] if len(options) == 1 else options[int(rng.integers(len(options)))]
            edits.append(Edit(i, i + 1, glyph))
        return edits
