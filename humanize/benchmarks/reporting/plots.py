"""Figures from a run's tables (matplotlib; PNG, SVG and PDF at a paper's column width, :mod:`._figstyle`).

* the effectiveness / meaning / cost scatter (:mod:`.scatter`): change in AUROC against meaning
  preserved, colour = seconds per document (log scale), 95% intervals, one panel per detector,
  the Pareto front drawn;
* the same trade-off as a triangle per attack (TH-Bench Figure 1), on fixed scales shared by every attack and
  every run (issue #34; TH-Bench min-max normalises over the run's attacks, which draws a run's weakest attacks
  as strong): the fall in AUROC, meaning preserved on the meter's own scale, log seconds per document; outward =
  better for the attacker, an attack with no measurable effect drawn as such, no vertex at a figure not measured;
* the θ sweep trade-off (TH-Bench Figure 10): AUROC and meaning preserved vs θ;
* cost against input length (TH-Bench Figures 14-15);
* an attack x detector heatmap of AUROC or TPR at FPR 5% (or the run's own FPR when it has no 5%), each cell
  with its 95% interval;
* ROC and DET curves per detector and attack (:mod:`.curves`);
* interval plots: AUROC (or TPR) per attack and detector, and its change versus clean,
  as points with 95% bootstrap error bars (paired intervals for the changes), where a
  reader compares detectors and attacks.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ._figstyle import COLUMN_WIDTH_IN, FORMATS, PAGE_WIDTH_IN, save, style
from ._files import write_text
from ._meaning import meaning_by_attack
from .report import figures_markdown
from .curves import curves_caption, curves_figure
from .scatter import scatter_caption, scatter_figure, scatter_points
from .selection import CLEAN
from .tables import cost_by_length, figure_matrix, meaning_measure, meter_name

__all__ = ["FORMATS", "DEFAULT_FPR", "figure_fpr", "triangle_scores", "underpowered_note", "triangle_figure", "heatmap_figure",
           "intervals_figure", "theta_sweep_figure", "cost_vs_length_figure", "scatter_figure", "plot_scatter",
           "plot_triangle", "plot_heatmap", "plot_intervals", "plot_theta_sweep", "plot_cost_vs_length", "plot_curves",
           "figure_captions", "plot_all"]


#: The triangle's fixed scales (issue #34): the same for every attack and every run, so two figures compare.
#: Effect: a fall in AUROC of EFFECT_FULL (a perfect detector brought to chance) reaches the rim, linearly.
EFFECT_FULL = 0.5
#: Cost: seconds per document on a log scale, COST_SLOW at the centre, COST_FAST at the rim.
COST_SLOW, COST_FAST = 10.0, 1e-6


def _cost_radius(seconds: pd.Series) -> pd.Series:
    s = pd.to_numeric(seconds, errors="coerce")
    r = (np.log10(COST_SLOW) - np.log10(s.where(s > 0))) / (np.log10(COST_SLOW) - np.log10(COST_FAST))
    return r.clip(0, 1)


def triangle_scores(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Per attack: effectiveness, quality and cost as radii on fixed scales, higher = better for the attacker.

    ``auroc_change``: the change in AUROC versus clean, mean over detectors; ``measurable``: the detectors whose
    paired 95% interval lies below 0 (a fall the data shows; without intervals, a negative change), of
    ``n_detectors``; ``backfires``: those whose interval lies above 0; ``effect``: ``"fall"`` (the mean falls and
    some detector's fall is measurable), ``"backfire"`` (the mean rises and some detector's rise is measurable) or
    ``"none"`` (no measurable effect on the mean's side). ``similarity``: meaning preserved, the
    mean of the strongest meaning meter the run computed (:data:`~.tables.MEANING_MEASURES`), named in
    ``attrs["quality_measure"]``, NaN where no meter ran or the meter cannot see the attack's change
    (:func:`._meaning.meaning_by_attack`). Radii: ``effectiveness`` = fall / :data:`EFFECT_FULL` (0 for no fall),
    ``quality`` = the meter's own value, ``cost`` = log seconds per document from :data:`COST_SLOW` (0) to
    :data:`COST_FAST` (1); each clipped to [0, 1], NaN where not measured. TH-Bench's Figure 1 min-max
    normalises each axis over the run's attacks instead, which draws the weakest attacks of a run as strong.
    """
    m = tables["metrics"]
    au = figure_matrix(m, "auroc")
    if CLEAN not in au.index:
        raise ValueError("the run has no clean ('none') rows to measure the AUROC drop against")
    change, lo, hi = (figure_matrix(m, "auroc", None, c).drop(index=CLEAN, errors="ignore")
                      for c in ("change", "change_lo", "change_hi"))
    frame = pd.DataFrame({"auroc_change": change.mean(axis=1)})
    frame["auroc_drop"] = -frame["auroc_change"]
    no_interval = lo.isna() | hi.isna()
    frame["measurable"] = ((hi < 0) | (no_interval & (change < 0))).sum(axis=1).astype(int)
    frame["backfires"] = ((lo > 0) | (no_interval & (change > 0))).sum(axis=1).astype(int)
    frame["n_detectors"] = change.notna().sum(axis=1).astype(int)
    # the side the mean change lies on decides, where some detector's interval shows a change on that side
    falls = (frame["measurable"] > 0) & (frame["auroc_change"] < 0)
    rises = (frame["backfires"] > 0) & (frame["auroc_change"] >= 0)
    frame["effect"] = np.where(falls, "fall", np.where(rises, "backfire", "none"))
    quality = tables.get("quality")
    meaning = meaning_by_attack(quality, n_boot=0, cost=tables.get("cost"))
    measure = meaning.attrs.get("measure")
    if measure is not None and len(meaning):
        kept = meaning["meaning"].where(meaning["measured"].astype(bool))
        frame["similarity"] = pd.to_numeric(kept, errors="coerce").reindex(frame.index)
    else:
        frame["similarity"] = np.nan
    cost = tables.get("cost")
    frame["wall_s"] = (pd.to_numeric(cost["wall_s"], errors="coerce").groupby(cost["attack"]).mean()
                       .reindex(frame.index) if cost is not None and "wall_s" in cost else np.nan)
    out = pd.DataFrame(index=frame.index)
    out["effectiveness"] = (frame["auroc_drop"] / EFFECT_FULL).clip(0, 1)
    out["quality"] = frame["similarity"].clip(0, 1)
    out["cost"] = _cost_radius(frame["wall_s"])
    out = out.join(frame)
    out.attrs["quality_measure"] = None if measure is None else measure[0]
    out.attrs["meter"] = meter_name(quality, measure)
    return out


