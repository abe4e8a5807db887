"""The decoding loop of a local causal LM, shared by :class:`~humanize.generation.local.LocalChat`'s sampling
and its guided decoding (:mod:`humanize.generation._guided`): a left-padded prefill, then one token per step
on the key/value cache; temperature and top-p (nucleus) sampling (Holtzman et al. 2020) from one
``torch.Generator`` per request; an answer rendered after its prompt's last tokens.
"""
from __future__ import annotations

import inspect
from typing import Any

__all__ = ["Decoder", "decode_answer", "nucleus", "sample_token"]

#: Prompt tokens decoded with the answer so a tokenizer that drops a leading space still renders it.
_TAIL = 4


def _seed64(seed: int) -> int:
    """A request seed as a ``torch.Generator`` seed (any Python int, folded into 64 bits)."""
    return int(seed) % (1 << 64)


def decode_answer(tok, prompt: list, new: list) -> str:
    """``new`` as text, rendered after the prompt's last tokens (a SentencePiece word keeps its leading space)."""
    if not new:
        return ""
    tail = prompt[-_TAIL:]
    head = tok.decode(tail, skip_special_tokens=True)
    full = tok.decode(tail + new, skip_special_tokens=True)
    return full[len(head):] if full.startswith(head) else tok.decode(new, skip_special_tokens=True)


