"""Score every row of a RAID file with one detector and write RAID's ``predictions.json``.

RAID's test split has 672,000 rows (1.22 GB with its attacked rows; train is 11.8 GB), so the file is
streamed: ``id`` and ``generation`` are read a chunk at a time, and each chunk's texts the store does
not hold yet are scored in length-sorted batches by an executor (this process, or Ray) and written to
the results store as they finish. The store is keyed by the detector's fingerprint and the text's hash
(the same keys ``humanize-bench run`` uses), so a detection killed anywhere continues where it stopped
when rerun, a repeated text is scored once, and a run over the same texts reuses the scores. The
predictions file is written at the end, whole or not at all (a temporary file renamed).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from humanize.exceptions import DataFileError, RunError
from humanize.text import text_hash

from . import jobs
from .stages import batch_keys, run_stage
from .store import ResultsStore
from .raid_submission import PredictionsWriter


@dataclass
class DetectSummary:
    """What :func:`detect_file` did: rows read, distinct texts scored in this call, texts whose score was
    in the store when their chunk was read (scored by an earlier call, or by an earlier chunk of this one),
    documents that failed, and the predictions file (None when some failed: nothing is written then)."""

    rows: int = 0
    scored: int = 0
    cached: int = 0
    failures: list = field(default_factory=list)
    predictions: Path | None = None


def _chunks(path: Path, chunksize: int):
    """``(chunk, done, total)``: (id, generation) chunks of a RAID CSV or Parquet file/folder, in file order,
    with how far the reading got (a CSV's bytes, a Parquet's rows) out of the whole."""
    if path.is_dir() or path.suffix.lower() in (".parquet", ".pq"):
        import pyarrow.dataset as ds

        dataset = ds.dataset(str(path), format="parquet")
        missing = [c for c in ("id", "generation") if c not in dataset.schema.names]
        if missing:
            raise DataFileError(f"{path.name} lacks column(s) {missing}")
        total, done = dataset.count_rows(), 0
        for batch in dataset.to_batches(columns=["id", "generation"], batch_size=chunksize, use_threads=False):
            done += batch.num_rows
            yield batch.to_pandas(), done, total
        return
    total = path.stat().st_size
    with open(path, "rb") as raw:
        try:
            with pd.read_csv(raw, usecols=lambda c: c in ("id", "generation"), dtype=str, keep_default_na=False,
                             chunksize=chunksize, index_col=False) as reader:
                for chunk in reader:
                    missing = [c for c in ("id", "generation") if c not in chunk.columns]
                    if missing:
                        raise DataFileError(f"{path.name} lacks column(s) {missing}; RAID's rows have 'id' and "
                                            "'generation'")
                    yield chunk, raw.tell(), total
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
            raise DataFileError(f"{path.name}: not a readable RAID CSV: {' '.join(str(err).split())[:300]}") from None


def _bar(path: Path, enabled: bool):
    """Progress over the file (a CSV's bytes, a Parquet's rows), moved once a chunk is scored: its rate and
    time left are the scoring's, the model's load included."""
    from tqdm.auto import tqdm

    parquet = path.is_dir() or path.suffix.lower() in (".parquet", ".pq")
    return tqdm(desc="raid detect", unit="row" if parquet else "B", unit_scale=not parquet, disable=not enabled,
                smoothing=0.1)


def detector_store_key(detector) -> str:
    """The store key of a detector's scores (as the runner's, for a detector that is not fit on a run)."""
    return f"{detector.name}/{detector.fingerprint()}"


def detect_file(detector, data: str | os.PathLike, out: str | os.PathLike, *, db: str | os.PathLike,
                executor=None, batch_size: int = 32, chunksize: int = 20_000, progress: bool = True,
                label: str | None = None) -> DetectSummary:
    """Score every row of ``data`` (a RAID CSV or Parquet) with ``detector`` and write ``out`` (RAID's
    predictions, higher = machine). ``db``: the results store (resumable, content-cached); ``executor``:
    an :class:`~humanize.benchmarks.runner.executors.Executor` (default: this process)."""
    from .executors import get_executor

    path = Path(data).expanduser()
    if not path.exists():
        raise DataFileError(f"no RAID data file at {str(path)!r}")
    if getattr(detector, "learnable", False) and not getattr(detector, "fitted_", False):
        raise RunError(f"detector {detector.name!r} learns from data: fit it first (a plug-in may hand a fitted "
                       "one), since `raid detect` scores a split it must not train on")
    own = executor is None
    executor = get_executor("local") if own else executor
    key = detector_store_key(detector)
    job = jobs.detector_job(label or detector.name, detector, None, {})
    summary = DetectSummary()
    writer = PredictionsWriter(out)
    bar = _bar(path, progress)
    try:
        with ResultsStore(db) as store, store.commit_every(1.0):
            for chunk, done, total in _chunks(path, chunksize):
                texts = chunk["generation"].fillna("").astype(str).tolist()
                hashes = [text_hash(t) for t in texts]
                todo = dict(zip(hashes, texts))
                scores = store.scores(key, list(todo))  # scored before, in this call or an earlier one
                summary.cached += len(scores)
                pending = sorted((h for h in todo if h not in scores), key=lambda h: len(todo[h]))
                batches = [[(h, todo[h]) for h in b] for b in batch_keys(pending, batch_size)]
                stage = run_stage(executor, job, batches, progress=False,
                                  put=lambda done: store.put_scores(key, [(h, r["score"]) for h, r in done]))
                scores.update({h: r["score"] for h, r in stage.results.items()})
                summary.scored += len(stage.computed)
                summary.failures += stage.failures
                summary.rows += len(chunk)
                if not summary.failures:  # a chunk's lines, written as it completes: memory bounded by a chunk
                    writer.add(zip(chunk["id"].astype(str), (scores[h] for h in hashes)))
                bar.total = total
                bar.update(done - bar.n)
        if not summary.failures:
            summary.predictions = writer.commit()
    finally:
        bar.close()
        writer.discard()
        if own:
            executor.close()
    return summary

