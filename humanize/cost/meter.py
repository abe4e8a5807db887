"""What an attack costs to run (TH-Bench Section 4.3, Appendix E): time, memory, tokens, queries.

``CostMeter`` records one row per measured call: wall and CPU time, peak
process memory (RSS), peak GPU memory (torch allocator peak, reset per call;
NVML process memory when ``pynvml`` is present), token counts and the
detector queries / LLM API tokens an attack reports. Model loads that happen
inside a call are timed separately (``load_s``) and subtracted from its
``wall_s`` and ``cpu_s``. This module imports nothing of humanize's but the core
(:mod:`humanize.validation`): the model layer reports loads by calling
:func:`record_model_load` when this module is loaded.
"""
from __future__ import annotations

import functools
import math
import numbers
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Optional

import pandas as pd

from humanize.validation import Interval, validate_parameter_constraints

from .memory import PeakRSS, gpu_peak_start, gpu_peak_stop, nvml_process_mb, rss_mb
from .tokens import resolve_tokenizer

__all__ = ["CostMeter", "Measurement", "report", "record_model_load", "COUNTERS"]

COUNTERS = ("tokens_in", "tokens_out", "queries", "api_tokens_in", "api_tokens_out")
_ACTIVE: list["Measurement"] = []
_LOCK = threading.Lock()


def report(**counts: float) -> None:
    """Add counts (e.g. ``queries=1``, ``api_tokens_in=512``) to every measurement in progress.

    Attacks call this where they query a detector or an LLM API; it does
    nothing when no meter is running.
    """
    with _LOCK:
        for m in _ACTIVE:
            m.add(**counts)


def record_model_load(event: dict) -> None:
    """Called by ``humanize.models`` after each model load (``seconds``, ``cpu_seconds``, ``resolved``)."""
    with _LOCK:
        for m in _ACTIVE:
            m.load_s += float(event.get("seconds", 0.0))
            m.load_cpu_s += float(event.get("cpu_seconds", 0.0))
            m.meter.loads.append({"attack": m.attack, "doc_id": m.doc_id, **event})


