"""``evaluate``: every figure per (detector, attack) from a tidy table of scores.

Input: one row per (detector, attack, text) with columns ``id, label, domain,
attack, detector, score`` (``domain`` needed for per-domain thresholds).
Protocol (RAID Section 5.2, Appendix C; TH-Bench Section 4 metrics):

* thresholds are calibrated per detector on the **clean human** rows
  (``label == "human"`` and ``attack == clean_attack``), per domain, at each
  target FPR, as exact empirical quantiles (:mod:`.thresholds`); the same
  thresholds then judge every attack (the detector does not know the text was
  attacked);
* each group of machine rows (``by``, default the attack) is compared with the
  clean human rows of the domains it covers: AUROC, and at each FPR the TPR
  (RAID's "accuracy"), accuracy / precision / recall / F1 over machine + human
  rows (TH-Bench), and the attack success rate (machine texts detected in their
  clean version and missed in the attacked one, paired on ``pair_key``);
* ``change`` = value - value of the clean group (same detector, other ``by`` keys).

Human rows carrying an attack other than ``clean_attack`` (RAID attacks human
text too) are not used: RAID also calibrates on clean human text only.
"""

from __future__ import annotations

import math
import zlib

import numpy as np
import pandas as pd

from ._inputs import as_labels, as_scores, check_fpr
from .bootstrap import GroupRows, Sample, check_bootstrap, percentile_interval
from .metrics import auroc, binary_metrics
from .thresholds import DEFAULT_TOLERANCE, Calibration, calibrate

REQUIRED_COLUMNS = ("id", "label", "attack", "detector", "score")
THRESHOLD_METRICS = ("tpr", "accuracy", "precision", "recall", "f1", "asr")
#: every column of evaluate's table after the keys (detector, *by, metric, fpr)
FIGURE_COLUMNS = ("value", "value_lo", "value_hi", "clean_value", "change", "change_lo", "change_hi", "reached",
                  "underpowered", "achieved_fpr", "value_at_achieved_fpr", "n_machine", "n_human", "n_pairs",
                  "n_dropped_nan")
NAN_POLICIES = ("raise", "omit")


def _check_frame(scores_df, per_domain, by, pair_key, nan_policy):
    if not isinstance(scores_df, pd.DataFrame):
        raise TypeError(f"scores_df must be a pandas DataFrame, got {type(scores_df).__name__}")
    if nan_policy not in NAN_POLICIES:
        raise ValueError(f"nan_policy must be one of {NAN_POLICIES}, got {nan_policy!r}")
    if isinstance(by, str):
        by = (by,)
    by = tuple(by)
    if "attack" not in by or "detector" in by:
        raise ValueError(f"by must include 'attack' and not 'detector' (detector is always a key), got {by}")
    needed = list(REQUIRED_COLUMNS) + (["domain"] if per_domain else []) + [c for c in by if c != "attack"]
    missing = [c for c in dict.fromkeys(needed) if c not in scores_df.columns]
    if missing:
        raise ValueError(f"scores_df lacks column(s) {missing}; it has {list(scores_df.columns)}")
    if pair_key is None:
        pair_key = "adv_source_id" if "adv_source_id" in scores_df.columns else "id"
    elif pair_key not in scores_df.columns:
        raise ValueError(f"pair_key {pair_key!r} is not a column of scores_df; columns: {list(scores_df.columns)}")
    df = scores_df.copy()
    if pair_key != "id":  # a row without a recorded source is its own source document
        df[pair_key] = df[pair_key].where(df[pair_key].notna(), df["id"])
    df["label"] = as_labels(df["label"], "scores_df['label']")
    score = pd.to_numeric(df["score"], errors="coerce")
    bad = score.isna() & df["score"].notna()
    if bad.any():
        raise TypeError(f"scores_df['score'] holds non-numeric value {df['score'][bad].iloc[0]!r}")
    df["score"] = score.astype(np.float64)
    nan = df["score"].isna()
    if nan.any() and nan_policy == "raise":
        as_scores(df["score"], "scores_df['score']")  # raises with positions
    dropped, df = df[nan], df[~nan]
    dup = df.duplicated(["detector", "attack", "id"])
    if dup.any():
        row = df[dup].iloc[0]
        raise ValueError(
            f"duplicate rows for (detector, attack, id) = ({row['detector']!r}, {row['attack']!r}, {row['id']!r})"
        )
    return df, by, pair_key, dropped


def _calibrations(humans: pd.DataFrame, fprs, per_domain, tolerance) -> dict:
    doms = humans["domain"].to_numpy() if per_domain else None
    return {f: calibrate(humans["score"].to_numpy(), f, doms, per_domain=per_domain, tolerance=tolerance)
            for f in fprs}


