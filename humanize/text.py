"""Text utilities every layer may use: words and sentences with character offsets, and text hashing.

Low in the stack (it imports nothing of humanize), so the attacks, the generation backends and the
benchmarks share one definition: a word (:data:`WORD_RE`, :func:`word_spans`), a sentence
(:func:`sentence_spans`, blingfire's breaker) and a text's content hash (:func:`text_digest`,
:func:`text_hash`: BLAKE2b of its UTF-8 bytes, lone surrogates kept), the key of a text in the
results store and in the shared-forward-pass cache.
"""

from __future__ import annotations

import hashlib

import regex

__all__ = ["WORD_RE", "sentence_spans", "text_digest", "text_hash", "word_spans"]

#: A word: letters/digits/underscore with inner apostrophes or hyphens ("don't", "well-known").
WORD_RE = regex.compile(r"\w+(?:['’\-]\w+)*")

_SURROGATE_RE = regex.compile(r"[\ud800-\udfff]")


def word_spans(text: str) -> list[tuple[int, int]]:
    """Word (start, end) character offsets (:data:`WORD_RE`)."""
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


def text_digest(text: str, size: int = 16) -> bytes:
    """BLAKE2b digest (``size`` bytes) of ``text``'s UTF-8 bytes; lone surrogates are hashed, not refused."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=size).digest()


def text_hash(text: str, size: int = 16) -> str:
    """:func:`text_digest` as hex (``2 * size`` characters): the results store's key of a text, the
    key of a dataset's input texts in a run's manifest, the reliance audit's text key."""
    return text_digest(text, size).hex()
