"""Throughput of the quality meters and load time of the packaged LM.

Prints, on the demo set:
  * documents/second for each meter (perplexity, cosine, rouge_l, flesch, edit_rate);
  * perplexity throughput (tokens/s) next to the raw forward pass of the same model at the
    same batch size over the same length-sorted batches (``model(input_ids)`` alone) and
    their ratio (floor: >= 0.67);
  * first load of smollm2-135m-instruct from its GGUF (fresh cache) vs. the second load
    from the converted cache, each in a fresh process (floor: >= 5x faster).

    .venv/bin/python benchmarks/bench_quality.py [--n 24] [--batch-size 8] [--repeats 3] [--skip-load]
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def demo_texts(n: int) -> list[str]:
    try:
        from humanize.benchmarks.data import load_demo

        frame = load_demo()
        texts = frame["generation"].astype(str).tolist()
    except Exception:  # noqa: BLE001 - fall back to the raw JSON files
        texts = []
        root = Path(__file__).resolve().parents[1] / "humanize" / "data" / "demo"
        paths = sorted(glob.glob(str(root / "*.json"))) or sorted(glob.glob("/work/shared/data/demo/*.json"))
        for path in paths:
            with open(path) as fh:
                data = json.load(fh)
            texts += data["original"] + data["sampled"]
    texts = [t for t in texts if t.strip()]
    return texts[:n]


def perturb(text: str, seed: int) -> str:
    """A cheap deterministic 'attack': drop every 7th word and swap two neighbours."""
    words = text.split()
    words = [w for i, w in enumerate(words) if i % 7 != 3]
    if len(words) > 4:
        k = seed % (len(words) - 1)
        words[k], words[k + 1] = words[k + 1], words[k]
    return " ".join(words)


def best_of(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def raw_forward(lm, texts, batch_size: int):
    """Same tokens, same length-sorted batches and padding as the meter, forward pass only."""
    import torch

    from humanize.models.scoring import encode_for_scoring

    ids, _, _ = encode_for_scoring(lm, texts)
    ids = sorted(ids, key=len, reverse=True)
    batches = []
    for i in range(0, len(ids), batch_size):
        group = ids[i: i + batch_size]
        width = len(group[0])
        t = torch.zeros((len(group), width), dtype=torch.long)
        for r, seq in enumerate(group):
            t[r, : len(seq)] = torch.as_tensor(seq)
        batches.append(t.to(lm.device))

    def run():
        with torch.inference_mode():
            for b in batches:
                lm.model(b)
    return run, sum(len(s) for s in ids), max(len(s) for s in ids)


def load_times() -> tuple[float, float]:
    code = ("import json; from humanize.models import load_causal_lm; lm = load_causal_lm('smollm2-135m-instruct');"
            "print(json.dumps({'load': lm.load_seconds, 'source': lm.source}))")
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, HUMANIZE_CACHE=cache)
        out = []
        for _ in range(2):
            res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
            out.append(json.loads(res.stdout.strip().splitlines()[-1]))
    assert out[0]["source"] == "converted-from-gguf" and out[1]["source"] == "converted-cache", out
    return out[0]["load"], out[1]["load"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=24, help="number of demo documents")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--skip-load", action="store_true", help="skip the GGUF first/second load timing")
    args = ap.parse_args(argv)

    import torch

    from humanize.models import load_causal_lm, load_sentence_encoder
    from humanize.quality import QualityMeter, perplexity

    texts = demo_texts(args.n)
    attacked = [perturb(t, i) for i, t in enumerate(texts)]
    lm, enc = load_causal_lm(), load_sentence_encoder()
    print(f"documents: {len(texts)}  torch threads: {torch.get_num_threads()}  device: {lm.device}  "
          f"lm: {lm.resolved}  encoder: {enc.resolved}")
    perplexity(texts[:2], lm)  # warm-up

    print("\nper-meter throughput over (original, attacked) pairs (one cold run each: textstat caches):")
    for meter in ["perplexity", "cosine", "rouge_l", "flesch", "edit_rate"]:
        qm = QualityMeter(lm=lm, encoder=enc, meters=[meter], batch_size=args.batch_size)
        seconds = best_of(lambda: qm.score(texts, attacked), 1)
        print(f"  {meter:<11} {len(texts) / seconds:10.1f} pairs/s   ({seconds:.2f} s)")

    run_raw, n_tokens, longest = raw_forward(lm, texts, args.batch_size)
    raw_s, meter_s = [], []
    for _ in range(args.repeats):  # interleaved, so machine load affects both alike
        raw_s.append(best_of(run_raw, 1))
        meter_s.append(best_of(lambda: perplexity(texts, lm, batch_size=args.batch_size), 1))
    raw_tps, meter_tps = n_tokens / min(raw_s), n_tokens / min(meter_s)
    print(f"\nperplexity vs raw forward, batch size {args.batch_size}, {n_tokens} tokens (longest {longest}):")
    print(f"  raw model(input_ids): {raw_tps:10.1f} tokens/s")
    print(f"  perplexity meter    : {meter_tps:10.1f} tokens/s")
    print(f"  ratio meter/raw     : {meter_tps / raw_tps:10.3f}   (floor 0.67)")

    if not args.skip_load:
        first, second = load_times()
        print(f"\nsmollm2-135m-instruct load: first (from GGUF, fresh cache) {first:.2f} s, "
              f"second (converted cache) {second:.2f} s, speed-up {first / second:.1f}x (floor 5x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
