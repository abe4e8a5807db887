"""The benchmarks' layout (issue #21): subpackages by concern, and the old paths for one release.

Every old module path imports, warns once (DeprecationWarning, pointing at the importing line, naming
the new path) and *is* the new module object (private names, monkeypatching); old dotted submodules
of the moved packages likewise; the package face (``humanize.benchmarks.RunConfig`` ...) and the new
paths import without a warning. Each check runs in a fresh interpreter: a module imports once per process.
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
    "humanize.benchmarks.datasets.split": "humanize.benchmarks.data.split",
    "humanize.benchmarks.datasets.raid": "humanize.benchmarks.data.raid",
    "humanize.benchmarks.datasets._cache": "humanize.benchmarks.data._cache",
    "humanize.benchmarks.protocols.bootstrap": "humanize.benchmarks.evaluation.bootstrap",
    "humanize.benchmarks.protocols.metrics": "humanize.benchmarks.evaluation.metrics",
    "humanize.benchmarks.executors.scheduling": "humanize.benchmarks.runner.executors.scheduling",
}

CHECK = textwrap.dedent("""
    import importlib, json, sys, warnings
    old_to_new, submodules = json.loads(sys.argv[1]), json.loads(sys.argv[2])
    out = {}

    def record(name, parent=None):
        if parent:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                __import__(parent)  # the parent package warns on its own; counted in its own entry
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            __import__(name)           # a frame-less import: the warning must point at this line
            __import__(name)           # a second import: cached, no second warning
        return [{"category": w.category.__name__, "message": str(w.message), "file": w.filename} for w in seen]

    for old, new in old_to_new.items():
        out[old] = {"warnings": record(old), "same": sys.modules[old] is importlib.import_module(new)}
    for old, new in submodules.items():
        out[old] = {"warnings": record(old, old.rsplit(".", 1)[0]),
                    "same": sys.modules[old] is importlib.import_module(new)}
    # monkeypatching through the old path reaches the new module, and private names are there
    import humanize.benchmarks.store as old_store
    import humanize.benchmarks.runner.store as new_store
    old_store.patched_here = 1
    out["patch"] = getattr(new_store, "patched_here", None) == 1 and old_store.to_sql is new_store.to_sql
    # the old from-import spelling
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        sys.modules.pop("humanize.benchmarks.jobs")     # as if never imported: the shim runs again
        delattr(sys.modules["humanize.benchmarks"], "jobs")
        from humanize.benchmarks import jobs
    out["from_import"] = [str(w.message) for w in seen]
    out["from_import_same"] = jobs is importlib.import_module("humanize.benchmarks.runner.jobs")
    print(json.dumps(out))
""")

FACE = textwrap.dedent("""
    import importlib, pkgutil, sys, warnings
    warnings.simplefilter("error")      # any warning while importing the new layout fails
    import humanize.benchmarks as hb
    for name in hb.__all__:
        getattr(hb, name)
    from humanize.benchmarks.runner import (CLEAN, COST_COLUMNS, INFO_COUNTS, RunResult, run, sample_rows,
                                            _attack_plan, _detector_plan, _run_targets, _quality_meter)
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


def test_every_old_path_warns_once_naming_the_new_one_and_is_the_same_module():
    out = json.loads(_python(CHECK, json.dumps(OLD_TO_NEW), json.dumps(OLD_SUBMODULES)))
    for old, new in {**OLD_TO_NEW, **OLD_SUBMODULES}.items():
        got = out[old]
        assert got["same"], old
        assert [w["category"] for w in got["warnings"]] == ["DeprecationWarning"], (old, got["warnings"])
        assert new in got["warnings"][0]["message"] and old in got["warnings"][0]["message"], got
        assert got["warnings"][0]["file"] == "<string>", (old, got["warnings"][0])  # the importer, not the shim
    assert out["patch"]
    assert out["from_import_same"] and len(out["from_import"]) == 1
    assert "humanize.benchmarks.runner.jobs" in out["from_import"][0]


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
    shims = {ROOT / "humanize/benchmarks" / f"{o.rsplit('.', 1)[1]}.py" for o in OLD_TO_NEW}
    shims |= {ROOT / "humanize/benchmarks" / name / "__init__.py" for name in ("datasets", "protocols", "executors")}
    found = [f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
             for folder in ("humanize", "benchmarks", "tests") for path in sorted((ROOT / folder).rglob("*.py"))
             if path not in shims and path.name != "test_layout.py"
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if old_path.search(line)]
    assert found == []
