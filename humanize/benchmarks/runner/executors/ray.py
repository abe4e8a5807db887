"""The Ray executor: the runner's units of work on a Ray cluster (issue #13).

``kind="task"`` jobs (rule attacks, defenses) run as Ray tasks of several batches each (as many
as take about a quarter of a second, measured as the job runs: :class:`~.scheduling.CallSize`),
so Ray's cost per task stays small next to millisecond work. A stage of
many such jobs (every attack and θ of a run) is one stream of tasks (:meth:`RayExecutor.map_jobs`):
a task may carry batches of several jobs, and the workers stay busy across the jobs' boundaries.
A worker process builds each job's state once (``job.factory()``) and keeps it for the later tasks
of the same call. ``kind="model"`` jobs (detectors, quality meters, model-based attacks) run in a
pool of actors: each actor builds the state once (one model load per actor) with the resources
of ``job.resources`` (``num_cpus``, ``num_gpus``, fractional GPUs allowed), and the batches are
spread over the pool with ``ray.wait``, several batches per call sized the same way and
:data:`ACTOR_DEPTH` calls in flight per actor (the next call waits in the actor's queue while
the current one runs, so the actor never idles on a round trip). The actors outlive a job: the next model job with the same resources reuses their
processes (imports, loaded models, the shared LM-statistics cache), and a batch goes back to the
actor that ran it in an earlier job, so the metric detectors that share one forward pass per text
in a local run share it on Ray too. Inside a worker (:mod:`.ray_worker`), a batch goes through
:func:`~.base.run_batch`, exactly as in the local executor, so an exception raised on one
document becomes a :class:`~.base.Failure` for that document and the rest of the batch
completes. The batches are the runner's own, so every model scores the same batch composition as
locally, and the outcomes are the local executor's.

Worker death (a killed process, out of memory, a lost node) is retried by this executor, not by
Ray: the batch is resubmitted (alone, or to a fresh actor for model jobs) up to ``max_retries``
times, then every item of the batch is reported as ``Failure(..., "worker died: ...")`` and the
run goes on. Retrying here, per batch, keeps the count exact and gives the failure report its
documents: an actor runs its calls in order, so the oldest call in flight on a dead actor is the
batch that was running; it is charged the attempt, and the call queued behind it is resubmitted
as it was. A failing ``factory()`` (bad parameters, a missing model) is a run error, and so is a
run error raised in ``apply`` (:func:`~.base.run_errors`, e.g. a model that loads on first use):
the exception is raised on the driver with its original type.

Why not Ray Data: ``Dataset.map_batches`` with an actor pool re-cuts its blocks into batches of
its own, so a model would score a different batch composition than locally (padding changes
scores at float precision), its retries re-execute whole blocks, and a per-document failure
report needs the keys the driver already has. The runner's plan is already a list of keyed
batches and the driver writes every outcome into the SQLite store as it arrives, so a plain
pool of actors is simpler and gives identical results. Outcomes are yielded as batches complete
(in any order). Task jobs keep a bounded number of tasks in flight, so their batches may come
from a stream; a model job reads its list of batches first, to place each one.
"""

from __future__ import annotations

import logging
import uuid
from collections import deque
from itertools import chain
from typing import Any, Iterable, Iterator

from ..run_specs import RESOURCE_KEYS, resource_problem  # what one worker may ask for (Ray's names)
from .base import BatchOutcome, Executor, Failure, Job, error_line
from .ray_worker import FactoryError, PoolWorker, pack, run_units
from .scheduling import Affinity, CallSize

#: ``ray.init`` options for a cluster this executor starts (``init_options`` wins key by key).
DEFAULT_INIT_OPTIONS = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.WARNING}
#: Calls in flight per actor of a model pool.
ACTOR_DEPTH = 2


def _import_ray():
    try:
        import ray
    except ImportError as err:  # the optional extra is not installed
        raise ImportError('the "ray" executor needs Ray: pip install "humanize-bench[ray]"') from err
    return ray


def check_worker_resources(resources: Any, name: str = "resources") -> dict:
    """The resources one Ray worker asks for (``resources=`` of the executor or of a job): a copy of
    the dict of :data:`RESOURCE_KEYS` to numbers, ``{}`` for None; a clear error naming ``name`` otherwise."""
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


_REMOTE: dict = {}


