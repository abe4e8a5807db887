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
from sklearn.metrics import roc_auc_score

from ._inputs import as_labels, as_scores, check_fpr
from .bootstrap import GroupRows, Sample, check_bootstrap, percentile_intervals
from .metrics import _binary_figures
from .thresholds import DEFAULT_TOLERANCE, Calibration, calibrate

REQUIRED_COLUMNS = ("id", "label", "attack", "detector", "score")
THRESHOLD_METRICS = ("tpr", "accuracy", "precision", "recall", "f1", "asr")
#: every column of evaluate's table after the keys (detector, *by, metric, fpr)
FIGURE_COLUMNS = ("value", "value_lo", "value_hi", "clean_value", "change", "change_lo", "change_hi", "reached",
                  "underpowered", "achieved_fpr", "value_at_achieved_fpr", "n_machine", "n_human", "n_pairs",
                  "n_dropped_nan")
NAN_POLICIES = ("raise", "omit")
#: ``evaluate``'s protocols: ours (exact quantile thresholds, intervals) and RAID's own (:mod:`.raid`)
PROTOCOLS = ("humanize", "raid")


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


class _References:
    """The clean humans a group is compared with: those of the group's domains (cached per domain set)."""

    def __init__(self, humans: pd.DataFrame, has_domain: bool):
        self.humans, self.has_domain, self.cache = humans, has_domain, {}

    def of(self, domains):
        """``(scores, domains or None)`` of the reference humans for a group covering ``domains``."""
        if not self.has_domain:
            return self.humans["score"].to_numpy(), None
        key = frozenset(domains)
        if key not in self.cache:
            href = self.humans[self.humans["domain"].isin(domains)]
            self.cache[key] = href["score"].to_numpy(), href["domain"].to_numpy()
        return self.cache[key]


class _Pairs:
    """Each machine row's clean version (same ``pair_key``) for the attack success rate.

    Looked up by position through an index of the clean rows, built once per detector
    (a ``merge`` per group was the cost); a ``merge`` still serves clean rows sharing a key.
    """

    def __init__(self, clean_m: pd.DataFrame, pair_key: str):
        self.clean_m, self.pair_key = clean_m, pair_key
        self.index = pd.Index(clean_m[pair_key].to_numpy())
        self.unique = self.index.is_unique
        self.scores = clean_m["score"].to_numpy()
        self.domains = clean_m["domain"].to_numpy() if "domain" in clean_m else None

    def of(self, group: pd.DataFrame):
        """``(attacked scores, clean scores, clean domains or None)`` of the group's paired rows."""
        if not self.unique:
            cols = [self.pair_key, "score"] + (["domain"] if self.domains is not None else [])
            pairs = group[[self.pair_key, "score"]].merge(self.clean_m[cols], on=self.pair_key,
                                                          suffixes=("", "_clean"))
            doms = pairs["domain"].to_numpy() if self.domains is not None else None
            return pairs["score"].to_numpy(), pairs["score_clean"].to_numpy(), doms
        pos = self.index.get_indexer(group[self.pair_key].to_numpy())
        keep = pos >= 0
        pos = pos[keep]
        return (group["score"].to_numpy()[keep], self.scores[pos],
                None if self.domains is None else self.domains[pos])


def _asr(pairs, cal):
    attacked, clean, domains = pairs
    if len(attacked) == 0:
        return math.nan, 0
    doms = domains if cal.per_domain else None
    before = cal.predict(clean, doms)
    after = cal.predict(attacked, doms)
    n_before = int(np.count_nonzero(before))
    return (math.nan if n_before == 0 else float(np.count_nonzero(before & ~after) / n_before)), len(attacked)


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


