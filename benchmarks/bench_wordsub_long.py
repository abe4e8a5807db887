"""Word substitution on long documents (issue #22 §2): peak memory and where the swaps land, before and after.

A document of ``--words`` words (default 2,000 and 50,000) is built from the demo set's
machine texts (joined in their order by paragraph breaks, cut after the W-th word) and
attacked by ``--attack`` (default ``synonym`` at its defaults: sense synonyms ranked by the
packaged causal LM, the POS / cosine / sentence-similarity filters) in a fresh child
process per (code, length), so each peak RSS (``ru_maxrss`` of the child: the models
included) is its own; "of which doc" is the rise over the peak after the models were
loaded and one demo text attacked. ``after`` is this tree; ``before`` is the package as it was at
``--before`` (default ``c975aa4``, the commit before the windowed engine), exported with
``git archive`` into a temporary directory. Printed per run: seconds, peak RSS, swaps
made of the target, and the share of the swaps in each quarter of the text (the
before code left every word past the LM's 1,024-token window without a score, so its
swaps stayed at the start).

    python benchmarks/bench_wordsub_long.py                         # 2k and 50k words, before and after
    python benchmarks/bench_wordsub_long.py --words 2000 --only after
    python benchmarks/bench_wordsub_long.py --words 2000 --rate 0.1  # a budget below the words with a candidate
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, resource, sys, time
from humanize import attacks
from humanize.benchmarks.data import load_demo
words, name, rate = int(sys.argv[1]), sys.argv[2], sys.argv[3]
texts = load_demo().query("label == 'machine'")["generation"].tolist()
out, n = [], 0
while n < words:
    for t in texts:
        ws = t.split()[: words - n]
        out.append(" ".join(ws)); n += len(ws)
        if n >= words:
            break
text = "\n\n".join(out)
attack = attacks.get(name) if rate == "default" else attacks.get(name, rate=float(rate))
attack.apply(texts[0])  # models loaded before the clock starts
warm = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
t = time.perf_counter()
r = attack.apply(text)
sec = time.perf_counter() - t
quarters = [0, 0, 0, 0]
for e in r.edits:
    quarters[min(3, 4 * e.start // max(len(text), 1))] += 1
print(json.dumps({"seconds": sec, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "warm_mb": warm,
                  "swaps": len(r.edits), "target": r.info.get("target_swaps"), "quarters": quarters}))
"""


def export(rev: str, into: str) -> str:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "humanize"], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", into], input=archive.stdout, check=True)
    return into


def measure(path: str, words: int, attack: str, timeout: float, rate: str = "default") -> dict | str:
    env = dict(os.environ, PYTHONPATH=path, HF_HUB_OFFLINE="1")
    try:
        done = subprocess.run([sys.executable, "-c", CHILD, str(words), attack, rate], env=env, capture_output=True,
                              text=True, timeout=timeout, cwd=tempfile.gettempdir())
    except subprocess.TimeoutExpired:
        return f"stopped after {timeout:.0f} s"
    if done.returncode != 0:
        return "failed: " + (done.stderr.strip().splitlines() or ["?"])[-1][:100]
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--words", type=int, nargs="+", default=[2000, 50000])
    p.add_argument("--attack", default="synonym")
    p.add_argument("--rate", default="default", help="the attack's rate θ (default: its own)")
    p.add_argument("--before", default="c975aa4", help="git revision of the 'before' code")
    p.add_argument("--only", choices=["before", "after"], default=None)
    p.add_argument("--timeout", type=float, default=3600.0, help="seconds per run")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        trees = {}
        if args.only != "after":
            trees["before"] = export(args.before, tmp)
        if args.only != "before":
            trees["after"] = str(ROOT)
        print(f"{args.attack} (rate {args.rate}) on long documents; before = {args.before}, after = this tree")
        print(f"{'words':>7} {'code':>7} {'seconds':>9} {'peak RSS MB':>12} {'of which doc':>13} {'swaps/target':>13}"
              f"  share per quarter")
        for words in args.words:
            for code, path in trees.items():
                r = measure(path, words, args.attack, args.timeout, args.rate)
                if isinstance(r, str):
                    print(f"{words:>7} {code:>7}  {r}", flush=True)
                    continue
                q = r["quarters"]
                shares = " ".join(f"{x / max(sum(q), 1):.0%}" for x in q)
                print(f"{words:>7} {code:>7} {r['seconds']:>9.1f} {r['rss_mb']:>12.0f} "
                      f"{r['rss_mb'] - r['warm_mb']:>13.0f} "
                      f"{str(r['swaps']) + '/' + str(r['target']):>13}  {shares}", flush=True)


if __name__ == "__main__":
    main()
