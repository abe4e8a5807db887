"""Test-time defenses in runs (issue #12 §3): every scored text is defended and scored again by
the same detectors (learnable ones stay fit on the undefended train texts); the undefended rows
are exactly a run without defenses."""

import numpy as np
import pandas as pd
import pytest

from humanize import attacks, detectors
from humanize.benchmarks.runner.config import AttackSpec, DefenseSpec, DetectorSpec, RunConfig
from humanize.benchmarks.runner import run, sample_rows
from humanize.defenses import get as get_defense
from humanize.exceptions import ConfigError


def _config(db, defenses=(), **kw):
    return RunConfig(n=10, seed=3, db=str(db), n_boot=50, quality=False,
                     attacks=[AttackSpec("homoglyph"), AttackSpec("zero_width_space"), AttackSpec("whitespace")],
                     detectors=[DetectorSpec("tfidf_lr"), DetectorSpec("surface_probe")],
                     defenses=[DefenseSpec(d) if isinstance(d, str) else d for d in defenses], **kw)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("defense")
    plain = run(_config(tmp / "plain.sqlite"), progress=False)
    defended = run(_config(tmp / "defended.sqlite", ["normalize"]), progress=False)
    return plain, defended, _config(tmp / "defended.sqlite", ["normalize"])


def test_the_undefended_rows_are_exactly_a_run_without_defenses(runs):
    plain, defended, _ = runs
    assert set(plain.tables["scores"]["defense"]) == set(plain.metrics["defense"]) == {"none"}
    for name in ("scores", "metrics"):
        table = defended.tables[name]
        assert list(dict.fromkeys(table["defense"])) == ["none", "normalize"]
        none = table[table["defense"] == "none"].reset_index(drop=True)
        pd.testing.assert_frame_equal(none, plain.tables[name], obj=name)
    timed = ["wall_s", "cpu_s", "warmup_s", "peak_rss_mb"]
    pd.testing.assert_frame_equal(defended.tables["cost"].drop(columns=timed), plain.tables["cost"].drop(columns=timed))
    assert defended.work["fitted"] == 2  # once per learnable detector, not once per defense


def test_defended_attacked_texts_score_as_the_defended_clean_text_where_the_defense_undoes_the_attack(runs):
    _, defended, cfg = runs
    rows = sample_rows(cfg)
    machine = rows[(rows["split"] == "test") & (rows["label"] == "machine")].set_index("id")["generation"]
    normalize = get_defense("normalize")
    scores = defended.tables["scores"]
    scores = scores[scores["defense"] == "normalize"]
    clean = scores[(scores["attack"] == "none") & (scores["label"] == "machine")].set_index(["detector", "id"])
    undone = 0
    for name in ("homoglyph", "zero_width_space"):
        attack = attacks.get(name, seed=cfg.seed)
        for det, doc, score in scores[scores["attack"] == name][["detector", "id", "score"]].itertuples(index=False):
            original = machine[doc]
            assert attack(original) != original
            assert normalize(attack(original)) == normalize(original)  # the normalizer undoes the attack...
            assert score == clean.loc[(det, doc), "score"]  # ...so the detector sees the same text
            undone += 1
    assert undone == 2 * 2 * len(machine)
    metrics = defended.metrics
    auroc = metrics[(metrics["metric"] == "auroc") & (metrics["defense"] == "normalize")]
    by = auroc.groupby(["detector", "attack"])["value"].first()
    for det in ("tfidf_lr", "surface_probe"):
        assert by[(det, "homoglyph")] == by[(det, "zero_width_space")] == by[(det, "none")]


def test_learnable_detectors_stay_fit_on_the_undefended_train_texts(runs):
    _, defended, cfg = runs
    rows = sample_rows(cfg)
    train, test = rows[rows["split"] == "train"], rows[rows["split"] == "test"]
    detector = detectors.get("tfidf_lr").fit(train["generation"].tolist(), train["label"].tolist())
    normalize = get_defense("normalize")
    expected = detector.score([normalize(t) for t in test["generation"]])
    scores = defended.tables["scores"]
    got = scores[(scores["defense"] == "normalize") & (scores["attack"] == "none")
                 & (scores["detector"] == "tfidf_lr")].set_index("id").loc[test["id"], "score"]
    np.testing.assert_array_equal(got.to_numpy(), np.asarray(expected, dtype=float))


def test_defended_scores_are_cached_like_any_score(runs):
    _, defended, cfg = runs
    again = run(cfg, progress=False)
    assert again.work == {"attacked": 0, "scored": 0, "quality": 0, "fitted": 0}
    pd.testing.assert_frame_equal(again.metrics, defended.metrics)


def test_defense_configs_are_checked_before_any_work(tmp_path):
    with pytest.raises(ConfigError, match="unknown defense 'normalise'.*normalize"):
        _config(tmp_path / "r.sqlite", ["normalise"]).validate()
    with pytest.raises(ConfigError, match="defense 'normalize': .*homoglyphs"):
        _config(tmp_path / "r.sqlite", [DefenseSpec("normalize", {"homoglyphs": "yes"})]).validate()
    with pytest.raises(ConfigError, match="configured twice"):
        _config(tmp_path / "r.sqlite", ["normalize", DefenseSpec("normalize", {"quotes": False})]).validate()
    with pytest.raises(ConfigError, match="defenses must be a list"):
        RunConfig(defenses="normalize").validate()
