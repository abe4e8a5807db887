"""Cost of the metric detectors with and without the shared one-pass statistics.

Runs, side by side on a sample of the demo set and one scoring model:

* ``log_likelihood alone``: the log-likelihood detector on a cold cache;
* ``all together``: the seven one-pass metric detectors (log-likelihood, rank,
  log-rank, entropy, GLTR, LRR, Fast-DetectGPT) one after the other on one cold
  cache, so they share one forward pass per text;
* ``each separately``: the same seven, clearing the cache before each, i.e. one
  forward pass per text per detector (what running them independently costs).

It prints a table of wall times, the two ratios the design targets
(together / LL alone <= 1.3, separately / together >= 4), that the scores of
both modes agree, and each detector's zero-shot AUROC on the sample.

    python benchmarks/bench_detectors.py --n 10 --max-tokens 128 --threads 1
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=10, help="demo pairs to sample (texts = 2n) [10]")
    ap.add_argument("--max-tokens", type=int, default=128, help="tokens scored per text [128]")
    ap.add_argument("--model", default="smollm2-135m-instruct", help="scoring model [smollm2-135m-instruct]")
    ap.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    import torch
    from sklearn.metrics import roc_auc_score

    from humanize.benchmarks.data import load_demo
    from humanize.detectors import lm_stats
    from humanize.detectors.fast_detectgpt import FastDetectGPT
    from humanize.detectors.metric import GLTR, LRR, Entropy, LogLikelihood, LogRank, Rank
    from humanize.models import load_causal_lm

    if args.threads:
        torch.set_num_threads(args.threads)
    df = load_demo(n=args.n, seed=args.seed)
    texts = df["generation"].tolist()
    y = (df["label"] == "machine").to_numpy()
    lm = load_causal_lm(args.model)
    detectors = [cls(lm, max_tokens=args.max_tokens) for cls in
                 (LogLikelihood, Rank, LogRank, Entropy, GLTR, LRR, FastDetectGPT)]
    lm_stats.LMStatistics(lm, max_tokens=8, cache=False).compute(["Warm-up text."])  # first-call overheads

    def timed(fn):
        t0 = time.perf_counter()
        out = fn()
        return time.perf_counter() - t0, out

    lm_stats.clear_cache()
    t_ll, _ = timed(lambda: detectors[0].score(texts))
    passes_ll = lm_stats.cache_info()["forward_texts"]

    lm_stats.clear_cache()
    together, scores_together = {}, {}
    for det in detectors:
        together[det.name], scores_together[det.name] = timed(lambda: det.score(texts))
    passes_together = lm_stats.cache_info()["forward_texts"]

    separate, scores_separate, passes_separate = {}, {}, 0
    for det in detectors:
        lm_stats.clear_cache()
        separate[det.name], scores_separate[det.name] = timed(lambda: det.score(texts))
        passes_separate += lm_stats.cache_info()["forward_texts"]

    t_together, t_separate = sum(together.values()), sum(separate.values())
    print(f"model={lm.resolved}  texts={len(texts)} ({int(y.sum())} machine)  max_tokens={args.max_tokens}  "
          f"threads={torch.get_num_threads()}")
    print(f"{'detector':<16}{'together (s)':>14}{'separately (s)':>16}{'AUROC':>8}{'max |diff|':>12}")
    for det in detectors:
        a, b = scores_together[det.name], scores_separate[det.name]
        auc = roc_auc_score(y, a)
        print(f"{det.name:<16}{together[det.name]:>14.2f}{separate[det.name]:>16.2f}{auc:>8.3f}"
              f"{np.nanmax(np.abs(a - b)):>12.2e}")
    print(f"{'total':<16}{t_together:>14.2f}{t_separate:>16.2f}")
    print(f"log_likelihood alone: {t_ll:.2f} s ({passes_ll} texts through the model)")
    print(f"all together: {t_together:.2f} s ({passes_together} texts through the model)")
    print(f"each separately: {t_separate:.2f} s ({passes_separate} texts through the model)")
    r1, r2 = t_together / t_ll, t_separate / t_together
    print(f"together / LL alone = {r1:.2f}  (target <= 1.3: {'ok' if r1 <= 1.3 else 'MISSED'})")
    print(f"separately / together = {r2:.2f}  (target >= 4: {'ok' if r2 >= 4 else 'MISSED'})")
    agree = all(np.allclose(scores_together[k], scores_separate[k], rtol=1e-6, atol=1e-9, equal_nan=True)
                for k in scores_together)
    print(f"scores identical in both modes: {agree}")
    return 0 if (r1 <= 1.3 and r2 >= 4 and agree) else 1


if __name__ == "__main__":
    raise SystemExit(main())
