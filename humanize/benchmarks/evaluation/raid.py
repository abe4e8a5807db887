"""RAID's own evaluation protocol, reproduced exactly (Dugan et al., ACL 2024, Section 5.2, Appendix C/F.2).

This is the protocol behind RAID's leaderboard, as its evaluator (the ``raid-bench`` package's
``run_evaluation``) computes it; our default protocol (:func:`.evaluate.evaluate`) differs on purpose
(exact quantile thresholds, ``>``, clean humans only, intervals). The definitions, each of which the
test suite checks against RAID's installed evaluator to 1e-9:

* **thresholds**: one per domain (or one global), found on the *clean* human rows (``model ==
  "human"``, ``attack == "none"``, score not null) by RAID's iterative search: start at the mean
  human score, step 0.5, reverse and halve the step when the FPR crosses the target, reverse when it
  moves away by more than 0.01, stop within ``epsilon`` (0.0005) of the target; after 50 steps take
  the visited threshold whose FPR is closest *below* the target (else closest above), ignoring
  thresholds with FPR 0. A text is machine iff ``score >= threshold``; the FPR is computed as
  ``1 - accuracy`` on the humans, as RAID does.
* **slices**: every combination of domain x attack x model x decoding x repetition penalty over the
  values of the machine rows, each also ``"all"``, skipping empty ones, in RAID's loop order.
* **accuracy** (TPR) of a slice: its machine rows at their own domain's threshold.
* **AUROC** of a slice: its machine rows against *every* human row of its domain (attacked human rows
  included; all domains for ``"all"``).
* **missing scores**: a row without a prediction has a null score; with ``require_complete`` a slice
  with a null machine score, or whose domain has a null human score, is left out; otherwise nulls are
  dropped.
* **missed targets**: where a domain's achieved FPR exceeds the target by more than ``epsilon``, the
  accuracy of that domain's slices is ``None``, and so is every ``"all"``-domain slice's.

The result has RAID's JSON shape (``scores``, ``thresholds``, ``fpr``), so the two files diff. Where
RAID's evaluator fails with an exception from inside pandas or Python, this one raises a
:class:`RaidEvaluationError` of one line naming the domain or slice.

Speed: RAID filters the frame once per slice (12,636 slices on its test split); here every machine row
is ranked once against its domain's humans and the slices are sums over a grouped table, so the test
split's 672,000 rows take seconds (``benchmarks/bench_raid_evaluate.py``).
"""

from __future__ import annotations

import itertools
import math
import zlib
from typing import Sequence

import numpy as np
import pandas as pd

from humanize.exceptions import UserError

from .bootstrap import percentile_intervals

#: RAID's epsilon (Appendix F.2): the search stops within it of the target FPR; a domain whose
#: achieved FPR exceeds the target by more than it has no accuracy.
RAID_EPSILON = 0.0005
#: RAID's slice keys, in the order its evaluator nests them.
SLICE_KEYS = ("domain", "attack", "model", "decoding", "repetition_penalty")
#: The keys of a score record, in the order RAID's evaluator writes them.
RECORD_KEYS = ("domain", "model", "decoding", "repetition_penalty", "attack")
#: The columns the protocol reads from the data (``id`` joins the predictions).
DATA_COLUMNS = ("id", *SLICE_KEYS)
ALL = "all"
HUMAN = "human"
CLEAN = "none"
#: At most this many steps before the search settles for the best threshold it visited.
MAX_STEPS = 50


class RaidEvaluationError(UserError, ValueError):
    """RAID's protocol cannot evaluate these scores (one line, naming the domain or slice)."""


# ---------------------------------------------------------------------------------------------
# thresholds


def _fpr_at(sorted_humans: np.ndarray, threshold: float) -> float:
    """The share of humans with ``score >= threshold``, computed as RAID does (``1 - accuracy``)."""
    n = len(sorted_humans)
    if threshold != threshold:  # NaN: no comparison holds
        flagged = 0
    else:
        flagged = n - int(np.searchsorted(sorted_humans, threshold, side="left"))
    return 1.0 - (n - flagged) / n