def _restrict(cal: Calibration, domains) -> Calibration:
    if not cal.per_domain:
        return cal
    return Calibration(cal.target_fpr, {d: cal.thresholds[d] for d in domains if d in cal.thresholds}, True)


def _asr(group, clean_m, cal, pair_key):
    pairs = group[[pair_key, "score"]].merge(
        clean_m[[pair_key, "score", "domain"] if "domain" in clean_m else [pair_key, "score"]],
        on=pair_key, suffixes=("", "_clean"))
    if pairs.empty:
        return math.nan, 0
    doms = pairs["domain"].to_numpy() if cal.per_domain else None
    before = cal.predict(pairs["score_clean"].to_numpy(), doms)
    after = cal.predict(pairs["score"].to_numpy(), doms)
    n_before = int(before.sum())
    return (math.nan if n_before == 0 else float(np.count_nonzero(before & ~after) / n_before)), len(pairs)


def _n_dropped(dropped: pd.DataFrame, key: dict, domains, clean_attack) -> int:
    """NaN-score rows that would have entered a group's figures: its machine rows and its reference humans."""
    if dropped.empty:
        return 0
    machine = dropped["label"] == 1
    for col, val in key.items():
        machine &= dropped[col] == val
    human = (dropped["label"] == 0) & (dropped["attack"] == clean_attack)
    if domains is not None:
        human &= dropped["domain"].isin(domains)
    return int(machine.sum() + human.sum())


def _sample(humans: pd.DataFrame, machines: pd.DataFrame, per_domain: bool, pair_key: str):
    """The bootstrap's canonical arrays (sorted by domain, then id, so input row order cannot matter)."""
    has_dom = "domain" in humans.columns
    dom = (lambda f: f["domain"].astype(str)) if has_dom else (lambda f: pd.Series("", index=f.index))
    humans = humans.assign(_d=dom(humans), _k=humans["id"].astype(str)).sort_values(["_d", "_k"], kind="stable")
    units = machines.assign(_d=dom(machines), _k=machines[pair_key].astype(str)).sort_values(["_d", "_k"])
    units = units.drop_duplicates(pair_key)
    codes = {d: i for i, d in enumerate(sorted(set(humans["_d"]) | set(units["_d"])))}
    tcode = {d: i for i, d in enumerate(sorted(set(humans["_d"])))} if per_domain else {}
    sample = Sample(humans["score"].to_numpy(), humans["_d"].map(codes).to_numpy(),
                    humans["_d"].map(lambda d: tcode.get(d, 0)).to_numpy(), units["_d"].map(codes).to_numpy())
    unit_of = {k: i for i, k in enumerate(units[pair_key])}
    return sample, humans["_d"].to_numpy(), unit_of, tcode, dom


def _group_rows(human_doms, unit_of, tcode, dom, g, clean_scores, pair_key) -> GroupRows:
    d = dom(g)
    return GroupRows(g["score"].to_numpy(), g[pair_key].map(unit_of).to_numpy(),
                     d.map(lambda x: tcode.get(x, 0)).to_numpy(),
                     g[pair_key].map(clean_scores).to_numpy(dtype=np.float64),
                     np.flatnonzero(np.isin(human_doms, d.unique())))


def _add_intervals(drows, groups, clean_of, fprs, sample, n_boot, confidence, rng, paired):
    """Fill value_lo/hi and change_lo/hi of one detector's rows from its bootstrap replicates."""
    reps, deltas = sample.replicates(groups, clean_of, fprs, n_boot, rng, paired)
    for row in drows:
        gi, key = row["_g"], row["_m"]
        row["value_lo"], row["value_hi"] = percentile_interval(reps[gi][key], confidence)
        if key in deltas[gi]:
            row["change_lo"], row["change_hi"] = percentile_interval(deltas[gi][key], confidence)


