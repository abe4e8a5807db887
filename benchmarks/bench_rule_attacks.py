"""Throughput of the rule-based attacks next to RAID's reference implementations, per text length.

For every attack in :data:`humanize.attacks.RULE_BASED`, at its default θ (RAID's,
paper Table 11): documents per second for ``attack.apply(text)`` and for RAID's
``attack(text)`` on the same documents, in the same process, timed back to back in
chunks, the best of ``--repeats`` kept per chunk.

Length buckets (``--words``, default about 50, 200 and 1,000 words), built from the
demo set's 900 machine texts in their order: a document takes the next text (and
the ones after it, joined by a paragraph break, while it has fewer than W words)
and is cut after its W-th whitespace-separated word; the next document starts at
the next unused text. So the 50-word bucket holds the opening 50 words of each
text, the 200-word bucket mostly pairs of texts, the 1,000-word bucket runs of
about six. ``--docs`` caps the documents per bucket (default 900, 450, 40: RAID's
zero-width space is quadratic, about 0.3 s per 1,000-word document).

RAID's code is not part of this repository: it is read at run time from a RAID
checkout or git directory (``--raid-repo``, ``$RAID_REPO``, or a local mirror);
see ``benchmarks/_raid_reference.py``. Without it, only our figures are printed.

    python benchmarks/bench_rule_attacks.py                   # all attacks, three buckets, best of 3
    python benchmarks/bench_rule_attacks.py --words 50 --repeats 5 --attacks homoglyph whitespace

Floors (GitHub issues #2 and #8), checked in every bucket: no attack slower than
RAID's; geometric-mean speed-up >= 5x over the attacks RAID implements without a
model; zero-width space >= 100x.
"""

from __future__ import annotations

import argparse
import gc
import math
import re
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Callable, Sequence

_HERE = Path(__file__).resolve().parent
# The repository root first, so the script benchmarks this checkout's ``humanize``.
sys.path[:0] = [str(_HERE.parent), str(_HERE)]

from _raid_reference import REFERENCES, RaidReference, locate_repo  # noqa: E402

from humanize import attacks  # noqa: E402
from humanize.benchmarks.data import load_demo  # noqa: E402

CLOCKS = {"perf_counter": time.perf_counter, "process_time": time.process_time}
FLOOR_ALL = 1.0
FLOOR_GEOMEAN = 5.0
FLOOR_ZWSP = 100.0
#: Attacks whose outputs we compare with RAID's (mean edits and changed characters per document).
SANITY_ATTACKS = (
    "homoglyph",
    "zero_width_space",
    "whitespace",
    "upper_lower",
    "number_swap",
    "article_deletion",
)


def interleaved_rates(
    runners: Sequence[Callable[[Sequence[str]], object]],
    texts: Sequence[str],
    repeats: int,
    chunk: int,
    before: Sequence[Callable[[], None]] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> list[float]:
    """Documents per second of each runner on ``texts``, timed back to back chunk by chunk.

    Each runner gets the same chunk of ``chunk`` documents in turn, the order
    rotating from chunk to chunk and repeat to repeat (whoever goes first reads
    the chunk into the cache); per chunk the best of ``repeats`` times is kept,
    and the rate is ``len(texts) / sum(best)``. Keeping the best per chunk drops
    the pauses another process causes on a busy machine, and interleaving
    exposes every runner to the same machine state.
    """
    before = before or [_noop] * len(runners)
    chunks = [texts[i : i + chunk] for i in range(0, len(texts), chunk)]
    best = [[math.inf] * len(chunks) for _ in runners]
    n = len(runners)
    for k in range(repeats):
        for c, docs in enumerate(chunks):
            for r in ((k + c + i) % n for i in range(n)):
                run, prepare = runners[r], before[r]
                prepare()
                gc.disable()
                try:
                    t0 = clock()
                    run(docs)
                    elapsed = clock() - t0
                finally:
                    gc.enable()
                best[r][c] = min(best[r][c], elapsed)
    return [len(texts) / sum(b) for b in best]


def _noop() -> None:
    pass


def _reseed() -> None:
    random.seed(0)  # RAID seeds Python's global generator before attacking


#: Default documents per bucket (words -> cap); other bucket sizes get DEFAULT_CAP.
DEFAULT_DOCS = {50: 900, 200: 450, 1000: 40}
DEFAULT_CAP = 100
_WORD_RE = re.compile(r"\S+")


def length_bucket(texts: Sequence[str], words: int, max_docs: int) -> list[str]:
    """Documents of exactly ``words`` whitespace-separated words, from ``texts`` in order.

    A document takes the next text, and the following ones joined by a paragraph
    break while it has fewer than ``words`` words, then is cut after its last word;
    the rest of its last text is dropped. An incomplete last document is dropped too.
    """
    docs: list[str] = []
    i = 0
    while i < len(texts) and len(docs) < max_docs:
        doc = texts[i]
        i += 1
        while len(doc.split()) < words and i < len(texts):
            doc += "\n\n" + texts[i]
            i += 1
        ends = [m.end() for m in _WORD_RE.finditer(doc)]
        if len(ends) < words:
            break
        docs.append(doc[: ends[words - 1]])
    return docs


def changed_chars(a: str, b: str) -> int:
    """Characters inserted, deleted or substituted, for outputs that only do one of the three."""
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b))
    return abs(len(a) - len(b))


