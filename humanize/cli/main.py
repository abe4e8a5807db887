"""``humanize-bench``: red-team detectors of machine-generated text from a shell."""

from __future__ import annotations

import argparse
import json
import sys

import pandas as pd


def _cmd_attacks_demo(args: argparse.Namespace) -> int:
    from humanize.benchmarks.attack_tour import mark_edits, run_attack_tour

    tour = run_attack_tour(names=args.attacks, n=args.n, seed=args.seed)
    with pd.option_context("display.width", 160, "display.max_columns", 20, "display.float_format", "{:.2f}".format):
        print(f"Rule-based attacks on {args.n} machine texts of the embedded demo set (RAID θ defaults)\n")
        print(tour.summary.to_string(index=False))
    print("\nSamples (edits in [brackets]):")
    for name, result in tour.samples.items():
        before, after = mark_edits(result)
        print(f"\n== {name}\n  before: {before}\n  after:  {after}")
    return 0


def _cmd_attack(args: argparse.Namespace) -> int:
    from humanize import attacks

    params = {}
    for item in args.param or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"humanize-bench attack: --param expects KEY=VALUE, got {item!r}")
        try:
            params[key] = json.loads(value)
        except json.JSONDecodeError:
            params[key] = value
    try:
        attack = attacks.get(args.name, seed=args.seed, **params)
    except (ValueError, TypeError) as err:
        raise SystemExit(f"humanize-bench attack: {err}")
    text = sys.stdin.read() if args.text == "-" else args.text
    result = attack.apply(text)
    if args.json:
        print(json.dumps({"text": result.text, "edits": [list(e) for e in result.edits], "attack": result.attack,
                          "params": {k: repr(v) for k, v in result.params.items()}}, ensure_ascii=False))
    else:
        print(result.text)
    return 0


def _cmd_list(args: argparse.Namespace) -> int:
    from humanize import attacks

    for name in attacks.available():
        cls = attacks.resolve(name)
        doc = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
        print(f"{name:22s} {doc}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="humanize-bench", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("demo", help="attack the embedded demo set with every rule-based attack and summarise")
    p.add_argument("--n", type=int, default=200, help="machine texts to attack (max 900; default 200)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--attacks", nargs="+", metavar="NAME", help="attack names (default: every rule-based attack)")
    p.set_defaults(func=_cmd_attacks_demo)

    p = sub.add_parser("attack", help="attack one text (an argument, or - for standard input) and print the result")
    p.add_argument("name", help="attack name (see `humanize-bench list-attacks`)")
    p.add_argument("text", help="the text, or - to read standard input")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--param", action="append", metavar="KEY=VALUE", help="attack parameter, e.g. rate=0.3 (repeatable)")
    p.add_argument("--json", action="store_true", help="print the text with its exact edits as JSON")
    p.set_defaults(func=_cmd_attack)

    p = sub.add_parser("list-attacks", help="list the registered attacks")
    p.set_defaults(func=_cmd_list)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
