"""The worked examples of docs/howto/plugins.md (issue #36): a new attack that takes a generator and a detector
guide, and a new built-in meter, are each one module plus one registry line. The test takes the module and the
registry line from the page exactly as printed, puts the module into the installed package (removed afterwards)
and the line into the registry, changes nothing else, and runs the page's usage block: the component by name,
``humanize.testing.check_attack`` / ``check_meter`` (a fresh process included: it imports the module by its
package path), and one ``run`` of the runner."""
from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import pytest

import humanize

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "howto" / "plugins.md"
_PYTHON = re.compile(r"(<!-- not run in tests: [^>]*-->\s*)?```python\n(.*?)```", re.S)
_LINE = re.compile(r'^\+\s*"(\w+)":\s*"([\w.]+:\w+)",\s*$', re.M)


def worked_example(module_path: str) -> tuple[str, tuple[str, str], str]:
    """``(module source, (registry key, import path), usage block)`` of the example whose module is ``module_path``:
    the python block that starts with ``# <module_path>``, the ``+`` line of the next text block, and the next
    python block marked as run here."""
    text = PAGE.read_text(encoding="utf-8")
    start = text.index(f"```python\n# {module_path}\n")
    source = text[start + len("```python\n"):text.index("```", start + 3)]
    registry = text.index("```text\n", start)
    line = _LINE.search(text[registry:text.index("```", registry + 7)])
    usage = next(m for m in _PYTHON.finditer(text, registry) if m.group(1) and "test_worked_examples" in m.group(1))
    return source, (line.group(1), line.group(2)), usage.group(2)


@pytest.fixture
def in_package(monkeypatch):
    """Install a module of the page into the installed package and one line into a registry; undo both after."""
    written = []

    def install(module_path: str, registry, source: str, line: tuple[str, str]) -> None:
        target = Path(humanize.__file__).parent.parent / module_path
        assert not target.exists(), f"{target} exists already"
        target.write_text(source, encoding="utf-8")
        written.append(target)
        name, path = line
        assert path.partition(":")[0] == module_path[:-3].replace("/", "."), "the line names the module"
        monkeypatch.setitem(registry.entries, name, path)  # what the line does in the registry's dict
        monkeypatch.setattr(registry, "_builtin", registry._builtin | {name})

    yield install
    for target in written:
        target.unlink()
        for cached in (target.parent / "__pycache__").glob(f"{target.stem}.*.pyc"):
            cached.unlink()
        sys.modules.pop(".".join(target.relative_to(Path(humanize.__file__).parent.parent).with_suffix("").parts),
                        None)
    importlib.invalidate_caches()


def test_a_new_attack_with_a_generator_and_a_guide_is_one_module_and_one_registry_line(in_package, tmp_path,
                                                                                         monkeypatch, capsys):
    from humanize import attacks
    from humanize.attacks.registry import _registry

    source, line, usage = worked_example("humanize/attacks/best_of_n.py")
    assert line == ("best_of_n", "humanize.attacks.best_of_n:BestOfN")
    with pytest.raises(ValueError, match="unknown attack 'best_of_n'"):
        attacks.get("best_of_n")
    in_package("humanize/attacks/best_of_n.py", _registry, source, line)
    assert attacks.origin("best_of_n") == "built in"
    monkeypatch.chdir(tmp_path)
    exec(compile(usage, str(PAGE), "exec"), {"__name__": "__worked_example__"})  # check_attack and one run
    out = capsys.readouterr().out
    assert "humanize.generation.local.LocalChat" in out and "{'run_detector': 'tfidf_lr'}" in out
    # the run scored the attack with both detectors, and says tfidf_lr guided it
    auroc = r"\s+tfidf_lr\s+[01]\.\d+"
    assert re.search("tfidf_lr" + auroc, out) and re.search("surface_probe" + auroc, out)


def test_a_new_built_in_meter_is_one_module_and_one_registry_line(in_package, tmp_path, monkeypatch, capsys):
    from humanize import quality
    from humanize.quality import custom

    source, line, usage = worked_example("humanize/quality/length.py")
    assert line == ("length_ratio", "humanize.quality.length:LengthRatio")
    assert "length_ratio" not in quality.available()
    in_package("humanize/quality/length.py", custom._registry, source, line)
    assert "length_ratio" in quality.available() and quality.origin("length_ratio") == "built in"
    monkeypatch.chdir(tmp_path)
    exec(compile(usage, str(PAGE), "exec"), {"__name__": "__worked_example__"})  # check_meter and one run
    out = capsys.readouterr().out
    assert re.search(r"length_ratio note\s*\n0\s+0\.666667\s+0\.428571", out), out  # ROUGE-L 2/3, ratio 3/7
    assert re.search(r"homoglyph\s+1\.0\b", out) and re.search(r"upper_lower\s+1\.0\b", out), out