#: Why our counts may differ from RAID's by design (RAID App. E.4 versus our modules' docstrings).
KNOWN_DIFFERENCES = {
    "number_swap": "RAID redraws every digit of θ of the numbers (rounded down; a redraw may repeat "
    "the digit); we change θ of the digits, each to a different digit",
    "article_deletion": "the same sites (' a ', ' an ', ' the '); we round θ·n stochastically, RAID rounds down",
    "upper_lower": "we round θ·n stochastically, RAID rounds down; words per NLTK versus our word pattern",
    "whitespace": "we merge the extra spaces at one gap into one edit; RAID counts each space",
    "zero_width_space": "our sites are positions next to a visible character; RAID's, after every character",
}


def sanity_row(name: str, texts: Sequence[str], ours: attacks.Attack, ref: Callable[[str], dict]) -> str:
    """Mean edits and changed characters per document, ours next to RAID's, on the same documents."""
    random.seed(0)
    ref_out = [ref(t) for t in texts]
    our_out = [ours.apply(t) for t in texts]
    ours_chars = statistics.fmean(changed_chars(t, r.text) for t, r in zip(texts, our_out))
    ref_chars = statistics.fmean(changed_chars(t, r["generation"]) for t, r in zip(texts, ref_out))
    ours_edits = statistics.fmean(r.n_edits for r in our_out)
    ref_edits = statistics.fmean(r["num_edits"] for r in ref_out)
    ratio = ours_chars / ref_chars if ref_chars else float("nan")
    flag = "ok" if 0.8 <= ratio <= 1.25 else "differs"
    counts = f"{ours_edits:>9.1f} {ref_edits:>9.1f} {ours_chars:>10.1f} {ref_chars:>10.1f}"
    return f"{name:<22} {counts} {ratio:>7.3f}  {flag}"


#: Non-default settings timed next to the same RAID reference and printed below the main
#: rows; they implement a different definition, so they do not count towards the floors.
VARIANTS = {"article_deletion": {"scope": "extended"}}


def measure(args, texts, reference) -> tuple[list, dict, list, dict]:
    """Time every attack and RAID's, where it runs here: table rows, speed-ups, notes, RAID callables."""
    rows, speedups, notes, refs = [], {}, [], {}
    variant_rows = []
    for name in args.attacks:
        ours = attacks.get(name)
        theta = ours.rate
        ref, what = (None, "no RAID repository") if reference is None else reference.build(name, theta)
        if ref is None:
            rows.append((name, theta, *time_against(args, texts, ours, None)))
            notes.append(f"{name}: RAID reference {what}")
            continue
        refs[name] = ref
        row = time_against(args, texts, ours, ref)
        speedups[name] = row[-1]
        rows.append((name, theta, *row))
        if name in VARIANTS:
            variant = attacks.get(name, **VARIANTS[name])
            label = f"{name}[{','.join(f'{k}={v}' for k, v in VARIANTS[name].items())}]"
            variant_rows.append((label, theta, *time_against(args, texts, variant, ref)))
    return rows + variant_rows, speedups, notes, refs


