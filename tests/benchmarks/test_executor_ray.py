"""The Ray executor against the executor seam, on one local Ray cluster (num_cpus=2) per module:
the same outcomes as the local executor, per-document failures, retried worker deaths, factory
errors raised on the driver with their type."""

import functools
import os
import time
import uuid

import pandas as pd
import pytest
import ray  # the "ray" extra

from humanize.benchmarks.runner.executors import Job, LocalExecutor
from humanize.benchmarks.runner.executors.ray import RayExecutor, check_worker_resources
from humanize.exceptions import ConfigError


@pytest.fixture(scope="module")
def cluster():
    # The worker processes import this module by name: put the repository root on their path.
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, object_store_memory=200 * 2**20,
             runtime_env={"env_vars": {"PYTHONPATH": root, "OMP_NUM_THREADS": "1"}})
    yield
    ray.shutdown()


# -- jobs: module-level, so they pickle by reference -------------------------------------------
def _prefix(prefix):
    return prefix


def _shout(state, payloads):
    out = []
    for text in payloads:
        if "BAD" in text:
            raise ValueError(f"cannot shout {text!r}")
        out.append(state + text.upper())
    return out


def _die_once(flag_dir, state, payloads):
    """Kill the worker the first time a DIE document is seen; kill it every time for ALWAYS."""
    for text in payloads:
        flag = os.path.join(flag_dir, text)
        if "ALWAYS" in text or ("DIE" in text and not os.path.exists(flag)):
            open(flag, "w").close()
            os._exit(1)
    return _shout(state, payloads)


def _token():
    return uuid.uuid4().hex


def _with_token(state, payloads):
    return [(state, text) for text in payloads]


def _bad_factory():
    raise ConfigError("detector 'nope' is not installed")


def _lazy_model(state, payloads):
    from humanize.models import ModelUnavailable

    raise ModelUnavailable("nope", ["the offline cache"], "pip install nope")


def _batches(texts, size):
    items = [(f"k{i}", text) for i, text in enumerate(texts)]
    return [items[i : i + size] for i in range(0, len(items), size)]


TEXTS = ["alpha", "beta", "a BAD one", "", "emoji 🙂", "Ünïcödé", "   ", "gamma", "BAD too", "delta", "x" * 5000]


def _ray(*args, **options):
    """Every outcome of ``RayExecutor(**options).map(*args)``; the executor is closed (its idle
    actors freed) before the next test."""
    with RayExecutor(**options) as executor:
        return list(executor.map(*args))


def _sorted(outcomes):
    return sorted(outcomes, key=lambda o: o.batch[0][0])


@pytest.mark.parametrize("kind", ["task", "model"])
def test_same_outcomes_as_local(cluster, kind):
    job = Job("shout", functools.partial(_prefix, ">"), _shout, kind=kind)
    batches = _batches(TEXTS * 4, 2)  # 22 batches: a task job puts 2 in each Ray task
    expected = list(LocalExecutor().map(job, batches))
    got = _ray(job, iter(batches))  # a stream of batches is fine
    assert _sorted(got) == _sorted(expected)
    failed = sorted(int(f.key[1:]) for o in got for f in o.failed)
    assert failed == [i for i, t in enumerate(TEXTS * 4) if "BAD" in t]  # the BAD documents, and only them
    assert all(f.error.startswith("ValueError: cannot shout") and f.attempts == 1 for o in got for f in o.failed)
    assert len([d for o in got for d in o.done]) == 4 * (len(TEXTS) - 2)


@pytest.mark.parametrize("kind", ["task", "model"])
def test_killed_worker_is_retried_and_a_worker_that_always_dies_is_reported(cluster, tmp_path, kind):
    job = Job("die", functools.partial(_prefix, ">"), functools.partial(_die_once, str(tmp_path)), kind=kind)
    texts = [f"doc {i}" for i in range(16)] + ["DIE here", "ALWAYS dies", "its neighbour"]
    batches = _batches(texts, 1)[:17] + [_batches(texts, 1)[17] + _batches(texts, 1)[18]]  # 18 batches
    got = _ray(job, batches, max_retries=1)  # tasks carry 2 batches each; a retry carries one
    assert (tmp_path / "DIE here").exists()  # the worker did die once on k16; the retry completed it
    failed = [f for o in got for f in o.failed]
    # the whole batch of the killer document (k17, k18), after 1 + max_retries attempts; the rest completes
    assert sorted(f.key for f in failed) == ["k17", "k18"]
    assert all(f.error.startswith("worker died:") and f.attempts == 2 and f.job == "die" for f in failed)
    assert dict(d for o in got for d in o.done) == {f"k{i}": ">" + t.upper() for i, t in enumerate(texts[:17])}


