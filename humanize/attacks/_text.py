"""Text segmentation shared by the attacks: words and sentences with character offsets."""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from typing import Callable

import numpy as np
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


def char_classes(text: str, ascii_table: np.ndarray, classify: Callable[[str], object]) -> np.ndarray:
    """Per-character class flags as an array: ``ascii_table[code]`` for ASCII, ``classify(ch)`` otherwise.

    Linear in the text: each distinct non-ASCII character is classified once
    (``np.unique``), then the classes are spread back to every position.
    """
    if text.isascii():
        return ascii_table[np.frombuffer(text.encode("ascii"), dtype=np.uint8)]
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    ascii_ = codes < 128
    out = np.empty(codes.shape + ascii_table.shape[1:], dtype=bool)
    out[ascii_] = ascii_table[codes[ascii_]]
    rest = codes[~ascii_]
    unique, inverse = np.unique(rest, return_inverse=True)
    table = np.array([classify(chr(c)) for c in unique.tolist()], dtype=bool).reshape(
        (len(unique),) + ascii_table.shape[1:]
    )
    out[~ascii_] = table[inverse]
    return out
