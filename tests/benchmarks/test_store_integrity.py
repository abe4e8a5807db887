"""The results store: corrupted rows are detected, reported and recomputed; damaged or foreign
files are clear errors; older stores migrate; reading never writes."""

import os
import shutil
import sqlite3
import struct
import warnings

import pandas as pd
import pytest

from humanize.benchmarks.runner.config import AttackSpec, DetectorSpec, RunConfig
from humanize.benchmarks.runner import run
from humanize.benchmarks.runner.store import ResultsStore, StoreWarning
from humanize.benchmarks.runner.store_schema import SCHEMA_VERSION
from humanize.exceptions import StoreError


def _cfg(db):
    return RunConfig(n=16, seed=3, db=str(db), quality=False,
                     attacks=[AttackSpec("homoglyph"), AttackSpec("upper_lower")],
                     detectors=[DetectorSpec("surface_probe")])


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished run's database (copied by each test) and its result."""
    db = tmp_path_factory.mktemp("store") / "r.sqlite"
    return db, run(_cfg(db), progress=False)


@pytest.fixture
def db(finished, tmp_path):
    path = tmp_path / "r.sqlite"
    shutil.copy(finished[0], path)
    return path


def _flip(path, values, fmt=">d"):
    """Change one byte of each value's on-disk encoding; returns how many were found."""
    data = bytearray(path.read_bytes())
    n = 0
    for v in values:
        i = data.find(struct.pack(fmt, v) if fmt else v)
        if i >= 0:
            data[i + (7 if fmt else 0)] ^= 0x21
            n += 1
    path.write_bytes(bytes(data))
    return n


def test_byte_flipped_scores_are_reported_and_recomputed_never_used(finished, db):
    with sqlite3.connect(db) as conn:
        values = [r[0] for r in conn.execute("SELECT score FROM scores WHERE score IS NOT NULL LIMIT 20")]
    conn.close()
    assert _flip(db, values) == 20
    with pytest.warns(StoreWarning, match=r"20 stored scores row\(s\) .* recomputed, not used"):
        again = run(_cfg(db), progress=False)
    assert again.work["scored"] == 20 and again.work["attacked"] == 0
    assert len(again.corrupt) == 20 and {c["reason"] for c in again.corrupt} == {"checksum mismatch"}
    assert {c["table"] for c in again.corrupt} == {"scores"}
    pd.testing.assert_frame_equal(again.metrics, finished[1].metrics)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the repaired rows pass their check now
        third = run(_cfg(db), progress=False)
    assert third.corrupt == [] and third.work["scored"] == 0


def test_a_changed_attack_output_is_recomputed(finished, db):
    with sqlite3.connect(db) as conn:
        text = conn.execute("SELECT output FROM attack_outputs LIMIT 1").fetchone()[0]
    conn.close()
    assert _flip(db, [text[:40].encode("utf-8")], fmt=None) == 1
    with pytest.warns(StoreWarning, match="attack_outputs"):
        again = run(_cfg(db), progress=False)
    assert again.work["attacked"] == 1 and [c["table"] for c in again.corrupt] == ["attack_outputs"]
    pd.testing.assert_frame_equal(again.metrics, finished[1].metrics)


def test_a_corrupt_run_row_is_an_error_for_the_report(db):
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE runs SET status = 'done '")  # changed behind the store's back
    conn.close()
    with ResultsStore(db, readonly=True) as store:
        with pytest.raises(StoreError, match=r"run .* is corrupt \(checksum mismatch\)"):
            store.run_tables(store.runs()["run_id"].iloc[0])


@pytest.mark.parametrize("content", [b"garbage" * 200, b"", b"SQLite format 3\x00" + b"\x00" * 50])
@pytest.mark.parametrize("readonly", [False, True])
def test_garbage_files_are_clear_errors_naming_the_path(content, readonly, tmp_path):
    path = tmp_path / "junk.sqlite"
    path.write_bytes(content)
    if content == b"":  # an empty file is an empty database: fine to use
        with ResultsStore(path, readonly=readonly) as store:
            assert store.counts() == {"attack_outputs": 0, "scores": 0, "item_costs": 0, "quality": 0, "runs": 0,
                                      "inputs": 0}
        return
    with pytest.raises(StoreError, match=r"junk\.sqlite"):
        ResultsStore(path, readonly=readonly)


