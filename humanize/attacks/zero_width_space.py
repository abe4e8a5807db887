"""Zero-width space: insert U+200B around visible characters (RAID §3.6, App. E.4).

The paper inserts it "before and after each visible character" at θ = 1.0. The
candidate sites are the positions next to at least one visible character
(whitespace and other zero-width characters are not visible). At θ = 1.0 the
output is built with ``str.join`` between runs of invisible characters and
the edits are only materialised if read, so the attack stays linear in the
text length (RAID's reference rebuilds the string for every insertion, which
is quadratic).
"""

from __future__ import annotations

import re

import regex

from ._stream import DocumentRandom
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


def _insert_at_every_site(text: str, char: str) -> str:
    """``text`` with ``char`` at every site: C-speed joins, no per-character Python work."""
    parts = []
    prev_end = 0
    for a, b in _chunks(text):
        parts.append(text[prev_end:a])  # the invisible run before this chunk, unchanged
        if a < b:
            chunk = char.join(text[a:b])
            if _VISIBLE_RE.match(text, a):
                chunk = char + chunk
            if _VISIBLE_RE.match(text, b - 1):
                chunk += char
            parts.append(chunk)
        prev_end = b
    return "".join(parts)


class ZeroWidthSpace(SiteAttack):
    """Insert U+200B at θ of the positions next to a visible character."""

    name = "zero_width_space"

    def __init__(self, rate: float = 1.0, seed: int = 0, char: str = ZWSP):
        self.rate = rate
        self.seed = seed
        self.char = char
        self._validate()

    def _validate(self) -> None:
        super()._validate()
        if not isinstance(self.char, str) or not self.char:
            raise ValueError(f"ZeroWidthSpace: char must be a non-empty str, got {self.char!r}")

    def sites(self, text: str) -> list[int]:
        return _sites(text)

    def edit(self, text: str, p: int, rnd: DocumentRandom) -> Edit:
        return Edit(p, p, self.char)

    def _run(self, text: str):
        if float(self.rate) >= 1.0:
            out = _insert_at_every_site(text, self.char)
            char = self.char
            return out, lambda: [(p, p, char) for p in _sites(text)]
        return super()._run(text)
