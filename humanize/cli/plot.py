"""``humanize-bench plot``: the scatter, triangle, θ sweep, cost and heatmap figures of a stored run."""

from __future__ import annotations

from humanize.cli.common import DEFAULT_OUT, load_run, stored_run_arguments


def _cmd_plot(args) -> int:
    from humanize.benchmarks.reporting.plots import plot_all
    from humanize.cli._outputs import mark_folder

    run_id, tables, manifest = load_run(args.db, args.run, out=args.out, force=args.force)
    paths = plot_all(tables, args.out, formats=args.format, manifest=manifest)
    mark_folder(args.out, run_id, db=args.db)
    for p in paths:
        print(p)
    return 0


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("plot", help="draw the scatter, triangle, θ sweep, cost and heatmap figures")
    stored_run_arguments(p)
    p.add_argument("--out", default=f"{DEFAULT_OUT}/plots", help="folder for the figures")
    p.add_argument("--format", nargs="+", default=["png", "svg", "pdf"], choices=["png", "svg", "pdf"],
                   help="figure formats (default: all three; captions go to captions.md)")
    p.set_defaults(func=_cmd_plot)
