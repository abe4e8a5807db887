"""The runner hands an attack the detector it evaluates (issue #20 §4), takes detector objects
and datasets of the user's own (§1, §2)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from humanize.benchmarks import data as datasets
from humanize.benchmarks.runner.config import AttackSpec, DetectorSpec, RunConfig
from humanize.benchmarks.runner import run, sample_rows
from humanize.benchmarks.runner.context import attack_plans, detector_plans, run_targets
from humanize.detectors import FunctionDetector, Target
from humanize.detectors.tfidf import TfidfLogReg
from humanize.exceptions import ConfigError


@pytest.fixture
def hmgc_spec(smollm):
    """HMGC against the run's own tfidf_lr, ranking with the session's SmolLM2 (loaded once)."""
    return AttackSpec("hmgc", {"surrogate": {"run_detector": "tfidf_lr"}, "rate": 0.3, "lm": smollm})


def _cfg(db, hmgc, **kw):
    base = dict(n=12, seed=1, db=str(db), n_boot=0, quality=False, attacks=[hmgc],
                detectors=[DetectorSpec("tfidf_lr"), DetectorSpec("surface_probe")])
    return RunConfig(**{**base, **kw})


def test_the_attack_queries_the_very_detector_the_run_scores_with(tmp_path, hmgc_spec):
    cfg = _cfg(tmp_path / "r.sqlite", hmgc_spec).validate()
    rows = sample_rows(cfg)
    train = rows[rows["split"] == "train"]
    targets = run_targets(cfg, train)
    assert set(targets) == {"tfidf_lr"} and isinstance(targets["tfidf_lr"], Target) and targets["tfidf_lr"].fitted
    (plan,) = attack_plans(cfg, targets)
    attack = plan.attack
    assert attack.surrogate is targets["tfidf_lr"]
    jobs = {plan.label: plan.job for plan in detector_plans(cfg, train, targets)}
    assert jobs["tfidf_lr"].factory() is targets["tfidf_lr"].fitted_detector()  # shipped fitted, not refit
    assert jobs["surface_probe"].factory() is not None
    # the attack's key names the target: its detector and a digest of the run's train split
    prov = attack.provenance()["params"]["surrogate"]
    assert prov["detector"]["class"].endswith("TfidfLogReg") and prov["train"]["n"] == len(train)


def test_the_targeted_detector_is_fit_once_per_run_and_scores_as_if_untargeted(tmp_path, monkeypatch, hmgc_spec):
    fits = []
    real_fit = TfidfLogReg.fit
    monkeypatch.setattr(TfidfLogReg, "fit", lambda self, t, y: fits.append(len(t)) or real_fit(self, t, y))
    targeted = run(_cfg(tmp_path / "a.sqlite", hmgc_spec), progress=False)
    assert len(fits) == 1  # the surrogate the attack queried is the detector that scored
    plain = run(_cfg(tmp_path / "b.sqlite", AttackSpec("homoglyph")), progress=False)
    a, b = targeted.tables["scores"], plain.tables["scores"]
    clean = lambda t: t[(t["attack"] == "none") & (t["detector"] == "tfidf_lr")].sort_values("id")["score"].to_numpy()
    np.testing.assert_allclose(clean(a), clean(b))
    hmgc = targeted.tables["cost"]
    assert (hmgc[hmgc["attack"] == "hmgc"]["detector_queries"] > 0).all()


def test_a_target_naming_no_detector_of_the_run_is_a_config_error(tmp_path):
    cfg = _cfg(tmp_path / "r.sqlite", AttackSpec("raft", {"target": {"run_detector": "gltr"}, "llm": None}))
    with pytest.raises(ConfigError, match=r"attack 'raft' names \{run_detector = 'gltr'\}, which is no detector of "
                                          r"the run; configured: tfidf_lr, surface_probe"):
        cfg.validate()


# -- detector objects ----------------------------------------------------------------------------------
def ratio(texts):
    return [sum(c.isupper() for c in t) / max(len(t), 1) for t in texts]


def test_detector_objects_are_run_and_keyed_by_their_fingerprint(tmp_path):
    def cfg(version):
        return RunConfig(n=10, seed=2, db=str(tmp_path / "r.sqlite"), n_boot=0, quality=False,
                         attacks=[AttackSpec("upper_lower")],
                         detectors=[FunctionDetector(ratio, name="caps", fn_version=version)])
    first = run(cfg("1"), progress=False)
    assert set(first.tables["metrics"]["detector"]) == {"caps"}
    again = run(cfg("1"), progress=False)
    assert again.run_id == first.run_id and again.work["scored"] == 0  # same object: same run, nothing recomputed
    other = run(cfg("2"), progress=False)
    assert other.run_id != first.run_id and other.work["scored"] > 0
    entry = first.manifest["detectors"][0]
    assert entry["class"] == "humanize.detectors.function:FunctionDetector" and entry["label"] == "caps"


# -- datasets of the user's own ------------------------------------------------------------------------
def small_rows(n: int = 6) -> pd.DataFrame:
    """A loader outside the package: the demo's rows, cut down (RAID schema)."""
    rows = datasets.load_dataset("demo")
    clean = rows[rows["attack"].fillna("none") == "none"]
    return pd.concat([clean[clean["label"] == lab].sort_values("id").head(n) for lab in ("human", "machine")])


def not_rows():
    return [1, 2, 3]


def test_datasets_have_a_registry_and_import_paths(tmp_path):
    name = "tests.benchmarks.test_run_targets:small_rows"
    assert len(datasets.load_dataset(name, n=3)) == 6 and datasets.origin(name) == "import path"
    datasets.register("small_demo", small_rows)
    try:
        assert "small_demo" in datasets.available_datasets()
        assert datasets.origin("small_demo").startswith("registered at run time")
        result = run(RunConfig(dataset="small_demo", n=None, seed=0, db=str(tmp_path / "r.sqlite"), n_boot=0,
                               per_domain=False,
                               quality=False, attacks=[AttackSpec("homoglyph")], detectors=[DetectorSpec("surface_probe")]),
                     progress=False)
        assert result.manifest["dataset"]["name"] == "small_demo"
        assert sum(v for k, v in result.manifest["dataset"]["sample"].items() if k != "digest") == 12
    finally:
        datasets._LOADERS.pop("small_demo", None)
    with pytest.raises(TypeError, match="must return a pandas DataFrame"):
        datasets.load_dataset("tests.benchmarks.test_run_targets:not_rows")
    with pytest.raises(ConfigError, match="unknown dataset 'nope'"):
        RunConfig(dataset="nope", attacks=[AttackSpec("homoglyph")], detectors=[DetectorSpec("tfidf_lr")]).validate()
