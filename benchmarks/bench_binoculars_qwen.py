"""Does the offline Qwen2.5-Coder 0.5B/1.5B pair make a usable Binoculars detector? AUROC on demo texts.

Scores the same clean human and machine demo texts with ``binoculars_qwen`` and, for
reference, the log-likelihood and Fast-DetectGPT detectors on SmolLM2, and prints each
AUROC (scikit-learn) and the seconds it took. Needs the opt-in extras ``qwen-0-5b`` and
``qwen-1-5b`` (about 9 GB of memory in fp32); on 2 CPU cores 50 texts take about 20 minutes.

    OMP_NUM_THREADS=2 .venv/bin/python benchmarks/bench_binoculars_qwen.py --n 25 --max-tokens 256
"""
from __future__ import annotations

import argparse
import time


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=25, help="texts per label (default 25)")
    ap.add_argument("--max-tokens", type=int, default=256, help="tokens scored per text by binoculars_qwen")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    from sklearn.metrics import roc_auc_score

    from humanize import detectors
    from humanize.benchmarks.data import load_dataset

    df = load_dataset("demo")
    df = df[df["attack"].fillna("none") == "none"]
    human = df[df["label"] == "human"].sample(args.n, random_state=args.seed)
    machine = df[df["label"] == "machine"].sample(args.n, random_state=args.seed)
    texts = list(human["generation"]) + list(machine["generation"])
    labels = [0] * len(human) + [1] * len(machine)
    print(f"{len(human)} human + {len(machine)} machine demo texts, seed {args.seed}")
    for name in ("binoculars_qwen", "log_likelihood", "fast_detectgpt"):
        det = detectors.get(name, max_tokens=args.max_tokens) if name == "binoculars_qwen" else detectors.get(name)
        t0 = time.perf_counter()
        scores = det.score(texts)
        print(f"{name:16s} AUROC {roc_auc_score(labels, scores):.3f}  {time.perf_counter() - t0:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
