"""``humanize-bench ars``: on a dataset, on a labelled file, on a stored run; clear errors."""

import json

import pandas as pd
import pytest

from humanize.cli.main import main


def test_help(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["ars", "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert "usage: humanize-bench ars" in out and "--threshold" in out and "--db" in out


def test_on_the_demo_set_prints_the_rule_and_exports(tmp_path, capsys):
    code = main(["ars", "--dataset", "demo", "--detector", "tfidf_lr", "--detector", "surface_probe",
                 "--max-per-class", "40", "--n-boot", "100", "--out", str(tmp_path / "out")])
    assert code == 0
    out = capsys.readouterr().out
    assert "threshold (tfidf_lr): FPR 0.05" in out and "threshold (surface_probe)" in out
    table = pd.read_csv(tmp_path / "out" / "reliance.csv", index_col=0).set_index(["detector", "subset"])
    assert set(table.index) == {(d, s) for d in ("tfidf_lr", "surface_probe") for s in ("writing", "xsum", "overall")}
    assert table.loc[("tfidf_lr", "overall"), "flip"] == 0
    assert table.loc[("surface_probe", "overall"), "flip_lo"] > 0  # the demo's formatting artifact
    assert json.loads((tmp_path / "out" / "reliance.json").read_text())[0]["detector"] == "tfidf_lr"
    assert "## reliance" in (tmp_path / "out" / "report.md").read_text()


def test_on_a_labelled_file_with_a_fixed_threshold(tmp_path, capsys):
    from humanize.benchmarks.data import load_dataset

    demo = load_dataset("demo", domain="xsum")
    demo = demo.groupby("label").head(30)
    path = tmp_path / "mine.csv"
    demo.rename(columns={"generation": "body"})[["body", "label"]].to_csv(path, index=False)
    code = main(["ars", "--path", str(path), "--text-column", "body", "--detector", "surface_probe",
                 "--threshold", "0.5", "--n-boot", "0", "--format", "csv", "--out", str(tmp_path / "o")])
    assert code == 0
    assert "fixed threshold 0.5" in capsys.readouterr().out
    table = pd.read_csv(tmp_path / "o" / "reliance.csv")
    assert table["subset"].tolist() == ["mine", "overall"] and (table["threshold"] == 0.5).all()


def test_on_a_stored_run_stores_the_table(tmp_path, capsys):
    from humanize.benchmarks.runner.store import ResultsStore

    db = str(tmp_path / "r.sqlite")
    assert main(["run", "--attack", "upper_lower", "--detector", "tfidf_lr", "--n", "30", "--no-quality",
                 "--db", db, "--quiet"]) == 0
    capsys.readouterr()
    assert main(["ars", "--db", db, "--n-boot", "50"]) == 0
    assert "stored as table 'reliance'" in capsys.readouterr().out
    with ResultsStore(db, readonly=True) as store:
        stored = store.run_tables()["reliance"]
    assert stored["detector"].unique().tolist() == ["tfidf_lr"] and "overall" in stored["subset"].tolist()


@pytest.mark.parametrize("argv, message", [
    (["--detector", "tfidf_lr", "--db", "x.sqlite", "--dataset", "demo"], "not both"),
    (["--dataset", "demo"], "at least one --detector"),
    (["--detector", "nope"], "unknown detector 'nope'"),
    (["--detector", "tfidf_lr", "--by", "nope"], "by names column"),
    (["--detector", "tfidf_lr", "--filter", "domain"], "KEY=VALUE"),
    (["--db", "no/such.sqlite"], "no results database"),
    (["--detector", "tfidf_lr", "--path", "no/such.csv"], "no such file"),
])
def test_user_errors_are_one_line_and_exit_2(argv, message, capsys):
    assert main(["ars", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("humanize-bench ars: ") and message in err and len(err.strip().splitlines()) == 1


def test_fpr_and_threshold_exclude_each_other(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["ars", "--detector", "tfidf_lr", "--fpr", "0.1", "--threshold", "0.5"])
    assert exit_.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err
