"""A user's own detector and attack, first-class everywhere (issue #20 §1, §3).

Plug-in files in a directory outside the repository, named by import path on the command line;
the run works with the local and the Ray executor and gives identical tables; ``export``,
``ars`` and ``card --documents`` on the finished run work in a new process without
``--plugin`` (they read the run's manifest); an entry-point plug-in installed with
``pip install -e`` does the same.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from humanize import attacks, detectors
from humanize.plugins import load_plugin
from humanize._registry import Spec, is_import_path, parse_spec
from humanize.benchmarks.runner.config import AttackSpec, DetectorSpec, RunConfig
from humanize.benchmarks.runner.store import ResultsStore
from humanize.exceptions import ConfigError, PluginError

MY_DETECTORS = '''
"""A user's detector outside the package: the share of ASCII letters (a toy score)."""
import numpy as np

from humanize.detectors import Detector


class Mine(Detector):
    """Share of a text's characters that are ASCII letters (higher = more machine-like, here)."""

    name = "mine"
    needs_model = False

    def __init__(self, weight: float = 1.0):
        self.weight = weight

    def score(self, texts):
        return np.asarray([self.weight * sum(c.isascii() and c.isalpha() for c in t) / max(len(t), 1)
                           for t in texts], dtype=float)
'''

MY_ATTACKS = '''
"""A user's model-free attack: a share θ of the word 'and' becomes '&'."""
import re

from humanize.attacks import Edit, SiteAttack


class Swap(SiteAttack):
    """Replace a share θ of the word 'and' with an ampersand."""

    name = "swap"
    needs_model = False

    def __init__(self, rate: float = 0.5, seed: int = 0):
        self.rate = rate
        self.seed = seed
        self._validate()

    def sites(self, text):
        return [m.span() for m in re.finditer(r"\\band\\b", text)]

    def edit(self, text, site, rnd):
        return Edit(site[0], site[1], "&")
