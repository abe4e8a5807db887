"""KGW: the green-list watermark of Kirchenbauer et al. (ICML 2023), as ``transformers`` draws it.

At each step the previous token(s) seed a permutation of the vocabulary; its first ``gamma |V|``
ids are the *green list*, whose logits get ``+delta`` (§3, Algorithm 2). Detection needs no model:
count the green tokens of a text and test them against ``gamma`` (§4, the one-proportion z-test).

The green list is ``transformers.WatermarkLogitsProcessor``'s own (its ``_get_greenlist_ids``:
``torch.randperm`` under a generator seeded with ``key * last token`` for ``"lefthash"``, with the
min-hash over the last ``context_width`` tokens and the candidate for ``"selfhash"``, the
reliability study's Algorithm 3), so text from ``model.generate(watermarking_config=...)`` with the
same key scores here too. Where transformers did not fit: its ``WatermarkDetector`` wants a model
config and equal-length id tensors, and its cache is keyed on tensors (by identity), so it draws one
permutation per n-gram; here each context's green list is drawn once per process and kept as a bit
set, which is what makes detection cost microseconds per token. transformers' ``"lefthash"`` reads the
last token only, so ``context_width`` > 1 needs ``"selfhash"``.
"""
from __future__ import annotations

from numbers import Real
from typing import Sequence

from humanize.validation import Interval, Options
from humanize.exceptions import InvalidParameterError

from .base import KEY, Watermark, key_int

__all__ = ["KGW"]

SEEDING_SCHEMES = ("lefthash", "selfhash")
#: transformers' default ``hashing_key`` (the millionth prime): public, for demos only
DEFAULT_KEY = 15485863


class KGW(Watermark):
    """Kirchenbauer et al. 2023: ``gamma`` (green share), ``delta`` (logit bias), ``seeding_scheme``
    (``"lefthash"``: the previous token; ``"selfhash"``: the last ``context_width`` tokens and the
    candidate itself), ``context_width``, ``key`` (an int < 2**63 used as transformers' ``hashing_key``,
    or a passphrase turned into one). The default key is transformers' public one: give your own."""

    name = "kgw"
    _parameter_constraints = {
        "key": KEY,
        "gamma": [Interval(Real, 0, 1, closed="neither")],
        "delta": [Interval(Real, 0, None)],
        "seeding_scheme": [Options(str, set(SEEDING_SCHEMES))],
        "context_width": [Interval(int, 1, None)],
    }

    def __init__(self, key: "int | str" = DEFAULT_KEY, gamma: float = 0.25, delta: float = 2.0,
                 seeding_scheme: str = "lefthash", context_width: int = 1):
        self._init_params(locals())

    def _check(self) -> None:
        if self.seeding_scheme == "lefthash" and self.context_width != 1:
            raise InvalidParameterError(f"KGW: seeding_scheme='lefthash' seeds with the previous token only "
                                        f"(transformers' LeftHash), so context_width must be 1, got "
                                        f"{self.context_width}; use seeding_scheme='selfhash' for a wider context")

    def _make_processor(self, vocab_size: int) -> "GreenLists":
        return GreenLists(self, vocab_size)


