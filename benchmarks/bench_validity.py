"""Do the word-level attacks still say what the original said? Validity before and after issue #19.

Runs every word-level attack and its QPA variant twice through the benchmark runner on the
demo set: *before*, with the looser recipe the library used up to issue #19 (WordNet lemmas of
every sense plus the 10 nearest GloVe neighbours, no validity check, no sentence floor for
``synonym``, HMGC's 0.75, ranked by SmolLM2-135M, the detectors' own model), and *after*, at
today's defaults (the synonyms of the word's sense in context, antonyms excluded, every swap a
WordNet synonym, a MiniLM sentence floor of 0.85, ranked by Gemma-3-270M). For
each it prints, side by side:

- validity (:func:`humanize.quality.validity.swap_validity`, pooled over every word swap): the
  shares of WordNet synonyms, morphological variants, hyper-/hyponyms, antonyms, sister terms,
  unrelated words and non-words, and swaps per document. The attacks' default validity filter
  (``SwapValidity``) uses the meter's own classifier, so "after" is 100% valid by construction;
  the row ``synonym after, no validity filter`` shows what the sense-in-context candidates
  alone give, an independent check of the generator;
- meaning: MiniLM cosine of the attacked text with its original (and ``entailment`` when the
  NLI model is available: ``--entailment``);
- effectiveness: AUROC of ``log_likelihood`` and ``fast_detectgpt`` (SmolLM2-135M) on the
  attacked texts and its drop from the clean texts' AUROC.

The issue's floors are checked on ``synonym`` and ``hmgc`` at their defaults: antonyms <= 0.5% of
swaps, sister terms + unrelated <= 10%, synonyms + morphological >= 80%.

    .venv/bin/python benchmarks/bench_validity.py --n 60            # ~30 machine texts in the test split
    .venv/bin/python benchmarks/bench_validity.py --n 60 --attacks synonym hmgc
    .venv/bin/python benchmarks/bench_validity.py --skip "qpa(raft(lexical)) before" "qpa(raft(lexical)) after"
"""
from __future__ import annotations

import argparse
import sys
import time

import pandas as pd

from humanize.benchmarks.reporting import tables
from humanize.benchmarks.runner.config import AttackSpec, DetectorSpec, RunConfig
from humanize.benchmarks.runner import run

#: What each attack's parameters were before issue #19 (candidates, validity check, sentence floor)
LOOSE = {"candidates": ["wordnet_all_senses", "vector_neighbours"], "allowed_swaps": None,
         "context_margin": None, "keep_terms": False}  # and none of the context rules of issue #33
#: ...and the LM they ranked with: the detectors' own scoring model (today: DEFAULT_RANKING_LM, Gemma-3-270M)
LOOSE_LM = {"lm": "smollm2-135m-instruct"}
CLASSES = ("synonym", "morphological", "hypernym", "antonym", "sister", "unrelated", "non_word")
FLOORS = {"antonym": 0.005, "sister+unrelated": 0.10, "synonym+morphological": 0.80}


def attack_specs(train: dict, which: list[str] | None) -> list[tuple[str, AttackSpec]]:
    """``(attack, spec)`` pairs: each attack before and after, and its QPA variant before and after."""
    from humanize.attacks.wordsub import qpa_constraints

    hmgc = {"name": "hmgc", "surrogate": "tfidf_lr", "train": train}
    raft = {"name": "raft", "target": "log_likelihood", "llm": None}
    bases = {"synonym": ({"name": "synonym"}, {**LOOSE, **LOOSE_LM, "min_similarity": None}),
             "hmgc": (hmgc, {**LOOSE, **LOOSE_LM, "min_similarity": 0.75}),
             "raft(lexical)": (raft, {**LOOSE, "proxy": "smollm2-135m-instruct"})}
    loose_qpa = qpa_constraints(allowed_swaps=None)
    out = []
    for attack, (spec, loose) in bases.items():
        if which and attack not in which:
            continue
        params = {k: v for k, v in spec.items() if k != "name"}
        out.append((attack, AttackSpec(spec["name"], {**params, **loose}, label=f"{attack} before")))
        out.append((attack, AttackSpec(spec["name"], params, label=f"{attack} after")))
        if attack == "synonym":  # the sense generator alone: the validity filter shares the meter's classifier
            out.append((attack, AttackSpec(spec["name"], {**params, "allowed_swaps": None},
                                           label=f"{attack} after, no validity filter")))
        out.append((f"qpa({attack})", AttackSpec("qpa", {"attack": {**spec, **loose}, "constraints": loose_qpa},
                                                 label=f"qpa({attack}) before")))
        out.append((f"qpa({attack})", AttackSpec("qpa", {"attack": spec}, label=f"qpa({attack}) after")))
    return out


