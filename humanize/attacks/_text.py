"""Text segmentation shared by the attacks: words and sentences with character offsets."""

from __future__ import annotations

import unicodedata
from functools import lru_cache

import regex

#: A word: letters/digits/underscore with inner apostrophes or hyphens ("don't", "well-known").
WORD_RE = regex.compile(r"\w+(?:['’\-]\w+)*")

_SURROGATE_RE = regex.compile(r"[\ud800-\udfff]")


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

    # blingfire works on UTF-8 and cannot encode lone surrogates: stand them in, same length.
    _, offsets = blingfire.text_to_sentences_and_offsets(_SURROGATE_RE.sub("?", text))
    return [(int(a), int(b)) for a, b in offsets if b > a]
