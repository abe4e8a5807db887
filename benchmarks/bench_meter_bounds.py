"""Cost bound of each quality meter and of the token counter, at growing text lengths.

For every (meter, length) one (original, attacked) pair is scored in a fresh child process
that is killed past ``--timeout`` seconds or ``--max-mb`` MiB of resident memory, so this
script never hangs or runs the machine out of memory itself. Each row prints the wall and
CPU time (all threads; steadier than wall time on a shared machine) and the peak RSS
increase of the call (measured by ``humanize.cost.CostMeter``; model loads and a warm-up
call on a short pair happen before it), the value and its note. ``rouge_score`` is the reference ROUGE-L of
``rouge-score`` (its quadratic LCS table), shown for comparison up to ``--reference-max``.

    .venv/bin/python benchmarks/bench_meter_bounds.py
    .venv/bin/python benchmarks/bench_meter_bounds.py --meters rouge_l edit_rate --sizes 1000 1000000
    .venv/bin/python benchmarks/bench_meter_bounds.py --meters perplexity --ppl-window 128   # slow CPU
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

METERS = ("rouge_l", "edit_rate", "flesch", "tokens", "cosine", "perplexity", "rouge_score")
SIZES = (1_000, 10_000, 40_000, 100_000, 100_001, 1_000_000, 10_000_000)


def make_pair(n_chars: int) -> tuple[str, str]:
    """``n_chars`` characters of demo-set text, and a copy with every 7th word dropped."""
    from humanize.benchmarks.data import load_demo

    base = " ".join(t for t in load_demo()["generation"].astype(str) if t.strip())
    text = (base * (n_chars // len(base) + 1))[:n_chars]
    words = text.split(" ")
    return text, " ".join(w for i, w in enumerate(words) if i % 7 != 3)


def child(meter: str, n_chars: int, ppl_window: int | None = None) -> dict:
    """Score one pair with one meter; the measured call excludes text building, model loads and first-call
    imports (one warm-up call on a short pair)."""
    import warnings

    from humanize.cost import CostMeter

    warnings.simplefilter("ignore")
    original, attacked = make_pair(n_chars)
    if meter == "rouge_l":
        from humanize.quality.lexical import rouge_l_with_note as call
    elif meter == "edit_rate":
        from humanize.quality.lexical import edit_rate_with_note as call
    elif meter == "flesch":
        from humanize.quality.lexical import flesch_with_note

        def call(a, b):
            return flesch_with_note(a), flesch_with_note(b)
    elif meter == "tokens":
        from humanize.cost.tokens import gpt2_spans

        def call(a, b):
            return len(gpt2_spans(a)) + len(gpt2_spans(b))
    elif meter == "cosine":
        from humanize.models import load_sentence_encoder
        from humanize.quality.similarity import similarity_with_notes
        enc = load_sentence_encoder("all-minilm-l6-v2")

        def call(a, b):
            return similarity_with_notes([a], [b], enc)[:2]
    elif meter == "perplexity":
        from humanize.models import load_causal_lm
        from humanize.quality.perplexity import perplexity_with_notes
        lm = load_causal_lm("smollm2-135m-instruct")

        stride = None if ppl_window is None else ppl_window // 2

        def call(a, b):
            return perplexity_with_notes([a, b], lm, max_length=ppl_window, stride=stride)[:2]
    elif meter == "rouge_score":
        from rouge_score import rouge_scorer
        scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)

        def call(a, b):
            return scorer.score(a, b)["rougeL"].fmeasure
    else:
        raise SystemExit(f"unknown meter {meter!r}; choose from {METERS}")
    call("Warm up the meter with a short pair.", "Warm up the meter.")
    meter_ = CostMeter(count_tokens=None, track_gpu=False)
    with meter_.measure(attack=meter):
        value = call(original, attacked)
    rec = meter_.records[0]
    return {"wall_s": rec["wall_s"], "cpu_s": rec["cpu_s"], "peak_mb": rec["rss_delta_mb"], "value": _short(value)}


def _short(value) -> str:
    import numpy as np

    def fmt(v):
        if isinstance(v, (list, tuple, np.ndarray)):
            return "(" + ", ".join(fmt(x) for x in v) + ")"
        if isinstance(v, float):
            return f"{v:.4g}"
        return str(v)[:90]
    return fmt(value)


def run_guarded(meter: str, n_chars: int, timeout: float, max_mb: float, ppl_window: int | None) -> dict:
    import psutil

    cmd = [sys.executable, os.path.abspath(__file__), "--child", meter, str(n_chars)]
    if ppl_window:
        cmd += ["--ppl-window", str(ppl_window)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"})
    ps, start, peak, why = psutil.Process(proc.pid), time.perf_counter(), 0.0, ""
    while proc.poll() is None:
        try:
            peak = max(peak, ps.memory_info().rss / 2**20)
        except psutil.NoSuchProcess:
            break
        if peak > max_mb:
            why = f"killed: RSS over {max_mb:.0f} MiB"
        elif time.perf_counter() - start > timeout:
            why = f"killed: over {timeout:.0f} s"
        if why:
            proc.kill()
            break
        time.sleep(0.05)
    out, err = proc.communicate()
    if why:
        return {"status": why}
    if proc.returncode != 0:
        return {"status": f"exit {proc.returncode}: {err.strip().splitlines()[-1] if err.strip() else ''}"}
    return {"status": "ok", **json.loads(out.strip().splitlines()[-1])}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--meters", nargs="+", default=list(METERS), choices=METERS)
    ap.add_argument("--sizes", nargs="+", type=int, default=list(SIZES), help="characters per text")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per (meter, size) before the kill")
    ap.add_argument("--max-mb", type=float, default=8192.0, help="child RSS (MiB) before the kill")
    ap.add_argument("--reference-max", type=int, default=40_000,
                    help="largest size for the quadratic rouge-score reference")
    ap.add_argument("--ppl-window", type=int, default=None,
                    help="perplexity window in tokens (default: the model's, 1024; stride = half; a smaller "
                         "window shows the same cap on a slow CPU: max_windows=8 windows per text)")
    ap.add_argument("--child", nargs=2, metavar=("METER", "CHARS"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], int(args.child[1]), args.ppl_window)))
        return
    print(f"{'meter':<12} {'chars':>10} {'wall_s':>9} {'cpu_s':>9} {'peak_MiB':>9}  value / status")
    for meter in args.meters:
        for n in args.sizes:
            if meter == "rouge_score" and n > args.reference_max:
                continue
            row = run_guarded(meter, n, args.timeout, args.max_mb, args.ppl_window)
            if row["status"] == "ok":
                print(f"{meter:<12} {n:>10,} {row['wall_s']:>9.3f} {row['cpu_s']:>9.3f} {row['peak_mb']:>9.1f}  "
                      f"{row['value']}", flush=True)
            else:
                print(f"{meter:<12} {n:>10,} {'-':>9} {'-':>9} {'-':>9}  {row['status']}", flush=True)


if __name__ == "__main__":
    main()
