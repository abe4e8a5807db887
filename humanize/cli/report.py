"""``humanize-bench report``: print and export the papers' tables of a stored run."""

from __future__ import annotations

from humanize.cli.common import load_run, open_fraction, print_tables, stored_run_arguments


def _cmd_report(args) -> int:
    from humanize.benchmarks.reporting.report import build_report, export_report
    from humanize.cli._outputs import mark_folder

    run_id, tables, manifest = load_run(args.db, args.run, out=args.out, force=args.force)
    n = ((manifest or {}).get("dataset") or {}).get("n")  # the run's n: the summary's --n advice scales it
    report = build_report(tables, fpr=args.fpr, n=n if isinstance(n, int) else None, manifest=manifest)
    print_tables(report)
    if args.out:
        paths = export_report(report, args.out, formats=args.format)
        mark_folder(args.out, run_id, db=args.db)
        print(f"\nwrote {len(paths)} files to {args.out}")
    return 0


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("report", help="print and export the papers' tables of a stored run")
    stored_run_arguments(p)
    p.add_argument("--out", help="folder to export Markdown/CSV/JSON into")
    p.add_argument("--format", nargs="+", default=["md", "csv", "json", "tex"], choices=["md", "csv", "json", "tex"],
                   help="md: one report.md; csv, json, tex (LaTeX with booktabs rules): one file per table")
    p.add_argument("--fpr", type=open_fraction, nargs="+", metavar="FPR",
                   help="FPR(s) of the accuracy and attack success tables (default: every FPR of the run)")
    p.set_defaults(func=_cmd_report)