def evaluate(scores_df: pd.DataFrame, fprs=(0.05, 0.01), *, per_domain: bool = True, clean_attack: str = "none",
             by=("attack",), pair_key: str | None = None, tolerance: float = DEFAULT_TOLERANCE,
             nan_policy: str = "raise", n_boot: int = 1000, confidence: float = 0.95, seed: int = 0,
             paired: bool = True) -> pd.DataFrame:
    """A tidy table of every figure per (detector, *by) with the change versus clean.

    Columns: ``detector, *by, metric, fpr, value, value_lo, value_hi, clean_value,
    change, change_lo, change_hi, reached, underpowered, achieved_fpr,
    value_at_achieved_fpr, n_machine, n_human, n_pairs, n_dropped_nan``. ``metric`` is
    ``auroc`` (``fpr`` NaN) or one of ``tpr, accuracy, precision, recall, f1, asr``
    at each target ``fpr``. Where the target FPR is not reached (ties among human
    scores, or ``underpowered``: some domain has fewer than ``1 / fpr`` humans)
    ``value`` is NaN, ``reached`` False, and ``value_at_achieved_fpr`` holds the
    figure at the conservative threshold whose FPR is ``achieved_fpr``.

    ``value_lo``/``value_hi``: a ``confidence`` (95%) percentile bootstrap interval
    from ``n_boot`` replicates that redraw documents within each (label, domain)
    stratum, recalibrating the thresholds in each replicate; ``change_lo``/``change_hi``:
    the paired interval of the change (a source document's clean and attacked rows
    are redrawn together; ``paired=False`` gives the unpaired one, for comparison).
    Seeded by ``seed`` and the detector's name; ``n_boot=0`` leaves them NaN.

    ``pair_key`` pairs an attacked machine row with its clean version (attack success
    rate, paired bootstrap): default ``adv_source_id`` when present (RAID), else ``id``.
    ``nan_policy``: "raise" (default) on NaN scores, or "omit" to drop those rows;
    ``n_dropped_nan`` counts the dropped rows behind each figure (its machine rows and
    reference humans), ``result.attrs["omitted_nan"]`` the total per detector.
    """
    fprs = tuple(check_fpr(f, "fprs item") for f in ((fprs,) if isinstance(fprs, (int, float)) else fprs))
    n_boot, confidence, seed = check_bootstrap(n_boot, confidence, seed)
    df, by, pair_key, dropped = _check_frame(scores_df, per_domain, by, pair_key, nan_policy)
    others = [c for c in by if c != "attack"]
    rows = []
    for det, dfd in df.groupby("detector", sort=True):
        humans = dfd[(dfd["label"] == 0) & (dfd["attack"] == clean_attack)]
        if humans.empty:
            raise ValueError(
                f"detector {det!r} has no clean human scores (label 'human', attack {clean_attack!r}) to calibrate on"
            )
        cals = _calibrations(humans, fprs, per_domain, tolerance)
        machines = dfd[dfd["label"] == 1]
        clean_m = machines[machines["attack"] == clean_attack]
        sample, human_doms, unit_of, tcode, dom = _sample(humans, machines, per_domain, pair_key)
        clean_scores = clean_m.drop_duplicates(pair_key).set_index(pair_key)["score"]
        drows, groups, clean_keys, group_keys = [], [], {}, []
        for key, g in machines.groupby(list(by), sort=True, dropna=False):
            key = dict(zip(by, key if isinstance(key, tuple) else (key,)))
            href = humans[humans["domain"].isin(set(g["domain"]))] if "domain" in dfd else humans
            n_drop = _n_dropped(dropped[dropped["detector"] == det], key,
                                set(g["domain"]) if "domain" in dfd else None, clean_attack)
            base = {"detector": det, **key, "n_machine": len(g), "n_human": len(href), "n_dropped_nan": n_drop,
                    "_g": len(groups)}
            other_key = tuple(key[c] for c in others)
            group_keys.append(other_key)
            if key["attack"] == clean_attack:
                clean_keys[other_key] = len(groups)
            groups.append(_group_rows(human_doms, unit_of, tcode, dom, g, clean_scores, pair_key))
            y = np.r_[np.ones(len(g), int), np.zeros(len(href), int)]
            s = np.r_[g["score"].to_numpy(), href["score"].to_numpy()]
            value = auroc(s, y) if len(href) else math.nan
            drows.append({**base, "_m": ("auroc", None), "metric": "auroc", "fpr": math.nan, "value": value,
                          "reached": True, "underpowered": False, "achieved_fpr": math.nan,
                          "value_at_achieved_fpr": value, "n_pairs": math.nan})
            doms = np.r_[g["domain"].to_numpy(), href["domain"].to_numpy()] if per_domain else None
            for fi, f in enumerate(fprs):
                cal = _restrict(cals[f], sorted(set(g["domain"]), key=str)) if per_domain else cals[f]
                pred = cal.predict(s, doms)
                figures = {"tpr": float(pred[: len(g)].mean())}
                figures.update(binary_metrics(y, pred) if len(href) else {})
                asr, n_pairs = _asr(g, clean_m, cal, pair_key)
                figures["asr"] = asr
                achieved = float(pred[len(g):].mean()) if len(href) else math.nan
                for metric in THRESHOLD_METRICS:
                    v = figures.get(metric, math.nan)
                    drows.append({**base, "_m": (metric, fi), "metric": metric, "fpr": f,
                                  "value": v if cal.reached else math.nan, "reached": cal.reached,
                                  "underpowered": cal.underpowered, "achieved_fpr": achieved,
                                  "value_at_achieved_fpr": v, "n_pairs": n_pairs if metric == "asr" else math.nan})
        if n_boot:
            rng = np.random.default_rng([seed, zlib.crc32(str(det).encode())])
            clean_of = [clean_keys.get(k) for k in group_keys]
            _add_intervals(drows, groups, clean_of, fprs, sample, n_boot, confidence, rng, paired)
        rows.extend(drows)
    out = pd.DataFrame(rows).drop(columns=["_g", "_m"], errors="ignore")
    if out.empty:
        raise ValueError("scores_df has no machine rows to evaluate")
    for col in ("value_lo", "value_hi", "change_lo", "change_hi"):
        out[col] = out[col].astype(float) if col in out else math.nan
    out["_fpr"] = out["fpr"].fillna(-1.0)
    keys = ["detector", *others, "metric", "_fpr"]
    clean = out[out["attack"] == clean_attack][keys + ["value"]].rename(columns={"value": "clean_value"})
    out = out.merge(clean, on=keys, how="left")
    out["change"] = out["value"] - out["clean_value"]
    out.loc[out["value"].isna(), ["value_lo", "value_hi"]] = math.nan
    out.loc[out["change"].isna(), ["change_lo", "change_hi"]] = math.nan
    cols = ["detector", *by, "metric", "fpr", *FIGURE_COLUMNS]
    # clean rows first within each detector, then the attacks in name order
    order = out.assign(_clean=out["attack"] != clean_attack).sort_values(
        ["detector", "_clean", *by], kind="stable").index
    out = out.loc[order, cols].reset_index(drop=True)
    out.attrs["omitted_nan"] = {str(k): int(v) for k, v in dropped.groupby("detector").size().items()}
    out.attrs["clean_attack"] = clean_attack
    out.attrs["bootstrap"] = {"n_boot": n_boot, "confidence": confidence, "seed": seed, "paired": paired}
    return out


