"""Article deletion: delete θ of the articles "a", "an", "the" (RAID §3.6, App. E.4; θ = 0.5).

An article is deleted with the whitespace that follows it ("the cat" -> "cat").
RAID only matches lowercase articles between spaces; we also take a capitalised
article that opens a sentence, and then capitalise the word that now opens it
("The cat sat." -> "Cat sat.").
"""

from __future__ import annotations

import numpy as np
import regex

from ._sampling import choose_sites
from .base import Attack, Edit

_LOWER_RE = regex.compile(r"(?<![\w'’\-])(?:the|an|a)[ \t]+(?=\w)")
_OPENING_RE = regex.compile(r"(?:^|(?<=[.!?][\"'”’)\]]?\s+)|(?<=\n))(?:The|An|A|THE|AN)[ \t]+(?=\w)")


class ArticleDeletion(Attack):
    """Delete θ of the articles, together with the whitespace after each."""

    name = "article_deletion"

    def __init__(self, rate: float = 0.5, seed: int = 0):
        self.rate = rate
        self.seed = seed
        self._validate()

    def propose(self, text: str, rng: np.random.Generator) -> list[Edit]:
        sites = [(m.start(), m.end(), False) for m in _LOWER_RE.finditer(text)]
        sites += [(m.start(), m.end(), True) for m in _OPENING_RE.finditer(text)]
        sites.sort()
        edits: list[Edit] = []
        for j in choose_sites(len(sites), self.rate, rng):
            s, e, opening = sites[j]
            if edits and s < edits[-1].end:  # "A a ..." : the previous deletion took this site's start
                continue
            if opening:
                first = text[e]
                cap = first.upper()
                if len(cap) == 1 and cap != first:
                    edits.append(Edit(s, e + 1, cap))
                    continue
            edits.append(Edit(s, e, ""))
        return edits
