"""RAID's protocol (humanize.benchmarks.evaluation.raid) against RAID's own evaluator.

``raid-bench`` (RAID's evaluator, ``raid.run_evaluation``) is a test dependency installed without its
dependencies (it pins numpy 1.26, pandas 2.2 and scikit-learn 1.3; scripts/setup.sh). Every fixture
is evaluated by both; thresholds, achieved FPRs, per-slice TPRs (tp, fn, accuracy) and AUROCs must
agree to 1e-9, and where RAID's evaluator raises, ours raises a one-line RaidEvaluationError.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from raid import run_evaluation

from humanize.benchmarks.evaluation.raid import (RaidEvaluationError, raid_evaluate, records_frame,
                                                 search_threshold)

TOL = 1e-9


def raid_frame(seed: int, n_src: int = 12, domains=("books", "news"), models=("gpt2", "mistral"),
               attacks=("none", "homoglyph", "synonym"), human_attacks: bool = True, shuffle: bool = True):
    """RAID-shaped rows: humans (clean and, with ``human_attacks``, attacked) and machine rows of every
    model x decoding x repetition penalty x attack, with scores higher for machine and lower when attacked."""
    rng = np.random.default_rng(seed)
    rows = []
    for d in domains:
        for s in range(n_src):
            for a in attacks:
                if a == "none" or human_attacks:
                    rows.append(dict(id=f"h-{d}-{s}-{a}", model="human", decoding=None, repetition_penalty=None,
                                     attack=a, domain=d))
            for m in models:
                for dec in ("greedy", "sampling"):
                    for rp in ("yes", "no"):
                        for a in attacks:
                            rows.append(dict(id=f"m-{d}-{s}-{m}-{dec}-{rp}-{a}", model=m, decoding=dec,
                                             repetition_penalty=rp, attack=a, domain=d))
    df = pd.DataFrame(rows)
    score = rng.normal(np.where(df["model"] == "human", 0.0, 0.9) - np.where(df["attack"] != "none", 0.4, 0.0), 1.0)
    df["score"] = score
    if shuffle:
        df = df.sample(frac=1.0, random_state=seed).reset_index(drop=True)
    return df


def predictions(df, scores=None):
    scores = df["score"] if scores is None else scores
    return [{"id": i, "score": (None if s is None or (isinstance(s, float) and math.isnan(s)) else float(s))}
            for i, s in zip(df["id"], scores)]


def assert_same(theirs: dict, ours: dict):
    assert list(theirs) == ["scores", "thresholds", "fpr"] == list(ours)
    assert list(theirs["thresholds"]) == list(ours["thresholds"])
    for key, t in theirs["thresholds"].items():
        o = ours["thresholds"][key]
        if isinstance(t, dict):
            assert list(t) == list(o)
            for d in t:
                assert o[d] == pytest.approx(t[d], abs=TOL), (key, d)
                assert ours["fpr"][key][d] == pytest.approx(theirs["fpr"][key][d], abs=TOL), (key, d)
        else:
            assert o == pytest.approx(t, abs=TOL)
            assert ours["fpr"][key] == pytest.approx(theirs["fpr"][key], abs=TOL)
    assert len(theirs["scores"]) == len(ours["scores"])
    for t, o in zip(theirs["scores"], ours["scores"]):
        assert list(t) == list(o)
        assert {k: t[k] for k in ("domain", "model", "decoding", "repetition_penalty", "attack")} == \
               {k: o[k] for k in ("domain", "model", "decoding", "repetition_penalty", "attack")}
        assert o["auroc"] == pytest.approx(t["auroc"], abs=TOL), t
        assert list(t["accuracy"]) == list(o["accuracy"])
        for key, acc in t["accuracy"].items():
            if acc is None:
                assert o["accuracy"][key] is None, (t, o)
                continue
            assert o["accuracy"][key]["tp"] == acc["tp"] and o["accuracy"][key]["fn"] == acc["fn"], (t, o)
            assert o["accuracy"][key]["accuracy"] == pytest.approx(acc["accuracy"], abs=TOL)


def both(df, preds, **kw):
    """(RAID's result or its exception, ours or our exception)."""
    raid_kw = dict(kw)
    if "per_domain" in raid_kw:
        raid_kw["per_domain_tuning"] = raid_kw.pop("per_domain")
    out = []
    for fn, kws in ((run_evaluation, raid_kw), (raid_evaluate, kw)):
        try:
            out.append(fn(preds, df.drop(columns=["score"]), **kws))
        except Exception as err:  # noqa: BLE001 - compared below
            out.append(err)
    return out


def check(df, preds, **kw):
    theirs, ours = both(df, preds, **kw)
    if isinstance(theirs, Exception):
        assert isinstance(ours, RaidEvaluationError), (theirs, ours)
        assert "\n" not in str(ours)
        return None
    assert not isinstance(ours, Exception), ours
    assert_same(theirs, ours)
    return ours


SETTINGS = [dict(per_domain=p, require_complete=r) for p in (True, False) for r in (True, False)]


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: f"domain={s['per_domain']},complete={s['require_complete']}")
@pytest.mark.parametrize("seed", [0, 1])
def test_parity_on_raid_shaped_frames(seed, setting):
    df = raid_frame(seed)
    ours = check(df, predictions(df), target_fpr=[0.05, 0.01], **setting)
    assert ours is not None and len(ours["scores"]) == 3 * 4 * 3 * 3 * 3  # (2 domains + all) x ... x (2 + all)


