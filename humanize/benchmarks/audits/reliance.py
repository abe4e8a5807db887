"""Artifact Reliance Score: does a detector *use* a formatting cue? (artifact-reliance paper, §5.1, §7.2, Table 3)

Per subset, formatting profiles θ_H and θ_M are fitted on the subset's human and
machine documents (:class:`~humanize.attacks.format_profile.FormatProfile`). Each
machine document ``x`` is scored in four variants: the original, ``strip(x)``, the
counterfactual ``impose(strip(x); θ_H)`` and the placebo ``impose(strip(x); θ_M)``
(:class:`~humanize.attacks.format.ImposeFormat` with ``normalize=True``); every
transformed text is checked admissible (same alphanumerics as ``x``).

With ``T_M`` the machine documents the detector calls machine at its threshold
(``score > threshold``, the protocols' convention):

- ``flip_h`` / ``flip_m``: the share of ``T_M`` whose counterfactual / placebo
  falls to ``score <= threshold``; ``flip`` = ARS_net = ``flip_h - flip_m``;
- ``unc`` = Δ_net: the mean over *all* machine documents of ``s(placebo) - s(cf)``,
  in the detector's score units; positive = the human profile moves scores
  toward human more than the placebo does;
- ``rec`` = ``|T_M| / n_machine``; ``flip_strip``: the share of ``T_M`` flipped by
  ``strip`` alone.

Intervals are paired percentile bootstraps over documents (over ``T_M`` for
``flip``, over all machine documents for ``unc``), conditional on the threshold.
"""

from __future__ import annotations

import hashlib
import math
import numbers
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from humanize._split import in_train_split
from humanize.attacks.format import ImposeFormat, StripFormat, is_admissible
from humanize.attacks.format_profile import FormatProfile
from humanize.detectors.base import Detector, check_labels
from humanize.exceptions import InadmissibleTransform
from humanize.text import text_hash

from ..evaluation._inputs import check_fpr
from ..evaluation.bootstrap import check_bootstrap, percentile_interval
from ..evaluation.thresholds import threshold_at_fpr

__all__ = ["OVERALL", "TABLE_COLUMNS", "RelianceResult", "artifact_reliance"]

#: The name of the row pooling every subset.
OVERALL = "overall"
#: The columns of :attr:`RelianceResult.table` (the robustness card reads them).
TABLE_COLUMNS = ("detector", "subset", "n_human", "n_machine", "n_correct", "rec", "flip_h", "flip_m", "flip",
                 "flip_lo", "flip_hi", "unc", "unc_lo", "unc_hi", "flip_strip", "threshold", "threshold_rule",
                 "n_admissible")
#: The machine-document variants scored (the paper's four).
VARIANTS = ("orig", "strip", "cf", "pl")
_SCORE_CHUNK = 512  # texts per detector call
_BOOT_CHUNK = 4_000_000  # replicate x document cells drawn at once


@dataclass
class RelianceResult:
    """The ARS table (one row per subset, plus ``overall``), per-document scores and the threshold rule."""

    table: pd.DataFrame
    documents: pd.DataFrame
    threshold_rule: str

    def summary(self) -> str:
        """A few lines a person can read: flip and unc with their intervals, per detector and subset."""
        lines = [f"threshold: {self.threshold_rule}"]
        for r in self.table.itertuples(index=False):
            lines.append(
                f"{r.detector} / {r.subset}: flip {_fmt(r.flip)} [{_fmt(r.flip_lo)}, {_fmt(r.flip_hi)}] "
                f"(h {_fmt(r.flip_h)}, placebo {_fmt(r.flip_m)}), unc {_fmt(r.unc)} [{_fmt(r.unc_lo)}, "
                f"{_fmt(r.unc_hi)}], rec {r.rec:.3f} ({r.n_correct}/{r.n_machine} machine documents)")
        return "\n".join(lines)


def _fmt(x: float) -> str:
    return "nan" if x is None or not np.isfinite(x) else f"{x:+.3f}"


