"""A user's own labelled texts from a CSV, TSV, JSON Lines or Parquet file, as RAID-schema rows.

One row per document: a text column and a label column. Labels are read as
"human"/"machine" (any case), 0/1 (1 = machine), or -- when ``human_label`` is
given -- that value for human and anything else for machine. Optional columns
give each row its domain, generator (``model``) and id; without them the domain
is the file's stem, the generator is "machine" and the id a stable hash of the
row number and text. CSV and JSON Lines are read in chunks of ``chunksize`` rows
and Parquet in record batches of that size (Parquet only the named columns), so a
big file is never held whole next to its rows.

A file that cannot be read as it is raises :class:`~humanize.exceptions.DataFileError` (a
``ValueError``) naming the file, and the row and column where known: a truncated or damaged
compressed stream, a CSV header that names a column twice, a CSV row with more fields than the
header. JSON Lines are parsed with :func:`json.loads`, so a text is kept exactly as the file says,
an escaped lone surrogate (``"\\ud800"``) included (the results store and the text hash keep it too:
:func:`humanize.text.text_hash` hashes it with ``surrogatepass``).
"""

from __future__ import annotations

import json
import lzma
import math
import numbers
import uuid
import zlib
from pathlib import Path

import pandas as pd

from humanize.exceptions import DataFileError, DatasetUnavailable

from .schema import validate_rows

_NAMESPACE = uuid.UUID("3d5f0c2e-7b1a-4e8d-a9c4-1f6e2b8d0a57")
_COMPRESSION = (".gz", ".bz2", ".xz", ".zip", ".zst")
FORMATS = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".json": "jsonl", ".ndjson": "jsonl",
           ".parquet": "parquet", ".pq": "parquet"}
_WORD_LABELS = {"human": "human", "machine": "machine", "0": "human", "1": "machine"}


def file_format(path) -> str:
    """"csv", "tsv", "jsonl" or "parquet" from the file name (a compression suffix is looked through)."""
    suffixes = [s.lower() for s in Path(path).suffixes]
    if suffixes and suffixes[-1] in _COMPRESSION:
        suffixes = suffixes[:-1]
    kind = FORMATS.get(suffixes[-1]) if suffixes else None
    if kind is None or (kind == "parquet" and Path(path).suffix.lower() in _COMPRESSION):
        raise ValueError(f"cannot tell the format of {str(path)!r} from its extension; use one of "
                         f"{sorted(FORMATS)} (CSV/TSV/JSON Lines may end in {', '.join(_COMPRESSION)})")
    return kind


def _check_column(name: str, value, optional: bool) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str) or not value:
        raise TypeError(f"{name} must be a column name (non-empty str){' or None' if optional else ''}, "
                        f"got {value!r}")


#: what a damaged or truncated compressed stream raises while it is read
DAMAGED = (EOFError, zlib.error, lzma.LZMAError, OSError)


def damaged(path: Path, err: BaseException, rows: int) -> DataFileError:
    """The one-line error of a file whose bytes cannot be read past ``rows`` data rows."""
    what = "compressed stream is truncated or damaged" if isinstance(err, (EOFError, zlib.error, lzma.LZMAError)) \
        or path.suffix.lower() in _COMPRESSION else "bytes cannot be read"
    return DataFileError(f"{path.name}: the {what} after {rows} data row(s) ({type(err).__name__}: "
                         f"{' '.join(str(err).split())})")


def check_header(path: Path, names: list) -> None:
    """A header that names a column twice is ambiguous (pandas would read the second as ``name.1``)."""
    seen = set()
    for i, name in enumerate(names):
        if name in seen:
            raise DataFileError(f"{path.name}: the header names the column {name!r} twice (column {i}); "
                                "rename one so that each column has one name")
        seen.add(name)


def _csv(path: Path, sep: str, columns: list[str], chunksize: int):
    done = 0
    try:
        first = pd.read_csv(path, sep=sep, header=None, nrows=1, dtype=str, keep_default_na=False)
        names = [str(v) for v in first.iloc[0].tolist()] if len(first) else []
        check_header(path, names)
        _require(path, columns, names)
        with pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False, chunksize=chunksize,
                         index_col=False) as reader:
            for chunk in reader:  # every column: a row with more fields than the header is an error
                yield chunk[columns]
                done += len(chunk)
    except pd.errors.ParserError as err:
        raise DataFileError(f"{path.name}: {' '.join(str(err).split()).replace('Error tokenizing data. C error: ', '')}"
                            " (a row with more fields than the header: a stray separator or an unquoted text)") \
            from None
    except pd.errors.EmptyDataError:
        raise DataFileError(f"{path.name} is empty (no header)") from None
    except DAMAGED as err:
        raise damaged(path, err, done) from None


