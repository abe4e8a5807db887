"""Wall time against text length, side by side with the work the tests count (issue #22).

The tests (tests/attacks/test_scaling.py, test_format.py, test_stream.py,
tests/defenses/test_normalize.py) assert on counted work (tests/work.py), which does not
depend on what else the machine runs. This prints the timings those tests used to assert on:
for each rule attack, ImposeFormat, the Normalize defense and a long DocumentRandom draw, the
best wall time on 100,000 characters and on 1,000,000 (200,000 and 2,000,000 bits), their
ratio (linear ~10x, quadratic ~100x), and the counted-work growth from the block repeated
1, 2 and 8 times (a block added between 2x and 8x against one added between 1x and 2x: ~1.0
when linear).

    python benchmarks/bench_scaling.py                  # everything, best of 3
    python benchmarks/bench_scaling.py --only homoglyph normalize --repeats 5
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from humanize import attacks  # noqa: E402
from humanize.attacks import FormatProfile, ImposeFormat  # noqa: E402
from humanize.attacks._stream import DocumentRandom  # noqa: E402
from humanize.benchmarks.data import load_demo  # noqa: E402
from humanize.defenses import Normalize  # noqa: E402
from tests.work import KINDS, count_work  # noqa: E402


def best_time(fn, repeats: int) -> float:
    """Best wall time of ``fn`` with the cyclic GC paused (a full collection would time the process)."""
    best = float("inf")
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - t0)
    finally:
        gc.enable()
    return best


def work_growth(run) -> float:
    """The largest, over the counted kinds, of a block's cost between 2x and 8x over its cost between 1x and 2x."""
    run(1)
    w = {k: count_work(lambda k=k: run(k)) for k in (1, 2, 8)}
    return max(((w[8][kind] - w[2][kind]) / 6) / max(w[2][kind] - w[1][kind], 1) for kind in KINDS)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", nargs="*", help="attack names, 'impose_format', 'normalize', 'random'")
    args = parser.parse_args(argv)

    demo = load_demo()
    machine = demo.query("label == 'machine'")["generation"].tolist()
    human = demo.query("label == 'human'")["generation"].tolist()
    big = "\n\n".join(machine)
    while len(big) < 1_000_000:
        big += "\n\n" + big
    big = big[:1_000_000]
    block = "\n\n".join(machine[33:39])[:3_000]  # as in tests/attacks/test_scaling.py

    cases = {}  # name -> (fn on a text, small text, big text, block)
    for name in [*attacks.RULE_BASED, "strip_format"]:
        a = attacks.get(name, rate=0.5 if name != "zero_width_space" else 1.0)
        cases[name] = (lambda t, a=a: a.apply(t).edits, big[:100_000], big, block)
    profile = FormatProfile().fit(human[:200] + machine[:200])
    impose = ImposeFormat(profile, rate=0.7)
    cases["impose_format"] = (lambda t: impose.apply(t).edits, big[:100_000], big, block)
    attacked = (attacks.get("homoglyph") | attacks.get("zero_width_space"))(big[:500_000])
    normalize = Normalize()
    cases["normalize"] = (lambda t: normalize.apply(t).edits, attacked[:100_000], attacked[:1_000_000],
                          attacked[:2_000])

    print(f"{'case':22s} {'small s':>9s} {'big s':>9s} {'time x':>7s}   {'work growth':>11s}")
    for name, (fn, small, large, unit) in cases.items():
        if args.only and name not in args.only:
            continue
        t_small, t_big = best_time(lambda: fn(small), args.repeats), best_time(lambda: fn(large), args.repeats)
        growth = work_growth(lambda k: fn("\n\n".join([unit] * k)))
        print(f"{name:22s} {t_small:9.4f} {t_big:9.4f} {t_big / max(t_small, 1e-9):7.1f}   {growth:11.2f}")
    if not args.only or "random" in args.only:
        t_small = best_time(lambda: DocumentRandom(1).getrandbits(200_000), args.repeats)
        t_big = best_time(lambda: DocumentRandom(1).getrandbits(2_000_000), args.repeats)
        growth = work_growth(lambda k: DocumentRandom(1).getrandbits(200_000 * k))
        print(f"{'random (bits)':22s} {t_small:9.4f} {t_big:9.4f} {t_big / max(t_small, 1e-9):7.1f}   {growth:11.2f}")


if __name__ == "__main__":
    main()