# -- checking the arguments ---------------------------------------------------------------------
def _detector(detector) -> Detector:
    if isinstance(detector, str):
        from humanize import detectors

        return detectors.get(detector)
    if not isinstance(detector, Detector):
        raise TypeError(f"artifact_reliance: detector must be a Detector or a registered detector name, "
                        f"got {type(detector).__name__}")
    return detector


def _check_by(by, columns) -> tuple:
    if isinstance(by, str):
        by = (by,)
    if by is None or not isinstance(by, (tuple, list)) or not all(isinstance(c, str) for c in by):
        raise TypeError(f"artifact_reliance: by must be a column name or a tuple of column names, got {by!r}")
    missing = [c for c in by if c not in columns]
    if missing:
        raise ValueError(f"artifact_reliance: by names column(s) {missing} that rows lack; columns: {list(columns)}")
    return tuple(by)


def _check_threshold(threshold):
    if threshold is None:
        return None
    if isinstance(threshold, (bool, np.bool_)) or not isinstance(threshold, (numbers.Real, np.number)):
        raise TypeError(f"artifact_reliance: threshold must be a number or None, got {type(threshold).__name__}")
    if not math.isfinite(float(threshold)):
        raise ValueError(f"artifact_reliance: threshold must be finite, got {threshold!r}")
    return float(threshold)


def _check_max(max_per_class):
    if max_per_class is None:
        return None
    if isinstance(max_per_class, (bool, np.bool_)) or not isinstance(max_per_class, (numbers.Integral, np.integer)):
        raise TypeError(f"artifact_reliance: max_per_class must be an int >= 1 or None, got {max_per_class!r}")
    if max_per_class < 1:
        raise ValueError(f"artifact_reliance: max_per_class must be >= 1 (or None for all), got {max_per_class}")
    return int(max_per_class)


def _text_key(text: str) -> str:
    return text_hash(text, size=12)


def _clean_rows(rows, by: tuple, what: str) -> pd.DataFrame:
    """Clean (unattacked) rows as (key, source, label, text, by columns); labels as "human"/"machine"."""
    if not isinstance(rows, pd.DataFrame):
        raise TypeError(f"artifact_reliance: {what} must be a pandas DataFrame in the RAID schema (columns "
                        f"'generation' and 'label'), got {type(rows).__name__}")
    missing = [c for c in ("generation", "label") if c not in rows.columns]
    if missing:
        raise ValueError(f"artifact_reliance: {what} lack column(s) {missing} (RAID schema: 'generation' holds "
                         f"the text, 'label' is human/machine); columns: {list(rows.columns)}")
    df = rows
    if "attack" in df.columns:
        df = df[df["attack"].fillna("none").isin(["none"])]
    bad = [i for i, t in zip(df.index, df["generation"]) if not isinstance(t, str)]
    if bad:
        raise TypeError(f"artifact_reliance: the generation column of {what} must hold str texts; row "
                        f"{bad[0]!r} holds {type(df.loc[bad[0], 'generation']).__name__}")
    if df.empty:
        raise ValueError(f"artifact_reliance: {what} hold no clean (unattacked) documents")
    texts = df["generation"].tolist()
    keys = [_text_key(t) for t in texts]
    ids = [str(i) for i in df["id"]] if "id" in df.columns else keys
    sources = [str(s) for s in df["source_id"]] if "source_id" in df.columns else ids
    out = pd.DataFrame({
        "key": ids, "source": sources, "text_key": keys,
        "label": np.where(check_labels(df["label"], len(df)) == 1, "machine", "human"), "text": texts,
    })
    for c in by:
        out[c] = [str(v) for v in df[c]]
    out["subset"] = ["/".join(v) for v in zip(*(out[c] for c in by))] if by else OVERALL
    return out.sort_values(["subset", "label", "key", "text_key"], kind="stable").reset_index(drop=True)


def _rank(seed: int, key: str) -> int:
    return int.from_bytes(hashlib.blake2b(f"{seed}/{key}".encode(), digest_size=7).digest(), "little")


