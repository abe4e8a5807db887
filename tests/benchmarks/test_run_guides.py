"""Guide with detector A, evaluate on A, B, C in one run (issue #23 §4): a guide that is one of the run's
detectors is the run's own (one build, one fit on the train split, no test text in it), and the report marks
which detector guided each attack."""
from __future__ import annotations

import pytest

from humanize.benchmarks.reporting.report import build_report
from humanize.benchmarks.runner import run, sample_rows
from humanize.benchmarks.runner.context import attack_plans, run_targets
from humanize.benchmarks.runner.attack_spec import guide_label, share_run_guides
from humanize.benchmarks.runner.config import AttackSpec, DetectorSpec, RunConfig
from humanize.detectors.tfidf import TfidfLogReg
from humanize.generation import Generation, Generator


class Hedging(Generator):
    """A chat generator whose answer is the chunk behind ``seed % 3`` hedges: candidates the guide tells apart."""

    name = "hedging"

    def generate(self, requests):
        out = []
        for r in requests:
            chunk = r.messages[-1][1].split("\n\n", 1)[1]
            out.append(Generation("Honestly, " * (r.seed % 3) + chunk, 10, 5))
        return out


def _cfg(db, guide, **attack):
    spec = AttackSpec("adversarial_paraphrase", {"paraphraser": Hedging(), "guide": guide, "mode": "rerank",
                                                 "n_candidates": 2, **attack})
    return RunConfig(n=12, seed=3, db=str(db), n_boot=0, quality=False, per_domain=False, attacks=[spec],
                     detectors=[DetectorSpec("tfidf_lr"), DetectorSpec("surface_probe")])


def test_a_guide_naming_a_run_detector_is_fit_once_on_the_train_split_and_marked(tmp_path, monkeypatch):
    fits = []
    real_fit = TfidfLogReg.fit
    monkeypatch.setattr(TfidfLogReg, "fit", lambda self, t, y: fits.append(list(t)) or real_fit(self, t, y))
    cfg = _cfg(tmp_path / "r.sqlite", "tfidf_lr").validate()
    assert cfg.attacks[0].params["guide"] == {"run_detector": "tfidf_lr"}  # the same spec: the run's detector
    rows = sample_rows(cfg)
    train, test = rows[rows["split"] == "train"], rows[rows["split"] == "test"]
    targets = run_targets(cfg, train)
    (plan,) = attack_plans(cfg, targets)
    attack = plan.attack
    assert attack.guide is targets["tfidf_lr"]
    # fitted on exactly the run's train split: no text the run tests on
    assert sorted(fits[-1]) == sorted(train["generation"]) and not set(fits[-1]) & set(test["generation"])

    fits.clear()
    result = run(cfg, progress=False)
    assert len(fits) == 1  # the guide the attack queried is the detector that scored: one fit
    metrics = result.tables["metrics"]
    assert set(metrics.loc[metrics["attack"] == "adversarial_paraphrase", "guide"]) == {"tfidf_lr"}
    assert metrics.loc[metrics["attack"] == "none", "guide"].isna().all()
    assert set(result.tables["cost"]["guide"]) == {"tfidf_lr"}
    assert (result.tables["cost"]["detector_queries"] > 0).all()
    report = build_report(result.tables)
    table = report["guided_transfer_auroc"]
    assert list(table.columns) == ["guide", "surface_probe", "tfidf_lr"]
    row = table.loc["adversarial_paraphrase"]
    assert row["guide"] == "tfidf_lr" and row["tfidf_lr"].endswith("(guide)")
    assert "(guide)" not in row["surface_probe"] and "(guide)" not in table.loc["none", "tfidf_lr"]
    assert report["auroc"].loc[("adversarial_paraphrase", "tfidf_lr"), "guide"] == "tfidf_lr"
    assert "guided_transfer_tpr_at_fpr_0.05" in report


def test_a_guide_with_a_training_set_of_its_own_stays_the_attacks_own():
    dets = [DetectorSpec("tfidf_lr"), DetectorSpec("gltr")]
    for name, own in (("adversarial_paraphrase", {"guide": "tfidf_lr", "train": {"dataset": "demo", "n": 5}}),
                      ("adversarial_paraphrase", {"guide": "tfidf_lr", "train": "demo"}),
                      ("raft", {"target": "gltr", "target_train": "raid"}),
                      ("adversarial_paraphrase", {"guide": {"name": "gltr", "model": "x"}})):
        assert share_run_guides(name, own, dets) == own  # another fit, or another detector: not the run's
    assert share_run_guides("raft", {"target": "gltr"}, dets)["target"] == {"run_detector": "gltr"}  # RAFT's
    assert share_run_guides("adversarial_paraphrase", {"guide": {"name": "tfidf_lr"}}, dets)["guide"] == {
        "run_detector": "tfidf_lr"}
    # the runner reads which parameters are guides from the class's declaration, not from their names
    assert share_run_guides("homoglyph", {"target": "gltr"}, dets) == {"target": "gltr"}
    wrapped = share_run_guides("qpa", {"attack": {"name": "hmgc", "surrogate": {"name": "tfidf_lr"}}}, dets)
    assert wrapped["attack"]["surrogate"] == {"run_detector": "tfidf_lr"}
    target = object()
    assert guide_label({"name": "hmgc", "surrogate": target}, {"tfidf_lr": target}) == "tfidf_lr"
    assert guide_label({"name": "raft", "target": "gltr"}, {}) == "gltr (own)"
    assert guide_label({"name": "homoglyph"}, {}) is None


@pytest.mark.parametrize("train", [{"dataset": "demo", "n": 5}])
def test_the_report_names_an_own_guide_and_marks_no_run_detector(tmp_path, train):
    result = run(_cfg(tmp_path / "r.sqlite", "tfidf_lr", train=train), progress=False)
    table = build_report(result.tables)["guided_transfer_auroc"]
    row = table.loc["adversarial_paraphrase"]
    assert row["guide"] == "tfidf_lr (own)" and not any("(guide)" in str(v) for v in row.drop("guide"))
