"""Every input to the cost meter's token counter: a documented count, batch = one by one.

Regression first (a lone surrogate crashed ``CostMeter``'s token counting with UnicodeEncodeError
inside ``text.encode("utf-8")``), then generated inputs through blingfire's GPT-2 BPE and a
Hugging Face tokenizer.
"""
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from humanize.cost import CostMeter
from humanize.cost.tokens import _blingfire_gpt2, gpt2_spans, resolve_tokenizer
from humanize.models import TextRepairWarning

from ..text_strategies import BAD, any_text, batches, repaired

_settings = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check_spans(spans: np.ndarray, text: str) -> None:
    assert spans.ndim == 2 and spans.shape[1] == 2 and spans.dtype == np.int64
    if len(spans):
        assert np.all((0 <= spans) & (spans <= len(text)))
        assert np.all(spans[:, 0] <= spans[:, 1])
        assert np.all(np.diff(spans[:, 0]) >= 0) and np.all(np.diff(spans[:, 1]) >= 0)


def test_lone_surrogate_is_counted_not_fatal():
    meter = CostMeter()
    echo = meter.wrap(lambda texts: [t[::-1][::-1] for t in texts], attack="echo")
    with pytest.warns(TextRepairWarning, match="token counter: 1 of 1"):
        out = echo([BAD, "fine text"])
    assert out[0] == BAD                                   # the attack itself sees the text unchanged
    rec = meter.records[0]
    assert rec["error"] == "" and rec["tokens_in"] == rec["tokens_out"] > 0
    with pytest.warns(TextRepairWarning):
        assert meter._count(BAD) == meter._count(repaired(BAD))


def test_token_counter_rejects_non_text():
    with pytest.raises(TypeError, match="token counting needs a str, got bytes"):
        gpt2_spans(b"bytes")


@pytest.mark.parametrize("text, ends, want", [
    (" ", [1], [[0, 1]]),                  # CI's machine: the end of a whitespace-only token past the text
    ("  ", [-1], [[0, 0]]),                # this machine: no end at all
    ("ab cd", [1, 9, 2], [[0, 2], [2, 5], [5, 5]]),   # out of range, then out of order
])
def test_gpt2_spans_stay_inside_the_text_whatever_blingfire_reports(monkeypatch, text, ends, want):
    bf, handle = _blingfire_gpt2()

    class Reporting:
        def utf8text_to_ids_with_offsets(self, *args):
            n = len(ends)
            return np.zeros(n, np.uint32), np.zeros(n, np.int32), np.asarray(ends, np.int32)

    monkeypatch.setattr("humanize.cost.tokens._blingfire_gpt2", lambda: (Reporting(), handle))
    spans = gpt2_spans(text)
    check_spans(spans, text)
    assert spans.tolist() == want


@given(text=any_text)
@_settings
def test_gpt2_spans_any_text(text):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        spans = gpt2_spans(text)
    check_spans(spans, text)
    assert any(issubclass(w.category, TextRepairWarning) for w in seen) == (text != repaired(text))
    np.testing.assert_array_equal(spans, gpt2_spans(repaired(text)))      # same offsets: repair is 1 char -> 1 char
    if text.strip():
        assert len(spans) > 0
    # character offsets come from blingfire's UTF-8 byte offsets: redo the mapping by a per-character walk
    bf, handle = _blingfire_gpt2()
    data = repaired(text).encode("utf-8")
    if data:
        _, _, byte_ends = bf.utf8text_to_ids_with_offsets(handle, data, len(data) + 8, 0, True)
        char_of_byte_end = {}
        pos = 0
        for i, ch in enumerate(repaired(text)):
            pos += len(ch.encode("utf-8"))
            char_of_byte_end[pos - 1] = i + 1
        want = [char_of_byte_end.get(b, None) for b in byte_ends]
        got = spans[:, 1].tolist()
        assert [g for g, w in zip(got, want) if w is not None] == [w for w in want if w is not None]


@given(texts=batches(any_text))
@_settings
def test_meter_count_batch_equals_sum_of_singles(texts):
    meter = CostMeter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TextRepairWarning)
        assert meter._count(texts) == sum(meter._count(t) for t in texts)
        assert CostMeter(count_tokens=None)._count(texts) is None


@pytest.mark.slow
@given(texts=batches(any_text, max_size=4))
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_hf_tokenizer_spans_any_text(minilm, texts):
    spans_of = resolve_tokenizer(minilm)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TextRepairWarning)
        for text in texts:
            spans = spans_of(text)
            check_spans(spans, text)
            np.testing.assert_array_equal(spans, spans_of(repaired(text)))


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(sample_interval=-1), ValueError, r"CostMeter: sample_interval must be a number in \(0, inf\), got -1 \(int\)"),
    (dict(sample_interval=float("nan")), ValueError, "sample_interval"),
    (dict(sample_interval="x"), TypeError, r"sample_interval must be a number in \(0, inf\), got 'x' \(str\)"),
    (dict(sample_interval=float("inf")), ValueError, r"sample_interval must be a number in \(0, inf\), got inf"),
    (dict(track_gpu="no"), TypeError, r"CostMeter: track_gpu must be a bool, got 'no' \(str\)"),
])
def test_cost_meter_rejects_bad_parameters_when_built(kwargs, error, match):
    # before: accepted, and "no" turned GPU tracking on
    with pytest.raises(error, match=match):
        CostMeter(**kwargs)


def test_measure_rejects_a_bad_document_count_and_accepts_an_empty_batch():
    meter = CostMeter(count_tokens=None)
    with pytest.raises(TypeError, match=r"CostMeter.measure: n_docs must be an int in \[0, inf\), got 'x' \(str\)"):
        with meter.measure(n_docs="x"):
            pass
    with pytest.raises(ValueError, match=r"n_docs must be an int in \[0, inf\), got -1 \(int\)"):
        with meter.measure(n_docs=-1):
            pass
    meter.wrap(lambda texts: texts, attack="noop")([])
    assert meter.to_frame()["n_docs"].tolist() == [0]
    with meter.measure(n_docs=np.int64(3)) as m:  # numpy scalars are numbers
        m.add(queries=np.int64(2), api_tokens_in=np.float32(1.5))
    assert meter.records[-1]["n_docs"] == 3 and meter.records[-1]["queries"] == 2
    assert CostMeter(track_gpu=np.bool_(False), sample_interval=np.float64(0.01)).sample_interval == 0.01