def _machine_rows(machines: pd.DataFrame, unit_of, tcode, dom, clean_scores, pair_key) -> tuple:
    """Per machine row (by position): its source document, threshold pool, clean score and domain,
    looked up once per detector and sliced per group."""
    d = dom(machines)
    keys = machines[pair_key]
    return (keys.map(unit_of).to_numpy(), d.map(lambda x: tcode.get(x, 0)).to_numpy(),
            keys.map(clean_scores).to_numpy(dtype=np.float64), d.to_numpy())


def _group_rows(human_doms, machine_rows, pos, scores) -> GroupRows:
    units, tcodes, clean, doms = machine_rows
    return GroupRows(scores, units[pos], tcodes[pos], clean[pos],
                     np.flatnonzero(np.isin(human_doms, pd.unique(doms[pos]))))


def _add_intervals(drows, groups, clean_of, fprs, sample, n_boot, confidence, rng, paired):
    """Fill value_lo/hi and change_lo/hi of one detector's rows from its bootstrap replicates."""
    reps, deltas = sample.replicates(groups, clean_of, fprs, n_boot, rng, paired)
    values = percentile_intervals([reps[row["_g"]][row["_m"]] for row in drows], confidence)
    with_change = [row for row in drows if row["_m"] in deltas[row["_g"]]]
    changes = percentile_intervals([deltas[row["_g"]][row["_m"]] for row in with_change], confidence)
    for row, (lo, hi) in zip(drows, values):
        row["value_lo"], row["value_hi"] = lo, hi
    for row, (lo, hi) in zip(with_change, changes):
        row["change_lo"], row["change_hi"] = lo, hi


def evaluate(scores_df: pd.DataFrame, fprs=(0.05, 0.01), *, per_domain: bool = True, clean_attack: str = "none",
             by=("attack",), pair_key: str | None = None, tolerance: float = DEFAULT_TOLERANCE,
             nan_policy: str = "raise", n_boot: int = 1000, confidence: float = 0.95, seed: int = 0,
             paired: bool = True, protocol: str = "humanize") -> pd.DataFrame:
    """A tidy table of every figure per ``(detector, *by)`` with the change versus clean.

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

    ``protocol``: "humanize" (the above) or "raid": RAID's own definitions, exactly as its evaluator
    computes them (:mod:`.raid`: searched thresholds with ``>=``, AUROC against every human row of the
    domain, attacked ones included; ``auroc`` and ``tpr`` only, intervals for the AUROC alone; ``by`` the
    attack alone).
    ``result.attrs["protocol"]`` names it.
    """
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}")
    if protocol == "raid":
        return _raid_protocol(scores_df, fprs, per_domain, clean_attack, by, nan_policy, n_boot, confidence, seed)
    fprs = tuple(check_fpr(f, "fprs item") for f in ((fprs,) if isinstance(fprs, (int, float)) else fprs))
    n_boot, confidence, seed = check_bootstrap(n_boot, confidence, seed)
    df, by, pair_key, dropped = _check_frame(scores_df, per_domain, by, pair_key, nan_policy)
    others = [c for c in by if c != "attack"]
    rows = []
    has_dom = "domain" in df
    for det, dfd in df.groupby("detector", sort=True):
        humans = dfd[(dfd["label"] == 0) & (dfd["attack"] == clean_attack)]
        if humans.empty:
            raise ValueError(
                f"detector {det!r} has no clean human scores (label 'human', attack {clean_attack!r}) to calibrate on"
            )
        cals = _calibrations(humans, fprs, per_domain, tolerance)
        machines = dfd[dfd["label"] == 1].reset_index(drop=True)  # a group's index: its rows' positions
        clean_m = machines[machines["attack"] == clean_attack]
        if n_boot:
            sample, human_doms, unit_of, tcode, dom = _sample(humans, machines, per_domain, pair_key)
            clean_scores = clean_m.drop_duplicates(pair_key).set_index(pair_key)["score"]
            machine_rows = _machine_rows(machines, unit_of, tcode, dom, clean_scores, pair_key)
        pairs_of = _Pairs(clean_m, pair_key)
        dropped_det = dropped[dropped["detector"] == det]
        refs = _References(humans, has_dom)
        restricted = {}
        drows, groups, clean_keys, group_keys = [], [], {}, []
        for key, g in machines.groupby(list(by), sort=True, dropna=False):
            key = dict(zip(by, key if isinstance(key, tuple) else (key,)))
            gdom = g["domain"].to_numpy() if has_dom else None
            gdoms = set(gdom) if has_dom else None
            h_scores, h_doms = refs.of(gdoms)
            n_drop = _n_dropped(dropped_det, key, gdoms, clean_attack)
            n_m, n_h = len(g), len(h_scores)
            base = {"detector": det, **key, "n_machine": n_m, "n_human": n_h, "n_dropped_nan": n_drop,
                    "_g": len(groups)}
            other_key = tuple(key[c] for c in others)
            group_keys.append(other_key)
            if key["attack"] == clean_attack:
                clean_keys[other_key] = len(groups)
            g_scores = g["score"].to_numpy()
            groups.append(_group_rows(human_doms, machine_rows, g.index.to_numpy(), g_scores) if n_boot else None)
            y = np.r_[np.ones(n_m, int), np.zeros(n_h, int)]
            yb = y.astype(bool)
            s = np.r_[g_scores, h_scores]
            value = float(roc_auc_score(y, s)) if n_h else math.nan  # both classes present, no NaN
            drows.append({**base, "_m": ("auroc", None), "metric": "auroc", "fpr": math.nan, "value": value,
                          "reached": True, "underpowered": False, "achieved_fpr": math.nan,
                          "value_at_achieved_fpr": value, "n_pairs": math.nan})
            doms = np.r_[gdom, h_doms] if per_domain else None
            pairs = pairs_of.of(g)
            dkey = frozenset(gdoms) if per_domain else None
            for fi, f in enumerate(fprs):
                if per_domain:
                    if (fi, dkey) not in restricted:
                        restricted[fi, dkey] = _restrict(cals[f], sorted(gdoms, key=str))
                    cal = restricted[fi, dkey]
                else:
                    cal = cals[f]
                pred = cal.predict(s, doms)
                figures = {"tpr": float(pred[:n_m].mean())}
                figures.update(_binary_figures(yb, pred) if n_h else {})
                asr, n_pairs = _asr(pairs, cal)
                figures["asr"] = asr
                achieved = float(pred[n_m:].mean()) if n_h else math.nan
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
    out.attrs["protocol"] = "humanize"
    return out


