"""A RAID leaderboard submission: its files, read and written, and the pre-flight check.

RAID's leaderboard (Dugan et al., ACL 2024; the raid-bench repository's ``leaderboard/``) takes a
pull request adding ``leaderboard/submissions/<name>/`` with two files: ``predictions.json`` (one
``{"id", "score"}`` per row of the test split, human and machine, clean and attacked; higher =
machine) and ``metadata.json`` (the keys of :data:`METADATA_TEMPLATE`, no others: RAID builds a
dataclass from it). Its workflow then runs RAID's evaluator (:mod:`humanize.benchmarks.evaluation.raid`
computes the same figures) and writes ``results.json`` itself.

:func:`check_submission` finds, before a pull request does, what makes submissions fail or misreport:
ids missing (by slice: attacked human rows are the ones people forget), duplicated or unknown; scores
that are not finite numbers; scores that look inverted; scores RAID's threshold search cannot calibrate
in some domain (constant, quantized, logits: the search steps from 0.5 and assumes scores in [0, 1]);
metadata keys that are not exactly the template's; a folder name RAID's workflow cannot carry.
"""

from __future__ import annotations

import json
import math
import numbers
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from humanize.exceptions import DataFileError

from ..evaluation.raid import (CLEAN, DATA_COLUMNS, HUMAN, RAID_EPSILON, RaidEvaluationError, check_target_fprs,
                               search_threshold)

#: RAID's metadata keys (its leaderboard's ``SubmissionMetadata``): the first three are required.
REQUIRED_METADATA = ("date_released", "detector_name", "contact_info")
OPTIONAL_METADATA = ("website", "paper_link", "huggingface_link", "github_link", "additional_metadata")
METADATA_TEMPLATE = {"date_released": "YYYY-MM-DD", "detector_name": "", "contact_info": "", "website": "",
                     "paper_link": "", "huggingface_link": "", "github_link": ""}
#: What the leaderboard's workflow writes itself: a submission must not carry it.
RESULTS_FILE = "results.json"
PREDICTIONS_FILE = "predictions.json"
METADATA_FILE = "metadata.json"


# ---------------------------------------------------------------------------------------------
# files


def read_data_keys(path: str | os.PathLike, columns=DATA_COLUMNS, chunksize: int = 200_000) -> pd.DataFrame:
    """The RAID columns the protocol needs (of ``columns``, those the file has), never the texts: a RAID
    CSV read in chunks (as RAID's evaluator reads it: empty and pandas' usual null words are null) or a
    Parquet file or folder, read column by column."""
    p = Path(path).expanduser()
    if not p.exists():
        raise DataFileError(f"no RAID data file at {str(p)!r}")
    wanted = list(columns)
    if p.is_dir() or p.suffix.lower() in (".parquet", ".pq"):
        import pyarrow as pa
        import pyarrow.dataset as ds

        try:
            dataset = ds.dataset(str(p), format="parquet")
            have = [c for c in wanted if c in dataset.schema.names]
            frame = dataset.to_table(columns=have).to_pandas()
        except (pa.ArrowException, OSError) as err:
            raise DataFileError(f"{p.name}: cannot read its Parquet: {' '.join(str(err).split())}") from None
    else:
        try:
            parts = []
            with pd.read_csv(p, usecols=lambda c: c in wanted, dtype={"id": str}, chunksize=chunksize,
                             index_col=False) as reader:
                parts = list(reader)
            frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=wanted)
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, ValueError) as err:
            raise DataFileError(f"{p.name}: not a readable RAID CSV: {' '.join(str(err).split())[:300]}") from None
    if "id" not in frame.columns:
        raise DataFileError(f"{p.name} has no 'id' column; RAID's rows are keyed by it")
    frame["id"] = frame["id"].astype(str)
    return frame


