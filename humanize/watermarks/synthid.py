"""SynthID-Text (Dathathri et al., Nature 2024): tournament sampling over keyed g-values.

Each candidate token gets ``depth`` pseudo-random bits (g-values) from a hash of the previous
``ngram_len - 1`` generated tokens, the candidate and one key per tournament layer; sampling runs a
tournament in which, at every layer, tokens with g = 1 win (the closed form of
``transformers.SynthIDTextWatermarkLogitsProcessor.update_scores``, used here as it is, with its
hashing: ``_compute_keys``, ``sample_g_values``, ``compute_g_values``). As in transformers'
``generate(do_sample=True, top_k=...)`` the tournament runs over the ``top_k`` most probable tokens
after the temperature; a context already seen in the row (``context_history_size`` last ones) is
not watermarked. The ``depth`` keys and the sampling table's seed all derive from one ``key``.

Detection (:class:`humanize.detectors.watermark.SynthIDDetector`) scores the mean g-value of a text
over its first-seen contexts (the paper's Mean score, or its Weighted Mean with weights 10..1 over
the layers, Supplementary §C). The paper's strongest detector, the Bayesian one
(``transformers.BayesianDetectorModel``), must be trained on watermarked and unwatermarked text of
the model: not done here.
"""
from __future__ import annotations

from collections import deque
from numbers import Integral
from typing import Sequence

from humanize.validation import Interval

from .base import KEY, Watermark, key_int

__all__ = ["SynthID"]


class SynthID(Watermark):
    """Dathathri et al. 2024: ``ngram_len`` (context + candidate), ``depth`` (tournament layers, one key
    each), ``top_k`` (the tournament's candidates), ``sampling_table_size``, ``context_history_size``."""

    name = "synthid"
    _parameter_constraints = {
        "key": KEY,
        "ngram_len": [Interval(Integral, 2, None)],
        "depth": [Interval(Integral, 1, None)],
        "top_k": [Interval(Integral, 2, None)],
        "sampling_table_size": [Interval(Integral, 2, None)],
        "context_history_size": [Interval(Integral, 1, None)],
    }

    def __init__(self, key: "int | str" = 0, ngram_len: int = 5, depth: int = 30, top_k: int = 40,
                 sampling_table_size: int = 2**16, context_history_size: int = 1024):
        self._init_params(locals())

    def _make_processor(self, vocab_size: int) -> "Tournament":
        return Tournament(self, vocab_size)


class Tournament:
    """One SynthID configuration's g-values and tournament, through the transformers processor."""

    #: the tournament samples from the tempered distribution (DeepMind's reference applies it last)
    before_temperature = False

    def __init__(self, scheme: SynthID, vocab_size: int):
        import torch
        from transformers.generation.logits_process import SynthIDTextWatermarkLogitsProcessor

        self.n, self.depth, self.top_k = int(scheme.ngram_len), int(scheme.depth), int(scheme.top_k)
        self.vocab_size, self.history_size = vocab_size, int(scheme.context_history_size)
        keys = [key_int(scheme.key, f"synthid-{i}") for i in range(self.depth)]
        self.processor = SynthIDTextWatermarkLogitsProcessor(
            ngram_len=self.n, keys=keys, sampling_table_size=int(scheme.sampling_table_size),
            sampling_table_seed=key_int(scheme.key, "synthid-table"),
            context_history_size=self.history_size, device=torch.device("cpu"))

    # -- generation -------------------------------------------------------------------------
    def apply(self, logits, context: Sequence[int], state: dict):
        """One row's scores after the tournament over its ``top_k`` tokens (-inf elsewhere). The context is
        the row's generated tokens (zeros before the first, as transformers' state starts)."""
        import torch

        generated = list(context[state.get("prompt_len", 0):])
        ctx = ([0] * (self.n - 1) + generated)[-(self.n - 1):]
        k = min(self.top_k, self.vocab_size)
        vals, idx = torch.topk(logits[: self.vocab_size].float(), k)
        keys, ctx_hash = self.processor._compute_keys(torch.tensor([ctx], dtype=torch.long), idx[None])
        history = state.setdefault("history", deque(maxlen=self.history_size))
        h = int(ctx_hash[0])
        out = torch.full_like(logits, float("-inf"))
        if h in history:
            out[idx] = vals.to(out.dtype)  # a repeated context is not watermarked
            return out
        history.append(h)
        updated = self.processor.update_scores(vals[None], self.processor.sample_g_values(keys))
        out[idx] = updated[0].to(out.dtype)
        return out

    # -- detection ------------------------------------------------------------------------
    def g_values(self, ids: Sequence[int]):
        """``(g, mask)``: the g-values of each of the text's n-grams (``[n_grams, depth]``) and whether its
        context is seen for the first time in the text (the paper's repetition mask)."""
        import numpy as np
        import torch

        if len(ids) < self.n:
            return np.zeros((0, self.depth), dtype=np.float64), np.zeros(0, dtype=bool)
        g = self.processor.compute_g_values(torch.tensor([list(ids)], dtype=torch.long))[0].numpy()
        seen, mask = set(), np.zeros(len(g), dtype=bool)
        for i in range(len(g)):
            ctx = tuple(ids[i: i + self.n - 1])
            if ctx not in seen:
                seen.add(ctx)
                mask[i] = True
        return g.astype(np.float64), mask
