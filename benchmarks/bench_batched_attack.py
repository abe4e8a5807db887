"""The demo's one-sentence paraphrase attacked one document at a time versus a batch at a time (issue #24).

The runner used to call ``attack.apply(text)`` per document, so Qwen2.5-Coder-0.5B-Instruct decoded each
document's request alone; an attack that batches (``Attack.batches``) now gets the runner's batch in one
``attack.batch`` call and :class:`~humanize.generation.LocalChat` decodes the requests together (seeded per
request, so a document's output does not depend on its batch). This runs both paths of
:func:`humanize.benchmarks.runner.jobs.attack_texts` on the same demo machine texts, after one warm-up
(model load) outside both, and prints each path's wall and CPU seconds, per document, and whether the
outputs are the same. On a machine shared with other work, CPU seconds are the fairer figure; the load
average is printed next to them.

    OMP_NUM_THREADS=2 python benchmarks/bench_batched_attack.py [--docs 16] [--max-new-tokens 80]
"""

from __future__ import annotations

import argparse
import os
import time


def _timed(fn):
    load = os.getloadavg()[0]
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu, load


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=16, help="documents (the demo's runner batch is 16)")
    ap.add_argument("--max-new-tokens", type=int, default=80)
    args = ap.parse_args()

    from humanize.attacks import get
    from humanize.benchmarks.data import load_demo
    from humanize.benchmarks.runner import jobs
    from humanize.benchmarks.runner.config import DEMO_REWRITER

    texts = load_demo().query("label == 'machine'")["generation"].tolist()[:args.docs]
    attack = get("paraphrase", chunk_sentences=1, max_chunks=1,
                 paraphraser={"backend": "local", "model": DEMO_REWRITER, "max_new_tokens": args.max_new_tokens})
    warm = jobs.warm_up(attack, texts[0])
    alone, wall_a, cpu_a, load_a = _timed(lambda: jobs._attack_one_by_one(attack, texts, None))
    batch, wall_b, cpu_b, load_b = _timed(lambda: jobs._attack_as_batch(attack, texts, None))
    same = [a["output"] for a in alone] == [b["output"] for b in batch]
    n = len(texts)
    print(f"paraphrase_1st_sentence ({DEMO_REWRITER}, max {args.max_new_tokens} new tokens), {n} demo documents, "
          f"{os.cpu_count()} CPUs, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}; warm-up "
          f"{warm:.1f} s")
    print(f"{'path':<22}{'wall s':>9}{'CPU s':>9}{'wall s/doc':>12}{'CPU s/doc':>11}{'load':>7}")
    for name, wall, cpu, load in (("one document at a time", wall_a, cpu_a, load_a),
                                  ("one batch", wall_b, cpu_b, load_b)):
        print(f"{name:<22}{wall:>9.1f}{cpu:>9.1f}{wall / n:>12.2f}{cpu / n:>11.2f}{load:>7.1f}")
    print(f"speed-up: {wall_a / wall_b:.1f}x wall, {cpu_a / cpu_b:.1f}x CPU; same outputs: "
          f"{'PASS' if same else 'FAIL (float rounding in a padded batch can change a sampled token)'}")


if __name__ == "__main__":
    main()
