"""run_stages: several jobs of a stage through one executor give each job its own results,
writes and failures, whatever the executor (map_jobs, or only map) and whatever the order the
outcomes come back in."""

import functools
import random

import pytest

from humanize.benchmarks.runner.executors import Executor, Failure, Job, LocalExecutor
from humanize.benchmarks.runner.stages import StageResult, StageWork, missing_batches, run_stage, run_stages


def _prefix(prefix):
    return prefix


def _upper(state, payloads):
    out = []
    for text in payloads:
        if "BAD" in text:
            raise ValueError(f"cannot upper {text!r}")
        out.append(state + text.upper())
    return out


def _reverse(state, payloads):
    if "gamma" in payloads:
        raise ValueError("cannot reverse gamma")
    return [state + text[::-1] for text in payloads]


def _length(state, payloads):
    return [len(text) for text in payloads]


#: The same keys in every job (every attack of a run sees the same input hashes).
TEXTS = {f"k{i}": text for i, text in enumerate(
    ["alpha", "", "a BAD one", "emoji 🙂", "Ünïcödé", "   ", "beta", "x" * 300, "BAD too", "gamma"])}


def _jobs():
    return [Job("upper", functools.partial(_prefix, ">"), _upper),
            Job("reverse", functools.partial(_prefix, "<"), _reverse),
            Job("length", functools.partial(_prefix, None), _length, kind="model")]


def _work(writes, cached=None):
    """One StageWork per job, each with its own writer (recording what it receives) and
    ``cached[i]`` results (those keys are not in its batches)."""
    cached = cached or [{} for _ in _jobs()]
    return [StageWork(job, missing_batches(TEXTS, have, size), put=writes[i].append, results=have)
            for i, (job, have, size) in enumerate(zip(_jobs(), cached, [3, 2, 4]))]


def _expected(i, job, cached):
    """What job ``i`` alone ends with: cached results plus everything its own apply gives."""
    state = job.factory()
    results, failed = dict(cached), []
    for key, text in TEXTS.items():
        if key in cached:
            continue
        try:
            results[key] = job.apply(state, [text])[0]
        except ValueError:
            failed.append(key)
    return results, failed


CACHED = [{"k0": "cached"}, {}, {"k9": -1, "k1": -2}]


def _batch_of(done, batches):
    """The index of the batch of ``batches`` whose keys hold every key of ``done``; None if none."""
    keys = {k for k, _ in done}
    found = [n for n, b in enumerate(batches) if keys and keys <= {k for k, _ in b}]
    return found[0] if found else None


def _check(outs, writes, work):
    assert [type(o) for o in outs] == [StageResult] * 3
    for i, (out, w) in enumerate(zip(outs, work)):
        results, failed = _expected(i, w.job, CACHED[i])
        assert out.results == results
        assert sorted(f.key for f in out.failures) == sorted(failed)
        assert all(f.job == w.job.name for f in out.failures)
        # computed: every key this call produced, once, and none of the cached ones
        assert sorted(out.computed) == sorted(set(results) - set(CACHED[i]))
        # the job's put received its own batches' results: each call one batch of this job (less
        # its failed documents), no batch twice
        owners = [_batch_of(done, w.batches) for done in writes[i]]
        assert None not in owners and len(set(owners)) == len(owners)
        assert dict(pair for done in writes[i] for pair in done) == {k: results[k] for k in out.computed}
        assert not set(out.computed) & set(CACHED[i])


def test_several_jobs_each_get_their_own_results_writes_and_failures():
    writes = [[], [], []]
    work = _work(writes, CACHED)
    outs = run_stages(LocalExecutor(), work)
    _check(outs, writes, work)
    assert [sorted(f.key for f in o.failures) for o in outs] == [["k2", "k8"], ["k9"], []]
    assert outs[2].results["k7"] == 300 and outs[2].results["k9"] == -1  # computed and cached side by side
    # a job's put sees only its own values: "<" results only reach the reverse job's writer
    assert all(v.startswith(">") for done in writes[0] for _, v in done)
    assert all(v.startswith("<") for done in writes[1] for _, v in done)
    assert all(isinstance(v, int) for done in writes[2] for _, v in done)


def test_one_job_at_a_time_is_the_same_as_all_at_once():
    together = run_stages(LocalExecutor(), _work([[], [], []], CACHED))
    alone = [run_stage(LocalExecutor(), w.job, w.batches, results=w.results) for w in _work([[], [], []], CACHED)]
    assert together == alone


class _MapOnly:
    """An executor wrapper that only has ``map`` (not an Executor subclass)."""

    def __init__(self):
        self.calls = []

    def map(self, job, batches):
        self.calls.append(job.name)
        return LocalExecutor().map(job, batches)


def test_an_executor_with_only_map_gives_the_same_results():
    expected = run_stages(LocalExecutor(), _work([[], [], []], CACHED))
    executor, writes = _MapOnly(), [[], [], []]
    work = _work(writes, CACHED)
    got = run_stages(executor, work)
    assert not isinstance(executor, Executor) and executor.calls == ["upper", "reverse", "length"]
    assert got == expected
    _check(got, writes, work)


