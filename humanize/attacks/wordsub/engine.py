"""The word-substitution engine: candidates -> constraints -> scores -> search, one document at a time.

>>> from humanize.attacks.wordsub import WordSubstitution, WordNetSynonyms, NotStopword, WordCosine, TopScore
>>> attack = WordSubstitution(candidates=[WordNetSynonyms()], constraints=[NotStopword(), WordCosine(0.6)],
...                           rate=0.3)                                                    # doctest: +SKIP

A new word-level attack is a new combination of parts, no subclass needed.
Each document is processed on its own (its model passes batched inside it),
so a result never depends on the batch it came in or its order; the only
randomness, the stochastic rounding of ``rate * eligible words``, comes from
the document's own seeded stream.

Long documents (issue #22 §2) are processed in windows of consecutive sentences of
at most :data:`WINDOW_WORDS` words (a longer sentence cut at that many words): the
candidate generators, candidate constraints and the scorer see one window at a time,
as a document of its own, so their batches, model inputs and arrays are bounded by the
window, never by the document; and, without a ranker or a detector-guided search, the
swap budget ``k`` is shared among the windows in proportion to their words with an
allowed candidate, so the swaps spread over the whole document. A document of at most
``WINDOW_WORDS`` words is one window: the same work and output as without windows.
"""
from __future__ import annotations

from typing import Any, NamedTuple, Sequence

from humanize.validation import InstanceOf, Options, SequenceOf

from ..base import Attack, Edit, apply_edits
from .._casing import match_case
from .._sampling import stochastic_count
from ._doc import Candidate, Doc
from .candidates import CandidateGenerator
from .constraints import CandidateConstraint
from .rankers import WordRanker
from .scoring import CausalLMScore, Scorer
from .search import Search, TopScore
from ..text_constraints import MaxWordsChanged, TextConstraint
from .unchanged import wordsub_unchanged_reason

__all__ = ["WordSubstitution", "Parts", "EnginePreset", "WINDOW_WORDS", "windows", "window_doc", "share"]

#: The most words of a window (about 550 tokens of the default ranking LM: inside its 1,024-token window).
WINDOW_WORDS = 400


def windows(doc: Doc, size: int | None = None) -> list[tuple[int, int]]:
    """Word ranges ``[lo, hi)`` tiling the document: consecutive whole sentences of at most ``size``
    (default :data:`WINDOW_WORDS`) words together, a longer sentence cut every ``size`` words."""
    size = WINDOW_WORDS if size is None else int(size)
    n = len(doc.words)
    if n <= size:
        return [(0, n)] if n else []
    of = doc.sentence_of if len(doc.sentence_of) == n else [0] * n  # a hand-built Doc without sentences
    out: list[tuple[int, int]] = []
    lo = i = 0
    while i < n:
        j = i  # the words of sentence of[i]
        s = of[i]
        while j < n and of[j] == s:
            j += 1
        if j - lo > size and i > lo:  # the sentence does not fit: close the window before it
            out.append((lo, i))
            lo = i
        while j - lo > size:  # a sentence longer than a window: cut it
            out.append((lo, lo + size))
            lo += size
        i = j
    if lo < n:
        out.append((lo, n))
    return out


def window_doc(doc: Doc, lo: int, hi: int) -> Doc:
    """Words ``lo..hi-1`` of ``doc`` as a document of their own: the text from the end of word ``lo - 1``
    (the start for the first) to the start of word ``hi`` (the end for the last), words and sentences
    shifted to it (sentences clipped to it)."""
    c0 = 0 if lo == 0 else doc.words[lo - 1][1]
    c1 = len(doc.text) if hi >= len(doc.words) else doc.words[hi][0]
    words = [(a - c0, b - c0) for a, b in doc.words[lo:hi]]
    if len(doc.sentence_of) != len(doc.words) or not doc.sentences:  # a hand-built Doc without sentences
        return Doc(doc.text[c0:c1], words, [(0, c1 - c0)], [0] * len(words))
    s0, s1 = doc.sentence_of[lo], doc.sentence_of[hi - 1]
    sents = [(max(a, c0) - c0, min(b, c1) - c0) for a, b in doc.sentences[s0: s1 + 1]]
    return Doc(doc.text[c0:c1], words, sents, [x - s0 for x in doc.sentence_of[lo:hi]])


def share(k: int, weights: Sequence[int]) -> list[int]:
    """``k`` split into integer parts in proportion to ``weights``, part ``w`` at most ``weights[w]``
    (largest remainders, ties to the earlier part); the parts sum to ``min(k, sum(weights))``."""
    weights = [max(0, int(w)) for w in weights]
    k = min(int(k), sum(weights))
    parts = [0] * len(weights)
    while k > sum(parts):
        left = k - sum(parts)
        open_ = [w for w, x in enumerate(weights) if parts[w] < x]
        total = sum(weights[w] for w in open_)
        exact = {w: left * weights[w] / total for w in open_}
        add = {w: min(int(exact[w]), weights[w] - parts[w]) for w in open_}
        rest = left - sum(add.values())
        by_rest = sorted((w for w in open_ if parts[w] + add[w] < weights[w]),
                         key=lambda w: (-(exact[w] - int(exact[w])), w))
        for w in by_rest[:rest]:
            add[w] += 1
        for w in open_:
            parts[w] += add[w]
    return parts