def _settle(visited: list, target: float, where: str) -> float:
    """After the step budget: the visited threshold whose FPR is closest below the target (ties: the
    lower threshold), else the one closest above (ties: the higher); FPR-0 thresholds never count."""
    gaps = [(target - fpr, t) for t, fpr in visited if fpr > 0.0]
    below = [g for g in gaps if g[0] >= 0]
    if below:
        return min(below)[1]
    if not gaps:
        raise RaidEvaluationError(f"RAID's threshold search{where} found no threshold that flags any human text "
                                  "(constant or near-constant scores?); RAID's evaluator fails here")
    return max(gaps)[1]


def search_threshold(human_scores: Sequence[float], target_fpr: float, epsilon: float = RAID_EPSILON,
                     *, where: str = "") -> tuple[float, float]:
    """RAID's threshold search (Appendix F.2) on clean human scores in data order: ``(threshold,
    achieved FPR)``. The start is the mean as Python's ``sum`` computes it, in the given order."""
    values = [float(v) for v in human_scores]
    if not values:
        raise RaidEvaluationError(f"no clean human scores{where} to find RAID's threshold on (RAID needs scored "
                                  "clean human rows in every domain; or use a global threshold)")
    sorted_h = np.sort(np.asarray(values, dtype=np.float64))
    threshold = sum(values) / len(values)
    step, previous, visited = 0.5, None, []
    for _ in range(MAX_STEPS):
        fpr = _fpr_at(sorted_h, threshold)
        if abs(fpr - target_fpr) <= epsilon:
            return threshold, fpr
        visited.append((threshold, fpr))
        gap = target_fpr - fpr
        if previous and (gap < 0) != (previous < 0):
            step *= -0.5  # crossed the target: turn back with half the step
        elif previous and abs(gap) - abs(previous) > 0.01:
            step *= -1  # moving away from it: turn back
        threshold += step
        previous = gap
    threshold = _settle(visited, target_fpr, where)
    return threshold, _fpr_at(sorted_h, threshold)


def fpr_key(fpr: float) -> str:
    """RAID's key for a target FPR in its JSON (``str(0.05) == "0.05"``)."""
    return str(fpr)


def raid_thresholds(frame: pd.DataFrame, target_fprs: Sequence[float], epsilon: float = RAID_EPSILON,
                    per_domain: bool = True) -> tuple[dict, dict]:
    """``(thresholds, fpr)`` in RAID's JSON shape: ``{"0.05": {domain: value}}`` per domain, or
    ``{"0.05": value}`` with one global threshold. ``frame``: RAID's columns and ``score`` (NaN = none)."""
    clean = frame[(frame["model"] == HUMAN) & (frame["attack"] == CLEAN) & frame["score"].notna()]
    thresholds: dict = {}
    fprs: dict = {}
    domains = pd.unique(frame["domain"])
    by_domain = {d: g["score"].to_numpy() for d, g in clean.groupby("domain", sort=False)} if per_domain else {}
    for target in target_fprs:
        key = fpr_key(target)
        if not per_domain:
            thresholds[key], fprs[key] = search_threshold(clean["score"].to_numpy(), target, epsilon,
                                                          where=" for the global threshold")
            continue
        thresholds[key], fprs[key] = {}, {}
        for d in domains:
            scores = by_domain.get(d, np.empty(0)) if d == d else np.empty(0)
            t, f = search_threshold(scores, target, epsilon, where=f" in domain {_show(d)}")
            thresholds[key][d], fprs[key][d] = t, f
    return thresholds, fprs


def _show(value) -> str:
    return "a missing domain (null)" if value is None or value != value else repr(str(value))


# ---------------------------------------------------------------------------------------------
# slices


def _half_ranks(scores: np.ndarray, groups: np.ndarray, h_scores: np.ndarray, h_groups: np.ndarray,
                n_groups: int) -> np.ndarray:
    """Per score: #(humans of its group below it) + 0.5 #(equal to it): its Mann-Whitney count."""
    out = np.zeros(len(scores), dtype=np.float64)
    for g in range(n_groups):
        rows = np.flatnonzero(groups == g)
        if not len(rows):
            continue
        ref = np.sort(h_scores[h_groups == g])
        s = scores[rows]
        lo = np.searchsorted(ref, s, side="left")
        hi = np.searchsorted(ref, s, side="right")
        out[rows] = lo + 0.5 * (hi - lo)
    return out