@pytest.mark.parametrize("kind", ["task", "model"])
def test_factory_error_is_raised_on_the_driver_with_its_type(cluster, kind):
    job = Job("broken", _bad_factory, _shout, kind=kind)
    with pytest.raises(ConfigError, match="'nope' is not installed") as info:
        _ray(job, _batches(TEXTS, 4))
    assert type(info.value) is ConfigError


@pytest.mark.parametrize("kind", ["task", "model"])
def test_run_error_in_apply_is_raised_on_the_driver_with_its_type(cluster, kind):
    from humanize.models import ModelUnavailable

    job = Job("lazy", _token, _lazy_model, kind=kind)  # a model that loads on first use, in apply
    with pytest.raises(ModelUnavailable, match="model 'nope' is not available") as info:
        _ray(job, _batches(TEXTS, 4))
    assert type(info.value) is ModelUnavailable and info.value.install == "pip install nope"


def _pid(state, payloads):
    return [os.getpid() for _ in payloads]


def test_one_state_per_actor_workers_are_reused_and_freed(cluster):
    job = Job("tokens", _token, _with_token, kind="model")
    many = _batches([f"t{i}" for i in range(12)], 2)
    with RayExecutor(num_workers=2) as executor:
        got = list(executor.map(job, many))
        tokens = {state for o in got for _, (state, _) in o.done}
        assert 1 <= len(tokens) <= 2  # the factory ran once per actor, not once per batch
        assert sorted(k for o in got for k, _ in o.done) == sorted(f"k{i}" for i in range(12))
        # the next model job of the same resources reuses the worker processes (no new imports)
        pids = {r for o in executor.map(Job("pid", _token, _pid, kind="model"), many) for _, r in o.done}
        again = {r for o in executor.map(Job("pid2", _token, _pid, kind="model"), many) for _, r in o.done}
        assert again <= pids
        # a task after a model job: the idle actors give their CPUs back, nothing waits forever
        assert len([d for o in executor.map(Job("t", _token, _pid), many) for d in o.done]) == 12
        # a driver that stops early (an interrupted run) keeps nothing busy
        outcomes = executor.map(job, _batches([f"t{i}" for i in range(12)], 1))
        next(outcomes)
        outcomes.close()
    deadline = time.time() + 20  # close() freed every actor and its CPU
    while ray.available_resources().get("CPU", 0) < 2 and time.time() < deadline:
        time.sleep(0.2)
    assert ray.available_resources().get("CPU", 0) == 2


def test_pool_size_follows_the_resources_and_impossible_resources_are_an_error(cluster):
    executor = RayExecutor()
    job = Job("half", _token, _with_token, kind="model", resources={"num_cpus": 0.5})
    assert executor._capacity(ray, job, {"num_cpus": 0.5}) == 4  # fractional CPUs: 4 actors on 2 CPUs
    assert executor._capacity(ray, job, {"num_cpus": 1}) == 2
    gpu_job = Job("gpu", _token, _with_token, kind="model", resources={"num_gpus": 0.5})
    with pytest.raises(ValueError, match="gpu: one worker needs .*num_gpus.*GPU"):
        _ray(gpu_job, _batches(["a"], 1))


def test_batches_go_back_to_the_actor_that_ran_them_largest_first():
    from humanize.benchmarks.runner.executors.scheduling import Affinity as _Affinity

    small, big, huge, other = [("a", "x")], [("b", "x" * 50)], [("c", ("x" * 80, "y" * 80))], [("d", "xx")]
    gone = [("e", "x" * 9)]
    queue = _Affinity([small, big, huge, other, gone], {"a": "A", "c": "A", "d": "B", "e": "C"}, ["A", "B"])
    assert queue.take("A") == (huge, 1)  # A ran "c" and "a" before: its own batches, the largest first
    assert queue.take("B") == (other, 1)
    assert queue.take("B") == (big, 1)  # then the ones nobody in the pool ran ("e": C is not in it)
    assert queue.take("B") == (gone, 1)
    assert queue.take("B") is None  # B never takes A's batch: it is likely a cache hit on A
    queue.orphan("A")  # ... unless A died
    assert queue.take("B") == (small, 1) and queue.take("B") is None


