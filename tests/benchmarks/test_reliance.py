"""Artifact Reliance Score (artifact-reliance paper §5.1): ~0 for a detector blind to formatting,
clearly positive for one that keys on line breaks, paired intervals, determinism, the store round trip."""

import textwrap

import numpy as np
import pandas as pd
import pytest

from humanize.validation import check_texts
from humanize.attacks.format import is_admissible
from humanize.benchmarks.audits.reliance import TABLE_COLUMNS, artifact_reliance
from humanize.benchmarks.audits.reliance_run import reliance_for_run
from humanize.detectors import get as get_detector
from humanize.detectors.base import Detector

SHARED = [
    "The committee met on Tuesday to review the budget.",
    "Nobody expected the results to arrive so early -- least of all the staff.",
    'She said "we will see" and left the room.',
    "Rain fell over the valley for three days.",
    "The bridge was closed while engineers inspected the cables.",
    "Prices rose again in the second quarter.",
    "A small crowd gathered outside the station.",
    "The report's authors declined to comment.",
]
MACHINE_ONLY = ["Furthermore, it is important to delve into the rich tapestry of factors.",
                "In conclusion, this multifaceted landscape underscores a pivotal shift."]
HUMAN_ONLY = ["Honestly I reckon the lads just got lucky.", "Me mum always said that about the weather."]


class NewlineRate(Detector):
    """Scores by the absence of line breaks: fewer breaks per character = more machine-like."""

    name = "newline_rate"

    def score(self, texts):
        texts = check_texts(texts, type(self).__name__, "score")
        return np.array([-t.count("\n") / max(len(t), 1) for t in texts], dtype=np.float64)


def _wrapped_vs_unwrapped(n_per_class: int = 40, seed: int = 1) -> pd.DataFrame:
    """Two domains; human texts line-wrapped, machine texts on one line, from one sentence pool
    (plus a few class-specific sentences so a bag of words has content to learn)."""
    rng = np.random.default_rng(seed)
    rows = []
    for domain in ("news", "essays"):
        for label, extra in (("human", HUMAN_ONLY), ("machine", MACHINE_ONLY)):
            for i in range(n_per_class):
                picks = [SHARED[j] for j in rng.choice(len(SHARED), size=5, replace=False)]
                text = " ".join([*picks, *extra])
                if label == "human":
                    text = textwrap.fill(text, width=int(rng.integers(50, 80)))
                rows.append({"id": f"{domain}-{label}-{i}", "domain": domain, "label": label, "generation": text})
    # valid edge cases: empty, whitespace-only, non-Latin and emoji texts (machine side: on the human
    # side their lack of line breaks would tie with every machine score at the threshold)
    for j, text in enumerate(["", "   ", "Привет, мир. 你好世界。", "ok 👍🏽 fine 🎉"]):
        rows.append({"id": f"edge-machine-{j}", "domain": "news", "label": "machine", "generation": text})
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def rows():
    return _wrapped_vs_unwrapped()


@pytest.fixture(scope="module")
def newline_result(rows):
    return artifact_reliance(NewlineRate(), rows, n_boot=300, seed=0)


def test_a_detector_that_keys_on_line_breaks_relies_on_the_artifact(newline_result):
    t = newline_result.table.set_index("subset")
    assert list(newline_result.table.columns) == list(TABLE_COLUMNS)
    assert set(t.index) == {"news", "essays", "overall"}
    for subset, r in t.iterrows():
        assert r["rec"] > 0.9  # unwrapped machine texts all look machine at FPR 5%
        assert r["flip_h"] > 0.6 and r["flip_m"] < 0.1, subset  # the human profile flips, the placebo does not
        assert r["flip"] == pytest.approx(r["flip_h"] - r["flip_m"])
        assert 0 < r["flip_lo"] <= r["flip"] <= r["flip_hi"], subset  # the paired interval excludes 0
        assert 0 < r["unc_lo"] <= r["unc"] <= r["unc_hi"]  # positive: the human profile moves toward human
    assert "FPR 0.05" in newline_result.threshold_rule and "score >" in newline_result.threshold_rule


def test_a_bag_of_words_detector_does_not(rows):
    res = artifact_reliance("tfidf_lr", rows, n_boot=200, seed=0)
    for _, r in res.table.iterrows():
        assert r["n_correct"] > 0.5 * r["n_machine"]  # it does detect the machine texts
        assert abs(r["flip"]) < 0.05 and r["flip_lo"] <= 0 <= r["flip_hi"]
        assert abs(r["unc"]) < 1e-6  # its tokens ignore whitespace, quotes and dashes


def test_every_variant_is_admissible_and_documents_hold_the_four_scores(newline_result, rows):
    docs = newline_result.documents
    n_machine = int((rows["label"] == "machine").sum())
    assert len(docs) == n_machine
    for col in ("strip_text", "cf_text", "pl_text"):
        assert all(is_admissible(o, t) for o, t in zip(docs["original"], docs[col]))
    assert {"s_orig", "s_strip", "s_cf", "s_pl", "threshold", "correct", "flip_h", "flip_m"} <= set(docs.columns)
    assert docs["cf_text"].str.contains("\n").mean() > 0.8  # the human profile wraps lines
    assert not docs["pl_text"].str.contains("\n").any()  # the machine profile (never wrapped) does not
    overall = newline_result.table.set_index("subset").loc["overall"]
    assert overall["n_admissible"] == 3 * n_machine


