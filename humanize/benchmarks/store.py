"""The results store: one SQLite file holding every attack output, score and measurement.

Everything is keyed by *content*: an attack output by (attack key, input text
hash), a detector score by (detector key, text hash), a quality row by (attack
key, input hash). A run writes each finished batch in its own transaction (WAL
journal), so a run killed at any moment keeps all finished work, and a second
run of the same configuration finds everything cached and does no model work.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Iterable, Sequence

import pandas as pd

SCHEMA = """
CREATE TABLE IF NOT EXISTS attack_outputs (
    attack_key TEXT NOT NULL, input_hash TEXT NOT NULL,
    output TEXT NOT NULL, edits TEXT NOT NULL, info TEXT NOT NULL,
    wall_s REAL, cpu_s REAL, peak_rss_mb REAL, peak_gpu_mb REAL, tokens_in INTEGER, tokens_out INTEGER,
    queries INTEGER,
    PRIMARY KEY (attack_key, input_hash)
);
CREATE TABLE IF NOT EXISTS scores (
    detector_key TEXT NOT NULL, text_hash TEXT NOT NULL, score REAL,
    PRIMARY KEY (detector_key, text_hash)
);
CREATE TABLE IF NOT EXISTS quality (
    attack_key TEXT NOT NULL, input_hash TEXT NOT NULL, metrics TEXT NOT NULL,
    PRIMARY KEY (attack_key, input_hash)
);
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, config TEXT NOT NULL, status TEXT NOT NULL, tables TEXT
);
"""


def text_hash(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def canonical_key(name: str, params: dict) -> str:
    """A stable key for a configured object: its name and its parameters as sorted JSON."""
    return name + json.dumps(params, sort_keys=True, default=repr, separators=(",", ":"))


def _chunks(seq: Sequence, n: int = 500) -> Iterable[Sequence]:
    for i in range(0, len(seq), n):
        yield seq[i : i + n]


class ResultsStore:
    """A SQLite results database (created on first use)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(str(self.path), timeout=60)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.executescript(SCHEMA)
        self._conn.commit()

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> "ResultsStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ResultsStore({str(self.path)!r})"

    # -- attack outputs -----------------------------------------------------------
    def attack_outputs(self, attack_key: str, hashes: Sequence[str]) -> dict[str, dict]:
        out = {}
        for chunk in _chunks(list(hashes)):
            q = ",".join("?" * len(chunk))
            for row in self._conn.execute(
                f"SELECT input_hash, output, edits, info, wall_s, cpu_s, peak_rss_mb, peak_gpu_mb, tokens_in,"
                f" tokens_out, queries FROM attack_outputs WHERE attack_key = ? AND input_hash IN ({q})",
                [attack_key, *chunk],
            ):
                out[row[0]] = dict(
                    output=row[1], edits=json.loads(row[2]), info=json.loads(row[3]), wall_s=row[4], cpu_s=row[5],
                    peak_rss_mb=row[6], peak_gpu_mb=row[7], tokens_in=row[8], tokens_out=row[9], queries=row[10],
                )
        return out

    def put_attack_outputs(self, attack_key: str, rows: Sequence[dict]) -> None:
        with self._conn:
            self._conn.executemany(
                "INSERT OR REPLACE INTO attack_outputs VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                [
                    (attack_key, r["input_hash"], r["output"], json.dumps(r["edits"]), json.dumps(r.get("info", {}),
                     default=repr), r.get("wall_s"), r.get("cpu_s"), r.get("peak_rss_mb"), r.get("peak_gpu_mb"),
                     r.get("tokens_in"), r.get("tokens_out"), r.get("queries"))
                    for r in rows
                ],
            )

    # -- scores -------------------------------------------------------------------
    def scores(self, detector_key: str, hashes: Sequence[str]) -> dict[str, float]:
        out = {}
        for chunk in _chunks(list(hashes)):
            q = ",".join("?" * len(chunk))
            for h, s in self._conn.execute(
                f"SELECT text_hash, score FROM scores WHERE detector_key = ? AND text_hash IN ({q})",
                [detector_key, *chunk],
            ):
                out[h] = float("nan") if s is None else s
        return out

    def put_scores(self, detector_key: str, pairs: Iterable[tuple[str, float]]) -> None:
        with self._conn:
            self._conn.executemany(
                "INSERT OR REPLACE INTO scores VALUES (?,?,?)",
                [(detector_key, h, None if s != s else float(s)) for h, s in pairs],
            )

    # -- quality ------------------------------------------------------------------
    def quality(self, attack_key: str, hashes: Sequence[str]) -> dict[str, dict]:
        out = {}
        for chunk in _chunks(list(hashes)):
            q = ",".join("?" * len(chunk))
            for h, m in self._conn.execute(
                f"SELECT input_hash, metrics FROM quality WHERE attack_key = ? AND input_hash IN ({q})",
                [attack_key, *chunk],
            ):
                out[h] = json.loads(m)
        return out

    def put_quality(self, attack_key: str, rows: Iterable[tuple[str, dict]]) -> None:
        self.put_quality_many({attack_key: rows})

    def put_quality_many(self, rows_by_key: dict[str, Iterable[tuple[str, dict]]]) -> None:
        """Store quality rows of several attacks in one transaction."""
        with self._conn:
            self._conn.executemany(
                "INSERT OR REPLACE INTO quality VALUES (?,?,?)",
                [(key, h, json.dumps(m, default=repr)) for key, rows in rows_by_key.items() for h, m in rows],
            )

    # -- runs and result tables ---------------------------------------------------
    def start_run(self, run_id: str, config: dict) -> None:
        with self._conn:
            self._conn.execute(
                "INSERT INTO runs (run_id, config, status) VALUES (?,?,?) "
                "ON CONFLICT(run_id) DO UPDATE SET status = excluded.status",
                (run_id, json.dumps(config, sort_keys=True, default=repr), "running"),
            )

    def finish_run(self, run_id: str, tables: dict[str, pd.DataFrame]) -> None:
        payload = {name: df.to_json(orient="split", default_handler=repr) for name, df in tables.items()}
        with self._conn:
            self._conn.execute(
                "UPDATE runs SET status = 'done', tables = ? WHERE run_id = ?", (json.dumps(payload), run_id)
            )

    def runs(self) -> pd.DataFrame:
        return pd.read_sql_query("SELECT run_id, status, config FROM runs ORDER BY rowid", self._conn)

    def run_tables(self, run_id: str | None = None) -> dict[str, pd.DataFrame]:
        """The result tables of a finished run (the latest one by default)."""
        if run_id is None:
            row = self._conn.execute(
                "SELECT run_id, tables FROM runs WHERE status = 'done' ORDER BY rowid DESC LIMIT 1"
            ).fetchone()
        else:
            row = self._conn.execute("SELECT run_id, tables FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        if row is None or row[1] is None:
            raise LookupError(f"no finished run {'in ' + str(self.path) if run_id is None else repr(run_id)}")
        from io import StringIO

        return {name: pd.read_json(StringIO(js), orient="split") for name, js in json.loads(row[1]).items()}

    def counts(self) -> dict[str, int]:
        return {t: self._conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
                for t in ("attack_outputs", "scores", "quality", "runs")}
