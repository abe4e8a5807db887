"""Candidate scores for the search: how likely each replacement is in its context.

:class:`MLMScore` uses the masked LM's fill-in probability (RAID). Without a
masked LM, :class:`CausalLMScore` reads ``log p(candidate | text before it)``
from ONE forward pass per document: the logits at the token before each word
give the first token of every candidate of that word, and candidates of more
than one token are extended by teacher forcing in the same pass: their tokens
are appended after the document, each attending (4-D attention mask, position
ids of the word) only to the document before its word and to its own earlier
tokens. Scores are exact log-probabilities given the whole prefix, and there
is never a forward pass per candidate. Only the logits that are read are
computed (``logits_to_keep``).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from humanize.params import ParamsMixin
from humanize.models import DEFAULT_RANKING_LM

from ._doc import Candidate, Doc

__all__ = ["Scorer", "MLMScore", "CausalLMScore", "ProposalOrder"]


class Scorer(ParamsMixin):
    """Base class: ``score(doc, cands)`` returns the candidates with ``score`` set (higher is better)."""

    def score(self, doc: Doc, cands: dict[int, list[Candidate]]) -> dict[int, list[Candidate]]:
        raise NotImplementedError


class MLMScore(Scorer):
    """Score = log of the masked LM's fill-in probability (candidates without one score -inf)."""

    def __init__(self):
        pass

    def score(self, doc, cands):
        return {i: [c._replace(score=math.log(c.mlm_prob) if c.mlm_prob > 0 else -math.inf) for c in cs]
                for i, cs in cands.items()}


class ProposalOrder(Scorer):
    """Score = -(rank in the generators' proposal order): the search tries candidates as they were proposed.

    For RAFT: the LLM lists its replacements best first, so :class:`~.search.DetectorGreedy`
    tries them in the LLM's order and a query budget keeps the first ones. No model work.
    """

    def __init__(self):
        pass

    def score(self, doc, cands):
        return {i: [c._replace(score=-float(r)) for r, c in enumerate(cs)] for i, cs in cands.items()}


class CausalLMScore(Scorer):
    """Score = ``log p(candidate | preceding text)`` under a causal LM (offline default SmolLM2-135M), in ``dtype``
    when ``lm`` is a name (None: float32 on a CPU; ``"auto"``: :mod:`humanize.models.precision`)."""

    _model_params = ("lm",)

    _parameter_constraints = {"lm": ["model"]}

    def __init__(self, lm: Any = DEFAULT_RANKING_LM, device: Any = None, dtype: Any = None):
        self._init_params(locals())

    def loaded(self):
        from humanize.quality.perplexity import get_lm

        return get_lm(self.lm, self.device, self.dtype)

    def score(self, doc, cands):
        import torch

        from humanize.models.scoring import _window_params, encode_for_scoring, kept_logits

        todo = [i for i, cs in cands.items() if cs]
        if not todo:
            return cands
        lm = self.loaded()
        tok = lm.tokenizer
        ids_list, spans_list, has_bos = encode_for_scoring(lm, [doc.text], offsets=True)
        ids, spans = ids_list[0], spans_list[0]
        shift = int(has_bos)
        length, _ = _window_params(lm, None, None)
        ends = spans[:, 1] if len(spans) else np.zeros(0, dtype=np.int64)
        # token t (in ids) that holds each word's first character, and its candidates' token ids
        rows: list[tuple[int, Candidate, list[int], int]] = []
        for i in todo:
            ws = doc.words[i][0]
            t = int(np.searchsorted(ends, ws, side="right"))
            if t >= len(spans):
                continue
            prefix = doc.text[int(spans[t][0]): ws] if spans[t][0] < ws else ""
            pos = t + shift  # index in ids of the word's first token
            for c in cands[i]:
                from humanize.models.text import repair_text

                cid = tok(repair_text(prefix + c.text)[0], add_special_tokens=False)["input_ids"]
                if cid:
                    rows.append((i, c, list(cid), pos))
        # ONE forward pass: the document's tokens, then every multi-token candidate's tokens t_1..t_{m-1},
        # each attending to the document before its word and to its own earlier tokens (a 4-D mask)
        view = ids[:length]
        rows = [row for row in rows if 1 <= row[3] < len(view)]
        if not rows:
            return {i: [c._replace(score=-math.inf) for c in cs] for i, cs in cands.items()}
        n = len(view)
        extra = [(r, row) for r, row in enumerate(rows) if len(row[2]) > 1]
        total = n + sum(len(row[2]) - 1 for _, row in extra)
        tokens, positions = list(view), list(range(n))
        mask = torch.zeros((total, total), dtype=torch.bool)
        mask[:n, :n] = torch.tril(torch.ones((n, n), dtype=torch.bool))
        starts, q = {}, n
        for r, (_, _, cid, pos) in extra:
            starts[r] = q
            for j, t in enumerate(cid[:-1]):
                tokens.append(t)
                positions.append(pos + j)
                mask[q, :pos] = True
                mask[q, starts[r]: q + 1] = True
                q += 1
        need = sorted({pos - 1 for _, _, _, pos in rows})
        keep = need + list(range(n, total))
        at = {p: k for k, p in enumerate(keep)}
        with torch.inference_mode():
            logits = kept_logits(lm.model, torch.as_tensor(keep, device=lm.device),
                                 input_ids=torch.as_tensor([tokens], device=lm.device),
                                 attention_mask=mask[None, None].to(lm.device),
                                 position_ids=torch.as_tensor([positions], device=lm.device))
        doc.add_cost(forward_passes=1, queries=1, lm_tokens=total)
        logp = torch.log_softmax(logits[0].float(), dim=-1).cpu().numpy()
        score = np.empty(len(rows))
        for r, (_, _, cid, pos) in enumerate(rows):
            total_lp = logp[at[pos - 1], cid[0]]
            for j in range(1, len(cid)):  # the candidate's (j-1)-th token predicts its j-th
                total_lp += logp[at[starts[r] + j - 1], cid[j]]
            score[r] = total_lp
        scored = {(i, c.text): float(score[r]) for r, (i, c, _, _) in enumerate(rows)}
        return {i: [c._replace(score=scored.get((i, c.text), -math.inf)) for c in cs] for i, cs in cands.items()}
