"""The report's first table (issue #24 §1): one row per detector that answers the product's question.

Per detector: its clean AUROC and TPR at each FPR the sample resolves; the attack that fooled it
most (the largest fall of the headline figure: TPR at the strictest FPR the detector resolves, else
AUROC), named only where the fall is measurable (its 95% paired bootstrap interval lies below 0; issue #34),
with the attacks tied with it, that change with its interval and the attacked figure; the attacks that
backfire (raise the figure, interval above 0) and those under which the detector's AUROC is below 0.5
(its decision inverts); the meaning
that attack kept (the strongest meaning meter the run has, :func:`.tables.meaning_measure`), the
share of its word swaps that are valid where the validity meter ran, and its compute cost
(wall seconds per document, warm-up excluded; a batch mean for an attack that batches); the detector's own
scoring seconds per text; with defenses, the attacked figure after each.

The note says what the figures are, which thresholds they use (per domain, or pooled over the
domains) and, for each FPR no threshold resolves, how many human test texts it needs and the
``--n`` that gives them; then one line per detector says what happened in words (fooled by, or "no
attack had a measurable effect"; backfiring; inverted).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .selection import CLEAN, run_fprs, select

#: the metrics columns the summary reads
_NEEDED = ("detector", "attack", "metric", "fpr", "value", "value_lo", "value_hi", "change", "change_lo", "change_hi",
           "n_human")


def _pooled(metrics: pd.DataFrame) -> bool | None:
    """True when the thresholds were pooled over domains, False per domain, None when the run does not say."""
    if "thresholds" not in metrics or metrics["thresholds"].dropna().empty:
        return None
    return str(metrics["thresholds"].dropna().iloc[0]) == "pooled"


def _humans(tables: dict, metrics: pd.DataFrame, pooled: bool | None) -> dict[str, int]:
    """The clean human test texts each threshold is calibrated on: {domain (or "all domains"): count}, the
    smallest detector's count (a detector's NaN scores are left out of its calibration)."""
    scores = tables.get("scores")
    if scores is not None and not scores.empty and {"label", "attack", "score", "detector"} <= set(scores):
        s = scores[(scores["label"].isin(["human", 0])) & (scores["attack"] == CLEAN) & scores["score"].notna()]
        if "defense" in s:
            s = s[s["defense"].fillna(CLEAN) == CLEAN]
        if not s.empty:
            by = ["detector"] + (["domain"] if not pooled and "domain" in s else [])
            counts = s.groupby(by).size()
            if pooled or "domain" not in s:
                return {"all domains": int(counts.min())}
            per = counts.groupby(level="domain").min()
            return {str(d): int(c) for d, c in per.items()}
    clean = select(metrics, "auroc")
    clean = clean[clean["attack"] == CLEAN]
    return {"all domains": int(clean["n_human"].min())} if not clean.empty else {}


#: fewer test texts of a label than this and a bootstrap interval is a handful of redraws of the same few texts
MIN_TEST_TEXTS = 10


def too_small(metrics: pd.DataFrame, n: int | None = None) -> str | None:
    """One line when the run's test split holds fewer than :data:`MIN_TEST_TEXTS` human or machine texts (its
    intervals then claim more than the data holds; ``n``: the run's ``--n``, for the advice); None otherwise."""
    if "n_human" not in metrics or "n_machine" not in metrics:
        return None
    clean = metrics[(metrics["metric"] == "auroc") & (metrics["attack"] == CLEAN)]
    if "defense" in clean:
        clean = clean[clean["defense"].fillna(CLEAN) == CLEAN]
    humans = pd.to_numeric(clean["n_human"], errors="coerce").min()
    machines = pd.to_numeric(clean["n_machine"], errors="coerce").min()
    if not (np.isfinite(humans) and np.isfinite(machines)) or min(humans, machines) >= MIN_TEST_TEXTS:
        return None
    fix = ""
    if n and min(humans, machines) > 0:
        fix = f"; `--n {int(math.ceil(n * MIN_TEST_TEXTS / min(humans, machines) / 10.0) * 10)}` gives enough"
    return (f"this run tests {int(humans)} human and {int(machines)} machine texts per detector (`--n` counts the "
            f"texts sampled per label; about half fit the learned detectors): too few for any interval, whose figures "
            f"are then a handful of redraws of the same texts (at least {MIN_TEST_TEXTS} per label{fix})")


