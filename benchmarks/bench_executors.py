"""Executors: the same run on ``local`` and on a local Ray cluster (issue #13).

Prints, for each part, the wall time of a fresh process running the configuration with each
executor (imports, Ray cluster start-up and shutdown included; a fresh temporary database each),
the ratio, and whether the two stores hold identical results: the metrics, every per-document
score, the cost rows (less what they measure of the machine: times, memory, machine name) and
every attacked text with its exact edits.

(a) the demo-sized run: ``humanize-bench demo``'s configuration (the demo texts, n=40
    (``--demo-n``), the nine rule-based attacks, the eight demo detectors; quality off unless
    ``--quality``).
    Floor: Ray's wall time <= 1.3x the local one.
(b) a CPU-bound grid: every rule-based attack at each θ of ``--rates`` (default 40 values,
    0.025 to 1.0), scored by tfidf_lr and surface_probe, over ``--grid-n`` machine and as many
    human demo texts (900: all of them); no quality, no bootstrap intervals (``n_boot`` 0: the
    evaluation runs on the driver whatever the executor).
    Floors: local >= 2 minutes; Ray with 2 workers >= 1.6x faster, cluster start-up included.

Also printed per stage: the seconds the driver waited on the executor and the items done, so
the per-unit costs of the capacity plan (README) come from the local column; then the time
outside the stages (the driver's own work) and the driver process's CPU seconds. On Ray the
first stage's time includes the cluster start. The load average of the machine is printed next to
each figure: on a shared machine it moves the times more than the executor does.

    OMP_NUM_THREADS=1 python benchmarks/bench_executors.py [--part a|b|both] [--quality]
        [--demo-n 40] [--grid-n 900] [--rates 0.025,0.05,...,1.0] [--repeat 3] [--keep DIR]

``--repeat N`` runs each pair N times, alternating which executor goes first, and judges the
median of the paired ratios (a shared VM's speed drifts by 5-10% between runs).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

MEASURED = ["wall_s", "cpu_s", "peak_rss_mb", "peak_gpu_mb", "machine", "cost_source"]


def _demo_config(args):
    from humanize.benchmarks.runner.config import demo_config

    config = demo_config(n=args.demo_n)
    config.quality = bool(args.quality)
    return config


def _grid_config(args):
    from humanize.attacks import RULE_BASED
    from humanize.benchmarks.runner.config import AttackSpec, DetectorSpec, RunConfig

    rates = [float(r) for r in args.rates.split(",")]
    return RunConfig(dataset="demo", n=args.grid_n, seed=0, quality=False, n_boot=0,
                     attacks=[AttackSpec(name, rates=rates) for name in RULE_BASED],
                     detectors=[DetectorSpec("tfidf_lr"), DetectorSpec("surface_probe")])


class _StageClock:
    """Wraps the run's executor: seconds spent waiting on it and items done, per stage."""

    def __init__(self, inner):
        self.inner, self.stages = inner, {}

    def map(self, job, batches):
        for _, outcome in self.map_jobs([(job, batches)]):
            yield outcome

    def map_jobs(self, work):
        work = list(work)
        if not work:
            return
        name = work[0][0].name
        stage = name.split()[0] if name.startswith(("attack", "defense")) else name
        seconds, items = self.stages.setdefault(stage, [0.0, 0])
        outcomes = self.inner.map_jobs(work)
        while True:
            t0 = time.perf_counter()
            outcome = next(outcomes, None)
            seconds += time.perf_counter() - t0
            if outcome is None:
                break
            items += len(outcome[1].batch)
            self.stages[stage] = [seconds, items]
            yield outcome
        self.stages[stage] = [seconds, items]


def _child(executor: str, config_path: str) -> None:
    """One run in this (fresh) process."""
    from humanize.benchmarks.runner.config import config_from_stored
    from humanize.benchmarks.runner.executors import get_executor
    from humanize.benchmarks.runner import run

    with open(config_path) as f:
        config = config_from_stored(json.load(f))
    config.executor = executor
    with get_executor(executor) as ex:
        clock = _StageClock(ex)
        result = run(config, progress=False, executor=clock)
    print(json.dumps({"work": result.work, "failures": len(result.failures), "stages": clock.stages,
                      "driver_cpu_s": time.process_time()}))