def time_against(args, texts, ours: attacks.Attack, ref) -> tuple:
    """(ours docs/s, ours with edits docs/s, RAID docs/s, speed-up); the last two None without ``ref``."""
    clock = CLOCKS[args.clock]
    ours.batch(texts[:20])  # warm-up: loads tables, compiles patterns
    apply = ours.apply

    def run_ours(docs, apply=apply):
        return [apply(t) for t in docs]

    def run_ours_with_edits(docs, apply=apply):
        return [apply(t).edits for t in docs]

    if ref is None:
        our_rate, full_rate = interleaved_rates(
            [run_ours, run_ours_with_edits], texts, args.repeats, args.chunk, clock=clock
        )
        return our_rate, full_rate, None, None
    _reseed()
    [ref(t) for t in texts[:20]]

    def run_ref(docs, ref=ref):
        return [ref(t) for t in docs]

    our_rate, full_rate, ref_rate = interleaved_rates(
        [run_ours, run_ours_with_edits, run_ref],
        texts,
        args.repeats,
        args.chunk,
        before=[_noop, _noop, _reseed],
        clock=clock,
    )
    return our_rate, full_rate, ref_rate, our_rate / ref_rate


def print_table(rows: list, notes: list) -> None:
    header = f"{'ours docs/s':>12} {'+edits docs/s':>14} {'RAID docs/s':>12} {'speed-up':>9}"
    print(f"{'attack':<33} {'θ':>5} {header}")
    for name, theta, ours_r, full_r, ref_r, sp in rows:
        ref_s = f"{ref_r:>12,.0f}" if ref_r else f"{'—':>12}"
        sp_s = f"{sp:>8.1f}x" if sp else f"{'—':>9}"
        print(f"{name:<33} {theta:>5.2f} {ours_r:>12,.0f} {full_r:>14,.0f} {ref_s} {sp_s}")
    for n in notes:
        print(n)


def print_legend() -> None:
    print("'ours' times attack.apply(text); '+edits' also materialises result.edits")
    print("(zero_width_space, homoglyph and whitespace defer them; article_deletion always).")
    print("Rows with [settings] are non-default variants, timed next to the same RAID reference;")
    print("they implement a different definition and do not count towards the floors.")


def print_summary(per_bucket: dict, failed: dict) -> None:
    """Speed-ups per attack and bucket, the geometric mean, and whether every bucket met every floor."""
    buckets = list(per_bucket)
    names = sorted({n for sp in per_bucket.values() for n in sp})
    if not names:
        return
    print("speed-up over RAID per length bucket:")
    print(f"{'attack':<22} " + " ".join(f"{f'~{w} words':>12}" for w in buckets))
    for n in names:
        cells = [per_bucket[w].get(n) for w in buckets]
        print(f"{n:<22} " + " ".join(f"{c:>11.1f}x" if c else f"{'—':>12}" for c in cells))
    geo = []
    for w in buckets:
        model_free = [n for n in per_bucket[w] if not REFERENCES[n].needs_model]
        geo.append(math.exp(statistics.fmean(math.log(per_bucket[w][n]) for n in model_free)) if model_free else None)
    print(f"{'geometric mean':<22} " + " ".join(f"{g:>11.1f}x" if g else f"{'—':>12}" for g in geo))
    bad = [f"~{w} words" for w in buckets if failed[w]]
    verdict = "FAIL" if bad else "PASS"
    print(f"[{verdict}] every floor in every bucket" + (f" (missed in: {', '.join(bad)})" if bad else ""))


def print_floors(speedups: dict, measured: Sequence[str]) -> bool:
    """Print PASS/FAIL for each floor; return whether one failed."""
    if not speedups:
        print("floors not checked: no RAID reference was measured")
        return False
    failed = False
    model_free = [n for n in speedups if not REFERENCES[n].needs_model]
    geo = math.exp(statistics.fmean(math.log(speedups[n]) for n in model_free))
    print(f"geometric-mean speed-up over the {len(model_free)} model-free RAID attacks measured: {geo:.1f}x")
    print(f"({', '.join(model_free)})")
    missing = [
        n for n, spec in REFERENCES.items() if not spec.needs_model and n in measured and n not in speedups
    ]
    if missing:
        print(f"(RAID implements without a model but was not measured here: {', '.join(missing)})")
    slowest = min(speedups, key=speedups.get)
    checks = [
        (
            speedups[slowest] >= FLOOR_ALL,
            f"no attack slower than RAID's (slowest: {slowest} {speedups[slowest]:.2f}x)",
        ),
        (geo >= FLOOR_GEOMEAN, f"geometric-mean speed-up >= {FLOOR_GEOMEAN:g}x ({geo:.1f}x)"),
    ]
    if "zero_width_space" in speedups:
        sp = speedups["zero_width_space"]
        checks.append((sp >= FLOOR_ZWSP, f"zero-width space >= {FLOOR_ZWSP:g}x ({sp:.1f}x)"))
    for ok, line in checks:
        failed |= not ok
        print(f"[{'PASS' if ok else 'FAIL'}] {line}")
    return failed