def _codes(values: pd.Series) -> tuple[np.ndarray, list]:
    """First-appearance codes (NaN: -1, a value no slice selects) and the values, as RAID orders them."""
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    return codes, list(uniques)


def raid_scores(frame: pd.DataFrame, thresholds: dict, *, require_complete: bool = True,
                include_all: bool = True) -> list[dict]:
    """RAID's per-slice records (``domain, model, decoding, repetition_penalty, attack, accuracy,
    auroc``), in its loop order, before the missed-target nulls (:func:`drop_missed_targets`)."""
    machine = frame[frame["model"] != HUMAN]
    humans = frame[frame["model"] == HUMAN]
    if machine.empty:
        return []
    keys = {k: _codes(machine[k]) for k in SLICE_KEYS}
    dom_codes, dom_values = keys["domain"]
    n_dom = len(dom_values)
    # humans by the machine rows' domain codes (-1: a domain without machine rows: only in "all")
    h_dom = pd.Index(dom_values).get_indexer(humans["domain"]) if len(dom_values) else np.full(len(humans), -1)
    h_score = humans["score"].to_numpy(dtype=np.float64)
    h_null = np.isnan(h_score)
    h_rows = np.bincount(h_dom[h_dom >= 0], minlength=n_dom)
    h_valid = np.bincount(h_dom[(h_dom >= 0) & ~h_null], minlength=n_dom)
    h_nulls = h_rows - h_valid
    score = machine["score"].to_numpy(dtype=np.float64)
    valid = ~np.isnan(score)
    # each machine row's Mann-Whitney count against its domain's humans and against all humans
    c_dom = np.zeros(len(score))
    c_dom[valid] = _half_ranks(score[valid], dom_codes[valid], h_score[~h_null], h_dom[~h_null], n_dom)
    c_all = np.zeros(len(score))
    c_all[valid] = _half_ranks(score[valid], np.zeros(int(valid.sum()), dtype=np.int64), h_score[~h_null],
                               np.zeros(int((~h_null).sum()), dtype=np.int64), 1)
    table = pd.DataFrame({k: keys[k][0] for k in SLICE_KEYS})
    table["rows"] = 1
    table["valid"] = valid.astype(np.int64)
    # the rows RAID's accuracy counts: its per-domain loop never selects a row whose domain is null
    table["judged"] = (valid & (dom_codes >= 0)).astype(np.int64)
    table["c_dom"], table["c_all"] = c_dom, c_all
    fkeys = list(thresholds)
    for i, key in enumerate(fkeys):
        t = thresholds[key]
        if isinstance(t, dict):
            per = np.array([t[d] for d in dom_values], dtype=np.float64)
            row_t = np.where(dom_codes >= 0, per[np.maximum(dom_codes, 0)], np.nan)
        else:
            row_t = np.full(len(score), float(t))
        table[f"tp{i}"] = (valid & (score >= row_t)).astype(np.int64)
    sums = ["rows", "valid", "judged", "c_dom", "c_all", *(f"tp{i}" for i in range(len(fkeys)))]
    cells = table.groupby(list(SLICE_KEYS), sort=False).sum()[sums].reset_index()
    n_h_all_rows, n_h_all_valid = len(humans), int((~h_null).sum())
    n_h_all_null = n_h_all_rows - n_h_all_valid
    parts = []
    options = [(False, True) if include_all else (False,)] * len(SLICE_KEYS)
    for marg in itertools.product(*options):
        kept = [k for k, m in zip(SLICE_KEYS, marg) if not m]
        sub = cells
        if kept:
            sub = sub[(sub[kept] >= 0).all(axis=1)]  # a null key value selects no slice of its own
            sub = sub.groupby(kept, sort=False)[sums].sum().reset_index()
        else:
            sub = sub[sums].sum().to_frame().T
        for k, m in zip(SLICE_KEYS, marg):
            if m:
                sub[k] = len(keys[k][1])  # "all" after every value
        parts.append(sub)
    slices = pd.concat(parts, ignore_index=True).sort_values(list(SLICE_KEYS), kind="stable")
    records = []
    for row in slices.itertuples(index=False):
        rec = _record(row, keys, fkeys, n_dom, h_rows, h_valid, h_nulls, n_h_all_rows, n_h_all_valid,
                      n_h_all_null, require_complete)
        if rec is not None:
            records.append(rec)
    return records


