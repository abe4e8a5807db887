"""Cases of the bad-input matrix for hostile data files (layer ``files``): damaged or ambiguous
files built in the case's scratch folder and read through the public loaders, and the
train/test split of texts that a dataset holds twice.

A damaged file (a truncated gzip/bz2 stream), an ambiguous table (a repeated column name,
a ragged row), a value the schema does not allow (a numeric RAID ``generation``, a null
``model``) or a folder whose Parquet parts disagree must be one clear error naming the file;
a valid file with odd content (a lone surrogate in JSON Lines) must load unchanged.
"""
from __future__ import annotations

import bz2
import gzip
import json
import os

from _matrix_core import Case

HUMAN = ["A plain human sentence about the weather today.", "Another human line, written by a person."]
MACHINE = ["A generated sentence produced by a model.", "Further machine text from the generator here."]


def _csv_bytes() -> bytes:
    lines = ["text,label"] + [f'"{t}",human' for t in HUMAN] + [f'"{t}",machine' for t in MACHINE]
    return ("\n".join(lines * 200) + "\n").encode()


def _jsonl_bytes() -> bytes:
    rows = [{"text": t, "label": "human"} for t in HUMAN] + [{"text": t, "label": "machine"} for t in MACHINE]
    return ("\n".join(json.dumps(r) for r in rows * 200) + "\n").encode()


def _truncated(ctx, name: str, data: bytes, compress) -> str:
    path = ctx.path(name)
    blob = compress(data)
    with open(path, "wb") as fh:
        fh.write(blob[: len(blob) // 2])
    return path


def _write(ctx, name: str, text: str) -> str:
    path = ctx.path(name)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
    return path


def _load_file(path, **kw):
    from humanize.benchmarks.data import load_file

    return load_file(path, **kw)


def _raid_table(**over):
    import pyarrow as pa

    cols = {"id": ["h1", "m1", "h2", "m2"], "model": ["human", "gpt2", "human", "gpt2"],
            "attack": ["none"] * 4, "domain": ["news"] * 4,
            "generation": ["A human text.", "A machine text.", "Second human.", "Second machine."]}
    cols.update(over)
    return pa.table(cols)


def _parquet(ctx, name: str, table) -> str:
    import pyarrow.parquet as pq

    path = ctx.path(name)
    pq.write_table(table, path)
    return path


def _raid_folder(ctx):
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = os.path.dirname(ctx.path("x"))
    pq.write_table(_raid_table(), os.path.join(folder, "part-0.parquet"))
    other = _raid_table(generation=pa.array([1, 2, 3, 4], pa.int64()))
    pq.write_table(other, os.path.join(folder, "part-1.parquet"))
    return folder


def _load_raid(path):
    from humanize.benchmarks.data import load_raid

    return load_raid(path)


def _lone_surrogate_oracle(frame, warns):
    got = frame["generation"].tolist()
    want = ["a \ud800 b", "plain human", "machine one", "machine two"]
    if got != want:
        return f"texts changed on load: {[ascii(t) for t in got]} (file holds {[ascii(t) for t in want]})"
    return None


def _demo_split():
    from humanize.benchmarks.runner import sample_rows
    from humanize.benchmarks.runner.config import config_from_dict

    cfg = config_from_dict({"dataset": {"name": "demo", "n": 1000}, "attacks": ["homoglyph"], "detectors": ["surface_probe"],
                            "quality": False, "run": {"db": "unused.sqlite"}})
    return sample_rows(cfg)


def _split_oracle(rows, warns):
    sides = rows.groupby("text_hash")["split"].nunique()
    both = int((sides > 1).sum())
    if both:
        return f"{both} text(s) (by content hash) are on both sides of the train/test split"
    counts = rows["text_hash"].value_counts()
    dup = int((counts > 1).sum())
    notes = [str(w) for w in warns] + [str(rows.attrs.get("split_note", ""))]
    if dup and not any(str(dup) in n and "duplicate" in n.lower() for n in notes):
        return f"{dup} texts occur more than once but no warning counts them"
    return None


def files_cases(add) -> None:
    def case(name, call, expect="error", names=("file",), oracle=None, must=(), group="plain", timeout=60):
        add(Case("files", name, call, expect, names, oracle=oracle, must=must, group=group, timeout=timeout))

    case("load_file(truncated .csv.gz)",
         lambda c: _load_file(_truncated(c, "cut.csv.gz", _csv_bytes(), gzip.compress)), names=("cut.csv.gz",))
    case("load_file(truncated .jsonl.gz)",
         lambda c: _load_file(_truncated(c, "cut.jsonl.gz", _jsonl_bytes(), gzip.compress)),
         names=("cut.jsonl.gz",))
    case("load_file(truncated .csv.bz2)",
         lambda c: _load_file(_truncated(c, "cut.csv.bz2", _csv_bytes(), bz2.compress)), names=("cut.csv.bz2",))
    case("load_raid(truncated .csv.gz)",
         lambda c: _load_raid(_truncated(c, "raid.csv.gz", b"id,model,attack,domain,generation\n"
                                         + b"h1,human,none,news,a human text\n" * 4000, gzip.compress)),
         names=("raid.csv.gz",))
    case("load_file(CSV with the column 'text' twice)",
         lambda c: _load_file(_write(c, "dup.csv", "text,label,text\nfirst,human,second\nthird,machine,fourth\n")),
         names=("dup.csv",), must=("text",))
    case("load_file(CSV with a ragged row: an extra field)",
         lambda c: _load_file(_write(c, "ragged.csv", "text,label\nhello,human\nworld,machine,extra\nok,human\n")),
         names=("ragged.csv",), must=("row",))
    case("load_file(CSV with a short row: a missing field)",
         lambda c: _load_file(_write(c, "short.csv", "text,label,domain\nhello,human,news\nworld,machine\n"),
                              domain_column="domain"), names=("short.csv",), must=("row",))
    case("load_file(JSONL with an escaped lone surrogate): kept as the file says",
         lambda c: _load_file(_write(c, "sur.jsonl", '{"text": "a \\ud800 b", "label": "human"}\n'
                                     '{"text": "plain human", "label": "human"}\n'
                                     '{"text": "machine one", "label": "machine"}\n'
                                     '{"text": "machine two", "label": "machine"}\n')),
         expect="result", oracle=_lone_surrogate_oracle)
    case("load_raid(Parquet with a numeric generation column)",
         lambda c: _load_raid(_parquet(c, "num.parquet", _raid_table(generation=[1, 2, 3, 4]))),
         names=("num.parquet",), must=("generation",))
    case("load_raid(Parquet with a null model)",
         lambda c: _load_raid(_parquet(c, "nullmodel.parquet", _raid_table(model=["human", None, "human", "gpt2"]))),
         names=("nullmodel.parquet",), must=("model", "row"))
    case("load_raid(folder of Parquet parts whose schemas disagree)",
         lambda c: _load_raid(_raid_folder(c)), names=("part-",), must=("generation",))
    case("load_raid(CSV with a null model)",
         lambda c: _load_raid(_write(c, "nullmodel.csv", "id,model,attack,domain,generation\nh1,human,none,news,a\n"
                                     "m1,,none,news,b\n")), names=("nullmodel.csv",), must=("model", "row"))
    case("sample_rows(demo): no text on both sides of the split, duplicates counted",
         lambda c: _demo_split(), expect="result", oracle=_split_oracle, group="run", timeout=120)
