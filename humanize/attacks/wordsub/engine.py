"""The word-substitution engine: candidates -> constraints -> scores -> search, one document at a time.

>>> from humanize.attacks.wordsub import WordSubstitution, WordNetSynonyms, NotStopword, WordCosine, TopScore
>>> attack = WordSubstitution(candidates=[WordNetSynonyms()], constraints=[NotStopword(), WordCosine(0.6)],
...                           rate=0.3)                                                    # doctest: +SKIP

A new word-level attack is a new combination of parts, no subclass needed.
Each document is processed on its own (its model passes batched inside it),
so a result never depends on the batch it came in or its order; the only
randomness, the stochastic rounding of ``rate * eligible words``, comes from
the document's own seeded stream.
"""
from __future__ import annotations

from typing import Any, NamedTuple, Sequence

from humanize._validation import InstanceOf, Options, SequenceOf

from ..base import Attack, Edit, apply_edits
from .._casing import match_case
from .._sampling import stochastic_count
from ._doc import Candidate, Doc
from .candidates import CandidateGenerator
from .constraints import CandidateConstraint
from .rankers import WordRanker
from .scoring import CausalLMScore, Scorer
from .search import Search, TopScore
from .text_constraints import MaxWordsChanged, TextConstraint

__all__ = ["WordSubstitution", "Parts", "EnginePreset"]


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
    version = "1"

    def __init__(self, candidates: Sequence = (), constraints: Sequence = (), scorer: Any = None,
                 search: Any = None, rate: float = 0.5, seed: int = 0, ranker: Any = None, offer: str = "top_k"):
        self.candidates = candidates
        self.constraints = constraints
        self.scorer = scorer
        self.search = search
        self.ranker = ranker
        self.offer = offer
        self.rate = rate
        self.seed = seed
        self._validate()

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
        """The words (default: every eligible one) and their allowed, scored candidates (before the search)."""
        parts = self._parts()
        gens, cand_cons, scorer = parts.generators, parts.candidate_constraints, parts.scorer
        eligible = self.eligible(doc) if positions is None else list(positions)
        merged: dict[int, dict[str, Candidate]] = {i: {} for i in eligible}
        for g in gens:
            for i, cs in g.propose(doc, eligible).items():
                for c in cs:
                    merged[i].setdefault(c.text.lower(), c)
        cands = {i: list(d.values()) for i, d in merged.items()}
        for con in cand_cons:
            if any(cands.values()):
                cands = con.filter(doc, cands)
        return eligible, scorer.score(doc, cands)

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
        if not k:
            chosen = []
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
                    "llm_tokens_out", "surrogate_queries"):
            if doc.cost.get(key):
                info[key] = int(doc.cost[key])
        if getattr(search, "queries_detector", False):  # a guided search: its query count, even when 0
            info.setdefault("detector_queries", 0)
        info.update(doc.notes)
        return apply_edits(text, edits), edits, info


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