def _advice(fpr: float, humans: dict[str, int], n: int | None) -> str:
    need = math.ceil(1 / fpr - 1e-9)
    have = min(humans.values()) if humans else 0
    where = ("pooled over domains" if list(humans) == ["all domains"]
             else "in domain " + min(humans, key=humans.get))
    if n and have:
        target = int(math.ceil(n * need / have / 10.0) * 10)
        fix = f"rerun with `--n {target}`"
    elif have:
        fix = f"raise `--n` about {need / have:.1f}-fold"
    else:
        fix = "raise `--n`"
    return f"TPR at FPR {fpr:g} needs {need} human test texts {where}, this run has {have}: {fix}"


def _attacked(changes: pd.DataFrame) -> pd.DataFrame:
    return changes[(changes["attack"] != CLEAN) & changes["change"].notna()]


def _has_interval(row) -> bool:
    return pd.notna(row["change_lo"]) and pd.notna(row["change_hi"])


def _worst(changes: pd.DataFrame) -> pd.Series | None:
    """The attack row with the largest fall (most negative change; ties: the name)."""
    rows = _attacked(changes)
    if rows.empty:
        return None
    return rows.sort_values(["change", "attack"], kind="stable").iloc[0]


def _measurable_fall(row) -> bool:
    """A fall the data shows: the paired interval lies below 0 (no interval: the change alone is negative)."""
    if row is None or not row["change"] < 0:
        return False
    return bool(row["change_hi"] < 0) if _has_interval(row) else True


def _ties(changes: pd.DataFrame, worst: pd.Series) -> list[str]:
    """The other attacks whose change equals the worst one's (to the last bit a float keeps): named, not broken."""
    rows = _attacked(changes)
    same = rows[np.isclose(rows["change"].astype(float), float(worst["change"]), rtol=0, atol=1e-12)]
    return sorted(set(same["attack"]) - {worst["attack"]})


def _fmt_change(row) -> str:
    interval = f" [{row['change_lo']:+.3f}, {row['change_hi']:+.3f}]" if _has_interval(row) else " (no interval)"
    return f"{row['change']:+.3f}{interval}"


def _backfires(changes: pd.DataFrame) -> list[str]:
    """Attacks that raise the figure (the interval lies above 0): 'name (+0.350 [+0.200, +0.500])', largest first."""
    rows = _attacked(changes)
    rows = rows[rows.apply(lambda r: r["change"] > 0 and (r["change_lo"] > 0 if _has_interval(r) else True),
                           axis=1)] if len(rows) else rows
    rows = rows.sort_values(["change", "attack"], ascending=[False, True], kind="stable")
    return [f"{r['attack']} ({_fmt_change(r)})" for _, r in rows.iterrows()]


def _inverted(auroc: pd.DataFrame) -> list[str]:
    """Attacks (and 'clean') under which the detector's AUROC is below 0.5: its decision has flipped, machine
    text scores as the more human; 'name (AUROC 0.047 [0.010, 0.090])', lowest first."""
    rows = auroc[auroc["value"].astype(float) < 0.5]
    rows = rows.sort_values(["value", "attack"], kind="stable")
    out = []
    for _, r in rows.iterrows():
        lo, hi = r.get("value_lo", math.nan), r.get("value_hi", math.nan)
        interval = f" [{lo:.3f}, {hi:.3f}]" if pd.notna(lo) and pd.notna(hi) else ""
        name = "clean" if r["attack"] == CLEAN else r["attack"]
        out.append(f"{name} (AUROC {r['value']:.3f}{interval})")
    return out


