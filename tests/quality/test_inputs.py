"""Every input to the quality meters: a clear error or a documented result, batch = one by one, bounded cost.

Regression tests first (each failed before the fix: a lone surrogate crashed the meter, empty inputs raised
IndexError, ROUGE-L was quadratic in memory, edit rates and perplexity had no bound), then generated inputs.
"""
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from rouge_score import rouge_scorer

from humanize.models import TextRepairWarning, sequence_logprobs
from humanize.quality import QualityMeter, edit_rate, perplexity, rouge_l, semantic_similarity
from humanize.quality.lexical import MAX_CHARS

from ..text_strategies import BAD, any_text, batches, repaired, small_text

LEXICAL = ["rouge_l", "flesch", "edit_rate"]
GOOD = "The children walked to school in the morning and played football after class."
_fast = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_model = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def frames_equal(a: pd.DataFrame, b: pd.DataFrame, rtol=1e-9) -> None:
    assert list(a.columns) == list(b.columns)
    for col in a.columns:
        if a[col].dtype.kind == "f":
            np.testing.assert_allclose(a[col].to_numpy(), b[col].to_numpy(), rtol=rtol, atol=1e-6, equal_nan=True,
                                       err_msg=col)
        else:
            assert a[col].tolist() == b[col].tolist(), col


# -- regressions ---------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_lone_surrogate_is_repaired_and_does_not_sink_the_batch(smollm, minilm):
    meter = QualityMeter(lm=smollm, encoder=minilm)
    with pytest.warns(TextRepairWarning, match="1 of .* lone surrogates"):
        mixed = meter.score([BAD, GOOD], [GOOD, GOOD])
    clean = meter.score([repaired(BAD)], [GOOD])
    good = meter.score([GOOD], [GOOD])
    assert np.isfinite(mixed.loc[0, "perplexity_original"]) and np.isfinite(mixed.loc[0, "cosine"])
    frames_equal(mixed.iloc[[0]].reset_index(drop=True), clean, rtol=1e-3)
    frames_equal(mixed.iloc[[1]].reset_index(drop=True), good, rtol=1e-3)


@pytest.mark.slow
def test_empty_texts_and_empty_list(smollm, minilm):
    meter = QualityMeter(lm=smollm, encoder=minilm)
    one = meter.score([""], [""])
    counts = ["swaps", *(c for c in one.columns if c.startswith("swap_")), "rewritten_words"]
    numeric = one.select_dtypes("number").drop(columns=counts)
    assert numeric.isna().all().all()
    assert (one[counts] == 0).all().all()  # no word swapped: counted, not undefined (its shares are NaN)
    assert "empty" in one.loc[0, "note"] and "perplexity_original" in one.loc[0, "note"]
    none = meter.score([], [])
    assert len(none) == 0 and list(none.columns) == list(one.columns)


