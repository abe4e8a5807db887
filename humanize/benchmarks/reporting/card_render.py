"""A robustness card as Markdown and as one self-contained HTML page (inline CSS, no assets).

Both renderings come from the same list of sections, so they always carry the same figures.
"""

from __future__ import annotations

import html
import json
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ._escape import html_text, md_text, plain_text
from .selection import protocol_sentence
from .tables import MIN_LOSS

__all__ = ["card_markdown", "card_html", "fmt_ci"]


@dataclass
class Section:
    title: str
    text: list = field(default_factory=list)
    header: list | None = None
    rows: list = field(default_factory=list)


def _num(v, digits: int = 3) -> str:
    try:
        v = float(v)
    except (TypeError, ValueError):
        return "n/a"
    return "n/a" if math.isnan(v) else f"{round(v, digits) + 0.0:.{digits}f}"


def fmt_ci(value, lo, hi, digits: int = 3) -> str:
    """``value [lo, hi]``; ``n/a`` for a missing value or interval."""
    if _num(value) == "n/a":
        return "n/a"
    ci = "n/a" if _num(lo) == "n/a" or _num(hi) == "n/a" else f"{_num(lo, digits)}, {_num(hi, digits)}"
    return f"{_num(value, digits)} [{ci}]"


def _fig_name(figure: str) -> str:
    metric, _, fpr = figure.partition("@")
    names = {"auroc": "AUROC", "tpr": "TPR", "asr": "attack success rate"}
    return names.get(metric, metric) + (f" at FPR {fpr}" if fpr else "")


def _value(r) -> str:
    """A figure with its interval; a TPR/ASR whose FPR the run cannot resolve reads
    ``n/a (x at FPR y)``: the figure at the FPR actually achieved."""
    out = fmt_ci(r["value"], r["lo"], r["hi"])
    return f"{out} ({r['note']})" if out == "n/a" and r.get("note") else out


def _figures_line(frame: pd.DataFrame) -> str:
    parts = []
    for _, r in frame.iterrows():
        s = f"{_fig_name(r['figure'])} {_value(r)}"
        if r["metric"] != "asr" and _num(r.get("change")) != "n/a":
            s += f", change vs clean {fmt_ci(r['change'], r['change_lo'], r['change_hi'])}"
        parts.append(s)
    return "; ".join(parts)


def _share(v) -> str:
    return "n/a" if _num(v) == "n/a" else f"{float(v):.1%}"


def _validity_header(card) -> list[str]:
    if card.validity is None:
        return []
    measure = card.validity.attrs.get("measure")
    return [f"meaning preserved ({measure[0] if measure else 'n/a'})", "valid swaps", "WordNet-valid",
            "invalid swaps"]


def _meaning(card, attack, value) -> str:
    """Meaning preserved, or "not measured" where the meter cannot see the attack's change."""
    return "not measured" if attack in card.unmeasured else _num(value)


def _validity_cells(card, attack, meaning: bool = True) -> list[str]:
    """Meaning preserved; the valid share of the attack's word swaps (WordNet-valid and fitting their sentence,
    issue #33; the WordNet share where the context meter did not run), the WordNet-valid share and the invalid
    share ("no swaps" without any)."""
    if card.validity is None:
        return []
    v = card.validity
    r = v.loc[attack] if attack in v.index else None
    if r is None:
        cells = ["n/a", "n/a", "n/a", "n/a"]
    elif _num(r["swaps_per_doc"]) != "n/a" and float(r["swaps_per_doc"]) == 0:
        cells = [_meaning(card, attack, r["meaning"]), "no swaps", "no swaps", "no swaps"]
    else:
        both = r.get("valid_in_context_share", np.nan)
        both = r["valid_share"] if _num(both) == "n/a" else both
        cells = [_meaning(card, attack, r["meaning"]), _share(both), _share(r["valid_share"]),
                 _share(r["invalid_share"])]
    return cells if meaning else cells[1:]