def _errors(value: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """matplotlib's yerr/xerr (distances below and above), 0 where the interval is missing."""
    return np.nan_to_num(np.vstack([value - lo, hi - value]), nan=0.0).clip(min=0)


#: the FPR of the TPR figures when the run has it (RAID's); a run without it shows its own (:func:`figure_fpr`)
DEFAULT_FPR = 0.05


def figure_fpr(tables, fpr: "float | None" = None) -> float:
    """The FPR the TPR figures show: ``fpr`` when given (and the run has TPRs there), else
    :data:`DEFAULT_FPR` when the run has it, else the run's largest FPR (the best resolved by its humans).
    A run with no TPR at ``fpr`` is refused in one line naming the FPRs it has."""
    m = tables["metrics"]
    have = sorted({float(f) for f in m.loc[m["metric"] == "tpr", "fpr"].dropna()}, reverse=True) if len(m) else []
    if fpr is None:
        return DEFAULT_FPR if not have or any(np.isclose(have, DEFAULT_FPR)) else have[0]
    if have and not any(np.isclose(have, float(fpr))):
        raise ValueError(f"the run has no TPR at FPR {float(fpr):g}; its FPRs are "
                         f"{', '.join(f'{f:g}' for f in have)} (RunConfig.fprs)")
    return float(fpr)


def _label(metric: str, fpr) -> str:
    return "AUROC" if metric == "auroc" else f"TPR at FPR {fpr:g}"


def _ms(seconds: float) -> str:
    """Seconds per document in the unit that shows them: s, ms or µs (never 0.000 for a fast attack)."""
    if not np.isfinite(seconds):
        return "n/a"
    if seconds >= 1:
        return f"{seconds:.3g} s/doc"
    return f"{seconds * 1e3:.3g} ms/doc" if seconds >= 1e-3 else f"{seconds * 1e6:.3g} µs/doc"


def underpowered_note(tables, fpr: float) -> str | None:
    """Why TPR at ``fpr`` is missing for some (detector, attack) rows, or None when every row is resolved:
    ``underpowered: n_human = k < n needed`` (k the fewest clean human texts of a domain that sets a
    threshold, n = 1/FPR)."""
    m = tables["metrics"]
    sel = m[(m["metric"] == "tpr") & np.isclose(m["fpr"].astype(float), fpr)]
    if "defense" in sel:
        sel = sel[sel["defense"].fillna(CLEAN) == CLEAN]
    flag = sel["underpowered"].astype("boolean").fillna(False) if "underpowered" in sel else pd.Series(False)
    if not flag.any():
        return None
    needed = int(np.ceil(1.0 / fpr - 1e-9))
    scores = tables.get("scores")
    if scores is not None and {"attack", "label", "domain", "detector"} <= set(scores.columns):
        humans = scores[(scores["attack"] == CLEAN) & (scores["label"].astype(str) == "human")]
        counts = humans.groupby(["detector", "domain"]).size()
        k, where = (int(counts.min()), "in a domain") if len(counts) else (0, "")
    else:
        k, where = int(pd.to_numeric(sel.loc[flag, "n_human"], errors="coerce").min()), "in total"
    share = f"{int(flag.sum())} of {len(sel)}"
    return (f"underpowered: n_human = {k} {where} < {needed} needed for FPR {fpr:g} ({share} detector x attack "
            "figures not claimed; a larger --n resolves them)").replace("  ", " ")


def _boxed(note: str) -> str:
    """The note's claim on short lines, for a box drawn over an empty panel."""
    return note.split(" (")[0].replace(": ", ":\n", 1).replace(" < ", "\n< ")


_ANGLES = np.array([90, 210, 330]) * np.pi / 180
#: the scale key's ticks along each spoke: (radius, label)
_EFFECT_TICKS = [(0.1 / EFFECT_FULL, "−0.1"), (0.25 / EFFECT_FULL, "−0.25"), (1.0, f"−{EFFECT_FULL:g}")]
_MEANING_TICKS = [(0.5, "0.5"), (1.0, "1")]
_COST_TICKS = [(float(_cost_radius(pd.Series([s])).iloc[0]), label)
               for s, label in ((1.0, "1 s"), (1e-3, "1 ms"), (1e-6, "1 µs"))]


def _polar(ax) -> None:
    ax.set_xticks(_ANGLES)
    ax.set_ylim(0, 1)
    ax.set_yticks([0.5, 1.0])
    ax.set_yticklabels([])
    ax.tick_params(axis="x", pad=7)
    ax.grid(lw=0.4, color="0.8")


def _scale_key(ax, meter: str | None) -> None:
    """The panel that gives every spoke its scale once (the same in every panel and every run)."""
    _polar(ax)
    ax.set_xticklabels(["fall in\nAUROC", "meaning\n(0–1)" if meter else "meaning\n(no meter)", "s per\ndoc (log)"],
                       fontsize=7)
    offsets = (((-4, -3), "right"), ((-1, 4), "right"), ((4, 1), "left"))  # beside each spoke, off the others
    for angle, ticks, (xy, ha) in zip(_ANGLES, (_EFFECT_TICKS, _MEANING_TICKS, _COST_TICKS), offsets):
        for r, label in ticks:
            ax.plot([angle], [r], marker="o", ms=2, color="0.3")
            ax.annotate(label, (angle, r), xytext=xy, textcoords="offset points", fontsize=7, color="0.2", ha=ha)
    ax.set_title("scale (every panel)", fontsize=7, pad=8)


def triangle_figure(tables):
    """The triangle per attack on fixed scales (:func:`triangle_scores`), each spoke labelled with the raw
    figure; a first panel gives the scales. An attack with no measurable effect is drawn as an open grey outline
    and says so; a figure not measured (no meaning meter, or one blind to the attack's change) has no vertex."""
    scores = triangle_scores(tables)
    meter = scores.attrs.get("meter")
    n = len(scores) + 1
    cols = min(4, n)
    rows = int(np.ceil(n / cols))
    width = PAGE_WIDTH_IN if cols > 2 else COLUMN_WIDTH_IN
    with style() as plt:
        fig, axes = plt.subplots(rows, cols, figsize=(width, width / cols * 1.3 * rows + 0.6),
                                 subplot_kw={"projection": "polar"}, squeeze=False, layout="constrained")
        axes = axes.ravel()
        _scale_key(axes[0], meter)
        for ax, (attack, row) in zip(axes[1:], scores.iterrows()):
            _polar(ax)
            vals = row[["effectiveness", "quality", "cost"]].to_numpy(float)
            ok = np.isfinite(vals)
            effective = row["effect"] == "fall"
            colour = {"fall": "tab:blue", "backfire": "tab:orange"}.get(row["effect"], "0.45")
            if ok.all():
                closed_a, closed_r = np.r_[_ANGLES, _ANGLES[:1]], np.r_[vals, vals[:1]]
                if effective:
                    ax.fill(closed_a, closed_r, alpha=0.35, color=colour)
                ax.plot(closed_a, closed_r, lw=1.0, color=colour, ls="-" if effective else "--")
            else:  # only the measured vertices, joined where two are neighbours: no vertex at a guessed value
                for i in range(3):
                    j = (i + 1) % 3
                    if ok[i] and ok[j]:
                        ax.plot([_ANGLES[i], _ANGLES[j]], [vals[i], vals[j]], lw=1.0, color=colour,
                                ls="-" if effective else "--")
            ax.plot(_ANGLES[ok], vals[ok], ls="none", marker="o", ms=2.5, color=colour)
            d = row["n_detectors"]
            parts = ([f"falls for {row['measurable']}/{d}"] if row["measurable"] else []) + \
                ([f"backfires for {row['backfires']}/{d}"] if row["backfires"] else [])
            said = ", ".join(parts) if row["effect"] != "none" or parts else "no measurable effect"
            kept = "not measured" if not np.isfinite(row["similarity"]) else f"{row['similarity']:.3f}"
            ax.set_xticklabels([f"ΔAUROC {row['auroc_change']:+.3f}\n{said}", f"meaning\n{kept}",
                                f"cost\n{_ms(row['wall_s'])}"], fontsize=7)
            ax.set_title(str(attack) + ("" if effective else "\n(no measurable effect)" if row["effect"] == "none"
                                        else "\n(backfires)"), fontsize=7, pad=8, color="black" if effective
                         else "0.3")
        for ax in axes[n:]:
            ax.set_visible(False)
        fig.suptitle("Per attack: fall in AUROC (mean over detectors; a fall of "
                     f"{EFFECT_FULL:g} reaches the rim), meaning preserved ({meter or 'not measured'}; its own "
                     f"0–1 scale), wall time per document (log, {COST_SLOW:g} s at the centre to 1 µs at the rim); "
                     "outward = better for the attacker; the same scales in every run", fontsize=7, wrap=True)
    return fig


def heatmap_figure(tables, metric: str = "auroc", fpr: "float | None" = None):
    """Attacks x detectors, AUROC or TPR at ``fpr`` (None: :func:`figure_fpr`), each cell with its interval."""
    m = tables["metrics"]
    fpr = None if metric == "auroc" else figure_fpr(tables, fpr)
    f = None if metric == "auroc" else fpr
    table, lo, hi = (figure_matrix(m, "auroc" if metric == "auroc" else "tpr", f, col)
                     for col in ("value", "value_lo", "value_hi"))
    note = None if metric == "auroc" else underpowered_note(tables, fpr)
    ncol, nrow = table.shape[1], table.shape[0]
    width = min(PAGE_WIDTH_IN, max(COLUMN_WIDTH_IN, 0.72 * ncol + 1.9))
    with style() as plt:
        fig, ax = plt.subplots(figsize=(width, 0.34 * nrow + 1.5), layout="constrained")
        im = ax.imshow(table.to_numpy(float), cmap="RdYlGn", vmin=0, vmax=1, aspect="auto")
        ax.set_xticks(range(ncol), table.columns, rotation=45, ha="right")
        ax.set_yticks(range(nrow), table.index)
        ax.set_xlabel("detector")
        ax.set_ylabel("attack")
        for i in range(nrow):
            for j in range(ncol):
                v, a, b = table.iat[i, j], lo.iat[i, j], hi.iat[i, j]
                text = "n/a" if pd.isna(v) else f"{v:.2f}" + ("" if pd.isna(a) else f"\n{a:.2f}–{b:.2f}")
                ax.text(j, i, text, ha="center", va="center", fontsize=7, linespacing=0.95)
        if note and table.isna().all().all():
            ax.text(0.5, 0.5, _boxed(note), transform=ax.transAxes, ha="center", va="center", fontsize=7,
                    bbox={"facecolor": "white", "edgecolor": "tab:red"})
        fig.colorbar(im, ax=ax, label=f"{_label(metric, fpr)} (0–1)", shrink=0.9)
        ax.set_title(f"{_label(metric, fpr)} per attack and detector (95% bootstrap interval below)")
    return fig


def intervals_figure(tables, metric: str = "auroc", fpr: "float | None" = None):
    """Per attack, one point per detector with its 95% interval (left) and the change versus
    clean with its paired interval (right): overlapping bars mean the data cannot tell them apart.
    ``fpr``: of the TPR figure (None: :func:`figure_fpr`)."""
    m = tables["metrics"]
    fpr = None if metric == "auroc" else figure_fpr(tables, fpr)
    name, f = ("auroc", None) if metric == "auroc" else ("tpr", fpr)
    cols = ("value", "value_lo", "value_hi", "change", "change_lo", "change_hi")
    v, lo, hi, d, dlo, dhi = (figure_matrix(m, name, f, c) for c in cols)
    attacks, detectors = list(v.index), list(v.columns)
    note = None if metric == "auroc" else underpowered_note(tables, fpr)
    height = min(8.0, 0.07 * len(attacks) * max(len(detectors), 2) + 1.6)
    with style() as plt:
        fig, axes = plt.subplots(1, 2, figsize=(PAGE_WIDTH_IN, height), sharey=True, layout="constrained")
        y = np.arange(len(attacks))
        step = 0.7 / max(len(detectors), 1)
        markers = "os^Dv<>pP*"
        for k, det in enumerate(detectors):
            pos = y - 0.35 + step * (k + 0.5)
            for ax, (val, a, b) in zip(axes, ((v, lo, hi), (d, dlo, dhi))):
                x = val[det].to_numpy(float)
                ax.errorbar(x, pos, xerr=_errors(x, a[det].to_numpy(float), b[det].to_numpy(float)),
                            fmt=markers[k % len(markers)], ms=3, capsize=1.5, lw=0.7, label=det,
                            color=plt.get_cmap("tab10")(k % 10))
        axes[0].set_yticks(y, attacks)
        axes[0].invert_yaxis()
        axes[0].set_ylabel("attack")
        axes[0].set_xlabel(f"{_label(metric, fpr)} (0–1; 95% bootstrap interval)")
        axes[1].axvline(0.0, color="grey", lw=0.6, ls="--")
        axes[1].set_xlabel("change versus clean (paired 95% interval)")
        empty = not np.isfinite(v.to_numpy(float)).any()
        if empty:  # nothing to scale to: the figure's full range
            axes[0].set_xlim(0, 1)
            axes[1].set_xlim(-1, 1)
        for ax in axes:
            ax.xaxis.set_major_locator(plt.MaxNLocator(5))
            if note and empty:
                ax.text(0.5, 0.5, _boxed(note), transform=ax.transAxes, ha="center", va="center",
                        fontsize=7, bbox={"facecolor": "white", "edgecolor": "tab:red"})
        fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center",
                   ncol=max(1, min(4, len(detectors))),
                   title="detector", frameon=False)
        fig.suptitle(f"{_label(metric, fpr)} per attack and detector")
    return fig


