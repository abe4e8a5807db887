"""Report primitives: the tables a report, the one-screen summary, the cards and the figures are made of, each
read from a run's stored tables (one row per detector x attack, every figure with its 95% bootstrap interval).

Figures per threshold and per detector x attack (TPR at FPR, AUROC, attack success rate, with and without each
defense), quality and the meaning measure, validity of word swaps, cost per attack and per length bucket, the
documents left unchanged, and the run's protocol. :mod:`.report` assembles them (``build_report``) and renders
them (Markdown, CSV, JSON, LaTeX).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .selection import CLEAN, attack_order, defenses_in, guided, run_fprs, select

LENGTH_BUCKETS = tuple(range(100, 1001, 100))


#: per figure table: the columns taken from evaluate's tidy table, and their names in the report
_FIGURE = {"value": "{m}", "value_lo": "{m}_lo", "value_hi": "{m}_hi", "change": "delta_{m}",
           "change_lo": "delta_{m}_lo", "change_hi": "delta_{m}_hi"}
_CALIBRATION = {"reached": "reached", "underpowered": "underpowered", "achieved_fpr": "achieved_fpr",
                "value_at_achieved_fpr": "{m}_at_achieved_fpr"}
_COUNTS = {"n_human": "n_human", "n_machine": "n_machine", "n_pairs": "n_pairs", "n_dropped_nan": "n_dropped_nan"}


def figure_table(metrics: pd.DataFrame, metric: str, fpr: float | None = None, *, name: str | None = None,
                 index=("detector", "attack"), clean: bool = True, defense: str = CLEAN) -> pd.DataFrame:
    """One row per (detector, attack): the figure with its 95% bootstrap interval, the change
    versus clean with its paired interval, and what a reader needs to trust it: the sample
    sizes, NaN-dropped rows and, at a threshold, the achieved FPR and the reached /
    underpowered flags. Columns missing from older stored runs come out as NaN. ``defense``:
    whose rows (undefended by default)."""
    name = name or metric
    sel = select(metrics, metric, fpr, defense)
    if not clean:
        sel = sel[sel["attack"] != CLEAN]
    spec = {**_FIGURE, **(_CALIBRATION if fpr is not None else {}), **_COUNTS}
    if metric != "asr":
        spec.pop("n_pairs")
    cols = {src: dst.format(m=name) for src, dst in spec.items()}
    if guided(metrics):  # which detector guided each attack (None: unguided)
        cols = {"guide": "guide", **cols}
    table = sel.reindex(columns=[*index, *cols]).rename(columns=cols)
    order = {a: i for i, a in enumerate(attack_order(metrics))}
    table = table.assign(_a=table["attack"].map(order)).sort_values(
        ["_a", "detector"] if index[0] == "attack" else ["detector", "_a"], kind="stable").drop(columns="_a")
    table = table.set_index(list(index))
    for col in ("reached", "underpowered"):
        if col in table:
            table[col] = table[col].astype(object)
    for col in _COUNTS:
        if col in table and table[col].notna().all():
            table[col] = table[col].astype(np.int64)
    return table


def tpr_at_fpr_table(metrics: pd.DataFrame, fpr: float = 0.05) -> pd.DataFrame:
    """RAID Table 16 as rows (detector, attack): TPR on machine text at the per-domain threshold
    calibrated on clean human text (what RAID calls "accuracy"), with intervals and calibration facts."""
    return figure_table(metrics, "tpr", fpr)


def auroc_table(metrics: pd.DataFrame) -> pd.DataFrame:
    """TH-Bench Table 1 as rows (attack, detector): AUROC with its interval and the change versus clean."""
    return figure_table(metrics, "auroc", None, index=("attack", "detector"))


def asr_table(metrics: pd.DataFrame, fpr: float = 0.05) -> pd.DataFrame:
    """Rows (attack, detector), attacks only: attack success rate (detected clean, missed attacked)."""
    table = figure_table(metrics, "asr", fpr, index=("attack", "detector"), clean=False)
    # versus clean the ASR is 0 by definition: the change repeats the value
    return table.drop(columns=[c for c in table.columns if c.startswith("delta_")])


def figure_matrix(metrics: pd.DataFrame, metric: str = "auroc", fpr: float | None = None,
                  column: str = "value", defense: str = CLEAN) -> pd.DataFrame:
    """Rows attacks, columns detectors, cells one column of evaluate's table (for figures);
    the undefended rows unless ``defense`` names one."""
    sel = select(metrics, metric, fpr, defense)
    if column not in sel:
        sel = sel.assign(**{column: np.nan})
    table = sel.pivot_table(index="attack", columns="detector", values=column, aggfunc="first", dropna=False)
    return table.reindex([a for a in attack_order(metrics) if a in table.index])


def defense_table(metrics: pd.DataFrame, metric: str = "auroc", fpr: float | None = None, *,
                  intervals: bool = True) -> pd.DataFrame:
    """One row per attack (clean first); for each detector ``d`` the figure without a defense (``d``),
    with each defense ``x`` (``d+x``) and the change (``d+x_change``: with minus without, a point
    difference). The clean row is what the defense costs on clean text (issue #12 §3).
    ``intervals`` adds each figure's 95% bootstrap interval (``_lo``, ``_hi``)."""
    if not isinstance(metric, str):
        raise TypeError(f"defense_table: metric must be a str, got {type(metric).__name__}")
    defenses = defenses_in(metrics)
    if not defenses:
        raise ValueError("defense_table: the metrics hold no defended rows (no 'defense' other than 'none'); "
                         "run with defenses = [\"normalize\"] in the config")
    sel = select(metrics, metric, fpr, None)
    if sel.empty:
        raise ValueError(f"defense_table: no {metric!r} figures" + (f" at FPR {fpr:g}" if fpr is not None else "")
                         + f"; metrics: {', '.join(sorted(set(metrics['metric'])))}")
    if fpr is None and sel["fpr"].notna().any():
        raise ValueError(f"defense_table: {metric!r} is computed at each FPR of the run; pass fpr= one of "
                         f"{', '.join(f'{f:g}' for f in run_fprs(metrics, None))}")
    sel = sel.assign(defense=sel["defense"].fillna(CLEAN) if "defense" in sel else CLEAN)
    parts = ("value", "value_lo", "value_hi") if intervals else ("value",)
    cells = sel.reindex(columns=["attack", "detector", "defense", *parts]).set_index(["attack", "detector", "defense"])
    cells = cells[~cells.index.duplicated()]
    columns = {}
    for det in sorted(set(sel["detector"])):
        for defense in (CLEAN, *defenses):
            name = det if defense == CLEAN else f"{det}+{defense}"
            try:
                block = cells.xs((det, defense), level=("detector", "defense"))
            except KeyError:
                block = pd.DataFrame(columns=list(parts), dtype=float)
            for part in parts:
                columns[name + part[len("value"):]] = block[part].astype(float)
            if defense != CLEAN:
                columns[f"{name}_change"] = columns[name] - columns[det].reindex(columns[name].index)
    table = pd.DataFrame(columns)
    table = table.reindex([a for a in attack_order(metrics) if a in table.index])
    table.index.name = "attack"
    return table


QUALITY_COLUMNS = ["perplexity_original", "perplexity_attacked", "perplexity_delta", "cosine", "cosine_read", "rouge_l",
                   "rouge_l_read", "flesch_original", "flesch_attacked", "flesch_attacked_read", "flesch_delta",
                   "flesch_delta_read", "word_edit_rate", "char_edit_rate", "char_edit_rate_read",
                   "entailment", "judge_meaning"]


#: the validity figures of the quality table: pooled over each attack's swaps (sum of counts / sum of swaps)
VALIDITY_REPORT_COLUMNS = ["swaps_per_doc", "valid_in_context_share", "valid_share", "context_fail_share",
                           "invalid_share", "share_synonym", "share_morphological",
                           "share_hypernym", "share_antonym", "share_sister", "share_unrelated", "share_non_word",
                           "rewritten_words_per_doc"]
VALIDITY_NOTE = ("Validity of the word swaps (WordNet, humanize.quality.validity), pooled over each attack's swaps "
                 "(sum of counts / sum of swaps): `valid_in_context_share` = the valid swaps: WordNet-valid *and* "
                 "fitting their sentence under the perplexity meter's LM, a model no attack uses "
                 "(humanize.quality.context: the sentence loses at most 3 nats from the swapped word on; a change of "
                 "case only fits unscored; NaN where "
                 "the context meter did not run); `context_fail_share` = swaps that do not fit their sentence; "
                 "`valid_share` = WordNet synonyms + morphological variants (inflection, "
                 "case, US/GB spelling), whatever the context; `invalid_share` = antonyms + sister terms (co-hyponyms) + unrelated words, "
                 "which change what the text says; `share_hypernym` is neither; `share_non_word`: misspellings and "
                 "look-alike or invisible characters; `swaps_per_doc`: 1:1 word swaps per document; "
                 "`rewritten_words_per_doc`: words in longer rewrites, not classified.")


#: "meaning preserved", from the strongest meaning meter a run computed first: (quality column, what
#: 1 - it measures). Each column lies in [0, 1], higher = meaning kept.
MEANING_MEASURES = (("entailment", "1 - bidirectional entailment probability (NLI)"),
                    ("judge_meaning", "1 - LLM-judge meaning score"),
                    ("cosine", "1 - cosine similarity of sentence embeddings"),
                    ("rouge_l", "1 - ROUGE-L F1"))


#: mean losses below this (the meter saw the change, but hardly any loss) are "no measurable quality loss": the
#: cards form no efficiency ratio; a loss the meter cannot see at all is "not measured"
#: (:func:`.card.unmeasured_attacks`)
MIN_LOSS = 1e-3
#: the suffix of a quality column read on the text as a person sees it (the runner's normalizer, issue #34)
READ_SUFFIX = "_read"
READ_NOTE = ("`_read` columns: the same meter on both texts as a reader sees them, through the library's normalizer "
             "(humanize.defenses.Normalize at its defaults: look-alike letters folded, invisible and bidi characters "
             "deleted, whitespace collapsed, NFKC), beside the raw figure on the bytes: a homoglyph or an invisible "
             "character changes the bytes a meter reads, not the words a person reads.")


def _has(quality: pd.DataFrame, column: str) -> bool:
    return column in quality.columns and pd.to_numeric(quality[column], errors="coerce").notna().any()


def meaning_measure(quality: pd.DataFrame | None) -> tuple[str, str] | None:
    """The first of :data:`MEANING_MEASURES` that ``quality`` holds with a figure, read on the text as a person
    sees it (``<name>_read``, issue #34) where the run measured that; None if none."""
    if quality is None:
        return None
    found = next((m for m in MEANING_MEASURES if _has(quality, m[0]) or _has(quality, m[0] + READ_SUFFIX)), None)
    if found is not None and _has(quality, found[0] + READ_SUFFIX):
        return found[0] + READ_SUFFIX, found[1] + ", on the text as read (normalized)"
    return found


def read_as(measure: tuple[str, str] | None) -> str:
    """How the meaning meter read the texts, in words."""
    if measure is None:
        return "not measured"
    return ("on the text as a reader sees it (the normalizer)" if measure[0].endswith(READ_SUFFIX)
            else "on the raw text")


def meter_name(quality: pd.DataFrame | None, measure: tuple[str, str] | None) -> str | None:
    """The meaning meter as an axis or a note names it: its column and, where the run recorded it, its model."""
    if measure is None:
        return None
    base = measure[0].removesuffix(READ_SUFFIX)
    name = f"{base} as read (normalized)" if measure[0] != base else base
    col = f"{base}_model"
    if quality is not None and col in quality and quality[col].notna().any():
        return f"{name}, {quality[col].dropna().iloc[0]}"
    return name


def meaning_validity_table(quality: pd.DataFrame, pooled: str | None = None) -> pd.DataFrame:
    """Per attack: ``meaning`` (mean of the strongest meaning meter, named in ``attrs["measure"]``) and
    the validity figures pooled over its swaps; ``pooled`` names an extra row of every attack pooled."""
    measure = meaning_measure(quality)
    groups = dict(tuple(quality.groupby("attack", sort=True)))
    if pooled is not None and len(quality):
        groups[pooled] = quality
    rows = {}
    for attack, g in groups.items():
        row = {"meaning": pd.to_numeric(g[measure[0]], errors="coerce").mean() if measure else np.nan}
        v = validity_table(g.assign(attack=attack))
        row.update(v.iloc[0].to_dict() if v is not None else dict.fromkeys(VALIDITY_REPORT_COLUMNS, np.nan))
        rows[attack] = row
    table = pd.DataFrame.from_dict(rows, orient="index", columns=["meaning", *VALIDITY_REPORT_COLUMNS])
    table.attrs["measure"] = measure
    return table


def validity_table(quality: pd.DataFrame) -> pd.DataFrame | None:
    """Per attack: the validity shares pooled over its swaps; None when the table has no validity columns."""
    if "swaps" not in quality.columns or not pd.to_numeric(quality["swaps"], errors="coerce").notna().any():
        return None
    from humanize.quality.validity import summarize_validity

    rows = {attack: summarize_validity(g) for attack, g in quality.groupby("attack", sort=True)}
    return pd.DataFrame(rows).T.reindex(columns=VALIDITY_REPORT_COLUMNS)


def quality_table(quality: pd.DataFrame) -> pd.DataFrame:
    """Mean of each quality figure per attack (TH-Bench Table 2), NaN skipped; model names kept; the
    validity shares (:data:`VALIDITY_REPORT_COLUMNS`) pooled over each attack's swaps."""
    cols = [c for c in QUALITY_COLUMNS if c in quality.columns]
    table = quality.groupby("attack", sort=True)[cols].mean()
    validity = validity_table(quality)
    if validity is not None:
        table = table.join(validity)
    for model_col in ("perplexity_model", "cosine_model", "entailment_model", "judge_model"):
        if model_col in quality.columns:
            table[model_col] = quality.groupby("attack")[model_col].first()
    notes = []
    if any(c.endswith(READ_SUFFIX) for c in table.columns):
        measure = meaning_measure(quality)
        notes.append(READ_NOTE + f" Meaning preserved in the summary and the figures: `{measure[0]}` "
                     f"({read_as(measure)})." if measure else READ_NOTE)
    if validity is not None:
        notes.append(VALIDITY_NOTE)
    if notes:
        table.attrs["note"] = "\n\n".join(notes)
    return table


#: What the report's ``detector_cost`` table is (issue #24).
DETECTOR_COST_NOTE = (
    "Scoring time per detector: each batch of texts scored in one call, timed, its seconds shared among its texts, "
    "the detector's warm-up (model load, first pass on a probe) and fit excluded (`warmup_s`). Each score's cost is "
    "stored with it, so a rerun that reads the scores back reports the seconds measured when they were computed: "
    "`texts_scored` (computed in this run), `texts_cached` (read back), `texts_timed` (texts whose cost is known; "
    "fewer for scores stored before costs were). Detectors that share one forward pass per text (`shared_with`: "
    "the metric detectors on one model) pay it in the first of them to score the text, the others read it: "
    "`s_per_text_shared` divides the group's seconds per text equally among its detectors.")


def timing_by_attack(cost: pd.DataFrame) -> pd.Series:
    """Per attack, how its rows were timed: the distinct ``timing`` labels of its rows (``"per document"``,
    ``"batch mean"``), comma-joined (None where none); empty when the cost table has no ``timing``."""
    if cost is None or "timing" not in cost.columns:
        return pd.Series(dtype=object)
    return cost.groupby("attack", sort=True)["timing"].apply(lambda v: ", ".join(sorted(set(v.dropna()))) or None)


def cost_table(cost: pd.DataFrame) -> pd.DataFrame:
    """Per attack: documents, mean wall/CPU seconds per document, docs/s, peak memory, edits per document,
    ``timing`` (``"per document"``, or ``"batch mean"`` where the attack's batches were timed as one call and
    their seconds shared among their documents), and model / detector / guide queries and generator calls and
    prompt / completion tokens per document where an attack made any."""
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
    if "warmup_s" in cost.columns:  # one-off warm-up seconds, measured outside wall_s (runner.jobs.warm_up)
        table["warmup_s"] = g["warmup_s"].apply(lambda v: pd.to_numeric(v, errors="coerce").sum(min_count=1))
    if "timing" in cost.columns:  # "batch mean": the batch timed as one call, its seconds shared (issue #24)
        table["timing"] = timing_by_attack(cost)
    if "unchanged" in cost.columns:  # documents the attack gave back as they were (the reasons: unchanged_table)
        table["unchanged"] = g["unchanged"].apply(lambda v: int(v.notna().sum()))
    for col, name in (("queries", "queries_per_doc"), ("detector_queries", "detector_queries_per_doc"),
                      ("guide_queries", "guide_queries_per_doc"), ("llm_queries", "llm_queries_per_doc"),
                      ("llm_tokens_in", "llm_tokens_in_per_doc"), ("llm_tokens_out", "llm_tokens_out_per_doc")):
        if col in cost.columns and pd.to_numeric(cost[col], errors="coerce").fillna(0).any():
            table[name] = g[col].apply(lambda v: pd.to_numeric(v, errors="coerce").mean())
    return table


def unchanged_table(cost: pd.DataFrame) -> pd.DataFrame:
    """Documents each attack left unchanged, by reason (its ``info["unchanged"]``): attack, reason, docs."""
    if "unchanged" not in cost.columns:
        return pd.DataFrame(columns=["attack", "reason", "docs"])
    left = cost[cost["unchanged"].notna()]
    table = left.groupby(["attack", "unchanged"], sort=True).size().rename("docs").reset_index()
    return table.rename(columns={"unchanged": "reason"})


def cost_by_length(cost: pd.DataFrame, length_column: str | None = None) -> pd.DataFrame:
    """Mean wall time per document per input-length bucket (TH-Bench: 100, 200, ..., 1000 tokens), per attack.

    Lengths are the GPT-2 token counts the cost meter recorded (``tokens_in``), else words. ``timing``: an
    attack timed in batches (``"batch mean"``) gives every document of a batch the batch's mean, whatever its length.
    """
    if length_column is None:
        length_column = "tokens_in" if cost.get("tokens_in") is not None and cost["tokens_in"].notna().any() \
            else "words_in"
    lengths = cost[length_column].astype(float)
    edges = [0, *LENGTH_BUCKETS[1:], np.inf]
    # plain labels (no "<" or ">", which Markdown would have to write as entities)
    labels = [f"1–{LENGTH_BUCKETS[1]}"] + [f"{a + 1}–{b}" for a, b in zip(LENGTH_BUCKETS[1:], LENGTH_BUCKETS[2:])] \
        + [f"{LENGTH_BUCKETS[-1] + 1}+"]
    bucket = pd.cut(lengths, bins=edges, labels=labels, right=True)
    t = cost.assign(bucket=bucket).groupby(["attack", "bucket"], observed=True)["wall_s"].agg(["mean", "size"])
    t = t.rename(columns={"mean": "wall_s_per_doc", "size": "docs"}).reset_index()
    t.insert(2, "wall_ms_per_doc", t.pop("wall_s_per_doc") * 1e3)
    if "timing" in cost.columns:  # a batch mean is the same for every length in its batch: said beside it
        t["timing"] = t["attack"].map(timing_by_attack(cost))
    t.attrs["length"] = length_column
    return t


def raid_headline_table(slices: pd.DataFrame) -> pd.DataFrame:
    """The ``all``-domain, ``all``-generator slices of RAID's evaluator per detector and attack."""
    keys = ["domain", "model", "decoding", "repetition_penalty"]
    head = slices[(slices[keys] == "all").all(axis=1)]
    cols = ["detector", "attack", "auroc", *[c for c in slices.columns if c.startswith("tpr@")]]
    return head[cols].set_index(["detector", "attack"])


