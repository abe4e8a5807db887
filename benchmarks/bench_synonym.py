"""Synonym attack throughput: the batched engine against a one-call-per-word implementation.

Both run the same algorithm with the same models (the offline preset: WordNet +
GloVe candidates, stop-word / cosine / POS constraints, SmolLM2-135M scores,
top-score search); they differ only in how candidates are scored:

- engine (``CausalLMScore``): ONE forward pass over the document gives the
  first token of every candidate; multi-token candidates are extended on that
  pass's key/value cache in batched calls;
- per-word (RAID's structure, one model call per word): for each word, one
  forward call over ``prefix + candidate`` for all its candidates.

Printed: documents per second, model forward passes per document, speed-up,
and how often the two pick the same swaps. Model loading is excluded (one
warm-up document first). Floors (issue 10): speed-up >= 10x; the offline
preset >= 1 document/s on the demo set on a 2-core CPU.

    python benchmarks/bench_synonym.py                    # 10 demo docs, baseline on 3
    python benchmarks/bench_synonym.py --docs 50 --baseline-docs 5 --threads 2
    python benchmarks/bench_synonym.py --docs 6 --baseline-docs 2 --words 80   # quick
"""
from __future__ import annotations

import argparse
import math
import statistics
import time

import numpy as np


def per_word_scorer_class():
    from humanize.attacks.wordsub import CausalLMScore

    class PerWordScore(CausalLMScore):
        """Score = log p(candidate | full prefix), one forward call per word (all its candidates as rows)."""

        def score(self, doc, cands):
            import torch

            from humanize.models.scoring import encode_for_scoring
            from humanize.models.text import repair_text

            lm = self.loaded()
            tok = lm.tokenizer
            ids_list, spans_list, has_bos = encode_for_scoring(lm, [doc.text], offsets=True)
            ids, spans = ids_list[0], spans_list[0]
            ends = spans[:, 1] if len(spans) else np.zeros(0, dtype=np.int64)
            pad = getattr(tok, "pad_token_id", None) or 0
            out = {}
            for i, cs in cands.items():
                ws = doc.words[i][0]
                t = int(np.searchsorted(ends, ws, side="right"))
                if not cs or t >= len(spans):
                    out[i] = [c._replace(score=-math.inf) for c in cs]
                    continue
                prefix = doc.text[int(spans[t][0]): ws] if spans[t][0] < ws else ""
                pos = t + int(has_bos)
                rows = [ids[:pos] + tok(repair_text(prefix + c.text)[0], add_special_tokens=False)["input_ids"]
                        for c in cs]
                width = max(map(len, rows))
                x = torch.full((len(rows), width), pad, dtype=torch.long)
                mask = torch.zeros((len(rows), width), dtype=torch.long)
                for k, r in enumerate(rows):
                    x[k, : len(r)] = torch.as_tensor(r)
                    mask[k, : len(r)] = 1
                with torch.inference_mode():
                    logp = torch.log_softmax(lm.model(input_ids=x, attention_mask=mask, use_cache=False)
                                             .logits.float(), dim=-1).numpy()
                doc.add_cost(forward_passes=1, queries=len(rows), lm_tokens=int(mask.sum()))
                scores = []
                for k, r in enumerate(rows):
                    n = len(r) - pos  # candidate tokens
                    scores.append(sum(logp[k, pos + j - 1, r[pos + j]] for j in range(n)) if pos >= 1 else -math.inf)
                out[i] = [c._replace(score=float(s)) for c, s in zip(cs, scores)]
            return out

    return PerWordScore


def run(attack, texts):
    start = time.perf_counter()
    results = [attack.apply(t) for t in texts]
    seconds = time.perf_counter() - start
    passes = statistics.mean(r.info["forward_passes"] for r in results)
    return results, seconds, passes


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=10, help="demo machine texts for the engine (default 10)")
    parser.add_argument("--baseline-docs", type=int, default=3, help="of those, how many the per-word run gets")
    parser.add_argument("--words", type=int, default=None,
                        help="cut each text after its W-th whitespace-separated word (default: whole texts)")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    args = parser.parse_args(argv)

    import torch

    from humanize.attacks.wordsub import Synonym, WordSubstitution
    from humanize.benchmarks.data import load_demo

    if args.threads:
        torch.set_num_threads(args.threads)
    texts = load_demo().query("label == 'machine'")["generation"].tolist()
    if args.words:
        texts = [" ".join(t.split(" ")[: args.words]) for t in texts]
    warm, texts = texts[0], texts[1: 1 + args.docs]
    fast = Synonym()
    p = fast._parts()
    slow = WordSubstitution(p.generators, p.candidate_constraints + p.text_constraints + p.budgets,
                            per_word_scorer_class()(p.scorer.lm), p.search, rate=fast.rate, seed=fast.seed)
    slow.name = fast.name  # same per-document stream: same number of swaps
    fast.apply(warm)  # loads every model; not timed
    words = statistics.mean(len(t.split()) for t in texts)
    print(f"torch threads: {torch.get_num_threads()}; {len(texts)} demo machine texts, {words:.0f} words on average")

    res_f, sec_f, pass_f = run(fast, texts)
    print(f"{'':24s}{'docs/s':>10s}{'s/doc':>10s}{'passes/doc':>12s}")
    print(f"{'engine (batched)':24s}{len(texts) / sec_f:10.3f}{sec_f / len(texts):10.2f}{pass_f:12.1f}")
    base = texts[: args.baseline_docs]
    if base:
        res_s, sec_s, pass_s = run(slow, base)
        # the engine's time on the same documents as the baseline, measured again for a like-for-like ratio
        _, sec_f_base, _ = run(fast, base)
        same = [sorted(a.edits) == sorted(b.edits) for a, b in zip(res_f, res_s)]
        overlap = [len(set(a.edits) & set(b.edits)) / max(1, len(set(b.edits))) for a, b in zip(res_f, res_s)]
        print(f"{'engine, baseline docs':24s}{len(base) / sec_f_base:10.3f}{sec_f_base / len(base):10.2f}"
              f"{statistics.mean(r.info['forward_passes'] for r in res_f[:len(base)]):12.1f}")
        print(f"{'one call per word':24s}{len(base) / sec_s:10.3f}{sec_s / len(base):10.2f}{pass_s:12.1f}")
        speedup = sec_s / sec_f_base
        print(f"speed-up on the same {len(base)} docs: {speedup:.1f}x (floor 10x: {'ok' if speedup >= 10 else 'BELOW'})")
        print(f"same swaps as the per-word run: {sum(same)}/{len(same)} docs; mean overlap of swaps "
              f"{np.mean(overlap):.2f} (both score the same log-probabilities; differences are float rounding "
              f"between batch shapes)")
    rate = len(texts) / sec_f
    print(f"offline preset: {rate:.2f} docs/s (floor 1 doc/s on 2 cores: {'ok' if rate >= 1 else 'BELOW'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
