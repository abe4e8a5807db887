"""The runner: end to end on the demo set, content caching, resumption after SIGKILL."""

import os
import signal
import sqlite3
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

from humanize.benchmarks.runner.config import AttackSpec, DetectorSpec, RunConfig, config_from_dict, load_config
from humanize.benchmarks.reporting.report import build_report, export_report
from humanize.benchmarks.runner import run, sample_rows
from humanize.benchmarks.runner.store import ResultsStore
from humanize.exceptions import ConfigError


def _cheap_config(db, **kw):
    return RunConfig(
        n=16, seed=3, db=str(db), quality=False,
        attacks=[AttackSpec("homoglyph"), AttackSpec("whitespace", rates=[0.2, 0.8])],
        detectors=[DetectorSpec("tfidf_lr"), DetectorSpec("surface_probe")],
        **kw,
    )


def test_run_produces_every_table_and_a_second_run_does_no_work(tmp_path):
    cfg = _cheap_config(tmp_path / "r.sqlite")
    first = run(cfg, progress=False)
    assert first.work["attacked"] > 0 and first.work["scored"] > 0 and first.work["fitted"] == 2
    m = first.metrics
    assert set(m["detector"]) == {"tfidf_lr", "surface_probe"}
    assert set(m["attack"]) == {"none", "homoglyph", "whitespace@0.2", "whitespace@0.8"}
    auroc = m[m["metric"] == "auroc"]["value"]
    assert auroc.between(0, 1).all()
    second = run(cfg, progress=False)
    assert second.work == {"attacked": 0, "scored": 0, "quality": 0, "fitted": 0}
    pd.testing.assert_frame_equal(first.metrics, second.metrics)
    with ResultsStore(cfg.db) as store:
        stored = store.run_tables()
    pd.testing.assert_frame_equal(stored["metrics"].reset_index(drop=True), first.metrics.reset_index(drop=True),
                                  check_dtype=False)


def test_a_new_output_version_of_an_attack_is_recomputed_not_read_from_the_store(tmp_path, monkeypatch):
    from humanize.attacks.homoglyph import Homoglyph

    cfg = RunConfig(n=8, seed=3, db=str(tmp_path / "r.sqlite"), quality=False,
                    attacks=[AttackSpec("homoglyph")], detectors=[DetectorSpec("surface_probe")])
    run(cfg, progress=False)
    assert run(cfg, progress=False).work["attacked"] == 0
    monkeypatch.setattr(Homoglyph, "version", "test-bump")
    assert run(cfg, progress=False).work["attacked"] > 0


def test_report_tables_have_the_papers_layouts(tmp_path):
    result = run(_cheap_config(tmp_path / "r.sqlite"), progress=False)
    report = build_report(result.tables)
    acc = report["tpr_at_fpr_0.05"]  # RAID Table 16 as rows (detector, attack), clean first
    assert list(acc.index.get_level_values("detector").unique()) == ["surface_probe", "tfidf_lr"]
    assert acc.index[0] == ("surface_probe", "none")
    au = report["auroc"]  # TH-Bench Table 1 as rows (attack, detector)
    assert au.index[0][0] == "none" and set(au.index.get_level_values("detector")) == {"surface_probe", "tfidf_lr"}
    assert {"auroc", "auroc_lo", "auroc_hi", "delta_auroc_lo", "n_human"} <= set(au.columns)
    assert set(report["cost"].index) == {"homoglyph", "whitespace@0.2", "whitespace@0.8"}
    files = export_report(report, tmp_path / "rep")
    names = {p.name for p in files}
    assert "report.md" in names and "auroc.csv" in names and "auroc.json" in names
    assert "| none" in (tmp_path / "rep" / "report.md").read_text()


def test_split_keeps_source_documents_together_and_is_seeded(tmp_path):
    cfg = _cheap_config(tmp_path / "r.sqlite")
    a, b = sample_rows(cfg), sample_rows(cfg)
    pd.testing.assert_frame_equal(a, b)
    assert set(a["split"]) == {"train", "test"}
    assert (a["label"] == "machine").sum() == 16 and (a["label"] == "human").sum() == 16


