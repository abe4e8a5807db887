"""Perplexity under a causal LM (TH-Bench Section 3.3: fluency, "PPL computed by GPT-2").

Offline the default model is ``smollm2-135m-instruct``; pass ``lm="gpt2"`` for
the paper's setting when the hub is reachable. Long texts are scored with
strided windows and all windows are batched by length
(:func:`humanize.models.sequence_logprobs`).
"""
from __future__ import annotations

import math
from typing import Optional, Union

import numpy as np

from humanize.models import DEFAULT_CAUSAL_LM, LoadedModel, load_causal_lm
from humanize.models.scoring import encode_for_scoring, sequence_logprobs

from ._common import as_text_list

__all__ = ["perplexity", "perplexity_with_notes", "get_lm"]


def get_lm(lm: Union[str, LoadedModel], device=None) -> LoadedModel:
    if isinstance(lm, LoadedModel):
        if lm.kind != "causal_lm":
            raise ValueError(f"perplexity needs a causal LM, got a {lm.kind} ({lm.resolved})")
        return lm
    return load_causal_lm(lm, device=device)


def perplexity_with_notes(texts, lm: Union[str, LoadedModel] = DEFAULT_CAUSAL_LM, *, batch_size: int = 8,
                          max_length: Optional[int] = None, stride: Optional[int] = None,
                          device=None) -> tuple[np.ndarray, list[str], str]:
    """Perplexities, a reason for every NaN ("" otherwise) and the resolved model name."""
    texts = as_text_list(texts)
    model = get_lm(lm, device)
    unique = list(dict.fromkeys(texts))
    nonempty = [t for t in unique if t]
    ids, _, _ = encode_for_scoring(model, nonempty)
    lps = sequence_logprobs(model, ids, max_length=max_length, stride=stride, batch_size=batch_size)
    by_text: dict[str, tuple[float, str]] = {"": (math.nan, "empty text")}
    for t, lp in zip(nonempty, lps):
        if len(lp) == 0:
            by_text[t] = (math.nan, "fewer than 2 tokens (the tokenizer has no BOS)")
        else:
            by_text[t] = (float(np.exp(-np.mean(lp))), "")
    values = np.array([by_text[t][0] for t in texts], dtype=float)
    return values, [by_text[t][1] for t in texts], model.resolved


def perplexity(texts, lm: Union[str, LoadedModel] = DEFAULT_CAUSAL_LM, *, batch_size: int = 8,
               max_length: Optional[int] = None, stride: Optional[int] = None, device=None):
    """``exp(-mean log p(token | prefix))`` per text: a float for a str, an array for a sequence.

    The first token is conditioned on the tokenizer's BOS when it has one.
    Empty text gives NaN. ``max_length``/``stride`` set the window (default
    ``min(context, 1024)`` and half of it).
    """
    single = isinstance(texts, str)
    values, _, _ = perplexity_with_notes([texts] if single else texts, lm, batch_size=batch_size,
                                         max_length=max_length, stride=stride, device=device)
    return float(values[0]) if single else values