def test_rouge_l_long_texts_are_exact_and_bounded():
    a = " ".join(["the cat sat on the mat running quickly"] * 1000)          # ~40k characters
    b = a.replace("cat", "dog")
    expected = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True).score(a[:3000], b[:3000])["rougeL"].fmeasure
    assert rouge_l(a[:3000], b[:3000]) == pytest.approx(expected, abs=1e-12)
    assert 0.8 < rouge_l(a, b) < 1.0                                       # 40k: computed, linear memory
    over = "word " * (MAX_CHARS // 5 + 1)
    value, = QualityMeter(meters=["rouge_l"]).score([over], [over])["rouge_l"]
    assert math.isnan(value)
    note = QualityMeter(meters=["rouge_l"]).score([over], [over]).loc[0, "note"]
    assert "max_chars=100000" in note and "rouge_l" in note


def test_edit_rate_over_the_limit_is_nan_with_a_note():
    text = "abc " * 30
    assert edit_rate(text, text[:-4], max_chars=len(text)) == pytest.approx((1 / 30, 4 / 120))
    words, chars = edit_rate(text, text + "x", max_chars=len(text))
    assert math.isnan(words) and math.isnan(chars)
    row = QualityMeter(meters=["edit_rate"], max_chars=10).score(["short", "x" * 11], ["shirt", "y"])
    assert row.loc[0, "char_edit_rate"] == pytest.approx(0.2) and row.loc[0, "note"] == ""
    assert math.isnan(row.loc[1, "char_edit_rate"]) and "max_chars=10" in row.loc[1, "note"]


@pytest.mark.parametrize("bad, error", [(0, ValueError), (-5, ValueError), (1.5, TypeError), ("10", TypeError),
                                        (True, TypeError), (None, TypeError)])
def test_limits_are_validated(bad, error):
    with pytest.raises(error, match="max_chars"):
        QualityMeter(max_chars=bad)
    with pytest.raises(error, match="max_windows"):
        QualityMeter(max_windows=bad)
    with pytest.raises(error, match="max_chars"):
        rouge_l("a", "b", max_chars=bad)


@pytest.mark.slow
def test_perplexity_scores_at_most_max_windows(smollm):
    text = " ".join(["The committee met on Tuesday to discuss the budget for next year."] * 40)
    meter = QualityMeter(lm=smollm, meters=["perplexity"], max_length=32, stride=16, max_windows=3)
    row = meter.score([text], [text])
    cap = 32 + 2 * 16                                   # ids covered by 3 windows, BOS included
    assert f"scored the first {cap - 1} tokens of a longer text (max_windows=3)" in row.loc[0, "note"]
    # the reference tokenises the whole text (no prefix cut) and scores its first cap ids
    ids = [smollm.tokenizer.bos_token_id] + smollm.tokenizer(text, add_special_tokens=False)["input_ids"]
    lp, = sequence_logprobs(smollm, [ids[:cap]], max_length=32, stride=16)
    assert row.loc[0, "perplexity_original"] == pytest.approx(float(np.exp(-np.mean(lp))), rel=1e-6)
    short = perplexity("Hello there.", smollm, max_length=32, stride=16, max_windows=1)
    assert short == pytest.approx(perplexity("Hello there.", smollm, max_length=32, stride=16))


@pytest.mark.slow
def test_cosine_of_a_long_text_reads_only_its_prefix_and_equals_the_full_encoding(minilm):
    text = " ".join(f"Sentence number {i} talks about gardens, rivers and the old mill." for i in range(400))
    other = text.replace("gardens", "forests")
    full = minilm.model.encode([text, other], normalize_embeddings=True, convert_to_numpy=True)
    assert semantic_similarity(text, other, minilm) == pytest.approx(float(full[0] @ full[1]), abs=1e-6)


# -- generated inputs -----------------------------------------------------------------------------------------

@given(a=any_text, b=any_text)
@_fast
def test_rouge_l_equals_rouge_score(a, b):
    """The rapidfuzz LCS gives rouge-score's value exactly (on texts rouge-score can take)."""
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    tokens_a = scorer._tokenizer.tokenize(a)
    value = rouge_l(a, b)
    if not tokens_a:
        assert math.isnan(value)
    else:
        assert value == pytest.approx(scorer.score(a, b)["rougeL"].fmeasure, abs=1e-12)


@given(originals=batches(), data=st.data())
@_fast
def test_lexical_meters_any_text_batch_equals_one_by_one(originals, data):
    attacked = data.draw(st.lists(any_text, min_size=len(originals), max_size=len(originals)))
    meter = QualityMeter(meters=LEXICAL)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TextRepairWarning)          # no model here: nothing to repair
        batch = meter.score(originals, attacked)
    assert len(batch) == len(originals)
    for i, (a, b) in enumerate(zip(originals, attacked)):
        frames_equal(batch.iloc[[i]].reset_index(drop=True), meter.score([a], [b]))
    for col in ("rouge_l", "word_edit_rate", "char_edit_rate"):
        values = batch[col].to_numpy()
        assert np.all(np.isnan(values) | ((values >= 0) & (values <= 1))), col
    # every NaN carries its reason
    for i, row in batch.iterrows():
        for col, key in (("rouge_l", "rouge_l"), ("flesch_original", "flesch_original"),
                         ("char_edit_rate", "edit_rate")):
            if math.isnan(row[col]):
                assert key + ":" in row["note"], (col, row["note"])


@pytest.mark.parametrize("bad", [None, "text", 5, [b"bytes"], [1.0], [["nested"]]])
def test_bad_types_are_named(bad):
    with pytest.raises(TypeError, match="originals|attacked|score"):
        QualityMeter(meters=LEXICAL).score(bad, ["x"] if bad is not None else None)


