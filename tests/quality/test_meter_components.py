"""Meters as components (issue #36 §2): each built-in meter is a registered PairMeter, QualityMeter is their
combination, and a new built-in meter is one module plus one registry line."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from humanize import quality
from humanize.quality import AsRead, PairMeter, QualityMeter
from humanize.quality import custom
from humanize.quality.custom import notes_of

PAIRS = (["The cat sat on the mat.", "", "Short text here.", "日本語の文です。"],
         ["The cat sat on a mat.", "Something", "Short text here.", "日本語の文。"])


def test_the_registry_lists_every_built_in_meter_in_column_order():
    assert quality.available() == sorted(quality.METERS + quality.OPTIONAL_METERS)
    assert list(custom.builtin_meters()) == list(quality.METERS + quality.OPTIONAL_METERS)
    assert all(quality.origin(name) == "built in" for name in quality.available())
    assert quality.METERS == ("perplexity", "cosine", "rouge_l", "flesch", "edit_rate", "validity")
    assert quality.OPTIONAL_METERS == ("entailment", "judge")


def test_quality_meter_is_the_combination_of_its_members():
    meter = QualityMeter(meters=["rouge_l", "flesch", "edit_rate", "validity"], context_threshold=None,
                         max_chars=30)
    members = meter.members()
    assert [m.name for m in members] == ["rouge_l", "flesch", "edit_rate", "validity"]
    assert members[0].max_chars == 30 and members[2].max_chars == 30 and members[3].context_threshold is None
    table = meter.score(*PAIRS)
    cols, notes = {}, [[] for _ in PAIRS[0]]
    for m in members:
        out, why = m.measure(*PAIRS)
        cols.update(out)
        for i, w in enumerate(why):
            if w:
                notes[i].append(w)
    assert list(table.columns) == [*cols, "note"]
    for name, values in cols.items():
        assert np.array_equal(np.asarray(table[name], dtype=object), np.asarray(list(values), dtype=object)) or \
            np.allclose(table[name].astype(float), np.asarray(values, dtype=float), equal_nan=True), name
    assert table["note"].tolist() == ["; ".join(x) for x in notes]
    assert "rouge_l: no ROUGE tokens (ASCII words) in original" in table.loc[1, "note"]
    # a member is configured by the parameters of the same names, and built once per parameter values
    assert meter.members()[0] is members[0]
    meter.set_params(max_chars=50)
    assert meter.members()[0] is not members[0] and meter.members()[0].max_chars == 50


def test_a_member_version_bump_reaches_the_quality_fingerprint_of_the_meters_that_run_it(monkeypatch):
    rouge, flesch = QualityMeter(meters=["rouge_l"]), QualityMeter(meters=["flesch"])
    before = rouge.fingerprint(), flesch.fingerprint()
    assert "members" not in rouge.provenance()  # the version "3" of the combination stands for these members
    monkeypatch.setattr(quality.RougeL, "version", "2")
    assert QualityMeter(meters=["rouge_l"]).fingerprint() != before[0]
    assert QualityMeter(meters=["rouge_l"]).provenance()["members"]["rouge_l"]["version"] == "2"
    assert QualityMeter(meters=["flesch"]).fingerprint() == before[1]


class LengthRatio(PairMeter):
    """Length change: the attacked text's length over the original's (the docs' worked example)."""

    name = "length_ratio"
    columns = ("length_ratio",)

    def __init__(self, max_chars: int = 100_000):
        self._init_params(locals())

    def measure(self, originals, attacked):
        ratio = [len(b) / len(a) if a and len(a) <= self.max_chars else math.nan for a, b in zip(originals, attacked)]
        return {"length_ratio": ratio}, notes_of({"length_ratio": ["" if r == r else "empty or too long original"
                                                                    for r in ratio]})

    def score(self, originals, attacked):
        return self.measure(originals, attacked)[0]


@pytest.fixture
def one_more_line(monkeypatch):
    """The registry line a new built-in meter adds (this module stands for its file)."""
    monkeypatch.setitem(custom._REGISTRY, "length_ratio", f"{__name__}:LengthRatio")
    monkeypatch.setattr(custom._registry, "_builtin", custom._registry._builtin | {"length_ratio"})


def test_a_new_built_in_meter_is_one_class_and_one_registry_line(one_more_line):
    default_fp = QualityMeter().fingerprint()
    meter = QualityMeter(meters=["rouge_l", "length_ratio"], max_chars=10)
    table = meter.score(["abcd", ""], ["ab", "x"])
    assert list(table.columns) == ["rouge_l", "length_ratio", "note"]
    assert table["length_ratio"].iloc[0] == 0.5 and math.isnan(table["length_ratio"].iloc[1])
    assert "length_ratio: empty or too long original" in table["note"].iloc[1]
    assert meter.members()[1].max_chars == 10  # configured by QualityMeter's parameter of the same name
    # its provenance is in the combination's fingerprint; the default meter (it is opt-in) is unchanged
    assert meter.provenance()["members"]["length_ratio"]["params"] == {"max_chars": 10}
    assert QualityMeter().fingerprint() == default_fp
    assert "length_ratio" in quality.available() and quality.origin("length_ratio") == "built in"
    with pytest.raises(ValueError, match="unknown meters"):
        QualityMeter(meters=["no_such_meter"])


class Upper:
    """A reader of the simplest kind: text -> text, with a fingerprint."""

    def __call__(self, text):
        return text.upper()

    def fingerprint(self):
        return "upper"


def test_as_read_measures_its_members_again_on_the_text_as_read():
    reader = Upper()
    again = QualityMeter(meters=["rouge_l", "edit_rate", "validity"], context_threshold=None).read_again(reader)
    assert [m.name for m in again.members()] == ["rouge_l", "edit_rate"]  # validity is not read again
    assert again.key() == "2:upper"
    cols, notes = again.measure(["abc def", "ABC"], ["ABC DEF", "ABC"])
    assert list(cols) == ["rouge_l_read", "word_edit_rate_read", "char_edit_rate_read", "changed_read"]
    assert cols["rouge_l_read"][0] == 1.0 and cols["char_edit_rate_read"][0] == 0.0 and cols["changed_read"][0] == 0
    assert QualityMeter(meters=["validity"], context_threshold=None).read_again(reader) is None
    with pytest.raises(TypeError, match="reader must be callable"):
        AsRead(reader="not a reader")


def test_as_read_copies_the_raw_figures_of_pairs_the_reader_leaves_alone(monkeypatch):
    again = AsRead(Upper(), [quality.RougeL()])
    seen = []
    measure = quality.RougeL.measure

    def counting(self, originals, attacked):
        seen.append(list(originals))
        return measure(self, originals, attacked)

    monkeypatch.setattr(quality.RougeL, "measure", counting)
    table = pd.DataFrame({"rouge_l": [0.25, 0.5]})
    out = again.extend(table, ["ABC", "abc"], ["ABD", "abd"])
    assert seen == [["ABC"]]  # only the second pair reads differently ("abc" -> "ABC")
    assert out["rouge_l_read"].iloc[0] == 0.25 and out["rouge_l_read"].iloc[1] == 0.0


def test_score_comes_from_measure_for_a_built_in_meter_and_is_required_of_a_users():
    meter = quality.get("rouge_l")
    cols, _ = meter.measure(*PAIRS)
    assert list(meter.score(*PAIRS)["rouge_l"]) == list(cols["rouge_l"])

    class Bare(PairMeter):
        name = "bare"

    with pytest.raises(NotImplementedError, match="Bare must implement score"):
        Bare().score(["a"], ["b"])