def print_sanity(texts: Sequence[str], refs: dict) -> None:
    sane = [n for n in SANITY_ATTACKS if n in refs]
    if not sane:
        return
    print("sanity (not timed; same documents; RAID seeded with random.seed(0)); per document:")
    print(f"{'attack':<22} {'edits ours':>9} {'RAID':>9} {'chars ours':>10} {'RAID':>10} {'ratio':>7}")
    for n in sane:
        print(sanity_row(n, texts, attacks.get(n), refs[n]))
    print("chars = characters inserted, deleted or substituted; ratio = ours / RAID's chars. By design:")
    for n in sane:
        if n in KNOWN_DIFFERENCES:
            print(f"  {n}: {KNOWN_DIFFERENCES[n]}")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--raid-repo", default=None, help="RAID checkout or git dir (default: $RAID_REPO, else a mirror)"
    )
    p.add_argument("--repeats", type=int, default=3, help="timed repeats; best per chunk kept (default 3)")
    p.add_argument(
        "--chunk-words", type=int, default=2500, help="words per timed chunk of documents (default 2500)"
    )
    p.add_argument(
        "--words", type=int, nargs="+", default=[50, 200, 1000], help="length buckets, in words (default 50 200 1000)"
    )
    p.add_argument(
        "--docs", type=int, default=None,
        help=f"documents per bucket (default {', '.join(f'{k}: {v}' for k, v in DEFAULT_DOCS.items())}; "
        f"{DEFAULT_CAP} for other sizes)",
    )
    p.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="perf_counter",
        help="perf_counter (wall time, default) or process_time (this process's CPU time; steadier on a "
        "busy machine)",
    )
    p.add_argument("--attacks", nargs="+", default=list(attacks.RULE_BASED), choices=list(attacks.RULE_BASED))
    p.add_argument("--no-sanity", action="store_true", help="skip the output comparison with RAID's")
    p.add_argument("--check", action="store_true", help="exit with status 1 when a floor is missed in a bucket")
    args = p.parse_args(argv)
    for opt in ("repeats", "chunk_words", "docs"):
        value = getattr(args, opt)
        if value is not None and value < 1:
            p.error(f"--{opt.replace('_', '-')} must be >= 1, got {value}")
    if min(args.words) < 1:
        p.error(f"--words must be >= 1, got {min(args.words)}")

    texts = load_demo().query("label == 'machine'")["generation"].tolist()
    print(f"demo set: {len(texts)} machine texts; best of {args.repeats} repeats per chunk; clock: time.{args.clock}")
    repo, how = locate_repo(args.raid_repo)
    reference = None
    if repo is None:
        print(f"RAID reference not available: {how}. Printing our figures only.")
    else:
        try:
            reference = RaidReference(repo)
            print(f"RAID reference: {repo} ({how}), attackers extracted to a temporary folder")
        except (FileNotFoundError, OSError) as exc:
            print(f"RAID reference not available: {exc}. Printing our figures only.")
    per_bucket: dict[int, dict] = {}
    failed: dict[int, bool] = {}
    refs: dict = {}
    try:
        for words in args.words:
            docs = length_bucket(texts, words, args.docs or DEFAULT_DOCS.get(words, DEFAULT_CAP))
            if not docs:
                print(f"\n== ~{words} words: the demo texts are too short for one document")
                continue
            args.chunk = max(1, args.chunk_words // words)
            mean_len = statistics.fmean(len(t) for t in docs)
            print(
                f"\n== ~{words} words: {len(docs)} documents, mean {mean_len:,.0f} characters, "
                f"{args.chunk} per timed chunk"
            )
            rows, speedups, notes, refs = measure(args, docs, reference)
            print_table(rows, notes)
            failed[words] = print_floors(speedups, args.attacks)
            per_bucket[words] = speedups
        print()
        print_legend()
        print()
        print_summary(per_bucket, failed)
        if not args.no_sanity:
            print()
            print_sanity(texts, refs)
    finally:
        if reference is not None:
            reference.close()
    return 1 if (any(failed.values()) and args.check) else 0


if __name__ == "__main__":
    sys.exit(main())
