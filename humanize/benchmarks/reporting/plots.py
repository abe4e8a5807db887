"""Figures from a run's tables (matplotlib, PNG and SVG).

* the effectiveness / quality / cost triangle per attack (TH-Bench Figure 1): three
  axes, each normalised to [0, 1] across the attacks of the run, higher = better
  for the attacker (more AUROC drop, more similar text, cheaper to run);
* the θ sweep trade-off (TH-Bench Figure 10): AUROC and cosine similarity vs θ;
* cost against input length (TH-Bench Figures 14-15);
* an attack x detector heatmap of AUROC or TPR at FPR 5%, each cell with its 95% interval;
* interval plots: AUROC (or TPR) per attack and detector, and its change versus clean,
  as points with 95% bootstrap error bars (paired intervals for the changes), where a
  reader compares detectors and attacks.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ._files import atomic_write
from .report import CLEAN, cost_by_length, figure_matrix, meaning_measure

FORMATS = ("png", "svg")


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _minmax(x: pd.Series) -> pd.Series:
    lo, hi = x.min(), x.max()
    if not np.isfinite(lo) or not np.isfinite(hi) or hi - lo < 1e-12:
        return pd.Series(np.where(np.isfinite(x), 1.0, np.nan), index=x.index)
    return (x - lo) / (hi - lo)


def triangle_scores(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Per attack: effectiveness, quality and cost on [0, 1], higher = better for the attacker.

    effectiveness: mean AUROC drop over detectors (clean - attacked); quality: meaning
    preserved, the mean of the strongest meaning meter the run computed (entailment, LLM
    judge, cosine, ROUGE-L: :data:`~.report.MEANING_MEASURES`; 1 - char edit rate without
    any), named in ``attrs["quality_measure"]``; cost: 1 - normalised log wall time per
    document. Each is min-max normalised across the run's attacks, as TH-Bench normalises Figure 1.
    """
    au = figure_matrix(tables["metrics"], "auroc")
    if CLEAN not in au.index:
        raise ValueError("the run has no clean ('none') rows to measure the AUROC drop against")
    drop = (au.loc[CLEAN] - au.drop(index=CLEAN)).mean(axis=1)
    frame = pd.DataFrame({"auroc_drop": drop})
    quality = tables.get("quality")
    measure = meaning_measure(quality)
    if measure is not None:
        used = measure[0]
        frame["similarity"] = pd.to_numeric(quality[used], errors="coerce").groupby(quality["attack"]).mean()
    elif quality is not None and "char_edit_rate" in quality:
        used = "1 - char_edit_rate"
        frame["similarity"] = 1 - quality.groupby("attack")["char_edit_rate"].mean()
    else:
        used = None
        frame["similarity"] = np.nan
    frame["wall_s"] = tables["cost"].groupby("attack")["wall_s"].mean()
    out = pd.DataFrame(index=frame.index)
    out["effectiveness"] = _minmax(frame["auroc_drop"])
    out["quality"] = _minmax(frame["similarity"])
    out["cost"] = 1 - _minmax(np.log10(frame["wall_s"].clip(lower=1e-7)))
    out = out.join(frame)
    out.attrs["quality_measure"] = used
    return out


def _save(fig, out_dir: Path, name: str, formats) -> list[Path]:
    paths = []
    for fmt in formats:
        if fmt not in FORMATS:
            raise ValueError(f"unknown plot format {fmt!r}; choose from {list(FORMATS)}")
        p = out_dir / f"{name}.{fmt}"
        paths.append(atomic_write(p, lambda tmp, fmt=fmt: fig.savefig(tmp, format=fmt, bbox_inches="tight", dpi=120)))
    return paths


