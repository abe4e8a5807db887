"""Registered presets of the engine: ``Synonym`` (RAID) and the ``QPA`` wrapper (TH-Bench Appendix G)."""
from __future__ import annotations

from typing import Any

from numbers import Integral, Real

from humanize.params import ComponentParam
from humanize.validation import HasMethods, InstanceOf, Interval, Options, SequenceOf
from humanize.exceptions import InvalidParameterError
from humanize.models import DEFAULT_CAUSAL_LM, DEFAULT_CHAT_LM, DEFAULT_RANKING_LM, DEFAULT_SENTENCE_ENCODER

from ..base import Attack
from .candidates import MaskedLMFill, VectorNeighbours, WordNetSynonyms
from ..text_constraints import MaxWordsChanged, SentenceSimilarity, TextConstraint, sentence_constraints
from .constraints import CandidateConstraint, MLMProbability, NotStopword, SamePOS, SwapValidity, WordCosine
from .context import CONSENSUS_MARGIN, CONTEXT_MARGIN, context_checks
from .engine import EnginePreset, WordSubstitution
from .scoring import CausalLMScore, MLMScore
from .search import TopScore

__all__ = ["Synonym", "QPA", "qpa_constraints"]


#: Candidate sources a synonym-style preset can name in ``candidates`` (issue #19 §1)
CANDIDATE_SOURCES = ("wordnet_sense", "wordnet_all_senses", "vector_neighbours", "mlm")
#: The swap classes the synonym-style presets keep by default (:class:`~.constraints.SwapValidity`)
DEFAULT_ALLOWED_SWAPS = ("synonym",)

_SOURCE = Options(str, CANDIDATE_SOURCES)
#: The declared constraints of the synonym-style presets' shared parameters (Synonym, HMGC, RAFT's stand-in).
SYNONYM_CONSTRAINTS = {
    "mlm": ["model", None],
    "lm": ["model"],
    "vectors": [InstanceOf(str, name="a name or a fastText .bin path"), HasMethods("vector", "similarity")],
    "neighbours": [Interval(Integral, 1, None)],
    "min_cosine": [Interval(Real, -1, 1)],
    "pos": ["boolean"],
    "pos_window": [Interval(Integral, 0, None)],
    "top_k": [Interval(Integral, 1, None)],
    "window": [Interval(Integral, 0, None)],
    "min_mlm_prob": [Interval(Real, 0, 1)],
    "max_share": [Interval(Real, 0, 1), None],
    "min_similarity": [Interval(Real, -1, 1), None],
    "candidates": [_SOURCE, SequenceOf(_SOURCE, nonempty=True, name="a non-empty list of those"), None],
    "senses": [Interval(Integral, 1, None), None],
    "allowed_swaps": [SequenceOf("str", nonempty=True, containers=(list, tuple, set, frozenset)), None],
    "min_entailment": [Interval(Real, 0, 1), None],
    "nli_model": ["model", None],
    "context_margin": [Interval(Real, 0, None), None],
    "consensus_lm": ["model", None],
    "consensus_margin": [Interval(Real, 0, None)],
    "keep_terms": ["boolean"],
    "terms": [SequenceOf("str", containers=(list, tuple, set, frozenset), name="a list of phrases (str)")],
}
#: The per-sentence MiniLM cosine floor of ``synonym`` and ``hmgc``. Measured on 15 demo machine texts
#: (``benchmarks/bench_validity.py`` prints the effect): a sentence with one sense-synonym
#: swap keeps cosine >= 0.871 in 95% of cases, while half of the sentences the looser pre-#19 recipe
#: changed fell below 0.85; so 0.85 lets single valid swaps through and stops the accumulation.
SYNONYM_MIN_SIMILARITY = 0.85


