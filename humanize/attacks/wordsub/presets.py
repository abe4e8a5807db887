"""Registered presets of the engine: ``Synonym`` (RAID) and the ``QPA`` wrapper (TH-Bench Appendix G)."""
from __future__ import annotations

from typing import Any

import numpy as np

from humanize.models import DEFAULT_CAUSAL_LM

from ..base import Attack
from .candidates import MaskedLMFill, VectorNeighbours, WordNetSynonyms
from .constraints import MLMProbability, NotStopword, SamePOS, WordCosine
from .engine import EnginePreset, WordSubstitution
from .scoring import CausalLMScore, MLMScore
from .search import TopScore
from .text_constraints import MaxWordsChanged, SentenceSimilarity, TextConstraint, qpa_constraints

__all__ = ["Synonym", "QPA"]


class Synonym(EnginePreset):
    """RAID's synonym swap (Appendix E.4): about ``rate`` (θ = 0.5) of the eligible words get their best synonym.

    With ``mlm`` (RAID: ``"bert-base-cased"``, needs the hub) candidates are the
    masked LM's top ``top_k`` fill-ins in a window of ``window`` words each side,
    kept when their probability is >= ``min_mlm_prob`` and ranked by it. Without
    it (the offline default) candidates are WordNet synonyms plus ``neighbours``
    nearest word vectors, ranked by the causal LM ``lm``'s log-probability of
    the candidate given the text before it. Both keep only candidates with the
    original's POS tag in a ±``pos_window`` window (``pos=True``) and a
    word-vector cosine >= ``min_cosine`` (GloVe offline; a fastText ``.bin``
    path for RAID's exact filter). ``max_share`` caps the share of words changed
    and ``min_similarity`` adds a sentence-similarity floor (MiniLM), both off by default.

    Eligible words: alphabetic, not stop words (scikit-learn's list). RAID takes
    θ of all tokens; here θ of the eligible ones, so θ is the share of content
    words changed (at most those with an allowed candidate).
    """

    name = "synonym"
    version = "1"
    _model_params = ("lm", "mlm")

    def __init__(self, rate: float = 0.5, seed: int = 0, mlm: Any = None, lm: Any = DEFAULT_CAUSAL_LM,
                 vectors: Any = "glove-6b-50d", neighbours: int = 10, min_cosine: float = 0.5, pos: bool = True,
                 pos_window: int = 4, top_k: int = 20, window: int = 20, min_mlm_prob: float = 0.0025,
                 max_share: Any = None, min_similarity: Any = None, device: Any = None):
        self.rate = rate
        self.seed = seed
        self.mlm = mlm
        self.lm = lm
        self.vectors = vectors
        self.neighbours = neighbours
        self.min_cosine = min_cosine
        self.pos = pos
        self.pos_window = pos_window
        self.top_k = top_k
        self.window = window
        self.min_mlm_prob = min_mlm_prob
        self.max_share = max_share
        self.min_similarity = min_similarity
        self.device = device
        self._validate()

    def _check(self) -> None:
        if not isinstance(self.pos, bool):
            raise TypeError(f"Synonym: pos must be a bool, got {type(self.pos).__name__}")

    def assemble(self) -> WordSubstitution:
        gens, cons, scorer = synonym_parts(self)
        return WordSubstitution(gens, cons, scorer, TopScore(), rate=self.rate, seed=self.seed)


def synonym_parts(preset: Any, cosine_optional: bool = False) -> tuple[list, list, Any]:
    """``(generators, constraints, scorer)`` of a synonym-style preset (Synonym, HMGC), from its attributes.

    With ``mlm``: masked-LM fill-in (``top_k``, ``window``), probability >= ``min_mlm_prob``,
    ranked by it; without: WordNet synonyms and ``neighbours`` word-vector neighbours,
    ranked by the causal LM ``lm``. Then the word-vector cosine >= ``min_cosine``
    (``cosine_optional``: None drops it), same POS in ±``pos_window`` words when ``pos``,
    the ``max_share`` budget and the ``min_similarity`` sentence floor when set.
    """
    p = preset
    if p.mlm is not None:
        gens = [MaskedLMFill(p.mlm, top_k=p.top_k, window=getattr(p, "window", 20), device=p.device)]
        cons = [NotStopword(), MLMProbability(p.min_mlm_prob)]
        scorer = MLMScore()
    else:
        gens = [WordNetSynonyms(), VectorNeighbours(p.vectors, k=p.neighbours)]
        cons = [NotStopword()]
        scorer = CausalLMScore(p.lm, device=p.device)
    if p.min_cosine is not None or not cosine_optional:
        cons.append(WordCosine(p.min_cosine, p.vectors))
    if p.pos:
        cons.append(SamePOS(window=getattr(p, "pos_window", 4)))
    if p.max_share is not None:
        cons.append(MaxWordsChanged(p.max_share))
    if p.min_similarity is not None:
        cons.append(SentenceSimilarity(p.min_similarity, device=p.device))
    return gens, cons, scorer


