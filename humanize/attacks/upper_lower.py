"""Upper-lower: swap the case of the first letter of θ of the words (RAID §3.6, App. E.4; θ = 0.05)."""

from __future__ import annotations


import numpy as np
import regex

from ._text import char_classes
from ._stream import DocumentRandom
from .base import Edit, SiteAttack

_WORD_CHAR_RE = regex.compile(r"\w")
_JOINERS = "'’-"  # WORD_RE's inner joiners


def _swapped(ch: str) -> str | None:
    """The case-swapped letter, or None when the swap is not a one-letter case change."""
    out = ch.lower() if ch.isupper() else ch.upper()
    if len(out) != 1 or out == ch:
        return None
    return out


def _classes(ch: str) -> tuple[bool, bool, bool]:
    r"""(word character for regex's \w, joiner, has a one-letter case swap)."""
    return bool(_WORD_CHAR_RE.match(ch)), ch in _JOINERS, _swapped(ch) is not None


_ASCII_CLASSES = np.array([_classes(chr(i)) for i in range(128)], dtype=bool)


def _sites(text: str) -> list[int]:
    """Start of every match of ``humanize.text.WORD_RE`` whose first letter has a one-letter case swap.

    Computed on character-class masks rather than by iterating matches: a word
    character starts a match unless the character before it is a word character,
    or a joiner (' ’ -) that itself follows a word character.
    """
    if not text:
        return []
    word, joiner, swaps = char_classes(text, _ASCII_CLASSES, _classes).T
    inside = np.zeros(len(word), dtype=bool)
    inside[1:] = word[:-1]
    inside[2:] |= joiner[1:-1] & word[:-2]
    return np.flatnonzero(word & ~inside & swaps).tolist()


class UpperLower(SiteAttack):
    """Flip the case of the first letter of θ of the words that have a cased first letter."""

    name = "upper_lower"
    needs_model = False  # rule-based: scheduled as plain tasks

    def __init__(self, rate: float = 0.05, seed: int = 0):
        self._init_params(locals())

    def sites(self, text: str) -> list[int]:
        return _sites(text)

    def edit(self, text: str, i: int, rnd: DocumentRandom) -> Edit:
        return Edit(i, i + 1, _swapped(text[i]))
