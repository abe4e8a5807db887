"""Batched generation with a local transformers causal LM (the open-model rewriters of TH-Bench §2.2).

:class:`LocalChat` renders each request with the model's chat template, sorts the
requests by prompt length, left-pads each batch by hand and decodes with its own
loop over the model's forward pass and key/value cache. Sampling (temperature,
then top-p / nucleus filtering, Holtzman et al. 2020) draws from ONE
``torch.Generator`` per request, seeded with ``Request.seed``, so a request's
tokens do not depend on the batch it shares, its position or the process
(up to floating-point rounding in the model's kernels, about 1e-5 in a logit:
a token changes only when its uniform draw lands that close to a boundary).
``temperature=0`` decodes greedily, token for token as the model's own
``generate(do_sample=False)``. No global random state is read or written.
"""
from __future__ import annotations

import inspect
import os
from typing import Any, Optional, Sequence

from numbers import Integral

from humanize._validation import MODEL, Interval

from .base import (SAMPLING_CONSTRAINTS, Generation, Generator, Request, check_requests, effective_temperature,
                   report_usage)

__all__ = ["LocalChat"]

#: End-of-turn tokens chat templates close an assistant turn with (ChatML, Llama 3, Gemma, Phi-3).
END_OF_TURN = ("<|im_end|>", "<|eot_id|>", "<end_of_turn>", "<|end|>")
#: Prompt tokens decoded with the answer so a tokenizer that drops a leading space still renders it.
_TAIL = 4


def _seed64(seed: int) -> int:
    """A request seed as a ``torch.Generator`` seed (any Python int, folded into 64 bits)."""
    return int(seed) % (1 << 64)


