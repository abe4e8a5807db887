"""``humanize-bench export``: a stored run's tables, documents and edits as Parquet, CSV or JSON Lines.

Calls :func:`humanize.benchmarks.reporting.export.export_run` and prints each written path, one a line.
"""

from __future__ import annotations

import sys
from pathlib import Path

COMMAND = "export"


def _fail(err) -> int:
    from humanize.cli.common import one_line

    print(f"humanize-bench {COMMAND}: {one_line(err) if isinstance(err, BaseException) else err}", file=sys.stderr)
    return 2


def _cmd_export(args) -> int:
    from humanize.benchmarks.runner.manifest import run_config
    from humanize.benchmarks.reporting.export import export_run
    from humanize.benchmarks.runner.store import ResultsStore
    from humanize.cli._outputs import check_folder, mark_folder
    from humanize.cli.common import expected_errors, load_plugins_for_run

    if not Path(args.db).is_file():
        return _fail(f"no results database at {args.db!r}; run `humanize-bench run` first")
    try:
        with ResultsStore(args.db, readonly=True) as store:
            run_id, _ = run_config(store, args.run)
        out = Path(args.out) if args.out else Path(args.db).parent / "export" / run_id
        check_folder(out, run_id, force=args.force)
        load_plugins_for_run(args, args.db, run_id)  # a plug-in dataset's documents: only a file named here
        paths = export_run(args.db, out, run_id=run_id, format=args.format, tables=args.tables)
        mark_folder(out, run_id, db=args.db)
    except (*expected_errors(), LookupError, ValueError) as err:
        return _fail(err)
    for path in paths:
        print(path)
    return 0


def add_parser(subparsers) -> None:
    from humanize.benchmarks.reporting.export import EXPORT_FORMATS
    from humanize.cli._outputs import force_argument
    from humanize.cli.common import DEFAULT_OUT, plugin_argument

    p = subparsers.add_parser(
        COMMAND, help="write a stored run's tables, attacked texts with edits and per-document scores as files "
                      "for pandas/DuckDB/Spark")
    p.add_argument("--db", default=f"{DEFAULT_OUT}/results.sqlite", help="results database")
    p.add_argument("--run", help="run id (default: the latest finished run)")
    p.add_argument("--format", choices=EXPORT_FORMATS, default="parquet",
                   help="file format (default parquet); raid: RAID's predictions.json of the rows with RAID ids")
    p.add_argument("--out", help="folder for the files (default: export/<run id> next to the database)")
    p.add_argument("--tables", nargs="+", metavar="NAME",
                   help="tables to write (default: all of the run's tables and 'documents')")
    force_argument(p)
    plugin_argument(p, reads_runs=True)
    p.set_defaults(func=_cmd_export)