def _meaning(quality: pd.DataFrame | None, cost: pd.DataFrame | None = None):
    """(measure, {attack: mean meaning}), NaN for an attack whose change the meter cannot see (case flips under an
    uncased encoder: :func:`._meaning.meaning_by_attack`), never a 1.0 it did not measure."""
    from ._meaning import meaning_by_attack

    by = meaning_by_attack(quality, n_boot=0, cost=cost)
    measure = by.attrs.get("measure")
    if measure is None:
        return None, {}
    return measure, by["meaning"].where(by["measured"].astype(bool)).to_dict()


def _valid_shares(quality: pd.DataFrame | None) -> dict:
    if quality is None or quality.empty:
        return {}
    from .tables import validity_table

    table = validity_table(quality)
    if table is None:
        return {}
    # the valid swaps: WordNet-valid and fitting their sentence (issue #33); the WordNet share where the context
    # meter did not run
    both = table["valid_in_context_share"].astype(float)
    return both.where(both.notna(), table["valid_share"].astype(float)).to_dict()


def _scoring_seconds(table: pd.DataFrame | None) -> dict | None:
    """Each detector's scoring seconds per text in the run (its ``detector_cost`` row); None: no such table."""
    if table is None or table.empty or "s_per_text" not in table:
        return None
    col = "s_per_text_shared" if "s_per_text_shared" in table else "s_per_text"
    return dict(zip(table["detector"], pd.to_numeric(table[col], errors="coerce")))


def _seconds(cost: pd.DataFrame | None) -> dict:
    if cost is None or cost.empty or "wall_s" not in cost:
        return {}
    return cost.groupby("attack")["wall_s"].apply(lambda v: pd.to_numeric(v, errors="coerce").mean()).to_dict()


def summary_table(tables: dict[str, pd.DataFrame], *, n: int | None = None) -> pd.DataFrame:
    """One row per detector (see the module docstring); ``n``: the run's ``n`` (machine texts), for the
    ``--n`` advice of the underpowered FPRs. Its note (``attrs["note"]``) explains the columns and names
    every FPR the sample cannot resolve with what resolves it."""
    metrics = tables["metrics"]
    # a run stored before the intervals (or the counts) existed: those columns come out NaN
    metrics = metrics.reindex(columns=list(dict.fromkeys([*metrics.columns, *_NEEDED])))
    quality, cost = tables.get("quality"), tables.get("cost")
    pooled = _pooled(metrics)
    fprs = run_fprs(metrics, None)
    resolved = [f for f in fprs if select(metrics, "tpr", f).query("attack == @CLEAN")["value"].notna().any()]
    measure, meaning = _meaning(quality, cost)
    valid = _valid_shares(quality)
    seconds = _seconds(cost)
    scoring = _scoring_seconds(tables.get("detector_cost"))
    defenses = sorted(set(metrics["defense"].dropna()) - {CLEAN}) if "defense" in metrics else []
    out, said = [], []
    for det in sorted(set(metrics["detector"])):
        row: dict = {"detector": det}
        auroc = select(metrics, "auroc")
        auroc = auroc[auroc["detector"] == det]
        clean = auroc[auroc["attack"] == CLEAN]
        row["auroc"] = float(clean["value"].iloc[0]) if not clean.empty else math.nan
        headline, head_rows = "auroc", auroc
        for f in resolved:
            tpr = select(metrics, "tpr", f)
            tpr = tpr[tpr["detector"] == det]
            value = tpr.loc[tpr["attack"] == CLEAN, "value"]
            row[f"tpr_at_fpr_{f:g}"] = float(value.iloc[0]) if not value.empty else math.nan
            if not value.empty and pd.notna(value.iloc[0]):
                headline, head_rows = f"tpr_at_fpr_{f:g}", tpr  # the strictest resolved FPR wins (fprs descend)
        worst = _worst(head_rows)
        named = worst if _measurable_fall(worst) else None
        row["fooled_most_by"] = None if named is None else named["attack"]
        row["by"] = headline
        ties = _ties(head_rows, named) if named is not None else []
        row["tied_with"] = ", ".join(ties)
        backfires = _backfires(head_rows)
        row["backfires"] = "; ".join(backfires)
        inverted = _inverted(auroc)
        row["inverted"] = "; ".join(inverted)
        said.append(_what_happened(det, _figure_name(headline), worst, named, ties, backfires, inverted))
        for col, src in (("attacked", "value"), ("change", "change"), ("change_lo", "change_lo"),
                         ("change_hi", "change_hi")):
            row[col] = math.nan if named is None else float(named[src])
        attack = row["fooled_most_by"]
        if measure is not None:
            row["meaning"] = float(meaning.get(attack, math.nan)) if attack else math.nan
        if valid:
            row["valid_swaps"] = float(valid.get(attack, math.nan)) if attack else math.nan
        row["s_per_doc"] = float(seconds.get(attack, math.nan)) if attack else math.nan
        if scoring is not None:
            row["score_s_per_text"] = float(scoring.get(det, math.nan))
        for d in defenses:
            rows = select(metrics, "auroc" if headline == "auroc" else "tpr",
                         None if headline == "auroc" else float(headline.rsplit("_", 1)[1]), defense=d)
            got = rows[(rows["detector"] == det) & (rows["attack"] == attack)]["value"]
            row[f"attacked+{d}"] = float(got.iloc[0]) if attack and not got.empty else math.nan
        out.append(row)
    table = pd.DataFrame(out).set_index("detector")
    table.attrs["note"] = (_note(metrics, tables, pooled, fprs, resolved, measure, quality, defenses, n) +
                           "\n\n**What happened** (per detector, on the figure in `by`):\n\n" +
                           "\n\n".join(f"- {line}" for line in said))
    table.attrs["lines"] = table.attrs["note"].split("\n\n")
    return table