def _validity_legend(card) -> str:
    measure = card.validity.attrs.get("measure")
    meaning = (f"meaning preserved = mean over documents of {measure[0]} (1 minus it is {measure[1]}), the "
               "strongest meaning meter this run computed (in order: entailment, LLM judge, cosine, ROUGE-L)"
               if measure else "meaning preserved: n/a (the run computed no meaning meter)")
    return (f"Beside each attack's figures: {meaning}; valid swaps = share of its word swaps that are WordNet "
            "synonyms or morphological variants and fit their sentence under the perplexity meter's language "
            "model, which no attack uses (humanize.quality.context; a change of case only fits unscored; where that "
            "meter did not run, the WordNet share alone); WordNet-valid = the WordNet share whatever the context; "
            "invalid swaps = antonyms, sister terms and unrelated words, which "
            "change what the text says (humanize.quality.validity, pooled over the swaps); \"no swaps\": the attack "
            "swaps no single words." + (" \"not measured\": the meaning meter reads no loss at all on texts the "
                                        "attack changed, so it cannot see this kind of change (" +
                                        ", ".join(sorted(card.unmeasured)) + ")." if card.unmeasured else ""))


def _attack_table(card, frame: pd.DataFrame, section: Section) -> None:
    figures = list(dict.fromkeys(frame["figure"]))
    section.header = ["attack"] + [h for f in figures for h in
                                   ([_fig_name(f)] if f.startswith("asr") else [_fig_name(f), "change vs clean"])]
    section.header += _validity_header(card)
    for attack, g in frame.groupby("attack", sort=False):
        by = {r["figure"]: r for _, r in g.iterrows()}
        row = [str(attack)]
        for f in figures:
            r = by.get(f)
            row.append("n/a" if r is None else _value(r))
            if not f.startswith("asr"):
                row.append("n/a" if r is None else fmt_ci(r["change"], r["change_lo"], r["change_hi"]))
        section.rows.append(row + _validity_cells(card, attack))


def _evaluated(card) -> str:
    """The sample the tables are computed on (the test split), and what was drawn: the header and the
    tables state the same n."""
    prov = card.provenance
    clean = card.clean[card.clean["figure"] == "auroc"] if len(card.clean) else card.clean
    drawn = f"n = {prov.get('n')} per class drawn"
    if prov.get("train_fraction") is not None:
        drawn += f", a share {prov['train_fraction']:g} of the source documents held out to fit learned detectors"
    if clean.empty:
        return f"{drawn}; no clean figures"
    r = clean.iloc[0]
    return (f"evaluated on {_num(r['n_machine'], 0)} machine and {_num(r['n_human'], 0)} human texts of the test "
            f"split ({drawn})")


