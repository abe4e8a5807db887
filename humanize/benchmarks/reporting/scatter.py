"""The effectiveness / meaning / cost figure as a scatter with real axes (issue #24 §2).

One panel per detector; one point per attack: x = meaning preserved (the mean of the strongest meaning
meter the run computed, :func:`.report.meaning_measure`, with a 95% percentile bootstrap interval over
documents), y = the change in AUROC (or TPR at an FPR) versus clean, with the run's paired 95% bootstrap
interval; colour = wall seconds per document on a log scale. The attacker's Pareto front (no other attack
keeps more meaning *and* lowers the figure more) is drawn per panel. An attack whose meaning meter cannot
see its change (:func:`._meaning.meaning_by_attack`: e.g. case flips under an uncased encoder) is drawn
hollow and kept off the front: its meaning is not measured.
"""
from __future__ import annotations

import math
import textwrap

import numpy as np
import pandas as pd

from ._figstyle import COLUMN_WIDTH_IN, PAGE_WIDTH_IN, style
from ._meaning import meaning_by_attack
from .report import CLEAN, figure_matrix, timing_by_attack

__all__ = ["pareto_front", "scatter_points", "scatter_figure", "scatter_caption", "axis_label"]


def axis_label(metric: str, fpr: float | None) -> str:
    return "AUROC" if metric == "auroc" else f"TPR at FPR {fpr:g}"


def _bootstrap(tables) -> tuple[int, float]:
    boot = tables["metrics"].attrs.get("bootstrap") or {}
    return int(boot.get("n_boot") or 1000), float(boot.get("confidence") or 0.95)


