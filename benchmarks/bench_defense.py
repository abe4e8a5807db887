"""The normalizer defense on the demo set: detectors' AUROC per attack without and with it, and its speed.

Issue #12 §3. The demo's source documents are split in two (seeded, by source id, as the
runner does); ``tfidf_lr`` is fit on the clean train half (undefended, as the runner
fits learnable detectors), and a sample of ``--n`` human and ``--n`` machine texts of the
test half is scored: clean, and each machine text under each attack at RAID's θ. With
the defense, every scored text (clean humans included) first goes through
``Normalize()``; the thresholds and AUROC are the protocols' (:func:`evaluate`, per
defense), the table the report's (:func:`defense_table`). Each distinct text is scored
once (a defended attacked text is often the defended clean text itself).

Speed: seconds per 1,000 demo texts (all 1,800), clean and attacked, for the text alone
(``Normalize()(text)``) and with its exact edits (``Normalize().apply(text).edits``),
best of ``--repeats``.

    python benchmarks/bench_defense.py --detectors tfidf_lr --n 450     # about a minute on one core
    python benchmarks/bench_defense.py --n 75                            # with log_likelihood (SmolLM2, 256
                                                                         # tokens): ~15 min on a shared CPU
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pandas as pd  # noqa: E402

from humanize import attacks, detectors  # noqa: E402
from humanize.benchmarks.data import load_dataset  # noqa: E402
from humanize._split import in_train_split  # noqa: E402
from humanize.benchmarks.evaluation import evaluate  # noqa: E402
from humanize.benchmarks.reporting.report import render_markdown  # noqa: E402
from humanize.benchmarks.reporting.tables import defense_table  # noqa: E402
from humanize.defenses import get as get_defense  # noqa: E402

ATTACKS = ("homoglyph", "zero_width_space", "whitespace", "upper_lower")  # RAID's θ: 1.0, 1.0, 0.2, 0.05


def _split(seed: int, n: int):
    rows = load_dataset("demo")
    train_mask = rows["source_id"].map(lambda s: in_train_split(str(s), seed, 0.5))
    train, test = rows[train_mask], rows[~train_mask]
    test = pd.concat([g.sample(min(n, len(g)), random_state=seed) for _, g in test.groupby("label")])
    return train, test.sort_values("id", kind="stable")


def _score_table(test: pd.DataFrame, defense, detector_names, train: pd.DataFrame, max_tokens: int):
    machine = test[test["label"] == "machine"]
    parts = [test.assign(attack="none", text=test["generation"])]
    for name in ATTACKS:
        attack = attacks.get(name)
        parts.append(machine.assign(attack=name, text=[attack(t) for t in machine["generation"]]))
    rows = pd.concat(parts, ignore_index=True)
    tables = []
    for det_name in detector_names:
        det = detectors.get(det_name, **({"max_tokens": max_tokens} if det_name != "tfidf_lr" else {}))
        det.fit(train["generation"].tolist(), train["label"].tolist())
        for dname, d in (("none", None), (defense.name, defense)):
            texts = rows["text"] if d is None else rows["text"].map(d)
            unique = sorted(set(texts))
            t0 = time.perf_counter()
            scores = dict(zip(unique, det.score(unique)))
            print(f"  {det_name} / defense {dname}: {len(unique)} distinct texts scored in "
                  f"{time.perf_counter() - t0:.1f} s", file=sys.stderr)
            tables.append(rows.assign(detector=det_name, defense=dname, score=texts.map(scores)))
    return pd.concat(tables, ignore_index=True)


def _speed(texts, defense, repeats: int) -> str:
    """Seconds per 1,000 texts: the text only (``defense(text)``), and the text with its exact edits."""
    out = []
    for fn in (defense, lambda t: defense.apply(t).edits):
        best = float("inf")
        gc.collect()
        for _ in range(repeats):
            t0 = time.perf_counter()
            for t in texts:
                fn(t)
            best = min(best, time.perf_counter() - t0)
        out.append(best / len(texts) * 1000)
    return "{:.2f} / {:.2f}".format(*out)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=150, help="test texts per label (default 150)")
    ap.add_argument("--detectors", nargs="+", default=["tfidf_lr", "log_likelihood"])
    ap.add_argument("--max-tokens", type=int, default=256, help="log_likelihood's max_tokens (default 256)")
    ap.add_argument("--n-boot", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    defense = get_defense("normalize")
    train, test = _split(args.seed, args.n)
    print(f"demo: {len(train)} train texts, test sample {len(test)} ({args.n} per label); defense {defense!r}",
          file=sys.stderr)
    scores = _score_table(test, defense, args.detectors, train, args.max_tokens)
    metrics = pd.concat([evaluate(scores[scores["defense"] == d].drop(columns="defense"), fprs=(0.05,),
                                  n_boot=args.n_boot, seed=args.seed).assign(defense=d)
                         for d in ("none", defense.name)], ignore_index=True)
    report = {"defense_auroc": defense_table(metrics, "auroc"),
              "defense_tpr_at_fpr_0.05": defense_table(metrics, "tpr", 0.05, intervals=False)}
    print(render_markdown(report))
    demo = load_dataset("demo")["generation"].tolist()
    both = attacks.get("homoglyph") | attacks.get("zero_width_space")
    print("\nNormalize, seconds per 1,000 demo texts, text only / with exact edits (best of "
          f"{args.repeats}): clean {_speed(demo, defense, args.repeats)}, "
          f"homoglyph {_speed([attacks.get('homoglyph')(t) for t in demo], defense, args.repeats)}, "
          f"zero_width_space {_speed([attacks.get('zero_width_space')(t) for t in demo], defense, args.repeats)}, "
          f"homoglyph+zero_width_space {_speed([both(t) for t in demo], defense, args.repeats)}")


if __name__ == "__main__":
    main()
