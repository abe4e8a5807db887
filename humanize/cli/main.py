"""humanize-bench: how easily does a detector of machine-generated text get fooled,
at what cost to the text, and at what compute cost?"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import pandas as pd

from humanize.cli.common import (DEFAULT_OUT, detector_spec, executor_arguments, expected_errors, int_at_least,
                                 load_plugin_args, load_plugins_for_run, one_line, open_fraction, parse_spec,
                                 parse_value, plugin_argument, quiet_model_loading, terminal_table)

#: The start of the demo's last line: this call's seconds per stage as JSON (``RunResult.stage_seconds`` and the
#: report's), ``{"attacks": {"wall_s": .., "cpu_s": ..}, ...}``, read by ``benchmarks/bench_first_run.py``.
STAGE_SECONDS_PREFIX = "stage seconds: "

def _print_tables(report: dict[str, pd.DataFrame]) -> None:
    from humanize.benchmarks.reporting._escape import terminal_text
    from humanize.benchmarks.reporting.report import with_time_units

    with pd.option_context("display.width", 200, "display.max_columns", 40, "display.float_format", "{:.3f}".format):
        for name, table in report.items():
            print(f"\n== {terminal_text(name)}")
            print(terminal_table(with_time_units(table)).to_string(index=not isinstance(table.index, pd.RangeIndex)))
            for line in table.attrs.get("lines", ()):  # the summary's explanation and underpowered advice
                print(f"  {terminal_text(line)}")


def config_from_args(args):
    from humanize.benchmarks.runner.config import AttackSpec, DefenseSpec, DetectorSpec, RunConfig, load_config
    from humanize.exceptions import ConfigError

    cfg = load_config(args.config) if args.config else RunConfig()
    if getattr(args, "plugin", None):
        cfg.plugins = [*cfg.plugins, *args.plugin]
        cfg.load_plugins()  # before the names below are read: a plug-in may register them
    if args.dataset:
        cfg.dataset = args.dataset
    for item in args.filter or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"humanize-bench run: --filter expects KEY=VALUE, got {item!r}")
        cfg.filters[key] = parse_value(value)
    if args.attack:
        parsed = list(map(parse_spec, args.attack))
        for text, (_, params) in zip(args.attack, parsed):
            if args.rates and "rate" in params:
                raise ConfigError(f"--attack {text} sets rate={params['rate']} and --rates "
                                  f"{' '.join(f'{r:g}' for r in args.rates)} would replace it; give one or the other")
        cfg.attacks = [AttackSpec(n, p, args.rates) for n, p in parsed]
    elif args.rates:
        for spec in cfg.attacks:
            if spec.name != "pipeline":  # a pipeline has no θ of its own: its steps carry theirs
                if spec.rates and list(spec.rates) != list(args.rates):
                    print(f"humanize-bench run: warning: --rates {' '.join(f'{r:g}' for r in args.rates)} replaces "
                          f"the rate(s) {', '.join(f'{r:g}' for r in spec.rates)} of attack {spec.name!r} in "
                          f"{args.config}", file=sys.stderr)
                spec.rates = args.rates
    if args.detector:
        cfg.detectors = [detector_spec(n, p) for n, p in map(parse_spec, args.detector)]
    if args.defense:
        cfg.defenses = [DefenseSpec(n, p) for n, p in map(parse_spec, args.defense)]
    for field in ("n", "seed", "device", "db", "batch_size", "executor", "ray_address", "max_retries"):
        value = getattr(args, field, None)
        if value is not None:
            setattr(cfg, field, value)
    if args.no_quality:
        cfg.quality = False
    if getattr(args, "protocol", None):
        cfg.protocol = args.protocol
    if getattr(args, "attack_human", False):
        cfg.attack_human = True
    if getattr(args, "attacks_as_given", False):
        cfg.given_attacks = True  # with --attack too: validate refuses the pair in one line
    return cfg


def _cmd_run(args) -> int:
    from humanize.benchmarks.reporting.report import build_report
    from humanize.benchmarks.runner import run

    quiet_model_loading()
    try:
        cfg = config_from_args(args)
        # a CLI process runs once: an attack's models are released when its job ends (issue #24)
        result = run(cfg, progress=not args.quiet, release_models=True)
    except expected_errors() as err:
        print(f"humanize-bench run: {one_line(err)}", file=sys.stderr)
        return 2
    print(f"run {result.run_id} stored in {result.store}; computed this time: {result.work}")
    if result.corrupt:
        print(f"recomputed {len(result.corrupt)} stored row(s) that failed their integrity check", file=sys.stderr)
    if result.failures:
        print(f"{len(result.failures)} document(s) failed and are left out of the tables (a rerun retries them); "
              f"first: {result.failures[0].job}: {result.failures[0].error}", file=sys.stderr)
    _print_tables(build_report(result.tables, n=cfg.n, manifest=result.manifest))
    _warn_too_small(result.tables, cfg.n, "run")
    return 0


def _load_tables(db: str, run_id: str | None):
    """A stored run's tables, read without writing (the store may sit on a read-only disk)."""
    return _load_run(db, run_id)[1]


