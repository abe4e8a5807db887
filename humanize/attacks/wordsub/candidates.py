"""Candidate generators: what a word could become (TextAttack's "transformations", batched per document).

Each generator's ``propose(doc, positions)`` returns ``{word index: [Candidate, ...]}``
for the eligible word positions, doing its model work for the whole document at
once: one matrix product for the word-vector neighbours, batched masked-LM
passes for fill-in, dictionary look-ups for WordNet.
"""
from __future__ import annotations

import math
from numbers import Integral
from typing import Any

import numpy as np

from humanize.params import ParamsMixin
from humanize.validation import HasMethods, Interval

from ._doc import Candidate, Doc

__all__ = ["CandidateGenerator", "WordNetSynonyms", "VectorNeighbours", "MaskedLMFill"]


def _usable(word: str, original: str) -> bool:
    return word.isalpha() and word.lower() != original.lower()


class CandidateGenerator(ParamsMixin):
    """Base class: ``propose(doc, positions) -> {word index: [Candidate]}``."""

    source = "candidates"

    def propose(self, doc: Doc, positions: list[int]) -> dict[int, list[Candidate]]:
        raise NotImplementedError


class WordNetSynonyms(CandidateGenerator):
    """Single-word lemmas of the word's WordNet synsets (all parts of speech; the POS constraint filters)."""

    source = "wordnet"

    _parameter_constraints = {"max_candidates": [Interval(Integral, 1, None)]}

    def __init__(self, max_candidates: int = 20):
        self._init_params(locals())

    def _synonyms(self, wn, word: str) -> list[str]:
        cache = self.__dict__.setdefault("_cache", {})
        key = word.lower()
        found = cache.get(key)
        if found is None:
            seen: dict[str, None] = {}
            for syn in wn.synsets(key):
                for lemma in syn.lemma_names():
                    if "_" not in lemma and "-" not in lemma and _usable(lemma, key):
                        seen.setdefault(lemma, None)
            found = cache[key] = list(seen)[: self.max_candidates]
        return found

    def propose(self, doc: Doc, positions: list[int]) -> dict[int, list[Candidate]]:
        from humanize.models import load_wordnet

        wn = load_wordnet()
        return {i: [Candidate(i, c, self.source) for c in self._synonyms(wn, doc.word(i))] for i in positions}


class VectorNeighbours(CandidateGenerator):
    """The ``k`` nearest words by cosine in a static word-vector space (GloVe 6B 50-d offline).

    Searched among the ``vocabulary`` most frequent words of the space (GloVe's
    rows are in frequency order), for all the document's words in one matrix product.
    """

    source = "vectors"

    _parameter_constraints = {
        "vectors": ["str", HasMethods("vector")],
        "k": [Interval(Integral, 1, None)],
        "vocabulary": [Interval(Integral, 2, None)],
    }

    def __init__(self, vectors: Any = "glove-6b-50d", k: int = 10, vocabulary: int = 50_000):
        self._init_params(locals())

    def _space(self):
        from humanize.models import load_word_vectors

        wv = load_word_vectors(self.vectors) if isinstance(self.vectors, str) else self.vectors
        key = (id(wv), self.vocabulary)
        cached = self.__dict__.get("_unit")
        if cached is None or cached[0] != key:
            m = np.asarray(wv.matrix[: self.vocabulary], dtype=np.float32)
            unit = m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)
            cached = self.__dict__["_unit"] = (key, unit)
        return wv, cached[1]

    def propose(self, doc: Doc, positions: list[int]) -> dict[int, list[Candidate]]:
        wv, unit = self._space()
        known = [i for i in positions if doc.word(i) in wv]
        out: dict[int, list[Candidate]] = {i: [] for i in positions}
        if not known:
            return out
        q = np.stack([wv.vector(doc.word(i)) for i in known]).astype(np.float32)
        q /= np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-12)
        sims = q @ unit.T
        want = min(self.k + 1, unit.shape[0] - 1)
        top = np.argpartition(-sims, want, axis=1)[:, : want + 1]
        for row, i in enumerate(known):
            idx = top[row][np.lexsort((top[row], -sims[row, top[row]]))]  # by similarity, ties by row
            word = doc.word(i)
            picks = [wv.words[j] for j in idx if _usable(wv.words[j], word)][: self.k]
            out[i] = [Candidate(i, c, self.source) for c in picks]
        return out