def plot_triangle(tables, out_dir, formats=FORMATS) -> list[Path]:
    plt = _plt()
    scores = triangle_scores(tables)
    n = len(scores)
    cols = min(4, max(n, 1))
    rows = int(np.ceil(n / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 3.2 * rows), subplot_kw={"projection": "polar"})
    axes = np.atleast_1d(axes).ravel()
    angles = np.array([90, 210, 330]) * np.pi / 180
    quality_label = f"meaning\n({scores.attrs.get('quality_measure') or 'n/a'})"
    for ax, (attack, row) in zip(axes, scores.iterrows()):
        vals = np.nan_to_num(row[["effectiveness", "quality", "cost"]].to_numpy(float), nan=0.0)
        ax.fill(np.r_[angles, angles[:1]], np.r_[vals, vals[:1]], alpha=0.35)
        ax.plot(np.r_[angles, angles[:1]], np.r_[vals, vals[:1]], lw=1.5)
        ax.set_xticks(angles)
        ax.set_xticklabels(["effectiveness", quality_label, "cost"], fontsize=8)
        ax.set_ylim(0, 1)
        ax.set_yticks([0.5, 1.0])
        ax.set_yticklabels([])
        ax.set_title(attack, fontsize=9)
    for ax in axes[n:]:
        ax.set_visible(False)
    fig.suptitle("Effectiveness / meaning preserved / cost per attack (normalised; higher = better for the "
                 f"attacker); meaning from {scores.attrs.get('quality_measure') or 'no quality meter'}", fontsize=10)
    paths = _save(fig, Path(out_dir), "triangle", formats)
    plt.close(fig)
    return paths