def _load_run(db: str, run_id: str | None, *, out: str | None = None, force: bool = False,
              with_manifest: bool = False):
    """(run id, tables) of a stored run, read without writing; with ``out``, that folder is
    checked first (:func:`humanize.cli._outputs.check_folder`: not another run's outputs);
    ``with_manifest``: (run id, tables, manifest)."""
    from humanize.benchmarks.runner.manifest import run_manifest
    from humanize.benchmarks.runner.store import ResultsStore
    from humanize.exceptions import StoreError
    from humanize.cli._outputs import check_folder

    if not Path(db).exists():
        raise SystemExit(f"humanize-bench: no results database at {db!r}; run `humanize-bench run` first")
    try:
        with ResultsStore(db, readonly=True) as store:
            tables = store.run_tables(run_id)
            found, manifest = run_manifest(store, run_id)
    except (LookupError, StoreError) as err:
        raise SystemExit(f"humanize-bench: {one_line(err)}") from None
    if out is not None:
        check_folder(out, found, force=force)
    return (found, tables, manifest) if with_manifest else (found, tables)


def _cmd_report(args) -> int:
    from humanize.benchmarks.reporting.report import build_report, export_report
    from humanize.cli._outputs import mark_folder

    run_id, tables, manifest = _load_run(args.db, args.run, out=args.out, force=args.force, with_manifest=True)
    n = ((manifest or {}).get("dataset") or {}).get("n")  # the run's n: the summary's --n advice scales it
    report = build_report(tables, fpr=args.fpr, n=n if isinstance(n, int) else None, manifest=manifest)
    _print_tables(report)
    if args.out:
        paths = export_report(report, args.out, formats=args.format)
        mark_folder(args.out, run_id, db=args.db)
        print(f"\nwrote {len(paths)} files to {args.out}")
    return 0


def _cmd_plot(args) -> int:
    from humanize.benchmarks.reporting.plots import plot_all
    from humanize.cli._outputs import mark_folder

    run_id, tables, manifest = _load_run(args.db, args.run, out=args.out, force=args.force, with_manifest=True)
    paths = plot_all(tables, args.out, formats=args.format, manifest=manifest)
    mark_folder(args.out, run_id, db=args.db)
    for p in paths:
        print(p)
    return 0


def _cmd_demo(args) -> int:
    from humanize.benchmarks.runner.config import demo_config
    from humanize.benchmarks.reporting.plots import figure_captions, plot_all
    from humanize.benchmarks.reporting.report import build_report, export_report
    from humanize.benchmarks.runner import run

    quiet_model_loading()
    out = Path(args.out)
    cfg = demo_config(n=args.n, seed=args.seed, db=str(out / "demo.sqlite"), model_attacks=not args.rule_based_only,
                      per_domain=args.per_domain)
    cfg.executor, cfg.ray_address = args.executor or cfg.executor, args.ray_address
    if args.defense:
        from humanize.benchmarks.runner.config import DefenseSpec

        cfg.defenses = [DefenseSpec(n, p) for n, p in map(parse_spec, args.defense)]
    print(_demo_banner(cfg, args.n))
    try:
        # a CLI process runs once: an attack's models are released when its job ends (issue #24)
        result = run(cfg, progress=not args.quiet, release_models=True)
    except expected_errors() as err:
        print(f"humanize-bench demo: {one_line(err)}", file=sys.stderr)
        return 2
    wall, cpu = time.perf_counter(), time.process_time()
    report = build_report(result.tables, n=args.n)
    _print_tables(report)
    _warn_too_small(result.tables, args.n, "demo")
    plots = plot_all(result.tables, out / "plots")
    files = export_report(report, out / "report", figures=figure_captions(result.tables))
    seconds = {**result.stage_seconds, "report": {"wall_s": time.perf_counter() - wall,
                                                  "cpu_s": time.process_time() - cpu}}
    print(f"\nreport: {out / 'report' / 'report.md'} (+{len(files) - 1} CSV, JSON and LaTeX files); "
          f"plots: {len(plots)} files in {out / 'plots'}; results database: {result.store}")
    print(f"computed this time: {result.work}")
    # one JSON line, for scripts (benchmarks/bench_first_run.py): this call's seconds per stage, warm-ups included
    print(STAGE_SECONDS_PREFIX + json.dumps({k: {m: round(v, 3) for m, v in d.items()} for k, d in seconds.items()}))
    return 0


