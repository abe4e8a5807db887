"""The executor seam: a stage of the runner hands an executor its units of work; the executor
carries them out and hands back rows; the driver writes them into the store.

A :class:`Job` says *what* to do to each item: ``factory()`` builds the worker's state once
(an attack, a loaded detector, a quality meter) and ``apply(state, payloads)`` maps a batch of
payloads to one result per payload. Both are picklable (module-level functions or
``functools.partial`` of them), so a remote executor can build the state where the work runs,
once per worker. An executor yields a :class:`BatchOutcome` per batch as it completes: the
results of the items that succeeded and a :class:`Failure` for each that did not, so one bad
document never sinks a run. An error about the run rather than the document
(:func:`run_errors`: a model that is not installed, a bad configuration) is raised, whether
the factory or ``apply`` (where models load lazily) raises it.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator

#: One item of work: (key, payload); the key (a text hash) names the document in failures.
Item = tuple


@dataclass(frozen=True)
class Job:
    """What a stage asks of an executor.

    ``name``: readable, for progress bars and failure reports (``"attack <label>@0.5"``).
    ``factory``: builds the worker state; called once per worker (a model loads once per actor).
    ``apply``: ``(state, payloads) -> results``, one result per payload, in order.
    ``kind``: ``"task"`` for cheap, stateless work (rule attacks: remote tasks), ``"model"`` for
    work whose state is expensive to build (detectors, meters, model-based attacks: actor pools).
    ``resources``: what one worker needs on a cluster (``{"num_cpus": 1, "num_gpus": 0.5}``);
    the local executor ignores it.
    ``keep_models``: None (the default), the models the job loads stay loaded; else the keys
    (:func:`~humanize.models.identity.weights_key`) of the models the run still needs:
    when the local executor is done with the job, it releases the models the job loaded in this
    process whose key is not among them (issue #24: an attack's model is not held through the
    detector stage).
    """

    name: str
    factory: Callable[[], Any]
    apply: Callable[[Any, list], list]
    kind: str = "task"
    resources: dict = field(default_factory=dict)
    keep_models: frozenset | None = None


@dataclass(frozen=True)
class Failure:
    """An item that failed after the executor's retries: the document and the error, one line."""

    job: str
    key: str
    error: str
    attempts: int = 1


@dataclass
class BatchOutcome:
    batch: list  # the Items as submitted
    done: list  # (key, result) for the items that succeeded
    failed: list  # Failure for the items that did not


def error_line(err: BaseException) -> str:
    """``TypeName: message`` on one line (what a failure report shows)."""
    text = " ".join(str(err).split())
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def run_batch(job: Job, state: Any, batch: list, attempts: int = 1) -> BatchOutcome:
    """Apply ``job`` to a batch in this process. When the batch raises, each item is retried
    alone, so the document that raises is isolated and the others still complete."""
    payloads = [payload for _, payload in batch]
    try:
        results = job.apply(state, payloads)
        if len(results) != len(batch):
            raise RuntimeError(f"{job.name}: apply returned {len(results)} results for {len(batch)} items")
        return BatchOutcome(batch, [(key, r) for (key, _), r in zip(batch, results)], [])
    except Exception as err:  # noqa: BLE001 - isolated per item below; each failure is reported with its document
        if is_run_error(err):
            raise
        if len(batch) == 1:
            key = batch[0][0]
            return BatchOutcome(batch, [], [Failure(job.name, key, _last_error(), attempts)])
    done, failed = [], []
    for item in batch:
        out = run_batch(job, state, [item], attempts)
        done += out.done
        failed += out.failed
    return BatchOutcome(batch, done, failed)


def run_errors() -> tuple:
    """Errors that are about the run, not the document (:class:`humanize.exceptions.RunError`: a
    model or dataset that is not installed, a bad configuration, a plug-in; and a missing optional
    dependency). Raised where they happen (in a factory or in ``apply``, where models load lazily),
    never reported as per-document failures."""
    from humanize.exceptions import RUN_ERRORS

    return RUN_ERRORS


def is_run_error(err: BaseException) -> bool:
    return isinstance(err, run_errors())


def _last_error() -> str:
    import sys

    err = sys.exc_info()[1]
    return error_line(err) if err is not None else traceback.format_exc(limit=1).strip()


class Executor:
    """Base class: ``map(job, batches)`` yields one :class:`BatchOutcome` per batch (in any order)."""

    name = "executor"

    def map(self, job: Job, batches: Iterable[list]) -> Iterator[BatchOutcome]:
        raise NotImplementedError

    def map_jobs(self, work: Iterable[tuple[Job, Iterable[list]]]) -> Iterator[tuple[int, BatchOutcome]]:
        """Several independent jobs: ``work`` is ``(job, batches)`` pairs; yields ``(position of
        the job in work, outcome)`` per batch, in any order. Here one job after another; an
        executor with workers to keep busy (Ray) runs them together."""
        for pos, (job, batches) in enumerate(work):
            for outcome in self.map(job, batches):
                yield pos, outcome

    def warm(self, job: Job) -> None:
        """A hint: ``job`` is the model job that comes next; an executor with workers may start
        them early (Ray: while the last tasks of the current stage finish). Here nothing."""

    def close(self) -> None:
        """Release what the executor holds (workers, a cluster it started)."""

    def __enter__(self) -> "Executor":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class LocalExecutor(Executor):
    """Today's behaviour: every batch in this process, in order; each job's state is built once."""

    name = "local"

    def map(self, job: Job, batches: Iterable[list]) -> Iterator[BatchOutcome]:
        batches = [b for b in batches if b]
        if not batches:
            return
        before = None if job.keep_models is None else set(_loaded_keys())
        try:
            state = job.factory()
            for batch in batches:
                yield run_batch(job, state, batch)
        finally:
            if before is not None:
                release_models(before, job.keep_models)

    def __repr__(self) -> str:
        return "LocalExecutor()"


def _loaded_keys() -> list:
    from humanize.models.cache import loaded_keys

    return loaded_keys()


def release_models(before, keep) -> list[str]:
    """Release the models loaded in this process since ``before`` (the model cache's keys then) whose
    :func:`~humanize.models.identity.weights_key` is not in ``keep``, and hand their
    memory back to the system; returns their names. Other loaded things (word lists, WordNet) stay."""
    from humanize.models.cache import loaded_keys, loaded_models, release
    from humanize.models.loading import LoadedModel

    drop = [key for key, inst in zip(loaded_keys(), loaded_models())
            if key not in before and isinstance(inst, LoadedModel) and _model_key(inst) not in keep]
    gone = [inst.resolved for inst in release(drop)]  # the last references the cache held
    if gone:
        import gc

        gc.collect()
        _trim_heap()
    return gone


def _model_key(lm) -> str | None:
    """The model's :func:`~humanize.models.identity.weights_key`; None when its identity cannot
    be read (then it is never in ``keep``: it is released, and loaded again if it is needed)."""
    from humanize.models.identity import weights_key

    try:
        return weights_key(lm.identity)[0]
    except Exception:  # noqa: BLE001
        return None


def _trim_heap() -> None:
    """glibc's ``malloc_trim``: freed heap pages go back to the system (a no-op elsewhere)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
