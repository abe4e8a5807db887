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

``--context`` measures instead where the demo's ``synonym@0.1`` spends its time (issue #38): its context
check (:func:`humanize.quality.context.context_deltas`, Gemma-3-270M then Qwen2.5-Coder-0.5B on Gemma's
survivors) on each document's own candidates, recorded from one run of the attack, then re-run per document
under each variant side by side (float32, the attack's default; float32 on one thread; bfloat16, which the demo
runs), interleaved document by document so that a change of load hits every variant alike. Printed per variant: wall and CPU
seconds per document, the ratio to float32, the model's tokens and forward passes, the candidates whose keep /
drop decision differs from float32's, and the load average before and after.

    python benchmarks/bench_synonym.py --context --docs 5
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


def _context_items(texts):
    """Per document, the ``(model, items)`` of every context check the demo's synonym@0.1 made on it."""
    import humanize.quality.context as qc
    from humanize.attacks import get

    calls, real = [], qc.context_deltas

    def recording(items, lm, **kw):
        out = real(items, lm, **kw)
        calls[-1].append((lm, list(items), np.asarray(out)))
        return out

    attack = get("synonym", rate=0.1)
    qc.context_deltas = recording
    try:
        for t in texts:
            calls.append([])
            attack.apply(t)
    finally:
        qc.context_deltas = real
    return calls


def context_main(args) -> int:
    """``--context``: the context check per document, float32 / float32 on one thread / bfloat16."""
    import os

    import torch

    from humanize.models.scoring import STATISTICS_CACHE
    from humanize.quality.context import context_deltas
    from humanize.quality.perplexity import get_lm

    texts = load_texts(args)
    threads = torch.get_num_threads()
    load0 = os.getloadavg()
    docs = _context_items(texts[: 1 + args.docs])[1:]  # the first document warms every model up
    variants = [("float32", None, threads), ("float32, 1 thread", None, 1), ("bfloat16", "bfloat16", threads)]
    models = {}
    for _, dtype, _ in variants:  # load (and warm) each precision's models outside the timed blocks
        for lm in {lm for doc in docs for lm, _, _ in doc}:
            models[(lm, dtype)] = get_lm(lm, None, dtype)
            context_deltas([("A short text to warm up.", 2, 7, "brief")], models[(lm, dtype)])
    wall = {v[0]: 0.0 for v in variants}
    cpu = dict(wall)
    flips = {v[0]: 0 for v in variants}
    tokens = {v[0]: 0 for v in variants}
    passes = {v[0]: 0 for v in variants}
    checks = 0
    for doc in docs:
        for lm, items, ref in doc:
            checks += len(items)
            for name, dtype, n in variants:
                torch.set_num_threads(n)
                STATISTICS_CACHE.passes = {}
                w, c = time.perf_counter(), time.process_time()
                got = context_deltas(items, models[(lm, dtype)])
                wall[name] += time.perf_counter() - w
                cpu[name] += time.process_time() - c
                ctx = STATISTICS_CACHE.passes.get("context", {})
                tokens[name] += ctx.get("tokens", 0)
                passes[name] += ctx.get("batches", 0)
                flips[name] += int(((got >= 0) != (ref >= 0)).sum())
    torch.set_num_threads(threads)
    load1 = os.getloadavg()
    n = len(docs)
    print(f"synonym@0.1's context check on {n} demo documents ({checks / n:.1f} candidate checks per document), "
          f"{os.cpu_count()} CPUs, torch threads {threads}; load average {load0[0]:.1f} before, {load1[0]:.1f} after")
    print(f"{'variant':<20}{'wall s/doc':>11}{'CPU s/doc':>11}{'vs float32':>11}{'tokens/doc':>11}"
          f"{'passes/doc':>11}{'flips':>7}")
    base = wall["float32"]
    for name, _, _ in variants:
        print(f"{name:<20}{wall[name] / n:>11.2f}{cpu[name] / n:>11.2f}{base / wall[name]:>10.2f}x"
              f"{tokens[name] / n:>11.0f}{passes[name] / n:>11.1f}{flips[name]:>7d}")
    print("flips: candidates kept under one variant and dropped under float32 (margin 0), or the reverse")
    return 0


def load_texts(args):
    from humanize.benchmarks.data import load_demo

    texts = load_demo().query("label == 'machine'")["generation"].tolist()
    if args.words:
        texts = [" ".join(t.split(" ")[: args.words]) for t in texts]
    return texts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=10, help="demo machine texts for the engine (default 10)")
    parser.add_argument("--baseline-docs", type=int, default=3, help="of those, how many the per-word run gets")
    parser.add_argument("--words", type=int, default=None,
                        help="cut each text after its W-th whitespace-separated word (default: whole texts)")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    parser.add_argument("--context", action="store_true",
                        help="time synonym@0.1's context check per document in float32, float32 on 1 thread and "
                             "bfloat16, side by side (issue #38)")
    args = parser.parse_args(argv)

    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    if args.context:
        return context_main(args)

    from humanize.attacks.wordsub import Synonym, WordSubstitution

    texts = load_texts(args)
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
