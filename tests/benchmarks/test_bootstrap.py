"""Bootstrap intervals of evaluate(): exactness of the weighted figures, coverage, pairing, determinism."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm
from sklearn.metrics import roc_auc_score

from humanize.benchmarks.evaluation import evaluate, threshold_at_fpr
from humanize.benchmarks.evaluation import bootstrap
from humanize.benchmarks.evaluation.bootstrap import stratified_counts, weighted_auroc, weighted_thresholds


def _frame(n_human=100, n_machine=100, shift=1.0, attacks=(), seed=0, domains=("A",), detector="d"):
    """Gaussian scores: humans N(0, 1), machines N(shift, 1); each attack lowers a machine's own
    clean score by 0.5 plus small noise (attacked rows correlate with their clean version)."""
    rng = np.random.default_rng(seed)
    rows = []
    for dom in domains:
        rows += [dict(id=f"h{dom}{i}", label="human", domain=dom, attack="none", detector=detector,
                      score=rng.normal()) for i in range(n_human)]
        for i in range(n_machine):
            clean = rng.normal(shift, 1.0)
            rows.append(dict(id=f"m{dom}{i}", label="machine", domain=dom, attack="none", detector=detector,
                             score=clean))
            rows += [dict(id=f"m{dom}{i}", label="machine", domain=dom, attack=a, detector=detector,
                          score=clean - 0.5 + 0.2 * rng.normal()) for a in attacks]
    return pd.DataFrame(rows)


def _row(table, attack, metric, fpr=None):
    sel = (table["attack"] == attack) & (table["metric"] == metric)
    sel &= table["fpr"].isna() if fpr is None else np.isclose(table["fpr"], fpr)
    (row,) = table[sel].to_dict("records")
    return row


# ---------------------------------------------------------------- exact weighted figures

def test_weighted_auroc_and_thresholds_match_sklearn_and_threshold_at_fpr_on_the_redrawn_sample():
    rng = np.random.default_rng(0)
    m = rng.integers(0, 6, 40).astype(float)  # many ties
    h = rng.integers(0, 6, 50).astype(float)
    w = stratified_counts(rng, np.zeros(40, int), 25)
    v = stratified_counts(rng, np.r_[np.zeros(20, int), np.ones(30, int)], 25)
    assert (w.sum(axis=1) == 40).all() and (v[:, :20].sum(axis=1) == 20).all()  # strata keep their sizes
    auc = weighted_auroc(m, w, h, v)
    for b in range(25):
        mm, hh = np.repeat(m, w[b].astype(int)), np.repeat(h, v[b].astype(int))
        ref = roc_auc_score(np.r_[np.ones(len(mm)), np.zeros(len(hh))], np.r_[mm, hh])
        assert auc[b] == pytest.approx(ref, abs=1e-12)
        for fpr in (0.05, 0.1, 0.3):
            assert weighted_thresholds(h, v, fpr)[b] == threshold_at_fpr(hh, fpr).threshold


def test_unit_weights_reproduce_every_point_estimate(monkeypatch):
    # with every document drawn exactly once, each replicate is the sample itself:
    # the interval collapses onto the point estimate, for every figure and every change
    monkeypatch.setattr(bootstrap, "stratified_counts", lambda rng, strata, n: np.ones((n, len(strata))))
    monkeypatch.setattr(bootstrap, "CHUNK_CELLS", 150)  # 2 replicates per chunk: the chunks must join up
    df = _frame(n_human=40, n_machine=30, attacks=("x", "y"), domains=("A", "B"))
    table = evaluate(df, fprs=(0.05, 0.1), n_boot=5)
    finite = table["value"].notna()
    assert finite.sum() > 30
    np.testing.assert_allclose(table.loc[finite, "value_lo"], table.loc[finite, "value"], atol=1e-12)
    np.testing.assert_allclose(table.loc[finite, "value_hi"], table.loc[finite, "value"], atol=1e-12)
    np.testing.assert_allclose(table.loc[finite, "change_lo"], table.loc[finite, "change"], atol=1e-12)


# ---------------------------------------------------------------- coverage

def test_95_percent_intervals_cover_the_true_auroc_and_tpr_in_about_95_percent_of_samples():
    shift, n, fpr, seeds = 1.0, 100, 0.1, 200
    true_auroc = norm.cdf(shift / math.sqrt(2))  # P(N(1,1) > N(0,1))
    true_tpr = 1 - norm.cdf(norm.ppf(1 - fpr) - shift)  # machines above the humans' 90% quantile
    covered_auroc = covered_tpr = 0
    for s in range(seeds):
        table = evaluate(_frame(n, n, shift, seed=1000 + s), fprs=(fpr,), n_boot=400, seed=s)
        a, t = _row(table, "none", "auroc"), _row(table, "none", "tpr", fpr)
        covered_auroc += a["value_lo"] <= true_auroc <= a["value_hi"]
        covered_tpr += t["value_lo"] <= true_tpr <= t["value_hi"]
    # binomial sd at 95% over 200 samples is 1.5 points: a too narrow (or too wide) interval fails
    assert 0.89 <= covered_auroc / seeds <= 0.985
    assert 0.89 <= covered_tpr / seeds <= 0.99


# ---------------------------------------------------------------- pairing

def test_paired_change_intervals_are_narrower_than_unpaired_on_correlated_data():
    df = _frame(n_human=150, n_machine=150, attacks=("x",), seed=3)
    paired = evaluate(df, fprs=(0.05,), n_boot=500, seed=1)
    unpaired = evaluate(df, fprs=(0.05,), n_boot=500, seed=1, paired=False)
    for metric, fpr in (("auroc", None), ("tpr", 0.05)):
        p, u = _row(paired, "x", metric, fpr), _row(unpaired, "x", metric, fpr)
        assert p["change"] == u["change"]  # same point estimate, only the interval differs
        assert p["change_lo"] <= p["change"] <= p["change_hi"]
        assert (p["change_hi"] - p["change_lo"]) < 0.6 * (u["change_hi"] - u["change_lo"])
    # every attacked machine text scores below its clean version: the paired change is surely negative
    assert _row(paired, "x", "auroc")["change_hi"] < 0
    # the clean rows' change is 0 with a degenerate interval (paired with themselves)
    clean = _row(paired, "none", "auroc")
    assert clean["change"] == clean["change_lo"] == clean["change_hi"] == 0.0


# ---------------------------------------------------------------- determinism

def test_intervals_are_seeded_order_free_and_leave_the_global_rng_alone():
    df = _frame(n_human=30, n_machine=30, attacks=("x",), domains=("A", "B"))
    cols = ["value_lo", "value_hi", "change_lo", "change_hi"]
    state = np.random.get_state()[1].copy()
    first = evaluate(df, n_boot=200, seed=7)
    assert (np.random.get_state()[1] == state).all()
    pd.testing.assert_frame_equal(first, evaluate(df, n_boot=200, seed=7))
    # shuffled rows, and another detector alongside: this detector's intervals do not move
    other = _frame(n_human=30, n_machine=30, attacks=("x",), domains=("A", "B"), detector="another", seed=5)
    mixed = pd.concat([df, other]).sample(frac=1.0, random_state=1)
    again = evaluate(mixed, n_boot=200, seed=7)
    pd.testing.assert_frame_equal(again[again["detector"] == "d"].reset_index(drop=True)[cols], first[cols])
    different = evaluate(df, n_boot=200, seed=8)
    assert not np.allclose(different["value_lo"].fillna(0), first["value_lo"].fillna(0))
    assert first.attrs["bootstrap"] == {"n_boot": 200, "confidence": 0.95, "seed": 7, "paired": True}


def test_no_intervals_with_n_boot_zero_and_bad_settings_are_named():
    df = _frame(n_human=20, n_machine=20)
    table = evaluate(df, n_boot=0)
    assert table[["value_lo", "value_hi", "change_lo", "change_hi"]].isna().all().all()
    for kwargs, err, match in (({"n_boot": -1}, ValueError, "n_boot"), ({"n_boot": 1}, ValueError, "n_boot"),
                               ({"n_boot": 2.5}, TypeError, "n_boot"), ({"confidence": 95}, ValueError,
                                                                        "confidence"),
                               ({"confidence": "0.95"}, TypeError, "confidence"),
                               ({"seed": -3}, TypeError, "seed")):
        with pytest.raises(err, match=match):
            evaluate(df, **kwargs)


# ---------------------------------------------------------------- underpowered calibrations, dropped rows

def test_ten_humans_cannot_resolve_fpr_5_percent_and_the_table_says_so():
    # 10 humans per domain: granularity 1/10 > 5%, so the threshold is the top human score at
    # any target below 10%: FPR 5% and 1% would give the same TPR. Not reached, underpowered.
    table = evaluate(_frame(n_human=10, n_machine=20, domains=("A", "B")), fprs=(0.1, 0.05, 0.01), n_boot=100)
    ten, five, one = (_row(table, "none", "tpr", f) for f in (0.1, 0.05, 0.01))
    assert ten["reached"] and not ten["underpowered"] and ten["achieved_fpr"] == pytest.approx(0.1)
    for row in (five, one):
        assert row["underpowered"] and not row["reached"] and row["achieved_fpr"] == 0.0
        assert math.isnan(row["value"]) and math.isnan(row["value_lo"]) and math.isnan(row["value_hi"])
        assert row["n_human"] == 20
    assert five["value_at_achieved_fpr"] == one["value_at_achieved_fpr"]  # the same number: no information
    assert not _row(table, "none", "auroc")["underpowered"]


def test_rows_dropped_for_nan_are_counted_per_figure():
    df = _frame(n_human=20, n_machine=20, attacks=("x",), domains=("A", "B"))
    df.loc[(df["attack"] == "x") & (df["domain"] == "A"), "score"] = np.nan  # 20 attacked rows
    df.loc[(df["label"] == "human") & (df["domain"] == "B"), "score"] = [np.nan] * 2 + [0.0] * 18  # 2 humans
    table = evaluate(df, nan_policy="omit", n_boot=50)
    assert _row(table, "x", "auroc")["n_dropped_nan"] == 20 + 2
    assert _row(table, "none", "tpr", 0.05)["n_dropped_nan"] == 2
    # what is left of attack x lies in domain B only: compared with B's 18 remaining humans
    assert _row(table, "x", "auroc")["n_machine"] == 20 and _row(table, "x", "auroc")["n_human"] == 18
    assert table.attrs["omitted_nan"] == {"d": 22}


def test_rows_without_a_source_id_are_their_own_source():
    df = _frame(n_human=30, n_machine=30, attacks=("x",))
    df["adv_source_id"] = df["id"]
    df.loc[df["attack"] == "none", "adv_source_id"] = None  # RAID leaves it empty on clean rows
    with_gaps = evaluate(df, fprs=(0.1,), n_boot=100)
    full = evaluate(df.assign(adv_source_id=df["id"]), fprs=(0.1,), n_boot=100)
    pd.testing.assert_frame_equal(with_gaps, full)
    assert _row(full, "x", "asr", 0.1)["n_pairs"] == 30
