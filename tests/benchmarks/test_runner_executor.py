"""The runner's executor seam: every stage through one mechanism, the same tables whatever the
batching or the order in which batches come back, picklable jobs, failed documents reported
(the rest completes), resumption after an interruption without repeated work (issue #13 §1)."""

import pickle
import sqlite3

import pandas as pd
import pytest

from humanize.attacks import registry as attack_registry
from humanize.attacks.homoglyph import Homoglyph
from humanize.benchmarks.runner import jobs
from humanize.benchmarks.runner.config import AttackSpec, DefenseSpec, DetectorSpec, RunConfig
from humanize.benchmarks.runner.executors import Executor, LocalExecutor, get_executor
from humanize.benchmarks.runner import run, sample_rows
from humanize.benchmarks.runner.stages import missing_batches, run_stage

#: Columns measured afresh on every run (time, memory, what this call computed) or saying so: not part of the results.
MEASURED = ["wall_s", "cpu_s", "warmup_s", "peak_rss_mb", "peak_gpu_mb", "cost_source", "machine", "s_per_text",
            "cpu_s_per_text", "texts_scored", "texts_cached", "texts_timed", "s_per_text_shared"]


def _config(db, **kw):
    base = dict(n=8, seed=3, db=str(db), n_boot=0, quality=True, quality_params={"meters": ["rouge_l", "edit_rate"]},
                attacks=[AttackSpec("homoglyph"), AttackSpec("whitespace", rates=[0.2, 0.8])],
                detectors=[DetectorSpec("tfidf_lr"), DetectorSpec("surface_probe")])
    return RunConfig(**{**base, **kw})


def _same_tables(a: dict, b: dict) -> None:
    assert set(a) == set(b)
    for name in a:
        left, right = (t.drop(columns=[c for c in MEASURED if c in t]) for t in (a[name], b[name]))
        pd.testing.assert_frame_equal(left.reset_index(drop=True), right.reset_index(drop=True), obj=name)


def _attack_outputs(db) -> list:
    with sqlite3.connect(db) as conn:
        return sorted(conn.execute("SELECT attack_key, input_hash, output, edits FROM attack_outputs").fetchall())


class PicklingExecutor(Executor):
    """Ships every job through pickle (as a remote executor must) and hands the outcomes back in
    reverse order; records the jobs it saw."""

    def __init__(self):
        self.jobs = []

    def map(self, job, batches):
        shipped = pickle.loads(pickle.dumps(job))
        self.jobs.append(shipped)
        yield from reversed(list(LocalExecutor().map(shipped, batches)))


def test_tables_do_not_depend_on_batch_size_executor_or_the_order_batches_come_back(tmp_path):
    one = run(_config(tmp_path / "a.sqlite", batch_size=1), progress=False)
    remote = PicklingExecutor()
    seven = run(_config(tmp_path / "b.sqlite", batch_size=7), progress=False, executor=remote)
    _same_tables(one.tables, seven.tables)
    assert _attack_outputs(tmp_path / "a.sqlite") == _attack_outputs(tmp_path / "b.sqlite")  # every attacked text
    assert one.work == seven.work and one.failures == seven.failures == []
    kinds = {job.name: job.kind for job in remote.jobs}
    assert kinds == {"attack homoglyph": "task", "attack whitespace@0.2": "task", "attack whitespace@0.8": "task",
                     "score tfidf_lr": "model", "score surface_probe": "model", "quality": "model"}


def test_attack_kinds_tell_model_work_from_rule_work():
    assert jobs.attack_kind(AttackSpec("homoglyph")) == "task"
    assert jobs.attack_kind(AttackSpec("strip_format")) == "task"
    assert jobs.attack_kind(AttackSpec("paraphrase")) == "model"
    assert jobs.attack_kind(AttackSpec("pipeline", {"attacks": ["homoglyph", "whitespace"]})) == "task"
    assert jobs.attack_kind(AttackSpec("pipeline", {"attacks": ["homoglyph", "paraphrase"]})) == "model"
    assert jobs.attack_kind(AttackSpec("blend", {"attacks": ["homoglyph", {"name": "misspelling"}]})) == "task"
    assert jobs.attack_kind(AttackSpec("blend", {"attacks": ["homoglyph", "prompt"]})) == "model"


def test_run_stage_writes_each_batch_as_it_arrives_and_skips_what_is_stored():
    job = jobs.Job("upper", str, lambda state, items: [s.upper() for s in items])
    payloads = {"a": "x", "b": "y", "c": "z", "d": "w"}
    batches = missing_batches(payloads, {"b"}, 2)
    assert batches == [[("a", "x"), ("c", "z")], [("d", "w")]]
    written = []
    out = run_stage(LocalExecutor(), job, batches, put=written.append, results={"b": "Y"})
    assert written == [[("a", "X"), ("c", "Z")], [("d", "W")]]
    assert out.results == {"a": "X", "b": "Y", "c": "Z", "d": "W"} and out.computed == ["a", "c", "d"]


# -- a document that makes its attack raise ---------------------------------------------------------
_FAIL_ON: list = []  # substrings: a text containing one makes the attack raise


class MarkerFails(Homoglyph):
    """Homoglyph, but raising on the documents that contain a marker (as a buggy attack would)."""

    name = "marker_fails"

    def _run(self, text):
        if any(m in text for m in _FAIL_ON):
            raise ValueError("this document trips the attack")
        return super()._run(text)


@pytest.fixture
def marker_attack(monkeypatch):
    monkeypatch.setitem(attack_registry._REGISTRY, "marker_fails", MarkerFails)
    yield _FAIL_ON
    _FAIL_ON.clear()


