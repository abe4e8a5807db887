"""Which offline rewriter keeps the attack apart from the scoring model? (issue #19 §4)

Paraphrases demo machine texts with each candidate rewriter (``Paraphrase`` at its defaults
otherwise) and prints, per rewriter, what the rewrite costs the text (MiniLM cosine, median
length ratio, texts returned unchanged, share of plausibly English outputs, seconds) and, per
scoring model, the AUROC of ``log_likelihood`` and ``fast_detectgpt`` on the clean and the
rewritten texts against demo human texts. A rewriter that is also the scoring model shows the
confound: its rewrite *raises* the AUROC of the detectors that share its model.

    .venv/bin/python benchmarks/bench_rewriter_pairing.py --machine 12 --human 40 \\
        --rewriters smollm2-135m-instruct qwen2.5-coder-0.5b-instruct \\
        --scorers smollm2-135m-instruct gemma-3-270m
"""
from __future__ import annotations

import argparse
import re
import time

import numpy as np
import pandas as pd


def looks_english(text: str) -> bool:
    """Non-empty, almost all ASCII, and at least a quarter of its words English stop words."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    words = re.findall(r"[A-Za-z']+", text.lower())
    ascii_share = sum(c.isascii() for c in text) / max(1, len(text))
    return bool(words) and ascii_share > 0.98 and sum(w in ENGLISH_STOP_WORDS for w in words) / len(words) > 0.25


def main() -> int:
    from sklearn.metrics import roc_auc_score

    from humanize import attacks, detectors
    from humanize.benchmarks.data import load_demo
    from humanize.quality.similarity import semantic_similarity

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--machine", type=int, default=12, help="demo machine texts to rewrite")
    ap.add_argument("--human", type=int, default=40, help="demo human texts (the negatives)")
    ap.add_argument("--rewriters", nargs="+", default=["smollm2-135m-instruct", "qwen2.5-coder-0.5b-instruct"])
    ap.add_argument("--scorers", nargs="+", default=["smollm2-135m-instruct", "gemma-3-270m"])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    rows = load_demo()
    rows = rows[rows["attack"].fillna("none") == "none"]
    machine = rows[rows["label"] == "machine"].sample(args.machine, random_state=args.seed)["generation"].tolist()
    human = rows[rows["label"] == "human"].sample(args.human, random_state=args.seed)["generation"].tolist()

    rewrites, quality = {}, {}
    for rewriter in args.rewriters:
        t0 = time.perf_counter()
        texts = [r.text for r in attacks.get("paraphrase", paraphraser=rewriter, seed=args.seed).batch(machine)]
        seconds = time.perf_counter() - t0
        rewrites[rewriter] = texts
        quality[rewriter] = {
            "cosine": float(np.mean(semantic_similarity(machine, texts))),
            "length_ratio": float(np.median([len(a.split()) / max(1, len(b.split())) for a, b in zip(texts, machine)])),
            "unchanged": sum(a.strip() == b.strip() for a, b in zip(texts, machine)),
            "english": sum(map(looks_english, texts)),
            "s_per_doc": seconds / len(machine),
        }
    pd.set_option("display.width", 200)
    print(f"\nRewrites of {len(machine)} demo machine texts")
    print(pd.DataFrame(quality).T.round(3).to_string(), "\n")

    labels = [0] * len(human) + [1] * len(machine)
    table = []
    for scorer in args.scorers:
        for name in ("log_likelihood", "fast_detectgpt"):
            det = detectors.get(name, model=scorer)
            human_scores = det.score(human)
            row = {"scorer": scorer, "detector": name,
                   "clean": roc_auc_score(labels, np.r_[human_scores, det.score(machine)])}
            for rewriter, texts in rewrites.items():
                row[rewriter] = roc_auc_score(labels, np.r_[human_scores, det.score(texts)])
            table.append(row)
    print(f"AUROC against {len(human)} demo human texts, clean and after each rewriter")
    print(pd.DataFrame(table).round(3).to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
