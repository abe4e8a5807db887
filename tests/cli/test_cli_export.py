"""``humanize-bench export``: writes the run's files, prints their paths, fails in one line."""
from pathlib import Path

import pandas as pd
import pytest

from humanize.benchmarks.runner.config import AttackSpec, DetectorSpec, RunConfig
from humanize.benchmarks.runner import run
from humanize.benchmarks.runner.store import ResultsStore
from humanize.cli.main import main


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli_export") / "results.sqlite"
    run(RunConfig(n=8, seed=1, db=str(path), quality=False, attacks=[AttackSpec("upper_lower")],
                  detectors=[DetectorSpec("surface_probe")]), progress=False)
    return path


def test_help(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["export", "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert "usage: humanize-bench export" in out and "parquet" in out and "jsonl" in out


@pytest.mark.parametrize("format", ["parquet", "csv", "jsonl"])
def test_writes_every_table_and_prints_the_paths(db, tmp_path, capsys, format):
    assert main(["export", "--db", str(db), "--format", format, "--out", str(tmp_path)]) == 0
    printed = [Path(line) for line in capsys.readouterr().out.splitlines()]
    assert sorted(p.name for p in printed) == sorted(f"{t}.{format}" for t in
                                                     ("metrics", "scores", "cost", "documents", "detector_cost"))
    assert all(p.is_file() and p.parent == tmp_path for p in printed)
    with ResultsStore(db, readonly=True) as store:
        scores = store.run_tables()["scores"]
    path = tmp_path / f"scores.{format}"
    back = {"parquet": pd.read_parquet, "csv": pd.read_csv,
            "jsonl": lambda p: pd.read_json(p, lines=True, dtype=False)}[format](path)
    pd.testing.assert_frame_equal(back, scores, check_dtype=False)


def test_default_folder_is_next_to_the_database_under_the_run_id(db, capsys):
    with ResultsStore(db, readonly=True) as store:
        run_id = store.runs()["run_id"].iloc[-1]
    assert main(["export", "--db", str(db), "--tables", "documents"]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert Path(line) == db.parent / "export" / run_id / "documents.parquet"


@pytest.mark.parametrize("argv, message", [
    (["--db", "{missing}"], "no results database at"),
    (["--db", "{db}", "--run", "nope"], "no finished run 'nope'"),
    (["--db", "{db}", "--tables", "scorez"], r"no table(s) ['scorez']"),
])
def test_user_errors_are_one_line_and_status_2(db, tmp_path, capsys, argv, message):
    argv = [a.format(db=db, missing=tmp_path / "none.sqlite") for a in argv]
    assert main(["export", *argv, "--out", str(tmp_path / "out")]) == 2
    captured = capsys.readouterr()
    (line,) = captured.err.splitlines()
    assert line.startswith("humanize-bench export: ") and message in line
    assert captured.out == "" and not (tmp_path / "out").exists()


def test_unknown_format_is_refused_by_the_parser(db, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["export", "--db", str(db), "--format", "xlsx"])
    assert exit_.value.code == 2 and "invalid choice: 'xlsx'" in capsys.readouterr().err
