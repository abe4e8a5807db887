"""Number swap: replace θ of the digits of numbers by other digits (RAID §3.6, App. E.4; θ = 0.5).

Numbers are found with RAID's pattern ``\\d+\\.?\\d*``; each chosen digit becomes a
different digit drawn uniformly, from the same script (a Devanagari digit stays
Devanagari).
"""

from __future__ import annotations

import re
import unicodedata

import regex

from ._sampling import choose_sites
from ._stream import DocumentRandom
from .base import Edit, SiteAttack

_NUMBER_RE = regex.compile(r"\d+\.?\d*")
# In ASCII text regex's \d is [0-9], all decimal: every digit is a site.
_ASCII_DIGIT_RE = re.compile(r"[0-9]")


def _sites(text: str) -> list[int]:
    """Positions of the decimal digits inside numbers."""
    if text.isascii():
        return [m.start() for m in _ASCII_DIGIT_RE.finditer(text)]
    sites = []
    for m in _NUMBER_RE.finditer(text):
        for i in range(m.start(), m.end()):
            if unicodedata.decimal(text[i], None) is not None:
                sites.append(i)
    return sites


class NumberSwap(SiteAttack):
    """Replace θ of the digits inside numbers by a different random digit."""

    name = "number_swap"
    needs_model = False  # rule-based: scheduled as plain tasks

    def __init__(self, rate: float = 0.5, seed: int = 0):
        self._init_params(locals())

    def sites(self, text: str) -> list[int]:
        return _sites(text)

    def edit(self, text: str, i: int, rnd: DocumentRandom) -> Edit:
        return _swap(text, i, rnd.randbelow(9))

    def choose(self, text: str, sites: list[int], rnd: DocumentRandom) -> list[Edit]:
        # SiteAttack.choose's draws, the nine-way ones taken in one call
        chosen = choose_sites(len(sites), self.rate, rnd)
        return [_swap(text, sites[j], shift) for j, shift in zip(chosen, rnd.randbelow_many(9, len(chosen)))]


def _swap(text: str, i: int, shift: int) -> Edit:
    """Digit ``i`` moved ``1 + shift`` steps on (``shift`` in [0, 9)): uniform over the nine other digits."""
    value = unicodedata.decimal(text[i])
    zero = ord(text[i]) - value
    return Edit(i, i + 1, chr(zero + (value + 1 + shift) % 10))
