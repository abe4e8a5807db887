"""Exact edits for a rewrite: a word-level diff of the original and the model's text.

A generation attack returns a whole new text; the Attack API wants edits over the
original (``apply_edits(original, edits) == text``). Both texts are cut into words,
whitespace runs and single punctuation marks, and aligned; every stretch that is not
equal becomes one edit. So the edits are exact by construction and as local as the
word alignment allows.

The alignment, in near-linear time:

1. Texts of at most :data:`WINDOW` tokens each are aligned by
   :class:`difflib.SequenceMatcher` (without its junk heuristic, which would skip
   frequent words such as "the") as a whole: the same edits as ever for short texts.
2. Longer texts: their common prefix and suffix are set aside, then the middle is
   anchored patience-style (Bram Cohen's patience diff): the word tokens that occur
   exactly once in each side, the longest chain of them in the same order in both
   (a longest increasing subsequence, ``O(n log n)``), are matched (where no single word
   is unique in both, runs of :data:`ANCHOR_RUNS` tokens starting with a word); the regions between
   two anchors are aligned the same way in turn (up to :data:`MAX_DEPTH` levels), and a
   region of at most :data:`WINDOW` tokens a side goes to ``SequenceMatcher``.
3. A region still longer than :data:`WINDOW` tokens on a side once nothing more
   anchors it (no token unique in both, or :data:`MAX_DEPTH` reached) becomes ONE
   replacement edit (its common prefix and suffix trimmed).

The cap makes the worst case linear: every region handed to ``SequenceMatcher`` has at
most ``WINDOW`` tokens a side and the regions are disjoint, so that work is at most
``O(WINDOW * (n + m))`` token comparisons for texts of ``n`` and ``m`` tokens; each
anchoring level is ``O(n + m)`` counting plus an ``O(k log k)`` chain over ``k`` anchors,
and there are at most ``MAX_DEPTH`` levels. A rewrite with scattered changes hands the
inner diff only ``O(changes * window)`` tokens. Step 3 is the only place the edits can
be coarser than a full word diff's; they stay exact.
"""
from __future__ import annotations

import bisect
import difflib
import itertools
import re

from ..base import Edit

__all__ = ["word_edits", "tokens", "WINDOW", "MAX_DEPTH", "ANCHOR_RUNS"]

_TOKEN = re.compile(r"\s+|\w+|[^\w\s]", re.UNICODE)

#: The most tokens a side of a region handed to ``difflib.SequenceMatcher``.
WINDOW = 1000
#: The most patience-anchoring levels before a region longer than ``WINDOW`` is one replacement.
MAX_DEPTH = 8
#: The anchor lengths tried in turn, in tokens: one word, then runs starting with a word ("word space word", ...).
ANCHOR_RUNS = (1, 3, 7)


def tokens(text: str) -> list[str]:
    """Words, whitespace runs and single other characters, which join back into ``text``."""
    return _TOKEN.findall(text)


def _inner(a: list[str], b: list[str]) -> list[tuple[str, int, int, int, int]]:
    """The opcodes of ``SequenceMatcher`` over two token lists (every region the inner diff sees passes here)."""
    return difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()


def _word(t: str) -> bool:
    return t[0].isalnum() or t[0] == "_"