def _warn_too_small(tables: dict, n, command: str) -> None:
    """One line on standard error when the run's test split is too small for any interval."""
    from humanize.benchmarks.reporting.summary import too_small

    line = too_small(tables["metrics"], n if isinstance(n, int) else None)
    if line:
        print(f"humanize-bench {command}: warning: {line.replace('`', '')}", file=sys.stderr)


def _demo_banner(cfg, n: int) -> str:
    """What the demo is about to run, in one line."""
    from humanize.attacks import RULE_BASED

    rule = sum(a.name in RULE_BASED for a in cfg.attacks)
    models = [a.base_label() for a in cfg.attacks if a.name not in RULE_BASED]
    what = f"{rule} rule-based" + (f" + {len(models)} model-based ({', '.join(models)})" if models else "")
    scope = "per domain" if cfg.per_domain else "pooled over domains"
    defended = ", ".join(d.name for d in cfg.defenses) or "none (--defense normalize adds one)"
    return (f"humanize-bench demo: {what} attacks x {len(cfg.detectors)} offline detectors on {n} machine + {n} "
            f"human texts of the embedded demo set (half fit the learned detectors; thresholds {scope}; "
            f"defense: {defended})")


def _cmd_tour(args) -> int:
    from humanize.benchmarks.reporting.attack_tour import mark_edits, run_attack_tour

    try:
        tour = run_attack_tour(names=args.attacks, n=args.n, seed=args.seed)
    except (ValueError, TypeError) as err:
        raise SystemExit(f"humanize-bench tour: {one_line(err)}") from None
    with pd.option_context("display.width", 160, "display.max_columns", 20, "display.float_format", "{:.2f}".format):
        print(f"Rule-based attacks on {args.n} machine texts of the embedded demo set (RAID θ defaults)\n")
        print(tour.summary.to_string(index=False))
    print("\nSamples (edits in [brackets]):")
    for name, result in tour.samples.items():
        before, after = mark_edits(result)
        print(f"\n== {name}\n  before: {before}\n  after:  {after}")
    return 0


def _cmd_attack(args) -> int:
    from humanize import attacks

    try:
        load_plugin_args(args)
    except Exception as err:  # noqa: BLE001 - a plug-in that fails to import: one line
        raise SystemExit(f"humanize-bench attack: {one_line(err)}")
    name, params = parse_spec(args.name)
    for item in args.param or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"humanize-bench attack: --param expects KEY=VALUE, got {item!r}")
        params[key] = parse_value(value)
    try:
        attack = attacks.get(name, **{"seed": args.seed, **params})
    except (ValueError, TypeError) as err:
        raise SystemExit(f"humanize-bench attack: {err}")
    text = sys.stdin.read() if args.text == "-" else args.text
    try:
        result = attack.apply(text)
    except expected_errors() as err:  # a model that is not installed, an endpoint that does not answer
        raise SystemExit(f"humanize-bench attack: {one_line(err)}")
    if args.json:
        print(json.dumps({"text": result.text, "edits": [list(e) for e in result.edits], "attack": result.attack,
                          "params": {k: repr(v) for k, v in result.params.items()},
                          "info": _jsonable(result.info)}, ensure_ascii=False))
    else:
        print(result.text)
    return 0