@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.9])
def test_a_truncated_database_is_a_clear_error(db, fraction):
    data = db.read_bytes()
    db.write_bytes(data[: int(len(data) * fraction)])
    with pytest.raises(StoreError, match=r"r\.sqlite.*not a usable results database"):
        run(_cfg(db), progress=False)


def test_a_foreign_sqlite_database_is_refused_untouched(tmp_path):
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE customers (name TEXT)")
    conn.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match=r"not a humanize-bench results database \(its tables: customers\)"):
        ResultsStore(path)
    assert path.read_bytes() == before


def test_folders_that_cannot_hold_the_store_are_clear_errors(tmp_path):
    (tmp_path / "afile").write_text("x")
    with pytest.raises(StoreError, match="cannot create the folder"):
        ResultsStore(tmp_path / "afile" / "r.sqlite")
    with pytest.raises(StoreError, match="is a folder"):
        ResultsStore(tmp_path)
    with pytest.raises(StoreError, match="no results database"):
        ResultsStore(tmp_path / "missing.sqlite", readonly=True)
    with ResultsStore(tmp_path / "new" / "deeper" / "r.sqlite") as store:  # a missing folder is made
        assert store.counts()["runs"] == 0


def test_a_locked_store_is_a_clear_error(db):
    holder = sqlite3.connect(db)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreError, match=r"r\.sqlite' is locked by another process"):
            ResultsStore(db, timeout=0.05).put_scores("k", [("h", 0.5)])
    finally:
        holder.rollback()
        holder.close()


def test_machine_column_round_trips_and_rows_hash_as_they_read_back(tmp_path):
    with ResultsStore(tmp_path / "r.sqlite") as store:
        store.put_attack_outputs("a", [dict(input_hash="h1", output="x", edits=[[0, 1, "y"]], wall_s=1,
                                            tokens_in=5.0, machine="Linux x86_64, 2 CPUs"),
                                       dict(input_hash="h2", output="z", edits=[], wall_s=float("nan"))])
        got = store.attack_outputs("a", ["h1", "h2", "h3"])
        assert got["h1"]["machine"] == "Linux x86_64, 2 CPUs" and got["h2"]["machine"] is None
        assert got["h1"]["wall_s"] == 1.0 and got["h1"]["tokens_in"] == 5 and got["h2"]["wall_s"] is None
        assert got["h1"]["edits"] == [[0, 1, "y"]] and set(got) == {"h1", "h2"}
        store.put_scores("d", [("h1", 1), ("h2", float("nan"))])
        scores = store.scores("d", ["h1", "h2"])
        assert scores["h1"] == 1.0 and scores["h2"] != scores["h2"]
        assert store.corrupt == []


def test_any_python_str_round_trips_even_a_lone_surrogate(tmp_path):
    odd = "a \ud800 b \U0001F600 \x00 end"
    with ResultsStore(tmp_path / "r.sqlite") as store:
        store.put_attack_outputs("a", [dict(input_hash="h", output=odd, edits=[[2, 3, "\udfff"]])])
        got = store.attack_outputs("a", ["h"])["h"]
    assert got["output"] == odd and got["edits"] == [[2, 3, "\udfff"]]
    with ResultsStore(tmp_path / "r.sqlite", readonly=True) as store:
        assert store.attack_outputs("a", ["h"])["h"]["output"] == odd and store.corrupt == []


_OLD_SCHEMA = """
CREATE TABLE attack_outputs (attack_key TEXT NOT NULL, input_hash TEXT NOT NULL, output TEXT NOT NULL,
    edits TEXT NOT NULL, info TEXT NOT NULL, wall_s REAL, cpu_s REAL, peak_rss_mb REAL, peak_gpu_mb REAL,
    tokens_in INTEGER, tokens_out INTEGER, queries INTEGER, PRIMARY KEY (attack_key, input_hash));
CREATE TABLE scores (detector_key TEXT NOT NULL, text_hash TEXT NOT NULL, score REAL,
    PRIMARY KEY (detector_key, text_hash));
CREATE TABLE quality (attack_key TEXT NOT NULL, input_hash TEXT NOT NULL, metrics TEXT NOT NULL,
    PRIMARY KEY (attack_key, input_hash));
CREATE TABLE runs (run_id TEXT PRIMARY KEY, config TEXT NOT NULL, status TEXT NOT NULL, tables TEXT);
"""


