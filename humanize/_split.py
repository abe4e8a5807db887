"""Seeded rules every layer shares: the train/test split of source documents and pandas' sampling seed.

A source document is in the train part when BLAKE2b of ``"{seed}/{source_id}"``,
read as a fraction of 2**64, is below ``fraction``. It depends on nothing but the
document's id, the seed and the fraction, so an attack that trains a surrogate on
a dataset's train part (HMGC) with the run's seed and ``train_fraction`` never
sees a document the run tests on, whatever sample of the dataset either draws.

Both live here, below the attacks, so that the benchmarks (the runner) and the
attack layer's training sets use one rule without the attacks importing the
benchmarks (``humanize.benchmarks.data.split`` and ``humanize.benchmarks.runner.attack_spec``
re-export them).
"""
from __future__ import annotations

import hashlib

__all__ = ["in_train_split", "sampling_seed"]


def in_train_split(source_id: str, seed: int, fraction: float) -> bool:
    """Whether source document ``source_id`` is in the train part for ``seed`` and ``fraction``."""
    h = hashlib.blake2b(f"{seed}/{source_id}".encode(), digest_size=8).digest()
    return int.from_bytes(h, "little") / 2**64 < fraction


def sampling_seed(seed: int) -> int:
    """A seed numpy/pandas accept ([0, 2**32)) from any int: itself when in range (so existing
    results stay reproducible), else 32 bits of BLAKE2b of its decimal form."""
    if 0 <= seed < 2**32:
        return int(seed)
    return int.from_bytes(hashlib.blake2b(str(int(seed)).encode(), digest_size=4).digest(), "little")
