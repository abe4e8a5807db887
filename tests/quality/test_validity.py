"""The validity meter: WordNet classes of word swaps, the alignment that finds them, and their pooling."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from humanize.quality import validity
from humanize.quality.validity import (INVALID_CLASSES, SWAP_CLASSES, VALID_CLASSES, Swap, classified_swaps,
                                       classify_swap, summarize_validity, swap_validity, word_swaps)

# the examples (#19), each in the class the meter must give it
CASES = {
    "antonym": [("higher", "lower"), ("benign", "malignant"), ("increased", "decreased"), ("small", "large"),
                ("automatic", "manual"), ("mental", "physical"), ("physical", "mental"), ("many", "few")],
    "sister": [("depression", "anxiety"), ("anemia", "inflammation"), ("months", "weeks"), ("door", "window")],
    "unrelated": [("security", "government"), ("disability", "welfare"), ("alcohol", "substance"),
                  ("prostate", "cancer"), ("5", "6"), ("1990", "1991"), ("1990s", "1991s"), ("the", "a")],
    "synonym": [("big", "large"), ("car", "automobile"), ("result", "outcome"), ("help", "assist"),
                ("important", "significant"), ("huge", "large")],
    "hypernym": [("room", "bathroom"), ("disease", "illness"), ("treatment", "therapy")],
    "morphological": [("increase", "increased"), ("Patient", "patient"), ("patients", "patient"),
                      ("higher", "high"), ("color", "colour"), ("colors", "colours"), ("ran", "run")],
    "non_word": [("patient", "pateint"), ("patient", "p\u0430tient"), ("word", "wo\u200brd"), ("cat", "\uff43at"),
                 ("hello", "h3llo"), ("study", "xqzvbk"), ("A", "\u0391"), ("\u043c\u0438\u0440", "\u043cup")],
}


@pytest.mark.parametrize("cls,original,replacement", [(c, a, b) for c, pairs in CASES.items() for a, b in pairs])
def test_each_example_lands_in_its_class(cls, original, replacement):
    assert classify_swap(original, replacement) == cls


def test_classes_partition_into_valid_invalid_and_neither():
    assert set(VALID_CLASSES) | set(INVALID_CLASSES) | {"hypernym", "non_word"} == set(SWAP_CLASSES)
    assert not set(VALID_CLASSES) & set(INVALID_CLASSES)


def test_pos_narrows_the_senses_and_accepts_penn_and_universal_tags():
    # "lower" as a verb and as a comparative adjective: the antonym of "high" only as an adjective
    assert classify_swap("high", "lower", "JJ") == "antonym"
    assert classify_swap("increased", "decreased", "VBD") == "antonym"
    assert classify_swap("increased", "decreased", "v") == classify_swap("increased", "decreased", "VERB")
    assert classify_swap("the", "a", "DT") == "unrelated"
    with pytest.raises(ValueError, match="pos 'QQ' is not a WordNet POS"):
        classify_swap("cat", "dog", "QQ")
    with pytest.raises(TypeError, match="pos must be a str"):
        classify_swap("cat", "dog", 3)
    with pytest.raises(TypeError, match="replacement must be a str"):
        classify_swap("cat", None)
    with pytest.raises(ValueError, match="must be words"):
        classify_swap("cat", " ")


def test_word_swaps_offsets_are_exact_on_emoji_non_latin_and_empty_texts():
    original = "The cat 🐱 sat — on the mat. Привет мир, 你好 world's end"
    attacked = "The dog 🐱 sat — on a mat. Привет свет, 你好 earth's end"
    swaps = word_swaps(original, attacked)
    assert [s.original_word for s in swaps] == ["cat", "the", "мир", "world's"]
    assert [s.replacement for s in swaps] == ["dog", "a", "свет", "earth's"]
    for s in swaps:
        assert isinstance(s, Swap) and original[s.start:s.end] == s.original_word
    assert word_swaps("", "") == [] and word_swaps("   \n", " ") == [] and word_swaps("🐱🐱", "🐶") == []
    frame = swap_validity(["", "  ", "no change"], ["", "\t", "no change"])
    assert frame["swaps"].tolist() == [0, 0, 0] and frame["valid_share"].isna().all()


def test_invisible_and_look_alike_characters_keep_the_word_one_swap():
    swaps = classified_swaps("the patient was seen", "the p\u0430tient\u200b was seen")
    assert [(s.original_word, s.replacement, c) for s, c in swaps] == [("patient", "p\u0430tient\u200b", "non_word")]


def test_a_rewrite_counts_rewritten_words_not_swaps():
    frame = swap_validity(["The results show a large effect in older patients."],
                          ["Our findings indicate that older patients respond strongly."])
    row = frame.iloc[0]
    assert row["rewritten_words"] >= 5 and row["swaps"] <= 1
    inserted = swap_validity(["a b c"], ["a b new words c"]).iloc[0]
    assert inserted["swaps"] == 0 and inserted["rewritten_words"] == 2


def test_swap_validity_counts_and_shares_per_pair():
    frame = swap_validity(["Rates were higher in large cities.", "No change."],
                          ["Rates were lower in big cities.", "No change."])
    assert list(frame.columns) == list(validity.VALIDITY_COLUMNS)
    first = frame.iloc[0]
    assert first["swaps"] == 2 and first["swap_antonym"] == 1 and first["swap_synonym"] == 1
    assert first["valid_share"] == 0.5 and first["invalid_share"] == 0.5
    assert math.isnan(frame.iloc[1]["valid_share"]) and frame.iloc[1]["rewritten_words"] == 0
    with pytest.raises(ValueError, match="differ in length"):
        swap_validity(["a"], [])
    with pytest.raises(TypeError, match=r"swap_validity\(originals\) expects a sequence of str .*got a single str"):
        swap_validity("abc", ["abc"])
    with pytest.raises(TypeError, match=r"swap_validity\(attacked\) expects a sequence of str .*: item 1 is int, not str"):
        swap_validity(["a", "b"], ["a", 2])


def test_summarize_pools_over_swaps_not_over_documents():
    frame = swap_validity(["higher", "a b c d"], ["lower", "a b c d"])  # 1 antonym; a document without swaps
    frame = pd.concat([frame, swap_validity(["big small"], ["large little"])], ignore_index=True)  # 2 synonyms
    s = summarize_validity(frame)
    total = frame["swaps"].sum()
    assert s["swaps"] == total == 3
    for c in SWAP_CLASSES:
        assert s[f"share_{c}"] == pytest.approx(frame[f"swap_{c}"].sum() / total)
    assert s["valid_share"] == pytest.approx(2 / 3) and s["invalid_share"] == pytest.approx(1 / 3)
    # the mean of the per-document shares would be (0 + 1) / 2: pooling differs from averaging
    assert frame["valid_share"].mean() == pytest.approx(0.5)
    assert s["swaps_per_doc"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="lacks the validity columns"):
        summarize_validity(pd.DataFrame({"x": [1]}))
    with pytest.raises(TypeError, match="must be a pandas DataFrame"):
        summarize_validity([1, 2])


def test_long_texts_are_aligned_window_by_window_with_the_same_swaps(monkeypatch):
    words = [f"w{i % 97}x{i // 97}" for i in range(3000)]
    original = " ".join(words)
    changed = list(words)
    for i in range(5, 3000, 37):
        changed[i] = "cat"
    changed.insert(1500, "inserted")
    attacked = " ".join(changed)
    whole = word_swaps(original, attacked)
    monkeypatch.setattr(validity, "WINDOW", 200)
    windowed = word_swaps(original, attacked)
    assert windowed == whole and len(whole) == len(range(5, 3000, 37))
    assert all(original[s.start:s.end] == s.original_word for s in windowed)
    assert validity._align(original, attacked)[1] == 1


def test_the_quality_meter_computes_validity_by_default_and_summarize_pools_it():
    from humanize.quality import METERS, QualityMeter, summarize

    assert "validity" in METERS
    meter = QualityMeter(meters=["validity", "rouge_l"])
    frame = meter.score(["Rates were higher in large cities.", "big small", ""],
                        ["Rates were lower in big cities.", "large little", "x"])
    assert list(frame.columns) == ["rouge_l", *validity.VALIDITY_COLUMNS, "note"]
    assert frame["swap_antonym"].tolist() == [1, 0, 0] and frame["swaps"].tolist() == [2, 2, 0]
    assert "validity" not in " ".join(frame["note"]) and math.isnan(frame.loc[2, "valid_share"])
    line = summarize(frame)
    assert line["valid_share"] == pytest.approx(3 / 4) and line["share_antonym"] == pytest.approx(1 / 4)
    assert QualityMeter.version != "1"  # the figures changed: cached quality rows are not reused


def test_without_wordnet_the_meter_gives_nan_with_the_reason(monkeypatch):
    from humanize.models import ModelUnavailable
    from humanize.quality import QualityMeter

    def unavailable():
        raise ModelUnavailable("wordnet", ["test: not installed"], "apt-get install -y wordnet-base")

    monkeypatch.setattr(validity, "_wordnet", unavailable)
    validity._classify.cache_clear()
    validity._lemmas.cache_clear()
    validity._synsets.cache_clear()
    try:
        frame = QualityMeter(meters=["validity"]).score(["a zebra"], ["a giraffe"])
    finally:
        validity._classify.cache_clear()
        validity._lemmas.cache_clear()
        validity._synsets.cache_clear()
    assert math.isnan(frame.loc[0, "swaps"]) and "validity: WordNet unavailable" in frame.loc[0, "note"]
