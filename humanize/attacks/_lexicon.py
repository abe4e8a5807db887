"""Find whole-word occurrences of a word list's entries, fast and case-insensitively.

Single-word entries are looked up token by token in a dict (one regex pass over
the text); the few multi-word entries ("a lot") go through one small regex. At a
place where several entries match, the longest wins (RAID App. E.4).
"""

from __future__ import annotations

from typing import Iterable, Iterator

import regex

_TOKEN_RE = regex.compile(r"\w+")


class LexiconMatcher:
    """Whole-word, case-insensitive matches of ``keys`` in a text."""

    def __init__(self, keys: Iterable[str]):
        keys = {k.lower() for k in keys if k}
        self.single = {k for k in keys if _TOKEN_RE.fullmatch(k)}
        multi = sorted((k for k in keys if k not in self.single), key=len, reverse=True)
        self.multi = (
            regex.compile(r"(?<!\w)\L<words>(?!\w)", words=multi, flags=regex.IGNORECASE) if multi else None
        )

    def finditer(self, text: str) -> Iterator[tuple[int, int, str]]:
        """Yield ``(start, end, key)`` in text order, non-overlapping, longest match first."""
        found = []
        if self.multi is not None:
            found = [(m.start(), m.end(), m.group().lower()) for m in self.multi.finditer(text)]
        single = self.single
        singles = (
            (m.start(), m.end(), w)
            for m in _TOKEN_RE.finditer(text)
            if (w := m.group().lower()) in single
        )
        if not found:
            yield from singles
            return
        events = sorted([*found, *singles], key=lambda x: (x[0], -(x[1] - x[0])))
        end = -1
        for s, e, k in events:
            if s >= end:
                yield s, e, k
                end = e
