"""The results store: one SQLite file holding every attack output, score and measurement.

Everything is keyed by *content*: an attack output by (attack key, input text
hash), a detector score by (detector key, text hash), a quality row by (attack
key, input hash). Each finished batch is written atomically (WAL journal), so a
run killed at any moment keeps all finished work, and a second run of the same
configuration finds everything cached and does no model work. Inside
:meth:`ResultsStore.commit_every` (the runner's writes) the batches are committed
together about once a second rather than one commit each (thousands of small
batches cost a few commits); an exception or Ctrl-C commits what was written, and
a process killed outright loses at most that second of work, which a rerun redoes.

Integrity: the file passes SQLite's ``quick_check`` at open (a garbage, truncated
or foreign file is a :class:`StoreError` naming it), and every row carries a
checksum of its key and values; a row whose checksum fails (or that has none,
written by an older version) is reported in :attr:`ResultsStore.corrupt` with a
:class:`StoreWarning` and treated as missing, so the runner recomputes it.

Read-only use: the file is read through a read-only connection until the first
write, so reporting, plotting or re-running a finished configuration never
writes (``readonly=True`` forbids writing altogether; on a folder that cannot be
written the file is opened ``immutable``). On close a writer folds the WAL
journal back into the file, so a finished store is one self-contained file.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Sequence

import pandas as pd

from humanize.exceptions import StoreError
from humanize.text import text_hash

from .store_schema import (TABLES, check_file, columns, connect, disk_full_error, from_sql, is_disk_full, is_locked,
                           locked_error, migrate, normalize_row, row_hash, to_sql)

__all__ = ["ResultsStore", "StoreWarning", "attack_record", "computed_attack_record", "encode_attack_row",
           "encode_edits"]


#: Tables computed from a finished run after it ran (:meth:`ResultsStore.add_run_table`).
ADDED_TABLES = ("reliance",)


class StoreWarning(UserWarning):
    """Stored rows failed their checksum (or have none) and are recomputed, not used."""


def encode_edits(edits: Sequence) -> str:
    """An attack's edits as the store keeps them (JSON text). A worker that encodes its edits
    hands the driver one string per document instead of thousands of small lists."""
    return json.dumps(edits)


def encode_attack_row(attack_key: str, input_hash: str, row: dict) -> tuple:
    """One attack output as the store inserts it: key, values as SQLite binds them, checksum.
    ``row`` as :meth:`ResultsStore.put_attack_outputs` takes it. A worker that encodes its rows
    where the attack ran leaves the driver only the inserts (on a cluster, the driver's time is
    the one that does not shrink with more workers)."""
    values = normalize_row("attack_outputs", (attack_key, input_hash), (
        row["output"], _edits_text(row["edits"]), json.dumps(row.get("info", {}), default=repr),
        *(row.get(c) for c in _ATTACK_COLS[3:]),
    ))
    return (*map(to_sql, values), row_hash("attack_outputs", values))


def attack_record(values: Sequence) -> dict:
    """The one shape of an attack output in the runner, read from the store or just computed: the
    store's columns (``output``; ``edits`` as a list of ``[start, end, replacement]``; ``info`` as a
    dict, as JSON gives it back; the costs in their column types, None when not measured;
    ``machine``) and ``n_edits``. ``values``: the stored values, in column order."""
    rec = dict(zip(_ATTACK_COLS, values))
    rec["edits"], rec["info"] = json.loads(rec["edits"]), json.loads(rec["info"])
    rec["n_edits"] = len(rec["edits"])
    return rec


def computed_attack_record(attack_key: str, input_hash: str, row: dict) -> dict:
    """A row an attack job just computed (:func:`~humanize.benchmarks.runner.jobs.attack_texts`, maybe
    with its ``encoded`` form) as :func:`attack_record`: exactly what reading it back from the store gives."""
    enc = row.get("encoded")
    if not (isinstance(enc, tuple) and len(enc) == len(_ATTACK_COLS) + 3 and enc[0] == attack_key
            and enc[1] == input_hash):
        enc = encode_attack_row(attack_key, input_hash, row)
    return attack_record([from_sql(v) for v in enc[2:-1]])


def _edits_text(edits) -> str:
    if isinstance(edits, str):
        return edits
    if not isinstance(edits, (list, tuple)):
        raise TypeError(f"attack_outputs.edits must be a list of edits or their JSON text, got {type(edits).__name__}")
    return encode_edits(edits)


def _chunks(seq: Sequence, n: int = 500) -> Iterable[Sequence]:
    for i in range(0, len(seq), n):
        yield seq[i : i + n]


_ATTACK_COLS = [name for name, _ in TABLES["attack_outputs"][1]]


class ResultsStore:
    """A SQLite results database (created on first write).

    readonly : never write (``report``/``plot``); the file must exist.
    timeout : seconds to wait for another process's lock before a :class:`StoreError`.
    """

    def __init__(self, path: str | os.PathLike, *, readonly: bool = False, timeout: float = 60.0):
        if not isinstance(path, (str, os.PathLike)) or not str(path):
            raise TypeError(f"results database path must be a non-empty str or path, got {path!r}")
        if not isinstance(readonly, bool):
            raise TypeError(f"readonly must be a bool, got {type(readonly).__name__}")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout >= 0:
            raise ValueError(f"timeout must be a number of seconds >= 0, got {timeout!r}")
        self.path = Path(path)
        self.readonly = readonly
        self.timeout = timeout
        self.corrupt: list[dict] = []  # rows found corrupt or unverified: table, key, hash, reason
        self._writing = False
        self._run_configs: dict[str, str] = {}
        self._pending_run: str | None = None
        self._commit_seconds: float | None = None  # inside commit_every: group the commits
        self._last_commit = time.monotonic()
        self._closed = False
        if readonly or self.path.is_file():
            self._conn = connect(self.path, readonly=True, timeout=timeout)
            self._checked(lambda: check_file(self._conn, self.path))
            self._cols = {t: columns(self._conn, t) for t in TABLES}
        else:
            self._open_writer()

    # -- connections ----------------------------------------------------------------
    def _checked(self, fn):
        try:
            return fn()
        except StoreError:
            self._conn.close()
            raise

    def _open_writer(self) -> None:
        if self.readonly:
            raise StoreError(f"results database {str(self.path)!r} was opened read-only; cannot write to it")
        old = getattr(self, "_conn", None)
        conn = connect(self.path, readonly=False, timeout=self.timeout)
        try:
            if old is None:  # an existing file was checked when it was opened for reading
                check_file(conn, self.path)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            with conn:
                migrate(conn)
        except sqlite3.Error as err:
            conn.close()
            if is_locked(err):
                raise locked_error(self.path, err) from None
            if is_disk_full(err, self.path):
                raise disk_full_error(self.path) from None
            raise StoreError(f"cannot write to the results database {str(self.path)!r}: {err}") from None
        except StoreError:
            conn.close()
            raise
        if old is not None:
            old.close()
        self._conn, self._writing = conn, True
        self._cols = {t: columns(conn, t) for t in TABLES}

    def _writable(self) -> bool:
        return os.access(self.path.parent, os.W_OK) and (not self.path.exists() or os.access(self.path, os.W_OK))

    @contextmanager
    def _guard(self, action: str):
        try:
            yield
        except (sqlite3.DatabaseError, OSError) as err:
            if is_locked(err):
                raise locked_error(self.path, err) from None
            if is_disk_full(err, self.path):
                raise disk_full_error(self.path) from None
            if isinstance(err, OSError):
                raise
            raise StoreError(f"results database {str(self.path)!r}: cannot {action}: {err}") from None

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._writing and self._conn.in_transaction:  # grouped writes not yet committed
            with self._guard("commit"):
                self._conn.commit()
        if self._writing:  # fold the WAL back in, unless another process has the file open
            try:
                self._conn.execute("PRAGMA busy_timeout = 0")
                self._conn.execute("PRAGMA journal_mode=DELETE")
            except sqlite3.Error:
                pass
        self._conn.close()

    def __enter__(self) -> "ResultsStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ResultsStore({str(self.path)!r}{', readonly=True' if self.readonly else ''})"

    # -- checked reads and writes -----------------------------------------------------
    def _read(self, table: str, first: str, seconds: Sequence[str]) -> dict[str, tuple]:
        """Verified rows of ``table`` with key (first, s) for s in ``seconds``: {s: row values}."""
        have = self._cols.get(table)
        if not have:
            return {}
        keys, values = TABLES[table]
        names = [*keys, *(n for n, _ in values), "row_hash"]
        select = ", ".join(n if n in have else "NULL" for n in names)
        out, bad = {}, []
        with self._guard(f"read {table}"):
            for chunk in _chunks(list(dict.fromkeys(seconds))):
                marks = ",".join("?" * len(chunk))
                for *row, stored in self._conn.execute(
                    f"SELECT {select} FROM {table} WHERE {keys[0]} = ? AND {keys[1]} IN ({marks})", [first, *chunk]
                ):
                    row = [from_sql(v) for v in row]
                    if stored is not None and row_hash(table, tuple(row)) == stored:
                        out[row[1]] = tuple(row[2:])
                    else:
                        reason = "no checksum (older store)" if stored is None else "checksum mismatch"
                        bad.append({"table": table, "key": first, "hash": row[1], "reason": reason})
        if bad:
            self.corrupt.extend(bad)
            shown = ", ".join(f"{b['hash']} ({b['reason']})" for b in bad[:3])
            warnings.warn(
                f"{self.path}: {len(bad)} stored {table} row(s) under key {first[:80]!r} failed their integrity "
                f"check and will be recomputed, not used: {shown}{' ...' if len(bad) > 3 else ''}",
                StoreWarning, stacklevel=3,
            )
        return out

    def _write(self, table: str, rows: list[tuple], action: str) -> None:
        """Insert or replace normalised rows (key + values), each with its checksum."""
        if not self._writing:
            self._open_writer()
        self._insert(table, [(*map(to_sql, row), row_hash(table, row)) for row in rows], action)

    def _insert(self, table: str, values: list[tuple], action: str) -> None:
        """Insert or replace rows as bound to SQLite: key, values, checksum."""
        if not self._writing:
            self._open_writer()
        keys, cols = TABLES[table]
        names = [*keys, *(n for n, _ in cols), "row_hash"]
        marks = ",".join("?" * len(names))
        sql = f"INSERT OR REPLACE INTO {table} ({', '.join(names)}) VALUES ({marks})"
        pending = self._pending_run  # a failed write rolls the run's row back with it: flush it again later
        if self._commit_seconds is None:
            try:
                with self._guard(action), self._conn:
                    self._flush_run()
                    self._conn.executemany(sql, values)
            except BaseException:
                self._pending_run = pending
                raise
            return
        with self._guard(action):  # grouped: this batch all or nothing, committed with its neighbours
            if not self._conn.in_transaction:
                self._conn.execute("BEGIN")
            self._conn.execute("SAVEPOINT batch")
            try:
                self._flush_run()
                self._conn.executemany(sql, values)
            except BaseException:
                # a full disk (or any I/O error) may have rolled the whole transaction back already: then
                # there is no savepoint left, and the error to report is the one that rolled it back
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK TO batch")
                    self._conn.execute("RELEASE batch")
                self._pending_run = pending
                raise
            self._conn.execute("RELEASE batch")
            if time.monotonic() - self._last_commit >= self._commit_seconds:
                self._conn.commit()
                self._last_commit = time.monotonic()

    @contextmanager
    def commit_every(self, seconds: float = 1.0):
        """Within this block, group the writes' commits: at most one every ``seconds``, and one
        when the block ends (normally, by an exception or by Ctrl-C). Each batch stays atomic. A
        stage that writes thousands of small batches then pays for a few commits, not thousands;
        a process killed outright loses at most the last ``seconds`` of writes."""
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds >= 0:
            raise ValueError(f"seconds must be a number >= 0, got {seconds!r}")
        outer = self._commit_seconds
        self._commit_seconds = float(seconds) if outer is None else min(outer, float(seconds))
        if outer is None:
            self._last_commit = time.monotonic()
        try:
            yield self
        finally:
            self._commit_seconds = outer
            if outer is None and not self._closed and self._writing and self._conn.in_transaction:
                with self._guard("commit"):
                    self._conn.commit()

    def _upsert_run(self, run_id: str, config: str, status: str, tables: str | None) -> None:
        row = normalize_row("runs", (run_id,), (config, status, tables))
        self._conn.execute(
            "INSERT INTO runs (run_id, config, status, tables, row_hash) VALUES (?,?,?,?,?) ON CONFLICT(run_id) "
            "DO UPDATE SET config = excluded.config, status = excluded.status, tables = excluded.tables, "
            "row_hash = excluded.row_hash",
            (*row, row_hash("runs", row)),
        )

    def _flush_run(self) -> None:
        if self._pending_run is not None:
            run_id, self._pending_run = self._pending_run, None
            self._upsert_run(run_id, self._run_configs[run_id], "running", None)

    # -- attack outputs -----------------------------------------------------------
    def attack_outputs(self, attack_key: str, hashes: Sequence[str]) -> dict[str, dict]:
        """The stored outputs under ``attack_key`` of the inputs ``hashes``: {input hash: :func:`attack_record`}."""
        return {h: attack_record(row) for h, row in self._read("attack_outputs", attack_key, hashes).items()}

    def put_attack_outputs(self, attack_key: str, rows: Sequence[dict]) -> None:
        """Rows: ``input_hash``, ``output``, ``edits`` (a list of ``[start, end, replacement]``, or
        that list already encoded by :func:`encode_edits`), optional ``info``, costs and ``machine``.
        A row may carry ``encoded``, itself from :func:`encode_attack_row` for this key and input
        (encoded where the attack ran): it is inserted as it is."""
        width = len(TABLES["attack_outputs"][1]) + 3
        encoded = []
        for r in rows:
            enc = r.get("encoded")
            if not (isinstance(enc, tuple) and len(enc) == width and enc[0] == attack_key
                    and enc[1] == r["input_hash"]):
                enc = encode_attack_row(attack_key, r["input_hash"], r)
            encoded.append(enc)
        self._insert("attack_outputs", encoded, "store attack outputs")

    # -- scores -------------------------------------------------------------------
    def scores(self, detector_key: str, hashes: Sequence[str]) -> dict[str, float]:
        return {h: float("nan") if row[0] is None else row[0]
                for h, row in self._read("scores", detector_key, hashes).items()}

    def put_scores(self, detector_key: str, pairs: Iterable[tuple[str, float]]) -> None:
        rows = [normalize_row("scores", (detector_key, h), (s,)) for h, s in pairs]
        self._write("scores", rows, "store scores")

    def item_costs(self, key: str, hashes: Sequence[str]) -> dict[str, dict]:
        """``{text hash: {"wall_s", "cpu_s", "warmup_s"}}``: what each stored item (a detector's score, under its
        detector key; an attack's output, under its attack key: its warm-up) cost when it was computed."""
        names = [n for n, _ in TABLES["item_costs"][1]]
        return {h: dict(zip(names, row)) for h, row in self._read("item_costs", key, hashes).items()}

    def put_item_costs(self, key: str, rows: Iterable[tuple[str, dict]]) -> None:
        names = [n for n, _ in TABLES["item_costs"][1]]
        out = [normalize_row("item_costs", (key, h), tuple(r.get(n) for n in names)) for h, r in rows]
        self._write("item_costs", out, "store item costs")

    # -- quality ------------------------------------------------------------------
    def quality(self, attack_key: str, hashes: Sequence[str]) -> dict[str, dict]:
        return {h: json.loads(row[0]) for h, row in self._read("quality", attack_key, hashes).items()}

    def put_quality(self, attack_key: str, rows: Iterable[tuple[str, dict]]) -> None:
        self.put_quality_many({attack_key: rows})

    def put_quality_many(self, rows_by_key: dict[str, Iterable[tuple[str, dict]]]) -> None:
        """Store quality rows of several attacks in one transaction."""
        rows = [normalize_row("quality", (key, h), (json.dumps(m, default=repr),))
                for key, pairs in rows_by_key.items() for h, m in pairs]
        self._write("quality", rows, "store quality rows")

    # -- the inputs a run read ----------------------------------------------------
    def inputs(self, run_id: str) -> dict[str, str]:
        """``{row id: text hash}`` of the dataset texts ``run_id`` read (empty for a run stored before
        they were recorded). A row that fails its checksum is left out and reported in ``corrupt``."""
        if not self._cols.get("inputs"):
            return {}
        out, bad = {}, 0
        with self._guard("read inputs"):
            for run, rid, th, stored in self._conn.execute(
                    "SELECT run_id, id, text_hash, row_hash FROM inputs WHERE run_id = ?", (run_id,)):
                row = (from_sql(run), from_sql(rid), from_sql(th))
                if stored is not None and row_hash("inputs", row) == stored:
                    out[row[1]] = row[2]
                else:
                    bad += 1
                    self.corrupt.append({"table": "inputs", "key": run_id, "hash": row[1], "reason": "checksum mismatch"})
        if bad:
            warnings.warn(f"{self.path}: {bad} recorded input(s) of run {run_id!r} failed their integrity check and are "
                          "not checked against", StoreWarning, stacklevel=2)
        return out

    def put_inputs(self, run_id: str, pairs: Iterable[tuple[str, str]]) -> None:
        """Record ``(row id, text hash)`` of every dataset text ``run_id`` read; rewritten only when
        they differ from what is recorded (a rerun of the same run on an unchanged dataset writes nothing)."""
        pairs = {str(i): str(h) for i, h in pairs}
        if self.inputs(run_id) == pairs:
            return
        with self._guard("record the run's inputs"):
            if not self._writing:
                self._open_writer()
            self._conn.execute("DELETE FROM inputs WHERE run_id = ?", (run_id,))
        self._write("inputs", [normalize_row("inputs", (run_id, i), (h,)) for i, h in pairs.items()],
                    "record the run's inputs")

    # -- runs and result tables ---------------------------------------------------
    def start_run(self, run_id: str, config: dict) -> None:
        """Mark ``run_id`` as running, written with the run's first computed row (a fully
        cached run writes nothing)."""
        from humanize._secrets import redact_params
        from humanize._secrets import scrub_secrets

        # the one secret path: a key in a component's URL or body template is stored as its digest, and
        # any other appearance of a secret this process saw (the command line in the manifest) is scrubbed
        self._run_configs[run_id] = scrub_secrets(json.dumps(redact_params(config), sort_keys=True, default=repr))
        self._pending_run = run_id

    def finish_run(self, run_id: str, tables: dict[str, pd.DataFrame]) -> None:
        """Store the run's result tables, unless the store already holds exactly these. Tables added
        to the run afterwards (:data:`ADDED_TABLES`, e.g. the Artifact Reliance Score) are kept."""
        stored = self._run_row(run_id)
        encoded = {name: df.to_json(orient="split", default_handler=repr) for name, df in tables.items()}
        if stored is not None and stored[2] is not None:
            kept = {k: v for k, v in json.loads(stored[2]).items() if k in ADDED_TABLES and k not in encoded}
            encoded.update(kept)
        payload = json.dumps(encoded)
        if stored is not None and stored[1] == "done" and stored[2] == payload:
            self._pending_run = None  # nothing was computed: the stored run stands as it is
            return
        config = self._run_configs.get(run_id) or (stored[0] if stored else None)
        if config is None:
            raise LookupError(f"run {run_id!r} was never started in {self.path}")
        if not self._writing:
            if not self.readonly and not self._writable():
                # nothing was computed (or it would have been written): a cached run on a read-only disk
                warnings.warn(f"{self.path} is read-only: this run's tables (which differ from the stored ones, "
                              "e.g. in cost_source) are returned but not stored", StoreWarning, stacklevel=2)
                return
            self._open_writer()
        self._pending_run = None
        with self._guard("store the run's tables"), self._conn:
            self._upsert_run(run_id, config, "done", payload)

    def add_run_table(self, run_id: str, name: str, table: pd.DataFrame) -> None:
        """Add (or replace) a table computed from a finished run after it ran, such as the
        Artifact Reliance Score of its detectors; a later rerun of the run keeps it."""
        if name not in ADDED_TABLES:
            raise ValueError(f"table {name!r} cannot be added to a run; allowed: {list(ADDED_TABLES)}")
        if not isinstance(table, pd.DataFrame):
            raise TypeError(f"table must be a pandas DataFrame, got {type(table).__name__}")
        stored = self._run_row(run_id)
        if stored is None or stored[1] != "done" or stored[2] is None:
            raise LookupError(f"no finished run {run_id!r} in {self.path}")
        encoded = json.loads(stored[2])
        encoded[name] = table.to_json(orient="split", default_handler=repr)
        if not self._writing:
            self._open_writer()
        with self._guard(f"add table {name!r} to run {run_id!r}"), self._conn:
            self._upsert_run(run_id, stored[0], "done", json.dumps(encoded))

    def _run_row(self, run_id: str) -> tuple | None:
        """(config, status, tables) of a stored run, verified; None when absent."""
        if not self._cols.get("runs"):
            return None
        has_hash = "row_hash" in self._cols["runs"]
        with self._guard("read runs"):
            row = self._conn.execute(
                f"SELECT run_id, config, status, tables, {'row_hash' if has_hash else 'NULL'} FROM runs "
                "WHERE run_id = ?", (run_id,)
            ).fetchone()
        if row is None:
            return None
        *data, stored = row
        if stored is None:
            warnings.warn(f"{self.path}: run {run_id!r} was stored without a checksum (older store); its tables "
                          "cannot be verified", StoreWarning, stacklevel=3)
        elif row_hash("runs", tuple(data)) != stored:
            raise StoreError(f"results database {str(self.path)!r}: the stored row of run {run_id!r} is corrupt "
                             "(checksum mismatch); rerun its configuration to rebuild it")
        return tuple(data[1:])

    def run_config_data(self, run_id: str) -> dict:
        """The configuration (with its manifest) recorded for ``run_id``, after its row's checksum is
        verified (:class:`StoreError` when it fails): the one way a command reads what a run was."""
        stored = self._run_row(run_id)
        if stored is None:
            raise LookupError(f"no run {run_id!r} in {self.path}")
        try:
            data = json.loads(stored[0])
        except (TypeError, ValueError):
            raise StoreError(f"results database {str(self.path)!r}: run {run_id!r} has an unreadable "
                             "configuration") from None
        return data

    def runs(self) -> pd.DataFrame:
        """Every stored run (``run_id, status, config``), as stored: :meth:`run_config_data` verifies one."""
        if not self._cols.get("runs"):
            return pd.DataFrame(columns=["run_id", "status", "config"])
        with self._guard("read runs"):
            return pd.read_sql_query("SELECT run_id, status, config FROM runs ORDER BY rowid", self._conn)

    def run_tables(self, run_id: str | None = None) -> dict[str, pd.DataFrame]:
        """The result tables of a finished run (the latest one by default)."""
        if run_id is None and self._cols.get("runs"):
            with self._guard("read runs"):
                row = self._conn.execute(
                    "SELECT run_id FROM runs WHERE status = 'done' ORDER BY rowid DESC LIMIT 1").fetchone()
            run_id_found = row[0] if row else None
        else:
            run_id_found = run_id
        stored = self._run_row(run_id_found) if run_id_found is not None else None
        if stored is None or stored[2] is None:
            raise LookupError(f"no finished run {'in ' + str(self.path) if run_id is None else repr(run_id)}")
        from io import StringIO

        try:
            return {name: pd.read_json(StringIO(js), orient="split") for name, js in json.loads(stored[2]).items()}
        except ValueError as err:
            raise StoreError(f"results database {str(self.path)!r}: run {run_id_found!r} has unreadable tables "
                             f"({err})") from None

    def counts(self) -> dict[str, int]:
        with self._guard("count rows"):
            return {t: self._conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] if self._cols.get(t) else 0
                    for t in TABLES}
