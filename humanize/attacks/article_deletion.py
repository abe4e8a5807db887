"""Article deletion: delete θ of the articles "a", "an", "the" (RAID §3.6, App. E.4; θ = 0.5).

An article is deleted with the whitespace that follows it ("the cat" -> "cat").
Two definitions of an article's sites:

* ``scope="raid"`` (default), RAID's: a lowercase "a", "an" or "the" with a space
  (U+0020) on each side, as RAID's code finds them (``" a "``, ``" an "``, ``" the "``,
  overlapping matches included). Its reference numbers were produced with these.
* ``scope="extended"``: every lowercase article that is a whole word (after any
  character but a letter, digit, apostrophe or hyphen, or at the start) followed by
  spaces or tabs and a word character, and every capitalised article that opens the
  text, a line or a sentence; deleting one capitalises the word that now opens the
  sentence ("The cat sat." -> "Cat sat."). This also reaches articles after line
  breaks and punctuation, which RAID leaves, at about twice the cost per document.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import accumulate

import regex

from ._sampling import choose_sites
from ._stream import DocumentRandom
from humanize.validation import Options

from .base import Edit, SiteAttack, apply_edits

SCOPES = ("raid", "extended")
#: RAID's sites: " a ", " an ", " the " (the space after the article is not consumed).
_RAID_RE = re.compile(r"( (?:the|an?))(?= )")

# -- scope="extended" ---------------------------------------------------------------------
#: A lowercase article not inside a word, its spaces/tabs, then a word character.
_LOWER_RE = regex.compile(r"(?<![\w'’\-])(?:the|an|a)[ \t]+(?=\w)")
#: A capitalised article that opens the text, a line or a sentence.
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


def _extended_sites(text: str) -> list[tuple[int, int, bool]]:
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


def _raid_split(text: str) -> list[str]:
    """The text split around RAID's sites: [text, " article", text, " article", ..., text].

    RAID's search: an article between two spaces, the next search starting at the
    space that ends the last match, so that " a a " holds two sites. A match is the
    space before the article and the article; the space after it stays in the text.
    """
    return _RAID_RE.split(text)


def _raid_sites(text: str) -> list[tuple[int, int]]:
    """(start, end) of RAID's sites: each article and the space after it, in text order."""
    pieces = _raid_split(text)
    return [(s, e) for s, e, _ in _raid_edits(pieces, range(len(pieces) // 2))]


def _raid_edits(pieces: list[str], chosen) -> list[tuple[int, int, str]]:
    """The edits deleting the chosen sites (article and the space after it), from _raid_split's pieces."""
    bounds = list(accumulate(map(len, pieces)))
    return [(bounds[2 * j] + 1, bounds[2 * j + 1] + 1, "") for j in chosen]


def _capitalising_deletions(text: str, sites: list, chosen) -> list[tuple[int, int, str]]:
    """The edits for the chosen extended sites (start, end, opens a sentence).

    Deleting a sentence-opening article capitalises the word that now opens the
    sentence, which may be the next site's article ("A a ..."): that site is then
    left alone.
    """
    edits: list[tuple[int, int, str]] = []
    end = -1
    for j in chosen:
        s, e, opening = sites[j]
        if s < end:
            continue
        if opening:
            first = text[e]
            cap = first.upper()
            if len(cap) == 1 and cap != first:
                edits.append((s, e + 1, cap))
                end = e + 1
                continue
        edits.append((s, e, ""))
        end = e
    return edits


class ArticleDeletion(SiteAttack):
    """Delete θ of the articles, together with the space(s) after each.

    ``scope`` is ``"raid"`` (RAID's sites: lowercase articles between two spaces) or
    ``"extended"`` (whole-word articles in any context, and sentence-opening
    capitalised ones); see the module's documentation.
    """

    name = "article_deletion"
    needs_model = False  # rule-based: scheduled as plain tasks

    _parameter_constraints = {"scope": [Options(str, SCOPES)]}

    def __init__(self, rate: float = 0.5, seed: int = 0, scope: str = "raid"):
        self._init_params(locals())

    def sites(self, text: str) -> list[tuple]:
        return _raid_sites(text) if self.scope == "raid" else _extended_sites(text)

    def choose(self, text: str, sites: list, rnd: DocumentRandom) -> list[Edit]:
        chosen = choose_sites(len(sites), self.rate, rnd)
        if self.scope == "raid":
            return [Edit(s, e, "") for s, e in map(sites.__getitem__, chosen)]
        return [Edit(*e) for e in _capitalising_deletions(text, sites, chosen)]

    def _run(self, text: str) -> tuple:
        # propose()'s sites, draws and edits, with the output assembled directly and the
        # edits kept as tuples until someone reads them.
        if self.scope == "raid":
            pieces = _raid_split(text)
            chosen = self.random(text).choose(len(pieces) // 2, float(self.rate)) if len(pieces) > 1 else ()
            if not chosen:
                return text, []
            kept = pieces.copy()
            for j in chosen:  # deleting the space before the article and the article leaves the same text
                kept[2 * j + 1] = ""
            return "".join(kept), lambda: _raid_edits(pieces, chosen)
        sites = _extended_sites(text)
        if not sites:
            return text, []
        edits = _capitalising_deletions(text, sites, choose_sites(len(sites), self.rate, self.random(text)))
        return apply_edits(text, edits), lambda: edits
