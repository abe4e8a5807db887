"""Decision thresholds calibrated on human scores at a target false-positive rate.

RAID (Section 5.2, Appendix C) fixes the FPR on human-written text and tunes one
threshold per domain so that *every* domain has that FPR. RAID finds thresholds
with an iterative search (Appendix F.2: start at the mean human score, step and
halve until within epsilon = 0.0005 of the target, give up after 50 steps). We
compute the **exact empirical quantile** instead:

* decision rule: a text is called machine iff ``score > threshold`` (strict;
  RAID uses ``>=`` with a searched threshold);
* with ``n`` human scores and target ``fpr``, at most ``k = floor(fpr * n)``
  human texts may be flagged; the threshold is the (k+1)-th largest human
  score, the lowest threshold whose FPR does not exceed the target, so the
  TPR is as high as the target allows;
* ties: if the (k+1)-th and k-th largest human scores are equal, no threshold
  flags exactly k humans; the achieved FPR falls short of ``k / n``. The result
  then says ``reached=False`` (beyond ``tolerance``) with the achieved FPR, rather
  than a TPR measured at another operating point. (RAID's search marks a detector
  as failing when its closest FPR lies *above* the target; ours never exceeds it.)
* small samples: when the FPR granularity ``1 / n`` exceeds the target (fewer
  than ``1 / fpr`` human texts in a domain), ``k = 0``: the only threshold at or
  below the target is the highest human score, with achieved FPR 0 whatever the
  target, so FPR 5%, 1% and 0.1% would give one and the same TPR. Such a
  calibration is **underpowered**: ``underpowered=True`` and ``reached=False``.
  This follows RAID Appendix F.2, which accepts the closest FPR below the target
  when the search cannot land within epsilon of it: with ``1 <= fpr * n`` that
  closest FPR, ``floor(fpr * n) / n``, still depends on the target and counts as
  reached; with ``fpr * n < 1`` it is 0 and the sample cannot resolve the target.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np
import pandas as pd

from ._inputs import as_domains, as_scores, check_fpr

#: RAID's epsilon (Appendix F.2): how far below the target an achieved FPR may fall
#: and still count as reaching it.
DEFAULT_TOLERANCE = 0.0005


@dataclass(frozen=True)
class ThresholdResult:
    """One calibrated threshold: call a text machine iff ``score > threshold``."""

    threshold: float
    target_fpr: float
    achieved_fpr: float
    reached: bool
    n_human: int
    n_false_positives: int
    domain: str | None = None
    underpowered: bool = False

    def predict(self, scores) -> np.ndarray:
        """Boolean predictions (True = machine) for ``scores``."""
        return as_scores(scores) > self.threshold


def _check_tolerance(tolerance) -> float:
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float, np.number)):
        raise TypeError(f"tolerance must be a number >= 0, got {type(tolerance).__name__}")
    if not (tolerance >= 0) or math.isinf(tolerance):
        raise ValueError(f"tolerance must be a finite number >= 0, got {tolerance!r}")
    return float(tolerance)


def threshold_at_fpr(human_scores, fpr: float, *, tolerance: float = DEFAULT_TOLERANCE,
                     domain: str | None = None) -> ThresholdResult:
    """The exact empirical threshold for ``fpr`` on ``human_scores`` (see module doc).

    ``reached`` is True when the achieved FPR is within ``tolerance`` of the best
    attainable ``floor(fpr * n) / n``; ties among human scores can prevent that,
    and so does a sample too small for the target (``underpowered``: ``fpr * n < 1``).
    """
    fpr = check_fpr(fpr)
    tolerance = _check_tolerance(tolerance)
    h = as_scores(human_scores, "human_scores")
    n = len(h)
    if n == 0:
        where = f" in domain {domain!r}" if domain is not None else ""
        raise ValueError(f"no human scores{where} to calibrate a threshold on")
    k = allowed_false_positives(fpr, n)
    desc = np.sort(h)[::-1]
    t = float(desc[k])
    n_fp = int(np.count_nonzero(h > t))
    achieved = n_fp / n
    underpowered = k == 0  # granularity 1/n exceeds the target: no threshold depends on it
    reached = not underpowered and (k - n_fp) / n <= tolerance + 1e-12
    return ThresholdResult(t, fpr, achieved, bool(reached), n, n_fp, domain, bool(underpowered))


def allowed_false_positives(fpr: float, n: int) -> int:
    """``k = floor(fpr * n)`` (at most ``n - 1``): how many of ``n`` humans the threshold may flag."""
    return min(int(math.floor(fpr * n + 1e-9)), n - 1)


@dataclass(frozen=True)
class Calibration:
    """Thresholds at one target FPR: one per domain (RAID App. C) or one pooled (key None)."""

    target_fpr: float
    thresholds: Mapping[object, ThresholdResult] = field(repr=False)
    per_domain: bool

    @property
    def reached(self) -> bool:
        """True when every domain's threshold reached the target FPR."""
        return all(t.reached for t in self.thresholds.values())

    @property
    def n_human(self) -> int:
        return sum(t.n_human for t in self.thresholds.values())

    @property
    def achieved_fpr(self) -> float:
        """False positives over all calibration humans (pooled over domains)."""
        return sum(t.n_false_positives for t in self.thresholds.values()) / self.n_human

    @property
    def underpowered(self) -> bool:
        """True when some domain has too few humans to resolve the target FPR (``fpr * n < 1``)."""
        return any(t.underpowered for t in self.thresholds.values())

    def unreached_domains(self) -> list:
        return [d for d, t in self.thresholds.items() if not t.reached]

    def underpowered_domains(self) -> list:
        return [d for d, t in self.thresholds.items() if t.underpowered]

    def threshold_for(self, domains, n: int) -> np.ndarray:
        """The threshold applying to each of ``n`` texts with these ``domains``."""
        if not self.per_domain:
            return np.full(n, self.thresholds[None].threshold)
        doms = as_domains(domains, n)
        if doms is None:
            raise ValueError("these thresholds are per domain: pass the texts' domains")
        codes, uniques = pd.factorize(doms)  # look each distinct domain up once
        unknown = sorted({str(d) for d in uniques} - {str(d) for d in self.thresholds})
        if unknown:
            raise ValueError(
                f"no human calibration scores for domain(s) {unknown}; calibrated domains: "
                f"{sorted(str(d) for d in self.thresholds)}"
            )
        lookup = {d: t.threshold for d, t in self.thresholds.items()}
        return np.array([lookup[d] for d in uniques], dtype=np.float64)[codes]

    def predict(self, scores, domains=None) -> np.ndarray:
        """Boolean predictions (True = machine): ``score > threshold of its domain``."""
        s = as_scores(scores)
        return s > self.threshold_for(domains, len(s))


def calibrate(human_scores, fpr: float, domains=None, *, per_domain: bool = True,
              tolerance: float = DEFAULT_TOLERANCE) -> Calibration:
    """Thresholds at ``fpr`` from human scores, per domain when ``per_domain`` and domains given.

    With ``per_domain=True`` but ``domains=None`` there is a single pooled threshold.
    """
    fpr = check_fpr(fpr)
    h = as_scores(human_scores, "human_scores")
    doms = as_domains(domains, len(h))
    if not per_domain or doms is None:
        return Calibration(fpr, {None: threshold_at_fpr(h, fpr, tolerance=tolerance)}, False)
    out = {}
    for d in sorted(set(doms), key=str):
        out[d] = threshold_at_fpr(h[doms == d], fpr, tolerance=tolerance, domain=d)
    return Calibration(fpr, out, True)
