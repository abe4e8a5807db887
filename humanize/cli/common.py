"""What the commands of ``humanize-bench`` share: argument types and arguments, ``KEY=VALUE`` arguments, the
one-line error and the terminal's escaping, plug-in loading. A component argument (``--attack``, ``--detector``,
``--defense``, ``attack NAME``) is a spec in the one grammar of configs and composite members
(:func:`humanize._registry.parse_spec`), made by the runner's :func:`~humanize.benchmarks.runner.config.attack_spec`,
:func:`~humanize.benchmarks.runner.config.detector_spec` and :func:`~humanize.benchmarks.runner.config.defense_spec`. Each command module (:mod:`humanize.cli.main` and the
modules it lists) imports these public names; none imports a private name of another command module."""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

__all__ = ["DEFAULT_OUT", "executor_arguments", "expected_errors", "int_at_least", "key_values", "load_plugin_args",
           "load_plugins_for_run", "load_run", "one_line", "open_fraction", "plugin_argument", "print_tables",
           "quiet_model_loading", "stored_run_arguments", "terminal_table", "warn_too_small"]

#: Where the commands write their files by default.
DEFAULT_OUT = "humanize-bench-out"


def key_values(items, flag: str) -> dict:
    """``--filter``/``--param`` style ``KEY=VALUE`` arguments as a dict, each value JSON where it parses (the
    spec grammar's values: :func:`humanize._registry.parse_value`); a ConfigError naming the flag otherwise."""
    from humanize._registry import parse_value
    from humanize.exceptions import ConfigError

    out = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{flag} expects KEY=VALUE, got {item!r}")
        out[key.strip()] = parse_value(value.strip())
    return out


