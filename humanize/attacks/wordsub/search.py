"""Search strategies: which allowed swaps to apply.

:class:`TopScore` is RAID's synonym search: the best candidate per word, then
the ``k`` best swaps. With text constraints (QPA, a similarity floor) the swaps
are tried in that order, each sentence greedily: a swap is kept when the
sentence with it and the swaps already kept there passes every constraint,
checked for all sentences at once per round. A later strategy (RAFT's
detector-guided greedy, HMGC's surrogate loop: :class:`DetectorGreedy`)
implements the same ``select`` method.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from humanize.params import ComponentParam, ParamsMixin

from .._casing import match_case
from ._doc import Candidate, Doc
from numbers import Integral

from humanize.validation import Interval

from ..targets import THRESHOLD, QueriesDetector, check_detector_spec, check_train_spec

__all__ = ["Search", "TopScore", "DetectorGreedy", "sentence_variant", "passes_all"]


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


def passes_all(text_constraints: Sequence, originals: list[str], variants: list[str], doc: Doc) -> np.ndarray:
    """Which (original, variant) sentence pairs pass every text constraint; each constraint sees only the
    pairs the ones before it passed (cheapest first), in one batch."""
    ok = np.ones(len(variants), dtype=bool)
    for con in text_constraints:
        todo = np.flatnonzero(ok)
        if len(todo) == 0:
            break
        ok[todo] = con.check([originals[j] for j in todo], [variants[j] for j in todo], doc)
    return ok


class Search(ParamsMixin):
    """Base class: ``select(doc, cands, k, text_constraints, order=None) -> [Candidate]`` (at most one per word).

    ``order`` is the ranker's order of the words (best first) when the attack has
    a ranker; a search written without the argument still works without one.
    """

    def select(self, doc: Doc, cands: dict[int, list[Candidate]], k: int, text_constraints: Sequence,
               order: Sequence[int] | None = None) -> list:
        raise NotImplementedError


class TopScore(Search):
    """Best candidate per word, then the ``k`` best swaps (RAID synonym); greedy per sentence under text constraints.

    ``tries`` bounds how many candidates of one word are tried when its better
    ones fail a text constraint.
    """

    _parameter_constraints = {"tries": [Interval(Integral, 1, None)]}

    def __init__(self, tries: int = 3):
        self._init_params(locals())

    def select(self, doc, cands, k, text_constraints, order=None):
        ranked = {i: sorted(cs, key=_order) for i, cs in cands.items() if cs}
        words = sorted(ranked, key=lambda i: _order(ranked[i][0])) if order is None else [i for i in order if i in ranked]
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
            ok = passes_all(text_constraints, originals, variants, doc)
            for (s, i, c), good in zip(trials, ok):
                if good:
                    kept[s].append(c)
                    queues[s].pop(0)
                else:
                    tried[i] += 1
        rank = {i: r for r, i in enumerate(words)}
        accepted = sorted((c for cs in kept.values() for c in cs), key=lambda c: rank[c.word])
        return accepted[:k]  # a prefix of each sentence's kept list: every sentence state was checked


class DetectorGreedy(QueriesDetector, Search):
    """Detector-guided greedy search (RAFT, Wang et al. 2024; HMGC's surrogate loop, Zhou et al. 2024).

    Words are tried in the ranker's order (without one: by their best candidate's
    score). At each word, the allowed candidates (those whose sentence, with the
    swaps already kept there, passes every text constraint) are each put into the
    *current* text and scored by ``detector`` in ONE call (``batch=True``; False
    scores them one call each, the same algorithm, for benchmarks). The lowest
    is kept only when it is strictly below the current text's score, so no kept
    swap ever raises the detector's score on the text it was applied to.

    Stops after ``k`` kept swaps, when the words run out, when the score falls
    below ``stop_below`` (HMGC: the surrogate calls the text human), or when the
    next call would exceed ``max_queries`` texts sent to the detector (the
    candidates of the last word are cut to what the budget leaves). Queries a
    ranker already made for the document (HMGC's deletion importance) count
    against the budget. ``detector``
    is a :class:`~humanize.detectors.target.Target` (queried as is, never refit; ``train``
    is then unused), a name, a table or a :class:`~humanize.detectors.base.Detector`; a
    learnable one of these is fit on ``train`` with ``seed`` (:mod:`..targets`).
    """

    #: the engine reports ``detector_queries`` for this search even when no word reached the detector
    queries_detector = True

    def __init__(self, detector: Any = "log_likelihood", train: Any = None, stop_below: Any = None,
                 max_queries: Any = None, batch: bool = True, seed: int = 0):
        self._init_params(locals())

    _component_params = {"detector": ComponentParam("detector", train="train"), "train": ComponentParam("training_set")}
    _parameter_constraints = {
        "stop_below": THRESHOLD,
        "max_queries": [Interval(Integral, 1, None), None],
        "batch": ["boolean"],
        "seed": ["seed"],
    }

    def _validate(self) -> None:
        super()._validate()
        self.__dict__.pop("_ready", None)

    def _check(self) -> None:
        check_detector_spec("DetectorGreedy", "detector", self.detector)
        check_train_spec("DetectorGreedy", self.train)

    def _score(self, doc: Doc, texts: list[str]) -> np.ndarray:
        det = self.target()  # counts the queries when the caller's Target
        if self.batch:
            scores = np.asarray(det.score(texts), dtype=float)
            calls = 1
        else:
            scores = np.concatenate([np.asarray(det.score([t]), dtype=float) for t in texts])
            calls = len(texts)
        doc.add_cost(detector_queries=len(texts), detector_calls=calls)
        return scores

    def select(self, doc, cands, k, text_constraints, order=None):
        ranked = {i: sorted(cs, key=_order) for i, cs in cands.items() if cs}
        if order is None:
            order = sorted(ranked, key=lambda i: _order(ranked[i][0]))
        words = [i for i in order if i in ranked]
        budget = self.max_queries
        used = int(doc.cost.get("detector_queries", 0))  # a ranker's queries to the same detector count too
        if k <= 0 or not words or (budget is not None and used >= budget):
            # nothing to try (no word kept a candidate) or no budget left: no query, same notes as a search
            stopped = "no_candidates" if not words else ("max_queries" if k > 0 else "k")
            doc.notes.setdefault("stopped", stopped)
            doc.notes.setdefault("kept_order", [])
            doc.notes.setdefault("score_trace", [])
            return []
        current = float(self._score(doc, [doc.text])[0])
        used += 1
        doc.notes["detector_score_before"] = current
        kept: list[Candidate] = []
        trace: list[float] = []
        stop = self.stop_below
        stopped = "words"
        for i in words:
            if len(kept) >= k:
                stopped = "k"
                break
            if stop is not None and current < stop:
                stopped = "stop_below"
                break
            options = ranked[i]
            if text_constraints:
                s = doc.sentence_of[i]
                mine = [c for c in kept if doc.sentence_of[c.word] == s]
                original = sentence_variant(doc, s, [])
                variants = [sentence_variant(doc, s, mine + [c]) for c in options]
                ok = passes_all(text_constraints, [original] * len(options), variants, doc)
                options = [c for c, good in zip(options, ok) if good]
            if budget is not None:
                options = options[: max(0, budget - used)]
            if not options:
                if budget is not None and used >= budget:
                    stopped = "max_queries"
                    break
                continue
            scores = self._score(doc, [doc.variant(kept + [c]) for c in options])
            used += len(options)
            finite = np.where(np.isnan(scores), np.inf, scores)
            best = int(np.argmin(finite))  # ties: the better-ranked candidate
            if finite[best] < current:
                kept.append(options[best])
                current = float(finite[best])
                trace.append(current)
        else:
            if stop is not None and current < stop:
                stopped = "stop_below"
        if budget is not None and used >= budget and stopped == "words":
            stopped = "max_queries"
        doc.notes["detector_score_after"] = current
        doc.notes["stopped"] = stopped
        # the swaps in the order they were kept (start offset in the original) and the score after each:
        # replaying them reproduces every intermediate text the detector saw
        doc.notes["kept_order"] = [int(doc.words[c.word][0]) for c in kept]
        doc.notes["score_trace"] = trace
        return kept