def test_same_seed_same_table_whatever_the_row_order(rows):
    a = artifact_reliance(NewlineRate(), rows, n_boot=100, seed=3, max_per_class=20)
    shuffled = rows.sample(frac=1.0, random_state=7).reset_index(drop=True)
    b = artifact_reliance(NewlineRate(), shuffled, n_boot=100, seed=3, max_per_class=20)
    pd.testing.assert_frame_equal(a.table, b.table)
    assert a.table["n_machine"].tolist() == [20, 20, 40]  # essays, news, overall
    c = artifact_reliance(NewlineRate(), rows, n_boot=100, seed=4, max_per_class=20)
    assert not c.documents["id"].sort_values().tolist() == a.documents["id"].sort_values().tolist()


def test_threshold_rules(rows):
    fixed = artifact_reliance(NewlineRate(), rows, threshold=-0.005, n_boot=0)
    assert (fixed.table["threshold"] == -0.005).all() and "fixed threshold -0.005" in fixed.threshold_rule
    assert fixed.table["flip_lo"].isna().all()  # n_boot=0: no intervals
    per = artifact_reliance(NewlineRate(), rows, per_domain=True, n_boot=0).table.set_index("subset")
    assert np.isnan(per.loc["overall", "threshold"]) and np.isfinite(per.loc["news", "threshold"])
    assert "per subset" in per.loc["news", "threshold_rule"]
    one = artifact_reliance(NewlineRate(), rows, by=(), n_boot=0).table
    assert one["subset"].tolist() == ["overall"]
    single = artifact_reliance(NewlineRate(), rows, by=(), per_domain=True, n_boot=0).table
    assert single["threshold"].tolist() == [one["threshold"].iloc[0]]


def test_learnable_detectors_are_fitted_on_a_copy(rows):
    det = get_detector("surface_probe", features=["r_newline"])
    res = artifact_reliance(det, rows, n_boot=100)
    assert not hasattr(det, "model_")  # the caller's detector is untouched
    assert res.table["n_machine"].iloc[-1] < (rows["label"] == "machine").sum()  # evaluated on the other half
    assert res.table["flip"].iloc[-1] > 0.3 and res.table["flip_lo"].iloc[-1] > 0
    on_all = artifact_reliance(det, rows, fit_rows=rows, n_boot=0)
    assert on_all.table["n_machine"].iloc[-1] == (rows["label"] == "machine").sum()


def test_bad_input_is_a_clear_error(rows):
    with pytest.raises(ValueError, match="subset 'essays' has only machine"):
        artifact_reliance(NewlineRate(), rows[(rows["domain"] == "news") | (rows["label"] == "machine")], n_boot=0)
    with pytest.raises(TypeError, match="detector must be a Detector"):
        artifact_reliance(object(), rows)
    with pytest.raises(ValueError, match="unknown detector 'nope'"):
        artifact_reliance("nope", rows)
    with pytest.raises(ValueError, match="fpr must be in"):
        artifact_reliance(NewlineRate(), rows, fpr=1.5)
    with pytest.raises(TypeError, match="threshold must be a number"):
        artifact_reliance(NewlineRate(), rows, threshold="high")
    with pytest.raises(ValueError, match="not learnable"):
        artifact_reliance(NewlineRate(), rows, fit_rows=rows)
    with pytest.raises(ValueError, match="lack column"):
        artifact_reliance(NewlineRate(), rows.drop(columns=["label"]))
    with pytest.raises(ValueError, match="by names column"):
        artifact_reliance(NewlineRate(), rows, by="generator")
    with pytest.raises(TypeError, match="DataFrame"):
        artifact_reliance(NewlineRate(), [("text", "human")])
    with pytest.raises(TypeError, match="must hold str texts"):
        artifact_reliance(NewlineRate(), rows.assign(generation=[None, *rows["generation"].iloc[1:]]))
    with pytest.raises(ValueError, match="max_per_class"):
        artifact_reliance(NewlineRate(), rows, max_per_class=0)


def test_store_round_trip_on_a_tiny_run(tmp_path):
    from humanize.benchmarks.runner.config import AttackSpec, DetectorSpec, RunConfig
    from humanize.benchmarks.runner import run
    from humanize.benchmarks.runner.store import ResultsStore

    db = tmp_path / "r.sqlite"
    cfg = RunConfig(n=40, attacks=[AttackSpec("upper_lower")], quality=False, n_boot=20, db=str(db),
                    detectors=[DetectorSpec("tfidf_lr"), DetectorSpec("surface_probe", {"features": "formatting"})])
    result = run(cfg, progress=False)
    res = reliance_for_run(db, n_boot=50)
    assert res.table["detector"].unique().tolist() == ["tfidf_lr", "surface_probe"]
    with ResultsStore(db, readonly=True) as store:
        stored = store.run_tables(result.run_id)["reliance"]
    pd.testing.assert_frame_equal(stored, res.table, check_dtype=False)
    t = res.table.set_index(["detector", "subset"])
    assert t.loc[("tfidf_lr", "overall"), "flip"] == 0  # on the demo set: words only
    assert t.loc[("surface_probe", "overall"), "flip"] > 0.2  # the demo's machine line breaks
    again = reliance_for_run(db, result.run_id, ["tfidf_lr"], n_boot=50, store_table=False)
    pd.testing.assert_frame_equal(again.table, res.table[res.table["detector"] == "tfidf_lr"])
    # the run's stored scores of its test texts are reused, and they are the detector's own scores
    from humanize.benchmarks.audits.reliance_run import _with_cached_scores
    from humanize.benchmarks.runner import sample_rows

    rows = sample_rows(cfg)
    test, train = rows[rows["split"] == "test"], rows[rows["split"] == "train"]
    cached = _with_cached_scores(get_detector("tfidf_lr"), db, test, train, result.run_id)
    assert len(cached.known) == len(test)
    texts = test["generation"].tolist()[:5]
    np.testing.assert_allclose(cached.score(texts), cached.detector.score(texts))
    with pytest.raises(LookupError, match="no finished run 'nope'"):
        reliance_for_run(db, "nope")
