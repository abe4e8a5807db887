"""Search strategies: which allowed swaps to apply.

:class:`TopScore` is RAID's synonym search: the best candidate per word, then
the ``k`` best swaps. With text constraints (QPA, a similarity floor) the swaps
are tried in that order, each sentence greedily: a swap is kept when the
sentence with it and the swaps already kept there passes every constraint,
checked for all sentences at once per round. A later strategy (RAFT's
detector-guided greedy, HMGC's importance ranking) implements the same
``select`` method.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from humanize._params import ParamsMixin

from .._casing import match_case
from ._doc import Candidate, Doc

__all__ = ["Search", "TopScore", "sentence_variant"]


def _order(c: Candidate) -> tuple:
    """Best first; ties by word position, then text (deterministic)."""
    s = c.score if c.score == c.score else -math.inf
    return (-s, c.word, c.text)


def sentence_variant(doc: Doc, sentence: int, swaps: Sequence[Candidate]) -> str:
    """Sentence ``sentence`` of the document with ``swaps`` applied (in the original word's case, as edited)."""
    lo, hi = doc.sentences[sentence]
    parts, pos = [], lo
    for c in sorted(swaps, key=lambda c: c.word):
        s, e = doc.words[c.word]
        parts += [doc.text[pos:s], match_case(doc.text[s:e], c.text)]
        pos = e
    parts.append(doc.text[pos:hi])
    return "".join(parts)


class Search(ParamsMixin):
    """Base class: ``select(doc, cands, k, text_constraints) -> [Candidate]`` (at most one per word)."""

    def select(self, doc: Doc, cands: dict[int, list[Candidate]], k: int, text_constraints: Sequence) -> list:
        raise NotImplementedError


class TopScore(Search):
    """Best candidate per word, then the ``k`` best swaps (RAID synonym); greedy per sentence under text constraints.

    ``tries`` bounds how many candidates of one word are tried when its better
    ones fail a text constraint.
    """

    def __init__(self, tries: int = 3):
        self.tries = tries
        self._validate()

    def _validate(self) -> None:
        if isinstance(self.tries, bool) or not isinstance(self.tries, int) or self.tries < 1:
            raise ValueError(f"TopScore: tries must be an int >= 1, got {self.tries!r}")

    def select(self, doc, cands, k, text_constraints):
        ranked = {i: sorted(cs, key=_order) for i, cs in cands.items() if cs}
        words = sorted(ranked, key=lambda i: _order(ranked[i][0]))
        if k <= 0 or not words:
            return []
        if not text_constraints:
            return [ranked[i][0] for i in words[:k]]
        # per sentence: words in global order; accepted swaps form a checked prefix state
        queues: dict[int, list[int]] = {}
        for i in words:
            queues.setdefault(doc.sentence_of[i], []).append(i)
        tried = {i: 0 for i in words}
        kept: dict[int, list[Candidate]] = {s: [] for s in queues}
        while True:
            trials = []
            for s, q in queues.items():
                while q and tried[q[0]] >= min(self.tries, len(ranked[q[0]])):
                    q.pop(0)
                if q:
                    i = q[0]
                    trials.append((s, i, ranked[i][tried[i]]))
            if not trials:
                break
            originals = [sentence_variant(doc, s, []) for s, _, _ in trials]
            variants = [sentence_variant(doc, s, kept[s] + [c]) for s, _, c in trials]
            ok = np.ones(len(trials), dtype=bool)
            for con in text_constraints:
                todo = np.flatnonzero(ok)
                if len(todo) == 0:
                    break
                ok[todo] = con.check([originals[j] for j in todo], [variants[j] for j in todo], doc)
            for (s, i, c), good in zip(trials, ok):
                if good:
                    kept[s].append(c)
                    queues[s].pop(0)
                else:
                    tried[i] += 1
        rank = {i: r for r, i in enumerate(words)}
        accepted = sorted((c for cs in kept.values() for c in cs), key=lambda c: rank[c.word])
        return accepted[:k]  # a prefix of each sentence's kept list: every sentence state was checked