def terminal_table(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with every label and text cell through the terminal's escaping
    (:func:`humanize.benchmarks.reporting._escape.terminal_text`): an escape sequence in a label is
    shown as ``⟨U+001B⟩``, never sent to the terminal."""
    from humanize.benchmarks.reporting._escape import terminal_text

    def clean(value):
        return terminal_text(value) if isinstance(value, str) else value

    def texty(dtype) -> bool:  # object, str, string or categorical: anything but numbers, booleans and times
        return not (pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)
                    or pd.api.types.is_datetime64_any_dtype(dtype))

    def labels(index):
        if isinstance(index, pd.MultiIndex):
            return index.set_levels([lvl.map(clean) if texty(lvl.dtype) else lvl for lvl in index.levels])
        return index.map(clean) if texty(index.dtype) else index

    out = table.copy()
    out.columns = labels(out.columns)
    out.index = labels(out.index)
    for col in range(out.shape[1]):
        if texty(out.iloc[:, col].dtype):
            out.isetitem(col, out.iloc[:, col].map(clean))
    return out


def quiet_model_loading() -> None:
    """Our own progress bars say what runs; the libraries' per-load bars only add noise.

    transformers' switch (``disable_progress_bar``) turns off the Hugging Face hub's bars and its own; its own
    start from the hub's state when transformers is imported. So, transformers not imported yet, the hub's
    switch alone is thrown: the same state once a model loads, without importing transformers (1-5 s) in a
    command that loads none (a cached rerun of the demo, issue #38)."""
    import sys

    if "transformers" in sys.modules:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        return
    try:
        from huggingface_hub.utils import disable_progress_bars
    except ImportError:  # pragma: no cover - a dependency of transformers
        return
    disable_progress_bars()


def one_line(err: BaseException | str) -> str:
    """An error as the one line the CLI prints: whitespace folded, every secret this process saw
    replaced by ``<hidden>``, every control or invisible character shown escaped (a message quotes
    labels and file contents: it never sends an escape sequence to the terminal)."""
    import errno

    from humanize.benchmarks.reporting._escape import terminal_text
    from humanize._secrets import scrub_secrets

    if isinstance(err, OSError) and err.errno == errno.ENOSPC:  # the OS's "[Errno 28] No space left on device"
        return terminal_text(f"disk full: {err.filename}" if err.filename else "disk full")
    text = err if isinstance(err, str) else (str(err) or type(err).__name__)
    return terminal_text(scrub_secrets(" ".join(text.split())))


def expected_errors() -> tuple:
    """Failures a user can cause and fix (every :class:`humanize.exceptions.HumanizeError`: a bad
    config, a damaged/locked/unwritable store, a missing model or dataset file, an endpoint that
    failed) and the operating system's (a missing file, a full disk): one line and exit status 2;
    anything else is a bug and keeps its traceback."""
    from humanize.exceptions import HumanizeError

    return HumanizeError, OSError


def load_plugin_args(args) -> None:
    from humanize.plugins import load_plugins

    load_plugins(getattr(args, "plugin", None) or [])


def int_at_least(minimum: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an int >= {minimum}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected an int >= {minimum}, got {value}")
        return value

    return parse


def open_fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {text!r}") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {text}")
    return value


def plugin_argument(p: argparse.ArgumentParser, *, reads_runs: bool = False) -> None:
    p.add_argument("--plugin", action="append", metavar="FILE.py",
                   help="a Python file defining attacks, detectors or datasets (repeatable); its classes are named "
                        "FILE:Class (e.g. --detector my_detectors:Mine), and it may call attacks.register(...)"
                        + ("; a file the run recorded must still have the digest the run recorded (it is checked "
                           "before the file is imported). A results database never loads a plug-in by itself"
                           if reads_runs else ""))
    if reads_runs:
        p.add_argument("--allow-changed-plugins", dest="allow_changed_plugins", action="store_true",
                       help="import a --plugin file even when its content differs from the one the run recorded "
                            "(figures computed with it may differ from the run's)")


def load_plugins_for_run(args, db: str | None, run_id: str | None) -> list:
    """Import the files the user named with ``--plugin`` for a command that reads run ``run_id`` of
    ``db``: each one the run recorded is checked against its recorded digest before it is imported
    (:func:`humanize.plugins.load_plugins`). Nothing the database names is imported."""
    from humanize.plugins import load_plugins

    paths = getattr(args, "plugin", None) or []
    if not paths:
        return []
    recorded = []
    if db and Path(db).is_file():
        from humanize.benchmarks.runner.manifest import run_manifest
        from humanize.benchmarks.runner.store import ResultsStore

        with ResultsStore(db, readonly=True) as store:
            manifest = run_manifest(store, run_id)[1]
        recorded = (manifest or {}).get("plugins") or []
    return load_plugins(paths, recorded=recorded, allow_changed=bool(getattr(args, "allow_changed_plugins", False)))


def executor_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--executor", choices=["local", "ray"],
                   help="where the work runs: this process (local, the default) or a Ray cluster (ray)")
    p.add_argument("--ray-address", dest="ray_address", metavar="ADDR",
                   help="Ray cluster to join ('auto', 'host:port', 'ray://host:10001'); default: start a local one")


def print_tables(report: dict[str, pd.DataFrame]) -> None:
    """A report's tables on the terminal, every label escaped (:func:`terminal_table`), each table's lines after it."""
    from humanize.benchmarks.reporting._escape import terminal_text
    from humanize.benchmarks.reporting.report import with_time_units

    with pd.option_context("display.width", 200, "display.max_columns", 40, "display.float_format", "{:.3f}".format):
        for name, table in report.items():
            print(f"\n== {terminal_text(name)}")
            print(terminal_table(with_time_units(table)).to_string(index=not isinstance(table.index, pd.RangeIndex)))
            for line in table.attrs.get("lines", ()):  # the summary's explanation and underpowered advice
                print(f"  {terminal_text(line)}")


def warn_too_small(tables: dict, n, command: str) -> None:
    """One line on standard error when the run's test split is too small for any interval."""
    import sys

    from humanize.benchmarks.reporting.summary import too_small

    line = too_small(tables["metrics"], n if isinstance(n, int) else None)
    if line:
        print(f"humanize-bench {command}: warning: {line.replace('`', '')}", file=sys.stderr)


def load_run(db: str, run_id: str | None, *, out: str | None = None, force: bool = False):
    """``(run id, tables, manifest)`` of a stored run, read without writing (the store may sit on a read-only
    disk); with ``out``, that folder is checked first (:func:`humanize.cli._outputs.check_folder`: not another
    run's outputs)."""
    from humanize.benchmarks.runner.manifest import run_manifest
    from humanize.benchmarks.runner.store import ResultsStore
    from humanize.cli._outputs import check_folder
    from humanize.exceptions import StoreError

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
    return found, tables, manifest


def stored_run_arguments(p: argparse.ArgumentParser) -> None:
    """``--db``, ``--run`` and ``--force``: the arguments of a command that writes a stored run's files."""
    from humanize.cli._outputs import force_argument

    p.add_argument("--db", default=f"{DEFAULT_OUT}/results.sqlite", help="results database")
    p.add_argument("--run", help="run id (default: the latest finished run)")
    force_argument(p)
