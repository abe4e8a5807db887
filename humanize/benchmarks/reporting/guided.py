"""The transfer table of guided attacks: one row per attack, one column per detector, the guide's cell marked.

An attack guided by a detector (Adversarial Paraphrasing's ``guide``, RAFT's ``target``, HMGC's
``surrogate``) carries that detector in the run's ``guide`` column
(:func:`humanize.benchmarks.runner.attack_spec.guide_label`); here a row reads the attack's effect on its
guide, marked ``(guide)``, and its transfer to every other detector of the run.
"""
from __future__ import annotations

import pandas as pd

from .selection import attack_order, select

__all__ = ["guided_transfer_table"]


def guided_transfer_table(metrics: pd.DataFrame, metric: str = "auroc", fpr: float | None = None,
                          digits: int = 3) -> pd.DataFrame:
    """Rows attacks (clean first), columns ``guide`` then one per detector; each cell the figure with its
    interval, ``(guide)`` after it where the detector is the one that guided the attack: a guided attack's
    row reads its effect on its guide and its transfer to every other detector."""
    sel = select(metrics, metric, fpr)
    guides = sel.drop_duplicates("attack").set_index("attack")["guide"] if "guide" in sel else pd.Series(dtype=object)
    detectors = sorted(set(sel["detector"]))

    def cell(row) -> str:
        if pd.isna(row["value"]):
            return "n/a"
        text = f"{row['value']:.{digits}f}"
        if pd.notna(row.get("value_lo")) and pd.notna(row.get("value_hi")):
            text += f" [{row['value_lo']:.{digits}f}, {row['value_hi']:.{digits}f}]"
        return text + (" (guide)" if row["detector"] == guides.get(row["attack"]) else "")

    cells = {(r["attack"], r["detector"]): cell(r) for _, r in sel.iterrows()}
    attacks = [a for a in attack_order(metrics) if a in set(sel["attack"])]
    table = pd.DataFrame({"guide": [guides.get(a) if pd.notna(guides.get(a)) else None for a in attacks],
                          **{d: [cells.get((a, d), "") for a in attacks] for d in detectors}},
                         index=pd.Index(attacks, name="attack"))
    return table
