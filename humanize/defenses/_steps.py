"""The character-level steps of :class:`~humanize.defenses.normalize.Normalize`.

Each step maps a text to sorted, non-overlapping edits ``(start, end, replacement)``
over it (or to ``(new text, a callable giving them)`` where the text is cheaper to build
first), found with one regular-expression scan (linear time), and makes no edit on
text it leaves alone, so clean ASCII prose costs a few scans.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

import regex

from humanize.attacks.base import apply_edits

__all__ = ["DASHES", "LINE_BREAKS", "QUOTES", "invisible_edits", "nfkc_edits", "punct_edits", "whitespace_edits"]

# -- invisible and format characters --------------------------------------------------
# Unicode category Cf (zero-width space/joiners, word joiner, BOM, soft hyphen, bidi
# controls, tags, ...) but not the prepended concatenation marks (U+0600..U+0605,
# U+06DD, ...), which are Cf yet render as visible signs.
_INVISIBLE_RE = regex.compile(r"[\p{Cf}--\p{Prepended_Concatenation_Mark}]+", regex.V1)
_ZWJ, _ZWNJ = "\u200d", "\u200c"
_EMOJI_BEFORE_ZWJ = regex.compile(r"[\p{Extended_Pictographic}\p{Emoji_Modifier}\ufe0f\u20e3]")
_PICTOGRAPHIC = regex.compile(r"\p{Extended_Pictographic}")
#: A letter or mark of a script that is not Latin: Persian, Arabic and Indic scripts need ZWNJ/ZWJ.
_JOINING_SCRIPT = regex.compile(r"[[\p{L}\p{M}]--\p{Latin}--\p{Common}]", regex.V1)
_BLACK_FLAG = "\U0001f3f4"  # subdivision flags: U+1F3F4, tag letters, U+E007F
_KEEP_CANDIDATES = regex.compile("[\u200c\u200d\U000e0020-\U000e007f]")


def _keeps(ch: str, before: str, after: str) -> bool:
    """Whether the format character ``ch`` between visible ``before`` and ``after`` is meaningful."""
    if ch == _ZWJ and _EMOJI_BEFORE_ZWJ.match(before) and _PICTOGRAPHIC.match(after):
        return True  # an emoji ZWJ sequence: 👨‍👩‍👧
    if ch in (_ZWJ, _ZWNJ) and _JOINING_SCRIPT.match(before) and _JOINING_SCRIPT.match(after):
        return True  # Persian half-space, Indic conjunct control
    return "\U000e0020" <= ch <= "\U000e007f" and before == _BLACK_FLAG  # 🏴 + tags = a subdivision flag


def invisible_edits(text: str):
    """Delete format characters, keeping ZWJ in emoji sequences, ZWJ/ZWNJ between letters of
    scripts that use them, and the tags of subdivision flags (the visible neighbours decide)."""
    if text.isascii():
        return []
    if not _KEEP_CANDIDATES.search(text):  # nothing to keep: each run is one deletion
        out = _INVISIBLE_RE.sub("", text)
        if len(out) == len(text):
            return []
        return out, lambda: [(m.start(), m.end(), "") for m in _INVISIBLE_RE.finditer(text)]
    edits = []
    n = len(text)
    for m in _INVISIBLE_RE.finditer(text):
        s, e = m.span()
        before = text[s - 1] if s else ""
        after = text[e] if e < n else ""
        start = None  # start of the current run of deleted characters
        for i in range(s, e):
            if _keeps(text[i], before, after):
                if start is not None:
                    edits.append((start, i, ""))
                    start = None
            elif start is None:
                start = i
        if start is not None:
            edits.append((start, e, ""))
    return edits


# -- Unicode NFKC ------------------------------------------------------------------------
# A non-ASCII run with the character before it: NFKC composes a mark with its base and
# never reaches across an ASCII character otherwise, so the runs normalise on their own.
_NON_ASCII_RUN = regex.compile(r"[\x00-\x7f]?[^\x00-\x7f]+")


def _trimmed(s: int, old: str, new: str) -> tuple[int, int, str]:
    """The edit replacing ``old`` (at ``s``) by ``new``, without their common prefix and suffix."""
    p = 0
    while p < len(old) and p < len(new) and old[p] == new[p]:
        p += 1
    q = 0
    while q < len(old) - p and q < len(new) - p and old[-1 - q] == new[-1 - q]:
        q += 1
    return s + p, s + len(old) - q, new[p : len(new) - q]


def nfkc_edits(text: str) -> list[tuple[int, int, str]]:
    """Edits that turn ``text`` into its NFKC form (compatibility characters, composed accents)."""
    if unicodedata.is_normalized("NFKC", text):
        return []
    edits = []
    for m in _NON_ASCII_RUN.finditer(text):
        old = m.group()
        new = unicodedata.normalize("NFKC", old)
        if new != old:
            edits.append(_trimmed(m.start(), old, new))
    target = unicodedata.normalize("NFKC", text)
    if apply_edits(text, edits) != target:  # a composition across runs: one edit for the changed span
        return [_trimmed(0, text, target)]
    return edits


# -- quotes and dashes ----------------------------------------------------------------------
#: Curly and low-9 quotes -> ASCII. Guillemets and CJK brackets are left alone: they are a
#: language's punctuation, not a typographic variant of the ASCII quote.
QUOTES = {"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'",
          "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"'}
#: Hyphens, en dash, minus -> "-"; em dash and horizontal bar -> "--", the typewriter em
#: dash, so that "word—word" does not become the compound "word-word".
DASHES = {"\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2212": "-", "\ufe63": "-", "\uff0d": "-",
          "\u2014": "--", "\u2015": "--", "\ufe58": "--"}


@lru_cache(maxsize=8)
def _char_pattern(chars: str) -> "regex.Pattern":
    return regex.compile(f"[{regex.escape(chars, special_only=False)}]")


def punct_edits(text: str, table: dict[str, str]) -> list[tuple[int, int, str]]:
    """Replace every character of ``table`` by its value."""
    if text.isascii() or not table:
        return []
    return [(m.start(), m.end(), table[m.group()]) for m in _char_pattern("".join(table)).finditer(text)]


# -- whitespace ---------------------------------------------------------------------------
#: Line boundaries (those of str.splitlines): kept as they are.
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_LB = regex.escape(LINE_BREAKS, special_only=False)
_H = rf"[^\S{_LB}]"  # horizontal whitespace: any other whitespace character (spaces, tabs, NBSP, ...)
# Runs that may need a change: indentation, a run ending a line, two or more characters, one odd space.
_WS_RE = regex.compile(rf"(?:^|(?<=[{_LB}])){_H}+|{_H}+(?=[{_LB}]|\Z)|{_H}{{2,}}|[^\S{_LB} ]")


def whitespace_edits(text: str) -> list[tuple[int, int, str]]:
    """Collapse each run of horizontal whitespace between words to one space, delete it at a line's
    end, and keep a line's indentation (odd spaces there become spaces, tabs stay); line breaks stay."""
    edits = []
    n = len(text)
    for m in _WS_RE.finditer(text):
        s, e = m.span()
        run = m.group()
        if e == n or text[e] in LINE_BREAKS:
            new = ""  # trailing: RAID's whitespace attack puts its spaces before a line break too
        elif s == 0 or text[s - 1] in LINE_BREAKS:
            new = "".join(ch if ch in " \t" else " " for ch in run)  # indentation: structure of lists, code
        else:
            new = " "
        if new != run:
            edits.append((s, e, new))
    return edits
