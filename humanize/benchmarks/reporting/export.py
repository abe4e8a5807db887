"""Export a stored run as files that pandas, DuckDB or Spark read directly (issue #13).

Every result table of the run (``metrics``, ``scores``, ``cost``, ``detector_cost``, ``quality`` and,
when present, tables added later such as ``reliance`` or ``failures``) plus
``documents``: one row per scored document with its original, the attacked text,
the attack's exact edits over the original and one ``score_<detector>`` column
per detector (``score_<detector>__<defense>`` for a test-time defense's scores;
:func:`humanize.benchmarks.reporting.documents.run_documents`).

Format ``raid``: RAID's ``predictions.json`` per detector (``predictions.json`` for a run with one
detector, else ``predictions-<label>.json``, the label made a file name by :func:`._files.file_stem`):
every undefended score of a row that carries
a RAID id (the clean rows, and the dataset's own attacked rows of ``attacks = "as-given"``); rows this
library's attacks made have no RAID id and are left out (:func:`export_raid_predictions`).

Formats: ``parquet`` (written by pyarrow; ``edits`` is a list of
``{start, end, replacement}`` structs), ``jsonl`` (one JSON object per line, the
same edits as a list of objects, NaN as null) and ``csv`` (``edits`` as JSON
text). Nothing beyond pandas and pyarrow is needed: DuckDB reads the files,
but writing them does not use it.
"""
from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Optional, Sequence

import pandas as pd

from ._files import atomic_write, file_stem

from .selection import CLEAN

__all__ = ["EXPORT_FORMATS", "FORMATS", "DOCUMENTS", "export_raid_predictions", "export_run", "run_export_tables", "write_table"]

FORMATS = ("parquet", "csv", "jsonl")  # the formats of a table
#: what ``export`` writes: a table format, or RAID's predictions (:func:`export_raid_predictions`)
EXPORT_FORMATS = (*FORMATS, "raid")
DOCUMENTS = "documents"
_SUFFIX = {"parquet": ".parquet", "csv": ".csv", "jsonl": ".jsonl"}


def _check_format(format) -> str:
    if not isinstance(format, str):
        raise TypeError(f"format must be a str, one of {list(FORMATS)}; got {type(format).__name__}")
    if format not in FORMATS:
        raise ValueError(f"unknown export format {format!r}; choose from {list(FORMATS)}")
    return format


def _edit_records(edits) -> list[dict]:
    """``[[start, end, replacement], ...]`` as ``[{"start", "end", "replacement"}, ...]``."""
    return [{"start": int(s), "end": int(e), "replacement": str(r)} for s, e, r in (edits or [])]


def _documents(store, run_id: str, scores: Optional[pd.DataFrame]) -> pd.DataFrame:
    """The run's documents with their edits as records and one score column per detector."""
    from humanize.exceptions import DatasetChanged

    from ..data import DatasetUnavailable
    from .documents import run_documents

    try:
        docs = run_documents(store, run_id)
    except (DatasetUnavailable, DatasetChanged, FileNotFoundError) as err:  # the run's texts are re-sampled from its dataset
        raise type(err)(f"{err} (the documents table re-reads the run's dataset; leave 'documents' out of "
                        f"tables to export the rest)") from err
    docs["edits"] = [_edit_records(e) for e in docs["edits"]]
    if scores is not None and not scores.empty:
        column = "score_" + scores["detector"].astype(str)
        if "defense" in scores.columns:  # a test-time defense's scores: score_<detector>__<defense>
            defended = scores["defense"].astype(str) != CLEAN
            column = column.where(~defended, column + "__" + scores["defense"].astype(str))
        keyed = scores.assign(_column=column)
        if keyed.duplicated(["attack", "id", "label", "_column"]).any():
            raise ValueError("the run's scores table has several scores per (attack, id, label, detector)")
        wide = keyed.pivot(index=["attack", "id", "label"], columns="_column", values="score")
        wide = wide[list(dict.fromkeys(column))]  # the scores table's order
        wide.columns.name = None
        docs = docs.merge(wide.reset_index(), on=["attack", "id", "label"], how="left", validate="one_to_one")
    return docs


def run_export_tables(store, run_id: Optional[str] = None, tables: Optional[Sequence[str]] = None
                      ) -> tuple[str, dict[str, pd.DataFrame]]:
    """``(run_id, {name: frame})``: the tables :func:`export_run` writes, from an open ResultsStore."""
    from humanize.benchmarks.runner.manifest import run_config

    run_id, _ = run_config(store, run_id)
    stored = store.run_tables(run_id)
    available = [*stored, DOCUMENTS]
    if tables is None:
        wanted = available
    else:
        if isinstance(tables, str) or not all(isinstance(t, str) for t in tables):
            raise TypeError(f"tables must be a list of table names, got {tables!r}")
        unknown = [t for t in tables if t not in available]
        if unknown:
            raise ValueError(f"run {run_id} has no table(s) {unknown}; it has {available}")
        wanted = list(dict.fromkeys(tables))
    out = {name: stored[name] for name in wanted if name != DOCUMENTS}
    if DOCUMENTS in wanted:
        out[DOCUMENTS] = _documents(store, run_id, stored.get("scores"))
    return run_id, out


