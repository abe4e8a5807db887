"""Word-substitution attacks from swappable parts: candidates, constraints, scorer, search.

TextAttack's separation, made light and batched per document. Candidates are WordNet
synonyms of the word's sense in context by default (:class:`SenseSynonyms`), and every swap
is checked against its validity class (:class:`SwapValidity`, issue #19), must fit its sentence
under the ranking LM (:class:`ContextFit`) and may not sit inside a term (:class:`KeepTerms`,
issue #33). Presets:
:class:`Synonym` (RAID's synonym swap) and :class:`QPA` (TH-Bench's
quality-preserving constraints added to any engine attack). Assemble a new
attack with :class:`WordSubstitution` (no subclassing).
"""
from ._doc import Candidate, Doc
from .candidates import CandidateGenerator, MaskedLMFill, VectorNeighbours, WordNetSynonyms
from .constraints import CandidateConstraint, MLMProbability, NotStopword, SamePOS, SwapValidity, WordCosine
from .context import CONSENSUS_MARGIN, CONTEXT_MARGIN, ContextFit, KeepTerms, context_checks
from .engine import Parts, WordSubstitution
from .hmgc import HMGC
from .importance import SurrogateImportance
from .rankers import Predictability, WordRanker
from .llm_candidates import LLMCandidates
from .raft import RAFT
from .presets import CANDIDATE_SOURCES, QPA, Synonym, qpa_constraints
from .senses import SenseSynonyms
from .scoring import CausalLMScore, MLMScore, ProposalOrder, Scorer
from .search import DetectorGreedy, Search, TopScore, sentence_variant
from ..text_constraints import (FleschChange, MaxWordsChanged, PerplexityChange, SentenceEntailment,
                                SentenceSimilarity, TextConstraint, relative_change)

__all__ = [
    "Candidate", "Doc", "CandidateGenerator", "MaskedLMFill", "VectorNeighbours", "WordNetSynonyms",
    "CandidateConstraint", "MLMProbability", "NotStopword", "SamePOS", "WordCosine", "WordSubstitution",
    "QPA", "Synonym", "CausalLMScore", "MLMScore", "Scorer", "Search", "TopScore", "sentence_variant",
    "FleschChange", "MaxWordsChanged", "PerplexityChange", "SentenceSimilarity", "TextConstraint",
    "qpa_constraints", "relative_change", "HMGC", "SurrogateImportance", "Parts", "WordRanker", "DetectorGreedy",
    "RAFT", "LLMCandidates", "Predictability", "ProposalOrder", "SenseSynonyms", "SwapValidity",
    "SentenceEntailment", "CANDIDATE_SOURCES", "ContextFit", "KeepTerms", "CONTEXT_MARGIN", "CONSENSUS_MARGIN",
    "context_checks",
]
