"""Length sweep of an attack's cost, as in TH-Bench Section 4.3 / Appendix E.

For each target length L (100, 200, ..., 1,000 tokens) sample up to
``per_bucket`` documents whose length is in [L, L + step), truncate each to
exactly L tokens, run the attack on each document alone, and report time and
memory per bucket. Buckets with no long-enough document are kept with
``n_docs = 0`` (TH-Bench Table 4 has such gaps too). Calls that raise are not
timed: ``n_errors`` counts them per bucket, a warning quotes the first, and a
sweep in which every call raised is an error.
"""
from __future__ import annotations

import hashlib
import math
import warnings
from numbers import Integral
from typing import Any, Callable, Iterable, Optional, Sequence

import numpy as np
import pandas as pd

from humanize.validation import Interval, check_texts, validate_parameter_constraints

from .meter import CostMeter
from .tokens import resolve_tokenizer
from humanize.exceptions import SweepError

__all__ = ["SweepError", "length_sweep", "bucket_documents", "summarize_sweep"]


def _seed(seed: int, length: int) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}:{length}".encode()).digest()[:8], "little")


#: The sweep's arguments (:mod:`humanize.validation`).
_CONSTRAINTS = {
    "per_bucket": [Interval(Integral, 1, None)],
    "seed": ["seed"],
    "step": [Interval(Integral, 1, None), None],
    "each length": [Interval(Integral, 1, None)],  # a token count
}


def _check_lengths(lengths: Any, owner: str) -> list[int]:
    if isinstance(lengths, (str, bytes, dict, set)) or not hasattr(lengths, "__iter__"):
        raise TypeError(f"{owner}: lengths must be an iterable of token counts (int), got {type(lengths).__name__}")
    lengths = list(lengths)
    if not lengths:
        raise ValueError(f"{owner}: lengths must hold at least one token count")
    for n in lengths:
        validate_parameter_constraints(f"{owner}: lengths", _CONSTRAINTS, {"each length": n})
    return sorted(int(n) for n in lengths)


def bucket_documents(documents: Sequence[str], lengths: Iterable[int] = range(100, 1001, 100), *,
                     per_bucket: int = 10, tokenizer: Any = "gpt2", seed: int = 0,
                     step: Optional[int] = None) -> pd.DataFrame:
    """Sampled, truncated documents: columns ``bucket, source_index, tokens, text``."""
    documents = check_texts(documents, "humanize.cost", "bucket_documents")
    lengths = _check_lengths(lengths, "bucket_documents")
    validate_parameter_constraints("bucket_documents", _CONSTRAINTS,
                                   {"per_bucket": per_bucket, "seed": seed, "step": step})
    per_bucket, seed = int(per_bucket), int(seed)
    if step is None:
        step = lengths[1] - lengths[0] if len(lengths) > 1 else lengths[0]
    spans_of = resolve_tokenizer(tokenizer)
    spans = [spans_of(d) for d in documents]
    counts = np.array([len(s) for s in spans])
    rows = []
    for length in lengths:
        pool = np.flatnonzero((counts >= length) & (counts < length + step))
        rng = np.random.default_rng(_seed(seed, length))
        chosen = rng.choice(pool, size=min(per_bucket, len(pool)), replace=False) if len(pool) else []
        for idx in sorted(int(i) for i in chosen):
            end = int(spans[idx][length - 1][1])
            rows.append({"bucket": length, "source_index": idx, "tokens": length, "text": documents[idx][:end]})
    return pd.DataFrame(rows, columns=["bucket", "source_index", "tokens", "text"])


