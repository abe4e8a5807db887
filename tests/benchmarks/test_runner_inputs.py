"""The runner's entry: any int seed, configured impose_format and pipeline attacks, bad
filters as ConfigErrors before any work."""

import pandas as pd
import pytest

from humanize.benchmarks.runner.config import AttackSpec, DetectorSpec, RunConfig
from humanize.benchmarks.runner import run, sample_rows
from humanize.exceptions import ConfigError


def _cfg(db, **kw):
    base = dict(n=8, seed=3, db=str(db), quality=False, attacks=[AttackSpec("upper_lower")],
                detectors=[DetectorSpec("surface_probe")])
    base.update(kw)
    return RunConfig(**base)


@pytest.mark.parametrize("seed", [-1, 2**32, 2**70])
def test_any_int_seed_runs_and_is_reproducible(seed, tmp_path):
    cfg = _cfg(tmp_path / "r.sqlite", seed=seed)
    a = sample_rows(cfg)
    pd.testing.assert_frame_equal(a, sample_rows(cfg))
    result = run(cfg, progress=False)
    assert set(result.metrics["attack"]) == {"none", "upper_lower"}


def test_a_non_int_seed_is_rejected_before_any_work(tmp_path):
    with pytest.raises(ConfigError, match=r"seed must be an int"):
        run(_cfg(tmp_path / "r.sqlite", seed="a"), progress=False)
    assert not (tmp_path / "r.sqlite").exists()


def test_an_unknown_filter_value_is_a_config_error_and_writes_nothing(tmp_path):
    with pytest.raises(ConfigError, match=r"unknown demo domain 'news'"):
        run(_cfg(tmp_path / "r.sqlite", filters={"domain": "news"}), progress=False)
    with pytest.raises(ConfigError, match=r"takes no filter"):
        run(_cfg(tmp_path / "r2.sqlite", filters={"domian": "xsum"}), progress=False)


def test_configured_pipeline_and_impose_format_run_end_to_end(tmp_path):
    attacks = [
        AttackSpec("pipeline", {"attacks": [{"name": "homoglyph", "rate": 0.5}, "whitespace"]}),
        AttackSpec("impose_format", {"profile": {"fit": "demo", "label": "human"}}, label="human_format"),
        AttackSpec("upper_lower", rates=[0.1, 0.3]),
    ]
    cfg = _cfg(tmp_path / "r.sqlite", attacks=attacks)
    first = run(cfg, progress=False)
    assert set(first.metrics["attack"]) == {"none", "homoglyph@0.5+whitespace", "human_format", "upper_lower@0.1",
                                            "upper_lower@0.3"}
    cost = first.tables["cost"]
    assert cost.loc[cost["attack"] == "homoglyph@0.5+whitespace", "rate"].isna().all()  # no θ of its own
    second = run(cfg, progress=False)
    assert second.work["attacked"] == 0 and second.work["scored"] == 0
    pd.testing.assert_frame_equal(first.metrics, second.metrics)
