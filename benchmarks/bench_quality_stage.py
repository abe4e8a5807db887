"""The demo's quality stage against its scoring stage, before and after packing the context check (issue #38).

The done-when of issue #38: the quality stage of the demo takes less than a quarter of its scoring stage. This
script measures that ratio on the demo configuration, side by side in one run:

1. a results database holding the demo's attack outputs: ``--db`` (a ``humanize-bench demo`` store of the same
   ``--n`` and ``--seed``), else this script runs the demo's attacks once into a temporary one (minutes: Gemma and
   Qwen load and run);
2. for each mode, in a fresh process, a copy of that database without its scores, quality rows and runs, so that
   the demo run computes its scoring and quality stages and reads its attacks from the store:

   * ``whole``: every swap's variant runs through the context model whole (``HUMANIZE_PACKED_CONTEXT=0``, the
     path before issue #38);
   * ``packed``: each variant runs only from the swapped word on, as a branch of its original window (the
     default, :func:`humanize.quality.context.context_deltas`).

WordNet is loaded before the run starts: in the demo the synonym attack loads it in the attacks stage, and the
validity meter reuses it. Prints per mode the scoring and quality stages' wall and CPU seconds (``RunResult.stage_seconds``), their ratio,
the tokens the context check sent through its model (``lm_stats.cache_info()["passes"]["context"]``), the load
average around it, each meter's wall and CPU seconds, and whether the two modes' quality tables agree (counts exactly, shares and deltas to float
rounding).

    python benchmarks/bench_quality_stage.py [--n 40] [--db humanize-bench-out/demo.sqlite] [--modes whole packed]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import json, sys, warnings
warnings.simplefilter("ignore")
from humanize.benchmarks.runner import run
from humanize.benchmarks.runner.config import demo_config
from humanize.detectors import lm_stats
n, seed, db, quality_out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
import time
from humanize.quality.custom import builtin_meters
meter_s = {}  # per built-in meter: wall and CPU seconds of its measure calls (the "as read" ones included)
def timed(cls, real):
    def measure(self, originals, attacked):
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            return real(self, originals, attacked)
        finally:
            got = meter_s.setdefault(cls.name, [0.0, 0.0])
            got[0] += time.perf_counter() - wall
            got[1] += time.process_time() - cpu
    return measure
for cls in builtin_meters().values():
    cls.measure = timed(cls, cls.measure)
from humanize.models import load_wordnet
load_wordnet()  # the demo's synonym attack loads WordNet in its attacks stage; here the attacks come from the store
result = run(demo_config(n=n, seed=seed, db=db), progress=False, release_models=True)
result.tables["quality"].to_json(quality_out, orient="split")
print("RESULT " + json.dumps({"stages": result.stage_seconds, "work": result.work,
                              "passes": lm_stats.cache_info()["passes"], "meters": meter_s}))
"""

MODES = {"whole": {"HUMANIZE_PACKED_CONTEXT": "0"}, "packed": {"HUMANIZE_PACKED_CONTEXT": "1"}}


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _attacks_only(src: Path, dst: Path) -> None:
    """A copy of ``src`` keeping the attack outputs (and their warm-up costs) only."""
    shutil.copy(src, dst)
    with sqlite3.connect(dst) as con:
        detector_keys = [k for (k,) in con.execute("SELECT DISTINCT detector_key FROM scores")]
        con.executemany("DELETE FROM item_costs WHERE item_key = ?", [(k,) for k in detector_keys])
        for table in ("scores", "quality", "runs", "inputs"):
            con.execute(f"DELETE FROM {table}")
    con.close()


def _child(args, mode: str, db: Path, quality_out: Path) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", **MODES[mode]}
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.run([sys.executable, "-c", CHILD, str(args.n), str(args.seed), str(db), str(quality_out)],
                          env=env, capture_output=True, text=True)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        sys.exit(f"bench_quality_stage: the {mode} run failed:\n{proc.stderr[-3000:]}")
    return json.loads(lines[-1][len("RESULT "):])


def _compare(a: pd.DataFrame, b: pd.DataFrame) -> str:
    """How the two quality tables differ: integer columns exactly, float columns by their largest difference."""
    if a.shape != b.shape or list(a.columns) != list(b.columns):
        return f"different shapes {a.shape} vs {b.shape}"
    exact, worst = [], 0.0
    for col in a.columns:
        x, y = a[col], b[col]
        if pd.api.types.is_float_dtype(x) and pd.api.types.is_float_dtype(y):
            both = x.notna() & y.notna()
            if not (x.isna() == y.isna()).all():
                exact.append(col)
            elif both.any():
                worst = max(worst, float(np.max(np.abs(x[both].to_numpy() - y[both].to_numpy()))))
        elif not x.astype(str).equals(y.astype(str)):
            exact.append(col)
    return (f"columns that differ: {exact}; " if exact else "every count and string column equal; ") + \
        f"largest float difference {worst:.2e}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=40, help="the demo's n (default 40, the demo's)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--db", help="a demo results database of the same n and seed holding the attack outputs")
    ap.add_argument("--modes", nargs="+", choices=sorted(MODES), default=["whole", "packed"])
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-quality-stage-"))
    try:
        source = Path(args.db) if args.db else tmp / "attacks.sqlite"
        if not args.db:
            print(f"running the demo's attacks (n={args.n}) into {source} ...", flush=True)
            _child(args, "packed", source, tmp / "warm.json")
        print(f"demo n={args.n}, seed={args.seed}, attack outputs from {source}; {os.cpu_count()} CPUs\n")
        rows, tables, meters = [], {}, {}
        for mode in args.modes:
            db = tmp / f"{mode}.sqlite"
            _attacks_only(source, db)
            before = _load()
            got = _child(args, mode, db, tmp / f"{mode}.json")
            tables[mode] = pd.read_json(tmp / f"{mode}.json", orient="split")
            stages, ctx = got["stages"], got["passes"].get("context", {})
            meters[mode] = got["meters"]
            if got["work"]["attacked"]:
                print(f"warning: the {mode} run computed {got['work']['attacked']} attack outputs (not in the store)")
            rows.append({"mode": mode, "scoring_s": stages["scoring"]["wall_s"],
                         "quality_s": stages["quality"]["wall_s"],
                         "quality/scoring": stages["quality"]["wall_s"] / stages["scoring"]["wall_s"],
                         "scoring_cpu_s": stages["scoring"]["cpu_s"], "quality_cpu_s": stages["quality"]["cpu_s"],
                         "quality/scoring cpu": stages["quality"]["cpu_s"] / stages["scoring"]["cpu_s"],
                         "context_tokens": ctx.get("tokens", 0), "context_padding": ctx.get("padding", 0),
                         "context_batches": ctx.get("batches", 0), "pairs": got["work"]["quality"],
                         "load before": before, "load after": _load()})
        with pd.option_context("display.width", 250, "display.max_columns", 30, "display.float_format", "{:.3f}".format):
            print(pd.DataFrame(rows).to_string(index=False))
            print("\nwall (CPU) seconds of each meter's measure calls in the quality stage, the 'as read' ones included:")
            print(pd.DataFrame({mode: {name: f"{w:.1f} ({c:.1f})" for name, (w, c) in m.items()}
                                for mode, m in meters.items()}).to_string())
        if len(tables) == 2:
            a, b = tables.values()
            print(f"\nquality tables ({' vs '.join(tables)}): {_compare(a, b)}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
