"""The Ray executor: the runner's units of work on a Ray cluster (issue #13).

``kind="task"`` jobs (rule attacks, defenses) run as Ray tasks of a few batches each (up to
:data:`TASK_BATCHES`, so Ray's cost per task stays small next to millisecond work); each task
builds the job's state with ``job.factory()`` (cheap for these jobs) and runs its batches one by
one. ``kind="model"`` jobs (detectors, quality
meters, model-based attacks) run in a pool of actors: each actor builds the state once (one model
load per actor) with the resources of ``job.resources`` (``num_cpus``, ``num_gpus``, fractional
GPUs allowed), and the batches are spread over the pool with ``ray.wait``, one batch in flight per
actor. The actors outlive a job: the next model job with the same resources reuses their
processes (imports, loaded models, the shared LM-statistics cache), and a batch goes back to the
actor that ran it in an earlier job, so the metric detectors that share one forward pass per text
in a local run share it on Ray too. Inside a worker, a batch goes through
:func:`~.base.run_batch`, exactly as in the local executor, so an exception raised on one
document becomes a :class:`~.base.Failure` for that document and the rest of the batch
completes. The batches are the runner's own, so every model scores the same batch composition as
locally, and the outcomes are the local executor's.

Worker death (a killed process, out of memory, a lost node) is retried by this executor, not by
Ray: the batch is resubmitted (alone, or to a fresh actor for model jobs) up to ``max_retries``
times, then every item of the batch is reported as ``Failure(..., "worker died: ...")`` and the run goes on.
Retrying here, per batch, keeps the count exact (Ray's actor restarts count per actor, and with
one batch in flight per actor the batch that was running is the one that killed it) and gives
the failure report its documents. A failing ``factory()`` (bad parameters, a missing model) is a
run error, and so is a run error raised in ``apply`` (:func:`~.base.run_errors`, e.g. a model
that loads on first use): the exception is raised on the driver with its original type.

Why not Ray Data: ``Dataset.map_batches`` with an actor pool re-cuts its blocks into batches of
its own, so a model would score a different batch composition than locally (padding changes
scores at float precision), its retries re-execute whole blocks, and a per-document failure
report needs the keys the driver already has. The runner's plan is already a list of keyed
batches and the driver writes every outcome into the SQLite store as it arrives, so a plain
pool of actors is simpler and gives identical results. Outcomes are yielded as batches complete
(in any order). A task job keeps a bounded number of batches in flight, so its batches may come
from a stream; a model job reads its list of batches first, to place each one.
"""

from __future__ import annotations

import gc
import logging
import pickle
import traceback
import uuid
from collections import deque
from itertools import chain, islice
from typing import Any, Iterable, Iterator

from ..run_specs import RESOURCE_KEYS, resource_problem  # what one worker may ask for (Ray's names)
from .base import BatchOutcome, Executor, Failure, Job, error_line, run_batch

#: ``ray.init`` options for a cluster this executor starts (``init_options`` wins key by key).
DEFAULT_INIT_OPTIONS = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.WARNING}
#: At most this many of a task job's batches go in one Ray task.
TASK_BATCHES = 8


def _import_ray():
    try:
        import ray
    except ImportError as err:  # the optional extra is not installed
        raise ImportError('the "ray" executor needs Ray: pip install "humanize-bench[ray]"') from err
    return ray


def check_resources(resources: Any, name: str = "resources") -> dict:
    """``resources`` as a dict of :data:`RESOURCE_KEYS` to numbers; a clear error otherwise."""
    if resources is None:
        return {}
    if not isinstance(resources, dict):
        raise TypeError(f"{name} must be a dict like {{'num_cpus': 1, 'num_gpus': 0.5}}, "
                        f"got {type(resources).__name__}")
    for key, value in resources.items():
        problem = resource_problem(key, value)
        if problem:
            raise ValueError(f"{name}: {problem}")
    return dict(resources)


class _FactoryError:
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


def _task(job: Job, batches: list, attempts: int):
    """A few batches as one Ray task: build the state, then each batch as locally (per-item
    isolation); a list of outcomes, one per batch."""
    try:
        state = job.factory()
    except Exception as exc:  # noqa: BLE001 - re-raised on the driver
        return _FactoryError(exc)
    return [run_batch(job, state, batch, attempts) for batch in batches]


