"""Hypothesis strategies for "any text a user could pass": the input side of the detector,
quality and cost contracts (tests/*/test_inputs.py).

Arbitrary Unicode *including* lone surrogates (which hypothesis leaves out by default),
empty and whitespace-only texts, very long words, mixed scripts and zero-width
characters; batches mix good and bad texts. Sizes are bounded so no example hangs.
"""
from __future__ import annotations

from hypothesis import strategies as st

#: A lone surrogate: valid in a Python str, not encodable as UTF-8.
BAD = "a \ud800 b"

_surrogate = st.characters(codec=None, categories=["Cs"])
_any_char = st.one_of(st.characters(exclude_categories=()), _surrogate)
_words = st.sampled_from([
    "the", "The", "cat", "running", "colour", "3.14", "2024", "Привет", "мир", "日本語の文", "مرحبا", "١٢٣",
    "नमस्ते", "😀", "👍🏽", "🇫🇷", "e\u0301", "\u200b", "ﬁ", "ß", "İ", "--", "—", "“hi”", "\ufffd", "\x00",
])
_seps = st.sampled_from([" ", "  ", "\n", "\n\n", "\t", "", ". ", " \u200b", "\u3000"])

#: Word-like text over many scripts, joined by odd whitespace.
mixed_scripts = st.lists(st.tuples(_words, _seps), max_size=30).map(lambda xs: "".join(w + s for w, s in xs))
#: Any code point sequence, surrogates included.
raw_unicode = st.text(alphabet=_any_char, max_size=80)
#: Empty and whitespace-only text.
blank = st.sampled_from(["", " ", "   ", "\n", "\t \n", "\u3000", "\u200b", "\u00a0\u2003"])
#: One very long word (no whitespace), optionally among others.
long_word = st.builds(lambda c, n, pre: pre + c * n, st.sampled_from(["x", "é", "語", "😀", "ab"]),
                      st.integers(200, 1200), st.sampled_from(["", "word ", "\ud800"]))
#: A text that contains at least one lone surrogate.
with_surrogate = st.builds(lambda a, s, b: a + s + b, mixed_scripts, _surrogate, mixed_scripts)

any_text = st.one_of(mixed_scripts, raw_unicode, blank, long_word, with_surrogate)
#: Small text for model-backed properties (keeps forward passes cheap).
small_text = st.one_of(mixed_scripts.map(lambda t: t[:120]), raw_unicode.map(lambda t: t[:40]), blank,
                       with_surrogate.map(lambda t: t[:120]))


def batches(texts=any_text, max_size: int = 6):
    """Lists of texts that usually mix good and bad ones."""
    return st.lists(texts, min_size=1, max_size=max_size)


def repaired(text: str) -> str:
    """The documented repair, written out independently of the library: surrogates -> U+FFFD."""
    return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text)
