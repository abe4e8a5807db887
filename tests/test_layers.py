"""Layers point down only: the attacks and detectors import nothing from the benchmarks or the CLI.

Statically (every import statement and every import-path string under humanize/attacks and
humanize/detectors, relative imports resolved) and at run time (a fresh process builds and applies
attacks, guided ones included, with ``train=(texts, labels)``, and never loads a benchmarks module).
"""
import ast
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: package folder -> the layers above it, which it must not import
ABOVE = {
    "humanize/detectors": ("humanize.attacks", "humanize.defenses", "humanize.benchmarks", "humanize.cli"),
    "humanize/attacks": ("humanize.defenses", "humanize.benchmarks", "humanize.cli"),
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_names(source: str, module: str, is_package: bool = False) -> list[tuple[int, str]]:
    """``(line, dotted name)`` of everything ``source`` imports or names as an import path (a string)."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                head = ".".join(base + ([node.module] if node.module else []))
            else:
                head = node.module or ""
            out.append((node.lineno, head))
            out += [(node.lineno, f"{head}.{a.name}") for a in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("humanize."):
            out.append((node.lineno, node.value.split(":")[0]))  # importlib / lazy-registry paths
    return out


def upward(source: str, module: str, forbidden: tuple, is_package: bool = False) -> list[str]:
    return [f"{module}:{line} imports {name}" for line, name in imported_names(source, module, is_package)
            if any(name == f or name.startswith(f + ".") for f in forbidden)]


def test_the_checker_sees_every_spelling_of_an_upward_import():
    bad = textwrap.dedent("""
        import humanize.benchmarks.runner.config
        from humanize.benchmarks.data import load_dataset
        from humanize import benchmarks
        from ...benchmarks import runner
        from ... import cli
        importlib.import_module("humanize.benchmarks.runner.targets")
        REGISTRY = {"x": "humanize.cli.main:main"}
    """)
    found = upward(bad, "humanize.attacks.wordsub.raft", ABOVE["humanize/attacks"])
    assert [f.split(":")[1].split()[0] for f in found] == ["2", "3", "3", "4", "5", "5", "6", "7", "8"]
    ok = "from ..models import x\nfrom .base import Detector\nimport humanize.models\n'humanize.detectors.metric:X'"
    assert upward(ok, "humanize.detectors.target", ABOVE["humanize/detectors"]) == []


@pytest.mark.parametrize("folder", sorted(ABOVE))
def test_no_module_imports_a_layer_above_it(folder):
    files = sorted((ROOT / folder).rglob("*.py"))
    assert len(files) > 10
    problems = [p for f in files for p in upward(f.read_text(encoding="utf-8"), module_name(f), ABOVE[folder],
                                                 f.name == "__init__.py")]
    assert problems == []


RUNTIME = textwrap.dedent("""
    import json, sys
    import humanize.attacks, humanize.detectors
    from humanize import _providers
    from humanize.attacks import RULE_BASED, Target, get
    from humanize.attacks.wordsub import (HMGC, RAFT, DetectorGreedy, NotStopword, ProposalOrder,
                                          SurrogateImportance, WordNetSynonyms, WordSubstitution)
    from humanize.detectors import TfidfLogReg
    from humanize.exceptions import ProviderMissing

    human = ["the cat sat on the mat", "we walked home in the rain", "my brother fixed the old bike",
             "she laughed at the dog", "they ate soup and bread", "the bus was late again"]
    machine = ["additionally the comprehensive study demonstrates significant results",
               "furthermore robust methods facilitate notable and essential outcomes",
               "moreover numerous approaches enhance various crucial findings",
               "in conclusion this important framework utilizes comprehensive data",
               "consequently significant improvements demonstrate robust performance",
               "overall these essential insights facilitate numerous advancements"]
    pair = (human + machine, ["human"] * 6 + ["machine"] * 6)
    text = "Additionally, the comprehensive study demonstrates significant and robust results."
    out = {}
    for name in RULE_BASED:
        out[name] = get(name, rate=0.5, seed=1).apply(text).text != text
    engine = WordSubstitution([WordNetSynonyms()], [NotStopword()], ProposalOrder(),
                              DetectorGreedy("tfidf_lr", train=pair), rate=1.0, seed=1,
                              ranker=SurrogateImportance("tfidf_lr", train=pair, weight=1.0, method="deletion"))
    r = engine.apply(text)
    out["engine"] = [r.n_edits, r.info["detector_queries"]]
    cheap = dict(lm="smollm2-135m-instruct", weight=1.0, importance="deletion", candidates=["wordnet_all_senses"],
                 allowed_swaps=None, min_similarity=None, min_cosine=None, pos=False,
                 context_margin=None, keep_terms=False)  # the #19 recipe: the search's plumbing, every swap allowed
    r = HMGC(train=pair, **cheap).apply(text)
    out["hmgc"] = [r.n_edits, r.info["detector_queries"]]
    t = Target(TfidfLogReg(min_df=1), pair)
    RAFT(target=t, llm=None, proxy="smollm2-135m-instruct")._parts()
    r = HMGC(train="demo", **cheap).apply(text)  # the packaged demo set: read below the attacks (issue #36)
    out["hmgc_demo"] = [r.n_edits, r.info["detector_queries"]]
    out["demo_before"] = _providers.training_set({"dataset": "demo", "n": 5, "domain": "xsum"}, 3)
    try:
        HMGC(train="raid", **cheap).apply(text)
    except ProviderMissing as err:
        out["error"] = str(err)
    out["loaded"] = sorted(m for m in sys.modules if m.startswith(("humanize.benchmarks", "humanize.cli")))
    import humanize.benchmarks  # installs the resolver of dataset names
    out["installed"] = _providers.training_sets_installed()
    out["demo"] = len(_providers.training_set({"dataset": "demo", "n": 5}, 0)[0])
    out["demo_after"] = _providers.training_set({"dataset": "demo", "n": 5, "domain": "xsum"}, 3)
    print(json.dumps(out))
""")


def test_attacks_and_detectors_run_without_the_benchmarks():
    proc = subprocess.run([sys.executable, "-c", RUNTIME], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["loaded"] == []  # not one module of the benchmarks (or the CLI) was imported
    from humanize.attacks import RULE_BASED

    assert any(out[name] for name in RULE_BASED)
    assert out["engine"][0] >= 1 and out["engine"][1] > 1
    assert out["hmgc"][0] >= 1 and out["hmgc"][1] > 1
    assert out["hmgc_demo"][1] > 1  # train="demo" works from `from humanize import attacks` alone
    assert out["demo_before"] == out["demo_after"] and len(out["demo_before"][0]) == 10  # one rule, one set
    assert out["error"].startswith("SurrogateImportance: train='raid' names a dataset, loaded by humanize.benchmarks")
    assert "`import humanize.benchmarks`" in out["error"] and "train=(texts, labels) or a fitted Target" in out["error"]
    assert "\n" not in out["error"]
    assert out["installed"] is True and out["demo"] == 10


def test_the_split_rules_moved_below_the_attacks_keep_their_names_and_values():
    from humanize import _split

    # values of the rule before the move (humanize.benchmarks at f5f7ba7): no stored split or sample moves
    assert [_split.in_train_split(f"doc-{i}", 7, 0.3) for i in range(12)] == [False] * 4 + [True] + [False] * 6 + [True]
    assert sum(_split.in_train_split(f"src{i}", 0, 0.5) for i in range(1000)) == 487
    assert [_split.sampling_seed(s) for s in (5, -1, 2**40)] == [5, 390797764, 1512341746]


def test_the_runner_names_no_attack():
    """What a run hands an attack follows from the component parameters its class declares, and what it asks of a
    meter from the traits the meter declares (issue #36): no registered attack's or built-in meter's name is
    written as a string in the runner's code."""
    from humanize.attacks.registry import _registry
    from humanize.quality.custom import _REGISTRY as meters

    names = [*_registry._builtin, *meters]
    assert "perplexity" in names and "synonym" in names
    quoted = [re.compile(rf"""["']{re.escape(n)}["']""") for n in names]
    hits = [f"{f.relative_to(ROOT)}:{i}" for f in sorted((ROOT / "humanize/benchmarks/runner").rglob("*.py"))
            for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1)
            if any(p.search(line) for p in quoted)]
    assert hits == []
