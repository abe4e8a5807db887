"""`run` turns every expected failure into one line and exit status 2; `report` and `plot`
read a finished store without writing to it."""

import os

import pytest

from humanize.cli.main import main

RUN = ["run", "--attack", "upper_lower", "--detector", "surface_probe", "--n", "8", "--no-quality", "--quiet"]


def _fails_in_one_line(argv, capsys, pattern):
    import re

    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith("humanize-bench run: ") and re.search(pattern, err), err


def test_store_problems_are_one_line_errors(tmp_path, capsys):
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database" * 100)
    _fails_in_one_line([*RUN, "--db", str(junk)], capsys, r"junk\.sqlite.*not a usable results database")
    (tmp_path / "afile").write_text("x")
    _fails_in_one_line([*RUN, "--db", str(tmp_path / "afile" / "r.sqlite")], capsys, r"cannot create the folder")


def test_config_and_dataset_problems_are_one_line_errors(tmp_path, capsys):
    db = str(tmp_path / "r.sqlite")
    _fails_in_one_line([*RUN, "--db", db, "--filter", "domain=news"], capsys, r"unknown demo domain 'news'")
    _fails_in_one_line([*RUN, "--db", db, "--batch-size", "0"], capsys, r"batch_size must be an int >= 1")
    cfg = tmp_path / "c.toml"
    cfg.write_text('[run]\nper_domain = "no"\n')
    _fails_in_one_line([*RUN, "--db", db, "--config", str(cfg)], capsys, r"per_domain must be true or false")
    _fails_in_one_line([*RUN, "--db", db, "--config", str(tmp_path / "none.toml")], capsys, r"does not exist")
    assert not os.path.exists(db)  # nothing was written


def test_a_negative_seed_runs(tmp_path, capsys):
    assert main([*RUN, "--db", str(tmp_path / "r.sqlite"), "--seed", "-1"]) == 0


def test_report_and_plot_read_a_store_on_a_read_only_disk(tmp_path, capsys, monkeypatch):
    folder = tmp_path / "store"
    db = folder / "r.sqlite"
    assert main([*RUN, "--db", str(db)]) == 0

    def snapshot():
        return {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in folder.iterdir()}

    before = snapshot()
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: mode != os.W_OK and real(p, mode))
    assert main(["report", "--db", str(db)]) == 0
    assert "auroc" in capsys.readouterr().out
    assert snapshot() == before
    monkeypatch.undo()
    assert main(["plot", "--db", str(db), "--out", str(tmp_path / "plots"), "--format", "png"]) == 0
    assert snapshot() == before  # mode=ro on a writable folder: no -wal/-shm files either


def test_report_on_a_damaged_store_is_a_clear_exit(tmp_path, capsys):
    import re

    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"\x00garbage" * 100)
    assert main(["report", "--db", str(junk)]) == 2
    assert re.search(r"junk\.sqlite.*not a usable results database", capsys.readouterr().err)


@pytest.mark.parametrize("argv, pattern", [
    (["tour", "--n", "0"], r"--n: expected an int >= 1, got 0"),
    (["demo", "--n", "1"], r"--n: expected an int >= 2, got 1"),
    (["report", "--fpr", "2"], r"--fpr: expected a number in \(0, 1\), got 2"),
])
def test_bad_numbers_are_usage_errors(argv, pattern, capsys):
    import re

    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2 and re.search(pattern, capsys.readouterr().err)


def test_tour_with_an_unknown_attack_is_one_line(capsys):
    assert main(["tour", "--attacks", "nope", "--n", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("humanize-bench tour: unknown attack 'nope'") and "\n" not in err


def test_a_config_file_that_is_not_utf8_is_one_line(tmp_path, capsys):
    cfg = tmp_path / "c.toml"
    cfg.write_bytes(b"[run]\nseed = \xff\n")
    _fails_in_one_line([*RUN, "--db", str(tmp_path / "r.sqlite"), "--config", str(cfg)], capsys,
                       r"c\.toml: not UTF-8 text")


def test_a_global_rate_sweep_leaves_pipelines_alone(tmp_path):
    from humanize.cli.main import build_parser
    from humanize.cli.run import config_from_args

    cfg = tmp_path / "c.toml"
    cfg.write_text('[[attacks]]\nname = "pipeline"\nattacks = ["homoglyph", {name = "whitespace", rate = 0.4}]\n\n'
                   '[[attacks]]\nname = "upper_lower"\n\n[[detectors]]\nname = "tfidf_lr"\n')
    args = build_parser().parse_args(["run", "--config", str(cfg), "--rates", "0.1", "0.5"])
    config = config_from_args(args).validate()
    labels = [lbl for s in config.attacks for lbl, _ in s.expand()]
    assert labels == ["homoglyph+whitespace@0.4", "upper_lower@0.1", "upper_lower@0.5"]