def _errors(value: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """matplotlib's yerr/xerr (distances below and above), 0 where the interval is missing."""
    return np.nan_to_num(np.vstack([value - lo, hi - value]), nan=0.0).clip(min=0)


def _label(metric: str, fpr) -> str:
    return "AUROC" if metric == "auroc" else f"TPR at FPR {fpr:g}"


def plot_heatmap(tables, out_dir, metric: str = "auroc", formats=FORMATS, fpr: float = 0.05) -> list[Path]:
    plt = _plt()
    m = tables["metrics"]
    f = None if metric == "auroc" else fpr
    table, lo, hi = (figure_matrix(m, "auroc" if metric == "auroc" else "tpr", f, col)
                     for col in ("value", "value_lo", "value_hi"))
    fig, ax = plt.subplots(figsize=(1.3 * table.shape[1] + 3, 0.55 * table.shape[0] + 1.5))
    im = ax.imshow(table.to_numpy(float), cmap="RdYlGn", vmin=0, vmax=1, aspect="auto")
    ax.set_xticks(range(table.shape[1]), table.columns, rotation=45, ha="right", fontsize=8)
    ax.set_yticks(range(table.shape[0]), table.index, fontsize=8)
    for i in range(table.shape[0]):
        for j in range(table.shape[1]):
            v, a, b = table.iat[i, j], lo.iat[i, j], hi.iat[i, j]
            text = "—" if pd.isna(v) else f"{v:.2f}" + ("" if pd.isna(a) else f"\n[{a:.2f}, {b:.2f}]")
            ax.text(j, i, text, ha="center", va="center", fontsize=6)
    fig.colorbar(im, ax=ax, label=_label(metric, fpr))
    ax.set_title(f"{_label(metric, fpr)}: attack x detector (95% bootstrap interval; — = not reached)",
                 fontsize=9)
    paths = _save(fig, Path(out_dir), f"heatmap_{metric}", formats)
    plt.close(fig)
    return paths


def plot_intervals(tables, out_dir, metric: str = "auroc", fpr: float = 0.05, formats=FORMATS) -> list[Path]:
    """Per attack, one point per detector with its 95% interval (left) and the change versus
    clean with its paired interval (right): overlapping bars mean the data cannot tell them apart."""
    plt = _plt()
    m = tables["metrics"]
    name, f = ("auroc", None) if metric == "auroc" else ("tpr", fpr)
    cols = ("value", "value_lo", "value_hi", "change", "change_lo", "change_hi")
    v, lo, hi, d, dlo, dhi = (figure_matrix(m, name, f, c) for c in cols)
    attacks, detectors = list(v.index), list(v.columns)
    fig, axes = plt.subplots(1, 2, figsize=(10, 0.45 * len(attacks) * max(1, len(detectors) / 2) + 1.8),
                             sharey=True)
    y = np.arange(len(attacks))
    step = 0.7 / max(len(detectors), 1)
    for k, det in enumerate(detectors):
        pos = y - 0.35 + step * (k + 0.5)
        for ax, (val, a, b) in zip(axes, ((v, lo, hi), (d, dlo, dhi))):
            x = val[det].to_numpy(float)
            ax.errorbar(x, pos, xerr=_errors(x, a[det].to_numpy(float), b[det].to_numpy(float)), fmt="o",
                        ms=4, capsize=2, lw=1, label=det)
    axes[0].set_yticks(y, attacks, fontsize=8)
    axes[0].invert_yaxis()
    axes[0].set_xlabel(f"{_label(metric, fpr)} (95% bootstrap interval)")
    axes[1].axvline(0.0, color="grey", lw=0.8, ls="--")
    for ax in axes:
        ax.xaxis.set_major_locator(plt.MaxNLocator(5))
    axes[1].set_xlabel("change versus clean (paired 95% interval)")
    axes[0].legend(fontsize=7, loc="best")
    fig.suptitle(f"{_label(metric, fpr)} per attack and detector", fontsize=10)
    paths = _save(fig, Path(out_dir), f"intervals_{metric}", formats)
    plt.close(fig)
    return paths


def plot_theta_sweep(tables, out_dir, formats=FORMATS) -> list[Path]:
    """AUROC per detector (95% error bars) and mean cosine vs θ for each attack run at several θ."""
    plt = _plt()
    cost = tables["cost"]
    rates = cost.groupby("attack")["rate"].first()
    names = rates.index.str.split("@").str[0]
    swept = [n for n in sorted(set(names)) if (names == n).sum() > 1]
    if not swept:
        return []
    m = tables["metrics"]
    au, lo, hi = (figure_matrix(m, "auroc", None, c) for c in ("value", "value_lo", "value_hi"))
    q = tables.get("quality")
    fig, ax = plt.subplots(figsize=(6, 4))
    ax2 = ax.twinx()
    for name in swept:
        labels = rates.index[names == name]
        labels = labels[np.argsort(rates[labels].to_numpy())]
        th = rates[labels].to_numpy()
        for det in au.columns:
            x = au[det].reindex(labels).to_numpy(float)
            err = _errors(x, lo[det].reindex(labels).to_numpy(float), hi[det].reindex(labels).to_numpy(float))
            ax.errorbar(th, x, yerr=err, marker="o", ms=4, capsize=2, label=f"{name}: {det} AUROC")
        if q is not None and "cosine" in q:
            cos = q.groupby("attack")["cosine"].mean().reindex(labels).to_numpy()
            ax2.plot(th, cos, marker="s", ls="--", color="grey", label=f"{name} cosine")
    ax.set_xlabel("θ (attack rate)")
    ax.set_ylabel("AUROC (95% bootstrap interval)")
    ax2.set_ylabel("cosine similarity")
    ax.legend(loc="lower left", fontsize=7)
    ax2.legend(loc="lower right", fontsize=7)
    ax.set_title("θ sweep: effectiveness vs quality", fontsize=10)
    paths = _save(fig, Path(out_dir), "theta_sweep", formats)
    plt.close(fig)
    return paths


def plot_cost_vs_length(tables, out_dir, formats=FORMATS) -> list[Path]:
    plt = _plt()
    t = cost_by_length(tables["cost"])
    fig, ax = plt.subplots(figsize=(6, 4))
    for attack, g in t.groupby("attack"):
        ax.plot(g["bucket"].astype(str), g["wall_ms_per_doc"], marker="o", label=attack)
    ax.set_xlabel(f"input length ({'GPT-2 tokens' if t.attrs.get('length') == 'tokens_in' else 'words'}, bucket)")
    ax.set_ylabel("wall time per document (ms)")
    ax.set_yscale("log")
    ax.legend(fontsize=7, ncol=2)
    ax.set_title("Attack cost against input length", fontsize=10)
    paths = _save(fig, Path(out_dir), "cost_vs_length", formats)
    plt.close(fig)
    return paths


def plot_all(tables: dict[str, pd.DataFrame], out_dir, formats=FORMATS) -> list[Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    paths += plot_triangle(tables, out, formats)
    paths += plot_heatmap(tables, out, "auroc", formats)
    paths += plot_heatmap(tables, out, "tpr", formats)
    paths += plot_intervals(tables, out, "auroc", formats=formats)
    paths += plot_intervals(tables, out, "tpr", formats=formats)
    paths += plot_theta_sweep(tables, out, formats)
    paths += plot_cost_vs_length(tables, out, formats)
    return paths
