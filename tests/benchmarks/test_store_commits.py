"""ResultsStore.commit_every (grouped commits, each batch atomic) and edits handed to the store
as a list or as their JSON text (encode_edits)."""

import sqlite3

import pytest

from humanize.benchmarks.runner import store as store_module
from humanize.benchmarks.runner.store import ResultsStore, encode_edits
from humanize.exceptions import StoreError


def _committed(path, table="scores"):
    """The rows of ``table`` another process sees (a second connection): committed rows only."""
    conn = sqlite3.connect(path)
    try:
        return sorted(conn.execute(f"SELECT * FROM {table}").fetchall())
    finally:
        conn.close()


def _keys(path):
    return [row[1] for row in _committed(path)]


def test_writes_in_the_block_are_committed_together_at_its_end(tmp_path):
    db = tmp_path / "r.sqlite"
    with ResultsStore(db) as store:
        with store.commit_every(3600):  # no commit by time inside this test
            store.put_scores("d", [("h1", 0.1), ("h2", 0.2)])
            store.put_scores("d", [("h3", 0.3)])
            assert _keys(db) == []  # written, not yet committed: another process sees nothing
            assert store.scores("d", ["h1", "h2", "h3"]) == {"h1": 0.1, "h2": 0.2, "h3": 0.3}  # this one does
        assert _keys(db) == ["h1", "h2", "h3"]
        store.put_scores("d", [("h4", 0.4)])  # outside a block: committed at once
        assert _keys(db) == ["h1", "h2", "h3", "h4"]


def test_zero_seconds_commits_every_write_at_once(tmp_path):
    db = tmp_path / "r.sqlite"
    with ResultsStore(db) as store, store.commit_every(0):
        store.put_scores("d", [("h1", 0.1)])
        assert _keys(db) == ["h1"]
        store.put_attack_outputs("a", [dict(input_hash="h2", output="x", edits=[])])
        assert [row[1] for row in _committed(db, "attack_outputs")] == ["h2"]
        store.put_quality("a", [("h3", {"bleu": 1.0})])
        assert [row[1] for row in _committed(db, "quality")] == ["h3"]


