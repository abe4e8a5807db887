"""``humanize-bench audit DATASET``: does a dataset carry a content-free cue that separates its
classes? The surface probe audit of the artifact-reliance paper (§4.1, Table 1), per subset and
overall, with the features that separate best (:mod:`humanize.benchmarks.audits.audit`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

#: the figures printed on the terminal (the export carries every column)
_SHOWN = ("probe_f1", "probe_auroc", "norm_f1", "delta_f1", "fmt_auroc", "len_auroc", "tfidf_f1")


def _load_rows(args):
    from humanize.benchmarks.data import available_datasets, load_dataset
    from humanize.benchmarks.data.files import FORMATS
    from humanize.cli.common import key_values

    filters = key_values(args.filter, "--filter")
    columns = {"text_column": args.text_column, "label_column": args.label_column, "human_label": args.human_label,
               "domain_column": args.domain_column, "model_column": args.model_column, "id_column": args.id_column}
    columns = {k: v for k, v in columns.items() if v is not None}
    name, path = args.dataset, args.path
    if name != "file" and name in available_datasets():
        if path is not None or columns:
            raise ValueError(f"--path and the column options are for a file; {name!r} is a registered dataset")
        return load_dataset(name, **filters)
    if name != "file":
        if path is not None:
            raise ValueError(f"give the file either as DATASET or as --path, not both ({name!r}, {path!r})")
        looks_like_file = Path(name).exists() or any(s.lower() in FORMATS for s in Path(name).suffixes)
        if not looks_like_file:
            raise ValueError(f"unknown dataset {name!r}: neither a registered dataset "
                             f"({', '.join(d for d in available_datasets() if d != 'file')}) nor a file path "
                             f"ending in {', '.join(sorted(FORMATS))}")
        path = name
    elif path is None:
        raise ValueError("dataset 'file' needs --path FILE (or give the file path as DATASET)")
    return load_dataset("file", path=path, **columns, **filters)


def _shown(table):
    import pandas as pd

    out = pd.DataFrame({"subset": table["subset"], "n_human": table["n_human"], "n_machine": table["n_machine"]})
    for fig in _SHOWN:
        lo, hi = table[f"{fig}_lo"], table[f"{fig}_hi"]
        out[fig] = [("nan" if pd.isna(v) else f"{v:.3f}") + ("" if pd.isna(a) else f" [{a:.3f}, {b:.3f}]")
                    for v, a, b in zip(table[fig], lo, hi)]
    if table["note"].astype(bool).any():
        out["note"] = table["note"]
    return out.set_index("subset")


def _cmd_audit(args) -> int:
    import pandas as pd

    from humanize.benchmarks.audits.audit import audit_dataset
    from humanize.benchmarks.reporting.report import export_report
    from humanize.cli.common import expected_errors, one_line

    try:
        rows = _load_rows(args)
        result = audit_dataset(rows, by=args.by, max_per_class=args.max_per_class, folds=args.folds,
                               n_boot=args.n_boot, confidence=args.confidence, seed=args.seed, tfidf=not args.no_tfidf)
        paths = export_report(result.to_report(top=args.top), args.out, formats=args.format) if args.out else []
    except (*expected_errors(), ValueError, TypeError) as err:
        print(f"humanize-bench audit: {one_line(err)}", file=sys.stderr)
        return 2
    with pd.option_context("display.width", 250, "display.max_columns", 40, "display.max_colwidth", 120):
        print(f"Surface probe audit of {args.dataset} ({len(rows)} rows; {args.folds}-fold CV, "
              f"{args.confidence:.0%} bootstrap intervals over {args.n_boot} replicates)\n")
        print(_shown(result.table).to_string())
        print(f"\nTop {args.top} features overall (univariate AUROC, machine = positive):\n")
        print(result.top_features(args.top).drop(columns="subset").to_string(index=False, float_format="{:.3f}".format))
    print(f"\n{result.summary()}")
    if paths:
        print(f"\nwrote {len(paths)} files to {args.out}")
    return 0


def add_parser(subparsers) -> argparse.ArgumentParser:
    from humanize.cli.common import int_at_least, open_fraction

    p = subparsers.add_parser(
        "audit", help="does a dataset carry a content-free cue (formatting, length) that separates its classes?",
        description=__doc__)
    p.add_argument("dataset", metavar="DATASET",
                   help="a registered dataset (see `humanize-bench list datasets`) or a path to a labelled "
                        ".csv/.tsv/.jsonl/.parquet file")
    p.add_argument("--filter", action="append", metavar="KEY=VALUE",
                   help="loader option, e.g. domain=xsum (repeatable; values parsed as JSON when they can be)")
    p.add_argument("--path", metavar="FILE", help="the file, when DATASET is 'file'")
    p.add_argument("--text-column", dest="text_column", metavar="C", help="the file's text column (default: text)")
    p.add_argument("--label-column", dest="label_column", metavar="C",
                   help="the file's label column (default: label); labels human/machine or 0/1 (1 = machine)")
    p.add_argument("--human-label", dest="human_label", metavar="V",
                   help="the label value that marks human rows (every other value counts as machine)")
    p.add_argument("--domain-column", dest="domain_column", metavar="C",
                   help="the file's domain column (default: one domain, the file's name)")
    p.add_argument("--model-column", dest="model_column", metavar="C", help="the file's generator column")
    p.add_argument("--id-column", dest="id_column", metavar="C", help="the file's id column")
    p.add_argument("--by", nargs="*", default=["domain", "model"], metavar="COLUMN",
                   help="subset columns: each combination of the machine rows against the human rows of the same "
                        "values except model (default: domain model; none: overall only)")
    p.add_argument("--max-per-class", dest="max_per_class", type=int_at_least(2), default=10_000, metavar="N",
                   help="balanced sample: at most N documents per class per subset (default 10000)")
    p.add_argument("--folds", type=int_at_least(2), default=5, help="cross-validation folds (default 5)")
    p.add_argument("--n-boot", dest="n_boot", type=int_at_least(0), default=1000, metavar="B",
                   help="bootstrap replicates for the intervals (default 1000; 0: no intervals)")
    p.add_argument("--confidence", type=open_fraction, default=0.95, help="interval confidence (default 0.95)")
    p.add_argument("--seed", type=int_at_least(0), default=0, help="sampling, fold and bootstrap seed (default 0)")
    p.add_argument("--no-tfidf", dest="no_tfidf", action="store_true",
                   help="skip the TF-IDF lexical reference (the slowest part on big datasets)")
    p.add_argument("--top", type=int_at_least(1), default=10, help="features shown and exported per subset")
    p.add_argument("--out", metavar="DIR", help="folder to export the audit into (Markdown, CSV, JSON)")
    p.add_argument("--format", nargs="+", default=["md", "csv", "json"], choices=["md", "csv", "json"],
                   help="export formats (default: md csv json)")
    p.set_defaults(func=_cmd_audit)
    return p
