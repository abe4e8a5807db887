"""Attack blending: one attack per sentence (TH-Bench, Discussion "Attack Blending" and Appendix H).

The text is cut into sentences (:func:`humanize.text.sentence_spans`; the text between
sentences is kept) and each sentence gets exactly one of the attacks, chosen by ``policy``:

- ``"alternate"``: sentence ``i`` gets ``attacks[i % n]`` (TH-Bench App. H alternates Dipper and RAFT);
- ``"random"``: drawn per sentence from a generator seeded by Blend's ``seed`` and the document;
- ``"greedy"``: every attack is tried on every sentence and the one with the best detector-score drop
  per unit of quality loss is kept (the targeted selection App. H proposes). ``drop = score(original)
  - score(attacked)`` (higher score = more machine-like); ``loss`` is ``1 - cosine`` of MiniLM
  embeddings by default (``meter``), floored at ``LOSS_FLOOR`` so an unchanged or near-identical
  rewrite does not divide by zero. Ties go to the larger drop, then to the earlier attack; a NaN
  score or loss ranks last. The best attack is kept even when no attack lowers the score.

Each attack runs on the sentences with its own seed (a sentence's output depends on the sentence
text), through ``attack.batch`` over all chosen sentences of all documents at once, so a rewriting
attack sends them to its generator in one call. Edits are the sentences' edits shifted to document
offsets, so ``apply_edits(original, edits) == text``.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence, Union

import numpy as np

from humanize.validation import InstanceOf, Options, SequenceOf

from .base import Attack, AttackResult, BatchAttack, Edit, document_random
from .composite import CompositeAttack
from humanize.exceptions import InvalidParameterError
from humanize.text import sentence_spans

__all__ = ["Blend", "POLICIES", "QUALITY_LOSSES", "LOSS_FLOOR"]

POLICIES = ("alternate", "random", "greedy")
#: Quality losses ``meter`` can name: 1 - MiniLM cosine, 1 - ROUGE-L F1, word edit rate.
QUALITY_LOSSES = ("cosine", "rouge_l", "edit_rate")
#: The smallest quality loss greedy divides by.
LOSS_FLOOR = 1e-3
#: Counts summed over a document's sentences into its info: the generators' usage, and the texts a guided
#: attack sent to its detector (RAFT's target, a guided paraphrase's guide).
_USAGE = ("llm_queries", "llm_tokens_in", "llm_tokens_out", "guide_queries", "detector_queries")


def _quality_loss(meter: Any, originals: list[str], attacked: list[str]) -> np.ndarray:
    """Per-pair quality loss (0 = no loss) for greedy selection."""
    if not originals:
        return np.zeros(0)
    if callable(meter):
        loss = np.asarray(meter(list(originals), list(attacked)), dtype=float).reshape(-1)
        if loss.shape != (len(originals),):
            raise ValueError(f"Blend: meter returned {loss.size} values for {len(originals)} sentence pairs")
        return loss
    if meter in (None, "cosine"):
        from humanize.quality import semantic_similarity

        cos = np.asarray(semantic_similarity(originals, attacked), dtype=float)
        return np.where(np.isnan(cos), 1.0, 1.0 - cos)
    if meter == "rouge_l":
        from humanize.quality import rouge_l

        return np.array([1.0 - rouge_l(a, b) for a, b in zip(originals, attacked)])
    from humanize.quality import edit_rate

    return np.array([edit_rate(a, b)[0] for a, b in zip(originals, attacked)])


class Blend(CompositeAttack, BatchAttack):
    """Apply one of several attacks to each sentence (TH-Bench App. H).

    attacks : list of :class:`Attack` objects, registered names (built with their defaults) or tables
        ``{"name": ..., **params}`` (:mod:`humanize.attacks.composite`)
    policy : ``"alternate"``, ``"random"`` or ``"greedy"`` (see the module docstring)
    detector : for greedy: a detector object or registered name (``humanize.detectors.get``)
    meter : for greedy: ``"cosine"`` (None), ``"rouge_l"``, ``"edit_rate"``, or a callable
        ``(originals, attacked) -> losses`` (one float per pair, 0 = no loss)
    seed : drives only ``"random"``; every attack keeps its own seed
    """

    name = "blend"
    has_rate = False
    _version_prefix = "1:"

    _parameter_constraints = {
        "attacks": [SequenceOf(Attack, "str", dict, nonempty=True,
                               name="a non-empty list of Attack objects, names or tables")],
        "policy": [Options(str, POLICIES)],
        "detector": ["str", InstanceOf("humanize.detectors.base:Detector", name="a Detector"), None],
        "meter": [Options(str, QUALITY_LOSSES), "callable", None],
    }

    def __init__(self, attacks: Sequence[Union[Attack, str, dict]], policy: str = "alternate",
                 detector: Any = None, meter: Union[None, str, Callable] = None, seed: int = 0):
        self._init_params(locals())

    @property
    def needs_model(self) -> bool:
        """A blend loads a model when one of its attacks does, or to choose greedily (a detector, a meter)."""
        return self.policy == "greedy" or super().needs_model

    @property
    def batches(self) -> bool:
        """A blend works a batch out together when one of its attacks does, or to choose greedily (one
        detector call for every sentence of the batch)."""
        return self.policy == "greedy" or super().batches

    # -- parameters -----------------------------------------------------------------
    def _validate(self) -> None:
        super()._validate()
        if isinstance(self.detector, str):
            from humanize.detectors.registry import resolve as resolve_detector

            resolve_detector(self.detector)

    def _check(self) -> None:
        if self.policy == "greedy" and self.detector is None:
            raise InvalidParameterError("Blend: policy='greedy' needs a detector (an object or a name such as "
                                        "'log_likelihood'), got detector=None")

    def _detector(self):
        d = self.detector
        if isinstance(d, str):
            built = self.__dict__.setdefault("_built_detector", {})
            if d not in built:
                from humanize.detectors import get

                built[d] = get(d)
            d = built[d]
        return d

    # -- running --------------------------------------------------------------------
    def _choices(self, text: str, n_sentences: int) -> list[int]:
        n = len(self.attacks)
        if self.policy == "alternate":
            return [i % n for i in range(n_sentences)]
        rnd = document_random(int(self.seed), self.name, text)
        return [rnd.randrange(n) for _ in range(n_sentences)]

    def _greedy(self, steps: list[Attack], sentences: list[str]) -> tuple[list[int], list[AttackResult], list]:
        """Per sentence: the chosen attack, its result, and (drop, loss) of the choice; all tried results too."""
        tried = [s.batch(sentences) for s in steps]
        if not sentences:
            return [], tried, []
        texts = list(dict.fromkeys(sentences + [r.text for rs in tried for r in rs]))
        scores = dict(zip(texts, np.asarray(self._detector().score(texts), dtype=float).tolist()))
        picks, stats = [], []
        loss = [_quality_loss(self.meter, sentences, [r.text for r in rs]) for rs in tried]
        for j, s in enumerate(sentences):
            best, best_key = 0, None
            for k, rs in enumerate(tried):
                drop, lo = scores[s] - scores[rs[j].text], float(loss[k][j])
                ratio = drop / max(lo, LOSS_FLOOR)
                key = (-math.inf, -math.inf) if math.isnan(ratio) else (ratio, drop)
                if best_key is None or key > best_key:
                    best, best_key, best_stats = k, key, (drop, lo)
            picks.append(best)
            stats.append(best_stats)
        return picks, tried, stats

    def _results(self, texts: Sequence[str]) -> list[AttackResult]:
        steps = self.steps()
        names = [n for n, _ in self.named_attacks()]
        spans = [sentence_spans(t) for t in texts]
        owners = [(d, j) for d, sp in enumerate(spans) for j in range(len(sp))]
        sentences = [texts[d][a:b] for d, sp in enumerate(spans) for a, b in sp]
        usage: list[dict] = [{} for _ in texts]
        stats: list = []
        if self.policy == "greedy":
            picks, tried, stats = self._greedy(steps, sentences)
            chosen = [tried[k][i] for i, k in enumerate(picks)]
            for rs in tried:
                for (d, _), r in zip(owners, rs):
                    _add_usage(usage[d], r.info)
        else:
            picks = [k for d, t in enumerate(texts) for k in self._choices(t, len(spans[d]))]
            chosen: list = [None] * len(sentences)
            for k, step in enumerate(steps):
                idx = [i for i, p in enumerate(picks) if p == k]
                if idx:
                    for i, r in zip(idx, step.batch([sentences[i] for i in idx])):
                        chosen[i] = r
                        _add_usage(usage[owners[i][0]], r.info)
        out, i = [], 0
        params = self.get_params()
        for d, text in enumerate(texts):
            pieces, edits, pos, used, doc_stats = [], [], 0, [], []
            for a, b in spans[d]:
                r = chosen[i]
                pieces += [text[pos:a], r.text]
                pos = b
                for s, t, rep in r.edits:
                    if edits and s == t and edits[-1][0] == edits[-1][1] == s + a:
                        edits[-1] = Edit(s + a, s + a, edits[-1][2] + rep)  # two insertions where sentences touch
                    else:
                        edits.append(Edit(s + a, t + a, rep))
                used.append(names[picks[i]])
                if stats:
                    doc_stats.append(stats[i])
                i += 1
            pieces.append(text[pos:])
            info = {"per_sentence": used, **usage[d]}
            if self.policy == "greedy":
                info["drop"] = [s[0] for s in doc_stats]
                info["quality_loss"] = [s[1] for s in doc_stats]
            out.append(AttackResult(original=text, text="".join(pieces), attack=self.name, params=dict(params),
                                    _edits=edits, info=info))
        return out


def _add_usage(total: dict, info: dict) -> None:
    for key in _USAGE:
        if key in info:
            total[key] = total.get(key, 0) + info[key]
