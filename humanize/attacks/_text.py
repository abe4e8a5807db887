"""Text helpers of the attacks: character classes (words and sentences: :mod:`humanize.text`)."""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from typing import Callable

import numpy as np

__all__ = ["char_classes", "is_invisible"]


@lru_cache(maxsize=4096)
def is_invisible(ch: str) -> bool:
    """True for whitespace and zero-width/format characters."""
    return ch.isspace() or unicodedata.category(ch) == "Cf"


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
