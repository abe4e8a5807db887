"""The effectiveness / meaning / cost figure as a scatter with real axes (issue #24 §2).

One panel per detector; one point per attack: x = meaning preserved (the mean of the strongest meaning
meter the run computed, :func:`.tables.meaning_measure`, with a 95% percentile bootstrap interval over
documents), y = the change in AUROC (or TPR at an FPR) versus clean, with the run's paired 95% bootstrap
interval; colour = wall seconds per document on a log scale. The attacker's Pareto front (no other attack
keeps more meaning *and* lowers the figure more) is drawn per panel. An attack whose meaning meter cannot
see its change (:func:`._meaning.meaning_by_attack`: e.g. case flips under an uncased encoder) is drawn
hollow and kept off the front: its meaning is not measured.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ._figstyle import COLUMN_WIDTH_IN, PAGE_WIDTH_IN, style
from ._meaning import meaning_by_attack
from .selection import CLEAN
from .tables import figure_matrix, meter_name, timing_by_attack

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
    ``timing`` (the cost table's: ``"batch mean"`` for an attack timed in batches), ``effect`` (the paired interval
    excludes 0: a measurable effect) and ``pareto`` (measured meaning and effect only). ``attrs``:
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
    for col in ("change", "change_lo", "change_hi"):
        out[col] = out[col].astype(float)
    lo, hi, change = out["change_lo"], out["change_hi"], out["change"]
    no_interval = lo.isna() | hi.isna()
    # a change the data shows: its paired interval excludes 0 (without intervals: a change other than 0)
    out["effect"] = ((hi < 0) | (lo > 0) | (no_interval & change.notna() & (change != 0))).astype(bool)
    out["pareto"] = False
    for det, g in out.groupby("detector"):
        usable = g["measured"].to_numpy()
        # a measured fall only: a change the data cannot tell from 0, or a rise (a backfire), is no attacker's win
        front = pareto_front(g["meaning"].where(usable), g["change"].where(g["effect"] & (g["change"] < 0)))
        out.loc[g.index, "pareto"] = front
    out.attrs.update(measure=meaning.attrs.get("measure"), metric=metric, fpr=f,
                     meter=meter_name(tables.get("quality"), meaning.attrs.get("measure")))
    return out


#: meaning preserved is drawn on a log scale of the loss (1 - meaning), floored here: rule-based attacks
#: keep 0.99 and more, and a linear axis would stack them all at 1
LOSS_FLOOR = 1e-4
MEANING_TICKS = (0.0, 0.9, 0.99, 0.999, 1 - LOSS_FLOOR)
#: the fixed scales of every scatter (issue #34): two runs' figures compare. x: meaning from MEANING_LOW to 1;
#: y: the change on an asinh scale over its whole range [-1, 1], linear within CHANGE_LINEAR of 0;
#: colour: seconds per document, COST_RANGE on a log scale
MEANING_LOW = -0.1
CHANGE_LINEAR = 0.05
CHANGE_TICKS = (-1.0, -0.5, -0.2, -0.1, -0.05, 0.0, 0.05, 0.1, 0.2, 0.5, 1.0)
COST_RANGE = (1e-6, 10.0)


def _meaning_scale(ax) -> None:
    """x: meaning preserved, spaced by -log10(1 - meaning) (0 -> 0, 0.9 -> 1, 0.99 -> 2, ... 1 -> 4)."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    floor = LOSS_FLOOR / 10  # the axis runs a little past the points drawn at 1 - LOSS_FLOOR
    ax.set_xscale("function", functions=(lambda x: -np.log10(np.clip(1 - np.asarray(x, float), floor, None)),
                                         lambda y: 1 - 10 ** (-np.asarray(y, float))))
    ax.xaxis.set_major_locator(FixedLocator(MEANING_TICKS))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: "1" if v >= 1 - LOSS_FLOOR else f"{v:g}"))


def _change_scale(ax) -> None:
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    ax.set_yscale("asinh", linear_width=CHANGE_LINEAR)
    ax.yaxis.set_major_locator(FixedLocator(CHANGE_TICKS))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: "0" if v == 0 else f"{v:+g}"))
    ax.set_ylim(-1.05, 1.05)


