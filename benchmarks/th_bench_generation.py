"""TH-Bench Tables 1, 2/4 and 5 layouts for the generation attacks, offline, on demo machine texts.

Runs Paraphrase (a chat LLM), Recursion (depth 2 and 5, the same paraphraser), Prompt and
its QPA variant, TOBLEND and its QPA variant, and a sentence-level Blend (TH-Bench
Appendix H: alternate sentences) of Paraphrase with a word-level attack (Synonym), with
that word-level attack alone for comparison, through the benchmark runner; scores clean
and attacked texts with the log-likelihood and Fast-DetectGPT detectors, and prints

- Table 1's layout: AUROC per attack and detector, plus TPR at 5% FPR (per-domain thresholds);
- Tables 2/4's layout: perplexity (original and change), MiniLM cosine, ROUGE-L, Flesch;
- Table 5's layout / cost: seconds per document, generator calls and prompt / completion
  tokens per document.

Every model is the offline default: Qwen2.5-Coder-0.5B-Instruct paraphrases and prompts (the
paper: DIPPER (T5-XXL) and GPT-4o-mini), TOBLEND blends Qwen2.5-Coder-0.5B with Gemma-3-270M
(the paper: GPT-2-XL, OPT-2.7B, GPT-Neo-2.7B, GPT-J-6B), and SmolLM2-135M scores (the two
detectors and perplexity), so no attack is scored by the model that wrote it (issue #19 §4).
The figures measure this library's attacks with small models, not the paper's. On request,
``--attacks "paraphrase(smollm2)" "toblend(smollm2+gemma)"`` runs the pairing before issue #19,
in which SmolLM2 both writes and scores (the runner warns about it). Results are stored in
``--db``: an interrupted run resumes, and ``--attacks`` runs a subset into the same store.

    OMP_NUM_THREADS=2 .venv/bin/python benchmarks/th_bench_generation.py --n 100   # ~50 machine test texts
"""
from __future__ import annotations

import argparse
import os
import sys

import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from th_bench_wordsub import run_and_print  # noqa: E402  (the same run and layouts as the word-substitution one)

from humanize.attacks.generation.toblend import SMOLLM2_GEMMA  # noqa: E402
from humanize.benchmarks.runner.config import AttackSpec  # noqa: E402
from humanize.models import DEFAULT_CAUSAL_LM, DEFAULT_CHAT_LM  # noqa: E402

CHAT = DEFAULT_CHAT_LM


def attack_specs(which: list[str] | None) -> list[AttackSpec]:
    paraphrase = {"name": "paraphrase", "paraphraser": CHAT}
    specs = [
        AttackSpec("paraphrase", {"paraphraser": CHAT}, label="paraphrase(chat)"),
        AttackSpec("recursion", {"paraphraser": CHAT, "depth": 2}, label="recursion(depth=2)"),
        AttackSpec("recursion", {"paraphraser": CHAT, "depth": 5}, label="recursion(depth=5)"),
        AttackSpec("prompt", {"llm": CHAT}, label="prompt"),
        AttackSpec("qpa_prompt", {"llm": CHAT}, label="qpa(prompt)"),
        AttackSpec("toblend", {}, label="toblend"),
        AttackSpec("qpa_toblend", {}, label="qpa(toblend)"),
        AttackSpec("synonym", {}, label="synonym"),
        AttackSpec("blend", {"attacks": [paraphrase, "synonym"], "policy": "alternate"},
                   label="blend(paraphrase|synonym)"),
    ]
    # on request only: the pairing before issue #19, SmolLM2 (the detectors' scoring model) writing the text
    optional = [AttackSpec("toblend", {"models": list(SMOLLM2_GEMMA)}, label="toblend(smollm2+gemma)"),
                AttackSpec("paraphrase", {"paraphraser": DEFAULT_CAUSAL_LM}, label="paraphrase(smollm2)")]
    if which:
        known = specs + optional
        unknown = sorted(set(which) - {s.label for s in known})
        if unknown:
            sys.exit(f"unknown attack label(s) {unknown}; choose from {[s.label for s in known]}")
        specs = [s for s in known if s.label in which]
    return specs


def cost(cost_rows: pd.DataFrame, order: list[str]) -> pd.DataFrame:
    g = cost_rows.groupby("attack")
    t = pd.DataFrame({
        "docs": g.size(),
        "s_per_doc": g["wall_s"].mean(),
        "gpt2_tokens_in": g["tokens_in"].mean(),
        "gpt2_tokens_out": g["tokens_out"].mean(),
        "llm_calls_per_doc": g["queries"].mean(),
        "llm_tokens_in_per_doc": g["llm_tokens_in"].mean(),
        "llm_tokens_out_per_doc": g["llm_tokens_out"].mean(),
        "peak_rss_mb": g["peak_rss_mb"].max(),
        "measured": g["cost_source"].apply(lambda s: int((s == "measured").sum())),
    })
    return t.reindex([a for a in order if a in t.index])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=100, help="machine (and human) texts sampled; half go to the test split")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--attacks", nargs="*", help="labels to run (default: all)")
    ap.add_argument("--db", default="humanize-bench-out/th_bench_generation.sqlite")
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--batch-size", type=int, default=8, help="documents per attack call (generation batches)")
    args = ap.parse_args()

    run_and_print(attack_specs(args.attacks), args, batch_size=args.batch_size, quality_title="Tables 2/4 layout",
                  cost_table=cost, cost_title="Table 5 layout / cost per document (this machine; GPT-2 tokens of "
                                              "the text, LLM tokens of the calls)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
