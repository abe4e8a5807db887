"""Report primitives: what every report table, summary, card and figure reads from a run's tidy ``metrics`` table
(:func:`humanize.benchmarks.evaluation.evaluate`) before it shapes anything: the rows of one figure, FPR and
defense, the attacks in report order, the run's FPRs, defenses and protocol, and the sentence that says what its
intervals mean. Every reporting module imports them from here (public names: no module reaches into another's
private helpers)."""

from __future__ import annotations

import numpy as np
import pandas as pd

#: The attack label of the clean (unattacked) rows, and the defense label of the undefended ones.
CLEAN = "none"


def attack_order(metrics: pd.DataFrame) -> list[str]:
    """The run's attack labels in report order: the clean rows first, then the attacks by name."""
    names = sorted(set(metrics["attack"]) - {CLEAN})
    return ([CLEAN] if CLEAN in set(metrics["attack"]) else []) + names


def of_defense(metrics: pd.DataFrame, defense: str | None = CLEAN) -> pd.DataFrame:
    """The rows of one defense (``"none"``: undefended; ``None``: all); runs without defenses have no column."""
    if defense is None:
        return metrics
    if "defense" not in metrics:
        return metrics if defense == CLEAN else metrics.iloc[:0]
    return metrics[metrics["defense"].fillna(CLEAN) == defense]


def defenses_in(metrics: pd.DataFrame) -> list[str]:
    """The defenses other than ``"none"`` that a metrics table holds, sorted."""
    if "defense" not in metrics:
        return []
    return sorted(set(metrics["defense"].dropna()) - {CLEAN})


def guided(metrics: pd.DataFrame) -> bool:
    """Whether the run's metrics name a guide (a detector that guided an attack) for some attack."""
    return "guide" in metrics.columns and bool(metrics["guide"].notna().any())


def select(metrics: pd.DataFrame, metric: str, fpr: float | None = None, defense: str | None = CLEAN) -> pd.DataFrame:
    """The rows of one ``metric`` at one ``fpr`` (None: every FPR, or a metric without one) and one ``defense``."""
    sel = of_defense(metrics, defense)
    sel = sel[sel["metric"] == metric]
    if fpr is None:
        return sel
    return sel[np.isclose(sel["fpr"].astype(float), fpr)]


def run_fprs(metrics: pd.DataFrame, fpr) -> list[float]:
    """``fpr`` (one or several) as a list, or with None every FPR of the run, largest first."""
    if fpr is None:
        return sorted({float(f) for f in metrics["fpr"].dropna()}, reverse=True)
    return [float(f) for f in (fpr if isinstance(fpr, (list, tuple)) else (fpr,))]


def protocol_sentence(protocol) -> str:
    """Which protocol's definitions the figures follow, in one sentence (a card and a report name it)."""
    if protocol == "raid":
        return ("Protocol: RAID's own (its evaluator's definitions: thresholds found by its search on clean human "
                "texts, a text is machine when its score is at or above the threshold, an attack's AUROC against every human text of "
                "the domain, attacked ones included), as computed by RAID's evaluator; RAID reports no intervals: "
                "the AUROC's here redraw machine and human texts within their domains, and TPRs have none.")
    return ("Protocol: humanize-bench's (exact quantile thresholds on clean human texts, machine when the score "
            "exceeds the threshold, an attack's AUROC against the clean human texts, bootstrap intervals); RAID's own "
            "protocol is protocol = \"raid\" and differs by design (docs: the protocols and their statistics).")


def run_protocol(metrics: pd.DataFrame) -> str:
    """The protocol a run's metrics follow ("humanize" for a run stored before runs recorded it)."""
    if "protocol" in metrics and not metrics["protocol"].dropna().empty:
        return str(metrics["protocol"].dropna().iloc[0])
    return "humanize"


def about(metrics: pd.DataFrame) -> str:
    """What a figure table's numbers follow: the protocol's sentence and what its intervals are."""
    return protocol_sentence(run_protocol(metrics)) + " " + about_intervals(metrics)


def about_intervals(metrics: pd.DataFrame) -> str:
    """What the ``_lo``/``_hi`` and ``delta_`` columns of the run's figure tables mean."""
    boot = metrics.attrs.get("bootstrap") or {}
    b = f", B = {boot['n_boot']}" if boot.get("n_boot") else ""
    if "value_lo" not in metrics or metrics["value_lo"].isna().all():
        return ("No bootstrap intervals in this run (`_lo`/`_hi` are empty: the run predates them or used "
                "n_boot=0). `delta_`: attacked minus clean; `n_dropped_nan`: rows dropped for NaN scores.")
    return ("`_lo`/`_hi`: 95% percentile bootstrap interval (documents redrawn within each label x domain, "
            f"thresholds recalibrated per replicate{b}); `delta_`: attacked minus clean, interval paired on the "
            "source document; `n_dropped_nan`: rows dropped for NaN scores.")
