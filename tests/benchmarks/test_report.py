"""Report tables and their exports: intervals, n_human, achieved FPR, flags and dropped rows in every format."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from humanize.benchmarks.reporting.plots import plot_heatmap, plot_intervals, plot_triangle, triangle_scores
from humanize.benchmarks.evaluation import evaluate
from humanize.benchmarks.reporting.report import build_report, export_report, render_markdown
from humanize.benchmarks.reporting.tables import (VALIDITY_REPORT_COLUMNS, figure_matrix, meaning_validity_table,
                                                  quality_table)
from humanize.quality import swap_validity

from .test_bootstrap import _frame


@pytest.fixture(scope="module")
def metrics():
    # domain A has 30 humans, domain B only 15: FPR 5% is resolvable in A, not in B (1/15 > 5%);
    # FPR 10% is resolvable in both. Two attacked rows come back NaN and are dropped.
    a = _frame(n_human=30, n_machine=20, attacks=("x", "y"), domains=("A",), seed=1)
    b = _frame(n_human=15, n_machine=20, attacks=("x", "y"), domains=("B",), seed=2)
    c = _frame(n_human=30, n_machine=20, attacks=("x", "y"), domains=("A",), seed=3, detector="e")
    df = pd.concat([a, b, c], ignore_index=True)
    df.loc[(df["attack"] == "x") & (df["detector"] == "d") & (df["id"].isin(["mA0", "mA1"])), "score"] = np.nan
    return evaluate(df, fprs=(0.1, 0.05), nan_policy="omit", n_boot=200, seed=0)


def test_report_tables_carry_intervals_sample_sizes_and_flags(metrics):
    report = build_report({"metrics": metrics})
    assert list(report)[:6] == ["summary", "tpr_at_fpr_0.1", "tpr_at_fpr_0.05", "auroc",
                                "attack_success_rate_at_fpr_0.1", "attack_success_rate_at_fpr_0.05"]
    acc = report["tpr_at_fpr_0.05"]
    for col in ("tpr", "tpr_lo", "tpr_hi", "delta_tpr", "delta_tpr_lo", "delta_tpr_hi", "achieved_fpr",
                "reached", "underpowered", "tpr_at_achieved_fpr", "n_human", "n_machine", "n_dropped_nan"):
        assert col in acc.columns, col
    d, e = acc.loc[("d", "x")], acc.loc[("e", "x")]
    assert d["underpowered"] and not d["reached"] and math.isnan(d["tpr"]) and d["n_human"] == 45
    assert d["n_dropped_nan"] == 2 and d["n_machine"] == 38
    assert not e["underpowered"] and e["reached"] and e["tpr_lo"] <= e["tpr"] <= e["tpr_hi"]
    assert e["achieved_fpr"] == pytest.approx(1 / 30) and e["delta_tpr_lo"] <= e["delta_tpr"] <= e["delta_tpr_hi"]
    ten = report["tpr_at_fpr_0.1"].loc[("d", "x")]
    assert ten["reached"] and not ten["underpowered"] and ten["tpr_lo"] <= ten["tpr"] <= ten["tpr_hi"]
    au = report["auroc"]
    assert au.index[0] == ("none", "d")
    row = au.loc[("x", "d")]
    assert row["auroc_lo"] <= row["auroc"] <= row["auroc_hi"] and row["delta_auroc_hi"] < 0
    assert row["n_human"] == 45 and row["n_dropped_nan"] == 2
    asr = report["attack_success_rate_at_fpr_0.1"]
    assert "none" not in asr.index.get_level_values("attack")
    assert {"asr", "asr_lo", "asr_hi", "n_pairs", "achieved_fpr", "n_human", "n_dropped_nan"} <= set(asr.columns)
    assert report["tpr_at_fpr_0.05"].attrs["about"].count("B = 200") == 1
    # one FPR on request (the CLI's --fpr)
    assert set(build_report({"metrics": metrics}, fpr=0.1)) == {"summary", "tpr_at_fpr_0.1", "auroc",
                                                                "attack_success_rate_at_fpr_0.1"}


def test_every_export_format_carries_the_same_columns(metrics, tmp_path):
    report = build_report({"metrics": metrics})
    export_report(report, tmp_path)
    md = (tmp_path / "report.md").read_text()
    needed = ("n_human", "achieved_fpr", "underpowered", "tpr_lo", "tpr_hi", "delta_tpr_lo", "n_dropped_nan")
    wide = md[md.index("## tpr_at_fpr"):]  # the summary comes first, with columns of its own
    header = next(line for line in wide.splitlines() if line.startswith("| detector"))
    assert all(f" {c} " in header for c in needed)
    assert "95% percentile bootstrap interval" in md and "| d          | x        |" in md
    csv = pd.read_csv(tmp_path / "tpr_at_fpr_0.05.csv")
    records = json.loads((tmp_path / "tpr_at_fpr_0.05.json").read_text())
    assert set(needed) <= set(csv.columns) and set(needed) <= set(records[0])
    got = {(r["detector"], r["attack"]): r for r in records}
    assert got[("d", "x")]["underpowered"] is True and got[("d", "x")]["tpr"] is None  # NaN -> null
    assert got[("d", "x")]["n_dropped_nan"] == 2 and got[("e", "x")]["n_human"] == 30
    row = csv[(csv["detector"] == "e") & (csv["attack"] == "x")].iloc[0]
    assert row["tpr_lo"] == pytest.approx(report["tpr_at_fpr_0.05"].loc[("e", "x"), "tpr_lo"])
    au = json.loads((tmp_path / "auroc.json").read_text())
    assert {"auroc_lo", "auroc_hi", "delta_auroc", "delta_auroc_lo", "delta_auroc_hi", "n_human",
            "n_dropped_nan"} <= set(au[0])


def test_older_stored_runs_without_interval_columns_still_report(metrics):
    old = metrics.drop(columns=["value_lo", "value_hi", "change_lo", "change_hi", "underpowered",
                                "n_dropped_nan"])
    acc = build_report({"metrics": old})["tpr_at_fpr_0.1"]
    assert acc["tpr_lo"].isna().all() and acc["n_dropped_nan"].isna().all()
    assert acc["tpr"].notna().all()
    assert "No bootstrap intervals in this run" in render_markdown({"t": acc})


def test_plots_draw_intervals(metrics, tmp_path):
    tables = {"metrics": metrics}
    lo = figure_matrix(metrics, "auroc", None, "value_lo")
    assert list(lo.index) == ["none", "x", "y"] and list(lo.columns) == ["d", "e"] and lo.notna().all().all()
    paths = plot_intervals(tables, tmp_path, "auroc", formats=("png",))
    paths += plot_intervals(tables, tmp_path, "tpr", fpr=0.1, formats=("svg",))
    paths += plot_heatmap(tables, tmp_path, "tpr", formats=("svg",))
    assert [p.name for p in paths] == ["intervals_auroc.png", "intervals_tpr.svg", "heatmap_tpr.svg"]
    svg = (tmp_path / "heatmap_tpr.svg").read_text()
    lo, hi = metrics.query("detector == 'e' and attack == 'x' and metric == 'tpr' and fpr == 0.05")[
        ["value_lo", "value_hi"]].iloc[0]
    assert f"{lo:.2f}–{hi:.2f}" in svg  # the interval is written in the cell
    with pytest.raises(ValueError, match="plot format"):
        plot_intervals(tables, tmp_path, "auroc", formats=("gif",))


def _quality(extra: dict | None = None) -> pd.DataFrame:
    """Quality rows of two attacks: x swaps an antonym in one document and two synonyms in another
    (pooled valid share 2/3, while the mean of per-document shares is 1/2); y rewrites, swapping nothing."""
    originals = ["Rates were higher.", "big small", "The results show a large effect.", "ok"]
    attacked = ["Rates were lower.", "large little", "Our findings indicate that effects were strong.", "ok"]
    frame = swap_validity(originals, attacked).assign(attack=["x", "x", "y", "y"], cosine=[0.9, 0.8, 0.7, 1.0],
                                                      rouge_l=[0.5, 0.5, 0.2, 1.0])
    return frame.assign(**(extra or {}))


def test_the_quality_table_pools_the_validity_shares_over_each_attacks_swaps():
    quality = _quality()
    table = quality_table(quality)
    assert set(VALIDITY_REPORT_COLUMNS) <= set(table.columns) and "cosine" in table.columns
    x = table.loc["x"]
    assert x["valid_share"] == pytest.approx(2 / 3) and x["share_antonym"] == pytest.approx(1 / 3)
    assert x["invalid_share"] == pytest.approx(1 / 3) and x["swaps_per_doc"] == pytest.approx(1.5)
    assert quality[quality["attack"] == "x"]["valid_share"].mean() == pytest.approx(0.5)  # not what is reported
    y = table.loc["y"]
    assert y["swaps_per_doc"] == 0 and math.isnan(y["valid_share"]) and y["rewritten_words_per_doc"] == 3.5
    md = render_markdown(build_report({"metrics": _metrics_for_quality(), "quality": quality}))
    section = md[md.index("## quality"):]
    assert "`valid_share` = WordNet synonyms + morphological variants" in section
    assert "`valid_in_context_share` = the valid swaps: WordNet-valid *and* fitting their sentence" in section
    assert math.isnan(x["valid_in_context_share"])  # the context meter did not run on these rows
    header = next(line for line in section.splitlines() if line.startswith("| attack"))
    assert all(f" {c} " in header for c in VALIDITY_REPORT_COLUMNS)
    # a run from before the validity meter: the table has no validity columns, and no legend
    old = quality_table(quality.drop(columns=[c for c in quality.columns if c.startswith("swap")]))
    assert "valid_share" not in old.columns and not old.attrs.get("note")


def _metrics_for_quality():
    return evaluate(_frame(n_human=10, n_machine=10, attacks=("x", "y"), domains=("A",), seed=4), fprs=(0.1,),
                    n_boot=0)


@pytest.mark.parametrize("extra,measure", [({}, "cosine"), ({"judge_meaning": 0.6}, "judge_meaning"),
                                           ({"entailment": 0.4, "judge_meaning": 0.6}, "entailment"),
                                           ({"entailment": np.nan}, "cosine")])
def test_meaning_comes_from_the_strongest_meter_present(extra, measure):
    quality = _quality(extra)
    table = meaning_validity_table(quality, "all")
    assert table.attrs["measure"][0] == measure
    assert table.loc["x", "meaning"] == pytest.approx(quality[quality["attack"] == "x"][measure].mean())
    assert table.loc["all", "valid_share"] == pytest.approx(2 / 3)  # every swap of every attack pooled
    if not extra:  # no meaning meter at all: no measure, NaN meaning, validity still there
        none = meaning_validity_table(quality.drop(columns=["cosine", "rouge_l"]))
        assert none.attrs["measure"] is None and none["meaning"].isna().all()
        assert none.loc["x", "valid_share"] == pytest.approx(2 / 3)
    cost = pd.DataFrame({"attack": ["none", "x", "y"], "wall_s": [0.0, 0.1, 1.0]})
    scores = triangle_scores({"metrics": _metrics_for_quality(), "quality": quality, "cost": cost})
    assert scores.attrs["quality_measure"] == measure
    assert scores.loc["x", "similarity"] == pytest.approx(table.loc["x", "meaning"])


def test_the_triangle_names_its_meaning_meter(tmp_path):
    cost = pd.DataFrame({"attack": ["none", "x", "y"], "wall_s": [0.0, 0.1, 1.0]})
    tables = {"metrics": _metrics_for_quality(), "quality": _quality({"entailment": [0.9, 0.8, 0.3, 1.0]}),
              "cost": cost}
    paths = plot_triangle(tables, tmp_path, formats=("svg",))
    svg = paths[0].read_text()
    assert "meaning preserved (entailment; its own 0–1 scale)" in svg.replace("\n", " ")  # named in the title
    assert "<!-- 1 s/doc -->" in svg and "<!-- 100 ms/doc -->" in svg  # raw costs on the cost axis
    bare = triangle_scores({**tables, "quality": tables["quality"][["attack", "swaps"]]})
    assert bare.attrs["quality_measure"] is None and bare["similarity"].isna().all()
