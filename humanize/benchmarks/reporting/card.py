"""Robustness card: one page per detector of a stored run (issue #12 §4).

A card gathers what a detector builder asks of a run: the clean AUROC and TPR at each of
the run's FPRs, the worst attack, the mean over attacks, the figures with a defense (the
normalizer) where the run has them, the Artifact Reliance Score where it was computed
(artifact-reliance paper §5.1, the run's ``reliance`` table), the attack that costs the
detector most per unit of quality loss, and the run's provenance. Every figure carries the
run's bootstrap interval (RAID §5.2 protocol, :func:`humanize.benchmarks.evaluation.evaluate`);
"n/a" where the run has none (``n_boot = 0``).

Rendering (Markdown, self-contained HTML) lives in :mod:`.card_render`.
"""

from __future__ import annotations

import math
import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ._files import file_stem, write_text
from ._meaning import mean_interval, meaning_by_attack
from .card_provenance import detector_provenance, provenance, recorded_detector
from .tables import MEANING_MEASURES, MIN_LOSS, meaning_measure, meaning_validity_table
from ..runner.store import ResultsStore

__all__ = ["Card", "robustness_cards", "save_cards", "write_cards", "unmeasured_attacks", "MEAN_LABEL",
           "QUALITY_MEASURES"]

from .selection import CLEAN
#: the pooled group whose figures are the mean over attacks
MEAN_LABEL = "mean over attacks"
#: "meaning preserved" for "effectiveness per unit of quality loss", strongest meter first (entailment,
#: LLM judge, cosine, ROUGE-L): (quality column, loss definition)
QUALITY_MEASURES = MEANING_MEASURES


@dataclass
class Card:
    """The figures of one detector on one run; ``to_markdown()`` / ``to_html()`` render it.

    Figure frames carry ``value, lo, hi`` columns (the run's bootstrap interval; NaN = n/a).
    """

    detector: str
    run_id: str
    fprs: tuple
    confidence: float
    n_boot: int
    clean: pd.DataFrame  # figure, value, lo, hi, reached, note, n_machine, n_human
    attacks: pd.DataFrame  # one row per (attack, figure): attack, figure, value, lo, hi, change, change_lo, change_hi
    worst: dict | None  # attack with the lowest AUROC: {"attack", "rule", "figures": frame rows}
    worst_asr: dict | None  # attack with the highest ASR at the run's largest FPR
    mean: pd.DataFrame | None  # the MEAN_LABEL rows, same columns as ``attacks``
    defense: pd.DataFrame | None  # defense, attack, figure, value/lo/hi without and with
    reliance: pd.DataFrame | None  # the run's reliance rows of this detector
    efficiency: pd.DataFrame | None  # attack, drop(+lo/hi), loss(+lo/hi), ratio(+lo/hi)
    best_efficiency: dict | None
    quality_measure: str | None
    provenance: dict
    notes: list = field(default_factory=list)
    #: per attack (and MEAN_LABEL): ``meaning`` (mean of the strongest meaning meter, ``attrs["measure"]``)
    #: and the pooled validity figures of the word swaps (tables.VALIDITY_REPORT_COLUMNS); None without quality
    validity: pd.DataFrame | None = None
    #: attack -> why its quality loss is not measured: the meaning meter reads no loss at all on texts the
    #: attack changed (:func:`._meaning.meaning_by_attack`), e.g. case flips under an uncased encoder
    unmeasured: dict = field(default_factory=dict)
    #: a watermark detector's statistic per attack (:func:`.watermark.watermark_score_table`'s rows) and its
    #: detection against the tokens scored (:func:`.watermark.watermark_tokens_table`), None otherwise
    watermark: pd.DataFrame | None = None
    watermark_tokens: pd.DataFrame | None = None

    def to_markdown(self) -> str:
        from .card_render import card_markdown

        return card_markdown(self)

    def to_html(self) -> str:
        from .card_render import card_html

        return card_html(self)