class _Worker:
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
            self.error = _FactoryError(exc)

    def run(self, token: str, batch: list, attempts: int):
        if token != self.token:
            raise RuntimeError(f"a Ray worker got a batch of {token} while prepared for {self.token}")
        return self.error if self.error is not None else run_batch(self.job, self.state, batch, attempts)

    def release(self) -> None:
        """Drop the job's state (its model) now, not when the next job arrives."""
        self.token = self.job = self.state = self.error = None
        gc.collect()


_REMOTE: dict = {}


def _remote(ray, name: str):
    """The remote versions of :func:`_task` and :class:`_Worker`, made once per process."""
    if name not in _REMOTE:
        _REMOTE["task"] = ray.remote(_task)
        _REMOTE["model"] = ray.remote(_Worker)
    return _REMOTE[name]


def _death_errors(ray) -> tuple:
    ex = ray.exceptions
    return (ex.RayActorError, ex.WorkerCrashedError, ex.NodeDiedError, ex.OutOfMemoryError,
            ex.ObjectLostError, ex.LocalRayletDiedError)


class RayExecutor(Executor):
    """Run a stage's batches on Ray: tasks for cheap jobs, actor pools for model jobs.

    ``address``: ``None`` starts a local cluster (shut down by :meth:`close`), or uses the one
    already started in this process; ``"auto"``, ``"host:port"`` or ``"ray://host:port"`` connects
    to a running cluster (whose workers must have ``humanize-bench`` installed).
    ``max_retries``: how many times a batch whose worker died is resubmitted before its items are
    reported as failures. ``num_workers``: actors per model pool (default: as many as the
    cluster's resources fit, at most one per batch). ``resources``: default per-worker resources
    of model jobs (``{"num_cpus": 1, "num_gpus": 0.5}``); a job's own ``resources`` win key by key.
    ``init_options``: extra ``ray.init`` keyword arguments (``num_cpus``, ``object_store_memory``,
    ``runtime_env``...).
    """

    name = "ray"

    def __init__(self, address: str | None = None, max_retries: int = 2, num_workers: int | None = None,
                 resources: dict | None = None, init_options: dict | None = None):
        self.address = address
        self.max_retries = max_retries
        self.num_workers = num_workers
        self.resources = resources
        self.init_options = init_options
        self._validate()
        self._owns_ray = False
        self._pools: dict = {}  # resource shape -> idle actors, reused by the next model job
        self._owner: dict = {}  # first key of a batch -> the actor that ran it last (its caches)

    def _validate(self) -> None:
        if self.address is not None and (not isinstance(self.address, str) or not self.address.strip()):
            raise ValueError(f"RayExecutor: address must be None (a local cluster), 'auto' or a cluster "
                             f"address such as 'ray://host:10001', got {self.address!r}")
        for name, low in (("max_retries", 0), ("num_workers", 1)):
            value = getattr(self, name)
            if (value is not None or name == "max_retries") and (
                    isinstance(value, bool) or not isinstance(value, int) or value < low):
                raise ValueError(f"RayExecutor: {name} must be an int >= {low}, got {value!r}")
        check_resources(self.resources, "RayExecutor: resources")
        if self.init_options is not None and not isinstance(self.init_options, dict):
            raise TypeError(f"RayExecutor: init_options must be a dict of ray.init arguments, "
                            f"got {type(self.init_options).__name__}")
        if self.init_options and "address" in self.init_options:
            raise ValueError("RayExecutor: give the cluster as address=..., not in init_options")

    def __repr__(self) -> str:
        return (f"RayExecutor(address={self.address!r}, max_retries={self.max_retries!r}, "
                f"num_workers={self.num_workers!r}, resources={self.resources!r})")

    # -- the cluster -----------------------------------------------------------------------------
    def start(self):
        """Connect to (or start) the cluster now; ``map`` does it on first use. Returns ``ray``."""
        ray = _import_ray()
        if not ray.is_initialized():
            options = {**DEFAULT_INIT_OPTIONS, **(self.init_options or {})}
            if self.address is not None:
                options["address"] = self.address
            ray.init(**options)
            self._owns_ray = True
        return ray

    def close(self) -> None:
        """Free the idle actors; shut down the cluster this executor started (or disconnect from
        the one it joined)."""
        self._drain()
        self._owner.clear()
        if self._owns_ray:
            self._owns_ray = False
            _import_ray().shutdown()

    # -- the work --------------------------------------------------------------------------------
    def map(self, job: Job, batches: Iterable[list]) -> Iterator[BatchOutcome]:
        if job.kind not in ("task", "model"):
            raise ValueError(f"{job.name}: job kind must be 'task' or 'model', got {job.kind!r}")
        total = len(batches) if hasattr(batches, "__len__") else None
        source = (b for b in batches if b)
        first = next(source, None)
        if first is None:
            return
        ray = self.start()
        source = chain([first], source)
        if job.kind == "task":
            self._drain()  # idle actors hold their CPUs: free them for the tasks
            yield from self._map_tasks(ray, job, source, total)
        else:
            yield from self._map_pool(ray, job, source)

    def _job_resources(self, job: Job) -> dict:
        own = check_resources(job.resources, f"{job.name}: resources")
        if job.kind == "task":
            return {"num_cpus": 1, **own}
        return {"num_cpus": 1, **check_resources(self.resources), **own}

    def _capacity(self, ray, job: Job, need: dict) -> int:
        """How many workers needing ``need`` the cluster holds at once."""
        total = ray.cluster_resources()
        names = {"num_cpus": "CPU", "num_gpus": "GPU", "memory": "memory"}
        fits = [int(total.get(names[k], 0) / v + 1e-9) for k, v in need.items() if v > 0]
        capacity = min(fits) if fits else int(total.get("CPU", 1))
        if capacity < 1:
            have = {names[k]: total.get(names[k], 0) for k in need}
            raise ValueError(f"{job.name}: one worker needs {need} but the Ray cluster has {have}")
        return capacity

    def _died(self, job: Job, batch: list, attempts: int, err: BaseException) -> BatchOutcome:
        line = f"worker died: {error_line(err)}"
        return BatchOutcome(batch, [], [Failure(job.name, key, line, attempts) for key, _ in batch])

    def _map_tasks(self, ray, job: Job, source: Iterator[list], total: int | None) -> Iterator[BatchOutcome]:
        need = self._job_resources(job)
        capacity = self._capacity(ray, job, need)
        # a few batches per task (when their number is known), so Ray's cost per task (scheduling,
        # a worker round trip) stays small next to cheap work; each batch is still run on its own
        per_task = max(1, min(TASK_BATCHES, (total or 0) // (4 * capacity)))
        remote = _remote(ray, "task").options(max_retries=0, retry_exceptions=False, **need)
        job_ref = ray.put(job)
        retry, running = deque(), {}

        def fill():
            while len(running) < 2 * capacity:
                if retry:  # after a death, one batch per task: the batch that kills is found alone
                    batches, attempts = retry.popleft()
                else:
                    batches, attempts = list(islice(source, per_task)), 1
                if not batches:
                    return
                running[remote.remote(job_ref, batches, attempts)] = (batches, attempts)

        try:
            fill()
            while running:
                [ref], _ = ray.wait(list(running), num_returns=1)
                batches, attempts = running.pop(ref)
                out = self._get(ray, ref)
                if isinstance(out, BaseException):
                    if attempts <= self.max_retries:
                        retry.extend(([batch], attempts + 1) for batch in batches)
                        fill()
                        continue
                    out = [self._died(job, batch, attempts, out) for batch in batches]
                fill()
                if isinstance(out, _FactoryError):
                    out.reraise()
                yield from out
        finally:  # the driver stopped early: drop the batches still in flight
            for ref in running:  # not forced: a forced cancel kills the worker process
                ray.cancel(ref)

    def _map_pool(self, ray, job: Job, source: Iterator[list]) -> Iterator[BatchOutcome]:
        need = self._job_resources(job)
        pending = list(source)  # the plan's batches: each is sent where its texts were seen before
        size = min(self.num_workers or self._capacity(ray, job, need), len(pending))
        shape = tuple(sorted(need.items()))
        self._drain(keep=shape)
        token, job_ref = uuid.uuid4().hex, ray.put(job)
        idle = deque(self._checkout(ray, shape, size))
        for actor in idle:
            actor.prepare.remote(token, job_ref)  # an actor runs its calls in order: before its batches
        queue = _Affinity(pending, self._owner, list(idle))
        retry, running = deque(), {}

        def fill():
            for actor in list(idle):
                item = retry.popleft() if retry else queue.take(actor)
                if item is not None:
                    idle.remove(actor)
                    self._owner[item[0][0][0]] = actor
                    running[actor.run.remote(token, *item)] = (actor, *item)

        try:
            fill()
            while running:
                [ref], _ = ray.wait(list(running), num_returns=1)
                actor, batch, attempts = running.pop(ref)
                out = self._get(ray, ref)
                if isinstance(out, BaseException):  # the actor died with this batch: a fresh one
                    ray.kill(actor, no_restart=True)
                    queue.orphan(actor)
                    [fresh] = self._checkout(ray, shape, 1, new=True)
                    fresh.prepare.remote(token, job_ref)
                    idle.append(fresh)
                    if attempts <= self.max_retries:
                        retry.append((batch, attempts + 1))
                        fill()
                        continue
                    out = self._died(job, batch, attempts, out)
                else:
                    idle.append(actor)
                fill()
                if isinstance(out, _FactoryError):
                    out.reraise()
                yield out
        finally:  # done, or the driver stopped early: workers still busy are killed, the others kept
            for actor, *_ in running.values():
                ray.kill(actor, no_restart=True)
            for actor in idle:
                actor.release.remote()
            self._pools.setdefault(shape, []).extend(idle)

    def _drain(self, keep: tuple | None = None) -> None:
        """Kill the idle actors (but those of shape ``keep``): an idle actor holds its resources,
        which a job of another shape, or a task, may need."""
        ray = _import_ray()
        for shape in [s for s in self._pools if s != keep]:
            for actor in self._pools.pop(shape):
                if ray.is_initialized():
                    ray.kill(actor, no_restart=True)

    def _checkout(self, ray, shape: tuple, n: int, new: bool = False) -> list:
        """``n`` actors of resource shape ``shape``: idle ones of earlier jobs first, then new ones."""
        pool = [] if new else self._pools.get(shape, [])
        taken = [pool.pop() for _ in range(min(n, len(pool)))]
        options = dict(shape)
        actor_class = _remote(ray, "model").options(max_restarts=0, max_task_retries=0, **options)
        return taken + [actor_class.remote() for _ in range(n - len(taken))]

    @staticmethod
    def _get(ray, ref):
        """The batch's outcome, the worker-death error (returned), or the job's own error (raised)."""
        try:
            return ray.get(ref)
        except _death_errors(ray) as err:
            return err
        except ray.exceptions.RayTaskError as err:  # escaped run_batch (a BaseException): as locally
            cause = getattr(err, "cause", None)
            raise (cause if isinstance(cause, BaseException) else err) from None


class _Affinity:
    """Which batch an idle actor runs next: one it ran in an earlier job of this executor (a
    worker keeps its process's caches, e.g. the LM statistics the metric detectors share), else
    one nobody in the pool ran. An actor never takes another's batch: that batch is likely a
    cache hit where it is and a full recomputation elsewhere. Each queue runs its largest
    batches first, so a long batch does not start last and run alone."""

    def __init__(self, batches: list, owner: dict, actors: list):
        self.queues = {actor: [] for actor in actors}
        free: list = []
        for batch in batches:
            self.queues.get(owner.get(batch[0][0]), free).append(batch)
        self.queues = {a: deque(sorted(q, key=_weight, reverse=True)) for a, q in self.queues.items()}
        self.free = deque(sorted(free, key=_weight, reverse=True))

    def take(self, actor):
        mine = self.queues.get(actor)
        if mine:
            return mine.popleft(), 1
        return (self.free.popleft(), 1) if self.free else None

    def orphan(self, actor) -> None:
        """``actor`` died: the batches it owned are anyone's."""
        left = list(self.queues.pop(actor, ())) + list(self.free)
        self.free = deque(sorted(left, key=_weight, reverse=True))


def _weight(batch: list) -> int:
    """A batch's size in characters of its payloads (texts, or tuples of texts): its cost."""
    def size(payload) -> int:
        if isinstance(payload, str):
            return len(payload)
        if isinstance(payload, (tuple, list)):
            return sum(size(p) for p in payload)
        return 1

    return sum(size(payload) for _, payload in batch)


