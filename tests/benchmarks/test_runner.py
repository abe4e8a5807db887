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

from humanize.benchmarks.config import AttackSpec, ConfigError, DetectorSpec, RunConfig, config_from_dict, load_config
from humanize.benchmarks.report import build_report, export_report
from humanize.benchmarks.runner import run, sample_rows
from humanize.benchmarks.store import ResultsStore


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
    acc = report["accuracy_at_fpr_0.05"]
    assert list(acc.index) == ["surface_probe", "tfidf_lr"]  # RAID Table 16: detectors x attacks
    assert list(acc.columns)[0] == "none"
    au = report["auroc"]  # TH-Bench Table 1: attacks x detectors
    assert au.index[0] == "none" and set(au.columns) == {"surface_probe", "tfidf_lr"}
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
    with pytest.raises(ConfigError, match="rate θ must be in"):
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
from humanize.benchmarks.config import AttackSpec, DetectorSpec, RunConfig
from humanize.benchmarks.runner import run
cfg = RunConfig(n=10, seed=1, db=sys.argv[1], quality=False, batch_size=1,
                attacks=[AttackSpec("upper_lower"), AttackSpec("article_deletion")],
                detectors=[DetectorSpec("log_likelihood"), DetectorSpec("tfidf_lr")])
run(cfg, progress=False)
"""


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
    exec(_KILL_SCRIPT.replace("run(cfg, progress=False)", ""), namespace)
    cfg = namespace["cfg"]
    cfg.db = killed_db
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
