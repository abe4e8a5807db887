"""The watermark figures the literature reports beside AUROC and TPR (issue #37), for a run's watermark detectors.

- ``watermark_scores``: the distribution of each watermark detector's statistic per attack (the z-score of
  ``kgw`` / ``unigram``, the mean g-value of ``synthid``), on the machine texts of each attack and on the clean
  human texts: quantiles, mean, and for a z-score the share past the one-sided analytic threshold at 1% FPR
  (z > 2.326), the rule Kirchenbauer et al. (ICML 2023, §4; the reliability study, Fig. 2) and Zhao et al.
  report;
- ``watermark_tokens_tpr_at_fpr_<f>`` / ``watermark_tokens_auroc``: detection as a function of the number of
  tokens scored (Kirchenbauer et al. 2023b, *On the Reliability of Watermarks*, §4: TPR against T), read off the
  run's own metrics when it has watermark detectors that differ only in ``max_tokens`` (list them in the
  configuration, one per length; ``max_tokens`` unset = every token), each figure with its interval.

Which detectors are watermark detectors, and their parameters, come from the run's manifest (class path and
provenance, where the key is a digest), so the tables need the manifest beside the run's tables.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .selection import CLEAN, run_fprs, select

__all__ = ["WATERMARK_DETECTORS", "watermark_detectors", "watermark_score_table", "watermark_tokens_table",
           "watermark_tables", "watermark_score_figure", "watermark_tokens_figure", "watermark_captions"]

#: watermark detector classes -> the statistic their score is
WATERMARK_DETECTORS = {"humanize.detectors.watermark:KGWDetector": "z",
                       "humanize.detectors.watermark:UnigramDetector": "z",
                       "humanize.detectors.watermark:SynthIDDetector": "mean g"}
#: one-sided z at 1% FPR: the analytic threshold of a z-test
Z_AT_1PCT = 2.326
_QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


def watermark_detectors(manifest: "dict | None") -> dict[str, dict]:
    """The run's watermark detectors, by label: ``statistic``, ``class``, ``params`` (the provenance's: the key
    a digest) and ``max_tokens`` (None: every token)."""
    out = {}
    for entry in (manifest or {}).get("detectors", []) or []:
        cls = entry.get("class")
        if cls in WATERMARK_DETECTORS and entry.get("label"):
            params = dict(entry.get("params") or {})
            out[str(entry["label"])] = {"statistic": WATERMARK_DETECTORS[cls], "class": cls, "params": params,
                                        "max_tokens": params.get("max_tokens")}
    return out


def watermark_score_table(scores: pd.DataFrame, detectors: dict[str, dict]) -> pd.DataFrame:
    """Rows (detector, attack, label): the statistic's quantiles and mean over the undefended texts (clean human
    texts, then each attack's machine texts), and ``share_z_gt_2.326`` for a z-score."""
    if scores is None or scores.empty or not detectors:
        return pd.DataFrame()
    sel = scores[scores["detector"].isin(list(detectors))]
    if "defense" in sel.columns:
        sel = sel[sel["defense"] == CLEAN]
    sel = sel[(sel["label"] == "machine") | (sel["attack"] == CLEAN)]
    rows = []
    for (det, attack, label), grp in sel.groupby(["detector", "attack", "label"], sort=False):
        s = pd.to_numeric(grp["score"], errors="coerce").dropna().to_numpy(dtype=float)
        stat = detectors[det]["statistic"]
        row = {"detector": det, "attack": attack, "label": label, "statistic": stat, "n": len(s),
               "max_tokens": detectors[det]["max_tokens"]}
        row.update({f"q{int(q * 100):02d}": float(np.quantile(s, q)) if len(s) else np.nan for q in _QUANTILES})
        row["mean"] = float(s.mean()) if len(s) else np.nan
        row[f"share_z_gt_{Z_AT_1PCT}"] = float((s > Z_AT_1PCT).mean()) if stat == "z" and len(s) else np.nan
        rows.append(row)
    out = pd.DataFrame(rows)
    order = {a: i for i, a in enumerate([CLEAN, *sorted(set(out["attack"]) - {CLEAN})])}
    out = out.assign(_h=out["label"] != "human", _a=out["attack"].map(order))
    out = out.sort_values(["detector", "_h", "_a"], kind="stable").drop(columns=["_h", "_a"])
    table = out.set_index(["detector", "attack", "label"])
    table.attrs["note"] = (
        "Watermark statistic per attack (z-score for kgw / unigram, mean g-value for synthid; 0 and 0.5 without "
        "the watermark): quantiles q05..q95 and mean over the clean human texts and each attack's machine texts; "
        f"`share_z_gt_{Z_AT_1PCT}`: the share past the analytic one-sided threshold at 1% FPR (Kirchenbauer et al. "
        "2023, §4), which assumes independent tokens: compare it with the human row, whose share is the FPR that "
        "threshold actually gives on this data. `max_tokens`: tokens scored (empty: all).")
    return table


