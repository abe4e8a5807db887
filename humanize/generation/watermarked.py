"""Watermarked generation through the local back end (issue #37): :class:`WatermarkedChat`.

:class:`~humanize.generation.local.LocalChat`'s batched, per-request-seeded decoding, with a watermark
scheme (:mod:`humanize.watermarks`) changing each row's next-token scores before the token is picked:
KGW and Unigram add ``delta`` to the green logits, SynthID runs its tournament over the ``top_k``
most probable tokens. The scheme reads only the row's own tokens, so a request's text still depends
on its request and seed alone, never on its batch. Order of a sampling step: the repetition penalty
(when set); a green-list bias (KGW, Unigram) on the logits; division by the temperature; a tournament
(SynthID) on the tempered scores; then nucleus (``top_p``) sampling (greedy: the argmax). The green-list
bias comes before the temperature as in Kirchenbauer et al. (2023): Algorithm 2 adds ``delta`` to the
model's logits, and the paper's code passes its processor to ``generate`` as a ``logits_processor``, which
transformers runs before its temperature warper, so at T = 0.7 the bias weighs ``delta / T``
(Unigram, KGW with one fixed list, follows the same order). SynthID's tournament reads the tempered distribution, as
DeepMind's reference does (and transformers, since its issue #34630, for every ``watermarking_config``).
The scheme's processor says which it is (``before_temperature``). The scheme's vocabulary is the
tokenizer's (``len(tokenizer)``), which is what the detectors use by default.

An endpoint returns text, not its logits at each step, so it cannot watermark:
:func:`watermarked_generator` says so in one line.
"""
from __future__ import annotations

from typing import Any, Sequence

from numbers import Integral, Real

from humanize.validation import Constraint, Interval
from humanize.exceptions import UserError

from .base import Generation, Request, check_requests, effective_temperature
from .decoding import Decoder, sample_token
from .local import LocalChat

__all__ = ["WatermarkedChat", "watermarked_generator"]


class _Watermark(Constraint):
    """A scheme's parameter: a :class:`~humanize.watermarks.Watermark`, a scheme name or a dict with ``scheme``."""

    def is_satisfied_by(self, value) -> bool:
        from humanize.watermarks import resolve_watermark

        if value is None:
            return True
        try:
            resolve_watermark(value)
        except (TypeError, ValueError):
            return False
        return True

    def describe(self) -> str:
        return ("a watermark scheme (KGW, Unigram, SynthID object), its name, a dict {'scheme': name, ...} or None "
                "(no watermark)")


class WatermarkedChat(LocalChat):
    """A local causal LM generating with a watermark. ``watermark``: a scheme object
    (``humanize.watermarks.KGW(key=...)``), a scheme name (``"kgw"``, ``"unigram"``, ``"synthid"``:
    its defaults, public key), ``{"scheme": name, **parameters}`` or None (no watermark: the same decoding,
    for the unwatermarked side of a comparison). ``min_new_tokens``: before a row has that many new tokens
    its stop tokens are no candidates (Kirchenbauer et al. 2023, §6, generate exactly T tokens), for texts
    of a fixed length. ``repetition_penalty``: Keskar et al.'s (2019) penalty as transformers'
    ``RepetitionPenaltyLogitsProcessor`` applies it (a positive logit of a token already in the row, prompt
    included, divided by it, a negative one multiplied; RAID's θ = 1.2; 1.0: none): a small model forced to a
    fixed length otherwise loops, and a loop repeats its (context, token) pairs, which no z-test expects.
    Every other parameter is :class:`~humanize.generation.local.LocalChat`'s."""

    name = "watermarked"
    #: 2: the repetition_penalty parameter (output at defaults unchanged); 3: a green-list bias (KGW,
    #: Unigram) is added before the temperature, not after (Kirchenbauer et al.'s order; texts at T != 1 change)
    version = "3"

    def __init__(self, model: Any = "smollm2-135m-instruct", watermark: Any = "kgw", temperature: float = 0.7,
                 top_p: float = 0.95, max_new_tokens: int = 256, batch_size: int = 16, device: Any = None,
                 dtype: Any = None, min_new_tokens: int = 0, repetition_penalty: float = 1.0):
        self._init_params(locals())

    def _check(self) -> None:
        super()._check()
        from humanize.validation import validate_parameter_constraints

        validate_parameter_constraints(type(self).__name__, {"watermark": [_Watermark()],
                                                             "min_new_tokens": [Interval(Integral, 0, None)],
                                                             "repetition_penalty": [Interval(Real, 0, None,
                                                                                             closed="neither")]},
                                       {"watermark": self.watermark, "min_new_tokens": self.min_new_tokens,
                                        "repetition_penalty": self.repetition_penalty})

    def scheme(self):
        """The watermark scheme (None: no watermark)."""
        from humanize.watermarks import resolve_watermark

        return None if self.watermark is None else resolve_watermark(self.watermark)

    def generate(self, requests: Sequence[Request]) -> list[Generation]:
        reqs = check_requests("WatermarkedChat", requests)
        if not reqs:
            return []
        lm = self.loaded()
        scheme = self.scheme()
        processor = None if scheme is None else scheme.logits_processor(len(lm.tokenizer))
        decoder = _WatermarkDecoder(lm, self._stop_ids(lm), effective_temperature(self.temperature),
                                    float(self.top_p), processor, int(self.min_new_tokens),
                                    float(self.repetition_penalty))
        return self._decode(lm, reqs, decoder)

    def generate_guided(self, *args, **kwargs):
        raise UserError("WatermarkedChat: guided decoding picks every token itself, so no watermark could be "
                        "embedded; use LocalChat for generate_guided")


