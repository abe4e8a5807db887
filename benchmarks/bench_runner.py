"""Runner performance: the demo end to end, cold then cached, with peak memory.

Prints, for `humanize-bench demo` run as a subprocess (so its peak RSS is its own):
wall time of a cold run (empty results database), wall time of a second run of the
same configuration (everything cached: no model work), their ratio, and the peak
resident memory of each. Floors (issue #4): second run >= 20x faster; peak memory
<= 4 GiB; cold demo under 10 minutes on the 2-core CI machine.

    python benchmarks/bench_runner.py [--n 40] [--out /tmp/bench-demo]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import time


def _run_demo(n: int, out: str) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "humanize.cli.main", "demo", "--n", str(n), "--out", out, "--quiet"],
        capture_output=True, text=True,
    )
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"demo failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # ru_maxrss of children is the max over all waited-for children so far
    return wall, max(peak_kib, before) / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--out", default="/tmp/humanize-bench-runner-bench")
    args = ap.parse_args()
    shutil.rmtree(args.out, ignore_errors=True)
    cold, cold_rss = _run_demo(args.n, args.out)
    warm, warm_rss = _run_demo(args.n, args.out)
    print(f"humanize-bench demo --n {args.n}")
    print(f"{'run':<28}{'wall s':>10}{'peak RSS MiB':>16}")
    print(f"{'cold (empty database)':<28}{cold:>10.1f}{cold_rss:>16.0f}")
    print(f"{'second run (all cached)':<28}{warm:>10.1f}{'(max so far)':>16}")
    ratio = cold / warm
    print(f"\nspeed-up of the second run: {ratio:.1f}x  [{'PASS' if ratio >= 20 else 'FAIL'} floor 20x]")
    print(f"peak memory: {cold_rss / 1024:.2f} GiB  [{'PASS' if cold_rss <= 4096 else 'FAIL'} floor 4 GiB]")
    print(f"cold demo: {cold / 60:.1f} min  [{'PASS' if cold <= 600 else 'FAIL'} floor 10 min on 2 cores]")


if __name__ == "__main__":
    main()