def _remote(ray, name: str):
    """The remote versions of :func:`.ray_worker.run_units` and :class:`.ray_worker.PoolWorker`,
    made once per process."""
    if name not in _REMOTE:
        _REMOTE["task"] = ray.remote(run_units)
        _REMOTE["model"] = ray.remote(PoolWorker)
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
        self._warm_next: Job | None = None  # the model job whose actors start in the task stream's tail
        self._warmed: tuple | None = None  # (job, shape, actors, token, job_ref, size): started ahead of its map

    def _validate(self) -> None:
        if self.address is not None and (not isinstance(self.address, str) or not self.address.strip()):
            raise ValueError(f"RayExecutor: address must be None (a local cluster), 'auto' or a cluster "
                             f"address such as 'ray://host:10001', got {self.address!r}")
        for name, low in (("max_retries", 0), ("num_workers", 1)):
            value = getattr(self, name)
            if (value is not None or name == "max_retries") and (
                    isinstance(value, bool) or not isinstance(value, int) or value < low):
                raise ValueError(f"RayExecutor: {name} must be an int >= {low}, got {value!r}")
        check_worker_resources(self.resources, "RayExecutor: resources")
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
        from humanize.plugins import register_loaded_by_value

        register_loaded_by_value()  # plug-in files' classes travel by value: workers need not find the files
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
        self._warm_next = None
        self._drop_warmed()
        self._drain()
        self._owner.clear()
        if self._owns_ray:
            self._owns_ray = False
            _import_ray().shutdown()

    # -- the work --------------------------------------------------------------------------------
    def map(self, job: Job, batches: Iterable[list]) -> Iterator[BatchOutcome]:
        for _, outcome in self.map_jobs([(job, batches)]):
            yield outcome

    def map_jobs(self, work: Iterable[tuple[Job, Iterable[list]]]) -> Iterator[tuple[int, BatchOutcome]]:
        """Several independent jobs: the task jobs as one stream of tasks (a task may carry
        batches of several jobs), then each model job on its actor pool. Yields ``(position of
        the job in work, outcome)`` as batches complete."""
        tasks, models = [], []
        for pos, (job, batches) in enumerate(work):
            if job.kind not in ("task", "model"):
                raise ValueError(f"{job.name}: job kind must be 'task' or 'model', got {job.kind!r}")
            total = sum(1 for b in batches if b) if isinstance(batches, (list, tuple)) else None
            source = (b for b in batches if b)
            first = next(source, None)
            if first is not None:
                (tasks if job.kind == "task" else models).append((pos, job, chain([first], source), total))
        if not tasks and not models:
            return
        ray = self.start()
        if tasks:
            if self._warmed is not None:  # warmed for a job that has not come: warm again in this tail
                job = self._warmed[0]
                self._drop_warmed()
                self._warm_next = job
            self._drain()  # idle actors hold their CPUs: free them for the tasks
            yield from self._map_tasks(ray, tasks)
        for pos, job, source, _ in models:
            for outcome in self._map_pool(ray, job, source):
                yield pos, outcome

    def warm(self, job: Job) -> None:
        """``job``: the model job this executor runs next. In the tail of the next task stream
        (everything submitted), its actors start one by one as CPUs free up, so the model loads
        (or the detector fits) while the last tasks finish rather than after them. The actors
        never take a CPU a submitted task still needs. The next :meth:`map` of this same job
        object uses them; any other job releases them to the idle pool."""
        self._warm_next = job if isinstance(job, Job) and job.kind == "model" else None

    def _warm_step(self, ray, in_flight: int, task_cpus: float) -> None:
        """Start as many of the warm job's actors as the CPUs left by ``in_flight`` tasks allow."""
        job = self._warm_next
        need = self._job_resources(job)
        if self._warmed is None:
            shape = tuple(sorted(need.items()))
            size = self.num_workers or self._capacity(ray, job, need)
            self._warmed = (job, shape, [], uuid.uuid4().hex, ray.put(job), size)
        job, shape, actors, token, job_ref, size = self._warmed
        per_actor = need.get("num_cpus", 1)
        free = ray.cluster_resources().get("CPU", 0) - in_flight * task_cpus - len(actors) * per_actor
        while len(actors) < size and free >= per_actor - 1e-9:
            [actor] = self._checkout(ray, shape, 1, new=True)
            actor.prepare.remote(token, job_ref)
            actors.append(actor)
            free -= per_actor
        if len(actors) >= size:
            self._warm_next = None

    def _take_warmed(self, job: Job):
        """The warmed actors when ``job`` is the warmed job: (shape, actors, token, job_ref)."""
        self._warm_next = None
        warmed = self._warmed
        if warmed is not None and warmed[0] is job and warmed[2]:
            self._warmed = None
            return warmed[1:5]
        self._drop_warmed()
        return None

    def _drop_warmed(self) -> None:
        """Warmed actors that no job took: their state is dropped and they wait in the idle pool."""
        if self._warmed is not None:
            _, shape, actors, *_ = self._warmed
            self._warmed = None
            for actor in actors:
                actor.release.remote()
            self._pools.setdefault(shape, []).extend(actors)

    def _job_resources(self, job: Job) -> dict:
        own = check_worker_resources(job.resources, f"{job.name}: resources")
        if job.kind == "task":
            return {"num_cpus": 1, **own}
        return {"num_cpus": 1, **check_worker_resources(self.resources), **own}

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

    def _map_tasks(self, ray, tasks: list) -> Iterator[tuple[int, BatchOutcome]]:
        """``tasks``: ``(position, job, batches, total or None)`` of the task jobs. Their batches
        go out in order, several per Ray task (:class:`~.scheduling.CallSize`; batches of jobs with the same
        resources share a task); at most twice the cluster's capacity of tasks are in flight."""
        jobs = {pos: job for pos, job, _, _ in tasks}
        needs = {pos: self._job_resources(job) for pos, job in jobs.items()}
        capacity = max(self._capacity(ray, jobs[pos], need) for pos, need in needs.items())
        totals = [total for *_, total in tasks]
        sizer = CallSize(capacity, None if None in totals else sum(totals))
        units = ((pos, batch) for pos, _, batches, _ in tasks for batch in batches)
        token = uuid.uuid4().hex
        remotes: dict = {}
        retry, running = deque(), {}
        pending: list = [None]  # a unit read from the stream that did not fit the last task
        exhausted = [False]  # every unit of the stream has been submitted

        def remote_for(need: dict):
            shape = tuple(sorted(need.items()))
            if shape not in remotes:
                remotes[shape] = _remote(ray, "task").options(max_retries=0, retry_exceptions=False, **need)
            return remotes[shape]

        def next_units():
            """The next task's units: batches of jobs with one resource shape."""
            if retry:  # after a death, one batch per task: the batch that kills is found alone
                return retry.popleft()
            out, size = [], sizer.size()
            while len(out) < size:
                unit = pending[0] if pending[0] is not None else next(units, None)
                pending[0] = None
                if unit is None:
                    break
                if out and needs[unit[0]] != needs[out[0][0]]:
                    pending[0] = unit
                    break
                out.append(unit)
            sizer.sent(len(out))
            return out, 1

        def fill():
            while len(running) < 2 * capacity:
                chosen, attempts = next_units()
                if not chosen:
                    exhausted[0] = True
                    return
                shipped = {pos: jobs[pos] for pos in dict.fromkeys(pos for pos, _ in chosen)}
                ref = remote_for(needs[chosen[0][0]]).remote(token, shipped, pack(chosen), attempts)
                running[ref] = (chosen, attempts)

        task_cpus = max(need.get("num_cpus", 1) for need in needs.values())
        warm_ok = self._warm_next is not None and all(set(need) <= {"num_cpus"} for need in needs.values())

        def warm():  # the stream is submitted: the next model job's actors take the CPUs it frees
            if warm_ok and self._warm_next is not None and not retry and pending[0] is None and exhausted[0]:
                self._warm_step(ray, len(running), task_cpus)

        try:
            fill()
            while running:
                warm()
                [ref], _ = ray.wait(list(running), num_returns=1)
                chosen, attempts = running.pop(ref)
                out = self._get(ray, ref)
                if isinstance(out, BaseException):
                    again, lost = self._after_death(chosen, attempts)
                    retry.extend(([unit], n) for unit, n in again)
                    outcomes = [(pos, self._died(jobs[pos], batch, attempts, out)) for pos, batch in lost]
                elif isinstance(out, FactoryError):
                    out.reraise()
                else:
                    seconds, results = out
                    sizer.observe(seconds, len(chosen))
                    outcomes = [(pos, BatchOutcome(batch, done, failed))
                                for (pos, batch), (_, done, failed) in zip(chosen, results)]
                fill()
                yield from outcomes
            warm()
        finally:  # the driver stopped early: drop the tasks still in flight
            for ref in running:  # not forced: a forced cancel kills the worker process
                ray.cancel(ref)

    def _after_death(self, units: list, attempts: int) -> tuple[list, list]:
        """A call of ``units`` died with its worker: ``(units to resubmit alone with their
        attempts, units that failed for good)``. A call of one unit is charged the attempt
        (resubmitted while ``max_retries`` allows); a call of several is split, uncharged, so
        the unit that kills is found alone."""
        if len(units) > 1:
            return [(unit, attempts) for unit in units], []
        if attempts <= self.max_retries:
            return [(units[0], attempts + 1)], []
        return [], units

    def _map_pool(self, ray, job: Job, source: Iterator[list]) -> Iterator[BatchOutcome]:
        need = self._job_resources(job)
        pending = list(source)  # the plan's batches: each is sent where its texts were seen before
        size = min(self.num_workers or self._capacity(ray, job, need), len(pending))
        shape = tuple(sorted(need.items()))
        warmed = self._take_warmed(job)
        if warmed is not None:  # started in the last task stream's tail: preparing, or ready
            shape, actors, token, job_ref = warmed
            self._drain(keep=shape)
            more = self._checkout(ray, shape, max(0, size - len(actors)))
        else:
            self._drain(keep=shape)
            token, job_ref = uuid.uuid4().hex, ray.put(job)
            actors, more = [], self._checkout(ray, shape, size)
        for actor in more:
            actor.prepare.remote(token, job_ref)  # an actor runs its calls in order: before its batches
        actors = actors + more
        queue = Affinity(pending, self._owner, list(actors))
        sizer = CallSize(len(actors), len(pending))
        inflight = {actor: deque() for actor in actors}  # each actor's calls, oldest first
        retry, running = deque(), {}

        def take(actor) -> tuple[list, int] | None:
            if retry:
                batch, attempts = retry.popleft()
                return [batch], attempts
            batches = []
            for _ in range(sizer.size()):
                item = queue.take(actor)
                if item is None:
                    break
                batches.append(item[0])
            sizer.sent(len(batches))
            return (batches, 1) if batches else None

        def fill():
            for actor in list(inflight):
                while len(inflight[actor]) < ACTOR_DEPTH:
                    call = take(actor)
                    if call is None:
                        break
                    for batch in call[0]:
                        self._owner[batch[0][0]] = actor
                    ref = actor.run.remote(token, pack(call[0]), call[1])
                    running[ref] = (actor, *call)
                    inflight[actor].append(ref)

        def replace(actor) -> None:
            """``actor`` died: a fresh one takes its place (and its batches are anyone's)."""
            ray.kill(actor, no_restart=True)
            queue.orphan(actor)
            del inflight[actor]
            [fresh] = self._checkout(ray, shape, 1, new=True)
            fresh.prepare.remote(token, job_ref)
            inflight[fresh] = deque()

        try:
            fill()
            while running:
                [ref], _ = ray.wait(list(running), num_returns=1)
                actor, batches, attempts = running[ref]
                out = self._get(ray, ref)
                if isinstance(out, BaseException):  # the actor died while running its oldest call
                    calls = [running.pop(r)[1:] for r in inflight[actor]]
                    replace(actor)
                    (batches, attempts), queued = calls[0], calls[1:]
                    retry.extend((b, n) for bs, n in queued for b in bs)  # never ran: resubmitted as they were
                    again, lost = self._after_death(batches, attempts)
                    retry.extendleft(reversed(again))
                    outcomes = [self._died(job, batch, attempts, out) for batch in lost]
                elif isinstance(out, FactoryError):
                    out.reraise()
                else:
                    del running[ref]
                    inflight[actor].remove(ref)
                    seconds, results = out
                    sizer.observe(seconds, len(batches))
                    outcomes = [BatchOutcome(batch, done, failed) for batch, (done, failed) in zip(batches, results)]
                fill()
                yield from outcomes
        finally:  # done, or the driver stopped early: workers still busy are killed, the others kept
            idle = []
            for actor, calls in inflight.items():
                if calls:
                    ray.kill(actor, no_restart=True)
                else:
                    actor.release.remote()
                    idle.append(actor)
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
