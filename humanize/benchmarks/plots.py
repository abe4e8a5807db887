"""Figures from a run's tables (matplotlib, PNG and SVG).

* the effectiveness / quality / cost triangle per attack (TH-Bench Figure 1): three
  axes, each normalised to [0, 1] across the attacks of the run, higher = better
  for the attacker (more AUROC drop, more similar text, cheaper to run);
* the θ sweep trade-off (TH-Bench Figure 10): AUROC and cosine similarity vs θ;
* cost against input length (TH-Bench Figures 14-15);
* an attack x detector heatmap of AUROC or TPR at FPR 5%.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .report import CLEAN, auroc_table, cost_by_length

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

    effectiveness: mean AUROC drop over detectors (clean - attacked); quality: mean
    cosine similarity (falls back to 1 - char edit rate without quality); cost:
    1 - normalised log wall time per document. Each is min-max normalised across
    the run's attacks, as TH-Bench normalises Figure 1.
    """
    au = auroc_table(tables["metrics"])
    if CLEAN not in au.index:
        raise ValueError("the run has no clean ('none') rows to measure the AUROC drop against")
    drop = (au.loc[CLEAN] - au.drop(index=CLEAN)).mean(axis=1)
    frame = pd.DataFrame({"auroc_drop": drop})
    if "quality" in tables and "cosine" in tables["quality"]:
        frame["similarity"] = tables["quality"].groupby("attack")["cosine"].mean()
    elif "quality" in tables and "char_edit_rate" in tables["quality"]:
        frame["similarity"] = 1 - tables["quality"].groupby("attack")["char_edit_rate"].mean()
    else:
        frame["similarity"] = np.nan
    frame["wall_s"] = tables["cost"].groupby("attack")["wall_s"].mean()
    out = pd.DataFrame(index=frame.index)
    out["effectiveness"] = _minmax(frame["auroc_drop"])
    out["quality"] = _minmax(frame["similarity"])
    out["cost"] = 1 - _minmax(np.log10(frame["wall_s"].clip(lower=1e-7)))
    return out.join(frame)


def _save(fig, out_dir: Path, name: str, formats) -> list[Path]:
    paths = []
    for fmt in formats:
        if fmt not in FORMATS:
            raise ValueError(f"unknown plot format {fmt!r}; choose from {list(FORMATS)}")
        p = out_dir / f"{name}.{fmt}"
        fig.savefig(p, bbox_inches="tight", dpi=120)
        paths.append(p)
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
    for ax, (attack, row) in zip(axes, scores.iterrows()):
        vals = np.nan_to_num(row[["effectiveness", "quality", "cost"]].to_numpy(float), nan=0.0)
        ax.fill(np.r_[angles, angles[:1]], np.r_[vals, vals[:1]], alpha=0.35)
        ax.plot(np.r_[angles, angles[:1]], np.r_[vals, vals[:1]], lw=1.5)
        ax.set_xticks(angles)
        ax.set_xticklabels(["effectiveness", "quality", "cost"], fontsize=8)
        ax.set_ylim(0, 1)
        ax.set_yticks([0.5, 1.0])
        ax.set_yticklabels([])
        ax.set_title(attack, fontsize=9)
    for ax in axes[n:]:
        ax.set_visible(False)
    fig.suptitle("Effectiveness / quality / cost per attack (normalised; higher = better for the attacker)",
                 fontsize=10)
    paths = _save(fig, Path(out_dir), "triangle", formats)
    plt.close(fig)
    return paths


def plot_heatmap(tables, out_dir, metric: str = "auroc", formats=FORMATS) -> list[Path]:
    plt = _plt()
    m = tables["metrics"]
    if metric == "auroc":
        table = auroc_table(m)
    else:
        sel = m[(m["metric"] == "tpr") & np.isclose(m["fpr"].astype(float), 0.05)]
        table = sel.pivot_table(index="attack", columns="detector", values="value", aggfunc="first", dropna=False)
    fig, ax = plt.subplots(figsize=(1.1 * table.shape[1] + 3, 0.45 * table.shape[0] + 1.5))
    im = ax.imshow(table.to_numpy(float), cmap="RdYlGn", vmin=0, vmax=1, aspect="auto")
    ax.set_xticks(range(table.shape[1]), table.columns, rotation=45, ha="right", fontsize=8)
    ax.set_yticks(range(table.shape[0]), table.index, fontsize=8)
    for i in range(table.shape[0]):
        for j in range(table.shape[1]):
            v = table.iat[i, j]
            ax.text(j, i, "—" if pd.isna(v) else f"{v:.2f}", ha="center", va="center", fontsize=7)
    fig.colorbar(im, ax=ax, label="AUROC" if metric == "auroc" else "TPR at FPR 5%")
    ax.set_title(f"{'AUROC' if metric == 'auroc' else 'TPR at FPR 5%'}: attack x detector", fontsize=10)
    paths = _save(fig, Path(out_dir), f"heatmap_{metric}", formats)
    plt.close(fig)
    return paths


def plot_theta_sweep(tables, out_dir, formats=FORMATS) -> list[Path]:
    """AUROC (mean over detectors) and cosine vs θ for each attack run at several θ."""
    plt = _plt()
    cost = tables["cost"]
    rates = cost.groupby("attack")["rate"].first()
    names = rates.index.str.split("@").str[0]
    swept = [n for n in sorted(set(names)) if (names == n).sum() > 1]
    if not swept:
        return []
    au = auroc_table(tables["metrics"]).mean(axis=1)
    q = tables.get("quality")
    fig, ax = plt.subplots(figsize=(6, 4))
    ax2 = ax.twinx()
    for name in swept:
        labels = rates.index[names == name]
        order = np.argsort(rates[labels].to_numpy())
        labels = labels[order]
        th = rates[labels].to_numpy()
        ax.plot(th, au.reindex(labels).to_numpy(), marker="o", label=f"{name} AUROC")
        if q is not None and "cosine" in q:
            cos = q.groupby("attack")["cosine"].mean().reindex(labels).to_numpy()
            ax2.plot(th, cos, marker="s", ls="--", label=f"{name} cosine")
    ax.set_xlabel("θ (attack rate)")
    ax.set_ylabel("mean AUROC over detectors")
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
    paths += plot_theta_sweep(tables, out, formats)
    paths += plot_cost_vs_length(tables, out, formats)
    return paths
