"""Meaning as a person reads it (issue #34 §3): the cheap meters read both texts through the normalizer too."""

from __future__ import annotations

import pandas as pd
import pytest

from humanize.attacks import get
from humanize.benchmarks.reporting._meaning import meaning_by_attack
from humanize.benchmarks.reporting.tables import meaning_measure, meter_name, quality_table
from humanize.benchmarks.runner import jobs
from humanize.quality import QualityMeter

TEXT = ("The police said the suspect was arrested on Tuesday after a long chase through the city centre. "
        "Officers recovered the stolen goods.")


def _attacked(name: str, **params) -> str:
    out = get(name, **params)(TEXT)
    return getattr(out, "text", out)


@pytest.fixture(scope="module")
def rows():
    meter = QualityMeter(meters=["rouge_l", "flesch", "edit_rate"])
    pairs = [(TEXT, _attacked("homoglyph", rate=0.2)), (TEXT, _attacked("zero_width_space")),
             (TEXT, _attacked("article_deletion"))]
    frame = pd.DataFrame(jobs.quality_pairs(meter, pairs))
    return frame.assign(attack=["homoglyph", "zero_width_space", "article_deletion"])


def test_character_disguises_read_as_the_original_beside_their_raw_figures(rows):
    disguised = rows.iloc[:2]
    assert (disguised["char_edit_rate"] > 0).all() and (disguised["rouge_l"] < 1).all()  # the bytes changed
    assert (disguised["rouge_l_read"] == 1).all() and (disguised["char_edit_rate_read"] == 0).all()  # the words not
    assert (disguised["flesch_attacked_read"] == disguised["flesch_original"]).all()
    assert rows.loc[0, "flesch_attacked"] != rows.loc[0, "flesch_original"]  # Flesch on the bytes moves
    # a word-level attack reads the same either way: the raw figures, copied
    words = rows.iloc[2]
    assert words["rouge_l_read"] == words["rouge_l"] < 1 and words["char_edit_rate_read"] == words["char_edit_rate"]


def test_the_report_uses_and_names_the_meaning_read_on_the_text_as_seen(rows):
    measure = meaning_measure(rows)
    assert measure[0] == "rouge_l_read" and "as read" in measure[1]
    assert meter_name(rows, measure) == "rouge_l as read (normalized)"
    # homoglyphs keep the meaning a reader sees, and that is measured, not "meter blind"
    meaning = meaning_by_attack(rows, n_boot=0)
    assert meaning.loc["homoglyph", "meaning"] == 1 and meaning.loc["homoglyph", "measured"]
    assert meaning.loc["article_deletion", "meaning"] < 1
    table = quality_table(rows)
    assert {"rouge_l", "rouge_l_read", "flesch_attacked", "flesch_attacked_read"} <= set(table.columns)
    assert "Meaning preserved in the summary and the figures: `rouge_l_read` (on the text as a reader sees it" \
        in table.attrs["note"]
    # a run stored before the read columns: the raw meter, said so
    raw = rows[[c for c in rows.columns if not c.endswith("_read")]]
    assert meaning_measure(raw)[0] == "rouge_l" and "note" not in quality_table(raw).attrs


def test_what_a_reader_sees_changed_is_recorded_whatever_meters_ran(rows):
    assert rows["changed_read"].tolist() == [0.0, 0.0, 1.0]
    # a run without the edit-rate meter: the homoglyph's meaning as read is still measured (no change to see)
    bare = rows.drop(columns=[c for c in rows.columns if "edit_rate" in c])
    cost = pd.DataFrame({"attack": bare["attack"], "id": range(3), "n_edits": [5, 5, 5]})
    meaning = meaning_by_attack(bare.assign(id=range(3)), n_boot=0, cost=cost)
    assert meaning.loc["homoglyph", "measured"] and meaning.loc["zero_width_space", "measured"]