def read_predictions_raw(path: str | os.PathLike) -> list:
    """``predictions.json`` as parsed (a list, checked to be one); NaN and Infinity literals are read."""
    p = Path(path).expanduser()
    if not p.is_file():
        raise DataFileError(f"no predictions file at {str(p)!r}")
    try:
        with open(p, encoding="utf-8") as f:
            data = json.load(f)
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise DataFileError(f"{p.name} is not JSON: {' '.join(str(err).split())}") from None
    if not isinstance(data, list):
        raise DataFileError(f"{p.name} holds a JSON {type(data).__name__}; RAID's predictions are a list of "
                            "{\"id\": ..., \"score\": ...} records")
    return data


def predictions_frame(records: list, where: str = "predictions") -> pd.DataFrame:
    """Records as ``id`` (str), ``raw`` (the score as given) and ``score`` (float, NaN where not a number)."""
    ids, raw = [], []
    for i, rec in enumerate(records):
        if not isinstance(rec, dict) or "id" not in rec or "score" not in rec:
            raise DataFileError(f"{where}: record {i} is {str(rec)[:80]!r}; each is {{\"id\": ..., \"score\": ...}}")
        ids.append(str(rec["id"]))
        raw.append(rec["score"])
    score = np.array([float(v) if isinstance(v, numbers.Real) and not isinstance(v, bool) else math.nan
                      for v in raw], dtype=np.float64)
    return pd.DataFrame({"id": ids, "raw": pd.Series(raw, dtype=object), "score": score})


def read_predictions(path: str | os.PathLike) -> pd.DataFrame:
    """``predictions.json`` as ``id, score`` for the evaluator: every score a finite number, every id once
    (:func:`check_submission` says more about a file that is not)."""
    frame = predictions_frame(read_predictions_raw(path), Path(path).name)
    bad = ~np.isfinite(frame["score"].to_numpy())
    if bad.any():
        first = frame[bad].iloc[0]
        raise RaidEvaluationError(f"{int(bad.sum())} score(s) are not finite numbers, e.g. {first['raw']!r} for id "
                                  f"{first['id']!r} (run `humanize-bench raid check` for every problem)")
    return frame[["id", "score"]]


class PredictionsWriter:
    """RAID's ``predictions.json`` written as ``(id, score)`` pairs arrive, into a temporary file that
    :meth:`commit` renames into place (whole or not at all); :meth:`discard` removes an unfinished one."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path).expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.tmp = self.path.with_name(self.path.name + ".partial")
        self._file = open(self.tmp, "w", encoding="utf-8")
        self._file.write("[")
        self._n = 0

    def add(self, pairs) -> None:
        lines = []
        for ident, score in pairs:
            score = float(score)
            if not math.isfinite(score):
                raise RaidEvaluationError(f"the score of id {ident!r} is {score}; RAID needs a finite number")
            lines.append(("," if self._n else "") + "\n" + json.dumps({"id": str(ident), "score": score}))
            self._n += 1
        self._file.write("".join(lines))

    def commit(self) -> Path:
        self._file.write("\n]\n")
        self._file.close()
        os.replace(self.tmp, self.path)
        return self.path

    def discard(self) -> None:
        if not self._file.closed:
            self._file.close()
        if self.tmp.exists():
            self.tmp.unlink()


def write_predictions(pairs, path: str | os.PathLike) -> Path:
    """RAID's ``predictions.json`` from ``(id, score)`` pairs, written atomically (a temporary file renamed)."""
    writer = PredictionsWriter(path)
    try:
        writer.add(pairs)
        return writer.commit()
    finally:
        writer.discard()


def write_metadata_template(path: str | os.PathLike, detector_name: str = "") -> Path:
    p = Path(path).expanduser()
    if p.exists():
        raise DataFileError(f"{str(p)!r} exists; give another --out or remove it")
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps({**METADATA_TEMPLATE, "detector_name": detector_name}, indent=2) + "\n", encoding="utf-8")
    return p


# ---------------------------------------------------------------------------------------------
# the check


@dataclass(frozen=True)
class Problem:
    """One thing that would make a submission fail or misreport: what, how many rows, one line."""

    kind: str
    rows: int
    message: str

    def line(self) -> str:
        return f"{self.kind}: {self.message}"


