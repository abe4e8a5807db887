"""Every input to the detectors: a clear error or a documented result, batch = one by one.

Regressions first (a lone surrogate crashed every tokenizer-based detector and sank its whole batch;
``check_texts`` said ".score expects" when called from ``fit``), then generated inputs over the cheap
learned detectors and the tiny-LM / tiny-classifier versions of the model-based ones.
"""
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from humanize.validation import check_texts
from humanize.detectors import lm_stats
from humanize.detectors.binoculars import Binoculars
from humanize.detectors.fast_detectgpt import FastDetectGPT
from humanize.detectors.hf_classifier import HFClassifier
from humanize.detectors.lm_d import LMDetector
from humanize.detectors.metric import LogLikelihood
from humanize.detectors.metric_lr import MetricFeaturesLR
from humanize.detectors.surface import SurfaceProbe
from humanize.detectors.tfidf import TfidfLogReg
from humanize.models import TextRepairWarning

from ..text_strategies import BAD, any_text, batches, repaired, small_text
from ._learned_helpers import save_tiny_classifier

GOOD = "The committee met on Tuesday to discuss the budget for next year."
TRAIN = [GOOD, "Results were mixed.", "A cat sat on the warm mat in the sun.", "Stocks fell sharply on Monday.",
         "The model writes fluent and likely words.", "Our study shows a clear effect of the drug.",
         "He ran home quickly after the rain started.", "Prices rose again, said the central bank."]