@pytest.mark.parametrize("kind", ["ties", "quantized01", "logits", "probabilities", "tiny_spread"])
def test_parity_on_nasty_scores(kind):
    df = raid_frame(3)
    s = df["score"].to_numpy()
    s = {"ties": np.round(s, 1), "quantized01": (s > 0.5).astype(float), "logits": s * 40.0,
         "probabilities": 1 / (1 + np.exp(-s)), "tiny_spread": 0.5 + s * 1e-7}[kind]
    for per_domain in (True, False):
        check(df, predictions(df, s), target_fpr=[0.05, 0.01], per_domain=per_domain)


def test_a_constant_detector_fails_in_both_with_one_line_naming_the_domain():
    df = raid_frame(4)
    theirs, ours = both(df, predictions(df, np.full(len(df), 0.7)), target_fpr=0.05)
    assert isinstance(theirs, Exception) and isinstance(ours, RaidEvaluationError)
    assert "domain" in str(ours) and "\n" not in str(ours)


@pytest.mark.parametrize("setting", SETTINGS, ids=str)
def test_parity_with_missing_and_nan_scores(setting):
    df = raid_frame(5, domains=("abstracts", "books", "news"))
    s = df["score"].to_numpy().copy()
    s[df.index[(df["model"] == "gpt2") & (df["attack"] == "synonym")][:3]] = np.nan  # a few machine rows
    s[df.index[(df["model"] == "human") & (df["domain"] == "books") & (df["attack"] == "homoglyph")][:1]] = np.nan
    preds = predictions(df, s)
    gone = "m-news-0-mistral-greedy-yes-homoglyph"
    preds = [p for p in preds if p["id"] != gone]  # a row without any prediction
    ours = check(df, preds, target_fpr=[0.05, 0.01], **setting)
    assert ours is not None
    if setting["require_complete"]:
        # books has a null human score: none of its slices, and no "all"-domain slice
        assert {r["domain"] for r in ours["scores"]} == {"abstracts", "news"}
        news = [r for r in ours["scores"] if r["domain"] == "news"]
        holds_gone = [r for r in news if r["model"] in ("mistral", "all") and r["attack"] in ("homoglyph", "all")
                      and r["decoding"] in ("greedy", "all") and r["repetition_penalty"] in ("yes", "all")]
        assert news and not holds_gone


def test_a_domain_without_clean_human_rows_fails_in_both_naming_it():
    df = raid_frame(6)
    df = df[~((df["domain"] == "news") & (df["model"] == "human") & (df["attack"] == "none"))]
    theirs, ours = both(df, predictions(df), target_fpr=0.05)
    assert isinstance(theirs, Exception) and isinstance(ours, RaidEvaluationError)
    assert "'news'" in str(ours) and "\n" not in str(ours)
    # a global threshold does not need it
    check(df, predictions(df), target_fpr=0.05, per_domain=False)


def test_missed_targets_are_null_in_their_domain_and_in_all():
    """Few humans per domain (RAID's FPR granularity): the search misses 1% and RAID nulls the figure."""
    df = raid_frame(7, n_src=6, human_attacks=False)
    ours = check(df, predictions(df), target_fpr=[0.05, 0.01])
    missed = [r for r in ours["scores"] if r["accuracy"]["0.01"] is None]
    assert missed and all(r["accuracy"]["0.01"] is None for r in ours["scores"] if r["domain"] == "all")


def test_row_order_changes_only_the_record_order():
    df = raid_frame(8, shuffle=False)
    a = check(df, predictions(df), target_fpr=0.05)
    b = check(df.iloc[::-1].reset_index(drop=True), predictions(df.iloc[::-1]), target_fpr=0.05)
    pa, pb = records_frame(a), records_frame(b)
    key = ["domain", "model", "decoding", "repetition_penalty", "attack"]
    pa, pb = pa.sort_values(key).reset_index(drop=True), pb.sort_values(key).reset_index(drop=True)
    pd.testing.assert_series_equal(pa["auroc"], pb["auroc"], atol=1e-12)