def _record(row, keys, fkeys, n_dom, h_rows, h_valid, h_nulls, n_h_all_rows, n_h_all_valid, n_h_all_null,
            require_complete):
    values = {k: (ALL if getattr(row, k) == len(keys[k][1]) else keys[k][1][getattr(row, k)]) for k in SLICE_KEYS}
    d = row.domain
    all_domains = d == n_dom
    n_hr = n_h_all_rows if all_domains else int(h_rows[d])
    if row.rows == 0 or n_hr == 0:
        return None
    n_hv = n_h_all_valid if all_domains else int(h_valid[d])
    human_nulls = n_h_all_null if all_domains else int(h_nulls[d])
    if require_complete and (row.valid < row.rows or human_nulls > 0):
        return None
    where = ", ".join(f"{k}={values[k]!r}" for k in RECORD_KEYS)
    if row.valid == 0:
        raise RaidEvaluationError(f"every machine score of the slice {where} is missing; RAID's evaluator fails "
                                  "there (pass require_complete=True to leave such slices out)")
    if n_hv == 0:
        raise RaidEvaluationError(f"every human score of domain {values['domain']!r} is missing: no AUROC for the "
                                  f"slice {where}")
    judged = int(row.judged)
    if judged == 0:
        raise RaidEvaluationError(f"no machine row of the slice {where} has a domain; RAID's evaluator fails there")
    accuracy = {}
    for i, key in enumerate(fkeys):
        tp = int(getattr(row, f"tp{i}"))
        accuracy[key] = {"tp": tp, "fn": judged - tp, "accuracy": tp / judged}
    c = row.c_all if all_domains else row.c_dom
    auroc = float(c) / (int(row.valid) * n_hv)
    return {**{k: values[k] for k in RECORD_KEYS}, "accuracy": accuracy, "auroc": auroc}


def drop_missed_targets(records: list[dict], fprs: dict, epsilon: float = RAID_EPSILON) -> list[dict]:
    """RAID's nulls: a domain whose achieved FPR exceeds a target by more than ``epsilon`` loses that
    target's accuracy, in its slices and in every ``"all"``-domain slice."""
    missed = set()
    for rec in records:
        if rec["domain"] == ALL:
            continue
        for key in rec["accuracy"]:
            achieved = fprs[key][rec["domain"]] if isinstance(fprs[key], dict) else fprs[key]
            if achieved - float(key) > epsilon:
                rec["accuracy"][key] = None
                missed.add(key)
    for rec in records:
        if rec["domain"] == ALL:
            for key in missed:
                rec["accuracy"][key] = None
    return records


# ---------------------------------------------------------------------------------------------
# the whole evaluation


def as_predictions(predictions) -> pd.DataFrame:
    """Predictions as a frame of ``id, score``: a list of ``{"id", "score"}`` records (RAID's
    ``predictions.json``) or a frame with those columns. Ids must be unique."""
    if isinstance(predictions, pd.DataFrame):
        frame = predictions
    else:
        try:
            frame = pd.DataFrame.from_records(list(predictions))
        except (TypeError, ValueError) as err:
            raise RaidEvaluationError(f"predictions must be a list of {{'id': ..., 'score': ...}} records: {err}") \
                from None
    missing = [c for c in ("id", "score") if c not in frame.columns]
    if missing and len(frame):
        raise RaidEvaluationError(f"predictions lack {missing}; each record is {{'id': ..., 'score': ...}}")
    frame = frame.reindex(columns=["id", "score"])
    dup = frame["id"].duplicated()
    if dup.any():
        raise RaidEvaluationError(f"{int(dup.sum())} prediction id(s) occur twice, e.g. {frame['id'][dup].iloc[0]!r}; "
                                  "RAID joins one score per id")
    score = pd.to_numeric(frame["score"], errors="coerce")
    bad = score.isna() & frame["score"].notna()
    if bad.any():
        raise RaidEvaluationError(f"{int(bad.sum())} score(s) are not numbers, e.g. {frame['score'][bad].iloc[0]!r} "
                                  f"for id {frame['id'][bad].iloc[0]!r}")
    return pd.DataFrame({"id": frame["id"].to_numpy(), "score": score.astype(np.float64).to_numpy()})