LABELS = ["human", "machine"] * 4
_cheap = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_model = settings(max_examples=20, deadline=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def tiny_classifier(tmp_path_factory):
    path = save_tiny_classifier(tmp_path_factory.mktemp("tiny_inputs_clf"), ["Real", "Fake"], seed=4)
    return HFClassifier(str(path), machine_label="Fake", batch_size=4)


@pytest.fixture(scope="module")
def learned():
    return {"tfidf_lr": TfidfLogReg(min_df=1).fit(TRAIN, LABELS), "surface_probe": SurfaceProbe().fit(TRAIN, LABELS)}


def model_detectors(tiny_lm, tiny_lm_b, tiny_classifier):
    return {"log_likelihood": LogLikelihood(tiny_lm, max_tokens=64),
            "fast_detectgpt": FastDetectGPT(tiny_lm, max_tokens=64),
            "binoculars": Binoculars(observer=tiny_lm, performer=tiny_lm_b, max_tokens=64),
            "hf_classifier": tiny_classifier}


def score_quietly(detector, texts):
    """Scores and the warning categories raised while computing them."""
    lm_stats.clear_cache()                       # batch and one-by-one runs must both reach the model
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        scores = detector.score(texts)
    return scores, {w.category for w in seen}


# -- regressions ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["log_likelihood", "fast_detectgpt", "binoculars", "hf_classifier"])
def test_lone_surrogate_is_repaired_and_does_not_sink_the_batch(tiny_lm, tiny_lm_b, tiny_classifier, name):
    det = model_detectors(tiny_lm, tiny_lm_b, tiny_classifier)[name]
    with pytest.warns(TextRepairWarning, match="1 of 2 text"):
        mixed = det.score([BAD, GOOD])
    assert np.all(np.isfinite(mixed))
    lm_stats.clear_cache()
    np.testing.assert_allclose(mixed, det.score([repaired(BAD), GOOD]), rtol=1e-5, atol=1e-6)


def test_lone_surrogate_in_metric_lr_fit_and_score(tiny_lm):
    det = MetricFeaturesLR(model=tiny_lm, max_tokens=32)
    with pytest.warns(TextRepairWarning):
        det.fit(TRAIN[:-1] + [BAD], LABELS)
    with pytest.warns(TextRepairWarning):
        assert np.all(np.isfinite(det.score([BAD, GOOD])))


@pytest.mark.slow
def test_lone_surrogate_in_lm_d_fit_and_score():
    det = LMDetector(max_tokens=16, batch_size=8, seed=1)
    with pytest.warns(TextRepairWarning, match="LMDetector.fit: 1 of 8"):
        det.fit(TRAIN[:-1] + [BAD], LABELS)
    with pytest.warns(TextRepairWarning):
        scores = det.score([BAD, GOOD])
    np.testing.assert_allclose(scores, det.score([repaired(BAD), GOOD]), atol=1e-6)


def test_check_texts_names_the_calling_method(learned):
    with pytest.raises(TypeError, match=r"TfidfLogReg\.fit expects a sequence of str .*got a single str: wrap it in a list"):
        TfidfLogReg().fit("one text", ["human"])
    with pytest.raises(TypeError, match=r"SurfaceProbe\.fit expects a sequence of str .*: item 1 is int, not str"):
        SurfaceProbe().fit(["a", 5], LABELS[:2])
    with pytest.raises(TypeError, match=r"TfidfLogReg\.score expects a sequence of str .*got NoneType"):
        learned["tfidf_lr"].score(None)
    with pytest.raises(TypeError, match=r"SurfaceProbe\.score expects a sequence of str .*got bytes"):
        learned["surface_probe"].score(b"bytes")
    with pytest.raises(TypeError, match=r"TfidfLogReg\.score expects a sequence of str .*got dict"):
        learned["tfidf_lr"].score({"a": 1})  # a dict batch is refused, not read as its keys
    with pytest.raises(TypeError, match=r"TfidfLogReg\.predict_proba expects .* got int"):
        check_texts(5, "TfidfLogReg", "predict_proba")
    assert check_texts((t for t in ["a", BAD]), "TfidfLogReg", "score") == ["a", BAD]   # no repair here


def test_numpy_scalars_are_accepted_as_numbers():
    from humanize import detectors

    det = detectors.get("tfidf_lr", C=np.float64(0.5), max_iter=np.int64(50), min_df=np.int64(1),
                        max_features=np.int64(100), random_state=np.int64(2), sublinear_tf=np.bool_(True))
    det.fit(TRAIN, LABELS)
    assert det.score(TRAIN[:2]).shape == (2,)
    probe = detectors.get("surface_probe", C=np.float32(2.0), max_iter=np.int32(100), random_state=np.uint32(1))
    assert probe.fit(TRAIN, LABELS).score(TRAIN[:1]).shape == (1,)
    assert LogLikelihood(max_tokens=np.int64(8), batch_tokens=np.int16(64)).max_tokens == 8


def test_empty_batch_gives_empty_scores(learned, tiny_lm, tiny_lm_b, tiny_classifier):
    for det in [*learned.values(), *model_detectors(tiny_lm, tiny_lm_b, tiny_classifier).values()]:
        out = det.score([])
        assert out.shape == (0,) and out.dtype == np.float64, det


def test_long_text_scores_as_its_full_tokenisation(tiny_lm, hand, tiny_classifier):
    """Only a prefix of a long text is tokenised (humanize.models.text.token_prefix): same scores."""
    import torch

    text = " ".join(f"Item {i}: the river, the mill and the old bridge." for i in range(300))   # ~15k chars
    logits, target = hand.logits(tiny_lm, hand.ids(tiny_lm, text, max_tokens=16))
    want = torch.log_softmax(logits, -1).gather(-1, target[:, None]).mean().item()
    stats, = LogLikelihood(tiny_lm, max_tokens=16).statistics([text])
    assert stats.truncated and stats.n_tokens == 16
    assert LogLikelihood(tiny_lm, max_tokens=16).score([text])[0] == pytest.approx(want, rel=1e-5)
    loaded = tiny_classifier._load()
    enc = loaded.tokenizer(text, truncation=True, max_length=tiny_classifier._effective_max, return_tensors="pt")
    with torch.no_grad():
        proba = torch.softmax(loaded.model(**enc).logits.float(), -1)[0, tiny_classifier._machine_index].item()
    assert tiny_classifier.score([text])[0] == pytest.approx(proba, abs=1e-6)


# -- generated inputs -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["tfidf_lr", "surface_probe"])
@given(texts=batches(any_text))
@_cheap
def test_learned_detectors_any_text(learned, name, texts):
    det = learned[name]
    scores, categories = score_quietly(det, texts)
    assert scores.shape == (len(texts),) and scores.dtype == np.float64
    assert np.all((scores >= 0) & (scores <= 1))                 # probabilities, never NaN
    assert TextRepairWarning not in categories                  # no model input: nothing repaired
    alone = np.array([det.score([t])[0] for t in texts])
    np.testing.assert_allclose(scores, alone, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["log_likelihood", "fast_detectgpt", "binoculars", "hf_classifier"])
@given(texts=batches(small_text, max_size=4))
@_model
def test_model_detectors_any_text(tiny_lm, tiny_lm_b, tiny_classifier, name, texts):
    det = model_detectors(tiny_lm, tiny_lm_b, tiny_classifier)[name]
    scores, categories = score_quietly(det, texts)
    assert scores.shape == (len(texts),) and scores.dtype == np.float64
    assert (TextRepairWarning in categories) == any(t != repaired(t) for t in texts)
    if name == "hf_classifier":
        assert np.all((scores >= 0) & (scores <= 1))
    else:                                                        # NaN for empty text, with a warning
        assert np.all(np.isnan(scores) == np.array([t == "" for t in texts]))
        assert (RuntimeWarning in categories) >= ("" in texts)
    alone = np.array([score_quietly(det, [repaired(t)])[0][0] for t in texts])
    np.testing.assert_allclose(scores, alone, rtol=1e-4, atol=1e-5, equal_nan=True)


@pytest.mark.parametrize("name, kwargs, error, match", [
    ("tfidf_lr", dict(random_state="x"), TypeError, r"random_state must be an int in \[0, 4294967296\) or None, got 'x' \(str\)"),
    ("tfidf_lr", dict(random_state=-1), ValueError, r"random_state must be an int in \[0, 4294967296\) or None, got -1"),
    ("tfidf_lr", dict(min_df=-1), ValueError, r"min_df must be an int in \[0, inf\) or a number in \[0.0, 1.0\], got -1"),
    ("tfidf_lr", dict(min_df=1.5), ValueError, "min_df must be"),
    ("tfidf_lr", dict(min_df="x"), TypeError, "min_df must be an int"),
    ("tfidf_lr", dict(sublinear_tf="no"), TypeError, "sublinear_tf must be a bool, got 'no' \\(str\\)"),
    ("surface_probe", dict(random_state="x"), TypeError, "random_state must be an int in .* or None, got 'x'"),
])
def test_learned_detectors_reject_bad_parameters_when_built(name, kwargs, error, match):
    # before: accepted, then scikit-learn's InvalidParameterError at fit (or "no" taken as true)
    from humanize import detectors

    with pytest.raises(error, match=match):
        detectors.get(name, **kwargs)


def test_a_device_this_machine_lacks_is_a_clear_error_naming_device():
    # before: ModelUnavailable suggesting to pip-install the model ("Torch not compiled with CUDA")
    import torch

    from humanize.models import resolve_device

    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    missing = [count, f"cuda:{count}", -1] + ([] if count else ["cuda"])
    for device in missing:
        with pytest.raises(ValueError, match="device"):
            resolve_device(device)
    assert resolve_device("cpu").type == "cpu"


def test_lm_statistics_takes_the_one_batch_rule(tiny_lm):
    stats = lm_stats.LMStatistics(tiny_lm, max_tokens=np.int64(8))
    for bad in ({"a text": 1}, "a text", None, 5):
        with pytest.raises(TypeError, match=r"LMStatistics\.compute expects a sequence of str"):
            stats.compute(bad)
    assert len(stats.compute(np.array(["a text", "another"]))) == 2