@pytest.mark.slow
@given(pairs=batches(st.tuples(small_text, small_text), max_size=3))
@example(pairs=[("The cat sat on the mat.", ""), (BAD, "日本語の文です 😀👍🏽"), ("   ", "The dog sat.")])
@settings(_model, max_examples=7)  # each example scores up to 4 batches on two models: 7 drawn + the one above
def test_model_meters_any_text_batch_equals_one_by_one(smollm, minilm, pairs):
    """The explicit example holds each case the properties name: an empty attacked text, a lone surrogate to
    repair, a blank original and odd scripts; the drawn ones mix the rest."""
    originals, attacked = [a for a, _ in pairs], [b for _, b in pairs]
    meter = QualityMeter(lm=smollm, encoder=minilm, meters=["perplexity", "cosine"])
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        batch = meter.score(originals, attacked)
    n_bad = sum(t != repaired(t) for t in set(originals + attacked))
    assert any(issubclass(w.category, TextRepairWarning) for w in seen) == (n_bad > 0)
    for i, (a, b) in enumerate(zip(originals, attacked)):
        alone = meter.score([repaired(a)], [repaired(b)])          # repaired text scores like its repair
        frames_equal(batch.iloc[[i]].reset_index(drop=True), alone, rtol=2e-3)
    ppl = batch[["perplexity_original", "perplexity_attacked"]].to_numpy()
    texts = np.array([originals, attacked]).T
    assert np.all(np.isnan(ppl) == (texts == ""))                     # NaN exactly for empty text
    assert np.all(np.isnan(ppl) | (ppl >= 1))
    cos = batch["cosine"].to_numpy()
    assert np.all(np.isnan(cos) == ((texts == "").any(axis=1)))
    assert np.all(np.isnan(cos) | ((cos >= -1) & (cos <= 1)))


@pytest.mark.slow
@given(a=small_text, b=small_text)
@_model
def test_similarity_function_takes_any_text(minilm, a, b):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TextRepairWarning)
        value = semantic_similarity(a, b, minilm)
    assert math.isnan(value) == (a == "" or b == "")


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(batch_size=0), ValueError, r"QualityMeter: batch_size must be an int in \[1, inf\), got 0 \(int\)"),
    (dict(batch_size="x"), TypeError, "batch_size must be an int"),
    (dict(batch_size=True), TypeError, "batch_size must be an int"),
    (dict(max_length=-1), ValueError, r"max_length must be an int in \[2, inf\) or None, got -1 \(int\)"),
    (dict(max_length=1.5), TypeError, "max_length must be an int"),
    (dict(stride=0), ValueError, r"stride must be an int in \[1, inf\) or None, got 0 \(int\)"),
    (dict(max_windows=np.int64(0)), ValueError, r"max_windows must be an int in \[1, inf\), got np.int64\(0\) \(int64\)"),
    (dict(max_chars=2.5), TypeError, r"max_chars must be an int in \[1, inf\), got 2.5 \(float\)"),
    (dict(meters={"rouge_l": 1}), TypeError, "meters must be a sequence of names or None, got dict"),
    (dict(custom={"name": "x"}), TypeError, r"QualityMeter: custom must be a list of quality meters .* or None, got"),
    (dict(max_length=128, stride=128), ValueError, r"stride must be in \[1, max_length-1\]"),
])
def test_quality_meter_rejects_bad_window_arguments_when_built(kwargs, error, match):
    # checked in the constructor, before any model loads or any work is done (a run's config
    # validation builds the meter, so these fail before the attacks run)
    with pytest.raises(error, match=match):
        QualityMeter(**kwargs)


def test_numpy_scalars_are_numbers_and_a_dict_batch_is_refused():
    meter = QualityMeter(meters=["rouge_l", "edit_rate"], batch_size=np.int64(2), max_chars=np.int32(50),
                         max_windows=np.int64(2), max_length=np.int64(16), stride=np.int64(8))
    frame = meter.score(["the cat sat"], ["the cat sat down"])
    assert frame["rouge_l"].iloc[0] > 0
    for bad in ({"the cat": 1}, {"the cat"}, 5, b"the cat"):
        with pytest.raises(TypeError, match=r"QualityMeter\.score\(originals\) expects a sequence of str"):
            meter.score(bad, ["x"])
        with pytest.raises(TypeError, match=r"QualityMeter\.score\(attacked\) expects a sequence of str"):
            meter.score(["x"], bad)


def test_none_and_mixed_arguments_are_named():
    with pytest.raises(TypeError, match=r"QualityMeter.score expects a sequence of str \(one per document\), got NoneType"):
        QualityMeter(meters=["rouge_l"]).score(None, None)
    with pytest.raises(TypeError, match="two str or two sequences of str, got str and NoneType"):
        semantic_similarity("a", None)
