"""Figures drawn again only when what they are drawn from changed (issue #38).

Drawing the demo's figures (nine figures, each as PNG, SVG and PDF) was most of a cached rerun's time: the
run itself reads every result from its store in seconds, then matplotlib lays out and renders the same
figures again. :func:`plot_all <humanize.benchmarks.reporting.plots.plot_all>` records, next to the files it
wrote, a digest of everything they depend on (:func:`inputs_digest`: every table's values, the manifest, the
formats, the code of this package and the versions of humanize and matplotlib) and each file's SHA-256; a
later call with the same digest whose files are all still there, unchanged, returns them without drawing.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from ._files import write_text

__all__ = ["inputs_digest", "reusable_files", "record_files", "RECORD", "DRAWS", "NOT_DRAWN"]

#: The record, in the figures' folder: ``{"inputs": digest, "files": {name: sha256}}``.
RECORD = ".drawn-from.json"
#: Columns no figure reads that say how a run got its figures, not what they are: a cost measured in this run or
#: read back from the store (``cost_source``), texts scored now or cached. They differ between a run and its cached
#: rerun, whose figures are the same; the digest leaves them out (``tests/benchmarks/test_figures.py`` checks that
#: no figure module names them).
NOT_DRAWN = {"cost": ("cost_source",), "detector_cost": ("texts_scored", "texts_cached")}
#: Calls that drew their figures in this process, by folder (a reused set is not counted): for tests.
DRAWS: dict[str, int] = {}


def _value_bytes(values) -> bytes:
    """The exact values of one column: a numeric array's bytes, else the ``repr`` of its elements (exact for
    floats, strings and the containers a table holds)."""
    arr = np.asarray(values)
    if arr.dtype.kind in "biufcmM":
        return np.ascontiguousarray(arr).tobytes()
    return repr(list(values)).encode()


def _digest_table(h, name: str, table) -> None:
    h.update(f"\0table {name}\0".encode())
    if not hasattr(table, "columns"):
        h.update(repr(table).encode())
        return
    dropped = [c for c in NOT_DRAWN.get(name, ()) if c in table.columns]
    if dropped:
        table = table.drop(columns=dropped)
    h.update(repr((type(table).__name__, [str(c) for c in table.columns], [str(t) for t in table.dtypes],
                   table.shape)).encode())
    h.update(_value_bytes(table.index.tolist()))
    for i in range(table.shape[1]):
        h.update(b"\0col\0" + _value_bytes(table.iloc[:, i].to_numpy()))


def _code_digest() -> bytes:
    """The source of every module of this package (a changed figure function draws again)."""
    h = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.digest()


def inputs_digest(tables: dict, *parts) -> str:
    """A digest of ``tables`` (name -> DataFrame; values exactly, but for the :data:`NOT_DRAWN` columns), the ``parts`` (formats, manifest: their
    ``repr``), this package's code and the humanize and matplotlib versions."""
    import matplotlib

    import humanize

    h = hashlib.sha256(f"humanize {humanize.__version__} matplotlib {matplotlib.__version__}\0".encode())
    h.update(_code_digest())
    h.update(repr(parts).encode())
    for name in sorted(tables, key=str):
        _digest_table(h, str(name), tables[name])
    return h.hexdigest()


def _file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def reusable_files(out: Path, digest: str) -> list[Path] | None:
    """The files recorded in ``out`` for ``digest`` when every one is there with its recorded content; else
    None (draw them)."""
    try:
        record = json.loads((out / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    files = record.get("files") if isinstance(record, dict) and record.get("inputs") == digest else None
    if not isinstance(files, dict) or not files:
        return None
    paths = []
    for name, sha in files.items():
        path = out / name
        if Path(name).name != name or not path.is_file() or path.is_symlink():
            return None
        try:
            if _file_digest(path) != sha:
                return None
        except OSError:
            return None
        paths.append(path)
    return paths


def record_files(out: Path, digest: str, paths: list[Path]) -> None:
    """Record that ``paths`` (files in ``out``) were drawn from ``digest``."""
    DRAWS[str(out)] = DRAWS.get(str(out), 0) + 1
    files = {p.name: _file_digest(p) for p in paths if Path(p).parent == out}
    write_text(out / RECORD, json.dumps({"inputs": digest, "files": files}, indent=1))