def _is_count(value: Any) -> bool:
    """A number (numpy scalars too; NaN allowed), never a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and type(value).__name__ != "bool_"


#: CostMeter's parameters (it keeps its own repr, so it is not a ParamsMixin).
_METER_CONSTRAINTS = {
    "track_gpu": ["boolean"],
    "sample_interval": [Interval(numbers.Real, 0, None, closed="neither")],  # seconds between RSS samples
}
_MEASURE_CONSTRAINTS = {"n_docs": [Interval(numbers.Integral, 0, None)]}  # an empty batch is 0


class Measurement:
    """The running record of one measured call; ``add`` counts, the meter fills in the rest."""

    def __init__(self, meter: "CostMeter", doc_id: Any, attack: Optional[str], n_docs: int, extra: dict):
        self.meter, self.doc_id, self.attack, self.n_docs = meter, doc_id, attack, n_docs
        self.extra = dict(extra)
        self.counts: dict[str, float] = {}
        self.load_s = 0.0
        self.load_cpu_s = 0.0
        self.record: Optional[dict] = None

    def add(self, **counts: float) -> None:
        for key, value in counts.items():
            if value is None:
                continue
            if not _is_count(value):
                raise TypeError(f"count {key!r} must be a number, got {type(value).__name__}")
            self.counts[key] = self.counts.get(key, 0) + value
            if self.record is not None:  # counted after the timed block (e.g. tokens): the record takes them too
                self.record[key] = self.counts[key]

    def count_input(self, texts: Any) -> None:
        """Count tokens of the call's input texts with the meter's tokenizer."""
        self.add(tokens_in=self.meter._count(texts))

    def count_output(self, result: Any) -> None:
        """Count output tokens (str, objects with ``.text``, or lists) and pick up ``.usage`` counts."""
        self.add(tokens_out=self.meter._count(result))
        for item in (result if isinstance(result, (list, tuple)) else [result]):
            usage = getattr(item, "usage", None)
            if isinstance(usage, dict):
                self.add(**{k: v for k, v in usage.items() if _is_count(v)})


class CostMeter:
    """Time / memory / token / query meter, as a context manager or a decorator.

    count_tokens : tokenizer for ``tokens_in``/``tokens_out``: ``"gpt2"`` (blingfire's
        GPT-2 BPE, default), a Hugging Face tokenizer, a spans function, or None (no counting)
    track_gpu : record torch's peak GPU allocation and NVML process memory when CUDA is in use
    sample_interval : seconds between RSS samples where the kernel's peak-RSS reset is unavailable

    >>> meter = CostMeter()
    >>> with meter.measure(doc_id=0, attack="typo") as m:   # doctest: +SKIP
    ...     out = attack.apply(text); m.add(queries=3)
    >>> meter.to_frame()                                     # doctest: +SKIP
    """

    def __init__(self, count_tokens: Any = "gpt2", track_gpu: bool = True, sample_interval: float = 0.005):
        self.count_tokens = count_tokens
        self.track_gpu = track_gpu
        self.sample_interval = sample_interval
        self.records: list[dict] = []
        self.loads: list[dict] = []
        self._validate()

    def _validate(self) -> None:
        validate_parameter_constraints("CostMeter", _METER_CONSTRAINTS,
                                       {"track_gpu": self.track_gpu, "sample_interval": self.sample_interval})

    def __repr__(self) -> str:
        return (f"CostMeter(count_tokens={self.count_tokens!r}, track_gpu={self.track_gpu!r}, "
                f"sample_interval={self.sample_interval!r})  # {len(self.records)} records")

    def _count(self, value: Any) -> Optional[int]:
        if self.count_tokens is None:
            return None
        spans = resolve_tokenizer(self.count_tokens)
        if isinstance(value, str):
            return int(len(spans(value)))
        if hasattr(value, "text") and isinstance(getattr(value, "text"), str):
            return int(len(spans(value.text)))
        if isinstance(value, (list, tuple)):
            return int(sum(self._count(v) or 0 for v in value))
        return None

    @contextmanager
    def measure(self, doc_id: Any = None, attack: Optional[str] = None, n_docs: int = 1,
                **extra: Any) -> Iterator[Measurement]:
        """Measure the ``with`` block as one record (``n_docs`` documents)."""
        validate_parameter_constraints("CostMeter.measure", _MEASURE_CONSTRAINTS, {"n_docs": n_docs})
        n_docs = int(n_docs)
        m = Measurement(self, doc_id, attack, n_docs, extra)
        rss_peak = PeakRSS(self.sample_interval)
        with _LOCK:
            for outer in _ACTIVE:
                outer.extra.setdefault("_rss_seen", 0.0)
                outer.extra["_rss_seen"] = max(outer.extra["_rss_seen"], rss_peak.current_peak())
            _ACTIVE.append(m)
        if self.track_gpu:
            gpu_peak_start(_ACTIVE[:-1])
        rss_start = rss_mb()
        rss_peak.start()
        error = ""
        wall0, cpu0 = time.perf_counter(), time.process_time()
        try:
            yield m
        except BaseException as exc:
            error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
            peak = max(rss_peak.stop(), m.extra.pop("_rss_seen", 0.0))
            gpu_mb = gpu_peak_stop(m) if self.track_gpu else math.nan
            with _LOCK:
                if m in _ACTIVE:
                    _ACTIVE.remove(m)
            rec = {
                "attack": attack, "doc_id": doc_id, "n_docs": n_docs,
                "wall_s": max(0.0, wall - m.load_s), "cpu_s": max(0.0, cpu - m.load_cpu_s),
                "load_s": m.load_s, "wall_s_per_doc": max(0.0, wall - m.load_s) / max(n_docs, 1),
                "rss_start_mb": rss_start, "peak_rss_mb": peak, "rss_delta_mb": max(0.0, peak - rss_start),
                "gpu_peak_mb": gpu_mb,
                "gpu_nvml_mb": nvml_process_mb() if self.track_gpu else math.nan,
            }
            for key in COUNTERS:
                rec[key] = m.counts.get(key, math.nan)
            for key, value in m.counts.items():
                rec.setdefault(key, value)
            rec.update({k: v for k, v in m.extra.items() if not k.startswith("_")})
            rec["error"] = error
            m.record = rec
            self.records.append(rec)

    def wrap(self, fn: Callable, attack: Optional[str] = None) -> Callable:
        """``fn`` measured on every call: one record per call, tokens of input and output counted.

        A list/tuple first argument counts as a batch (``n_docs`` = its length);
        ``doc_id=`` may be passed as a keyword and is not forwarded to ``fn``.
        """
        if not callable(fn):
            raise TypeError(f"fn must be callable, got {type(fn).__name__}")
        name = attack or _callable_name(fn)

        @functools.wraps(fn)
        def measured(*args, doc_id: Any = None, **kwargs):
            first = args[0] if args else None
            n_docs = len(first) if isinstance(first, (list, tuple)) else 1
            with self.measure(doc_id=doc_id, attack=name, n_docs=n_docs) as m:
                if first is not None:
                    m.count_input(first)
                result = fn(*args, **kwargs)
                m.count_output(result)
            return result

        return measured

    def __call__(self, fn: Optional[Callable] = None, *, attack: Optional[str] = None):
        """Decorator: ``@meter`` or ``@meter(attack="name")``."""
        if fn is None:
            return lambda f: self.wrap(f, attack=attack)
        return self.wrap(fn, attack=attack)

    def to_frame(self) -> pd.DataFrame:
        """One row per measured call."""
        return pd.DataFrame(self.records)

    def reset(self) -> None:
        self.records.clear()
        self.loads.clear()


def _callable_name(fn: Callable) -> str:
    owner = getattr(fn, "__self__", None)
    if owner is not None:
        return getattr(owner, "name", None) or type(owner).__name__
    return getattr(fn, "__qualname__", None) or type(fn).__name__