def _swept(tables) -> tuple[pd.Series, pd.Index, list[str]]:
    rates = tables["cost"].groupby("attack")["rate"].first()
    names = rates.index.str.split("@").str[0]
    return rates, names, [n for n in sorted(set(names)) if (names == n).sum() > 1]


def theta_sweep_figure(tables):
    """AUROC per detector (95% error bars, top) and meaning preserved (bottom) vs θ for each attack run at
    several θ: colour = attack, marker = detector; None when the run sweeps no attack."""
    rates, names, swept = _swept(tables)
    if not swept:
        return None
    m = tables["metrics"]
    au, lo, hi = (figure_matrix(m, "auroc", None, c) for c in ("value", "value_lo", "value_hi"))
    q = tables.get("quality")
    measure = meaning_measure(q)
    meaning = meaning_by_attack(q, n_boot=0, cost=tables.get("cost"))
    unseen = set(meaning.index[~meaning["measured"].astype(bool)]) if len(meaning) else set()
    markers = "os^Dv<>pP*"
    with style() as plt:
        entries = len(swept) * (len(au.columns) + 1)  # the legend's rows grow the figure, not squeeze the panels
        height = 3.6 + 0.13 * (entries if entries > 6 else (entries + 1) // 2)
        fig, (ax, ax2) = plt.subplots(2, 1, figsize=(COLUMN_WIDTH_IN, height), sharex=True, layout="constrained",
                                      height_ratios=(3, 2))
        colours = plt.get_cmap("tab10")
        lines = len(swept) * len(au.columns)
        span = float(np.ptp(rates[names.isin(swept)].to_numpy(float))) or 1.0
        for i, name in enumerate(swept):
            labels = rates.index[names == name]
            labels = labels[np.argsort(rates[labels].to_numpy())]
            th = rates[labels].to_numpy(float)
            for k, det in enumerate(au.columns):
                x = au[det].reindex(labels).to_numpy(float)
                err = _errors(x, lo[det].reindex(labels).to_numpy(float), hi[det].reindex(labels).to_numpy(float))
                dodge = (i * len(au.columns) + k - (lines - 1) / 2) * 0.012 * span  # bars side by side
                ax.errorbar(th + dodge, x, yerr=err, marker=markers[k % len(markers)], ms=3, capsize=1.5, lw=0.9,
                            color=colours(i % 10), label=f"{name} · {det}")
            if measure is not None:
                mean = pd.to_numeric(q[measure[0]], errors="coerce").groupby(q["attack"]).mean()
                blind = [label in unseen for label in labels]
                ax2.plot(th, mean.reindex(labels).to_numpy(float), marker=markers[i % len(markers)], ms=3,
                         ls="--", lw=0.9, color=colours(i % 10), mfc="none" if all(blind) else colours(i % 10),
                         label=f"{name}: meaning not measured" if all(blind) else f"{name}: meaning")
        ax.set_ylabel("AUROC (0–1, 95% interval)")
        handles, labels = ax.get_legend_handles_labels()
        more, names_ = ax2.get_legend_handles_labels()
        fig.legend(handles + more, labels + names_, loc="outside lower center", ncol=1 if entries > 6 else 2,
                   title="solid: AUROC of attack · detector\ndashed: meaning preserved (hollow: meter blind)",
                   frameon=False)
        ax2.set_xlabel("θ (attack rate: share of eligible sites edited)")
        ax2.set_ylabel(f"meaning preserved\n({measure[0] if measure else 'not measured'}, 0–1)")
        if measure is None:
            ax2.text(0.5, 0.5, "no meaning meter in this run", transform=ax2.transAxes, ha="center", va="center")
        ax.set_title("θ sweep: detection against meaning preserved")
    return fig


def cost_vs_length_figure(tables):
    """Seconds per document against input length (TH-Bench Figures 14-15), one small panel per attack on shared
    axes: each document a point, the mean per length bucket a line; readable with any number of attacks and
    buckets (one line per attack in one panel is not)."""
    cost = tables["cost"]
    t = cost_by_length(cost)
    column = t.attrs.get("length")
    unit = "GPT-2 tokens" if column == "tokens_in" else "words"
    attacks = sorted(set(cost["attack"]))
    cols = min(4, max(len(attacks), 1))
    rows = int(np.ceil(len(attacks) / cols))
    width = PAGE_WIDTH_IN if cols > 2 else COLUMN_WIDTH_IN
    with style() as plt:
        fig, axes = plt.subplots(rows, cols, figsize=(width, 1.45 * rows + 0.8), sharex=True, sharey=True,
                                 squeeze=False, layout="constrained")
        for ax, attack in zip(axes.ravel(), attacks):
            g = cost[cost["attack"] == attack]
            x = pd.to_numeric(g[column], errors="coerce").to_numpy(float)
            y = pd.to_numeric(g["wall_s"], errors="coerce").to_numpy(float)
            ok = np.isfinite(x) & np.isfinite(y) & (y > 0)
            ax.scatter(x[ok], y[ok], s=5, alpha=0.5, color="tab:blue", linewidths=0)
            means = t[t["attack"] == attack]
            centres = [_bucket_centre(str(b)) for b in means["bucket"]]
            ax.plot(centres, means["wall_ms_per_doc"].to_numpy(float) / 1e3, marker="o", ms=2.5, lw=1.0,
                    color="tab:red")
            _seconds_axis(ax)
            ax.set_title(str(attack), fontsize=7, pad=3)
        for ax in axes.ravel()[len(attacks):]:
            ax.set_visible(False)
        fig.supxlabel(f"input length ({unit})", fontsize=8)
        fig.supylabel("wall time per document (s, log scale)", fontsize=8)
        fig.suptitle("Attack cost against input length: dots = documents, red = mean per length bucket ("
                     f"up to 200, then per 100 {unit})", fontsize=8)
    return fig


def _seconds_axis(ax) -> None:
    """y: seconds on a log scale, the decades written with their unit (1 µs, 1 ms, 1 s), not as mathtext (the
    figure style turns mathtext off, so a label is drawn as the text it is)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    from .report import seconds_text

    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: seconds_text(v) if v > 0 else ""))
    ax.yaxis.set_minor_formatter(NullFormatter())


def _bucket_centre(label: str) -> float:
    """The middle of a length bucket's label (``"101–200"`` -> 150.5; ``"1001+"`` -> 1050)."""
    if label.endswith("+"):
        return float(label[:-1]) + 50
    lo, _, hi = label.partition("–")
    return (float(lo) + float(hi)) / 2


def _draw(fig, out_dir, name, formats) -> list[Path]:
    return [] if fig is None else save(fig, out_dir, name, formats)


def plot_scatter(tables, out_dir, metric: str = "auroc", fpr: float = 0.05, formats=FORMATS) -> list[Path]:
    return _draw(scatter_figure(tables, metric, fpr), Path(out_dir), "scatter" if metric == "auroc"
                 else "scatter_tpr", formats)


def plot_triangle(tables, out_dir, formats=FORMATS) -> list[Path]:
    return _draw(triangle_figure(tables), Path(out_dir), "triangle", formats)


def plot_heatmap(tables, out_dir, metric: str = "auroc", formats=FORMATS, fpr: "float | None" = None) -> list[Path]:
    return _draw(heatmap_figure(tables, metric, fpr), Path(out_dir), f"heatmap_{metric}", formats)


def plot_intervals(tables, out_dir, metric: str = "auroc", fpr: "float | None" = None,
                   formats=FORMATS) -> list[Path]:
    return _draw(intervals_figure(tables, metric, fpr), Path(out_dir), f"intervals_{metric}", formats)


def plot_theta_sweep(tables, out_dir, formats=FORMATS) -> list[Path]:
    return _draw(theta_sweep_figure(tables), Path(out_dir), "theta_sweep", formats)


def plot_cost_vs_length(tables, out_dir, formats=FORMATS) -> list[Path]:
    return _draw(cost_vs_length_figure(tables), Path(out_dir), "cost_vs_length", formats)


def plot_curves(tables, out_dir, formats=FORMATS) -> list[Path]:
    """The ROC and DET curves per detector and attack (:mod:`.curves`); nothing without a scores table."""
    return (_draw(curves_figure(tables, "roc"), Path(out_dir), "roc", formats) +
            _draw(curves_figure(tables, "det"), Path(out_dir), "det", formats))


def figure_captions(tables: dict[str, pd.DataFrame], fpr: "float | None" = None,
                    manifest: dict | None = None) -> dict[str, str]:
    """One caption line per figure :func:`plot_all` draws (file stem -> caption); a figure it skips gets
    the reason instead (the watermark figures: only for a run with watermark detectors, given its ``manifest``).
    ``fpr``: of the TPR figures (None: :func:`figure_fpr`)."""
    fpr = figure_fpr(tables, fpr)
    q = tables.get("quality")
    measure = meaning_measure(q)
    meaning = measure[0] if measure else "not measured: no meaning meter in the run"
    triangle_meaning = meter_name(q, measure) or meaning
    note = underpowered_note(tables, fpr)
    tpr = f" {note[0].upper() + note[1:]}; those cells read n/a.".replace(" < ", ", fewer than the ") if note else ""
    _, _, swept = _swept(tables)
    out = {"scatter": scatter_caption(scatter_points(tables)),
           "triangle": ("Triangle per attack on fixed scales, the same in every run (the first panel gives them): "
                        f"fall in AUROC, mean over detectors (linear, a fall of {EFFECT_FULL:g} at the rim); meaning "
                        f"preserved ({triangle_meaning}) on the meter's own 0–1 scale; wall time per document (log, "
                        f"{COST_SLOW:g} s at the centre, 1 µs at the rim); outward = better for the attacker, each "
                        "spoke labelled with the raw figure and how many detectors' paired 95% intervals show a fall "
                        "or a rise. Blue: the mean falls, measurably for some detector; orange outline: the attack "
                        "backfires (the mean rises, measurably for some detector); grey outline: no measurable "
                        "effect. No vertex where a figure was not "
                        "measured (no meaning meter, or one blind to the attack's change)."),
           "heatmap_auroc": "AUROC (0–1) per attack (rows) and detector (columns), 95% bootstrap interval "
                            "under each value.",
           "heatmap_tpr": f"TPR at FPR {fpr:g} (0–1) per attack and detector, thresholds calibrated on clean "
                          f"human texts, 95% bootstrap interval under each value.{tpr}",
           "intervals_auroc": "AUROC per attack and detector with its 95% bootstrap interval (left) and its "
                              "change versus clean with the paired interval (right); overlapping bars: the data "
                              "cannot tell them apart.",
           "intervals_tpr": f"TPR at FPR {fpr:g} per attack and detector (left) and its change versus clean "
                            f"(right), 95% bootstrap intervals.{tpr}",
           "theta_sweep": (f"AUROC per detector (top, 95% bootstrap interval) and meaning preserved ({meaning}, "
                           f"bottom) against θ for {', '.join(swept)}; colour: attack, marker: detector."
                           if swept else "Not drawn: the run sweeps no attack over several θ (give --rates)."),
           "cost_vs_length": "Wall time per attacked document (s, log scale) against its input length, one panel "
                             "per attack on shared axes: dots are documents, the red line the mean per length "
                             "bucket (up to 200, then per 100; a batch-timed attack gives each document its "
                             "batch's mean)."}
    scores = tables.get("scores")
    if scores is not None and not scores.empty:
        out["roc"], out["det"] = curves_caption("roc"), curves_caption("det")
    from .watermark import watermark_captions

    out.update(watermark_captions(tables, manifest))
    return out


def plot_all(tables: dict[str, pd.DataFrame], out_dir, formats=FORMATS, manifest: dict | None = None) -> list[Path]:
    """Every figure of the run in ``out_dir`` (each format of ``formats``) and ``captions.md``, one caption
    line per figure (:func:`figure_captions`); with the run's ``manifest``, the watermark figures of its
    watermark detectors (:mod:`.watermark`). Figures already in ``out_dir`` that were drawn from the same
    tables, manifest, formats and code, and are unchanged since, are not drawn again (:mod:`._reuse`: a cached
    rerun of the demo reads its results in seconds and would spend most of its time redrawing them)."""
    from ._figstyle import check_formats
    from ._reuse import inputs_digest, record_files, reusable_files

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    digest = inputs_digest(tables, check_formats(formats), manifest)
    reused = reusable_files(out, digest)
    if reused is not None:
        return reused
    paths = []
    paths += plot_scatter(tables, out, formats=formats)
    paths += plot_triangle(tables, out, formats)
    paths += plot_heatmap(tables, out, "auroc", formats)
    paths += plot_heatmap(tables, out, "tpr", formats)
    paths += plot_intervals(tables, out, "auroc", formats=formats)
    paths += plot_intervals(tables, out, "tpr", formats=formats)
    paths += plot_theta_sweep(tables, out, formats)
    paths += plot_cost_vs_length(tables, out, formats)
    paths += plot_curves(tables, out, formats)
    from .watermark import watermark_score_figure, watermark_tokens_figure

    paths += _draw(watermark_score_figure(tables, manifest), out, "watermark_scores", formats)
    paths += _draw(watermark_tokens_figure(tables, manifest), out, "watermark_tokens", formats)
    paths.append(write_text(out / "captions.md", figures_markdown(figure_captions(tables, manifest=manifest),
                                                                  folder=None)))
    record_files(out, digest, paths)
    return paths
