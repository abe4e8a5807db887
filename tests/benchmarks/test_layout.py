"""The benchmarks' layout (issue #21): subpackages by concern. The old flat paths (``humanize.benchmarks.config``,
``.datasets``, ...) are gone (issue #36: the first release starts clean); the package face
(``humanize.benchmarks.RunConfig`` ...) and the new paths import without a warning. Each check runs in a fresh
interpreter: a module imports once per process.
"""
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

RUNNER = "config attack_spec run_specs jobs stages store store_schema manifest model_sharing run_tables targets"
REPORTING = "report plots card card_render documents documents_page export attack_tour"
AUDITS = "audit audit_probe reliance reliance_run"
OLD_TO_NEW = {
    **{f"humanize.benchmarks.{m}": f"humanize.benchmarks.runner.{m}" for m in RUNNER.split()},
    **{f"humanize.benchmarks.{m}": f"humanize.benchmarks.reporting.{m}" for m in REPORTING.split()},
    **{f"humanize.benchmarks.{m}": f"humanize.benchmarks.audits.{m}" for m in AUDITS.split()},
    "humanize.benchmarks.datasets": "humanize.benchmarks.data",
    "humanize.benchmarks.protocols": "humanize.benchmarks.evaluation",
    "humanize.benchmarks.executors": "humanize.benchmarks.runner.executors",
}
OLD_SUBMODULES = {
    "humanize.benchmarks.datasets.split": "humanize._split",
    "humanize.benchmarks.datasets.raid": "humanize.benchmarks.data.raid",
    "humanize.benchmarks.datasets._cache": "humanize.benchmarks.data._cache",
    "humanize.benchmarks.protocols.bootstrap": "humanize.benchmarks.evaluation.bootstrap",
    "humanize.benchmarks.protocols.metrics": "humanize.benchmarks.evaluation.metrics",
    "humanize.benchmarks.executors.scheduling": "humanize.benchmarks.runner.executors.scheduling",
}

GONE = textwrap.dedent("""
    import importlib, json, sys
    out = {}
    for old in json.loads(sys.argv[1]):
        try:
            importlib.import_module(old)
        except ModuleNotFoundError as err:
            out[old] = err.name
        else:
            out[old] = None
    print(json.dumps(out))
""")

FACE = textwrap.dedent("""
    import importlib, pkgutil, sys, warnings
    warnings.simplefilter("error")      # any warning while importing the new layout fails
    import humanize.benchmarks as hb
    for name in hb.__all__:
        getattr(hb, name)
    from humanize.benchmarks.runner import CLEAN, COST_COLUMNS, INFO_COUNTS, RunResult, run, sample_rows
    assert run is importlib.import_module("humanize.benchmarks.runner.engine").run
    assert hb.RunConfig is importlib.import_module("humanize.benchmarks.runner.config").RunConfig
    names = []
    for pkg in ("data", "evaluation", "runner", "reporting", "audits"):
        mod = importlib.import_module(f"humanize.benchmarks.{pkg}")
        assert mod.__doc__ and "one job" in mod.__doc__, pkg
        for info in pkgutil.walk_packages(mod.__path__, mod.__name__ + "."):
            if info.name.endswith("ray_worker") or info.name.endswith(".ray"):
                continue  # need ray; imported by tests/benchmarks/test_executor_ray.py
            importlib.import_module(info.name)
            names.append(info.name)
    print(len(names))
""")


def _python(code: str, *args: str) -> str:
    proc = subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout.strip().splitlines()[-1]


def test_the_old_paths_are_gone():
    # ... and the other module-level aliases (issue #36): the split rule, the model errors, the shims' machinery
    others = ["humanize.benchmarks.data.split", "humanize.models.errors", "humanize.benchmarks._moved"]
    out = json.loads(_python(GONE, json.dumps([*OLD_TO_NEW, *OLD_SUBMODULES, *others])))
    assert out == {old: old.rsplit(".", 1)[0] if old in OLD_SUBMODULES else old
                   for old in [*OLD_TO_NEW, *OLD_SUBMODULES, *others]}


def test_the_face_and_the_new_paths_import_without_a_warning():
    assert int(_python(FACE)) > 40


def test_no_module_of_the_package_imports_an_old_path():
    olds = "|".join(re.escape(o) for o in OLD_TO_NEW)
    leaves = "|".join(o.rsplit(".", 1)[1] for o in OLD_TO_NEW)
    names_before = r"\(?\s*(?:\w+(?:\s+as\s+\w+)?\s*,\s*)*"  # `from humanize.benchmarks import a as b, config`
    old_path = re.compile(rf"^\s*(import|from)\s+({olds})\b"
                          rf"|^\s*from\s+humanize\.benchmarks\s+import\s+{names_before}({leaves})\b")
    assert old_path.search("from humanize.benchmarks.config import RunConfig")
    assert old_path.search("    import humanize.benchmarks.datasets.split")
    assert old_path.search("from humanize.benchmarks import store as s")
    assert old_path.search("from humanize.benchmarks import run, config")
    assert not old_path.search("from humanize.benchmarks.reporting.report import build_report")
    assert not old_path.search("from humanize.benchmarks import data as datasets")
    found = [f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
             for folder in ("humanize", "benchmarks", "tests") for path in sorted((ROOT / folder).rglob("*.py"))
             if path.name != "test_layout.py"
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if old_path.search(line)]
    assert found == []
