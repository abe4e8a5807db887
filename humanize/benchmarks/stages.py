"""The one mechanism behind every stage of a run: keys in, missing work out, rows back.

Every stage (attacks, detector scores, quality, defenses) is the same loop: read what the
store already holds for the stage's keys, cut what is missing into batches (deterministically:
the same batches whatever the executor), hand the batches to an executor
(:mod:`humanize.benchmarks.executors`) and write each batch's rows back as its
:class:`~humanize.benchmarks.executors.BatchOutcome` arrives, so a run killed anywhere keeps
every finished batch and resumes where it stopped. Documents that failed are collected, not
stored, so a rerun retries them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from .executors import Executor, Failure, Job

__all__ = ["StageResult", "batch_keys", "missing_batches", "run_stage"]


@dataclass
class StageResult:
    """What a stage ended with: every result (cached and computed) by key, the keys computed
    in this call (in the order their batches completed) and the documents that failed."""

    results: dict = field(default_factory=dict)
    computed: list = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)


def batch_keys(keys: list, size: int) -> list[list]:
    """``keys`` cut into consecutive batches of ``size`` (the last may be shorter)."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"batch size must be an int >= 1, got {size!r}")
    return [keys[i : i + size] for i in range(0, len(keys), size)]


def missing_batches(payloads: Mapping[Any, Any], have: Iterable, size: int) -> list[list[tuple]]:
    """Batches of ``(key, payload)`` items for the keys of ``payloads`` (in their order) not in
    ``have``: the work a stage still owes."""
    have = set(have)
    todo = [k for k in payloads if k not in have]
    return [[(k, payloads[k]) for k in batch] for batch in batch_keys(todo, size)]


def run_stage(executor: Executor, job: Job, batches: list[list[tuple]], *,
              put: Callable[[list[tuple]], None] | None = None, results: dict | None = None,
              progress: bool = False) -> StageResult:
    """Carry out ``batches`` of ``(key, payload)`` items with ``executor``.

    ``put(done)`` receives each batch's ``(key, result)`` pairs as the batch completes (the
    store writer: one transaction per batch); ``results`` are the cached results the stage
    starts from. A :class:`KeyboardInterrupt` (or any error raised by the executor, such as a
    factory that cannot build its model) propagates; batches finished before it stay written.
    """
    out = StageResult(results=dict(results or {}))
    batches = [b for b in batches if b]
    if not batches:
        return out
    bar = _bar(len(batches), job.name, progress)
    try:
        for outcome in executor.map(job, batches):
            if outcome.done:
                if put is not None:
                    put(outcome.done)
                out.results.update(outcome.done)
                out.computed.extend(key for key, _ in outcome.done)
            out.failures.extend(outcome.failed)
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return out


def _bar(total: int, desc: str, enabled: bool):
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, leave=False)
