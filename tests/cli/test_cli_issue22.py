"""The command line's contract (issue #22): exit statuses, Ctrl-C, --version, `runs`, output
folders that are not overwritten by another run, a full disk, a flag that would silently
override another, progress counted in documents, `attack --json` with the attack's info, an
unreachable hub and the import-name clash with the PyPI package `humanize`."""

import json
import os
import socket
import sqlite3
import subprocess
import sys
import textwrap
import threading

import pytest

from humanize.cli.main import INTERRUPTED, main

RUN = ["run", "--attack", "upper_lower", "--detector", "surface_probe", "--n", "8", "--no-quality", "--quiet"]

INTERRUPTING = '''
"""A detector that records each batch it scores and raises KeyboardInterrupt (a Ctrl-C) at the
batch numbered $INTERRUPT_AT (1-based; never when unset)."""
import os

import numpy as np

from humanize.detectors import Detector


class Stopper(Detector):
    """Counts the letters a of a text."""

    name = "stopper"
    needs_model = False

    def score(self, texts):
        from humanize.benchmarks.runner.jobs import WARMUP_PROBE

        if list(texts) == [WARMUP_PROBE]:  # the runner's warm-up, outside the batches
            return np.zeros(1)
        log = os.environ["STOPPER_LOG"]
        with open(log, "a") as fh:
            fh.write(f"{len(texts)}\\n")
        with open(log) as fh:
            calls = len(fh.read().split())
        if os.environ.get("INTERRUPT_AT") and calls == int(os.environ["INTERRUPT_AT"]):
            raise KeyboardInterrupt
        return np.asarray([t.count("a") / max(len(t), 1) for t in texts], dtype=float)
'''


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """(db, run id) of one tiny finished run, made once for the module."""
    from humanize.benchmarks.runner.manifest import run_manifest
    from humanize.benchmarks.runner.store import ResultsStore

    db = tmp_path_factory.mktemp("finished") / "r.sqlite"
    assert main([*RUN, "--db", str(db)]) == 0
    with ResultsStore(db, readonly=True) as store:
        return str(db), run_manifest(store)[0]


def _one_line_error(capsys, *needles):
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    for needle in needles:
        assert needle in err, err
    return err


# -- exit statuses ---------------------------------------------------------------------------------

@pytest.mark.parametrize("argv, needle", [
    (["report", "--db", "{tmp}/none.sqlite"], "no results database"),
    (["plot", "--db", "{tmp}/none.sqlite"], "no results database"),
    (["card", "--db", "{tmp}/none.sqlite"], "no results database"),
    (["export", "--db", "{tmp}/none.sqlite"], "no results database"),
    (["runs", "--db", "{tmp}/none.sqlite"], "no results database"),
    (["attack", "homoglif", "x"], "unknown attack 'homoglif'"),
    (["tour", "--attacks", "nope", "--n", "2"], "unknown attack 'nope'"),
    (["list", "attacks", "--plugin", "{tmp}/missing_plugin.py"], "missing_plugin.py"),
    (["run", "--detector", "nope", "--attack", "homoglyph", "--quiet", "--db", "{tmp}/r.sqlite"],
     "unknown detector 'nope'"),
])
def test_every_user_error_is_one_line_and_exit_status_2(argv, needle, tmp_path, capsys):
    assert main([a.replace("{tmp}", str(tmp_path)) for a in argv]) == 2
    _one_line_error(capsys, needle)


def test_version(capsys):
    from humanize import __version__

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out.strip() == f"humanize-bench {__version__}"


def test_ctrl_c_commits_what_was_computed_and_a_rerun_resumes(tmp_path, capsys, monkeypatch):
    from humanize.benchmarks.runner.store import ResultsStore

    (tmp_path / "stopping.py").write_text(textwrap.dedent(INTERRUPTING), encoding="utf-8")
    log, db = tmp_path / "calls.txt", tmp_path / "r.sqlite"
    monkeypatch.setenv("STOPPER_LOG", str(log))
    monkeypatch.setenv("INTERRUPT_AT", "3")
    argv = ["run", "--plugin", str(tmp_path / "stopping.py"), "--detector", "stopping:Stopper", "--attack",
            "upper_lower", "--n", "12", "--batch-size", "1", "--no-quality", "--quiet", "--db", str(db)]
    assert main(argv) == INTERRUPTED
    _one_line_error(capsys, "interrupted", "rerun")
    first = [int(x) for x in log.read_text().split()]
    assert len(first) == 3
    with ResultsStore(db, readonly=True) as store:  # the two batches scored before Ctrl-C are committed
        assert store.counts()["scores"] == first[0] + first[1]
    monkeypatch.delenv("INTERRUPT_AT")
    assert main(argv) == 0
    with ResultsStore(db, readonly=True) as store:
        total = store.counts()["scores"]
    rerun = [int(x) for x in log.read_text().split()][3:]
    assert 0 < sum(rerun) == total - first[0] - first[1]  # only what was missing is scored again


