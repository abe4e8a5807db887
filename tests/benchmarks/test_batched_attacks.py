"""Attacks that batch are run and timed a batch at a time by the runner (issue #24): a chat model decodes the
batch's requests together; each row gets its share of the batch's time and says so."""

from __future__ import annotations

import pandas as pd

import pytest

from humanize.attacks import Blend, Pipeline, get
from humanize.attacks.base import AttackResult, BatchAttack
from humanize.benchmarks.runner import jobs, run
from humanize.benchmarks.runner.config import AttackSpec, DetectorSpec, RunConfig
from humanize.benchmarks.runner.executors import run_batch
from humanize.cost import meter as cost_meter
from humanize.exceptions import RunError

TEXTS = ["The cat sat on the mat.", "A longer document, with a second clause and a few more words.", "Short one."]


class Shout(BatchAttack):
    """Upper-cases each document, a batch per call; records each call (with whether a measurement ran).
    A document containing ``bad`` makes the call raise; ``run_error`` raises a RunError instead."""

    name = "shout"
    needs_model = False

    def __init__(self, seed: int = 0, run_error: bool = False):
        self._init_params(locals())
        self.__dict__["calls"] = []

    def _results(self, texts):
        self.__dict__["calls"].append((list(texts), bool(cost_meter._ACTIVE)))
        if self.run_error:
            raise RunError("Shout: the model is not installed")
        if any("bad" in t for t in texts):
            raise ValueError("Shout: a bad document")
        return [AttackResult(original=t, text=t.upper(), attack=self.name, params=self.get_params(),
                             _edits=[(0, len(t), t.upper())] if t else [], info={"llm_queries": 1}) for t in texts]


def test_an_attack_that_batches_is_timed_as_one_call_and_each_row_gets_its_share():
    attack = Shout()
    rows = jobs.attack_texts(attack, TEXTS)
    calls = attack.calls
    # one warm-up batch outside any measurement, then one measured batch of every text
    assert calls[0] == ([TEXTS[0], jobs.WARMUP_PROBE], False) and calls[1:] == [(TEXTS, True)]
    assert [r["output"] for r in rows] == [t.upper() for t in TEXTS]
    assert [r["info"][jobs.TIMED_BATCH] for r in rows] == [3, 3, 3]
    assert len({r["wall_s"] for r in rows}) == 1 and len({r["cpu_s"] for r in rows}) == 1  # the batch's mean
    assert rows[1]["tokens_in"] > rows[0]["tokens_in"] > rows[2]["tokens_in"]  # tokens stay the document's
    assert rows[0]["warmup_s"] >= 0 and [r["warmup_s"] for r in rows[1:]] == [None, None]


def test_an_attack_that_does_not_batch_is_timed_per_document():
    attack = get("homoglyph")
    assert not jobs.attack_batches(attack)
    rows = jobs.attack_texts(attack, TEXTS)
    assert all(jobs.TIMED_BATCH not in r["info"] for r in rows)
    assert [r["output"] for r in rows] == [attack.apply(t).text for t in TEXTS]


def test_the_class_declares_batching_and_composites_ask_their_parts():
    assert jobs.attack_batches(Shout()) and jobs.attack_batches(get("paraphrase"))
    assert not jobs.attack_batches(get("synonym")) and not jobs.attack_batches(get("homoglyph"))
    assert jobs.attack_batches(AttackSpec("paraphrase"))
    assert Pipeline(["homoglyph", Shout()]).batches and not Pipeline(["homoglyph", "whitespace"]).batches
    assert Blend([Shout(), "homoglyph"]).batches and not Blend(["homoglyph", "whitespace"]).batches
    assert Blend(["homoglyph"], policy="greedy", detector="surface_probe").batches


def test_a_pipeline_with_a_batching_step_batches_it_with_the_outputs_of_one_document_at_a_time():
    shout = Shout()
    pipe = Pipeline([get("homoglyph", rate=0.3), shout, get("whitespace")])
    batched = pipe.batch(TEXTS)
    assert shout.calls == [([pipe.steps()[0].apply(t).text for t in TEXTS], False)]  # the step ran once for all
    one = [pipe.apply(t) for t in TEXTS]
    assert [(r.text, r.edits, r.info) for r in batched] == [(r.text, r.edits, r.info) for r in one]


