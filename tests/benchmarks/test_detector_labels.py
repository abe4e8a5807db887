"""Two detectors of one class with different parameters are two report rows (issue #22): the default
label names the parameters when the name alone is shared; a label that is still shared is refused."""
import pytest

from humanize.benchmarks.runner import run
from humanize.benchmarks.runner.config import AttackSpec, DetectorSpec, RunConfig, config_from_dict
from humanize.exceptions import ConfigError


def _labels(cfg):
    return [d.base_label() for d in cfg.validate().detectors]


def test_default_labels_tell_apart_detectors_of_one_class():
    cfg = config_from_dict({"attacks": ["homoglyph"], "detectors": [
        "surface_probe", {"name": "surface_probe", "features": "formatting"}, "tfidf_lr",
        {"name": "tfidf_lr", "C": 0.5, "label": "lr_half"}]})
    assert _labels(cfg) == ["surface_probe", "surface_probe:features=formatting", "tfidf_lr", "lr_half"]
    lone = RunConfig(attacks=[AttackSpec("homoglyph")], detectors=[DetectorSpec("tfidf_lr", {"C": 0.5})])
    assert _labels(lone) == ["tfidf_lr"]  # a lone detector keeps its name, whatever its parameters
    assert "default_label" not in str(cfg.to_dict())  # derived, never part of the run's key


@pytest.mark.parametrize("detectors, label", [
    (["tfidf_lr", "tfidf_lr"], "tfidf_lr"),
    ([{"name": "tfidf_lr", "C": 2}, {"name": "tfidf_lr", "C": 2}], "tfidf_lr:C=2"),
    ([{"name": "tfidf_lr", "label": "x"}, {"name": "surface_probe", "label": "x"}], "x"),
])
def test_a_label_shared_after_disambiguation_is_a_config_error(detectors, label):
    cfg = config_from_dict({"attacks": ["homoglyph"], "detectors": detectors})
    with pytest.raises(ConfigError, match=f"^detector label '{label}' is configured twice"):
        cfg.validate()


def test_a_run_keeps_the_figures_of_both(tmp_path):
    cfg = RunConfig(n=8, seed=3, db=str(tmp_path / "r.sqlite"), quality=False, n_boot=0,
                    attacks=[AttackSpec("homoglyph")],
                    detectors=[DetectorSpec("tfidf_lr"), DetectorSpec("tfidf_lr", {"C": 0.01})])
    result = run(cfg, progress=False)
    scores = result.tables["scores"]
    assert set(result.metrics["detector"]) == {"tfidf_lr", "tfidf_lr:C=0.01"}
    a = scores[scores["detector"] == "tfidf_lr"]["score"].to_numpy()
    b = scores[scores["detector"] == "tfidf_lr:C=0.01"]["score"].to_numpy()
    assert len(a) == len(b) > 0 and (a != b).any()
    assert [d["label"] for d in result.manifest["detectors"]] == ["tfidf_lr", "tfidf_lr:C=0.01"]
