"""Fast-DetectGPT's analytic sampling discrepancy against the formula computed by hand."""
import numpy as np
import pytest
import torch

from humanize.detectors import get
from humanize.detectors.fast_detectgpt import FastDetectGPT
from humanize.detectors.metric import LogLikelihood
from humanize.models import load_causal_lm

TEXTS = ["The cat sat on the mat.", "Numbers like 42 and 3.14 appear; Привет мир 🎉", " "]


def hand_discrepancy(scoring, reference, hand, text):
    """(sum log p(x) - sum E_q[log p]) / sqrt(sum Var_q[log p]); q from ``reference``, vocab cut to the shorter."""
    ids = hand.ids(scoring, text)
    logits, target = hand.logits(scoring, ids)
    ref_logits, _ = hand.logits(reference, ids)
    v = min(logits.shape[-1], ref_logits.shape[-1])
    lp_full = torch.log_softmax(logits, -1)
    lp_obs = lp_full.gather(-1, target[:, None]).squeeze(-1)
    logp = torch.log_softmax(logits[:, :v], -1)
    q = torch.softmax(ref_logits[:, :v], -1)
    mu = (q * logp).sum(-1)
    var = (q * logp ** 2).sum(-1) - mu ** 2
    return ((lp_obs.sum() - mu.sum()) / var.sum().sqrt()).item()


def test_self_reference_matches_hand_formula(tiny_lm, hand):
    got = FastDetectGPT(tiny_lm).score(TEXTS)
    want = [hand_discrepancy(tiny_lm, tiny_lm, hand, t) for t in TEXTS]
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)


def test_separate_reference_matches_hand_formula(tiny_lm, tiny_lm_b, hand):
    got = FastDetectGPT(tiny_lm, reference_model=tiny_lm_b).score(TEXTS)
    want = [hand_discrepancy(tiny_lm, tiny_lm_b, hand, t) for t in TEXTS]
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)
    assert not np.allclose(got, FastDetectGPT(tiny_lm).score(TEXTS), rtol=1e-3)  # the reference matters


def test_reference_with_more_logits_is_cut_to_the_shared_vocabulary(tiny_lm, tiny_dirs, hand):
    wide = load_causal_lm(tiny_dirs["wide"])  # same tokenizer, 8 extra output logits
    assert wide.model.config.vocab_size == tiny_lm.model.config.vocab_size + 8
    got = FastDetectGPT(tiny_lm, reference_model=wide).score(TEXTS[:2])
    want = [hand_discrepancy(tiny_lm, wide, hand, t) for t in TEXTS[:2]]
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)


def test_reference_equal_to_scoring_model_is_the_default(tiny_lm, tiny_dirs):
    a = FastDetectGPT(tiny_lm).score(TEXTS)
    b = FastDetectGPT(tiny_dirs["a"], reference_model=tiny_dirs["a"], dtype="float32").score(TEXTS)  # as tiny_lm
    np.testing.assert_array_equal(a, b)


def test_self_reference_costs_no_extra_pass(tiny_lm, tiny_lm_b, count_forward):
    ca, cb = count_forward(tiny_lm), count_forward(tiny_lm_b)
    LogLikelihood(tiny_lm).score(TEXTS)
    FastDetectGPT(tiny_lm).score(TEXTS)
    assert (ca.rows, cb.rows) == (len(TEXTS), 0)
    FastDetectGPT(tiny_lm, reference_model=tiny_lm_b).score(TEXTS)  # needs both models' logits together
    FastDetectGPT(tiny_lm, reference_model=tiny_lm_b).score(TEXTS)  # now cached
    assert (ca.rows, cb.rows) == (2 * len(TEXTS), len(TEXTS))
    LogLikelihood(tiny_lm_b).score(TEXTS)  # the reference's own statistics were cached by that pass
    assert cb.rows == len(TEXTS)


def test_mismatched_tokenizers_raise(tiny_lm, tiny_dirs):
    det = FastDetectGPT(tiny_lm, reference_model=tiny_dirs["other"])
    with pytest.raises(ValueError, match="reference model and scoring model must share a tokenizer"):
        det.score(["hello"])


def test_describe_records_both_models(tiny_lm, tiny_lm_b):
    det = FastDetectGPT(tiny_lm, reference_model=tiny_lm_b, max_tokens=64)
    assert det.describe()["reference_model"]["loaded"] is False
    det.score(["hello there"])
    info = det.describe()
    assert info["detector"] == "fast_detectgpt"
    assert info["scoring_model"]["resolved"] == tiny_lm.resolved
    assert info["reference_model"]["resolved"] == tiny_lm_b.resolved
    solo = FastDetectGPT(tiny_lm)
    solo.score(["hello there"])
    assert solo.describe()["reference_model"] == solo.describe()["scoring_model"]


def test_params_and_errors():
    det = get("fast_detectgpt")
    assert det.get_params() == {"model": "smollm2-135m-instruct", "reference_model": None, "max_tokens": 512,
                                "batch_tokens": None, "device": None, "dtype": "auto"}
    with pytest.raises(TypeError, match=r"FastDetectGPT: reference_model must be a model name or path \(not blank\), or a loaded model or None, got 7 \(int\)"):
        FastDetectGPT(reference_model=7)
    with pytest.raises(TypeError, match="single str"):
        det.score("text")