# -- runs, output folders ---------------------------------------------------------------------------

def test_runs_lists_the_stored_runs(finished, capsys):
    db, run_id = finished
    assert main(["runs", "--db", db]) == 0
    out = capsys.readouterr().out
    assert run_id in out and "demo" in out and "upper_lower" in out and "surface_probe" in out and "done" in out
    assert main(["runs", "--db", db, "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["run_id"] == run_id and row["dataset"] == "demo" and row["rows"] == 16
    assert row["attacks"] == ["upper_lower"] and row["detectors"] == ["surface_probe"] and row["created"][:2] == "20"


def test_an_output_folder_of_another_run_is_not_overwritten_without_force(finished, tmp_path, capsys):
    from humanize.cli._outputs import MARKER

    db, run_id = finished
    out = tmp_path / "out"
    assert main(["export", "--db", db, "--out", str(out), "--format", "csv", "--tables", "metrics"]) == 0
    assert json.loads((out / MARKER).read_text())["run_id"] == run_id
    assert main(["export", "--db", db, "--out", str(out), "--format", "csv", "--tables", "metrics"]) == 0  # same run
    capsys.readouterr()
    (out / MARKER).write_text(json.dumps({"run_id": "0123456789abcdef"}))
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    for argv in (["export", "--db", db, "--out", str(out)], ["card", "--db", db, "--out", str(out)],
                 ["report", "--db", db, "--out", str(out)], ["plot", "--db", db, "--out", str(out)]):
        assert main(argv) == 2, argv
        _one_line_error(capsys, "0123456789abcdef", "--force")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # nothing was written
    assert main(["card", "--db", db, "--out", str(out), "--format", "md", "--force"]) == 0
    assert json.loads((out / MARKER).read_text())["run_id"] == run_id


# -- a full disk -----------------------------------------------------------------------------------

def test_a_full_disk_says_disk_full(tmp_path, capsys, monkeypatch):
    """SQLite's "database or disk is full" in the middle of a grouped batch: the message is the
    full disk, not the "no such savepoint" of the rollback that followed it."""
    from humanize.benchmarks.runner import store as store_module

    real = store_module.ResultsStore._flush_run
    calls = {"n": 0}

    def flush_then_fill(self):
        real(self)
        calls["n"] += 1
        if calls["n"] == 2:  # the second batch: the disk fills
            self._conn.rollback()  # what SQLite does to the transaction on SQLITE_FULL
            raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(store_module.ResultsStore, "_flush_run", flush_then_fill)
    db = tmp_path / "r.sqlite"
    assert main([*RUN, "--db", str(db)]) == 2
    err = _one_line_error(capsys, f"disk full: {db}")
    assert "savepoint" not in err
    monkeypatch.undo()
    import errno

    def no_space(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "deep"))

    monkeypatch.setattr(os, "makedirs", no_space)  # the folder of the database cannot be made
    monkeypatch.setattr("pathlib.Path.mkdir", lambda self, *a, **k: no_space())
    assert main([*RUN, "--db", str(tmp_path / "deep" / "r.sqlite")]) == 2
    _one_line_error(capsys, "disk full:")


# -- flags, progress, attack --json ----------------------------------------------------------------

def test_a_flag_that_would_override_another_is_an_error(tmp_path, capsys):
    code = main(["run", "--attack", "whitespace:rate=0.3", "--rates", "0.1", "0.5", "--detector", "surface_probe",
                 "--quiet", "--db", str(tmp_path / "r.sqlite")])
    assert code == 2
    _one_line_error(capsys, "rate=0.3", "--rates 0.1 0.5")
    assert not (tmp_path / "r.sqlite").exists()


def test_a_config_rate_replaced_by_rates_is_said(tmp_path, capsys):
    from humanize.cli.main import build_parser
    from humanize.cli.run import config_from_args

    cfg = tmp_path / "c.toml"
    cfg.write_text('[[attacks]]\nname = "whitespace"\nrate = 0.3\n\n[[detectors]]\nname = "tfidf_lr"\n')
    config = config_from_args(build_parser().parse_args(["run", "--config", str(cfg), "--rates", "0.1", "0.5"]))
    assert config.attacks[0].rates == [0.1, 0.5]
    err = capsys.readouterr().err
    assert "warning" in err and "0.3" in err and "whitespace" in err


def test_progress_counts_documents_with_rate_and_eta(monkeypatch):
    import tqdm.auto

    from humanize.benchmarks.runner.executors import get_executor
    from humanize.benchmarks.runner.executors.base import Job
    from humanize.benchmarks.runner.stages import missing_batches, run_stage

    bars = []

    class Recorder:
        def __init__(self, **kwargs):
            self.kwargs, self.n = kwargs, 0
            bars.append(self)

        def update(self, k):
            self.n += k

        def set_postfix_str(self, text, refresh=True):
            self.postfix = text

        def close(self):
            pass

    monkeypatch.setattr(tqdm.auto, "tqdm", Recorder)
    job = Job("upper", factory=lambda: None, apply=lambda state, texts: [t.upper() for t in texts])
    batches = missing_batches({f"k{i}": f"t{i}" for i in range(7)}, have=[], size=3)  # 3 + 3 + 1
    run_stage(get_executor("local"), job, batches, progress=True)
    (bar,) = bars
    assert bar.kwargs["total"] == 7 and bar.n == 7 and bar.kwargs["unit"] == "doc"
    assert "{remaining}" in bar.kwargs["bar_format"] and "{rate_fmt}" in bar.kwargs["bar_format"]


REPORTING = '''
"""An attack that reports what it did in its info, as the model-based attacks do."""
import numpy as np

from humanize.attacks import Attack


class Reporting(Attack):
    """Leaves the text as it is and says why."""

    name = "reporting"
    needs_model = False

    def __init__(self, seed: int = 0):
        self.seed = seed

    def _run(self, text):
        return text, [], {"queries": 3, "scores": [np.float32(0.75), 0.25], "unchanged": "no site to edit"}
'''


def test_attack_json_carries_the_attacks_info(tmp_path, capsys):
    (tmp_path / "reporting.py").write_text(textwrap.dedent(REPORTING), encoding="utf-8")
    assert main(["attack", "reporting:Reporting", "Hello", "--json", "--plugin", str(tmp_path / "reporting.py")]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["text"] == "Hello" and data["edits"] == []
    assert data["info"] == {"queries": 3, "scores": [0.75, 0.25], "unchanged": "no site to edit"}


# -- an unreachable hub, the import-name clash -----------------------------------------------------

def test_an_unreachable_hub_fails_at_once_with_the_offline_hint(monkeypatch):
    """One connection to the hub, not transformers' retries per file; then the local cache only."""
    from humanize.exceptions import ModelUnavailable
    from humanize.models import loading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(30)
    accepted = []

    def accept_and_drop():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            accepted.append(1)
            conn.close()

    threading.Thread(target=accept_and_drop, daemon=True).start()
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.delenv("HUMANIZE_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.getsockname()[1]}")
    monkeypatch.setattr(loading, "_HUB_PROBES", {})
    try:
        with pytest.raises(ModelUnavailable, match="cannot be reached.*HF_HUB_OFFLINE=1"):
            loading.load_sequence_classifier("no-such-org/no-such-model-22")
    finally:
        server.close()
    assert len(accepted) == 1


def test_the_pypi_package_humanize_in_the_same_environment_is_one_clear_import_error(tmp_path):
    dist = tmp_path / "humanize-4.9.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: humanize\nVersion: 4.9.0\n")
    (dist / "RECORD").write_text("humanize/__init__.py,,\nhumanize/number.py,,\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), str(tmp_path)])}
    out = subprocess.run([sys.executable, "-c", "import humanize"], capture_output=True, text=True, env=env)
    assert out.returncode != 0
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: the PyPI package 'humanize' 4.9.0") and "pip uninstall humanize" in last
