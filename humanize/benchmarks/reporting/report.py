"""Report tables from a run's stored tables, one row per (detector, attack), every
figure with its 95% bootstrap interval, its change versus clean (paired interval),
the sample sizes, rows dropped for NaN scores and, at a threshold, the achieved FPR
and the reached / underpowered flags (the same columns in Markdown, CSV and JSON):

* the one-screen summary first (:mod:`.summary`): per detector, clean AUROC and TPR, the attack that
  fooled it most, that attack's meaning and compute cost, and what the sample cannot resolve;
* TPR at each FPR per detector x attack (``tpr_at_fpr_<f>``; RAID Table 16, which calls it accuracy: TPR on
  machine text at the per-domain threshold calibrated on clean human text);
* AUROC per attack x detector (TH-Bench Table 1);
* attack success rate per attack x detector at each FPR;
* quality per attack (TH-Bench Table 2);
* cost per attack (wall time without the one-off warm-up, which is its own column ``warmup_s``; ``timing``
  says whether it was timed per document or is the mean of batches timed as one call), and
  per input-length bucket (TH-Bench Figures 14-15), with the documents
  each attack left unchanged (column ``unchanged``; table ``unchanged``: how many, by reason);
* detector cost (issue #24): each detector's scoring seconds per text, warm-up excluded;
* warnings: attack models that a detector or the perplexity meter also scores with
  (:mod:`.model_sharing`), when the run has any;
* guided attacks (a ``guide`` column in the metrics, issue #23): which detector guided each attack, in the
  figure tables and in ``guided_transfer_<metric>``, one row per attack and one column per detector, the
  guide's own cell marked ``(guide)``: the guide's figure and the transfer to the others in one row;
* with defenses (issue #12 §3): per attack, each detector's figure without and with
  each defense and the change; the other tables show the undefended rows only;
* with watermark detectors and the run's manifest (issue #37, :mod:`.watermark`): each one's statistic per
  attack (z-score or mean g-value distribution) and, for detectors differing only in ``max_tokens``,
  detection as a function of the number of tokens scored.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

from ._escape import md_text
from ._files import atomic_write, write_text
from .selection import about, defenses_in, guided, run_fprs, run_protocol, select
from .tables import (DETECTOR_COST_NOTE, asr_table, auroc_table, cost_by_length, cost_table, defense_table,
                     quality_table, raid_headline_table, tpr_at_fpr_table, unchanged_table)


def build_report(tables: dict[str, pd.DataFrame], fpr=None, *, n: int | None = None,
                 manifest: dict | None = None) -> dict[str, pd.DataFrame]:
    """Every report table that the stored run tables allow, the one-screen ``summary`` first
    (:func:`.summary.summary_table`; ``n``: the run's ``n``, for its ``--n`` advice); ``fpr``: a target
    FPR, a list of them, or None for every FPR of the run (one TPR and one ASR table each); ``manifest``
    (the run's): which detectors are watermark detectors, for the watermark tables (:mod:`.watermark`)."""
    from .watermark import watermark_tables

    marks = watermark_tables(tables, manifest, fpr)
    for name, table in marks.items():
        if name.startswith("watermark_tokens"):
            table.attrs["about"] = about(tables["metrics"])
    return {**_summary_first(tables, n), **_tables(tables, fpr), **marks}


def _summary_first(tables: dict[str, pd.DataFrame], n: int | None) -> dict[str, pd.DataFrame]:
    from .summary import summary_table

    return {"summary": summary_table(tables, n=n)}


def _tables(tables: dict[str, pd.DataFrame], fpr) -> dict[str, pd.DataFrame]:
    """The wide tables of :func:`build_report`, in their order."""
    metrics = tables["metrics"]
    about_run = about(metrics)
    out = {}
    for f in run_fprs(metrics, fpr):
        out[f"tpr_at_fpr_{f:g}"] = tpr_at_fpr_table(metrics, f)
        out[f"tpr_at_fpr_{f:g}"].attrs["note"] = (
            f"TPR at FPR {f:g}: the share of machine texts detected at a threshold calibrated on clean human texts "
            "(what RAID's leaderboard calls accuracy; `accuracy` in the exported metrics is two-class accuracy over "
            "machine and human texts, never this). `underpowered`: a domain has fewer than 1/FPR = {1 / f:g} "
            "human texts, so no threshold resolves this FPR: the TPR is not claimed (NaN) and "
            "`tpr_at_achieved_fpr` gives the figure at the FPR actually achieved.")
    out["auroc"] = auroc_table(metrics)
    out["auroc"].attrs["note"] = "AUROC, machine = positive class."
    for f in run_fprs(metrics, fpr) if run_protocol(metrics) != "raid" else ():  # RAID defines no success rate
        name = f"attack_success_rate_at_fpr_{f:g}"
        out[name] = asr_table(metrics, f)
        out[name].attrs["note"] = (f"Attack success rate at FPR {f:g}: share of the machine texts detected "
                                   "before the attack that are missed after it.")
    if "raid_slices" in tables and not tables["raid_slices"].empty:
        out["raid_headline"] = raid_headline_table(tables["raid_slices"])
        out["raid_headline"].attrs["note"] = (
            "RAID's evaluator's figures over every domain, generator, decoding and repetition penalty, per attack and "
            "over every attack (`all`: the leaderboard's headline); `tpr@F`: RAID's accuracy at FPR F (NaN where "
            "RAID reports none: some domain missed the target). Every slice is in the run's `raid_slices` table.")
    if guided(metrics):
        from .guided import guided_transfer_table

        for m, f in [("auroc", None), *(("tpr", f) for f in run_fprs(metrics, fpr))]:
            name = "guided_transfer_auroc" if f is None else f"guided_transfer_tpr_at_fpr_{f:g}"
            out[name] = guided_transfer_table(metrics, m, f)
            out[name].attrs["note"] = (
                f"{'AUROC' if f is None else f'TPR at FPR {f:g}'} per attack (rows) and detector (columns), with "
                "its interval; `guide`: the detector that guided the attack (a run detector's label, or "
                "`<name> (own)` for the attack's own copy), its cell marked `(guide)`: the other cells are transfer.")
    defenses = defenses_in(metrics)
    if defenses:
        names = ", ".join(defenses)
        out["defense_auroc"] = defense_table(metrics, "auroc")
        out["defense_auroc"].attrs["note"] = (
            f"AUROC per attack without and with each defense ({names}): `d+x` is detector d on the texts "
            "rewritten by defense x, `d+x_change` the defended minus the undefended figure (a point difference). "
            "The `none` row is what the defense costs on clean text. Other tables: undefended rows only.")
        for f in run_fprs(metrics, fpr):
            if not select(metrics, "tpr", f, None).empty:
                out[f"defense_tpr_at_fpr_{f:g}"] = defense_table(metrics, "tpr", f)
                out[f"defense_tpr_at_fpr_{f:g}"].attrs["note"] = (
                    f"TPR at FPR {f:g} without and with each defense ({names}); columns as in defense_auroc.")
    for table in out.values():
        table.attrs["about"] = about_run
    if "quality" in tables and not tables["quality"].empty:
        out["quality"] = quality_table(tables["quality"])
    if "cost" in tables and not tables["cost"].empty:
        out["cost"] = cost_table(tables["cost"])
        out["cost_by_length"] = cost_by_length(tables["cost"])
        unchanged = unchanged_table(tables["cost"])
        if not unchanged.empty:
            out["unchanged"] = unchanged
            out["unchanged"].attrs["note"] = (
                "Documents left unchanged, by reason: an attack that cannot change a text (no sites, a text shorter "
                "than TOBLEND's prompt, every rewriter answer rejected, a surrogate that already calls it human) is "
                "not an attack that failed to fool the detector. `not recorded`: outputs cached before attacks "
                "said why.")
    if "detector_cost" in tables and not tables["detector_cost"].empty:
        out["detector_cost"] = tables["detector_cost"].set_index("detector")
        out["detector_cost"].attrs["note"] = DETECTOR_COST_NOTE
    if "warnings" in tables and not tables["warnings"].empty:
        out["warnings"] = tables["warnings"].copy()
        out["warnings"].attrs["note"] = ("Attack models that a detector or the perplexity meter also scores with: "
                                         "those detectors see the attack's output as more machine-like, and its "
                                         "perplexity falls, for a reason that is not the attack's skill.")
    return out


def _md_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its labels (index, columns) and text cells through :func:`._escape.md_text`:
    an attack or detector label from a config reaches the Markdown as text, never as HTML."""
    def label(v):
        return tuple(md_text(x) for x in v) if isinstance(v, tuple) else (md_text(v) if isinstance(v, str) else v)

    def cell(v):  # a text column's missing cell is empty, not "nan" (an attack not named is no attack "nan")
        if isinstance(v, str):
            return md_text(v)
        return "" if v is None or (isinstance(v, float) and np.isnan(v)) else v

    cols = [col if pd.api.types.is_numeric_dtype(col) else col.astype(object).map(cell) for _, col in frame.items()]
    out = pd.concat(cols, axis=1, keys=range(len(cols))) if cols else frame.copy()
    out.columns = frame.columns.map(label)
    out.index = frame.index if isinstance(frame.index, pd.RangeIndex) else frame.index.map(label)
    return out


def figures_markdown(figures: dict[str, str], folder: str | None = "../plots") -> str:
    """The ``## figures`` section: one caption line per figure (file stem -> caption, as
    :func:`.plots.figure_captions` gives them), each figure in ``folder`` (None: this one) as PNG, SVG and PDF."""
    where = "this folder" if folder is None else f"`{md_text(folder)}/`"
    lines = ["## figures\n", f"Each figure is in {where} as PNG, SVG and PDF.\n"]
    lines += [f"- `{md_text(name)}`: {md_text(caption)}" for name, caption in figures.items()]
    return "\n".join(lines) + "\n"


_SECONDS = re.compile(r"(^|_)(wall|cpu|warmup)_s($|_per_(doc|text)$)|(^|_)s_per_(doc|text)(_shared)?$")
_MILLISECONDS = re.compile(r"(^|_)(wall|cpu)_ms_per_doc$")


def seconds_text(value) -> str:
    """Seconds in the unit that shows them (s, ms, µs): a rule attack's 4 µs per document is not "0.000"."""
    if value is None or not np.isfinite(value):
        return "nan"
    if value == 0:
        return "0 s"
    a = abs(value)
    if a >= 1:
        return f"{value:.3g} s"
    return f"{value * 1e3:.3g} ms" if a >= 1e-3 else f"{value * 1e6:.3g} µs"


def with_time_units(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its seconds (and milliseconds) columns written with their unit, for a reader's table
    (Markdown, the terminal); CSV and JSON keep the numbers."""
    out = frame.copy()
    for col in frame.columns:
        name = col if isinstance(col, str) else ""
        if not pd.api.types.is_numeric_dtype(frame[col]) or pd.api.types.is_bool_dtype(frame[col]):
            continue
        if _SECONDS.search(name):
            out[col] = [seconds_text(v) for v in pd.to_numeric(frame[col], errors="coerce")]
        elif _MILLISECONDS.search(name):
            out[col] = [seconds_text(v / 1e3) for v in pd.to_numeric(frame[col], errors="coerce")]
    return out


def render_markdown(report: dict[str, pd.DataFrame], digits: int = 3, figures: dict[str, str] | None = None) -> str:
    """One Markdown document: the intervals' definition once, then each table with its note, then (with
    ``figures``) one caption line per figure. Labels and text cells are escaped (no raw HTML, no
    table-breaking pipe; invisible and bidi characters marked)."""
    abouts = list(dict.fromkeys(t.attrs["about"] for t in report.values() if t.attrs.get("about")))
    parts = [*(f"{a}\n" for a in abouts)]
    for name, table in report.items():
        parts.append(f"## {md_text(name)}\n")
        if table.attrs.get("note"):
            parts.append(table.attrs["note"] + "\n")
        flat = table.reset_index() if any(n is not None for n in table.index.names) else table
        # an unnamed 0, 1, 2 ... index is pandas', not the data's: not a column
        index = flat is table and not isinstance(flat.index, pd.RangeIndex)
        parts.append(_md_safe(with_time_units(flat)).to_markdown(index=index, floatfmt=f".{digits}f"))
        parts.append("")
    if figures:
        parts.append(figures_markdown(figures))
    return "\n".join(parts)


def _latex_label(text) -> str:
    """A label or text cell for LaTeX before Styler's escaping: each invisible or bidi character written
    ``[U+202E]`` (ASCII; a TeX engine never sees the character itself)."""
    from ._escape import char_label, is_invisible

    return "".join(f"[{char_label(c)}]" if is_invisible(c) else c for c in str(text).replace("\n", " "))


def render_latex(table: pd.DataFrame, digits: int = 3, caption: str | None = None) -> str:
    """One table as LaTeX with booktabs rules (``\\toprule``, ``\\midrule``, ``\\bottomrule``: add
    ``\\usepackage{booktabs}``), through pandas' Styler: every label and text cell escaped for LaTeX (a label
    such as ``\\input{...}`` is printed, never run), numbers to ``digits`` places, seconds with their unit."""
    flat = table.reset_index() if any(n is not None for n in table.index.names) else table
    flat = with_time_units(flat)
    flat = flat.map(lambda v: _latex_label(v) if isinstance(v, str) else v)
    flat.columns = [_latex_label(c) for c in flat.columns]
    styler = flat.style.format(precision=digits, escape="latex", na_rep="--")
    styler = styler.format_index(escape="latex", axis=1)
    if not isinstance(flat.index, pd.RangeIndex):
        styler = styler.format_index(escape="latex", axis=0)
    else:
        styler = styler.hide(axis="index")
    index = "" if isinstance(flat.index, pd.RangeIndex) else "l" * flat.index.nlevels
    numeric = "".join("r" if pd.api.types.is_numeric_dtype(flat[c]) and not pd.api.types.is_bool_dtype(flat[c])
                      else "l" for c in flat.columns)
    return styler.to_latex(hrules=True, caption=None if caption is None else _latex_escape(caption),
                           column_format=index + numeric)


_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
          "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def _latex_escape(text: str) -> str:
    """A caption for LaTeX: its special characters printed as themselves."""
    return "".join(_LATEX.get(c, c) for c in _latex_label(text))


def export_report(report: dict[str, pd.DataFrame], out_dir: str | Path, formats=("md", "csv", "json", "tex"),
                  figures: dict[str, str] | None = None) -> list[Path]:
    """Write the report as Markdown (one file; with ``figures``, a caption line per figure), CSV, JSON and
    LaTeX (booktabs; one file per table)."""
    allowed = {"md", "csv", "json", "tex"}
    bad = sorted(set(formats) - allowed)
    if bad:
        raise ValueError(f"unknown report format(s) {bad}; choose from {sorted(allowed)}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    if "md" in formats:
        written.append(write_text(out / "report.md", render_markdown(report, figures=figures)))
    for name, table in report.items():
        if "csv" in formats:
            written.append(atomic_write(out / f"{name}.csv", table.to_csv))
        if "tex" in formats:
            written.append(write_text(out / f"{name}.tex", render_latex(table, caption=name)))
        if "json" in formats:
            written.append(write_text(out / f"{name}.json", json.dumps(
                json.loads(table.reset_index().to_json(orient="records")), indent=1)))
    return written
