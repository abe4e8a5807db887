"""A per-document random stream: BLAKE2b in counter mode behind the ``random.Random`` API.

Every rule-based attack needs its own generator per document (same seed, same
output whatever the batch, order or process), and draws only a handful of
numbers from it. Seeding a Mersenne Twister (``random.Random(seed)``) costs about
6 µs, more than a cheap attack's whole work on a 1,000-character document, and a
numpy ``Generator`` costs more. Here seeding is the one hash that names the
document, and bits are read from it; further bits come from hashing a block
counter under a key taken from the same digest.

:class:`DocumentRandom` subclasses :class:`random.Random` the way the standard
library documents for "a different basic generator" (it overrides ``random``,
``getrandbits``, ``seed``, ``getstate`` and ``setstate``), so ``choice``,
``sample``, ``shuffle``, ``choices``, ``gauss`` … all work and draw from this
stream. The attacks use its exact fast paths: :meth:`~DocumentRandom.randbelow`,
:meth:`~DocumentRandom.randbelow_many`, :meth:`~DocumentRandom.sorted_sample` and
:meth:`~DocumentRandom.choose` (θ of n sites, the count rounded stochastically).
"""

from __future__ import annotations

import hashlib
import math
import os
import random
from itertools import filterfalse
from typing import Any

__all__ = ["DocumentRandom", "document_digest", "document_digest_head", "stochastic_count"]

_BLOCK_BITS = 512  # one BLAKE2b-512 output
_MANTISSA = 1.0 / (1 << 53)


def document_digest(seed: int, attack: str, text: str) -> bytes:
    """The 64-byte BLAKE2b digest naming one (seed, attack, document).

    A stable hash, never global state or Python's salted ``hash``, so a document
    gets the same randomness whatever the batch, its order or the process.
    """
    return hashlib.blake2b(document_digest_head(seed, attack) + text.encode("utf-8", "surrogatepass")).digest()


def document_digest_head(seed: int, attack: str) -> bytes:
    """The bytes that precede the document's UTF-8 in :func:`document_digest` (cached per attack)."""
    return b"%d\x00%s\x00" % (int(seed), attack.encode("utf-8", "surrogatepass"))


def stochastic_count(rate: float, n: int, rng) -> int:
    """floor(rate·n + u) with u ~ U[0, 1): an unbiased integer count in [0, n].

    ``rng`` has ``.random()``; it is drawn only when rate·n is not a whole number.
    RAID rounds θ·n down (see :mod:`humanize.attacks._sampling`).
    """
    if n <= 0 or rate <= 0:
        return 0
    if rate >= 1:
        return n
    x = rate * n
    k = math.floor(x)
    if x != k and rng.random() < x - k:
        k += 1
    return min(k, n)


def _seed_bytes(a: Any) -> bytes:
    if a is None:
        return os.urandom(32)
    if isinstance(a, (bytes, bytearray)):
        return b"b" + bytes(a)
    if isinstance(a, str):
        return b"s" + a.encode("utf-8", "surrogatepass")
    if isinstance(a, int) and not isinstance(a, bool):
        return b"i%d" % a
    raise TypeError(f"DocumentRandom seed must be None, int, str or bytes, got {type(a).__name__}")


