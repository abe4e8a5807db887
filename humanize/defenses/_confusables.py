"""Fold homoglyphs back to the Latin letters they imitate, word by word (issue #12 §3).

Two tables, both ``look-alike letter -> Latin letter``:

- RAID's homoglyph table (Dugan et al. 2024, App. E.4), the homoglyph attack's own
  resource, inverted: 33 Cyrillic and Greek letters;
- Unicode's confusables data (UTS #39, ``confusables.txt``) where the optional package
  ``confusable-homoglyphs`` is installed: every letter of a script other than Latin
  whose confusable set holds exactly one ASCII letter (279 with its 3.3.1 data: Cyrillic,
  Greek, Cherokee, Lisu, Coptic, Armenian, ...). Nothing is ever downloaded.

The rule that keeps legitimate Greek or Cyrillic text intact works on words (runs of
letters, marks and format characters, so zero-width characters do not split a word):

1. a word holding a Latin letter and a look-alike, or look-alikes of two scripts
   (RAID writes "He" as Greek Η + Cyrillic е), is a mixed-script word, which no
   orthography writes: its look-alikes are folded;
2. a word made only of look-alikes (RAID turns "a" and "ace" into all-Cyrillic words)
   is folded when the nearest words before and after it that are decidable (Latin
   letters only, or other-script letters that have no Latin look-alike) are all Latin,
   and at least one exists. A one-letter word is then folded by RAID's table only:
   a lone Greek α or γ in English prose is usually a symbol ("α-helix"), not an attack;
3. every other word is left alone: a Cyrillic or Greek word holds letters without a
   Latin twin (д, л, λ, ...), and an all-look-alike word ("сор", "ΚΑΙ") among such
   words keeps its script.

Limitations: an all-look-alike foreign word quoted in English prose is folded; an
all-look-alike attacked word between a Cyrillic and a Latin word is not.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

import numpy as np
import regex

from humanize.attacks._resources import homoglyph_table

__all__ = ["CONFUSABLES_PACKAGE", "confusables_source", "fold", "fold_table"]

#: The optional distribution that ships Unicode's confusables data.
CONFUSABLES_PACKAGE = "confusable-homoglyphs"

_LETTER_RE = regex.compile(r"\p{L}")
_LATIN_LETTER_RE = regex.compile(r"[\p{Latin}&&\p{L}]", regex.V1)
_PLAIN_SCRIPT_RE = regex.compile(r"[\p{Latin}\p{Common}\p{Inherited}]")


@lru_cache(maxsize=1)
def raid_fold() -> dict[str, str]:
    """RAID's table inverted: look-alike -> Latin letter."""
    return {g: letter for letter, glyphs in homoglyph_table().items() for g in glyphs}


def confusables_source() -> str | None:
    """``"confusable-homoglyphs <version>"`` when the package is installed, else None."""
    from importlib import metadata

    try:
        return f"{CONFUSABLES_PACKAGE} {metadata.version(CONFUSABLES_PACKAGE)}"
    except metadata.PackageNotFoundError:
        return None


@lru_cache(maxsize=1)
def unicode_fold() -> dict[str, str]:
    """Unicode's confusables (from the installed package's data file): other-script letter -> ASCII letter."""
    import json
    from importlib import resources

    with resources.files("confusable_homoglyphs").joinpath("confusables.json").open(encoding="utf-8") as f:
        data = json.load(f)
    out = {}
    for ch, entries in data.items():
        if len(ch) != 1 or not unicodedata.category(ch).startswith("L") or _PLAIN_SCRIPT_RE.match(ch):
            continue
        latin = {e["c"] for e in entries if len(e["c"]) == 1 and e["c"].isascii() and e["c"].isalpha()}
        if len(latin) == 1:
            out[ch] = latin.pop()
    return out


@lru_cache(maxsize=2)
def fold_table(unicode: bool) -> dict[str, str]:
    """Look-alike -> Latin letter: RAID's table, plus Unicode's confusables when ``unicode``."""
    return {**unicode_fold(), **raid_fold()} if unicode else dict(raid_fold())


