"""Stratified, seeded bootstrap replicates of :func:`evaluate`'s figures.

The resampling unit is the document. Human texts are redrawn within each domain;
machine texts are redrawn by *source document* (``pair_key``) within each domain,
so a source's clean and attacked versions enter a replicate together and every
change versus clean gets a **paired** interval. Each replicate recalibrates the
per-domain thresholds on its own resampled humans, because the threshold is
estimated from the same humans whose FPR it controls.

A replicate is a vector of counts (how often each document was drawn), so every
figure is a weighted sum, computed for a chunk of replicates at once with numpy.
The interval is the percentile interval of the replicates. Randomness comes only
from the ``numpy.random.Generator`` passed in (never the global state).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from .thresholds import allowed_false_positives

#: replicate x document cells drawn per chunk: bounds memory on large runs
CHUNK_CELLS = 4_000_000


def check_bootstrap(n_boot, confidence, seed) -> tuple[int, float, int]:
    """Validated ``(n_boot, confidence, seed)``: n_boot >= 0 (0 = no intervals), 0 < confidence < 1, seed >= 0."""
    if isinstance(n_boot, (bool, np.bool_)) or not isinstance(n_boot, (numbers.Integral, np.integer)):
        raise TypeError(f"n_boot must be an int >= 0 (0 = no intervals), got {type(n_boot).__name__}")
    if n_boot < 0 or n_boot == 1:
        raise ValueError(f"n_boot must be 0 (no intervals) or at least 2, got {n_boot}")
    if isinstance(confidence, (bool, np.bool_)) or not isinstance(confidence, (numbers.Real, np.number)):
        raise TypeError(f"confidence must be a number in (0, 1), got {type(confidence).__name__}")
    if not 0.0 < float(confidence) < 1.0:
        raise ValueError(f"confidence must be in (0, 1), e.g. 0.95; got {confidence!r}")
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (numbers.Integral, np.integer)) or seed < 0:
        raise TypeError(f"seed must be an int >= 0, got {seed!r}")
    return int(n_boot), float(confidence), int(seed)


def stratified_counts(rng: np.random.Generator, strata: np.ndarray, n_rep: int) -> np.ndarray:
    """``(n_rep, len(strata))`` draw counts: each replicate redraws every stratum's members with
    replacement, keeping the stratum sizes (so per-domain sample sizes stay fixed)."""
    out = np.zeros((n_rep, len(strata)))
    for code in np.unique(strata):
        idx = np.flatnonzero(strata == code)
        m = len(idx)
        draws = rng.integers(0, m, size=(n_rep, m)) + (np.arange(n_rep) * m)[:, None]
        out[:, idx] = np.bincount(draws.ravel(), minlength=n_rep * m).reshape(n_rep, m)
    return out


def weighted_auroc(machine_scores, machine_w, human_scores, human_w) -> np.ndarray:
    """AUROC per replicate (row of the weight matrices): the weighted Mann-Whitney statistic,
    ties counting 1/2, equal to ``roc_auc_score`` on the documents repeated by their weights."""
    return _auroc_from_cdf(*_human_cdf(human_scores, human_w), machine_scores, machine_w)


def _human_cdf(human_scores, human_w) -> tuple[np.ndarray, np.ndarray]:
    """Sorted human scores and, per replicate, the cumulative human weight up to each (0 first)."""
    order = np.argsort(human_scores, kind="stable")
    hs = human_scores[order]
    cum = np.zeros((human_w.shape[0], len(hs) + 1))
    np.cumsum(human_w[:, order], axis=1, out=cum[:, 1:])
    return hs, cum


def _auroc_from_cdf(hs, cum, machine_scores, machine_w) -> np.ndarray:
    below = cum[:, np.searchsorted(hs, machine_scores, "left")]  # human weight strictly below
    upto = cum[:, np.searchsorted(hs, machine_scores, "right")]  # ... below or tied
    num = (machine_w * (below + upto)).sum(axis=1) / 2
    den = machine_w.sum(axis=1) * cum[:, -1]
    with np.errstate(invalid="ignore", divide="ignore"):
        return num / den


def weighted_thresholds(human_scores, human_w, fpr: float) -> np.ndarray:
    """Per replicate, the (k+1)-th largest of the resampled human scores, ``k = floor(fpr * n)``:
    the threshold :func:`threshold_at_fpr` would compute on that replicate's sample."""
    k = allowed_false_positives(fpr, len(human_scores))
    order = np.argsort(-human_scores, kind="stable")
    desc = human_scores[order]
    starts = np.r_[0, np.flatnonzero(np.diff(desc) != 0) + 1]  # runs of equal scores
    cum = np.cumsum(np.add.reduceat(human_w[:, order], starts, axis=1), axis=1)
    pos = np.count_nonzero(cum < k + 1 - 1e-9, axis=1)
    return desc[starts][np.minimum(pos, len(starts) - 1)]


def percentile_interval(reps: np.ndarray, confidence: float) -> tuple[float, float]:
    """The percentile interval of the finite replicates; NaN when none is finite."""
    finite = reps[np.isfinite(reps)]
    if len(finite) == 0:
        return math.nan, math.nan
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(finite, [alpha, 1 - alpha])
    return float(lo), float(hi)


