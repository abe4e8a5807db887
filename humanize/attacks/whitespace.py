"""Whitespace: add extra spaces between words (RAID §3.6, App. E.4).

θ = 0.2 of the inter-word gaps receive one extra space each, sampled with
replacement as RAID does, so one gap can receive several. A gap is a run of
whitespace between two non-space tokens; the extra spaces go at its start.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import regex

from ._sampling import stochastic_count
from ._stream import DocumentRandom
from ._text import char_classes
from .base import Edit, SiteAttack

_GAP_RE = regex.compile(r"(?<=\S)\s+(?=\S)")
_SPACE_RE = regex.compile(r"\s")
_ASCII_SPACE = np.array([_SPACE_RE.match(chr(i)) is not None for i in range(128)], dtype=bool)


def _gaps(text: str) -> list[int]:
    r"""Start of every run of whitespace between two non-space characters (the matches of _GAP_RE).

    Found on a whitespace mask (regex's \s, character by character) rather than
    by scanning with the pattern: a gap starts where whitespace follows a
    non-space character, unless its run reaches the end of the text.
    """
    if not text:
        return []
    space = char_classes(text, _ASCII_SPACE, lambda ch: _SPACE_RE.match(ch) is not None)
    starts = np.flatnonzero(space[1:] & ~space[:-1]) + 1  # runs that follow a non-space character
    if space[-1] and len(starts):  # the last run reaches the end of the text: not a gap
        starts = starts[:-1]
    return starts.tolist()


class Whitespace(SiteAttack):
    """Insert θ·(number of gaps) extra spaces at gaps drawn with replacement."""

    name = "whitespace"

    def __init__(self, rate: float = 0.2, seed: int = 0):
        self.rate = rate
        self.seed = seed
        self._validate()

    def sites(self, text: str) -> list[int]:
        return _gaps(text)

    def choose(self, text: str, gaps: list[int], rnd: DocumentRandom) -> list[Edit]:
        """θ·(number of gaps) draws with replacement; a gap drawn c times gets c spaces."""
        counts = Counter(rnd.randbelow_many(len(gaps), stochastic_count(self.rate, len(gaps), rnd)))
        return [Edit(gaps[j], gaps[j], " " * counts[j]) for j in sorted(counts)]