class Synonym(EnginePreset):
    """RAID's synonym swap (Appendix E.4): about ``rate`` (θ = 0.5) of the eligible words get their best synonym.

    Candidates (``candidates``, issue #19 §1): by default ``["wordnet_sense"]``, the WordNet
    synonyms of the word's part of speech (:class:`~.senses.SenseSynonyms`: the spaCy tag's
    WordNet POS, the ``senses`` most frequent senses, by default the first; ``senses=None`` takes
    every sense and lets the context check below pick, as lexical substitution does: on 30 demo
    texts it made 1.3 swaps per document instead of 0.4, but the context LM also accepted swaps
    of another sense that change a fact ("minutes -> hours", "young -> new players"), so it is
    not the default; antonyms of every sense excluded, inflected to the word's tag), ranked by the causal LM ``lm``'s log-probability
    of the candidate given the text before it. With ``mlm`` (RAID: ``"bert-base-cased"``,
    needs the hub) the masked LM's top ``top_k`` fill-ins in a window of ``window`` words
    each side, of probability >= ``min_mlm_prob``, ranked by it, *through the same filters*.

    Filters: every swap must be of a class in ``allowed_swaps`` (default WordNet synonyms,
    :class:`~.constraints.SwapValidity`; None: no check), keep the original's POS tag in a
    ±``pos_window`` window (``pos=True``), and a word-vector cosine >= ``min_cosine``
    (GloVe offline; a fastText ``.bin`` path for RAID's exact filter); each changed sentence
    keeps a MiniLM cosine >= ``min_similarity`` (0.85) with the original, and a bidirectional
    entailment >= ``min_entailment`` when that is set (an NLI model, ``nli_model``, from the
    hub). ``max_share`` caps the share of words changed (off by default).

    In context (issue #33, :mod:`.context`): a candidate must keep the sentence about as likely under
    ``lm`` (the ranking model) as the word did, losing at most ``context_margin`` nats over its tokens
    and the rest of the sentence (:class:`~.context.ContextFit`; None: no check); with ``keep_terms``
    no word inside a WordNet collocation, a noun-noun compound, a proper noun or one of ``terms`` (your
    own phrases) is swapped (:class:`~.context.KeepTerms`). A consensus: a candidate ``lm`` kept must also lose at
    most ``consensus_margin`` nats under ``consensus_lm`` (default Qwen2.5-Coder-0.5B-Instruct, which the demo's
    paraphrase attack loads anyway; neither model is the validity meter's SmolLM2), scored only for the candidates
    ``lm`` kept (:func:`~.context.context_checks`); ``consensus_lm=None`` is the single-model recipe of synonym 4.
    The recipe of issue #19 is ``context_margin=None, keep_terms=False``.

    ``dtype``: the precision of ``lm`` and ``consensus_lm`` when they are names (None: float32 on a CPU;
    ``"auto"``: bfloat16 on a CPU with bfloat16 instructions, :mod:`humanize.models.precision`), recorded in the
    fingerprint. On 3 demo documents bfloat16 halves the context check's time and changes 1 of its 73 keep/drop
    decisions (``benchmarks/bench_synonym.py --context``); the demo runs it, the default stays float32.

    RAID's looser recipe (WordNet lemmas of every sense plus the 10 nearest word vectors, no
    validity or sentence check) stays reachable:
    ``Synonym(candidates=["wordnet_all_senses", "vector_neighbours"], allowed_swaps=None,
    min_similarity=None, context_margin=None, keep_terms=False)``.

    Eligible words: alphabetic, not stop words (scikit-learn's list). RAID takes
    θ of all tokens; here θ of the eligible ones, so θ is the share of content
    words changed (at most those with an allowed candidate).
    """

    name = "synonym"
    # 5: a consensus: candidates must also fit their sentence under consensus_lm (Qwen2.5-Coder-0.5B), issue #33;
    # 4: candidates must fit their sentence (ContextFit) and words inside terms are kept (KeepTerms), issue #33;
    # 3: documents over engine.WINDOW_WORDS words in windows, the budget shared (issue #22)
    version = "5"
    _parameter_constraints = SYNONYM_CONSTRAINTS
    _model_params = ("lm", "mlm", "nli_model", "consensus_lm")

    def __init__(self, rate: float = 0.5, seed: int = 0, mlm: Any = None, lm: Any = DEFAULT_RANKING_LM,
                 vectors: Any = "glove-6b-50d", neighbours: int = 10, min_cosine: float = 0.5, pos: bool = True,
                 pos_window: int = 4, top_k: int = 20, window: int = 20, min_mlm_prob: float = 0.0025,
                 max_share: Any = None, min_similarity: Any = SYNONYM_MIN_SIMILARITY, device: Any = None,
                 candidates: Any = None, senses: Any = 1, allowed_swaps: Any = DEFAULT_ALLOWED_SWAPS,
                 min_entailment: Any = None, nli_model: Any = None, context_margin: Any = CONTEXT_MARGIN,
                 keep_terms: bool = True, terms: Any = (), consensus_lm: Any = DEFAULT_CHAT_LM,
                 consensus_margin: float = CONSENSUS_MARGIN, dtype: Any = None):
        self._init_params(locals())

    def assemble(self) -> WordSubstitution:
        gens, cons, scorer = synonym_parts(self)
        return WordSubstitution(gens, cons, scorer, TopScore(), rate=self.rate, seed=self.seed)


def candidate_sources(preset: Any) -> list[str]:
    """The candidate sources of a synonym-style preset: its ``candidates``, or the default for its ``mlm``."""
    who = type(preset).__name__
    names = preset.candidates  # checked against SYNONYM_CONSTRAINTS["candidates"]
    if names is None:
        return ["mlm"] if preset.mlm is not None else ["wordnet_sense"]
    if isinstance(names, str):
        names = [names]
    if "mlm" in names and preset.mlm is None:
        raise ValueError(f"{who}: candidates includes 'mlm' but mlm is None; give mlm= a masked LM "
                         f"(e.g. 'bert-base-cased')")
    return list(dict.fromkeys(names))