def sections(card) -> list[Section]:
    level = f"{card.confidence:.0%}"
    boot = (f"{level} percentile bootstrap intervals in brackets (B = {card.n_boot}, documents redrawn within "
            "label x domain, thresholds recalibrated per replicate; changes paired on the source document)"
            if card.n_boot else "no bootstrap intervals in this run (n_boot = 0): every interval reads n/a")
    prov = card.provenance
    out = [Section("About", [f"Detector {card.detector} on run {card.run_id} (dataset {prov.get('dataset')}, "
                             f"seed {prov.get('seed')}): {_evaluated(card)}. {boot[0].upper() + boot[1:]}. "
                             "A TPR or attack success rate that reads n/a (x at FPR y) is at an FPR the run's "
                             "human texts cannot resolve (fewer than 1/FPR per domain, or ties): x is the figure at "
                             "the FPR y actually achieved. " + protocol_sentence(prov.get("protocol"))])]

    s = Section("Clean detection", ["Machine texts as the positive class; thresholds calibrated on clean human "
                                    "texts" + (" per domain." if prov.get("per_domain") else ".")],
                ["figure", "value [CI]", "machine texts", "human texts"])
    for _, r in card.clean.iterrows():
        s.rows.append([_fig_name(r["figure"]), _value(r), _num(r["n_machine"], 0), _num(r["n_human"], 0)])
    out.append(s)

    s = Section("Worst attack")
    if card.worst is None:
        s.text.append("No attack with an AUROC in this run.")
    else:
        figs = card.worst["figures"]
        auroc = figs[figs["figure"] == "auroc"]
        s.text.append(f"{card.worst['attack']}: the {card.worst['rule']} of the run's attacks.")
        if card.validity is not None:
            m, valid, wordnet, invalid = _validity_cells(card, card.worst["attack"])
            s.text.append(f"Meaning preserved {m} ({(card.validity.attrs.get('measure') or ('n/a',))[0]}); "
                          f"word swaps valid {valid} (WordNet-valid {wordnet}), invalid {invalid}.")
        if not auroc.empty and not auroc["change"].iloc[0] < 0:
            s.text.append("No attack lowered this detector's AUROC below its clean AUROC.")
        elif not auroc.empty and auroc["change_hi"].iloc[0] >= 0:  # the interval reaches 0 (issue #34)
            s.text.append("No attack had a measurable effect on this detector's AUROC: even this one's paired 95% "
                          "interval of the change reaches 0.")
        if not auroc.empty and auroc["value"].iloc[0] < 0.5:
            s.text.append("Inverted: under this attack the AUROC is below 0.5, so the detector scores the attacked "
                          "machine texts as the more human; its TPR reads the wrong way.")
        s.header = ["figure", "value [CI]", "change vs clean [CI]"]
        for _, r in figs.iterrows():
            s.rows.append([_fig_name(r["figure"]), _value(r), "" if r["metric"] == "asr" else
                           fmt_ci(r["change"], r["change_lo"], r["change_hi"])])
    if card.worst_asr is not None and (card.worst is None or card.worst_asr["attack"] != card.worst["attack"]):
        s.text.append(f"{card.worst_asr['attack']} ({card.worst_asr['rule']}): "
                      f"{_figures_line(card.worst_asr['figures'])}.")
    out.append(s)

    n_attacks = card.attacks["attack"].nunique()
    s = Section("Mean over attacks", [f"Mean over the run's {n_attacks} attacks (and sweep points), each weighted "
                                      "by its documents, computed as the figures of all attacked texts pooled so "
                                      "that the same paired bootstrap gives the interval."])
    if card.mean is not None and not card.mean.empty:
        _attack_table(card, card.mean, s)
    else:
        s.text.append("No attacked texts in this run.")
    out.append(s)

    s = Section("Every attack")
    if card.attacks.empty:
        s.text.append("This run has no attacks.")
    else:
        if card.validity is not None:
            s.text.append(_validity_legend(card))
        _attack_table(card, card.attacks, s)
    out.append(s)

    s = Section("With the normalizer (defense)")
    if card.defense is None:
        s.text.append("This run scored no defended texts.")
    else:
        s.text.append("Each figure without and with the defense applied to every scored text (clean and "
                      "attacked); the clean row shows what the defense costs on clean text.")
        s.header = ["defense", "attack", "figure", "without", "with defense"]
        for _, r in card.defense.iterrows():
            with_d = fmt_ci(r["value_defended"], r["lo_defended"], r["hi_defended"])
            s.rows.append([r["defense"], r["attack"], _fig_name(r["figure"]), _value(r), with_d])
    out.append(s)

    s = Section("Artifact Reliance Score", ["Artifact-reliance paper §5.1: flip = share of correctly detected "
                                            "machine texts flipped by the human format profile minus the placebo "
                                            "(machine profile); unc = placebo-corrected margin shift over all "
                                            "machine texts; rec = share detected."])
    if card.reliance is None:
        s.text = ["Not computed for this run (humanize-bench ars --db RUN stores it)."]
    else:
        s.header = ["subset", "flip", "unc", "rec", "threshold rule"]
        for _, r in card.reliance.iterrows():
            s.rows.append([str(r.get("subset", "")), fmt_ci(r.get("flip"), r.get("flip_lo"), r.get("flip_hi")),
                           fmt_ci(r.get("unc"), r.get("unc_lo"), r.get("unc_hi")), _num(r.get("rec")),
                           str(r.get("threshold_rule", ""))])
    out.append(s)

    s = Section("Effectiveness per unit of quality loss")
    if card.efficiency is None:
        s.text.append("Not available: " + next((n for n in card.notes if "quality" in n), "no quality table") + ".")
    else:
        s.text.append(f"Effectiveness = AUROC drop from clean (clean minus attacked AUROC); quality loss = mean over "
                      f"documents of {card.quality_measure}, from the strongest meaning meter the run computed "
                      "(entailment, then LLM judge, then cosine, then ROUGE-L); their ratio is the AUROC drop per "
                      "unit of quality loss. The ratio's interval is the drop's paired interval divided by the mean loss; the "
                      "loss's own interval is a bootstrap over documents. Attacks whose mean loss is below "
                      f"{MIN_LOSS:g} (no measurable loss) get no ratio, and so do those whose loss is not measured: "
                      "the meter reads no loss at all on texts the attack changed (an uncased encoder and case "
                      "flips, a tokenizer that drops whitespace or invisible characters), which is a blind spot of "
                      "the meter, not a free attack.")
        b = card.best_efficiency
        s.text.append("Best: " + (f"{b['attack']}, {fmt_ci(b['ratio'], b['ratio_lo'], b['ratio_hi'])} AUROC per "
                                  f"unit of loss (drop {fmt_ci(b['drop'], b['drop_lo'], b['drop_hi'])}, loss "
                                  f"{fmt_ci(b['loss'], b['loss_lo'], b['loss_hi'])})." if b else
                                  "none (no attack with a measurable quality loss lowered the AUROC)."))
        eff = card.efficiency
        blind = eff["attack"].isin(list(card.unmeasured))
        for sel, what in ((~blind, "without a measurable quality loss"),
                          (blind, "with a quality loss the meter does not measure")):
            free = eff[sel & (eff["drop"] > 0) & eff["ratio"].isna()]
            if not free.empty:
                s.text.append(f"Lowering the AUROC {what}: " + ", ".join(
                    f"{r['attack']} (drop {fmt_ci(r['drop'], r['drop_lo'], r['drop_hi'])})"
                    for _, r in free.iterrows()) + ".")
        s.header = ["attack", "AUROC drop", "quality loss", "drop per unit loss", "documents",
                    *_validity_header(card)[1:]]
        for _, r in card.efficiency.iterrows():
            s.rows.append([r["attack"], fmt_ci(r["drop"], r["drop_lo"], r["drop_hi"]),
                           "not measured" if r["attack"] in card.unmeasured else
                           fmt_ci(r["loss"], r["loss_lo"], r["loss_hi"]),
                           fmt_ci(r["ratio"], r["ratio_lo"], r["ratio_hi"]), str(r["n"]),
                           *_validity_cells(card, r["attack"], meaning=False)])
    out.append(s)

    if card.watermark is not None:
        w = card.watermark.reset_index()
        stat = w["statistic"].iloc[0]
        s = Section(f"Watermark statistic per attack ({stat})",
                    [f"The {stat} of each text (quantiles over the clean human texts and each attack's machine texts)"
                     + ("; past 2.326: the share above the analytic one-sided threshold at 1% FPR (Kirchenbauer et "
                        "al. 2023, §4), whose human row is the FPR it really gives on this data." if stat == "z"
                        else ": 0.5 without the watermark.")],
                    header=["attack", "texts", "n", "q05", "q25", "median", "q75", "q95"]
                    + (["past 2.326"] if stat == "z" else []))
        for _, r in w.iterrows():
            s.rows.append([r["attack"], r["label"], str(int(r["n"])), *(_num(r[q], 2) for q in
                                                                         ("q05", "q25", "q50", "q75", "q95")),
                           *([_share(r["share_z_gt_2.326"])] if stat == "z" else [])])
        out.append(s)
    if card.watermark_tokens is not None:
        t = card.watermark_tokens.reset_index()
        s = Section("Detection against tokens scored",
                    [f"TPR at FPR {min(card.fprs):g} of this watermark's detectors that differ only in max_tokens "
                     "(all: every token), with the 95% interval."], header=["attack", "tokens", "detector", "TPR"])
        for _, r in t.iterrows():
            s.rows.append([r["attack"], str(r["tokens"]), r["detector"], fmt_ci(r["tpr"], r["tpr_lo"], r["tpr_hi"])])
        out.append(s)
    s = Section("Provenance", header=["item", "value"])
    for key, value in prov.items():
        if key == "attacks":
            for a in value:
                params = json.dumps(a["params"], sort_keys=True, default=repr)
                s.rows.append([f"attack {a['attack']}", f"{a['name']} {params} key {a['key']}"])
        else:
            s.rows.append([key, value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=repr)])
    out.append(s)
    if card.notes:
        out.append(Section("Notes", list(card.notes)))
    return out