def _anchors(a: list[str], alo: int, ahi: int, b: list[str], blo: int, bhi: int, k: int
             ) -> list[tuple[int, int]]:
    """Patience anchors: start positions ``(i, j)`` of the runs of ``k`` tokens, starting with a word, that
    occur exactly once in ``a[alo:ahi]`` and once in ``b[blo:bhi]``; the longest chain increasing in both
    (runs that would overlap the previous one in the chain dropped)."""
    def runs(x, lo, hi):
        seen: dict = {}
        for i in range(lo, hi - k + 1):
            if _word(x[i]):
                key = x[i] if k == 1 else tuple(x[i:i + k])
                seen[key] = -1 if key in seen else i
        return seen

    ra, rb = runs(a, alo, ahi), runs(b, blo, bhi)
    pairs = sorted((i, rb[key]) for key, i in ra.items() if i >= 0 and rb.get(key, -1) >= 0)
    if not pairs:
        return []
    # longest increasing subsequence of the b positions (patience sorting); the a positions already increase
    tails: list[int] = []  # b position ending the best chain of each length
    tail_at: list[int] = []  # index into pairs of that chain's end
    back = [-1] * len(pairs)
    for n_, (_, j) in enumerate(pairs):
        n = bisect.bisect_left(tails, j)
        if n == len(tails):
            tails.append(j)
            tail_at.append(n_)
        else:
            tails[n] = j
            tail_at[n] = n_
        back[n_] = tail_at[n - 1] if n else -1
    chain = []
    at = tail_at[-1]
    while at >= 0:
        chain.append(pairs[at])
        at = back[at]
    chain.reverse()
    kept, ai, bj = [], -1, -1
    for i, j in chain:
        if i >= ai and j >= bj:
            kept.append((i, j))
            ai, bj = i + k, j + k
    return kept


def _align(a: list[str], alo: int, ahi: int, b: list[str], blo: int, bhi: int, depth: int,
           out: list[tuple[int, int, int, int]]) -> None:
    """Append to ``out`` the unequal stretches ``(i1, i2, j1, j2)`` aligning ``a[alo:ahi]`` with ``b[blo:bhi]``."""
    while alo < ahi and blo < bhi and a[alo] == b[blo]:  # common prefix
        alo += 1
        blo += 1
    while alo < ahi and blo < bhi and a[ahi - 1] == b[bhi - 1]:  # common suffix
        ahi -= 1
        bhi -= 1
    if alo == ahi and blo == bhi:
        return
    if alo == ahi or blo == bhi:
        out.append((alo, ahi, blo, bhi))
        return
    if ahi - alo <= WINDOW and bhi - blo <= WINDOW:
        for op, i1, i2, j1, j2 in _inner(a[alo:ahi], b[blo:bhi]):
            if op != "equal":
                out.append((alo + i1, alo + i2, blo + j1, blo + j2))
        return
    chain, k = [], 1
    if depth < MAX_DEPTH:
        for k in ANCHOR_RUNS:
            chain = _anchors(a, alo, ahi, b, blo, bhi, k)
            if chain:
                break
    if not chain:
        out.append((alo, ahi, blo, bhi))  # too long to diff, nothing to anchor it: one replacement
        return
    i, j = alo, blo
    for ai, bj in chain:
        _align(a, i, ai, b, j, bj, depth + 1, out)
        i, j = ai + k, bj + k
    _align(a, i, ahi, b, j, bhi, depth + 1, out)


def _starts(toks: list[str]) -> list[int]:
    """The character offset of each token, and the text's length last."""
    return [0, *itertools.accumulate(len(t) for t in toks)]


def word_edits(original: str, rewritten: str) -> list[Edit]:
    """Sorted, non-overlapping edits that turn ``original`` into ``rewritten`` (near-linear time, see the module)."""
    if original == rewritten:
        return []
    a, b = tokens(original), tokens(rewritten)
    starts = _starts(a)
    if len(a) <= WINDOW and len(b) <= WINDOW:  # short texts: the whole-text SequenceMatcher alignment
        return [Edit(starts[i1], starts[i2], "".join(b[j1:j2]))
                for op, i1, i2, j1, j2 in _inner(a, b) if op != "equal"]
    stretches: list[tuple[int, int, int, int]] = []
    _align(a, 0, len(a), b, 0, len(b), 0, stretches)
    return [Edit(starts[i1], starts[i2], "".join(b[j1:j2])) for i1, i2, j1, j2 in stretches]


def _reference_word_edits(original: str, rewritten: str) -> list[Edit]:
    """The previous whole-text alignment (quadratic in the text's length), for benchmarks and tests only."""
    if original == rewritten:
        return []
    a, b = tokens(original), tokens(rewritten)
    starts = _starts(a)
    return [Edit(starts[i1], starts[i2], "".join(b[j1:j2]))
            for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
            if op != "equal"]
