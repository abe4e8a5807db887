"""Time evaluate() on a score table shaped like a runner grid run and print the figures.

Run: ``python benchmarks/bench_evaluate.py [--n-boot N] [--repeat R] [--save PATH] [--check PATH]``.
The table: 2 detectors, 9 rule attacks x 20 rates (+ the clean "none") on 450 machine texts,
450 clean human texts, 2 domains (the profile of issue #13: evaluate runs on the driver after
the parallel work, so its time is serial). ``--save`` pickles evaluate's result; ``--check``
compares the result with a saved one (``pd.testing.assert_frame_equal``, attrs included).
"""

from __future__ import annotations

import argparse
import cProfile
import pickle
import pstats
import time

import numpy as np
import pandas as pd

from humanize.benchmarks.evaluation import evaluate


def frame(n_machine: int = 450, n_human: int = 450, n_attacks: int = 9, n_rates: int = 20,
          detectors=("det_a", "det_b"), domains=("news", "wiki"), seed: int = 0) -> pd.DataFrame:
    """A runner-like score table: one row per (detector, attack, text); labels "human"/"machine"."""
    rng = np.random.default_rng(seed)
    attacks = [(f"attack{a}@{r / n_rates:.2f}", a, r / n_rates)
               for a in range(n_attacks) for r in range(1, n_rates + 1)]
    mids = np.array([f"m{i:04d}" for i in range(n_machine)], dtype=object)
    hids = np.array([f"h{i:04d}" for i in range(n_human)], dtype=object)
    mdom = np.array(domains, dtype=object)[rng.integers(0, len(domains), n_machine)]
    hdom = np.array(domains, dtype=object)[rng.integers(0, len(domains), n_human)]
    parts = []
    for d, det in enumerate(detectors):
        human = rng.normal(0.0, 1.0, n_human).round(3)  # rounding makes ties, as real scores have
        clean = rng.normal(1.0 + 0.5 * d, 1.0, n_machine).round(3)
        parts.append(pd.DataFrame({"detector": det, "attack": "none", "label": "human", "domain": hdom,
                                   "id": hids, "adv_source_id": hids, "score": human}))
        parts.append(pd.DataFrame({"detector": det, "attack": "none", "label": "machine", "domain": mdom,
                                   "id": mids, "adv_source_id": mids, "score": clean}))
        for name, a, rate in attacks:
            shift = -rate * (0.5 + 0.2 * a)
            parts.append(pd.DataFrame({"detector": det, "attack": name, "label": "machine", "domain": mdom,
                                       "id": mids, "adv_source_id": mids,
                                       "score": (clean + shift + 0.3 * rng.normal(size=n_machine)).round(3)}))
    return pd.concat(parts, ignore_index=True)


def best_time(df: pd.DataFrame, n_boot: int, repeat: int) -> tuple[float, pd.DataFrame]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = evaluate(df, fprs=(0.05, 0.01), n_boot=n_boot)
        best = min(best, time.perf_counter() - t0)
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-boot", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--save", help="pickle evaluate's result here")
    ap.add_argument("--check", help="compare evaluate's result with this pickle")
    ap.add_argument("--profile", type=int, default=0, help="print the top N functions of a cProfile run")
    args = ap.parse_args()
    df = frame()
    n_att = df["attack"].nunique()
    seconds, out = best_time(df, args.n_boot, args.repeat)
    print(f"evaluate: {len(df):,} score rows (2 detectors x {n_att} attacks incl. none, 450 machine + 450 human, "
          f"2 domains), n_boot={args.n_boot}: best of {args.repeat} {seconds:.3f} s -> {len(out):,} rows")
    if args.save:
        with open(args.save, "wb") as fh:
            pickle.dump(out, fh)
    if args.check:
        with open(args.check, "rb") as fh:
            ref = pickle.load(fh)
        pd.testing.assert_frame_equal(out, ref, check_exact=True)
        assert out.attrs == ref.attrs, (out.attrs, ref.attrs)
        print(f"identical to {args.check}")
    if args.profile:
        prof = cProfile.Profile()
        prof.runcall(evaluate, df, fprs=(0.05, 0.01), n_boot=args.n_boot)
        pstats.Stats(prof).sort_stats("cumulative").print_stats(args.profile)


if __name__ == "__main__":
    main()
