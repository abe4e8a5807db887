"""Zero-width space: insert U+200B around visible characters (RAID §3.6, App. E.4).

The paper inserts it "before and after each visible character" at θ = 1.0. The
candidate sites are the positions next to at least one visible character
(whitespace and other zero-width characters are not visible). At θ = 1.0 the
output is built in one regex pass and the edits are only materialised if read,
so the attack stays linear in the text length (RAID's reference rebuilds the
string for every insertion, which is quadratic).
"""

from __future__ import annotations

import numpy as np
import regex

from ._sampling import choose_sites
from .base import Attack, Edit

ZWSP = "\u200b"
# A position is a site when the character before or after it is visible.
_SITE_RE = regex.compile(r"(?:(?<=[^\s\p{Cf}])|(?=[^\s\p{Cf}]))")


def _sites(text: str) -> list[int]:
    return [m.start() for m in _SITE_RE.finditer(text)]


class ZeroWidthSpace(Attack):
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

    def propose(self, text: str, rng: np.random.Generator) -> list[Edit]:
        sites = _sites(text)
        return [Edit(sites[j], sites[j], self.char) for j in choose_sites(len(sites), self.rate, rng)]

    def _run(self, text: str):
        if float(self.rate) >= 1.0:
            out = _SITE_RE.sub(self.char.replace("\\", "\\\\"), text)
            char = self.char
            return out, lambda: [(p, p, char) for p in _sites(text)]
        return super()._run(text)
