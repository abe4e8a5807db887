"""``humanize-bench ars``: the Artifact Reliance Score of detectors (artifact-reliance paper §5.1, Table 3).

On a dataset (``--dataset``/``--filter``, or a labelled file with ``--path``) or on a stored
run (``--db``, which also stores the table in the run). Prints the threshold rule and the table;
``--out`` exports it as Markdown/CSV/JSON.
"""

from __future__ import annotations

import argparse
import sys

import pandas as pd

COMMAND = "ars"


def _fail(message: str) -> int:
    from humanize.cli.common import one_line

    print(f"humanize-bench {COMMAND}: {one_line(message) if isinstance(message, BaseException) else message}",
          file=sys.stderr)
    return 2


def _rows(args):
    from humanize.benchmarks.data import load_dataset
    from humanize.cli.common import key_values

    filters = key_values(args.filter, "--filter")
    if args.path:
        filters.update(path=args.path, text_column=args.text_column, label_column=args.label_column)
        if args.domain_column:
            filters["domain_column"] = args.domain_column
        if args.human_label is not None:
            filters["human_label"] = args.human_label
        return load_dataset("file", **filters)
    return load_dataset(args.dataset or "demo", **filters)


def _compute(args):
    from humanize.benchmarks.audits.reliance import RelianceResult, artifact_reliance
    from humanize.benchmarks.audits.reliance_run import reliance_for_run
    from humanize.benchmarks.runner.config import detector_spec
    from humanize.cli.common import load_plugins_for_run

    load_plugins_for_run(args, args.db, args.run)  # only the files named here; checked against the run's record
    options = dict(by=tuple(args.by), threshold=args.threshold, max_per_class=args.max_per_class or None)
    specs = [detector_spec(d) for d in args.detector or []]  # the one spec grammar, as a config's
    if args.db:
        extra = {k: getattr(args, k) for k in ("fpr", "n_boot") if getattr(args, k) is not None}
        if args.per_domain:
            extra["per_domain"] = True
        return reliance_for_run(args.db, args.run, specs or None, **options, **extra)
    rows = _rows(args)
    results = []
    for spec in specs:
        det = spec.build()
        results.append(artifact_reliance(det, rows, fpr=0.05 if args.fpr is None else args.fpr,
                                         per_domain=args.per_domain, n_boot=1000 if args.n_boot is None
                                         else args.n_boot, seed=args.seed, **options))
    table = pd.concat([r.table for r in results], ignore_index=True)
    documents = pd.concat([r.documents for r in results], ignore_index=True)
    rule = "; ".join(f"{r.table['detector'].iloc[0]}: {r.threshold_rule}" for r in results)
    return RelianceResult(table, documents, rule)


def _cmd_ars(args) -> int:
    from humanize.benchmarks.reporting.report import export_report
    from humanize.cli.common import expected_errors, quiet_model_loading

    if args.db and (args.dataset or args.path or args.filter):
        return _fail("give either a stored run (--db) or a dataset (--dataset/--filter/--path), not both")
    if args.dataset and args.path:
        return _fail("give either --dataset or --path, not both")
    if not args.db and not args.detector:
        return _fail("name at least one --detector (with --db the run's detectors are the default)")
    quiet_model_loading()
    try:
        result = _compute(args)
    except (*expected_errors(), LookupError, ValueError, TypeError) as err:
        return _fail(err)
    table = result.table
    rules = table.drop_duplicates("detector")[["detector", "threshold_rule"]]
    print("Artifact Reliance Score (artifact-reliance paper §5.1): flip = ARS_net = flip_h - flip_m on the machine "
          "documents detected at the threshold; unc = mean s(placebo) - s(cf) over all machine documents "
          "(detector score units; > 0: the human profile moves scores toward human more than the placebo)")
    from humanize.benchmarks.reporting._escape import terminal_text
    from humanize.cli.common import terminal_table

    for det, rule in rules.itertuples(index=False):
        print(terminal_text(f"threshold ({det}): {rule}"))
    with pd.option_context("display.width", 200, "display.max_columns", 40, "display.float_format", "{:.3f}".format):
        print(terminal_table(table.drop(columns=["threshold_rule"])).to_string(index=False))
    if args.db:
        print(f"\nstored as table 'reliance' of the run in {args.db}")
    if args.out:
        table.attrs["note"] = ("ARS per detector and subset (artifact-reliance paper §5.1, Table 3). Threshold: "
                               + " | ".join(f"{d}: {r}" for d, r in rules.itertuples(index=False)))
        paths = export_report({"reliance": table}, args.out, formats=args.format)
        print(f"wrote {len(paths)} files to {args.out}")
    return 0


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text}")
    return value


def add_parser(subparsers) -> None:
    from humanize.cli.common import int_at_least, open_fraction, plugin_argument

    p = subparsers.add_parser(
        COMMAND, help="Artifact Reliance Score: do a detector's decisions flip when a machine text gets the human "
                      "formatting profile (versus a machine-profile placebo)?",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--detector", action="append", metavar="NAME[:K=V,...]",
                   help="detector (repeatable), e.g. tfidf_lr or surface_probe:features=formatting; with --db the "
                        "default is the run's detectors")
    src = p.add_argument_group("documents (a dataset, a labelled file, or a stored run)")
    src.add_argument("--dataset", help="dataset name (default demo; see `humanize-bench list datasets`)")
    src.add_argument("--filter", action="append", metavar="KEY=VALUE", help="dataset filter, e.g. domain=xsum")
    src.add_argument("--path", help="a labelled CSV/TSV/JSONL/Parquet file (the 'file' dataset)")
    src.add_argument("--text-column", default="text", help="with --path: the text column (default text)")
    src.add_argument("--label-column", default="label", help="with --path: the label column (default label)")
    src.add_argument("--human-label", help="with --path: the label value of human rows (default human/machine or 0/1)")
    src.add_argument("--domain-column", help="with --path: a column to group subsets by (default: one subset)")
    src.add_argument("--db", help="a results database: compute on its run's test documents and store the table "
                                  "in the run")
    src.add_argument("--run", help="with --db: the run id (default: the latest finished run)")
    thr = p.add_mutually_exclusive_group()
    thr.add_argument("--fpr", type=open_fraction, help="threshold at this FPR on the human documents' original scores "
                                                   "(default 0.05; with --db the run's first FPR)")
    thr.add_argument("--threshold", type=_number, help="a fixed threshold in the detector's score units")
    p.add_argument("--per-domain", action="store_true", help="one threshold per subset instead of one pooled")
    p.add_argument("--by", nargs="*", default=["domain"], metavar="COLUMN",
                   help="columns that define the subsets (default domain; none: one subset)")
    p.add_argument("--n-boot", type=int_at_least(0), help="bootstrap replicates (default 1000, 0 = no intervals; "
                                                          "with --db the run's)")
    p.add_argument("--seed", type=int_at_least(0), default=0, help="sampling, split and bootstrap seed (default 0; "
                                                                    "with --db the run's)")
    p.add_argument("--max-per-class", type=int_at_least(0), default=500,
                   help="documents per class and subset (default 500, the paper's; 0 = all)")
    p.add_argument("--out", help="folder to write the table to")
    p.add_argument("--format", nargs="+", default=["md", "csv", "json"], choices=["md", "csv", "json"])
    plugin_argument(p, reads_runs=True)
    p.set_defaults(func=_cmd_ars)