def test_auroc_of_an_attack_uses_every_human_of_the_domain_attacked_ones_included():
    """The definition that moves RAID's AUROC away from ours: attacked human rows enter the reference."""
    df = raid_frame(9, domains=("news",), models=("gpt2",), attacks=("none", "homoglyph"))
    res = raid_evaluate(predictions(df), df.drop(columns=["score"]), 0.05)
    rec = next(r for r in res["scores"] if r["domain"] == "news" and r["attack"] == "homoglyph"
               and r["model"] == "all" and r["decoding"] == "all" and r["repetition_penalty"] == "all")
    from sklearn.metrics import roc_auc_score

    m = df[(df["model"] != "human") & (df["attack"] == "homoglyph")]["score"]
    h_all = df[df["model"] == "human"]["score"]
    h_clean = df[(df["model"] == "human") & (df["attack"] == "none")]["score"]
    every = roc_auc_score(np.r_[np.ones(len(m)), np.zeros(len(h_all))], np.r_[m, h_all])
    clean_only = roc_auc_score(np.r_[np.ones(len(m)), np.zeros(len(h_clean))], np.r_[m, h_clean])
    assert rec["auroc"] == pytest.approx(every, abs=1e-12)
    assert abs(every - clean_only) > 1e-3


def test_search_threshold_uses_greater_or_equal_and_reports_the_achieved_fpr():
    h = np.arange(100, dtype=float) / 100
    t, fpr = search_threshold(h, 0.05)
    assert fpr == pytest.approx(np.mean(h >= t))
    assert abs(fpr - 0.05) <= 0.0005
    # RAID's steps start at 0.5: on scores spread over [0, 99] the search cannot get there in 50 steps
    t, fpr = search_threshold(h * 100, 0.05)
    assert fpr == pytest.approx(np.mean(h * 100 >= t)) and abs(fpr - 0.05) > 0.0005


@pytest.mark.parametrize("bad, what", [
    ([{"id": "x", "score": "high"}], "not numbers"),
    ([{"id": "x", "score": 1.0}, {"id": "x", "score": 2.0}], "twice"),
    ([{"ident": "x"}], "lack"),
])
def test_bad_predictions_get_one_line(bad, what):
    df = raid_frame(10)
    with pytest.raises(RaidEvaluationError, match=what) as err:
        raid_evaluate(bad, df.drop(columns=["score"]))
    assert "\n" not in str(err.value)


def test_bad_target_fpr():
    df = raid_frame(10)
    with pytest.raises(RaidEvaluationError, match="target FPR"):
        raid_evaluate(predictions(df), df.drop(columns=["score"]), target_fpr=5)


def test_evaluate_with_protocol_raid_gives_raids_headline_per_attack():
    from humanize.benchmarks.evaluation import evaluate

    df = raid_frame(11)
    theirs = run_evaluation(predictions(df), df.drop(columns=["score"]), target_fpr=[0.05, 0.01])
    tidy = df.assign(label=np.where(df["model"] == "human", "human", "machine"), detector="d")
    ours = evaluate(tidy, [0.05, 0.01], protocol="raid")
    assert ours.attrs["protocol"] == "raid" and set(ours["metric"]) == {"auroc", "tpr"}
    ours_default = evaluate(tidy, [0.05, 0.01], n_boot=0)
    assert ours_default.attrs["protocol"] == "humanize"
    for rec in theirs["scores"]:
        if rec["domain"] == rec["model"] == rec["decoding"] == rec["repetition_penalty"] == "all" \
                and rec["attack"] != "all":
            rows = ours[ours["attack"] == rec["attack"]]
            assert rows[rows["metric"] == "auroc"]["value"].iloc[0] == pytest.approx(rec["auroc"], abs=TOL)
            for key, acc in rec["accuracy"].items():
                got = rows[(rows["metric"] == "tpr") & (rows["fpr"] == float(key))].iloc[0]
                assert (acc is None) == (not got["reached"])
                if acc is not None:
                    assert got["value"] == pytest.approx(acc["accuracy"], abs=TOL)
            # the definitions differ: RAID's AUROC for an attack also counts the attacked human rows
            if rec["attack"] != "none":
                mine = ours_default[(ours_default["attack"] == rec["attack"]) & (ours_default["metric"] == "auroc")]
                assert abs(mine["value"].iloc[0] - rec["auroc"]) > 1e-3
    with pytest.raises(ValueError, match="protocol"):
        evaluate(tidy, protocol="RAID!")


def test_protocol_raid_auroc_intervals_cover_the_value_and_are_seeded():
    from humanize.benchmarks.evaluation import evaluate

    df = raid_frame(12)
    tidy = df.assign(label=np.where(df["model"] == "human", "human", "machine"), detector="d")
    a = evaluate(tidy, [0.05], protocol="raid", n_boot=200, seed=1)
    b = evaluate(tidy.sample(frac=1.0, random_state=3), [0.05], protocol="raid", n_boot=200, seed=1)
    auc = a[a["metric"] == "auroc"]
    assert (auc["value_lo"] <= auc["value"]).all() and (auc["value"] <= auc["value_hi"]).all()
    assert (auc["value_hi"] - auc["value_lo"] > 0.01).all()
    assert a[a["metric"] == "tpr"]["value_lo"].isna().all()  # RAID's search is not refit per replicate
    pd.testing.assert_frame_equal(a, b)  # row order does not matter, the seed does
    c = evaluate(tidy, [0.05], protocol="raid", n_boot=200, seed=2)
    assert not np.allclose(c[c["metric"] == "auroc"]["value_lo"], auc["value_lo"])
