"""The report's one-screen summary (issue #24 §1) and costs measured without the warm-up (§2)."""

from __future__ import annotations

import math
import re

import pandas as pd
import pytest

from humanize.attacks.zero_width_space import ZeroWidthSpace
from humanize.benchmarks.evaluation import evaluate
from humanize.benchmarks.reporting.report import build_report, render_markdown
from humanize.benchmarks.reporting.summary import summary_table
from humanize.benchmarks.runner import jobs, run
from humanize.benchmarks.runner.config import AttackSpec, DetectorSpec, RunConfig, demo_config
from humanize.cost import meter as cost_meter

from .test_bootstrap import _frame

TEXTS = ["Plain ASCII text, and a second clause here.", "A caf\u00e9 with \u201ccurly\u201d quotes.",
         "Another plain one."]


class _Counted(ZeroWidthSpace):
    """The zero-width-space attack, each call recorded with whether a cost measurement was running."""

    def __init__(self, rate: float = 0.5, seed: int = 0):
        super().__init__(rate=rate, seed=seed)
        self.__dict__["calls"] = []

    def _run(self, text):
        self.__dict__["calls"].append((text, bool(cost_meter._ACTIVE)))
        return super()._run(text)


def test_the_warm_up_runs_once_per_attack_outside_the_timed_blocks_and_is_recorded_apart():
    attack = _Counted()
    rows = jobs.attack_texts(attack, TEXTS)
    calls = list(attack.calls)
    # two warm-up calls (the first text, then the non-ASCII probe) with no measurement running, then one
    # measured call per document: the timed blocks' calls are exactly the documents
    assert [t for t, _ in calls[:2]] == [TEXTS[0], jobs.WARMUP_PROBE] and not any(m for _, m in calls[:2])
    assert [t for t, m in calls[2:]] == TEXTS and all(m for _, m in calls[2:])
    assert isinstance(rows[0]["warmup_s"], float) and rows[0]["warmup_s"] >= 0
    assert [r["warmup_s"] for r in rows[1:]] == [None, None]
    # the next batch of the same attack object in this process is not warmed up again
    more = jobs.attack_texts(attack, TEXTS[:2])
    assert len(attack.calls) == len(calls) + 2 and all(m for _, m in attack.calls[-2:])
    assert [r["warmup_s"] for r in more] == [None, None]
    # the warm-up changes no output: a fresh object gives the same rows
    assert [r["output"] for r in jobs.attack_texts(_Counted(), TEXTS)] == [r["output"] for r in rows]


def test_zero_width_space_builds_its_one_off_table_in_the_warm_up_not_in_a_documents_time(monkeypatch):
    from humanize.attacks import zero_width_space as zws

    built = []
    table = zws._invisible_table

    def recorded():
        built.append(bool(cost_meter._ACTIVE))
        return table()

    monkeypatch.setattr(zws, "_invisible_table", recorded)
    # the first text is ASCII: only the probe reaches the non-ASCII path, which builds the table
    jobs.attack_texts(ZeroWidthSpace(), TEXTS)
    assert built and built[0] is False  # first needed in the warm-up, with no measurement running


def _run_cheap(tmp_path, **kw):
    cfg = RunConfig(n=40, seed=0, db=str(tmp_path / "s.sqlite"), per_domain=False, n_boot=200,
                    quality_params={"meters": ["rouge_l"]},
                    attacks=[AttackSpec("zero_width_space"), AttackSpec("article_deletion")],
                    detectors=[DetectorSpec("tfidf_lr"), DetectorSpec("surface_probe")], **kw)
    return run(cfg, progress=False)


@pytest.fixture(scope="module")
def cheap(tmp_path_factory):
    return _run_cheap(tmp_path_factory.mktemp("summary"))


def test_the_report_opens_with_a_summary_whose_headline_rows_carry_numbers(cheap):
    report = build_report(cheap.tables, n=40)
    assert list(report)[0] == "summary"
    md = render_markdown(report)
    assert md.index("## summary") < md.index("## tpr_at_fpr_0.05") < md.index("## auroc")
    s = report["summary"]
    assert list(s.index) == ["surface_probe", "tfidf_lr"]
    # 20 human test texts pooled over domains resolve 5% FPR, not 1%
    assert "tpr_at_fpr_0.05" in s and "tpr_at_fpr_0.01" not in s
    for det, row in s.iterrows():
        assert 0 <= row["auroc"] <= 1 and 0 <= row["tpr_at_fpr_0.05"] <= 1, det
        assert row["by"] == "tpr_at_fpr_0.05"
        worst = cheap.metrics.query("detector == @det and metric == 'tpr' and fpr == 0.05 and attack != 'none'")
        worst = worst.sort_values(["change", "attack"]).iloc[0]
        if worst["change_hi"] < 0:  # a measurable fall: named, with its figures
            assert row["fooled_most_by"] == worst["attack"] and row["change"] == worst["change"]
            assert row["change_lo"] <= row["change"] <= row["change_hi"] < 0
            assert 0 <= row["meaning"] <= 1 and row["s_per_doc"] >= 0
        else:  # none: no attack named, nothing claimed for it
            assert row["fooled_most_by"] is None and math.isnan(row["change"]) and math.isnan(row["s_per_doc"])
            assert f"- **{det}**: no attack had a measurable effect" in s.attrs["note"]
    note = s.attrs["note"]
    assert "pooled" in note and "1 - ROUGE-L" not in note and "ROUGE-L F1" in note
    assert "Underpowered" in note and "TPR at FPR 0.01 needs 100 human test texts pooled over domains, this run " \
                                      "has 20: rerun with `--n 200`" in note
    assert "--defense normalize" in note