class _WatermarkDecoder(Decoder):
    """LocalChat's decoding loop with the scheme applied to each live row's scores before the pick: a logit
    bias before the temperature, a tournament after it."""

    def __init__(self, lm, stop, temperature: float, top_p: float, processor, min_new_tokens: int = 0,
                 repetition_penalty: float = 1.0):
        super().__init__(lm, stop, temperature, top_p)
        self.processor, self.min_new = processor, min_new_tokens
        # a logit bias goes on before the temperature, a tournament after it (the module's docstring)
        self.bias_first = processor is not None and bool(processor.before_temperature)
        self.stop_index = sorted(stop)
        self.penalty = None
        if repetition_penalty != 1.0:
            from transformers.generation.logits_process import RepetitionPenaltyLogitsProcessor

            self.penalty = RepetitionPenaltyLogitsProcessor(penalty=repetition_penalty)

    def run(self, rows: list, seeds: list, limits: list, requests: Any = None):
        self._states = [{"prompt_len": len(r) if r else 1} for r in rows]
        return super().run(rows, seeds, limits, requests=requests)

    def _pick(self, logits, gens, rows=None, live=None, new=None, done=None, **state) -> list[int]:
        import torch

        logits = logits.cpu()
        scale = self.temperature if self.temperature > 0 else 1.0
        picks = []
        for k, r in enumerate(live):
            if done[r]:
                picks.append(0)
                continue
            context = (rows[r] if rows[r] else self.empty) + new[r]
            scores = logits[k]
            if self.penalty is not None:
                scores = self.penalty(torch.tensor([context], dtype=torch.long), scores[None].clone())[0]
            if len(new[r]) < self.min_new and self.stop_index:
                scores = scores.clone()
                scores[self.stop_index] = float("-inf")
            if self.bias_first:
                scores = self.processor.apply(scores, context, self._states[r])
            scores = scores / scale
            if self.processor is not None and not self.bias_first:
                scores = self.processor.apply(scores, context, self._states[r])
            if gens is None:
                picks.append(int(scores.argmax()))
            else:
                picks.append(sample_token(scores, 1.0, self.top_p, gens[k]))
        return picks


def watermarked_generator(generator: Any, watermark: Any):
    """A generator that embeds ``watermark``: a local model (name, dict or :class:`LocalChat`) becomes a
    :class:`WatermarkedChat` with the same parameters; anything else is refused in one line."""
    from . import resolve_generator

    gen = resolve_generator(generator)
    if isinstance(gen, WatermarkedChat):
        return gen.set_params(watermark=watermark) if watermark is not None else gen
    if type(gen) is LocalChat:
        return WatermarkedChat(watermark=watermark, **gen.get_params(deep=False))
    raise UserError(f"{type(gen).__name__} cannot watermark: a watermark changes the model's scores at every "
                    f"step, which only a local model (LocalChat) exposes; an endpoint or a preset returns finished "
                    f"text")
