"""RAID from Parquet: filters pushed into the scan, batches bounded, the same rows as the CSV path."""
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from humanize.benchmarks.data import load_dataset, raid
from humanize.benchmarks.data.raid import load_raid

MODELS = ["human", "gpt2", "mistral", "chatgpt", "llama-chat"]
DOMAINS = ["news", "books", "reddit", "poetry"]
ATTACKS = ["none", "homoglyph", "whitespace"]
TEXTS = ["A plain sentence.", "", "Ünïcödé text — with dashes", "emoji 🎉 here", "   ", "NA", "line one\nline two",
         "Текст на русском", "数字 123"]


def raid_frame(rows: int = 700, seed: int = 7) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    model = rng.choice(MODELS, rows, p=[0.3, 0.2, 0.2, 0.15, 0.15])
    human = model == "human"
    return pd.DataFrame({
        "id": [f"id-{i:05d}" for i in range(rows)],
        "adv_source_id": [f"src-{i // 3:05d}" for i in range(rows)],
        "source_id": [f"src-{i // 3:05d}" for i in range(rows)],
        "model": model,
        "decoding": np.where(human, None, rng.choice(["greedy", "sampling"], rows)),
        "repetition_penalty": np.where(human, None, rng.choice(["yes", "no"], rows)),
        "attack": rng.choice(ATTACKS, rows),
        "domain": rng.choice(DOMAINS, rows),
        "title": rng.choice(["Title", "", "Титул"], rows),
        "prompt": np.where(human, None, rng.choice(["Write.", ""], rows)),
        "generation": [f"{TEXTS[i % len(TEXTS)]} #{i}" if i % 11 else TEXTS[i % len(TEXTS)] for i in range(rows)],
    })


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("raid")
    frame = raid_frame()
    frame.to_csv(root / "train.csv", index=False)
    table = pa.Table.from_pandas(frame, preserve_index=False)
    pq.write_table(table, root / "train.parquet", row_group_size=64)
    folder = root / "parts"
    folder.mkdir()
    for k, start in enumerate(range(0, len(frame), 250)):  # part-0, part-1, part-2: sorted = file order
        pq.write_table(table.slice(start, 250), folder / f"part-{k}.parquet", row_group_size=40)
    return root / "train.csv", root / "train.parquet", folder


CASES = [
    {},
    {"n": 25, "seed": 3},
    {"domain": "news", "n": 10, "seed": 1},
    {"domain": ["books", "reddit"], "model": ["gpt2", "chatgpt"], "n": 30, "seed": 11},
    {"attack": "homoglyph", "decoding": "greedy", "repetition_penalty": "no"},
    {"model": "mistral", "include_human": False, "n": 5, "seed": 2},
    {"include_human": False, "attack": ["none", "whitespace"], "n": 400, "seed": 0},
    {"domain": "poetry", "model": "llama-chat", "decoding": "sampling", "n": 3, "seed": 9},
]


@pytest.mark.parametrize("kw", CASES, ids=[str(i) for i in range(len(CASES))])
def test_parquet_gives_the_csv_rows(files, kw):
    csv, parquet, folder = files
    want = load_raid(csv, chunksize=97, **kw)
    assert len(want) > 0
    for path, chunksize in ((parquet, 31), (parquet, 100_000), (folder, 53)):
        got = load_raid(path, chunksize=chunksize, **kw)
        pd.testing.assert_frame_equal(got, want)


def test_sample_does_not_depend_on_the_chunk_size(files):
    csv, parquet, _ = files
    want = load_raid(csv, n=20, seed=5, chunksize=100_000)
    for chunksize in (5, 64, 1000):
        pd.testing.assert_frame_equal(load_raid(parquet, n=20, seed=5, chunksize=chunksize), want)
    assert not load_raid(parquet, n=20, seed=6).equals(want)  # the seed matters


def test_filters_are_pushed_into_the_scan_and_batches_are_bounded(files, monkeypatch):
    csv, parquet, _ = files
    seen = []
    inner = raid._filter

    def spy(chunk, filters, include_human):
        seen.append(len(chunk))
        return inner(chunk, filters, include_human)

    monkeypatch.setattr(raid, "_filter", spy)
    frame = raid_frame()
    out = load_raid(parquet, domain="news", attack="none", chunksize=16)
    matching = int(((frame["domain"] == "news") & (frame["attack"] == "none")).sum())
    assert len(out) == matching
    assert sum(seen) == matching < len(frame) // 5  # only passing rows leave the scan
    assert max(seen) <= 16
    seen.clear()
    load_raid(csv, domain="news", attack="none", chunksize=16)
    assert sum(seen) == len(frame) and max(seen) <= 16  # the CSV path reads everything, chunk by chunk


def test_machine_filters_keep_human_rows_unless_told(files):
    _, parquet, _ = files
    rows = load_raid(parquet, model="gpt2", decoding="greedy")
    assert set(rows["model"]) == {"human", "gpt2"}
    assert set(rows.loc[rows["model"] == "gpt2", "decoding"]) == {"greedy"}
    assert rows.loc[rows["model"] == "human", "decoding"].isna().all()
    only = load_raid(parquet, model="gpt2", include_human=False)
    assert set(only["label"]) == {"machine"}


def test_missing_values_and_texts_read_as_in_the_csv(files):
    _, parquet, _ = files
    rows = load_raid(parquet)
    assert rows["generation"].map(type).eq(str).all()  # an empty generation is "", never None
    assert (rows["generation"] == "").any() and rows["title"].isna().any()  # "" elsewhere is missing
    assert {"emoji 🎉 here #3", "NA #5"} <= set(rows["generation"])  # "NA" is text, not missing


def test_load_dataset_reaches_parquet(files):
    _, parquet, _ = files
    got = load_dataset("raid", path=str(parquet), domain="books", n=4, seed=2)
    assert len(got) <= 8 and set(got["domain"]) == {"books"}


def test_bad_parquet_inputs_name_the_problem(tmp_path, files):
    with pytest.raises(ValueError, match=r"lacks RAID column\(s\) \['generation'\]"):
        path = tmp_path / "x.parquet"
        pq.write_table(pa.table({"id": ["1"], "model": ["human"], "attack": ["none"], "domain": ["news"]}), path)
        load_raid(path)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match="no RAID CSV or Parquet"):
        load_raid(empty)
    with pytest.raises(ValueError, match="unknown RAID domain value"):
        load_raid(files[1], domain="newz")
    one = tmp_path / "one.parquet"
    pq.write_table(pa.Table.from_pandas(raid_frame(3), preserve_index=False), one)
    with pytest.raises(ValueError, match="has no rows"):
        load_raid(one, domain="books", attack="none", model="gpt2", include_human=False)


def test_dictionary_and_large_string_columns_read_alike(files, tmp_path):
    csv, _, _ = files
    frame = raid_frame()
    table = pa.Table.from_pandas(frame.astype({"model": "category", "domain": "category"}), preserve_index=False)
    table = table.set_column(0, "id", table.column("id").cast(pa.large_string()))
    assert pa.types.is_dictionary(table.schema.field("model").type)
    pq.write_table(table, tmp_path / "typed.parquet", row_group_size=100)
    for kw in ({"domain": "books", "model": ["gpt2", "mistral"], "n": 12, "seed": 4}, {"include_human": False}):
        pd.testing.assert_frame_equal(load_raid(tmp_path / "typed.parquet", chunksize=50, **kw), load_raid(csv, **kw))
