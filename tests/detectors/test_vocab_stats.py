"""The chunked vocabulary statistics (``lm_stats._own_stats``, issue #38) give the log-softmax form's values to
float32 rounding, whatever the chunk size, in float32 and from bfloat16 logits, with -inf logits counted as 0."""
import numpy as np
import pytest
import torch

from humanize.detectors import lm_stats


def _logits(n=37, vocab=3001, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, vocab, generator=g) * 3
    x[:, :20] += 12  # a peaked distribution, as a language model's
    target = torch.randint(0, vocab, (n,), generator=g)
    target[:5] = torch.arange(5)  # some likely tokens: ranks 1..20
    return x, target


@pytest.mark.parametrize("chunk", [1, 5, 16, 64])
def test_chunked_statistics_equal_the_log_softmax_form(chunk):
    x, target = _logits()
    got = lm_stats._own_stats(x, target, chunk=chunk)
    exact = lm_stats._own_stats_softmax(x.double(), target)  # float64: the reference
    before = lm_stats._own_stats_softmax(x, target)
    np.testing.assert_array_equal(got["rank"], before["rank"])
    assert got["rank"].dtype == np.int64 and got["rank"].min() >= 1
    for key in ("logprob", "entropy", "expected_logprob", "logprob_var"):
        assert got[key].dtype == np.float64 and got[key].shape == (len(x),)
        np.testing.assert_allclose(got[key], exact[key], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got["entropy"], -got["expected_logprob"])


def test_bfloat16_logits_are_read_as_float32():
    x, target = _logits()
    half = x.bfloat16()
    got = lm_stats._own_stats(half, target)
    want = lm_stats._own_stats_softmax(half.double(), target)
    for key in ("logprob", "entropy", "logprob_var"):
        np.testing.assert_allclose(got[key], want[key], rtol=1e-5, atol=1e-5)


def test_minus_infinity_logits_count_as_zero_probability():
    x, target = _logits(n=6, vocab=500)
    x[:, 100:] = float("-inf")  # a vocabulary cut, as a masked model gives
    got = lm_stats._own_stats(x, target.clamp_max(99), chunk=4)
    want = lm_stats._own_stats_softmax(x[:, :100].double(), target.clamp_max(99))
    for key in ("logprob", "entropy", "logprob_var"):
        assert np.isfinite(got[key]).all()
        np.testing.assert_allclose(got[key], want[key], rtol=1e-5, atol=1e-5)