def _jsonable(value):
    """An attack's ``info`` as JSON: numbers, strings, lists and mappings as they are, anything else by repr."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else repr(value)
    try:
        import numpy as np

        if isinstance(value, np.generic):
            return _jsonable(value.item())
    except ImportError:  # pragma: no cover - numpy is a dependency
        pass
    return repr(value)


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


def build_parser() -> argparse.ArgumentParser:
    from humanize import __version__
    from humanize.cli._outputs import force_argument

    parser = argparse.ArgumentParser(prog="humanize-bench", description=__doc__)
    parser.add_argument("--version", action="version", version=f"humanize-bench {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("demo", help="rule-based and two small-budget model-based attacks vs offline detectors on "
                                    "the embedded demo set, with a summary, report and plots (offline, CPU)")
    p.add_argument("--n", type=int_at_least(2), default=40,
                   help="texts sampled per label: N machine and N human; about half of each are test texts (the "
                        "rest fit the learned detectors); default 40 (20 human test texts resolve TPR at 5%% FPR "
                        "pooled over domains; 1%% needs --n 200); below about 20 a warning says no interval holds")
    p.add_argument("--per-domain", action="store_true",
                   help="calibrate thresholds per domain (RAID's protocol) instead of pooled over the two "
                        "domains; 5%% FPR then needs about --n 100")
    p.add_argument("--rule-based-only", action="store_true",
                   help="only the rule-based attacks (no model-based attack: faster, no attack model to load)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=DEFAULT_OUT, help=f"output folder (default {DEFAULT_OUT})")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument("--defense", action="append", metavar="NAME[:K=V,...]",
                   help="also score every text through this test-time defense, e.g. normalize (repeatable); "
                        "the report adds the figures with the defense next to those without")
    executor_arguments(p)
    p.set_defaults(func=_cmd_demo)

    p = sub.add_parser("run", help="run a benchmark from a config file (TOML/YAML) and/or flags")
    p.add_argument("--config", help="TOML or YAML run configuration")
    p.add_argument("--dataset", help="dataset name (see `humanize-bench list datasets`)")
    p.add_argument("--filter", action="append", metavar="KEY=VALUE", help="dataset filter, e.g. domain=xsum")
    p.add_argument("--attack", action="append", metavar="NAME[:K=V,...]", help="attack (repeatable)")
    p.add_argument("--rates", type=float, nargs="+", metavar="θ",
                   help="θ values: a sweep for every attack (not pipelines: their steps carry their own θ)")
    p.add_argument("--detector", action="append", metavar="NAME[:K=V,...]", help="detector (repeatable)")
    p.add_argument("--n", type=int, help="texts sampled per label: N machine and N human, about half of each held out "
                                         "as test texts (the rest fit the learned detectors)")
    p.add_argument("--seed", type=int)
    p.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: CUDA when present)")
    p.add_argument("--batch-size", dest="batch_size", type=int)
    p.add_argument("--db", help=f"results database (default {DEFAULT_OUT}/results.sqlite)")
    p.add_argument("--no-quality", action="store_true", help="skip the quality meters")
    p.add_argument("--protocol", choices=["humanize", "raid"],
                   help="the evaluation's definitions: humanize (default: exact thresholds, intervals) or raid "
                        "(RAID's own evaluator's, exactly; adds every RAID slice as the raid_slices table)")
    p.add_argument("--attack-human", dest="attack_human", action="store_true",
                   help="attack the human test texts too, as RAID does (RAID's AUROC counts them)")
    p.add_argument("--attacks-as-given", dest="attacks_as_given", action="store_true",
                   help="score the dataset's own attacked rows as they are (RAID's train or extra split with its "
                        "attacks) instead of attacking; takes no --attack")
    p.add_argument("--defense", action="append", metavar="NAME[:K=V,...]",
                   help="test-time defense applied to every scored text, e.g. normalize (repeatable)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    plugin_argument(p)
    executor_arguments(p)
    p.add_argument("--max-retries", dest="max_retries", type=int_at_least(0), metavar="N",
                   help="resubmissions of a batch whose worker died (ray; default 2)")
    p.set_defaults(func=_cmd_run)

    for name, func, helptext in (("report", _cmd_report, "print and export the papers' tables of a stored run"),
                                 ("plot", _cmd_plot, "draw the scatter, triangle, θ sweep, cost and heatmap figures")):
        p = sub.add_parser(name, help=helptext)
        p.add_argument("--db", default=f"{DEFAULT_OUT}/results.sqlite", help="results database")
        p.add_argument("--run", help="run id (default: the latest finished run)")
        force_argument(p)
        p.set_defaults(func=func)
    report_p, plot_p = sub.choices["report"], sub.choices["plot"]
    report_p.add_argument("--out", help="folder to export Markdown/CSV/JSON into")
    report_p.add_argument("--format", nargs="+", default=["md", "csv", "json", "tex"],
                          choices=["md", "csv", "json", "tex"],
                          help="md: one report.md; csv, json, tex (LaTeX with booktabs rules): one file per table")
    report_p.add_argument("--fpr", type=open_fraction, nargs="+", metavar="FPR",
                          help="FPR(s) of the accuracy and attack success tables (default: every FPR of the run)")
    plot_p.add_argument("--out", default=f"{DEFAULT_OUT}/plots", help="folder for the figures")
    plot_p.add_argument("--format", nargs="+", default=["png", "svg", "pdf"], choices=["png", "svg", "pdf"],
                        help="figure formats (default: all three; captions go to captions.md)")

    p = sub.add_parser("tour", help="what each rule-based attack does to demo texts, and how fast (no models)")
    p.add_argument("--n", type=int_at_least(1), default=200, help="machine texts to attack (max 900; default 200)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--attacks", nargs="+", metavar="NAME", help="attack names (default: every rule-based attack)")
    p.set_defaults(func=_cmd_tour)

    p = sub.add_parser("attack", help="attack one text (an argument, or - for standard input) and print the result")
    p.add_argument("name", help="attack name, optionally with parameters: homoglyph:rate=0.5")
    p.add_argument("text", help="the text, or - to read standard input")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--param", action="append", metavar="KEY=VALUE", help="attack parameter (repeatable)")
    p.add_argument("--json", action="store_true", help="print the text with its exact edits as JSON")
    plugin_argument(p)
    p.set_defaults(func=_cmd_attack)

    p = sub.add_parser("list", help="list the registered attacks, detectors, datasets, defenses or quality meters")
    p.add_argument("what", choices=["attacks", "detectors", "datasets", "defenses", "meters"])
    p.add_argument("--origins", action="store_true",
                   help="say where each comes from for the built-in ones too (an entry point's package, a plug-in "
                        "file or a run-time registration is always said)")
    plugin_argument(p)
    p.set_defaults(func=_cmd_list)
    for module in command_modules():
        module.add_parser(sub)
    return parser


def command_modules() -> list:
    """The commands that live in modules of their own (``humanize/cli/<name>.py`` with an
    ``add_parser(subparsers)`` function): adding a command is one new file."""
    import importlib
    import pkgutil

    import humanize.cli as package

    found = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if info.name.startswith("_") or info.name == "main":
            continue
        module = importlib.import_module(f"humanize.cli.{info.name}")
        if callable(getattr(module, "add_parser", None)):
            found.append(module)
    return found


#: the exit status of a run stopped by Ctrl-C (128 + SIGINT, what a shell reports)
INTERRUPTED = 130


#: the exit status of a run whose output pipe closed (128 + SIGPIPE, what a shell reports for ``cmd | head``)
CLOSED_PIPE = 141
#: where an internal error (a bug) asks to be reported
REPORT_BUGS = "please report it with the traceback above (and `humanize-bench --version`) to the project's issue tracker"


def _quiet_closed_pipe() -> int:
    """The reader of standard output went away (``humanize-bench report | head``): stop quietly, and
    point standard output at /dev/null so Python's own flush at exit says nothing either."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no real file descriptor (a captured stream)
        pass
    return CLOSED_PIPE


