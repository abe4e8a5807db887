"""Text segmentation shared by the attacks: words and sentences with character offsets."""

from __future__ import annotations

import unicodedata
from functools import lru_cache

import regex

#: A word: letters/digits/underscore with inner apostrophes or hyphens ("don't", "well-known").
WORD_RE = regex.compile(r"\w+(?:['’\-]\w+)*")

#: Characters that take no visible space: zero-width and other format characters
#: (U+200B, U+200C, U+200D, U+2060, U+FEFF, ...), i.e. Unicode category Cf.


@lru_cache(maxsize=4096)
def is_invisible(ch: str) -> bool:
    """True for whitespace and zero-width/format characters."""
    return ch.isspace() or unicodedata.category(ch) == "Cf"


def word_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in WORD_RE.finditer(text)]


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Sentence (start, end) character offsets, from blingfire's sentence breaker.

    RAID uses NLTK's Punkt, whose model cannot be downloaded here; blingfire ships
    its model inside the wheel and returns character offsets into ``text``.
    """
    if not text.strip():
        return []
    import blingfire

    _, offsets = blingfire.text_to_sentences_and_offsets(text)
    return [(int(a), int(b)) for a, b in offsets if b > a]