def open_store(store_or_path) -> tuple[ResultsStore, bool]:
    """``(store, close)``: a ResultsStore as given (``close`` False), or the one at a path opened read-only."""
    if isinstance(store_or_path, ResultsStore):
        return store_or_path, False
    if not isinstance(store_or_path, (str, os.PathLike)):
        raise TypeError(f"store_or_path must be a ResultsStore or a path, got {type(store_or_path).__name__}")
    if not Path(store_or_path).is_file():
        raise FileNotFoundError(f"no results database at {str(store_or_path)!r}")
    return ResultsStore(store_or_path, readonly=True), True


def check_run_id(run_id) -> None:
    """A run id is a str, or None for the latest run (a TypeError otherwise)."""
    if run_id is not None and not isinstance(run_id, str):
        raise TypeError(f"run_id must be a str or None (the latest run), got {type(run_id).__name__}")


def _no_defense(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["defense"] == CLEAN] if "defense" in frame.columns else frame


def _label(metric: str, fpr) -> str:
    return metric if fpr is None or (isinstance(fpr, float) and math.isnan(fpr)) else f"{metric}@{fpr:g}"


def _figure_rows(metrics: pd.DataFrame, fprs) -> pd.DataFrame:
    """One row per (attack, figure): AUROC, then TPR and ASR at each FPR, with intervals and changes."""
    wanted = [("auroc", None)] + [(m, f) for f in fprs for m in ("tpr", "asr")]
    rows = []
    for attack, g in metrics.groupby("attack", sort=False):
        for metric, fpr in wanted:
            sel = g[g["metric"] == metric]
            if fpr is not None:
                sel = sel[np.isclose(sel["fpr"].astype(float), fpr)]
            if sel.empty or (metric == "asr" and attack == CLEAN):
                continue
            r = sel.iloc[0]
            get = (lambda c, r=r: float(r[c]) if c in r and pd.notna(r[c]) else math.nan)
            reached = bool(r["reached"]) if "reached" in r and pd.notna(r["reached"]) else True
            note = ""
            if not reached:
                note = f"{get('value_at_achieved_fpr'):.3f} at FPR {get('achieved_fpr'):.3f}"
            rows.append({"attack": attack, "figure": _label(metric, fpr), "metric": metric, "fpr": fpr,
                         "value": get("value"), "lo": get("value_lo"), "hi": get("value_hi"),
                         "change": get("change"), "change_lo": get("change_lo"), "change_hi": get("change_hi"),
                         "reached": reached, "note": note, "n_machine": get("n_machine"),
                         "n_human": get("n_human")})
    return pd.DataFrame(rows, columns=["attack", "figure", "metric", "fpr", "value", "lo", "hi", "change",
                                       "change_lo", "change_hi", "reached", "note", "n_machine", "n_human"])


def _mean_over_attacks(scores: pd.DataFrame, config, fprs) -> pd.DataFrame | None:
    """The mean over attacks as the figures of every attacked text pooled (each attack weighted by
    its documents, equal in a complete run): AUROC and TPR average over machine rows, ASR over the
    documents detected before the attack, so pooling gives the mean, and evaluate's paired
    bootstrap (sources redrawn with all their attacked versions) gives its interval."""
    from humanize._split import sampling_seed
    from ..evaluation import evaluate

    attacked = scores[(scores["attack"] != CLEAN) & (scores["label"] == "machine")]
    if attacked.empty:
        return None
    pooled = attacked.assign(id=attacked["attack"].astype(str) + "\x1f" + attacked["id"].astype(str),
                             attack=MEAN_LABEL)
    frame = pd.concat([scores[scores["attack"] == CLEAN], pooled], ignore_index=True)
    if "adv_source_id" not in frame.columns:
        frame["adv_source_id"] = scores["id"]
    table = evaluate(frame, fprs=fprs, per_domain=config.per_domain, pair_key="adv_source_id", nan_policy="omit",
                     n_boot=config.n_boot, confidence=config.confidence, seed=sampling_seed(config.seed))
    rows = _figure_rows(table, fprs)
    return rows[rows["attack"] == MEAN_LABEL].reset_index(drop=True)


