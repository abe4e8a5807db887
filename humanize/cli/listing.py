"""``humanize-bench list``: the registered attacks, detectors, datasets, defenses or quality meters."""

from __future__ import annotations

import sys

from humanize.cli.common import load_plugin_args, one_line, plugin_argument


def _cmd_list(args) -> int:
    from humanize import attacks, defenses, detectors, quality
    from humanize.benchmarks import data as datasets

    try:
        load_plugin_args(args)
    except Exception as err:  # noqa: BLE001 - a plug-in that fails to import: one line
        print(f"humanize-bench list: {one_line(err)}", file=sys.stderr)
        return 2
    registry = {"attacks": attacks, "detectors": detectors, "defenses": defenses, "datasets": datasets,
                "meters": quality}[args.what]
    names = datasets.available_datasets() if args.what == "datasets" else registry.available()
    for name in names:
        try:
            obj = datasets.dataset_loader(name) if args.what == "datasets" else registry.resolve(name)
            doc = (obj.__doc__ or "").strip().splitlines()
            summary = doc[0] if doc else ""
        except (TypeError, ValueError) as err:  # a broken entry point: listed, with why
            summary = f"(cannot be loaded: {one_line(err)})"
        where = registry.origin(name)
        print(f"{name:22s} {summary}" + (f"  [{where}]" if args.origins or where != "built in" else ""))
    return 0


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("list", help="list the registered attacks, detectors, datasets, defenses or quality "
                                           "meters")
    p.add_argument("what", choices=["attacks", "detectors", "datasets", "defenses", "meters"])
    p.add_argument("--origins", action="store_true",
                   help="say where each comes from for the built-in ones too (an entry point's package, a plug-in "
                        "file or a run-time registration is always said)")
    plugin_argument(p)
    p.set_defaults(func=_cmd_list)