def _figure_name(headline: str) -> str:
    return "AUROC" if headline == "auroc" else "TPR at FPR " + headline.rsplit("_", 1)[1]


def _what_happened(det, figure, worst, named, ties, backfires, inverted) -> str:
    """One line per detector: the attack that fooled it (with its change and interval, ties named) or that no
    attack had a measurable effect; the attacks that backfired; the attacks under which its decision inverts."""
    from ._escape import md_text

    name = f"**{md_text(det)}**"
    if named is not None:
        tie = f" (tied with {', '.join(md_text(t) for t in ties)})" if ties else ""
        line = f"{name}: fooled most by {md_text(named['attack'])}{tie}, {figure} change {_fmt_change(named)}."
    elif worst is None:
        line = f"{name}: no attack's {figure} could be computed."
    else:
        line = (f"{name}: no attack had a measurable effect on {figure} (largest fall: {md_text(worst['attack'])} "
                f"{_fmt_change(worst)}, an interval that reaches 0)." if worst["change"] < 0 else
                f"{name}: no attack had a measurable effect on {figure} (no attack lowered it).")
    if backfires:
        line += f" Backfiring (the attack raised {figure}): {md_text('; '.join(backfires))}."
    if inverted:
        line += (f" **Inverted** (AUROC below 0.5: the detector scores machine text as the more human, so its TPR "
                 f"reads the wrong way): {md_text('; '.join(inverted))}.")
    return line


