"""Dataset artifact audit: does a dataset carry a content-free cue that separates its classes?
(artifact-reliance paper, §4.1 "Surface probe", Table 1 and Appendix A.)

Per subset and overall, on balanced samples of up to ``max_per_class`` documents per class:

- ``probe_f1`` / ``probe_auroc``: the 27-feature surface probe
  (:mod:`humanize.detectors.surface`), 5-fold stratified cross-validation, out-of-fold
  macro-F1 and AUROC (Table 1 "Raw");
- ``norm_f1``: the same probe on format-normalised text (:class:`~humanize.attacks.format.StripFormat`,
  §5.1), same folds (Table 1 "Norm."), and ``delta_f1`` = raw - norm with a paired interval;
- ``fmt_auroc``: the four formatting features alone and ``len_auroc``: document length
  (words) alone -- each an out-of-fold AUROC of the same cross-validated logistic regression
  on those features (our reading of the paper's "AUCs of the four formatting features": one
  classifier over the four, evaluated like the probe);
- ``tfidf_f1``: the lexical TF-IDF reference on the raw text, same folds;
- ``features``: each feature's univariate AUROC, ranked, so a reader sees *which* cue it is.

Intervals: ``confidence`` percentile bootstrap over the out-of-fold predictions
(:mod:`.audit_probe`).
"""

from __future__ import annotations

import math
import numbers
import zlib
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .audit_probe import bootstrap_figures, out_of_fold, probe_model, tfidf_model, univariate_aurocs
from ..evaluation.bootstrap import check_bootstrap

OVERALL = "overall"
ALL = "all"
#: the generator column: human rows carry "human" there, so they are matched on the other ``by`` columns
GENERATOR_COLUMN = "model"
LENGTH_FEATURE = "n_words"
#: summary() calls a subset's formatting an artifact when both hold (our thresholds; in the paper's
#: Table 1 the artifact subsets have fmt-only AUC 0.94-1.00 and lose 0.20-0.27 F1, the clean ones
#: 0.52-0.55 and at most 0.027)
ARTIFACT_AUROC = 0.75
ARTIFACT_DROP = 0.05
FIGURES = ("probe_f1", "probe_auroc", "norm_f1", "delta_f1", "fmt_auroc", "len_auroc", "tfidf_f1")