# Character classes, as bits; a look-alike also carries its script's bit.
_WORD, _LATIN, _OTHER, _KEY, _LETTER, _RAID = 1, 2, 4, 8, 16, 32
_CYRILLIC, _GREEK, _ELSEWHERE = 64, 128, 256
_WORD_CHAR_RE = regex.compile(r"[\p{L}\p{M}\p{Cf}]")
_CYRILLIC_RE = regex.compile(r"\p{Cyrillic}")
_GREEK_RE = regex.compile(r"\p{Greek}")


@lru_cache(maxsize=None)
def _char_class(code: int, unicode: bool) -> tuple[int, int]:
    """(class bits, code point of the Latin letter it folds to or 0) of one code point."""
    ch = chr(code)
    if not _WORD_CHAR_RE.match(ch):
        return 0, 0
    bits = _WORD
    target = fold_table(unicode).get(ch)
    if _LETTER_RE.match(ch):
        bits |= _LETTER
        if target is not None:
            bits |= _KEY | (_RAID if ch in raid_fold() else 0)
            bits |= _CYRILLIC if _CYRILLIC_RE.match(ch) else _GREEK if _GREEK_RE.match(ch) else _ELSEWHERE
        elif _LATIN_LETTER_RE.match(ch):
            bits |= _LATIN
        else:
            bits |= _OTHER
    return bits, ord(target) if target is not None else 0


def _nearest_kind(kind: np.ndarray, reverse: bool) -> np.ndarray:
    """For each word, the kind of the nearest decided word before it (after it if ``reverse``), 0 if none."""
    k = kind[::-1] if reverse else kind
    idx = np.where(k != 0, np.arange(len(k)), -1)
    last = np.maximum.accumulate(idx)
    before = np.concatenate(([-1], last[:-1]))
    out = np.where(before >= 0, k[np.maximum(before, 0)], 0)
    return out[::-1] if reverse else out


def fold(text: str, unicode: bool):
    """``(folded text, its edits as a callable)`` by the module's rule, or None when nothing folds.

    Vectorised over the text's code points (classes looked up once per distinct character),
    so a megabyte of attacked text folds in well under a second.
    """
    if text.isascii():
        return None
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    uniq, inverse = np.unique(codes, return_inverse=True)
    table = np.array([_char_class(int(c), unicode) for c in uniq], dtype=np.int64).reshape(-1, 2)
    if not (table[:, 0] & _KEY).any():
        return None
    bits, target = table[inverse, 0], table[inverse, 1]
    word = (bits & _WORD) != 0
    starts = np.flatnonzero(word & ~np.concatenate(([False], word[:-1])))
    # per word (each sum runs to the next word's start; the characters between words have no bits)
    latin = np.add.reduceat((bits & _LATIN) != 0, starts) > 0
    other = np.add.reduceat((bits & _OTHER) != 0, starts) > 0
    letters = np.add.reduceat((bits & _LETTER) != 0, starts)
    scripts = sum((np.add.reduceat((bits & b) != 0, starts) > 0).astype(np.int64)
                  for b in (_CYRILLIC, _GREEK, _ELSEWHERE))
    mixed = latin | (scripts > 1)  # rule 1: Latin and look-alikes, or look-alikes of two scripts
    kind = np.where(latin & ~other, 1, np.where(other & ~latin, -1, 0))
    before, after = _nearest_kind(kind, False), _nearest_kind(kind, True)
    latin_context = ~latin & ~other & (before != -1) & (after != -1) & ((before != 0) | (after != 0))
    marker = np.zeros(len(codes), dtype=np.int64)
    marker[starts] = 1
    word_id = np.cumsum(marker) - 1
    key = (bits & _KEY) != 0
    wid = np.maximum(word_id, 0)
    chosen = key & word & (mixed[wid] | (latin_context[wid] & ((letters[wid] > 1) | ((bits & _RAID) != 0))))
    positions = np.flatnonzero(chosen)
    if not len(positions):
        return None
    out = codes.copy()
    out[positions] = target[positions]
    folded = out.tobytes().decode("utf-32-le", "surrogatepass")
    return folded, lambda: [(p, p + 1, folded[p]) for p in positions.tolist()]