class LocalChat(Generator):
    """A causal LM (chat or base) as a :class:`~humanize.generation.Generator`, batched and seeded per request.

    ``model``: a model name (packaged alias such as ``"smollm2-135m-instruct"``,
    directory or hub id; loaded on the first ``generate``) or a loaded causal LM
    (:class:`~humanize.models.LoadedModel`). ``temperature`` (0 = greedy; below
    :data:`~humanize.generation.base.GREEDY_BELOW`, 0.01, greedy too, where sampling would underflow) and
    ``top_p`` shape sampling; ``max_new_tokens`` bounds each answer unless the
    request sets its own; ``batch_size`` requests decode together; ``device`` and
    ``dtype`` apply when ``model`` is a name.

    A chat is rendered with the tokenizer's chat template and its generation
    prompt. A model without a chat template (a base LM) gets the turns' contents
    joined by blank lines, then a blank line. ``Request.answer_start`` follows
    either way; the returned text does not repeat it. A row stops at the
    tokenizer's EOS, the generation config's EOS ids or an end-of-turn token
    (``finish_reason="stop"``; the stop token counts in ``tokens_out`` and is not
    in the text) or after its ``max_new_tokens`` (``"length"``; a character cut
    between its byte tokens there is dropped, not rendered as U+FFFD).
    """

    name = "local"
    kind = "chat"
    _model_params = ("model",)
    _parameter_constraints = {"model": [MODEL], **SAMPLING_CONSTRAINTS, "batch_size": [Interval(Integral, 1, None)]}

    def __init__(self, model: Any = "smollm2-135m-instruct", temperature: float = 0.7, top_p: float = 0.95,
                 max_new_tokens: int = 256, batch_size: int = 16, device: Any = None, dtype: Any = None):
        self._init_params(locals())

    def _check(self) -> None:
        by_name = isinstance(self.model, (str, os.PathLike))
        device = self.device
        if device is not None and (isinstance(device, bool)
                                   or not isinstance(device, (str, int)) and not hasattr(device, "type")):
            raise TypeError(f"LocalChat: device must be None, a str, an int or a torch.device, "
                            f"got {type(self.device).__name__}")
        if self.dtype is not None and not isinstance(self.dtype, str) and type(self.dtype).__name__ != "dtype":
            raise TypeError(f"LocalChat: dtype must be None, a str or a torch.dtype, got {type(self.dtype).__name__}")
        if not by_name and (self.device is not None or self.dtype is not None):
            raise ValueError("LocalChat: device and dtype apply to a model given by name; a loaded model keeps its "
                             f"own (got device={self.device!r}, dtype={self.dtype!r})")

    # -- the model ------------------------------------------------------------------
    def loaded(self):
        """The :class:`~humanize.models.LoadedModel` this generator decodes with (loaded once per process)."""
        from humanize.models import load_causal_lm

        if isinstance(self.model, (str, os.PathLike)):
            return load_causal_lm(os.fspath(self.model), device=self.device, dtype=self.dtype)
        lm = self.model
        kind = getattr(lm, "kind", "causal_lm")
        if kind != "causal_lm":
            raise ValueError(f"LocalChat needs a causal LM, got a {kind} ({getattr(lm, 'resolved', lm)})")
        if lm.tokenizer is None or not callable(getattr(lm.model, "forward", None)):
            raise ValueError(f"LocalChat needs a causal LM with a tokenizer, got {getattr(lm, 'resolved', lm)}")
        return lm

    def _prompt(self, tok, request: Request, index: int, lm) -> str:
        """The prompt text of ``request``: its chat rendered by the template (or plain turns), then ``answer_start``."""
        if not getattr(tok, "chat_template", None):
            return "\n\n".join(c for _, c in request.messages) + "\n\n" + request.answer_start
        turns = [{"role": r, "content": c} for r, c in request.messages]
        try:
            text = tok.apply_chat_template(turns, tokenize=False, add_generation_prompt=True)
        except Exception as exc:  # noqa: BLE001 - a template's own check (e.g. no system role) becomes one clear error
            raise ValueError(f"LocalChat: the chat template of {lm.resolved} rejects request {index} "
                             f"(roles {[r for r, _ in request.messages]}): {exc}") from None
        return text + request.answer_start

    @staticmethod
    def _stop_ids(lm) -> frozenset:
        tok, ids = lm.tokenizer, set()
        config = getattr(lm.model, "generation_config", None)
        for value in (getattr(tok, "eos_token_id", None), getattr(config, "eos_token_id", None)):
            ids.update([value] if isinstance(value, int) else list(value or ()))
        if getattr(tok, "chat_template", None):
            vocab = tok.get_vocab()
            ids.update(vocab[t] for t in END_OF_TURN if t in vocab)
        return frozenset(i for i in ids if isinstance(i, int) and i >= 0)

    # -- generation -----------------------------------------------------------------
    def generate(self, requests: Sequence[Request]) -> list[Generation]:
        """One :class:`~humanize.generation.Generation` per request, in order (see the class docstring)."""
        reqs = check_requests("LocalChat", requests)
        if not reqs:
            return []
        lm = self.loaded()
        # below GREEDY_BELOW the division by the temperature overflows: greedy, as temperature 0
        decoder = _Decoder(lm, self._stop_ids(lm), effective_temperature(self.temperature), float(self.top_p))
        return self._decode(lm, reqs, decoder)

    def generate_guided(self, requests: Sequence[Request], choose: Any, top_k: int = 50,
                        top_p: float = 0.99, min_new_tokens: Any = 0) -> tuple[list[Generation], list[list[int]]]:
        """Decode with a chooser picking every token (Adversarial Paraphrasing, Cheng et al. 2025).

        At each step the candidates of a row are the model's ``top_k`` most probable next tokens
        (probability descending, ties by token id), cut to the top-``top_p`` nucleus of their
        renormalised distribution (the model's own distribution: temperature 1, the generator's
        ``temperature`` and ``top_p`` are not used). ``choose(partials, candidates, requests)`` is called
        ONCE per step for every live row of the batch: ``partials[i]`` is row ``i``'s answer so far,
        ``candidates[i]`` that answer with each candidate token appended (a stop token appends
        nothing) and ``requests[i]`` the index of the row's request in ``requests``; it returns one
        index per row into ``candidates[i]``. Nothing is sampled, so the
        output depends on the requests and the chooser only (``Request.seed`` is not used), never on
        the batch when the chooser scores each text on its own. ``min_new_tokens`` (an int, or one per
        request): before a row's answer has that many tokens its stop tokens are no candidates (a
        guide cannot end the answer early). Returns the generations and, per request, the number of
        candidates at each of its steps.
        """
        from ._guided import GuidedDecoder, check_chooser, check_min_new_tokens

        reqs = check_requests("LocalChat", requests)
        check_chooser("LocalChat.generate_guided", choose, top_k, top_p)
        min_new = check_min_new_tokens("LocalChat.generate_guided", min_new_tokens, len(reqs))
        if not reqs:
            return [], []
        lm = self.loaded()
        decoder = GuidedDecoder(lm, self._stop_ids(lm), choose, int(top_k), float(top_p), min_new)
        out = self._decode(lm, reqs, decoder)
        return out, decoder.counts_for(len(reqs))

    def _decode(self, lm, reqs: list, decoder) -> list[Generation]:
        """The requests' prompts tokenized, length-sorted, decoded in batches by ``decoder``."""
        from humanize.models.text import model_input

        tok = lm.tokenizer
        prompts = [self._prompt(tok, r, i, lm) for i, r in enumerate(reqs)]
        prompts, _ = model_input(prompts, where=f"LocalChat prompt ({lm.resolved})")
        # a chat template already holds the special tokens; plain text gets the tokenizer's own (e.g. BOS)
        plain = not getattr(tok, "chat_template", None)
        ids = tok(prompts, add_special_tokens=plain, return_attention_mask=False)["input_ids"]
        limits = [int(r.max_new_tokens or self.max_new_tokens) for r in reqs]
        context = lm.context_length
        for i, (row, new) in enumerate(zip(ids, limits)):
            if context is not None and len(row) > context - new:
                raise ValueError(f"LocalChat: request {i} has {len(row)} prompt tokens, more than the "
                                 f"{max(context - new, 0)} allowed ({lm.resolved} takes {context} tokens, minus "
                                 f"max_new_tokens={new}); split the text into shorter chunks")
        order = sorted(range(len(reqs)), key=lambda i: (len(ids[i]), i))
        out: list[Optional[Generation]] = [None] * len(reqs)
        size = int(self.batch_size)
        for b in range(0, len(order), size):
            batch = order[b: b + size]
            new = decoder.run([ids[i] for i in batch], [reqs[i].seed for i in batch], [limits[i] for i in batch],
                              requests=batch)
            for i, (tokens, reason) in zip(batch, new):
                text = _decode_answer(tok, ids[i], tokens[:-1] if reason == "stop" else tokens)
                if reason == "length":  # a character cut between its byte tokens decodes as U+FFFD
                    text = text.rstrip("\ufffd")
                out[i] = Generation(text, len(ids[i]), len(tokens), reason)
        report_usage(out)
        return out


def _decode_answer(tok, prompt: list, new: list) -> str:
    """``new`` as text, rendered after the prompt's last tokens (a SentencePiece word keeps its leading space)."""
    if not new:
        return ""
    tail = prompt[-_TAIL:]
    head = tok.decode(tail, skip_special_tokens=True)
    full = tok.decode(tail + new, skip_special_tokens=True)
    return full[len(head):] if full.startswith(head) else tok.decode(new, skip_special_tokens=True)


class _Decoder:
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
        return [0 if g is None else _sample(logits[k], self.temperature, self.top_p, g) for k, g in enumerate(gens)]


def _sample(logits, temperature: float, top_p: float, generator) -> int:
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
    n = _nucleus(vals, top_p)
    if n >= k or vals[-1] == vals[n - 1]:  # the nucleus may reach past the top k
        vals, idx = torch.sort(probs, descending=True, stable=True)
        n = _nucleus(vals, top_p)
    return _draw(torch.cumsum(vals[:n], dim=0), idx, u)


#: How many most probable tokens the nucleus is first looked for in.
_TOP_K = 256


def _nucleus(sorted_probs, top_p: float) -> int:
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