def _worst(attacks: pd.DataFrame, fprs) -> tuple[dict | None, dict | None]:
    att = attacks[attacks["attack"] != CLEAN]
    auroc = att[att["figure"] == "auroc"].dropna(subset=["value"])
    asr_fig = _label("asr", fprs[0]) if fprs else None
    asr = att[att["figure"] == asr_fig].dropna(subset=["value"]) if asr_fig else att.iloc[:0]
    worst = worst_asr = None
    if not auroc.empty:
        # lowest AUROC; ties broken by the higher ASR at the largest FPR, then by name
        by_asr = dict(zip(asr["attack"], asr["value"]))
        order = sorted(auroc.itertuples(), key=lambda r: (r.value, -by_asr.get(r.attack, -1.0), r.attack))
        name = order[0].attack
        worst = {"attack": name, "rule": "lowest AUROC", "figures": att[att["attack"] == name]}
    if not asr.empty:
        name = sorted(asr.itertuples(), key=lambda r: (-r.value, r.attack))[0].attack
        worst_asr = {"attack": name, "rule": f"highest attack success rate at FPR {fprs[0]:g}",
                     "figures": att[att["attack"] == name]}
    return worst, worst_asr


def _defense_rows(metrics: pd.DataFrame, fprs) -> pd.DataFrame | None:
    if "defense" not in metrics.columns or set(metrics["defense"].dropna()) <= {CLEAN}:
        return None
    base = _figure_rows(metrics[metrics["defense"] == CLEAN], fprs)
    parts = []
    for name in sorted(set(metrics["defense"].dropna()) - {CLEAN}):
        with_d = _figure_rows(metrics[metrics["defense"] == name], fprs)
        merged = base.merge(with_d, on=["attack", "figure"], suffixes=("", "_defended"))
        parts.append(merged.assign(defense=name))
    return pd.concat(parts, ignore_index=True) if parts else None


_interval = mean_interval  # the loss's interval: a percentile bootstrap of the mean over documents


def unmeasured_attacks(quality: pd.DataFrame | None, cost: pd.DataFrame | None = None) -> dict[str, str]:
    """Attack -> why its quality loss is not measured: the meaning meter reads no loss on the texts it
    changed (:func:`._meaning.meaning_by_attack`; ``cost``: the run's cost table, whose edits say which
    texts changed when the quality table has no edit rate)."""
    meaning = meaning_by_attack(quality, n_boot=0, cost=cost)
    measure = meaning.attrs.get("measure")
    if measure is None:
        return {}
    out = {}
    for a, r in meaning.iterrows():
        if not r["measured"]:
            share = f" ({r['char_edit_rate']:.1%} of characters)" if pd.notna(r["char_edit_rate"]) else ""
            out[str(a)] = f"{measure[0]} reads no loss on texts this attack changed{share}: a change it cannot see"
    return out


