"""``humanize-bench tour``: what each rule-based attack does to demo texts, and how fast (no models)."""

from __future__ import annotations

import pandas as pd

from humanize.cli.common import int_at_least, one_line


def _cmd_tour(args) -> int:
    from humanize.benchmarks.reporting.attack_tour import mark_edits, run_attack_tour

    try:
        tour = run_attack_tour(names=args.attacks, n=args.n, seed=args.seed)
    except (ValueError, TypeError) as err:
        raise SystemExit(f"humanize-bench tour: {one_line(err)}") from None
    with pd.option_context("display.width", 160, "display.max_columns", 20, "display.float_format", "{:.2f}".format):
        print(f"Rule-based attacks on {args.n} machine texts of the embedded demo set (RAID θ defaults)\n")
        print(tour.summary.to_string(index=False))
    print("\nSamples (edits in [brackets]):")
    for name, result in tour.samples.items():
        before, after = mark_edits(result)
        print(f"\n== {name}\n  before: {before}\n  after:  {after}")
    return 0


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("tour", help="what each rule-based attack does to demo texts, and how fast (no models)")
    p.add_argument("--n", type=int_at_least(1), default=200, help="machine texts to attack (max 900; default 200)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--attacks", nargs="+", metavar="NAME", help="attack names (default: every rule-based attack)")
    p.set_defaults(func=_cmd_tour)