@dataclass
class AuditResult:
    """The audit's tables: ``table`` (one row per subset, Table 1 layout) and ``features``
    (each feature's univariate AUROC per subset, ranked); ``params``: the settings used."""

    table: pd.DataFrame
    features: pd.DataFrame
    params: dict = field(default_factory=dict)

    def top_features(self, k: int = 10, subset: str = OVERALL) -> pd.DataFrame:
        """The ``k`` features that separate ``subset``'s classes best."""
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
            raise ValueError(f"k must be a positive int, got {k!r}")
        known = list(dict.fromkeys(self.features["subset"]))
        if subset not in known:
            raise ValueError(f"unknown subset {subset!r}; the audit has {known}")
        sel = self.features[self.features["subset"] == subset]
        return sel[sel["rank"] <= k].reset_index(drop=True)

    def to_report(self, top: int = 10) -> dict[str, pd.DataFrame]:
        """Frames for :func:`humanize.benchmarks.reporting.report.render_markdown` / ``export_report``:
        ``audit`` (the table) and ``audit_features`` (the ``top`` features of each subset)."""
        if isinstance(top, bool) or not isinstance(top, numbers.Integral) or top < 1:
            raise ValueError(f"top must be a positive int, got {top!r}")
        table = self.table.set_index("subset")
        features = self.features[self.features["rank"] <= top].set_index(["subset", "rank"])
        p = self.params
        about = (f"Surface probe audit (artifact-reliance paper §4.1): balanced samples of up to "
                 f"{p.get('max_per_class')} documents per class, {p.get('folds')}-fold stratified "
                 f"cross-validation, `_lo`/`_hi`: {p.get('confidence', 0.95):.0%} percentile bootstrap "
                 f"(B = {p.get('n_boot')}) over the out-of-fold predictions, seed {p.get('seed')}.")
        table.attrs.update(about=about, note=(
            "probe_f1/probe_auroc: 27 content-free features; norm_f1: the same after format normalisation "
            "(strip_format); delta_f1 = probe_f1 - norm_f1; fmt_auroc: the four formatting features alone; "
            "len_auroc: document length (words) alone; tfidf_f1: TF-IDF word 1-2 grams (lexical reference). "
            "A subset is machine rows of one generator against the human rows of its domain."))
        features.attrs.update(about=about, note=(
            f"The {top} features that separate each subset best: univariate AUROC (machine = positive), "
            "separation = |AUROC - 0.5|."))
        return {"audit": table, "audit_features": features}

    def summary(self) -> str:
        """One paragraph in plain English: what separates the classes overall, and where."""
        row = self.table[self.table["subset"] == OVERALL].iloc[0]
        if not np.isfinite(row["probe_f1"]):
            return f"The audit could not fit the probe on the whole dataset: {row['note']}."
        parts = [f"Overall ({row['n_human']} human and {row['n_machine']} machine documents), the content-free "
                 f"surface probe reaches macro-F1 {_ci(row, 'probe_f1')} (AUROC {row['probe_auroc']:.2f})."]
        fmt, drop = row["fmt_auroc"], row["delta_f1"]
        if fmt >= ARTIFACT_AUROC and drop >= ARTIFACT_DROP:
            parts.append(f"The four formatting features alone separate the classes (AUROC {fmt:.2f}) and "
                         f"normalising the format costs the probe {_ci(row, 'delta_f1')} macro-F1: "
                         "a formatting artifact.")
        elif fmt >= ARTIFACT_AUROC:
            parts.append(f"The four formatting features alone separate the classes (AUROC {fmt:.2f}), but "
                         f"normalising the format costs the probe only {drop:.2f} macro-F1: other surface "
                         "cues carry the same signal.")
        else:
            parts.append(f"Formatting does not separate the classes (formatting-only AUROC {fmt:.2f}; "
                         f"normalising the format changes the probe's macro-F1 by {drop:.2f}).")
        length = row["len_auroc"]
        parts.append(f"Document length alone {'separates them' if length >= ARTIFACT_AUROC else 'does not'} "
                     f"(AUROC {length:.2f}).")
        top = self.top_features(1).iloc[0]
        parts.append(f"The strongest single cue is {top['feature']} ({top['group']}, AUROC {top['auroc']:.2f}, "
                     f"{top['direction']}).")
        if np.isfinite(row["tfidf_f1"]):
            parts.append(f"The lexical TF-IDF reference reaches macro-F1 {row['tfidf_f1']:.2f}.")
        subsets = self.table[self.table["subset"] != OVERALL]
        flagged = subsets[(subsets["fmt_auroc"] >= ARTIFACT_AUROC) & (subsets["delta_f1"] >= ARTIFACT_DROP)]
        if len(subsets):
            parts.append(f"Subsets with the formatting artifact: {', '.join(flagged['subset'])}."
                         if len(flagged) else "No subset shows the formatting artifact.")
        return " ".join(parts)


def _ci(row, name: str) -> str:
    lo, hi = row[f"{name}_lo"], row[f"{name}_hi"]
    return f"{row[name]:.2f}" + (f" [{lo:.2f}, {hi:.2f}]" if np.isfinite(lo) else "")


