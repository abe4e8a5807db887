"""``humanize-bench runs``: the runs stored in a results database, one a line: id, date (UTC),
status, dataset, attacks, detectors and the number of documents sampled."""

from __future__ import annotations

import json
import sys
from pathlib import Path

COMMAND = "runs"


def run_rows(store) -> list[dict]:
    """One dict per stored run (oldest first): run_id, created, status, dataset, attacks,
    detectors, rows (the documents the run sampled, train and test), read from its manifest."""
    from humanize.benchmarks.runner.manifest import stored_manifest

    from humanize.exceptions import StoreError

    out = []
    for run_id, status, config in store.runs()[["run_id", "status", "config"]].itertuples(index=False):
        try:  # the row as verified (its checksum), the one read every command does (issue #35)
            stored = store.run_config_data(str(run_id))
        except (StoreError, LookupError):
            out.append({"run_id": str(run_id), "created": "?", "status": "corrupt (checksum mismatch: not shown)",
                        "dataset": "?", "attacks": [], "detectors": [], "rows": None})
            continue
        manifest = stored_manifest(stored) or {}
        dataset = manifest.get("dataset") or {}
        sample = dataset.get("sample") or {}
        counts = [v for k, v in sample.items() if k != "digest" and isinstance(v, int)]
        out.append({
            "run_id": str(run_id),
            "created": str(manifest.get("created", "?")),
            "status": str(status),
            "dataset": str(dataset.get("name") or (stored.get("dataset") if isinstance(stored, dict) else None)
                           or "?"),
            "attacks": [str(a.get("label")) for a in manifest.get("attacks", [])],
            "detectors": [str(d.get("label")) for d in manifest.get("detectors", [])],
            "rows": sum(counts) if counts else None,
        })
    return out


def _cmd_runs(args) -> int:
    from humanize.benchmarks.runner.store import ResultsStore
    from humanize.cli.common import expected_errors, one_line

    if not Path(args.db).is_file():
        print(f"humanize-bench {COMMAND}: no results database at {args.db!r}; run `humanize-bench run` first",
              file=sys.stderr)
        return 2
    try:
        with ResultsStore(args.db, readonly=True) as store:
            rows = run_rows(store)
    except (*expected_errors(), LookupError, ValueError) as err:
        print(f"humanize-bench {COMMAND}: {one_line(err)}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(rows, ensure_ascii=True))  # every control or bidi character as a \\u escape
        return 0
    if not rows:
        print(f"no runs in {args.db}")
        return 0
    from humanize.benchmarks.reporting._escape import terminal_text as t

    print(f"{'run id':16s}  {'created (UTC)':25s}  {'status':7s}  {'dataset':10s}  {'rows':>6s}  attacks | detectors")
    for r in rows:
        rows_text = "?" if r["rows"] is None else str(r["rows"])
        print(f"{t(r['run_id']):16s}  {t(r['created']):25s}  {t(r['status']):7s}  {t(r['dataset']):10s}  "
              f"{rows_text:>6s}  {', '.join(map(t, r['attacks'])) or '-'} | {', '.join(map(t, r['detectors'])) or '-'}")
    return 0


def add_parser(subparsers) -> None:
    from humanize.cli.common import DEFAULT_OUT

    p = subparsers.add_parser(COMMAND, help="list the runs stored in a results database",
                              description=__doc__)
    p.add_argument("--db", default=f"{DEFAULT_OUT}/results.sqlite", help="results database")
    p.add_argument("--json", action="store_true", help="one JSON list of the runs instead of the table")
    p.set_defaults(func=_cmd_runs)