def main(argv: list[str] | None = None) -> int:
    """Run one command behind the CLI's one error boundary; the exit status: 0 success, 2 a user or
    input error (a bad flag, an unknown component, a missing or damaged database, a bad config, a
    plug-in that cannot be used, a detector that failed on every text, a full disk: one line on
    stderr, secrets hidden, control characters escaped), 1 an internal error (a bug: its traceback
    and where to report it), 130 Ctrl-C (one line; what was computed is stored), 141 standard
    output closed by its reader (nothing printed)."""
    try:
        args = build_parser().parse_args(argv)  # a usage error: argparse's message and status 2
    except BrokenPipeError:
        return _quiet_closed_pipe()
    command = f"humanize-bench {args.command}"
    try:
        try:
            status = args.func(args)
            sys.stdout.flush()  # a closed pipe is found here, inside the boundary, not at exit
            return status
        except SystemExit as exit_:
            if isinstance(exit_.code, str):  # a command's one-line refusal
                message = one_line(exit_.code)
                print(message if message.startswith("humanize-bench") else f"{command}: {message}", file=sys.stderr)
                return 2
            raise
        except KeyboardInterrupt:
            print(f"{command}: interrupted; what was computed is stored (rerun the same command to resume)",
                  file=sys.stderr)
            return INTERRUPTED
        except BrokenPipeError:
            return _quiet_closed_pipe()
        except expected_errors() as err:
            print(f"{command}: {one_line(err)}", file=sys.stderr)
            return 2
        except Exception as err:  # noqa: BLE001 - the boundary: a bug, said as one, with its traceback
            import traceback

            from humanize._secrets import scrub_secrets

            sys.stderr.write(scrub_secrets("".join(traceback.format_exception(err))))
            print(f"{command}: internal error ({type(err).__name__}): this is a bug in humanize-bench, not in "
                  f"your input; {REPORT_BUGS}", file=sys.stderr)
            return 1
    except BrokenPipeError:  # the pipe closed while an error was being said
        return _quiet_closed_pipe()


if __name__ == "__main__":
    sys.exit(main())