def join_predictions(data: pd.DataFrame, predictions) -> pd.DataFrame:
    """RAID's join: every data row with its prediction's score (NaN where the file has none); data ids
    must be unique, and predictions for ids the data lacks are ignored."""
    missing = [c for c in DATA_COLUMNS if c not in data.columns]
    if missing:
        raise RaidEvaluationError(f"the data lacks RAID column(s) {missing}; it has {list(data.columns)}")
    dup = data["id"].duplicated()
    if dup.any():
        raise RaidEvaluationError(f"{int(dup.sum())} data id(s) occur twice, e.g. {data['id'][dup].iloc[0]!r}")
    preds = as_predictions(predictions)
    frame = data[list(DATA_COLUMNS)].copy()
    frame["score"] = preds.set_index("id")["score"].reindex(frame["id"].to_numpy()).to_numpy() \
        if len(preds) else np.nan
    return frame


def check_target_fprs(target_fpr) -> list[float]:
    targets = [target_fpr] if isinstance(target_fpr, (int, float)) else list(target_fpr)
    for t in targets:
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 < t < 1:
            raise RaidEvaluationError(f"each target FPR must be a number in (0, 1), got {t!r}")
    if not targets:
        raise RaidEvaluationError("give at least one target FPR, e.g. 0.05")
    return [float(t) for t in targets]


def raid_evaluate_frame(frame: pd.DataFrame, target_fpr=0.05, *, epsilon: float = RAID_EPSILON,
                        per_domain: bool = True, require_complete: bool = True, include_all: bool = True) -> dict:
    """RAID's evaluation of a frame with RAID's columns and ``score`` (NaN = no prediction)."""
    targets = check_target_fprs(target_fpr)
    thresholds, fprs = raid_thresholds(frame, targets, epsilon, per_domain)
    records = raid_scores(frame, thresholds, require_complete=require_complete, include_all=include_all)
    return {"scores": drop_missed_targets(records, fprs, epsilon), "thresholds": thresholds, "fpr": fprs}


def raid_evaluate(predictions, data: pd.DataFrame, target_fpr=0.05, *, epsilon: float = RAID_EPSILON,
                  per_domain: bool = True, require_complete: bool = True, include_all: bool = True) -> dict:
    """RAID's ``run_evaluation`` on ``predictions`` (RAID's ``[{"id", "score"}]``, higher = machine) over
    ``data`` (RAID's rows): ``{"scores": [...], "thresholds": {...}, "fpr": {...}}``, RAID's JSON shape.

    ``per_domain=False`` is RAID's ``per_domain_tuning=False`` (one threshold for every domain).
    """
    return raid_evaluate_frame(join_predictions(data, predictions), target_fpr, epsilon=epsilon,
                               per_domain=per_domain, require_complete=require_complete, include_all=include_all)


def records_frame(result: dict) -> pd.DataFrame:
    """RAID's score records as a flat table: the slice keys, ``auroc`` and per target FPR its
    ``tpr@<fpr>`` (NaN where the target was missed), ``tp@<fpr>``, ``fn@<fpr>``."""
    rows = []
    for rec in result["scores"]:
        row = {k: rec[k] for k in RECORD_KEYS}
        row["auroc"] = rec["auroc"]
        for key, acc in rec["accuracy"].items():
            row[f"tpr@{key}"] = math.nan if acc is None else acc["accuracy"]
            row[f"tp@{key}"] = math.nan if acc is None else acc["tp"]
            row[f"fn@{key}"] = math.nan if acc is None else acc["fn"]
        rows.append(row)
    return pd.DataFrame(rows)