def test_the_cost_rows_carry_the_warm_up_apart_from_the_per_document_time(cheap):
    cost = cheap.tables["cost"]
    warm = cost.groupby("attack")["warmup_s"].apply(lambda v: int(v.notna().sum()))
    assert warm.to_dict() == {"article_deletion": 1, "zero_width_space": 1}  # one batch's first document each
    table = build_report(cheap.tables)["cost"]
    assert (table["warmup_s"] >= 0).all() and set(table.index) == {"article_deletion", "zero_width_space"}


def test_per_domain_thresholds_name_the_short_domain_and_the_n_that_resolves_it():
    # domain A has 30 humans, B 15: FPR 5% is not resolved in B, so TPR at 5% is underpowered everywhere
    a = _frame(n_human=30, n_machine=20, attacks=("x",), domains=("A",), seed=1)
    b = _frame(n_human=15, n_machine=20, attacks=("x",), domains=("B",), seed=2)
    metrics = evaluate(pd.concat([a, b], ignore_index=True), fprs=(0.1, 0.05), n_boot=50, seed=0)
    s = summary_table({"metrics": metrics.assign(thresholds="per domain")}, n=20)
    assert "tpr_at_fpr_0.1" in s and "tpr_at_fpr_0.05" not in s and s.loc["d", "by"] == "tpr_at_fpr_0.1"
    assert "calibrated per domain" in s.attrs["note"]
    # without a scores table, the advice counts the humans the clean figures were computed on (45, all domains)
    assert "TPR at FPR 0.05 needs 20 human test texts" in s.attrs["note"]
    scores = pd.concat([a, b], ignore_index=True).assign(defense="none")
    s = summary_table({"metrics": metrics.assign(thresholds="per domain"), "scores": scores}, n=20)
    assert "needs 20 human test texts in domain B, this run has 15: rerun with `--n 30`" in s.attrs["note"]
    # no quality or cost tables: those columns say nothing rather than guess
    assert "meaning" not in s and math.isnan(s.loc["d", "s_per_doc"])
    assert "not measured" in s.attrs["note"]


def test_the_demo_runs_a_word_level_and_a_rewriting_attack_beside_the_rule_based_set():
    from humanize.attacks import RULE_BASED, get
    from humanize.attacks.wordsub.engine import EnginePreset
    from humanize.attacks.generation.rewrite import RewriteAttack

    cfg = demo_config()
    names = [a.name for a in cfg.attacks]
    assert set(RULE_BASED) <= set(names) and not cfg.per_domain and cfg.n == 40
    models = [a for a in cfg.attacks if a.name not in RULE_BASED]
    built = [get(a.name, **a.params) for a in models]
    assert any(isinstance(b, EnginePreset) for b in built) and any(isinstance(b, RewriteAttack) for b in built)
    assert [a.name for a in demo_config(model_attacks=False).attacks] == list(RULE_BASED)
    assert demo_config(per_domain=True).per_domain


def test_a_paraphrase_budget_rewrites_only_the_first_chunks():
    from humanize.attacks import Paraphrase
    from humanize.generation.base import Generation, Generator, check_requests

    class Scripted(Generator):
        name = "scripted_budget"

        def generate(self, requests):
            reqs = check_requests("Scripted", requests)
            self.__dict__.setdefault("asked", []).extend(r.messages[-1][1].split("\n\n", 1)[1] for r in reqs)
            return [Generation("A first line, put another way.", 10, 7) for _ in reqs]

    text = "One sentence here. Two sentences here. Three sentences here."
    gen = Scripted()
    r = Paraphrase(paraphraser=gen, chunk_sentences=1, max_chunks=1).apply(text)
    assert gen.asked == ["One sentence here."] and r.info["chunks"] == 1
    assert r.text == "A first line, put another way. Two sentences here. Three sentences here."
    everything = Paraphrase(paraphraser=Scripted(), chunk_sentences=1).apply(text)
    assert everything.info["chunks"] == 3 and "Three" not in everything.text
    with pytest.raises(ValueError, match="max_chunks"):
        Paraphrase(paraphraser=gen, max_chunks=0).apply(text)