def test_nothing_to_do_starts_nothing():
    assert _ray(Job("x", _token, _with_token), [[], []], address="ray://nowhere:1") == []


@pytest.mark.parametrize("kwargs, error, match", [
    ({"address": ""}, ValueError, "address"),
    ({"address": 5}, ValueError, "address"),
    ({"max_retries": -1}, ValueError, "max_retries"),
    ({"max_retries": True}, ValueError, "max_retries"),
    ({"num_workers": 0}, ValueError, "num_workers"),
    ({"num_workers": 1.5}, ValueError, "num_workers"),
    ({"resources": [1]}, TypeError, "resources must be a dict"),
    ({"resources": {"gpus": 1}}, ValueError, "unknown resource 'gpus'"),
    ({"resources": {"num_gpus": -1}}, ValueError, "num_gpus must be a number >= 0"),
    ({"resources": {"num_gpus": 1.5}}, ValueError, "whole number"),
    ({"init_options": "x"}, TypeError, "init_options"),
    ({"init_options": {"address": "auto"}}, ValueError, "address="),
])
def test_bad_parameters_are_named(kwargs, error, match):
    with pytest.raises(error, match=match):
        RayExecutor(**kwargs)


def test_bad_job_kind_and_resources_are_named(cluster):
    with pytest.raises(ValueError, match="job kind must be 'task' or 'model'"):
        _ray(Job("odd", _token, _with_token, kind="gpu"), _batches(["a"], 1))
    with pytest.raises(ValueError, match="odd: resources: unknown resource 'cpus'"):
        _ray(Job("odd", _token, _with_token, resources={"cpus": 1}), _batches(["a"], 1))
    assert check_worker_resources({"num_cpus": 2, "num_gpus": 0.25, "memory": 2**30}) == {
        "num_cpus": 2, "num_gpus": 0.25, "memory": 2**30}


# -- the runner on Ray ---------------------------------------------------------------------------
#: Cost columns that measure the machine, not the result: they differ between any two runs.
MEASURED = ["wall_s", "cpu_s", "warmup_s", "peak_rss_mb", "peak_gpu_mb", "machine", "cost_source"]


def _config(db):
    from humanize.benchmarks.runner.config import AttackSpec, DetectorSpec, RunConfig

    return RunConfig(n=10, seed=4, db=str(db), quality=False, n_boot=20, batch_size=3,
                     attacks=[AttackSpec("homoglyph", rates=[0.1, 0.4]), AttackSpec("zero_width_space"),
                              AttackSpec("whitespace")],
                     detectors=[DetectorSpec("tfidf_lr"), DetectorSpec("surface_probe")])


def _assert_same_run(a, b, db_a, db_b):
    from humanize.benchmarks.reporting.documents import run_documents
    from humanize.benchmarks.runner.store import ResultsStore

    assert a.run_id == b.run_id
    for name in ("metrics", "scores"):
        pd.testing.assert_frame_equal(a.tables[name], b.tables[name])
    pd.testing.assert_frame_equal(a.tables["cost"].drop(columns=MEASURED, errors="ignore"),
                                  b.tables["cost"].drop(columns=MEASURED, errors="ignore"))
    with ResultsStore(db_a) as sa, ResultsStore(db_b) as sb:  # every attacked text and its exact edits
        pd.testing.assert_frame_equal(run_documents(sa), run_documents(sb))


@pytest.fixture(scope="module")
def local_run(tmp_path_factory):
    from humanize.benchmarks.runner import run

    db = tmp_path_factory.mktemp("local") / "r.sqlite"
    return run(_config(db), progress=False), db


def test_the_runner_on_ray_gives_the_local_tables(cluster, local_run, tmp_path):
    from humanize.benchmarks.runner import run

    expected, local_db = local_run
    config = _config(tmp_path / "r.sqlite")
    config.executor = "ray"  # the run builds its RayExecutor (joining this process's cluster) and closes it
    got = run(config, progress=False)
    assert not got.failures and got.work == expected.work
    _assert_same_run(expected, got, local_db, config.db)


