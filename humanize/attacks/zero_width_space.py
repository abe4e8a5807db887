"""Zero-width space: insert U+200B around visible characters (RAID §3.6, App. E.4).

The paper inserts it "before and after each visible character" at θ = 1.0. The
candidate sites are the positions next to at least one visible character
(whitespace and other zero-width characters are not visible). At θ = 1.0 the
output is one ``str.replace`` that puts the character at every position, with
the invisible runs copied back, and the edits are only materialised if read, so
the attack stays linear in the text length (RAID's reference rebuilds the string
for every insertion, which is quadratic).

RAID's positions are between code points, which splits combining accents, emoji
ZWJ sequences, flags, skin-tone modifiers and Devanagari vowel signs, so the
"invisible" attack changes how such text renders. ``boundary="grapheme"`` keeps
every extended grapheme cluster (Unicode UAX #29, the ``regex`` module's ``\\X``)
whole: its sites are the cluster boundaries next to a visible cluster.
"""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np
import regex

from ._stream import DocumentRandom
from humanize.validation import Options

from .base import Edit, SiteAttack

ZWSP = "\u200b"
# A position is a site when the character before or after it is visible.
_SITE_RE = regex.compile(r"(?:(?<=[^\s\p{Cf}])|(?=[^\s\p{Cf}]))")


# Runs of two or more invisible characters: the only places with positions that are not sites.
_INVISIBLE_RUN_RE = regex.compile(r"[\s\p{Cf}]{2,}")
_VISIBLE_RE = regex.compile(r"[^\s\p{Cf}]")
# On ASCII text the same runs, found by the faster ``re`` (the class is regex's [\s\p{Cf}] on ASCII).
_ASCII_INVISIBLE = "".join(chr(i) for i in range(128) if not _VISIBLE_RE.match(chr(i)))
_ASCII_INVISIBLE_RUN_RE = re.compile(f"[{re.escape(_ASCII_INVISIBLE)}]{{2,}}")


def _chunks(text: str) -> list[tuple[int, int]]:
    """Spans between invisible runs: inside a chunk no two invisible characters touch."""
    runs = (_ASCII_INVISIBLE_RUN_RE if text.isascii() else _INVISIBLE_RUN_RE).finditer(text)
    spans, pos = [], 0
    for m in runs:
        spans.append((pos, m.start()))
        pos = m.end()
    spans.append((pos, len(text)))
    return spans


def _sites(text: str) -> list[int]:
    """The positions next to a visible character (the matches of ``_SITE_RE``), in linear time.

    Every position inside a chunk is one; a chunk's two ends are ones when the
    character there is visible (the other side is an invisible run or the text's end).
    """
    sites: list[int] = []
    for a, b in _chunks(text):
        if a < b:
            first = a if _VISIBLE_RE.match(text, a) else a + 1
            last = b if _VISIBLE_RE.match(text, b - 1) else b - 1
            sites.extend(range(first, last + 1))
    return sites


# ASCII invisible characters as spaces: a text with no two of them side by side has no "  " after this.
_ASCII_TO_SPACE = bytes.maketrans(_ASCII_INVISIBLE.encode(), b" " * len(_ASCII_INVISIBLE))
_ASCII_RUN_RE = re.compile(rb"  +")  # runs of two or more invisible characters, after _ASCII_TO_SPACE


@lru_cache(maxsize=1)
def _invisible_table() -> np.ndarray:
    """Whether each code point (all 0x110000) is invisible, from the same pattern as the sites (0.1 s, once)."""
    table = np.zeros(0x110000, dtype=bool)
    for m in regex.finditer(r"[\s\p{Cf}]+", "".join(map(chr, range(0x110000)))):
        table[m.start() : m.end()] = True
    return table


def _blank_runs(text: str) -> list[tuple[int, int]]:
    """The maximal runs of invisible characters that hold a position that is not a site.

    A run [s, e) of two or more invisible characters holds s + 1 .. e - 1; a run at
    the start of the text also holds position 0, and one at its end position n.
    """
    n = len(text)
    if text.isascii():
        flat = text.encode("ascii").translate(_ASCII_TO_SPACE)
        runs = [m.span() for m in _ASCII_RUN_RE.finditer(flat)]
        if flat[0] == 32 and not (runs and runs[0][0] == 0):
            runs.insert(0, (0, 1))
        if flat[-1] == 32 and not (runs and runs[-1][1] == n):
            runs.append((n - 1, n))
        return runs
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    padded = np.zeros(n + 2, dtype=bool)  # invisible, with a visible guard at each end
    padded[1:-1] = _invisible_table()[codes]
    edges = np.flatnonzero(padded[1:] != padded[:-1])
    if not len(edges):
        return []
    starts, ends = edges[0::2], edges[1::2]
    long = (ends - starts >= 2) | (starts == 0) | (ends == n)
    return list(zip(starts[long].tolist(), ends[long].tolist()))


def _insert_at_every_site(text: str, char: str) -> str:
    """``text`` with ``char`` at every site, without a per-character Python loop.

    ``text.replace("", char)`` puts ``char`` at every position (one C call); each
    invisible run holding positions that are not sites is then copied back as it was.
    """
    n = len(text)
    if not n:
        return text
    full = text.replace("", char)
    runs = _blank_runs(text)
    if not runs:
        return full
    width = len(char)
    step = width + 1  # full[p * step:][:width] is the insertion at position p, full[i * step + width] character i
    parts = []
    prev = 0
    for s, e in runs:
        parts.append(full[prev : s * step + width if s else 0])
        parts.append(text[s:e])
        prev = e * step if e != n else len(full)
    parts.append(full[prev:])
    return "".join(parts)


BOUNDARIES = ("codepoint", "grapheme")
_CLUSTER_RE = regex.compile(r"\X")


def _grapheme_sites(text: str) -> list[int]:
    """The extended grapheme cluster boundaries next to a visible cluster (one holding a visible character)."""
    sites: list[int] = []
    before = False  # whether the cluster before the boundary is visible
    search = _VISIBLE_RE.search
    for m in _CLUSTER_RE.finditer(text):
        s, e = m.span()
        visible = search(text, s, e) is not None
        if visible or before:
            sites.append(s)
        before = visible
    if before:
        sites.append(len(text))
    return sites


class ZeroWidthSpace(SiteAttack):
    """Insert U+200B at θ of the positions next to a visible character.

    ``boundary="codepoint"`` (default, RAID's): any position between two code
    points. ``boundary="grapheme"``: only between extended grapheme clusters, so
    an accent stays on its letter, an emoji ZWJ sequence, flag or skin-tone
    modifier stays one glyph and a Devanagari vowel sign stays on its consonant;
    θ is then the fraction of the cluster boundaries next to a visible cluster.
    ``char`` is what is inserted (U+200B by default).
    """

    name = "zero_width_space"
    needs_model = False  # rule-based: scheduled as plain tasks

    _parameter_constraints = {"char": ["nonempty str"], "boundary": [Options(str, BOUNDARIES)]}

    def __init__(self, rate: float = 1.0, seed: int = 0, char: str = ZWSP, boundary: str = "codepoint"):
        self._init_params(locals())

    def sites(self, text: str) -> list[int]:
        return _grapheme_sites(text) if self.boundary == "grapheme" else _sites(text)

    def edit(self, text: str, p: int, rnd: DocumentRandom) -> Edit:
        return Edit(p, p, self.char)

    def _run(self, text: str):
        if float(self.rate) >= 1.0 and self.boundary == "codepoint":
            char = self.char
            return _insert_at_every_site(text, char), lambda: [(p, p, char) for p in _sites(text)]
        return super()._run(text)