def _effects(shifts: dict, seed: int = 3) -> pd.DataFrame:
    """Scores of one detector where each attack adds its own shift to every machine text's clean score
    (0: the attacked text scores exactly as the clean one)."""
    f = _frame(n_human=40, n_machine=40, attacks=tuple(shifts), seed=seed)
    clean = f[f["attack"] == "none"].set_index("id")["score"]
    for attack, shift in shifts.items():
        rows = f["attack"] == attack
        f.loc[rows, "score"] = f.loc[rows, "id"].map(clean).to_numpy() + shift
    return f


def test_a_run_whose_attacks_do_nothing_names_no_attack_as_fooling_a_detector():
    metrics = evaluate(_effects({"a": 0.0, "b": 0.0}), fprs=(0.05,), n_boot=100, seed=0)
    s = summary_table({"metrics": metrics})
    row = s.loc["d"]
    assert row["fooled_most_by"] is None and math.isnan(row["change"]) and math.isnan(row["attacked"])
    assert row["backfires"] == "" and row["inverted"] == "" and row["tied_with"] == ""
    assert "- **d**: no attack had a measurable effect on TPR at FPR 0.05" in s.attrs["note"]
    assert "fooled most by" not in s.attrs["note"]


def test_a_fall_whose_interval_reaches_zero_is_not_named_but_said_with_its_interval():
    # a tiny shift on a few machine texts: the largest fall, but its paired interval includes 0
    f = _effects({"small": 0.0})
    f.loc[(f["attack"] == "small") & (f["id"] == "mA0"), "score"] -= 5
    metrics = evaluate(f, fprs=(0.05,), n_boot=200, seed=0)
    auroc = metrics.query("metric == 'auroc' and attack == 'small'").iloc[0]
    assert auroc["change"] < 0 <= auroc["change_hi"]
    s = summary_table({"metrics": metrics[metrics["metric"] == "auroc"]})
    assert s.loc["d", "fooled_most_by"] is None
    assert "no attack had a measurable effect on AUROC (largest fall: small " in s.attrs["note"]
    assert "an interval that reaches 0" in s.attrs["note"]


def test_backfiring_inverting_and_tied_attacks_are_named_with_their_figures():
    metrics = evaluate(_effects({"up": 2.0, "down": -4.0, "down_too": -4.0}), fprs=(0.05,), n_boot=100, seed=0)
    # on AUROC (the TPR at 5% FPR of 20 humans has an interval that reaches 0 here: not named, as above)
    s = summary_table({"metrics": metrics[metrics["metric"] == "auroc"]})
    row = s.loc["d"]
    assert row["fooled_most_by"] == "down" and row["tied_with"] == "down_too"  # a tie named, the name first
    assert row["change_hi"] < 0
    assert row["backfires"].startswith("up (+") and "[+" in row["backfires"]
    assert row["inverted"].startswith("down (AUROC 0.0") and "down_too (AUROC" in row["inverted"]
    note = s.attrs["note"]
    assert "fooled most by down (tied with down_too), AUROC change -0.733 [-0.812, -0.651]" in note
    assert "Backfiring (the attack raised AUROC): up (+0.204 [+0.152, +0.282])" in note and "**Inverted**" in note
    # the line reaches the terminal and the Markdown as its own paragraph
    assert any(line.startswith("- **d**: fooled most by down") for line in s.attrs["lines"])


def test_markdown_tables_show_seconds_with_their_unit_no_entities_and_no_pandas_index(cheap):
    report = build_report(cheap.tables, n=40)
    md = render_markdown(report)
    cost = md[md.index("## cost\n"):md.index("## cost_by_length")]
    assert "µs" in cost or "ms" in cost  # rule attacks take microseconds: not 0.000
    by_length = md[md.index("## cost_by_length"):]
    by_length = by_length[:by_length.index("\n## ")]
    header = next(line for line in by_length.splitlines() if line.startswith("|"))
    assert header.split("|")[1].strip() == "attack"  # no unnamed pandas index column first
    assert "&lt;" not in md and "&gt;" not in md
    assert re.search(r"\| \d+–\d+ ", by_length)
    # the CSV keeps the numbers
    assert pd.api.types.is_float_dtype(report["cost"]["wall_ms_per_doc"])


def test_a_test_split_too_small_for_any_interval_is_said_in_one_line():
    from humanize.benchmarks.reporting.summary import too_small

    small = evaluate(_frame(n_human=4, n_machine=4, attacks=("x",), seed=1), fprs=(0.05,), n_boot=50, seed=0)
    line = too_small(small, n=10)
    assert line.startswith("this run tests 4 human and 4 machine texts per detector") and "\n" not in line
    assert "`--n 30` gives enough" in line
    assert "**Too small.** This run tests 4 human" in summary_table({"metrics": small}, n=10).attrs["note"]
    enough = evaluate(_frame(n_human=20, n_machine=20, attacks=("x",), seed=1), fprs=(0.05,), n_boot=50, seed=0)
    assert too_small(enough) is None and "Too small" not in summary_table({"metrics": enough}).attrs["note"]
