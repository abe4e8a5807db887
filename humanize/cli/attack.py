"""``humanize-bench attack``: attack one text (an argument, or - for standard input) and print the result.

``NAME`` is a spec in the one grammar of configs and composite members (:func:`humanize._registry.parse_spec`):
``homoglyph``, ``homoglyph:rate=0.5`` or ``my_attacks:Swap:rate=1.0``; ``--param KEY=VALUE`` adds parameters."""

from __future__ import annotations

import json
import sys

from humanize.cli.common import expected_errors, key_values, load_plugin_args, one_line, plugin_argument


def _cmd_attack(args) -> int:
    from humanize import attacks
    from humanize._registry import parse_spec
    from humanize.exceptions import ConfigError

    try:
        load_plugin_args(args)
    except Exception as err:  # noqa: BLE001 - a plug-in that fails to import: one line
        raise SystemExit(f"humanize-bench attack: {one_line(err)}")
    try:
        spec = parse_spec(args.name, "attack", ConfigError)
        attack = attacks.get(spec.name, **{"seed": args.seed, **spec.params, **key_values(args.param, "--param")})
    except (ValueError, TypeError) as err:
        raise SystemExit(f"humanize-bench attack: {one_line(err)}")
    text = sys.stdin.read() if args.text == "-" else args.text
    try:
        result = attack.apply(text)
    except expected_errors() as err:  # a model that is not installed, an endpoint that does not answer
        raise SystemExit(f"humanize-bench attack: {one_line(err)}")
    if args.json:
        print(json.dumps({"text": result.text, "edits": [list(e) for e in result.edits], "attack": result.attack,
                          "params": {k: repr(v) for k, v in result.params.items()},
                          "info": jsonable(result.info)}, ensure_ascii=False))
    else:
        print(result.text)
    return 0


def jsonable(value):
    """An attack's ``info`` as JSON: numbers, strings, lists and mappings as they are, anything else by repr."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else repr(value)
    try:
        import numpy as np

        if isinstance(value, np.generic):
            return jsonable(value.item())
    except ImportError:  # pragma: no cover - numpy is a dependency
        pass
    return repr(value)


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("attack",
                              help="attack one text (an argument, or - for standard input) and print the result")
    p.add_argument("name", help="attack name, optionally with parameters: homoglyph:rate=0.5")
    p.add_argument("text", help="the text, or - to read standard input")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--param", action="append", metavar="KEY=VALUE", help="attack parameter (repeatable)")
    p.add_argument("--json", action="store_true", help="print the text with its exact edits as JSON")
    plugin_argument(p)
    p.set_defaults(func=_cmd_attack)
