"""export_run: every table of a stored run, and its documents with edits and scores, read back by pandas."""
import json
import sys

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from humanize.benchmarks.runner.config import AttackSpec, DefenseSpec, DetectorSpec, RunConfig
from humanize.benchmarks.reporting.documents import run_documents
from humanize.benchmarks.reporting.export import FORMATS, export_run
from humanize.benchmarks.runner import run
from humanize.benchmarks.runner.store import ResultsStore

RELIANCE = pd.DataFrame({"detector": ["tfidf_lr", "surface_probe"], "ars": [0.25, np.nan], "n": [8, 8]})


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    db = tmp_path_factory.mktemp("export") / "r.sqlite"
    cfg = RunConfig(n=8, seed=3, db=str(db), quality=True, quality_params={"meters": ["rouge_l", "edit_rate"]},
                    attacks=[AttackSpec("homoglyph"), AttackSpec("whitespace", rates=[0.2, 0.8])],
                    detectors=[DetectorSpec("tfidf_lr"), DetectorSpec("surface_probe")],
                    defenses=[DefenseSpec("normalize")])
    result = run(cfg, progress=False)
    with ResultsStore(db) as store:
        store.add_run_table(result.run_id, "reliance", RELIANCE)
    with ResultsStore(db, readonly=True) as store:
        tables = store.run_tables(result.run_id)
        docs = run_documents(store, result.run_id)
    return db, result.run_id, tables, docs


def _read(path, format):
    if format == "parquet":
        return pd.read_parquet(path)
    if format == "csv":
        return pd.read_csv(path)
    return pd.read_json(path, lines=True, dtype=False)


def _same(got: pd.DataFrame, want: pd.DataFrame):
    """Equal up to dtypes, with the CSV/JSON reading of empty strings and missing values as NaN."""
    def norm(frame):
        frame = frame.reset_index(drop=True).astype(object)
        return frame.where(frame.notna() & (frame != ""), np.nan)

    assert list(got.columns) == list(want.columns)
    pd.testing.assert_frame_equal(norm(got), norm(want), check_dtype=False)


def _records(edits):
    return [{"start": s, "end": e, "replacement": r} for s, e, r in edits]


def _apply(original, edits):
    for e in sorted(edits, key=lambda e: e["start"], reverse=True):
        original = original[: e["start"]] + e["replacement"] + original[e["end"]:]
    return original


@pytest.mark.parametrize("format", FORMATS)
def test_every_table_round_trips(stored, tmp_path, format):
    db, run_id, tables, docs = stored
    paths = export_run(db, tmp_path, run_id=run_id, format=format)
    names = {p.name.split(".")[0]: p for p in paths}
    assert set(names) == {"metrics", "scores", "cost", "detector_cost", "quality", "reliance", "documents"}
    assert all(p.suffix == "." + format and p.parent == tmp_path for p in paths)
    for name, table in tables.items():
        _same(_read(names[name], format), table)
    back = _read(names["documents"], format)
    edits = back.pop("edits")
    if format == "csv":
        edits = edits.map(json.loads)
    edits = [[{k: (int(v) if k != "replacement" else v) for k, v in e.items()} for e in row] for row in edits]
    assert edits == [_records(e) for e in docs["edits"]]
    assert [_apply(o, e) for o, e in zip(back["original"], edits)] == list(back["text"])
    _same(back[list(docs.columns.drop("edits"))], docs.drop(columns="edits"))


def test_documents_carry_every_detectors_score(stored, tmp_path):
    db, run_id, tables, docs = stored
    (path,) = export_run(db, tmp_path, format="parquet", tables=["documents"])
    back = pd.read_parquet(path)
    assert len(back) == len(docs) and set(back["attack"]) == {"none", "homoglyph", "whitespace@0.2",
                                                              "whitespace@0.8"}
    columns = [c for c in back.columns if c.startswith("score_")]
    assert columns == ["score_tfidf_lr", "score_surface_probe", "score_tfidf_lr__normalize",
                       "score_surface_probe__normalize"]
    long = back.melt(id_vars=["attack", "id", "label"], value_vars=columns, var_name="column", value_name="score")
    name = long.pop("column").str.removeprefix("score_").str.split("__")
    long["detector"], long["defense"] = name.str[0], name.str[1].fillna("none")
    scores = tables["scores"][["attack", "id", "label", "detector", "defense", "score"]]
    merged = scores.merge(long, on=["attack", "id", "label", "detector", "defense"], validate="one_to_one")
    assert len(merged) == len(scores) == len(back) * 4
    np.testing.assert_array_equal(merged["score_x"], merged["score_y"])


def test_parquet_needs_pyarrow_only(stored, tmp_path, monkeypatch):
    db, run_id, tables, _ = stored
    for name in ("duckdb", "polars", "fastparquet", "pyspark"):
        monkeypatch.setitem(sys.modules, name, None)  # importing any of them now raises ImportError
    (path,) = export_run(db, tmp_path, format="parquet", tables=["scores"])
    assert "arrow" in pq.read_metadata(path).created_by
    _same(pq.read_table(path).to_pandas(), tables["scores"])


def test_edits_are_a_list_of_structs_in_parquet(stored, tmp_path):
    import pyarrow as pa

    db, *_ = stored
    (path,) = export_run(db, tmp_path, format="parquet", tables=["documents"])
    edits = pq.read_schema(path).field("edits").type
    assert pa.types.is_list(edits) and pa.types.is_struct(edits.value_type)
    assert [edits.value_type.field(i).name for i in range(3)] == ["start", "end", "replacement"]


def test_bad_arguments_name_the_problem(stored, tmp_path):
    db, run_id, *_ = stored
    with pytest.raises(ValueError, match="unknown export format 'xlsx'.*parquet"):
        export_run(db, tmp_path, format="xlsx")
    with pytest.raises(ValueError, match=r"no table\(s\) \['scorez'\].*documents"):
        export_run(db, tmp_path, tables=["scorez"])
    with pytest.raises(TypeError, match="tables must be a list"):
        export_run(db, tmp_path, tables="scores")
    with pytest.raises(FileNotFoundError, match="no results database"):
        export_run(tmp_path / "missing.sqlite", tmp_path)
    with pytest.raises(LookupError, match="no finished run 'nope'"):
        export_run(db, tmp_path, run_id="nope")
    assert not list(tmp_path.iterdir())  # nothing half-written
