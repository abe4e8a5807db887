"""Choosing which candidate sites an attack changes.

RAID applies an attack to a fraction θ of the available sites (paper Table 11,
Appendix E.4). RAID rounds θ·N down, which never touches a short text at small
θ (upper-lower at θ = 0.05 on a 19-word text); we round stochastically instead,
so the expected fraction changed is exactly θ for every length.
"""

from __future__ import annotations

import random

import numpy as np

from ._stream import DocumentRandom, stochastic_count


def choose_sites(n: int, rate: float, rnd: "random.Random | np.random.Generator") -> list[int] | range:
    """Sorted indices of the sites to change: θ of ``n``, without replacement.

    ``rnd`` is the document's :class:`DocumentRandom` (rule attacks), any other
    ``random.Random``, or a numpy generator.
    """
    if type(rnd) is DocumentRandom:
        return rnd.choose(n, rate)
    k = stochastic_count(rate, n, rnd)
    if k == n:
        return range(n)
    if k == 0:
        return []
    if isinstance(rnd, np.random.Generator):
        return np.sort(rnd.choice(n, size=k, replace=False)).tolist()
    return sorted(rnd.sample(range(n), k))