def _json_cell(value):
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _plain(frame: pd.DataFrame, format: str) -> pd.DataFrame:
    """Columns every writer takes: lists/dicts stay nested (Parquet, JSONL) or become JSON text (CSV);
    a column mixing strings with other scalars becomes text."""
    frame = frame.reset_index(drop=True).copy()
    for col in frame.columns:
        values = frame[col]
        if values.dtype != object:
            continue
        nested = values.map(lambda v: isinstance(v, (list, dict, tuple))).any()
        if nested:
            if format == "csv":
                frame[col] = values.map(lambda v: json.dumps(v, ensure_ascii=False) if v is not None else None)
            continue
        kinds = {type(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))}
        if len(kinds) > 1:
            frame[col] = values.map(lambda v: None if _json_cell(v) is None else str(v))
    return frame


def write_table(frame: pd.DataFrame, path: str | os.PathLike, format: str) -> Path:
    """Write one table to ``path`` in ``format``, atomically (a new temporary file renamed into place, so a
    crash leaves no half file); a symbolic link at ``path`` is refused, never written through."""
    format = _check_format(format)
    frame = _plain(frame, format)

    def write(tmp: Path) -> None:
        if format == "parquet":
            frame.to_parquet(tmp, engine="pyarrow", index=False)
        elif format == "csv":
            frame.to_csv(tmp, index=False)
        else:
            frame.to_json(tmp, orient="records", lines=True, force_ascii=False)
    return atomic_write(path, write)


def export_run(db: str | os.PathLike, out_dir: str | os.PathLike, run_id: Optional[str] = None,
               format: str = "parquet", tables: Optional[Sequence[str]] = None) -> list[Path]:
    """Write every table of a finished run in ``db`` (the latest by default) to ``out_dir/<table>.<ext>``.

    ``format``: ``"parquet"``, ``"csv"`` or ``"jsonl"`` (or ``"raid"``: RAID's predictions, the scores
    table's rows with RAID ids, :func:`export_raid_predictions`); ``tables``: a subset of
    the run's table names plus ``"documents"`` (default: all). Returns the paths
    written. The store is opened read-only.
    """
    from ..runner.store import ResultsStore

    format = format if format == "raid" else _check_format(format)
    if not isinstance(db, (str, os.PathLike)) or not str(db):
        raise TypeError(f"db must be a path to a results database, got {db!r}")
    if not isinstance(out_dir, (str, os.PathLike)) or not str(out_dir):
        raise TypeError(f"out_dir must be a folder path, got {out_dir!r}")
    if not Path(db).is_file():
        raise FileNotFoundError(f"no results database at {str(db)!r}")
    if format == "raid":
        with ResultsStore(db, readonly=True) as store:
            _, frames = run_export_tables(store, run_id, ["scores"])
        return export_raid_predictions(frames["scores"], out_dir)
    with ResultsStore(db, readonly=True) as store:
        _, frames = run_export_tables(store, run_id, tables)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return [write_table(frame, out / f"{name}{_SUFFIX[format]}", format) for name, frame in frames.items()]


def raid_rows(scores: pd.DataFrame) -> pd.DataFrame:
    """The undefended score rows that carry a RAID id: clean rows, and attacked rows with an id of their own
    (the dataset's, ``attacks = "as-given"``); an attacked row this library made shares its source's id."""
    rows = scores[scores["defense"] == CLEAN] if "defense" in scores.columns else scores
    own_id = rows["attack"] == CLEAN
    if "adv_source_id" in rows.columns:
        own_id |= rows["id"].astype(str) != rows["adv_source_id"].astype(str)
    return rows[own_id]


def export_raid_predictions(scores: pd.DataFrame, out_dir: str | os.PathLike) -> list[Path]:
    """RAID's ``predictions.json`` per detector from a run's scores table (:func:`raid_rows`)."""
    from ..runner.raid_submission import write_predictions

    rows = raid_rows(scores)
    if rows.empty:
        raise ValueError("the run has no scored row with a RAID id to write as RAID predictions")
    detectors = list(dict.fromkeys(rows["detector"].astype(str)))
    out = Path(out_dir)
    paths = []
    for det in detectors:
        mine = rows[rows["detector"].astype(str) == det].dropna(subset=["score"])
        name = "predictions.json" if len(detectors) == 1 else f"{file_stem(det, 'predictions-')}.json"
        paths.append(write_predictions(zip(mine["id"], mine["score"]), out / name))
    return paths
