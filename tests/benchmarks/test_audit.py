"""The dataset audit finds a formatting artifact where one was planted, and none once it is removed."""

import math
import textwrap

import numpy as np
import pandas as pd
import pytest

from humanize.attacks.format import StripFormat
from humanize.benchmarks.audits.audit import OVERALL, AuditResult, audit_dataset
from humanize.benchmarks.reporting.report import export_report, render_markdown
from humanize.detectors.surface import FEATURE_NAMES

_WORDS = ("river stone market letter window garden engine silver doctor paper winter island music "
          "bridge forest candle harbor pencil orange thunder valley mirror castle rabbit ladder "
          "planet coffee signal tunnel meadow").split()


def _sentences(rng: np.random.Generator, n: int) -> list[str]:
    out = []
    for _ in range(n):
        words = rng.choice(_WORDS, size=int(rng.integers(7, 14)))
        out.append(" ".join(words).capitalize() + ".")
    return out


def artifact_rows(n_per_class: int = 60, domains=("news", "stories"), seed: int = 0, wrap_humans=True) -> pd.DataFrame:
    """Human and machine texts drawn from one pool of sentences (content cannot separate them);
    the human texts are line-wrapped at 76 characters, the machine texts are not."""
    rng = np.random.default_rng(seed)
    pool = _sentences(rng, 400)
    rows = []
    for domain in domains:
        for label in ("human", "machine"):
            for i in range(n_per_class):
                text = " ".join(rng.choice(pool, size=int(rng.integers(4, 9))))
                if label == "human" and (wrap_humans is True or domain in wrap_humans):
                    text = textwrap.fill(text, width=76)
                rows.append(dict(id=f"{domain}-{label}-{i}", domain=domain, label=label, generation=text,
                                 model="human" if label == "human" else "gen-x"))
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def planted():
    return audit_dataset(artifact_rows(), n_boot=100, seed=0)


def _overall(result: AuditResult) -> pd.Series:
    return result.table.set_index("subset").loc[OVERALL]


def test_audit_finds_a_planted_formatting_artifact(planted):
    row = _overall(planted)
    assert row["n_human"] == row["n_machine"] == 120
    assert row["fmt_auroc"] > 0.9 and row["fmt_auroc_lo"] > 0.8
    assert row["probe_f1"] > 0.9 and row["probe_auroc"] > 0.9
    assert row["norm_f1"] < 0.75  # without the line breaks little is left
    assert row["delta_f1"] > 0.25 and row["delta_f1_lo"] > 0.1
    assert row["len_auroc"] < 0.75  # same sentence counts in both classes
    assert row["tfidf_f1"] < 0.75  # same vocabulary in both classes
    for fig in ("probe_f1", "norm_f1", "fmt_auroc", "tfidf_f1"):
        assert row[f"{fig}_lo"] <= row[fig] <= row[f"{fig}_hi"]
    top = planted.top_features(3)
    assert top.loc[0, "feature"] == "r_newline" and top.loc[0, "group"] == "formatting"
    assert top.loc[0, "direction"] == "higher in human" and top.loc[0, "auroc"] < 0.1
    assert list(top["rank"]) == [1, 2, 3]
    summary = planted.summary()
    assert "a formatting artifact" in summary and "r_newline" in summary
    assert "news / gen-x" in summary and "stories / gen-x" in summary


def test_audit_finds_nothing_once_the_format_is_normalised():
    rows = artifact_rows()
    strip = StripFormat()
    rows["generation"] = [strip(t) for t in rows["generation"]]
    row = _overall(audit_dataset(rows, n_boot=100, seed=0, tfidf=False))
    assert abs(row["fmt_auroc"] - 0.5) < 0.15
    assert abs(row["delta_f1"]) < 0.05
    assert row["probe_f1"] < 0.7
    assert math.isnan(row["tfidf_f1"])  # tfidf=False


def test_one_row_per_subset_plus_overall_in_the_table1_layout(planted):
    t = planted.table
    assert list(t["subset"]) == ["news / gen-x", "stories / gen-x", OVERALL]
    assert list(t.columns[:7]) == ["subset", "domain", "model", "n_human", "n_machine", "probe_f1", "probe_f1_lo"]
    assert (t["n_human"] == t["n_machine"]).all()
    assert list(t.loc[t["subset"] == OVERALL, ["domain", "model"]].iloc[0]) == ["all", "all"]
    assert (t["note"] == "").all()
    feats = planted.features
    assert set(feats["subset"]) == set(t["subset"])
    assert sorted(feats.loc[feats["subset"] == OVERALL, "feature"]) == sorted(FEATURE_NAMES)
    assert np.allclose(feats["separation"], (feats["auroc"] - 0.5).abs())


def test_a_subset_is_judged_against_the_humans_of_its_own_domain():
    rows = artifact_rows(n_per_class=40, wrap_humans=("news",))  # stories' humans are not wrapped
    t = audit_dataset(rows, n_boot=0, tfidf=False).table.set_index("subset")
    assert t.loc["news / gen-x", "fmt_auroc"] > 0.9
    assert abs(t.loc["stories / gen-x", "fmt_auroc"] - 0.5) < 0.2
    assert math.isnan(t.loc["news / gen-x", "fmt_auroc_lo"])  # n_boot=0: no intervals


