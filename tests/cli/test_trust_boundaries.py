"""Trust boundaries (issue #35), one or more cases per class, written from the issue's description:

- a results database is data: no read-side command imports code because the database names it;
- a secret given in a URL's query or a body template leaves in clear nowhere (every file a run
  wrote is searched for it, and the reprs and errors);
- a label is text: no live link or image in Markdown, no escape sequence on the terminal, card
  file names unique and bounded;
- a stored run is verified on every read (its row's checksum; its sample's digest);
- every failure is one line with a meaningful exit status (a detector failing on every text, a
  closed pipe, a bug, a plug-in that exits or parses argv at import or is named like a standard
  module, a disk I/O error on a full disk, a guide that returns NaN, a FunctionDetector in a
  plug-in whose helper changed).
"""
from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from humanize.cli.main import main

from ..score_server import ScoreServer
from ..secret_scan import assert_no_secret_after_read_commands

ROOT = Path(__import__("humanize").__file__).resolve().parent.parent
RUN = ["run", "--attack", "upper_lower", "--detector", "surface_probe", "--n", "8", "--no-quality", "--quiet"]


def _cli(args, cwd, stdout=subprocess.PIPE, timeout=600):
    """``humanize-bench`` in a new process (a new shell: nothing imported, no plug-in loaded)."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "humanize.cli.main", *args], cwd=cwd, env=env, stdout=stdout,
                          stderr=subprocess.PIPE, text=True, timeout=timeout)


def _one_line(proc_or_err: str) -> str:
    lines = [ln for ln in proc_or_err.strip().splitlines() if ln.strip()]
    assert len(lines) == 1, proc_or_err
    assert "Traceback" not in proc_or_err
    return lines[0]


# -- a results database is data ---------------------------------------------------------------------------

WITNESSED = '''
"""A plug-in detector that leaves a witness file each time it is imported."""
import os

import numpy as np

from humanize.detectors import Detector

with open(os.environ.get("WITNESS", os.devnull), "a") as fh:
    fh.write("imported\\n")


class Witnessed(Detector):
    """Share of the letter e."""

    name = "witnessed"
    needs_model = False

    def score(self, texts):
        return np.asarray([t.count("e") / max(len(t), 1) for t in texts], dtype=float)
'''


@pytest.fixture(scope="module")
def plugin_db(tmp_path_factory):
    """A finished run with a plug-in detector, and a ``helper.py`` beside its database; the plug-in
    and the helper leave a witness when imported."""
    home = tmp_path_factory.mktemp("shared_db")
    (home / "plug_witnessed.py").write_text(WITNESSED, encoding="utf-8")
    (home / "helper.py").write_text("open(__import__('os').environ['WITNESS'], 'a').write('helper\\n')\n",
                                    encoding="utf-8")
    witness = home / "witness.txt"
    env = {**os.environ, "WITNESS": str(witness), "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1",
           "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "humanize.cli.main", "run", "--plugin", "plug_witnessed.py",
                           "--detector", "plug_witnessed:Witnessed", "--attack", "upper_lower", "--n", "8",
                           "--no-quality", "--quiet", "--db", "r.sqlite"], cwd=home, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert witness.read_text() == "imported\n"
    witness.unlink()
    return home, witness, env


def test_no_read_side_command_imports_a_plugin_or_a_file_beside_the_database(plugin_db, tmp_path):
    home, witness, env = plugin_db

    def cli(*args):  # from the database's folder: helper.py and the plug-in are on sys.path there
        return subprocess.run([sys.executable, "-m", "humanize.cli.main", *args], cwd=home, env=env,
                              capture_output=True, text=True, timeout=600)

    ars = cli("ars", "--db", "r.sqlite")
    line = _one_line(ars.stderr)
    assert ars.returncode == 2 and "plug_witnessed.py" in line and "--plugin" in line and "BLAKE2b" in line
    ars_other = cli("ars", "--db", "r.sqlite", "--detector", "surface_probe", "--n-boot", "0")
    assert ars_other.returncode == 0, ars_other.stderr  # a detector that needs no plug-in: none is needed
    for args in (["export", "--db", "r.sqlite", "--out", str(tmp_path / "e"), "--format", "csv"],
                 ["card", "--db", "r.sqlite", "--out", str(tmp_path / "c"), "--documents"],
                 ["report", "--db", "r.sqlite"], ["runs", "--db", "r.sqlite"],
                 ["plot", "--db", "r.sqlite", "--out", str(tmp_path / "p"), "--format", "svg"]):
        done = cli(*args)
        assert done.returncode == 0, (args, done.stderr)
    assert not witness.exists(), witness.read_text()  # nothing the database names ran, nor helper.py
    named = cli("ars", "--db", "r.sqlite", "--plugin", "plug_witnessed.py", "--n-boot", "0")
    assert named.returncode == 0, named.stderr
    assert witness.read_text() == "imported\n"  # named on the command line: then, and only then, it runs


def test_names_a_stored_run_records_resolve_only_to_code_the_user_loaded(tmp_path, monkeypatch):
    from humanize import detectors
    from humanize._registry import names_from_stored_data
    from humanize.benchmarks import data
    from humanize.benchmarks.runner.config import config_from_stored

    witness = tmp_path / "witness.txt"
    (tmp_path / "helper_beside.py").write_text(f"open({str(witness)!r}, 'w').write('ran')\ndef rows(**k): return []\n",
                                               encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    with names_from_stored_data():
        for name in ("helper_beside:rows", "os:system", "humanize.plugins:load_plugin"):
            with pytest.raises(ValueError, match="never imported"):
                data.dataset_loader(name)
            assert not data.knows_dataset(name)
        with pytest.raises(ValueError, match="never imported"):
            detectors.resolve("helper_beside:Thing")
        assert detectors.resolve("tfidf_lr").__name__  # the library's own names resolve as ever
    assert not witness.exists()
    # a stored configuration's plug-in list is never loaded from the store
    cfg = config_from_stored({"dataset": "demo", "plugins": [str(tmp_path / "helper_beside.py")]})
    assert cfg.plugins == []


def test_a_plugin_is_checked_against_the_recorded_digest_before_it_is_imported(tmp_path):
    from humanize.plugins import file_digest, load_plugins
    from humanize.exceptions import PluginError

    witness = tmp_path / "witness.txt"
    path = tmp_path / "plug_digest_checked.py"
    path.write_text(f"open({str(witness)!r}, 'w').write('ran')\n", encoding="utf-8")
    recorded = [{"path": str(path), "module": "plug_digest_checked", "blake2b": "0" * 32}]
    with pytest.raises(PluginError) as info:
        load_plugins([str(path)], recorded=recorded)
    assert "0" * 32 in str(info.value) and file_digest(path) in str(info.value)
    assert "--allow-changed-plugins" in str(info.value) and not witness.exists()
    load_plugins([str(path)], recorded=recorded, allow_changed=True)
    assert witness.read_text() == "ran"


def test_a_plugin_that_exits_or_parses_argv_or_shadows_a_module_fails_in_one_line(tmp_path, capsys):
    from humanize.plugins import load_plugin
    from humanize.exceptions import PluginError

    exits = tmp_path / "plug_exits.py"
    exits.write_text("import sys\nsys.exit(0)\n", encoding="utf-8")
    with pytest.raises(PluginError, match=r"called sys.exit\(0\)"):
        load_plugin(exits)
    parses = tmp_path / "plug_parses.py"
    parses.write_text("import argparse, sys\nseen = list(sys.argv)\np = argparse.ArgumentParser()\n"
                      "p.add_argument('--only-mine', required=True)\np.parse_args()\n", encoding="utf-8")
    argv = list(sys.argv)
    with pytest.raises(PluginError, match="called sys.exit"):
        load_plugin(parses)
    assert sys.argv == argv  # restored
    # standard-library modules the library may import later (imported or not yet), an installed package
    for name in ("tabnanny", "mailbox", "sqlite3", "numpy"):
        shadow = tmp_path / f"{name}.py"
        shadow.write_text("raise SystemExit('shadowed')\n", encoding="utf-8")
        with pytest.raises(PluginError, match="rename the file"):
            load_plugin(shadow)
        assert getattr(sys.modules.get(name), "__file__", None) != str(shadow)
    # the same through the command line: `run` with a plug-in that exits is an error, not a success
    status = main([*RUN, "--plugin", str(exits), "--db", str(tmp_path / "r.sqlite")])
    err = capsys.readouterr().err
    assert status == 2 and "sys.exit(0)" in _one_line(err)
    assert not (tmp_path / "r.sqlite").exists()


# -- secrets ----------------------------------------------------------------------------------------------

SECRET_QUERY = "QueryKey-7f3a9c2b1d"
SECRET_BODY = "BodyKey-4e8d2a6c0f"


@pytest.fixture
def scorer():
    with ScoreServer() as server:
        yield server


def test_a_secret_in_the_query_or_the_body_is_in_no_file_a_run_writes(scorer, tmp_path, capsys):
    from humanize import detectors

    url = f"{scorer.url}?code={SECRET_QUERY}&model=v2"
    body = {"texts": "{texts}", "api_key": SECRET_BODY}
    det = detectors.get("endpoint", url=url, body=body, max_retries=0)
    shown = repr(det) + json.dumps(det.provenance())
    assert SECRET_QUERY not in shown and SECRET_BODY not in shown and "<hidden:blake2b=" in shown
    other = detectors.get("endpoint", url=url.replace(SECRET_QUERY, "another-key-000"), body=body)
    assert other.fingerprint() != det.fingerprint()  # a digest still tells two keys apart
    out = tmp_path / "out"
    config = out / "run.toml"
    out.mkdir()
    config.write_text(textwrap.dedent(f'''
        attacks = ["upper_lower"]
        detectors = [{{name = "endpoint", url = "{url}", body = {{texts = "{{texts}}", api_key = "{SECRET_BODY}"}}, max_retries = 0}}]
        [dataset]
        name = "demo"
        n = 8
        [run]
        db = "{out / 'r.sqlite'}"
        '''), encoding="utf-8")
    assert main(["run", "--config", str(config), "--quiet", "--no-quality"]) == 0
    seen = [(r["path"], r["body"].get("api_key")) for r in scorer.log]
    assert seen and all(SECRET_QUERY in p and k == SECRET_BODY for p, k in seen)  # sent as given
    assert_no_secret_after_read_commands(main, str(out / "r.sqlite"), out, out, (SECRET_QUERY, SECRET_BODY), capsys,
                                         skip=[config])


# -- labels -----------------------------------------------------------------------------------------------

EVIL = "probe](javascript:alert(1)) ![x](http://evil.example/x.png) \x1b[31mred\x1b]0;title\x07"


@pytest.fixture(scope="module")
def labelled(tmp_path_factory):
    from humanize.benchmarks.runner import run
    from humanize.benchmarks.runner.config import AttackSpec, DetectorSpec, RunConfig

    out = tmp_path_factory.mktemp("labels")
    long_label = "surface probe " + "x" * 400
    cfg = RunConfig(attacks=[AttackSpec("upper_lower", label="upper\x1b[2Jlower $\\notacommand{$")],
                    detectors=[DetectorSpec("surface_probe", {}, label=EVIL),
                               DetectorSpec("surface_probe", {"features": "formatting"}, label="a/b"),
                               DetectorSpec("surface_probe", {"features": "punctuation"}, label="a?b"),
                               DetectorSpec("tfidf_lr", {}, label=long_label)],
                    n=8, quality=False, db=str(out / "r.sqlite"))
    run(cfg, progress=False)
    return out, long_label


def test_a_label_is_never_a_link_an_image_or_a_terminal_command(labelled, capsys):
    out, _ = labelled
    db = str(out / "r.sqlite")
    assert main(["report", "--db", db, "--out", str(out / "report")]) == 0
    assert main(["runs", "--db", db]) == 0
    assert main(["card", "--db", db, "--out", str(out / "cards"), "--format", "md", "html"]) == 0
    # a figure draws a label as text: no mathtext parse of "$\\notacommand{$" (an error before), no escape
    assert main(["plot", "--db", db, "--out", str(out / "plots"), "--format", "svg"]) == 0
    import xml.dom.minidom

    for svg in (out / "plots").glob("*.svg"):  # a control character in a label made every SVG invalid XML
        xml.dom.minidom.parse(str(svg))
    printed = capsys.readouterr()
    assert "\x1b" not in printed.out + printed.err and "\x07" not in printed.out + printed.err
    assert "⟨U+001B⟩" in printed.out
    for path in [out / "report" / "report.md", *(out / "cards").glob("*.md")]:
        text = path.read_text(encoding="utf-8")
        # CommonMark: "]" then a backslash-escaped "(" opens no link and no image
        assert "](javascript:" not in text and "](http://evil" not in text, path
        assert "]\\(javascript:" in text or path.name != "report.md"
        assert "\x1b" not in text and "\x07" not in text, path
    for path in (out / "cards").glob("*.html"):
        text = path.read_text(encoding="utf-8")
        assert 'href="javascript:' not in text and 'src="http://evil' not in text and "\x1b" not in text


def test_card_file_names_are_unique_bounded_and_stable(labelled):
    from humanize.benchmarks.reporting._files import file_stem

    out, long_label = labelled
    names = sorted(p.name for p in (out / "cards").glob("*.md"))
    assert len(names) == 4  # "a/b" and "a?b" differ only in dropped characters: two cards, not one
    assert all(len(n) < 100 and "/" not in n and not n.startswith(".") for n in names)
    assert file_stem("a/b", "card_") != file_stem("a?b", "card_") == file_stem("a?b", "card_")
    assert file_stem("mine", "card_") == "card_mine" and len(file_stem(long_label)) <= 60
    assert file_stem("Mine") != file_stem("mine")  # no two names that a case-blind disk would merge


def test_markdown_html_and_terminal_escaping_each_have_one_function():
    from humanize.benchmarks.reporting._escape import html_text, md_text, terminal_text

    md = md_text(EVIL)
    assert "](" not in md and "][" not in md_text("[x][ref]") and md_text("[0.78, 0.99]") == "[0.78, 0.99]"
    assert "\x1b" not in md and "\x07" not in md
    assert "<" not in html_text("<img src=x onerror=alert(1)>") and "\x1b" not in html_text(EVIL)
    assert terminal_text("a\x1b[31mb\r\n") == "a⟨U+001B⟩[31mb⟨U+000D⟩⟨U+000A⟩"


# -- a stored result is what it claims ------------------------------------------------------------------------

def _finished(tmp_path, extra=()):
    db = tmp_path / "r.sqlite"
    assert main([*RUN, "--db", str(db), *extra]) == 0
    return str(db)


def test_an_edited_manifest_is_refused_by_every_command_that_reads_it(tmp_path, capsys):
    db = _finished(tmp_path)
    with sqlite3.connect(db) as conn:
        (config,) = conn.execute("SELECT config FROM runs").fetchone()
        data = json.loads(config)
        data["seed"] = 12345
        data["manifest"]["seeds"]["seed"] = 12345
        conn.execute("UPDATE runs SET config = ?", (json.dumps(data, sort_keys=True),))
    capsys.readouterr()
    assert main(["runs", "--db", db]) == 0
    assert "corrupt" in capsys.readouterr().out
    for args in (["ars", "--db", db, "--n-boot", "0"], ["report", "--db", db],
                 ["export", "--db", db, "--out", str(tmp_path / "e")], ["card", "--db", db, "--out", str(tmp_path / "c")]):
        assert main(args) == 2, args
        assert "checksum" in _one_line(capsys.readouterr().err)


def test_a_deleted_inputs_table_does_not_hide_an_edited_dataset(tmp_path, capsys):
    import pandas as pd

    from humanize.benchmarks.data import load_dataset

    rows = load_dataset("demo").head(60)
    path = tmp_path / "texts.csv"
    rows.rename(columns={"generation": "text"})[["id", "text", "label", "domain"]].to_csv(path, index=False)
    cfg = tmp_path / "run.toml"
    cfg.write_text(textwrap.dedent(f'''
        attacks = ["upper_lower"]
        detectors = ["surface_probe"]
        [dataset]
        name = "file"
        n = 8
        path = "{path}"
        domain_column = "domain"
        [run]
        db = "{tmp_path / 'r.sqlite'}"
        '''), encoding="utf-8")
    assert main(["run", "--config", str(cfg), "--quiet", "--no-quality"]) == 0
    db = str(tmp_path / "r.sqlite")
    edited = pd.read_csv(path)
    edited["text"] = edited["text"] + " (edited)"
    edited.to_csv(path, index=False)
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM inputs")
    capsys.readouterr()
    assert main(["export", "--db", db, "--out", str(tmp_path / "e"), "--format", "csv"]) == 2
    assert "changed since run" in _one_line(capsys.readouterr().err)
    assert main(["card", "--db", db, "--out", str(tmp_path / "c"), "--documents"]) == 2
    assert "changed since run" in _one_line(capsys.readouterr().err)


# -- every failure is one line, with an exit status that means something ----------------------------------

RAISING = '''
import numpy as np

from humanize.detectors import Detector


class Quota(Detector):
    """Every call fails as a vendor SDK does when its quota is spent."""

    name = "quota"
    needs_model = False

    def score(self, texts):
        from humanize.benchmarks.runner.jobs import WARMUP_PROBE

        if list(texts) == [WARMUP_PROBE]:
            return np.zeros(1)
        raise RuntimeError("quota exceeded for project demo-123")
'''


def test_a_detector_that_fails_on_every_text_ends_in_one_line_naming_it(tmp_path, capsys):
    plugin = tmp_path / "plug_quota.py"
    plugin.write_text(RAISING, encoding="utf-8")
    status = main(["run", "--plugin", str(plugin), "--detector", "plug_quota:Quota", "--attack", "upper_lower",
                   "--n", "8", "--no-quality", "--quiet", "--db", str(tmp_path / "r.sqlite")])
    line = _one_line(capsys.readouterr().err)
    assert status == 2 and "'quota'" in line and "quota exceeded" in line and "failures table" in line


BAD_OUTPUT = '''
import numpy as np

from humanize.detectors import Detector


class Bad(Detector):
    """Answers wrongly in the way named by {kind!r}."""

    name = "bad"
    needs_model = False

    def score(self, texts):
        from humanize.benchmarks.runner.jobs import WARMUP_PROBE

        if list(texts) == [WARMUP_PROBE]:
            return np.zeros(1)
        kind = {kind!r}
        if kind == "nan":
            return np.full(len(texts), np.nan)
        if kind == "generator":
            return (0.5 for _ in texts)
        if kind == "2d":
            return np.zeros((len(texts), 2))
        return np.zeros(len(texts) - 1)
'''


@pytest.mark.parametrize("kind, said", [("nan", "NaN"), ("generator", "generator"), ("2d", ", 2) for"),
                                        ("too_few", "expected one score per text")])
def test_a_detector_answering_wrongly_everywhere_ends_in_one_line(kind, said, tmp_path, capsys):
    plugin = tmp_path / f"plug_bad_{kind}.py"
    plugin.write_text(BAD_OUTPUT.format(kind=kind), encoding="utf-8")
    status = main(["run", "--plugin", str(plugin), "--detector", f"plug_bad_{kind}:Bad", "--attack", "upper_lower",
                   "--n", "8", "--no-quality", "--quiet", "--batch-size", "2", "--db", str(tmp_path / "r.sqlite")])
    line = _one_line(capsys.readouterr().err)
    assert status == 2 and "'bad'" in line and said in line, line


def test_a_closed_pipe_is_quiet(tmp_path):
    db = _finished(tmp_path)
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line (`humanize-bench report | head -0`)
    try:
        proc = subprocess.run([sys.executable, "-m", "humanize.cli.main", "report", "--db", db], stdout=write,
                              stderr=subprocess.PIPE, text=True, timeout=300, cwd=tmp_path,
                              env={**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"})
    finally:
        os.close(write)
    assert proc.stderr == "" and proc.returncode == 141


def test_a_bug_exits_1_with_its_traceback_and_where_to_report_it(tmp_path, capsys, monkeypatch):
    import humanize.cli.main as cli
    import humanize.cli.tour as tour

    def broken(args):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(tour, "_cmd_tour", broken)
    assert cli.main(["tour", "--n", "1"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and "ZeroDivisionError" in err and "report it" in err.strip().splitlines()[-1]


def test_a_disk_io_error_on_a_full_disk_says_disk_full(tmp_path):
    import shutil

    from humanize.benchmarks.runner.store_schema import is_disk_full

    io = sqlite3.OperationalError("disk I/O error")
    usage = shutil.disk_usage(tmp_path)
    assert not is_disk_full(io, tmp_path / "r.sqlite") or usage.free < (4 << 20)
    real = shutil.disk_usage
    try:
        shutil.disk_usage = lambda p: type(usage)(usage.total, usage.total - 1024, 1024)
        assert is_disk_full(io, tmp_path / "r.sqlite")
    finally:
        shutil.disk_usage = real


def test_a_guide_that_scores_every_candidate_nan_is_an_error_not_a_success():
    from humanize.attacks.generation.guided import AdversarialParaphrase
    from humanize.detectors import Detector
    from humanize.exceptions import RunError
    from humanize.generation import Generation, Generator

    class Echo(Generator):
        name = "echo"

        def generate(self, requests):
            return [Generation("Reworded: " + r.messages[-1][1].split("\n\n", 1)[-1], 5, 5) for r in requests]

    class Blind(Detector):
        name = "blind"
        needs_model = False

        def score(self, texts):
            return np.full(len(texts), np.nan)

    attack = AdversarialParaphrase(paraphraser=Echo(), guide=Blind(), mode="rerank", n_candidates=2)
    with pytest.raises(RunError, match="'blind' scored all .* NaN"):
        attack.batch(["The committee met on Tuesday. Several members raised concerns."])


HELPER_DETECTOR = '''
from humanize.detectors.function import FunctionDetector


def helper(text):
    return {value}


class Helped(FunctionDetector):
    name = "helped"

    def predict(self, texts):
        return [helper(t) for t in texts]
'''


def test_a_function_detector_in_a_plugin_is_fingerprinted_by_its_file(tmp_path):
    path = tmp_path / "plug_helped.py"
    prints = []
    for value in ("len(text) / 10", "len(text) / 20"):  # only the module-level helper changes
        path.write_text(HELPER_DETECTOR.format(value=value), encoding="utf-8")
        proc = subprocess.run([sys.executable, "-c", f"from humanize.plugins import load_plugin; "
                                                     f"print(load_plugin({str(path)!r}).Helped().fingerprint())"],
                              capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert proc.returncode == 0, proc.stderr
        prints.append(proc.stdout.strip())
    assert prints[0] != prints[1]