def synonym_parts(preset: Any, cosine_optional: bool = False) -> tuple[list, list, Any]:
    """``(generators, constraints, scorer)`` of a synonym-style preset (Synonym, HMGC), from its attributes.

    Generators from ``candidates`` (:func:`candidate_sources`); ranked by the masked LM
    (``MLMScore``) when it is the only source, by the causal LM ``lm`` otherwise. Then the
    validity classes ``allowed_swaps``, the word-vector cosine >= ``min_cosine``
    (``cosine_optional``: None drops it), same POS in ±``pos_window`` words when ``pos``, the
    ``max_share`` budget and the ``min_similarity`` / ``min_entailment`` sentence floors when set; words
    inside terms kept (``keep_terms``, ``terms``) and the context check under ``lm`` (``context_margin``), then under
    ``consensus_lm`` on what ``lm`` kept (``consensus_margin``),
    issue #33, the context check last (the most costly); ``lm`` and ``consensus_lm`` in the preset's ``dtype``
    where it has one.
    """
    from .context import KeepTerms
    from .constraints import SwapValidity
    from .senses import SenseSynonyms
    from ..text_constraints import SentenceEntailment

    p = preset
    sources = candidate_sources(p)
    gens = []
    for name in sources:
        if name == "wordnet_sense":
            gens.append(SenseSynonyms(senses=p.senses))
        elif name == "wordnet_all_senses":
            gens.append(WordNetSynonyms())
        elif name == "vector_neighbours":
            gens.append(VectorNeighbours(p.vectors, k=p.neighbours))
        else:
            gens.append(MaskedLMFill(p.mlm, top_k=p.top_k, window=getattr(p, "window", 20), device=p.device))
    cons = [NotStopword()]
    if getattr(p, "keep_terms", False):
        cons.append(KeepTerms(terms=tuple(p.terms)))
    if "mlm" in sources:
        cons.append(MLMProbability(p.min_mlm_prob))
    dtype = getattr(p, "dtype", None)
    scorer = MLMScore() if sources == ["mlm"] else CausalLMScore(p.lm, device=p.device, dtype=dtype)
    if p.allowed_swaps is not None:
        allowed = p.allowed_swaps
        cons.append(SwapValidity(tuple(allowed) if isinstance(allowed, (list, tuple)) else allowed))
    if p.min_cosine is not None or not cosine_optional:
        cons.append(WordCosine(p.min_cosine, p.vectors))
    if p.pos:
        cons.append(SamePOS(window=getattr(p, "pos_window", 4)))
    cons += context_checks(p.lm, getattr(p, "context_margin", None), getattr(p, "consensus_lm", None),
                           getattr(p, "consensus_margin", CONSENSUS_MARGIN), device=p.device, dtype=dtype)
    if p.max_share is not None:
        cons.append(MaxWordsChanged(p.max_share))
    if p.min_similarity is not None:
        cons.append(SentenceSimilarity(p.min_similarity, device=p.device))
    if p.min_entailment is not None:
        cons.append(SentenceEntailment(p.min_entailment, p.nli_model, device=p.device))
    return gens, cons, scorer


def qpa_constraints(max_ppl_change: float = 0.05, max_flesch_change: float = 0.05, min_similarity: float = 0.95,
                    lm: Any = DEFAULT_CAUSAL_LM, encoder: Any = DEFAULT_SENTENCE_ENCODER,
                    allowed_swaps: Any = ("synonym", "morphological"), context_margin: Any = "default",
                    context_lm: Any = DEFAULT_RANKING_LM, consensus_lm: Any = DEFAULT_CHAT_LM,
                    consensus_margin: float = CONSENSUS_MARGIN) -> list:
    """TH-Bench's QPA constraints (Appendix G), cheapest first, plus the validity class of each swap.

    ``allowed_swaps`` (issue #19 §3): every swap QPA keeps must be a WordNet synonym or a
    morphological variant of the word it replaces (:class:`~.constraints.SwapValidity`): no
    antonym, sister term or unrelated word, whatever the wrapped attack proposed. ``None`` gives
    TH-Bench's three constraints alone (:func:`humanize.attacks.text_constraints.sentence_constraints`).

    ``context_margin`` (issue #33): every kept swap must also fit its sentence under ``context_lm``
    (the word-level attacks' ranking model, not ``lm``, the perplexity meter's), within that many nats
    (:class:`~.context.ContextFit`; ``"default"``: :data:`~.context.CONTEXT_MARGIN`; None: no check), and under
    ``consensus_lm`` within ``consensus_margin`` (a consensus of two models, :func:`~.context.context_checks`;
    None: ``context_lm`` alone).
    """
    validity = [] if allowed_swaps is None else [SwapValidity(tuple(allowed_swaps))]
    margin = CONTEXT_MARGIN if isinstance(context_margin, str) and context_margin == "default" else context_margin
    validity += context_checks(context_lm, margin, consensus_lm, consensus_margin)
    return validity + sentence_constraints(max_ppl_change, max_flesch_change, min_similarity, lm, encoder)