def test_a_batch_that_raises_falls_back_to_one_document_at_a_time():
    attack = Shout()
    texts = [TEXTS[0], "a bad one", TEXTS[1]]
    outcome = run_batch(jobs.attack_job("shout", attack, {}), attack, [(f"h{i}", t) for i, t in enumerate(texts)])
    assert [k for k, _ in outcome.done] == ["h0", "h2"] and [f.key for f in outcome.failed] == ["h1"]
    assert "a bad document" in outcome.failed[0].error
    # the good documents were timed alone: their rows say per document
    assert all(jobs.TIMED_BATCH not in r["info"] for _, r in outcome.done)
    # an error about the run is raised, not turned into per-document failures
    with pytest.raises(RunError):
        jobs.attack_texts(Shout(run_error=True), TEXTS)


def test_the_batched_path_gives_the_per_document_outputs_of_a_packaged_chat_model(smollm):
    from humanize.attacks.generation.paraphrase import Paraphrase
    from humanize.generation.local import LocalChat

    attack = Paraphrase(LocalChat(smollm, max_new_tokens=8), seed=3, chunk_sentences=1, max_chunks=1)
    rows = jobs.attack_texts(attack, TEXTS)
    assert [r["info"][jobs.TIMED_BATCH] for r in rows] == [3, 3, 3]
    alone = [attack.apply(t) for t in TEXTS]
    assert [r["output"] for r in rows] == [r.text for r in alone]
    assert [r["output"] for r in rows] != TEXTS
    # each row's queries are its own document's generations, as when it is timed alone
    assert [r["queries"] for r in rows] == [r.info["llm_queries"] for r in alone]


def test_a_run_marks_batch_means_in_the_cost_table_and_the_summary_and_keeps_them_when_cached(tmp_path):
    from humanize.benchmarks.reporting.report import build_report
    from humanize.benchmarks.reporting.scatter import scatter_caption, scatter_points

    cfg = RunConfig(n=16, seed=3, db=str(tmp_path / "b.sqlite"), quality=False, batch_size=16,
                    attacks=[AttackSpec("tests.benchmarks.test_batched_attacks:Shout"), AttackSpec("homoglyph")],
                    detectors=[DetectorSpec("surface_probe")])
    first = run(cfg, progress=False, release_models=True).tables["cost"]
    by = first.groupby("attack")[["timing", "cost_source"]].agg(lambda s: sorted(set(s)))
    assert by.loc["shout"].tolist() == [["batch mean"], ["measured"]]
    assert by.loc["homoglyph"].tolist() == [["per document"], ["measured"]]
    shout = first[first["attack"] == "shout"]
    assert (shout["batch_docs"] == len(shout)).all() and shout["wall_s"].nunique() == 1
    second = run(cfg, progress=False).tables
    cached = second["cost"].set_index(["attack", "id"])
    assert set(cached["cost_source"]) == {"cached"}
    assert cached["timing"].equals(first.set_index(["attack", "id"])["timing"])
    report = build_report(second)
    assert report["cost"].loc["shout", "timing"] == "batch mean"
    assert report["cost"].loc["homoglyph", "timing"] == "per document"
    assert "for `shout` a batch mean" in report["summary"].attrs["note"]
    points = scatter_points(second)
    assert dict(zip(points["attack"], points["timing"])) == {"shout": "batch mean", "homoglyph": "per document"}
    assert "The seconds of shout are batch means" in scatter_caption(points)


def _fake_model(directory):
    from humanize.models.loading import LoadedModel

    return LoadedModel(name=str(directory), resolved=str(directory), model=object(), tokenizer=None, device="cpu",
                       dtype="float32", kind="causal_lm", load_seconds=0.0, source="local")


def test_the_local_executor_releases_the_models_a_job_loaded_unless_the_run_still_needs_them(tmp_path):
    from humanize.benchmarks.runner.executors import Job, LocalExecutor
    from humanize.models.identity import weights_key
    from humanize.models.cache import get_or_load, loaded_keys, release

    dirs = {}
    for name in ("before", "mine", "shared"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "weights.bin").write_text(name)
        dirs[name] = tmp_path / name
    keys = {name: ("test-release", str(d)) for name, d in dirs.items()}
    get_or_load(keys["before"], lambda: _fake_model(dirs["before"]))

    def apply(state, payloads):
        for name in ("before", "mine", "shared"):
            get_or_load(keys[name], lambda name=name: _fake_model(dirs[name]))
        return payloads

    shared_key = weights_key(_fake_model(dirs["shared"]).identity)[0]
    try:
        for keep, left in ((None, {"before", "mine", "shared"}), (frozenset({shared_key}), {"before", "shared"})):
            release([keys["mine"], keys["shared"]])
            job = Job("attack x", lambda: None, apply, kind="model", keep_models=keep)
            assert [len(o.done) for o in LocalExecutor().map(job, [[("k", "t")]])] == [1]
            assert {n for n, k in keys.items() if k in loaded_keys()} == left
    finally:
        release(list(keys.values()))