def _groups(detectors: dict[str, dict]) -> dict[str, list[str]]:
    """Watermark detectors that differ only in ``max_tokens``, by group (named by the member scoring every token,
    or the first label); groups of one are left out."""
    import json

    by_key: dict = {}
    for label, info in detectors.items():
        rest = {k: v for k, v in info["params"].items() if k != "max_tokens"}
        key = json.dumps([info["class"], rest], sort_keys=True, default=str)
        by_key.setdefault(key, []).append(label)
    out = {}
    for labels in by_key.values():
        if len({detectors[x]["max_tokens"] for x in labels}) < 2:
            continue
        full = [x for x in labels if detectors[x]["max_tokens"] is None]
        out[(full or sorted(labels))[0]] = labels
    return out


def watermark_tokens_table(metrics: pd.DataFrame, detectors: dict[str, dict], metric: str = "tpr",
                           fpr: "float | None" = None) -> pd.DataFrame:
    """Rows (watermark, attack, tokens): the figure (``tpr`` at ``fpr``, or ``auroc``) with its interval, from the
    run's metrics, for each group of watermark detectors that differ only in ``max_tokens``."""
    groups = _groups(detectors)
    if metrics is None or metrics.empty or not groups:
        return pd.DataFrame()
    sel = select(metrics, metric, fpr if metric == "tpr" else None)
    rows = []
    for group, labels in groups.items():
        for _, r in sel[sel["detector"].isin(labels)].iterrows():
            tokens = detectors[r["detector"]]["max_tokens"]
            rows.append({"watermark": group, "attack": r["attack"], "tokens": "all" if tokens is None else int(tokens),
                         "detector": r["detector"], metric: r["value"], f"{metric}_lo": r.get("value_lo", np.nan),
                         f"{metric}_hi": r.get("value_hi", np.nan), "n_machine": r.get("n_machine", np.nan),
                         "n_human": r.get("n_human", np.nan)})
    if not rows:
        return pd.DataFrame()
    out = pd.DataFrame(rows)
    out["_t"] = [np.inf if t == "all" else t for t in out["tokens"]]
    out["_a"] = out["attack"] != CLEAN
    out = out.sort_values(["watermark", "_a", "attack", "_t"], kind="stable").drop(columns=["_t", "_a"])
    table = out.set_index(["watermark", "attack", "tokens"])
    what = "AUROC" if metric == "auroc" else f"TPR at FPR {fpr:g}"
    table.attrs["note"] = (
        f"{what} of each watermark detector as a function of the number of tokens scored (its `max_tokens`; `all`: "
        "every token), per attack, with its 95% bootstrap interval (Kirchenbauer et al. 2023b, On the Reliability "
        "of Watermarks, §4: detection grows with T). Rows come from detectors of the run that differ only in "
        "`max_tokens`.")
    return table


def watermark_tables(tables: dict[str, pd.DataFrame], manifest: "dict | None", fpr=None) -> dict[str, pd.DataFrame]:
    """The watermark tables of a run (none when it has no watermark detector)."""
    detectors = watermark_detectors(manifest)
    if not detectors:
        return {}
    out = {}
    scores = watermark_score_table(tables.get("scores"), detectors)
    if not scores.empty:
        out["watermark_scores"] = scores
    metrics = tables.get("metrics")
    for f in run_fprs(metrics, fpr) if metrics is not None and not metrics.empty else ():
        t = watermark_tokens_table(metrics, detectors, "tpr", f)
        if not t.empty:
            out[f"watermark_tokens_tpr_at_fpr_{f:g}"] = t
    t = watermark_tokens_table(metrics, detectors, "auroc")
    if not t.empty:
        out["watermark_tokens_auroc"] = t
    return out


