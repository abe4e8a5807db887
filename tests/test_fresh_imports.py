"""Every module of the package imports as the first humanize import of a fresh process (no import cycle
that only bites in one order, like ``reliance`` re-exporting from ``reliance_run``, which imports it).

One subprocess pre-imports the heavy third-party libraries (numpy, pandas, scipy, scikit-learn: they
cannot take part in a humanize cycle, and importing them per module would take minutes), then forks
one child per module, two at a time; each child imports its module and nothing else of humanize.
"""
import json
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FORK_IMPORTS = textwrap.dedent("""
    import importlib, json, os, sys, traceback
    from pathlib import Path

    package = sys.argv[1]
    for dep in ("numpy", "pandas", "scipy.stats", "sklearn.linear_model", "sklearn.pipeline",
                "sklearn.feature_extraction.text", "sklearn.metrics", "pyarrow", "regex"):
        try:
            importlib.import_module(dep)
        except ImportError:
            pass
    assert not any(m == package or m.startswith(package + ".") for m in sys.modules)
    modules = []
    for path in sorted(Path(package).rglob("*.py")):
        parts = list(path.with_suffix("").parts)
        modules.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    running, failed = {}, {}
    read_ends = {}

    def reap():
        pid, status = os.wait()
        name = running.pop(pid)
        with os.fdopen(read_ends.pop(pid)) as f:
            err = f.read()
        if status:
            failed[name] = err.strip().splitlines()[-1] if err.strip() else f"exit status {status}"

    for name in modules:
        while len(running) >= 2:
            reap()
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            try:
                importlib.import_module(name)
            except BaseException:
                os.write(w, traceback.format_exc().encode())
                os._exit(1)
            os._exit(0)
        os.close(w)
        running[pid], read_ends[pid] = name, r
    while running:
        reap()
    print(json.dumps({"modules": modules, "failed": failed}))
""")


def fresh_imports(cwd: Path, package: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", FORK_IMPORTS, package], capture_output=True, text=True, cwd=cwd,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_the_check_catches_a_cycle_that_bites_in_one_import_order(tmp_path):
    pkg = tmp_path / "cyc"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "core.py").write_text("def base():\n    return 1\n\n\nfrom .run import runner  # noqa: E402\n")
    (pkg / "run.py").write_text("from .core import base\n\n\ndef runner():\n    return base()\n")
    out = fresh_imports(tmp_path, "cyc")
    assert sorted(out["modules"]) == ["cyc", "cyc.core", "cyc.run"]
    assert list(out["failed"]) == ["cyc.run"]  # core first works; run first does not
    assert "ImportError" in out["failed"]["cyc.run"] and "partially initialized" in out["failed"]["cyc.run"]


def test_every_module_imports_first_in_a_fresh_process():
    out = fresh_imports(ROOT, "humanize")
    assert len(out["modules"]) > 100 and "humanize.benchmarks.audits.reliance_run" in out["modules"]
    assert out["failed"] == {}