def percentile_intervals(reps: list, confidence: float) -> list[tuple[float, float]]:
    """:func:`percentile_interval` of each replicate vector (all of one length), with one
    ``np.quantile`` call over the vectors whose replicates are all finite."""
    if not reps:
        return []
    stacked = np.stack(reps)
    finite = np.isfinite(stacked).all(axis=1)
    alpha = (1 - confidence) / 2
    out = [None] * len(reps)
    if finite.any():
        lo, hi = np.quantile(stacked[finite], [alpha, 1 - alpha], axis=1)
        for i, a, b in zip(np.flatnonzero(finite), lo.tolist(), hi.tolist()):
            out[i] = (a, b)
    for i in np.flatnonzero(~finite):
        out[i] = percentile_interval(stacked[i], confidence)
    return out


@dataclass
class GroupRows:
    """The machine rows of one evaluate group, as indices into the detector's arrays."""

    scores: np.ndarray  # machine scores
    units: np.ndarray  # each row's source document (index into the unit strata)
    tcodes: np.ndarray  # each row's threshold pool (domain code; 0 when pooled)
    clean_scores: np.ndarray  # each row's clean version's score (NaN: no pair), for the ASR
    humans: np.ndarray  # the reference humans (indices): those of the group's domains


@dataclass
class Sample:
    """What one detector's replicates redraw: clean humans and machine source documents."""

    human_scores: np.ndarray
    human_strata: np.ndarray  # domain code per human (stratum)
    human_tcodes: np.ndarray  # threshold pool per human
    unit_strata: np.ndarray  # domain code per machine source document

    def _world(self, rng, n_rep: int, fprs) -> tuple:
        v = stratified_counts(rng, self.human_strata, n_rep)
        w = stratified_counts(rng, self.unit_strata, n_rep)
        pools = [np.flatnonzero(self.human_tcodes == c) for c in range(int(self.human_tcodes.max()) + 1)]
        thresholds = [np.stack([weighted_thresholds(self.human_scores[p], v[:, p], f) if len(p)
                                else np.full(n_rep, np.inf) for p in pools], axis=1) for f in fprs]
        return v, w, thresholds, {}

    def _humans(self, world, humans: np.ndarray, n_fprs: int) -> tuple:
        """The reference humans' part of the figures, shared by the groups with the same humans:
        their score distribution per replicate, their weight, their false positives per FPR."""
        v, _, thresholds, cache = world
        key = humans.tobytes()
        if key not in cache:
            vh, sh = v[:, humans], self.human_scores[humans]
            tcodes = self.human_tcodes[humans]
            fps = [(vh * (sh > thresholds[i][:, tcodes])).sum(axis=1) for i in range(n_fprs)]
            cache[key] = (*_human_cdf(sh, vh), vh.sum(axis=1), fps)
        return cache[key]

    def _figures(self, world, g: GroupRows, fprs) -> dict:
        _, w, thresholds, _ = world
        hs, cum, n_h, fps = self._humans(world, g.humans, len(fprs))
        wg = w[:, g.units]
        out = {("auroc", None): _auroc_from_cdf(hs, cum, g.scores, wg)}
        n_m = wg.sum(axis=1)
        paired = ~np.isnan(g.clean_scores)
        with np.errstate(invalid="ignore", divide="ignore"):
            for i, _ in enumerate(fprs):
                t = thresholds[i]
                tg = t[:, g.tcodes]
                pred = g.scores > tg
                tp = (wg * pred).sum(axis=1)
                fp = fps[i]
                before = (g.clean_scores > tg) & paired
                out.update({
                    ("tpr", i): tp / n_m, ("recall", i): tp / n_m,
                    ("accuracy", i): (tp + n_h - fp) / (n_m + n_h),
                    ("precision", i): tp / (tp + fp),
                    ("f1", i): 2 * tp / (tp + fp + n_m),
                    ("asr", i): (wg * (before & ~pred)).sum(axis=1) / (wg * before).sum(axis=1),
                })
        return out

    def replicates(self, groups: list[GroupRows], clean_of: list, fprs, n_boot: int, rng,
                   paired: bool = True) -> tuple[list[dict], list[dict]]:
        """Replicates of every figure per group, and of its change versus its clean group.

        ``clean_of[i]`` is the index of group ``i``'s clean counterpart (None: no change).
        ``paired=False`` draws the clean groups from an independent second resample
        (humans and sources alike): the unpaired interval, for comparison only.
        """
        reps = [{} for _ in groups]
        refs = {j: {} for j in clean_of if j is not None} if not paired else {}
        chunk = max(1, min(n_boot, CHUNK_CELLS // max(1, len(self.human_scores) + len(self.unit_strata))))
        for start in range(0, n_boot, chunk):
            n_rep = min(chunk, n_boot - start)
            world = self._world(rng, n_rep, fprs)
            other = self._world(rng, n_rep, fprs) if refs else None
            for gi, g in enumerate(groups):
                for key, vals in self._figures(world, g, fprs).items():
                    reps[gi].setdefault(key, np.empty(n_boot))[start:start + n_rep] = vals
                if gi in refs:
                    for key, vals in self._figures(other, g, fprs).items():
                        refs[gi].setdefault(key, np.empty(n_boot))[start:start + n_rep] = vals
        source = refs if refs else dict(enumerate(reps))
        deltas = [{} if j is None else {k: r - source[j][k] for k, r in reps[gi].items()}
                  for gi, j in enumerate(clean_of)]
        return reps, deltas


__all__ = ["GroupRows", "Sample", "check_bootstrap", "percentile_interval", "percentile_intervals",
           "stratified_counts", "weighted_auroc", "weighted_thresholds"]