def _open_lines(path: Path):
    from pandas.io.common import get_handle  # the compression pandas reads (gz, bz2, xz, zip, zst)

    return get_handle(path, "r", encoding="utf-8", errors="strict", compression="infer")


def _jsonl(path: Path, columns: list[str], chunksize: int):
    rows, done, checked = [], 0, False
    try:
        with _open_lines(path) as handle:
            for line_no, line in enumerate(handle.handle, 1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except ValueError as err:
                    raise DataFileError(f"{path.name} is not JSON Lines (one JSON object per line): line {line_no}: "
                                        f"{' '.join(str(err).split())}") from None
                if not isinstance(obj, dict):
                    raise DataFileError(f"{path.name}: line {line_no} is a JSON {type(obj).__name__}, not an object")
                rows.append(obj)
                if len(rows) == chunksize:
                    if not checked:
                        _require(path, columns, list(dict.fromkeys(k for r in rows for k in r)))
                        checked = True
                    yield pd.DataFrame({c: [r.get(c) for r in rows] for c in columns}, dtype=object)
                    done += len(rows)
                    rows = []
    except (UnicodeDecodeError, *DAMAGED) as err:
        raise damaged(path, err, done + len(rows)) from None
    if rows or not checked:
        _require(path, columns, list(dict.fromkeys(k for r in rows for k in r)))
        yield pd.DataFrame({c: [r.get(c) for r in rows] for c in columns}, dtype=object)


def _chunks(path: Path, kind: str, columns: list[str], chunksize: int):
    """DataFrames of the named columns, ``chunksize`` rows at a time."""
    if kind in ("csv", "tsv"):
        yield from _csv(path, "," if kind == "csv" else "\t", columns, chunksize)
    elif kind == "jsonl":
        yield from _jsonl(path, columns, chunksize)
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            pfile = pq.ParquetFile(path)
            _require(path, columns, list(pfile.schema_arrow.names))
            for batch in pfile.iter_batches(batch_size=chunksize, columns=columns):
                yield batch.to_pandas()
        except (pa.ArrowException, OSError) as err:
            raise DataFileError(f"{path.name} is not a readable Parquet file: {' '.join(str(err).split())}") from None


def _require(path: Path, wanted: list[str], found: list[str]) -> None:
    missing = [c for c in wanted if c not in found]
    if missing:
        raise DataFileError(f"{path.name} has no column(s) {missing}; its columns are {found} "
                         "(name them with text_column= / label_column= / ...)")


def _label_key(value) -> str | None:
    """A label cell as a comparable string ("1" for 1, 1.0 and True's 1); None when missing."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real) and float(value).is_integer():
        return str(int(value))
    return str(value).strip()


def _integral(key: str) -> str:
    """"1.0" -> "1" (a 0/1 label column written as floats); other strings unchanged."""
    try:
        value = float(key)
    except ValueError:
        return key
    return str(int(value)) if value.is_integer() else key


def _labels(cells, human_label, first_row: int, seen: set) -> list[str]:
    out = []
    target = None if human_label is None else _label_key(human_label)
    for i, cell in enumerate(cells):
        key = _label_key(cell)
        if key is None or key == "":
            raise ValueError(f"data row {first_row + i} has no label (an empty cell)")
        seen.add(key)
        if target is not None:
            out.append("human" if key == target else "machine")
            continue
        label = _WORD_LABELS.get(key.casefold()) or _WORD_LABELS.get(_integral(key))
        if label is None:
            shown = sorted(seen)[:10]
            raise ValueError(f"data row {first_row + i} has label {cell!r}; labels must be 'human'/'machine' or 0/1 "
                             f"(1 = machine), or pass human_label= (the value that marks human rows, everything "
                             f"else counting as machine); values seen so far: {shown}")
        out.append(label)
    return out


def _texts(cells, column: str, first_row: int) -> list[str]:
    out = []
    for i, cell in enumerate(cells):
        if cell is None or (isinstance(cell, float) and math.isnan(cell)):
            raise ValueError(f"data row {first_row + i}: the text column {column!r} has no value (a null or "
                             "missing cell; an empty text is written as an empty string)")
        if not isinstance(cell, str):
            raise ValueError(f"data row {first_row + i}: the text column {column!r} holds {type(cell).__name__} "
                             f"{cell!r}, not text")
        out.append(cell)
    return out


def _optional(cells, column: str, first_row: int) -> list[str]:
    out = []
    for i, cell in enumerate(cells):
        key = _label_key(cell)
        if key is None or key == "":
            raise ValueError(f"data row {first_row + i}: the column {column!r} is empty")
        out.append(key)
    return out


def _id_name(i: int, text: str) -> str:
    """The name a row's id hashes: row number and text (a lone surrogate written as its escape, the rest as before)."""
    name = f"{i}\x00{text}"
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogatepass").decode("utf-8", "backslashreplace")
    return name


def load_file(path, *, text_column: str = "text", label_column: str = "label", human_label=None,
              domain_column: str | None = None, model_column: str | None = None, id_column: str | None = None,
              chunksize: int = 50_000) -> pd.DataFrame:
    """Rows of a labelled CSV/TSV/JSONL/Parquet file in the RAID schema (plus ``label`` and ``row``,
    the 0-based data row in the file).

    ``human_label``: the label value of human rows (everything else is machine); by default
    labels must be "human"/"machine" or 0/1 (1 = machine). Raises ``DatasetUnavailable`` when
    the file does not exist, ``ValueError`` for an unknown extension, a missing column, a
    non-text cell, a missing or unknown label, or a file without both classes.
    """
    if not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a str or Path, got {type(path).__name__}")
    _check_column("text_column", text_column, False)
    _check_column("label_column", label_column, False)
    for name, value in (("domain_column", domain_column), ("model_column", model_column), ("id_column", id_column)):
        _check_column(name, value, True)
    if isinstance(chunksize, bool) or not isinstance(chunksize, int) or chunksize < 1:
        raise ValueError(f"chunksize must be a positive int, got {chunksize!r}")
    if human_label is not None and not isinstance(human_label, (str, numbers.Real)):
        raise TypeError(f"human_label must be a str or a number, got {type(human_label).__name__}")
    path = Path(path).expanduser()
    kind = file_format(path)
    if not path.is_file():
        raise DatasetUnavailable(f"no such file: {path}")
    columns = list(dict.fromkeys(c for c in (text_column, label_column, domain_column, model_column, id_column)
                                 if c is not None))
    texts: list[str] = []
    labels: list[str] = []
    extra: dict[str, list[str]] = {c: [] for c in (domain_column, model_column, id_column) if c is not None}
    seen: set = set()
    try:
        for chunk in _chunks(path, kind, columns, chunksize):
            start = len(texts)
            texts.extend(_texts(chunk[text_column].tolist(), text_column, start))
            labels.extend(_labels(chunk[label_column].tolist(), human_label, start, seen))
            for col, values in extra.items():
                values.extend(_optional(chunk[col].tolist(), col, start))
    except DataFileError:
        raise
    except ValueError as err:  # a cell's problem: the message names the row and the column; add the file
        raise DataFileError(f"{path.name}: {err}") from None
    present = set(labels)
    if present != {"human", "machine"}:
        lacking = sorted({"human", "machine"} - present)
        how = (f"human_label={human_label!r}" if human_label is not None else "labels human/machine or 0/1")
        raise ValueError(f"{path.name} needs both human and machine rows; with {how} it has no {lacking[0]} rows "
                         f"({len(labels)} rows; label values found: {sorted(seen)[:10]})")
    n = len(texts)
    if id_column is not None:
        ids = extra[id_column]
        dup = pd.Series(ids).duplicated()
        if dup.any():
            raise ValueError(f"the id column {id_column!r} repeats {ids[int(dup.idxmax())]!r}; ids must be unique")
    else:
        ids = [str(uuid.uuid5(_NAMESPACE, _id_name(i, t))) for i, t in enumerate(texts)]
    models = extra[model_column] if model_column is not None else ["machine"] * n
    frame = pd.DataFrame({
        "id": ids, "source_id": ids,
        "model": [m if lab == "machine" else "human" for m, lab in zip(models, labels)],
        "decoding": None, "repetition_penalty": None, "attack": "none",
        "domain": extra[domain_column] if domain_column is not None else path.name.split(".")[0],
        "title": None, "prompt": None,
        # object, not an Arrow string column (that cannot hold a lone surrogate, kept as the file says)
        "generation": pd.Series(texts, dtype=object), "label": labels, "row": range(n),
    })
    return validate_rows(frame)