def _example(values) -> str:
    values = list(values)
    return f", e.g. {values[0]!r}" if values else ""


def _slice_names(frame: pd.DataFrame) -> pd.Series:
    """Each row's slice in words: human/machine x clean/attacked, where the data says."""
    if "model" not in frame.columns:
        return pd.Series("rows", index=frame.index)
    who = np.where(frame["model"] == HUMAN, "human", "machine")
    if "attack" in frame.columns:
        how = np.where(frame["attack"].fillna(CLEAN) == CLEAN, "clean", "attacked")
        return pd.Series([f"{h} {w} rows" for h, w in zip(how, who)], index=frame.index)
    return pd.Series([f"{w} rows" for w in who], index=frame.index)


def _id_problems(data: pd.DataFrame, preds: pd.DataFrame) -> list[Problem]:
    out = []
    dup = preds["id"].duplicated(keep=False)
    if dup.any():
        n = int(preds["id"][dup].nunique())
        out.append(Problem("duplicate ids", int(dup.sum()),
                           f"{n} id(s) have more than one prediction ({int(dup.sum())} records){_example(preds['id'][dup])}"))
    known = set(data["id"])
    unknown = ~preds["id"].isin(known)
    if unknown.any():
        out.append(Problem("unknown ids", int(unknown.sum()),
                           f"{int(unknown.sum())} prediction(s) name ids the data does not have"
                           f"{_example(preds['id'][unknown])}"))
    missing = ~data["id"].isin(set(preds["id"]))
    if missing.any():
        by = _slice_names(data[missing]).value_counts()
        parts = ", ".join(f"{name}: {count:,}" for name, count in by.items())
        out.append(Problem("missing ids", int(missing.sum()),
                           f"{int(missing.sum()):,} data row(s) have no prediction ({parts}){_example(data['id'][missing])}"
                           "; RAID's evaluator scores every row, attacked human rows included"))
    return out


def _score_problems(preds: pd.DataFrame) -> list[Problem]:
    out = []
    raw, score = preds["raw"], preds["score"].to_numpy()
    not_number = np.isnan(score) & ~raw.map(lambda v: isinstance(v, float) and math.isnan(v)).to_numpy()
    if not_number.any():
        out.append(Problem("non-numeric scores", int(not_number.sum()),
                           f"{int(not_number.sum())} score(s) are not numbers{_example(raw[not_number])} (id "
                           f"{preds['id'][not_number].iloc[0]!r})"))
    nan = raw.map(lambda v: isinstance(v, float) and math.isnan(v)).to_numpy()
    if nan.any():
        out.append(Problem("NaN scores", int(nan.sum()), f"{int(nan.sum())} score(s) are NaN (id "
                                                         f"{preds['id'][nan].iloc[0]!r}); RAID drops or skips them"))
    inf = np.isinf(score)
    if inf.any():
        out.append(Problem("infinite scores", int(inf.sum()),
                           f"{int(inf.sum())} score(s) are infinite (id {preds['id'][inf].iloc[0]!r}); RAID's "
                           "threshold search starts at the mean human score"))
    return out