def _timed_run(executor: str, config, workdir: str) -> tuple[float, dict, str, float]:
    db = os.path.join(workdir, f"{executor}.sqlite")
    config.db = db
    path = os.path.join(workdir, f"{executor}.json")
    with open(path, "w") as f:
        json.dump(config.to_dict(), f)
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, __file__, "--child", executor, path], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0 or not proc.stdout.strip():
        sys.exit(f"{executor} run failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return wall, json.loads(proc.stdout.strip().splitlines()[-1]), db, load


def _compare(db_a: str, db_b: str) -> dict[str, str]:
    """Per table: 'identical' or what differs."""
    import pandas as pd

    from humanize.benchmarks.reporting.documents import run_documents
    from humanize.benchmarks.runner.store import ResultsStore

    out = {}
    with ResultsStore(db_a) as a, ResultsStore(db_b) as b:
        ta, tb = a.run_tables(), b.run_tables()
        pairs = {name: (ta[name], tb.get(name)) for name in ("metrics", "scores")}
        pairs["cost"] = (ta["cost"].drop(columns=MEASURED, errors="ignore"),
                         tb["cost"].drop(columns=MEASURED, errors="ignore"))
        pairs["attacked texts + edits"] = (run_documents(a), run_documents(b))
        for name, (x, y) in pairs.items():
            try:
                pd.testing.assert_frame_equal(x.reset_index(drop=True), y.reset_index(drop=True))
                out[name] = f"identical ({len(x)} rows)"
            except AssertionError as err:
                out[name] = "DIFFERENT: " + " ".join(str(err).split())[:300]
    return out


def _part(title: str, config, workdir: str, floor: str, repeat: int = 1) -> None:
    """Run the configuration on both executors ``repeat`` times, alternating which goes first,
    and judge the median of the paired ratios: on a machine whose speed drifts (a shared VM) a
    pair measured back to back is the comparison that holds."""
    import statistics

    print(f"\n== {title}")
    print(f"   {len(config.attacks)} attack specs, detectors {[d.name for d in config.detectors]}, "
          f"n={config.n}, quality={config.quality}, n_boot={config.n_boot}")
    pairs = []
    for rep in range(repeat):
        runs = {}
        order = ("local", "ray") if rep % 2 == 0 else ("ray", "local")
        for executor in order:
            rundir = os.path.join(workdir, f"{rep}")
            os.makedirs(rundir, exist_ok=True)
            runs[executor] = _timed_run(executor, config, rundir)
            wall, info, _, load = runs[executor]
            print(f"   [{rep + 1}/{repeat}] {executor:<6} {wall:8.1f} s   work {info['work']}  failures "
                  f"{info['failures']}  driver CPU {info['driver_cpu_s']:.1f} s  (load average {load:.1f} at start)")
        if rep == 0:
            _stage_table(runs)
            for name, verdict in _compare(runs["local"][2], runs["ray"][2]).items():
                print(f"   {name:<24} {verdict}")
        elif runs["local"][1]["work"] != runs["ray"][1]["work"]:
            print("   DIFFERENT work between the executors")
        pairs.append((runs["local"][0], runs["ray"][0]))
        for ex in runs:  # the databases are large (~0.8 GB each for the grid): keep only the first pair's
            if rep > 0:
                os.remove(runs[ex][2])
    local = statistics.median(l for l, _ in pairs)
    if floor == "overhead":
        ratios = [r / l for l, r in pairs]
        ratio = statistics.median(ratios)
        print(f"   ray / local = {ratio:.2f}x (pairs: {', '.join(f'{x:.2f}' for x in ratios)})  "
              f"[{'PASS' if ratio <= 1.3 else 'FAIL'} floor <= 1.3x]")
    else:
        speedups = [l / r for l, r in pairs]
        speedup = statistics.median(speedups)
        print(f"   local = {local / 60:.1f} min (median)  [{'PASS' if local >= 120 else 'FAIL'} floor >= 2 min]")
        print(f"   speed-up local / ray = {speedup:.2f}x (median of pairs: {', '.join(f'{x:.2f}' for x in speedups)})"
              f"  [{'PASS' if speedup >= 1.6 else 'FAIL'} floor >= 1.6x]")


def _stage_table(runs: dict) -> None:
    print(f"   {'stage':<22}{'items':>8}{'local s':>9}{'ray s':>9}{'local ms/item':>15}")
    for stage, (seconds, items) in runs["local"][1]["stages"].items():
        on_ray = runs["ray"][1]["stages"].get(stage, [float("nan")])[0]
        print(f"   {stage:<22}{items:>8}{seconds:>9.1f}{on_ray:>9.1f}{1000 * seconds / max(items, 1):>15.2f}")
    outside = {ex: runs[ex][0] - sum(sec for sec, _ in runs[ex][1]["stages"].values()) for ex in runs}
    print(f"   {'outside the stages':<22}{'':>8}{outside['local']:>9.1f}{outside['ray']:>9.1f}"
          "   (process start, imports, sampling, storing rows, evaluation, tables)")


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        return _child(sys.argv[2], sys.argv[3])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--part", choices=["a", "b", "both"], default="both")
    ap.add_argument("--quality", action="store_true", help="(a) with the demo's quality meters")
    ap.add_argument("--demo-n", type=int, default=40, help="(a) machine texts (and as many human ones)")
    ap.add_argument("--grid-n", type=int, default=900, help="(b) machine texts (and as many human ones)")
    ap.add_argument("--rates", default=",".join(f"{0.025 * i:.3f}" for i in range(1, 41)),
                    help="(b) the θ sweep of every attack (default 0.025, 0.050, ..., 1.000)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="run each part's pair this many times, alternating the order; judge the median ratio")
    ap.add_argument("--keep", help="keep the databases in this folder (default: a temporary one, removed)")
    args = ap.parse_args()
    import ray

    print(f"bench_executors: {os.cpu_count()} CPUs, ray {ray.__version__}, "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '(unset)')}")
    workdir = args.keep or tempfile.mkdtemp(prefix="bench-executors-")
    try:
        if args.part in ("a", "both"):
            os.makedirs(os.path.join(workdir, "a"), exist_ok=True)
            _part("(a) the demo-sized run", _demo_config(args), os.path.join(workdir, "a"), "overhead", args.repeat)
        if args.part in ("b", "both"):
            os.makedirs(os.path.join(workdir, "b"), exist_ok=True)
            _part("(b) CPU-bound grid", _grid_config(args), os.path.join(workdir, "b"), "speedup", args.repeat)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
