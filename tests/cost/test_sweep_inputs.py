"""length_sweep: bad arguments are clear errors; calls that raise are counted and shown."""

import numpy as np
import pytest

from humanize.cost import length_sweep
from humanize.cost.sweep import bucket_documents
from humanize.exceptions import SweepError

DOCS = [" ".join(["word"] * n) for n in (120, 150, 180, 230, 260, 40)]


@pytest.mark.parametrize("kwargs, error, pattern", [
    ({"per_bucket": -1}, ValueError, r"bucket_documents: per_bucket must be an int in \[1, inf\), got -1 \(int\)"),
    ({"per_bucket": 0}, ValueError, r"per_bucket must be an int in \[1, inf\), got 0 \(int\)"),
    ({"per_bucket": "3"}, TypeError, r"per_bucket must be an int in \[1, inf\), got '3' \(str\)"),
    ({"per_bucket": 2.0}, TypeError, r"per_bucket must be an int in \[1, inf\), got 2.0 \(float\)"),
    ({"per_bucket": True}, TypeError, r"per_bucket must be an int in \[1, inf\), got True \(bool\)"),
    ({"seed": "1"}, TypeError, r"seed must be an int seed, got '1' \(str\)"),
    ({"lengths": ["100"]}, TypeError, r"lengths: each length must be an int in \[1, inf\), got '100' \(str\)"),
    ({"lengths": [0, 100]}, ValueError, r"lengths: each length must be an int in \[1, inf\), got 0 \(int\)"),
    ({"lengths": []}, ValueError, r"at least one token count"),
    ({"lengths": 100}, TypeError, r"lengths must be an iterable"),
    ({"lengths": {100: 1}}, TypeError, r"lengths must be an iterable of token counts \(int\), got dict"),
])
def test_bad_arguments_are_clear_errors(kwargs, error, pattern):
    with pytest.raises(error, match=pattern):
        length_sweep(lambda t: t, DOCS, **{"lengths": [100, 200], **kwargs})
    with pytest.raises(error, match=pattern):
        bucket_documents(DOCS, **{"lengths": [100, 200], **kwargs})


def test_a_function_that_always_raises_is_an_error_not_empty_buckets():
    def broken(text):
        raise ValueError("model exploded")

    for warmup in (True, False):
        with pytest.raises(SweepError, match=r"every call failed \(4 of 4 calls .* ValueError: model exploded"):
            length_sweep(broken, DOCS, [100, 200, 300], per_bucket=2, warmup=warmup)


def test_calls_that_raise_are_counted_per_bucket_and_warned_about():
    def flaky(text):
        if len(text.split()) >= 200:
            raise ValueError("too long")
        return text

    with pytest.warns(RuntimeWarning, match=r"2 of 4 calls of .* raised; first: ValueError: too long"):
        table = length_sweep(flaky, DOCS, [100, 200, 300], per_bucket=2)
    assert table["n_docs"].tolist() == [2, 0, 0]
    assert table["n_errors"].tolist() == [0, 2, 0]
    assert np.isnan(table.loc[1, "wall_s_mean"]) and table.loc[0, "wall_s_mean"] >= 0
