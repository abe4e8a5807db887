"""RAFT (Wang et al. 2024, "RAFT: Realistic Attacks to Fool Text Detectors", §3; TH-Bench §2.2, §4 setup).

A proxy LM ranks the words by predictability; the θ (``rate``, default 0.1)
most predictable eligible words are tried in turn; an LLM proposes ``k`` = 15
replacements for each, those with the original's part of speech are put into
the *current* text and scored by the black-box target detector in one batched
call, and the lowest is kept when it lowers the target's score.
"""
from __future__ import annotations

from typing import Any

from numbers import Integral

from humanize.params import ComponentParam
from humanize.validation import Interval, Options
from humanize.models import DEFAULT_CHAT_LM, DEFAULT_RANKING_LM

from .constraints import NotStopword, SamePOS, SwapValidity, WordCosine
from .context import CONSENSUS_MARGIN, CONTEXT_MARGIN, KeepTerms, context_checks
from .engine import EnginePreset, WordSubstitution
from .llm_candidates import LLMCandidates
from .rankers import Predictability
from .presets import DEFAULT_ALLOWED_SWAPS, SYNONYM_CONSTRAINTS
from .scoring import CausalLMScore, ProposalOrder
from .search import DetectorGreedy
from .senses import SenseSynonyms

__all__ = ["RAFT"]


