"""Per-token log-probabilities under a causal LM, batched, with strided windows.

The building block of perplexity (TH-Bench Section 3.3), the Misspelling
attack's word ranking and the metric detectors. Texts longer than the window
are scored with overlapping windows (the Hugging Face "perplexity of
fixed-length models" recipe): each token is predicted once, with at least
``max_length - stride`` tokens of context. Windows from all texts are sorted
by length and padded per batch, so little compute is spent on padding.

It also holds the per-process cache of per-text LM statistics that the metric
detectors fill (:mod:`humanize.detectors.lm_stats`), and
:func:`shared_logprobs`, through which perplexity reuses their forward pass
(one pass per text serves both; issue #13), so neither room imports the other.
"""
from __future__ import annotations

import os
import threading
from collections import OrderedDict
from typing import Optional, Sequence

import numpy as np

from humanize.text import text_digest

from .text import model_input, token_prefix

__all__ = ["token_logprobs", "sequence_logprobs", "encode_for_scoring", "one_row_per_batch", "kept_logits",
           "DEFAULT_WINDOW", "StatisticsCache", "STATISTICS_CACHE", "model_key", "text_key", "shared_logprobs", "SHARED_PASS_ENV"]

DEFAULT_WINDOW = 1024  # GPT-2's context, the window TH-Bench's perplexity saw


def one_row_per_batch(lm) -> bool:
    """Whether ``lm`` must run each row in a forward batch of its own: a model in reduced precision (bfloat16,
    float16, int8). There a row's log-probabilities would depend on the rows batched with it (the matrix
    products' blocking follows the batch's shape, and a float32 rounding difference becomes a bfloat16 one,
    about 1e-3 relative), and a document's score must not depend on its batch. Every batched pass over a
    causal LM (the detectors' statistics, perplexity's windows, the context check) follows this rule."""
    dtype = getattr(lm, "dtype", None)
    return dtype is not None and str(dtype) not in ("torch.float32", "torch.float64")