class GreenLists:
    """The green lists of one KGW configuration over one vocabulary, drawn once per context and kept.

    ``apply`` biases one row of logits (generation); ``counts`` scores one text's token ids
    (detection). Both draw through the same transformers processor."""

    #: contexts whose green list is kept (6 KB each for a 49k vocabulary); the cache restarts past it
    MAX_CACHED = 16384
    #: Algorithm 2 biases the model's logits: the sampler divides by the temperature after ``apply``
    before_temperature = True

    def __init__(self, scheme: KGW, vocab_size: int):
        from transformers.generation.logits_process import WatermarkLogitsProcessor

        self.gamma, self.delta = float(scheme.gamma), float(scheme.delta)
        self.selfhash = scheme.seeding_scheme == "selfhash"
        self.width = int(scheme.context_width)
        self.vocab_size = vocab_size
        self.processor = WatermarkLogitsProcessor(vocab_size=vocab_size, device="cpu", greenlist_ratio=self.gamma,
                                                  bias=self.delta, hashing_key=key_int(scheme.key),
                                                  seeding_scheme=scheme.seeding_scheme, context_width=self.width)
        self._bits: dict = {}  # lefthash: previous token -> packed green list
        self._member: dict = {}  # selfhash: n-gram -> is its last token green

    # -- the green list of one context --------------------------------------------------
    def _green_bits(self, previous: int) -> bytes:
        bits = self._bits.get(previous)
        if bits is None:
            import numpy as np
            import torch

            ids = self.processor._get_greenlist_ids(torch.tensor([previous], dtype=torch.long)).numpy()
            mask = np.zeros(self.vocab_size, dtype=bool)
            mask[ids] = True
            if len(self._bits) >= self.MAX_CACHED:
                self._bits.clear()
            bits = self._bits[previous] = np.packbits(mask).tobytes()
        return bits

    def is_green(self, context: Sequence[int], token: int) -> bool:
        """Whether ``token`` is green after ``context`` (its last ``context_width`` tokens)."""
        if not self.selfhash:
            bits = self._green_bits(int(context[-1]))
            return bool(bits[token >> 3] >> (7 - (token & 7)) & 1) if 0 <= token < self.vocab_size else False
        gram = tuple(int(t) for t in context[len(context) - self.width + 1:]) + (int(token),)
        hit = self._member.get(gram)
        if hit is None:
            import torch

            green = self.processor._get_greenlist_ids(torch.tensor(gram, dtype=torch.long))
            hit = bool((green == token).any())
            if len(self._member) >= self.MAX_CACHED * 64:
                self._member.clear()
            self._member[gram] = hit
        return hit

    # -- generation -------------------------------------------------------------------------
    def apply(self, logits, context: Sequence[int], state: dict):
        """``logits`` (one row, before the temperature: Algorithm 2's raw logits) with ``+delta`` on the green
        list."""
        import numpy as np
        import torch

        if len(context) < self.width:
            return logits  # transformers skips the step too
        out = logits.clone()
        if not self.selfhash:
            mask = np.unpackbits(np.frombuffer(self._green_bits(int(context[-1])), dtype=np.uint8))[:self.vocab_size]
            out[: self.vocab_size] += torch.from_numpy(mask.astype(np.float32)) * self.delta
            return out
        ids = torch.tensor([int(t) for t in context], dtype=torch.long)
        n = self.vocab_size
        out[:n] = self.processor(ids[None], out[None, :n].clone()).reshape(-1)
        return out

    # -- detection ------------------------------------------------------------------------
    def counts(self, ids: Sequence[int], ignore_repeated_ngrams: bool = False) -> tuple[int, int]:
        """``(tokens scored, green tokens)`` of one text, as transformers' ``WatermarkDetector`` counts
        them: every token after the first ``context_width`` (``"lefthash"``) or ``context_width - 1``
        (``"selfhash"``); with ``ignore_repeated_ngrams`` each distinct (context, token) n-gram once
        (Kirchenbauer et al.'s reliability study, §2)."""
        start = self.width if not self.selfhash else self.width - 1
        if ignore_repeated_ngrams:
            seen: dict = {}
            for i in range(start, len(ids)):
                gram = tuple(ids[i - start: i + 1]) if start else (ids[i],)
                if gram not in seen:
                    seen[gram] = self.is_green(ids[i - start: i] if start else (), ids[i])
            return len(seen), sum(seen.values())
        green = 0
        if not self.selfhash:
            bits_of, n = self._green_bits, self.vocab_size
            for i in range(1, len(ids)):
                t = ids[i]
                if 0 <= t < n:
                    green += bits_of(ids[i - 1])[t >> 3] >> (7 - (t & 7)) & 1
            return max(len(ids) - 1, 0), green
        for i in range(start, len(ids)):
            green += self.is_green(ids[i - start: i] if start else (), ids[i])
        return max(len(ids) - start, 0), green

