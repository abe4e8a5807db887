"""Which judge tells a valid word swap from an invalid one? Issue #33's labelled swaps, scored by each judge.

Every swap of ``tests/quality/data/context_swaps.json`` (137 swaps read in context by one engineer: 50 valid,
87 invalid) is scored by

- each causal LM named in ``--models``: ``delta``, the nats its sentence loses with the replacement
  (:func:`humanize.quality.context.context_deltas`, the library's context meter and the attacks' filter);
- with ``--minilm``: the cosine of MiniLM's contextual vectors (last four layers) of the word and of its
  replacement in their sentences, a judge that is not a likelihood (Zhou et al. 2019 use BERT's);
- the minimum and the mean of the models' deltas, when two or more models are named.

It prints each judge's separation AUROC (valid vs invalid) and, at a few thresholds, the share of the
invalid swaps it lets through (false-valid) and of the valid ones it keeps. A model without a BOS token
cannot score a swap of a text's first word (NaN, counted as rejected).

    OMP_NUM_THREADS=1 python benchmarks/bench_context_judges.py --models smollm2-135m-instruct gemma-3-270m \
        qwen2.5-coder-0.5b-instruct --minilm
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

LABELS = Path(__file__).parents[1] / "tests" / "quality" / "data" / "context_swaps.json"


def minilm_cosines(texts, swaps) -> np.ndarray:
    """Cosine of the word's and the replacement's contextual MiniLM vectors (mean over their word pieces)."""
    import torch

    from humanize.models import load_sentence_encoder
    from humanize.quality.context import sentence_spans

    encoder = load_sentence_encoder("all-minilm-l6-v2").model
    tok, model = encoder.tokenizer, encoder[0].auto_model

    def vectors(sentence: str, start: int, end: int) -> np.ndarray:
        enc = tok(sentence, return_offsets_mapping=True, return_tensors="pt", truncation=True, max_length=256)
        offsets = enc.pop("offset_mapping")[0].tolist()
        with torch.inference_mode():
            hidden = model(**enc, output_hidden_states=True).hidden_states
        h = torch.stack(hidden[-4:]).mean(0)[0].numpy()
        rows = [i for i, (a, b) in enumerate(offsets) if b > a and a < end and b > start]
        return h[rows].mean(0)

    out = []
    for s in swaps:
        text = texts[s["text"]]
        lo, hi = next((a, b) for a, b in sentence_spans(text) if a <= s["start"] < b)
        a, b = s["start"] - lo, s["end"] - lo
        original = text[lo:hi]
        variant = original[:a] + s["replacement"] + original[b:]
        u = vectors(original, a, b)
        v = vectors(variant, a, a + len(s["replacement"]))
        out.append(float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v))))
    return np.asarray(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", nargs="+", default=["smollm2-135m-instruct", "gemma-3-270m"])
    ap.add_argument("--minilm", action="store_true")
    args = ap.parse_args(argv)

    from sklearn.metrics import roc_auc_score

    from humanize.quality.context import context_deltas

    data = json.loads(LABELS.read_text(encoding="utf-8"))
    texts, swaps = data["texts"], data["swaps"]
    valid = np.asarray([s["valid"] for s in swaps])
    items = [(texts[s["text"]], s["start"], s["end"], s["replacement"]) for s in swaps]
    judges: dict[str, tuple[np.ndarray, list[float]]] = {}
    deltas = []
    for name in args.models:
        d = context_deltas(items, name)
        print(f"{name}: {int(np.isnan(d).sum())} swap(s) unscored", flush=True)
        d = np.nan_to_num(d, nan=-1e9)
        deltas.append(d)
        judges[f"delta, {name}"] = (d, [0, -0.5, -1, -2, -3, -4])
    if len(deltas) > 1:
        stack = np.vstack(deltas)
        judges["delta, min of the models"] = (stack.min(0), [0, -0.5, -1, -2, -3, -4])
        judges["delta, mean of the models"] = (stack.mean(0), [0, -0.5, -1, -2, -3, -4])
    if args.minilm:
        judges["MiniLM contextual cosine"] = (minilm_cosines(texts, swaps), [0.6, 0.7, 0.8])
    print(f"\n{int(valid.sum())} valid and {int((~valid).sum())} invalid swaps ({LABELS.name})\n")
    print("| judge | separation AUROC | at threshold: false-valid / valid kept |")
    print("|---|---|---|")
    for name, (score, thresholds) in judges.items():
        points = "; ".join(f"{t}: {np.mean(score[~valid] >= t):.1%} / {np.mean(score[valid] >= t):.0%}"
                           for t in thresholds)
        print(f"| {name} | {roc_auc_score(valid, score):.3f} | {points} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
