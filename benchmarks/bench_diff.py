"""Time of the rewrite diff (``humanize.attacks.generation.diff.word_edits``) before and after issue #22.

Documents of about 4,000, 8,000 and 50,000 words are built from the demo set's machine
texts (joined in their order, cut after the W-th word); the "rewrite" changes about
``--rate`` of the sentences (a few words substituted, one deleted, one inserted, seeded),
as a paraphraser working sentence by sentence would. Both diffs run on the same pairs in
this process, side by side: ``before`` is the previous whole-text ``SequenceMatcher``
alignment (kept as ``diff._reference_word_edits``), quadratic; ``after`` is the anchored
one. ``before`` runs in a child process stopped after ``--limit`` seconds (the 50k-word
pair did not finish in 150 s on a worker). Every ``after`` result is checked exact
(``apply_edits(original, edits) == rewritten``) and, where ``before`` finished, the
number of edits and of changed characters of both are printed.

    python benchmarks/bench_diff.py                     # 4k, 8k, 50k words; before stopped after 60 s
    python benchmarks/bench_diff.py --words 2000 4000 --limit 30
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from humanize.attacks.base import apply_edits, check_edits  # noqa: E402
from humanize.attacks.generation import diff  # noqa: E402
from humanize.benchmarks.data import load_demo  # noqa: E402


def document(texts: list[str], words: int) -> str:
    out, n = [], 0
    for t in texts:
        ws = t.split()
        out.append(" ".join(ws[: words - n]))
        n += min(len(ws), words - n)
        if n >= words:
            break
    if n < words:
        return document(texts * (words // max(n, 1) + 1), words)
    return "\n\n".join(out)


def rewrite(text: str, rate: float, seed: int) -> str:
    rng = random.Random(seed)
    pool = ["notably", "however", "indeed", "overall", "arguably", "largely", "perhaps"]
    sentences = text.split(". ")
    for k, s in enumerate(sentences):
        if rng.random() < rate:
            ws = s.split(" ")
            for _ in range(2):
                ws[rng.randrange(len(ws))] = rng.choice(pool)
            if len(ws) > 3:
                del ws[rng.randrange(len(ws))]
            ws.insert(rng.randrange(len(ws) + 1), rng.choice(pool))
            sentences[k] = " ".join(ws)
    return ". ".join(sentences)


def _before(a: str, b: str, q) -> None:
    t = time.perf_counter()
    e = diff._reference_word_edits(a, b)
    q.put((time.perf_counter() - t, len(e), sum(x.end - x.start for x in e)))


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--words", type=int, nargs="+", default=[4000, 8000, 50000])
    p.add_argument("--rate", type=float, default=0.1, help="share of sentences rewritten")
    p.add_argument("--limit", type=float, default=60.0, help="seconds before the old diff is stopped")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    texts = load_demo().query("label == 'machine'")["generation"].tolist()
    print(f"word_edits before (whole-text SequenceMatcher) vs after (anchored, WINDOW={diff.WINDOW} tokens); "
          f"{args.rate:.0%} of the sentences rewritten; before stopped after {args.limit:.0f} s")
    print(f"{'words':>7} {'tokens':>7} {'before s':>10} {'after s':>9} {'speed-up':>9} "
          f"{'edits b/a':>11} {'chars b/a':>13}")
    ctx = mp.get_context("spawn")
    for words in args.words:
        a = document(texts, words)
        b = rewrite(a, args.rate, args.seed)
        t = time.perf_counter()
        edits = diff.word_edits(a, b)
        after = time.perf_counter() - t
        check_edits(a, edits)
        assert apply_edits(a, edits) == b, "the anchored diff is not exact"
        chars = sum(x.end - x.start for x in edits)
        q = ctx.Queue()
        proc = ctx.Process(target=_before, args=(a, b, q))
        proc.start()
        proc.join(args.limit)
        if proc.is_alive():
            proc.terminate()
            proc.join()
            before, cmp_edits, cmp_chars, speed = f">{args.limit:.0f}", "?", "?", f">{args.limit / after:.0f}x"
        else:
            sec, n_e, n_c = q.get()
            before, cmp_edits, cmp_chars, speed = f"{sec:.2f}", str(n_e), str(n_c), f"{sec / after:.0f}x"
        print(f"{words:>7} {len(diff.tokens(a)):>7} {before:>10} {after:>9.3f} {speed:>9} "
              f"{cmp_edits + '/' + str(len(edits)):>11} {cmp_chars + '/' + str(chars):>13}", flush=True)


if __name__ == "__main__":
    main()
