"""Homoglyph: swap Latin letters for Cyrillic/Greek look-alikes (RAID §3.6, App. E.4).

RAID uses θ = 1.0, every mappable character; a letter with several look-alikes
takes one at random. Table: RAID's, shipped as package data.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ._resources import homoglyph_table
from ._stream import DocumentRandom
from .base import Edit, SiteAttack


@lru_cache(maxsize=1)
def _tables():
    """The table; the one-option letters as (letter, glyph) pairs; a pattern and option count for the others.

    The fast θ = 1.0 path needs every look-alike to be one character that is not
    itself a key (positions then do not move and the replacements cannot chain),
    and every several-option letter to have the same number of options (so that
    ``randbelow(n)`` is the same draw for each); otherwise the pairs are None.
    """
    table = homoglyph_table()
    glyphs = {g for v in table.values() for g in v}
    lengths = {len(v) for v in table.values() if len(v) > 1}
    fast = (
        all(len(k) == 1 and v and all(len(g) == 1 for g in v) for k, v in table.items())
        and not glyphs & set(table)
        and len(lengths) <= 1
    )
    if not fast:
        return table, None, None, 0
    single = [(k, v[0]) for k, v in table.items() if len(v) == 1]
    multi = sorted(k for k, v in table.items() if len(v) > 1)
    pattern = re.compile(f"[{re.escape(''.join(multi))}]") if multi else None
    return table, single, pattern, (lengths.pop() if lengths else 0)


class Homoglyph(SiteAttack):
    """Replace θ of the mappable characters by a homoglyph."""

    name = "homoglyph"
    needs_model = False  # rule-based: scheduled as plain tasks

    def __init__(self, rate: float = 1.0, seed: int = 0):
        self._init_params(locals())

    def sites(self, text: str) -> list[int]:
        table = _tables()[0]
        return [i for i, ch in enumerate(text) if ch in table]

    def edit(self, text: str, i: int, rnd: DocumentRandom) -> Edit:
        options = _tables()[0][text[i]]
        return Edit(i, i + 1, options[0] if len(options) == 1 else options[rnd.randbelow(len(options))])

    def _run(self, text: str):
        table, single, multi, n_options = _tables()
        if float(self.rate) < 1.0 or single is None:
            return super()._run(text)
        # θ = 1.0: every mappable character, so the only random draws are the choices among
        # several look-alikes, made in text order as propose() makes them.
        out = text
        for letter, glyph in single:
            out = out.replace(letter, glyph)
        if multi is not None:
            positions = [m.start() for m in multi.finditer(text)]
            if positions:
                picks = self.random(text).randbelow_many(n_options, len(positions))
                parts, prev = [], 0
                for i, pick in zip(positions, picks):
                    parts.append(out[prev:i])
                    parts.append(table[text[i]][pick])
                    prev = i + 1
                parts.append(out[prev:])
                out = "".join(parts)
        return out, lambda: [(i, i + 1, out[i]) for i, ch in enumerate(text) if ch in table]
