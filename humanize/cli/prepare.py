"""``humanize-bench prepare``: convert the packaged models and language resources once per machine
(:func:`humanize.models.prepare.prepare`; ``scripts/setup.sh`` runs it after the install)."""

from __future__ import annotations

import sys


def add_parser(subparsers) -> None:
    from humanize.models.prepare import DEMO_RESOURCES

    p = subparsers.add_parser(
        "prepare", help="convert the packaged models (GGUF de-quantisation, tokenizers) and WordNet into the cache "
                        "once, so that the first run does not",
        description="De-quantise the packaged GGUF models and convert their tokenizers into $HUMANIZE_CACHE "
                    "(default ~/.cache/humanize), copy WordNet, and check the other packaged resources; one line "
                    "per resource. Idempotent: a prepared resource is only checked.")
    p.add_argument("names", nargs="*", metavar="NAME",
                   help=f"resources to prepare (default: what the demo uses: {', '.join(DEMO_RESOURCES)})")
    p.add_argument("--strict", action="store_true", help="exit with status 1 when a resource is unavailable")
    p.set_defaults(func=_cmd_prepare)


def _cmd_prepare(args) -> int:
    from humanize.models.prepare import prepare

    try:
        steps = prepare(args.names or None, progress=lambda line: print(line, file=sys.stderr, flush=True))
    except ValueError as err:
        print(f"humanize-bench prepare: {err}", file=sys.stderr)
        return 2
    done = sum(s.state == "converted" for s in steps)
    missing = [s.name for s in steps if s.state == "unavailable"]
    print(f"prepared {len(steps)} resources: {done} converted now, {len(steps) - done - len(missing)} already "
          f"ready{', unavailable: ' + ', '.join(missing) if missing else ''}")
    return 1 if missing and args.strict else 0