def _sample(data: pd.DataFrame, max_per_class, seed: int) -> pd.DataFrame:
    """Up to ``max_per_class`` documents per (subset, label), chosen by a seeded hash of each id
    (so the sample does not depend on the rows' order)."""
    if max_per_class is None:
        return data
    rank = pd.Series([_rank(seed, k) for k in data["key"]], index=data.index)
    keep = rank.groupby([data["subset"], data["label"]]).rank(method="first") <= max_per_class
    return data[keep.to_numpy()].reset_index(drop=True)


# -- the four variants --------------------------------------------------------------------------
def _variants(sample: pd.DataFrame, seed: int) -> pd.DataFrame:
    """The machine documents with their strip, counterfactual and placebo texts (profiles per subset)."""
    strip = StripFormat()
    parts = []
    for name, sub in sample.groupby("subset", sort=True):
        human, machine = sub[sub["label"] == "human"], sub[sub["label"] == "machine"].copy()
        if human.empty or machine.empty:
            has = "machine" if human.empty else "human"
            raise ValueError(f"artifact_reliance: subset {name!r} has only {has} documents; every subset needs "
                             f"both (profiles θ_H and θ_M are fitted on each)")
        theta_h = FormatProfile().fit(human["text"].tolist())
        theta_m = FormatProfile().fit(machine["text"].tolist())
        originals = machine["text"].tolist()
        machine["strip"] = [r.text for r in strip.batch(originals)]
        machine["cf"] = [r.text for r in ImposeFormat(theta_h, seed=seed, normalize=True).batch(originals)]
        machine["pl"] = [r.text for r in ImposeFormat(theta_m, seed=seed, normalize=True).batch(originals)]
        for variant in ("strip", "cf", "pl"):
            for o, t in zip(originals, machine[variant]):
                if not is_admissible(o, t):  # the operators check it too; the score rests on it
                    raise InadmissibleTransform(f"artifact_reliance: the {variant} variant of a document in "
                                                f"subset {name!r} changed its words: {o[:60]!r}")
        parts.append(machine)
    return pd.concat(parts, ignore_index=True)


def _score(detector: Detector, texts: Sequence[str]) -> dict[str, float]:
    """Every distinct text scored once, in length-sorted chunks (few calls, little padding)."""
    unique = sorted(set(texts), key=lambda t: (len(t), t))
    out = {}
    for i in range(0, len(unique), _SCORE_CHUNK):
        chunk = unique[i:i + _SCORE_CHUNK]
        values = np.asarray(detector.score(chunk), dtype=np.float64)
        if values.shape != (len(chunk),):
            raise ValueError(f"detector {detector.name!r} returned {values.shape} scores for {len(chunk)} texts")
        out.update(zip(chunk, values.tolist()))
    return out


# -- thresholds and figures ---------------------------------------------------------------------
def _thresholds(humans: pd.DataFrame, subsets: list, fpr: float, threshold, per_domain: bool):
    """The threshold of each subset, and the rule in words."""
    if threshold is not None:
        return {s: threshold for s in subsets}, f"a fixed threshold {threshold:g} given by the user; machine iff " \
                                                f"score > {threshold:g}"
    finite = humans[np.isfinite(humans["s_orig"])]

    def calib(scores, where: str) -> tuple[float, str]:
        if len(scores) == 0:
            raise ValueError(f"artifact_reliance: no finite human score{where} to calibrate the threshold on")
        t = threshold_at_fpr(scores, fpr)
        note = f"{t.n_human} human documents{where}, achieved FPR {t.achieved_fpr:.3f}"
        if t.underpowered:
            note += f" (underpowered: fewer than {math.ceil(1 / fpr)} human documents)"
        return t.threshold, note

    if not per_domain:
        t, note = calib(finite["s_orig"].to_numpy(), " pooled over subsets")
        return {s: t for s in subsets}, f"FPR {fpr:g} on the original scores of {note}; machine iff " \
                                         f"score > {t:.6g}"
    out, notes = {}, []
    for s in subsets:
        out[s], note = calib(finite.loc[finite["subset"] == s, "s_orig"].to_numpy(), f" of subset {s!r}")
        notes.append(note)
    return out, f"FPR {fpr:g} per subset on the original human scores ({'; '.join(notes)}); machine iff score > " \
                f"its subset's threshold"