class QPA(Attack):
    """TH-Bench's quality-preserving variant of an engine attack: the same attack plus text constraints.

    ``attack`` is a :class:`WordSubstitution` (e.g. :class:`Synonym`), a
    registered name, or a table ``{"name": "raft", **params}`` (config files); ``constraints`` default to :func:`qpa_constraints`
    (per sentence: perplexity and Flesch change < 5%, MiniLM similarity > 0.95).
    ``rate`` and ``seed`` (when given) override the wrapped attack's. The result's ``attack``
    name is ``qpa``; the edits use the wrapped attack's per-document stream, so on
    the same text QPA aims at the same number of swaps as the attack alone.
    """

    name = "qpa"
    version = "1"
    has_rate = False

    def __init__(self, attack: Any = "synonym", constraints: Any = None, rate: Any = None, seed: Any = None):
        self.attack = attack
        self.constraints = constraints
        self.rate = rate
        self.seed = seed
        self._validate()

    def _validate(self) -> None:
        # an int seed / a rate θ override the wrapped attack's (so a config can sweep θ over QPA)
        seed, rate = self.seed, self.rate
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
            raise TypeError(f"QPA: seed must be None or an int, got {type(seed).__name__}")
        if rate is not None:
            if isinstance(rate, bool) or not isinstance(rate, (int, float, np.integer, np.floating)):
                raise TypeError(f"QPA: rate must be None or a number in [0, 1], got {type(rate).__name__}")
            if not 0.0 <= float(rate) <= 1.0:
                raise ValueError(f"QPA: rate θ must be in [0, 1], got {rate!r}")
        inner = self.inner()
        if not isinstance(inner, WordSubstitution):
            raise TypeError(f"QPA: attack must be a word-substitution attack (WordSubstitution, Synonym, RAFT, "
                            f"HMGC), its registered name or a table, got {type(inner).__name__}")
        cons = self.constraints
        if cons is not None:
            if not isinstance(cons, (list, tuple)):
                raise TypeError(f"QPA: constraints must be None or a list of TextConstraint, got {type(cons).__name__}")
            for j, c in enumerate(cons):
                if not isinstance(c, TextConstraint):
                    raise TypeError(f"QPA: constraints[{j}] must be a TextConstraint, got {type(c).__name__}")

    def inner(self) -> Attack:
        """The wrapped attack; a name or a table ``{name = ..., params...}`` is built with QPA's seed."""
        attack = self.attack
        if isinstance(attack, (str, dict)):
            from .. import registry

            params = {} if isinstance(attack, str) else {k: v for k, v in attack.items() if k != "name"}
            name = attack if isinstance(attack, str) else attack.get("name")
            if not isinstance(name, str):
                raise TypeError(f"QPA: an attack table needs a 'name' (a registered attack), got {attack!r}")
            if self.seed is not None:  # one seed for everything inside (a surrogate's train split too)
                params["seed"] = self.seed
            built = self.__dict__.get("_inner")
            if built is None or built[0] != repr((name, sorted(params.items()))):
                built = (repr((name, sorted(params.items()))), registry.get(name, **params))
                self.__dict__["_inner"] = built
            return built[1]
        return attack

    def engine(self) -> WordSubstitution:
        inner = self.inner()
        p = inner._parts()
        extra = list(self.constraints) if self.constraints is not None else qpa_constraints()
        seed = inner.seed if self.seed is None else self.seed
        rate = inner.rate if self.rate is None else self.rate
        engine = WordSubstitution(p.generators, p.candidate_constraints + p.text_constraints + p.budgets + extra,
                                  p.scorer, p.search, rate=rate, seed=seed, ranker=p.ranker, offer=p.offer)
        engine.name = inner.name  # the wrapped attack's per-document stream: same k on the same text
        return engine

    def _cache(self) -> tuple:
        # QPA draws nothing itself (the engine uses the wrapped attack's stream): no digest head
        cache = (None, b"")
        self.__dict__["_params_cache"] = cache
        return cache

    def _run(self, text: str):
        engine = self.__dict__.get("_engine")
        if engine is None:
            engine = self.__dict__["_engine"] = self.engine()
        return engine._run(text)

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if name[:1] != "_":
            self.__dict__.pop("_engine", None)
            self.__dict__.pop("_inner", None)
