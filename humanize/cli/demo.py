"""``humanize-bench demo``: rule-based and two small-budget model-based attacks against offline detectors on the
embedded demo set, with a summary, a report and plots (offline, CPU)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from humanize.cli.common import (DEFAULT_OUT, executor_arguments, expected_errors, int_at_least, one_line,
                                 print_tables, quiet_model_loading, warn_too_small)

#: The start of the demo's last line: this call's seconds per stage as JSON (``RunResult.stage_seconds`` and the
#: report's), ``{"attacks": {"wall_s": .., "cpu_s": ..}, ...}``, read by ``benchmarks/bench_first_run.py``.
STAGE_SECONDS_PREFIX = "stage seconds: "


def _cmd_demo(args) -> int:
    from humanize.benchmarks.reporting.plots import figure_captions, plot_all
    from humanize.benchmarks.reporting.report import build_report, export_report
    from humanize.benchmarks.runner import run
    from humanize.benchmarks.runner.config import defense_spec, demo_config

    quiet_model_loading()
    out = Path(args.out)
    cfg = demo_config(n=args.n, seed=args.seed, db=str(out / "demo.sqlite"), model_attacks=not args.rule_based_only,
                      per_domain=args.per_domain)
    cfg.executor, cfg.ray_address = args.executor or cfg.executor, args.ray_address
    try:
        if args.defense:
            cfg.defenses = [defense_spec(d) for d in args.defense]
        print(_demo_banner(cfg, args.n))
        # a CLI process runs once: an attack's models are released when its job ends (issue #24)
        result = run(cfg, progress=not args.quiet, release_models=True)
    except expected_errors() as err:
        print(f"humanize-bench demo: {one_line(err)}", file=sys.stderr)
        return 2
    wall, cpu = time.perf_counter(), time.process_time()
    report = build_report(result.tables, n=args.n)
    print_tables(report)
    warn_too_small(result.tables, args.n, "demo")
    plots = plot_all(result.tables, out / "plots")
    files = export_report(report, out / "report", figures=figure_captions(result.tables))
    seconds = {**result.stage_seconds, "report": {"wall_s": time.perf_counter() - wall,
                                                  "cpu_s": time.process_time() - cpu}}
    print(f"\nreport: {out / 'report' / 'report.md'} (+{len(files) - 1} CSV, JSON and LaTeX files); "
          f"plots: {len(plots)} files in {out / 'plots'}; results database: {result.store}")
    print(f"computed this time: {result.work}")
    # one JSON line, for scripts (benchmarks/bench_first_run.py): this call's seconds per stage, warm-ups included
    print(STAGE_SECONDS_PREFIX + json.dumps({k: {m: round(v, 3) for m, v in d.items()} for k, d in seconds.items()}))
    return 0


def _demo_banner(cfg, n: int) -> str:
    """What the demo is about to run, in one line."""
    from humanize.attacks import RULE_BASED

    rule = sum(a.name in RULE_BASED for a in cfg.attacks)
    models = [a.base_label() for a in cfg.attacks if a.name not in RULE_BASED]
    what = f"{rule} rule-based" + (f" + {len(models)} model-based ({', '.join(models)})" if models else "")
    scope = "per domain" if cfg.per_domain else "pooled over domains"
    defended = ", ".join(d.name for d in cfg.defenses) or "none (--defense normalize adds one)"
    return (f"humanize-bench demo: {what} attacks x {len(cfg.detectors)} offline detectors on {n} machine + {n} "
            f"human texts of the embedded demo set (half fit the learned detectors; thresholds {scope}; "
            f"defense: {defended})")


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("demo", help="rule-based and two small-budget model-based attacks vs offline detectors "
                                           "on the embedded demo set, with a summary, report and plots (offline, CPU)")
    p.add_argument("--n", type=int_at_least(2), default=40,
                   help="texts sampled per label: N machine and N human; about half of each are test texts (the "
                        "rest fit the learned detectors); default 40 (20 human test texts resolve TPR at 5%% FPR "
                        "pooled over domains; 1%% needs --n 200); below about 20 a warning says no interval holds")
    p.add_argument("--per-domain", action="store_true",
                   help="calibrate thresholds per domain (RAID's protocol) instead of pooled over the two "
                        "domains; 5%% FPR then needs about --n 100")
    p.add_argument("--rule-based-only", action="store_true",
                   help="only the rule-based attacks (no model-based attack: faster, no attack model to load)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=DEFAULT_OUT, help=f"output folder (default {DEFAULT_OUT})")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument("--defense", action="append", metavar="NAME[:K=V,...]",
                   help="also score every text through this test-time defense, e.g. normalize (repeatable); "
                        "the report adds the figures with the defense next to those without")
    executor_arguments(p)
    p.set_defaults(func=_cmd_demo)
