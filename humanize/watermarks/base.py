"""What every watermark scheme shares: its key as a number, its parameters, its z-statistic.

A scheme is used two ways. At generation time :meth:`Watermark.logits_processor` gives, for a
vocabulary size, an object whose ``apply(logits, context, state)`` changes one row's next-token
scores (``context`` the row's token ids so far) and whose ``before_temperature`` says where in a
sampling step it goes: True for a logit bias (KGW, Unigram: the raw logits, as Kirchenbauer et al.
2023's code runs it before the temperature), False for SynthID's tournament (the tempered scores);
at detection time each scheme's detector (:mod:`humanize.detectors.watermark`) computes its
statistic from token ids alone, with no model.
"""
from __future__ import annotations

import hashlib
import math
from numbers import Integral

from humanize.params import ParamsMixin
from humanize.validation import NONBLANK_STR, Interval

__all__ = ["Watermark", "KEY", "key_int", "z_score"]

#: a watermark key: a non-negative int below 2**63 (transformers' ``hashing_key``) or a passphrase
KEY = [Interval(Integral, 0, 2**63, closed="left"), NONBLANK_STR]


def key_int(key, purpose: str = "") -> int:
    """The key as a 63-bit int: an int key as it is (``purpose`` empty), a passphrase (or any key with
    a ``purpose``) through keyed BLAKE2b, so one passphrase gives a scheme all the numbers it needs."""
    if isinstance(key, Integral) and not purpose:
        return int(key)
    data = str(int(key) if isinstance(key, Integral) else key).encode("utf-8", "surrogatepass")
    mac = hashlib.blake2b(data, digest_size=8, person=b"hb-watermark", salt=purpose.encode()[:16].ljust(16, b"\0"))
    return int.from_bytes(mac.digest(), "little") >> 1


def z_score(green: float, scored: float, gamma: float) -> float:
    """Kirchenbauer et al. (2023) §4: ``(|s|_G - gamma T) / sqrt(T gamma (1 - gamma))``; 0.0 for no token
    scored (no evidence either way)."""
    if scored <= 0:
        return 0.0
    return (green - gamma * scored) / math.sqrt(scored * gamma * (1.0 - gamma))


class Watermark(ParamsMixin):
    """Base class of the schemes. ``key`` is a secret (shown and fingerprinted as a digest only)."""

    name = "watermark"
    version = "1"
    _derived_state = ("_processors",)

    def logits_processor(self, vocab_size: int):
        """The generation-time processor for a model whose logits have ``vocab_size`` entries (cached)."""
        cache = self.__dict__.setdefault("_processors", {})
        if vocab_size not in cache:
            cache[vocab_size] = self._make_processor(int(vocab_size))
        return cache[vocab_size]

    def _make_processor(self, vocab_size: int):
        raise NotImplementedError

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_processors", None)  # torch tables are rebuilt from the parameters
        return state
