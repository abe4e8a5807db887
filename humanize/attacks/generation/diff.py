"""Exact edits for a rewrite: a word-level diff of the original and the model's text.

A generation attack returns a whole new text; the Attack API wants edits over the
original (``apply_edits(original, edits) == text``). Both texts are cut into words,
whitespace runs and single punctuation marks, and :class:`difflib.SequenceMatcher`
(without its junk heuristic, which would skip frequent words such as "the") aligns
them; every stretch that is not equal becomes one edit. So the edits are exact by
construction and as local as the word alignment allows.
"""
from __future__ import annotations

import difflib
import re

from ..base import Edit

__all__ = ["word_edits", "tokens"]

_TOKEN = re.compile(r"\s+|\w+|[^\w\s]", re.UNICODE)


def tokens(text: str) -> list[str]:
    """Words, whitespace runs and single other characters, which join back into ``text``."""
    return _TOKEN.findall(text)


def word_edits(original: str, rewritten: str) -> list[Edit]:
    """Sorted, non-overlapping edits that turn ``original`` into ``rewritten``."""
    if original == rewritten:
        return []
    a, b = tokens(original), tokens(rewritten)
    starts = [0]
    for t in a:
        starts.append(starts[-1] + len(t))
    edits = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op != "equal":
            edits.append(Edit(starts[i1], starts[i2], "".join(b[j1:j2])))
    return edits
