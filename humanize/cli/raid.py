"""``humanize-bench raid``: RAID's leaderboard workflow from the command line.

``detect`` scores every row of a RAID file with one detector into RAID's ``predictions.json``
(resumable, content-cached, streamed; locally or on Ray); ``check`` is the pre-flight check of a
submission (one line per problem, exit 2); ``evaluate`` is RAID's own protocol on a predictions file,
offline (:mod:`humanize.benchmarks.evaluation.raid`, RAID's JSON shape); ``metadata`` writes the
template of ``metadata.json``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

COMMAND = "raid"


def _fail(sub: str, err) -> int:
    from humanize.cli.common import one_line  # escapes what it shows: ids and values come from the user's files

    print(f"humanize-bench {COMMAND} {sub}: {one_line(err)}", file=sys.stderr)
    return 2


def _cmd_detect(args) -> int:
    from humanize.plugins import load_plugins
    from humanize.benchmarks.runner.executors import get_executor
    from humanize.benchmarks.runner.raid_detect import detect_file
    from humanize.benchmarks.runner.config import detector_spec
    from humanize.cli.common import expected_errors, quiet_model_loading

    quiet_model_loading()
    try:
        load_plugins(args.plugin or [])
        detector = detector_spec(args.detector).build()  # a class, a registry name or a plain function
        options = {"address": args.ray_address} if args.executor == "ray" else {}
        executor = get_executor(args.executor or "local", **options)
        try:
            summary = detect_file(detector, args.data, args.out, db=args.db, executor=executor,
                                  batch_size=args.batch_size, progress=not args.quiet)
        finally:
            executor.close()
    except (*expected_errors(), LookupError, ValueError, TypeError) as err:
        return _fail("detect", err)
    if summary.failures:
        first = summary.failures[0]
        return _fail("detect", f"{len(summary.failures)} text(s) failed to score, so no predictions were written "
                               f"(a rerun retries only them); first: {first.error}")
    print(f"{summary.predictions}: {summary.rows:,} rows; scored {summary.scored:,} texts now, "
          f"{summary.cached:,} from the store ({args.db})")
    return 0


def _cmd_check(args) -> int:
    from humanize.benchmarks.reporting._escape import terminal_text
    from humanize.benchmarks.runner.raid_submission import check_submission
    from humanize.cli.common import expected_errors

    try:
        report = check_submission(args.predictions, args.data, metadata=args.metadata, target_fprs=args.target_fpr)
    except (*expected_errors(), LookupError, ValueError) as err:
        return _fail("check", err)
    for problem in report.problems:
        print(terminal_text(problem.line()))
    for note in report.notes:
        print(terminal_text(note), file=sys.stderr)
    if report.problems:
        print(f"{len(report.problems)} problem(s) in {report.n_predictions:,} predictions over {report.n_rows:,} rows",
              file=sys.stderr)
        return 2
    print(f"ok: {report.n_predictions:,} predictions over {report.n_rows:,} rows, no problem found")
    return 0


def _cmd_evaluate(args) -> int:
    from humanize.benchmarks.evaluation.raid import json_ready, raid_evaluate
    from humanize.benchmarks.runner.raid_submission import read_data_keys, read_predictions
    from humanize.cli.common import expected_errors

    try:
        data = read_data_keys(args.data)
        if "model" not in data.columns:
            raise LookupError(f"{Path(args.data).name} has no 'model' column: RAID's test labels are hidden, so "
                              "the test split is evaluated by RAID's leaderboard; evaluate on train or extra")
        result = raid_evaluate(read_predictions(args.predictions), data, args.target_fpr,
                               per_domain=not args.global_threshold, require_complete=not args.allow_incomplete)
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(json_ready(result), indent=2) + "\n", encoding="utf-8")
    except (*expected_errors(), LookupError, ValueError) as err:
        return _fail("evaluate", err)
    head = [r for r in result["scores"] if r["model"] == r["decoding"] == r["repetition_penalty"] == r["domain"]
            == "all" and r["attack"] in ("all", "none")]
    print(f"{out}: {len(result['scores']):,} slices (RAID's protocol)")
    for rec in sorted(head, key=lambda r: r["attack"] != "all"):
        what = "every attack" if rec["attack"] == "all" else "no attack"
        tprs = ", ".join(f"TPR@{k} {'n/a (target FPR missed)' if v is None else format(v['accuracy'], '.3f')}"
                         for k, v in rec["accuracy"].items())
        print(f"  all domains, {what}: AUROC {rec['auroc']:.3f}, {tprs}")
    if not any(r["attack"] == "all" for r in head):
        print("  no headline over every setting: some rows lack scores (RAID's leaderboard lists such a "
              "submission only within its complete slices)")
    return 0


def _cmd_metadata(args) -> int:
    from humanize.benchmarks.runner.raid_submission import write_metadata_template
    from humanize.cli.common import expected_errors

    try:
        path = write_metadata_template(args.out, args.detector_name or "")
    except expected_errors() as err:
        return _fail("metadata", err)
    print(f"{path}: fill in date_released, detector_name and contact_info (required), the links if you have them; "
          "then put it beside predictions.json in leaderboard/submissions/<your detector>/")
    return 0


def add_parser(subparsers) -> None:
    from humanize.cli.common import DEFAULT_OUT, executor_arguments, int_at_least, open_fraction, plugin_argument

    p = subparsers.add_parser(COMMAND, help="RAID's leaderboard workflow: detect, check, evaluate, metadata")
    sub = p.add_subparsers(dest="raid_command", required=True, metavar="STEP")

    d = sub.add_parser("detect", help="score every row of a RAID file into RAID's predictions.json (resumable)")
    d.add_argument("--detector", required=True, metavar="NAME[:K=V,...]",
                   help="the detector: a registry name, package.module:Class, or a plug-in's FILE:Class")
    d.add_argument("--data", required=True, help="a RAID CSV (e.g. test.csv) or Parquet file/folder")
    d.add_argument("--out", default="predictions.json", help="the predictions file (default predictions.json)")
    d.add_argument("--db", default=f"{DEFAULT_OUT}/results.sqlite",
                   help="the results store that makes a rerun continue (default %(default)s)")
    d.add_argument("--batch-size", dest="batch_size", type=int_at_least(1), default=32)
    d.add_argument("--quiet", action="store_true", help="no progress bar")
    plugin_argument(d)
    executor_arguments(d)
    d.set_defaults(func=_cmd_detect)

    c = sub.add_parser("check", help="pre-flight check of a submission: one line per problem, exit 2")
    c.add_argument("--predictions", required=True, help="predictions.json")
    c.add_argument("--data", required=True, help="the RAID file the predictions are for (CSV or Parquet)")
    c.add_argument("--metadata", help="metadata.json, in the folder named as the submission")
    c.add_argument("--target-fpr", dest="target_fpr", type=open_fraction, nargs="+", default=[0.05],
                   help="the FPRs to check calibration at (default 0.05, RAID's)")
    c.set_defaults(func=_cmd_check)

    e = sub.add_parser("evaluate", help="RAID's own protocol on a predictions file, offline (RAID's JSON)")
    e.add_argument("--predictions", required=True, help="predictions.json")
    e.add_argument("--data", required=True, help="a labelled RAID file (train or extra split, or your own)")
    e.add_argument("--target-fpr", dest="target_fpr", type=open_fraction, nargs="+", default=[0.05])
    e.add_argument("--global-threshold", action="store_true",
                   help="one threshold for every domain (RAID's per_domain_tuning=False)")
    e.add_argument("--allow-incomplete", action="store_true",
                   help="evaluate slices with missing scores without them (RAID's require_complete=False)")
    e.add_argument("--out", default="results.json", help="the results file (default results.json)")
    e.set_defaults(func=_cmd_evaluate)

    m = sub.add_parser("metadata", help="write RAID's metadata.json template to fill in")
    m.add_argument("--out", default=METADATA_DEFAULT, help="where (default %(default)s)")
    m.add_argument("--detector-name", dest="detector_name", help="fill in detector_name")
    m.set_defaults(func=_cmd_metadata)


METADATA_DEFAULT = "metadata.json"