def _note(metrics, tables, pooled, fprs, resolved, measure, quality, defenses, n) -> str:
    scope = {True: "calibrated on the clean human test texts of all domains pooled (one threshold per detector, "
                   "not RAID's per-domain thresholds; `--per-domain` calibrates per domain)",
             False: "calibrated per domain on its clean human test texts (RAID)",
             None: "calibrated on the clean human test texts"}[pooled]
    tpr = ", ".join(f"`tpr_at_fpr_{f:g}`" for f in resolved) or "no TPR (no FPR resolved)"
    if measure is not None:
        from .tables import meter_name

        meaning = (f"`meaning`: what that attack kept, {measure[1].removeprefix('1 - ')} (mean over documents, "
                   f"1 = all; `{measure[0]}`: {meter_name(quality, measure)}; NaN where the meter cannot see the "
                   "attack's change); ")
    else:
        meaning = "`meaning`: not measured (the run computed no meaning meter); "
    from .selection import run_protocol

    if run_protocol(metrics) == "raid":
        scope = ("found by RAID's own search on the clean human test texts " +
                 ("per domain" if pooled is False else "pooled over domains") +
                 " (RAID's protocol: machine at or above the threshold; an attack's AUROC counts every human text "
                 "of the domain, attacked ones included; intervals for the AUROC only)")
    lines = [
        "**Summary.** One row per detector: clean `auroc` and " + tpr + f", thresholds {scope}. "
        "`fooled_most_by`: the attack with the largest fall of the figure in `by` (TPR at the strictest FPR this "
        "sample resolves, else AUROC), named only where that fall is measurable (its 95% paired bootstrap interval "
        "lies below 0; empty: no attack had a measurable effect); `tied_with`: attacks with the same fall; "
        "`attacked`: that figure under the attack; `change`: attacked minus clean, "
        "with its 95% paired bootstrap interval (`change_lo`, `change_hi`); `backfires`: attacks that *raise* the "
        "figure (interval above 0), with the change; `inverted`: attacks under which the detector's AUROC is "
        "below 0.5 (its decision flips). " + meaning +
        ("`valid_swaps`: the share of its word swaps that WordNet calls synonyms or variants and that fit their "
         "sentence under the perplexity meter's LM (humanize.quality.context; a change of case only fits unscored; "
         "WordNet alone where that meter did not run; NaN: not a word-swap attack); " if "valid_swaps" in _cols(quality) else "") +
        "`s_per_doc`: its wall seconds per document, its warm-up (first call, model load) excluded" +
        _batch_note(tables.get("cost")) + "." +
        (" `score_s_per_text`: the detector's scoring seconds per text (warm-up excluded), as measured when its "
         "scores were computed (a rerun reads them from the store); detectors that share one forward pass on one "
         "model get an equal share of the group's seconds (the detector cost table names the group)."
         if _scoring_seconds(tables.get("detector_cost")) is not None else "") +
        (" `attacked+D`: the figure under the attack with defense D on every text." if defenses else
         " No defense ran: `--defense normalize` scores every text after the normalizer too."),
    ]
    small = too_small(metrics, n)
    if small:
        lines.append(f"**Too small.** {small[0].upper()}{small[1:]}.")
    under = [f for f in fprs if f not in resolved]
    humans = _humans(tables, metrics, pooled)
    if under:
        lines.append("**Underpowered.** " + "; ".join(_advice(f, humans, n) for f in under) + ".")
    ties = [f for f in resolved
            if select(metrics, "tpr", f).query("attack == @CLEAN")["value"].isna().any()]
    if ties:
        lines.append("**Not reached** for some detectors (ties among their human scores, or NaN scores): FPR "
                     + ", ".join(f"{f:g}" for f in ties) + " (their cells are NaN; the wide tables give the "
                     "figure at the FPR achieved).")
    if not under and not ties:
        lines.append("Every FPR of the run is resolved by this sample.")
    return "\n\n".join(lines)


def _batch_note(cost) -> str:
    """The attacks timed in batches (cost ``timing`` "batch mean", issue #24), said after ``s_per_doc``."""
    if cost is None or cost.empty or "timing" not in cost:
        return ""
    batched = sorted(set(cost.loc[cost["timing"] == "batch mean", "attack"]))
    if not batched:
        return ""
    return (f"; for {', '.join(f'`{a}`' for a in batched)} a batch mean (the documents were attacked in batches, "
            "each batch timed as one call: its seconds divided by its documents)")


def _cols(quality) -> set:
    if quality is None or quality.empty:
        return set()
    from .tables import validity_table

    return {"valid_swaps"} if validity_table(quality) is not None else set()
