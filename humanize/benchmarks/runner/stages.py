"""The one mechanism behind every stage of a run: keys in, missing work out, rows back.

Every stage (attacks, detector scores, quality, defenses) is the same loop: read what the
store already holds for the stage's keys, cut what is missing into batches (deterministically:
the same batches whatever the executor), hand the batches to an executor
(:mod:`humanize.benchmarks.runner.executors`) and write each batch's rows back as its
:class:`~humanize.benchmarks.runner.executors.BatchOutcome` arrives, so a run killed anywhere keeps
every finished batch and resumes where it stopped. Documents that failed are collected, not
stored, so a rerun retries them.

A stage of several independent jobs (every attack and θ of a run, every defense) goes to the
executor at once (:func:`run_stages`, through :meth:`Executor.map_jobs
<humanize.benchmarks.runner.executors.Executor.map_jobs>`): a cluster then keeps all its workers busy
across the jobs' boundaries instead of waiting for the last batch of each job before it starts
the next. The results are the same as one job at a time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from .executors import Executor, Failure, Job

__all__ = ["StageResult", "StageWork", "batch_keys", "missing_batches", "run_stage", "run_stages"]


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


@dataclass
class StageWork:
    """One job of a stage: its batches of ``(key, payload)`` items, the store writer ``put``
    (called with each batch's ``(key, result)`` pairs as the batch completes) and the cached
    ``results`` the job starts from."""

    job: Job
    batches: list
    put: Callable[[list[tuple]], None] | None = None
    results: dict | None = None


def run_stage(executor: Executor, job: Job, batches: list[list[tuple]], *,
              put: Callable[[list[tuple]], None] | None = None, results: dict | None = None,
              progress: bool = False) -> StageResult:
    """Carry out ``batches`` of ``(key, payload)`` items with ``executor``.

    ``put(done)`` receives each batch's ``(key, result)`` pairs as the batch completes (the
    store writer); ``results`` are the cached results the stage starts from. A
    :class:`KeyboardInterrupt` (or any error raised by the executor, such as a factory that
    cannot build its model) propagates; batches finished before it stay written.
    """
    return run_stages(executor, [StageWork(job, batches, put, results)], progress=progress, name=job.name)[0]


def run_stages(executor: Executor, work: list[StageWork], *, progress: bool = False,
               name: str | None = None) -> list[StageResult]:
    """Carry out several independent jobs with one executor, all at once where the executor
    can (:meth:`~humanize.benchmarks.runner.executors.Executor.map_jobs`; an executor that only has
    ``map`` runs them one after another). One :class:`StageResult` per :class:`StageWork`, in
    order; each batch is written by its job's ``put`` as it arrives, whatever the order."""
    outs = [StageResult(results=dict(w.results or {})) for w in work]
    todo = [(i, StageWork(w.job, [b for b in w.batches if b], w.put)) for i, w in enumerate(work)]
    todo = [(i, w) for i, w in todo if w.batches]
    if not todo:
        return outs
    bar = _bar(sum(len(b) for _, w in todo for b in w.batches), name or todo[0][1].job.name, progress)
    waiting = {pos: w.job.name for pos, (_, w) in enumerate(todo)}  # jobs whose first batch (model load) is to come
    _say_waiting(bar, waiting)
    try:
        for pos, outcome in _map_jobs(executor, [(w.job, w.batches) for _, w in todo]):
            if waiting.pop(pos, None) is not None:
                _say_waiting(bar, waiting)
            i, w = todo[pos]
            out = outs[i]
            if outcome.done:
                if w.put is not None:
                    w.put(outcome.done)
                out.results.update(outcome.done)
                out.computed.extend(key for key, _ in outcome.done)
            out.failures.extend(outcome.failed)
            if bar is not None:
                bar.update(len(outcome.batch))  # documents, not batches: the rate and ETA are per document
    finally:
        if bar is not None:
            bar.close()
    return outs


def _map_jobs(executor, work: list[tuple]):
    """``executor.map_jobs(work)``; for a wrapper that only has ``map``, the base class's
    one-job-after-another ``map_jobs`` over its ``map``."""
    own = getattr(executor, "map_jobs", None)
    return own(work) if callable(own) else Executor.map_jobs(executor, work)


def _say_waiting(bar, waiting: dict) -> None:
    """The bar names the jobs still on their first batch, which loads their models: the time left it shows is
    not to be trusted until they have one (a model can take minutes to load while the bar stands still)."""
    if bar is None:
        return
    names = list(waiting.values())
    shown = ", ".join(names[:3]) + (f" +{len(names) - 3}" if len(names) > 3 else "")
    bar.set_postfix_str(f"loading models / first batch: {shown}" if names else "", refresh=True)


def _bar(total: int, desc: str, enabled: bool):
    """A progress bar over ``total`` documents, with their rate and the time left."""
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="doc", leave=False, smoothing=0.1,
                bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} docs "
                           "[{elapsed}<{remaining}, {rate_fmt}{postfix}]")
