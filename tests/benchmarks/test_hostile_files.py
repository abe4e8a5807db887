"""A damaged, ambiguous or out-of-schema data file is one error naming the file, the row and the column;
a valid file with odd content loads unchanged (issue #22)."""

from __future__ import annotations

import bz2
import gzip
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from humanize.benchmarks.data import load_file, load_raid
from humanize.exceptions import DataFileError, RunError

ROWS = [("one human text", "human"), ("two machine text", "machine")] * 50


def _csv(rows=ROWS) -> bytes:
    return ("text,label\n" + "".join(f"{t},{lab}\n" for t, lab in rows)).encode()


@pytest.mark.parametrize("name, pack", [("d.csv.gz", gzip.compress), ("d.csv.bz2", bz2.compress),
                                        ("d.jsonl.gz", gzip.compress)])
def test_a_truncated_compressed_file_is_one_error_naming_it(tmp_path, name, pack):
    data = (_csv() if ".csv" in name else
            "".join(json.dumps({"text": t, "label": lab}) + "\n" for t, lab in ROWS).encode())
    blob = pack(data)
    (tmp_path / name).write_bytes(blob[: len(blob) // 2])
    with pytest.raises(DataFileError, match=rf"^{name}: the compressed stream is truncated or damaged") as err:
        load_file(tmp_path / name)
    assert "\n" not in str(err.value) and isinstance(err.value, (RunError, ValueError))


def test_a_repeated_column_name_and_a_ragged_row_are_refused(tmp_path):
    (tmp_path / "dup.csv").write_text("text,label,text\na,human,b\nc,machine,d\n")
    with pytest.raises(DataFileError, match=r"dup.csv: the header names the column 'text' twice"):
        load_file(tmp_path / "dup.csv")
    (tmp_path / "rag.csv").write_text("text,label\na,human\nb,machine,extra\n")
    with pytest.raises(DataFileError, match=r"rag.csv: Expected 2 fields in line 3, saw 3"):
        load_file(tmp_path / "rag.csv")
    (tmp_path / "short.csv").write_text("text,label\na,human\nb\n")
    with pytest.raises(DataFileError, match=r"short.csv: data row 1 has no label"):
        load_file(tmp_path / "short.csv")


def test_a_lone_surrogate_in_json_lines_is_kept_as_the_file_says(tmp_path):
    lines = ['{"text": "a \\ud800 b", "label": "human"}', '{"text": "x\\udfff", "label": "machine"}']
    (tmp_path / "s.jsonl").write_text("\n".join(lines) + "\n")
    rows = load_file(tmp_path / "s.jsonl")
    assert rows["generation"].tolist() == ["a \ud800 b", "x\udfff"]
    assert rows["id"].nunique() == 2


def _raid(**over):
    cols = {"id": ["h", "m"], "model": ["human", "gpt2"], "attack": ["none"] * 2, "domain": ["news"] * 2,
            "generation": ["human text", "machine text"]}
    return pa.table({**cols, **over})


def test_raid_parquet_outside_the_schema_is_refused_with_file_row_and_column(tmp_path):
    pq.write_table(_raid(generation=[1, 2]), tmp_path / "num.parquet")
    with pytest.raises(DataFileError, match=r"num.parquet: the column 'generation' holds int64, not text"):
        load_raid(tmp_path / "num.parquet")
    pq.write_table(_raid(model=["human", None]), tmp_path / "null.parquet")
    with pytest.raises(DataFileError, match=r"null.parquet: data row 1 has no 'model'"):
        load_raid(tmp_path / "null.parquet")
    (tmp_path / "null.csv").write_text("id,model,attack,domain,generation\nh,human,none,news,a\nm,,none,news,b\n")
    with pytest.raises(DataFileError, match=r"null.csv: data row 1 has no 'model'"):
        load_raid(tmp_path / "null.csv")
    folder = tmp_path / "parts"
    folder.mkdir()
    pq.write_table(_raid(), folder / "a.parquet")
    pq.write_table(_raid(domain=pa.array(["news", "news"], pa.large_string())), folder / "b.parquet")
    with pytest.raises(DataFileError, match=r"b.parquet disagrees with a.parquet on the column 'domain'"):
        load_raid(folder)
    (folder / "b.parquet").unlink()
    assert load_raid(folder)["generation"].tolist() == ["human text", "machine text"]