class _CtrlC:
    """An executor that lets ``after`` batches through, then interrupts the driver (Ctrl-C)."""

    def __init__(self, inner, after):
        self.inner, self.left = inner, after

    def map(self, job, batches):
        outcomes = self.inner.map(job, batches)
        try:
            for outcome in outcomes:
                if self.left == 0:
                    raise KeyboardInterrupt
                self.left -= 1
                yield outcome
        finally:
            outcomes.close()


def test_a_ray_run_interrupted_at_the_driver_resumes_to_the_same_tables(cluster, local_run, tmp_path):
    from humanize.benchmarks.runner import run

    expected, local_db = local_run
    config = _config(tmp_path / "r.sqlite")
    with RayExecutor(max_retries=1) as executor:
        with pytest.raises(KeyboardInterrupt):
            run(config, progress=False, executor=_CtrlC(executor, after=3))
        resumed = run(config, progress=False, executor=executor)
    total = expected.work["attacked"]
    assert 0 < resumed.work["attacked"] < total  # the batches finished before Ctrl-C were kept
    _assert_same_run(expected, resumed, local_db, config.db)


# -- a stage of several jobs at once (map_jobs) ---------------------------------------------------
def _reverse(state, payloads):
    return [state + text[::-1] for text in payloads]


def _length(state, payloads):
    if "BAD too" in payloads:
        raise ValueError("cannot measure this one")
    return [state + len(text) for text in payloads]


def _by_position(pairs):
    """{job position: its outcomes, sorted by first key}."""
    out: dict = {}
    for pos, outcome in pairs:
        out.setdefault(pos, []).append(outcome)
    return {pos: _sorted(outcomes) for pos, outcomes in out.items()}


def test_map_jobs_gives_each_job_the_local_outcomes(cluster):
    # three task jobs (their batches share Ray tasks) and a model job; the same keys in every job
    work = [(Job("shout", functools.partial(_prefix, ">"), _shout), _batches(TEXTS * 3, 1)),
            (Job("reverse", functools.partial(_prefix, "<"), _reverse), _batches(TEXTS * 2, 2)),
            (Job("length", functools.partial(_prefix, 100), _length), _batches(TEXTS * 2, 3)),
            (Job("shout on a pool", functools.partial(_prefix, "#"), _shout, kind="model"), _batches(TEXTS, 2))]
    expected = _by_position(LocalExecutor().map_jobs(work))
    with RayExecutor() as executor:
        got = _by_position(executor.map_jobs(work))
    assert got == expected  # per job: the same batches, results and failures
    assert [len(got[pos]) for pos in range(4)] == [33, 11, 8, 6]
    failed = {pos: sorted(f.key for o in got[pos] for f in o.failed) for pos in range(4)}
    assert failed == {0: ["k13", "k19", "k2", "k24", "k30", "k8"], 1: [], 2: ["k19", "k8"], 3: ["k2", "k8"]}


def _assigned_cpus(state, payloads):
    cpus = ray.get_runtime_context().get_assigned_resources().get("CPU")
    return [(state + text, cpus) for text in payloads]


def test_task_jobs_of_different_resources_never_share_a_task(cluster):
    texts = [f"t{i}" for i in range(12)]
    work = [(Job("one", functools.partial(_prefix, "1:"), _assigned_cpus), _batches(texts, 1)),
            (Job("two", functools.partial(_prefix, "2:"), _assigned_cpus, resources={"num_cpus": 2}),
             _batches(texts, 2)),
            (Job("one again", functools.partial(_prefix, "3:"), _assigned_cpus), _batches(texts, 1))]
    with RayExecutor() as executor:
        got = list(executor.map_jobs(work))
    assert not [f for _, o in got for f in o.failed]
    for pos, (prefix, cpus) in enumerate([("1:", 1.0), ("2:", 2.0), ("3:", 1.0)]):
        done = dict(pair for p, o in got if p == pos for pair in o.done)
        # every batch of the job ran in a task with the job's own resources
        assert done == {f"k{i}": (prefix + text, cpus) for i, text in enumerate(texts)}


def _with_pid(state, payloads):
    return [(state, os.getpid()) for _ in payloads]