def _interval(values: np.ndarray, n_boot: int, confidence: float, rng: np.random.Generator) -> tuple:
    """Percentile interval of the mean of ``values`` over documents redrawn with replacement."""
    m = len(values)
    if n_boot == 0 or m == 0:
        return math.nan, math.nan
    reps = np.empty(n_boot)
    step = max(1, _BOOT_CHUNK // m)
    for start in range(0, n_boot, step):
        k = min(step, n_boot - start)
        reps[start:start + k] = values[rng.integers(0, m, size=(k, m))].mean(axis=1)
    return percentile_interval(reps, confidence)


def _figures(docs: pd.DataFrame, n_human: int, n_boot: int, confidence: float, rng) -> dict:
    t = docs["threshold"].to_numpy()
    orig, strip, cf, pl = (docs[f"s_{v}"].to_numpy() for v in VARIANTS)
    correct = np.isfinite(orig) & (orig > t)
    with np.errstate(invalid="ignore"):
        flips = {v: np.isfinite(s) & (s <= t) for v, s in (("h", cf), ("m", pl), ("strip", strip))}
    n_m, n_c = len(docs), int(correct.sum())
    d_flip = (flips["h"][correct].astype(float) - flips["m"][correct])
    both = np.isfinite(pl) & np.isfinite(cf)
    shift = (pl - cf)[both]
    mean = (lambda a: float(a.mean()) if len(a) else math.nan)
    flip_lo, flip_hi = _interval(d_flip, n_boot, confidence, rng)
    unc_lo, unc_hi = _interval(shift, n_boot, confidence, rng)
    return {"n_human": n_human, "n_machine": n_m, "n_correct": n_c, "rec": n_c / n_m if n_m else math.nan,
            "flip_h": mean(flips["h"][correct].astype(float)), "flip_m": mean(flips["m"][correct].astype(float)),
            "flip": mean(d_flip), "flip_lo": flip_lo, "flip_hi": flip_hi,
            "unc": mean(shift), "unc_lo": unc_lo, "unc_hi": unc_hi,
            "flip_strip": mean(flips["strip"][correct].astype(float))}


def _subset_rng(seed: int, subset: str) -> np.random.Generator:
    return np.random.default_rng([seed, _rank(seed, "subset=" + subset)])


# -- the score ----------------------------------------------------------------------------------
def _fit(detector: Detector, data: pd.DataFrame, fit_rows, seed: int) -> tuple[Detector, pd.DataFrame]:
    """A fitted copy of a learnable detector and the rows left to evaluate on."""
    if not detector.learnable:
        if fit_rows is not None:
            raise ValueError(f"artifact_reliance: fit_rows given, but detector {detector.name!r} is not learnable")
        return detector, data
    if fit_rows is None:
        train = np.array([in_train_split(s, seed, 0.5) for s in data["source"]], dtype=bool)
        fit, data = data[train], data[~train].reset_index(drop=True)
        where = "the seeded train half of rows (by source document)"
    else:
        fit = _clean_rows(fit_rows, (), "fit_rows")
        where = "fit_rows"
    if fit["label"].nunique() < 2:
        raise ValueError(f"artifact_reliance: detector {detector.name!r} must be fit, but {where} lack "
                         f"{'human' if (fit['label'] == 'machine').all() else 'machine'} documents")
    fresh = type(detector)(**detector.get_params(deep=False))  # never refit the caller's object
    fresh.fit(fit["text"].tolist(), fit["label"].tolist())
    return fresh, data


def artifact_reliance(detector, rows: pd.DataFrame, *, by=("domain",), fpr: float = 0.05, threshold=None,
                      per_domain: bool = False, n_boot: int = 1000, confidence: float = 0.95, seed: int = 0,
                      max_per_class: int | None = 500, fit_rows: pd.DataFrame | None = None) -> RelianceResult:
    """ARS_net (``flip``), Δ_net (``unc``) and recall (``rec``) of ``detector`` per subset of ``rows``
    (artifact-reliance paper §5.1, Table 3; see the module docstring for the definitions).

    ``rows``: a DataFrame in the RAID schema (``generation``, ``label``; ``id``, ``source_id`` and the
    ``by`` columns where present); attacked rows (``attack`` other than ``"none"``) are left out.
    ``by`` groups rows into subsets (``()``: one subset); the ``overall`` row pools the subsets, each
    document transformed with its own subset's profiles. Up to ``max_per_class`` documents per class
    and subset are drawn by a seeded hash of their ids (paper: 500).

    Threshold: ``threshold`` if given (a number in the detector's score units), else the one at
    ``fpr`` on the human documents' original scores (:func:`threshold_at_fpr`), pooled over subsets,
    or one per subset with ``per_domain=True``. A detector flags a text when ``score > threshold``.

    A learnable detector is fitted (a fresh copy, the caller's object is untouched) on ``fit_rows``
    if given, else on a seeded half of ``rows`` chosen by source document (as the runner splits),
    and evaluated on the other half. NaN scores never count as correct or flipped; ``unc`` averages
    over the documents whose placebo and counterfactual scores are both finite.
    """
    det = _detector(detector)
    if not isinstance(rows, pd.DataFrame):
        _clean_rows(rows, (), "rows")  # raises the clear TypeError
    by = _check_by(by, rows.columns)
    fpr = check_fpr(fpr)
    threshold = _check_threshold(threshold)
    if not isinstance(per_domain, (bool, np.bool_)):
        raise TypeError(f"artifact_reliance: per_domain must be True or False, got {per_domain!r}")
    n_boot, confidence, seed = check_bootstrap(n_boot, confidence, seed)
    max_per_class = _check_max(max_per_class)

    data = _clean_rows(rows, by, "rows")
    det, data = _fit(det, data, fit_rows, seed)
    sample = _sample(data, max_per_class, seed)
    machine = _variants(sample, seed)
    humans = sample[sample["label"] == "human"].copy()

    scores = _score(det, [*humans["text"], *(t for v in VARIANTS for t in machine["text" if v == "orig" else v])])
    humans["s_orig"] = humans["text"].map(scores)
    for v in VARIANTS:
        machine[f"s_{v}"] = machine["text" if v == "orig" else v].map(scores)
    subsets = sorted(machine["subset"].unique())
    per_subset, rule = _thresholds(humans, subsets, fpr, threshold, per_domain)
    machine["threshold"] = machine["subset"].map(per_subset)

    rows_out = []
    groups = [(s, machine[machine["subset"] == s], int((humans["subset"] == s).sum())) for s in subsets]
    if by:
        groups.append((OVERALL, machine, len(humans)))
    for name, docs, n_human in groups:
        figures = _figures(docs, n_human, n_boot, confidence, _subset_rng(seed, name))
        pooled = name != OVERALL or not by or threshold is not None or not per_domain  # else one per subset
        rows_out.append({"detector": det.name, "subset": name, **figures,
                         "threshold": float(docs["threshold"].iloc[0]) if pooled else math.nan,
                         "threshold_rule": rule, "n_admissible": 3 * len(docs)})
    table = pd.DataFrame(rows_out, columns=list(TABLE_COLUMNS))
    with np.errstate(invalid="ignore"):
        machine["correct"] = machine["s_orig"] > machine["threshold"]
        machine["flip_h"] = machine["correct"] & (machine["s_cf"] <= machine["threshold"])
        machine["flip_m"] = machine["correct"] & (machine["s_pl"] <= machine["threshold"])
    documents = machine.rename(columns={"key": "id", "text": "original", "strip": "strip_text", "cf": "cf_text",
                                        "pl": "pl_text"}).drop(columns=["text_key"])
    documents.insert(0, "detector", det.name)
    return RelianceResult(table, documents.reset_index(drop=True), rule)
