"""RAID's protocol: our evaluator (humanize.benchmarks.evaluation.raid) beside RAID's own (raid-bench).

Two figures, on synthetic frames shaped like RAID's splits (scores from two overlapping normals, higher
for machine rows, lower when attacked; human rows attacked too, as in RAID):

1. side by side on a frame small enough for RAID's evaluator (default 5,400 rows): both evaluators'
   wall seconds in one process, their ratio, and whether every threshold, achieved FPR, per-slice
   TP/FN/TPR and AUROC agree (to 1e-9);
2. ours alone on a frame of the size of RAID's test split (default 672,000 rows: 8 domains x 12 attacks x
   (11 generators x 2 decodings x 2 repetition penalties + humans)): wall and CPU seconds, slices, and the
   process's peak RSS.

    OMP_NUM_THREADS=2 python benchmarks/bench_raid_evaluate.py [--side-rows 5400] [--rows 672000]

RAID's evaluator must be installed (scripts/setup.sh installs raid-bench 0.2.0 without its pinned
dependencies); without it only figure 2 is printed.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import time

import numpy as np
import pandas as pd

DOMAINS = ("abstracts", "books", "news", "poetry", "recipes", "reddit", "reviews", "wiki")
MODELS = ("chatgpt", "gpt4", "gpt3", "gpt2", "llama-chat", "mistral", "mistral-chat", "mpt", "mpt-chat", "cohere",
          "cohere-chat")
ATTACKS = ("none", "homoglyph", "number", "article_deletion", "insert_paragraphs", "perplexity_misspelling",
           "upper_lower", "whitespace", "zero_width_space", "synonym", "paraphrase", "alternative_spelling")


def raid_shaped(rows: int, domains=DOMAINS, models=MODELS, attacks=ATTACKS, seed: int = 0) -> pd.DataFrame:
    """About ``rows`` rows: per domain and source document, a human row and every model x decoding x
    repetition penalty, each under every attack."""
    per_source = len(attacks) * (len(models) * 4 + 1)
    sources = max(1, math.ceil(rows / (len(domains) * per_source)))
    d, s, m, dec, rp, a = (np.array(v) for v in zip(*[
        (dom, src, model, decoding, penalty, attack)
        for dom in domains for src in range(sources) for attack in attacks
        for model, decoding, penalty in [("human", None, None)] + [(mo, de, r) for mo in models
                                                                   for de in ("greedy", "sampling")
                                                                   for r in ("yes", "no")]]))
    frame = pd.DataFrame({"id": [f"r{i}" for i in range(len(d))], "model": m, "decoding": dec,
                          "repetition_penalty": rp, "attack": a, "domain": d})
    rng = np.random.default_rng(seed)
    mean = np.where(frame["model"] == "human", 0.35, 0.6) - np.where(frame["attack"] != "none", 0.08, 0.0)
    frame["score"] = 1 / (1 + np.exp(-rng.normal(mean * 4 - 2, 1.0)))
    return frame.sample(frac=1.0, random_state=seed).reset_index(drop=True)


def _same(theirs: dict, ours: dict, tol: float = 1e-9) -> bool:
    for key, t in theirs["thresholds"].items():
        o = ours["thresholds"][key]
        pairs = [(t[d], o[d]) for d in t] + [(theirs["fpr"][key][d], ours["fpr"][key][d]) for d in t] \
            if isinstance(t, dict) else [(t, o)]
        if any(abs(x - y) > tol for x, y in pairs):
            return False
    if len(theirs["scores"]) != len(ours["scores"]):
        return False
    for t, o in zip(theirs["scores"], ours["scores"]):
        if any(t[k] != o[k] for k in ("domain", "model", "decoding", "repetition_penalty", "attack")):
            return False
        if abs(t["auroc"] - o["auroc"]) > tol:
            return False
        for key, acc in t["accuracy"].items():
            mine = o["accuracy"][key]
            if (acc is None) != (mine is None):
                return False
            if acc and (acc["tp"], acc["fn"]) != (mine["tp"], mine["fn"]):
                return False
    return True


def _timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    from humanize.benchmarks.evaluation.raid import raid_evaluate

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--side-rows", type=int, default=5400, help="rows of the side-by-side frame")
    ap.add_argument("--rows", type=int, default=672_000, help="rows of the test-split-sized frame")
    ap.add_argument("--fpr", type=float, nargs="+", default=[0.05])
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs")
    try:
        from raid import run_evaluation
    except ImportError:
        run_evaluation = None
        print("raid-bench is not installed: no side-by-side figure (scripts/setup.sh installs it)")
    if run_evaluation is not None:
        small = raid_shaped(args.side_rows, domains=DOMAINS[:3], models=MODELS[:3], attacks=ATTACKS[:4])
        preds = small[["id", "score"]].to_dict(orient="records")
        data = small.drop(columns=["score"])
        theirs, t_wall, t_cpu = _timed(lambda: run_evaluation(preds, data, target_fpr=args.fpr))
        ours, o_wall, o_cpu = _timed(lambda: raid_evaluate(preds, data, args.fpr))
        print(f"side by side, {len(small):,} rows, {len(ours['scores']):,} slices:")
        print(f"  RAID's run_evaluation  {t_wall:8.2f} s wall  {t_cpu:8.2f} s CPU")
        print(f"  ours (raid_evaluate)   {o_wall:8.2f} s wall  {o_cpu:8.2f} s CPU")
        print(f"  ratio {t_wall / o_wall:.1f}x wall, {t_cpu / o_cpu:.1f}x CPU; identical outputs (1e-9): "
              f"{_same(theirs, ours)}")
    big = raid_shaped(args.rows)
    preds = big[["id", "score"]]
    data = big.drop(columns=["score"])
    ours, wall, cpu = _timed(lambda: raid_evaluate(preds, data, args.fpr))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2
    head = next(r for r in ours["scores"] if r["domain"] == r["attack"] == r["model"] == "all"
                and r["decoding"] == r["repetition_penalty"] == "all")
    print(f"ours on {len(big):,} rows (RAID's test split's size), {len(ours['scores']):,} slices: {wall:.2f} s wall, "
          f"{cpu:.2f} s CPU, peak RSS {rss:.2f} GiB (the synthetic frame included); headline AUROC "
          f"{head['auroc']:.4f}")


if __name__ == "__main__":
    main()