def test_config_errors_name_the_problem_and_list_valid_names(tmp_path):
    with pytest.raises(ConfigError, match="unknown attack 'homoglif'.*homoglyph"):
        RunConfig(attacks=[AttackSpec("homoglif")], detectors=[DetectorSpec("tfidf_lr")]).validate()
    with pytest.raises(ConfigError, match="unknown detector 'gpt0'.*log_likelihood"):
        RunConfig(attacks=[AttackSpec("homoglyph")], detectors=[DetectorSpec("gpt0")]).validate()
    with pytest.raises(ConfigError, match="unknown dataset 'raidd'.*raid"):
        RunConfig(dataset="raidd", attacks=[AttackSpec("homoglyph")], detectors=[DetectorSpec("tfidf_lr")]).validate()
    with pytest.raises(ConfigError, match=r"Homoglyph: rate must be a number in \[0, 1\], got 1.5 \(float\)"):
        RunConfig(attacks=[AttackSpec("homoglyph", rates=[1.5])], detectors=[DetectorSpec("tfidf_lr")]).validate()
    with pytest.raises(ConfigError, match="unknown config section"):
        config_from_dict({"atacks": []})
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[dataset\nname=")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_config(bad)


def test_toml_and_yaml_configs_give_the_same_run_config(tmp_path):
    toml = tmp_path / "c.toml"
    toml.write_text(
        '[dataset]\nname = "demo"\nn = 10\ndomain = "xsum"\n\n'
        '[[attacks]]\nname = "homoglyph"\nrate = [0.1, 0.5]\n\n'
        '[[attacks]]\nname = "misspelling"\ndictionary = "wikipedia"\n\n'
        '[[detectors]]\nname = "tfidf_lr"\n\n[quality]\nenabled = false\n\n[run]\nseed = 4\nfprs = [0.05]\n'
    )
    yaml = tmp_path / "c.yaml"
    yaml.write_text(
        "dataset: {name: demo, n: 10, domain: xsum}\n"
        "attacks:\n  - {name: homoglyph, rate: [0.1, 0.5]}\n  - {name: misspelling, dictionary: wikipedia}\n"
        "detectors: [tfidf_lr]\nquality: false\nrun: {seed: 4, fprs: [0.05]}\n"
    )
    a, b = load_config(toml), load_config(yaml)
    assert a.to_dict() == b.to_dict()
    assert a.filters == {"domain": "xsum"} and a.n == 10 and a.seed == 4 and not a.quality
    assert [lbl for s in a.attacks for lbl, _ in s.expand()] == ["homoglyph@0.1", "homoglyph@0.5", "misspelling"]
    assert a.attacks[1].params == {"dictionary": "wikipedia"}
    a.validate()


_KILL_SCRIPT = """
import sys
from humanize.benchmarks.runner.config import AttackSpec, DetectorSpec, RunConfig
from humanize.benchmarks.runner import run
cfg = RunConfig(n=10, seed=1, db=sys.argv[1], quality=False, batch_size=1,
                attacks=[AttackSpec("upper_lower"), AttackSpec("article_deletion")],
                detectors=[DetectorSpec("log_likelihood", params={"max_tokens": 48}), DetectorSpec("tfidf_lr")])
run(cfg, progress=False)
"""
# a model detector (its own job kind, one forward pass per document) on each document's first 48 tokens: 40
# documents scored one per batch, so the run is still going when it is killed (asserted), at a tenth of the cost


def _count(db, table):
    try:
        with sqlite3.connect(db, timeout=30) as conn:
            return conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


@pytest.mark.slow
def test_a_run_killed_mid_way_resumes_to_the_same_results(tmp_path):
    killed_db = str(tmp_path / "killed.sqlite")
    proc = subprocess.Popen([sys.executable, "-c", _KILL_SCRIPT, killed_db])
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None and _count(killed_db, "scores") < 3:
        time.sleep(0.05)
    assert proc.poll() is None, "the run finished before it could be killed: make it longer"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    scored_before = _count(killed_db, "scores")
    attacked_before = _count(killed_db, "attack_outputs")
    assert scored_before >= 3

    namespace = {}
    # the script reads its database from argv: give it this one (pytest-xdist workers have no argv[1])
    exec(_KILL_SCRIPT.replace("run(cfg, progress=False)", "").replace("sys.argv[1]", repr(killed_db)), namespace)
    cfg = namespace["cfg"]
    resumed = run(cfg, progress=False)
    assert resumed.work["attacked"] == 0  # the attacks had all been stored before scoring started
    total_scores = _count(killed_db, "scores")
    assert resumed.work["scored"] == total_scores - scored_before  # only what was missing
    assert attacked_before == _count(killed_db, "attack_outputs")

    cfg.db = str(tmp_path / "clean.sqlite")
    uninterrupted = run(cfg, progress=False)
    pd.testing.assert_frame_equal(resumed.metrics, uninterrupted.metrics)
    np.testing.assert_allclose(
        resumed.tables["scores"]["score"].to_numpy(), uninterrupted.tables["scores"]["score"].to_numpy(), rtol=1e-6
    )


# -- provenance keys and per-run cost figures (issue 8, section 2) --------------------------------------------
_REUSE_SCRIPT = """
import json, sys
from humanize.benchmarks.runner.config import AttackSpec, DetectorSpec, RunConfig
from humanize.benchmarks.runner import run
cfg = RunConfig(n=10, seed=5, db=sys.argv[1], quality=True, quality_params={"meters": ["rouge_l", "edit_rate"]},
                attacks=[AttackSpec("homoglyph"), AttackSpec("whitespace", rates=[0.3])],
                detectors=[DetectorSpec("tfidf_lr"), DetectorSpec("surface_probe", params={"C": 0.5})])
result = run(cfg, progress=False)
print(json.dumps({"work": result.work, "sources": sorted(set(result.tables["cost"]["cost_source"]))}))
"""


def _run_in_new_process(db):
    import json

    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", _REUSE_SCRIPT, str(db)], capture_output=True, text=True, env=env,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_an_identical_configuration_in_a_new_process_reuses_everything(tmp_path):
    db = tmp_path / "r.sqlite"
    first = _run_in_new_process(db)
    assert first["work"]["attacked"] > 0 and first["work"]["scored"] > 0 and first["work"]["quality"] > 0
    assert first["sources"] == ["measured"]
    second = _run_in_new_process(db)  # another process: no key may depend on addresses, load times or hash seeds
    assert second["work"] == {"attacked": 0, "scored": 0, "quality": 0, "fitted": 0}
    assert second["sources"] == ["cached"]


def test_a_subclass_keeping_its_parents_name_or_a_changed_parameter_recomputes(tmp_path, monkeypatch):
    from humanize.attacks import registry as attack_registry
    from humanize.attacks.homoglyph import Homoglyph

    cfg = RunConfig(n=8, seed=3, db=str(tmp_path / "r.sqlite"), quality=False,
                    attacks=[AttackSpec("homoglyph")], detectors=[DetectorSpec("surface_probe")])
    run(cfg, progress=False)

    class PatchedHomoglyph(Homoglyph):  # same registry name, other code: not the parent's outputs
        pass

    monkeypatch.setitem(attack_registry._REGISTRY, "homoglyph", PatchedHomoglyph)
    assert run(cfg, progress=False).work["attacked"] > 0
    monkeypatch.undo()
    assert run(cfg, progress=False).work["attacked"] == 0
    cfg.detectors = [DetectorSpec("surface_probe", params={"C": 0.999})]
    assert run(cfg, progress=False).work["scored"] > 0


def test_quality_rows_are_keyed_on_the_meters_fingerprint(tmp_path):
    cfg = RunConfig(n=8, seed=3, db=str(tmp_path / "r.sqlite"), quality=True,
                    quality_params={"meters": ["rouge_l"]}, attacks=[AttackSpec("homoglyph")],
                    detectors=[DetectorSpec("surface_probe")])
    assert run(cfg, progress=False).work["quality"] > 0
    fp = cfg.quality_meter().fingerprint()
    with sqlite3.connect(cfg.db) as conn:
        keys = {k for (k,) in conn.execute("SELECT DISTINCT attack_key FROM quality")}
    assert keys and all(k.endswith("|quality=" + fp) for k in keys)
    cfg.quality_lm = "gemma-3-270m"  # ROUGE-L alone does not use the LM: nothing to recompute
    assert run(cfg, progress=False).work["quality"] == 0
    cfg.quality_params = {"meters": ["rouge_l", "edit_rate"]}
    assert run(cfg, progress=False).work["quality"] > 0


def test_cost_rows_say_measured_or_cached_on_which_machine_with_their_token_counts(tmp_path, monkeypatch):
    from humanize.cost import CostMeter
    from humanize.cost import machine as machine_mod

    cfg = RunConfig(n=8, seed=3, db=str(tmp_path / "r.sqlite"), quality=False,
                    attacks=[AttackSpec("homoglyph")], detectors=[DetectorSpec("surface_probe")])
    first = run(cfg, progress=False)
    cost = first.tables["cost"]
    assert set(cost["cost_source"]) == {"measured"} and first.warnings == []
    here = machine_mod.machine_description()
    assert set(cost["machine"]) == {here} and "cores" in here
    # the cost meter's token counts reach the stored rows and the table (they were NaN in the record)
    rows = sample_rows(cfg)
    counter = CostMeter()
    originals = dict(zip(rows["id"], rows["generation"]))
    expected = [counter._count(originals[i]) for i in cost["id"]]
    assert cost["tokens_in"].tolist() == expected and (cost["tokens_out"] > 0).all()
    with sqlite3.connect(cfg.db) as conn:
        stored = conn.execute("SELECT tokens_in, tokens_out, machine FROM attack_outputs").fetchall()
    assert all(isinstance(a, int) and isinstance(b, int) and m == here for a, b, m in stored)
    # a resumed run on another kind of machine: the new rows say so, and the mix is flagged
    cfg.attacks = [AttackSpec("homoglyph"), AttackSpec("whitespace")]
    monkeypatch.setattr(machine_mod, "machine_description", lambda: "Other | 64 cores | GPU: none")
    with pytest.warns(RuntimeWarning, match="mixes machines"):
        second = run(cfg, progress=False)
    cost = second.tables["cost"]
    by_attack = cost.groupby("attack")[["cost_source", "machine"]].agg(lambda s: sorted(set(s)))
    assert by_attack.loc["homoglyph"].tolist() == [["cached"], [here]]
    assert by_attack.loc["whitespace"].tolist() == [["measured"], ["Other | 64 cores | GPU: none"]]
    assert len(second.warnings) == 1 and "machine" in second.warnings[0]


def test_cost_meter_counts_taken_after_the_timed_block_reach_its_record():
    from humanize.cost import CostMeter

    meter = CostMeter()
    with meter.measure(doc_id=0) as m:
        pass
    m.count_input("three word text")
    assert m.record["tokens_in"] == m.counts["tokens_in"] > 0
    assert meter.to_frame()["tokens_in"].tolist() == [m.counts["tokens_in"]]


def test_the_runs_bootstrap_settings_reach_the_metrics(tmp_path):
    with_ci = run(_cheap_config(tmp_path / "a.sqlite", n_boot=200, confidence=0.9), progress=False).metrics
    auroc = with_ci[with_ci["metric"] == "auroc"]
    assert auroc["value_lo"].notna().all() and (auroc["value_lo"] <= auroc["value"] + 1e-12).all()
    without = run(_cheap_config(tmp_path / "b.sqlite", n_boot=0), progress=False).metrics
    assert without["value_lo"].isna().all() and without["change_lo"].isna().all()
    narrower = run(_cheap_config(tmp_path / "c.sqlite", n_boot=200, confidence=0.5), progress=False).metrics
    narrow = narrower[narrower["metric"] == "auroc"]
    width = lambda t: (t["value_hi"] - t["value_lo"]).to_numpy()  # noqa: E731
    assert (width(narrow) <= width(auroc) + 1e-12).all() and (width(narrow) < width(auroc)).any()