class Parts(NamedTuple):
    """An engine attack's parts, as lists, with defaults filled in."""

    generators: list
    candidate_constraints: list
    text_constraints: list
    budgets: list
    scorer: Any
    search: Any
    ranker: Any
    offer: str = "top_k"


_CONSTRAINT_KINDS = (CandidateConstraint, TextConstraint, MaxWordsChanged)


class WordSubstitution(Attack):
    """Replace about ``rate`` of the eligible words with allowed, high-scoring candidates.

    - ``candidates``: generators (:mod:`.candidates`), their proposals merged in order;
    - ``constraints``: candidate constraints (:mod:`.constraints`), text constraints
      (:mod:`.text_constraints`, checked per sentence) and :class:`MaxWordsChanged`;
    - ``scorer``: ranks candidates (default :class:`CausalLMScore`);
    - ``search``: picks the swaps (default :class:`TopScore`; :class:`DetectorGreedy`
      for detector-guided attacks);
    - ``ranker``: orders the words to attack (:mod:`.rankers`; default none).

    Eligible words are those every candidate constraint's ``word_ok`` accepts;
    ``k`` = ``rate`` x their number (stochastically rounded), capped by
    :class:`MaxWordsChanged`. With a ranker, the search tries the words in its
    order: only the first ``k`` (``offer="top_k"``, RAFT: the θ most predictable
    words) or all of them, ``k`` then capping the kept swaps (``offer="all"``,
    HMGC: words are tried until 40% have changed or the surrogate flips). ``info`` reports
    ``queries`` (model inputs, detector queries included), ``lm_tokens``
    (causal-LM tokens), ``forward_passes``, ``detector_queries`` and what was found.
    """

    name = "word_substitution"
    version = "2"  # 2: documents over WINDOW_WORDS words are processed in windows (issue #22)

    def __init__(self, candidates: Sequence = (), constraints: Sequence = (), scorer: Any = None,
                 search: Any = None, rate: float = 0.5, seed: int = 0, ranker: Any = None, offer: str = "top_k"):
        self._init_params(locals())

    _parameter_constraints = {
        "candidates": [InstanceOf(CandidateGenerator),
                       SequenceOf(CandidateGenerator, nonempty=True,
                                  name="a non-empty list of candidate generators (WordNetSynonyms, VectorNeighbours, "
                                       "MaskedLMFill)")],
        "constraints": [InstanceOf(*_CONSTRAINT_KINDS),
                        SequenceOf(*_CONSTRAINT_KINDS, name="a list of constraints (CandidateConstraint, "
                                                            "TextConstraint or MaxWordsChanged)")],
        "scorer": [InstanceOf(Scorer), None],
        "search": [InstanceOf(Search), None],
        "ranker": [InstanceOf(WordRanker), None],
        "offer": [Options(str, ("top_k", "all"))],
    }

    # -- the parts, as lists ------------------------------------------------------------
    def _parts(self) -> Parts:
        gens = [self.candidates] if isinstance(self.candidates, CandidateGenerator) else list(self.candidates)
        cons = list(self.constraints) if isinstance(self.constraints, (list, tuple)) else [self.constraints]
        return Parts(gens, [c for c in cons if isinstance(c, CandidateConstraint)],
                     [c for c in cons if isinstance(c, TextConstraint)],
                     [c for c in cons if isinstance(c, MaxWordsChanged)],
                     self.scorer if self.scorer is not None else CausalLMScore(),
                     self.search if self.search is not None else TopScore(),
                     self.ranker, self.offer)

    def eligible(self, doc: Doc) -> list[int]:
        """Indices of the words every candidate constraint lets the attack change."""
        cand_cons = self._parts().candidate_constraints
        return [i for i in range(len(doc.words)) if all(c.word_ok(doc.word(i)) for c in cand_cons)]

    def candidates_for(self, doc: Doc, positions: Sequence[int] | None = None
                       ) -> tuple[list[int], dict[int, list[Candidate]]]:
        """The words (default: every eligible one) and their allowed, scored candidates (before the search).

        One :func:`windows` window at a time (:func:`window_doc`), the candidates' ``word`` mapped back to
        the document's word indices; the windows' costs and notes go to ``doc``.
        """
        eligible = self.eligible(doc) if positions is None else list(positions)
        spans = windows(doc)
        if len(spans) <= 1:
            return eligible, self._window_candidates(doc, eligible)
        out: dict[int, list[Candidate]] = {}
        wanted = sorted(set(eligible))
        at = 0
        for lo, hi in spans:
            mine = []
            while at < len(wanted) and wanted[at] < hi:
                mine.append(wanted[at] - lo)
                at += 1
            if not mine:
                continue
            sub = window_doc(doc, lo, hi)
            found = self._window_candidates(sub, mine)
            for i, cs in found.items():
                out[i + lo] = [c._replace(word=c.word + lo) for c in cs]
            for key, v in sub.cost.items():
                doc.cost[key] += v
            doc.notes.update(sub.notes)
        return eligible, {i: out.get(i, []) for i in eligible}

    def _window_candidates(self, doc: Doc, eligible: list[int]) -> dict[int, list[Candidate]]:
        parts = self._parts()
        gens, cand_cons, scorer = parts.generators, parts.candidate_constraints, parts.scorer
        merged: dict[int, dict[str, Candidate]] = {i: {} for i in eligible}
        for g in gens:
            for i, cs in g.propose(doc, eligible).items():
                for c in cs:
                    merged[i].setdefault(c.text.lower(), c)
        cands = {i: list(d.values()) for i, d in merged.items()}
        for con in cand_cons:
            if any(cands.values()):
                cands = con.filter(doc, cands)
        return scorer.score(doc, cands)

    def _run(self, text: str):
        doc = Doc.parse(text)
        parts = self._parts()
        text_cons, search, ranker = parts.text_constraints, parts.search, parts.ranker
        eligible = self.eligible(doc)
        k = stochastic_count(self.rate, len(eligible), self.random(text)) if eligible else 0
        for b in parts.budgets:
            k = min(k, b.limit(len(doc.words)))
        order = ranker.rank(doc, eligible) if (k and ranker is not None) else None
        if order is not None and parts.offer == "top_k":
            order = order[:k]
        # no model work when nothing will change; with a ranker, candidates for the words it offers only
        cands = self.candidates_for(doc, eligible if order is None else order)[1] if k else {}
        spans = windows(doc) if k else []
        if not k:
            chosen = []
        elif order is None and len(spans) > 1 and not getattr(search, "queries_detector", False):
            # the budget shared among the windows in proportion to their words with a candidate
            per = [[i for i in range(lo, hi) if cands.get(i)] for lo, hi in spans]
            chosen = []
            for words, q in zip(per, share(k, [len(ws) for ws in per])):
                if q:
                    chosen += search.select(doc, {i: cands[i] for i in words}, q, text_cons)
        elif order is None:
            chosen = search.select(doc, cands, k, text_cons)
        else:
            chosen = search.select(doc, cands, k, text_cons, order=order)
        edits = []
        for c in sorted(chosen, key=lambda c: c.word):
            s, e = doc.words[c.word]
            edits.append(Edit(s, e, match_case(doc.text[s:e], c.text)))
        queries = int(doc.cost.get("queries", 0)) + int(doc.cost.get("detector_queries", 0))
        info = {"queries": queries, "lm_tokens": int(doc.cost.get("lm_tokens", 0)),
                "forward_passes": int(doc.cost.get("forward_passes", 0)), "words": len(doc.words),
                "eligible": len(eligible), "with_candidates": sum(1 for cs in cands.values() if cs),
                "target_swaps": k, "swaps": len(edits),
                "sources": sorted({c.source for c in chosen})}
        for key in ("mlm_tokens", "pos_windows", "detector_queries", "detector_calls", "llm_tokens_in",
                    "llm_tokens_out", "surrogate_queries", "context_checks", "kept_terms"):
            if doc.cost.get(key):
                info[key] = int(doc.cost[key])
        if getattr(search, "queries_detector", False):  # a guided search: its query count, even when 0
            info.setdefault("detector_queries", 0)
        info.update(doc.notes)
        return apply_edits(text, edits), edits, info

    def unchanged_reason(self, text: str, info: dict) -> str:
        """No eligible word, none drawn at the rate, no candidate through the constraints, a guided
        search's surrogate already below its threshold, or no swap kept (:mod:`.unchanged`)."""
        return wordsub_unchanged_reason(info)


class EnginePreset(WordSubstitution):
    """A registered attack that is a configured engine (Synonym, RAFT, HMGC).

    The preset's own constructor arguments are its parameters; :meth:`assemble`
    turns them into the engine's parts, once (rebuilt when a parameter changes),
    and at construction, so a bad value is named at once. Nothing is loaded or
    fitted until the first document. The assembled engine runs under the
    preset's ``name``: the same per-document random stream.
    """

    def _validate(self) -> None:
        super()._validate()  # the preset's declared constraints, then its _check
        self.__dict__.pop("_built", None)
        self._build()  # checks every part's parameters now, naming the bad one

    def _check(self) -> None:
        """The preset's own checks (the parts check theirs when assembled)."""

    def assemble(self) -> WordSubstitution:
        """The engine for the current parameters."""
        raise NotImplementedError

    def _build(self) -> WordSubstitution:
        built = self.__dict__.get("_built")
        if built is None:
            built = self.assemble()
            built.name = self.name  # same per-document stream as the preset
            self.__dict__["_built"] = built
        return built

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if name[:1] != "_":
            self.__dict__.pop("_built", None)

    def _parts(self) -> Parts:
        return self._build()._parts()
