"""RAFT against its target with valid candidates only (issue #39): the AUROC drop, swaps, validity, queries.

On the first ``--n`` demo machine texts of at least ``--words`` words (cut to that many) against
``--humans`` human texts, RAFT attacks ``log_likelihood`` (SmolLM2-135M), the detector it targets,
under one or more recipes:

- ``before``: the defaults of issue #33 (``llm`` the packaged 0.5B chat model, only the θ most
  predictable words offered, no query budget);
- ``after``: today's defaults (issue #39: the lexical stand-in with every sense in context, every
  eligible word offered in predictability order within 100 queries);
- ``margin=X``: today's defaults with ``context_margin=X``.

For each it prints the target's AUROC clean and attacked and the drop (a paired bootstrap 95%
interval over the machine texts, the humans fixed), swaps per document, WordNet-valid share, the
share of swaps failing the context meter under SmolLM2 (the library's meter: also the *target's*
model, so RAFT's search picks exactly the swaps it penalises) and under Gemma-3-270M (a model
neither RAFT, whose proxy is Qwen2.5-0.5B, nor the target uses; same -3-nat threshold, which on
the labelled swaps of ``tests/quality/data/context_swaps.json`` lets through 5.7% of the invalid
ones and 54% of the valid ones), MiniLM cosine, detector queries and seconds per document.

    OMP_NUM_THREADS=1 nice .venv/bin/python benchmarks/bench_raft_effect.py --n 20 --recipes before after
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from _demo_texts import demo_machine_texts  # noqa: E402
from bench_context import human_texts  # noqa: E402

BEFORE = {"llm": "qwen2.5-coder-0.5b-instruct", "offer": "top_k", "max_queries": None}


def recipe_params(recipe: str) -> dict:
    if recipe == "before":
        return dict(BEFORE)
    if recipe == "after":
        return {}
    if recipe.startswith("margin="):
        return {"context_margin": float(recipe.split("=", 1)[1])}
    if recipe.startswith("proxy="):
        return {"proxy": recipe.split("=", 1)[1]}
    raise SystemExit(f"unknown recipe {recipe!r}: before, after, margin=X or proxy=MODEL")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--words", type=int, default=120)
    ap.add_argument("--humans", type=int, default=60)
    ap.add_argument("--recipes", nargs="+", default=["before", "after"])
    ap.add_argument("--boot", type=int, default=1000)
    ap.add_argument("--list", action="store_true", help="print every swap with every meter's verdict")
    ap.add_argument("--meters", nargs="+", default=None,
                    help="causal LMs judging each swap in context (default: SmolLM2-135M and Gemma-3-270M)")
    args = ap.parse_args(argv)

    from sklearn.metrics import roc_auc_score

    from humanize import detectors
    from humanize.attacks import registry
    from humanize.models import DEFAULT_CAUSAL_LM, DEFAULT_RANKING_LM
    from humanize.quality import semantic_similarity, summarize_validity, swap_validity
    from humanize.quality.context import sentence_spans
    from humanize.quality.validity import word_swaps

    machine = demo_machine_texts(args.n, args.words)
    human = human_texts(args.humans, args.words)
    det = detectors.get("log_likelihood")
    h = np.asarray(det.score(human), dtype=float)
    clean = np.asarray(det.score(machine), dtype=float)
    y = np.r_[np.zeros(len(h)), np.ones(len(machine))]
    rng = np.random.default_rng(0)
    boots = [rng.integers(0, len(machine), len(machine)) for _ in range(args.boot)]

    def auroc(m: np.ndarray) -> float:
        return float(roc_auc_score(y, np.r_[h, m]))

    print(f"{len(machine)} demo machine texts ({args.words} words) vs {len(human)} human texts; target log_likelihood "
          f"({DEFAULT_CAUSAL_LM}); clean AUROC {auroc(clean):.3f}\n")
    meters = args.meters or [DEFAULT_CAUSAL_LM, DEFAULT_RANKING_LM]
    short = [m.split("-")[0] for m in meters]
    print("| recipe | AUROC | drop [95% CI] | swaps/doc | WordNet-valid | "
          + " | ".join(f"fail context ({n})" for n in short) + " | "
          + " | ".join(f"valid (WordNet and {n})" for n in short) + " | cosine | queries/doc | s/doc |")
    print("|---" * (8 + 2 * len(meters)) + "|", flush=True)
    for recipe in args.recipes:
        attack = registry.get("raft", **recipe_params(recipe))
        t0 = time.perf_counter()
        results = attack.batch(machine)
        secs = (time.perf_counter() - t0) / len(machine)
        out = [r.text for r in results]
        attacked = np.asarray(det.score(out), dtype=float)
        drops = [auroc(clean[b]) - auroc(attacked[b]) for b in boots]
        lo, hi = np.percentile(drops, [2.5, 97.5])
        tables = [swap_validity(machine, out, m) for m in meters]
        sums = [summarize_validity(t) for t in tables]
        s = sums[0]
        queries = np.mean([r.info.get("detector_queries", 0) for r in results])
        cos = float(np.mean(semantic_similarity(machine, out)))
        print(f"| {recipe} | {auroc(attacked):.3f} | {auroc(clean) - auroc(attacked):+.3f} [{lo:+.3f}, {hi:+.3f}] | "
              f"{s['swaps_per_doc']:.2f} | {s['valid_share']:.1%} | "
              + " | ".join(f"{g['context_fail_share']:.1%}" for g in sums) + " | "
              + " | ".join(f"{g['valid_in_context_share']:.1%}" for g in sums)
              + f" | {cos:.3f} | {queries:.1f} | {secs:.1f} |", flush=True)
        if args.list:
            for doc, (o, t) in enumerate(zip(machine, out)):
                bad = [set(str(tab.loc[doc, "context_misfits"]).split()) for tab in tables]
                for sw in word_swaps(o, t):
                    key = f"{sw.start}:{sw.end}"
                    a, b = next((a, b) for a, b in sentence_spans(o) if a <= sw.start < b)
                    line = f"{o[a:sw.start]}[{sw.original_word} -> {sw.replacement}]{o[sw.end:b]}".replace("\n", " ")
                    verdicts = ", ".join(f"{n} {'misfit' if key in bd else 'fits'}" for n, bd in zip(short, bad))
                    print(f"  - {verdicts}: {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
