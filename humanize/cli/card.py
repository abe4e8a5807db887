"""``humanize-bench card``: a robustness card per detector of a stored run (issue #12 §4), and with
``--documents`` the HTML page of the run's attacked documents."""

from __future__ import annotations

import sys
from pathlib import Path


def add_parser(subparsers) -> None:
    from humanize.cli._outputs import force_argument
    from humanize.cli.common import DEFAULT_OUT, open_fraction, plugin_argument

    p = subparsers.add_parser(
        "card", help="one robustness card per detector of a stored run (Markdown + HTML), optionally with the "
                     "page of its attacked documents",
        description="For each detector of a finished run: clean AUROC and TPR at the run's FPRs, the worst attack, "
                    "the mean over attacks, the figures with the normalizer, the Artifact Reliance Score where "
                    "stored, the attack with the best effectiveness per unit of quality loss and the run's "
                    "provenance, every figure with its bootstrap interval.")
    p.add_argument("--db", default=f"{DEFAULT_OUT}/results.sqlite", help="results database")
    p.add_argument("--run", help="run id (default: the latest finished run)")
    p.add_argument("--out", default=f"{DEFAULT_OUT}/cards", help="folder for the cards (default: %(default)s)")
    p.add_argument("--format", nargs="+", default=["md", "html"], choices=["md", "html"])
    p.add_argument("--fpr", type=open_fraction, nargs="+", metavar="FPR",
                   help="FPR(s) to show (each one of the run's; default: every FPR of the run)")
    p.add_argument("--documents", action="store_true",
                   help="also write documents.html: each attacked text with its edits highlighted and every "
                        "detector's score before and after, filterable by attack and sortable by score change")
    force_argument(p)
    plugin_argument(p, reads_runs=True)
    p.set_defaults(func=run_card)


def run_card(args) -> int:
    from humanize.benchmarks.reporting.card import robustness_cards, save_cards
    from humanize.benchmarks.reporting.documents_page import write_documents_page
    from humanize.benchmarks.runner.manifest import run_manifest
    from humanize.benchmarks.runner.store import ResultsStore
    from humanize.cli._outputs import check_folder, mark_folder
    from humanize.cli.common import expected_errors, one_line, load_plugins_for_run

    if not Path(args.db).is_file():
        print(f"humanize-bench card: no results database at {args.db!r}; run `humanize-bench run` first",
              file=sys.stderr)
        return 2
    written = []
    try:
        load_plugins_for_run(args, args.db, args.run)  # --documents re-reads a plug-in dataset: a file named here
        with ResultsStore(args.db, readonly=True) as store:
            cards = robustness_cards(store, args.run, fpr=args.fpr)
            run_id = run_manifest(store, args.run)[0]
            check_folder(args.out, run_id, force=args.force)
            written = save_cards(cards, args.out, args.format)
            if args.documents:
                written.append(write_documents_page(store, Path(args.out) / "documents.html", args.run))
        mark_folder(args.out, run_id, db=args.db)
    except (*expected_errors(), LookupError, ValueError) as err:
        print(f"humanize-bench card: {one_line(err)}", file=sys.stderr)
        return 2
    for card in cards.values():
        print(card.to_markdown())
    for path in written:
        print(path)
    return 0
