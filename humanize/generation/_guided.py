"""Guided decoding for :meth:`LocalChat.generate_guided` (Adversarial Paraphrasing, Cheng et al., NeurIPS 2025).

The decode loop is :class:`~humanize.generation.local.LocalChat`'s own (left-padded prefill,
one token per step on the key/value cache); only the choice of the next token differs: the
step's candidates (top-``top_p`` within top-``top_k`` of the model's distribution) are handed,
for every live row of the batch at once, to a chooser, which picks one per row (it is also told
which request each row decodes).

The chooser sees texts: each row's answer so far with each candidate token appended, so a guide
scores them through its text interface (``score(list of texts)``), one call per step, or
incrementally on its own key/value cache (:mod:`humanize.detectors.lm_incremental`).

``min_new_tokens`` (per request): before a row's answer has that many tokens, the stop tokens are
not candidates (their probability is set to 0 before the top-k / top-p cut, as transformers'
``MinNewTokensLogitsProcessor`` does with EOS). Without it a guide that scores the unfinished
answer as more human than any continuation ends the answer after a few tokens: a truncated
"paraphrase" that evades by dropping what the text said.
"""
from __future__ import annotations

from numbers import Integral, Real
from typing import Any

from humanize.validation import Interval, validate_parameter_constraints

from .decoding import Decoder, decode_answer, nucleus

__all__ = ["GuidedDecoder", "candidate_ids", "check_chooser", "check_min_new_tokens"]

_CONSTRAINTS = {"top_k": [Interval(Integral, 1, None)], "top_p": [Interval(Real, 0, 1, closed="right")]}


def check_chooser(owner: str, choose: Any, top_k: Any, top_p: Any) -> None:
    """The chooser is callable; ``top_k`` an int >= 1; ``top_p`` in (0, 1]."""
    if not callable(choose):
        raise TypeError(f"{owner}: choose must be callable (partials, candidates, requests) -> indices, "
                        f"got {type(choose).__name__}")
    validate_parameter_constraints(owner, _CONSTRAINTS, {"top_k": top_k, "top_p": top_p})


def check_min_new_tokens(owner: str, value: Any, n: int) -> list[int]:
    """``min_new_tokens`` as one int >= 0 per request (an int applies to all)."""
    values = [value] * n if isinstance(value, Integral) and not isinstance(value, bool) else value
    try:
        values = list(values)
    except TypeError:
        values = None
    if values is None or len(values) != n or any(isinstance(v, bool) or not isinstance(v, Integral) or v < 0
                                                 for v in values):
        raise ValueError(f"{owner}: min_new_tokens must be an int >= 0 or one per request ({n}), "
                         f"got {str(value)[:60]}")
    return [int(v) for v in values]


def candidate_ids(probs, top_k: int, top_p: float, exclude: frozenset = frozenset()) -> list[int]:
    """The candidate token ids of one step: the ``top_k`` most probable (probability descending, ties by
    token id), cut to the smallest prefix whose renormalised mass reaches ``top_p`` (at least one).
    ``exclude``: token ids that are not candidates (probability 0), unless nothing else has any."""
    import torch

    drop = sorted(i for i in exclude if 0 <= i < len(probs))
    if drop:
        kept = probs.clone()
        kept[torch.as_tensor(drop, dtype=torch.long)] = 0
        if float(kept.sum()) > 0:
            probs = kept
    k = min(int(top_k), len(probs))
    vals, idx = torch.topk(probs, k)
    idx, by_id = torch.sort(idx)  # canonical order: probability descending, ties by token id
    vals, order = torch.sort(vals[by_id], descending=True, stable=True)
    idx = idx[order]
    total = float(vals.sum())
    n = nucleus(vals / total, top_p) if total > 0 else 1
    return idx[:n].tolist()


class GuidedDecoder(Decoder):
    """:class:`~humanize.generation.decoding.Decoder` whose next token is the chooser's pick among the candidates.

    ``counts[request]``: the number of candidates at each of the request's steps. ``min_new[request]``:
    the request's ``min_new_tokens`` (stop tokens are no candidates before).
    """

    def __init__(self, lm, stop: frozenset, choose, top_k: int, top_p: float, min_new: Any = None):
        super().__init__(lm, stop, 0.0, 1.0)  # temperature 0: no generators are drawn from
        self.choose, self.top_k, self.guide_top_p = choose, top_k, top_p
        self.min_new = list(min_new) if min_new is not None else None
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
            early = self.min_new is not None and len(new[r]) < self.min_new[self._requests[r]]
            cands = candidate_ids(probs[j], self.top_k, self.guide_top_p, self.stop if early else frozenset())
            partial = decode_answer(tok, rows[r], new[r])
            partials.append(partial)
            texts.append([partial if c in self.stop else decode_answer(tok, rows[r], new[r] + [c]) for c in cands])
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
