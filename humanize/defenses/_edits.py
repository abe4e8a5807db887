"""Edits over the original from a chain of steps, each with edits over the previous step's output.

:func:`humanize.attacks.compose_edits` composes two edit lists with a Python loop over
both; a normalizer chains up to five steps, each of which can touch every character
(a zero-width space after each letter), so this composes them in numpy instead: it
tracks, for each character of the current text, the original position it was copied
from (or -1 when an edit wrote it), and reads the final edits off the gaps.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

__all__ = ["chain_edits"]


def _apply_to_origin(origin: np.ndarray, edits: Sequence) -> np.ndarray:
    """The origin array of the text after ``edits``: copied characters keep theirs, written ones get -1."""
    if not len(edits):
        return origin
    spans = np.array([(s, t, len(r)) for s, t, r in edits], dtype=np.int64).reshape(-1, 3)
    starts, ends, written = spans[:, 0], spans[:, 1], spans[:, 2]
    lengths = ends - starts
    removed_before = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    covered = np.repeat(starts - removed_before, lengths) + np.arange(int(lengths.sum()))
    kept = np.delete(origin, covered)
    return np.insert(kept, np.repeat(starts - removed_before, written), -1)


def chain_edits(original: str, final: str, stages: Sequence[Sequence]) -> list[tuple[int, int, str]]:
    """Edits ``(start, end, replacement)`` over ``original`` that give ``final``, from ``stages`` (each
    edit list over the previous output). Edits that touch merge into one, as in
    :func:`~humanize.attacks.compose_edits`. Plain tuples: :class:`~humanize.attacks.AttackResult`
    makes them :class:`~humanize.attacks.Edit` s when read.
    """
    origin = np.arange(len(original), dtype=np.int64)
    for edits in stages:
        origin = _apply_to_origin(origin, edits)
    if len(origin) != len(final):
        raise AssertionError(f"chain_edits: the steps give {len(origin)} characters, the text has {len(final)}")
    copied = np.flatnonzero(origin >= 0)
    # anchors: the copied characters, plus a virtual one before the text and one after it
    pos = np.concatenate(([-1], copied, [len(final)]))
    src = np.concatenate(([-1], origin[copied], [len(original)]))
    gaps = np.flatnonzero((np.diff(pos) != 1) | (np.diff(src) != 1))
    return [(a + 1, b, final[p + 1 : q])
            for a, b, p, q in zip(src[gaps].tolist(), src[gaps + 1].tolist(), pos[gaps].tolist(),
                                  pos[gaps + 1].tolist())]
