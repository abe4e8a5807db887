"""TOBLEND's per-model KV caches vs the from-scratch reference: blended tokens per second.

Issue 11's floor: with each model keeping its own tokens and KV cache of the text and
reading only what was appended since its last turn (``incremental=True``), TOBLEND
is >= 5x faster than re-tokenising the whole text and running a full forward pass at
every turn (``incremental=False``), and gives the SAME outputs (asserted).

Both runs blend the offline default pair (Qwen2.5-Coder-0.5B-Instruct + Gemma 3 270M since
issue #19; SmolLM2-135M-Instruct + Gemma 3 270M before) on the same
demo machine texts (cut to their first ``--words`` words), ``--tokens`` blended tokens
per text, after one warm-up document (model loading is not timed). Prints seconds,
blended tokens/s and forward-pass tokens for each mode, and the speed ratio.
Optionally ``--qpa`` times the QPA variant the same way.

The gain grows with the text's length: a forward pass over a few new tokens costs
about one read of the weights (on one CPU core about 0.1 s for Gemma 3 270M, whose
262k x 640 LM head alone is 670 MB in fp32), while the reference's pass grows with the
whole text. So the benchmark starts blending after ``--prefix`` words (default 140,
a text of about 190 tokens; TH-Bench times texts of 100-1,000 tokens) to
measure the per-token cost deep in a document without generating hundreds of tokens
in each mode; ``--prefix 30`` is the attack's own prompt length (near its start the
speed-up is about 3x at 100 tokens of text).

    python benchmarks/bench_toblend.py                    # 2 texts, blend 60 tokens after 140 words
    python benchmarks/bench_toblend.py --docs 3 --prefix 30 --tokens 120 --qpa
"""
from __future__ import annotations

import argparse
import time

from _demo_texts import demo_machine_texts


def _run(attack, texts):
    t0 = time.perf_counter()
    results = attack.batch(texts)
    seconds = time.perf_counter() - t0
    tokens = sum(r.info["steps"] for r in results)
    fed = sum(r.info["llm_tokens_in"] for r in results)
    return seconds, tokens, fed, results


def main(argv=None) -> float:
    from humanize.attacks.generation.toblend import QPA_TOBLEND, TOBLEND

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=2)
    ap.add_argument("--words", type=int, default=190, help="words of each demo text")
    ap.add_argument("--prefix", type=int, default=140, help="words kept as the prompt (prefix_words)")
    ap.add_argument("--tokens", type=int, default=60, help="blended tokens per text (max_new_tokens)")
    ap.add_argument("--qpa", action="store_true", help="also time the QPA variant")
    args = ap.parse_args(argv)
    if not 1 <= args.prefix < args.words:
        raise SystemExit(f"--prefix must be in [1, --words); got {args.prefix} and {args.words}")
    texts = demo_machine_texts(args.docs, args.words)
    classes = [TOBLEND] + ([QPA_TOBLEND] if args.qpa else [])
    ratio = None
    for cls in classes:
        fast = cls(prefix_words=args.prefix, max_new_tokens=args.tokens, incremental=True)
        slow = cls(prefix_words=args.prefix, max_new_tokens=args.tokens, incremental=False)
        fast.batch(texts[:1])  # warm-up: loads the models
        rows = {}
        for label, attack in (("incremental", fast), ("from scratch", slow)):
            rows[label] = _run(attack, texts)
        same = [a.text for a in rows["incremental"][3]] == [b.text for b in rows["from scratch"][3]]
        assert same, "incremental and from-scratch outputs differ"
        print(f"{cls.name}: {len(texts)} demo machine texts of {args.words} words, {args.tokens} blended tokens "
              f"after the first {args.prefix} words")
        for label, (sec, tok, fed, _) in rows.items():
            print(f"  {label:>12}: {sec:7.2f} s  {tok / sec:7.2f} tokens/s  ({fed} tokens through forward passes)")
        r = rows["from scratch"][0] / rows["incremental"][0]
        print(f"  speed-up: {r:.1f}x (floor 5x), same outputs: {same}")
        ratio = r if ratio is None else ratio
    return ratio


if __name__ == "__main__":
    main()
