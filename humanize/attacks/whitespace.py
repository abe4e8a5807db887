"""Whitespace: add extra spaces between words (RAID §3.6, App. E.4).

θ = 0.2 of the inter-word gaps receive one extra space each, sampled with
replacement as RAID does, so one gap can receive several. A gap is a run of
whitespace between two non-space tokens; the extra spaces go at its start.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import accumulate, compress, count
from operator import add

import numpy as np
import regex

from ._sampling import stochastic_count
from ._stream import DocumentRandom
from ._text import char_classes
from .base import Edit, SiteAttack, apply_edits

_GAP_RE = regex.compile(r"(?<=\S)\s+(?=\S)")
_SPACE_RE = regex.compile(r"\s")
_ASCII_SPACE = np.array([_SPACE_RE.match(chr(i)) is not None for i in range(128)], dtype=bool)
#: regex's \s on ASCII (bytes' whitespace), every one as a space.
_ASCII_WS_TO_SPACE = bytes.maketrans(b"\t\n\x0b\x0c\r", b"     ")
_ASCII_WS_BUT_NEWLINE_TO_SPACE = bytes.maketrans(b"\t\x0b\x0c\r", b"    ")


def _gaps(text: str) -> list[int]:
    r"""Start of every run of whitespace between two non-space characters (the matches of _GAP_RE).

    On ASCII: with every whitespace character made a space, the text split on single
    spaces has one non-empty part per token, and a gap starts where a token other
    than the last ends. Otherwise on a whitespace mask (regex's \s, character by
    character): a gap starts where whitespace follows a non-space character, unless
    its run reaches the end of the text.
    """
    if not text:
        return []
    if text.isascii():
        parts = text.encode("ascii").translate(_ASCII_WS_TO_SPACE).split(b" ")
        # a part ends after the lengths of the parts up to it and one separator per part before it
        return list(compress(map(add, accumulate(map(len, parts)), count()), parts))[:-1]
    space = char_classes(text, _ASCII_SPACE, lambda ch: _SPACE_RE.match(ch) is not None)
    starts = np.flatnonzero(space[1:] & ~space[:-1]) + 1  # runs that follow a non-space character
    if space[-1] and len(starts):  # the last run reaches the end of the text: not a gap
        starts = starts[:-1]
    return starts.tolist()


class Whitespace(SiteAttack):
    """Insert θ·(number of gaps) extra spaces at gaps drawn with replacement."""

    name = "whitespace"
    needs_model = False  # rule-based: scheduled as plain tasks

    def __init__(self, rate: float = 0.2, seed: int = 0):
        self._init_params(locals())

    def sites(self, text: str) -> list[int]:
        return _gaps(text)

    def choose(self, text: str, gaps: list[int], rnd: DocumentRandom) -> list[Edit]:
        """θ·(number of gaps) draws with replacement; a gap drawn c times gets c spaces."""
        return [Edit(*e) for e in _edits(gaps, _draw(len(gaps), self.rate, rnd))]

    def _run(self, text: str) -> tuple:
        # propose()'s sites, draws and edits; the output is assembled directly, one extra
        # space per draw (a gap drawn c times gets c), and the edits are built only if read.
        if not text:
            return text, []
        layout = _word_layout(text)
        if layout is not None:
            words, lines = layout
            if len(words) < 2:
                return text, []
            draws = _draw(len(words) - 1, self.rate, self.random(text))
            if not draws:
                return text, []
            for j in draws:
                words[j] += " "  # then the separator: the extra spaces open the gap
            return _rejoin(words, lines), lambda: _edits(_gaps(text), draws)
        if not text.isascii():
            gaps = _gaps(text)
            if not gaps:
                return text, []
            return _insert(text, gaps, _draw(len(gaps), self.rate, self.random(text)))
        # _gaps on ASCII, with positions computed for the drawn gaps only
        parts = text.encode("ascii").translate(_ASCII_WS_TO_SPACE).split(b" ")
        tokens = list(compress(count(), parts))  # the indices of the non-empty parts
        if len(tokens) < 2:
            return text, []
        draws = _draw(len(tokens) - 1, self.rate, self.random(text))
        if not draws:
            return text, []
        ends = list(accumulate(map(len, parts)))
        pieces = []
        prev = 0
        for j in draws:
            i = tokens[j]
            p = ends[i] + i
            pieces.append(text[prev:p])
            pieces.append(" ")
            prev = p
        pieces.append(text[prev:])
        return "".join(pieces), lambda: _edits(_gaps(text), draws)


def _word_layout(text: str) -> tuple[list[str], list[str] | None] | None:
    """(words, lines) when every gap is one space between words or line breaks between lines, else None.

    Then gap j follows word j. ``lines`` is None for a single line; otherwise the
    text split on line breaks (empty strings between consecutive ones). The common
    case, and about twice as fast as locating every gap.
    """
    if text.isascii():
        raw = text.encode("ascii")
    elif _non_ascii_space().search(text) is None:
        raw = text.encode("utf-8", "surrogatepass")  # no ASCII byte inside a non-ASCII character's UTF-8
    else:
        return None
    if (
        raw.translate(_ASCII_WS_BUT_NEWLINE_TO_SPACE) != raw  # tabs, CR, VT, FF
        or text[0] in " \n"
        or text[-1] in " \n"
        or "  " in text
        or " \n" in text
        or "\n " in text
    ):
        return None
    if "\n" not in text:
        return text.split(" "), None
    lines = text.split("\n")
    return " ".join(filter(None, lines)).split(" "), lines


def _rejoin(words: list[str], lines: list[str] | None) -> str:
    """The text of :func:`_word_layout` with its (changed) words put back."""
    if lines is None:
        return " ".join(words)
    out = []
    k = 0
    for line in lines:
        if line:
            n = line.count(" ") + 1
            line = " ".join(words[k : k + n])
            k += n
        out.append(line)
    return "\n".join(out)


@lru_cache(maxsize=1)
def _non_ascii_space() -> re.Pattern:
    """``re``'s pattern for the non-ASCII characters regex's \\s matches (built once, 0.1 s; faster than regex's)."""
    spaces = regex.findall(r"\s", "".join(map(chr, range(128, 0x110000))))
    return re.compile(f"[{re.escape(''.join(spaces))}]")


def _draw(n: int, rate: float, rnd: DocumentRandom) -> list[int]:
    """θ·n draws with replacement among n gaps, sorted."""
    draws = rnd.randbelow_many(n, stochastic_count(rate, n, rnd))
    draws.sort()
    return draws


def _edits(gaps: list[int], draws: list[int]) -> list[tuple[int, int, str]]:
    """One edit per drawn gap (``draws`` sorted): a gap drawn c times gets c spaces at its start."""
    edits: list[tuple[int, int, str]] = []
    last = -1
    for j in draws:
        if j == last:  # drawn again
            p, _, spaces = edits[-1]
            edits[-1] = (p, p, spaces + " ")
        else:
            p = gaps[j]
            edits.append((p, p, " "))
            last = j
    return edits


def _insert(text: str, gaps: list[int], draws: list[int]) -> tuple:
    edits = _edits(gaps, draws)
    return apply_edits(text, edits), lambda: edits
