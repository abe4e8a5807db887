"""Time evaluate()'s bootstrap intervals at a RAID-like scale and print the figures.

Run: ``python benchmarks/bench_bootstrap.py [n_per_domain] [n_boot]``. One detector, 8 domains,
``n_per_domain`` human and machine texts per domain, 4 attacks, FPR 5% and 1%.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd

from humanize.benchmarks.evaluation import evaluate


def frame(n: int, domains: int = 8, attacks=("a", "b", "c", "d"), seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    parts = []
    for k in range(domains):
        dom = f"dom{k}"
        ids = [f"{dom}-h{i}" for i in range(n)]
        parts.append(pd.DataFrame({"id": ids, "label": "human", "domain": dom, "attack": "none",
                                   "score": rng.normal(size=n)}))
        clean = rng.normal(1.0, 1.0, size=n)
        mids = [f"{dom}-m{i}" for i in range(n)]
        for attack, shift in (("none", 0.0), *((a, -0.3 * (j + 1)) for j, a in enumerate(attacks))):
            parts.append(pd.DataFrame({"id": mids, "label": "machine", "domain": dom, "attack": attack,
                                       "score": clean + shift + (0 if attack == "none" else 0.2 * rng.normal(size=n))}))
    return pd.concat(parts, ignore_index=True).assign(detector="det")


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    n_boot = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    df = frame(n)
    for b in (0, n_boot):
        t0 = time.perf_counter()
        evaluate(df, fprs=(0.05, 0.01), n_boot=b, seed=0)
        print(f"{len(df):,} score rows (8 domains x ({n} humans + {n} sources x 5 versions)), n_boot={b}: "
              f"{time.perf_counter() - t0:.2f} s")


if __name__ == "__main__":
    main()