def test_a_commit_happens_once_the_seconds_have_passed(tmp_path, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(store_module.time, "monotonic", lambda: clock[0])
    db = tmp_path / "r.sqlite"
    with ResultsStore(db) as store, store.commit_every(5):
        store.put_scores("d", [("h1", 0.1)])
        clock[0] += 4.9
        store.put_scores("d", [("h2", 0.2)])
        assert _keys(db) == []
        clock[0] += 0.2  # 5.1 s since the block began: this write commits both
        store.put_scores("d", [("h3", 0.3)])
        assert _keys(db) == ["h1", "h2", "h3"]
        clock[0] += 1
        store.put_scores("d", [("h4", 0.4)])
        assert _keys(db) == ["h1", "h2", "h3"]  # the clock restarted at the last commit


@pytest.mark.parametrize("stop", [RuntimeError("stage failed"), KeyboardInterrupt()])
def test_an_error_or_ctrl_c_in_the_block_commits_what_was_written(tmp_path, stop):
    db = tmp_path / "r.sqlite"
    with ResultsStore(db) as store:
        with pytest.raises(type(stop)):
            with store.commit_every(3600):
                store.put_scores("d", [("h1", 0.1)])
                store.put_scores("d", [("h2", 0.2)])
                raise stop
        assert _keys(db) == ["h1", "h2"]
        assert not store._conn.in_transaction


def test_a_batch_refused_before_sql_leaves_the_others_and_writes_nothing(tmp_path):
    db = tmp_path / "r.sqlite"
    with ResultsStore(db) as store:
        with store.commit_every(3600):
            store.put_scores("d", [("h1", 0.1)])
            with pytest.raises(TypeError, match="scores.score must be a number"):
                store.put_scores("d", [("h2", 0.2), ("h3", "not a number")])
            store.put_scores("d", [("h4", 0.4)])
        assert _keys(db) == ["h1", "h4"]


def test_a_batch_whose_sql_fails_is_rolled_back_alone(tmp_path, monkeypatch):
    real = store_module.to_sql
    # a value SQLite cannot bind, for one row: the batch's first row is inserted, its second fails
    monkeypatch.setattr(store_module, "to_sql", lambda v: object() if v == "h-bad" else real(v))
    db = tmp_path / "r.sqlite"
    with ResultsStore(db) as store:
        with store.commit_every(3600):
            store.put_scores("d", [("h1", 0.1), ("h2", 0.2)])
            with pytest.raises((StoreError, sqlite3.Error), match="binding parameter"):
                store.put_scores("d", [("h3", 0.3), ("h-bad", 0.4), ("h5", 0.5)])
            assert store.scores("d", ["h1", "h2", "h3", "h5"]) == {"h1": 0.1, "h2": 0.2}  # h3 rolled back
            assert _keys(db) == []  # the earlier batches are still waiting for the commit
            store.put_scores("d", [("h6", 0.6)])
        assert _keys(db) == ["h1", "h2", "h6"]


def test_nested_blocks_commit_when_the_outer_one_ends_and_the_shorter_interval_wins(tmp_path):
    db = tmp_path / "r.sqlite"
    with ResultsStore(db) as store:
        with store.commit_every(3600):
            with store.commit_every(3600):
                store.put_scores("d", [("h1", 0.1)])
            assert _keys(db) == []  # the inner block's end is not the outer one's
            with store.commit_every(0):
                store.put_scores("d", [("h2", 0.2)])
                assert _keys(db) == ["h1", "h2"]
            store.put_scores("d", [("h3", 0.3)])
            assert _keys(db) == ["h1", "h2"]  # back to the outer block's hour
        assert _keys(db) == ["h1", "h2", "h3"]


@pytest.mark.parametrize("seconds", [-1, -0.5, float("nan"), True, "1", None, [1]])
def test_bad_seconds_are_a_value_error(tmp_path, seconds):
    db = tmp_path / "r.sqlite"
    with ResultsStore(db) as store:
        with pytest.raises(ValueError, match="seconds must be a number >= 0"):
            with store.commit_every(seconds):
                pass
        store.put_scores("d", [("h1", 0.1)])  # the store is not left grouping its commits
        assert _keys(db) == ["h1"]


EDITS = [[0, 1, "а"], [3, 3, "\u200b"], [5, 7, "🙂"], [8, 9, ""], [10, 10, "\"quoted\" \\ \n"]]


def _attack_rows(path):
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT * FROM attack_outputs ORDER BY input_hash").fetchall()
    finally:
        conn.close()


@pytest.mark.parametrize("edits", [EDITS, [tuple(e) for e in EDITS], []])
def test_edits_as_their_json_text_store_the_same_rows_as_the_list(tmp_path, edits):
    rows = [dict(input_hash="h1", output="the text", edits=edits, info={"n": 1}, wall_s=0.5, queries=2),
            dict(input_hash="h2", output="", edits=[list(e) for e in edits][:1])]
    encoded = [dict(r, edits=encode_edits(r["edits"])) for r in rows]
    assert all(isinstance(r["edits"], str) for r in encoded)
    with ResultsStore(tmp_path / "list.sqlite") as a, ResultsStore(tmp_path / "text.sqlite") as b:
        a.put_attack_outputs("k", rows)
        b.put_attack_outputs("k", encoded)
        got = b.attack_outputs("k", ["h1", "h2"])
        assert got == a.attack_outputs("k", ["h1", "h2"])
        assert got["h1"]["edits"] == [list(e) for e in edits]
    same = _attack_rows(tmp_path / "list.sqlite")
    assert same == _attack_rows(tmp_path / "text.sqlite")  # byte for byte, row_hash included
    assert len(same) == 2 and all(row[-1] for row in same)


@pytest.mark.parametrize("edits", [5, None, {"start": 0}, b"[]", 1.5])
def test_edits_that_are_neither_a_list_nor_text_are_a_type_error_naming_edits(tmp_path, edits):
    db = tmp_path / "r.sqlite"
    with ResultsStore(db) as store:
        store.put_attack_outputs("k", [dict(input_hash="h0", output="fine", edits=[])])
        with pytest.raises(TypeError, match=r"attack_outputs\.edits must be a list of edits or their JSON text"):
            store.put_attack_outputs("k", [dict(input_hash="h1", output="x", edits=[]),
                                           dict(input_hash="h2", output="x", edits=edits)])
        assert store.counts()["attack_outputs"] == 1  # nothing of the refused batch


def test_closing_the_store_inside_the_block_commits_and_the_block_ends_cleanly(tmp_path):
    db = tmp_path / "r.sqlite"
    store = ResultsStore(db)
    with store.commit_every(3600):
        store.put_scores("d", [("h1", 0.1)])
        store.close()
    assert _keys(db) == ["h1"]
    store.close()  # a second close is harmless


@pytest.mark.parametrize("grouped", [False, True])
def test_a_failed_write_keeps_the_run_marked_running_for_the_next_write(tmp_path, monkeypatch, grouped):
    real = store_module.to_sql
    monkeypatch.setattr(store_module, "to_sql", lambda v: object() if v == "h-bad" else real(v))
    db = tmp_path / "r.sqlite"
    with ResultsStore(db) as store:
        store.start_run("run1", {"n": 1})
        with store.commit_every(3600 if grouped else 0):
            with pytest.raises((StoreError, sqlite3.Error), match="binding parameter"):
                store.put_scores("d", [("h-bad", 0.4)])
            store.put_scores("d", [("h1", 0.1)])
    assert [(r[0], r[2]) for r in _committed(db, "runs")] == [("run1", "running")]