def pareto_front(meaning, change) -> np.ndarray:
    """Mask of the points no other point dominates for the attacker: more (or as much) meaning
    preserved and a lower (or equal) figure, one of them strictly. NaN points are never on it."""
    x, y = np.asarray(meaning, dtype=float), np.asarray(change, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    front = np.zeros(len(x), dtype=bool)
    for i in np.flatnonzero(ok):
        better = ok & (x >= x[i]) & (y <= y[i]) & ((x > x[i]) | (y < y[i]))
        front[i] = not better.any()
    return front


def scatter_points(tables: dict, metric: str = "auroc", fpr: float = 0.05) -> pd.DataFrame:
    """Rows (detector, attack) of the attacked runs: ``change`` (+ ``change_lo``/``change_hi``, paired 95%
    interval), ``clean`` value, ``meaning`` (+ ``meaning_lo``/``meaning_hi``), ``measured``, ``seconds_per_doc``,
    ``timing`` (the cost table's: ``"batch mean"`` for an attack timed in batches) and ``pareto``. ``attrs``:
    ``measure`` (the meaning column and its definition), ``metric``, ``fpr``."""
    if metric not in ("auroc", "tpr"):
        raise ValueError(f"scatter metric must be 'auroc' or 'tpr', got {metric!r}")
    m = tables["metrics"]
    f = None if metric == "auroc" else fpr
    parts = {c: figure_matrix(m, metric, f, c) for c in ("change", "change_lo", "change_hi", "value")}
    if parts["change"].empty:
        raise ValueError(f"the run has no {axis_label(metric, fpr)} figures to plot")
    clean = parts["value"].loc[CLEAN] if CLEAN in parts["value"].index else pd.Series(dtype=float)
    n_boot, confidence = _bootstrap(tables)
    cost = tables.get("cost")
    meaning = meaning_by_attack(tables.get("quality"), n_boot, confidence, cost=cost)
    seconds = cost.groupby("attack")["wall_s"].mean() if cost is not None and "wall_s" in cost else pd.Series()
    # "batch mean": an attack timed in batches (issue #24), its seconds per document a share of its batches'
    timing = timing_by_attack(cost)
    rows = []
    for attack in parts["change"].index:
        if attack == CLEAN:
            continue
        mean = meaning.loc[attack] if attack in meaning.index else None
        for det in parts["change"].columns:
            rows.append({"detector": det, "attack": attack,
                         **{c: float(parts[c].at[attack, det]) for c in ("change", "change_lo", "change_hi")},
                         "clean": float(clean.get(det, math.nan)),
                         "meaning": math.nan if mean is None else float(mean["meaning"]),
                         "meaning_lo": math.nan if mean is None else float(mean["lo"]),
                         "meaning_hi": math.nan if mean is None else float(mean["hi"]),
                         "measured": True if mean is None else bool(mean["measured"]),
                         "seconds_per_doc": float(seconds.get(attack, math.nan)),
                         "timing": timing.get(attack)})
    out = pd.DataFrame(rows, columns=["detector", "attack", "change", "change_lo", "change_hi", "clean", "meaning",
                                      "meaning_lo", "meaning_hi", "measured", "seconds_per_doc", "timing"])
    out["pareto"] = False
    for det, g in out.groupby("detector"):
        usable = g["measured"].to_numpy()
        front = pareto_front(g["meaning"].where(usable), g["change"])
        out.loc[g.index, "pareto"] = front
    out.attrs.update(measure=meaning.attrs.get("measure"), metric=metric, fpr=f)
    return out


#: meaning preserved is drawn on a log scale of the loss (1 - meaning), floored here: rule-based attacks
#: keep 0.99 and more, and a linear axis would stack them all at 1
LOSS_FLOOR = 1e-4
MEANING_TICKS = (0.0, 0.9, 0.99, 0.999, 1 - LOSS_FLOOR)


def _meaning_scale(ax) -> None:
    """x: meaning preserved, spaced by -log10(1 - meaning) (0 -> 0, 0.9 -> 1, 0.99 -> 2, ... 1 -> 4)."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    floor = LOSS_FLOOR / 10  # the axis runs a little past the points drawn at 1 - LOSS_FLOOR
    ax.set_xscale("function", functions=(lambda x: -np.log10(np.clip(1 - np.asarray(x, float), floor, None)),
                                         lambda y: 1 - 10 ** (-np.asarray(y, float))))
    ax.xaxis.set_major_locator(FixedLocator(MEANING_TICKS))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: "1" if v >= 1 - LOSS_FLOOR else f"{v:g}"))


def _norm(seconds: pd.Series):
    from matplotlib.colors import LogNorm

    s = seconds[np.isfinite(seconds) & (seconds > 0)]
    lo, hi = (float(s.min()), float(s.max())) if len(s) else (1e-3, 1.0)
    if hi / lo < 10:  # at least a decade on the colour bar
        mid = math.sqrt(lo * hi)
        lo, hi = mid / math.sqrt(10), mid * math.sqrt(10)
    return LogNorm(vmin=lo, vmax=hi)


def scatter_figure(tables: dict, metric: str = "auroc", fpr: float = 0.05, points: pd.DataFrame | None = None):
    """The scatter (a matplotlib Figure; the caller saves and closes it); ``points``: :func:`scatter_points`
    of the same arguments, when the caller has them already."""
    points = scatter_points(tables, metric, fpr) if points is None else points
    measure = points.attrs["measure"]
    detectors = list(dict.fromkeys(points["detector"]))
    attacks = list(dict.fromkeys(points["attack"]))
    number = {a: i + 1 for i, a in enumerate(attacks)}
    n = len(detectors)
    cols = 1 if n == 1 else min(3, n)
    rows = math.ceil(n / cols)
    width = COLUMN_WIDTH_IN if cols == 1 else PAGE_WIDTH_IN
    norm = _norm(points["seconds_per_doc"])
    ylabel = f"change in {axis_label(metric, fpr)} (attacked − clean)"
    xlabel = (f"meaning preserved ({measure[0]}; axis spaced by log of 1 − {measure[0]})" if measure else
              "meaning preserved (no meter in this run)")
    with style() as plt:
        fig, axes = plt.subplots(rows, cols, figsize=(width, 1.9 * rows + 0.9), sharex=True, sharey=True,
                                 squeeze=False, layout="constrained")
        cmap = plt.get_cmap("viridis")
        for k, ax in enumerate(axes.ravel()):
            if k >= n:
                ax.set_visible(False)
                continue
            det = detectors[k]
            g = points[points["detector"] == det]
            x = g["meaning"].clip(upper=1 - LOSS_FLOOR).to_numpy(float)
            y = g["change"].to_numpy(float)
            hi = g["meaning_hi"].clip(upper=1 - LOSS_FLOOR).to_numpy(float)
            xerr = np.nan_to_num(np.vstack([x - g["meaning_lo"], hi - x]), nan=0.0).clip(min=0)
            yerr = np.nan_to_num(np.vstack([y - g["change_lo"], g["change_hi"] - y]), nan=0.0).clip(min=0)
            ax.errorbar(x, y, xerr=xerr, yerr=yerr, fmt="none", ecolor="0.6", elinewidth=0.6, capsize=1.5,
                        zorder=1)
            colours = [cmap(norm(s)) if np.isfinite(s) and s > 0 else (0.5, 0.5, 0.5, 1.0)
                       for s in g["seconds_per_doc"]]
            measured = g["measured"].to_numpy(bool)
            ax.scatter(x[measured], y[measured], c=[c for c, ok in zip(colours, measured) if ok], s=22,
                       edgecolors="black", linewidths=0.4, zorder=3)
            if (~measured).any():
                ax.scatter(x[~measured], y[~measured], s=22, facecolors="none", zorder=3, linewidths=1.0,
                           edgecolors=[c for c, ok in zip(colours, measured) if not ok])
            front = g[g["pareto"]].sort_values("meaning")
            if len(front):
                fx = front["meaning"].clip(upper=1 - LOSS_FLOOR)
                ax.plot(fx, front["change"], color="tab:red", lw=0.9, ls="-", marker="o", ms=7, mfc="none",
                        mec="tab:red", mew=0.9, zorder=2, label="Pareto front")
            if measure is not None:
                _meaning_scale(ax)
            for xi, yi, a in zip(x, y, g["attack"]):
                if np.isfinite(xi) and np.isfinite(yi):
                    ax.annotate(str(number[a]), (xi, yi), xytext=(3, 2), textcoords="offset points", fontsize=7)
            ax.axhline(0.0, color="0.4", lw=0.6, ls="--", zorder=0)
            clean = g["clean"].iloc[0]
            ax.set_title(f"{det} (clean {axis_label(metric, fpr)} "
                         f"{'n/a' if not np.isfinite(clean) else f'{clean:.2f}'})")
            if not np.isfinite(x).any():
                ax.text(0.5, 0.5, "meaning not measured\n(no meaning meter in this run)", transform=ax.transAxes,
                        ha="center", va="center", fontsize=7)
            elif not np.isfinite(y).any():
                ax.text(0.5, 0.5, f"no {axis_label(metric, fpr)} change\n(underpowered or not reached)",
                        transform=ax.transAxes, ha="center", va="center", fontsize=7)
            if k >= n - cols:
                ax.xaxis.set_tick_params(labelbottom=True)
        lows = points["meaning_lo"].fillna(points["meaning"]).to_numpy(float)
        if measure is not None and np.isfinite(lows).any():  # in the scale's units: 0.25 below the lowest bar,
            low = -np.log10(np.clip(1 - np.nanmin(lows), LOSS_FLOOR, None)) - 0.25  # room for the markers at 1
            axes.ravel()[0].set_xlim(1 - 10 ** (-low), 1 - LOSS_FLOOR / 10 ** 0.25)
        fig.supxlabel(xlabel, fontsize=8)
        fig.supylabel(ylabel, fontsize=8)
        sm = plt.cm.ScalarMappable(norm=norm, cmap=cmap)
        bar = fig.colorbar(sm, ax=axes.ravel().tolist(), shrink=0.9 if rows > 1 else 1.0, pad=0.02)
        bar.set_label("wall time per document (s, log scale)")
        handles = [plt.Line2D([], [], color="tab:red", lw=0.9, marker="o", ms=7, mfc="none", mec="tab:red",
                              label="Pareto front (attacker)"),
                   plt.Line2D([], [], ls="none", marker="o", mfc="0.7", mec="black", label="attack"),
                   plt.Line2D([], [], ls="none", marker="o", mfc="none", mec="0.3",
                              label="meaning not measured (meter blind to the change)")]
        if not (~points["measured"]).any():
            handles = handles[:2]
        fig.legend(handles=handles, loc="outside upper center", ncol=len(handles), frameon=False)
        key = "   ".join(f"{i}\u00a0{a}" for a, i in number.items())  # no break between number and name
        fig.text(0.0, 0.0, "attacks: " + "\n".join(textwrap.wrap(key, int(width * 17))), fontsize=7, va="top",
                 ha="left")
    return fig


def scatter_caption(points: pd.DataFrame) -> str:
    """One caption line for the scatter: what each axis, colour, bar and line is."""
    measure, metric, fpr = points.attrs["measure"], points.attrs["metric"], points.attrs["fpr"]
    meaning = (f"meaning preserved = mean over documents of {measure[0]} (1 minus it is {measure[1]}), the "
               "strongest meaning meter in the run" if measure else "meaning preserved: not measured (no meter)")
    blind = sorted(set(points.loc[~points["measured"], "attack"]))
    hollow = (f" Hollow markers ({', '.join(blind)}): the meter reads no loss on texts the attack changed, so "
              "their meaning is not measured and they are kept off the front." if blind else "")
    batched = sorted(set(points.loc[points["timing"].fillna("").str.contains("batch mean"), "attack"])) \
        if "timing" in points else []
    batch = (f" The seconds of {', '.join(batched)} are batch means (each batch timed as one call, its seconds "
             "divided by its documents)." if batched else "")
    return (f"Change in {axis_label(metric, fpr or 0.05)} versus clean (y; paired 95% bootstrap interval) against "
            f"{meaning} (x; 95% bootstrap interval over documents), one panel per detector; colour: wall seconds "
            "per attacked document, log scale; red line: the attacker's Pareto front (no other attack keeps more "
            "meaning and lowers the figure more); numbers: the attacks listed under the panels." + hollow + batch)