'''


def _write(folder: Path, name: str, source: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


def _cli(args: list[str], cwd: Path, env: dict | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    """``humanize-bench`` in a new process (a new shell: nothing imported, no plug-in loaded)."""
    full = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", **(env or {})}
    # only the code under test on the path (not the test folder, nor whatever else PYTHONPATH held)
    full["PYTHONPATH"] = str(Path(__import__("humanize").__file__).resolve().parent.parent)
    return subprocess.run([sys.executable, "-m", "humanize.cli.main", *args], cwd=cwd, env=full,
                          capture_output=True, text=True, timeout=timeout)


def _ok(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


def _tables(db: Path) -> dict:
    with ResultsStore(db, readonly=True) as store:
        return store.run_tables()


# -- naming: import paths, plug-in files, specs on the command line ------------------------------------
def test_command_line_specs_take_import_paths_with_or_without_parameters():
    assert parse_spec("homoglyph") == Spec("homoglyph", {})
    assert parse_spec("homoglyph:rate=0.5") == Spec("homoglyph", {"rate": 0.5})
    assert parse_spec("my_attacks:Swap") == Spec("my_attacks:Swap", {})
    assert parse_spec("pkg.mod:Swap:rate=0.2,seed=3") == Spec("pkg.mod:Swap", {"rate": 0.2, "seed": 3})
    assert is_import_path("pkg.mod:Outer.Inner") and not is_import_path("homoglyph") and not is_import_path("a:b=1")


def test_a_plugin_file_is_imported_by_its_stem_and_its_classes_resolve_by_import_path(tmp_path):
    load_plugin(_write(tmp_path / "p1", "plug_det_a.py", MY_DETECTORS.replace("Mine", "MineA")))
    cls = detectors.resolve("plug_det_a:MineA")
    assert cls.__name__ == "MineA" and detectors.origin("plug_det_a:MineA").startswith("plug-in file ")
    assert detectors.get("plug_det_a:MineA", weight=2.0).score(["abc"])[0] == pytest.approx(2.0)
    assert detectors.origin("tfidf_lr") == "built in"


def test_plugin_files_that_cannot_be_used_fail_with_one_line_naming_the_file(tmp_path):
    with pytest.raises(PluginError, match="no such file"):
        load_plugin(tmp_path / "missing.py")
    with pytest.raises(PluginError, match="expected a Python file"):
        load_plugin(_write(tmp_path, "notes.txt", "x"))
    with pytest.raises(PluginError, match="not a Python module name"):
        load_plugin(_write(tmp_path, "my-plugin.py", "x = 1"))
    with pytest.raises(PluginError, match=r"failed to import: ZeroDivisionError"):
        load_plugin(_write(tmp_path, "plug_broken.py", "x = 1 / 0"))
    with pytest.raises(PluginError, match="a module named 'json' is already imported"):
        load_plugin(_write(tmp_path, "json.py", "x = 1"))
    with pytest.raises(ValueError, match=r"no module named 'nowhere_pkg'"):
        attacks.resolve("nowhere_pkg:Swap")
    with pytest.raises(ValueError, match=r"has no attribute 'Nope'"):
        attacks.resolve("humanize.attacks.homoglyph:Nope")
    with pytest.raises(TypeError, match="not a Attack subclass"):
        attacks.resolve("humanize.detectors.tfidf:TfidfLogReg")


def test_a_config_names_plugins_relative_to_its_file_and_validates_their_components(tmp_path):
    _write(tmp_path / "conf", "plug_cfg_det.py", MY_DETECTORS)
    _write(tmp_path / "conf", "plug_cfg_att.py", MY_ATTACKS)
    (tmp_path / "conf" / "run.toml").write_text(textwrap.dedent('''
        attacks = ["plug_cfg_att:Swap", {name = "plug_cfg_att:Swap", rate = 0.9, label = "swap_all"}]
        detectors = [{name = "plug_cfg_det:Mine", weight = 0.5}]
        [run]
        plugins = ["plug_cfg_det.py", "plug_cfg_att.py"]
        db = "r.sqlite"
        '''), encoding="utf-8")
    from humanize.benchmarks.runner.config import load_config

    cfg = load_config(tmp_path / "conf" / "run.toml").validate()
    assert [Path(p).name for p in cfg.plugins] == ["plug_cfg_det.py", "plug_cfg_att.py"]
    assert [s.base_label() for s in cfg.attacks] == ["swap", "swap_all"]
    assert [d.base_label() for d in cfg.detectors] == ["mine"]
    cfg.plugins = [str(tmp_path / "absent.py")]
    with pytest.raises(ConfigError, match="absent.py.*no such file"):
        cfg.validate()


# -- traits declared on the class, not guessed from a name ----------------------------------------------
def test_rate_is_read_from_the_constructor_and_a_false_declaration_is_refused():
    from humanize.attacks import Attack

    class NoRate(Attack):
        name = "no_rate"

        def __init__(self, seed: int = 0):
            self.seed = seed
            self._validate()

        def propose(self, text, rng):
            return []

    assert NoRate.has_rate is False and NoRate().apply("a b").text == "a b"  # no AttributeError on rate
    with pytest.raises(TypeError, match="declares has_rate = True but its __init__ takes no rate"):
        class Wrong(Attack):  # noqa: F841 - refused when defined
            has_rate = True

            def __init__(self, seed: int = 0):
                self.seed = seed
    assert attacks.resolve("homoglyph").has_rate and not attacks.resolve("paraphrase").has_rate


def test_scheduling_follows_the_declared_needs_model(tmp_path):
    from humanize.benchmarks.runner import jobs

    load_plugin(_write(tmp_path / "p2", "plug_sched.py", MY_ATTACKS))
    assert jobs.attack_kind(AttackSpec("plug_sched:Swap")) == "task"
    assert jobs.attack_kind(AttackSpec("homoglyph")) == "task"
    assert jobs.attack_kind(AttackSpec("paraphrase")) == "model"
    assert jobs.attack_kind(AttackSpec("pipeline", {"attacks": ["plug_sched:Swap", "homoglyph"]})) == "task"


def test_a_parameter_without_an_exact_fingerprint_fails_when_the_config_is_validated():
    class Scaled(detectors.Detector):
        name = "scaled_test"

        def __init__(self, fn=None):
            self.fn = fn

        def score(self, texts):
            return [self.fn(len(t)) for t in texts]

    detectors.register("scaled_test", Scaled)
    try:
        cfg = RunConfig(attacks=[AttackSpec("homoglyph")],
                        detectors=[DetectorSpec("scaled_test", {"fn": lambda n: n / 10})])
        with pytest.raises(ConfigError, match=r"detector 'scaled_test': .*cannot fingerprint"):
            cfg.validate()
    finally:
        from humanize.detectors import registry as detector_registry

        detector_registry._REGISTRY.pop("scaled_test", None)


# -- the plug-in run, end to end in new processes -------------------------------------------------------
@pytest.fixture(scope="module")
def plugin_runs(tmp_path_factory):
    """The issue's command, from a folder outside the repository, with each executor."""
    home = tmp_path_factory.mktemp("user")
    _write(home, "my_detectors.py", MY_DETECTORS)
    _write(home, "my_attacks.py", MY_ATTACKS)
    common = ["run", "--plugin", "my_detectors.py", "--plugin", "my_attacks.py", "--detector", "my_detectors:Mine",
              "--attack", "my_attacks:Swap", "--attack", "homoglyph", "--dataset", "demo", "--n", "40", "--quiet",
              "--no-quality"]
    local = _ok(_cli([*common, "--db", "local.sqlite", "--executor", "local"], home))
    ray = _ok(_cli([*common, "--db", "ray.sqlite", "--executor", "ray"], home))
    return home, local, ray


def test_the_plugin_run_gives_identical_tables_locally_and_on_ray(plugin_runs):
    home, local, ray = plugin_runs
    assert "== auroc" in local and "swap" in local and "mine" in local
    a, b = _tables(home / "local.sqlite"), _tables(home / "ray.sqlite")
    assert set(a) == set(b)
    for name in a:
        if name == "cost":  # time and memory differ by executor; the documents and their edits do not
            keep = [c for c in ("attack", "id", "n_edits", "tokens_in", "tokens_out") if c in a[name].columns]
            pd.testing.assert_frame_equal(a[name][keep].sort_values(keep).reset_index(drop=True),
                                          b[name][keep].sort_values(keep).reset_index(drop=True))
            continue
        if name == "detector_cost":  # the detectors' seconds differ by executor; what they scored does not
            keep = [c for c in ("detector", "texts_scored", "texts_cached") if c in a[name].columns]
            pd.testing.assert_frame_equal(a[name][keep].sort_values(keep).reset_index(drop=True),
                                          b[name][keep].sort_values(keep).reset_index(drop=True))
            continue
        pd.testing.assert_frame_equal(a[name], b[name])
    assert set(a["metrics"]["attack"]) == {"none", "swap", "homoglyph"} and set(a["metrics"]["detector"]) == {"mine"}


def test_the_run_records_a_manifest_of_what_ran(plugin_runs):
    home, _, _ = plugin_runs
    with ResultsStore(home / "local.sqlite", readonly=True) as store:
        from humanize.benchmarks.runner.manifest import run_manifest

        run_id, manifest = run_manifest(store)
    (det,) = manifest["detectors"]
    assert det["class"] == "my_detectors:Mine" and det["label"] == "mine" and det["needs_model"] is False
    assert det["origin"] == f"plug-in file {home / 'my_detectors.py'}" and len(det["plugin"]["blake2b"]) == 32
    swap = next(a for a in manifest["attacks"] if a["label"] == "swap")
    assert swap["class"] == "my_attacks:Swap" and swap["key"].startswith("swap/") and swap["rate"] == 0.5
    assert {p["module"] for p in manifest["plugins"]} == {"my_detectors", "my_attacks"}
    assert manifest["dataset"]["sample"]["test_machine"] + manifest["dataset"]["sample"]["train_machine"] == 40
    assert {"humanize", "torch", "transformers", "scikit-learn"} <= set(manifest["versions"])
    assert manifest["seeds"]["seed"] == 0 and "cores" in manifest["machine"] and manifest["run_id"] == run_id


def test_export_and_card_work_in_a_new_shell_without_the_plugin_and_ars_needs_it_named(plugin_runs, tmp_path):
    home, _, _ = plugin_runs
    db = str(home / "local.sqlite")
    out = _ok(_cli(["export", "--db", db, "--out", str(tmp_path / "export"), "--format", "csv"], tmp_path))
    docs = pd.read_csv(tmp_path / "export" / "documents.csv")
    swapped = docs[docs["attack"] == "swap"]
    assert len(swapped) == 20 and (swapped["text"] != swapped["original"]).any() and "documents.csv" in out
    assert all("&" in t for t, e in zip(swapped["text"], swapped["edits"]) if json.loads(e))
    _ok(_cli(["card", "--db", db, "--out", str(tmp_path / "cards"), "--documents"], tmp_path))
    card = (tmp_path / "cards" / "card_mine.md").read_text(encoding="utf-8")
    assert "my_detectors:Mine" in card and "plug-in file" in card
    assert (tmp_path / "cards" / "documents.html").stat().st_size > 10_000
    # the ARS is computed anew with the run's detector: its code runs only when the user names the file (#35)
    refused = _cli(["ars", "--db", db], tmp_path)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and "--plugin" in refused.stderr
    assert str(home / "my_detectors.py") in refused.stderr
    ars = _ok(_cli(["ars", "--db", db, "--plugin", str(home / "my_detectors.py"),
                    "--plugin", str(home / "my_attacks.py")], tmp_path))
    assert "mine" in ars and "overall" in ars


def test_a_changed_plugin_is_refused_before_import_unless_allowed_and_reading_the_run_needs_none(plugin_runs,
                                                                                                tmp_path):
    home, _, _ = plugin_runs
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "local.sqlite").write_bytes((home / "local.sqlite").read_bytes())
    db = str(copy / "local.sqlite")
    moved = home / "my_detectors.py"
    original = moved.read_text(encoding="utf-8")
    witness = tmp_path / "imported"
    plugins = ["--plugin", str(moved), "--plugin", str(home / "my_attacks.py")]
    try:
        moved.write_text(original + f"\nopen({str(witness)!r}, 'w').write('ran')\n", encoding="utf-8")
        changed = _cli(["ars", "--db", db, *plugins], tmp_path)
        assert changed.returncode == 2 and "changed since the run" in changed.stderr, changed.stderr
        assert "--allow-changed-plugins" in changed.stderr and "Traceback" not in changed.stderr
        assert not witness.exists()  # refused before import: the changed code never ran
        allowed = _cli(["ars", "--db", db, *plugins, "--allow-changed-plugins"], tmp_path)
        assert allowed.returncode == 0, allowed.stderr
        assert witness.exists()
        moved.unlink()
        gone = _cli(["ars", "--db", db], tmp_path)
        assert gone.returncode == 2 and "my_detectors.py" in gone.stderr and "Traceback" not in gone.stderr
        # reading what the run did needs no plug-in at all
        _ok(_cli(["export", "--db", db, "--out", str(tmp_path / "e"), "--format", "csv"], tmp_path))
        _ok(_cli(["report", "--db", db], tmp_path))
    finally:
        moved.write_text(original, encoding="utf-8")


# -- an installed package's entry points ---------------------------------------------------------------
ENTRY_POINT_PYPROJECT = '''
[build-system]
requires = ["setuptools"]
build-backend = "setuptools.build_meta"