def _label_problems(joined: pd.DataFrame, target_fprs, epsilon: float) -> tuple[list[Problem], list[str]]:
    """Inverted scores and uncalibratable domains, on the rows with labels and finite scores."""
    notes = []
    if "model" not in joined.columns:
        return [], ["not checked: inverted scores and calibration (the data has no 'model' column: RAID's test "
                    "labels are hidden; check on the train or extra split)"]
    out = []
    ok = joined[np.isfinite(joined["score"].to_numpy())]
    y = (ok["model"] != HUMAN).to_numpy()
    if y.any() and (~y).any():
        from sklearn.metrics import roc_auc_score

        auc = float(roc_auc_score(y, ok["score"].to_numpy()))
        if auc < 0.5:
            out.append(Problem("inverted scores", len(ok),
                               f"AUROC {auc:.3f} < 0.5 on {len(ok):,} labelled rows: RAID reads higher = machine; "
                               "negate your scores (or use 1 - p)"))
    if "attack" not in joined.columns or "domain" not in joined.columns:
        notes.append("not checked: calibration (the data lacks 'attack' or 'domain')")
        return out, notes
    clean = ok[(ok["model"] == HUMAN) & (ok["attack"] == CLEAN)]
    domains = pd.unique(joined["domain"])
    for target in target_fprs:
        off, missing = [], []
        for d in domains:
            h = clean[clean["domain"] == d]["score"].to_numpy()
            if not len(h):
                missing.append(str(d))
                continue
            try:
                _, achieved = search_threshold(h, target, epsilon)
            except RaidEvaluationError:
                achieved = 0.0
            if abs(achieved - target) > epsilon:
                off.append((str(d), achieved, h))
        if missing:
            out.append(Problem("uncalibratable domains", len(missing),
                               f"no scored clean human rows in domain(s) {', '.join(missing)}: RAID's evaluator "
                               "stops there"))
        coarse = [(d, a, h) for d, a, h in off if _too_coarse(len(h), target, epsilon)]
        if coarse:  # the data's fault, not the scores': said, not counted as a problem
            notes.append(f"not checkable at FPR {target:g} in {len(coarse)} domain(s) ("
                         + ", ".join(d for d, *_ in coarse) + "): " + _why_uncalibratable(coarse[0][2], target, epsilon))
        off = [item for item in off if item not in coarse]
        if off:
            shown = ", ".join(f"{d} {a:.2%}" for d, a, _ in off)
            rows = int(sum(len(h) for *_, h in off))
            fate = ("RAID reports no accuracy there" if any(a - target > epsilon for _, a, _ in off)
                    else "RAID measures your TPR at a stricter FPR there")
            why = "; ".join(dict.fromkeys(_why_uncalibratable(h, target, epsilon) for *_, h in off))
            out.append(Problem("uncalibratable domains", rows,
                               f"RAID's threshold search misses FPR {target:g} in {len(off)} domain(s), achieved "
                               f"{shown} ({fate}); {why}"))
    return out, notes


def _too_coarse(n: int, target: float, epsilon: float) -> bool:
    """True when no FPR that ``n`` human texts allow (multiples of 1/n) is within ``epsilon`` of ``target``."""
    k = round(target * n)
    return min(abs(j / n - target) for j in (max(k - 1, 0), k, k + 1)) > epsilon


def _why_uncalibratable(h: np.ndarray, target: float, epsilon: float) -> str:
    """Why RAID's search misses ``target`` on the human scores ``h`` of a domain, in words."""
    n = len(h)
    if _too_coarse(n, target, epsilon):
        return (f"a domain with {n} clean human texts has FPRs in steps of 1/{n} = {1 / n:.2%}, none within "
                f"{epsilon:g} of {target:g} (RAID's test split has enough; a small labelled file does not)")
    distinct = len(np.unique(h))
    if distinct == 1:
        return "the scores are constant"
    if distinct <= 20:
        return f"the human scores take only {distinct} distinct values (quantized): give a continuous score"
    lo, hi = float(np.min(h)), float(np.max(h))
    if lo < -1 or hi > 2:
        return (f"the scores span [{lo:.3g}, {hi:.3g}]: RAID's search steps from 0.5 and assumes scores in [0, 1] "
                "(logits? give probabilities)")
    return "ties among the human scores near the threshold"


FOLDER_RULES = (
    (lambda n: n != "" and n not in (".", ".."), "is empty or a relative path"),
    (lambda n: not n.startswith("."), "starts with '.' (a hidden folder)"),
    (lambda n: not re.search(r"[\x00-\x1f\x7f/\\\"]", n), "holds a control character, a slash or a double quote "
                                                           "(RAID's workflow quotes the folder in a shell line)"),
    (lambda n: len(n.encode("utf-8")) <= 200, "is longer than 200 bytes"),
)