def _raid_protocol(scores_df, fprs, per_domain, clean_attack, by, nan_policy, n_boot, confidence, seed) -> pd.DataFrame:
    from .raid import raid_metrics

    by = (by,) if isinstance(by, str) else tuple(by)
    if by != ("attack",):
        raise ValueError(f"protocol 'raid' groups by the attack alone (RAID's slices are in raid_metrics), got by={by}")
    fprs = tuple(check_fpr(f, "fprs item") for f in ((fprs,) if isinstance(fprs, (int, float)) else fprs))
    df, _, _, dropped = _check_frame(scores_df, per_domain, by, None, nan_policy)
    df = pd.concat([df, dropped], ignore_index=True)  # RAID's own rules say what a missing score does
    n_boot, confidence, seed = check_bootstrap(n_boot, confidence, seed)
    out, _ = raid_metrics(df, fprs, per_domain=per_domain, clean_attack=clean_attack, n_boot=n_boot,
                          confidence=confidence, seed=seed)
    out = out[["detector", "attack", "metric", "fpr", *FIGURE_COLUMNS]]
    out.attrs["omitted_nan"] = {str(k): int(v) for k, v in dropped.groupby("detector").size().items()}
    out.attrs["clean_attack"] = clean_attack
    out.attrs["bootstrap"] = {"n_boot": n_boot, "confidence": confidence, "seed": seed, "paired": False,
                              "figures": "auroc"}
    out.attrs["protocol"] = "raid"
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