def test_a_task_jobs_state_is_built_once_per_worker_process_not_per_task(cluster):
    job = Job("tokens", _token, _with_pid)
    many = _batches([f"t{i}" for i in range(60)], 1)  # many small batches: many tasks
    with RayExecutor() as executor:
        first = [pair for _, o in executor.map_jobs([(job, many)]) for _, pair in o.done]
        second = [pair for _, o in executor.map_jobs([(job, many)]) for _, pair in o.done]
    for pairs in (first, second):
        assert len(pairs) == 60
        tokens_of = {}
        for token, pid in pairs:
            tokens_of.setdefault(pid, set()).add(token)
        assert all(len(tokens) == 1 for tokens in tokens_of.values())  # one factory call per process
        assert len({t for t, _ in pairs}) <= len(tokens_of) <= 2  # 2 CPUs: at most 2 worker processes
    assert not {t for t, _ in first} & {t for t, _ in second}  # a new call builds its states afresh


def _slow_shout(state, payloads):
    time.sleep(0.05)
    return _shout(state, payloads)


def test_a_warmed_model_job_starts_in_the_task_tail_and_is_the_pool_its_map_uses(cluster):
    model = Job("warm model", _token, _with_token, kind="model")
    tasks = Job("tasks", functools.partial(_prefix, ">"), _slow_shout)
    with RayExecutor(num_workers=2) as executor:
        executor.warm(model)
        done = [d for o in executor.map(tasks, _batches([f"t{i}" for i in range(12)], 1)) for d in o.done]
        assert len(done) == 12
        warmed = executor._warmed  # started while the last tasks ran, never beyond the free CPUs
        assert warmed is not None and warmed[0] is model and len(warmed[2]) == 2
        got = list(executor.map(model, _batches([f"m{i}" for i in range(8)], 2)))
        assert executor._warmed is None
        tokens = {state for o in got for _, (state, _) in o.done}
        assert sorted(k for o in got for k, _ in o.done) == [f"k{i}" for i in range(8)]
        assert 1 <= len(tokens) <= 2  # the warmed actors' states: prepared once each


def test_a_warmed_job_that_does_not_come_next_never_blocks_the_tasks(cluster):
    model = Job("warm model", _token, _with_token, kind="model")
    other = Job("another model", _token, _pid, kind="model")
    tasks = Job("tasks", functools.partial(_prefix, ">"), _slow_shout)
    with RayExecutor(num_workers=2) as executor:
        executor.warm(model)
        for _ in range(2):  # a second task stream (a run's defenses): the warmed actors give their CPUs back
            assert len([d for o in executor.map(tasks, _batches(["a", "b", "c", "d"], 1)) for d in o.done]) == 4
        # another model job than the warmed one: the warmed actors are released, the job runs
        assert len([d for o in executor.map(other, _batches(["x", "y"], 1)) for d in o.done]) == 2
        assert executor._warmed is None
    deadline = time.time() + 20
    while ray.available_resources().get("CPU", 0) < 2 and time.time() < deadline:
        time.sleep(0.2)
    assert ray.available_resources().get("CPU", 0) == 2


def _comma_score(texts):
    """A module-level detector function (the workers import this module by name)."""
    return [float(t.count(",")) + len(t) / 1000 for t in texts]


def test_raid_detect_on_ray_writes_the_same_predictions_as_locally(cluster, tmp_path):
    from humanize.benchmarks.runner.raid_detect import detect_file
    from humanize.detectors import FunctionDetector

    rows = [{"id": f"r{i}", "generation": ("a, b, " * (i % 7)) + f"text {i % 40}"} for i in range(300)]
    pd.DataFrame(rows).to_csv(tmp_path / "test.csv", index=False)
    det = FunctionDetector(_comma_score, name="commas", fn_version="1")
    local = detect_file(det, tmp_path / "test.csv", tmp_path / "local.json", db=tmp_path / "l.sqlite",
                        progress=False, batch_size=16, chunksize=100)
    ex = RayExecutor()
    try:
        remote = detect_file(det, tmp_path / "test.csv", tmp_path / "ray.json", db=tmp_path / "r.sqlite",
                             executor=ex, progress=False, batch_size=16, chunksize=100)
    finally:
        ex.close()
    assert remote.scored == local.scored == len({r["generation"] for r in rows}) and not remote.failures
    assert (tmp_path / "ray.json").read_text() == (tmp_path / "local.json").read_text()
