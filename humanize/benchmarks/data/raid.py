"""RAID (Dugan et al., 2024): read a split's CSV in chunks, filters pushed into the read.

RAID's CSVs carry ``id, adv_source_id, source_id, model, decoding,
repetition_penalty, attack, domain, title, prompt, generation`` (the raid-bench
repository's ``generation/README.md``); human-written rows have ``model ==
"human"``. The splits are served at ``https://dataset.raid-bench.xyz/<split>.csv``
(``<split>_none.csv`` without adversarial attacks) and on the Hugging Face hub
as the dataset ``liamdugan/raid``. The train split with attacks is 11.8 GB, so
it is never read whole: rows are filtered chunk by chunk and ``n`` samples
uniformly among the rows that pass, in bounded memory.

The same rows may come as Parquet (a ``.parquet``/``.pq`` file or a folder of
them, e.g. a conversion of the CSV for faster scans): read batch by batch with
pyarrow, the filters pushed into the scan (row groups whose statistics rule them
out are skipped), and sampled exactly like the CSV, so the same data and seed give
the same rows whichever file they come from (issue #13).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from humanize.exceptions import DataFileError, DatasetUnavailable

from ._cache import cache_dir, download, hub_file
from .files import DAMAGED, check_header, damaged
from .schema import validate_rows

RAID_URL = "https://dataset.raid-bench.xyz"
RAID_HUB_REPO = "liamdugan/raid"
SPLITS = ("train", "test", "extra")
SOURCES = ("raid", "hub")
#: Approximate sizes (RAID README) for the messages that say what a download costs.
SIZES = {("train", True): "11.8 GB", ("train", False): "802 MB", ("test", True): "1.22 GB",
         ("test", False): "81 MB", ("extra", True): "3.71 GB", ("extra", False): "275 MB"}

#: The values RAID uses (raid-bench generation/README.md), for checking filters.
DOMAINS = ("abstracts", "books", "code", "czech", "german", "news", "poetry", "recipes", "reddit", "reviews", "wiki")
MODELS = ("human", "chatgpt", "gpt4", "gpt3", "gpt2", "llama-chat", "mistral", "mistral-chat", "mpt", "mpt-chat",
          "cohere", "cohere-chat")
DECODINGS = ("greedy", "sampling")
REPETITION_PENALTIES = ("yes", "no")
ATTACKS = ("none", "homoglyph", "number", "article_deletion", "insert_paragraphs", "perplexity_misspelling",
           "upper_lower", "whitespace", "zero_width_space", "synonym", "paraphrase", "alternative_spelling")
ALLOWED = {"domain": DOMAINS, "model": MODELS, "decoding": DECODINGS,
           "repetition_penalty": REPETITION_PENALTIES, "attack": ATTACKS}
TEXT_COLUMNS = ("title", "prompt", "generation")


def raid_filename(split: str = "train", include_adversarial: bool = True) -> str:
    """``train.csv`` / ``train_none.csv`` etc., as served by RAID."""
    if split not in SPLITS:
        raise ValueError(f"unknown RAID split {split!r}; choose from {list(SPLITS)}")
    return f"{split}.csv" if include_adversarial else f"{split}_none.csv"


def download_raid(split: str = "train", include_adversarial: bool = True, *, source: str = "raid",
                  base_url: str = RAID_URL, progress: bool = True) -> Path:
    """Download a RAID split into ``<cache>/raid/`` and return its path.

    ``source="raid"`` fetches ``<base_url>/<file>`` (``base_url`` may be any
    address urllib reads, ``file://`` included); ``source="hub"`` fetches the same
    file from the hub dataset ``liamdugan/raid``.
    """
    fname = raid_filename(split, include_adversarial)
    if source == "raid":
        return download(f"{base_url.rstrip('/')}/{fname}", cache_dir("raid") / fname, progress=progress)
    if source == "hub":
        return hub_file(RAID_HUB_REPO, fname, cache_dir("raid") / "hub")
    raise ValueError(f"unknown RAID source {source!r}; choose from {list(SOURCES)}")


def _values(name: str, value) -> list[str] | None:
    if value is None:
        return None
    try:
        vals = [value] if isinstance(value, str) else list(value)
    except TypeError:
        vals = [value]
    bad = [v for v in vals if not isinstance(v, str)]
    if bad:
        raise TypeError(f"RAID filter {name} takes str values, got {type(bad[0]).__name__}")
    unknown = sorted(set(vals) - set(ALLOWED[name]))
    if unknown:
        raise ValueError(f"unknown RAID {name} value(s) {unknown}; choose from {list(ALLOWED[name])}")
    return vals


def _filter(chunk: pd.DataFrame, filters: dict, include_human: bool) -> pd.DataFrame:
    human = chunk["model"] == "human"
    keep = pd.Series(True, index=chunk.index)

    def isin(col, values):  # a column the file lacks is missing in every row
        return chunk[col].isin(values) if col in chunk.columns else pd.Series(False, index=chunk.index)

    for col in ("domain", "attack"):
        if filters[col] is not None:
            keep &= isin(col, filters[col])
    for col in ("model", "decoding", "repetition_penalty"):  # machine-only properties
        if filters[col] is not None:
            keep &= isin(col, filters[col]) | (human & include_human)
    if not include_human:
        keep &= ~human
    return chunk[keep]


def _sample(kept: pd.DataFrame, n: int) -> pd.DataFrame:
    """At most ``n`` rows per label: those with the smallest random keys."""
    return kept.sort_values("_key", kind="stable").groupby("label", sort=False).head(n)


PARQUET_SUFFIXES = (".parquet", ".pq")
REQUIRED = ("id", "model", "attack", "domain", "generation")


def is_parquet(path: Path) -> bool:
    """A Parquet file (by suffix) or a folder of them."""
    return path.is_dir() or path.suffix.lower() in PARQUET_SUFFIXES


def _resolve_path(path, split, include_adversarial, download_ok, source) -> Path:
    if path is not None:
        if not isinstance(path, (str, Path)):
            raise TypeError(f"path must be a str or Path, got {type(path).__name__}")
        p = Path(path).expanduser()
        if not (p.is_file() or (p.is_dir() and _parquet_files(p))):
            raise FileNotFoundError(f"no RAID CSV or Parquet file (or folder of .parquet files) at {p}")
        return p
    fname = raid_filename(split, include_adversarial)
    cached = cache_dir("raid") / fname
    if cached.is_file():
        return cached
    if source == "hub" and (cache_dir("raid") / "hub" / fname).is_file():
        return cache_dir("raid") / "hub" / fname
    if not download_ok:
        size = SIZES[(split, include_adversarial)]
        raise DatasetUnavailable(
            f"RAID {fname} is not in the cache ({cached}); pass download=True to fetch it ({size}) "
            f"from {RAID_URL} (or source='hub' for {RAID_HUB_REPO}), or path= a local copy"
        )
    return download_raid(split, include_adversarial, source=source)


def _parquet_files(folder: Path) -> list[Path]:
    return sorted(f for f in folder.rglob("*") if f.is_file() and f.suffix.lower() in PARQUET_SUFFIXES)


def _missing_columns(where, columns) -> None:
    missing = [c for c in REQUIRED if c not in columns]
    if missing:
        raise ValueError(f"{where} lacks RAID column(s) {missing} (RAID's test split is unlabelled); "
                         f"it has {list(columns)}")


def _csv_chunks(csv: Path, filters: dict, include_human: bool, chunksize: int):
    done = 0
    try:
        head = pd.read_csv(csv, header=None, nrows=1, dtype=str, keep_default_na=False)
        check_header(csv, [str(v) for v in head.iloc[0].tolist()] if len(head) else [])
        with pd.read_csv(csv, chunksize=chunksize, dtype=str, keep_default_na=False, na_values=[""],
                         index_col=False) as reader:
            for i, chunk in enumerate(reader):
                if i == 0:
                    _missing_columns(csv, chunk.columns)
                yield chunk
                done += len(chunk)
    except pd.errors.ParserError as err:
        raise DataFileError(f"{csv.name}: {' '.join(str(err).split()).replace('Error tokenizing data. C error: ', '')}"
                            " (a row with more fields than the header)") from None
    except pd.errors.EmptyDataError:
        raise DataFileError(f"{csv.name} is empty (no header)") from None
    except DAMAGED as err:
        raise damaged(csv, err, done) from None


def _check_parquet_schemas(files: list[Path]):
    """The parts' one schema: each text column a string, and every part agreeing with the first."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schemas = []
    for f in files:
        try:
            schemas.append(pq.read_schema(f))
        except (pa.ArrowException, OSError) as err:
            raise DataFileError(f"{f.name} is not a readable Parquet file: {' '.join(str(err).split())}") from None
    for f, schema in zip(files, schemas):
        for col in ("id", "source_id", "model", "attack", "domain", *TEXT_COLUMNS):
            if col in schema.names:
                kind = schema.field(col).type
                if not (pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_null(kind)
                        or (col not in TEXT_COLUMNS and pa.types.is_dictionary(kind))):
                    raise DataFileError(f"{f.name}: the column {col!r} holds {kind}, not text (RAID's columns "
                                        "are strings)")
    first = schemas[0]
    for f, schema in zip(files[1:], schemas[1:]):
        for col in dict.fromkeys([*first.names, *schema.names]):
            a = first.field(col).type if col in first.names else "no such column"
            b = schema.field(col).type if col in schema.names else "no such column"
            if a != b:
                raise DataFileError(f"{f.name} disagrees with {files[0].name} on the column {col!r} ({b} vs {a}); "
                                    "the parts of a RAID folder must share one schema")
    return first


def _arrow_filter(filters: dict, include_human: bool, schema):
    """The filters of :func:`_filter` as a pyarrow expression (None: keep every row)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    def field(col):
        f = pc.field(col)
        kind = schema.field(col).type
        return f if pa.types.is_string(kind) or pa.types.is_large_string(kind) else f.cast(pa.string())

    def isin(col, values):
        return field(col).isin(values)  # null is never in a list of names, as NaN in pandas' isin

    expr = None

    def both(a, b):
        return b if a is None else a & b

    human = isin("model", ["human"])
    for col in ("domain", "attack"):
        if filters[col] is not None:
            expr = both(expr, isin(col, filters[col]))
    for col in ("model", "decoding", "repetition_penalty"):
        if filters[col] is not None:
            if col not in schema.names:  # missing in every row: only the human rows can pass
                expr = both(expr, human if include_human else pc.scalar(False))
                continue
            expr = both(expr, isin(col, filters[col]) | human if include_human else isin(col, filters[col]))
    if not include_human:
        expr = both(expr, ~human)
    return expr


def _parquet_chunks(path: Path, filters: dict, include_human: bool, chunksize: int):
    """Pandas chunks of the rows that may pass the filters, in file order, strings as in the CSV."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    files = _parquet_files(path) if path.is_dir() else [path]
    _check_parquet_schemas(files)
    try:
        dataset = ds.dataset([str(f) for f in files], format="parquet")
    except (pa.ArrowException, OSError) as err:
        raise DataFileError(f"{path}: cannot read its Parquet: {' '.join(str(err).split())}") from None
    _missing_columns(path, dataset.schema.names)
    expr = _arrow_filter(filters, include_human, dataset.schema)
    for fragment in dataset.get_fragments():  # in the listed (sorted) order
        # one thread per fragment keeps the batches in row order, whatever the machine
        for batch in fragment.to_batches(filter=expr, batch_size=chunksize, use_threads=False):
            if batch.num_rows == 0:
                continue
            cols = {name: (col if pa.types.is_string(col.type) or pa.types.is_large_string(col.type)
                           else col.cast(pa.string())) for name, col in zip(batch.schema.names, batch.columns)}
            chunk = pa.table(cols).to_pandas().astype(object)
            yield chunk.where(chunk.notna() & (chunk != ""), np.nan)  # "" is missing, as the CSV reads it


def _check_cells(src: Path, chunk: pd.DataFrame) -> None:
    """Every row read names its generator (``model``: "human" or a generator's name) and its id."""
    for col in ("model", "id"):
        missing = chunk[col].isna()
        if missing.any():
            row = int(chunk.loc[missing, "_row"].iloc[0])
            raise DataFileError(f"{src.name}: data row {row} has no {col!r} ({int(missing.sum())} such row(s) in "
                                f"this chunk); each RAID row names its generator ('human' for a human text) and id")


def load_raid(path: str | Path | None = None, *, split: str = "train", include_adversarial: bool = True,
              download: bool = False, source: str = "raid", domain=None, model=None, decoding=None,
              repetition_penalty=None, attack=None, include_human: bool = True, n: int | None = None,
              seed: int = 0, chunksize: int = 100_000) -> pd.DataFrame:
    """RAID rows in our schema (RAID's columns + ``label``), filtered while reading.

    ``path``: a local RAID-format CSV, or Parquet file or folder of Parquet files
    (filters pushed into the scan; same rows as the CSV for the same data and
    seed); else the split's CSV from the cache, downloaded first when
    ``download=True``. ``chunksize`` rows are read at a time. Filters take a value or a list of values;
    ``model``, ``decoding`` and ``repetition_penalty`` select machine rows and keep
    the human rows (``model == "human"``) unless ``include_human=False``;
    ``domain`` and ``attack`` apply to all rows. ``n`` keeps at most ``n`` rows per
    label, sampled uniformly with ``seed`` without holding the file in memory.
    """
    if source not in SOURCES:
        raise ValueError(f"unknown RAID source {source!r}; choose from {list(SOURCES)}")
    filters = {k: _values(k, v) for k, v in
               dict(domain=domain, model=model, decoding=decoding, repetition_penalty=repetition_penalty,
                    attack=attack).items()}
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise ValueError(f"n must be a positive int, got {n!r}")
    if isinstance(chunksize, bool) or not isinstance(chunksize, int) or chunksize < 1:
        raise ValueError(f"chunksize must be a positive int, got {chunksize!r}")
    src = _resolve_path(path, split, include_adversarial, download, source)
    chunks = (_parquet_chunks if is_parquet(src) else _csv_chunks)(src, filters, include_human, chunksize)
    rng = np.random.default_rng(seed)
    parts, kept, offset = [], None, 0
    for chunk in chunks:
        chunk["_row"] = np.arange(offset, offset + len(chunk))
        offset += len(chunk)
        _check_cells(src, chunk)
        chunk = _filter(chunk, filters, include_human)
        chunk["label"] = np.where(chunk["model"] == "human", "human", "machine")
        if n is None:
            parts.append(chunk)
            continue
        # one key per passing row, drawn in file order: the same keys however the rows are chunked
        chunk["_key"] = rng.random(len(chunk))
        kept = _sample(chunk if kept is None else pd.concat([kept, chunk]), n)
    if n is not None:
        parts = [kept] if kept is not None else []
    if not parts:
        raise ValueError(f"{src} has no rows")
    df = pd.concat(parts).sort_values("_row").drop(columns=[c for c in ("_row", "_key") if c in parts[0]])
    for col in ("source_id", "decoding", "repetition_penalty", "title", "prompt"):
        if col not in df.columns:
            df[col] = None
    df["generation"] = df["generation"].fillna("")
    df = df.astype(object).where(df.notna(), None)
    return validate_rows(df.reset_index(drop=True))

