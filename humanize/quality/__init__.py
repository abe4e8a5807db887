"""What an attack costs the text: TH-Bench Section 3.3 / Table 2 quality meters.

>>> from humanize.quality import QualityMeter
>>> QualityMeter().score(["The cat sat on the mat."], ["The cat sat on a mat."])  # doctest: +SKIP

Perplexity (fluency), cosine of all-MiniLM-L6-v2 embeddings and ROUGE-L F1
(semantic / lexical consistency), Flesch reading ease and its change
(complexity), plus word and character edit rates; the validity of every word swap
(WordNet: synonym, antonym, sister term, ...; :mod:`humanize.quality.validity`) and whether it fits
its sentence under the perplexity meter's LM (:mod:`humanize.quality.context`). Opt-in
meaning meters: bidirectional NLI ``entailment`` (a hub NLI model) and an LLM ``judge``
(any :mod:`humanize.generation` back end). Meters of your own: :class:`PairMeter`
(:mod:`humanize.quality.custom`), given as ``QualityMeter(custom=[...])``.

Each built-in meter is a registered :class:`PairMeter` too (:func:`available`, ``humanize-bench list meters``):
:class:`Perplexity`, :class:`Cosine`, :class:`RougeL`, :class:`Flesch`, :class:`EditRate`,
:class:`SwapValidity`, :class:`Entailment`, :class:`MeaningJudge`; :class:`QualityMeter` is their
combination (:meth:`QualityMeter.members`).
"""
from .as_read import AsRead
from .context import CONTEXT_THRESHOLD, context_deltas
from .custom import PairMeter, available, get, origin, register, resolve
from .entailment import DEFAULT_NLI_MODEL, Entailment, entailment
from .judge import MeaningJudge, judge_prompt
from .lexical import EditRate, Flesch, RougeL, edit_rate, flesch_reading_ease, rouge_l
from .meter import METERS, OPTIONAL_METERS, QualityMeter, summarize
from .perplexity import Perplexity, perplexity
from .similarity import Cosine, semantic_similarity
from .validity import (INVALID_CLASSES, SWAP_CLASSES, VALID_CLASSES, Swap, SwapValidity, classified_swaps,
                       classify_swap, summarize_validity, swap_validity, word_swaps)

__all__ = ["QualityMeter", "METERS", "summarize", "perplexity", "semantic_similarity", "rouge_l",
           "flesch_reading_ease", "edit_rate", "swap_validity", "summarize_validity", "classify_swap", "word_swaps",
           "classified_swaps", "Swap", "SWAP_CLASSES", "VALID_CLASSES", "INVALID_CLASSES",
           "OPTIONAL_METERS", "CONTEXT_THRESHOLD", "context_deltas", "entailment", "DEFAULT_NLI_MODEL", "MeaningJudge", "judge_prompt", "PairMeter",
           "Perplexity", "Cosine", "RougeL", "Flesch", "EditRate", "SwapValidity", "Entailment", "AsRead", "available", "get",
           "origin", "register", "resolve"]
