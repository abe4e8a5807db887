"""The demo's report stage on its first run, before and after its figures are drawn once per format (issue #38).

The report stage of ``humanize-bench demo`` (``build_report``, the printed tables, ``plot_all`` and
``export_report``) is timed as the demo times it, after a run in the same process, into an empty output folder
(the first run draws every figure; a cached rerun reuses them, :mod:`humanize.benchmarks.reporting._reuse`).
Each mode runs in a fresh process that first reads the run's tables from a copy of a demo store (``--db``, every
result cached, so no model loads), as the demo's process has them:

* ``before``: each figure's layout engine set to ``"none"`` after its first format, as before issue #38's
  change: ``savefig`` still runs a whole draw without rendering before each format's rendering draw;
* ``after``: no layout engine left after the first format (``_figstyle._freeze_layout``): one draw per format.

Prints per mode and repeat the seconds of each part of the stage (wall and process CPU), the load average
around it, and whether every file the two modes wrote (27 figures, the captions, the report's files) is the same
bytes.

    python benchmarks/bench_report_stage.py --db humanize-bench-out/demo.sqlite [--n 40] [--repeat 2]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import contextlib, io, json, os, shutil, sys, time, warnings
from pathlib import Path
warnings.simplefilter("ignore")
n, seed, db, out, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], Path(sys.argv[4]), sys.argv[5]
if mode == "before":  # the layout engine left as a placeholder: savefig draws twice per format
    from humanize.benchmarks.reporting import _figstyle
    _figstyle._freeze_layout = lambda fig: fig.set_layout_engine("none")
from humanize.benchmarks.reporting.plots import figure_captions, plot_all
from humanize.benchmarks.reporting.report import build_report, export_report
from humanize.benchmarks.runner import run
from humanize.benchmarks.runner.config import demo_config
from humanize.cli.common import print_tables
result = run(demo_config(n=n, seed=seed, db=db), progress=False)
assert not any(result.work.values()), result.work  # every result from the store: no model ran
tables, parts = result.tables, {}
def part(name, f):
    wall, cpu = time.perf_counter(), time.process_time()
    value = f()
    parts[name] = {"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu}
    return value
load = os.getloadavg()
report = part("build_report", lambda: build_report(tables, n=n))
def quiet_print():
    with contextlib.redirect_stdout(io.StringIO()):
        print_tables(report)
part("print_tables", quiet_print)
plots = part("plot_all", lambda: plot_all(tables, out / "plots"))
part("export_report", lambda: export_report(report, out / "report", figures=figure_captions(tables)))
print("RESULT " + json.dumps({"parts": parts, "files": len(plots), "load": [load, os.getloadavg()]}))
"""

MODES = ("before", "after")


def _child(args, mode: str, db: Path, out: Path) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.run([sys.executable, "-c", CHILD, str(args.n), str(args.seed), str(db), str(out), mode],
                          env=env, capture_output=True, text=True)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        sys.exit(f"bench_report_stage: the {mode} run failed:\n{proc.stderr[-3000:]}")
    return json.loads(lines[-1][len("RESULT "):])


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.suffix != ".sqlite" and not p.name.startswith(".")}


_NUMBER = re.compile(rb"-?\d+\.?\d*(?:e-?\d+)?")
_SVG_ID = re.compile(rb"\b[pmi][0-9a-f]{10}\b|image[0-9a-f]{10}")  # matplotlib's ids: hashes of what they name


def _tokens(name: str, data: bytes) -> bytes:
    """A figure file's text for comparison: a PDF's streams inflated, a SVG's hashed ids blanked."""
    if name.endswith(".pdf"):
        parts = []
        for m in re.finditer(rb"stream\r?\n(.*?)endstream", data, re.S):
            try:
                parts.append(zlib.decompress(m.group(1)))
            except zlib.error:
                parts.append(m.group(1))
        data = b"\n".join(parts)
    return _SVG_ID.sub(b"ID", data)


def _difference(name: str, a: bytes, b: bytes) -> str:
    """How two versions of a file differ: ``same bytes``, the largest difference of the numbers in them where
    nothing else differs, or ``text differs``."""
    if a == b:
        return "same bytes"
    if not name.endswith((".svg", ".pdf")):
        return "bytes differ"
    ta, tb = _tokens(name, a), _tokens(name, b)
    na, nb = _NUMBER.findall(ta), _NUMBER.findall(tb)
    if _NUMBER.sub(b"N", ta) != _NUMBER.sub(b"N", tb) or len(na) != len(nb):
        return "text differs"
    worst = max((abs(float(x) - float(y)) for x, y in zip(na, nb)), default=0.0)
    return f"numbers differ by at most {worst:.1e}" if worst else "only matplotlib's hashed ids differ"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", required=True, help="a finished demo results database (humanize-bench demo's)")
    ap.add_argument("--n", type=int, default=40, help="the demo's n (default 40, the demo's)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=1, help="runs per mode, alternated (default 1)")
    ap.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-report-stage-"))
    try:
        print(f"demo n={args.n}, seed={args.seed}, tables from {args.db}; {os.cpu_count()} CPUs\n", flush=True)
        rows, written = [], {}
        for r in range(args.repeat):
            for mode in args.modes:
                out = tmp / f"{mode}-{r}"
                out.mkdir()
                db = out / "demo.sqlite"
                shutil.copy(args.db, db)
                got = _child(args, mode, db, out)
                written.setdefault(mode, _files(out))
                row = {"mode": mode, "repeat": r}
                for name, s in got["parts"].items():
                    row[f"{name} wall_s"] = s["wall_s"]
                row["stage wall_s"] = sum(s["wall_s"] for s in got["parts"].values())
                row["stage cpu_s"] = sum(s["cpu_s"] for s in got["parts"].values())
                row["figure files"] = got["files"]
                row["load before"] = " ".join(f"{x:.2f}" for x in got["load"][0])
                row["load after"] = " ".join(f"{x:.2f}" for x in got["load"][1])
                rows.append(row)
                shutil.rmtree(out)
        table = pd.DataFrame(rows)
        with pd.option_context("display.width", 250, "display.max_columns", 30, "display.float_format",
                               "{:.2f}".format):
            print(table.to_string(index=False))
            if len(args.modes) == 2:
                mean = table.groupby("mode")["stage wall_s"].mean()
                print(f"\nstage wall seconds, mean over repeats: before {mean['before']:.2f}, after "
                      f"{mean['after']:.2f} (after/before {mean['after'] / mean['before']:.2f})")
        if len(written) == 2:
            a, b = written.values()
            differ = {k: _difference(k, a.get(k, b""), b.get(k, b"")) for k in sorted(set(a) | set(b))
                      if a.get(k) != b.get(k)}
            print(f"files written: {len(a)} and {len(b)}; " +
                  (f"{len(a) - len(differ)} the same bytes; the others: " +
                   "; ".join(f"{k}: {v}" for k, v in differ.items()) if differ else "every file the same bytes"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
