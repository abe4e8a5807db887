"""Guided decoding for :meth:`LocalChat.generate_guided` (Adversarial Paraphrasing, Cheng et al., NeurIPS 2025).

The decode loop is :class:`~humanize.generation.local.LocalChat`'s own (left-padded prefill,
one token per step on the key/value cache); only the choice of the next token differs: the
step's candidates (top-``top_p`` within top-``top_k`` of the model's distribution) are handed,
for every live row of the batch at once, to a chooser, which picks one per row (it is also told
which request each row decodes).

The chooser sees texts: each row's answer so far with each candidate token appended, so a guide
scores them through its text interface (``score(list of texts)``), one call per step.
Not done yet (issue #23): when the guide is a causal-LM detector sharing the paraphraser's
tokenizer, the shared prefix's state could be computed once per step and the candidates scored
as one-token extensions on its KV cache instead of re-scoring whole texts.
"""
from __future__ import annotations

from numbers import Integral, Real
from typing import Any

from humanize._validation import Interval, validate_parameter_constraints

from .local import _Decoder, _decode_answer, _nucleus

__all__ = ["GuidedDecoder", "candidate_ids", "check_chooser"]

_CONSTRAINTS = {"top_k": [Interval(Integral, 1, None)], "top_p": [Interval(Real, 0, 1, closed="right")]}


def check_chooser(owner: str, choose: Any, top_k: Any, top_p: Any) -> None:
    """The chooser is callable; ``top_k`` an int >= 1; ``top_p`` in (0, 1]."""
    if not callable(choose):
        raise TypeError(f"{owner}: choose must be callable (partials, candidates, requests) -> indices, "
                        f"got {type(choose).__name__}")
    validate_parameter_constraints(owner, _CONSTRAINTS, {"top_k": top_k, "top_p": top_p})


def candidate_ids(probs, top_k: int, top_p: float) -> list[int]:
    """The candidate token ids of one step: the ``top_k`` most probable (probability descending, ties by
    token id), cut to the smallest prefix whose renormalised mass reaches ``top_p`` (at least one)."""
    import torch

    k = min(int(top_k), len(probs))
    vals, idx = torch.topk(probs, k)
    idx, by_id = torch.sort(idx)  # canonical order: probability descending, ties by token id
    vals, order = torch.sort(vals[by_id], descending=True, stable=True)
    idx = idx[order]
    total = float(vals.sum())
    n = _nucleus(vals / total, top_p) if total > 0 else 1
    return idx[:n].tolist()


class GuidedDecoder(_Decoder):
    """:class:`~humanize.generation.local._Decoder` whose next token is the chooser's pick among the candidates.

    ``counts[request]``: the number of candidates at each of the request's steps.
    """

    def __init__(self, lm, stop: frozenset, choose, top_k: int, top_p: float):
        super().__init__(lm, stop, 0.0, 1.0)  # temperature 0: no generators are drawn from
        self.choose, self.top_k, self.guide_top_p = choose, top_k, top_p
        self.counts: dict = {}
        self._requests: list = []

    def counts_for(self, n: int) -> list[list[int]]:
        return [self.counts.get(i, []) for i in range(n)]

    def run(self, rows: list, seeds: list, limits: list, requests: Any = None) -> list[tuple[list, str]]:
        self._requests = list(requests) if requests is not None else list(range(len(rows)))
        for r in self._requests:
            self.counts[r] = []
        return super().run(rows, seeds, limits, requests)

    def _pick(self, logits, gens, *, rows, live, new, done, **_) -> list[int]:
        import torch

        tok = self.lm.tokenizer
        picks = [0] * len(live)
        active = [k for k, r in enumerate(live) if not done[r]]
        if not active:
            return picks
        probs = torch.softmax(logits[active].float().cpu(), dim=-1)
        partials, texts, ids, who = [], [], [], []
        for j, k in enumerate(active):
            r = live[k]
            cands = candidate_ids(probs[j], self.top_k, self.guide_top_p)
            partial = _decode_answer(tok, rows[r], new[r])
            partials.append(partial)
            texts.append([partial if c in self.stop else _decode_answer(tok, rows[r], new[r] + [c]) for c in cands])
            ids.append(cands)
            who.append(self._requests[r])
            self.counts[self._requests[r]].append(len(cands))
        chosen = self.choose(partials, texts, who)
        if not isinstance(chosen, (list, tuple)) or len(chosen) != len(texts):
            raise ValueError(f"LocalChat.generate_guided: choose must return one index per row ({len(texts)}), "
                             f"got {type(chosen).__name__} {str(chosen)[:60]}")
        for j, (k, c) in enumerate(zip(active, chosen)):
            if isinstance(c, bool) or not isinstance(c, Integral) or not 0 <= int(c) < len(ids[j]):
                raise ValueError(f"LocalChat.generate_guided: choose returned {c!r} for row {j}, which has "
                                 f"{len(ids[j])} candidates")
            picks[k] = ids[j][int(c)]
        return picks