def kept_logits(model, keep, **inputs):
    """The logits of the positions ``keep`` names: the last ``keep`` (an int) or those at the indices of ``keep``
    (a 1-D tensor), from ``model(**inputs, use_cache=False)``; the model computes only those where it takes
    ``logits_to_keep``, else its full logits are sliced (also where it accepted the argument and ignored it)."""
    try:
        logits = model(**inputs, use_cache=False, logits_to_keep=keep).logits
    except TypeError:  # no logits_to_keep
        logits = model(**inputs, use_cache=False).logits
    if isinstance(keep, int):
        return logits[:, -keep:]
    return logits if logits.shape[1] == len(keep) else logits[:, keep]


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
                      max_batch_tokens: Optional[int] = None,
                      known: Optional[Sequence[Optional[np.ndarray]]] = None) -> list[np.ndarray]:
    """``log p(ids[t] | ids[:t])`` for t = 1..n-1 of every id sequence (float64 arrays).

    ``known[i]``, when given and not None, holds the first values of sequence ``i``
    computed by one pass from its start (e.g. :func:`shared_logprobs`); the first
    window, whose context also starts at 0, is then not run when they cover it.
    """
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
    if known is not None:
        def covered(w) -> bool:
            k = known[w[0]]
            return w[1] == 0 and k is not None and len(k) >= w[2] - 1

        for s, _, e, _ in filter(covered, windows):
            out[s][: e - 1] = np.asarray(known[s][: e - 1], dtype=np.float64)
        windows = [w for w in windows if not covered(w)]
    windows.sort(key=lambda w: w[2] - w[1], reverse=True)
    model, device = lm.model, lm.device
    pad_id = getattr(lm.tokenizer, "pad_token_id", None) or 0
    single = one_row_per_batch(lm)
    i = 0
    with torch.inference_mode():
        while i < len(windows):
            width = windows[i][2] - windows[i][1]
            rows = 1 if single else max(1, min(batch_size, max_batch_tokens // width))
            batch = windows[i: i + rows]
            i += rows
            ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for r, (s, b, e, _) in enumerate(batch):
                ids[r, : e - b] = torch.as_tensor(sequences[s][b:e], dtype=torch.long)
                mask[r, : e - b] = 1
            ids, mask = ids.to(device), mask.to(device)
            STATISTICS_CACHE.count_pass("sequence", rows=len(batch), width=width,
                                        tokens=sum(e - b for _, b, e, _ in batch))
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


# -- the shared per-text statistics cache ----------------------------------------------------------------

#: Set to ``0`` to make perplexity ignore the statistics cache (for before/after benchmarks).
SHARED_PASS_ENV = "HUMANIZE_SHARED_PASS"


class StatisticsCache:
    """A thread-safe LRU of per-text statistics, bounded by entry count.

    Keys are ``(model key, reference key, max_tokens, text key)``; values carry at
    least ``token_ids`` (the scored ids, BOS excluded) and ``logprob`` (their
    log-probabilities under the keyed model, whatever the reference).
    """

    def __init__(self, maxsize: int):
        self.maxsize = maxsize
        self._data: "OrderedDict[tuple, object]" = OrderedDict()
        self._variants: dict[str, set] = {}  # model key -> {(reference key, max_tokens)} ever stored
        self._lock = threading.Lock()
        self.hits = self.misses = self.forward_texts = self.forward_batches = self.shared_hits = 0
        self.passes: dict[str, dict[str, int]] = {}

    def count_pass(self, who: str, *, rows: int, width: int, tokens: int) -> None:
        """Count one forward batch of ``who`` (``"statistics"``: the detectors' pass, ``"sequence"``:
        :func:`sequence_logprobs`, i.e. perplexity's and the rankers' own): its rows, its real tokens and
        the padding (``rows * width - tokens``). Read by :func:`humanize.detectors.lm_stats.cache_info`."""
        with self._lock:
            c = self.passes.setdefault(who, {"batches": 0, "rows": 0, "tokens": 0, "padding": 0})
            c["batches"] += 1
            c["rows"] += int(rows)
            c["tokens"] += int(tokens)
            c["padding"] += int(rows * width - tokens)

    def __len__(self) -> int:
        return len(self._data)

    def get(self, key):
        with self._lock:
            value = self._data.get(key)
            if value is None:
                self.misses += 1
            else:
                self.hits += 1
                self._data.move_to_end(key)
            return value

    def put(self, key, value) -> None:
        with self._lock:
            if self.maxsize == 0:
                return
            self._data[key] = value
            self._data.move_to_end(key)
            self._variants.setdefault(key[0], set()).add((key[1], key[2]))
            while len(self._data) > self.maxsize:
                self._data.popitem(last=False)

    def find(self, model: str, text: bytes, accept) -> Optional[object]:
        """An entry of ``model`` for ``text`` (any reference, any max_tokens) for which ``accept(entry)``."""
        with self._lock:
            for ref, max_tokens in sorted(self._variants.get(model, ()), key=repr):
                key = (model, ref, max_tokens, text)
                value = self._data.get(key)
                if value is not None and accept(value):
                    self._data.move_to_end(key)
                    self.shared_hits += 1
                    return value
            return None

    def resize(self, maxsize: int) -> None:
        with self._lock:
            self.maxsize = maxsize
            while len(self._data) > maxsize:
                self._data.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self._variants.clear()
            self.hits = self.misses = self.forward_texts = self.forward_batches = self.shared_hits = 0
            self.passes = {}


#: The process's cache (4,096 texts by default; :func:`humanize.detectors.lm_stats.set_cache_size`).
STATISTICS_CACHE = StatisticsCache(4096)


def model_key(lm) -> str:
    """The model's identity (weights, kind, device type, dtype), never its address: a freed model's
    id can be reused by another, and the same weights loaded twice share their statistics."""
    key = getattr(lm, "identity_key", None)
    if isinstance(key, str):
        return key
    from .identity import identity_key

    return identity_key(lm)


def text_key(text: str) -> bytes:
    """The cache key of a (repaired) text: :func:`humanize.text.text_digest`."""
    return text_digest(text)


def shared_logprobs(lm, texts: Sequence[str], ids: Sequence[Sequence[int]],
                    need: Optional[Sequence[int]] = None) -> list[Optional[np.ndarray]]:
    """Cached ``log p(ids[t] | ids[:t])`` for the first ``need[i]`` targets t = 1..need[i] of each text
    (default: all of them), or None where the cache does not hold them.

    ``texts`` are model inputs (already through :func:`model_input`) and ``ids``
    their ids from :func:`encode_for_scoring`. An entry of the same model serves
    only when its scored ids start with ``ids[1 : need + 1]`` exactly: it came from
    one pass over the same sequence from its start, so by causality those values
    are the ones a pass over ``ids[:need + 1]`` gives (up to float rounding).
    Disabled when ``$HUMANIZE_SHARED_PASS`` is ``0``.
    """
    if os.environ.get(SHARED_PASS_ENV, "1").strip() == "0" or len(STATISTICS_CACHE) == 0:
        return [None] * len(texts)
    key = model_key(lm)
    out: list[Optional[np.ndarray]] = []
    for i, (text, seq) in enumerate(zip(texts, ids)):
        k = len(seq) - 1 if need is None else min(int(need[i]), len(seq) - 1)
        if k < 1:
            out.append(None)
            continue
        target = np.asarray(seq[1: k + 1], dtype=np.int64)

        def starts_alike(entry) -> bool:
            got = np.asarray(entry.token_ids)
            return len(got) >= k and bool(np.array_equal(got[:k], target))

        found = STATISTICS_CACHE.find(key, text_key(text), starts_alike)
        out.append(None if found is None else np.asarray(found.logprob[:k], dtype=np.float64))
    return out
