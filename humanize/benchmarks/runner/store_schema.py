"""The results store's tables, their per-row checksums and the file checks done at open.

Every row carries ``row_hash``: a BLAKE2b digest of its table name, key and values
(as they read back from SQLite: REAL columns as float, INTEGER as int, NULL for a
missing or NaN number), so a value changed on disk after it was written is noticed
on read and never used.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sqlite3
from pathlib import Path
from urllib.parse import quote
from humanize.exceptions import StoreError


#: table -> (key columns, value columns as (name, SQL type)); ``row_hash`` follows the values.
TABLES: dict[str, tuple[tuple[str, ...], tuple[tuple[str, str], ...]]] = {
    "attack_outputs": (
        ("attack_key", "input_hash"),
        (("output", "TEXT"), ("edits", "TEXT"), ("info", "TEXT"), ("wall_s", "REAL"), ("cpu_s", "REAL"),
         ("peak_rss_mb", "REAL"), ("peak_gpu_mb", "REAL"), ("tokens_in", "INTEGER"), ("tokens_out", "INTEGER"),
         ("queries", "INTEGER"), ("machine", "TEXT")),
    ),
    "scores": (("detector_key", "text_hash"), (("score", "REAL"),)),
    # what a computed item cost beyond what its own table keeps (issue #34), read back on a rerun so the report's
    # costs survive caching: a score's share of its batch's wall and CPU seconds and the detector's warm-up on the
    # batch's first text (key: the detector's), an attack output's warm-up (key: the attack's)
    "item_costs": (("item_key", "text_hash"), (("wall_s", "REAL"), ("cpu_s", "REAL"), ("warmup_s", "REAL"))),
    "quality": (("attack_key", "input_hash"), (("metrics", "TEXT"),)),
    "runs": (("run_id",), (("config", "TEXT"), ("status", "TEXT"), ("tables", "TEXT"))),
    # the content hash of every dataset text a run read (train and test), by row id: what a later
    # command that re-reads the texts from the dataset checks them against
    "inputs": (("run_id", "id"), (("text_hash", "TEXT"),)),
}
#: Columns added after the first release; an older database gains them when first written to.
ADDED_COLUMNS = {"attack_outputs": ("machine", "row_hash"), "scores": ("row_hash",), "quality": ("row_hash",),
                 "runs": ("row_hash",), "inputs": (), "item_costs": ()}
SCHEMA_VERSION = 2


def create_sql(table: str) -> str:
    keys, values = TABLES[table]
    cols = [f"{k} TEXT NOT NULL" for k in keys] + [f"{n} {t}" for n, t in values] + ["row_hash TEXT"]
    return f"CREATE TABLE IF NOT EXISTS {table} ({', '.join(cols)}, PRIMARY KEY ({', '.join(keys)}))"


def _cell(value, sql_type: str):
    """A value as SQLite gives it back: REAL -> float, INTEGER -> int, NaN/None -> None."""
    if value is None:
        return None
    if sql_type == "REAL":
        value = float(value)
        return None if math.isnan(value) else value
    if sql_type == "INTEGER":
        if isinstance(value, float) and math.isnan(value):
            return None
        return int(value)
    return value


_PLAIN_NUMBERS = (int, float)  # the common case, checked by type before the slower ABC check


def normalize_row(table: str, keys: tuple, values: tuple) -> tuple:
    """The row (key + values) with each value in the type it reads back as."""
    for k in keys:
        if not isinstance(k, str):
            raise TypeError(f"{table}: keys must be str, got {k!r} ({type(k).__name__})")
    out = []
    for v, (name, sql_type) in zip(values, TABLES[table][1]):
        if v is None:
            out.append(None)
            continue
        if sql_type == "TEXT":
            if type(v) is not str and not isinstance(v, str):
                raise TypeError(f"{table}.{name} must be a str, got {type(v).__name__}")
            out.append(v)
            continue
        if type(v) not in _PLAIN_NUMBERS and (isinstance(v, (str, bytes, bool)) or not _is_real(v)):
            raise TypeError(f"{table}.{name} must be a number or None, got {v!r} ({type(v).__name__})")
        out.append(_cell(v, sql_type))
    return (*keys, *out)


def _is_real(v) -> bool:
    import numbers

    return isinstance(v, numbers.Real)


def row_hash(table: str, row: tuple) -> str:
    """Checksum of a normalised row: exact for floats (``repr`` round-trips) and any text."""
    payload = json.dumps([table, *row], ensure_ascii=True, separators=(",", ":"))
    return hashlib.blake2b(payload.encode("ascii"), digest_size=16).hexdigest()


def decode_text(raw: bytes) -> str:
    """SQLite text as str; bytes that are not UTF-8 (a damaged file) survive as surrogate
    escapes, so the row's checksum fails instead of the whole query."""
    return raw.decode("utf-8", "surrogateescape")