def json_ready(result: dict):
    """The result with numpy scalars as Python numbers and NaN as null, for ``json.dump``."""
    if isinstance(result, dict):
        return {str(k): json_ready(v) for k, v in result.items()}
    if isinstance(result, (list, tuple)):
        return [json_ready(v) for v in result]
    if isinstance(result, (np.integer,)):
        return int(result)
    if isinstance(result, (float, np.floating)):
        return None if math.isnan(result) else float(result)
    return result


# ---------------------------------------------------------------------------------------------
# RAID's figures in our tidy table (evaluate(..., protocol="raid"))


def raid_frame_of(scores: pd.DataFrame, clean_attack: str = CLEAN) -> pd.DataFrame:
    """Our tidy score rows of one detector (``id, label, attack, score`` and maybe ``domain, model,
    decoding, repetition_penalty``) as RAID's frame: ``model`` "human" for human rows (else the row's
    model, or "machine"), ``attack`` "none" for our clean label, absent keys as nulls."""
    label = scores["label"]
    human = label.isin([0, "human"])
    model = scores["model"] if "model" in scores.columns else pd.Series("machine", index=scores.index)
    frame = pd.DataFrame({
        "id": scores["id"].to_numpy(),
        "domain": scores["domain"].to_numpy() if "domain" in scores.columns else "all domains",
        "attack": scores["attack"].where(scores["attack"] != clean_attack, CLEAN).to_numpy(),
        "model": np.where(human, HUMAN, model.where(model != HUMAN, "machine").fillna("machine")),
        "decoding": scores["decoding"].to_numpy() if "decoding" in scores.columns else None,
        "repetition_penalty": scores["repetition_penalty"].to_numpy() if "repetition_penalty" in scores.columns
        else None,
        "score": pd.to_numeric(scores["score"], errors="coerce").to_numpy(dtype=np.float64),
    })
    return frame


def _strata_draw(rng, strata: np.ndarray, n_boot: int) -> np.ndarray:
    """``n_boot`` rows of indices, each a redraw with replacement within every stratum."""
    out = np.empty((n_boot, len(strata)), dtype=np.int64)
    for s in np.unique(strata):
        pos = np.flatnonzero(strata == s)
        out[:, pos] = pos[rng.integers(0, len(pos), size=(n_boot, len(pos)))]
    return out


def _canonical(frame: pd.DataFrame) -> pd.DataFrame:
    keys = frame[["domain", "attack", "id"]].astype(str)
    return frame.iloc[np.lexsort([keys["id"], keys["attack"], keys["domain"]])]


def auroc_replicates(machine: np.ndarray, m_strata: np.ndarray, human: np.ndarray, h_strata: np.ndarray,
                     n_boot: int, rng) -> np.ndarray:
    """Bootstrap replicates of the AUROC of ``machine`` against ``human`` scores, each side redrawn within its
    strata (domains): the Mann-Whitney statistic from mid-ranks of every replicate at once."""
    from scipy.stats import rankdata

    mi = _strata_draw(rng, m_strata, n_boot)
    hi = _strata_draw(rng, h_strata, n_boot)
    both = np.concatenate([machine[mi], human[hi]], axis=1)
    ranks = rankdata(both, axis=1)
    n_m, n_h = len(machine), len(human)
    return (ranks[:, :n_m].sum(axis=1) - n_m * (n_m + 1) / 2) / (n_m * n_h)


