"""The README and the documentation's Markdown pages (docs/**/*.md) are the user's manual: every
Python example in them runs.

A block preceded by ``<!-- not run in tests: REASON -->`` needs the hub or a
download and is left out (the code it shows is tested on local files elsewhere);
every other ```python block is executed, each in a namespace of its own, all in this one
pytest process (the models they load are loaded once for all of them).
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
_BLOCK = re.compile(r"(<!-- not run in tests: [^>]*-->\s*)?```python\n(.*?)```", re.S)


def manual_pages() -> list[Path]:
    """The README, then every Markdown page of the docs (not the build output or generated pages)."""
    skip = {"_build", "_generated", "auto_examples"}
    pages = sorted(p for p in DOCS.rglob("*.md") if not skip & set(p.relative_to(DOCS).parts))
    return [README, *pages]


def _blocks():
    out = []
    for page in manual_pages():
        text = page.read_text(encoding="utf-8")
        name = page.relative_to(ROOT).as_posix()
        for m in _BLOCK.finditer(text):
            if not m.group(1):
                line = text.count(chr(10), 0, m.start()) + 1
                # the code keeps its own line numbers in the page (inspect.getsource of a function defined in a
                # block reads the page at them: a function detector's fingerprint digests its source)
                first = text.count(chr(10), 0, m.start(2))
                out.append(pytest.param(chr(10) * first + m.group(2), str(page), id=f"{name}:line{line}"))
    return out


@pytest.fixture
def registries_restored():
    """An example may register a component (``attacks.register("shout", Shout)``): gone after it, so a later
    test (the conformance kit's one entry per registered component) sees the package's own registries."""
    from humanize.attacks.registry import _registry as attack_registry
    from humanize.detectors.registry import _registry as detector_registry

    saved = [(r, dict(r.entries), dict(r._origins)) for r in (attack_registry, detector_registry)]
    yield
    for registry, entries, origins in saved:
        registry.entries.clear()
        registry.entries.update(entries)
        registry._origins.clear()
        registry._origins.update(origins)


@pytest.mark.parametrize("code, page", _blocks())
def test_readme_python_example_runs(code, page, tmp_path, monkeypatch, registries_restored):
    monkeypatch.chdir(tmp_path)
    exec(compile(code, page, "exec"), {"__name__": "__readme__"})


def test_the_manual_pages_hold_the_examples():
    """The docs' pages are collected (a moved example is still run), and the README keeps its own."""
    pages = manual_pages()
    assert {"getting-started.md", "attacks.md", "protocols.md", "ray.md"} <= {p.name for p in pages}
    counted = {p: len(_BLOCK.findall(p.read_text(encoding="utf-8"))) for p in pages}
    assert counted[README] >= 1 and sum(counted.values()) >= 35


def test_readme_names_the_two_setup_commands_and_ci_calls_the_test_one():
    text = README.read_text(encoding="utf-8")
    assert "bash scripts/demo.sh" in text and "bash scripts/test.sh" in text
    ci = (README.parent / ".ci" / "run").read_text()
    assert "bash scripts/test.sh" in ci


def test_readme_toml_configs_parse_and_validate():
    """Every run configuration the README shows is one `run` accepts (a detector is added to
    the fragments that show only attacks)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    from humanize.benchmarks.runner.config import config_from_dict

    text = "\n".join(p.read_text(encoding="utf-8") for p in manual_pages())
    blocks = [b for b in re.findall(r"```toml\n(.*?)```", text, re.S) if "[[attacks]]" in b]
    assert len(blocks) >= 2
    for block in blocks:
        data = tomllib.loads(block)
        data.setdefault("detectors", [{"name": "tfidf_lr"}])
        config_from_dict(data).validate()