def to_sql(value):
    """A value as bound to SQLite: a str that UTF-8 cannot encode (a lone surrogate, which
    Python allows) is stored as its ``surrogatepass`` bytes, so any str round-trips."""
    if isinstance(value, str) and not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "surrogatepass")
    return value


def from_sql(value):
    """Inverse of :func:`to_sql` (undecodable bytes become U+FFFD, so the checksum fails)."""
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            return value.decode("utf-8", "replace")
    return value


def connect(path: Path, *, readonly: bool, timeout: float = 60.0) -> sqlite3.Connection:
    """Open the database file; read-only opens never write (``immutable`` when the folder is not writable)."""
    if readonly:
        if not path.is_file():
            raise StoreError(f"no results database at {str(path)!r}")
        uri = f"file:{quote(str(path.resolve()))}?mode=ro"
        if not os.access(path.parent, os.W_OK) or not os.access(path, os.W_OK):
            uri += "&immutable=1"  # no -wal/-shm files can be made there: read the file as it is
        target, kwargs = uri, {"uri": True}
    else:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            if is_disk_full(err, path):
                raise disk_full_error(path) from None
            raise StoreError(f"cannot create the folder of the results database {str(path)!r}: {err}") from None
        if path.is_dir():
            raise StoreError(f"results database {str(path)!r} is a folder, not a file")
        target, kwargs = str(path), {}
    try:
        conn = sqlite3.connect(target, timeout=timeout, **kwargs)
    except sqlite3.Error as err:
        raise StoreError(f"cannot open the results database {str(path)!r}: {err}") from None
    conn.text_factory = decode_text
    return conn


def is_locked(err: sqlite3.Error) -> bool:
    return isinstance(err, sqlite3.OperationalError) and ("locked" in str(err) or "busy" in str(err))


#: a disk with less room than this, at an I/O error while writing, is a full disk
FULL_BELOW_BYTES = 4 << 20


def is_disk_full(err: BaseException, path: "Path | None" = None) -> bool:
    """SQLite's SQLITE_FULL ("database or disk is full"), the OS's ENOSPC, or SQLite's "disk I/O
    error" (SQLITE_IOERR: what a write that ran out of room mid-page or in the WAL reports) while
    the disk holding ``path`` has less than :data:`FULL_BELOW_BYTES` free (#22's promise: a full
    disk says disk full, however SQLite words it)."""
    import errno

    if isinstance(err, OSError):
        return err.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))
    if not isinstance(err, sqlite3.Error):
        return False
    name = getattr(err, "sqlite_errorname", "") or ""
    if name == "SQLITE_FULL" or "database or disk is full" in str(err):
        return True
    if path is not None and (name.startswith("SQLITE_IOERR") or "disk I/O error" in str(err)):
        import shutil

        folder = Path(path).parent
        while not folder.exists() and folder != folder.parent:
            folder = folder.parent
        try:
            return shutil.disk_usage(folder).free < FULL_BELOW_BYTES
        except OSError:
            return False
    return False


def disk_full_error(path: Path) -> StoreError:
    return StoreError(f"disk full: {path} (free some space, or give --db on another disk; what was stored "
                      "before stays, and a rerun resumes)")


def locked_error(path: Path, err: sqlite3.Error) -> StoreError:
    return StoreError(f"results database {str(path)!r} is locked by another process ({err}); wait for it to "
                      "finish or use another database")


def check_file(conn: sqlite3.Connection, path: Path) -> set[str]:
    """``PRAGMA quick_check`` and our tables' presence; returns the table names found."""
    try:
        problems = [r[0] for r in conn.execute("PRAGMA quick_check(5)")]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as err:
        if is_locked(err):
            raise locked_error(path, err) from None
        raise StoreError(f"{str(path)!r} is not a usable results database ({err}); move it away to start afresh") \
            from None
    if problems != ["ok"]:
        raise StoreError(f"results database {str(path)!r} is damaged (SQLite quick_check: {'; '.join(problems)}); "
                         "move it away and rerun, or recover it with the sqlite3 shell's .recover")
    if tables and not tables & set(TABLES):
        raise StoreError(f"{str(path)!r} is an SQLite database but not a humanize-bench results database "
                         f"(its tables: {', '.join(sorted(tables))})")
    return tables


def columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}


def migrate(conn: sqlite3.Connection) -> None:
    """Create missing tables and add the columns an older database lacks (its rows have no
    checksum, so they are never trusted: reads report them and the runner recomputes them)."""
    for table in TABLES:
        conn.execute(create_sql(table))
        have = columns(conn, table)
        for col in ADDED_COLUMNS[table]:
            if col not in have:
                sql_type = dict(TABLES[table][1]).get(col, "TEXT")
                conn.execute(f"ALTER TABLE {table} ADD COLUMN {col} {sql_type}")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