[project]
name = "humanize-tinyplug"
version = "0.0.1"

[project.entry-points."humanize.detectors"]
tiny_letters = "tinyplug.components:TinyLetters"

[project.entry-points."humanize.attacks"]
tiny_swap = "tinyplug.components:TinySwap"

[tool.setuptools]
packages = ["tinyplug"]
'''


@pytest.fixture(scope="module")
def installed_plugin(tmp_path_factory):
    """A tiny package declaring a detector and an attack under the entry-point groups, installed
    with ``pip install -e`` into this environment for the module's tests, then uninstalled."""
    root = tmp_path_factory.mktemp("tinyplug")
    (root / "pyproject.toml").write_text(ENTRY_POINT_PYPROJECT, encoding="utf-8")
    source = (MY_DETECTORS.replace("class Mine", "class TinyLetters").replace('"mine"', '"tiny_letters"')
              + MY_ATTACKS.replace("class Swap", "class TinySwap").replace('"swap"', '"tiny_swap"'))
    _write(root / "tinyplug", "__init__.py", "")
    _write(root / "tinyplug", "components.py", source)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    proc = subprocess.run([*pip, "install", "--no-deps", "--no-build-isolation", "--no-index", "-e", str(root)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    try:
        yield root
    finally:
        subprocess.run([*pip, "uninstall", "-y", "humanize-tinyplug"], capture_output=True, text=True, timeout=300)


ENTRY_POINT_RUN = """
attacks = ["tiny_swap", "homoglyph"]
detectors = ["tiny_letters"]
[dataset]
name = "demo"
n = 20
[quality]
meters = ["rouge_l"]
custom = ["my_meters:LengthRatio"]
[run]
plugins = ["my_meters.py"]
executor = "{executor}"
db = "{executor}.sqlite"
"""


@pytest.fixture(scope="module")
def entry_point_runs(installed_plugin, tmp_path_factory):
    """One configuration, run locally and on Ray: the installed entry-point detector and attack, and a plug-in
    file's quality meter (run in the Ray workers), from a config file."""
    home = tmp_path_factory.mktemp("entry_point_runs")
    _write(home, "my_meters.py", MY_METERS)
    for executor in ("local", "ray"):
        (home / f"{executor}.toml").write_text(ENTRY_POINT_RUN.format(executor=executor), encoding="utf-8")
        _ok(_cli(["run", "--config", f"{executor}.toml", "--quiet"], home))
    return home


def test_an_installed_entry_point_plugin_is_listed_and_runs_everywhere(entry_point_runs, tmp_path):
    listed = _ok(_cli(["list", "detectors", "--origins"], tmp_path))
    line = next(x for x in listed.splitlines() if x.startswith("tiny_letters"))
    assert "entry point humanize.detectors of humanize-tinyplug 0.0.1" in line
    assert "[built in]" in next(x for x in listed.splitlines() if x.startswith("tfidf_lr"))
    home = entry_point_runs
    a, b = _tables(home / "local.sqlite"), _tables(home / "ray.sqlite")
    pd.testing.assert_frame_equal(a["metrics"], b["metrics"])
    assert set(a["metrics"]["attack"]) == {"none", "tiny_swap", "homoglyph"}
    _ok(_cli(["card", "--db", str(home / "local.sqlite"), "--out", "cards", "--documents"], tmp_path))
    _ok(_cli(["export", "--db", str(home / "local.sqlite"), "--out", "export"], tmp_path))
    assert "tiny_letters" in _ok(_cli(["ars", "--db", str(home / "local.sqlite")], tmp_path))


MY_METERS = '''
from humanize.quality import PairMeter


class LengthRatio(PairMeter):
    """Attacked length over original length, in characters."""

    name = "length_ratio"

    def score(self, originals, attacked):
        return {"length_ratio": [len(b) / max(len(a), 1) for a, b in zip(originals, attacked)]}
'''


def test_a_plugin_quality_meter_runs_in_ray_workers_from_a_config_file(entry_point_runs):
    """The plug-in file's meter, named in the config's [quality] custom, ran in the Ray run (and locally alike)."""
    quality = _tables(entry_point_runs / "ray.sqlite")["quality"]
    swapped = quality[quality["attack"] == "tiny_swap"]
    assert len(swapped) >= 1 and (swapped["length_ratio"] <= 1).all() and (swapped["length_ratio"] > 0.9).all()
    assert ((swapped["length_ratio"] < 1) == (swapped["rouge_l"] < 1)).all()  # an '&' changed both, or neither
    local = _tables(entry_point_runs / "local.sqlite")["quality"]
    keep = ["attack", "id", "length_ratio", "rouge_l"]
    pd.testing.assert_frame_equal(local[keep].sort_values(keep[:2]).reset_index(drop=True),
                                  quality[keep].sort_values(keep[:2]).reset_index(drop=True))