def summarize_sweep(records: pd.DataFrame, lengths: Optional[Iterable[int]] = None) -> pd.DataFrame:
    """Per-bucket time and memory from per-document sweep records."""
    cols = ["bucket", "n_docs", "n_errors", "wall_s_mean", "wall_s_median", "wall_s_max", "cpu_s_mean",
            "peak_rss_mb_max", "rss_delta_mb_max", "gpu_peak_mb_max", "tokens_out_mean"]
    buckets = sorted(set(records["bucket"]) if len(records) else set()) if lengths is None else sorted(lengths)
    out = []
    for b in buckets:
        r = records[records["bucket"] == b] if len(records) else records
        ok = r[r["error"] == ""] if len(r) and "error" in r else r

        def stat(col, fn):
            return float(fn(ok[col])) if len(ok) and col in ok and ok[col].notna().any() else math.nan
        out.append({"bucket": b, "n_docs": int(len(ok)), "n_errors": int(len(r) - len(ok)),
                    "wall_s_mean": stat("wall_s", np.nanmean),
                    "wall_s_median": stat("wall_s", np.nanmedian), "wall_s_max": stat("wall_s", np.nanmax),
                    "cpu_s_mean": stat("cpu_s", np.nanmean), "peak_rss_mb_max": stat("peak_rss_mb", np.nanmax),
                    "rss_delta_mb_max": stat("rss_delta_mb", np.nanmax),
                    "gpu_peak_mb_max": stat("gpu_peak_mb", np.nanmax),
                    "tokens_out_mean": stat("tokens_out", np.nanmean)})
    return pd.DataFrame(out, columns=cols)


def length_sweep(fn: Callable, documents: Sequence[str], lengths: Iterable[int] = range(100, 1001, 100), *,
                 per_bucket: int = 10, tokenizer: Any = "gpt2", seed: int = 0, batched: Optional[bool] = None,
                 attack: Optional[str] = None, warmup: bool = True, meter: Optional[CostMeter] = None,
                 per_document: bool = False) -> pd.DataFrame:
    """Time and memory of ``fn`` per token-length bucket.

    fn : one-text callable (``attack.apply``) or, with ``batched=True``, a
        list callable (``attack.batch``); ``batched=None`` guesses from the name ``batch``
    tokenizer : for bucketing and truncation: ``"gpt2"`` (blingfire's GPT-2 BPE,
        TH-Bench's reference tokenizer; no model needed), a HF tokenizer or a LoadedModel
    warmup : run ``fn`` once on the shortest sampled document, unmeasured, so model
        loads and first-call setup stay out of the figures (loads are also excluded by the meter)
    per_document : return the per-document records instead of the per-bucket summary
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    lengths = _check_lengths(lengths, "length_sweep")
    docs = bucket_documents(documents, lengths, per_bucket=per_bucket, tokenizer=tokenizer, seed=seed)
    if batched is None:
        batched = getattr(fn, "__name__", "") == "batch"
    call = (lambda text: fn([text])) if batched else fn
    meter = meter if meter is not None else CostMeter(count_tokens=tokenizer)
    name = attack or getattr(getattr(fn, "__self__", None), "name", None) or getattr(fn, "__qualname__", "fn")
    if warmup and len(docs):
        try:
            call(docs["text"].iloc[int(np.argmin(docs["tokens"].to_numpy()))])
        except Exception:  # noqa: BLE001 - unmeasured; the measured call on that text records the error
            pass
    start = len(meter.records)
    first_error: Optional[BaseException] = None
    for row in docs.itertuples(index=False):
        try:
            with meter.measure(doc_id=int(row.source_index), attack=name, bucket=int(row.bucket)) as m:
                m.add(tokens_in=int(row.tokens))
                m.count_output(call(row.text))
        except Exception as exc:  # noqa: BLE001 - the record keeps the error; the sweep goes on
            first_error = first_error or exc
    records = pd.DataFrame(meter.records[start:])
    if first_error is not None:
        n_err = int((records["error"] != "").sum())
        what = f"{n_err} of {len(records)} calls of {name} raised; first: {type(first_error).__name__}: {first_error}"
        if n_err == len(records):
            raise SweepError(f"length_sweep: every call failed ({what})") from first_error
        warnings.warn(f"length_sweep: {what} (counted in n_errors, left out of the timings)", RuntimeWarning,
                      stacklevel=2)
    if per_document:
        return records
    return summarize_sweep(records, lengths)
