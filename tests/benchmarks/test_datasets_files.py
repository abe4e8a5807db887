"""A user's CSV / TSV / JSONL / Parquet file read into RAID-schema rows, and the errors it can raise."""

import json

import pandas as pd
import pytest

from humanize.benchmarks.data import COLUMNS, DatasetUnavailable, available_datasets, load_dataset
from humanize.benchmarks.data.files import load_file

TEXTS = ["A plain human sentence.", "Wrapped human\ntext, with a comma.", "", "machine  text — with an em dash",
         "日本語のテキスト", "emoji 😀 text", "  leading space", 'quote "inside" here']
LABELS = ["human", "human", "human", "machine", "machine", "machine", "human", "machine"]


def _frame(**extra) -> pd.DataFrame:
    return pd.DataFrame({"body": TEXTS, "who": LABELS, "topic": ["a", "b"] * 4,
                         "gen": ["x", "x", "x", "gpt", "llama", "gpt", "x", "llama"],
                         "key": [f"k{i}" for i in range(len(TEXTS))], **extra})


def _write(frame: pd.DataFrame, path):
    name = str(path)
    if name.endswith(".parquet"):
        frame.to_parquet(path, index=False)
    elif ".jsonl" in name:
        frame.to_json(path, orient="records", lines=True, force_ascii=False)
    elif ".tsv" in name:
        frame.to_csv(path, sep="\t", index=False)
    else:
        frame.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("name", ["d.csv", "d.tsv", "d.jsonl", "d.parquet", "d.csv.gz", "d.jsonl.gz"])
def test_round_trip_keeps_texts_labels_and_columns(tmp_path, name):
    path = _write(_frame(), tmp_path / name)
    rows = load_file(path, text_column="body", label_column="who", domain_column="topic", model_column="gen",
                     id_column="key", chunksize=3)
    assert list(rows.columns[:len(COLUMNS)]) == COLUMNS
    assert rows["generation"].tolist() == TEXTS  # empty, non-Latin, emoji, newlines and quotes intact
    assert rows["label"].tolist() == LABELS
    assert rows["domain"].tolist() == ["a", "b"] * 4
    assert rows["model"].tolist() == ["human", "human", "human", "gpt", "llama", "gpt", "human", "llama"]
    assert rows["id"].tolist() == [f"k{i}" for i in range(8)] and rows["row"].tolist() == list(range(8))
    assert (rows["attack"] == "none").all()


def test_defaults_domain_is_the_file_stem_and_ids_are_stable(tmp_path):
    path = _write(_frame().rename(columns={"body": "text", "who": "label"}), tmp_path / "mine.data.csv")
    rows = load_file(path)
    assert (rows["domain"] == "mine").all()
    assert set(rows.loc[rows["label"] == "machine", "model"]) == {"machine"}
    assert set(rows.loc[rows["label"] == "human", "model"]) == {"human"}
    assert rows["id"].is_unique and rows["id"].tolist() == load_file(path, chunksize=2)["id"].tolist()
    same = load_dataset("file", path=str(path))
    pd.testing.assert_frame_equal(same, rows)
    assert "file" in available_datasets()


def test_zero_one_labels_in_every_format(tmp_path):
    ints = _frame(y=[int(v == "machine") for v in LABELS])
    for name in ("a.jsonl", "a.parquet", "a.csv"):
        rows = load_file(_write(ints, tmp_path / name), text_column="body", label_column="y")
        assert rows["label"].tolist() == LABELS
    floats = _frame(y=[float(v == "machine") for v in LABELS])  # a 0/1 column written as 0.0/1.0
    rows = load_file(_write(floats, tmp_path / "f.csv"), text_column="body", label_column="y")
    assert rows["label"].tolist() == LABELS
    bools = _frame(y=[v == "machine" for v in LABELS])
    rows = load_file(_write(bools, tmp_path / "b.jsonl"), text_column="body", label_column="y")
    assert rows["label"].tolist() == LABELS