def _efficiency(attacks: pd.DataFrame, quality: pd.DataFrame | None, config, cost=None) -> tuple:
    """Per attack: AUROC drop from clean / mean quality loss. The drop's interval is the run's paired
    interval of the AUROC change; the ratio's interval divides it by the mean loss (the loss's own
    interval, a bootstrap over documents, is shown next to it). ``measured`` is False where the meter
    cannot see the attack's change (:func:`unmeasured_attacks`): no ratio then."""
    if quality is None or quality.empty:
        return None, None, None, "the run has no quality table (quality = false): effectiveness per unit of " \
                                "quality loss cannot be given"
    # the strongest meter, read on the text as a person sees it where the run measured that (issue #34)
    measure = meaning_measure(quality)
    if measure is None:
        return None, None, None, (f"the run's quality table has none of {[m[0] for m in QUALITY_MEASURES]}: "
                                  "effectiveness per unit of quality loss cannot be given")
    col, _ = measure
    auroc = attacks[(attacks["figure"] == "auroc") & (attacks["attack"] != CLEAN)].set_index("attack")
    blind = unmeasured_attacks(quality, cost)
    rows = []
    for attack, g in quality.groupby("attack", sort=True):
        if attack not in auroc.index:
            continue
        loss = 1.0 - pd.to_numeric(g[col], errors="coerce").to_numpy(dtype=float)
        mean_loss = float(np.nanmean(loss)) if np.isfinite(loss).any() else math.nan
        lo, hi = _interval(loss, config.n_boot, config.confidence, [config.seed, zlib.crc32(attack.encode())])
        a = auroc.loc[attack]
        drop, drop_lo, drop_hi = -a["change"], -a["change_hi"], -a["change_lo"]
        measured = attack not in blind
        usable = measured and np.isfinite(mean_loss) and mean_loss > MIN_LOSS
        ratio = drop / mean_loss if usable else math.nan
        rows.append({"attack": attack, "drop": drop, "drop_lo": drop_lo, "drop_hi": drop_hi, "loss": mean_loss,
                     "loss_lo": lo, "loss_hi": hi, "ratio": ratio,
                     "ratio_lo": drop_lo / mean_loss if usable else math.nan,
                     "ratio_hi": drop_hi / mean_loss if usable else math.nan, "n": int(np.isfinite(loss).sum()),
                     "measured": measured})
    table = pd.DataFrame(rows, columns=["attack", "drop", "drop_lo", "drop_hi", "loss", "loss_lo", "loss_hi",
                                        "ratio", "ratio_lo", "ratio_hi", "n", "measured"])
    ranked = table[table["ratio"] > 0].sort_values(["ratio", "attack"], ascending=[False, True])
    best = ranked.iloc[0].to_dict() if not ranked.empty else None
    return table, best, measure, None


def robustness_cards(store_or_path, run_id: str | None = None, fpr=None) -> dict[str, Card]:
    """One :class:`Card` per detector of a finished run (the latest by default).

    ``fpr``: a target FPR or a list of them (each must be one of the run's); None = all of the run's.
    """
    from humanize.benchmarks.runner.manifest import run_config

    check_run_id(run_id)
    store, close = open_store(store_or_path)
    try:
        run_id, config = run_config(store, run_id)
        tables = store.run_tables(run_id)
        from ..runner.manifest import run_manifest

        manifest = run_manifest(store, run_id)[1]
    finally:
        if close:
            store.close()
    fprs = _select_fprs(config.fprs, fpr)
    metrics, scores = tables["metrics"], tables["scores"]
    specs = {s.base_label(): s for s in config.detectors}
    reliance = tables.get("reliance")
    run_prov = provenance(run_id, config, tables, manifest)
    recorded = {e["label"]: e for e in (manifest or {}).get("detectors", [])}
    cards = {}
    for det in sorted(set(metrics["detector"])):
        m_all = metrics[metrics["detector"] == det]
        figures = _figure_rows(_no_defense(m_all), fprs)
        notes = []
        clean = figures[figures["attack"] == CLEAN].drop(columns=["change", "change_lo", "change_hi"])
        attacks = figures[figures["attack"] != CLEAN].reset_index(drop=True)
        worst, worst_asr = _worst(attacks, fprs)
        mean = _mean_over_attacks(_no_defense(scores[scores["detector"] == det]), config, fprs)
        defense = _defense_rows(m_all, fprs)
        if defense is None:
            notes.append("no defense in this run: add defenses = [\"normalize\"] to its configuration to see "
                         "which attacks the normalizer undoes")
        rel = None
        if reliance is not None and "detector" in reliance.columns:
            rel = reliance[reliance["detector"] == det].reset_index(drop=True)
            rel = rel if not rel.empty else None
        if rel is None:
            notes.append("no Artifact Reliance Score stored for this detector: `humanize-bench ars --db RUN` "
                         "computes it")
        eff, best, measure, why = _efficiency(figures, tables.get("quality"), config, tables.get("cost"))
        if why:
            notes.append(why)
        quality = tables.get("quality")
        validity = meaning_validity_table(quality, MEAN_LABEL) if quality is not None and len(quality) else None
        spec = specs.get(det)
        prov = dict(run_prov)
        prov = {"run_id": prov.pop("run_id"), "detector": recorded_detector(recorded[det]) if det in recorded
                else detector_provenance(spec) if spec else {"name": det},
                **prov}
        cards[det] = Card(det, run_id, fprs, config.confidence, config.n_boot, clean.reset_index(drop=True),
                          attacks, worst, worst_asr, mean, defense, rel, eff, best,
                          None if measure is None else f"{measure[1]} ({measure[0]})", prov, notes, validity,
                          unmeasured_attacks(quality, tables.get("cost")) if quality is not None and len(quality)
                          else {}, *_watermark_figures(det, tables, manifest, fprs))
    return cards