def validity_table(quality: pd.DataFrame, order: list[str]) -> pd.DataFrame:
    """Pooled validity shares per attack label (the report's :func:`~humanize.benchmarks.reporting.tables.validity_table`),
    with the mean cosine (and entailment) beside them."""
    pooled = tables.validity_table(quality)
    t = pooled[["swaps_per_doc", *(f"share_{c}" for c in CLASSES)]].astype(float)
    t.columns = ["swaps_per_doc", *CLASSES]
    g = quality.groupby("attack")
    t["cosine"] = g["cosine"].mean()
    if "entailment" in quality:
        t["entailment"] = g["entailment"].mean()
    return t.reindex([a for a in order if a in t.index])


def floors(table: pd.DataFrame) -> list[str]:
    lines = []
    for label in [a for a in table.index if " after" in a and a.split(" ")[0] in ("synonym", "hmgc")]:
        r = table.loc[label]
        figures = {"antonym": r["antonym"], "sister+unrelated": r["sister"] + r["unrelated"],
                   "synonym+morphological": r["synonym"] + r["morphological"]}
        for name, value in figures.items():
            ok = value >= FLOORS[name] if name.startswith("synonym") else value <= FLOORS[name]
            bound = ">=" if name.startswith("synonym") else "<="
            lines.append(f"{label:>22}  {name:<22} {value:7.3%}  (floor {bound} {FLOORS[name]:.1%}): "
                         f"{'met' if ok else 'MISSED'}")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=60, help="machine (and human) texts sampled; half go to the test split")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--train-n", type=int, default=200, help="HMGC surrogate training texts per label")
    ap.add_argument("--attacks", nargs="*", help="synonym, hmgc, raft(lexical) (default: all)")
    ap.add_argument("--skip", nargs="*", default=[], help="attack labels to leave out, e.g. 'qpa(raft(lexical)) before'")
    ap.add_argument("--entailment", default=None, help="an NLI model (hub id or directory) for the entailment meter")
    ap.add_argument("--db", default="humanize-bench-out/bench_validity.sqlite")
    ap.add_argument("--n-boot", type=int, default=200)
    args = ap.parse_args()

    pairs = attack_specs({"dataset": "demo", "n": args.train_n}, args.attacks)
    if not pairs:
        sys.exit("no attack selected; choose from synonym, hmgc, raft(lexical)")
    specs = [s for _, s in pairs if s.label not in set(args.skip)]
    order = [s.label for s in specs]
    quality = {"meters": ["cosine", "validity"] + (["entailment"] if args.entailment else [])}
    if args.entailment:
        quality["nli_model"] = args.entailment
    config = RunConfig(dataset="demo", n=args.n, seed=args.seed, attacks=specs,
                       detectors=[DetectorSpec("log_likelihood"), DetectorSpec("fast_detectgpt")],
                       fprs=(0.05,), n_boot=args.n_boot, db=args.db, batch_size=4, quality_params=quality)
    t0 = time.perf_counter()
    result = run(config, progress=True)
    wall = time.perf_counter() - t0
    pd.set_option("display.width", 220)
    pd.set_option("display.max_columns", 30)
    n_machine = int(result.tables["cost"].groupby("attack").size().max())
    print(f"\nValidity of the word-level attacks, demo set, {n_machine} machine test texts, seed {args.seed}, "
          f"run {wall:.0f} s\n")
    table = validity_table(result.tables["quality"], order)
    print("Validity (share of word swaps, pooled; WordNet after lemmatising both words) and meaning")
    print(table.round(3).to_string(), "\n")
    au = result.metrics[result.metrics["metric"] == "auroc"].pivot_table(index="attack", columns="detector",
                                                                          values="value")
    clean = au.loc["none"]
    drop = (clean - au).drop(index="none").reindex(order)
    effect = au.reindex(["none"] + order).round(3)
    for det in clean.index:
        effect[f"{det} drop"] = drop[det].reindex(effect.index).round(3)
    print("Effectiveness: AUROC (machine = positive) and its drop from the clean texts")
    print(effect.to_string(), "\n")
    print("Issue #19 floors at the defaults:")
    print("\n".join(floors(table)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