def _md_cell(text: str) -> str:
    """A table cell or a paragraph: no raw HTML, no pipe or line break, invisible characters marked."""
    return md_text(text)


def card_markdown(card) -> str:
    lines = [f"# Robustness card: {md_text(card.detector)}", ""]
    for s in sections(card):
        lines += [f"## {md_text(s.title)}", ""]
        for t in s.text:
            lines += [md_text(t), ""]
        if s.header:
            lines.append("| " + " | ".join(_md_cell(h) for h in s.header) + " |")
            lines.append("|" + "|".join("---" for _ in s.header) + "|")
            lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in s.rows]
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


CSS = """
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:90rem;padding:0 1rem;
color:#1d2430;background:#fff}
h1{font-size:1.6rem;border-bottom:3px solid #2b6cb0;padding-bottom:.3rem}
h2{font-size:1.15rem;margin-top:1.8rem;color:#2b4c7e}
table{border-collapse:collapse;margin:.5rem 0;font-size:.9rem}
th,td{border:1px solid #d5dbe3;padding:.3rem .6rem;text-align:left;vertical-align:top}
th{background:#eef2f7}
tr:nth-child(even) td{background:#f8fafc}
td{font-variant-numeric:tabular-nums}
td+td{white-space:nowrap}
.wide{overflow-x:auto}
section.worst p{background:#fff4e5;border-left:4px solid #dd6b20;padding:.4rem .7rem}
section.provenance td{font-family:ui-monospace,monospace;font-size:.8rem;word-break:break-all}
.inv{font:600 .65rem ui-monospace,monospace;background:#faf089;color:#744210;border:1px solid #d69e2e;
border-radius:3px;padding:0 2px;margin:0 1px}
"""


def card_html(card) -> str:
    e = html_text  # escaped, invisible and bidi characters marked (the documents page's marking)
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>Robustness card: {html.escape(plain_text(card.detector))}</title>", f"<style>{CSS}</style></head><body>",
             f"<h1>Robustness card: {e(card.detector)}</h1>"]
    for s in sections(card):
        cls = s.title.split()[0].lower()
        parts.append(f'<section class="{html.escape(plain_text(cls))}"><h2>{e(s.title)}</h2>')
        parts += [f"<p>{e(t)}</p>" for t in s.text]
        if s.header:
            head = "".join(f"<th>{e(h)}</th>" for h in s.header)
            parts.append(f'<div class="wide"><table><thead><tr>{head}</tr></thead><tbody>')
            parts += ["<tr>" + "".join(f"<td>{e(str(c))}</td>" for c in row) + "</tr>" for row in s.rows]
            parts.append("</tbody></table></div>")
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
