"""Batched generation with a local transformers causal LM (the open-model rewriters of TH-Bench §2.2).

:class:`LocalChat` renders each request with the model's chat template, sorts the
requests by prompt length, left-pads each batch by hand and decodes with its own
loop over the model's forward pass and key/value cache (:mod:`humanize.generation.decoding`).
Sampling (temperature, then top-p / nucleus filtering, Holtzman et al. 2020) draws from ONE
``torch.Generator`` per request, seeded with ``Request.seed``, so a request's
tokens do not depend on the batch it shares, its position or the process
(up to floating-point rounding in the model's kernels, about 1e-5 in a logit:
a token changes only when its uniform draw lands that close to a boundary).
``temperature=0`` decodes greedily, token for token as the model's own
``generate(do_sample=False)``. No global random state is read or written.
"""
from __future__ import annotations

import os
from typing import Any, Optional, Sequence

from numbers import Integral

from humanize.validation import MODEL, Interval

from .base import (SAMPLING_CONSTRAINTS, Generation, Generator, Request, check_requests, effective_temperature,
                   report_usage)
from .decoding import Decoder, decode_answer

__all__ = ["LocalChat"]

#: End-of-turn tokens chat templates close an assistant turn with (ChatML, Llama 3, Gemma, Phi-3).
END_OF_TURN = ("<|im_end|>", "<|eot_id|>", "<end_of_turn>", "<|end|>")

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
        decoder = Decoder(lm, self._stop_ids(lm), effective_temperature(self.temperature), float(self.top_p))
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
                text = decode_answer(tok, ids[i], tokens[:-1] if reason == "stop" else tokens)
                if reason == "length":  # a character cut between its byte tokens decodes as U+FFFD
                    text = text.rstrip("\ufffd")
                out[i] = Generation(text, len(ids[i]), len(tokens), reason)
        report_usage(out)
        return out
