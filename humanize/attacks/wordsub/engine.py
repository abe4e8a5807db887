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

from typing import Any, Sequence

from ..base import Attack, Edit, apply_edits
from .._casing import match_case
from .._sampling import stochastic_count
from ._doc import Candidate, Doc
from .candidates import CandidateGenerator
from .constraints import CandidateConstraint
from .scoring import CausalLMScore, Scorer
from .search import Search, TopScore
from .text_constraints import MaxWordsChanged, TextConstraint

__all__ = ["WordSubstitution"]


def _as_list(owner: str, name: str, value: Any, kinds: tuple, what: str) -> list:
    items = [value] if isinstance(value, kinds) else value
    if not isinstance(items, (list, tuple)):
        raise TypeError(f"{owner}: {name} must be a list of {what}, got {type(value).__name__}")
    for j, v in enumerate(items):
        if not isinstance(v, kinds):
            raise TypeError(f"{owner}: {name}[{j}] must be a {what}, got {type(v).__name__}")
    return list(items)


class WordSubstitution(Attack):
    """Replace about ``rate`` of the eligible words with allowed, high-scoring candidates.

    - ``candidates``: generators (:mod:`.candidates`), their proposals merged in order;
    - ``constraints``: candidate constraints (:mod:`.constraints`), text constraints
      (:mod:`.text_constraints`, checked per sentence) and :class:`MaxWordsChanged`;
    - ``scorer``: ranks candidates (default :class:`CausalLMScore`);
    - ``search``: picks the swaps (default :class:`TopScore`).

    Eligible words are those every candidate constraint's ``word_ok`` accepts;
    ``k`` = ``rate`` x their number (stochastically rounded), capped by
    :class:`MaxWordsChanged`. ``info`` reports ``queries`` (model inputs),
    ``lm_tokens`` (causal-LM tokens), ``forward_passes`` and what was found.
    """

    name = "word_substitution"
    version = "1"

    def __init__(self, candidates: Sequence = (), constraints: Sequence = (), scorer: Any = None,
                 search: Any = None, rate: float = 0.5, seed: int = 0):
        self.candidates = candidates
        self.constraints = constraints
        self.scorer = scorer
        self.search = search
        self.rate = rate
        self.seed = seed
        self._validate()

    def _validate(self) -> None:
        super()._validate()
        who = type(self).__name__
        gens = _as_list(who, "candidates", self.candidates, (CandidateGenerator,), "candidate generator")
        if not gens:
            raise ValueError(f"{who}: candidates is empty; give at least one generator "
                             f"(WordNetSynonyms, VectorNeighbours, MaskedLMFill)")
        _as_list(who, "constraints", self.constraints, (CandidateConstraint, TextConstraint, MaxWordsChanged),
                 "constraint (CandidateConstraint, TextConstraint or MaxWordsChanged)")
        if self.scorer is not None and not isinstance(self.scorer, Scorer):
            raise TypeError(f"{who}: scorer must be None or a Scorer, got {type(self.scorer).__name__}")
        if self.search is not None and not isinstance(self.search, Search):
            raise TypeError(f"{who}: search must be None or a Search, got {type(self.search).__name__}")

    # -- the parts, as lists ------------------------------------------------------------
    def _parts(self):
        gens = [self.candidates] if isinstance(self.candidates, CandidateGenerator) else list(self.candidates)
        cons = list(self.constraints) if isinstance(self.constraints, (list, tuple)) else [self.constraints]
        return (gens, [c for c in cons if isinstance(c, CandidateConstraint)],
                [c for c in cons if isinstance(c, TextConstraint)],
                [c for c in cons if isinstance(c, MaxWordsChanged)],
                self.scorer if self.scorer is not None else CausalLMScore(),
                self.search if self.search is not None else TopScore())

    def eligible(self, doc: Doc) -> list[int]:
        """Indices of the words every candidate constraint lets the attack change."""
        cand_cons = self._parts()[1]
        return [i for i in range(len(doc.words)) if all(c.word_ok(doc.word(i)) for c in cand_cons)]

    def candidates_for(self, doc: Doc) -> tuple[list[int], dict[int, list[Candidate]]]:
        """The eligible words and their allowed, scored candidates (before the search)."""
        gens, cand_cons, _, _, scorer, _ = self._parts()
        eligible = self.eligible(doc)
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
        gens, _, text_cons, budgets, _, search = self._parts()
        eligible = self.eligible(doc)
        k = stochastic_count(self.rate, len(eligible), self.random(text)) if eligible else 0
        for b in budgets:
            k = min(k, b.limit(len(doc.words)))
        cands = self.candidates_for(doc)[1] if k else {}  # no model work when nothing will change
        chosen = search.select(doc, cands, k, text_cons) if k else []
        edits = []
        for c in sorted(chosen, key=lambda c: c.word):
            s, e = doc.words[c.word]
            edits.append(Edit(s, e, match_case(doc.text[s:e], c.text)))
        info = {"queries": int(doc.cost.get("queries", 0)), "lm_tokens": int(doc.cost.get("lm_tokens", 0)),
                "forward_passes": int(doc.cost.get("forward_passes", 0)), "words": len(doc.words),
                "eligible": len(eligible), "with_candidates": sum(1 for cs in cands.values() if cs),
                "target_swaps": k, "swaps": len(edits),
                "sources": sorted({c.source for c in chosen})}
        for key in ("mlm_tokens", "pos_windows"):
            if doc.cost.get(key):
                info[key] = int(doc.cost[key])
        return apply_edits(text, edits), edits, info
