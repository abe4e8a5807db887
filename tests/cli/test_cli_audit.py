"""`humanize-bench audit`: on a user's file and on a registered dataset; bad input is one line and exit 2."""

import re

import pytest

from humanize.cli.main import build_parser, main
from tests.benchmarks.test_audit import artifact_rows

FAST = ["--n-boot", "20", "--max-per-class", "30", "--no-tfidf"]


@pytest.fixture(scope="module")
def artifact_csv(tmp_path_factory):
    rows = artifact_rows(n_per_class=30, domains=("news",))
    rows = rows.rename(columns={"generation": "body"}).assign(who=rows["label"].map({"human": "p", "machine": "m"}))
    path = tmp_path_factory.mktemp("audit") / "mine.csv"
    rows[["id", "body", "who", "domain"]].to_csv(path, index=False)
    return path


def test_audit_of_a_csv_file_prints_and_exports(artifact_csv, tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["audit", str(artifact_csv), "--text-column", "body", "--label-column", "who", "--human-label", "p",
            "--domain-column", "domain", "--top", "3", "--out", str(out), "--format", "md", "csv", *FAST]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert re.search(r"news / machine\s+30\s+30", text) and "overall" in text
    assert "r_newline" in text and "a formatting artifact" in text
    assert {p.name for p in out.iterdir()} == {"report.md", "audit.csv", "audit_features.csv"}
    assert "## audit_features" in (out / "report.md").read_text()


def test_dataset_file_with_path_and_a_registered_dataset(artifact_csv, capsys):
    argv = ["audit", "file", "--path", str(artifact_csv), "--text-column", "body", "--label-column", "who",
            "--human-label", "p", "--by", *FAST]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "overall" in text and "news /" not in text  # --by with no columns: overall only
    argv = ["audit", "demo", "--filter", "domain=xsum", "--filter", "model=gpt-4", "--by", "model", *FAST]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert re.search(r"gpt-4\s+30\s+30", text) and "Top 10 features overall" in text


@pytest.mark.parametrize("argv, pattern", [
    (["audit", "nosuchset"], r"unknown dataset 'nosuchset': neither a registered dataset .*demo"),
    (["audit", "missing.csv"], r"no such file: .*missing\.csv"),
    (["audit", "file"], r"dataset 'file' needs --path FILE"),
    (["audit", "demo", "--path", "x.csv"], r"--path and the column options are for a file"),
    (["audit", "demo", "--filter", "domain"], r"--filter expects KEY=VALUE, got 'domain'"),
    (["audit", "demo", "--filter", "domain=news"], r"unknown demo domain 'news'"),
    (["audit", "demo", "--by", "colour", *FAST], r"rows lack the column\(s\) \['colour'\]"),
])
def test_bad_input_is_one_line_and_exit_2(argv, pattern, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("humanize-bench audit: ") and re.search(pattern, err), err


def test_file_problems_are_one_line(artifact_csv, capsys):
    assert main(["audit", str(artifact_csv), "--label-column", "who", *FAST]) == 2
    err = capsys.readouterr().err
    assert re.search(r"no column\(s\) \['text'\]; its columns are \['id', 'body', 'who', 'domain'\]", err), err
    assert main(["audit", str(artifact_csv), "--text-column", "body", "--label-column", "who", *FAST]) == 2
    assert "pass human_label=" in capsys.readouterr().err


def test_help_describes_every_option(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["audit", "--help"])
    assert stop.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for option in ("--filter", "--path", "--text-column", "--label-column", "--human-label", "--by",
                   "--max-per-class", "--folds", "--n-boot", "--seed", "--no-tfidf", "--top", "--out", "--format"):
        assert option in text
    audit = build_parser()._subparsers._group_actions[0].choices["audit"]
    assert all(a.help for a in audit._actions)
    with pytest.raises(SystemExit) as stop:
        main(["audit", "demo", "--folds", "1"])
    assert stop.value.code == 2