class _Shuffled(Executor):
    """Every outcome of every job, delivered interleaved across the jobs and out of order."""

    def __init__(self, seed):
        self.seed = seed

    def map(self, job, batches):
        raise AssertionError("run_stages must use map_jobs when the executor has it")

    def map_jobs(self, work):
        outcomes = [(pos, o) for pos, (job, batches) in enumerate(work) for o in LocalExecutor().map(job, batches)]
        random.Random(self.seed).shuffle(outcomes)
        yield from outcomes


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_outcomes_interleaved_across_jobs_and_out_of_order_give_the_same_results(seed):
    expected = run_stages(LocalExecutor(), _work([[], [], []], CACHED))
    writes = [[], [], []]
    work = _work(writes, CACHED)
    got = run_stages(_Shuffled(seed), work)
    _check(got, writes, work)
    for g, e in zip(got, expected):
        assert g.results == e.results
        assert sorted(g.computed) == sorted(e.computed)
        assert sorted(g.failures, key=lambda f: f.key) == sorted(e.failures, key=lambda f: f.key)
    # the order the outcomes came in is the order they were written and computed
    assert [k for done in writes[1] for k, _ in done] == got[1].computed


class _Recording(Executor):
    """Records the work map_jobs receives; runs it locally."""

    def __init__(self):
        self.seen = None

    def map(self, job, batches):
        return LocalExecutor().map(job, batches)

    def map_jobs(self, work):
        work = [(job, list(batches)) for job, batches in work]
        self.seen = [(job.name, batches) for job, batches in work]
        return super().map_jobs(work)


def test_empty_jobs_and_empty_batches_are_skipped_and_positions_stay_right():
    upper, reverse, length = _jobs()
    executor, writes = _Recording(), [[], [], [], []]
    work = [StageWork(upper, [], put=writes[0].append, results={"k0": "cached"}),
            StageWork(reverse, [[], list(TEXTS.items())[:3], []], put=writes[1].append),
            StageWork(upper, [[]], put=writes[2].append),
            StageWork(length, [list(TEXTS.items())[3:5]], put=writes[3].append)]
    outs = run_stages(executor, work)
    assert [name for name, _ in executor.seen] == ["reverse", "length"]  # only jobs with work
    assert all(b for _, batches in executor.seen for b in batches)  # and only non-empty batches
    assert outs[0] == StageResult(results={"k0": "cached"}) and outs[2] == StageResult()
    assert outs[1].results == {"k0": "<ahpla", "k1": "<", "k2": "<eno DAB a"} and outs[1].computed == ["k0", "k1", "k2"]
    assert outs[3].results == {"k3": 7, "k4": 7}
    assert writes[0] == writes[2] == [] and len(writes[1]) == 1 and len(writes[3]) == 1


class _Untouchable(Executor):
    def map(self, job, batches):
        raise AssertionError("nothing to do must not reach the executor")

    map_jobs = map


def test_nothing_to_do_never_calls_the_executor():
    upper, reverse, _ = _jobs()
    assert run_stages(_Untouchable(), []) == []
    outs = run_stages(_Untouchable(), [StageWork(upper, [[], []], results={"a": 1}), StageWork(reverse, [])])
    assert outs == [StageResult(results={"a": 1}), StageResult()]


class _Interrupted(Executor):
    """Delivers ``after`` outcomes of the local executor, then Ctrl-C."""

    def __init__(self, after):
        self.after = after

    def map(self, job, batches):
        raise AssertionError

    def map_jobs(self, work):
        for n, item in enumerate(LocalExecutor.map_jobs(LocalExecutor(), work)):
            if n == self.after:
                raise KeyboardInterrupt
            yield item


def test_an_interrupt_propagates_and_the_batches_before_it_stay_written():
    writes = [[], [], []]
    with pytest.raises(KeyboardInterrupt):
        run_stages(_Interrupted(after=5), _work(writes))
    # one job after another locally: upper's 4 batches, then the first of reverse's
    assert [len(w) for w in writes] == [4, 1, 0]
    assert [k for done in writes[1] for k, _ in done] == ["k0", "k1"]


def test_failures_carry_the_job_and_the_error_and_progress_does_not_change_results():
    quiet = run_stages(LocalExecutor(), _work([[], [], []]), progress=False)
    shown = run_stages(LocalExecutor(), _work([[], [], []]), progress=True, name="attacks")
    assert quiet == shown
    assert quiet[0].failures == [Failure("upper", "k2", "ValueError: cannot upper 'a BAD one'", 1),
                                 Failure("upper", "k8", "ValueError: cannot upper 'BAD too'", 1)]


def test_the_progress_bar_names_the_jobs_still_loading_their_models_until_their_first_batch(monkeypatch):
    from humanize.benchmarks.runner import stages

    said = []

    class Bar:
        def __init__(self, *a, **k):
            pass

        def set_postfix_str(self, text, refresh=True):
            said.append(text)

        def update(self, n):
            pass

        def close(self):
            pass

    monkeypatch.setattr(stages, "_bar", lambda total, desc, enabled: Bar() if enabled else None)
    run_stages(LocalExecutor(), _work([[], [], []]), progress=True, name="attacks")
    # before any batch: every job is loading; locally one job after another, so each leaves the list in turn
    assert said[0] == "loading models / first batch: upper, reverse, " + said[0].split(", ")[-1]
    assert said[-1] == "" and len(said) == 4
    assert all("upper" not in s for s in said[1:])
