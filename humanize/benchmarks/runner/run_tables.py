"""The result tables of a run, from what its stages produced: scores (per defense), metrics
(the protocols of :func:`humanize.benchmarks.evaluation.evaluate`, per defense), cost and failures."""

from __future__ import annotations

import pandas as pd

from humanize.text import text_hash


CLEAN = "none"
#: The cost columns of the run's cost table, as stored per attack output.
COST_COLUMNS = ("wall_s", "cpu_s", "peak_rss_mb", "peak_gpu_mb", "tokens_in", "tokens_out", "queries")
#: Counts an attack reports in ``AttackResult.info`` that the cost table carries per document.
INFO_COUNTS = ("detector_queries", "llm_tokens_in", "llm_tokens_out", "llm_queries", "guide_queries")
#: The RAID row keys a score row carries when the dataset has them (protocol "raid" slices by them).
RAID_KEYS = ("model", "decoding", "repetition_penalty")


def score_rows(every: pd.DataFrame, scores: dict[str, dict], defended: dict[str, dict]) -> pd.DataFrame:
    """The long score table: one row per (defense, detector, text of ``every``), ``defense`` "none"
    first (the undefended texts), then each defense's rows, where each text is replaced by the
    defense's output for it (a text the defense failed on scores NaN)."""
    parts = []
    for defense, outputs in [(CLEAN, None), *defended.items()]:
        if outputs is None:
            hashes = every["text_hash"]
        else:
            out_hash = {h: text_hash(t) for h, t in outputs.items()}
            hashes = every["text_hash"].map(out_hash)
        for det, by_hash in scores.items():
            part = every.copy()
            part["detector"] = det
            part["score"] = hashes.map(by_hash)
            part["defense"] = defense
            parts.append(part)
    return pd.concat(parts, ignore_index=True).drop(columns=["text_hash"])


def evaluate_defenses(score_table: pd.DataFrame, config) -> pd.DataFrame:
    """:func:`~humanize.benchmarks.evaluation.evaluate` on each defense's rows, concatenated with a
    ``defense`` column; the "none" rows are exactly the metrics of a run without defenses."""
    from humanize._split import sampling_seed
    from ..evaluation import evaluate

    out = []
    for defense in dict.fromkeys(score_table["defense"]):
        rows = score_table[score_table["defense"] == defense].drop(columns=["defense"])
        metrics = evaluate(rows, fprs=config.fprs, per_domain=config.per_domain, pair_key="adv_source_id",
                           nan_policy="omit", seed=sampling_seed(config.seed), n_boot=config.n_boot,
                           confidence=config.confidence, protocol=config.protocol)
        metrics["defense"] = defense
        # which protocol's definitions produced the figures: every report and card names it
        metrics["protocol"] = config.protocol
        # how the thresholds were calibrated: the report's summary says it (issue #24 §1)
        metrics["thresholds"] = "per domain" if config.per_domain else "pooled"
        out.append(metrics)
    return pd.concat(out, ignore_index=True)


def raid_slice_table(score_table: pd.DataFrame, config) -> pd.DataFrame:
    """Every slice RAID's evaluator reports (domain x attack x model x decoding x repetition penalty, each
    also "all"), per detector, on the undefended scores: :func:`~humanize.benchmarks.evaluation.raid.raid_metrics`."""
    from ..evaluation.raid import raid_metrics

    rows = score_table[score_table["defense"] == CLEAN].drop(columns=["defense"])
    return raid_metrics(rows, config.fprs, per_domain=config.per_domain)[1]


#: The reason of an unchanged output whose stored info has none (an output cached before attacks reported it).
NOT_RECORDED = "not recorded"


def unchanged_reason(info: dict, original: str, text: str):
    """Why an attack output is its input (``info["unchanged"]``, else :data:`NOT_RECORDED`); None when it changed."""
    if text != original:
        return None
    reason = info.get("unchanged")
    return reason if isinstance(reason, str) and reason else NOT_RECORDED


#: ``timing`` of a cost row: its document timed alone, or its share of a batch timed as one call.
PER_DOCUMENT, BATCH_MEAN = "per document", "batch mean"


def timing_label(batch_docs: int) -> str:
    """:data:`BATCH_MEAN` for a row timed in a batch of more than one document, else :data:`PER_DOCUMENT`."""
    return BATCH_MEAN if batch_docs > 1 else PER_DOCUMENT


def cost_rows(outputs: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Per attack output: its measured (or cached) cost, counts and input size; ``warmup_s``: the
    one-off warm-up seconds of the batch whose first document it is (measured outside ``wall_s``, stored beside
    the output so a cached rerun reports it too; NaN on the other rows); ``timing``: ``"per document"`` (the document timed alone) or
    ``"batch mean"`` (an attack that batches, issue #24: ``wall_s`` and ``cpu_s`` are the batch's seconds
    divided by its ``batch_docs`` documents, ``peak_rss_mb`` the batch's; tokens and queries are the document's)."""
    if not outputs:
        return pd.DataFrame()
    cols = ["attack", "id", "rate", *COST_COLUMNS, *INFO_COUNTS, "n_edits", "unchanged", "cost_source", "timing",
            "batch_docs", "machine", "warmup_s"]
    table = pd.concat([f.reindex(columns=[*cols, "input_hash", "original"]) for f in outputs.values()],
                      ignore_index=True)
    # every attack of a run has the same inputs: measure each input once
    inputs = table.drop_duplicates("input_hash").set_index("input_hash")["original"]
    table["chars_in"] = table["input_hash"].map(inputs.str.len())
    table["words_in"] = table["input_hash"].map(inputs.str.split().str.len())
    return table.drop(columns=["input_hash", "original"])


def mixed_machines(cost: pd.DataFrame) -> list[str]:
    """A warning when the cost rows were measured on more than one kind of machine."""
    if "machine" not in cost.columns:
        return []
    machines = sorted({str(m) for m in cost["machine"] if isinstance(m, str) and m})
    unknown = int(sum(not (isinstance(m, str) and m) for m in cost["machine"]))
    if len(machines) + (unknown > 0) <= 1:
        return []
    parts = [f"{int((cost['machine'] == m).sum())} rows on {m!r}" for m in machines]
    if unknown:
        parts.append(f"{unknown} rows on an unrecorded machine")
    return [f"the cost table mixes machines ({'; '.join(parts)}): compare times and memory only within "
            f"one machine (column 'machine')"]


def failure_rows(failures: list, ids: dict[str, str]) -> pd.DataFrame:
    return pd.DataFrame({
        "job": [f.job for f in failures], "key": [f.key for f in failures],
        "id": [ids.get(f.key) for f in failures], "error": [f.error for f in failures],
        "attempts": [f.attempts for f in failures],
    })