def threshold_table(scores_df: pd.DataFrame, fprs=(0.05, 0.01), *, per_domain: bool = True,
                    clean_attack: str = "none", tolerance: float = DEFAULT_TOLERANCE) -> pd.DataFrame:
    """The calibrated thresholds (RAID Table 13): one row per (detector, domain, fpr)."""
    fprs = tuple(check_fpr(f, "fprs item") for f in ((fprs,) if isinstance(fprs, (int, float)) else fprs))
    df, _, _, _ = _check_frame(scores_df, per_domain, ("attack",), None, "raise")
    rows = []
    for det, dfd in df.groupby("detector", sort=True):
        humans = dfd[(dfd["label"] == 0) & (dfd["attack"] == clean_attack)]
        if humans.empty:
            raise ValueError(f"detector {det!r} has no clean human scores to calibrate on")
        for f, cal in _calibrations(humans, fprs, per_domain, tolerance).items():
            for d, t in cal.thresholds.items():
                rows.append({"detector": det, "domain": d, "fpr": f, "threshold": t.threshold,
                             "achieved_fpr": t.achieved_fpr, "reached": t.reached,
                             "underpowered": t.underpowered, "n_human": t.n_human,
                             "n_false_positives": t.n_false_positives})
    return pd.DataFrame(rows)


def to_wide(table: pd.DataFrame, values=("value", "change")) -> pd.DataFrame:
    """One row per (detector, attack, ...) and a column per figure, e.g. ``tpr@0.05``,
    ``tpr@0.05 change``: the layout of RAID Table 6 / TH-Bench Table 1."""
    if isinstance(values, str):
        values = (values,)
    keys = [c for c in table.columns if c not in {"metric", "fpr", *FIGURE_COLUMNS}]
    t = table.copy()
    t["figure"] = [m if pd.isna(f) else f"{m}@{f:g}" for m, f in zip(t["metric"], t["fpr"])]
    parts = []
    for v in values:
        w = t.pivot_table(index=keys, columns="figure", values=v, aggfunc="first", dropna=False, sort=False)
        if v != "value":
            w.columns = [f"{c} {v}" for c in w.columns]
        parts.append(w)
    wide = pd.concat(parts, axis=1)
    wide.columns.name = None
    return wide.reset_index()
