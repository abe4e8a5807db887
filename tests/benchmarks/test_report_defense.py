"""The defense table: per attack, each detector's figure without and with a defense, and the change."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from humanize.benchmarks.evaluation import evaluate
from humanize.benchmarks.reporting.report import build_report, export_report, render_markdown
from humanize.benchmarks.reporting.selection import defenses_in
from humanize.benchmarks.reporting.tables import auroc_table, defense_table, figure_matrix

from .test_bootstrap import _frame


def _defended(scores: pd.DataFrame, seed: int) -> pd.DataFrame:
    """What a normalizer does to the scores: the homoglyph rows get their clean score back (the
    defense undoes the attack), the whitespace rows keep theirs, clean rows move a little."""
    rng = np.random.default_rng(seed)
    out = scores.copy()
    none = out["attack"] == "none"
    out.loc[none, "score"] += 0.05 * rng.normal(size=int(none.sum()))
    clean = out[none].set_index(["detector", "id"])["score"]
    homo = out["attack"] == "homoglyph"
    out.loc[homo, "score"] = clean.reindex(pd.MultiIndex.from_frame(out.loc[homo, ["detector", "id"]])).to_numpy()
    return out


@pytest.fixture(scope="module")
def tables():
    scores = pd.concat([_frame(n_human=40, n_machine=40, attacks=("homoglyph", "whitespace"), seed=s, detector=d)
                        for s, d in ((1, "ll"), (2, "tfidf"))], ignore_index=True)
    plain = evaluate(scores, fprs=(0.1,), n_boot=100, seed=0)
    defended = evaluate(_defended(scores, 5), fprs=(0.1,), n_boot=100, seed=0)
    metrics = pd.concat([plain.assign(defense="none"), defended.assign(defense="normalize")], ignore_index=True)
    return plain, metrics


def test_defense_table_puts_the_defended_figure_next_to_the_undefended_one(tables):
    plain, metrics = tables
    assert defenses_in(metrics) == ["normalize"] and defenses_in(plain) == []
    t = defense_table(metrics)
    assert list(t.index) == ["none", "homoglyph", "whitespace"]  # clean first
    assert list(t.columns[:7]) == ["ll", "ll_lo", "ll_hi", "ll+normalize", "ll+normalize_lo", "ll+normalize_hi",
                                   "ll+normalize_change"]
    auroc = plain[plain["metric"] == "auroc"].set_index(["attack", "detector"])["value"]
    for det in ("ll", "tfidf"):
        assert t.loc["homoglyph", det] == pytest.approx(auroc[("homoglyph", det)])
        change = t[f"{det}+normalize_change"]
        assert np.allclose(change, t[f"{det}+normalize"] - t[det])
        # the defense gives back the clean AUROC on the attack it undoes, not on the one it does not
        assert t.loc["homoglyph", f"{det}+normalize"] == pytest.approx(t.loc["none", f"{det}+normalize"])
        assert change["homoglyph"] > 0.05 and change["homoglyph"] > change["whitespace"] + 0.05
        assert abs(change["none"]) < 0.05  # what it costs on clean text
    assert (t.filter(like="_lo").to_numpy() <= t.drop(columns=t.filter(like="_").columns).to_numpy()).all()
    tpr = defense_table(metrics, "tpr", 0.1, intervals=False)
    assert list(tpr.columns) == ["ll", "ll+normalize", "ll+normalize_change", "tfidf", "tfidf+normalize",
                                 "tfidf+normalize_change"]


def test_the_other_tables_show_the_undefended_rows_only(tables):
    plain, metrics = tables
    pd.testing.assert_frame_equal(auroc_table(metrics), auroc_table(plain))
    pd.testing.assert_frame_equal(figure_matrix(metrics), figure_matrix(plain))
    with_defense, without = build_report({"metrics": metrics}), build_report({"metrics": plain})
    assert set(with_defense) - set(without) == {"defense_auroc", "defense_tpr_at_fpr_0.1"}
    for name, table in without.items():
        if name == "summary":  # the summary adds each defense's figure under the attack that fooled a detector most
            assert [c for c in with_defense[name] if c not in table] == ["attacked+normalize"]
            table = table.assign(**{"attacked+normalize": with_defense[name]["attacked+normalize"]})
        pd.testing.assert_frame_equal(with_defense[name], table)
    # an older run without the column, and a defense column holding only "none", give no defense table
    assert "defense_auroc" not in build_report({"metrics": plain.assign(defense="none")})


def test_defense_tables_render_and_export(tables, tmp_path):
    _, metrics = tables
    report = build_report({"metrics": metrics})
    md = render_markdown(report)
    assert "## defense_auroc" in md and "ll+normalize_change" in md and "what the defense costs" in md
    export_report(report, tmp_path)
    rows = json.loads((tmp_path / "defense_auroc.json").read_text())
    assert [r["attack"] for r in rows] == ["none", "homoglyph", "whitespace"] and "tfidf+normalize" in rows[0]
    assert pd.read_csv(tmp_path / "defense_auroc.csv", index_col=0).shape == report["defense_auroc"].shape


def test_defense_table_errors_are_clear(tables):
    plain, metrics = tables
    with pytest.raises(ValueError, match="no defended rows"):
        defense_table(plain)
    with pytest.raises(ValueError, match="pass fpr"):
        defense_table(metrics, "tpr")
    with pytest.raises(ValueError, match="no 'f2' figures"):
        defense_table(metrics, "f2")
    with pytest.raises(TypeError, match="metric must be a str"):
        defense_table(metrics, 1)