def test_human_label_marks_humans_and_everything_else_is_machine(tmp_path):
    who = ["person" if v == "human" else ("gpt" if i % 2 else "llama") for i, v in enumerate(LABELS)]
    rows = load_file(_write(_frame(who2=who), tmp_path / "h.csv"), text_column="body", label_column="who2",
                     human_label="person")
    assert rows["label"].tolist() == LABELS
    three = _frame(y=[0 if v == "human" else 1 + i % 2 for i, v in enumerate(LABELS)])
    rows = load_file(_write(three, tmp_path / "n.jsonl"), text_column="body", label_column="y", human_label=0)
    assert rows["label"].tolist() == LABELS


def test_file_errors_are_clear(tmp_path):
    with pytest.raises(DatasetUnavailable, match="no such file"):
        load_file(tmp_path / "missing.csv")
    (tmp_path / "d.xlsx").write_text("x")
    with pytest.raises(ValueError, match=r"cannot tell the format of .*d\.xlsx"):
        load_file(tmp_path / "d.xlsx")
    path = _write(_frame(), tmp_path / "d.csv")
    with pytest.raises(ValueError, match=r"no column\(s\) \['text'\]; its columns are \['body'"):
        load_file(path, label_column="who")
    with pytest.raises(ValueError, match=r"no column\(s\) \['nope'\]"):
        load_file(_write(_frame(), tmp_path / "d.parquet"), text_column="body", label_column="who",
                  domain_column="nope")
    bad = _write(_frame(who=["human", "machine", "human", "gpt", *LABELS[4:]]), tmp_path / "bad.csv")
    with pytest.raises(ValueError, match=r"data row 3 has label 'gpt'.*human_label=.*values seen so far"):
        load_file(bad, text_column="body", label_column="who")
    with pytest.raises(ValueError, match=r"no machine rows .*label values found: \['human'\]"):
        load_file(_write(_frame(who=["human"] * 8), tmp_path / "one.csv"), text_column="body", label_column="who")
    with pytest.raises(ValueError, match=r"human_label='nobody' it has no human rows"):
        load_file(path, text_column="body", label_column="who", human_label="nobody")
    with pytest.raises(ValueError, match=r"data row 2 has no label"):
        load_file(_write(_frame(who=["human", "machine", "", *LABELS[3:]]), tmp_path / "e.csv"),
                  text_column="body", label_column="who")
    with pytest.raises(ValueError, match="the id column 'gen' repeats 'x'"):
        load_file(path, text_column="body", label_column="who", id_column="gen")


def test_non_text_cells_and_broken_json_are_clear(tmp_path):
    lines = [{"text": "fine", "label": "human"}, {"text": 42, "label": "machine"}]
    p = tmp_path / "n.jsonl"
    p.write_text("\n".join(json.dumps(x) for x in lines))
    with pytest.raises(ValueError, match=r"data row 1: the text column 'text' holds int 42, not text"):
        load_file(p)
    p.write_text(json.dumps({"text": None, "label": "human"}))
    with pytest.raises(ValueError, match=r"data row 0: the text column 'text' has no value \(a null"):
        load_file(p)
    p.write_text('{"text": "a", "label": "human"}\nnot json at all\n')
    with pytest.raises(ValueError, match="is not JSON Lines"):
        load_file(p)


@pytest.mark.parametrize("kwargs, error, pattern", [
    (dict(path=3), TypeError, "path must be a str or Path"),
    (dict(text_column=""), TypeError, "text_column must be a column name"),
    (dict(domain_column=5), TypeError, "domain_column must be a column name"),
    (dict(chunksize=0), ValueError, "chunksize must be a positive int"),
    (dict(human_label=["a"]), TypeError, "human_label must be a str or a number"),
])
def test_bad_arguments_name_the_parameter(tmp_path, kwargs, error, pattern):
    kwargs.setdefault("path", tmp_path / "x.csv")
    with pytest.raises(error, match=pattern):
        load_file(**kwargs)
