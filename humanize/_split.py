"""Seeded rules every layer shares: the train/test split of source documents and pandas' sampling seed.

A source document is in the train part when BLAKE2b of ``"{seed}/{source_id}"``,
read as a fraction of 2**64, is below ``fraction``. It depends on nothing but the
document's id, the seed and the fraction, so an attack that trains a surrogate on
a dataset's train part (HMGC) with the run's seed and ``train_fraction`` never
sees a document the run tests on, whatever sample of the dataset either draws.

A dataset may hold one text under several source ids (the demo set holds 21 texts twice);
:func:`group_split` keeps every copy of a text (by content hash, :func:`humanize.text.text_hash`)
and every row of a source document on one side: a group of source documents linked by a shared
text is in the train part only when each of its source documents is (so a text is never fit on
and tested on; a group is in the test part when any member is). A dataset that brings its own
split (MGTBench, MGT-Academic) is kept, except that the train copies of a text also in the test
part are moved to the test part. Both say how many texts they found more than once.

Both live here, below the attacks, so that the benchmarks (the runner) and the
attack layer's training sets use one rule without the attacks importing the
benchmarks.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

from humanize.text import text_hash

__all__ = ["SplitResult", "group_split", "in_train_split", "sampling_seed"]


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


@dataclass(frozen=True)
class SplitResult:
    """The side of each row ("train"/"test") and what the split found."""
    parts: list
    duplicate_texts: int  # texts (by content hash) held by more than one row
    duplicate_rows: int  # rows holding such a text
    moved: int = 0  # rows moved from train to test (a dataset's own split that had a text on both sides)

    def note(self) -> str | None:
        """One line for the run's warnings, or None when no text is held twice."""
        if not self.duplicate_texts:
            return None
        how = (f"; {self.moved} train row(s) sharing a text with the test part moved to the test part"
               if self.moved else "; each text and its source documents kept on one side of the train/test split")
        return (f"{self.duplicate_texts} duplicate text(s) (same content hash) in {self.duplicate_rows} rows of the "
                f"sample{how}")


def group_split(source_ids, texts, seed: int, fraction: float, given=None) -> SplitResult:
    """The train/test side of each row, no text (by content hash) on both sides.

    Without ``given``: rows are grouped by source document and by text (a union of the two
    relations); a group is "train" when :func:`in_train_split` puts every one of its source ids
    in the train part, else "test". A row whose text no other source document holds gets the
    side of its source id alone, as before. With ``given`` (a dataset's own "train"/"test" per
    row), that split is kept, and each train row whose text a test row also holds is moved to
    the test part (counted in ``moved``).
    """
    source_ids = [str(s) for s in source_ids]
    hashes = [text_hash(t) for t in texts]
    if len(source_ids) != len(hashes):
        raise ValueError(f"{len(source_ids)} source ids for {len(hashes)} texts")
    counts: dict = {}
    for h in hashes:
        counts[h] = counts.get(h, 0) + 1
    dup_texts = sum(1 for c in counts.values() if c > 1)
    dup_rows = sum(c for c in counts.values() if c > 1)
    if given is not None:
        given = [str(g) for g in given]
        tested = {h for h, g in zip(hashes, given) if g == "test"}
        parts = ["test" if g == "train" and h in tested else g for g, h in zip(given, hashes)]
        return SplitResult(parts, dup_texts, dup_rows, sum(a != b for a, b in zip(given, parts)))
    parent: dict = {}

    def find(x):
        root = x
        while parent.setdefault(root, root) != root:
            root = parent[root]
        while parent[x] != root:  # path compression
            parent[x], x = root, parent[x]
        return root

    for sid, h in zip(source_ids, hashes):
        a, b = find(("s", sid)), find(("t", h))
        if a != b:
            parent[max(a, b)] = min(a, b)
    test_roots = {find(("s", sid)) for sid in set(source_ids) if not in_train_split(sid, seed, fraction)}
    parts = ["test" if find(("s", sid)) in test_roots else "train" for sid in source_ids]
    return SplitResult(parts, dup_texts, dup_rows)