def raid_metrics(scores_df: pd.DataFrame, fprs, *, per_domain: bool = True, clean_attack: str = CLEAN,
                 require_complete: bool = False, epsilon: float = RAID_EPSILON, n_boot: int = 0,
                 confidence: float = 0.95, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """RAID's figures per (detector, attack) in :func:`.evaluate.evaluate`'s columns (``auroc`` and ``tpr``
    per target FPR; RAID defines no others), and every RAID slice per detector (:func:`records_frame`).

    A figure is the slice over every domain, model, decoding and repetition penalty; ``value`` is None
    (NaN) where RAID nulls it (some domain's achieved FPR above the target), ``value_at_achieved_fpr``
    keeps it; ``achieved_fpr``: the clean humans' FPR at RAID's thresholds, over the group's domains.
    Intervals (``n_boot`` > 0): the AUROC's percentile bootstrap interval, machine and human rows redrawn
    within their domains (RAID reports none; a TPR's would refit RAID's search per replicate, and is left
    out). ``require_complete`` (False: a run's failed scores are dropped, as our protocol's ``nan_policy="omit"``)."""
    targets = check_target_fprs(list(fprs))
    rows, slices = [], []
    for det, part in scores_df.groupby("detector", sort=True):
        frame = raid_frame_of(part, clean_attack)
        thresholds, achieved = raid_thresholds(frame, targets, epsilon, per_domain)
        records = raid_scores(frame, thresholds, require_complete=require_complete)
        before = {id(r): {k: (None if v is None else v["accuracy"]) for k, v in r["accuracy"].items()}
                  for r in records}
        records = drop_missed_targets(records, achieved, epsilon)
        table = records_frame({"scores": records})
        table.insert(0, "detector", det)
        slices.append(table)
        clean_h = frame[(frame["model"] == HUMAN) & (frame["attack"] == CLEAN) & frame["score"].notna()]
        n_clean = clean_h.groupby("domain", sort=False).size()
        machine = frame[(frame["model"] != HUMAN)]
        humans = frame[(frame["model"] == HUMAN) & frame["score"].notna()]
        for rec in records:
            if not (rec["domain"] == rec["model"] == rec["decoding"] == rec["repetition_penalty"] == ALL) \
                    or rec["attack"] == ALL:
                continue
            attack = clean_attack if rec["attack"] == CLEAN else rec["attack"]
            group = machine[machine["attack"] == rec["attack"]]
            base = {"detector": det, "attack": attack, "n_machine": int(group["score"].notna().sum()),
                    "n_human": len(humans), "n_pairs": math.nan,
                    "n_dropped_nan": int(group["score"].isna().sum())}
            lo = hi = math.nan
            if n_boot:
                # canonical order (domain, attack, id): the input's row order cannot move an interval
                ok = _canonical(group[group["score"].notna()])
                ref = _canonical(humans)
                rng = np.random.default_rng([seed, zlib.crc32(f"{det}\x1f{attack}".encode())])
                reps = auroc_replicates(ok["score"].to_numpy(), pd.factorize(ok["domain"])[0],
                                        ref["score"].to_numpy(), pd.factorize(ref["domain"])[0], n_boot, rng)
                lo, hi = percentile_intervals([reps], confidence)[0]
            rows.append({**base, "metric": "auroc", "fpr": math.nan, "value": rec["auroc"], "reached": True,
                         "underpowered": False, "achieved_fpr": math.nan, "value_at_achieved_fpr": rec["auroc"],
                         "value_lo": lo, "value_hi": hi})
            for target in targets:
                key = fpr_key(target)
                got = achieved[key]
                pooled = (sum(got[d] * n_clean.get(d, 0) for d in got) / max(int(n_clean.sum()), 1)
                          if isinstance(got, dict) else got)
                value = rec["accuracy"][key]
                rows.append({**base, "metric": "tpr", "fpr": target,
                             "value": math.nan if value is None else value["accuracy"],
                             "reached": value is not None, "underpowered": False, "achieved_fpr": float(pooled),
                             "value_at_achieved_fpr": before[id(rec)][key]})
    out = pd.DataFrame(rows)
    if out.empty:
        raise RaidEvaluationError("scores_df has no machine rows to evaluate")
    out["_fpr"] = out["fpr"].fillna(-1.0)
    clean = out[out["attack"] == clean_attack][["detector", "metric", "_fpr", "value"]]
    out = out.merge(clean.rename(columns={"value": "clean_value"}), on=["detector", "metric", "_fpr"], how="left")
    out["change"] = out["value"] - out["clean_value"]
    for col in ("value_lo", "value_hi", "change_lo", "change_hi"):
        out[col] = out[col].astype(float) if col in out else math.nan
    order = out.assign(_clean=out["attack"] != clean_attack).sort_values(["detector", "_clean", "attack"],
                                                                          kind="stable").index
    out = out.loc[order].drop(columns=["_fpr"]).reset_index(drop=True)
    return out, pd.concat(slices, ignore_index=True)
