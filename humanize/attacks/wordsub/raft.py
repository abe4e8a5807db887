"""RAFT (Wang et al. 2024, "RAFT: Realistic Attacks to Fool Text Detectors", §3; TH-Bench §2.2, §4 setup).

A proxy LM ranks the words by predictability; the θ (``rate``, default 0.1)
most predictable eligible words are tried in turn; an LLM proposes ``k`` = 15
replacements for each, those with the original's part of speech are put into
the *current* text and scored by the black-box target detector in one batched
call, and the lowest is kept when it lowers the target's score.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from humanize.models import DEFAULT_CAUSAL_LM

from .candidates import VectorNeighbours, WordNetSynonyms
from .constraints import NotStopword, SamePOS, WordCosine
from .engine import EnginePreset, WordSubstitution
from .llm_candidates import LLMCandidates
from .rankers import Predictability
from .scoring import CausalLMScore, ProposalOrder
from .search import DetectorGreedy

__all__ = ["RAFT"]


class RAFT(EnginePreset):
    """RAFT's black-box word-substitution attack on a target detector (registered as ``"raft"``).

    - ``target``: the detector to fool (a name, a table or a Detector; only its
      ``score`` is used); a learnable one is fit on ``target_train``
      (:mod:`.targets`: a dataset name, a table or ``(texts, labels)``) with ``seed``;
    - ``proxy``: the causal LM ranking words by predictability (:class:`Predictability`);
    - ``llm``: the chat model proposing ``k`` replacements per word (:class:`LLMCandidates`);
      ``None``: a lexical stand-in, up to ``k`` WordNet synonyms and ``k`` GloVe neighbours
      (cosine >= 0.5) tried in the proxy's log-probability order. Offline, SmolLM2-135M
      rarely lists more than one or two usable words (it repeats the word or the sentence),
      so ``llm=None`` is the way to measure RAFT's ranking and detector-guided search here;
    - ``pos``: keep only candidates with the original's POS tag (spaCy, in context);
    - ``max_queries``: detector budget per document (texts scored, the original included);
    - ``batched``: score a word's candidates in one detector call (False: one call each, same result;
      not ``batch``, which is :meth:`Attack.batch`).

    Offline both ``llm`` and ``proxy`` are SmolLM2-135M-Instruct: the attack runs
    end to end, but a 135M model's lists are short and noisy. At full scale
    (TH-Bench: GPT-4o-mini or GPT-3.5-turbo as the LLM, OPT-2.7B as the proxy)
    the proxy needs the hub and the LLM an OpenAI-compatible endpoint (issue #11).

    Following RAFT's code: the proxy's predictability of a word is the
    probability of its first token given the text before it (one pass); the
    LLM's list is tried in its order; θ = 0.1, k = 15. Departures: a swap is
    kept only when it lowers the target's score on the current text, strictly
    (RAFT keeps the best candidate when <= the best so far, ties included);
    θ is a share of the eligible words (RAFT: of the proxy's tokens) and stop
    words are not attacked; POS is spaCy's tag in a ±4-word window (RAFT: NLTK's
    tag of the word alone); the LLM sees the word's sentence, not the paragraph.
    """

    name = "raft"
    version = "1"
    _model_params = ("llm", "proxy")

    def __init__(self, rate: float = 0.1, seed: int = 0, target: Any = "log_likelihood", target_train: Any = None,
                 llm: Any = DEFAULT_CAUSAL_LM, proxy: Any = DEFAULT_CAUSAL_LM, k: int = 15, pos: bool = True,
                 max_queries: Any = None, batched: bool = True, device: Any = None):
        self.rate = rate
        self.seed = seed
        self.target = target
        self.target_train = target_train
        self.llm = llm
        self.proxy = proxy
        self.k = k
        self.pos = pos
        self.max_queries = max_queries
        self.batched = batched
        self.device = device
        self._validate()

    def _check(self) -> None:
        from .targets import check_detector_spec, check_train_spec

        if isinstance(self.k, bool) or not isinstance(self.k, (int, np.integer)):
            raise TypeError(f"RAFT: k (replacements asked per word) must be an int >= 1, got {type(self.k).__name__}")
        if self.k < 1:
            raise ValueError(f"RAFT: k (replacements asked per word) must be >= 1, got {self.k}")
        if not isinstance(self.pos, bool):
            raise TypeError(f"RAFT: pos must be a bool, got {type(self.pos).__name__}")
        if not isinstance(self.batched, bool):
            raise TypeError(f"RAFT: batched must be a bool, got {type(self.batched).__name__}")
        mq = self.max_queries
        if mq is not None and (isinstance(mq, bool) or not isinstance(mq, (int, np.integer)) or mq < 1):
            raise ValueError(f"RAFT: max_queries must be None or an int >= 1, got {mq!r}")
        check_detector_spec("RAFT", "target", self.target)
        check_train_spec("RAFT", self.target_train)
        if self.target_train is None:
            from .targets import _is_fitted, build_detector

            det = build_detector(self.target, "RAFT", "target")  # cheap: detectors load models on first use
            if det.learnable and not _is_fitted(det):
                raise ValueError(f"RAFT: target {det.name!r} learns, so it needs target_train= a dataset name "
                                 f"(e.g. 'demo'), a table {{dataset = ..., n = ...}} or (texts, labels)")

    def assemble(self) -> WordSubstitution:
        cons = [NotStopword()] + ([SamePOS()] if self.pos else [])
        search = DetectorGreedy(self.target, self.target_train, max_queries=self.max_queries, batch=self.batched,
                                seed=self.seed)
        if self.llm is None:  # lexical stand-in: WordNet + word-vector neighbours, k each, in the proxy's order
            gens = [WordNetSynonyms(max_candidates=int(self.k)), VectorNeighbours(k=int(self.k))]
            scorer = CausalLMScore(self.proxy, device=self.device)
            cons = cons + [WordCosine(0.5)]
        else:
            gens = [LLMCandidates(self.llm, k=self.k, device=self.device)]
            scorer = ProposalOrder()
        return WordSubstitution(gens, cons, scorer, search, rate=self.rate, seed=self.seed,
                                ranker=Predictability(self.proxy, device=self.device))
