"""Alternative spelling: American -> British spellings (RAID §3.6, App. E.4; θ = 1.0).

Whole words from a 1,800-entry US->GB list; where several entries match at one
place the longest wins. The case of the matched word carries over
("Color" -> "Colour"). RAID matches substrings (so an entry can fire inside a
longer word); we match whole words only, as the list holds inflected forms.
"""

from __future__ import annotations

from functools import lru_cache

from ._casing import match_case
from ._lexicon import LexiconMatcher
from ._resources import us_to_gb_table
from ._stream import DocumentRandom
from .base import Edit, SiteAttack


@lru_cache(maxsize=1)
def _matcher():
    table = us_to_gb_table()
    lower = {k.lower(): v for k, v in table.items()}
    return LexiconMatcher(table), table, lower


class AlternativeSpelling(SiteAttack):
    """Replace θ of the American spellings by their British spelling."""

    name = "alternative_spelling"
    needs_model = False  # rule-based: scheduled as plain tasks

    def __init__(self, rate: float = 1.0, seed: int = 0):
        self._init_params(locals())

    def sites(self, text: str) -> list[Edit]:
        matcher, table, lower = _matcher()
        sites = []
        for s, e, key in matcher.finditer(text):
            word = text[s:e]
            gb = table.get(word)
            if gb is None:
                gb = match_case(word, lower[key])
            if gb != word:
                sites.append(Edit(s, e, gb))
        return sites

    def edit(self, text: str, site: Edit, rnd: DocumentRandom) -> Edit:
        return site
