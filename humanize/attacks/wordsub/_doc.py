"""The engine's view of one document: words, sentences, candidates and what the models cost.

Words are runs of letters (apostrophe-joined: ``don't`` is one word); every
part of the engine addresses a word by its index in :attr:`Doc.words`, and a
swap replaces exactly that character span, so edits are exact by construction.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import NamedTuple

__all__ = ["Doc", "Candidate", "WORD_RE"]

WORD_RE = re.compile(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)*")


class Candidate(NamedTuple):
    """A replacement ``text`` for word ``word`` of a document.

    ``source`` names the generator that proposed it; ``mlm_prob`` is the masked
    LM's probability where one proposed it (NaN otherwise); ``score`` is set by
    the scorer (higher is better; NaN before scoring).
    """

    word: int
    text: str
    source: str
    mlm_prob: float = math.nan
    score: float = math.nan


def _sentences(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences (blingfire's sentence breaker)."""
    if not text.strip():
        return []
    import blingfire

    from humanize.models.text import repair_text

    clean, _ = repair_text(text)  # same length: offsets stay valid
    try:
        _, offsets = blingfire.text_to_sentences_and_offsets(clean)
    except AssertionError:  # blingfire on text without any sentence
        return [(0, len(text))]
    return [(int(s), int(e)) for s, e in offsets] or [(0, len(text))]


@dataclass
class Doc:
    """One document being attacked, and the model cost it has incurred so far."""

    text: str
    words: list[tuple[int, int]]
    sentences: list[tuple[int, int]]
    sentence_of: list[int]
    cost: Counter = field(default_factory=Counter)
    #: What the parts report beyond counts (e.g. the target's score before and after), copied into ``info``.
    notes: dict = field(default_factory=dict)
    #: Per-document memo of the parts' measurements (e.g. a sentence's perplexity), so a greedy
    #: search does not re-measure the same original sentence every round.
    memo: dict = field(default_factory=dict, repr=False)

    @classmethod
    def parse(cls, text: str) -> "Doc":
        words = [m.span() for m in WORD_RE.finditer(text)]
        sents = _sentences(text) if words else []
        sentence_of, j = [], 0
        for s, _ in words:
            while j + 1 < len(sents) and sents[j + 1][0] <= s:
                j += 1
            sentence_of.append(j)
        return cls(text, words, sents, sentence_of)

    def word(self, i: int) -> str:
        s, e = self.words[i]
        return self.text[s:e]

    def window(self, i: int, size: int, replacement: str | None = None) -> tuple[str, int]:
        """Text of words ``i-size .. i+size`` (original spacing), word ``i`` optionally replaced.

        Returns ``(window, offset of word i in the window)``.
        """
        lo = self.words[max(0, i - size)][0]
        hi = self.words[min(len(self.words) - 1, i + size)][1]
        s, e = self.words[i]
        word = self.text[s:e] if replacement is None else replacement
        return self.text[lo:s] + word + self.text[e:hi], s - lo

    def add_cost(self, **counts: int) -> None:
        for k, v in counts.items():
            self.cost[k] += int(v)

    def variant(self, swaps) -> str:
        """The whole document with ``swaps`` (candidates, at most one per word) applied, in the original's case."""
        from .._casing import match_case

        parts, pos = [], 0
        for c in sorted(swaps, key=lambda c: c.word):
            s, e = self.words[c.word]
            parts += [self.text[pos:s], match_case(self.text[s:e], c.text)]
            pos = e
        parts.append(self.text[pos:])
        return "".join(parts)
