"""Protocols on constructed score sets whose answers are worked out by hand in the comments."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, f1_score, precision_score, recall_score
from sklearn.pipeline import make_pipeline

from humanize.benchmarks.evaluation import (
    Calibration,
    TPRAtFPR,
    ThresholdResult,
    adapted_detector_matrix,
    attack_success_rate,
    auroc,
    binary_metrics,
    calibrate,
    classification_at_fpr,
    evaluate,
    threshold_at_fpr,
    threshold_table,
    to_wide,
)
from humanize.benchmarks.evaluation._inputs import as_labels
from humanize.benchmarks.evaluation.bootstrap import percentile_interval, percentile_intervals

HUMAN_A = list(range(1, 21))  # domain A: 1..20
HUMAN_B = list(range(101, 121))  # domain B: 101..120


# ---------------------------------------------------------------- thresholds

def test_threshold_is_the_exact_empirical_quantile():
    # n = 20, fpr 5% -> k = 1 false positive allowed -> threshold = 2nd largest = 19
    t = threshold_at_fpr(HUMAN_A, 0.05)
    assert (t.threshold, t.n_false_positives, t.achieved_fpr, t.reached) == (19.0, 1, 0.05, True)
    # fpr 10% -> k = 2 -> 3rd largest = 18
    assert threshold_at_fpr(HUMAN_A, 0.10).threshold == 18.0
    assert not threshold_at_fpr(HUMAN_A, 0.05).underpowered  # 1/20 == 5%: resolvable
    # fpr 1% of 20 = 0.2 -> k = 0 -> threshold = max, nothing flagged whatever the target:
    # the sample cannot resolve 1%, so the calibration is underpowered, not reached
    t = threshold_at_fpr(HUMAN_A, 0.01)
    assert (t.threshold, t.achieved_fpr, t.reached, t.underpowered) == (20.0, 0.0, False, True)


def test_threshold_count_is_not_lost_to_float_rounding():
    # 0.29 * 100 == 28.999999999999996 in floating point; 29 false positives are allowed
    t = threshold_at_fpr(np.arange(100), 0.29)
    assert (t.n_false_positives, t.threshold) == (29, 70.0)


def test_ties_make_the_target_unreachable_and_say_so():
    # ten humans at 0, ten at 1: flagging 1 of 20 is impossible, only 0 or 10 of them
    t = threshold_at_fpr([0] * 10 + [1] * 10, 0.05)
    assert t.threshold == 1.0 and t.achieved_fpr == 0.0 and t.n_false_positives == 0
    assert t.reached is False
    # a loose enough tolerance accepts the shortfall of 1/20
    assert threshold_at_fpr([0] * 10 + [1] * 10, 0.05, tolerance=0.05).reached is True
    # the achieved FPR never exceeds the target, ties or not
    rng = np.random.default_rng(0)
    for _ in range(50):
        h = rng.integers(0, 5, size=rng.integers(1, 60))
        for fpr in (0.01, 0.05, 0.3):
            r = threshold_at_fpr(h, fpr)
            assert r.achieved_fpr <= fpr + 1e-12
            assert r.achieved_fpr == np.mean(h > r.threshold)


def test_threshold_predicts_strictly_above():
    t = threshold_at_fpr(HUMAN_A, 0.05)
    assert t.predict([19, 19.0001, 25]).tolist() == [False, True, True]


@pytest.mark.parametrize("fpr", [0, 1, -0.1, 1.5, float("nan")])
def test_bad_fpr_values(fpr):
    with pytest.raises(ValueError, match="fpr"):
        threshold_at_fpr(HUMAN_A, fpr)


@pytest.mark.parametrize("fpr", ["0.05", True, None])
def test_bad_fpr_types(fpr):
    with pytest.raises(TypeError, match="fpr"):
        threshold_at_fpr(HUMAN_A, fpr)


def test_no_human_scores_and_nan_scores_are_errors():
    with pytest.raises(ValueError, match="no human scores"):
        threshold_at_fpr([], 0.05)
    with pytest.raises(ValueError, match="NaN"):
        threshold_at_fpr([1.0, float("nan"), 3.0], 0.05)
    with pytest.raises(TypeError, match="real numbers"):
        threshold_at_fpr([1.0, "x"], 0.05)
    with pytest.raises(TypeError, match="sequence"):
        threshold_at_fpr("123", 0.05)


def test_per_domain_calibration():
    cal = calibrate(HUMAN_A + HUMAN_B, 0.05, ["A"] * 20 + ["B"] * 20)
    assert isinstance(cal, Calibration) and cal.per_domain
    assert {d: t.threshold for d, t in cal.thresholds.items()} == {"A": 19.0, "B": 119.0}
    assert cal.achieved_fpr == 2 / 40 and cal.reached
    assert cal.predict([19.5, 19.5, 125], ["A", "B", "B"]).tolist() == [True, False, True]
    with pytest.raises(ValueError, match=r"domain\(s\) \['C'\]"):
        cal.predict([1.0], ["C"])
    with pytest.raises(ValueError, match="pass the texts' domains"):
        cal.predict([1.0])
    # pooled: 40 humans, k = 2 -> 3rd largest = 118
    pooled = calibrate(HUMAN_A + HUMAN_B, 0.05, ["A"] * 20 + ["B"] * 20, per_domain=False)
    assert pooled.thresholds[None].threshold == 118.0


# ---------------------------------------------------------------- metrics

def test_auroc():
    assert auroc([0.1, 0.2, 0.8, 0.9], ["human", "human", "machine", "machine"]) == 1.0
    assert auroc([0.1, 0.2, 0.8, 0.9], [1, 1, 0, 0]) == 0.0
    assert auroc([0.5, 0.5, 0.5, 0.5], [0, 1, 0, 1]) == 0.5
    # 1 machine above 1 of 2 humans, tied with the other: (1 + 0.5) / 2
    assert auroc([0.2, 0.5, 0.5], [0, 0, 1]) == 0.75
    with pytest.raises(ValueError, match="no machine texts"):
        auroc([0.1, 0.2], ["human", "human"])
    with pytest.raises(ValueError, match="'bot'"):
        auroc([0.1, 0.2], ["human", "bot"])
    with pytest.raises(ValueError, match="allowed"):
        auroc([0.1, 0.2], [0, 2])
    with pytest.raises(ValueError, match="differ in length"):
        auroc([0.1, 0.2, 0.3], [0, 1])


def _per_domain_set():
    # machines: A [19.5, 25, 10] -> 2 of 3 above 19; B [118, 125] -> 1 of 2 above 119
    scores = HUMAN_A + HUMAN_B + [19.5, 25, 10, 118, 125]
    labels = [0] * 40 + [1] * 5
    domains = ["A"] * 20 + ["B"] * 20 + ["A", "A", "A", "B", "B"]
    return scores, labels, domains


def test_tpr_at_fpr_per_domain_and_pooled():
    scores, labels, domains = _per_domain_set()
    res = TPRAtFPR(fpr=0.05)(scores, labels, domains)
    assert res.value == pytest.approx(3 / 5) and res.reached and res.achieved_fpr == 0.05
    assert (res.n_machine, res.n_human) == (5, 40)
    # pooled threshold 118: only 125 is above it
    assert TPRAtFPR(fpr=0.05, per_domain=False)(scores, labels, domains).value == pytest.approx(1 / 5)


def test_tpr_is_nan_when_the_target_fpr_is_unreached():
    res = TPRAtFPR(fpr=0.05)([0] * 10 + [1] * 10 + [1, 2, 3], [0] * 20 + [1] * 3)
    assert res.reached is False and math.isnan(res.value)
    assert res.achieved_fpr == 0.0
    assert res.tpr_at_achieved_fpr == pytest.approx(2 / 3)  # 2 and 3 are > 1


def test_tpr_at_fpr_params_and_repr():
    m = TPRAtFPR(fpr=0.01, per_domain=False)
    assert m.get_params() == {"fpr": 0.01, "per_domain": False, "tolerance": 0.0005}
    assert repr(m) == "TPRAtFPR(fpr=0.01, per_domain=False, tolerance=0.0005)"
    with pytest.raises(ValueError, match="fpr"):
        TPRAtFPR(fpr=5)


def test_classification_at_fpr():
    # humans 1..20 (t = 19, 20 is a false positive), machines [19.5, 25, 10, 30]
    # TP 3, FN 1, FP 1, TN 19
    out = classification_at_fpr(HUMAN_A + [19.5, 25, 10, 30], [0] * 20 + [1] * 4, fpr=0.05)
    assert out["accuracy"] == pytest.approx(22 / 24)
    assert out["precision"] == pytest.approx(3 / 4)
    assert out["recall"] == pytest.approx(3 / 4)
    assert out["f1"] == pytest.approx(3 / 4)
    assert out["reached"] and out["achieved_fpr"] == 0.05
    tied = classification_at_fpr([0] * 10 + [1] * 10 + [2], [0] * 20 + [1], fpr=0.05)
    assert not tied["reached"] and math.isnan(tied["f1"])


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def test_binary_metrics_equals_scikit_learn_bit_for_bit():
    # counted from the confusion matrix; scikit-learn's scorers with zero_division=NaN are the reference
    rng = np.random.default_rng(0)
    cases = [([0, 0, 0], [0, 0, 0]), ([1, 1], [1, 1]), ([1, 1], [0, 0]), ([0, 0], [1, 1]), ([0], [1]), ([1], [0]),
             ([0, 1], [0, 0]), ([0, 1], [1, 1]), ([1, 0, 1], [0, 1, 0])]
    for _ in range(400):
        n = int(rng.integers(1, 60))
        y = rng.integers(0, 2, n) if rng.random() < 0.7 else np.full(n, int(rng.integers(0, 2)))
        p = rng.random(n) < rng.random() if rng.random() < 0.7 else np.full(n, bool(rng.integers(0, 2)))
        cases.append((y, p))
    for y, p in cases:
        y, p = np.asarray(y), np.asarray(p).astype(int)
        ref = {"accuracy": accuracy_score(y, p), "precision": precision_score(y, p, zero_division=np.nan),
               "recall": recall_score(y, p, zero_division=np.nan), "f1": f1_score(y, p, zero_division=np.nan)}
        got = binary_metrics(np.where(y == 1, "machine", "human"), p.astype(bool))
        assert got.keys() == ref.keys() and all(_same(got[k], float(ref[k])) for k in ref), (y, p, got, ref)
    # nothing flagged: precision undefined; no machine text: recall undefined; neither: F1 undefined too
    out = binary_metrics([0, 0, 1], [0, 0, 0])
    assert math.isnan(out["precision"]) and out["recall"] == 0.0 and out["f1"] == 0.0
    out = binary_metrics([0, 0], [0, 0])
    assert out["accuracy"] == 1.0 and all(math.isnan(out[k]) for k in ("precision", "recall", "f1"))


def test_binary_metrics_input_errors():
    with pytest.raises(ValueError, match="at least one text"):
        binary_metrics([], [])
    with pytest.raises(ValueError, match="differ in length"):
        binary_metrics([0, 1], [1])
    with pytest.raises(ValueError, match=r"labels\[1\] is 'bot'"):
        binary_metrics(["human", "bot"], [0, 1])
    with pytest.raises(ValueError, match="one-dimensional"):
        binary_metrics([0, 1], [[0, 1]])


def test_labels_are_checked_one_by_one_when_any_is_bad():
    # the vectorised path takes only valid label sets; any bad value is reported by position
    assert as_labels(np.array(["human", "machine"] * 3, dtype=object)).tolist() == [0, 1] * 3
    assert as_labels(pd.Series(["machine", "human"])).tolist() == [1, 0]
    assert as_labels(np.array([1.0, 0.0, -0.0])).tolist() == [1, 0, 0]
    assert as_labels(np.array([True, False])).tolist() == [1, 0]
    assert as_labels(["human", 1, 0.0]).tolist() == [0, 1, 0]
    for bad, where in (([0, 1, 2], 2), (["human"] * 5 + ["Human"], 5), ([0.0, np.nan], 1), ([[0], "human"], 0),
                       (np.array([0.5, 1.0]), 0)):
        with pytest.raises(ValueError, match=rf"labels\[{where}\] is"):
            as_labels(bad)


def test_percentile_intervals_match_one_at_a_time():
    rng = np.random.default_rng(1)
    reps = [rng.normal(size=50).round(1) for _ in range(6)]
    reps[1][3] = np.nan  # non-finite replicates are left out of that vector's interval
    reps[2][:] = np.nan  # no finite replicate: NaN interval
    reps[4][0] = np.inf
    for conf in (0.95, 0.5):
        got = percentile_intervals(reps, conf)
        want = [percentile_interval(r, conf) for r in reps]
        assert all(_same(a, c) and _same(b, d) for (a, b), (c, d) in zip(got, want)), (got, want)
    assert percentile_intervals([], 0.95) == []


def test_attack_success_rate():
    # detected before (> 4): items 0, 1, 2; after the attack items 0 and 2 are missed
    clean, attacked = [5, 6, 7, 1], [1, 6, 2, 9]
    assert attack_success_rate(clean, attacked, 4) == pytest.approx(2 / 3)
    t = ThresholdResult(4.0, 0.05, 0.05, True, 20, 1)
    assert attack_success_rate(clean, attacked, t) == pytest.approx(2 / 3)
    cal = calibrate(HUMAN_A + HUMAN_B, 0.05, ["A"] * 20 + ["B"] * 20)
    # A threshold 19, B 119: detected before: 25 (A), 125 (B); after: 25 -> 18 missed, 125 -> 130 kept
    assert attack_success_rate([25, 125, 3], [18, 130, 50], cal, ["A", "B", "A"]) == pytest.approx(1 / 2)
    assert math.isnan(attack_success_rate([1, 2], [1, 2], 4))  # nothing detected before: undefined
    with pytest.raises(ValueError, match="differ in length"):
        attack_success_rate([1, 2], [1], 4)
    with pytest.raises(TypeError, match="threshold"):
        attack_success_rate([1, 2], [1, 2], "4")


# ---------------------------------------------------------------- evaluate

def _scores_frame():
    rows = []
    for dom, hs in (("A", HUMAN_A), ("B", HUMAN_B)):
        rows += [dict(id=f"h{dom}{i}", label="human", domain=dom, attack="none", detector="d1", score=s)
                 for i, s in enumerate(hs)]
    machines = {"m1": ("A", 25, 15), "m2": ("A", 19.5, 30), "m3": ("A", 10, 5),
                "m4": ("B", 125, 130), "m5": ("B", 118, 110)}
    for mid, (dom, clean, attacked) in machines.items():
        rows.append(dict(id=mid, label="machine", domain=dom, attack="none", detector="d1", score=clean))
        rows.append(dict(id=mid, label="machine", domain=dom, attack="homoglyph", detector="d1", score=attacked))
    # a detector whose human scores tie: 10 at 0 and 10 at 1 in one domain
    rows += [dict(id=f"t{i}", label="human", domain="A", attack="none", detector="flat", score=float(i >= 10))
             for i in range(20)]
    rows += [dict(id=f"tm{i}", label="machine", domain="A", attack=a, detector="flat", score=2.0)
             for i in range(3) for a in ("none", "homoglyph")]
    return pd.DataFrame(rows)


def _pick(table, detector, attack, metric, fpr=None):
    sel = (table["detector"] == detector) & (table["attack"] == attack) & (table["metric"] == metric)
    sel &= table["fpr"].isna() if fpr is None else (table["fpr"] == fpr)
    (row,) = table[sel].to_dict("records")
    return row


def test_evaluate_hand_checked_figures():
    table = evaluate(_scores_frame(), fprs=(0.05, 0.01))
    # AUROC, clean: humans below each machine (ties 1/2): 20 + 19 + 9.5 + 40 + 37.5 = 126 of 5 * 40
    clean_auc = _pick(table, "d1", "none", "auroc")
    assert clean_auc["value"] == pytest.approx(126 / 200) and clean_auc["n_human"] == 40
    # attacked: 14.5 + 20 + 4.5 + 40 + 29.5 = 108.5
    att = _pick(table, "d1", "homoglyph", "auroc")
    assert att["value"] == pytest.approx(108.5 / 200)
    assert att["change"] == pytest.approx((108.5 - 126) / 200)
    # TPR at 5%: thresholds A 19, B 119; clean 25, 19.5, 125 detected; attacked 30, 130
    assert _pick(table, "d1", "none", "tpr", 0.05)["value"] == pytest.approx(0.6)
    tpr = _pick(table, "d1", "homoglyph", "tpr", 0.05)
    assert tpr["value"] == pytest.approx(0.4) and tpr["change"] == pytest.approx(-0.2)
    assert tpr["achieved_fpr"] == 0.05 and tpr["reached"]
    # ASR: detected before m1, m2, m4; m1 missed after -> 1/3; clean vs itself -> 0
    asr = _pick(table, "d1", "homoglyph", "asr", 0.05)
    assert asr["value"] == pytest.approx(1 / 3) and asr["n_pairs"] == 5
    assert _pick(table, "d1", "none", "asr", 0.05)["value"] == 0.0
    # TH-Bench figures at 5%, clean: TP 3, FN 2, FP 2 (20 and 120), TN 38
    assert _pick(table, "d1", "none", "accuracy", 0.05)["value"] == pytest.approx(41 / 45)
    assert _pick(table, "d1", "none", "precision", 0.05)["value"] == pytest.approx(3 / 5)
    assert _pick(table, "d1", "none", "f1", 0.05)["value"] == pytest.approx(3 / 5)
    # 1% of 20 humans per domain -> nothing flagged: thresholds 20 and 120; 25 and 125 detected
    # the 1% calibration is underpowered: no TPR is claimed, the figure at FPR 0 stays visible
    one = _pick(table, "d1", "none", "tpr", 0.01)
    assert math.isnan(one["value"]) and one["value_at_achieved_fpr"] == pytest.approx(0.4)
    assert one["achieved_fpr"] == 0.0 and not one["reached"] and one["underpowered"]
    assert not tpr["underpowered"]


def test_evaluate_reports_unreached_targets_instead_of_numbers():
    table = evaluate(_scores_frame(), fprs=(0.05,))
    row = _pick(table, "flat", "none", "tpr", 0.05)
    assert row["reached"] is False or row["reached"] == False  # noqa: E712 (numpy bool)
    assert math.isnan(row["value"]) and row["value_at_achieved_fpr"] == 1.0
    assert row["achieved_fpr"] == 0.0
    assert _pick(table, "flat", "none", "auroc")["value"] == 1.0  # AUROC needs no threshold


def test_evaluate_per_domain_false_uses_one_threshold():
    table = evaluate(_scores_frame(), fprs=(0.05,), per_domain=False)
    # pooled threshold over 40 humans: 118 -> clean: 125 only
    assert _pick(table, "d1", "none", "tpr", 0.05)["value"] == pytest.approx(1 / 5)


def test_evaluate_nan_policy_and_input_errors():
    df = _scores_frame()
    df.loc[0, "score"] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        evaluate(df)
    table = evaluate(df, nan_policy="omit")
    assert table.attrs["omitted_nan"] == {"d1": 1}
    assert _pick(table, "d1", "none", "auroc")["n_human"] == 39
    with pytest.raises(ValueError, match="nan_policy"):
        evaluate(df, nan_policy="ignore")
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['detector'\]"):
        evaluate(df.drop(columns="detector"))
    with pytest.raises(ValueError, match="duplicate rows"):
        evaluate(pd.concat([_scores_frame(), _scores_frame().iloc[:1]]))
    with pytest.raises(TypeError, match="DataFrame"):
        evaluate(df.to_dict())
    no_clean = _scores_frame()
    no_clean = no_clean[~((no_clean["label"] == "human") & (no_clean["detector"] == "d1"))]
    with pytest.raises(ValueError, match="no clean human scores"):
        evaluate(no_clean)


def test_evaluate_pairs_on_adv_source_id_like_raid():
    df = _scores_frame()
    df = df[df["detector"] == "d1"].copy()
    att = df["attack"] == "homoglyph"
    df["adv_source_id"] = df["id"]
    df.loc[att, "id"] = df.loc[att, "id"] + "-hg"  # RAID: attacked rows get new ids
    table = evaluate(df, fprs=(0.05,))
    assert _pick(table, "d1", "homoglyph", "asr", 0.05)["value"] == pytest.approx(1 / 3)


def test_evaluate_asr_pairs_every_clean_row_of_a_source():
    # d1 with adv_source_id; m1b is a second clean version of source m1 (score 30), m3 loses its clean row
    df = _scores_frame()
    df = df[df["detector"] == "d1"].copy()
    df["adv_source_id"] = df["id"]
    df = df[~((df["id"] == "m3") & (df["attack"] == "none"))]
    extra = dict(id="m1b", adv_source_id="m1", label="machine", domain="A", attack="none", detector="d1", score=30.0)
    df = pd.concat([df, pd.DataFrame([extra])], ignore_index=True)
    table = evaluate(df, fprs=(0.05,), n_boot=0)
    # homoglyph pairs: m1 x (25, 30), m2, m4, m5 (m3 has no clean row) -> 5; thresholds A 19, B 119;
    # detected before: m1 twice, m2, m4; missed after: m1 (15) twice -> 2 / 4
    asr = _pick(table, "d1", "homoglyph", "asr", 0.05)
    assert asr["value"] == 0.5 and asr["n_pairs"] == 5
    # clean vs clean: m1 and m1b each pair with both clean rows of m1 (4), m2, m4, m5 -> 7; none missed
    clean = _pick(table, "d1", "none", "asr", 0.05)
    assert clean["value"] == 0.0 and clean["n_pairs"] == 7
    # with one clean row per source (a lookup, not a merge) the pairs are those of test_evaluate_hand_checked_figures
    unique = evaluate(df[df["id"] != "m1b"], fprs=(0.05,), n_boot=0)
    assert _pick(unique, "d1", "homoglyph", "asr", 0.05)["n_pairs"] == 4
    assert _pick(unique, "d1", "homoglyph", "asr", 0.05)["value"] == pytest.approx(1 / 3)


def test_evaluate_by_extra_column_and_wide_layout():
    table = evaluate(_scores_frame(), fprs=(0.05,), by=("attack", "domain"))
    a = table[(table["detector"] == "d1") & (table["domain"] == "A") & (table["attack"] == "none")
              & (table["metric"] == "tpr")]
    assert a["value"].item() == pytest.approx(2 / 3) and a["n_human"].item() == 20
    wide = to_wide(evaluate(_scores_frame(), fprs=(0.05,)))
    row = wide[(wide["detector"] == "d1") & (wide["attack"] == "homoglyph")]
    assert row["tpr@0.05"].item() == pytest.approx(0.4)
    assert row["tpr@0.05 change"].item() == pytest.approx(-0.2)
    assert "auroc" in wide.columns and "asr@0.05" in wide.columns


def test_threshold_table():
    t = threshold_table(_scores_frame(), fprs=(0.05,))
    d1 = t[t["detector"] == "d1"].set_index("domain")
    assert d1.loc["A", "threshold"] == 19.0 and d1.loc["B", "threshold"] == 119.0
    flat = t[t["detector"] == "flat"].iloc[0]
    assert not flat["reached"] and flat["achieved_fpr"] == 0.0
    assert not flat["underpowered"]  # 20 humans resolve 5%: ties, not the sample size, are the problem
    one = threshold_table(_scores_frame(), fprs=(0.01,))
    assert one["underpowered"].all() and not one["reached"].any() and (one["n_human"] == 20).all()


# ---------------------------------------------------------------- adapted detectors

class BagOfWordsDetector:
    """A tiny learnable detector: word counts + logistic regression, score = P(machine)."""

    def __init__(self):
        self.pipeline = make_pipeline(CountVectorizer(token_pattern=r"\S+"), LogisticRegression(C=10.0))

    def fit(self, texts, labels):
        self.pipeline.fit(texts, labels)
        return self

    def score(self, texts):
        return self.pipeline.predict_proba(texts)[:, 1]


def _attacked_set(marker: str, numbers) -> pd.DataFrame:
    # humans and machines share every word but the machine marker ("delve", attacked variants)
    human = [f"i wrote this note n{k}" for k in numbers]
    machine = [f"i wrote this note n{k} {marker}" for k in numbers]
    return pd.DataFrame({"generation": human + machine, "label": ["human"] * len(human) + ["machine"] * len(machine)})


def test_adapted_detector_matrix():
    attacks = {"A": "dęlve", "B": "delvé"}
    train = {a: _attacked_set(m, range(0, 30)) for a, m in attacks.items()}
    evals = {a: _attacked_set(m, range(100, 130)) for a, m in attacks.items()}
    m = adapted_detector_matrix(BagOfWordsDetector, train, evals, fpr=0.05)
    assert list(m.index) == ["A", "B"] and list(m["auroc"].columns) == ["A", "B"]
    auc = m["auroc"]
    # trained on A, the A marker gives every machine text away; B's marker is an unseen word,
    # so on B every text gets the same score (the eval numbers are unseen too): AUROC 0.5
    assert auc.loc["A", "A"] == 1.0 and auc.loc["B", "B"] == 1.0
    assert auc.loc["A", "B"] == 0.5 and auc.loc["B", "A"] == 0.5
    # every eval human text looks alike to the model (same words, unseen numbers): their scores
    # tie, so no threshold flags exactly 5% of them; the TPR is reported missing, not invented
    assert not m["reached@0.05"].to_numpy().any()
    assert np.isnan(m["tpr@0.05"].to_numpy(dtype=float)).all()


class MachineOnlyWordScorer:
    """Learns the words seen only in machine texts; score = how many a text has + len(text)/1000."""

    def fit(self, texts, labels):
        words = [set(t.split()) for t in texts]
        machine = set().union(*(w for w, y in zip(words, labels) if y == 1))
        human = set().union(*(w for w, y in zip(words, labels) if y == 0))
        self.markers_ = machine - human
        return self

    def score(self, texts):
        return [sum(w in self.markers_ for w in t.split()) + len(t) / 1000 for t in texts]


def test_adapted_detector_matrix_with_a_constructed_scorer():
    def texts(marker, ks):
        human = ["i wrote this note " + "z" * k for k in ks]  # lengths 18 + k, all distinct
        return human + [h + " " + marker for h in human], [0] * len(ks) + [1] * len(ks)

    attacks = {"A": "dęlve", "B": "delvé"}
    m = adapted_detector_matrix(MachineOnlyWordScorer, {a: texts(w, range(30)) for a, w in attacks.items()},
                                {a: texts(w, range(100, 130)) for a, w in attacks.items()}, fpr=0.05)
    # diagonal: every machine text carries the learned marker (score >= 1 > any human's)
    assert m["auroc"].loc["A", "A"] == 1.0 and m["tpr@0.05"].loc["A", "A"] == 1.0
    # off-diagonal: scores are lengths/1000: humans 118..147, machines 124..153 (+6).
    # Pairs (human i, machine j): human higher when i > j + 6 (276 pairs), tied when i = j + 6 (24):
    # AUROC = (900 - 276 - 24 + 24 / 2) / 900 = 612 / 900
    assert m["auroc"].loc["A", "B"] == pytest.approx(612 / 900)
    # 5% of 30 humans -> k = 1 -> threshold = 2nd longest human (146); machines 147..153 pass: 7 of 30
    assert m["tpr@0.05"].loc["A", "B"] == pytest.approx(7 / 30) and m["reached@0.05"].loc["A", "B"]


def test_adapted_detector_matrix_input_errors():
    good = {"A": _attacked_set("x", range(5))}
    with pytest.raises(TypeError, match="callable"):
        adapted_detector_matrix(BagOfWordsDetector(), good, good)
    with pytest.raises(TypeError, match="no fit"):
        adapted_detector_matrix(lambda: object(), good, good)
    with pytest.raises(ValueError, match="text column"):
        adapted_detector_matrix(BagOfWordsDetector, {"A": pd.DataFrame({"x": [1]})}, good)
    only_human = {"A": (["a", "b"], ["human", "human"])}
    with pytest.raises(ValueError, match="both human and machine"):
        adapted_detector_matrix(BagOfWordsDetector, good, only_human)
