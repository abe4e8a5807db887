"""HMGC's word importance: surrogate-detector importance mixed with LM perplexity change (Zhou et al. 2024).

HMGC ("Humanizing Machine-Generated Content", COLING 2024: its "dual" word
importance ranking, the authors' ``GreedyDualWIR`` search) orders the words to swap by

    importance = weight x norm(surrogate importance) + (1 - weight) x norm(LM importance)

with ``weight`` = 0.8 (their ``alpha`` = 0.2 on the LM part) and ``norm`` the
min-max normalisation over the ranked words (all equal: ``1/n`` each, as in
their code). The parts:

- surrogate importance, ``method="gradient"`` (HMGC's default; differentiable
  surrogates, i.e. :class:`~humanize.detectors.lm_d.LMDetector` and anything
  exposing a fitted torch ``model_`` and fast ``tokenizer_``): the gradient of the
  surrogate's log P(machine) with respect to the input token embeddings; a
  word's importance is the L1 norm of the mean gradient over its tokens (found
  through the tokenizer's offset mapping). Words past the surrogate's
  ``max_tokens`` window get 0: they cannot move its score. One forward and one
  backward pass per document.
- ``method="deletion"`` (any other surrogate, zero-shot ones included): the drop
  of the surrogate's score when the word is deleted; the document and all its
  one-word deletions go to the surrogate in ONE ``score`` call (:data:`DELETION_BATCH` texts a call for a
  longer document: memory bounded by that many copies of the text, not one per word).
- LM importance: the rise of the causal LM's perplexity when the word is
  deleted. HMGC measures it on the whole text; here on the word's *sentence*
  (with and without the word, all sentences of a document batched in one
  :func:`humanize.quality.perplexity.perplexity` call), so a document costs a
  few batched passes over short inputs instead of one document-length pass per word.

Ties are broken by word position. Costs go to ``doc.cost``: ``surrogate_queries``
and ``detector_queries`` (texts the surrogate scored for the ranking; the engine
adds detector queries to ``queries``), ``queries`` (the LM's inputs) and ``forward_passes``.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from humanize.models import DEFAULT_RANKING_LM

from ._doc import Doc
from .rankers import WordRanker
from numbers import Integral, Real

from humanize.params import ComponentParam
from humanize.validation import Interval, Options

from ..targets import THRESHOLD, QueriesDetector

__all__ = ["SurrogateImportance", "delete_span", "min_max"]

_METHODS = ("auto", "gradient", "deletion")
#: The most texts (each a document with one word deleted) the deletion importance sends in one ``score`` call:
#: a document of up to ``DELETION_BATCH - 1`` ranked words is one call, as before; a longer one holds
#: ``DELETION_BATCH`` copies of itself at a time, never one per word (issue #22).
DELETION_BATCH = 512


def delete_span(text: str, start: int, end: int) -> str:
    """``text`` without ``text[start:end]`` and one adjacent whitespace character (the following one if any)."""
    if end < len(text) and text[end].isspace():
        end += 1
    elif start > 0 and text[start - 1].isspace():
        start -= 1
    return text[:start] + text[end:]


def min_max(values: np.ndarray) -> np.ndarray:
    """Min-max normalisation to [0, 1]; all equal -> ``1/n`` each (HMGC). NaN counts as the minimum."""
    v = np.asarray(values, dtype=float)
    if len(v) == 0:
        return v
    finite = np.isfinite(v)
    if not finite.any():
        return np.full(len(v), 1.0 / len(v))
    v = np.where(finite, v, np.min(v[finite]))
    lo, hi = float(v.min()), float(v.max())
    if math.isclose(hi - lo, 0.0, abs_tol=1e-12):
        return np.full(len(v), 1.0 / len(v))
    return (v - lo) / (hi - lo)


def differentiable(detector) -> bool:
    """Whether ``detector`` exposes a fitted torch classifier and a fast tokenizer (gradient importance)."""
    model, tok = getattr(detector, "model_", None), getattr(detector, "tokenizer_", None)
    return (model is not None and hasattr(model, "get_input_embeddings") and tok is not None
            and bool(getattr(tok, "is_fast", False)) and hasattr(detector, "classes_"))


class SurrogateImportance(QueriesDetector, WordRanker):
    """HMGC's importance ranking: ``weight`` x surrogate importance + (1 - ``weight``) x LM perplexity change.

    ``surrogate`` is a :class:`~humanize.detectors.target.Target` (queried as is, never
    refit; ``train`` is then unused) or a detector name, table or object, fit on ``train``
    with ``seed`` when it learns (:func:`.targets.ready_target`: the same per-process
    cache as :class:`~.search.DetectorGreedy`, so the attack fits it once). The gradient
    method reads the fitted surrogate's model directly: it is not a ``score`` query, so a
    Target's ``queries`` does not count it (the document's ``detector_queries`` does).
    ``method``: ``"gradient"``, ``"deletion"`` or ``"auto"`` (gradient where the
    fitted surrogate is differentiable). ``lm`` is the causal LM of the
    perplexity part (a name or a loaded model); ``batch_size`` its batch.
    ``skip_below``: when the surrogate already scores the document below it,
    no word is ranked (``rank`` returns ``[]``, the notes say ``stopped =
    "stop_below"``): HMGC, like TextAttack, leaves a text the surrogate already
    calls human, without paying for the ranking, candidates or search.
    """

    _model_params = ("lm",)
    _detector_param = "surrogate"

    def __init__(self, surrogate: Any = "tfidf_lr", train: Any = "demo", weight: float = 0.8, method: str = "auto",
                 lm: Any = DEFAULT_RANKING_LM, seed: int = 0, device: Any = None, batch_size: int = 16,
                 skip_below: Any = None):
        self._init_params(locals())

    _component_params = {"surrogate": ComponentParam("detector", train="train"), "train": ComponentParam("training_set")}
    _parameter_constraints = {
        "weight": [Interval(Real, 0, 1)],
        "method": [Options(str, _METHODS)],
        "lm": ["model"],
        "seed": ["seed"],
        "batch_size": [Interval(Integral, 1, None)],
        "skip_below": THRESHOLD,
    }

    def _validate(self) -> None:
        super()._validate()
        self.__dict__.pop("_ready", None)

    def _check(self) -> None:
        from ..targets import check_detector_spec, check_train_spec

        check_detector_spec("SurrogateImportance", "surrogate", self.surrogate)
        check_train_spec("SurrogateImportance", self.train)

    # -- the surrogate (``ready()``: fitted once per process, shared with the search) ----------
    def resolved_method(self) -> str:
        """``"gradient"`` or ``"deletion"``: what ``method`` means for this (fitted) surrogate."""
        det = self.ready()
        if self.method == "deletion":
            return "deletion"
        if differentiable(det):
            return "gradient"
        if self.method == "gradient":
            raise ValueError(f"SurrogateImportance: method='gradient' needs a differentiable surrogate (a fitted "
                             f"torch classifier with a fast tokenizer, e.g. 'lm_d'); {det.name!r} is not: use "
                             f"method='deletion' or 'auto'")
        return "deletion"

    def _score(self, doc: Doc, texts: list[str]) -> np.ndarray:
        det = self.ready()
        scores = self.target().score(texts)  # counted by the caller's Target, when one was given
        # texts the surrogate scored: detector queries (the engine adds them to ``queries``)
        doc.add_cost(surrogate_queries=len(texts), detector_queries=len(texts))
        if hasattr(det, "model_"):
            doc.add_cost(forward_passes=-(-len(texts) // int(getattr(det, "batch_size", 1) or 1)))
        return scores

    def surrogate_importance(self, doc: Doc, positions: list[int], base: Any = None) -> np.ndarray:
        """Raw surrogate importance of each word in ``positions`` (higher: more worth changing).

        ``base``: the surrogate's score of the document when already known (deletion needs it).
        """
        if not positions:
            return np.zeros(0)
        if self.resolved_method() == "gradient":
            return self._gradient(doc, positions)
        # the document (unless its score is known) and its one-word deletions, scored DELETION_BATCH texts a
        # call: each text is as long as the document, so only that many are held at once
        n = len(positions) + (base is None)
        scores = []
        for lo in range(0, n, DELETION_BATCH):
            texts = [doc.text if (base is None and j == 0) else
                     delete_span(doc.text, *doc.words[positions[j - (base is None)]])
                     for j in range(lo, min(n, lo + DELETION_BATCH))]
            scores.append(np.asarray(self._score(doc, texts), dtype=float))
            del texts
        scores = np.concatenate(scores)
        if base is None:
            return scores[0] - scores[1:]
        return float(base) - scores

    def _gradient(self, doc: Doc, positions: list[int]) -> np.ndarray:
        import torch

        from humanize.models.text import model_input

        det = self.ready()
        model, tok = det.model_, det.tokenizer_
        text = model_input([doc.text], where="SurrogateImportance surrogate")[0][0]  # same length: offsets hold
        limit = int(getattr(det, "max_tokens", None) or getattr(tok, "model_max_length", 512))
        enc = tok(text, truncation=True, max_length=limit, return_offsets_mapping=True, return_tensors="pt")
        offsets = enc.pop("offset_mapping")[0].tolist()
        device = next(model.parameters()).device
        enc = {k: v.to(device) for k, v in enc.items()}
        classes = [str(c) for c in det.classes_]
        if "human" not in classes:
            raise ValueError(f"SurrogateImportance: the surrogate was fit on {classes}, without a 'human' class")
        human = classes.index("human")
        was_training = model.training
        model.eval()
        try:
            with torch.enable_grad():
                embeds = model.get_input_embeddings()(enc["input_ids"]).detach().requires_grad_(True)
                rest = {k: v for k, v in enc.items() if k != "input_ids"}
                logp = torch.log_softmax(model(inputs_embeds=embeds, **rest).logits.float()[0], dim=-1)
                others = [j for j in range(len(classes)) if j != human]
                target = torch.logsumexp(logp[others], dim=0)  # log P(not human) = log P(machine) when binary
                (grad,) = torch.autograd.grad(target, embeds)
        finally:
            model.train(was_training)
        doc.add_cost(surrogate_queries=1, detector_queries=1, forward_passes=1)
        g = grad[0].float().cpu().numpy()
        starts = np.array([a for a, b in offsets])
        ends = np.array([b for a, b in offsets])
        real = ends > starts  # special tokens have empty spans
        out = np.zeros(len(positions))
        for j, i in enumerate(positions):
            s, e = doc.words[i]
            tokens = np.flatnonzero(real & (starts < e) & (ends > s))
            if len(tokens):  # words past the window have no token: 0
                out[j] = float(np.abs(g[tokens].mean(axis=0)).sum())
        return out

    # -- the LM part ----------------------------------------------------------------------
    def lm_importance(self, doc: Doc, positions: list[int]) -> np.ndarray:
        """Perplexity of each word's sentence without the word minus with it (all sentences batched)."""
        from humanize.quality.perplexity import perplexity

        if not positions:
            return np.zeros(0)
        pairs = []
        for i in positions:
            lo, hi = doc.sentences[doc.sentence_of[i]]
            s, e = doc.words[i]
            lo, hi = min(lo, s), max(hi, e)
            sentence = doc.text[lo:hi]
            pairs.append((sentence, delete_span(sentence, s - lo, e - lo)))
        unique = list(dict.fromkeys(t for p in pairs for t in p))
        ppl = dict(zip(unique, np.asarray(perplexity(unique, self.lm, batch_size=int(self.batch_size),
                                                     device=self.device), dtype=float)))
        doc.add_cost(queries=len(unique), forward_passes=-(-len(unique) // int(self.batch_size)))
        return np.array([ppl[without] - ppl[with_] for with_, without in pairs])

    # -- ranking --------------------------------------------------------------------------
    def importance(self, doc: Doc, positions: list[int], base: Any = None) -> dict[str, np.ndarray]:
        """``{"surrogate", "lm"}`` (raw), their normalised forms and ``"combined"``, aligned with ``positions``."""
        positions = list(positions)
        w = float(self.weight)
        zeros = np.zeros(len(positions))
        surr = self.surrogate_importance(doc, positions, base) if w > 0 else zeros
        lm = self.lm_importance(doc, positions) if w < 1 else zeros
        surr_n, lm_n = min_max(surr), min_max(lm)
        return {"surrogate": surr, "lm": lm, "surrogate_norm": surr_n, "lm_norm": lm_n,
                "combined": w * surr_n + (1.0 - w) * lm_n}

    def rank(self, doc: Doc, positions: list[int]) -> list[int]:
        positions = list(positions)
        if not positions:
            return []
        base = None
        if self.skip_below is not None:
            base = float(self._score(doc, [doc.text])[0])
            if base < self.skip_below:  # already called human: nothing to attack (the search's notes)
                doc.notes.update(detector_score_before=base, detector_score_after=base, stopped="stop_below",
                                 kept_order=[], score_trace=[])
                return []
        combined = self.importance(doc, positions, base)["combined"]
        order = np.lexsort((np.asarray(positions), -combined))  # best first, ties by position
        return [positions[j] for j in order]
