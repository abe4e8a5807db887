"""The train/test split of source documents, shared by the runner and the attacks that learn.

A source document is in the train part when BLAKE2b of ``"{seed}/{source_id}"``,
read as a fraction of 2**64, is below ``fraction``. It depends on nothing but the
document's id, the seed and the fraction, so an attack that trains a surrogate on
a dataset's train part (HMGC) with the run's seed and ``train_fraction`` never
sees a document the run tests on, whatever sample of the dataset either draws.
"""
from __future__ import annotations

import hashlib

__all__ = ["in_train_split"]


def in_train_split(source_id: str, seed: int, fraction: float) -> bool:
    """Whether source document ``source_id`` is in the train part for ``seed`` and ``fraction``."""
    h = hashlib.blake2b(f"{seed}/{source_id}".encode(), digest_size=8).digest()
    return int.from_bytes(h, "little") / 2**64 < fraction
