"""benchmarks/bench_first_run.py's plumbing (issue #38), on a small run: the demo's own line of seconds per stage and
its warm-ups from the run's tables, and the fresh caches it points the install and the demo at. The benchmark
itself (a fresh clone, an install and two demos) is run by hand on an idle machine."""
from __future__ import annotations

import importlib.util
import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from humanize.benchmarks.runner.config import AttackSpec, DetectorSpec, RunConfig
from humanize.cli.demo import STAGE_SECONDS_PREFIX
from humanize.cli.main import main

ROOT = Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location("bench_first_run", ROOT / "benchmarks" / "bench_first_run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_stage_table_is_the_demos_own_seconds_and_warm_ups(tmp_path, capsys, monkeypatch):
    import humanize.benchmarks.runner.config as config

    def small_demo(n, seed, db, **_):  # the demo command's path, on an attack and a detector that load no model
        return RunConfig(dataset="demo", n=n, seed=seed, db=db, attacks=[AttackSpec("homoglyph")],
                         detectors=[DetectorSpec("surface_probe")], quality_params={"meters": ["rouge_l"]})

    monkeypatch.setattr(config, "demo_config", small_demo)
    assert main(["demo", "--n", "8", "--quiet", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    bench = _bench()
    assert bench.STAGE_PREFIX == STAGE_SECONDS_PREFIX
    assert out.rstrip().splitlines()[-1].startswith(STAGE_SECONDS_PREFIX)
    table = bench.stage_table(out, tmp_path / "demo.sqlite").set_index("stage")
    assert list(table.index) == ["attacks", "defenses", "scoring", "evaluation", "quality", "report"]
    assert (table["wall_s"] >= 0).all() and (table["cpu_s"] >= 0).all() and table.loc["report", "wall_s"] > 0
    from humanize.benchmarks.runner.store import ResultsStore

    with ResultsStore(str(tmp_path / "demo.sqlite"), readonly=True) as store:
        tables = store.run_tables()
    cost = pd.to_numeric(tables["cost"]["warmup_s"], errors="coerce").sum()
    assert table.loc["attacks", "warmup_s"] == pytest.approx(cost)
    assert table.loc["scoring", "warmup_s"] == pytest.approx(tables["detector_cost"]["warmup_s"].sum())
    assert math.isnan(table.loc["quality", "warmup_s"])
    assert table.loc["attacks", "wall_s without warm-up"] == pytest.approx(table.loc["attacks", "wall_s"] - cost)
    with pytest.raises(ValueError, match="stage seconds"):
        bench.stage_seconds("no such line\n")


def test_the_install_and_the_demo_share_one_set_of_fresh_caches(tmp_path):
    bench = _bench()
    env = bench.fresh_environment(tmp_path, ROOT)
    for name in ("HUMANIZE_CACHE", "HF_HOME", "NLTK_DATA", "HOME", "TORCHINDUCTOR_CACHE_DIR"):
        assert Path(env[name]).resolve().is_relative_to(tmp_path.resolve()), name
    assert "PYTHONPATH" not in env and "TMPDIR" not in env


def test_skip_install_needs_the_environment_to_reuse():
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_first_run.py"), "--skip-install"],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "--skip-install and --venv go together" in proc.stderr


@pytest.mark.slow
def test_a_cached_rerun_of_the_demo_loads_no_model_and_draws_no_figure(tmp_path, capsys, monkeypatch):
    # issue #38: a second run on the same machine reads every result back (under 20 s): counted, not timed
    import humanize.benchmarks.runner.config as config
    from humanize.benchmarks.reporting import _reuse
    from humanize.models import add_load_listener, clear_loaded, remove_load_listener

    def small_demo(n, seed, db, **_):  # the demo command's path, with a detector that loads SmolLM2
        return RunConfig(dataset="demo", n=n, seed=seed, db=db, attacks=[AttackSpec("homoglyph")],
                         detectors=[DetectorSpec("log_likelihood"), DetectorSpec("surface_probe")],
                         quality_params={"meters": ["rouge_l", "flesch"]})

    monkeypatch.setattr(config, "demo_config", small_demo)
    assert main(["demo", "--n", "8", "--quiet", "--out", str(tmp_path)]) == 0
    plots = str(tmp_path / "plots")
    drawn = _reuse.DRAWS[plots]
    clear_loaded()  # a new process: nothing loaded
    loads: list = []
    add_load_listener(loads.append)
    try:
        capsys.readouterr()
        assert main(["demo", "--n", "8", "--quiet", "--out", str(tmp_path)]) == 0
    finally:
        remove_load_listener(loads.append)
    out = capsys.readouterr().out
    assert "computed this time: {'attacked': 0, 'scored': 0, 'quality': 0, 'fitted': 0}" in out
    assert loads == [] and _reuse.DRAWS[plots] == drawn
