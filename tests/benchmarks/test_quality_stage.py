"""The run's quality stage (issue #36): one quality meter per run, shipped to the quality job."""
from __future__ import annotations

import functools

from humanize.benchmarks.runner.config import AttackSpec, DetectorSpec, RunConfig
from humanize.benchmarks.runner.engine import run
from humanize.quality import QualityMeter


def test_a_run_builds_its_quality_meter_once(tmp_path, monkeypatch):
    built = []
    init = QualityMeter.__init__

    @functools.wraps(init)  # the signature the configuration's check reads
    def counting(self, *args, **kwargs):
        built.append(self)
        init(self, *args, **kwargs)

    monkeypatch.setattr(QualityMeter, "__init__", counting)
    monkeypatch.setattr(QualityMeter, "_param_names_cache", QualityMeter._param_tuple(), raising=False)
    cfg = RunConfig(n=8, seed=3, db=str(tmp_path / "r.sqlite"), quality=True, batch_size=2,
                    quality_params={"meters": ["rouge_l", "edit_rate"]},
                    attacks=[AttackSpec("homoglyph"), AttackSpec("zero_width_space")],
                    detectors=[DetectorSpec("surface_probe")])
    result = run(cfg, progress=False)
    assert result.work["quality"] > 2  # several batches of the quality stage
    # one: the meter that checks the configuration (RunConfig.validate_for_run) is the one the run uses: its
    # fingerprint keys the stored rows, it names its models to the model-sharing warning, and its job scores
    # every batch
    assert len(built) == 1
    assert {"rouge_l_read", "char_edit_rate_read", "changed_read"} <= set(result.tables["quality"].columns)