def _norm(seconds: pd.Series = None):
    """The colour scale of the cost: fixed (:data:`COST_RANGE`), the same in every run."""
    from matplotlib.colors import LogNorm

    return LogNorm(vmin=COST_RANGE[0], vmax=COST_RANGE[1], clip=True)


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
    ylabel = f"change in {axis_label(metric, fpr)} (attacked − clean; asinh scale)"
    meter = points.attrs.get("meter") or (measure[0] if measure else None)
    xlabel = (f"meaning preserved ({meter}; axis spaced by log of 1 − {measure[0]})" if measure else
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
            x = g["meaning"].where(g["measured"]).clip(upper=1 - LOSS_FLOOR).to_numpy(float)
            y = g["change"].to_numpy(float)
            hi = g["meaning_hi"].clip(upper=1 - LOSS_FLOOR).to_numpy(float)
            xerr = np.nan_to_num(np.vstack([x - g["meaning_lo"], hi - x]), nan=0.0).clip(min=0)
            yerr = np.nan_to_num(np.vstack([y - g["change_lo"], g["change_hi"] - y]), nan=0.0).clip(min=0)
            ax.errorbar(x, y, xerr=xerr, yerr=yerr, fmt="none", ecolor="0.6", elinewidth=0.6, capsize=1.5,
                        zorder=1)
            colours = [cmap(norm(s)) if np.isfinite(s) and s > 0 else (0.5, 0.5, 0.5, 1.0)
                       for s in g["seconds_per_doc"]]
            measured = g["measured"].to_numpy(bool)
            effect = g["effect"].to_numpy(bool)
            for keep, face in ((measured & effect, 1.0), (measured & ~effect, 0.25)):
                if keep.any():  # a measurable change in full colour; no measurable effect faded, grey-edged
                    ax.scatter(x[keep], y[keep], c=[(*c[:3], face) for c, ok in zip(colours, keep) if ok], s=22,
                               edgecolors="black" if face == 1.0 else "0.5", linewidths=0.4 if face == 1.0 else 0.8,
                               zorder=3)
            for yi, a in zip(y[~measured], g["attack"].to_numpy()[~measured]):
                # meaning not measured: no point at a guessed meaning, a line at the measured change instead
                if np.isfinite(yi):
                    ax.axhline(yi, color="0.5", lw=0.7, ls=":", zorder=1)
                    ax.annotate(str(number[a]), (0.0, yi), xycoords=("axes fraction", "data"), xytext=(2, 2),
                                textcoords="offset points", fontsize=7, color="0.3")
            front = g[g["pareto"]].sort_values("meaning")
            if len(front):
                fx = front["meaning"].clip(upper=1 - LOSS_FLOOR)
                ax.plot(fx, front["change"], color="tab:red", lw=0.9, ls="-", marker="o", ms=7, mfc="none",
                        mec="tab:red", mew=0.9, zorder=2, label="Pareto front")
            if measure is not None:
                _meaning_scale(ax)
            _change_scale(ax)
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
        if measure is not None:  # fixed: the same x range in every run
            axes.ravel()[0].set_xlim(MEANING_LOW, 1 - LOSS_FLOOR / 10 ** 0.25)
        else:
            axes.ravel()[0].set_xlim(0, 1)
        fig.supxlabel(xlabel, fontsize=8)
        fig.supylabel(ylabel, fontsize=8)
        sm = plt.cm.ScalarMappable(norm=norm, cmap=cmap)
        bar = fig.colorbar(sm, ax=axes.ravel().tolist(), shrink=0.9 if rows > 1 else 1.0, pad=0.02)
        bar.set_label("wall time per document (s, log scale)")
        bar.set_ticks([1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0],
                      labels=["1 µs", "10 µs", "100 µs", "1 ms", "10 ms", "100 ms", "1 s", "10 s"])
        bar.ax.minorticks_off()
        handles = [plt.Line2D([], [], color="tab:red", lw=0.9, marker="o", ms=7, mfc="none", mec="tab:red",
                              label="Pareto front (attacker)"),
                   plt.Line2D([], [], ls="none", marker="o", mfc="0.4", mec="black", label="attack"),
                   plt.Line2D([], [], ls="none", marker="o", mfc=(0.4, 0.4, 0.4, 0.25), mec="0.5",
                              label="no measurable effect (interval includes 0)"),
                   plt.Line2D([], [], ls=":", color="0.5", label="meaning not measured (meter blind to the change)")]
        keep = [True, bool(points["effect"].any()), bool((~points["effect"]).any()),
                bool((~points["measured"]).any())]
        handles = [h for h, k in zip(handles, keep) if k]
        fig.legend(handles=handles, loc="outside upper center", ncol=min(len(handles), 2), frameon=False)
        fig.text(0.0, 0.0, "attacks: " + "\n".join(_key_lines([f"{i} {a}" for a, i in number.items()],
                                                              int(width * 17))), fontsize=7, va="top", ha="left")
    return fig


def _key_lines(items: list[str], width: int) -> list[str]:
    """The attack key packed into lines of about ``width`` characters, never breaking an item."""
    lines, line = [], ""
    for item in items:
        if line and len(line) + 3 + len(item) > width:
            lines.append(line)
            line = ""
        line = f"{line}   {item}" if line else item
    return [*lines, line] if line else lines


def scatter_caption(points: pd.DataFrame) -> str:
    """One caption line for the scatter: what each axis, colour, bar and line is."""
    measure, metric, fpr = points.attrs["measure"], points.attrs["metric"], points.attrs["fpr"]
    meter = points.attrs.get("meter") or (measure[0] if measure else None)
    meaning = (f"meaning preserved = mean over documents of {meter} (1 minus it is {measure[1]}), the "
               "strongest meaning meter in the run" if measure else "meaning preserved: not measured (no meter)")
    blind = sorted(set(points.loc[~points["measured"], "attack"]))
    hollow = (f" Dotted lines ({', '.join(blind)}): the meter reads no loss on texts the attack changed, so "
              "their meaning is not measured: no point is drawn, a line at the change, kept off the front."
              if blind else "")
    faded = (" Faded markers: no measurable effect (the paired interval of the change includes 0), kept off the "
             "front." if "effect" in points and (~points["effect"]).any() else "")
    batched = sorted(set(points.loc[points["timing"].fillna("").str.contains("batch mean"), "attack"])) \
        if "timing" in points else []
    batch = (f" The seconds of {', '.join(batched)} are batch means (each batch timed as one call, its seconds "
             "divided by its documents)." if batched else "")
    return (f"Change in {axis_label(metric, fpr or 0.05)} versus clean (y; paired 95% bootstrap interval) against "
            f"{meaning} (x; 95% bootstrap interval over documents), one panel per detector; colour: wall seconds "
            "per attacked document, log scale; red line: the attacker's Pareto front (no other attack keeps more "
            "meaning and lowers the figure more); numbers: the attacks listed under the panels. Fixed scales, the "
            f"same in every run: x from {MEANING_LOW:g} to 1, y from −1 to +1 (asinh, linear within ±{CHANGE_LINEAR:g}), "
            f"colour from 1 µs to {COST_RANGE[1]:g} s." + hollow + faded + batch)