class _Scorer:
    """Scores by length; records each call."""

    def __init__(self):
        self.calls = []

    def score(self, texts):
        self.calls.append(list(texts))
        return [float(len(t)) for t in texts]


def test_a_detector_is_warmed_up_outside_the_timed_batch_and_each_text_gets_its_share():
    det = _Scorer()
    rows = jobs.score_texts(det, TEXTS)
    assert det.calls == [[jobs.WARMUP_PROBE], TEXTS]  # the probe alone first, then the batch in one call
    assert [r["score"] for r in rows] == [float(len(t)) for t in TEXTS]
    assert len({r["wall_s"] for r in rows}) == 1 and rows[0]["warmup_s"] >= 0
    assert [r["warmup_s"] for r in rows[1:]] == [None, None]
    assert [r["warmup_s"] for r in jobs.score_texts(det, TEXTS[:1])] == [None]  # warmed once per process


def test_the_run_records_each_detectors_scoring_seconds_per_text(tmp_path):
    from humanize.benchmarks.reporting.report import build_report

    cfg = RunConfig(n=16, seed=3, db=str(tmp_path / "d.sqlite"), quality=False, attacks=[AttackSpec("homoglyph")],
                    detectors=[DetectorSpec("surface_probe"), DetectorSpec("tfidf_lr")])
    first = run(cfg, progress=False).tables
    table = first["detector_cost"].set_index("detector")
    assert list(table.index) == ["surface_probe", "tfidf_lr"]
    assert (table["texts_scored"] > 0).all() and (table["texts_cached"] == 0).all()
    assert (table["s_per_text"] >= 0).all() and (table["warmup_s"] >= 0).all()
    summary = build_report(first)["summary"]
    assert (summary["score_s_per_text"] >= 0).all() and "score_s_per_text" in summary.attrs["note"]
    again = run(cfg, progress=False).tables["detector_cost"].set_index("detector")
    assert (again["texts_scored"] == 0).all() and (again["texts_cached"] == table["texts_scored"]).all()
    # every score's cost was stored with it: the cached rerun reports what the cold run measured, exactly
    measured = ["texts_timed", "wall_s", "cpu_s", "s_per_text", "s_per_text_shared", "cpu_s_per_text", "warmup_s"]
    assert (again["texts_timed"] == table["texts_scored"]).all()
    pd.testing.assert_frame_equal(again[measured], table[measured])
    cold, cached = build_report(first), build_report(run(cfg, progress=False).tables)
    pd.testing.assert_frame_equal(cached["detector_cost"][measured], cold["detector_cost"][measured])
    pd.testing.assert_series_equal(cached["summary"]["score_s_per_text"], cold["summary"]["score_s_per_text"])
    pd.testing.assert_frame_equal(cached["cost"], cold["cost"])
    assert "detector_cost" in build_report(again.reset_index().pipe(lambda t: {**first, "detector_cost": t}))


def test_detectors_sharing_one_forward_pass_are_named_and_share_its_seconds():
    from humanize.benchmarks.runner.engine import _attribute_shared_passes, detector_cost_row
    from humanize.detectors.metric import LogLikelihood, LogRank
    from humanize.detectors.surface import SurfaceProbe

    detectors = {"log_likelihood": LogLikelihood(), "log_rank": LogRank(),
                 "log_rank:max_tokens=64": LogRank(max_tokens=64), "surface_probe": SurfaceProbe()}

    def costs(s):  # two texts, each s seconds
        return [{"wall_s": s, "cpu_s": s, "warmup_s": None}] * 2

    # the first pays the pass (0.3 s per text), the second reads it from the cache (0.01 s)
    rows = [detector_cost_row("log_likelihood", costs(0.3), 2, 0), detector_cost_row("log_rank", costs(0.01), 2, 0),
            detector_cost_row("log_rank:max_tokens=64", costs(0.2), 2, 0),
            detector_cost_row("surface_probe", costs(0.001), 2, 0)]
    _attribute_shared_passes(rows, detectors)
    by = {r["detector"]: r for r in rows}
    assert by["log_likelihood"]["shared_with"] == "log_rank" and by["log_rank"]["shared_with"] == "log_likelihood"
    assert by["log_likelihood"]["s_per_text_shared"] == by["log_rank"]["s_per_text_shared"] == pytest.approx(0.155)
    assert by["log_likelihood"]["s_per_text"] == pytest.approx(0.3)  # what it paid, beside its share
    # another max_tokens is another pass; a detector with no LM pass shares nothing
    for alone in ("log_rank:max_tokens=64", "surface_probe"):
        assert by[alone]["shared_with"] == "" and by[alone]["s_per_text_shared"] == by[alone]["s_per_text"]
