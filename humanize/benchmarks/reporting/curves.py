"""ROC and DET curves per detector and attack (issue #34 §5): the figures the field draws beside AUROC.

One panel per detector, one curve per attack (clean in black): the machine texts the attack rewrote (positive)
against the clean human test texts (negative), the humanize protocol's pairing for an attack's AUROC; every
threshold, pooled over domains. ROC (Fawcett 2006) on linear axes; DET (Martin et al. 1997) on normal-deviate
axes, where a detector whose scores are Gaussian draws a straight line and the low-FPR end a paper cares about
is spread out. Drawn with scikit-learn's ``RocCurveDisplay`` and ``DetCurveDisplay``.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ._figstyle import COLUMN_WIDTH_IN, PAGE_WIDTH_IN, style
from .selection import CLEAN

__all__ = ["curve_pairs", "curves_figure", "curves_caption"]


def _is(labels: pd.Series, which: str) -> pd.Series:
    return labels.astype(str).isin([which, "1" if which == "machine" else "0"])


def curve_pairs(scores: pd.DataFrame) -> dict[str, dict[str, tuple[np.ndarray, np.ndarray]]]:
    """``{detector: {attack: (labels, scores)}}``: per attack the machine texts it rewrote (1) and the clean human
    texts (0), undefended, NaN scores left out; clean first, then the attacks in name order."""
    s = scores
    if "defense" in s:
        s = s[s["defense"].fillna(CLEAN) == CLEAN]
    s = s[pd.to_numeric(s["score"], errors="coerce").notna()]
    out: dict = {}
    for det, g in s.groupby("detector", sort=True):
        humans = pd.to_numeric(g.loc[_is(g["label"], "human") & (g["attack"] == CLEAN), "score"]).to_numpy(float)
        machines = g[_is(g["label"], "machine")]
        attacks = [CLEAN] + sorted(set(machines["attack"]) - {CLEAN})
        pairs = {}
        for attack in attacks:
            m = pd.to_numeric(machines.loc[machines["attack"] == attack, "score"]).to_numpy(float)
            if len(m) and len(humans):
                pairs[attack] = (np.r_[np.ones(len(m)), np.zeros(len(humans))], np.r_[m, humans])
        if pairs:
            out[str(det)] = pairs
    return out


def curves_figure(tables: dict, kind: str = "roc"):
    """The ROC (``kind="roc"``) or DET (``"det"``) curves, one panel per detector; None without a scores table."""
    if kind not in ("roc", "det"):
        raise ValueError(f"curves_figure: kind must be 'roc' or 'det', got {kind!r}")
    scores = tables.get("scores")
    if scores is None or scores.empty or not {"detector", "attack", "label", "score"} <= set(scores.columns):
        return None
    pairs = curve_pairs(scores)
    if not pairs:
        return None
    from sklearn.metrics import DetCurveDisplay, RocCurveDisplay

    attacks = list(dict.fromkeys(a for p in pairs.values() for a in p))
    n = len(pairs)
    cols = 1 if n == 1 else min(4, n)
    rows = math.ceil(n / cols)
    width = COLUMN_WIDTH_IN if cols == 1 else PAGE_WIDTH_IN
    with style() as plt:
        fig, axes = plt.subplots(rows, cols, figsize=(width, width / cols * rows + 0.9 + 0.12 * len(attacks) / 3),
                                 squeeze=False, layout="constrained")
        cmap = plt.get_cmap("tab20")
        order = [*range(0, 20, 2), *range(1, 20, 2)]  # ten distinct hues first, then their light twins
        colours = {a: "black" if a == CLEAN else cmap(order[(i - 1) % 20]) for i, a in enumerate(attacks)}
        for ax, (det, by_attack) in zip(axes.ravel(), pairs.items()):
            for attack, (y, s) in by_attack.items():
                line = {"color": colours[attack], "lw": 1.4 if attack == CLEAN else 0.8}
                name = "clean" if attack == CLEAN else str(attack)
                if kind == "roc":
                    RocCurveDisplay.from_predictions(y, s, ax=ax, name=name, curve_kwargs=line)
                else:
                    DetCurveDisplay.from_predictions(y, s, ax=ax, name=name, **line)
            if ax.get_legend() is not None:
                ax.get_legend().remove()
            if kind == "roc":
                ax.plot([0, 1], [0, 1], color="0.6", lw=0.6, ls="--")
                ax.set_xlabel("FPR (clean human texts)")
                ax.set_ylabel("TPR (machine texts)")
            else:
                ax.set_xlabel("FPR (clean human texts)")
                ax.set_ylabel("FNR (machine texts missed)")
            ax.set_title(det, fontsize=7)
        for ax in axes.ravel()[n:]:
            ax.set_visible(False)
        handles = [plt.Line2D([], [], color=colours[a], lw=1.4 if a == CLEAN else 0.8,
                              label="clean" if a == CLEAN else str(a)) for a in attacks]
        fig.legend(handles=handles, loc="outside lower center", ncol=min(4, len(handles)), frameon=False,
                   title="attack")
        fig.suptitle(("ROC" if kind == "roc" else "DET (normal-deviate axes)") + " per detector and attack: the "
                     "machine texts each attack rewrote against the clean human test texts, thresholds pooled over "
                     "domains", fontsize=7, wrap=True)
    return fig


def curves_caption(kind: str) -> str:
    what = ("ROC curves: TPR on the machine texts against FPR on the clean human test texts" if kind == "roc" else
            "DET curves: FNR (machine texts missed) against FPR (clean human texts) on normal-deviate axes, where the "
            "low-FPR operating points are spread out")
    return (f"{what}, one panel per detector, one curve per attack (clean in black; an attack's curve pairs the "
            "machine texts it rewrote with the clean human texts, every threshold, pooled over domains); the area "
            "under each ROC curve is the AUROC of the tables.")
