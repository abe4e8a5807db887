"""Per-token log-probabilities under a causal LM, batched, with strided windows.

The building block of perplexity (TH-Bench Section 3.3), the Misspelling
attack's word ranking and the metric detectors. Texts longer than the window
are scored with overlapping windows (the Hugging Face "perplexity of
fixed-length models" recipe): each token is predicted once, with at least
``max_length - stride`` tokens of context. Windows from all texts are sorted
by length and padded per batch, so little compute is spent on padding.
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from .text import model_input, token_prefix

__all__ = ["token_logprobs", "sequence_logprobs", "encode_for_scoring", "DEFAULT_WINDOW"]

DEFAULT_WINDOW = 1024  # GPT-2's context, the window TH-Bench's perplexity saw


def _window_params(lm, max_length: Optional[int], stride: Optional[int]) -> tuple[int, int]:
    ctx = lm.context_length or DEFAULT_WINDOW
    length = min(ctx, DEFAULT_WINDOW) if max_length is None else int(max_length)
    if length < 2:
        raise ValueError(f"max_length must be >= 2, got {max_length}")
    if ctx and length > ctx:
        raise ValueError(f"max_length={length} exceeds the model's context length {ctx}")
    stride = max(1, length // 2) if stride is None else int(stride)
    if not 1 <= stride <= length - 1:
        raise ValueError(f"stride must be in [1, max_length-1] = [1, {length - 1}], got {stride}")
    return length, stride


def encode_for_scoring(lm, texts: Sequence[str], *, offsets: bool = False, max_tokens: Optional[int] = None):
    """Token ids of each text, with the tokenizer's BOS prepended when it has one.

    Returns ``(ids, spans, has_bos)``: ``ids[i]`` a list of ints, ``spans[i]``
    an ``(n, 2)`` int array of character spans of the text's own tokens (or
    None when ``offsets`` is False). Texts go through
    :func:`humanize.models.text.model_input` (lone surrogates -> U+FFFD, with a
    warning); an empty list gives empty lists. With ``max_tokens`` only a prefix
    holding the first ``max_tokens`` tokens is tokenised
    (:func:`~humanize.models.text.token_prefix`), so the cost does not grow with
    the rest of a long text.
    """
    tok = lm.tokenizer
    bos = getattr(tok, "bos_token_id", None)
    texts, _ = model_input(texts, where=f"tokenizer of {getattr(lm, 'resolved', 'the model')}")
    if not texts:  # fast tokenizers raise IndexError on an empty batch
        return [], ([] if offsets else None), bos is not None
    if max_tokens is not None:
        def count(prefix: str) -> int:
            return len(tok(prefix, add_special_tokens=False, return_attention_mask=False)["input_ids"])

        texts = [token_prefix(t, max_tokens, count) for t in texts]
    enc = tok(texts, add_special_tokens=False, return_offsets_mapping=offsets,
              return_attention_mask=False)
    ids_out, spans_out = [], []
    for i, ids in enumerate(enc["input_ids"]):
        ids = list(ids)[: max_tokens] if max_tokens is not None else list(ids)
        if offsets:
            span = np.asarray(enc["offset_mapping"][i][: len(ids)], dtype=np.int64).reshape(-1, 2)
            spans_out.append(span)
        ids_out.append(([bos] if bos is not None else []) + ids)
    return ids_out, (spans_out if offsets else None), bos is not None


def sequence_logprobs(lm, sequences: Sequence[Sequence[int]], *, max_length: Optional[int] = None,
                      stride: Optional[int] = None, batch_size: int = 8,
                      max_batch_tokens: Optional[int] = None) -> list[np.ndarray]:
    """``log p(ids[t] | ids[:t])`` for t = 1..n-1 of every id sequence (float64 arrays)."""
    import torch

    length, stride = _window_params(lm, max_length, stride)
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    vocab = int(getattr(lm.model.config, "vocab_size", 50_000) or 50_000)
    if max_batch_tokens is None:  # keep the fp32 logits of one batch near 256 MiB (peak memory ~3x that)
        max_batch_tokens = max(length, (1 << 28) // (4 * vocab))
    # windows: (seq index, begin, end, first target position)
    windows = []
    for s, ids in enumerate(sequences):
        n, prev_end, begin = len(ids), 0, 0
        while n >= 2:
            end = min(begin + length, n)
            windows.append((s, begin, end, max(prev_end, begin + 1)))
            prev_end = end
            if end == n:
                break
            begin += stride
    out = [np.full(max(len(ids) - 1, 0), np.nan) for ids in sequences]
    windows.sort(key=lambda w: w[2] - w[1], reverse=True)
    model, device = lm.model, lm.device
    pad_id = getattr(lm.tokenizer, "pad_token_id", None) or 0
    i = 0
    with torch.inference_mode():
        while i < len(windows):
            width = windows[i][2] - windows[i][1]
            rows = max(1, min(batch_size, max_batch_tokens // width))
            batch = windows[i: i + rows]
            i += rows
            ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for r, (s, b, e, _) in enumerate(batch):
                ids[r, : e - b] = torch.as_tensor(sequences[s][b:e], dtype=torch.long)
                mask[r, : e - b] = 1
            ids, mask = ids.to(device), mask.to(device)
            logits = model(input_ids=ids, attention_mask=mask, use_cache=False).logits[:, :-1]
            logits = logits.float()
            target = ids[:, 1:]
            lp = logits.gather(-1, target.unsqueeze(-1)).squeeze(-1) - torch.logsumexp(logits, dim=-1)
            lp = lp.double().cpu().numpy()
            for r, (s, b, e, first) in enumerate(batch):
                # logits at window position j predict token b + j + 1
                out[s][first - 1: e - 1] = lp[r, first - b - 1: e - b - 1]
    return out


def token_logprobs(lm, text: str, max_tokens: Optional[int] = None, *, max_length: Optional[int] = None,
                   stride: Optional[int] = None):
    """Character spans and log-probabilities of every token of ``text``.

    Returns ``(offsets, logprobs)``: ``offsets`` an int array ``(n, 2)`` of
    character spans in ``text``, ``logprobs[i] = log p(token_i | prefix)``.
    The first token is conditioned on BOS when the tokenizer has one, else its
    value is NaN. ``max_tokens`` scores only the first tokens of the text.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if lm.kind != "causal_lm":
        raise ValueError(f"token_logprobs needs a causal LM, got a {lm.kind} ({lm.resolved})")
    ids, spans, has_bos = encode_for_scoring(lm, [text], offsets=True, max_tokens=max_tokens)
    lps = sequence_logprobs(lm, ids, max_length=max_length, stride=stride, batch_size=1)[0]
    if not has_bos:
        lps = np.concatenate([[np.nan], lps]) if len(ids[0]) else np.zeros(0)
    return spans[0], lps