def test_an_older_store_is_read_and_migrated_its_unverifiable_rows_recomputed(tmp_path):
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as conn:
        conn.executescript(_OLD_SCHEMA)
        conn.execute("INSERT INTO scores VALUES ('d', 'h1', 0.25)")
        conn.execute("INSERT INTO runs VALUES ('r1', '{}', 'done', ?)",
                     ('{"t": "{\\"columns\\":[\\"a\\"],\\"index\\":[0],\\"data\\":[[1]]}"}',))
    conn.close()
    with ResultsStore(path, readonly=True) as store:  # report an old store: readable, with a warning
        with pytest.warns(StoreWarning, match="without a checksum"):
            assert store.run_tables()["t"]["a"].tolist() == [1]
        with pytest.warns(StoreWarning, match=r"no checksum \(older store\)"):
            assert store.scores("d", ["h1"]) == {}
    with ResultsStore(path) as store:
        store.put_scores("d", [("h1", 0.5)])  # the first write migrates
        assert store.scores("d", ["h1"]) == {"h1": 0.5}
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        cols = {r[1] for r in conn.execute("PRAGMA table_info(attack_outputs)")}
    conn.close()
    assert {"machine", "row_hash"} <= cols


def _snapshot(folder):
    return {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in sorted(folder.iterdir())}


def test_report_and_a_fully_cached_run_never_write(finished, db):
    before = _snapshot(db.parent)
    assert list(before) == ["r.sqlite"]  # a finished store is one file (its WAL folded back in)
    with ResultsStore(db, readonly=True) as store:
        tables = store.run_tables()
        with pytest.raises(StoreError, match="opened read-only"):
            store.put_scores("k", [("h", 0.1)])
    pd.testing.assert_frame_equal(tables["metrics"].reset_index(drop=True),
                                  finished[1].metrics.reset_index(drop=True), check_dtype=False)
    run(_cfg(db), progress=False)  # stores its tables once (its cost rows now say "cached")
    before = _snapshot(db.parent)
    again = run(_cfg(db), progress=False)
    assert again.work == {**again.work, "attacked": 0, "scored": 0, "fitted": 0}
    assert _snapshot(db.parent) == before  # same bytes, same mtime, no -wal/-shm files


def _read_only_disk(monkeypatch):
    monkeypatch.setattr(os, "access", lambda p, mode, real=os.access: mode != os.W_OK and real(p, mode))


def test_a_fully_cached_run_works_on_a_read_only_disk(finished, db, monkeypatch):
    _read_only_disk(monkeypatch)
    before = _snapshot(db.parent)
    with pytest.warns(StoreWarning, match="read-only"):
        again = run(_cfg(db), progress=False)
    pd.testing.assert_frame_equal(again.metrics, finished[1].metrics)
    assert _snapshot(db.parent) == before


def test_an_unwritable_folder_opens_the_file_immutable(finished, db, monkeypatch):
    from humanize.benchmarks.runner import store_schema

    seen = []
    real_connect = sqlite3.connect
    _read_only_disk(monkeypatch)
    monkeypatch.setattr(store_schema.sqlite3, "connect",
                        lambda target, **kw: seen.append(target) or real_connect(target, **kw))
    before = _snapshot(db.parent)
    with ResultsStore(db, readonly=True) as store:
        assert store.run_tables()["metrics"].shape == finished[1].metrics.shape
    assert seen and all("mode=ro" in t and "immutable=1" in t for t in seen)
    assert _snapshot(db.parent) == before


def test_values_of_the_wrong_type_are_refused_before_writing(tmp_path):
    with ResultsStore(tmp_path / "r.sqlite") as store:
        with pytest.raises(TypeError, match=r"scores.score must be a number or None, got 'x' \(str\)"):
            store.put_scores("d", [("h", "x")])
        with pytest.raises(TypeError, match=r"attack_outputs.output must be a str, got int"):
            store.put_attack_outputs("a", [dict(input_hash="h", output=5, edits=[])])
        with pytest.raises(TypeError, match=r"keys must be str, got 3"):
            store.put_scores("d", [(3, 0.5)])
        assert store.counts()["scores"] == 0
