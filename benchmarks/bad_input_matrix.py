"""The bad-input matrix: every layer of humanize against empty, odd, huge and wrong-typed inputs.

Each case calls one public API (a detector, a quality meter, the cost meter, the length
sweep, config parsing, the runner, the results store, the CLI, and a few attacks as a
control) with one input, in a worker process with a per-case timeout and an
address-space limit, and is classified from what actually happened:

  ok            the documented result (checked by the case's oracle where it has one)
  clear_error   a TypeError/ValueError/LookupError/OSError or an exception class of humanize,
                raised in humanize code (an OSError may come from the standard library), whose
                message names the offending argument, field, type or path; for the CLI, a
                non-zero exit with such a message and no traceback
  crash         any other exception (IndexError, KeyError, AttributeError, UnicodeError,
                sqlite3/numpy/pandas/tokenizer errors, an expected type raised inside a
                dependency, a message that names nothing), a valid input rejected, a worker
                that died, a CLI traceback
  hang          no answer within the case's timeout
  oom           MemoryError, or the worker killed by the kernel
  silent_wrong  no error, but the case's oracle says the result is wrong (an invalid value
                accepted, a corrupted value used, batch results differing from one-by-one
                results, NaN without a note or warning, ...)

Cases say what they expect ("result": a valid input with a documented result; "error":
an invalid input; "either": a documented result or a clear error are both fine), never
their outcome. Cheap cases share one worker per group (models load once per worker); a
worker is restarted after a timeout or a death.

    .venv/bin/python benchmarks/bad_input_matrix.py [--quick] [--layers detectors,quality]
        [--json PATH] [--compare BEFORE.json] [--mem-gb 6] [--timeout-scale 1.0] [--list]

Run it against another checkout with ``PYTHONPATH=/that/checkout``: the header prints
which ``humanize`` was imported. The read-only-store cases mount a tmpfs and remount it
read-only (root only; elsewhere they are reported as skipped and left out of the counts).
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from typing import Optional

from _matrix_core import (GROUPS, MARKS, STATUSES, Case, CliResult, Ctx, Skip, UserFnError, _one_line, classify_cli,
                          classify_exception, classify_value, run_case)

__all__ = ["Case", "CliResult", "Ctx", "Skip", "UserFnError", "classify_cli", "classify_exception", "classify_value",
           "run_case", "run_matrix", "summarize", "format_table", "main", "STATUSES", "GROUPS"]


# -- workers -------------------------------------------------------------------------------------

def _worker(conn, cases: list, mem_bytes: int, tmp: str, mounts_file: str, log: str) -> None:
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    if mem_bytes:
        resource.setrlimit(resource.RLIMIT_AS, (mem_bytes, mem_bytes))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    # one compute thread per worker: on a shared, loaded CPU torch's default threads run several times slower
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    ctx = Ctx(tmp, mounts_file)
    while True:
        idx = conn.recv()
        if idx is None:
            return
        try:
            out = run_case(cases[idx], ctx)
        except BaseException as exc:  # noqa: BLE001 - harness failure, reported as such
            out = {"status": "crash", "reason": _one_line(f"harness: {exc!r} {traceback.format_exc()[-300:]}"),
                   "module": "harness", "seconds": 0.0}
        sys.stdout.flush()
        conn.send(out)


class Worker:
    def __init__(self, cases, mem_bytes, tmp, mounts_file, log):
        ctx = mp.get_context("fork")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker, args=(child, cases, mem_bytes, tmp, mounts_file, log), daemon=True)
        self.proc.start()
        child.close()

    def run(self, idx: int, timeout: float) -> Optional[dict]:
        """The outcome, or None on timeout; a dict with status crash/oom when the worker died."""
        self.conn.send(idx)
        if not self.conn.poll(timeout):
            return None
        try:
            return self.conn.recv()
        except (EOFError, ConnectionResetError):
            self.proc.join(5)
            code = self.proc.exitcode
            if code == -9:
                return {"status": "oom", "reason": "worker killed by SIGKILL (out of memory)", "module": ""}
            return {"status": "crash", "reason": f"worker died (exit code {code})", "module": ""}

    def stop(self, kill: bool = False) -> None:
        if kill:
            self.proc.kill()
        else:
            try:
                self.conn.send(None)
            except (BrokenPipeError, OSError):
                pass
        self.proc.join(10)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(5)


def run_matrix(cases: list, *, mem_gb: float, timeout_scale: float, progress: bool) -> list[dict]:
    tmp = tempfile.mkdtemp(prefix="bad-input-matrix-")
    mounts_file = os.path.join(tmp, "mounts.txt")
    log = os.path.join(tmp, "workers.log")
    mem = int(mem_gb * (1 << 30)) if mem_gb > 0 else 0
    results: list[dict] = []
    try:
        for group in GROUPS:
            worker = None
            for idx, case in enumerate(cases):
                if case.group != group:
                    continue
                if worker is None:
                    worker = Worker(cases, mem, tmp, mounts_file, log)
                t0 = time.perf_counter()
                out = worker.run(idx, case.timeout * timeout_scale)
                if out is None:
                    out = {"status": "hang", "reason": f"no result within {case.timeout * timeout_scale:.0f} s",
                           "module": ""}
                    worker.stop(kill=True)
                    worker = None
                elif out.get("module") == "" and out["reason"].startswith("worker"):
                    worker.stop(kill=True)
                    worker = None
                out.setdefault("seconds", round(time.perf_counter() - t0, 3))
                out.update(layer=case.layer, name=case.name, expect=case.expect)
                results.append(out)
                if progress:
                    mark = MARKS.get(out["status"], "?")
                    print(mark, end="", flush=True)
            if worker is not None:
                worker.stop()
    finally:
        _unmount_all(mounts_file)
        if progress:
            print()
        shutil.rmtree(tmp, ignore_errors=True)
    return results


def _unmount_all(mounts_file: str) -> None:
    if not os.path.exists(mounts_file):
        return
    with open(mounts_file) as fh:
        for line in fh:
            path = line.strip()
            if path:
                subprocess.run(["umount", "-l", path], capture_output=True)


# -- report --------------------------------------------------------------------------------------

def summarize(results: list[dict]) -> dict:
    layers: dict[str, Counter] = {}
    for r in results:
        layers.setdefault(r["layer"], Counter())[r["status"]] += 1
    table = {}
    for layer, counts in [*sorted(layers.items()), ("TOTAL", sum(layers.values(), Counter()))]:
        row = {"cases": sum(v for k, v in counts.items() if k != "skipped")}
        row.update({s: counts.get(s, 0) for s in STATUSES})
        if counts.get("skipped"):
            row["skipped"] = counts["skipped"]
        table[layer] = row
    return table


def format_table(table: dict) -> str:
    cols = ["cases", *STATUSES, "skipped"]
    lines = [f"{'layer':12s}" + "".join(f"{c:>14s}" for c in cols)]
    for layer, row in table.items():
        lines.append(f"{layer:12s}" + "".join(f"{row.get(c, 0):>14d}" for c in cols))
    return "\n".join(lines)


def compare(path: str, results: list[dict]) -> str:
    """Status transitions since a previous run (same case names), and the cases that got worse."""
    with open(path, encoding="utf-8") as fh:
        before = {(c["layer"], c["name"]): c["status"] for c in json.load(fh)["cases"]}
    moves = Counter()
    worse = []
    rank = {"ok": 0, "clear_error": 0, "skipped": 0, "silent_wrong": 1, "crash": 1, "hang": 1, "oom": 1}
    for r in results:
        old = before.get((r["layer"], r["name"]))
        if old is None:
            moves[("(new case)", r["status"])] += 1
            continue
        moves[(old, r["status"])] += 1
        if rank.get(r["status"], 1) > rank.get(old, 1):
            worse.append(f"  {old} -> {r['status']}: {r['layer']} {r['name']}: {r['reason']}")
    lines = [f"status moves since {path}:"]
    lines += [f"  {a:>12s} -> {b:<12s} {n:5d}" for (a, b), n in sorted(moves.items(), key=lambda kv: -kv[1])]
    if worse:
        lines += [f"worse than before ({len(worse)}):", *worse]
    return "\n".join(lines)


def humanize_location() -> str:
    out = subprocess.run([sys.executable, "-c", "import humanize; print(humanize.__file__)"],
                         capture_output=True, text=True)
    return out.stdout.strip() or out.stderr.strip()[-200:]


def main(argv: Optional[list] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a small subset (a few inputs per API, no huge texts)")
    parser.add_argument("--layers", help="comma-separated layers to run (default: all)")
    parser.add_argument("--json", metavar="PATH", help="save the summary and every case's outcome")
    parser.add_argument("--mem-gb", type=float, default=6.0, help="address-space limit per worker (0 = none)")
    parser.add_argument("--timeout-scale", type=float, default=1.0, help="multiply every case's timeout")
    parser.add_argument("--compare", metavar="PATH", help="a previous --json file: print how each case's status moved")
    parser.add_argument("--list", action="store_true", help="list the selected cases and exit")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _matrix_cases import all_cases

    cases = all_cases()
    if args.quick:
        cases = [c for c in cases if c.quick]
    if args.layers:
        wanted = {x.strip() for x in args.layers.split(",") if x.strip()}
        unknown = wanted - {c.layer for c in all_cases()}
        if unknown:
            parser.error(f"unknown layer(s) {sorted(unknown)}; layers: {sorted({c.layer for c in all_cases()})}")
        cases = [c for c in cases if c.layer in wanted]
    if args.list:
        for c in cases:
            print(f"{c.layer:10s} {c.group:6s} {c.expect:7s} {c.name}")
        print(f"{len(cases)} cases")
        return 0
    where = humanize_location()
    print(f"humanize: {where}\ncases: {len(cases)}{' (quick)' if args.quick else ''}; "
          f"address-space limit {args.mem_gb:g} GiB per worker")
    t0 = time.perf_counter()
    results = run_matrix(cases, mem_gb=args.mem_gb, timeout_scale=args.timeout_scale,
                         progress=not args.no_progress)
    elapsed = time.perf_counter() - t0
    table = summarize(results)
    print(f"\n{format_table(table)}\n\n{elapsed:.0f} s")
    bad = [r for r in results if r["status"] not in ("ok", "clear_error")]
    if bad:
        print(f"\nnon-ok cases ({len(bad)}):")
        for r in bad:
            print(f"  {r['status']:12s} {r['layer']:9s} {r['name']}: {r['reason']}")
    if args.compare:
        print("\n" + compare(args.compare, results))
    if args.json:
        payload = {"humanize": where, "quick": args.quick, "layers": args.layers, "seconds": round(elapsed, 1),
                   "summary": table, "cases": results}
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(payload, fh, indent=1, ensure_ascii=True)
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