def qpa_inner(attack: Any, seed: Any) -> Attack:
    """QPA's wrapped attack: an object as given; a name, ``NAME:K=V,...`` or a table ``{name = ..., params...}``
    (:func:`humanize._registry.parse_spec`) built with QPA's ``seed`` when one is set (one seed for everything
    inside, a surrogate's train split too)."""
    if not isinstance(attack, (str, dict)):
        return attack
    from humanize._registry import parse_spec

    from .. import registry

    spec = parse_spec(attack, "attack", InvalidParameterError, owner="QPA")
    if seed is not None:
        spec.params["seed"] = seed
    return registry.get(spec.name, **spec.params)


class QPA(Attack):
    """TH-Bench's quality-preserving variant of an engine attack: the same attack plus text constraints.

    ``attack`` is a :class:`WordSubstitution` (e.g. :class:`Synonym`), a
    registered name, or a table ``{"name": "raft", **params}`` (config files); ``constraints`` default to :func:`qpa_constraints`
    (per sentence: perplexity and Flesch change < 5%, MiniLM similarity > 0.95; and, issue #19 §3,
    every kept swap a WordNet synonym or morphological variant of its word, and, issue #33, one that fits
    its sentence under the ranking LM (:class:`~.context.ContextFit`): no antonym, sister
    term or unrelated word).
    ``rate`` and ``seed`` (when given) override the wrapped attack's. The result's ``attack``
    name is ``qpa``; the edits use the wrapped attack's per-document stream, so on
    the same text QPA aims at the same number of swaps as the attack alone.
    """

    name = "qpa"
    # 5: the context check is a consensus of Gemma-3-270M and Qwen2.5-Coder-0.5B (issue #33); 4: its constraints include
    # the context check (issue #33); 3: the engine's windows (issue #22)
    version = "5"
    has_rate = False
    _derived_state = ("_engine",)  # rebuilt after any set_params (a nested attack__rate too)

    def __init__(self, attack: Any = "synonym", constraints: Any = None, rate: Any = None, seed: Any = None):
        self._init_params(locals())

    _component_params = {"attack": ComponentParam("attack", lambda self, value: qpa_inner(value, self.seed),
                                                  depends=("seed",))}
    _parameter_constraints = {
        "attack": [InstanceOf(WordSubstitution, name="a word-substitution attack (WordSubstitution, Synonym, RAFT, "
                                                      "HMGC)"),
                   InstanceOf(str, name="its registered name"), InstanceOf(dict, name="a table {name = ..., ...}")],
        "constraints": [SequenceOf(TextConstraint, CandidateConstraint,
                                   name="a list of TextConstraint / CandidateConstraint (e.g. SwapValidity)"), None],
        # an int seed / a rate θ override the wrapped attack's (so a config can sweep θ over QPA)
        "rate": [Interval(Real, 0, 1), None],
        "seed": ["seed", None],
    }

    def _check(self) -> None:
        inner = self.inner()
        if not isinstance(inner, WordSubstitution):
            raise InvalidParameterError(f"QPA: attack must be a word-substitution attack (WordSubstitution, Synonym, RAFT, "
                            f"HMGC), its registered name or a table, got {type(inner).__name__}")

    def inner(self) -> Attack:
        """The wrapped attack; a name or a table ``{name = ..., params...}`` is built with QPA's seed."""
        return self.component("attack")

    def engine(self) -> WordSubstitution:
        inner = self.inner()
        p = inner._parts()
        extra = list(self.constraints) if self.constraints is not None else qpa_constraints()
        # a context check the wrapped attack already makes under the same model and a margin as strict is not repeated
        from .context import ContextFit

        have = [c for c in p.candidate_constraints if isinstance(c, ContextFit)]
        extra = [c for c in extra if not (isinstance(c, ContextFit) and any(
            h.lm == c.lm and h.margin <= c.margin for h in have))]
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

    def built_engine(self) -> WordSubstitution:
        """The engine :meth:`engine` assembles, built once for the current parameters (what runs)."""
        engine = self.__dict__.get("_engine")
        if engine is None:
            engine = self.__dict__["_engine"] = self.engine()
        return engine

    def _run(self, text: str):
        return self.built_engine()._run(text)

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if name[:1] != "_":
            self.__dict__.pop("_engine", None)
