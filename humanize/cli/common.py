"""What the commands of ``humanize-bench`` share: argument types and arguments, component specs, the one-line
error and the terminal's escaping, plug-in loading. Each command module (:mod:`humanize.cli.main` and the
modules it lists) imports these public names; none imports a private name of another command module."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

__all__ = ["DEFAULT_OUT", "detector_spec", "executor_arguments", "expected_errors", "int_at_least",
           "load_plugin_args", "load_plugins_for_run", "one_line", "open_fraction", "parse_spec", "parse_value",
           "plugin_argument", "quiet_model_loading", "terminal_table"]

#: Where the commands write their files by default.
DEFAULT_OUT = "humanize-bench-out"


def parse_value(value: str):
    """A command-line value as JSON where it parses (``0.5``, ``true``, ``[1, 2]``), else the string itself."""
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return value


def parse_spec(text: str) -> tuple[str, dict]:
    """``NAME`` or ``NAME:KEY=VALUE,KEY=VALUE`` (values parsed as JSON when they can be); NAME may be
    an import path ``package.module:Class`` (then parameters follow a second colon)."""
    head, sep, rest = text.partition(":")
    attr, sep2, after = rest.partition(":")
    if sep and attr and "=" not in attr and "," not in attr and all(p.isidentifier() for p in attr.split(".")):
        head, rest = f"{head}:{attr}", after  # an import path; its parameters, if any, after the next colon
    params = {}
    for item in filter(None, rest.split(",")):
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"humanize-bench: expected NAME[:KEY=VALUE,...] (NAME may be package.module:Class), "
                             f"got {text!r}")
        params[key.strip()] = parse_value(value.strip())
    return head.strip(), params


def detector_spec(name: str, params: dict):
    """The DetectorSpec a ``--detector`` argument names. An import path to a plain function
    (``my_scorers:comma_rate``, a ``list[str] -> scores`` callable in a module or a ``--plugin`` file) is the
    function detector of that function, ``function:fn=my_scorers:comma_rate``, labelled by the function's name."""
    from humanize._registry import import_object, is_import_path
    from humanize.benchmarks.runner.config import DetectorSpec

    if is_import_path(name):
        try:
            target = import_object(name, "detector")
        except Exception:  # noqa: BLE001 - any failure is reported by the run's own check, in its words
            target = None
        if callable(target) and not isinstance(target, type):
            label = params.pop("name", None) or getattr(target, "__name__", None) or "function"
            return DetectorSpec("function", {"fn": name, "name": label, **params})
    return DetectorSpec(name, params)


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
    """Our own progress bars say what runs; the libraries' per-load bars only add noise."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # pragma: no cover - transformers is a dependency
        return
    hf_logging.disable_progress_bar()


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
    from humanize._plugins import load_plugins

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
    (:func:`humanize._plugins.load_plugins`). Nothing the database names is imported."""
    from humanize._plugins import load_plugins

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