class RAFT(EnginePreset):
    """RAFT's black-box word-substitution attack on a target detector (registered as ``"raft"``).

    - ``target``: the detector to fool, only its ``score`` is used: a
      :class:`~humanize.detectors.target.Target` (queried as is, never refit: the same
      object can score the outputs; ``target_train`` is then unused), a name, a table or a
      Detector; a learnable one of these is fit on ``target_train`` (:mod:`..targets`: a
      dataset name, a table or ``(texts, labels)``) with ``seed``;
    - ``proxy``: the causal LM ranking words by predictability (:class:`Predictability`);
    - ``llm``: a chat model proposing ``k`` replacements per word (:class:`LLMCandidates`;
      TH-Bench: GPT-3.5-turbo or GPT-4o-mini through an endpoint); ``None`` (the default since
      issue #39): a lexical stand-in, up to ``k`` WordNet synonyms of *every* sense of the word's
      part of speech (:class:`~.senses.SenseSynonyms`, ``senses=None``; GloVe cosine >= 0.5), the
      context check below picking the sense, tried in the proxy's log-probability order
      (``candidates=["wordnet_all_senses", "vector_neighbours"]``: the looser stand-in before issue
      #19). Offline the packaged 0.5B chat model proposed no candidate that passed the validity and
      context checks on 4 demo texts (issue #39's diagnosis), so it is no longer the default;
    - ``pos``: keep only candidates with the original's POS tag (spaCy, in context);
    - ``allowed_swaps``: the validity classes a kept swap may have (issue #19 §3; default WordNet
      synonyms, :class:`~.constraints.SwapValidity`): an LLM's list is full of related words that
      change the meaning (antonyms, sister terms); ``None`` is RAFT's unfiltered list;
    - ``context_margin``: a candidate (the stand-in's or the LLM's) must keep its sentence about as
      likely under ``proxy`` as the word did, within this many nats (:class:`~.context.ContextFit`,
      issue #33; None: no check); ``keep_terms``: no word inside a WordNet collocation, a noun-noun
      compound, a proper noun or one of ``terms`` is swapped (:class:`~.context.KeepTerms`); a consensus: the
      candidate must first lose at most ``consensus_margin`` nats under ``consensus_lm`` (Gemma-3-270M, the
      smaller model, so the proxy scores only what it kept; None: the proxy alone, RAFT 6's check);
    - ``offer``: ``"all"`` (default since issue #39): every eligible word is tried in the proxy's
      predictability order until θ of them have been swapped or the query budget is spent;
      ``"top_k"``: only the θ most predictable words are tried, as in RAFT's code (with valid
      candidates only, those words rarely have one: RAFT then changes nothing);
    - ``max_queries``: detector budget per document (texts scored, the original included; default
      100, about RAFT's k = 15 candidates for each of θ = 10% of a 60-content-word text); None: no cap;
    - ``batched``: score a word's candidates in one detector call (False: one call each, same result;
      not ``batch``, which is :meth:`Attack.batch`).

    Offline the ``proxy`` defaults to Qwen2.5-Coder-0.5B-Instruct
    (:data:`~humanize.models.DEFAULT_CHAT_LM`), not SmolLM2-135M, the default detectors'
    and perplexity's scoring model (issue #19 §4: a SmolLM2 proxy picks the words SmolLM2
    finds predictable; ``llm=proxy="smollm2-135m-instruct"`` is the pairing before it);
    ``llm=DEFAULT_CHAT_LM, offer="top_k", max_queries=None`` is the recipe before issue #39.
    With an ``llm`` and ``offer="all"`` the LLM is asked for every eligible word. At full scale
    (TH-Bench: GPT-4o-mini or GPT-3.5-turbo as the LLM, OPT-2.7B as the proxy)
    the proxy needs the hub and the LLM an OpenAI-compatible endpoint (issue #11).

    Following RAFT's code: the proxy's predictability of a word is the
    probability of its first token given the text before it (one pass); the
    LLM's list is tried in its order; θ = 0.1, k = 15. Departures: every eligible word is offered in
    predictability order within a query budget (``offer``), not only the θ most predictable; a swap is
    kept only when it lowers the target's score on the current text, strictly
    (RAFT keeps the best candidate when <= the best so far, ties included);
    θ is a share of the eligible words (RAFT: of the proxy's tokens) and stop
    words are not attacked; POS is spaCy's tag in a ±4-word window (RAFT: NLTK's
    tag of the word alone); the LLM sees the word's sentence, not the paragraph.
    """

    name = "raft"
    # 4: the engine works long documents one window of sentences at a time (issue #22);
    # 3: llm and proxy default to DEFAULT_CHAT_LM (issue #19 §4)
    # 5: candidates (the stand-in's and the LLM's) must fit their sentence under the proxy, words inside terms
    # are kept (issue #33);
    # 6: llm=None (the stand-in, every sense in context), offer="all", max_queries=100 (issue #39)
    # 7: the context check is a consensus of consensus_lm (Gemma-3-270M) and the proxy, and the proxy (no BOS)
    # scores a text's first word after its EOS token instead of not at all (issue #33)
    version = "7"
    _model_params = ("llm", "proxy", "consensus_lm")
    _component_params = {
        "target": ComponentParam("detector", train="target_train"),
        "target_train": ComponentParam("training_set"),
    }
    _parameter_constraints = {
        "k": [Interval(Integral, 1, None)],  # replacements asked per word
        "pos": ["boolean"],
        "batched": ["boolean"],
        "max_queries": [Interval(Integral, 1, None), None],
        "offer": [Options(str, ("all", "top_k"))],
        "allowed_swaps": SYNONYM_CONSTRAINTS["allowed_swaps"],
        "candidates": SYNONYM_CONSTRAINTS["candidates"],
        "context_margin": SYNONYM_CONSTRAINTS["context_margin"],
        "consensus_lm": SYNONYM_CONSTRAINTS["consensus_lm"],
        "consensus_margin": SYNONYM_CONSTRAINTS["consensus_margin"],
        "keep_terms": SYNONYM_CONSTRAINTS["keep_terms"],
        "terms": SYNONYM_CONSTRAINTS["terms"],
    }

    def __init__(self, rate: float = 0.1, seed: int = 0, target: Any = "log_likelihood", target_train: Any = None,
                 llm: Any = None, proxy: Any = DEFAULT_CHAT_LM, k: int = 15, pos: bool = True,
                 max_queries: Any = 100, batched: bool = True, device: Any = None, offer: str = "all",
                 allowed_swaps: Any = DEFAULT_ALLOWED_SWAPS, candidates: Any = None,
                 context_margin: Any = CONTEXT_MARGIN, keep_terms: bool = True, terms: Any = (),
                 consensus_lm: Any = DEFAULT_RANKING_LM, consensus_margin: float = CONSENSUS_MARGIN):
        self._init_params(locals())

    def _check(self) -> None:
        from ..targets import check_detector_spec, check_ready, check_train_spec

        if self.candidates is not None and self.llm is not None:
            raise ValueError(f"RAFT: candidates={self.candidates!r} names the lexical stand-in's sources, which are "
                             f"used only with llm=None (llm={self.llm!r} proposes the candidates)")
        check_detector_spec("RAFT", "target", self.target)
        check_train_spec("RAFT", self.target_train)
        check_ready("RAFT", "target", self.target, self.target_train, "target_train")

    def assemble(self) -> WordSubstitution:
        cons = [NotStopword()] + ([KeepTerms(terms=tuple(self.terms))] if self.keep_terms else [])
        cons += [SamePOS()] if self.pos else []
        search = DetectorGreedy(self.target, self.target_train, max_queries=self.max_queries, batch=self.batched,
                                seed=self.seed)
        if self.allowed_swaps is not None:
            allowed = self.allowed_swaps
            cons.append(SwapValidity(tuple(allowed) if isinstance(allowed, (list, tuple)) else allowed))
        if self.llm is None:  # lexical stand-in: sense synonyms in context, k, in the proxy's order
            gens = self._lexical_generators()
            scorer = CausalLMScore(self.proxy, device=self.device)
            cons = cons + [WordCosine(0.5)]
        else:
            gens = [LLMCandidates(self.llm, k=self.k, device=self.device)]
            scorer = ProposalOrder()
        # last: the most costly checks, on what the others left; the smaller consensus model (Gemma) before the proxy
        cons += context_checks(self.proxy, self.context_margin, self.consensus_lm, self.consensus_margin,
                               device=self.device, first="consensus")
        return WordSubstitution(gens, cons, scorer, search, rate=self.rate, seed=self.seed,
                                ranker=Predictability(self.proxy, device=self.device), offer=self.offer)

    def _lexical_generators(self) -> list:
        """The lexical stand-in's candidate generators (``llm=None``), from ``candidates``."""
        from .candidates import VectorNeighbours, WordNetSynonyms
        from .presets import CANDIDATE_SOURCES

        names = ["wordnet_sense"] if self.candidates is None else self.candidates
        names = [names] if isinstance(names, str) else names
        if not isinstance(names, (list, tuple)) or not names or any(n not in CANDIDATE_SOURCES[:3] for n in names):
            raise ValueError(f"RAFT: candidates must be None or a non-empty list of {list(CANDIDATE_SOURCES[:3])} "
                             f"(used when llm is None), got {self.candidates!r}")
        k = int(self.k)
        make = {"wordnet_sense": lambda: SenseSynonyms(senses=None, max_candidates=k),
                "wordnet_all_senses": lambda: WordNetSynonyms(max_candidates=k),
                "vector_neighbours": lambda: VectorNeighbours(k=k)}
        return [make[n]() for n in dict.fromkeys(names)]