def _watermark_figures(det: str, tables: dict, manifest, fprs) -> tuple:
    """(statistic per attack, detection against tokens scored at the smallest FPR) of a watermark detector."""
    from .watermark import watermark_detectors, watermark_score_table, watermark_tokens_table

    found = watermark_detectors(manifest)
    if det not in found:
        return None, None
    scores = watermark_score_table(tables["scores"], {det: found[det]})
    tokens = watermark_tokens_table(tables["metrics"], found, "tpr", min(fprs)) if fprs else pd.DataFrame()
    if not tokens.empty:
        tokens = tokens[tokens.index.get_level_values("watermark") == det]
    return (scores if not scores.empty else None), (tokens if not tokens.empty else None)


def _select_fprs(run_fprs, fpr) -> tuple:
    run_fprs = tuple(sorted((float(f) for f in run_fprs), reverse=True))
    if fpr is None:
        return run_fprs
    wanted = fpr if isinstance(fpr, (list, tuple)) else (fpr,)
    out = []
    for f in wanted:
        if isinstance(f, bool) or not isinstance(f, (int, float)):
            raise TypeError(f"fpr must be a number or a list of numbers, got {f!r}")
        match = [r for r in run_fprs if math.isclose(r, float(f))]
        if not match:
            raise ValueError(f"fpr {f!r} is not one of the run's FPRs {list(run_fprs)}")
        out.append(match[0])
    return tuple(out)


CARD_FORMATS = ("md", "html")


def save_cards(cards: dict, out_dir, formats=CARD_FORMATS) -> list[Path]:
    """Write cards as ``card_<detector>.md`` / ``.html`` in ``out_dir`` (the name from
    :func:`._files.file_stem`: the label when it is a plain slug, else a slug plus a digest); returns the paths."""
    formats = (formats,) if isinstance(formats, str) else tuple(formats)
    bad = [f for f in formats if f not in CARD_FORMATS]
    if bad or not formats:
        raise ValueError(f"unknown card format(s) {bad or formats}; choose from {list(CARD_FORMATS)}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths, stems = [], set()
    for det, card in cards.items():
        stem = file_stem(det, "card_")  # a slug plus a short digest: unique, bounded, never a path
        if stem in stems:  # pragma: no cover - a digest collision between two labels of one run
            raise ValueError(f"two detectors of the run would write the same card file {stem!r}")
        stems.add(stem)
        for fmt in formats:
            p = out / f"{stem}.{fmt}"
            paths.append(write_text(p, card.to_markdown() if fmt == "md" else card.to_html()))
    return paths


def write_cards(db, out_dir, run_id: str | None = None, formats=CARD_FORMATS, fpr=None) -> list[Path]:
    """Write one card per detector of a run (``db``: a path or a :class:`ResultsStore`) as
    ``card_<detector>.md`` / ``.html`` in ``out_dir``; returns the paths."""
    formats = (formats,) if isinstance(formats, str) else tuple(formats)
    if not formats or any(f not in CARD_FORMATS for f in formats):
        raise ValueError(f"unknown card format(s) {formats}; choose from {list(CARD_FORMATS)}")
    return save_cards(robustness_cards(db, run_id, fpr=fpr), out_dir, formats)