def metadata_problems(path: str | os.PathLike) -> list[Problem]:
    """``metadata.json``: exactly RAID's keys (:data:`METADATA_TEMPLATE`), the required ones filled in, and
    its folder (the submission's name) one RAID's workflow can carry, holding no ``results.json``."""
    p = Path(path).expanduser()
    out = []
    if not p.is_file():
        return [Problem("metadata", 1, f"no metadata file at {str(p)!r} (`humanize-bench raid metadata` writes one)")]
    if p.name != METADATA_FILE:
        out.append(Problem("metadata", 1, f"the file is named {p.name!r}; RAID reads {METADATA_FILE!r}"))
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        return out + [Problem("metadata", 1, f"{p.name} is not JSON: {' '.join(str(err).split())}")]
    if not isinstance(data, dict):
        return out + [Problem("metadata", 1, f"{p.name} holds a JSON {type(data).__name__}, not an object")]
    unknown = sorted(set(data) - set(REQUIRED_METADATA) - set(OPTIONAL_METADATA))
    if unknown:
        out.append(Problem("metadata keys", len(unknown), f"key(s) {unknown} are not RAID's; it accepts "
                                                          f"{list(REQUIRED_METADATA + OPTIONAL_METADATA)}"))
    absent = [k for k in REQUIRED_METADATA if k not in data]
    if absent:
        out.append(Problem("metadata keys", len(absent), f"required key(s) {absent} are missing"))
    empty = [k for k in REQUIRED_METADATA if k in data and (not isinstance(data[k], str) or not data[k].strip()
                                                            or data[k] == METADATA_TEMPLATE[k])]
    if empty:
        out.append(Problem("metadata values", len(empty), f"required key(s) {empty} are not filled in"))
    if "additional_metadata" in data and data["additional_metadata"] is not None \
            and not isinstance(data["additional_metadata"], dict):
        out.append(Problem("metadata values", 1, "additional_metadata must be an object (or null)"))
    folder = p.resolve().parent
    name = folder.name
    for ok, why in FOLDER_RULES:
        if not ok(name):
            out.append(Problem("submission folder", 1, f"the folder name {name!r} {why}"))
    if (folder / RESULTS_FILE).exists():
        out.append(Problem("submission folder", 1, f"{RESULTS_FILE} is in the folder: RAID's workflow writes it; "
                                                   "leave it out of the pull request"))
    return out


@dataclass
class CheckReport:
    problems: list
    notes: list
    n_predictions: int
    n_rows: int

    @property
    def ok(self) -> bool:
        return not self.problems


def check_submission(predictions: str | os.PathLike, data: str | os.PathLike | pd.DataFrame, *,
                     metadata: str | os.PathLike | None = None, target_fprs=(0.05,),
                     epsilon: float = RAID_EPSILON) -> CheckReport:
    """Every problem of a submission (:class:`Problem`, one line each) before RAID's workflow finds it."""
    target_fprs = check_target_fprs(list(target_fprs))
    rows = data if isinstance(data, pd.DataFrame) else read_data_keys(data)
    if "id" not in rows.columns:
        raise DataFileError("the data has no 'id' column")
    rows = rows.assign(id=rows["id"].astype(str))
    problems = []
    dup_rows = rows["id"].duplicated()
    if dup_rows.any():
        problems.append(Problem("data ids", int(dup_rows.sum()), f"the data repeats {int(dup_rows.sum())} id(s)"
                                                                 f"{_example(rows['id'][dup_rows])}"))
    try:
        preds = predictions_frame(read_predictions_raw(predictions), Path(predictions).name)
    except DataFileError as err:
        problems.append(Problem("predictions file", 0, str(err)))
        preds = None
    notes: list[str] = []
    if preds is not None:
        problems += _id_problems(rows, preds)
        problems += _score_problems(preds)
        first = preds.drop_duplicates("id")
        joined = rows.drop_duplicates("id").merge(first[["id", "score"]], on="id", how="left")
        label_problems, notes = _label_problems(joined, target_fprs, epsilon)
        problems += label_problems
    if metadata is not None:
        problems += metadata_problems(metadata)
    return CheckReport(problems, notes, 0 if preds is None else len(preds), len(rows))
