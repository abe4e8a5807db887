"""Robustness cards from a stored run: the figures are the run's, with their intervals (issue #12 §4)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

from humanize.benchmarks.reporting.card import _defense_rows, robustness_cards, unmeasured_attacks, write_cards
from humanize.benchmarks.reporting.tables import MIN_LOSS
from humanize.benchmarks.reporting.card_render import fmt_ci
from humanize.benchmarks.runner.config import AttackSpec, DetectorSpec, RunConfig
from humanize.benchmarks.reporting.documents import run_documents
from humanize.benchmarks.evaluation import evaluate
from humanize.benchmarks.runner import run
from humanize.benchmarks.runner.store import ResultsStore

ATTACKS = [AttackSpec("homoglyph"), AttackSpec("whitespace", rates=[0.2, 0.8]), AttackSpec("zero_width_space"),
           AttackSpec("strip_format")]
DETECTORS = [DetectorSpec("tfidf_lr"), DetectorSpec("surface_probe")]


@pytest.fixture(scope="module")
def stored(tmp_path_factory, minilm):
    """A small run with every card section the runner can fill: intervals, two FPRs, cosine quality
    (its encoder is the session's MiniLM, loaded once per test process)."""
    db = tmp_path_factory.mktemp("card") / "r.sqlite"
    cfg = RunConfig(n=20, seed=3, db=str(db), quality=True,
                    quality_params={"meters": ["cosine", "rouge_l", "validity"]},
                    n_boot=50, fprs=(0.2, 0.1), per_domain=False, attacks=ATTACKS, detectors=DETECTORS)
    return db, run(cfg, progress=False)


@pytest.fixture(scope="module")
def bare(tmp_path_factory):
    """A run without intervals (n_boot = 0) and without a quality table."""
    db = tmp_path_factory.mktemp("bare") / "r.sqlite"
    cfg = RunConfig(n=12, seed=1, db=str(db), quality=False, n_boot=0, fprs=(0.2,), per_domain=False,
                    attacks=[AttackSpec("homoglyph")], detectors=[DetectorSpec("surface_probe")])
    return db, run(cfg, progress=False)


def _auroc(metrics: pd.DataFrame, det: str) -> pd.DataFrame:
    m = metrics[(metrics["detector"] == det) & (metrics["metric"] == "auroc")]
    return m.set_index("attack")


def test_a_card_per_detector_with_the_runs_figures_and_intervals(stored):
    db, result = stored
    cards = robustness_cards(db)
    assert set(cards) == {"tfidf_lr", "surface_probe"}
    for det, card in cards.items():
        assert card.run_id == result.run_id and card.fprs == (0.2, 0.1)
        auroc = _auroc(result.metrics, det)
        clean = auroc.loc["none"]
        row = card.clean[card.clean["figure"] == "auroc"].iloc[0]
        assert (row["value"], row["lo"], row["hi"]) == pytest.approx((clean["value"], clean["value_lo"],
                                                                      clean["value_hi"]))
        # the worst attack is the one with the lowest AUROC in the run's metrics table
        attacked = auroc.drop(index="none")
        assert attacked.loc[card.worst["attack"], "value"] == attacked["value"].min()
        worst = attacked.loc[card.worst["attack"]]
        md, page = card.to_markdown(), card.to_html()
        for text in (md, page):
            assert fmt_ci(clean["value"], clean["value_lo"], clean["value_hi"]) in text
            assert fmt_ci(worst["value"], worst["value_lo"], worst["value_hi"]) in text
            assert fmt_ci(worst["change"], worst["change_lo"], worst["change_hi"]) in text
        assert not math.isnan(clean["value_lo"]) and "95% percentile bootstrap intervals" in md
        assert md.startswith(f"# Robustness card: {det}\n")
        # highest ASR at the largest FPR is named when it is another attack
        asr = result.metrics[(result.metrics["detector"] == det) & (result.metrics["metric"] == "asr")
                             & np.isclose(result.metrics["fpr"].astype(float), 0.2)].set_index("attack")
        if card.worst_asr is not None:
            assert asr.loc[card.worst_asr["attack"], "value"] == asr["value"].max()


def test_the_html_card_is_self_contained_and_escaped(stored):
    db, _ = stored
    page = robustness_cards(db)["tfidf_lr"].to_html()
    assert page.startswith("<!DOCTYPE html>") and "<style>" in page
    for external in ("http://", "https://", "<link", "src=", "@import"):
        assert external not in page
    assert page.count("<table") == page.count("</table>") and page.count("<tr>") == page.count("</tr>")


def test_provenance_names_the_run_and_the_stored_attack_fingerprints(stored):
    db, result = stored
    card = robustness_cards(db)["surface_probe"]
    prov = card.provenance
    assert prov["dataset"] == "demo" and prov["seed"] == 3 and prov["n"] == 20 and prov["fprs"] == [0.2, 0.1]
    assert prov["detector"]["name"] == "surface_probe" and len(prov["detector"]["fingerprint"]) == 32
    assert prov["quality"]["cosine_model"]
    with ResultsStore(db, readonly=True) as store:
        keys = set(run_documents(store, clean=False)["attack_key"])
    assert {a["key"] for a in prov["attacks"]} == keys
    md = card.to_markdown()
    assert all(k in md for k in keys) and "humanize-bench" in md


def test_the_mean_over_attacks_is_the_mean_of_each_attacks_figure(stored):
    db, _ = stored
    for card in robustness_cards(db).values():
        for figure in ("auroc", "tpr@0.2", "asr@0.1"):
            per_attack = card.attacks[card.attacks["figure"] == figure]["value"]
            mean = card.mean[card.mean["figure"] == figure].iloc[0]
            assert mean["value"] == pytest.approx(per_attack.mean(), abs=1e-9)  # stored tables keep 10 digits
            assert mean["lo"] <= mean["value"] <= mean["hi"]
        auroc = card.mean[card.mean["figure"] == "auroc"].iloc[0]
        assert auroc["change"] == pytest.approx(auroc["value"] - card.clean["value"].iloc[0])


def test_effectiveness_per_unit_of_quality_loss_is_the_auroc_drop_over_mean_cosine_loss(stored):
    db, result = stored
    quality = result.tables["quality"]
    # the cosine on the texts as a reader sees them (issue #34): a homoglyph's loss is not the bytes'
    loss = (1 - quality["cosine_read"]).groupby(quality["attack"]).mean()
    for det, card in robustness_cards(db).items():
        assert card.quality_measure.endswith("on the text as read (normalized) (cosine_read)")
        auroc = _auroc(result.metrics, det)["value"]
        eff = card.efficiency.set_index("attack")
        assert set(eff.index) == set(auroc.index) - {"none"}
        for attack, r in eff.iterrows():
            drop = auroc["none"] - auroc[attack]
            assert r["drop"] == pytest.approx(drop, abs=1e-9) and r["loss"] == pytest.approx(loss[attack], abs=1e-9)
            if loss[attack] > MIN_LOSS:
                assert r["ratio"] == pytest.approx(drop / loss[attack]) and r["ratio_lo"] <= r["ratio_hi"]
            else:
                assert math.isnan(r["ratio"])
        positive = eff[eff["ratio"] > 0]
        if positive.empty:
            assert card.best_efficiency is None
        else:
            assert card.best_efficiency["attack"] == positive["ratio"].idxmax()
        assert "Effectiveness = AUROC drop from clean" in card.to_markdown()


def test_every_attack_carries_its_meaning_and_swap_validity_beside_its_figures(stored):
    db, result = stored
    quality = result.tables["quality"]
    card = robustness_cards(db)["tfidf_lr"]
    v = card.validity
    assert v.attrs["measure"][0] == "cosine_read"
    for attack, g in quality.groupby("attack"):
        assert v.loc[attack, "meaning"] == pytest.approx(g["cosine_read"].mean())
        if g["swaps"].sum():  # pooled: sum of counts over sum of swaps
            assert v.loc[attack, "share_non_word"] == pytest.approx(g["swap_non_word"].sum() / g["swaps"].sum())
    # homoglyphs and zero-width characters make every swapped word a non-word: neither valid nor invalid
    assert v.loc["homoglyph", "share_non_word"] == 1.0 and v.loc["homoglyph", "valid_share"] == 0.0
    assert v.loc["strip_format", "share_morphological"] == 1.0  # typographic apostrophes made straight
    pooled = quality[["swaps", "swap_non_word"]].sum()
    assert v.loc["mean over attacks", "share_non_word"] == pytest.approx(pooled["swap_non_word"] / pooled["swaps"])
    md = card.to_markdown()
    header = next(line for line in md.splitlines() if line.startswith("| attack | AUROC"))
    assert header.endswith("| meaning preserved (cosine_read) | valid swaps | WordNet-valid | invalid swaps |")
    row = next(line for line in md.splitlines() if line.startswith("| homoglyph | "))
    assert row.endswith(f"| {v.loc['homoglyph', 'meaning']:.3f} | 0.0% | 0.0% | 0.0% |")
    # issue #33: "valid swaps" = WordNet-valid and fitting their sentence (the context meter ran in this run)
    assert v["valid_in_context_share"].notna().any()
    for attack in ("strip_format", "zero_width_space", "mean over attacks"):
        r = v.loc[attack]
        line = next(line for line in md.splitlines() if line.startswith(f"| {attack} | "))
        meaning = "not measured" if attack in card.unmeasured else f"{r['meaning']:.3f}"
        assert r["valid_in_context_share"] <= r["valid_share"]
        assert line.endswith(f"| {meaning} | {r['valid_in_context_share']:.1%} | {r['valid_share']:.1%} | "
                             f"{r['invalid_share']:.1%} |")
    # where the context meter did not run, "valid swaps" is the WordNet share
    wordnet_only = v.copy()
    wordnet_only["valid_in_context_share"] = np.nan
    wordnet_only.attrs = v.attrs
    r = v.loc["strip_format"]
    line = next(line for line in dataclasses.replace(card, validity=wordnet_only).to_markdown().splitlines()
                if line.startswith("| strip_format | "))
    assert line.endswith(f" | {r['valid_share']:.1%} | {r['valid_share']:.1%} | {r['invalid_share']:.1%} |")
    # an attack that swaps no single word (a rewrite) says so instead of a share
    none = v.copy()
    none.loc["homoglyph", ["swaps_per_doc", "valid_share", "invalid_share"]] = [0.0, np.nan, np.nan]
    none.attrs = v.attrs
    md_none = dataclasses.replace(card, validity=none).to_markdown()
    assert next(line for line in md_none.splitlines() if line.startswith("| homoglyph | ")).endswith(
        "| no swaps | no swaps | no swaps |")
    assert "valid swaps = share of its word swaps that are WordNet synonyms" in md
    assert "fit their sentence under the perplexity meter's language model" in md
    assert "strongest meaning meter" in md and "| drop per unit loss | documents | valid swaps |" in md
    assert "; word swaps valid " in md  # beside the worst attack too
    assert ("<th>meaning preserved (cosine_read)</th><th>valid swaps</th><th>WordNet-valid</th><th>invalid swaps</th>"
            in card.to_html())


@pytest.mark.parametrize("extra,measure", [({"entailment": 0.9, "judge_meaning": 0.8}, "entailment"),
                                           ({"judge_meaning": 0.8}, "judge_meaning")])
def test_meaning_comes_from_the_strongest_meter_the_run_computed(stored, monkeypatch, extra, measure):
    db, result = stored
    original = ResultsStore.run_tables

    def with_meters(self, run_id=None):
        tables = original(self, run_id)
        tables["quality"] = tables["quality"].assign(**extra)
        return tables

    monkeypatch.setattr(ResultsStore, "run_tables", with_meters)
    card = robustness_cards(db)["tfidf_lr"]
    assert card.quality_measure.endswith(f"({measure})")
    assert card.validity.attrs["measure"][0] == measure
    assert card.efficiency["loss"].to_numpy() == pytest.approx(1 - extra[measure])
    assert f"meaning preserved ({measure})" in card.to_markdown()


def test_the_header_states_the_evaluated_sample_of_the_tables(stored):
    db, result = stored
    for det, card in robustness_cards(db).items():
        clean = result.metrics.query("detector == @det and attack == 'none' and metric == 'auroc'").iloc[0]
        md = card.to_markdown()
        about = md.split("## About")[1].split("##")[0]
        assert (f"evaluated on {clean['n_machine']} machine and {clean['n_human']} human texts of the test split "
                "(n = 20 per class drawn, a share 0.5") in about
        row = next(line for line in md.splitlines() if line.startswith("| AUROC | "))
        assert row.endswith(f"| {clean['n_machine']} | {clean['n_human']} |")  # the table's counts, the same n
        assert clean["n_machine"] < 20  # the drawn n is not the evaluated one


def test_a_quality_loss_the_meter_cannot_see_is_not_measured_rather_than_free(stored):
    db, result = stored
    quality, cost = result.tables["quality"], result.tables["cost"]
    edits = cost.set_index(["attack", "id"])["n_edits"]
    changed = edits.reindex(pd.MultiIndex.from_frame(quality[["attack", "id"]])).to_numpy() > 0
    blind = {a for a, g in quality[changed].groupby("attack") if (g["cosine"] >= 1 - 1e-6).all()}
    # MiniLM's tokenizer drops zero-width characters and whitespace: cosine 1 on texts these attacks changed
    assert {"zero_width_space", "whitespace@0.2"} <= blind and "homoglyph" not in blind
    # read as a person sees them (issue #34) those texts are the originals: meaning kept, and measured so
    assert quality.loc[quality["attack"] == "zero_width_space", "cosine_read"].to_numpy() == pytest.approx(1, abs=1e-6)
    assert (quality.loc[quality["attack"] == "zero_width_space", "changed_read"] == 0).all()
    read = unmeasured_attacks(quality, cost)
    assert not set(read) & {"zero_width_space", "homoglyph"}
    # the blind spot itself, on the raw meter: a run stored before the read columns
    raw = quality[[c for c in quality.columns if not c.endswith("_read")]]
    assert set(unmeasured_attacks(raw, cost)) == blind
    # strip_format deletes line breaks a reader sees, and the encoder does not: a blind spot as read too
    blind = set(read)
    assert blind == {"strip_format"}
    card = robustness_cards(db)["tfidf_lr"]
    assert set(card.unmeasured) == blind
    assert not card.efficiency.set_index("attack").loc[sorted(blind), "measured"].any()
    md = card.to_markdown()
    lines = md.splitlines()
    eff = lines.index(next(line for line in lines if line.startswith("| attack | AUROC drop")))
    row = next(line for line in lines[eff:] if line.startswith("| strip_format | "))
    assert row.split(" | ")[2] == "not measured"  # the quality loss column
    assert "a blind spot of the meter, not a free attack" in md
    free = [line for line in lines if line.startswith("Lowering the AUROC without a measurable quality loss")]
    assert not any(a in line for line in free for a in blind)


def test_without_intervals_or_quality_the_card_says_so(bare):
    db, result = bare
    card = robustness_cards(db)["surface_probe"]
    md = card.to_markdown()
    clean = _auroc(result.metrics, "surface_probe").loc["none", "value"]
    assert f"{clean:.3f} [n/a]" in md and "n_boot = 0" in md
    assert card.efficiency is None and "no quality table" in md
    assert card.validity is None and "valid swaps" not in md
    assert "no defense in this run" in md and "Not computed for this run" in md


def test_stored_reliance_rows_appear_with_their_intervals(bare, tmp_path):
    db, result = bare
    copy = tmp_path / "r.sqlite"
    copy.write_bytes(db.read_bytes())
    frame = pd.DataFrame({"detector": ["surface_probe", "surface_probe", "other"], "subset": ["overall", "xsum", "x"],
                          "n_machine": [6, 3, 1], "n_correct": [5, 3, 1], "rec": [5 / 6, 1.0, 1.0],
                          "flip_h": [0.8, 1.0, 0.0], "flip_m": [0.2, 0.0, 0.0], "flip": [0.6, 1.0, 0.0],
                          "flip_lo": [0.2, 1.0, 0.0], "flip_hi": [1.0, 1.0, 0.0], "unc": [0.31, 0.4, 0.0],
                          "unc_lo": [0.12, 0.2, 0.0], "unc_hi": [0.5, 0.6, 0.0], "threshold": [0.5, 0.5, 0.5],
                          "threshold_rule": ["fixed FPR 0.05 on the human documents"] * 3})
    with ResultsStore(copy) as store:
        store.add_run_table(result.run_id, "reliance", frame)
    card = robustness_cards(copy)["surface_probe"]
    assert list(card.reliance["subset"]) == ["overall", "xsum"]
    md = card.to_markdown()
    assert "| overall | 0.600 [0.200, 1.000] | 0.310 [0.120, 0.500] | 0.833 |" in md
    assert "fixed FPR 0.05 on the human documents" in md and "no Artifact Reliance Score" not in md


def test_defense_figures_sit_next_to_the_undefended_ones(stored):
    db, result = stored
    scores = result.tables["scores"]
    # a defense that exactly undoes homoglyph: its attacked texts score as their clean versions
    clean = scores[scores["attack"] == "none"].set_index(["detector", "id"])["score"]
    defended = scores.copy()
    hg = defended["attack"] == "homoglyph"
    defended.loc[hg, "score"] = [clean[(d, i)] for d, i in zip(defended.loc[hg, "detector"], defended.loc[hg, "id"])]
    kw = dict(fprs=(0.2, 0.1), per_domain=False, pair_key="adv_source_id", n_boot=20, seed=3)
    metrics = pd.concat([evaluate(scores, **kw).assign(defense="none"),
                         evaluate(defended, **kw).assign(defense="normalize")], ignore_index=True)
    rows = _defense_rows(metrics[metrics["detector"] == "tfidf_lr"], (0.2, 0.1))
    hg_auroc = rows[(rows["attack"] == "homoglyph") & (rows["figure"] == "auroc")].iloc[0]
    clean_auroc = rows[(rows["attack"] == "none") & (rows["figure"] == "auroc")].iloc[0]
    assert hg_auroc["value_defended"] == pytest.approx(clean_auroc["value"])
    assert hg_auroc["value"] == pytest.approx(_auroc(result.metrics, "tfidf_lr").loc["homoglyph", "value"])
    card = dataclasses.replace(robustness_cards(db)["tfidf_lr"], defense=rows)
    md = card.to_markdown()
    assert "| normalize | homoglyph | AUROC |" in md
    assert fmt_ci(hg_auroc["value_defended"], hg_auroc["lo_defended"], hg_auroc["hi_defended"]) in md
    assert _defense_rows(result.metrics, (0.2,)) is None  # no defense column: no section


def test_fpr_selection_and_bad_arguments(stored, tmp_path):
    db, result = stored
    card = robustness_cards(db, result.run_id, fpr=0.1)["tfidf_lr"]
    assert card.fprs == (0.1,) and "FPR 0.2" not in card.to_markdown()
    with pytest.raises(ValueError, match=r"fpr 0.3 is not one of the run's FPRs \[0.2, 0.1\]"):
        robustness_cards(db, fpr=0.3)
    with pytest.raises(TypeError, match="fpr must be a number"):
        robustness_cards(db, fpr="0.1")
    with pytest.raises(LookupError, match="no finished run 'nope'"):
        robustness_cards(db, run_id="nope")
    with pytest.raises(FileNotFoundError, match="no results database"):
        robustness_cards(tmp_path / "missing.sqlite")
    with pytest.raises(TypeError, match="ResultsStore or a path"):
        robustness_cards(42)
    with pytest.raises(TypeError, match="run_id must be a str or None"):
        robustness_cards(db, run_id=3)
    with pytest.raises(ValueError, match="unknown card format"):
        write_cards(db, tmp_path, formats=("pdf",))


def test_write_cards_writes_each_format_and_is_deterministic(stored, tmp_path):
    db, _ = stored
    first = write_cards(db, tmp_path / "a")
    assert sorted(p.name for p in first) == ["card_surface_probe.html", "card_surface_probe.md",
                                             "card_tfidf_lr.html", "card_tfidf_lr.md"]
    second = write_cards(db, tmp_path / "b", formats=["md"])
    assert [p.name for p in second] == ["card_surface_probe.md", "card_tfidf_lr.md"]
    for p in second:
        assert p.read_text(encoding="utf-8") == (tmp_path / "a" / p.name).read_text(encoding="utf-8")