def test_a_document_that_makes_an_attack_raise_is_reported_and_the_rest_completes(tmp_path, marker_attack):
    cfg = _config(tmp_path / "r.sqlite", batch_size=3, attacks=[AttackSpec("marker_fails"), AttackSpec("homoglyph")])
    rows = sample_rows(cfg)
    test_machine = rows[(rows["split"] == "test") & (rows["label"] == "machine")]
    bad = test_machine.iloc[1]
    marker_attack.append(bad["generation"][:60])
    with pytest.warns(RuntimeWarning, match="1 document"):
        result = run(cfg, progress=False)
    (failure,) = result.failures
    assert len(result.warnings) == 1 and "1 document(s) failed" in result.warnings[0]
    assert (failure.job, failure.key, failure.attempts) == ("attack marker_fails", bad["text_hash"], 1)
    assert failure.error == "ValueError: this document trips the attack"
    table = result.tables["failures"]
    assert table.to_dict(orient="records") == [{"job": "attack marker_fails", "key": bad["text_hash"],
                                               "id": bad["id"], "error": failure.error, "attempts": 1}]
    scores, cost, quality = (result.tables[k] for k in ("scores", "cost", "quality"))
    n = len(test_machine)
    assert set(cost[cost["attack"] == "marker_fails"]["id"]) == set(test_machine["id"]) - {bad["id"]}
    assert (cost["attack"] == "homoglyph").sum() == n and (quality["attack"] == "marker_fails").sum() == n - 1
    attacked = scores[scores["attack"] == "marker_fails"]
    assert len(attacked) == 2 * (n - 1) and attacked["score"].notna().all()
    assert set(result.metrics["attack"]) == {"none", "marker_fails", "homoglyph"}

    marker_attack.clear()  # the document no longer trips the attack: a rerun retries it, and only it
    again = run(cfg, progress=False)
    assert again.failures == [] and "failures" not in again.tables
    assert again.work["attacked"] == 1 and again.work["quality"] == 1
    assert (again.tables["cost"]["attack"] == "marker_fails").sum() == n


def test_a_missing_model_or_a_failing_fit_is_a_run_error_not_a_document_failure(tmp_path, monkeypatch):
    from humanize.detectors.surface import SurfaceProbe
    from humanize.models import ModelUnavailable

    cfg = _config(tmp_path / "r.sqlite", quality=False)

    def unavailable(self, texts):
        raise ModelUnavailable("x", ["the local cache"], "humanize-bench models download x")

    monkeypatch.setattr(SurfaceProbe, "score", unavailable)  # models load on first score: raised in apply
    with pytest.raises(ModelUnavailable, match="model 'x' is not available"):
        run(cfg, progress=False)
    monkeypatch.undo()

    def broken_fit(self, texts, labels):
        raise RuntimeError("fit exploded")

    monkeypatch.setattr(SurfaceProbe, "fit", broken_fit)  # the factory fails: nothing to isolate
    with pytest.raises(RuntimeError, match="fit exploded"):
        run(cfg, progress=False)


# -- interruption and resumption --------------------------------------------------------------------
class InterruptAfter(Executor):
    """The local executor, interrupted (Ctrl-C) after ``n`` batches."""

    def __init__(self, n):
        self.left = n

    def map(self, job, batches):
        for outcome in LocalExecutor().map(job, batches):
            if self.left == 0:
                raise KeyboardInterrupt
            self.left -= 1
            yield outcome


def _count(db, table):
    with sqlite3.connect(db) as conn:
        return conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]


def test_an_interrupted_run_resumes_to_the_same_tables_without_repeating_work(tmp_path):
    cfg = _config(tmp_path / "cut.sqlite", batch_size=1, quality=False)
    rows = sample_rows(cfg)
    attack_batches = 3 * int(((rows["split"] == "test") & (rows["label"] == "machine")).sum())  # one doc each
    with pytest.raises(KeyboardInterrupt):  # midway through scoring: every attack batch is in
        run(cfg, progress=False, executor=InterruptAfter(attack_batches + 2))
    attacked, scored = _count(cfg.db, "attack_outputs"), _count(cfg.db, "scores")
    assert attacked > 0 and scored > 0
    resumed = run(cfg, progress=False)
    assert resumed.work["attacked"] == _count(cfg.db, "attack_outputs") - attacked == 0
    assert resumed.work["scored"] == _count(cfg.db, "scores") - scored > 0
    whole = run(_config(tmp_path / "whole.sqlite", batch_size=1, quality=False), progress=False)
    _same_tables(resumed.tables, whole.tables)
    assert resumed.work["scored"] + scored == whole.work["scored"]


def test_get_executor_is_the_single_entry_point():
    assert isinstance(get_executor("local"), LocalExecutor)
    assert isinstance(get_executor("local", address="auto", max_retries=1), LocalExecutor)
    with pytest.raises(ValueError, match="unknown executor 'spark'.*local, ray"):
        get_executor("spark")
    with pytest.raises(TypeError, match="unknown option.*'workers'"):
        get_executor("local", workers=2)
    ray_executor = get_executor("ray", address="auto", max_retries=3)  # built, not connected
    assert (ray_executor.name, ray_executor.address, ray_executor.max_retries) == ("ray", "auto", 3)


def test_jobs_of_a_run_with_defenses_pickle_and_work_after_shipping(tmp_path):
    remote = PicklingExecutor()
    cfg = _config(tmp_path / "r.sqlite", quality=False, attacks=[AttackSpec("zero_width_space")],
                  detectors=[DetectorSpec("surface_probe")], defenses=[DefenseSpec("normalize")])
    result = run(cfg, progress=False, executor=remote)
    assert [(j.name, j.kind) for j in remote.jobs] == [("attack zero_width_space", "task"),
                                                       ("defense normalize", "task"), ("score surface_probe", "model")]
    assert set(result.tables["scores"]["defense"]) == {"none", "normalize"}
