"""``humanize-bench card``: cards and the documents page of a stored run; user errors are one line, exit 2."""

from __future__ import annotations

import pytest

from humanize.benchmarks.runner.config import AttackSpec, DetectorSpec, RunConfig
from humanize.benchmarks.runner import run
from humanize.cli.main import main


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli_card") / "r.sqlite"
    cfg = RunConfig(n=10, seed=5, db=str(path), quality=False, n_boot=20, fprs=(0.2,), per_domain=False,
                    attacks=[AttackSpec("homoglyph"), AttackSpec("upper_lower")],
                    detectors=[DetectorSpec("surface_probe"), DetectorSpec("tfidf_lr")])
    run(cfg, progress=False)
    return path


def test_card_help(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["card", "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert "usage: humanize-bench card" in out and "--documents" in out and "--format" in out


def test_card_writes_a_card_per_detector_and_the_documents_page(db, tmp_path, capsys):
    out = tmp_path / "cards"
    assert main(["card", "--db", str(db), "--out", str(out), "--documents"]) == 0
    printed = capsys.readouterr().out
    names = sorted(p.name for p in out.iterdir() if p.name != ".humanize-run")  # the marker: test_cli_issue22
    assert names == ["card_surface_probe.html", "card_surface_probe.md", "card_tfidf_lr.html", "card_tfidf_lr.md",
                     "documents.html"]
    assert "# Robustness card: surface_probe" in printed and "# Robustness card: tfidf_lr" in printed
    assert str(out / "documents.html") in printed
    md = (out / "card_tfidf_lr.md").read_text(encoding="utf-8")
    assert md in printed and "## Worst attack" in md
    assert 'id="attack-filter"' in (out / "documents.html").read_text(encoding="utf-8")


def test_card_markdown_only_and_one_fpr(db, tmp_path, capsys):
    out = tmp_path / "md"
    assert main(["card", "--db", str(db), "--out", str(out), "--format", "md", "--fpr", "0.2"]) == 0
    assert sorted(p.suffix for p in out.iterdir() if p.name != ".humanize-run") == [".md", ".md"]
    assert "TPR at FPR 0.2" in capsys.readouterr().out


@pytest.mark.parametrize("args, message", [
    (["--db", "{tmp}/missing.sqlite"], "no results database at"),
    (["--db", "{db}", "--run", "nope"], "no finished run 'nope'"),
    (["--db", "{db}", "--fpr", "0.05"], "fpr 0.05 is not one of the run's FPRs [0.2]"),
])
def test_card_user_errors_are_one_line_with_exit_status_2(db, tmp_path, capsys, args, message):
    args = [a.format(tmp=tmp_path, db=db) for a in args]
    assert main(["card", *args, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("humanize-bench card: ") and message in err and err.count("\n") == 1
