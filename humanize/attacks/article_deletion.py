"""Article deletion: delete θ of the articles "a", "an", "the" (RAID §3.6, App. E.4; θ = 0.5).

An article is deleted with the whitespace that follows it ("the cat" -> "cat").
RAID only matches lowercase articles between spaces; we also take a capitalised
article that opens a sentence, and then capitalise the word that now opens it
("The cat sat." -> "Cat sat.").
"""

from __future__ import annotations

import random
import re
from functools import lru_cache

import regex

from ._sampling import choose_sites
from .base import Edit, SiteAttack

_LOWER_RE = regex.compile(r"(?<![\w'’\-])(?:the|an|a)[ \t]+(?=\w)")
_OPENING_RE = regex.compile(r"(?:^|(?<=[.!?][\"'”’)\]]?\s+)|(?<=\n))(?:The|An|A|THE|AN)[ \t]+(?=\w)")

# A fast superset of both patterns' matches: any article form and its spaces, no context.
# No match can start inside a candidate, so checking each candidate's context gives
# exactly the matches of the two patterns (tested), at a fraction of their scanning cost.
_CANDIDATE_RE = re.compile(r"(?:the|an|a|The|An|A|THE|AN)[ \t]+")
_WORD_CHAR_RE = regex.compile(r"\w")
_BEFORE_LOWER_RE = regex.compile(r"[\w'’\-]")  # what _LOWER_RE's lookbehind rules out


@lru_cache(maxsize=None)
def _is_word(ch: str) -> bool:
    return _WORD_CHAR_RE.match(ch) is not None


@lru_cache(maxsize=None)
def _blocks_lower(ch: str) -> bool:
    return _BEFORE_LOWER_RE.match(ch) is not None


def _sites(text: str) -> list[tuple[int, int, bool]]:
    """(start, end, opens a sentence) of every match of _LOWER_RE or _OPENING_RE, in text order."""
    n = len(text)
    sites = []
    for m in _CANDIDATE_RE.finditer(text):
        s, e = m.span()
        if text[s] in "ta":
            if (s == 0 or not _blocks_lower(text[s - 1])) and e < n and _is_word(text[e]):
                sites.append((s, e, False))
        elif _OPENING_RE.match(text, s):  # same article and spaces: the match ends at e
            sites.append((s, e, True))
    return sites


class ArticleDeletion(SiteAttack):
    """Delete θ of the articles, together with the whitespace after each."""

    name = "article_deletion"

    def __init__(self, rate: float = 0.5, seed: int = 0):
        self.rate = rate
        self.seed = seed
        self._validate()

    def sites(self, text: str) -> list[tuple[int, int, bool]]:
        return _sites(text)

    def choose(self, text: str, sites: list, rnd: random.Random) -> list[Edit]:
        edits: list[Edit] = []
        for j in choose_sites(len(sites), self.rate, rnd):
            s, e, opening = sites[j]
            if edits and s < edits[-1].end:  # "A a ..." : the previous deletion took this site's start
                continue
            if opening:
                first = text[e]
                cap = first.upper()
                if len(cap) == 1 and cap != first:
                    edits.append(Edit(s, e + 1, cap))
                    continue
            edits.append(Edit(s, e, ""))
        return edits
