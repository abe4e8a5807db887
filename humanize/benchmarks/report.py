"""Report tables in the papers' layouts, from a run's stored tables.

* accuracy at FPR 5% per detector x attack (RAID Table 16: TPR on machine text at
  the per-domain threshold calibrated on clean human text);
* AUROC per attack x detector (TH-Bench Table 1);
* quality per attack (TH-Bench Table 2);
* cost per attack, and per input-length bucket (TH-Bench Figures 14-15).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

CLEAN = "none"
LENGTH_BUCKETS = tuple(range(100, 1001, 100))


def _attack_order(metrics: pd.DataFrame) -> list[str]:
    names = sorted(set(metrics["attack"]) - {CLEAN})
    return ([CLEAN] if CLEAN in set(metrics["attack"]) else []) + names


def accuracy_at_fpr_table(metrics: pd.DataFrame, fpr: float = 0.05) -> pd.DataFrame:
    """Rows: detectors; columns: attacks; cells: TPR at the calibrated threshold (RAID Table 16)."""
    sel = metrics[(metrics["metric"] == "tpr") & np.isclose(metrics["fpr"].astype(float), fpr)]
    table = sel.pivot_table(index="detector", columns="attack", values="value", aggfunc="first", dropna=False)
    return table.reindex(columns=[a for a in _attack_order(metrics) if a in table.columns])


def auroc_table(metrics: pd.DataFrame) -> pd.DataFrame:
    """Rows: attacks; columns: detectors; cells: AUROC (TH-Bench Table 1)."""
    sel = metrics[metrics["metric"] == "auroc"]
    table = sel.pivot_table(index="attack", columns="detector", values="value", aggfunc="first", dropna=False)
    return table.reindex([a for a in _attack_order(metrics) if a in table.index])


def asr_table(metrics: pd.DataFrame, fpr: float = 0.05) -> pd.DataFrame:
    """Rows: attacks (without clean); columns: detectors; cells: attack success rate."""
    sel = metrics[(metrics["metric"] == "asr") & np.isclose(metrics["fpr"].astype(float), fpr)]
    sel = sel[sel["attack"] != CLEAN]
    return sel.pivot_table(index="attack", columns="detector", values="value", aggfunc="first", dropna=False)


QUALITY_COLUMNS = ["perplexity_original", "perplexity_attacked", "perplexity_delta", "cosine", "rouge_l",
                   "flesch_original", "flesch_attacked", "flesch_delta", "word_edit_rate", "char_edit_rate"]


def quality_table(quality: pd.DataFrame) -> pd.DataFrame:
    """Mean of each quality figure per attack (TH-Bench Table 2), NaN skipped; model names kept."""
    cols = [c for c in QUALITY_COLUMNS if c in quality.columns]
    table = quality.groupby("attack", sort=True)[cols].mean()
    for model_col in ("perplexity_model", "cosine_model"):
        if model_col in quality.columns:
            table[model_col] = quality.groupby("attack")[model_col].first()
    return table


def cost_table(cost: pd.DataFrame) -> pd.DataFrame:
    """Per attack: documents, mean wall/CPU seconds per document, docs/s, peak memory."""
    g = cost.groupby("attack", sort=True)
    table = pd.DataFrame({
        "docs": g.size(),
        "wall_ms_per_doc": g["wall_s"].mean() * 1e3,
        "cpu_ms_per_doc": g["cpu_s"].mean() * 1e3,
        "docs_per_s": 1.0 / g["wall_s"].mean(),
        "peak_rss_mb": g["peak_rss_mb"].max(),
        "peak_gpu_mb": g["peak_gpu_mb"].max(),
        "edits_per_doc": g["n_edits"].mean(),
    })
    return table


def cost_by_length(cost: pd.DataFrame, length_column: str | None = None) -> pd.DataFrame:
    """Mean wall time per document per input-length bucket (TH-Bench: 100, 200, ..., 1000 tokens), per attack.

    Lengths are the GPT-2 token counts the cost meter recorded (``tokens_in``), else words.
    """
    if length_column is None:
        length_column = "tokens_in" if cost.get("tokens_in") is not None and cost["tokens_in"].notna().any() \
            else "words_in"
    lengths = cost[length_column].astype(float)
    edges = [0, *LENGTH_BUCKETS[1:], np.inf]
    labels = [f"<={b}" for b in LENGTH_BUCKETS[1:]] + [f">{LENGTH_BUCKETS[-1]}"]
    bucket = pd.cut(lengths, bins=edges, labels=labels, right=True)
    t = cost.assign(bucket=bucket).groupby(["attack", "bucket"], observed=True)["wall_s"].agg(["mean", "size"])
    t = t.rename(columns={"mean": "wall_s_per_doc", "size": "docs"}).reset_index()
    t.insert(2, "wall_ms_per_doc", t.pop("wall_s_per_doc") * 1e3)
    t.attrs["length"] = length_column
    return t


def build_report(tables: dict[str, pd.DataFrame], fpr: float = 0.05) -> dict[str, pd.DataFrame]:
    """Every report table that the stored run tables allow."""
    metrics = tables["metrics"]
    out = {
        f"accuracy_at_fpr_{fpr:g}": accuracy_at_fpr_table(metrics, fpr),
        "auroc": auroc_table(metrics),
        f"attack_success_rate_at_fpr_{fpr:g}": asr_table(metrics, fpr),
    }
    if "quality" in tables and not tables["quality"].empty:
        out["quality"] = quality_table(tables["quality"])
    if "cost" in tables and not tables["cost"].empty:
        out["cost"] = cost_table(tables["cost"])
        out["cost_by_length"] = cost_by_length(tables["cost"])
    return out


def render_markdown(report: dict[str, pd.DataFrame], digits: int = 3) -> str:
    parts = []
    for name, table in report.items():
        parts.append(f"## {name}\n")
        parts.append(table.to_markdown(floatfmt=f".{digits}f"))
        parts.append("")
    return "\n".join(parts)


def export_report(report: dict[str, pd.DataFrame], out_dir: str | Path, formats=("md", "csv", "json")) -> list[Path]:
    """Write the report as Markdown (one file), CSV and JSON (one file per table)."""
    allowed = {"md", "csv", "json"}
    bad = sorted(set(formats) - allowed)
    if bad:
        raise ValueError(f"unknown report format(s) {bad}; choose from {sorted(allowed)}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    if "md" in formats:
        p = out / "report.md"
        p.write_text(render_markdown(report), encoding="utf-8")
        written.append(p)
    for name, table in report.items():
        if "csv" in formats:
            p = out / f"{name}.csv"
            table.to_csv(p)
            written.append(p)
        if "json" in formats:
            p = out / f"{name}.json"
            p.write_text(json.dumps(json.loads(table.reset_index().to_json(orient="records")), indent=1),
                         encoding="utf-8")
            written.append(p)
    return written
