"""What runs inside a Ray worker for :class:`~.ray.RayExecutor`: the task body for cheap jobs
and the actor of a model pool.

Both run each batch through :func:`~.base.run_batch`, exactly as the local executor does, so an
exception raised on one document becomes a :class:`~.base.Failure` for that document and the
rest of the batch completes. They send back the outcome without the batch (``(done, failed)``):
the driver holds the batch it submitted, and the texts need not travel twice. A factory's
exception travels back as a :class:`FactoryError`, to be raised on the driver with its type.
"""

from __future__ import annotations

import gc
import pickle
import time
import traceback
from collections import OrderedDict

from .base import Job, error_line, run_batch

#: A task worker keeps the state of at most this many jobs (the most recently used).
STATE_CACHE = 64

# The states this worker process built for task jobs: (token of the map call, job position) ->
# state. A worker runs many tasks of one call; each job's factory runs once per process, not
# once per task. A new call (another token) starts afresh.
_STATES: OrderedDict = OrderedDict()


class FactoryError:
    """A factory's exception, carried back to the driver to be raised there with its type."""

    def __init__(self, exc: BaseException):
        try:
            pickle.loads(pickle.dumps(exc))
            self.exc = exc
        except Exception:  # noqa: BLE001 - an exception that cannot travel: keep its line
            self.exc = RuntimeError(error_line(exc))
        self.trace = traceback.format_exc()

    def reraise(self):
        if hasattr(self.exc, "add_note"):  # Python >= 3.11: the worker's traceback, for the reader
            self.exc.add_note(f"(raised by the job's factory in a Ray worker)\n{self.trace}")
        raise self.exc


def pack(obj) -> bytes:
    """A call's batches as one pickle: Ray serialises a nested argument element by element (a
    Python-level hook per item, milliseconds for a few thousand texts), a bytes argument at once."""
    return pickle.dumps(obj, protocol=5)


def run_units(token: str, jobs: dict, packed_units: bytes, attempts: int):
    """One Ray task: ``packed_units`` (:func:`pack`) are ``(job position, batch)`` pairs of the
    jobs in ``jobs`` (position -> :class:`Job`). Each job's state is built once in this process
    and kept for the call's later tasks. Returns ``(seconds, [(position, done, failed)] per
    unit)`` (the seconds the units took here, which size the next tasks), or a
    :class:`FactoryError` when a factory raised."""
    start = time.perf_counter()
    units = pickle.loads(packed_units)
    if _STATES and next(iter(_STATES))[0] != token:
        _STATES.clear()
    out = []
    for pos, batch in units:
        key = (token, pos)
        if key in _STATES:
            _STATES.move_to_end(key)
        else:
            try:
                _STATES[key] = jobs[pos].factory()
            except Exception as exc:  # noqa: BLE001 - re-raised on the driver
                return FactoryError(exc)
            while len(_STATES) > STATE_CACHE:
                _STATES.popitem(last=False)
        outcome = run_batch(jobs[pos], _STATES[key], batch, attempts)
        out.append((pos, outcome.done, outcome.failed))
    return time.perf_counter() - start, out


class PoolWorker:
    """One actor of a model pool. It outlives a job: ``prepare`` builds the next job's state
    (dropping the previous one first), so the worker process and its imports are reused."""

    def __init__(self):
        self.token = self.job = self.state = self.error = None

    def prepare(self, token: str, job: Job) -> None:
        self.release()
        self.token, self.job = token, job
        try:
            self.state = job.factory()
        except Exception as exc:  # noqa: BLE001 - re-raised on the driver by the first run
            self.error = FactoryError(exc)

    def run(self, token: str, packed_batches: bytes, attempts: int):
        """``(seconds, [(done, failed)] per batch)`` of the batches in ``packed_batches``
        (:func:`pack`), or the job's :class:`FactoryError`."""
        if token != self.token:
            raise RuntimeError(f"a Ray worker got a batch of {token} while prepared for {self.token}")
        if self.error is not None:
            return self.error
        start = time.perf_counter()
        batches = pickle.loads(packed_batches)
        out = []
        for batch in batches:
            outcome = run_batch(self.job, self.state, batch, attempts)
            out.append((outcome.done, outcome.failed))
        return time.perf_counter() - start, out

    def release(self) -> None:
        """Drop the job's state (its model) now, not when the next job arrives."""
        self.token = self.job = self.state = self.error = None
        gc.collect()