def _check_args(rows, by, max_per_class, folds, n_boot, confidence, seed, tfidf) -> tuple:
    if not isinstance(rows, pd.DataFrame):
        raise TypeError(f"rows must be a pandas DataFrame in the RAID schema, got {type(rows).__name__}")
    if by is None:
        by = ()
    if isinstance(by, str):
        by = (by,)
    try:
        by = tuple(by)
    except TypeError:
        raise TypeError(f"by must be a column name or a sequence of them, got {type(by).__name__}") from None
    if not all(isinstance(c, str) for c in by) or len(set(by)) != len(by):
        raise ValueError(f"by must be distinct column names, got {by!r}")
    missing = [c for c in ("generation", "label", *by) if c not in rows.columns]
    if missing:
        raise ValueError(f"rows lack the column(s) {missing}; they have {list(rows.columns)}")
    bad = sorted(set(map(str, rows["label"].unique())) - {"human", "machine"})
    if bad:
        raise ValueError(f"label must be 'human' or 'machine', found {bad[:10]}")
    nontext = [i for i, t in enumerate(rows["generation"].tolist()) if not isinstance(t, str)]
    if nontext:
        raise ValueError(f"{len(nontext)} row(s) have a non-text generation (first: position {nontext[0]}, "
                         f"{rows['generation'].iloc[nontext[0]]!r})")
    for name, value, low in (("max_per_class", max_per_class, 2), ("folds", folds, 2)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
            raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
    if not isinstance(tfidf, (bool, np.bool_)):
        raise TypeError(f"tfidf must be True or False, got {tfidf!r}")
    n_boot, confidence, seed = check_bootstrap(n_boot, confidence, seed)
    return by, int(max_per_class), int(folds), n_boot, confidence, seed, bool(tfidf)


def _subsets(rows: pd.DataFrame, by: tuple) -> list[tuple[str, dict, np.ndarray, np.ndarray]]:
    """(name, by values, human mask, machine mask): each ``by`` combination of the machine rows
    against the human rows that share its values on the ``by`` columns other than ``model``;
    then the overall subset (every row)."""
    human = (rows["label"] == "human").to_numpy()
    machine = ~human
    out = []
    if by:
        keys = rows.loc[machine, list(by)].astype(str).drop_duplicates().sort_values(list(by))
        as_str = {c: rows[c].astype(str).to_numpy() for c in by}
        for values in keys.itertuples(index=False):
            key = dict(zip(by, values))
            m_mask, h_mask = machine.copy(), human.copy()
            for col, value in key.items():
                m_mask &= as_str[col] == value
                if col != GENERATOR_COLUMN:
                    h_mask &= as_str[col] == value
            out.append((" / ".join(values), key, h_mask, m_mask))
    out.append((OVERALL, {c: ALL for c in by}, human, machine))
    return out


def _sub_seed(seed: int, name: str) -> np.random.SeedSequence:
    return np.random.SeedSequence([seed, zlib.crc32(name.encode("utf-8"))])


def _sample(texts: np.ndarray, mask: np.ndarray, n: int, rng: np.random.Generator) -> list[str]:
    """``n`` distinct texts of ``mask`` (a text repeated within a class counts once), drawn in an
    order-free way: the pool is sorted before the seeded draw."""
    pool = np.array(sorted(set(texts[mask].tolist())), dtype=object)
    pick = np.sort(rng.choice(len(pool), size=n, replace=False))
    return pool[pick].tolist()


def _features(texts: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Surface features of ``texts`` and of their format-normalised versions, indexed by text."""
    from humanize.attacks.format import StripFormat
    from humanize.detectors.surface import SurfaceFeatures

    strip = StripFormat()
    raw = SurfaceFeatures().transform(texts)
    norm = SurfaceFeatures().transform([strip(t) for t in texts])
    raw.index = norm.index = pd.Index(texts, dtype=object)
    return raw, norm


def audit_dataset(rows: pd.DataFrame, *, by=("domain", "model"), max_per_class: int = 10_000, folds: int = 5,
                  n_boot: int = 1000, confidence: float = 0.95, seed: int = 0, tfidf: bool = True) -> AuditResult:
    """Audit ``rows`` (RAID schema + ``label``) for content-free cues, per subset and overall.

    A subset is one combination of the ``by`` columns among the machine rows (e.g. one domain x
    generator), audited against the human rows with the same values on the ``by`` columns other
    than ``model`` (the human rows of that domain); ``overall`` pits every machine row against
    every human row. Texts repeated within a class count once. Each subset draws a balanced
    sample of min(humans, machines, ``max_per_class``) per class, seeded by ``seed`` and the
    subset's name, so the result does not depend on row order. A subset with fewer than
    ``folds`` documents in a class is reported with NaN figures and a ``note``; a TF-IDF fit that
    finds no vocabulary (min_df=2) gives NaN ``tfidf_f1`` and a note.
    """
    from humanize.detectors.surface import FEATURE_GROUPS, FEATURE_NAMES, FORMATTING_FEATURES

    by, max_per_class, folds, n_boot, confidence, seed, tfidf = _check_args(
        rows, by, max_per_class, folds, n_boot, confidence, seed, tfidf)
    texts = rows["generation"].to_numpy(dtype=object)
    plans = []
    for name, key, h_mask, m_mask in _subsets(rows, by):
        n_h, n_m = len(set(texts[h_mask].tolist())), len(set(texts[m_mask].tolist()))
        n = min(n_h, n_m, max_per_class)
        sample_rng, fold_rng, boot_rng = (np.random.default_rng(s) for s in _sub_seed(seed, name).spawn(3))
        humans = _sample(texts, h_mask, n, sample_rng) if n else []
        machines = _sample(texts, m_mask, n, sample_rng) if n else []
        plans.append((name, key, n_h, n_m, humans, machines, int(fold_rng.integers(2**31 - 1)), boot_rng))
    union = sorted({t for p in plans for t in (*p[4], *p[5])})
    raw, norm = _features(union) if union else (None, None)
    group_of = {f: g for g, names in FEATURE_GROUPS.items() for f in names}
    table, feature_frames = [], []
    for name, key, n_h, n_m, humans, machines, fold_seed, boot_rng in plans:
        docs = humans + machines
        y = np.r_[np.zeros(len(humans), np.int64), np.ones(len(machines), np.int64)]
        row = {"subset": name, **key, "n_human": len(humans), "n_machine": len(machines)}
        row.update({f"{f}{s}": math.nan for f in FIGURES for s in ("", "_lo", "_hi")})
        notes = []
        if len(humans) >= 1:
            ranked = univariate_aurocs(raw.loc[docs, list(FEATURE_NAMES)], y, group_of)
            feature_frames.append(ranked.assign(subset=name))
        if len(humans) < folds:
            notes.append(f"too few documents for {folds}-fold cross-validation ({n_h} distinct human, "
                         f"{n_m} distinct machine; each class needs at least {folds})")
        else:
            X, Xn = raw.loc[docs].reset_index(drop=True), norm.loc[docs].reset_index(drop=True)
            oof = {name_: out_of_fold(probe_model(), data, y, folds, fold_seed) for name_, data in (
                ("probe", X), ("norm", Xn), ("fmt", X[list(FORMATTING_FEATURES)]), ("len", X[[LENGTH_FEATURE]]))}
            f1_of = {"probe_f1": oof["probe"], "norm_f1": oof["norm"]}
            if tfidf:
                try:
                    f1_of["tfidf_f1"] = out_of_fold(tfidf_model(), np.array(docs, dtype=object), y, folds, fold_seed)
                except ValueError as err:  # no term in >= 2 documents of a training fold
                    notes.append(f"TF-IDF not fitted: {' '.join(str(err).split())}")
            figures = bootstrap_figures(
                y, f1_of, {"probe_auroc": oof["probe"], "fmt_auroc": oof["fmt"], "len_auroc": oof["len"]},
                {"delta_f1": ("probe_f1", "norm_f1")}, n_boot=n_boot, confidence=confidence, rng=boot_rng)
            for fig, (value, lo, hi) in figures.items():
                row.update({fig: value, f"{fig}_lo": lo, f"{fig}_hi": hi})
        row.update(available_human=n_h, available_machine=n_m, note="; ".join(notes))
        table.append(row)
    columns = ["subset", *by, "n_human", "n_machine", *(f"{f}{s}" for f in FIGURES for s in ("", "_lo", "_hi")),
               "available_human", "available_machine", "note"]
    features = (pd.concat(feature_frames, ignore_index=True) if feature_frames else
                pd.DataFrame(columns=["feature", "group", "auroc", "separation", "direction", "rank", "subset"]))
    features = features[["subset", "feature", "group", "auroc", "separation", "direction", "rank"]]
    params = dict(by=list(by), max_per_class=max_per_class, folds=folds, n_boot=n_boot, confidence=confidence,
                  seed=seed, tfidf=tfidf)
    return AuditResult(pd.DataFrame(table, columns=columns), features, params)