def test_same_seed_same_result_whatever_the_row_order(planted):
    rows = artifact_rows()
    shuffled = rows.sample(frac=1.0, random_state=7).reset_index(drop=True)
    again = audit_dataset(shuffled, n_boot=100, seed=0)
    pd.testing.assert_frame_equal(again.table, planted.table)
    pd.testing.assert_frame_equal(again.features, planted.features)
    other = audit_dataset(rows, n_boot=100, seed=1, tfidf=False).table
    cols = ["norm_f1", "norm_f1_lo", "norm_f1_hi", "len_auroc"]  # the probe itself is perfect on every seed
    assert not np.allclose(other[cols].to_numpy(), planted.table[cols].to_numpy())


def test_balanced_sample_capped_and_repeated_texts_counted_once():
    rows = artifact_rows(n_per_class=30, domains=("news",))
    dup = rows[rows["label"] == "human"].assign(id=lambda d: d["id"] + "-copy")
    rows = pd.concat([rows, dup], ignore_index=True)  # every human text twice
    t = audit_dataset(rows, by=(), n_boot=0, tfidf=False).table
    assert list(t["subset"]) == [OVERALL]
    assert t.loc[0, "available_human"] == 30 and t.loc[0, "n_human"] == 30
    capped = audit_dataset(rows, by="domain", max_per_class=12, n_boot=0, tfidf=False).table
    assert (capped["n_human"] == 12).all() and (capped["n_machine"] == 12).all()


def test_too_small_subset_is_reported_with_nan_and_a_note():
    rows = pd.concat([artifact_rows(n_per_class=30, domains=("news",)),
                      artifact_rows(n_per_class=3, domains=("tiny",), seed=5)], ignore_index=True)
    t = audit_dataset(rows, n_boot=20, tfidf=False).table.set_index("subset")
    tiny = t.loc["tiny / gen-x"]
    assert math.isnan(tiny["probe_f1"]) and math.isnan(tiny["fmt_auroc"])
    assert "too few documents for 5-fold" in tiny["note"]
    assert np.isfinite(t.loc[OVERALL, "probe_f1"])


def test_empty_emoji_and_non_latin_texts_are_valid_and_tfidf_without_vocabulary_is_noted():
    rows = pd.DataFrame({"generation": ["", "   ", "😀😀 😀", "日本語のテキスト", "\n\n", "ok"] * 4,
                         "label": ["human", "machine"] * 12, "domain": "d", "model": "m"})
    t = audit_dataset(rows, by=(), folds=3, n_boot=10).table
    assert t.loc[0, "n_human"] == 3  # distinct texts per class
    assert np.isfinite(t.loc[0, "probe_f1"])
    assert math.isnan(t.loc[0, "tfidf_f1"]) and "TF-IDF not fitted" in t.loc[0, "note"]


def test_report_renders_and_exports(planted, tmp_path):
    report = planted.to_report(top=4)
    assert set(report) == {"audit", "audit_features"}
    assert len(report["audit_features"]) == 4 * 3
    md = render_markdown(report)
    assert "## audit" in md and "r_newline" in md and "bootstrap" in md
    paths = export_report(report, tmp_path, formats=("md", "csv", "json"))
    assert {p.name for p in paths} == {"report.md", "audit.csv", "audit.json", "audit_features.csv",
                                       "audit_features.json"}
    back = pd.read_csv(tmp_path / "audit.csv")
    assert list(back["subset"]) == list(planted.table["subset"])


@pytest.mark.parametrize("kwargs, error, pattern", [
    (dict(rows=[("a", "human")]), TypeError, "rows must be a pandas DataFrame"),
    (dict(by=("domain", "nope")), ValueError, r"lack the column\(s\) \['nope'\]"),
    (dict(folds=1), ValueError, "folds must be an int >= 2"),
    (dict(max_per_class=1.5), ValueError, "max_per_class must be an int >= 2"),
    (dict(n_boot=1), ValueError, "n_boot must be 0"),
    (dict(confidence=1.5), ValueError, "confidence must be in"),
    (dict(seed=-1), TypeError, "seed must be an int >= 0"),
    (dict(tfidf="yes"), TypeError, "tfidf must be True or False"),
    (dict(by=("domain", "domain")), ValueError, "distinct column names"),
])
def test_bad_arguments_say_what_is_wrong(kwargs, error, pattern):
    rows = kwargs.pop("rows", artifact_rows(n_per_class=6, domains=("news",)))
    with pytest.raises(error, match=pattern):
        audit_dataset(rows, **kwargs)


def test_bad_rows_say_what_is_wrong(planted):
    rows = artifact_rows(n_per_class=6, domains=("news",))
    with pytest.raises(ValueError, match=r"label must be 'human' or 'machine', found \['bot'\]"):
        audit_dataset(rows.assign(label=["bot"] * len(rows)))
    with pytest.raises(ValueError, match="non-text generation"):
        audit_dataset(rows.assign(generation=[None] + list(rows["generation"][1:])))
    with pytest.raises(ValueError, match="unknown subset 'nope'"):
        planted.top_features(3, subset="nope")
    with pytest.raises(ValueError, match="k must be a positive int"):
        planted.top_features(0)
