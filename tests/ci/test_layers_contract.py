"""The layer contract (pyproject.toml [tool.importlinter], checked by `lint-imports` in .ci/run) has teeth.

A copy of the package's modules passes it; the same copy with one attack module importing the benchmark
runner (a layer above the attacks) fails it, naming that import. And CI runs it before the tests.
"""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytest.importorskip("importlinter")


def _copy(tmp_path: Path) -> Path:
    for path in (ROOT / "humanize").rglob("*.py"):
        dest = tmp_path / path.relative_to(ROOT)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dest)
    shutil.copyfile(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def _lint(where: Path) -> subprocess.CompletedProcess:
    lint = Path(sys.executable).with_name("lint-imports")
    command = [str(lint)] if lint.exists() else [sys.executable, "-m", "importlinter.cli"]
    return subprocess.run([*command, "--no-cache"], cwd=where, capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(where), "HOME": str(where)})


def test_an_attack_importing_the_runner_breaks_the_contract(tmp_path):
    tree = _copy(tmp_path)
    ok = _lint(tree)
    assert ok.returncode == 0, ok.stdout[-3000:] + ok.stderr[-2000:]
    assert "3 kept, 0 broken" in ok.stdout
    victim = tree / "humanize/attacks/homoglyph.py"
    victim.write_text(victim.read_text(encoding="utf-8") + "\nimport humanize.benchmarks.runner  # noqa: E402,F401\n",
                      encoding="utf-8")
    broken = _lint(tree)
    assert broken.returncode != 0
    assert "BROKEN" in broken.stdout
    assert "humanize.attacks.homoglyph -> humanize.benchmarks.runner" in " ".join(broken.stdout.split())


def test_a_rewriting_attack_importing_the_word_level_ones_breaks_the_contract(tmp_path):
    tree = _copy(tmp_path)
    victim = tree / "humanize/attacks/generation/paraphrase.py"
    victim.write_text(victim.read_text(encoding="utf-8") + "\nimport humanize.attacks.wordsub.search  # noqa: E402,F401\n",
                      encoding="utf-8")
    broken = _lint(tree)
    assert broken.returncode != 0
    assert "attacks: generation and wordsub are independent BROKEN" in broken.stdout


def test_a_detector_importing_generation_breaks_the_contract(tmp_path):
    """The endpoint detector and the chat generator share humanize._http, not each other's code (issue #36)."""
    tree = _copy(tmp_path)
    victim = tree / "humanize/detectors/endpoint.py"
    victim.write_text(victim.read_text(encoding="utf-8") + "\nimport humanize.generation.endpoint  # noqa: E402,F401\n",
                      encoding="utf-8")
    broken = _lint(tree)
    assert broken.returncode != 0
    assert "detectors do not import generation BROKEN" in broken.stdout


def test_ci_runs_the_contract_before_the_tests():
    ci = (ROOT / ".ci/run").read_text(encoding="utf-8")
    assert "HUMANIZE_LINT_IMPORTS=1" in ci and "scripts/test.sh" in ci
    test_sh = (ROOT / "scripts/test.sh").read_text(encoding="utf-8")
    assert test_sh.startswith("#!/usr/bin/env bash") and "set -euo pipefail" in test_sh  # a failure stops it
    lint, pytest_call = test_sh.index('"$VENV/bin/lint-imports"'), test_sh.index("-m pytest")
    assert lint < pytest_call


def test_the_docs_diagram_is_the_contract():
    import re
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11

    layers = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    layers = layers["contracts"][0]["layers"]
    page = (ROOT / "docs" / "contributing.md").read_text(encoding="utf-8")
    block = re.search(r"Layers: imports point down only.*?```text\n(.*?)```", page, re.S).group(1)
    drawn = [re.split(r"\s{3,}", line.strip())[0] for line in block.splitlines() if line.strip()]
    assert drawn[:-1] == layers[:-1]
    core = {m.strip() for m in layers[-1].split(":")}
    assert core == {"humanize.exceptions", "humanize.text", "humanize.validation", "humanize.plugins"} | {
        f"humanize.{p.stem}" for p in (ROOT / "humanize").glob("_*.py") if p.stem != "__init__"}