class Decoder:
    """The decoding loop of one model: left-padded prefill, then one token per step on the KV cache."""

    def __init__(self, lm, stop: frozenset, temperature: float, top_p: float):
        self.lm, self.stop, self.temperature, self.top_p = lm, stop, temperature, top_p
        params = inspect.signature(lm.model.forward).parameters
        self.cache_kw = "cache" if "cache" in params else "past_key_values"
        self.keep_kw = next((k for k in ("logits_to_keep", "num_logits_to_keep") if k in params), None)
        tok = lm.tokenizer
        pad = getattr(tok, "pad_token_id", None)
        self.pad = pad if pad is not None else (min(stop) if stop else 0)
        bos = getattr(tok, "bos_token_id", None)
        self.empty = [bos if bos is not None else self.pad]  # an empty base-LM prompt still needs one position

    def _forward(self, ids, mask, positions, cache, last_only: bool):
        kwargs = {"input_ids": ids, "attention_mask": mask, "position_ids": positions, "use_cache": True}
        if cache is not None:
            kwargs[self.cache_kw] = cache
        if last_only and self.keep_kw:
            kwargs[self.keep_kw] = 1
        out = self.lm.model(**kwargs)
        cache = getattr(out, "cache", None)
        if cache is None:
            cache = out.past_key_values
        return out.logits[:, -1, :].float(), cache

    def run(self, rows: list, seeds: list, limits: list, requests: Any = None) -> list[tuple[list, str]]:
        """``(new token ids, finish_reason)`` for each prompt of one batch (``requests``: their request
        indices, which a subclass may record)."""
        import torch

        device = self.lm.device
        rows = [r if r else self.empty for r in rows]
        width = max(len(r) for r in rows)
        ids = torch.full((len(rows), width), self.pad, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for r, seq in enumerate(rows):
            ids[r, width - len(seq):] = torch.as_tensor(seq, dtype=torch.long)
            mask[r, width - len(seq):] = 1
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        gens = None
        if self.temperature > 0:
            gens = []
            for seed in seeds:
                g = torch.Generator(device="cpu")
                g.manual_seed(_seed64(seed))
                gens.append(g)
        new: list[list[int]] = [[] for _ in rows]
        reasons = ["length"] * len(rows)
        done = [False] * len(rows)
        live = list(range(len(rows)))  # the request row of each row of the cache
        with torch.inference_mode():
            mask, positions = mask.to(device), positions.to(device)
            logits, cache = self._forward(ids.to(device), mask, positions, None, last_only=True)
            positions = positions[:, -1:]
            select = getattr(cache, "batch_select_indices", None)
            while True:
                picks = self._pick(logits, [None if done[r] else gens[r] for r in live] if gens else None,
                                   rows=rows, live=live, new=new, done=done)
                for k, r in enumerate(live):
                    if done[r]:
                        continue  # a cache that cannot drop rows: a finished row rides along
                    new[r].append(picks[k])
                    if picks[k] in self.stop:
                        reasons[r], done[r] = "stop", True
                    elif len(new[r]) >= limits[r]:
                        done[r] = True
                keep = [k for k, r in enumerate(live) if not done[r]]
                if not keep:
                    break
                step = torch.as_tensor(picks, dtype=torch.long, device=device)[:, None]
                if len(keep) < len(live) and select is not None:
                    index = torch.as_tensor(keep, dtype=torch.long, device=device)
                    select(index)
                    step, mask, positions = step[index], mask[index], positions[index]
                    live = [live[k] for k in keep]
                mask = torch.cat([mask, mask.new_ones((mask.shape[0], 1))], dim=1)
                positions = positions + 1
                logits, cache = self._forward(step, mask, positions, cache, last_only=False)
                select = getattr(cache, "batch_select_indices", None)
        return [(new[r], reasons[r]) for r in range(len(rows))]

    def _pick(self, logits, gens, **state) -> list[int]:
        """The next token of each row: argmax, or a draw from the row's own generator (None: a finished row).
        ``state`` (the batch's prompt rows, live rows, new tokens, done flags) is for subclasses."""
        if gens is None:
            return logits.argmax(dim=-1).tolist()
        logits = logits.cpu()
        return [0 if g is None else sample_token(logits[k], self.temperature, self.top_p, g) for k, g in enumerate(gens)]


def sample_token(logits, temperature: float, top_p: float, generator) -> int:
    """One token from ``softmax(logits / temperature)`` restricted to its top-``top_p`` nucleus.

    The nucleus is the smallest set of most probable tokens (ties in vocabulary
    order) whose mass reaches ``top_p``; one uniform draw from ``generator``
    picks a token by inverse CDF over it. The nucleus is looked for among the
    ``_TOP_K`` most probable tokens first and the whole vocabulary is sorted only
    when it may reach past them (same tokens, far less work per step).
    """
    import torch

    probs = torch.softmax(logits / temperature, dim=-1)
    u = float(torch.rand((), generator=generator, dtype=torch.float64))
    if top_p >= 1:
        return _draw(torch.cumsum(probs, dim=0), None, u)
    k = min(_TOP_K, len(probs))
    vals, idx = torch.topk(probs, k)
    idx, by_id = torch.sort(idx)  # canonical order: probability descending, ties by token id
    vals, order = torch.sort(vals[by_id], descending=True, stable=True)
    idx = idx[order]
    n = nucleus(vals, top_p)
    if n >= k or vals[-1] == vals[n - 1]:  # the nucleus may reach past the top k
        vals, idx = torch.sort(probs, descending=True, stable=True)
        n = nucleus(vals, top_p)
    return _draw(torch.cumsum(vals[:n], dim=0), idx, u)


#: How many most probable tokens the nucleus is first looked for in.
_TOP_K = 256


def nucleus(sorted_probs, top_p: float) -> int:
    """How many of the (descending) probabilities form the top-``top_p`` nucleus (at least one)."""
    import torch

    cum = torch.cumsum(sorted_probs, dim=0)
    return max(int((cum - sorted_probs < top_p).sum()), 1)


def _draw(cum, idx, u: float) -> int:
    """The token where ``u`` (in [0, 1)) falls in the cumulative mass ``cum`` (token ids ``idx``, or positions)."""
    import torch

    k = int(torch.searchsorted(cum, torch.tensor([u * float(cum[-1])], dtype=cum.dtype), right=True))
    k = min(k, len(cum) - 1)
    return k if idx is None else int(idx[k])
