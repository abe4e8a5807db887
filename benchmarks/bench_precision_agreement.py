"""Do the metric detectors' figures survive bfloat16 (and dynamic int8) scoring? (issue #38)

Scores ``--n`` demo pairs (about ``n`` human and ``n`` machine texts) with the demo's one-pass metric detectors
under the scoring model in float32, bfloat16 and dynamic int8, and prints per detector: the Spearman
correlation of each precision's scores with float32's, the largest score difference, and each precision's
AUROC next to float32's 95% stratified bootstrap interval (the run's own resampling,
:mod:`humanize.benchmarks.evaluation.bootstrap`), saying whether it falls inside.

    python benchmarks/bench_precision_agreement.py --n 40
"""
from __future__ import annotations

import argparse

import numpy as np

DETECTORS = ("log_likelihood", "log_rank", "entropy", "gltr", "lrr", "fast_detectgpt")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=40, help="demo pairs [40]")
    ap.add_argument("--boot", type=int, default=2000, help="bootstrap replicates [2000]")
    ap.add_argument("--no-int8", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    from scipy.stats import spearmanr

    from humanize import detectors as registry
    from humanize.benchmarks.data import load_demo
    from humanize.benchmarks.evaluation.bootstrap import stratified_counts, weighted_auroc
    from humanize.benchmarks.evaluation.metrics import auroc
    from humanize.models import load_causal_lm
    from humanize.models.precision import quantize_dynamic_int8

    df = load_demo(n=args.n, seed=args.seed)
    texts, y = df["generation"].tolist(), (df["label"] == "machine").to_numpy().astype(int)
    fp32 = load_causal_lm(dtype="float32")
    models = {"float32": fp32, "bfloat16": load_causal_lm(dtype="bfloat16")}
    if not args.no_int8:
        models["int8"] = quantize_dynamic_int8(fp32)
    scores = {p: {d: np.asarray(registry.get(d, model=lm).score(texts), dtype=float) for d in DETECTORS}
              for p, lm in models.items()}
    rng = np.random.default_rng(args.seed)
    counts = stratified_counts(rng, y, args.boot).astype(float)
    print(f"{len(texts)} demo texts ({int(y.sum())} machine); AUROC interval: 95% stratified bootstrap, "
          f"{args.boot} replicates, of float32\n")
    print(f"{'detector':<15} {'precision':<9} {'AUROC':>6} {'fp32 95% CI':>15} {'inside':>6} {'Spearman':>9} "
          f"{'max |diff|':>10}")
    for d in DETECTORS:
        base = scores["float32"][d]
        reps = weighted_auroc(base[y == 1], counts[:, y == 1], base[y == 0], counts[:, y == 0])
        lo, hi = np.quantile(reps, [0.025, 0.975])
        for p in models:
            s = scores[p][d]
            a = auroc(s, y)
            rho = spearmanr(s, base).statistic
            print(f"{d:<15} {p:<9} {a:>6.3f} {f'[{lo:.3f}, {hi:.3f}]':>15} {'yes' if lo <= a <= hi else 'NO':>6} "
                  f"{rho:>9.4f} {np.max(np.abs(s - base)):>10.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