class MaskedLMFill(CandidateGenerator):
    """Masked-LM fill-in (RAID: ``bert-base-cased``, top 20, a window of 20 words each side).

    Each eligible word is masked in its window; all windows of a document go
    through the model in batches of ``batch_size``. Candidates are whole-word
    alphabetic vocabulary entries, with their fill-in probability in ``mlm_prob``.
    """

    source = "mlm"
    _model_params = ("model",)

    _parameter_constraints = {
        "model": ["model"],
        "top_k": [Interval(Integral, 1, None)],
        "window": [Interval(Integral, 0, None)],
        "batch_size": [Interval(Integral, 1, None)],
    }

    def __init__(self, model: Any = "bert-base-cased", top_k: int = 20, window: int = 20, batch_size: int = 32,
                 device: Any = None):
        self._init_params(locals())

    def loaded(self):
        from humanize.models import load_masked_lm

        lm = load_masked_lm(self.model, device=self.device) if isinstance(self.model, str) else self.model
        if lm.kind != "masked_lm":
            raise ValueError(f"MaskedLMFill needs a masked LM, got a {lm.kind} ({lm.resolved})")
        return lm

    def _allowed_mask(self, lm) -> np.ndarray:
        cached = self.__dict__.get("_allowed")
        if cached is None or cached[0] is not lm:
            tok = lm.tokenizer
            vocab = tok.convert_ids_to_tokens(list(range(len(tok))))
            special = set(tok.all_special_tokens)
            ok = np.array([isinstance(t, str) and t.isalpha() and t not in special for t in vocab])
            cached = self.__dict__["_allowed"] = (lm, ok, vocab)
        return cached[1], cached[2]

    def propose(self, doc: Doc, positions: list[int]) -> dict[int, list[Candidate]]:
        import torch

        from humanize.models.text import model_input

        out: dict[int, list[Candidate]] = {i: [] for i in positions}
        if not positions:
            return out
        lm = self.loaded()
        tok = lm.tokenizer
        if tok.mask_token is None:
            raise ValueError(f"MaskedLMFill: the tokenizer of {lm.resolved} has no mask token")
        allowed, vocab = self._allowed_mask(lm)
        windows = [doc.window(i, self.window, tok.mask_token)[0] for i in positions]
        windows, _ = model_input(windows, where=f"masked LM {lm.resolved}")
        penalty = torch.as_tensor(np.where(allowed, 0.0, -np.inf), dtype=torch.float32)
        for b in range(0, len(positions), self.batch_size):
            enc = tok(windows[b: b + self.batch_size], return_tensors="pt", padding=True, truncation=True)
            enc = {k: v.to(lm.device) for k, v in enc.items()}
            with torch.inference_mode():
                logits = lm.model(**enc).logits.float()
            doc.add_cost(forward_passes=1, queries=len(enc["input_ids"]),
                         mlm_tokens=int(enc["attention_mask"].sum()))
            rows, cols = (enc["input_ids"] == tok.mask_token_id).nonzero(as_tuple=True)
            seen = set()
            for r, c in zip(rows.tolist(), cols.tolist()):
                if r in seen:  # the first mask of a row is ours
                    continue
                seen.add(r)
                i = positions[b + r]
                probs = torch.softmax(logits[r, c].cpu(), dim=-1)
                masked = torch.log(probs) + penalty
                top = torch.topk(masked, min(self.top_k + 1, len(vocab)))
                word = doc.word(i)
                picks = [(vocab[j], float(probs[j])) for j, v in zip(top.indices.tolist(), top.values.tolist())
                         if math.isfinite(v) and vocab[j].lower() != word.lower()][: self.top_k]
                out[i] = [Candidate(i, w, self.source, mlm_prob=p) for w, p in picks]
        return out