class DocumentRandom(random.Random):
    """``random.Random`` drawing from BLAKE2b in counter mode.

    The first 256 bits are the second half of the seed digest; block ``i`` after
    that is ``BLAKE2b-512(i, key=first half of the digest)``. Bits are consumed
    least-significant first. Build one per document with :meth:`from_digest`
    (what :func:`humanize.attacks.document_random` does), or seed it like any
    ``random.Random`` (an int, str or bytes; ``None`` reads the OS's entropy).
    """

    VERSION = "humanize-blake2b-ctr-1"
    # Class-level defaults keep building one per document down to three attribute stores.
    _block = 0
    gauss_next = None

    def __init__(self, x: Any = None):
        self.seed(x)

    @classmethod
    def from_digest(cls, digest: bytes) -> "DocumentRandom":
        """The stream named by a 64-byte digest (see :func:`document_digest`)."""
        self = cls.__new__(cls)
        self._digest = digest
        self._pool = int.from_bytes(digest[32:], "little")
        self._left = 256
        return self

    # -- the basic generator ------------------------------------------------------------
    def seed(self, a: Any = None, version: int = 2) -> None:
        digest = hashlib.blake2b(_seed_bytes(a)).digest()
        self._digest = digest
        self._pool = int.from_bytes(digest[32:], "little")
        self._left = 256
        self._block = 0
        self.gauss_next = None

    def _refill(self, k: int) -> None:
        """Append counter-mode blocks to the pool until it holds at least ``k`` bits."""
        blocks = []
        key = self._digest[:32]
        left = self._left
        while left < k:
            self._block += 1
            blocks.append(hashlib.blake2b(self._block.to_bytes(8, "little"), key=key).digest())
            left += _BLOCK_BITS
        # One conversion for all the new blocks keeps a long draw linear in its length.
        self._pool |= int.from_bytes(b"".join(blocks), "little") << self._left
        self._left = left

    def getrandbits(self, k: int) -> int:
        """``k`` random bits as a non-negative int."""
        if k < 0:
            raise ValueError("number of bits must be non-negative")
        if self._left < k:
            self._refill(k)
        pool = self._pool
        self._pool = pool >> k
        self._left -= k
        return pool & ((1 << k) - 1)

    def random(self) -> float:
        """A float in [0, 1) with 53 random bits."""
        if self._left < 53:
            self._refill(53)
        pool = self._pool
        self._pool = pool >> 53
        self._left -= 53
        return (pool & 0x1FFFFFFFFFFFFF) * _MANTISSA

    def getstate(self) -> tuple:
        return (self.VERSION, self._digest, self._pool, self._left, self._block, self.gauss_next)

    def setstate(self, state: tuple) -> None:
        if not (isinstance(state, tuple) and len(state) == 6 and state[0] == self.VERSION):
            raise ValueError(f"state is not a {type(self).__name__} state (version {self.VERSION!r})")
        _, self._digest, self._pool, self._left, self._block, self.gauss_next = state

    # -- fast paths ---------------------------------------------------------------------
    def randbelow(self, n: int) -> int:
        """A uniform int in [0, n), by rejection on ``n.bit_length()`` bits (exact)."""
        return self.randbelow_many(n, 1)[0]

    def randbelow_many(self, n: int, k: int) -> list[int]:
        """``k`` independent uniform ints in [0, n): ``[randbelow(n) for _ in range(k)]``, faster."""
        if n <= 0:
            raise ValueError(f"randbelow needs n > 0, got {n}")
        bits = n.bit_length()
        mask = (1 << bits) - 1
        out: list[int] = []
        append = out.append
        pool, left = self._pool, self._left
        while k > 0:
            if left < bits:
                self._pool, self._left = pool, left
                self._refill(bits)
                pool, left = self._pool, self._left
            # as many candidates as the pool holds, without re-checking it for each
            taken = left // bits
            for i in range(taken):
                r = pool & mask
                pool >>= bits
                if r < n:
                    append(r)
                    k -= 1
                    if not k:
                        taken = i + 1
                        break
            left -= taken * bits
        self._pool, self._left = pool, left
        return out

    def choose(self, n: int, rate: float) -> list[int] | range:
        """Sorted indices of θ = ``rate`` of ``n`` sites, the count rounded stochastically.

        :func:`stochastic_count` sites, then :meth:`sorted_sample`.
        """
        k = stochastic_count(rate, n, self)
        if not k:
            return []
        return range(n) if k == n else self.sorted_sample(n, k)

    def sorted_sample(self, n: int, k: int) -> list[int]:
        """``k`` distinct ints from ``range(n)``, uniformly among the k-subsets, in increasing order.

        Floyd's algorithm, each draw by rejection like :meth:`randbelow`. Above 60% of
        ``n`` it draws the ``n - k`` left out instead (fewer draws outweigh the pass
        over ``range(n)`` that inverts them).
        """
        if not 0 <= k <= n:
            raise ValueError(f"sample size {k} is not in [0, {n}]")
        m = n - k if 5 * k > 3 * n else k
        chosen: set[int] = set()
        add = chosen.add
        bits = (n - m + 1).bit_length()
        mask = (1 << bits) - 1
        pool, left = self._pool, self._left
        for bound in range(n - m + 1, n + 1):
            if bound > mask:
                bits += 1
                mask = (1 << bits) - 1
            while True:
                if left < bits:
                    self._pool, self._left = pool, left
                    self._refill(bits)
                    pool, left = self._pool, self._left
                r = pool & mask
                pool >>= bits
                left -= bits
                if r < bound:
                    break
            add(bound - 1 if r in chosen else r)
        self._pool, self._left = pool, left
        if m != k:
            return list(filterfalse(chosen.__contains__, range(n)))
        return sorted(chosen)