# -- figures --------------------------------------------------------------------------------------------
def watermark_score_figure(tables: dict[str, pd.DataFrame], manifest: "dict | None"):
    """One panel per watermark detector: its statistic per attack as a box plot (clean human texts first),
    the analytic 1% FPR threshold dashed for a z-score. None without watermark detectors."""
    from ._figstyle import PAGE_WIDTH_IN, pyplot, style

    detectors = watermark_detectors(manifest)
    scores = tables.get("scores")
    if not detectors or scores is None or scores.empty:
        return None
    sel = scores[scores["detector"].isin(list(detectors))]
    if "defense" in sel.columns:
        sel = sel[sel["defense"] == CLEAN]
    dets = [d for d in detectors if (sel["detector"] == d).any()]
    if not dets:
        return None
    plt = pyplot()
    with style():
        fig, axes = plt.subplots(len(dets), 1, figsize=(PAGE_WIDTH_IN, 1.9 * len(dets)), squeeze=False)
        for ax, det in zip(axes[:, 0], dets):
            d = sel[sel["detector"] == det]
            attacks = [CLEAN, *sorted(set(d["attack"]) - {CLEAN})]
            groups = [("human (clean)", d[(d["attack"] == CLEAN) & (d["label"] == "human")])]
            groups += [(a if a != CLEAN else "machine (clean)", d[(d["attack"] == a) & (d["label"] == "machine")])
                       for a in attacks]
            groups = [(name, pd.to_numeric(g["score"], errors="coerce").dropna().to_numpy()) for name, g in groups]
            groups = [(name, v) for name, v in groups if len(v)]
            ax.boxplot([v for _, v in groups], tick_labels=[name for name, _ in groups], showfliers=True,
                       flierprops={"markersize": 2})
            stat = detectors[det]["statistic"]
            if stat == "z":
                ax.axhline(Z_AT_1PCT, ls="--", lw=0.7, color="tab:red")
            else:
                ax.axhline(0.5, ls=":", lw=0.7, color="grey")
            ax.set_ylabel(stat)
            ax.set_title(det, loc="left")
            ax.tick_params(axis="x", labelrotation=20)
        fig.tight_layout()
    return fig


def _tokens_fpr(metrics: pd.DataFrame, detectors: dict[str, dict]) -> "float | None":
    """The FPR the tokens figure shows: the run's smallest with a TPR to show (an underpowered FPR has none)."""
    for f in sorted(run_fprs(metrics, None)):
        t = watermark_tokens_table(metrics, detectors, "tpr", f)
        if not t.empty and np.isfinite(pd.to_numeric(t["tpr"], errors="coerce")).any():
            return f
    return None


def watermark_tokens_figure(tables: dict[str, pd.DataFrame], manifest: "dict | None", fpr: "float | None" = None):
    """TPR at ``fpr`` (None: the run's smallest FPR with a TPR to show) against tokens scored, one line per
    attack, one panel per watermark; 95% intervals as error bars. None when the run has no such group."""
    from ._figstyle import COLUMN_WIDTH_IN, pyplot, style

    metrics = tables.get("metrics")
    detectors = watermark_detectors(manifest)
    if metrics is None or metrics.empty or not _groups(detectors):
        return None
    f = _tokens_fpr(metrics, detectors) if fpr is None else fpr
    if f is None:
        return None
    t = watermark_tokens_table(metrics, detectors, "tpr", f).reset_index()
    numeric = t[t["tokens"] != "all"]
    if numeric.empty:
        return None
    plt = pyplot()
    groups = list(dict.fromkeys(numeric["watermark"]))
    with style():
        fig, axes = plt.subplots(1, len(groups), figsize=(COLUMN_WIDTH_IN * len(groups), 2.4), squeeze=False)
        for ax, group in zip(axes[0], groups):
            g = numeric[numeric["watermark"] == group]
            for attack, a in g.groupby("attack", sort=False):
                a = a.sort_values("tokens")
                x = a["tokens"].astype(float).to_numpy()
                y = a["tpr"].astype(float).to_numpy()
                err = np.nan_to_num(np.vstack([y - a["tpr_lo"].astype(float), a["tpr_hi"].astype(float) - y]),
                                    nan=0.0).clip(min=0)
                ax.errorbar(x, y, yerr=err, marker="o", capsize=2, label=attack)
            ticks = sorted({int(v) for v in g["tokens"]})
            ax.set_xticks(ticks, labels=[str(v) for v in ticks])
            ax.set_xlabel("tokens scored")
            ax.set_ylabel(f"TPR at FPR {f:g}")
            ax.set_ylim(-0.02, 1.02)
            ax.set_title(group, loc="left")
            ax.legend(frameon=False)
        fig.tight_layout()
    return fig


def watermark_captions(tables: dict[str, pd.DataFrame], manifest: "dict | None") -> dict[str, str]:
    """Captions of the watermark figures the run draws (none without watermark detectors)."""
    detectors = watermark_detectors(manifest)
    if not detectors:
        return {}
    out = {"watermark_scores": (
        "Watermark statistic per attack, one panel per watermark detector: box plots (median, quartiles, 1.5 IQR "
        "whiskers, outliers) over the clean human texts, the clean machine texts and each attack's machine texts; "
        f"dashed red: the analytic one-sided threshold at 1% FPR (z = {Z_AT_1PCT}) for a z-score, dotted grey: "
        "the mean g-value without the watermark (0.5) for SynthID.")}
    metrics = tables.get("metrics")
    f = _tokens_fpr(metrics, detectors) if metrics is not None and not metrics.empty and _groups(detectors) else None
    if f is not None:
        out["watermark_tokens"] = (
            f"TPR at FPR {f:g} (the run's smallest FPR with a TPR to show) against the number of tokens scored, one "
            "line per attack, one panel per watermark (its detectors that differ only in `max_tokens`), 95% "
            "bootstrap intervals as bars.")
    return out
